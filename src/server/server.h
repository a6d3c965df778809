/* server.h - the Kubernetes-compatible HTTP API server. */
#ifndef TY_SERVER_SERVER_H
#define TY_SERVER_SERVER_H

#include <stdint.h>

#include "base/error.h"
#include "server/logsrc.h"
#include "store/store.h"

typedef struct ty_server ty_server;
struct ty_authn;
struct ty_authz;
struct ty_audit;

typedef struct server_opts {
    const char *address;   /* IPv4 address to bind; default "127.0.0.1" */
    uint16_t port;         /* 0 = pick a free port (see server_port) */
    const char *data_dir;  /* the data directory (NULL = ".") */
    const logsrc *logs;    /* where pods/{name}/log reads (borrowed; must outlive the
                              server); NULL = no logs: every container is waiting */
    /* The front door (guard.h). For the numbers, 0 takes the default and a
     * negative value means no limit. */
    const char *allowed_hosts;        /* comma-separated Host names beyond loopback and IPs */
    const char *cors_allowed_origins; /* comma-separated regular expressions over Origin */
    int max_requests_inflight;          /* default 400, as kube-apiserver */
    int max_mutating_requests_inflight; /* default 200, as kube-apiserver */
    int request_timeout_s;   /* a connection idle this long is closed (default 60);
                                watches and followed logs are exempt */
    int max_connections;     /* default 8192, and never above the open-file limit less 256 */
    int max_connections_per_client; /* per source address; default 2048 */
    /* Security (borrowed; must outlive the server). authn NULL: no
     * authentication at all (in-process tests only; the server command
     * always gives one). authz NULL: every authenticated request allowed. */
    struct ty_authn *authn;
    struct ty_authz *authz;
    /* TLS (server/tls.h reads and checks these; borrowed, copied by
     * libmicrohttpd). tls_cert_pem NULL: plain HTTP. client_ca_pem: the CA
     * client certificates must chain to (--client-ca-file); NULL = none
     * asked for. */
    const char *tls_cert_pem, *tls_key_pem;
    const char *client_ca_pem;
    /* The audit log (server/audit.h; borrowed, must outlive the server: its
     * last events are written as the server stops). NULL: none. */
    struct ty_audit *audit;
} server_opts;

#define SERVER_DEFAULT_INFLIGHT 400
#define SERVER_DEFAULT_MUTATING_INFLIGHT 200
#define SERVER_DEFAULT_REQUEST_TIMEOUT_S 60
#define SERVER_DEFAULT_MAX_CONNECTIONS 8192
#define SERVER_DEFAULT_MAX_PER_CLIENT 2048

/* Starts serving in background threads. The store is borrowed and must outlive
 * the server. */
ty_server *server_start(ty_store *store, const server_opts *opts, ty_error *err);
/* The bound port (useful with port 0). */
uint16_t server_port(const ty_server *srv);
/* Where clients reach it: "https://127.0.0.1:8080" (http:// without TLS;
 * 0.0.0.0 is given as 127.0.0.1, which clients on this machine can use). */
void server_url(const ty_server *srv, char *buf, size_t len);
/* Stops accepting, ends open watches and joins the threads. */
void server_stop(ty_server *srv);

#endif
