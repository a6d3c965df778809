/* watch.c - ?watch=1 streams: one JSON event per line, as kube-apiserver.
 *
 * Each watch holds its connection's thread (thread-per-connection) and waits
 * on the store's watch hub with a short timeout so it notices a closed client,
 * a server shutdown or its own deadline within a second. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/timeutil.h"
#include "server/resource_internal.h"

#define WATCH_DEFAULT_TIMEOUT_S 1800
#define WATCH_BOOKMARK_IDLE_MS 10000
#define WATCH_POLL_MS 1000
/* Events already there are encoded together up to this many bytes, so that
 * a busy stream costs one send (and one look at the client) per ~16 KB
 * rather than per event; what is encoded goes as soon as nothing more is
 * waiting. */
#define WATCH_FLUSH_BYTES (16 * 1024)

typedef struct watch_stream {
    ty_server *srv;
    const api_resource *res;
    store_watch *w;
    resource_filter rf;
    bool table, sent_columns, bookmarks;
    char include[16];
    int fd;
    int64_t deadline_ms, last_send_ms;
    uint64_t last_rv;
    store_list initial;  /* synthetic ADDED events to send first */
    size_t initial_idx;
    ty_buf out;
    size_t out_off;
    bool done;
} watch_stream;

static void encode_event(watch_stream *ws, const char *type, const store_obj *o)
{
    /* The plain text needs no tree: only a filter or a table row does. */
    const json_t *obj = ws->rf.fn || ws->table ? store_obj_json(o) : NULL;

    if (ws->rf.fn && !ws->rf.fn(obj, ws->rf.arg))
        return;
    ty_buf_printf(&ws->out, "{\"type\":\"%s\",\"object\":", type);
    if (ws->table) {
        json_t *t = resource_table(ws->res, !ws->sent_columns);
        json_array_append_new(json_object_get(t, "rows"),
                              resource_table_row(ws->res, obj, ws->include));
        json_object_set_new(json_object_get(t, "metadata"), "resourceVersion",
                            json_sprintf("%llu", (unsigned long long)store_obj_rv(o)));
        char *text = json_dumps(t, JSON_COMPACT);
        ty_buf_puts(&ws->out, text ? text : "{}");
        free(text);
        json_decref(t);
        ws->sent_columns = true;
    } else {
        size_t len;
        char *owned;
        /* the initial events of a watch may be of cold objects: not kept */
        const char *text = store_obj_text_read(o, &len, &owned);
        if (text)
            ty_buf_append(&ws->out, text, len);
        else
            ty_buf_puts(&ws->out, "{}");
        free(owned);
    }
    ty_buf_puts(&ws->out, "}\n");
}

static void encode_bookmark(watch_stream *ws)
{
    char av[128];
    api_version_string(ws->res, av, sizeof(av));
    ty_buf_printf(&ws->out,
                  "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
                  "\"metadata\":{\"resourceVersion\":\"%llu\"}}}\n",
                  ws->res->kind, av, (unsigned long long)ws->last_rv);
}

static void encode_error(watch_stream *ws, const ty_error *err)
{
    json_t *st = status_from_error(err, NULL, NULL);
    json_t *ev = json_pack("{s:s, s:o}", "type", "ERROR", "object", st);
    char *text = json_dumps(ev, JSON_COMPACT);
    ty_buf_puts(&ws->out, text ? text : "");
    ty_buf_puts(&ws->out, "\n");
    free(text);
    json_decref(ev);
}

static bool client_gone(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
    if (fd < 0)
        return false;
    return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Fills ws->out with the next events; sets done at the end of the stream. */
static void produce(watch_stream *ws)
{
    if (ws->initial_idx < ws->initial.n) {
        for (int k = 0; k < 64 && ws->initial_idx < ws->initial.n; k++)
            encode_event(ws, "ADDED", ws->initial.items[ws->initial_idx++]);
        return;
    }
    while (!ws->done && ws->out.len < WATCH_FLUSH_BYTES) {
        int64_t now = ty_now_ms();
        store_event ev;
        ty_error err;
        int rc;

        if (ws->out.len == 0 &&
            (now >= ws->deadline_ms || server_stopping(ws->srv) || client_gone(ws->fd))) {
            ws->done = true;
            return;
        }
        ty_error_init(&err);
        rc = store_watch_next(ws->w, ws->out.len ? 0 : WATCH_POLL_MS, &ev, &err);
        if (rc == 1) {
            static const char *names[] = {"", "ADDED", "MODIFIED", "DELETED"};
            ws->last_rv = ev.rv;
            encode_event(ws, names[ev.type], ev.obj);
            store_event_release(&ev);
        } else if (rc == 0) {
            if (ws->out.len) {
                ty_error_clear(&err);
                return; /* nothing more waiting: send what there is */
            }
            if (ws->bookmarks && now - ws->last_send_ms >= WATCH_BOOKMARK_IDLE_MS) {
                encode_bookmark(ws);
                ws->last_send_ms = now;
            }
        } else {
            if (err.code == TY_EGONE)
                encode_error(ws, &err);
            ws->done = true;
        }
        ty_error_clear(&err);
    }
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    watch_stream *ws = cls;
    (void)pos;

    if (ws->out_off >= ws->out.len) {
        ws->out.len = 0;
        ws->out_off = 0;
        if (ws->done)
            return MHD_CONTENT_READER_END_OF_STREAM;
        produce(ws);
        if (ws->out.len == 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        ws->last_send_ms = ty_now_ms();
    }
    size_t n = ws->out.len - ws->out_off;
    if (n > max)
        n = max;
    memcpy(buf, ws->out.data + ws->out_off, n);
    ws->out_off += n;
    return (ssize_t)n;
}

static void free_stream(void *cls)
{
    watch_stream *ws = cls;
    if (ws->w)
        store_watch_close(ws->w);
    store_list_free(&ws->initial);
    resource_filter_free(&ws->rf);
    ty_buf_free(&ws->out);
    free(ws);
}

static int parse_rv(const char *s, uint64_t *out, ty_error *err)
{
    char *end;
    unsigned long long v;
    if (!s || !*s) {
        *out = 0;
        return 0;
    }
    v = strtoull(s, &end, 10);
    if (*end)
        return ty_seterr(err, TY_EBADREQUEST, "invalid resourceVersion \"%s\"", s);
    *out = v;
    return 0;
}

enum MHD_Result watch_handle(http_req *r, const res_path *p)
{
    ty_error err;
    watch_stream *ws = calloc(1, sizeof(*ws));
    const char *rvs = http_query(r, "resourceVersion");
    const char *ts = http_query(r, "timeoutSeconds");
    const char *key = api_store_key(p->res);
    ty_store *st = server_store(r->srv);
    uint64_t from = 0;
    long timeout_s = WATCH_DEFAULT_TIMEOUT_S;
    struct MHD_Response *resp;
    const union MHD_ConnectionInfo *ci;
    enum MHD_Result ret;

    ty_error_init(&err);
    if (!ws)
        return MHD_NO;
    ws->srv = r->srv;
    ws->res = p->res;
    ws->table = http_wants_table(r);
    ws->bookmarks = http_query_bool(r, "allowWatchBookmarks");
    snprintf(ws->include, sizeof(ws->include), "%s",
             http_query(r, "includeObject") ? http_query(r, "includeObject") : "Metadata");
    if (ts && *ts)
        timeout_s = strtol(ts, NULL, 10);
    ws->deadline_ms = ty_now_ms() + (timeout_s > 0 ? timeout_s : WATCH_DEFAULT_TIMEOUT_S) * 1000;
    ws->last_send_ms = ty_now_ms();
    ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    ws->fd = ci ? ci->connect_fd : -1;
    if (resource_filter_init(r, p->res, &ws->rf, &err) < 0 || parse_rv(rvs, &from, &err) < 0)
        goto error;
    if (from == 0) {
        /* No version (or "0"): the current state as ADDED events, then changes. */
        store_list_opts lo = {.ns = p->ns};
        if (store_list_objects(st, key, &lo, &ws->initial, &err) < 0)
            goto error;
        from = ws->initial.rv;
    }
    ws->last_rv = from;
    ws->w = store_watch_open(st, key, p->ns, from, &err);
    if (!ws->w) {
        if (err.code != TY_EGONE)
            goto error;
        /* As kube-apiserver: a 200 stream carrying one ERROR event (410). */
        encode_error(ws, &err);
        ws->done = true;
    }
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, reader, ws,
                                             free_stream);
    if (!resp) {
        free_stream(ws);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    ty_error_clear(&err);
    return http_queue(r, 200, resp);
error:
    free_stream(ws);
    ret = http_send_error(r, &err, p->res, NULL);
    ty_error_clear(&err);
    return ret;
}
