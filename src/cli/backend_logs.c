/* backend_logs.c - the server's log source over the runtime backends (see
 * backend_logs.h). */
#include <stdlib.h>

#include "cli/backend_logs.h"

struct logsrc_stream {
    const rt_backend *b;
    rt_log *l;
};

static logsrc_stream *open_log(void *arg, const char *ns, const char *pod,
                               const char *container, bool previous, long tail_lines,
                               ty_error *err)
{
    cli_backend_logs *bl = arg;

    ty_seterr(err, TY_ENOTFOUND, "no log");
    for (size_t i = 0; i < bl->n; i++) {
        rt_log *l;
        ty_error_clear(err);
        l = rt_backend_log_open(bl->b[i], ns, pod, container, previous, tail_lines, err);
        if (l) {
            logsrc_stream *s = malloc(sizeof(*s));
            if (!s) {
                rt_backend_log_close(bl->b[i], l);
                ty_seterr(err, TY_EINTERNAL, "out of memory");
                return NULL;
            }
            *s = (logsrc_stream){.b = bl->b[i], .l = l};
            return s;
        }
        if (err->code != TY_ENOTFOUND)
            return NULL;
    }
    return NULL;
}

static char *gets_log(logsrc_stream *s, char *buf, int len)
{
    return rt_backend_log_gets(s->b, s->l, buf, len);
}

static bool rotated_log(logsrc_stream *s)
{
    return rt_backend_log_rotated(s->b, s->l);
}

static void close_log(logsrc_stream *s)
{
    rt_backend_log_close(s->b, s->l);
    free(s);
}

static json_t *log_containers(void *arg, const char *ns, const char *pod)
{
    cli_backend_logs *bl = arg;

    for (size_t i = 0; i < bl->n; i++) {
        json_t *names = rt_backend_log_containers(bl->b[i], ns, pod);
        if (json_array_size(names))
            return names;
        json_decref(names);
    }
    return NULL;
}

/* Every backend's, a pod once (the first backend's entry, as open_log). */
static json_t *log_retained(void *arg, const char *ns)
{
    cli_backend_logs *bl = arg;
    json_t *all = json_array(), *seen = json_object();

    for (size_t i = 0; all && seen && i < bl->n; i++) {
        json_t *list = rt_backend_log_retained(bl->b[i], ns), *e;
        size_t k;
        json_array_foreach(list, k, e) {
            const char *pod = json_string_value(json_object_get(e, "pod"));
            if (!pod || json_object_get(seen, pod))
                continue;
            json_object_set_new(seen, pod, json_true());
            json_array_append(all, e);
        }
        json_decref(list);
    }
    json_decref(seen);
    return all;
}

void cli_backend_logs_init(cli_backend_logs *l)
{
    l->src = (logsrc){.arg = l, .open = open_log, .gets = gets_log, .rotated = rotated_log,
                      .close = close_log, .containers = log_containers,
                      .retained = log_retained};
    l->n = 0;
}
