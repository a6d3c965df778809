/* runtime.h - the local runtime: the node agent of embedded mode.
 *
 * Registers this machine as a Node and runs every pod bound to it
 * (spec.nodeName) as host processes, one small supervisor process per pod
 * (`trainyard supervise`) that outlives the server. Pod status, container
 * statuses and Events are written back through the store; logs go to
 * <data_dir>/logs/<ns>/<pod>/<container>.log (the format src/server/podlog.c
 * serves). A new agent on the same data directory re-adopts running pods.
 * See docs/internals/runtime.md.
 */
#ifndef TY_RUNTIME_LOCAL_RUNTIME_H
#define TY_RUNTIME_LOCAL_RUNTIME_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct rt_local rt_local;

/* The free space below which the node reports DiskPressure (and is tainted
 * so that no new pod is placed on it): the smaller of bytes and pct% of the
 * data directory's file system, those that are above 0; both 0 = off. */
typedef struct rt_disk_min {
    long long bytes;
    int pct;
} rt_disk_min;

/* "1Gi", "500M" (a quantity), "5%", "0" (off) or NULL / "default" (the
 * smaller of 5% and 1Gi). 0, or -1 with err (TY_EINVALID). */
int rt_disk_min_parse(const char *text, rt_disk_min *m, ty_error *err);

typedef struct rt_local_opts {
    const char *data_dir;  /* required; pods/ and logs/ are kept under it */
    const char *node_name; /* NULL or "" = the host name */
    int fake_gpus;         /* -1 = detect (NVML, then nvidia-smi); N >= 0 = exactly N */
    const char *self_exe;  /* the trainyard binary to exec as `supervise`;
                              NULL = /proc/self/exe. libtybind.so is looked
                              for in the same directory. */
    int restart_backoff_ms; /* base of the container restart back-off; 0 = the
                               TY_RESTART_BACKOFF_MS environment variable, else 10 s */
    long long log_max_bytes; /* a container's log file is rotated (one older
                                file kept, ".1") past this; 0 = RT_LOG_MAX_DEFAULT */
    int64_t log_retention_ms; /* logs of a pod gone from the store are removed
                                 this long after; 0 = kept for ever */
    const char *disk_free_min; /* rt_disk_min_parse's text; NULL = its default */
    int64_t gpu_idle_warn_ms; /* a pod holding GPUs at 0 % this long gets a
                                 Warning Event (GPUIdle); 0 = never */
    int64_t sweep_ms; /* every pod's state.json is read this often, whatever
                         woke the agent; 0 = 2 s (tests of the wake-ups make
                         it long, so that only a wake-up can report) */
} rt_local_opts;

/* The open-file soft limit the server started with, which it hands to its
 * supervisors in this variable when it raises its own: they put it back
 * for the containers. */
#define RT_NOFILE_ENV "TRAINYARD_NOFILE_SOFT"

#define RT_LOG_MAX_DEFAULT (10ll << 20)             /* as kubelet's containerLogMaxSize */
#define RT_LOG_RETENTION_DEFAULT_MS (24ll * 3600 * 1000)
#define RT_GPU_IDLE_WARN_DEFAULT_MS (30ll * 60 * 1000)

/* Registers the Node (create or update), re-adopts pods found under
 * <data_dir>/pods and starts the agent thread. s must outlive the agent. The
 * strings in o are copied. NULL with err filled on failure (nothing is left
 * running then). */
rt_local *rt_local_start(ty_kc *s, const rt_local_opts *o, ty_error *err);

/* Stops the agent thread and frees it. Supervisors and their processes keep
 * running; a later rt_local_start on the same data directory adopts them.
 * NULL is fine. */
void rt_local_stop(rt_local *rt);

/* The name the Node was registered under (borrowed, valid until stop). */
const char *rt_local_node_name(const rt_local *rt);

/* The logs of the pods run under data_dir (<data_dir>/logs/<ns>/<pod>/
 * <container>.log, .log.prev for the previous run, each with its rotated
 * ".1"): they outlive the pods and the runtime, so they are read without
 * one. As the backend interface's log ops (runtime/backend.h): NULL with
 * TY_ENOTFOUND when there is no such log; containers: the names of those
 * that left one (JSON array, new reference), NULL when none. */
typedef struct rt_log rt_log;
rt_log *rt_local_log_open(const char *data_dir, const char *ns, const char *pod,
                          const char *container, bool previous, long tail_lines, ty_error *err);
char *rt_local_log_gets(rt_log *l, char *buf, int len);
bool rt_local_log_rotated(rt_log *l);
void rt_local_log_close(rt_log *l);
json_t *rt_local_log_containers(const char *data_dir, const char *ns, const char *pod);

/* Entry point of `trainyard supervise --pod-dir DIR`: runs one pod described
 * by DIR/spec.json until it finishes or is told to stop (SIGTERM). Returns
 * the process exit status. */
int rt_supervise_main(const char *pod_dir);
/* The same, first waiting up to wait_spec_s seconds for DIR/spec.json to
 * appear (0: not at all): `--wait-spec S`, for runtimes that start the
 * supervisor before the spec is written (Slurm). */
int rt_supervise_main_wait(const char *pod_dir, int wait_spec_s);
/* The command line of both (`trainyard supervise`, `trainyard-supervise`):
 * --pod-dir DIR [--wait-spec S]; a usage message naming prog and 2 when
 * wrong. */
int rt_supervise_cli(int argc, char **argv, const char *prog);
/* sv_exec.c: `--exec HOST -- ARGV` in a pod: ARGV run in the pod of the
 * same job that HOST names, through this pod's supervisor; its exit status.
 * `--exec-in DIR [--mount SRC=TARGET]... [--env K=V]... -- ARGV` (root, on
 * the target's node): ARGV exec'd in the pod of DIR as its running container
 * is, with SRC bound at TARGET (read-only) and K=V set for it alone. */
int sv_exec_client(const char *host, int argc, char **argv);
int sv_exec_in(const char *dir, char *const *mounts, size_t nmounts, char *const *vars,
               size_t nvars, int argc, char **argv);

#endif
