/* backend.h - the runtime backend interface: what the rest of Trainyard
 * needs from whatever runs pods (this machine's processes, simulated nodes,
 * a Slurm cluster).
 *
 * A backend is one ops table. It registers and keeps its Nodes, runs the
 * pods the scheduler bound to them (a gang's pods together), stops them with
 * their grace period, reports their status and exit codes (through the agent
 * kit's status writers, runtime/agent_kit.h), serves their logs, runs a
 * command "in" a pod and provides the rsh agent mpirun reaches the other pods
 * of an MPI job with. Adding a backend is implementing this table; the
 * server's log endpoint, the MPI controllers and `trainyard server` know
 * backends only through it. See docs/internals/runtime.md, "Backends", and
 * its section on the Slurm backend.
 *
 * Two ways to run pods. A backend with an agent of its own (local, sim,
 * and slurm, whose pods Slurm places: it binds them itself once Slurm has
 * started them) watches the pods itself, through the kit's watch
 * (ak_watch), and leaves pods_start / pod_stop / pods_sync NULL. A backend
 * without one implements those three and is driven by the kit's agent
 * (ak_agent_start): it is given each gang's bound pods at once, each pod
 * being deleted, and a periodic call to report what changed. */
#ifndef TY_RUNTIME_BACKEND_H
#define TY_RUNTIME_BACKEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct rt_log rt_log; /* an open container log: the backend's own */

typedef struct rt_backend_ops {
    const char *name; /* "local", "sim", ...: the trainyard.io/runtime node label */

    /* ---- life ---- */
    /* Registers the Nodes and starts whatever runs pods; opts is the
     * backend's own options struct (rt_local_opts, rt_sim_opts...). The
     * instance, or NULL with err (nothing left running). kc must outlive it. */
    void *(*start)(ty_kc *kc, const void *opts, ty_error *err);
    /* Stops its threads and frees the instance; what runs keeps running where
     * the backend can adopt it again (local supervisors, Slurm jobs). */
    void (*stop)(void *impl);

    /* ---- node inventory ---- */
    /* The Nodes it registers and keeps, as a JSON array (new reference) of
     * {name, labels, capacity, allocatable, conditions}, each as the Node
     * object carries it; NULL when out of memory. */
    json_t *(*nodes)(void *impl);
    /* Whether pods bound to node are this backend's to run. */
    bool (*owns_node)(void *impl, const char *node);

    /* ---- pods, for a backend driven by the kit's agent (else NULL) ---- */
    /* The pods (borrowed, bound to its nodes, not started) of one gang
     * (scheduling.k8s.io/group-name), or one pod without a gang: started
     * together (one Slurm job). A pod that cannot start is reported Failed
     * through ak_pod_report by the backend; -1 only for the whole call
     * failing (it is retried at the next relist). */
    int (*pods_start)(void *impl, ty_kc *kc, const json_t *const *pods, size_t n,
                      ty_error *err);
    /* pod (borrowed) is being deleted: stop its containers (SIGTERM, SIGKILL
     * after grace_s seconds) without waiting here for the grace period, and
     * report their ends (ak_pod_report, now or from pods_sync). Called once
     * per pod; the kit removes the backend's finalizer when the pod's status
     * is final, so a backend that never reports the end holds the deletion. */
    int (*pod_stop)(void *impl, ty_kc *kc, const json_t *pod, int grace_s, ty_error *err);
    /* Periodically: report (ak_pod_report) the pods whose state changed
     * (squeue/sacct, a state file...). */
    void (*pods_sync)(void *impl, ty_kc *kc);
    /* The finalizer it holds pods with while they run (e.g.
     * "trainyard.io/slurm-runtime"); NULL = none. */
    const char *finalizer;

    /* ---- logs (NULL when the backend keeps none) ---- */
    /* As logsrc's (server/logsrc.h): lines in the stored form "<RFC 3339>
     * <line>\n"; NULL with TY_ENOTFOUND when the log does not exist. */
    rt_log *(*log_open)(void *impl, const char *ns, const char *pod, const char *container,
                        bool previous, long tail_lines, ty_error *err);
    char *(*log_gets)(rt_log *l, char *buf, int len);
    bool (*log_rotated)(rt_log *l);
    void (*log_close)(rt_log *l);
    /* The containers of a pod that left a log (JSON array, new reference;
     * NULL = none), for pods whose object is gone. */
    json_t *(*log_containers)(void *impl, const char *ns, const char *pod);
    /* The logs it keeps of pods gone from the store in namespace ns: a JSON
     * array (new reference; NULL = none) of {"pod", "containers": [names],
     * "labels": {...} (the pod's, when known), "goneTime": RFC 3339}. A pod
     * of that name may exist again: the caller checks. */
    json_t *(*log_retained)(void *impl, const char *ns);

    /* ---- in a pod ---- */
    /* Runs argv (argv[0] looked up in PATH) as a process of the pod ns/pod:
     * its host name, its environment's identity, on its node; stdin from
     * in_fd, stdout and stderr to out_fd (-1: /dev/null). Waits for it:
     * *exit_code (128 + signal when killed). -1 with err when it could not
     * be started. NULL when the backend cannot. */
    int (*exec)(void *impl, const char *ns, const char *pod, const char *const *argv,
                int in_fd, int out_fd, int *exit_code, ty_error *err);
    /* The rsh agent mpirun is handed (OMPI_MCA_plm_rsh_agent, Hydra's
     * bootstrap exec): a script text, `<agent> [ssh options] <host> <command>`,
     * that runs the command in the pod named by host's first label. NULL:
     * the one-machine agent (api/mpi_agent.h), which runs it here. */
    const char *mpi_agent;
} rt_backend_ops;

/* An instance: its ops and the backend's own state. */
typedef struct rt_backend {
    const rt_backend_ops *ops;
    void *impl;
} rt_backend;

/* The backends built in, by name ("local", "sim"); NULL when unknown. */
const rt_backend_ops *rt_backend_find(const char *name);

/* Starts ops with opts into b. 0, or -1 with err (b left empty). The
 * backend's MPI agent becomes the one the controllers write (api/mpi_agent.h)
 * when it has one. */
int rt_backend_start(rt_backend *b, const rt_backend_ops *ops, ty_kc *kc, const void *opts,
                     ty_error *err);
/* Stops and clears b; an empty b is fine. */
void rt_backend_stop(rt_backend *b);

/* The backend whose nodes include node among n (NULL when none). */
rt_backend *rt_backend_for_node(rt_backend *const *bs, size_t n, const char *node);

/* Logs through b (TY_ENOTFOUND when b keeps none). */
rt_log *rt_backend_log_open(const rt_backend *b, const char *ns, const char *pod,
                            const char *container, bool previous, long tail_lines,
                            ty_error *err);
char *rt_backend_log_gets(const rt_backend *b, rt_log *l, char *buf, int len);
bool rt_backend_log_rotated(const rt_backend *b, rt_log *l);
void rt_backend_log_close(const rt_backend *b, rt_log *l);
json_t *rt_backend_log_containers(const rt_backend *b, const char *ns, const char *pod);
json_t *rt_backend_log_retained(const rt_backend *b, const char *ns);

/* The built-in backends' tables (runtime/local, runtime/sim; Slurm's is
 * in runtime/slurm/slurm.h). */
extern const rt_backend_ops rt_local_backend;
extern const rt_backend_ops rt_sim_backend;
/* Only the local runtime's log ops, over a data directory (impl: the
 * directory's path, a string): its logs outlive it. Never started. */
extern const rt_backend_ops rt_local_log_store;

#endif
