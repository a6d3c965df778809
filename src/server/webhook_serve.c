/* webhook_serve.c - a listener of its own for the admission webhook
 * (webhook.h): HTTPS with the certificate the webhook configuration's
 * caBundle vouches for, POST /mutate and /validate, nothing else.
 *
 * kube-apiserver is its only client and waits at most its timeoutSeconds
 * (10 s by default) for each answer, so the limits are small: a connection
 * idle 30 s is closed, at most WEBHOOK_CONNECTIONS at once. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/log.h"
#include "server/http.h"
#include "server/tls.h"
#include "server/webhook.h"

#define WEBHOOK_CONNECTIONS 256
#define WEBHOOK_IDLE_S 30

struct webhook_server {
    struct MHD_Daemon *daemon;
    api_lookup lookup;
    bool has_lookup;
    tls_pem pem; /* libmicrohttpd reads it for as long as it runs */
    const webhook_extra *extra;
    uint16_t port;
};

/* One request's body as it arrives. */
typedef struct wh_conn {
    char *buf;
    size_t len, cap;
    bool too_large; /* past WEBHOOK_MAX_BODY: the rest is read and dropped */
} wh_conn;

static enum MHD_Result send_json_after(struct MHD_Connection *conn, unsigned status,
                                       json_t *body, long long retry_after)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct MHD_Response *resp;
    enum MHD_Result ret;

    json_decref(body);
    if (!text)
        return MHD_NO; /* out of memory: the connection closes */
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (retry_after > 0) {
        char after[24];
        snprintf(after, sizeof(after), "%lld", retry_after);
        MHD_add_response_header(resp, "Retry-After", after);
    }
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *body)
{
    return send_json_after(conn, status, body, 0);
}

static enum MHD_Result send_status(struct MHD_Connection *conn, ty_errcode code,
                                   const char *text)
{
    ty_error err;
    json_t *st;

    ty_error_init(&err);
    ty_seterr(&err, code, "%s", text);
    st = status_from_error(&err, NULL, NULL);
    return send_json(conn, (unsigned)ty_errcode_http(code), st);
}

/* Keeps the body, up to the limit. 0, or -1 when memory ran out. */
static int take_body(wh_conn *wc, const char *data, size_t n)
{
    if (wc->too_large || wc->len + n > WEBHOOK_MAX_BODY) {
        wc->too_large = true;
        free(wc->buf);
        wc->buf = NULL;
        wc->len = wc->cap = 0;
        return 0;
    }
    if (wc->len + n > wc->cap) {
        size_t ncap = wc->cap ? wc->cap : 16384;
        while (ncap < wc->len + n)
            ncap *= 2;
        char *nb = realloc(wc->buf, ncap);
        if (!nb)
            return -1;
        wc->buf = nb;
        wc->cap = ncap;
    }
    memcpy(wc->buf + wc->len, data, n);
    wc->len += n;
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    webhook_server *ws = cls;
    wh_conn *wc = *con_cls;
    unsigned status;
    json_t *out;
    (void)version;

    if (!wc) {
        const char *clen =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (strcmp(method, "POST") != 0)
            return send_status(conn, TY_EMETHOD, "the server does not allow this method on "
                                                 "the requested resource");
        /* a body declared far past the limit is not worth reading to drop */
        if (clen && strtoull(clen, NULL, 10) > 4ull * WEBHOOK_MAX_BODY) {
            char text[128];
            snprintf(text, sizeof(text), "Request entity too large: an AdmissionReview is at "
                     "most %u bytes, this one is %s", WEBHOOK_MAX_BODY, clen);
            return send_status(conn, TY_ETOOLARGE, text);
        }
        if (!(wc = calloc(1, sizeof(*wc))))
            return MHD_NO;
        *con_cls = wc;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (take_body(wc, upload_data, *upload_data_size) < 0)
            return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (ws->extra && ws->extra->match(method, url)) {
        long long after = 0;
        out = ws->extra->handle(ws->extra->ctx, url,
                                MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                            "Authorization"),
                                wc->buf ? wc->buf : "",
                                wc->too_large ? WEBHOOK_MAX_BODY + 1 : wc->len, &status, &after);
        if (!out)
            return MHD_NO;
        return send_json_after(conn, status, out, after);
    }
    /* the whole body is in: webhook_mutate and webhook_validate answer a
     * length past the limit with their 413 */
    out = webhook_handle(url, wc->buf, wc->too_large ? WEBHOOK_MAX_BODY + 1 : wc->len,
                         ws->has_lookup ? &ws->lookup : NULL, &status);
    if (!out)
        return MHD_NO;
    return send_json(conn, status, out);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    wh_conn *wc = *con_cls;
    (void)cls, (void)conn, (void)toe;

    if (wc) {
        free(wc->buf);
        free(wc);
        *con_cls = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    (void)cls;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    ty_debug("webhook http: %s", buf);
}

webhook_server *webhook_serve_start(const webhook_serve_opts *opts, ty_error *err)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    const char *address = opts->address && *opts->address ? opts->address : "0.0.0.0";
    struct MHD_OptionItem tls[4] = {{MHD_OPTION_END, 0, NULL}};
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG;
    const union MHD_DaemonInfo *info;
    webhook_server *ws = calloc(1, sizeof(*ws));

    if (!ws) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (opts->lookup) {
        ws->lookup = *opts->lookup;
        ws->has_lookup = true;
    }
    ws->extra = opts->extra;
    if (inet_pton(AF_INET, address, &addr.sin_addr) != 1) {
        ty_seterr(err, TY_EBADREQUEST, "invalid webhook address %s: want an IPv4 address",
                  address);
        goto error;
    }
    if (!opts->tls_cert_file != !opts->tls_key_file) {
        ty_seterr(err, TY_EBADREQUEST, "the webhook needs both a certificate and its key");
        goto error;
    }
    if (opts->tls_cert_file) {
        if (tls_load_pair(opts->tls_cert_file, opts->tls_key_file, &ws->pem, err) < 0)
            goto error;
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            ty_seterr(err, TY_EINTERNAL, "this libmicrohttpd was built without TLS");
            goto error;
        }
        flags |= MHD_USE_TLS;
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, ws->pem.cert};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, ws->pem.key};
        /* TLS 1.2 and 1.3, as the API server (server.c) */
        tls[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                         (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"};
        tls[3] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    addr.sin_port = htons(opts->port);
    ws->daemon = MHD_start_daemon(flags, opts->port, NULL, NULL, on_request, ws,
                                  MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_NOTIFY_COMPLETED,
                                  on_completed, ws, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEBHOOK_CONNECTIONS,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)WEBHOOK_IDLE_S,
                                  MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!ws->daemon) {
        ty_seterr(err, TY_EUNAVAILABLE, "cannot listen on %s:%u for the webhook (address in "
                  "use?)", address, (unsigned)opts->port);
        goto error;
    }
    info = MHD_get_daemon_info(ws->daemon, MHD_DAEMON_INFO_BIND_PORT);
    ws->port = info ? info->port : opts->port;
    return ws;
error:
    tls_pem_free(&ws->pem);
    free(ws);
    return NULL;
}

uint16_t webhook_serve_port(const webhook_server *ws)
{
    return ws->port;
}

void webhook_serve_stop(webhook_server *ws)
{
    if (!ws)
        return;
    MHD_stop_daemon(ws->daemon);
    tls_pem_free(&ws->pem);
    free(ws);
}
