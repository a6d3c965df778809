/* server.c - libmicrohttpd setup, request body collection and dispatch. */
#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/log.h"
#include "base/timeutil.h"
#include "server/authn.h"
#include "server/console.h"
#include "server/progress.h"
#include "server/api_metrics.h"
#include "server/audit_http.h"
#include "server/gate.h"
#include "server/guard.h"
#include "server/http.h"
#include "server/review.h"

struct ty_server {
    struct MHD_Daemon *daemon;
    http_guard *guard;
    ty_store *store;
    char *data_dir;
    const logsrc *logs;
    uint16_t port;
    char address[64];
    bool tls;
    atomic_bool stopping;
    unsigned timeout_s; /* the idle timeout of ordinary requests; 0 = none */
    struct ty_authn *authn;
    struct ty_authz *authz;
    struct ty_audit *audit;
};

struct ty_authn *server_authn(ty_server *srv)
{
    return srv->authn;
}

struct ty_authz *server_authz(ty_server *srv)
{
    return srv->authz;
}

struct ty_audit *server_audit(ty_server *srv)
{
    return srv->audit;
}

ty_store *server_store(ty_server *srv)
{
    return srv->store;
}

const char *server_data_dir(ty_server *srv)
{
    return srv->data_dir;
}

const logsrc *server_logsrc(ty_server *srv)
{
    return srv->logs;
}

bool server_stopping(ty_server *srv)
{
    return atomic_load(&srv->stopping);
}

const char *http_query(http_req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

bool http_query_bool(http_req *r, const char *key)
{
    const char *v = http_query(r, key);
    return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);
}

void http_add_warning(http_req *r, const char *text)
{
    char buf[1024];
    size_t j = 0;

    if (r->nwarnings >= (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
        return;
    j = (size_t)snprintf(buf, sizeof(buf), "299 - \"");
    for (const char *p = text; *p && j + 4 < sizeof(buf); p++) {
        if (*p == '"' || *p == '\\')
            buf[j++] = '\\';
        buf[j++] = *p;
    }
    buf[j++] = '"';
    buf[j] = '\0';
    r->warnings[r->nwarnings++] = strdup(buf);
}

bool http_wants_table(http_req *r)
{
    return r->accept && strstr(r->accept, "as=Table") != NULL;
}

enum MHD_Result http_queue(http_req *r, unsigned status, struct MHD_Response *resp)
{
    enum MHD_Result ret;

    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->cors_origin) {
        /* The header set kube-apiserver's --cors-allowed-origins answers with. */
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->cors_origin);
        MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                                "POST, GET, OPTIONS, PUT, DELETE, PATCH");
        MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                                "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, "
                                "Authorization, X-Requested-With, If-Modified-Since");
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", "Date");
        MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
        MHD_add_response_header(resp, "Vary", "Origin");
    }
    if (status == 429)
        MHD_add_response_header(resp, "Retry-After", "1");
    for (int i = 0; i < r->nwarnings; i++)
        MHD_add_response_header(resp, "Warning", r->warnings[i]);
    audit_http_header(r, resp);
    r->status = status;
    ret = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result http_send_buffer(http_req *r, unsigned status, const char *ctype, char *buf,
                                 size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    audit_http_response(r, status, ctype, buf, len);
    return http_queue(r, status, resp);
}

enum MHD_Result http_send_text(http_req *r, unsigned status, const char *ctype,
                               const char *text, size_t len)
{
    char *copy = text ? malloc(len + 1) : NULL;
    if (!copy)
        return MHD_NO;
    memcpy(copy, text, len);
    copy[len] = '\0';
    return http_send_buffer(r, status, ctype, copy, len);
}

enum MHD_Result http_send_json(http_req *r, unsigned status, json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT);
    json_decref(value);
    if (!text)
        return MHD_NO;
    return http_send_buffer(r, status, "application/json", text, strlen(text));
}

enum MHD_Result http_send_error(http_req *r, const ty_error *err, const api_resource *res,
                                const char *name)
{
    json_t *st = status_from_error(err, res, name);
    return http_send_json(r, (unsigned)ty_errcode_http(err->code), st);
}

/* Splits the path into segments in place (r->url keeps the original). */
static void split_path(http_req *r, char *path)
{
    char *save = NULL;
    r->nsegs = 0;
    for (char *tok = strtok_r(path, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (r->nsegs == HTTP_MAX_SEGMENTS) {
            r->nsegs = HTTP_MAX_SEGMENTS + 1; /* marks "too deep": no route matches */
            return;
        }
        r->segs[r->nsegs++] = tok;
    }
}

typedef struct conn_state {
    char *buf;
    size_t len, cap;
    bool too_large;
    bool refused;     /* answered by the guard: the body is dropped */
    guard_slot slot;  /* what the guard counted, released when the request ends */
    int64_t upload_deadline_ms; /* the body must be in by then (0: no limit) */
    bool streams;     /* a watch or a followed log (guard_long_running) */
    bool authenticated; /* gate_authenticate ran at the headers */
    ty_user *user;    /* what it found (owned until dispatch takes it) */
    struct audit_rec *audit; /* the request's audit record, or NULL */
    int64_t start_us;  /* when its headers came (the request metrics' clock) */
} conn_state;

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The request metrics (api_metrics.h) of a request answered. */
static void record_request(http_req *r, const conn_state *cs)
{
    if (!r->attr.verb[0])
        reqattr_parse(&r->attr, r->method, r->url,
                      MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "watch"));
    api_metrics_record(&r->attr, r->content_type, r->status, mono_us() - cs->start_us,
                       cs->streams);
}

static enum MHD_Result dispatch(ty_server *srv, struct MHD_Connection *conn, const char *url,
                                const char *method, conn_state *cs)
{
    http_req r = {.srv = srv, .conn = conn, .method = method, .url = url};
    char *path = strdup(url);
    enum MHD_Result ret;
    bool handled = false;
    ty_error err;

    ty_error_init(&err);
    if (!path)
        return MHD_NO;
    r.audit = cs->audit;
    r.body = cs->buf;
    r.body_len = cs->len;
    r.authenticated = cs->authenticated;
    r.user = cs->user; /* gate_done frees it */
    cs->user = NULL;
    r.body_too_large = cs->too_large;
    r.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    r.accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
    r.cors_origin = guard_cors_origin(srv->guard, conn);
    split_path(&r, path);

    if (r.cors_origin && strcmp(method, "OPTIONS") == 0) {
        /* A browser's preflight for an allowed origin: the headers say it all. */
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        ret = resp ? http_queue(&r, 204, resp) : MHD_NO;
    } else if (r.body_too_large) {
        ty_seterr(&err, TY_ETOOLARGE, "Request entity too large: limit is %u", HTTP_MAX_BODY);
        ret = http_send_error(&r, &err, NULL, NULL);
    } else if (console_path(url)) {
        /* static files with no data in them: no credentials asked (console.h) */
        ret = console_handle(&r);
    } else if (progress_path(method, url)) {
        /* a TrainJob's progress: its own token, checked there (progress.h) */
        ret = progress_handle(&r);
    } else if (gate_check(&r, &ret)) {
        ret = discovery_handle(&r, &handled);
        if (!handled)
            ret = review_handle(&r, &handled);
        if (!handled)
            ret = resource_handle(&r);
    }
    ty_debug("%s %s", method, url);
    audit_http_answered(&r);
    record_request(&r, cs);
    gate_done(&r);
    for (int i = 0; i < r.nwarnings; i++)
        free(r.warnings[i]);
    ty_error_clear(&err);
    free(path);
    return ret;
}

/* The guard's look at a request whose headers are in (guard.h). A refusal
 * is answered at once, before any of the body is read. */
static enum MHD_Result admit(ty_server *srv, struct MHD_Connection *conn, const char *url,
                             const char *method, conn_state *cs)
{
    http_req r = {.srv = srv, .conn = conn, .method = method, .url = url};
    ty_error err;
    enum MHD_Result ret;

    const char *clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    bool streams = cs->streams = guard_long_running(conn, method, url);

    cs->start_us = mono_us();
    r.audit = cs->audit = audit_http_begin(srv, conn);
    ty_error_init(&err);
    /* Set for every request: a connection keeps what its last request set. A
     * stream lasts as long as its client wants (its own loop notices one
     * that has gone); the others have the idle timeout, and their bodies
     * must be in within it twice over, so that a byte a minute cannot hold
     * an in-flight slot for ever. */
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
                              streams ? 0u : srv->timeout_s);
    cs->upload_deadline_ms = srv->timeout_s ? ty_now_ms() + 2000ll * srv->timeout_s : 0;
    /* A body declared too large is read and dropped (on_request) before the
     * 413 goes, when it is not absurdly large: answering before it is in
     * and closing with its bytes unread makes the kernel reset the
     * connection, and the client saw the reset instead of the answer. */
    unsigned long long declared = clen ? strtoull(clen, NULL, 10) : 0;
    if (declared > HTTP_DRAIN_MAX) {
        ty_seterr(&err, TY_ETOOLARGE, "Request entity too large: limit is %u", HTTP_MAX_BODY);
    } else if (guard_admit(srv->guard, conn, method, url, &cs->slot, &err) == 0) {
        cs->too_large = declared > HTTP_MAX_BODY;
        /* Who asks is known from the headers: a request without valid
         * credentials is answered now and its body dropped, so that it
         * holds no slot while it uploads. A browser's CORS preflight for
         * an allowed origin carries none and is answered without. */
        if (console_path(url) || progress_path(method, url)) {
            /* the console's static files need none: dispatch serves them
             * without the gate (the guard above still ran); the progress
             * endpoint checks its job's own token (progress.h) */
        } else if (!(r.cors_origin = guard_cors_origin(srv->guard, conn)) ||
                   strcmp(method, "OPTIONS") != 0) {
            if (!gate_authenticate(&r, &ret)) {
                /* the body still drains (a clean 401, no reset), holding nothing */
                guard_release(srv->guard, cs->slot);
                cs->slot = GUARD_SLOT_NONE;
                cs->refused = true;
                reqattr_parse(&r.attr, method, url,
                              MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch"));
                audit_http_answered(&r);
                record_request(&r, cs);
                return ret;
            }
            cs->authenticated = true;
            cs->user = r.user;
        }
        return MHD_YES;
    }
    cs->refused = true;
    ty_debug("refused %s %s: %s", method, url, err.text);
    if (err.code == TY_ETOOMANY) /* plain text, as kube-apiserver's in-flight filter */
        ret = http_send_text(&r, 429, "text/plain; charset=utf-8", "Too many requests, please "
                             "try again later.\n", 43);
    else
        ret = http_send_error(&r, &err, NULL, NULL);
    audit_http_answered(&r);
    record_request(&r, cs);
    ty_error_clear(&err);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    ty_server *srv = cls;
    conn_state *cs = *con_cls;
    (void)version;

    if (!cs) {
        cs = calloc(1, sizeof(*cs));
        if (!cs)
            return MHD_NO;
        *con_cls = cs;
        return admit(srv, conn, url, method, cs);
    }
    if (cs->refused) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0 && cs->upload_deadline_ms &&
        ty_now_ms() > cs->upload_deadline_ms) {
        ty_info("closing %s %s: its body took longer than %us", method, url,
                2 * srv->timeout_s);
        return MHD_NO;
    }
    if (*upload_data_size > 0) {
        /* Bodies are capped: once past the limit we keep reading (and dropping)
         * so that the client gets a clean 413 instead of a reset. */
        if (!cs->too_large && cs->len + *upload_data_size > HTTP_MAX_BODY) {
            cs->too_large = true;
            free(cs->buf);
            cs->buf = NULL;
            cs->len = cs->cap = 0;
        }
        if (!cs->too_large) {
            if (cs->len + *upload_data_size + 1 > cs->cap) {
                size_t ncap = cs->cap ? cs->cap : 4096;
                while (ncap < cs->len + *upload_data_size + 1)
                    ncap *= 2;
                char *nbuf = realloc(cs->buf, ncap);
                if (!nbuf)
                    return MHD_NO;
                cs->buf = nbuf;
                cs->cap = ncap;
            }
            memcpy(cs->buf + cs->len, upload_data, *upload_data_size);
            cs->len += *upload_data_size;
            cs->buf[cs->len] = '\0';
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    /* A handler may take longer than the idle timeout (a big list on a busy
     * disk): the connection must not be closed under it before it answers.
     * Setting the timeout again afterwards counts from now. */
    bool streams = cs->streams;
    enum MHD_Result ret;
    if (srv->timeout_s && !streams)
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    ret = dispatch(srv, conn, url, method, cs);
    if (srv->timeout_s && !streams)
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, srv->timeout_s);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    ty_server *srv = cls;
    conn_state *cs = *con_cls;
    (void)conn;
    (void)toe;
    if (cs) {
        audit_http_complete(srv, cs->audit);
        guard_release(srv->guard, cs->slot);
        userinfo_free(cs->user);
        free(cs->buf);
        free(cs);
        *con_cls = NULL;
    }
}

/* A TLS connection with client certificates gets a place to keep what its
 * certificate came to (authn.h), freed when it closes. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    (void)conn;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = authn_conn_new(); /* NULL: verified per request instead */
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        authn_conn_free(*socket_context);
        *socket_context = NULL;
    }
}

/* libmicrohttpd's options for TLS (items, at least 6, ends with
 * MHD_OPTION_END; empty without a certificate) and its flag. */
static int tls_options(ty_server *srv, const server_opts *opts, struct MHD_OptionItem *items,
                       unsigned *flags, ty_error *err)
{
    size_t n = 0;

    if (opts->tls_cert_pem) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
            return ty_seterr(err, TY_EINTERNAL, "this libmicrohttpd was built without TLS");
        *flags |= MHD_USE_TLS;
        srv->tls = true;
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0,
                                             (void *)opts->tls_cert_pem};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0,
                                             (void *)opts->tls_key_pem};
        /* TLS 1.2 and 1.3 only, as kube-apiserver's default minimum */
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                             (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"};
        if (opts->client_ca_pem) {
            /* libmicrohttpd asks each client for a certificate (one may
             * come without) and keeps this list for the verification */
            items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
                                                 (void *)opts->client_ca_pem};
            items[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION,
                                                 (intptr_t)on_connection, srv};
        }
    }
    items[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return 0;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    (void)cls;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    ty_debug("http: %s", buf);
}

/* How many connections the server takes: the open-file limit less what the
 * store, the runtime's logs and pipes need, so that a flood of idle clients
 * cannot starve them of descriptors. */
static void connection_limits(const server_opts *opts, unsigned *total, unsigned *per_client)
{
    struct rlimit rl;
    long max = opts->max_connections > 0 ? opts->max_connections : SERVER_DEFAULT_MAX_CONNECTIONS;
    long per = opts->max_connections_per_client > 0 ? opts->max_connections_per_client
                                                    : SERVER_DEFAULT_MAX_PER_CLIENT;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (long)rl.rlim_cur - 256 < max)
        max = (long)rl.rlim_cur > 512 ? (long)rl.rlim_cur - 256 : (long)rl.rlim_cur / 2;
    if (opts->max_connections_per_client < 0 || per > max)
        per = max;
    *total = (unsigned)max;
    *per_client = (unsigned)per;
}

ty_server *server_start(ty_store *store, const server_opts *opts, ty_error *err)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    const char *address = opts->address && *opts->address ? opts->address : "127.0.0.1";
    ty_server *srv = calloc(1, sizeof(*srv));
    const union MHD_DaemonInfo *info;
    unsigned timeout_s = opts->request_timeout_s == 0 ? SERVER_DEFAULT_REQUEST_TIMEOUT_S
                         : opts->request_timeout_s < 0 ? 0
                                                       : (unsigned)opts->request_timeout_s;
    unsigned max_conn, max_per_client;

    if (!srv) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    api_metrics_declare();
    srv->store = store;
    srv->data_dir = strdup(opts->data_dir ? opts->data_dir : ".");
    srv->logs = opts->logs;
    srv->authn = opts->authn;
    srv->authz = opts->authz;
    srv->audit = opts->audit;
    if (inet_pton(AF_INET, address, &addr.sin_addr) != 1) {
        ty_seterr(err, TY_EBADREQUEST, "invalid --address %s: want an IPv4 address", address);
        goto error;
    }
    if (!(srv->guard = guard_new(opts, err)))
        goto error;
    connection_limits(opts, &max_conn, &max_per_client);
    srv->timeout_s = timeout_s;
    addr.sin_port = htons(opts->port);
    struct MHD_OptionItem tls_opts[8];
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (tls_options(srv, opts, tls_opts, &flags, err) < 0)
        goto error;
    /* One thread per connection: watches block their thread while they wait
     * for events, which keeps the streaming code straight-line. The port is
     * the server's alone: no SO_REUSEPORT, so a second server on it fails
     * instead of sharing its connections. */
    srv->daemon = MHD_start_daemon(
        flags, opts->port, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, &addr,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_log, NULL, MHD_OPTION_CONNECTION_LIMIT, max_conn,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, max_per_client, MHD_OPTION_CONNECTION_TIMEOUT,
        timeout_s, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    if (!srv->daemon) {
        ty_seterr(err, TY_EUNAVAILABLE, "cannot listen on %s:%u (address in use?)", address,
                  (unsigned)opts->port);
        goto error;
    }
    info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : opts->port;
    snprintf(srv->address, sizeof(srv->address), "%s",
             strcmp(address, "0.0.0.0") == 0 ? "127.0.0.1" : address);
    ty_debug("http: at most %u connections, %u per client, idle timeout %us", max_conn,
             max_per_client, timeout_s);
    return srv;
error:
    guard_free(srv->guard);
    free(srv->data_dir);
    free(srv);
    return NULL;
}

uint16_t server_port(const ty_server *srv)
{
    return srv->port;
}

void server_url(const ty_server *srv, char *buf, size_t len)
{
    snprintf(buf, len, "%s://%s:%u", srv->tls ? "https" : "http", srv->address,
             (unsigned)srv->port);
}

void server_stop(ty_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->stopping, true);
    MHD_stop_daemon(srv->daemon);
    guard_free(srv->guard);
    free(srv->data_dir);
    free(srv);
}
