/* server.h - the Kubernetes-compatible HTTP API server. */
#ifndef TY_SERVER_SERVER_H
#define TY_SERVER_SERVER_H

#include <stdint.h>

#include "base/error.h"
#include "store/store.h"

typedef struct ty_server ty_server;

typedef struct server_opts {
    const char *address;   /* IPv4 address to bind; default "127.0.0.1" */
    uint16_t port;         /* 0 = pick a free port (see server_port) */
    const char *data_dir;  /* where pod logs live: <data_dir>/logs/<ns>/<pod>/<container>.log */
} server_opts;

/* Starts serving in background threads. The store is borrowed and must outlive
 * the server. */
ty_server *server_start(ty_store *store, const server_opts *opts, ty_error *err);
/* The bound port (useful with port 0). */
uint16_t server_port(const ty_server *srv);
/* Stops accepting, ends open watches and joins the threads. */
void server_stop(ty_server *srv);

#endif
