/* operator_probe.c - the operator's plain HTTP endpoints for kubelet's
 * probes and Prometheus: GET /healthz, /readyz and /metrics, nothing else.
 *
 * What they answer comes from the operator through two flags it sets
 * (op_probe_set): healthy (false once leadership is lost, as the process is
 * about to exit) and ready (the API server was reached). /metrics is the
 * process's registry (base/metrics.h): the job controllers' and the
 * scheduler's counters, served only by the leader's process with values. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/metrics.h"
#include "cli/operator.h"

#define PROBE_CONNECTIONS 64
#define PROBE_IDLE_S 10

struct op_probe {
    struct MHD_Daemon *daemon;
    atomic_bool healthy, ready;
    uint16_t port;
};

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *type,
                              char *body)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;

    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", type);
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    op_probe *p = cls;
    (void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;

    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
                      strdup("method not allowed\n"));
    if (!strcmp(url, "/healthz") || !strcmp(url, "/livez")) {
        bool ok = atomic_load(&p->healthy);
        return answer(conn, ok ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
                      strdup(ok ? "ok" : "leadership lost"));
    }
    if (!strcmp(url, "/readyz")) {
        bool ok = atomic_load(&p->ready) && atomic_load(&p->healthy);
        return answer(conn, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                      strdup(ok ? "ok" : "the API server is not reached yet"));
    }
    if (!strcmp(url, "/metrics")) {
        ty_buf b = {0};
        ty_metrics_render(&b);
        char *text = ty_buf_steal(&b, NULL);
        if (!text)
            return MHD_NO;
        return answer(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text);
    }
    return answer(conn, MHD_HTTP_NOT_FOUND, "text/plain", strdup("404 page not found\n"));
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    (void)cls;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    ty_debug("operator http: %s", buf);
}

op_probe *op_probe_start(const char *address, uint16_t port, ty_error *err)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    const union MHD_DaemonInfo *info;
    op_probe *p = calloc(1, sizeof(*p));

    if (!p) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    atomic_init(&p->healthy, true);
    atomic_init(&p->ready, false);
    if (inet_pton(AF_INET, address, &addr.sin_addr) != 1) {
        ty_seterr(err, TY_EBADREQUEST, "invalid --address %s: want an IPv4 address", address);
        free(p);
        return NULL;
    }
    p->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG, port, NULL, NULL,
        on_request, p, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROBE_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)PROBE_IDLE_S, MHD_OPTION_END);
    if (!p->daemon) {
        ty_seterr(err, TY_EUNAVAILABLE, "cannot listen on %s:%u (address in use?)", address,
                  (unsigned)port);
        free(p);
        return NULL;
    }
    info = MHD_get_daemon_info(p->daemon, MHD_DAEMON_INFO_BIND_PORT);
    p->port = info ? info->port : port;
    return p;
}

uint16_t op_probe_port(const op_probe *p)
{
    return p->port;
}

void op_probe_set(op_probe *p, bool healthy, bool ready)
{
    atomic_store(&p->healthy, healthy);
    atomic_store(&p->ready, ready);
}

void op_probe_stop(op_probe *p)
{
    if (!p)
        return;
    MHD_stop_daemon(p->daemon);
    free(p);
}
