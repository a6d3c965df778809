/* logsrc.h - where GET pods/{name}/log reads a container's log: a hook the
 * server is given (server_opts.logs), so that the log endpoint asks the
 * runtime backend that ran the pod instead of knowing any backend's files.
 * The server is below the runtime (docs/layout.md): it declares the hook,
 * the command that starts both (cmd_server) fills it with the active
 * backend's log operations (runtime/backend.h).
 *
 * A stream yields the container's lines in the stored form: an RFC 3339
 * timestamp, a space, the line as the container wrote it, its newline (a
 * line without a timestamp is passed as it is). The server applies
 * timestamps, sinceSeconds/sinceTime, limitBytes and the follow loop (it
 * knows when the pod finished: its object); the source opens the right run
 * (previous) at the right place (tailLines) and says when a follower must
 * read on in a new file (rotation). */
#ifndef TY_SERVER_LOGSRC_H
#define TY_SERVER_LOGSRC_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

typedef struct logsrc_stream logsrc_stream;

typedef struct logsrc {
    void *arg; /* the source's own, passed to open and containers */
    /* The container's log (previous: its previous run) positioned at its
     * last tail_lines lines (< 0: at the first). NULL with TY_ENOTFOUND when
     * there is none (not started, no previous run), other codes on errors. */
    logsrc_stream *(*open)(void *arg, const char *ns, const char *pod, const char *container,
                           bool previous, long tail_lines, ty_error *err);
    /* As fgets: the next line or the piece of one that fits (or the partial
     * last line the writer is in the middle of); NULL at the end, for now. */
    char *(*gets)(logsrc_stream *s, char *buf, int len);
    /* For a follower at the end: true when the log went on in a new file
     * and gets should be called again. */
    bool (*rotated)(logsrc_stream *s);
    void (*close)(logsrc_stream *s);
    /* The containers of pod that left a log (a JSON array of names, new
     * reference), for a pod whose object is gone; NULL = none. */
    json_t *(*containers)(void *arg, const char *ns, const char *pod);
    /* The logs kept of pods gone from the store in ns (an array of {"pod",
     * "containers", "labels", "goneTime"}, new reference; NULL = none; a
     * pod of that name may exist again); NULL op = none kept. */
    json_t *(*retained)(void *arg, const char *ns);
} logsrc;

#endif
