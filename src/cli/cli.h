/* cli.h - shared by the CLI's commands (one file per command, git style). */
#ifndef TY_CLI_CLI_H
#define TY_CLI_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/error.h"
#include "client/client.h"

#define TY_DEFAULT_PORT 8080

/* Options every command that talks to a server accepts. */
typedef struct cli_ctx {
    const char *server;     /* --server, $TRAINYARD_SERVER, else the kubeconfig's */
    const char *kubeconfig; /* --kubeconfig, else $KUBECONFIG, ~/.kube/config */
    const char *context;    /* --context, else the kubeconfig's current-context */
    const char *ns;         /* -n/--namespace, or "default" */
    bool all_namespaces;    /* -A */
    const char *output;     /* -o/--output, "" when not given */
} cli_ctx;

/* The shared flag parser. Each command names the common flags it takes
 * (CLI_F_*) and its own (getopt_long's short string and table); cli_getopt
 * consumes the common ones into the context and returns the others, like
 * getopt_long: -1 at the end, '?' after getopt has printed what is wrong.
 * The common flags are -n/--namespace, -A/--all-namespaces, -s/--server,
 * --kubeconfig, --context and -o/--output; every command that connects
 * takes CLI_F_CONNECT. */
#define CLI_F_NS 0x1u
#define CLI_F_ALL 0x2u
#define CLI_F_SERVER 0x4u
#define CLI_F_KUBECONFIG 0x8u
#define CLI_F_OUTPUT 0x10u
#define CLI_F_CONNECT (CLI_F_NS | CLI_F_SERVER | CLI_F_KUBECONFIG)
#define CLI_MAX_OPTS 64
typedef struct cli_parser {
    cli_ctx *ctx;
    unsigned common;     /* the CLI_F_* taken */
    struct option *opts; /* common then the command's, NULL-terminated */
    char shortopts[160];
    struct option table[CLI_MAX_OPTS + 1];
} cli_parser;
/* own: the command's long options (NULL-terminated, may be NULL); their
 * val must not be one of the common short letters (n A s o) nor
 * CLI_OPT_KUBECONFIG/CLI_OPT_CONTEXT of a common flag it takes (a common
 * flag not taken leaves its letter to the command). Resets optind. With
 * $TRAINYARD_COMPLETE_FLAGS set it prints every long flag (--name, one a
 * line) and exits 0 at once: how shell completion learns a command's flags
 * from the one table that parses them. */
void cli_parser_init(cli_parser *p, cli_ctx *ctx, unsigned common, const char *shortopts,
                     const struct option *own);
int cli_getopt(cli_parser *p, int argc, char **argv);
/* The namespace of ctx's kubeconfig context (--kubeconfig, --context), else
 * "default": for the commands whose -n is another flag (Slurm's). */
const char *cli_context_namespace(const cli_ctx *ctx);
/* ctx->output checked against the comma-separated formats; -1 after
 * printing kubectl's message. "" (no -o) always passes. */
int cli_check_output(const cli_ctx *ctx, const char *formats);

/* --kubeconfig and --context, for every command's getopt_long table. */
#define CLI_OPT_KUBECONFIG 900
#define CLI_OPT_CONTEXT 901
#define CLI_KUBECONFIG_LONGOPTS                                                               \
    {"kubeconfig", required_argument, NULL, CLI_OPT_KUBECONFIG},                              \
        {"context", required_argument, NULL, CLI_OPT_CONTEXT}

typedef int (*cli_cmd_fn)(int argc, char **argv);

int cmd_apply(int argc, char **argv);
int cmd_completion(int argc, char **argv);
int cmd_crds(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_kubeconfig(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_operator(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_sacct(int argc, char **argv);
int cmd_sbatch(int argc, char **argv);
int cmd_scancel(int argc, char **argv);
int cmd_server(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_squeue(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_supervise(int argc, char **argv);
int cmd_suspend(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_user(int argc, char **argv);
int cmd_version(int argc, char **argv);
/* main.c's commands, one a line (supervise, internal, left out); with
 * parsed_only those on the shared flag parser. */
void cli_list_commands(FILE *f, bool parsed_only);
/* "jemalloc 5.3.0" or "libc malloc": what this binary allocates with. */
const char *cli_allocator(void);

/* The daemons' shared flags (server, operator): -1 after printing what is
 * wrong. --scheduler-name NAME appended to names (*n of at most max);
 * --log-level LEVEL set. */
int cli_sched_name_flag(const char *v, const char **names, size_t *n, size_t max);
int cli_log_level_flag(const char *v);
/* --job-record-retention DURATION: how long a deleted TrainJob's JobRecord
 * is kept (controller/trainer/trainjob_ctl.h; 0: none). */
#define CLI_OPT_RECORD_RETENTION 1200
int cli_record_retention_flag(const char *v);

/* The server URL to use when no --server and no kubeconfig is given:
 * $TRAINYARD_SERVER, else what the server of the default data directory
 * recorded (DATA_DIR/server.url), else https://127.0.0.1:8080. */
const char *cli_default_server(void);
/* The data directory the server uses when given none: $TRAINYARD_DATA_DIR,
 * $XDG_DATA_HOME/trainyard, ~/.local/share/trainyard. */
void cli_default_data_dir(char *buf, size_t len);

/* The admin credential a server's first start made in its data directory
 * (DATA_DIR/tokens.csv, mode 0600: only who may read it gets it), and
 * what the server recorded of itself. */
typedef struct cli_admin {
    char token[4200];
    char user[256];
    char server[512];   /* DATA_DIR/server.url, "" when absent */
    char ca_file[4200]; /* DATA_DIR/pki/ca.crt, "" when absent */
} cli_admin;
int cli_admin_credential(const char *data_dir, cli_admin *out, ty_error *err);
/* Wipes the token. */
void cli_admin_clear(cli_admin *a);
/* A kubeconfig for server (its CA file ca for https, may be NULL), user
 * name user (the kubeconfig's user entry is trainyard-<user>), namespace
 * ns and bearer token, into y. -1 after printing why. */
int cli_kubeconfig_yaml(const char *server, const char *ca, const char *user, const char *ns,
                        const char *token, ty_buf *y);
/* y to output (made mode 0600: a credential is never readable by others),
 * or to stdout when output is NULL. -1 after printing why. */
int cli_write_secret(const char *output, const ty_buf *y);

/* A client as kubectl would make one (--kubeconfig, $KUBECONFIG,
 * ~/.kube/config; --server or $TRAINYARD_SERVER override its URL), or,
 * without any kubeconfig, with the default data directory's admin
 * credential when it is readable. NULL after printing why. */
ty_client *cli_connect(const cli_ctx *ctx);
/* GET path as JSON (a new reference); NULL after printing the error. */
json_t *cli_get_json(ty_client *cl, const char *path);
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
