/* cli.h - shared by the CLI's commands (one file per command, git style). */
#ifndef TY_CLI_CLI_H
#define TY_CLI_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "client/client.h"

#define TY_DEFAULT_PORT 8080

/* Options every command that talks to a server accepts. */
typedef struct cli_ctx {
    const char *server;     /* --server, $TRAINYARD_SERVER, or http://127.0.0.1:8080 */
    const char *ns;         /* -n/--namespace, or "default" */
    bool all_namespaces;    /* -A */
} cli_ctx;

typedef int (*cli_cmd_fn)(int argc, char **argv);

int cmd_apply(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_kubeconfig(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_server(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_supervise(int argc, char **argv);
int cmd_version(int argc, char **argv);
/* "jemalloc 5.3.0" or "libc malloc": what this binary allocates with. */
const char *cli_allocator(void);

/* The server URL to use when no --server is given. */
const char *cli_default_server(void);
/* A connected client or NULL after printing why. */
ty_client *cli_connect(const cli_ctx *ctx);
/* Prints an error the way kubectl does: `Error from server (NotFound): ...`
 * for server answers, `error: ...` otherwise. */
void cli_print_error(const ty_error *err, bool from_server);
/* Resolves a resource name typed by the user or prints an error. */
const api_resource *cli_resource(const char *what);
/* "pytorchjob.kubeflow.org" or "pod": how kubectl names a kind in its output. */
void cli_kind_name(const api_resource *res, char *buf, size_t len);
/* Reads FILE, every manifest of DIR (*.yaml, *.yml, *.json, sorted) or "-"
 * (stdin) into one JSON array of objects (kind: List is flattened). */
json_t *cli_read_manifests(const char *path, ty_error *err);
/* The namespace an object goes to: its own, else -n; NULL for cluster-scoped. */
const char *cli_object_ns(const api_resource *res, const json_t *obj, const cli_ctx *ctx);

#endif
