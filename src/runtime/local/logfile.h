/* logfile.h - reading a container's log as the supervisor writes it: the
 * current file and, once it was rotated, the older lines in "<file>.1".
 *
 * The supervisor (runtime/local/sv_proc.c) appends whole lines to
 * <container>.log; at its size limit it renames the file to .log.1 (one
 * rotated copy) and begins a new one. A restart moves .log (and .log.1) to
 * .log.prev (and .log.prev.1). A reader sees the two files of a run as one
 * stream, oldest line first, and a follower crosses a rotation. */
#ifndef TY_RUNTIME_LOCAL_LOGFILE_H
#define TY_RUNTIME_LOCAL_LOGFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct logfile logfile;

/* Opens path (and path.1 when there is one) positioned at the last tail
 * lines of the two together (tail < 0: at the first line). NULL with errno
 * when path cannot be opened (ENOENT: no log yet). logfile_close frees. */
logfile *logfile_open(const char *path, long tail);
void logfile_close(logfile *lf);

/* Like fgets over the chain: the next line (or the piece of one that fits
 * len - 1 bytes, or the partial last line the writer is in the middle of);
 * NULL at the end of the newest file, for now. */
char *logfile_gets(logfile *lf, char *buf, int len);

/* For a follower at the end: true when the file it reads was rotated away
 * (renamed; a new one at the path), and logfile_gets should be called again:
 * first for what the old file still held, then, at the next call, from the
 * start of the new file. False when nothing changed. */
bool logfile_rotated(logfile *lf);

/* Where the last n lines of the open file f begin, reading backwards in
 * fixed blocks (bounded memory, no per-byte seeks). *found: how many lines
 * that leaves (fewer than n when the whole file has fewer); a last line
 * without its newline counts. Exposed for the unit test. */
long logfile_tail_offset(FILE *f, long n, long *found);

#endif
