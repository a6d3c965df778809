/* sl_int.h - the Slurm backend's pieces (not public):
 *   backend_slurm.c  the ops table, the agent thread, watch events, logs
 *   sl_nodes.c       sinfo -> the Node objects
 *   sl_submit.c      an admitted gang -> one sbatch (a het component per shape)
 *   sl_plan.c        a started job -> hosts files, moved ports, spec.json, bindings
 *   sl_sync.c        squeue + state.json -> pod status; stops and cancels
 * One thread (the agent's) touches the pods; the node list is also read by
 * other threads (nodes, owns_node), under mu. */
#ifndef TY_RUNTIME_SLURM_SL_INT_H
#define TY_RUNTIME_SLURM_SL_INT_H

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/strmap.h"
#include "client/kc.h"
#include "runtime/agent_kit.h"
#include "runtime/slurm/scli.h"
#include "runtime/slurm/slurm.h"

#define SL_COMPONENT "slurm-runtime"
#define SL_MAX_PODS 100000
#define SL_MAX_GANG 1024        /* pods of one Slurm job */
#define SL_CMD_TIMEOUT_MS 30000 /* one Slurm command */
#define SL_CMD_MAX_OUT (16u << 20)
#define SL_WAIT_SPEC_S 900      /* how long a step's supervisor waits for its spec */
#define SL_KILL_AFTER_S 15      /* past the grace period: scancel the job */
#define SL_LOST_AFTER_MS 5000   /* Slurm says ended, state.json does not: wait this */

typedef enum {
    SP_NEW,       /* seen, not submitted */
    SP_SUBMITTED, /* in a Slurm job that has not started */
    SP_STARTED,   /* its component runs: bound, spec written */
    SP_DONE,      /* its end is reported */
} sp_state;

typedef struct sl_pod {
    char uid[64], ns[254], name[254];
    char group[254];        /* PodGroup name, "" = a gang of its own */
    ty_obj *obj;            /* the pod as last seen (ref) */
    sp_state st;
    char job[32];           /* the Slurm job (leader) id, "" = none */
    int comp;               /* het component, -1 = not a hetjob */
    char node[64], addr[64];
    char reason[160];       /* the pending reason last reported */
    char slurm_state[32];   /* the component's state as squeue last showed it */
    char end_reason[64];    /* Slurm ended it without the supervisor's end */
    int64_t ended_ms;       /* when Slurm first said it ended (0 = not) */
    int64_t submitted_ms, seen_ms;
    int64_t retry_at_ms;    /* SP_NEW: not submitted again before */
    uint64_t hosts_gen;     /* the hosts lines its file shows */
    bool plan_failed;       /* started, its spec not written yet (retried) */
    bool deleting, stop_sent, cancel_sent, finalizer;
    int grace_s;
    int64_t kill_at_ms;
    json_t *state;          /* state.json as last read, or NULL */
    int64_t state_mtime;    /* its mtime (ns), to read it again only when it moved */
    json_t *ports;          /* {"<port>": moved} for this pod, or NULL */
    size_t idx;             /* in rt_slurm.all */
    int wd;                 /* inotify watch of its directory while it starts, or -1 */
} sl_pod;

typedef struct sl_node {
    char name[64], addr[64], partition[64], state[32];
    int cpus, gpus;
    long long mem_mb;
    bool ready;
} sl_node;

typedef struct rt_slurm {
    ty_kc *kc;
    char shared[PATH_MAX], exe[PATH_MAX], sup[PATH_MAX], shim[PATH_MAX], inst[40];
    char *partitions, *account, *qos;
    char **names;           /* schedulerNames served */
    int port_min, port_max;
    char k_podgroups[128];
    ak_watch *w;
    int wake_fd;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t mu;     /* nodes, nnodes */
    sl_node *nodes;
    size_t nnodes;
    strmap pods;            /* uid -> sl_pod */
    sl_pod **all;           /* the same, to walk */
    size_t nall, capall;
    json_t *groups;         /* "ns/name" -> PodGroup object (copy) */
    struct rt_hosts *hosts;
    int64_t next_nodes_ms, next_sync_ms, next_sweep_ms, next_submit_ms;
    int ino_fd;             /* inotify: where.json written in a starting pod's directory */
    bool synced_once;       /* squeue read since start: adoption done */
    int64_t listed_ms;      /* when squeue last answered (a failed one does not
                               count: a pod is gone only if listings miss it) */
    bool fast;              /* a job is about to start: sync often */
} rt_slurm;

/* backend_slurm.c */
sl_pod *sl_find(rt_slurm *s, const char *uid);
const sl_node *sl_node_find(rt_slurm *s, const char *name, sl_node *copy);
bool sl_serves(const rt_slurm *s, const json_t *pod);
/* Adds or removes the backend's finalizer on pod p (metadata write). */
int sl_finalizer(rt_slurm *s, sl_pod *p, bool add);
void sl_pod_dir(const rt_slurm *s, const char *uid, char *buf, size_t len);
/* <shared>/slurm/gang-<anchor uid>.json: the pods of the job whose
 * comment names anchor. */
void sl_gang_path(const rt_slurm *s, const char *anchor, char *buf, size_t len);
/* "123" or "123+1" (a het component): buf. */
const char *sl_job_text(const sl_pod *p, char *buf, size_t len);

/* sl_nodes.c: sinfo -> s->nodes and the Node objects. */
void sl_refresh_nodes(rt_slurm *s);

/* sl_submit.c: submits what is admitted and not yet submitted. */
void sl_submit_ready(rt_slurm *s);

/* sl_plan.c: job (leader id) has started: its pods (n, in component order,
 * each with node set) get their hosts files, ports and specs, and are bound. */
void sl_plan_started(rt_slurm *s, sl_pod **pods, size_t n);
/* Ports in use on node by started pods (a JSON object "port": true). */
json_t *sl_ports_in_use(rt_slurm *s, const char *node);
/* The env/args rewrite for moved ports (exposed for the unit test): pod
 * copies in place, ports[i] the moved map of pods[i] (NULL = none). */
void sl_rewrite_ports(json_t *const *pods, json_t *const *ports, size_t n);

/* sl_submit.c: the Slurm time limit in whole minutes (rounded up, at least
 * 1) for pods (n) owned by owner (NULL = none), at now_s: the tightest of
 * each pod's spec.activeDeadlineSeconds and what is left of the owner's
 * spec.runPolicy.activeDeadlineSeconds since its status.startTime (from
 * now when not started). 0 = no deadline. Exposed for the unit test. */
long long sl_time_limit_min(json_t *const *pods, size_t n, const json_t *owner, time_t now_s);

/* sl_sync.c */
void sl_sync(rt_slurm *s);
/* Plans every job all of whose pods' supervisors said where they run
 * (where.json), without waiting for squeue to say it started. */
void sl_start_ready(rt_slurm *s);
/* Stops watching p's directory. */
void sl_unwatch(rt_slurm *s, sl_pod *p);
void sl_report_state(rt_slurm *s, sl_pod *p);
/* "Why it waits" on the pod (PodScheduled False) and an Event, once per
 * distinct message. */
void sl_pending_reason(rt_slurm *s, sl_pod *p, const char *reason, const char *msg);

#endif
