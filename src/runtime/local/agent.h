/* agent.h - the node agent's state, shared by agent.c (the thread, the pod
 * table, re-adoption) and agent_pod.c (one pod's start, status and end). */
#ifndef TY_RUNTIME_LOCAL_AGENT_H
#define TY_RUNTIME_LOCAL_AGENT_H

#include <limits.h>
#include <pthread.h>

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
    int64_t retry_at_ms;    /* next start attempt while !started */
    int64_t force_at_ms;    /* SIGKILL everything after this while killing */
    char *state_text;       /* last state.json seen */
    json_t *state;          /* parsed */
    char wait_reason[48];   /* why it cannot start (CreateContainerConfigError...) */
    char wait_msg[512];
} rt_pod;

struct rt_local {
    ty_store *s;
    char *data_dir, *node_name, *self_exe, *shim;
    int ngpus, backoff_ms;
    char host_ip[16];
    pthread_t thread;
    pthread_mutex_t mu;     /* guards stop and w against rt_local_stop */
    bool stop;
    store_watch *w;
    rt_pod **pods;
    size_t npods, cap;
    uint32_t next_ip;       /* host order */
    uint64_t gpu_used;
    json_t *dirty;          /* uid or "ns/name" -> {ns, name} to reconcile */
    json_t *dirty_ns;       /* namespace -> true: rewrite hosts files */
    int64_t next_beat_ms, next_resync_ms;
};

/* agent.c */
rt_pod *agent_find(rt_local *rt, const char *uid);
rt_pod *agent_add(rt_local *rt, const char *uid, const char *ns, const char *name);
void agent_remove(rt_local *rt, rt_pod *p);

/* agent_pod.c */
void pod_reconcile(rt_local *rt, rt_pod *p);     /* p's object changed / may be gone */
void pod_new_object(rt_local *rt, const json_t *pod); /* a pod with no entry */
void pod_poll(rt_local *rt, rt_pod *p);          /* read state.json, supervise the end */
/* Rewrites p's hosts file (in place) when it changed; body from
 * pod_hosts_body, or NULL to compute it here. */
void pod_write_hosts(rt_local *rt, rt_pod *p, const char *body);
char *pod_hosts_body(rt_local *rt, const char *ns); /* caller frees */
int pod_load_adopted(rt_local *rt, rt_pod *p);   /* fills p from its directory */

#endif
