/* podlog.c - GET pods/{name}/log.
 *
 * The lines come from the log source the server was given (server/logsrc.h:
 * the runtime backend that ran the pod), in the stored form: an RFC 3339
 * timestamp, a space, the line ("2026-11-21T23:38:50.123456789Z hello").
 * This handler applies the API's options (timestamps, sinceSeconds /
 * sinceTime, limitBytes, follow until the pod finished) and resolves the
 * default container from the pod while it exists; a backend keeps logs past
 * the pod (the local one for --pod-log-retention), so a deleted pod's logs
 * are served from the containers that left one. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/meta.h"
#include "base/buf.h"
#include "base/timeutil.h"
#include "server/authz.h"
#include "server/reqattr.h"
#include "server/resource_internal.h"

#define LOG_FOLLOW_POLL_MS 200

typedef struct log_opts {
    bool follow, timestamps, previous;
    long tail_lines;        /* -1 = all */
    long long limit_bytes;  /* -1 = no limit */
    time_t since;           /* 0 = from the start */
} log_opts;

typedef struct log_stream {
    ty_server *srv;
    const logsrc *src;
    logsrc_stream *f;
    log_opts o;
    char ns[256], pod[256];
    long long sent;
    int fd;
    bool last_pass;         /* the pod finished: read what is left, then end */
    ty_buf pending;         /* a partial last line waiting for its newline */
} log_stream;

/* Writes one stored line (with its timestamp prefix) as the client asked. */
static size_t emit_line(const log_opts *o, const char *line, size_t len, char *out, size_t max)
{
    const char *sp = memchr(line, ' ', len);
    const char *text = line;
    size_t tlen = len;

    if (sp && !o->timestamps) {
        text = sp + 1;
        tlen = len - (size_t)(sp + 1 - line);
    }
    if (o->since && sp) {
        char ts[40];
        time_t t;
        size_t n = (size_t)(sp - line) < sizeof(ts) - 1 ? (size_t)(sp - line) : sizeof(ts) - 1;
        memcpy(ts, line, n);
        ts[n] = '\0';
        if (ty_time_parse(ts, &t) == 0 && t < o->since)
            return 0;
    }
    if (tlen > max)
        tlen = max;
    memcpy(out, text, tlen);
    return tlen;
}

static bool pod_finished(log_stream *ls)
{
    store_obj *o = store_get(server_store(ls->srv), "pods", ls->ns, ls->pod, NULL);
    const char *phase;
    bool done;
    if (!o)
        return true;
    phase = json_string_value(json_object_get(json_object_get(store_obj_json(o), "status"), "phase"));
    done = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    store_obj_unref(o);
    return done;
}

static ssize_t log_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    log_stream *ls = cls;
    char line[16384];
    (void)pos;

    for (;;) {
        if (ls->o.limit_bytes >= 0 && ls->sent >= ls->o.limit_bytes)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (ls->src->gets(ls->f, line, sizeof(line))) {
            size_t len = strlen(line);
            if (len == 0) /* a piece that starts with a NUL the container wrote */
                continue;
            if (line[len - 1] != '\n' && ls->o.follow) {
                /* The writer is mid-line: keep the piece and wait for the rest. */
                ty_buf_append(&ls->pending, line, len);
                continue;
            }
            if (ls->pending.len) {
                ty_buf_append(&ls->pending, line, len);
                len = ls->pending.len < sizeof(line) - 1 ? ls->pending.len : sizeof(line) - 1;
                memcpy(line, ls->pending.data, len);
                line[len] = '\0';
                ls->pending.len = 0;
            }
            size_t cap = max;
            if (ls->o.limit_bytes >= 0 && (long long)cap > ls->o.limit_bytes - ls->sent)
                cap = (size_t)(ls->o.limit_bytes - ls->sent);
            size_t n = emit_line(&ls->o, line, len, buf, cap);
            if (n == 0)
                continue;
            ls->sent += (long long)n;
            return (ssize_t)n;
        }
        if (!ls->o.follow || server_stopping(ls->srv))
            return MHD_CONTENT_READER_END_OF_STREAM;
        /* Rotated: the rest of the old file, then the new one. */
        if (ls->src->rotated && ls->src->rotated(ls->f))
            continue;
        if (ls->last_pass)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (pod_finished(ls)) {
            /* One more pass picks up what was written before the exit. */
            ls->last_pass = true;
            continue;
        }
        struct pollfd pfd = {.fd = ls->fd, .events = POLLRDHUP};
        if (ls->fd >= 0 && poll(&pfd, 1, LOG_FOLLOW_POLL_MS) > 0 &&
            (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (ls->fd < 0)
            usleep(LOG_FOLLOW_POLL_MS * 1000);
    }
}

static void log_free(void *cls)
{
    log_stream *ls = cls;
    ls->src->close(ls->f);
    ty_buf_free(&ls->pending);
    free(ls);
}

static int parse_log_opts(http_req *r, log_opts *o, ty_error *err)
{
    const char *v;
    memset(o, 0, sizeof(*o));
    o->follow = http_query_bool(r, "follow");
    o->timestamps = http_query_bool(r, "timestamps");
    o->previous = http_query_bool(r, "previous");
    o->tail_lines = -1;
    o->limit_bytes = -1;
    if ((v = http_query(r, "tailLines")) && *v) {
        o->tail_lines = strtol(v, NULL, 10);
        if (o->tail_lines < 0)
            return ty_seterr(err, TY_EINVALID, "PodLogOptions \"\" is invalid: tailLines: "
                                               "Invalid value: %s: must be greater than or "
                                               "equal to 0", v);
    }
    if ((v = http_query(r, "limitBytes")) && *v) {
        o->limit_bytes = strtoll(v, NULL, 10);
        if (o->limit_bytes < 1)
            return ty_seterr(err, TY_EINVALID, "PodLogOptions \"\" is invalid: limitBytes: "
                                               "Invalid value: %s: must be greater than 0", v);
    }
    if ((v = http_query(r, "sinceSeconds")) && *v) {
        long s = strtol(v, NULL, 10);
        if (s < 1)
            return ty_seterr(err, TY_EINVALID, "PodLogOptions \"\" is invalid: sinceSeconds: "
                                               "Invalid value: %s: must be greater than 0", v);
        o->since = time(NULL) - s;
    }
    if ((v = http_query(r, "sinceTime")) && *v && ty_time_parse(v, &o->since) < 0)
        return ty_seterr(err, TY_EBADREQUEST, "invalid sinceTime %s", v);
    return 0;
}

/* A deleted pod's logs outlive it in its backend: without the pod object,
 * the container is the only one that left a log. */
static int only_logged_container(http_req *r, const res_path *p, char *out, size_t len,
                                 ty_error *err)
{
    const logsrc *src = server_logsrc(r->srv);
    json_t *names = src && src->containers ? src->containers(src->arg, p->ns, p->name) : NULL;
    size_t n = json_array_size(names);

    if (n == 1)
        snprintf(out, len, "%s", json_string_value(json_array_get(names, 0)) ?: "");
    json_decref(names);
    if (n == 1)
        return 0;
    if (n == 0)
        return ty_seterr(err, TY_ENOTFOUND, "pods \"%s\" not found", p->name);
    return ty_seterr(err, TY_EBADREQUEST,
                     "a container name must be specified for pod %s (it has been deleted and "
                     "left logs of several containers)",
                     p->name);
}

/* The container to read: the one named, or the only one. */
static int pick_container(http_req *r, const res_path *p, char *out, size_t len, ty_error *err)
{
    const char *c = http_query(r, "container");
    store_obj *o = store_get(server_store(r->srv), "pods", p->ns, p->name, NULL);
    const json_t *containers;

    if (c && *c) {
        snprintf(out, len, "%s", c);
        store_obj_unref(o);
        return 0;
    }
    if (!o)
        return only_logged_container(r, p, out, len, err);
    containers = json_object_get(json_object_get(store_obj_json(o), "spec"), "containers");
    if (json_array_size(containers) == 1) {
        snprintf(out, len, "%s",
                 json_string_value(json_object_get(json_array_get(containers, 0), "name")));
        store_obj_unref(o);
        return 0;
    }
    ty_buf names = {0};
    size_t i;
    json_t *ct;
    json_array_foreach(containers, i, ct)
        ty_buf_printf(&names, "%s%s", i ? " " : "", json_string_value(json_object_get(ct, "name")));
    ty_seterr(err, TY_EBADREQUEST,
              "a container name must be specified for pod %s, choose one of: [%s]", p->name,
              names.data ? names.data : "");
    ty_buf_free(&names);
    store_obj_unref(o);
    return -1;
}

static int cmp_pod(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "pod"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "pod"));
    return strcmp(x ? x : "", y ? y : "");
}

/* The caller may also list the namespace's pods: the listing shows deleted
 * pods' names and labels, which a lister of pods saw while they existed
 * and a reader of logs alone never does. */
static bool may_list_pods(http_req *r, const char *ns, enum MHD_Result *ret)
{
    char reason[256] = "";
    reqattr a = {.resource_request = true};

    snprintf(a.verb, sizeof(a.verb), "list");
    snprintf(a.api_version, sizeof(a.api_version), "v1");
    snprintf(a.resource, sizeof(a.resource), "pods");
    snprintf(a.ns, sizeof(a.ns), "%s", ns);
    if (authz_check(server_authz(r->srv), r->user, &a, reason, sizeof(reason)))
        return true;
    *ret = http_send_json(r, 403, authz_forbidden_status(r->user ? r->user->name : "system:anonymous",
                                                         &a, reason));
    return false;
}

/* Retained logs are kept by namespace and pod name, and a namespace's name
 * can be given out again (to another team) while the logs of the earlier
 * namespace of that name are still kept. Those are not the new namespace's:
 * an entry names the uid of the namespace its pod went from
 * ("namespaceUID"). A mark of an earlier version has none: then a pod that
 * went before the namespace now holding its name was made belonged to an
 * earlier one (creationTimestamp has whole seconds, so a pod gone in the
 * namespace's first second is left out too: fail safe). */
typedef struct {
    char uid[128];
    time_t created; /* -1: the namespace does not exist */
} ns_now;

static ns_now ns_lookup(http_req *r, const char *ns)
{
    store_obj *o = store_get(server_store(r->srv), "namespaces", NULL, ns, NULL);
    const json_t *meta = o ? json_object_get(store_obj_json(o), "metadata") : NULL;
    const char *ts = json_string_value(json_object_get(meta, "creationTimestamp"));
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    ns_now n = {.created = -1};

    if (ts && ty_time_parse(ts, &n.created) < 0)
        n.created = -1;
    snprintf(n.uid, sizeof(n.uid), "%s", uid && strlen(uid) < sizeof(n.uid) ? uid : "");
    store_obj_unref(o);
    return n;
}

static bool gone_in_this_ns(const ns_now *n, const json_t *entry)
{
    const char *uid = json_string_value(json_object_get(entry, "namespaceUID"));
    const char *gone = json_string_value(json_object_get(entry, "goneTime"));
    time_t t;

    if (n->created < 0)
        return false;
    if (uid)
        return *n->uid && !strcmp(uid, n->uid);
    return gone && ty_time_parse(gone, &t) == 0 && t > n->created;
}

/* Whether the logs of ns/pod, a pod whose object is gone, may be read: not
 * when they are an earlier namespace's. Logs without a mark yet (the agent
 * marks a pod's directory just after it lets the pod go) are the current
 * namespace's: that one could not be deleted before its pods were. */
static bool deleted_pod_readable(http_req *r, const logsrc *src, const char *ns, const char *pod)
{
    json_t *all = src && src->retained ? src->retained(src->arg, ns) : NULL, *e;
    bool ok = true;
    size_t i;

    json_array_foreach(all, i, e) {
        const char *name = json_string_value(json_object_get(e, "pod"));
        if (name && !strcmp(name, pod)) {
            ns_now now = ns_lookup(r, ns);
            ok = gone_in_this_ns(&now, e);
            break;
        }
    }
    json_decref(all);
    return ok;
}

/* GET pods/-/log: the logs kept of the namespace's deleted pods ("-" is no
 * pod's name), authorized as reading pods/log in the namespace (the gate,
 * before this handler: that reads each of them) and listing its pods (their
 * names and labels): the list shows no more than those grant. A trainyard
 * extension for `trainyard logs --deleted` (docs/compatibility.md). */
static enum MHD_Result retained_list(http_req *r, const res_path *p)
{
    const logsrc *src = server_logsrc(r->srv);
    json_t *all, *items, *e, *out;
    json_t **v = NULL;
    size_t i, n = 0;
    ns_now now;
    ty_error err;

    if (!p->ns || !meta_is_dns1123_label(p->ns)) {
        ty_error_init(&err);
        ty_seterr(&err, TY_EBADREQUEST, "invalid namespace");
        enum MHD_Result ret = http_send_error(r, &err, p->res, p->name);
        ty_error_clear(&err);
        return ret;
    }
    {
        enum MHD_Result ret;
        if (!may_list_pods(r, p->ns, &ret))
            return ret;
    }
    all = src && src->retained ? src->retained(src->arg, p->ns) : NULL;
    now = ns_lookup(r, p->ns);
    items = json_array();
    json_array_foreach(all, i, e) {
        const char *pod = json_string_value(json_object_get(e, "pod"));
        store_obj *o = pod ? store_get(server_store(r->srv), "pods", p->ns, pod, NULL) : NULL;
        if (o) { /* a pod of that name again: its logs are its own */
            store_obj_unref(o);
            continue;
        }
        if (!gone_in_this_ns(&now, e))
            continue;
        if (pod)
            json_array_append(items, e);
    }
    json_decref(all);
    n = json_array_size(items);
    if (n && (v = malloc(n * sizeof(*v)))) {
        for (i = 0; i < n; i++)
            v[i] = json_incref(json_array_get(items, i));
        qsort(v, n, sizeof(*v), cmp_pod);
        json_array_clear(items);
        for (i = 0; i < n; i++)
            json_array_append_new(items, v[i]);
        free(v);
    }
    out = json_pack("{s:s, s:s, s:s, s:o}", "kind", "RetainedLogList", "apiVersion",
                    "trainyard.io/v1", "namespace", p->ns, "items", items);
    return http_send_json(r, 200, out);
}

enum MHD_Result podlog_handle(http_req *r, const res_path *p)
{
    ty_error err;
    log_opts o;
    char container[256];
    const logsrc *src;
    log_stream *ls;
    struct MHD_Response *resp;
    const union MHD_ConnectionInfo *ci;
    enum MHD_Result ret;

    if (p->name && strcmp(p->name, "-") == 0)
        return retained_list(r, p);
    ty_error_init(&err);
    /* A backend names files by them: ".." would leave its directory (GET
     * /api/v1/namespaces/../pods/<uid>/log read a supervisor's log). */
    if (!p->ns || !meta_is_dns1123_label(p->ns) || !p->name ||
        !meta_is_dns1123_subdomain(p->name)) {
        ty_seterr(&err, TY_EBADREQUEST, "invalid namespace, pod or container name");
        goto error;
    }
    src = server_logsrc(r->srv);
    {
        store_obj *pod = store_get(server_store(r->srv), "pods", p->ns, p->name, NULL);
        bool readable = pod || deleted_pod_readable(r, src, p->ns, p->name);
        store_obj_unref(pod);
        if (!readable) {
            ty_seterr(&err, TY_ENOTFOUND, "pods \"%s\" not found", p->name);
            goto error;
        }
    }
    if (parse_log_opts(r, &o, &err) < 0 ||
        pick_container(r, p, container, sizeof(container), &err) < 0)
        goto error;
    if (!meta_is_dns1123_label(container)) {
        ty_seterr(&err, TY_EBADREQUEST, "invalid namespace, pod or container name");
        goto error;
    }
    ls = calloc(1, sizeof(*ls));
    if (!ls)
        return MHD_NO;
    /* At the last tailLines lines of the run (its rotated part included). */
    ls->f = src ? src->open(src->arg, p->ns, p->name, container, o.previous, o.tail_lines,
                            &err)
                : NULL;
    if (!ls->f) {
        free(ls);
        if (src && err.code != TY_ENOTFOUND)
            goto error;
        ty_error_clear(&err);
        if (o.previous)
            ty_seterr(&err, TY_EBADREQUEST,
                      "previous terminated container \"%s\" in pod \"%s\" not found", container,
                      p->name);
        else
            ty_seterr(&err, TY_EBADREQUEST,
                      "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating",
                      container, p->name);
        goto error;
    }
    ls->src = src;
    ls->srv = r->srv;
    ls->o = o;
    snprintf(ls->ns, sizeof(ls->ns), "%s", p->ns);
    snprintf(ls->pod, sizeof(ls->pod), "%s", p->name);
    ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    ls->fd = ci ? ci->connect_fd : -1;
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, log_reader, ls, log_free);
    if (!resp) {
        log_free(ls);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/plain");
    return http_queue(r, 200, resp);
error:
    ret = http_send_error(r, &err, p->res, p->name);
    ty_error_clear(&err);
    return ret;
}
