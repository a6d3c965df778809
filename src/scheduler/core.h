/* core.h - the gang scheduler's core: an incremental in-memory cluster model
 * (nodes, queues, jobs = pod groups, tasks = pods) and a scheduling cycle that
 * runs the configured actions (enqueue, allocate, backfill, preempt, reclaim)
 * with the configured plugins.
 *
 * The core knows nothing of JSON, the store or clocks: the server's adapter
 * (sched.c) feeds it from watches and turns its decisions into bindings,
 * evictions and PodGroup status; the simulator (runtime/sim) feeds it from a
 * trace on a virtual clock. Both run exactly this code.
 *
 * Ownership: the cluster owns every node, queue, job and task; pointers handed
 * out stay valid until the object is removed or the cluster freed. All strings
 * passed in are copied. Not thread-safe: one thread owns a cluster. */
#ifndef TY_SCHEDULER_CORE_H
#define TY_SCHEDULER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* ---- resources ---- */

/* Every quantity is in milli-units (cpu in millicores, memory in
 * milli-bytes, one GPU = 1000) so one parser serves them all. Slots 0-3 are
 * fixed; further extended resources get a slot on first sight. */
#define SC_MAXRES 8
enum { SC_CPU = 0, SC_MEM = 1, SC_PODS = 2, SC_GPU = 3 };

typedef struct sc_res {
    int64_t v[SC_MAXRES];
} sc_res;

typedef struct sc_cluster sc_cluster;
typedef struct sc_node sc_node;
typedef struct sc_queue sc_queue;
typedef struct sc_job sc_job;
typedef struct sc_task sc_task;

/* The slot for a resource name ("cpu", "memory", "pods", "nvidia.com/gpu",
 * or any extended name); registers a new name, -1 when every slot is taken.
 * Only for names from what the cluster's administrators make (Nodes'
 * allocatable, Queues, ResourceQuotas): a tenant's pods could otherwise
 * take every slot with names of their own. */
int sc_res_slot(sc_cluster *c, const char *name);
/* The last slot stands for every resource that has no slot, which no node
 * offers (a node's resources are registered): a pod or gang asking for one
 * counts it there, and never fits. Never registered, never a queue's. */
#define SC_UNOFFERED (SC_MAXRES - 1)
/* The slot of a name a tenant wrote (pod requests, PodGroup minResources):
 * a registered one, or SC_UNOFFERED. Registers nothing. */
int sc_res_find(const sc_cluster *c, const char *name);
/* The name of a slot; borrowed. NULL for an unused slot; SC_UNOFFERED's is
 * a description ("a resource no node offers"). */
const char *sc_res_name(const sc_cluster *c, int slot);

bool sc_res_le(const sc_res *a, const sc_res *b); /* every a[i] <= b[i] */
void sc_res_add(sc_res *a, const sc_res *b);
void sc_res_sub(sc_res *a, const sc_res *b);
bool sc_res_empty(const sc_res *a);

/* ---- labels, taints, tolerations, affinity ---- */

typedef struct sc_kv {
    const char *key, *value;
} sc_kv;

typedef enum { SC_NO_SCHEDULE, SC_PREFER_NO_SCHEDULE, SC_NO_EXECUTE } sc_effect;

typedef struct sc_taint {
    const char *key, *value;
    sc_effect effect;
} sc_taint;

typedef struct sc_toleration {
    const char *key;    /* NULL or "" with exists = tolerate everything */
    const char *value;
    bool exists;        /* operator Exists (else Equal) */
    bool any_effect;    /* effect "" */
    sc_effect effect;
} sc_toleration;

typedef enum { SC_OP_IN, SC_OP_NOT_IN, SC_OP_EXISTS, SC_OP_NOT_EXISTS, SC_OP_GT, SC_OP_LT } sc_op;

typedef struct sc_match_expr {
    const char *key;
    sc_op op;
    const char **values;
    size_t nvalues;
} sc_match_expr;

/* requiredDuringSchedulingIgnoredDuringExecution: the terms are ORed, the
 * expressions within a term ANDed. */
typedef struct sc_affinity_term {
    const sc_match_expr *exprs;
    size_t nexprs;
} sc_affinity_term;

/* ---- nodes ---- */

typedef struct sc_node_spec {
    const char *name;
    sc_res allocatable;
    bool ready;          /* Ready condition True */
    bool unschedulable;  /* spec.unschedulable */
    const sc_kv *labels;
    size_t nlabels;
    const sc_taint *taints;
    size_t ntaints;
} sc_node_spec;

/* Adds or replaces a node by name; tasks already on it stay. */
sc_node *sc_node_upsert(sc_cluster *c, const sc_node_spec *spec);
void sc_node_remove(sc_cluster *c, const char *name);
sc_node *sc_node_find(const sc_cluster *c, const char *name);
const char *sc_node_name(const sc_node *n);
const sc_res *sc_node_allocatable(const sc_node *n);
const sc_res *sc_node_used(const sc_node *n); /* tasks holding resources on it */
size_t sc_node_count(const sc_cluster *c);

/* ---- queues ---- */

typedef struct sc_queue_spec {
    const char *name;
    const char *parent;  /* NULL = child of the root */
    int weight;          /* >= 1 */
    sc_res capability;   /* only slots set in cap_mask cap the queue */
    unsigned cap_mask;
    sc_res guarantee;
    bool reclaimable;
    bool open;           /* status.state Open (a Closed queue admits nothing new) */
} sc_queue_spec;

sc_queue *sc_queue_upsert(sc_cluster *c, const sc_queue_spec *spec);
void sc_queue_remove(sc_cluster *c, const char *name);
sc_queue *sc_queue_find(const sc_cluster *c, const char *name);
const char *sc_queue_name(const sc_queue *q);
const sc_res *sc_queue_allocated(const sc_queue *q);
const sc_res *sc_queue_deserved(const sc_queue *q); /* as of the last cycle */
bool sc_queue_open(const sc_queue *q);
bool sc_queue_defined(const sc_queue *q); /* a Queue object exists */
size_t sc_queue_count(const sc_cluster *c);
/* What a queue is and holds, as of the last cycle (the scheduler's
 * metrics); pointers borrowed from q. */
typedef struct sc_queue_view {
    int weight;
    const sc_res *capability; /* only the slots in cap_mask cap the queue */
    unsigned cap_mask;
    const sc_res *allocated, *request, *deserved, *inqueue;
    double share;
} sc_queue_view;
void sc_queue_view_of(const sc_queue *q, sc_queue_view *v);
sc_queue *sc_queue_at(const sc_cluster *c, size_t i); /* 0 <= i < sc_queue_count */

/* ---- jobs (pod groups) ---- */

typedef enum {
    SC_JOB_PENDING,   /* not admitted: its pods are not created yet */
    SC_JOB_INQUEUE,   /* admitted by enqueue */
    SC_JOB_RUNNING,   /* at least minMember tasks running or succeeded */
    SC_JOB_COMPLETED, /* the adapter says so (every pod finished) */
} sc_job_phase;

typedef struct sc_job_spec {
    const char *key;        /* "namespace/name" of the PodGroup */
    const char *queue;      /* NULL = "default" */
    int min_member;
    const sc_kv *min_task_member; /* value = decimal count */
    size_t nmin_task_member;
    sc_res min_resources;
    int32_t priority;       /* from priorityClassName */
    double created;         /* seconds, orders jobs of equal priority */
    bool inqueue;           /* status.phase already past Pending (after a restart) */
    bool preemptable;       /* may be a victim of preempt/reclaim (default true) */
} sc_job_spec;

sc_job *sc_job_upsert(sc_cluster *c, const sc_job_spec *spec);
/* Removes the job and every task still in it. */
void sc_job_remove(sc_cluster *c, const char *key);
sc_job *sc_job_find(const sc_cluster *c, const char *key);
size_t sc_job_count(const sc_cluster *c);
sc_job *sc_job_at(const sc_cluster *c, size_t i); /* 0 <= i < sc_job_count */
const char *sc_job_key(const sc_job *j);
bool sc_job_is_group(const sc_job *j); /* a PodGroup (not a lone pod's own gang) */
/* Its PodGroup was deleted. Pods of it that remain keep what they hold on
 * their nodes until each is removed (sc_task_remove), and the job goes with
 * the last of them; meanwhile it waits for nothing and reports nothing. A
 * PodGroup of the same name made again takes them back (sc_job_upsert). */
void sc_job_orphan(sc_cluster *c, const char *key);
sc_queue *sc_job_queue(const sc_job *j);
sc_job_phase sc_job_get_phase(const sc_job *j);
void sc_job_set_completed(sc_cluster *c, sc_job *j);
/* Why the job waits, as of the last cycle ("" when it does not). Borrowed. */
const char *sc_job_message(const sc_job *j);
size_t sc_job_ntasks(const sc_job *j);
sc_task *sc_job_task(const sc_job *j, size_t i); /* 0 <= i < sc_job_ntasks */
int sc_job_ready_tasks(const sc_job *j);   /* allocated, bound, running or succeeded */
int sc_job_running_tasks(const sc_job *j); /* running or succeeded */
/* Its tasks by status as a PodGroup's status counts them: running,
 * succeeded, failed (indexes of sc_job_count_kind). */
enum sc_job_count_kind { SC_JOB_COUNT_RUNNING, SC_JOB_COUNT_SUCCEEDED, SC_JOB_COUNT_FAILED,
                         SC_JOB_NCOUNTS };
int sc_job_task_count(const sc_job *j, enum sc_job_count_kind k);
/* Changes a running or waiting job's priority (the simulator's LAS levels). */
void sc_job_set_priority(sc_cluster *c, sc_job *j, int32_t priority);
/* Opaque pointer for the caller (the simulator's job record). */
void sc_job_set_user(sc_job *j, void *user);
void *sc_job_user(const sc_job *j);

/* ---- namespace quotas (ResourceQuota) ---- */

/* A ResourceQuota as the enqueue gate reads it: the hard limits it puts on
 * what a gang's minResources carry (requests and pod counts, by slot), and
 * what its status says is used. A group of the namespace is admitted only
 * when, for every limited slot it asks for, what the namespace uses (the
 * larger of the status and the model's own count of its live pods) plus
 * what its admitted groups still expect plus its minResources stay within
 * hard (Volcano's resourcequota plugin, with the groups not yet holding
 * pods reserved across cycles). */
typedef struct sc_quota_spec {
    const char *ns, *name;
    sc_res hard;
    unsigned hard_mask;           /* the slots it limits */
    sc_res used;                  /* status.used in those slots */
    const char *names[SC_MAXRES]; /* each limited slot's name as the quota spells it */
} sc_quota_spec;

/* Adds or replaces the quota ns/name. */
void sc_quota_upsert(sc_cluster *c, const sc_quota_spec *spec);
void sc_quota_remove(sc_cluster *c, const char *ns, const char *name);
size_t sc_quota_count(const sc_cluster *c);

/* ---- tasks (pods) ---- */

typedef enum {
    SC_TASK_PENDING,    /* waiting for a node */
    SC_TASK_ALLOCATED,  /* placed inside an open statement */
    SC_TASK_PIPELINED,  /* nominated to a node whose resources are being released */
    SC_TASK_BINDING,    /* decision made, the binding is on its way */
    SC_TASK_BOUND,      /* spec.nodeName set, not running yet */
    SC_TASK_RUNNING,
    SC_TASK_RELEASING,  /* evicted or being deleted: still holds its resources */
    SC_TASK_SUCCEEDED,
    SC_TASK_FAILED,
} sc_task_status;

typedef struct sc_task_spec {
    const char *key;         /* "namespace/name" of the pod */
    const char *uid;         /* its metadata.uid, NULL when not known: a task
                                of the same key with another uid is another
                                pod, the one before it gone */
    const char *job;         /* PodGroup key; NULL = a job of its own */
    const char *task_name;   /* role, for minTaskMember (e.g. "worker") */
    sc_res request;
    int32_t priority;
    const char *node;        /* bound node, NULL/"" when pending */
    sc_task_status status;   /* PENDING, BOUND, RUNNING, RELEASING, SUCCEEDED or FAILED */
    const sc_kv *node_selector;
    size_t nnode_selector;
    const sc_toleration *tolerations;
    size_t ntolerations;
    const sc_affinity_term *affinity;
    size_t naffinity;
    /* For a task that exists: only its status and node are observed; its
     * request, priority, task name and constraints stay as they are (the
     * spec of a pod that is placed cannot change what they are made of). */
    bool status_only;
} sc_task_spec;

/* Adds or updates a task. A task the core is binding keeps BINDING until the
 * spec names a node. A task without a job gets a job of its own (minMember 1,
 * queue "default", already admitted). */
sc_task *sc_task_upsert(sc_cluster *c, const sc_task_spec *spec);
void sc_task_remove(sc_cluster *c, const char *key);
/* Is t the pod of this uid? True when either is not known. */
bool sc_task_is_pod(const sc_task *t, const char *uid);
/* The pod's uid, NULL when not known: a binding names it, so that it binds
 * that pod and not another made since under its name. */
const char *sc_task_uid(const sc_task *t);
sc_task *sc_task_find(const sc_cluster *c, const char *key);
const char *sc_task_key(const sc_task *t);
sc_job *sc_task_job(const sc_task *t);
sc_node *sc_task_node(const sc_task *t);
sc_task_status sc_task_get_status(const sc_task *t);
/* Sets the status, keeping the node it is on (the simulator's BOUND ->
 * RUNNING -> SUCCEEDED, or PENDING to put an evicted task back). */
void sc_task_set_status(sc_cluster *c, sc_task *t, sc_task_status st);
/* Why the task waits, as of the last cycle, in kube-scheduler's words
 * ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu."). Borrowed. */
const char *sc_task_message(const sc_task *t);

/* ---- configuration ---- */

typedef struct sc_conf sc_conf;

/* Volcano's default configuration: actions "enqueue, allocate, backfill";
 * tiers [priority, gang, conformance], [overcommit, drf, predicates,
 * proportion, nodeorder, binpack]. (gpulocality is opt-in; the free-GPU
 * buckets keep gangs together without it.) */
sc_conf *sc_conf_default(void);
/* Parses the volcano-scheduler.conf shape (YAML: actions, tiers[].plugins[]
 * with name, arguments and enable* switches). NULL + err on a bad file. */
sc_conf *sc_conf_parse(const char *yaml, size_t len, ty_error *err);
sc_conf *sc_conf_load(const char *path, ty_error *err);
void sc_conf_free(sc_conf *conf);
/* The actions in order, comma separated, for logs. Borrowed. */
const char *sc_conf_actions(const sc_conf *conf);
/* Keeps the enqueue action (added when missing) and the configured preempt
 * and reclaim, and makes those evict whole gangs only: for a runtime that
 * places pods itself (Slurm), where Trainyard admits gangs and never binds,
 * and a gang's resources come back only when all of it is gone. */
void sc_conf_admit_only(sc_conf *conf);

/* ---- the cycle ---- */

typedef struct sc_hooks {
    void *ctx;
    /* Bind t to n (the task is BINDING; the caller confirms later by
     * upserting it with the node, or reports failure with sc_task_unbind). */
    void (*bind)(void *ctx, sc_task *t, sc_node *n);
    /* Evict t (the task is RELEASING; remove it when its pod is gone). The
     * reason is "Preempted" or "Reclaimed"; by says for whom. */
    void (*evict)(void *ctx, sc_task *t, const char *reason, const sc_job *by);
    /* The job's phase or message changed in this cycle. */
    void (*job_changed)(void *ctx, sc_job *j);
    /* No one reads why jobs wait (the simulator): skip working it out. */
    bool no_reasons;
} sc_hooks;

/* A binding that failed: the task goes back to PENDING and frees the node. */
void sc_task_unbind(sc_cluster *c, sc_task *t);

typedef struct sc_cycle_stats {
    size_t admitted, bound, pipelined, evicted;
    size_t jobs_considered, jobs_unschedulable;
} sc_cycle_stats;

sc_cluster *sc_cluster_new(void);
void sc_cluster_free(sc_cluster *c);

/* Runs one scheduling cycle: every action of conf in order. Decisions go to
 * the hooks as they are committed. */
void sc_cycle(sc_cluster *c, const sc_conf *conf, const sc_hooks *hooks,
              sc_cycle_stats *stats);

#endif
