/* agent.h - the node agent's state, shared by agent.c (the thread, the pod
 * table, re-adoption), agent_watch.c (what wakes the thread: store events,
 * state.json renames, supervisor exits) and agent_pod.c (one pod's start,
 * status and end). */
#ifndef TY_RUNTIME_LOCAL_AGENT_H
#define TY_RUNTIME_LOCAL_AGENT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/strmap.h"
#include "runtime/agent_kit.h"
#include "runtime/local/gpu.h"
#include "runtime/local/rt_internal.h"
#include "runtime/local/runtime.h"

typedef struct rt_pod {
    char uid[64], ns[256], name[256];
    char dir[PATH_MAX];
    char ip[16];
    uint64_t gpus;          /* bit i = GPU i, held until the pod ends */
    pid_t sup;              /* supervisor pid, 0 = not spawned */
    bool strict;            /* adopted: check the pid's command line too */
    bool started;           /* spec.json written, supervisor spawned */
    bool finished;          /* supervisor gone */
    bool killing;           /* termination under way */
    bool gone;              /* pod object deleted / replaced */
    bool failed_reported;   /* supervisor died and we said so */
    bool poll_due;          /* state.json renamed / supervisor exited: read it */
    bool status_pending;    /* the last status write failed (full disk...): retried */
    bool parked;            /* in rt->idle (finished, not being deleted), else rt->pods */
    size_t slot;            /* index in rt->pods or rt->idle */
    uint64_t hosts_gen;     /* rt_hosts_body generation its hosts file has, 0 = unknown */
    int wd;                 /* inotify watch on dir, -1 = none */
    int pidfd;              /* the supervisor's pidfd (in the epoll set), -1 = none */
    int64_t retry_at_ms;    /* next start attempt while !started */
    int64_t gpu_idle_since_ms; /* every GPU it holds read 0 % since, 0 = busy */
    bool gpu_idle_warned;   /* the Warning for this idle stretch was recorded */
    uint64_t gpu_report_hash; /* its GPU annotation as last written (agent_gpu_report.c) */
    int64_t force_at_ms;    /* SIGKILL everything after this while killing */
    char *state_text;       /* last state.json seen */
    json_t *state;          /* parsed */
    char wait_reason[48];   /* why it cannot start (CreateContainerConfigError...) */
    char wait_msg[512];
} rt_pod;

typedef struct rt_resv rt_resv; /* agent_addr.c: an address held for a pod not started */
typedef struct addr_wait addr_wait; /* agent_addr.c: a pod waiting for its gang's binding */

struct rt_local {
    ty_kc *s;
    char *data_dir, *node_name, *self_exe, *shim;
    char *supervisor_exe;   /* trainyard-supervise beside self_exe, or NULL */
    int ngpus, backoff_ms;
    rt_gpus *gpus;          /* what they are and read (gpu.h); ngpus of them */
    long long log_max_bytes;  /* per container log file, before rotation */
    int64_t log_retention_ms; /* logs of pods gone from the store; 0 = for ever */
    int64_t next_log_sweep_ms;
    char host_ip[16];
    pthread_t thread;
    atomic_bool stop;       /* read in the agent's loops without a lock */
    ak_watch *aw;           /* the store watch's thread (the agent kit's) */
    int epfd;               /* the agent waits here: evfd, infd, every pidfd */
    int evfd;               /* eventfd: queue non-empty, resync or stop */
    int infd;               /* inotify: state.json renamed in a pod directory */
    /* Entries that need the agent: not started, running, or being deleted.
     * Finished ones wait in idle for their deletion, so that nothing done per
     * wake-up or per pod start walks them. */
    rt_pod **pods;
    size_t npods, cap;
    rt_pod **idle;
    size_t nidle, idle_cap;
    strmap by_uid;          /* uid -> entry, pods and idle */
    strmap by_ip;           /* address -> its holder: an entry or a reservation */
    uint32_t next_ip;       /* host order */
    rt_resv **resv;         /* addresses held for pods with no entry (agent_addr.c) */
    size_t nresv, resv_cap;
    strmap resv_by_uid;     /* uid -> reservation */
    uint64_t resv_listing;  /* which resync listing is under way */
    addr_wait **waits;      /* pods of a gang not bound yet, with no address */
    size_t nwaits, waits_cap;
    strmap waiting;         /* uid -> addr_wait */
    strmap gangs;           /* "<ns>/<group>" -> its waiting members */
    uint64_t gpu_used;
    uint64_t gpu_bad;       /* GPUs out of service (agent_gpu.c): never handed out */
    bool gpu_health_written; /* the Node shows gpu_bad */
    int64_t gpu_idle_warn_ms; /* a pod's GPUs idle this long: a Warning; 0 = never */
    int64_t next_gpu_ms;
    int64_t next_gpu_report_ms;
    uint64_t gpu_report_hash; /* the Node's GPU annotation as last written */
    json_t *dirty;          /* uid or "ns/name" -> {ns, name} to reconcile */
    json_t *dirty_ns;       /* namespace -> true: rewrite hosts files */
    rt_hosts *hosts;        /* what every namespace's hosts files show */
    int64_t next_beat_ms, next_resync_ms, next_sweep_ms, sweep_ms;
    rt_disk_min disk_min;   /* DiskPressure below this much free space */
    int disk_state;         /* as the Node shows it: 1 pressure, 0 none, -1 not written */
    int64_t next_disk_ms;
};

/* agent.c */
rt_pod *agent_find(rt_local *rt, const char *uid);
rt_pod *agent_add(rt_local *rt, const char *uid, const char *ns, const char *name);
void agent_remove(rt_local *rt, rt_pod *p);
/* After p started, finished or began to go: its address in the hosts table
 * (only while it runs) and whether it waits in rt->idle. p stays valid. */
void agent_note_state(rt_local *rt, rt_pod *p);
bool agent_stopping(rt_local *rt);

/* agent_addr.c: pod addresses. A pod gets one when the agent sees it bound
 * here, and every member of its gang (bound or not) with it, before any pod
 * of that batch starts: a gang member's first hosts file names its peers. */
void addr_init(rt_local *rt);        /* the first address, from rt->data_dir */
void addr_free_all(rt_local *rt);    /* reservations and maps; entries go first */
/* The pod (borrowed) as the store shows it, or deleted: reserves addresses
 * for it (bound here) and its gang's members, drops a reservation of a pod
 * bound elsewhere, ended or gone. Entries hold their own addresses. */
void addr_note_pod(rt_local *rt, const json_t *pod, bool deleted);
/* The same for a full listing of the pods (borrowed), unbound ones first;
 * reservations of pods it does not show are dropped. */
void addr_note_listing(rt_local *rt, ty_obj *const *items, size_t n);
/* p gets the address reserved for its uid, else the next free one ("" when
 * none is free or out of memory). */
void addr_take(rt_local *rt, rt_pod *p);
/* p (adopted) keeps the address read from its directory unless it has none
 * or another holds it. */
void addr_adopt(rt_local *rt, rt_pod *p);
void addr_forget(rt_local *rt, rt_pod *p); /* p no longer holds its address */

/* agent_watch.c */
int agent_watch_init(rt_local *rt, ty_error *err);   /* epoll, eventfd, inotify */
int agent_pump_start(rt_local *rt, ty_error *err);   /* the store watch's thread (kit) */
void agent_watch_stop(rt_local *rt);                 /* wakes both threads, joins the watch's */
void agent_watch_free(rt_local *rt);
/* Moves the queued store events to the caller (release each, free the array);
 * sets *resync when the watch was reopened or events were dropped. */
kc_event *agent_take_queue(rt_local *rt, size_t *n, bool *resync);
/* Waits up to timeout_ms for something to do; marks pods poll_due. */
void agent_wait(rt_local *rt, int timeout_ms);
/* Wakes on p's state.json renames (call before its supervisor starts) and,
 * once p->sup is known, on the supervisor's exit. Idempotent. */
void agent_track_dir(rt_local *rt, rt_pod *p);
void agent_track_sup(rt_local *rt, rt_pod *p);
/* Stops watching p (the supervisor is gone, or the entry goes). */
void agent_untrack(rt_local *rt, rt_pod *p);

/* agent_gpu.c: the GPUs' health on the Node, idle-GPU warnings. */
void agent_check_gpus(rt_local *rt);

/* agent_gpu_report.c: the readings as annotations of the Node, the pods
 * holding GPUs and their jobs (gpu.h), at most every RT_GPU_REPORT_MS. */
void agent_report_gpus(rt_local *rt);
/* agent_pod.c */
void pod_reconcile(rt_local *rt, rt_pod *p);     /* p's object changed / may be gone */
void pod_new_object(rt_local *rt, const json_t *pod); /* a pod with no entry */
void pod_poll(rt_local *rt, rt_pod *p);          /* read state.json, supervise the end */
/* Rewrites p's hosts file (in place) when its namespace's lines changed
 * since it was last written. 0, or -1 (errno) when it could not. */
int pod_write_hosts(rt_local *rt, rt_pod *p);
int pod_load_adopted(rt_local *rt, rt_pod *p);   /* fills p from its directory */

#endif
