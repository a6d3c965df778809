/* submit_build.h - the manifests `trainyard submit KIND` sends: one training
 * job of an upstream kind (Kubeflow's, MindSpore's MSJob, a Volcano Job)
 * built from Arena-style flags, as a user would have written it in YAML.
 *
 * No I/O: cmd_submit.c parses the command line into a submit_opts and sends
 * what submit_build returns; the unit test (test_cli_submit) checks the
 * manifests directly. */
#ifndef TY_CLI_SUBMIT_BUILD_H
#define TY_CLI_SUBMIT_BUILD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* What one submit asks for. Strings are borrowed (argv); NULL or -1 means
 * "not given" (the kind's default applies). */
#define SUBMIT_MAX_LIST 64
typedef struct submit_opts {
    const char *kind; /* pytorch tf mpi xgboost paddle jax mx ms volcano */
    const char *name;
    const char *ns;
    const char *image;
    const char *cpu, *memory;                   /* per replica: requests = limits */
    const char *launcher_cpu, *launcher_memory; /* mpi: the launcher's */
    const char *working_dir;
    const char *queue;    /* Volcano queue */
    const char *priority; /* priorityClassName */
    const char *nproc_per_node;
    const char *clean_policy; /* runPolicy.cleanPodPolicy */
    int workers;              /* -1: 1 */
    int gpus;                 /* -1: none; nvidia.com/gpu per replica */
    int ps;                   /* tf, mx, ms, volcano: -1 = the kind's default */
    int slots;                /* mpi slotsPerWorker; -1: --gpus, else 1 */
    int retry;                /* backoffLimit / maxRetry; -1: not set */
    bool chief, evaluator;    /* tf */
    int64_t ttl;              /* ttlSecondsAfterFinished; -1: not set */
    int64_t running_timeout;  /* activeDeadlineSeconds; -1: not set */
    const char *env[SUBMIT_MAX_LIST];
    size_t nenv;
    const char *labels[SUBMIT_MAX_LIST];
    size_t nlabels;
    const char *annotations[SUBMIT_MAX_LIST];
    size_t nannotations;
    const char *data[SUBMIT_MAX_LIST]; /* --data SRC:PATH (SRC a claim or a /host/path) */
    size_t ndata;
    const char *data_dir[SUBMIT_MAX_LIST]; /* --data-dir HOST[:PATH] */
    size_t ndata_dir;
    /* The command: shell (Arena's form, run by `sh -c`) or argv (after --). */
    const char *shell;
    char *const *argv;
    size_t argc;
} submit_opts;

/* Sets every field to "not given". */
void submit_opts_init(submit_opts *o);

/* The kinds, space-separated, for usage text. */
const char *submit_kinds(void);

/* The manifest for o; NULL with TY_EINVALID and a message that names the
 * flag and what to do (a usage error) when o cannot make one. Caller owns
 * the result. */
json_t *submit_build(const submit_opts *o, ty_error *err);

/* "1h30m", "90s" (Go's durations) or a plain number of seconds into *secs;
 * -1 when s is neither or negative. */
int submit_parse_seconds(const char *s, int64_t *secs);

/* "1 Master + 2 Workers": what the manifest's replicas are, for the line
 * printed after submitting. */
void submit_describe(const json_t *manifest, char *buf, size_t len);

#endif
