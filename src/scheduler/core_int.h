/* core_int.h - the scheduler core's insides, shared by model.c, model_account.c, session.c,
 * explain.c, conf.c, actions/ and plugins/. Nothing outside src/scheduler includes it
 * (the unit tests do, to build small clusters by hand). */
#ifndef TY_SCHEDULER_CORE_INT_H
#define TY_SCHEDULER_CORE_INT_H

#include "base/strmap.h"
#include "scheduler/core.h"

#define SC_BUCKETS 257      /* free-GPU buckets: 0..255 and "256 or more" */
#define SC_MSG_LEN 320

enum { SC_ON_NODE, SC_NOMINATED };

struct sc_node {
    char *name;
    sc_res alloc;
    sc_res used;       /* held by ALLOCATED/BINDING/BOUND/RUNNING/RELEASING tasks */
    sc_res releasing;  /* the part of used that is being released */
    sc_res pipelined;  /* reserved for PIPELINED tasks nominated here */
    bool ready, unschedulable;
    sc_kv *labels;
    size_t nlabels;
    sc_taint *taints;
    size_t ntaints;
    size_t idx;        /* position in cluster->nodes */
    int bucket;        /* free-GPU bucket, -1 when not schedulable */
    sc_node *bprev, *bnext;
    size_t ntasks;
    /* what it adds to the cluster's sums (sc_node_sums_out/in) */
    sc_res sum_now, sum_future;
    bool summed;
    /* the tasks whose node is this one ([SC_ON_NODE]) and those nominated
     * to it ([SC_NOMINATED]), each doubly linked through the task: a node's
     * removal visits its own */
    sc_task *tasks[2];
};

struct sc_queue {
    char *name;
    char *parent_name;
    sc_queue *parent;
    int weight;
    sc_res capability;
    unsigned cap_mask;
    sc_res guarantee;
    bool reclaimable, open;
    bool defined;      /* a Queue object exists (else jobs naming it wait) */
    /* kept by accounting */
    sc_res allocated;  /* tasks ALLOCATED/BINDING/BOUND/RUNNING */
    /* computed per session by proportion */
    sc_res request;    /* tasks that are not finished nor being released */
    sc_res demand;     /* request plus the minResources of groups without pods */
    sc_res deserved, inqueue;
    /* kept by sc_waiting_update: the minResources of this queue's own
     * waiting groups that have no pods yet (proportion's demand) */
    sc_res wait_demand;
    /* kept by sc_waiting_update: the minResources of this queue's own
     * admitted groups still short of minMember ready (inqueue is this as a
     * session opens, plus what the session admits) */
    sc_res admitted_short;
    double share;
    bool met;
    size_t njobs;
    size_t idx;
};

typedef struct sc_task_min {
    char *name;
    int min;
} sc_task_min;

struct sc_job {
    char *key;
    char *queue_name;
    sc_queue *queue;
    int min_member;
    sc_task_min *task_mins;
    size_t ntask_mins;
    /* the task minimums summed: when minMember is below it they are not
     * checked (Volcano's rule: minMember was set on purpose for fewer pods
     * than the tasks' own minimums add up to, an elastic job) */
    int task_min_total;
    sc_res min_res;
    int32_t priority;
    double created;
    bool inqueue, completed, implicit, preemptable;
    /* No PodGroup: it went while pods of it remain (sc_job_orphan), or it
     * has not been seen yet. Such a job's pods keep what they hold, but it
     * is not admitted, placed or reported, and it goes with its last pod. */
    bool groupless;
    bool ran;          /* reached Running once: finished pods then mean Completed */
    sc_task **tasks;
    size_t ntasks, cap;
    /* kept by accounting */
    sc_res allocated;
    int n_ready, n_running, n_pending, n_pipelined;
    /* its tasks Running, Succeeded and Failed, each alone: what a PodGroup's
     * status counts (n_running above is Running or Succeeded, for the phase) */
    int n_counts[SC_JOB_NCOUNTS];
    /* the waiting lists (sc_waiting_update): jobs still to be admitted, and
     * admitted jobs with pending or pipelined tasks or pods still to come */
    bool waiting;
    bool wadmitted;      /* which list: cluster->waiting[SC_WAIT_ADMITTED] */
    sc_job *wprev, *wnext;
    sc_queue *demand_q;  /* the queue whose wait_demand holds demand_res, or NULL */
    sc_res demand_res;
    sc_queue *short_q;   /* the queue whose admitted_short holds short_res, or NULL */
    sc_res short_res;
    size_t idx;        /* position in cluster->jobs */
    /* a job that failed to fit is not tried again until something it could
     * use is freed (release_epoch) or the job itself changes */
    uint64_t fail_epoch[3], fail_at[3]; /* per pass: allocate, preempt, reclaim */
    uint64_t change_epoch;
    sc_node *last_node; /* where its latest task went: the gang's next try, */
    uint64_t last_node_gen; /* valid while the cluster's node_gen is this (sc_job_last_node) */
    bool in_changed;
    sc_job *cnext;      /* the changed list: phase or message to report */
    double share;      /* drf: dominant share, cached for one action */
    uint64_t share_serial;
    /* a lower bound on what the gang needs from the cluster's free totals
     * to make progress (want x the smallest request of its pending tasks);
     * recomputed after any change to its tasks */
    sc_res need;
    bool need_valid, need_gang;
    sc_job_phase phase;
    char msg[SC_MSG_LEN];
    bool reported;     /* phase/message/counts as last told to job_changed */
    sc_job_phase told_phase;
    char told_msg[SC_MSG_LEN];
    int told_counts[SC_JOB_NCOUNTS];
    /* bumped when a pending task's message changed while the job's own did
     * not (the members of a running elastic gang that wait for room): its
     * pods are told as its PodGroup is */
    unsigned task_msg_gen, told_task_msg_gen;
    void *user;
};

struct sc_task {
    char *key;
    char *uid;           /* the pod's metadata.uid (owned); NULL when not known */
    sc_job *job;
    char *task_name;
    sc_res req;
    int32_t priority;
    sc_node *node;       /* where it holds resources (or is bound) */
    sc_node *nominated;  /* PIPELINED: the node it waits for */
    struct sc_task_link {
        sc_task *prev, *next;
    } link[2];           /* in node->tasks[SC_ON_NODE], nominated->tasks[SC_NOMINATED] */
    sc_task_status st;
    sc_kv *selector;
    size_t nselector;
    sc_toleration *tols;
    size_t ntols;
    sc_affinity_term *aff;
    size_t naff;
    size_t job_idx;
    char msg[SC_MSG_LEN];
};

struct sc_quota {
    char *ns, *name;
    sc_res hard, used;
    unsigned mask;
    char *names[SC_MAXRES];
    /* the namespace's use as one enqueue action sees it: the model's
     * (base) as the action opened, and what the action admitted since */
    uint64_t serial;
    sc_res base, added;
    struct sc_quota *ns_next; /* the next quota of its namespace, as that pass links them */
};

struct sc_cluster {
    char *res_names[SC_MAXRES];
    struct sc_quota **quotas;
    size_t nquotas, quotas_cap;
    uint64_t node_gen;   /* goes up when a node is removed: every job's last_node is void */
    strmap node_map, queue_map, job_map, task_map;
    sc_node **nodes;
    size_t nnodes, nodes_cap;
    sc_queue **queues;
    size_t nqueues, queues_cap;
    sc_job **jobs;
    size_t njobs, jobs_cap;
    sc_node *buckets[SC_BUCKETS];
    /* The waiting jobs, on two lists so that a cycle visits only the ones
     * an action is about: with thousands of groups queued for admission
     * behind a full overcommit budget, allocate and the admission sums
     * walked every one of them in every cycle. */
    sc_job *waiting[2]; /* heads: SC_WAIT_PENDING, SC_WAIT_ADMITTED */
    size_t nwaiting[2];
    sc_res admitted_short; /* the queues' admitted_short, summed */
    /* Over the schedulable nodes, kept as they change (sc_node_sums_in/out)
     * so that a session need not visit 5,000 nodes to open: allocatable,
     * and idle less reserved (each node's at least 0), and that plus what is
     * being released. */
    sc_res sum_alloc, sum_free_now, sum_free_future;
    sc_job *changed_head;
    uint64_t epoch;          /* bumps on every change */
    uint64_t release_epoch;  /* bumps when resources are freed or added */
    size_t scan_start;       /* round-robin start for generic node scans */
    size_t auto_jobs;
    uint64_t action_serial;  /* bumps at every action: per-action caches */
};

/* ---- the model (model.c, model_queue.c) ---- */

/* Room for element n of the array at *arrp (elem bytes each, *cap of them
 * allocated), doubling it when full. 0, or -1 out of memory (the array is
 * left as it was). */
int sc_grow_arr(void *arrp, size_t *cap, size_t n, size_t elem);

/* ---- accounting (model_account.c) ---- */

/* A node's part of the cluster's sums: taken out before its resources or
 * schedulability change, put back after (a node not schedulable adds
 * nothing). */
void sc_node_sums_out(sc_cluster *c, sc_node *n);
void sc_node_sums_in(sc_cluster *c, sc_node *n);

/* Between model.c and model_account.c only. A node's place among the
 * free-GPU buckets, taken out before its capacity or state changes and put
 * back after (refresh: both); a job's place on the waiting lists, and its
 * share of its queue's wait_demand, after its tasks, admission, queue or
 * minResources changed; a task's resources counted (sign 1) or taken
 * back (-1) on its node, job and queue as its status says; a task linked to
 * node n and nominated node nom in their per-node lists. */
void sc_bucket_out(sc_cluster *c, sc_node *n);
void sc_bucket_in(sc_cluster *c, sc_node *n);
void sc_bucket_refresh(sc_cluster *c, sc_node *n);
enum { SC_WAIT_PENDING, SC_WAIT_ADMITTED };
void sc_waiting_update(sc_cluster *c, sc_job *j);
void sc_account(sc_cluster *c, sc_task *t, int sign);
void sc_place(sc_task *t, sc_node *n, sc_node *nom);


/* Moves t to status st on node n (NULL keeps none) and nominated node nom,
 * keeping node, job, queue and bucket accounting exact. */
void sc_task_move(sc_cluster *c, sc_task *t, sc_task_status st, sc_node *n, sc_node *nom);
bool sc_status_holds(sc_task_status st);     /* holds node resources */
bool sc_status_allocated(sc_task_status st); /* counts toward queue/job allocation */
bool sc_status_ready(sc_task_status st);     /* counts toward the gang */
bool sc_node_schedulable(const sc_node *n);
int64_t sc_node_free_gpus(const sc_node *n); /* now, less pipelined reservations */
void sc_job_touch(sc_cluster *c, sc_job *j); /* mark changed: try it again */
/* Recomputes the job's phase; queues it for job_changed when it or the
 * message differs from what was last reported. */
void sc_job_note(sc_cluster *c, sc_job *j);
/* Whether its phase, message and counts are those last told to job_changed. */
bool sc_job_told(const sc_job *j);
/* Re-files a job on the waiting list after its admission changed. */
void sc_task_move_job_refresh(sc_cluster *c, sc_job *j);
sc_queue *sc_queue_get_or_default(sc_cluster *c, const char *name);
/* minMember and the per-role minimums met by ready (+ pipelined when
 * with_pipelined) tasks; the per-role minimums only where their sum is not
 * above minMember (see task_min_total). */
bool sc_job_gang_ready(const sc_job *j, bool with_pipelined, bool gang);

/* ---- the session (session.c) ---- */

typedef struct sc_plugin sc_plugin;
typedef struct sc_session sc_session;

typedef struct sc_arg {
    char *key, *value;
} sc_arg;

typedef struct sc_plugin_conf {
    const sc_plugin *plugin;
    sc_arg *args;
    size_t nargs;
    /* enable switches as in volcano-scheduler.conf (default on) */
    bool job_order, queue_order, task_order, predicate, node_order, preemptable,
        reclaimable, enqueueable, overused, job_ready;
} sc_plugin_conf;

typedef struct sc_tier {
    sc_plugin_conf *plugins;
    size_t n;
} sc_tier;

typedef enum { SC_ACT_ENQUEUE, SC_ACT_ALLOCATE, SC_ACT_BACKFILL, SC_ACT_PREEMPT, SC_ACT_RECLAIM } sc_action;

struct sc_conf {
    sc_action actions[8];
    size_t nactions;
    char actions_str[128];
    sc_tier tiers[8];
    size_t ntiers;
    /* admit-only (a runtime such as Slurm places pods): preempt and reclaim
     * evict whole gangs only, since the runtime holds a gang's resources
     * until all of it is gone */
    bool whole_gangs;
};

/* Placement modes: what a node can give a task. */
typedef enum {
    SC_FIT_NOW,    /* idle less others' reservations */
    SC_FIT_FUTURE, /* also what is being released */
} sc_fit_mode;

typedef struct sc_op {
    enum { SC_OP_ALLOCATE, SC_OP_PIPELINE, SC_OP_EVICT } kind;
    sc_task *t;
    sc_task_status prev_st;
    sc_node *prev_node, *prev_nom;
    sc_node *prev_last; /* the job's last_node before the op */
    const char *reason;
} sc_stmt_op;

typedef struct sc_stmt {
    sc_session *s;
    uint64_t release0; /* the cluster's release epoch when it opened */
    sc_stmt_op *ops;
    size_t n, cap;
} sc_stmt;

struct sc_session {
    sc_cluster *c;
    const sc_conf *conf;
    const sc_hooks *hooks;
    sc_cycle_stats *stats;
    sc_res total;        /* allocatable of schedulable nodes */
    sc_res free_now;     /* idle less reservations, schedulable nodes */
    sc_res free_future;  /* plus what is being released */
    sc_res inqueue_total; /* minResources of admitted jobs not yet running */
    bool gang;           /* the gang plugin is on */
    bool shares;         /* the proportion plugin is on: queues' deserved hold */
    double overcommit;   /* overcommit factor, 0 = plugin off */
    const sc_job *preemptor; /* for victim filters */
    /* resources the preemptor's pending tasks need more of than the cluster
     * will have free (bit r for slot r); 0 = none short in total */
    unsigned short_mask;
    /* the plugins that order jobs and tasks, in tier order (compared often) */
    const sc_plugin_conf *job_orders[16], *task_orders[16];
    size_t njob_orders, ntask_orders;
};

/* An argument a plugin reads as a number, and the least value it takes. */
typedef struct sc_number_arg {
    const char *key;
    double min;
} sc_number_arg;

struct sc_plugin {
    const char *name;
    /* its numeric arguments, ended by a NULL key: a value that is not a
     * number, or is below min, fails the configuration (conf.c) */
    const sc_number_arg *number_args;
    /* called at session open (shares, deserved) */
    void (*open)(sc_session *s, const sc_plugin_conf *pc);
    /* < 0: a first; > 0: b first; 0: no opinion */
    int (*job_order)(sc_session *s, const sc_job *a, const sc_job *b);
    int (*queue_order)(sc_session *s, const sc_queue *a, const sc_queue *b);
    int (*task_order)(sc_session *s, const sc_task *a, const sc_task *b);
    /* NULL = fits; else a reason in kube-scheduler's words, written to why */
    bool (*predicate)(sc_session *s, const sc_task *t, const sc_node *n, char *why, size_t len);
    /* higher is better, roughly 0..100 per plugin times its weight */
    double (*node_score)(sc_session *s, const sc_plugin_conf *pc, const sc_task *t,
                         const sc_node *n);
    /* may victim be evicted for the preemptor (reclaim = across queues)? */
    bool (*victim_ok)(sc_session *s, const sc_job *preemptor, const sc_task *victim, bool reclaim);
    bool (*enqueueable)(sc_session *s, const sc_plugin_conf *pc, const sc_job *j);
    bool (*overused)(sc_session *s, const sc_queue *q);
    /* allocation may take t into its queue (capability) */
    bool (*allocatable)(sc_session *s, const sc_queue *q, const sc_task *t);
};

extern const sc_plugin sc_plugin_priority, sc_plugin_gang, sc_plugin_conformance,
    sc_plugin_overcommit, sc_plugin_drf, sc_plugin_predicates, sc_plugin_proportion,
    sc_plugin_nodeorder, sc_plugin_binpack, sc_plugin_gpulocality, sc_plugin_resourcequota;

const char *sc_arg_get(const sc_plugin_conf *pc, const char *key);
double sc_arg_double(const sc_plugin_conf *pc, const char *key, double dflt);

/* session.c */
void sc_session_open(sc_session *s, sc_cluster *c, const sc_conf *conf, const sc_hooks *h,
                     sc_cycle_stats *st);
void sc_session_close(sc_session *s);
int sc_job_cmp(sc_session *s, const sc_job *a, const sc_job *b);
int sc_queue_cmp(sc_session *s, const sc_queue *a, const sc_queue *b);
int sc_task_cmp(sc_session *s, const sc_task *a, const sc_task *b);
bool sc_queue_overused(sc_session *s, const sc_queue *q);
bool sc_job_enqueueable(sc_session *s, const sc_job *j);
bool sc_task_allocatable(sc_session *s, const sc_task *t);
bool sc_victim_ok(sc_session *s, const sc_job *preemptor, const sc_task *victim, bool reclaim);
/* Does t fit on n in this mode (resources and every predicate)? why gets the
 * first failing reason. */
bool sc_fits(sc_session *s, const sc_task *t, const sc_node *n, sc_fit_mode mode, char *why,
             size_t len);
/* The best node for t, or NULL. */
sc_node *sc_pick_node(sc_session *s, const sc_task *t, sc_fit_mode mode);
/* The job's pending (or pipelined) tasks in task order; caller frees. */
sc_task **sc_job_pending_tasks(sc_session *s, sc_job *j, bool with_pipelined, size_t *n);
/* Waiting jobs of the given kind, sorted by queue then job order, leaving
 * out jobs that pass skip_pass (>= 0) would skip; caller frees. */
sc_job **sc_waiting_jobs_for(sc_session *s, bool admitted, int skip_pass, size_t *n);
/* Job-order heaps, one per queue (allocate and enqueue take jobs in order
 * only as far as they get, instead of sorting every waiting job each
 * cycle). sc_queue_heaps regroups all[0..n) in place by queue, count[i] of
 * them of queue i, and makes qs[i] (c->nqueues of them) a heap over queue
 * i's slice; how many queues have any, or (size_t)-1 when out of memory. */
typedef struct sc_qheap {
    sc_queue *q;
    sc_job **h;
    size_t n;
    sc_job *blocker; /* allocate: the first left-out job of the queue */
    bool blocked;
} sc_qheap;
size_t sc_queue_heaps(sc_session *s, sc_job **all, size_t n, const size_t *count, sc_qheap *qs);
sc_job *sc_qheap_pop(sc_session *s, sc_qheap *qh);
/* Puts back a job popped from qh (its slice has room for it), in its order
 * as it is now. */
void sc_qheap_push(sc_session *s, sc_qheap *qh, sc_job *j);
/* The job's lower bound on what it needs free to make progress (see need). */
const sc_res *sc_job_need(sc_session *s, sc_job *j);
/* Failed earlier, and nothing was freed and nothing changed since. */
enum { SC_PASS_ALLOCATE, SC_PASS_PREEMPT, SC_PASS_RECLAIM };
bool sc_job_skippable(const sc_cluster *c, const sc_job *j, int pass);
void sc_job_mark_failed(sc_cluster *c, sc_job *j, int pass);
/* quota.c: whether the quotas of j's namespace hold its minResources on
 * top of what the namespace uses and its admitted groups expect; when not,
 * why into why ("resource quota \"q\" in namespace \"ns\": ..."). */
bool sc_quota_admits(sc_session *s, const sc_job *j, char *why, size_t len);
/* j was admitted: what it asks is counted against its namespace's quotas
 * for the rest of the action. */
void sc_quota_charge(sc_session *s, const sc_job *j);
void sc_quotas_free(sc_cluster *c);
/* Admits a job (enqueue); it counts toward the inqueue sums. */
void sc_job_admit(sc_session *s, sc_job *j);
/* explain.c. Beyond this many nodes, why a task does not fit is told from
 * the cluster's free totals rather than node by node. */
#define SC_EXPLAIN_NODES 1000
/* Why t fits on no node, as kube-scheduler counts it ("1 Insufficient
 * nvidia.com/gpu, 2 node(s) were unschedulable"). */
void sc_node_reasons(sc_session *s, const sc_task *t, char *out, size_t len);
/* Writes the "why it waits" messages of a job that could not be placed:
 * "U/T tasks in gang unschedulable: reasons". reasons NULL = those of its
 * first pending task as the cluster is now. */
void sc_job_explain(sc_session *s, sc_job *j, size_t unschedulable, size_t total,
                    const char *reasons);
/* The same for a gang that is placed (minMember and its role minimums met)
 * while members beyond them wait for room: the job itself is scheduled and
 * says nothing; each waiting member says why it fits on no node. reasons
 * NULL = those of its first pending task as the cluster is now. */
void sc_job_explain_surplus(sc_session *s, sc_job *j, const char *reasons);

/* the statement */
void sc_stmt_init(sc_stmt *st, sc_session *s);
void sc_stmt_allocate(sc_stmt *st, sc_task *t, sc_node *n);
void sc_stmt_pipeline(sc_stmt *st, sc_task *t, sc_node *n);
void sc_stmt_evict(sc_stmt *st, sc_task *t, const char *reason);
void sc_stmt_commit(sc_stmt *st, const sc_job *by);
void sc_stmt_discard(sc_stmt *st);
/* Undoes the operations after the first mark (a count of operations). */
void sc_stmt_rollback(sc_stmt *st, size_t mark);

/* actions/ */
void sc_action_enqueue(sc_session *s);
void sc_action_allocate(sc_session *s, bool backfill);
void sc_action_preempt(sc_session *s, bool reclaim);

/* A job's last_node hint, NULL once any node was removed since it was set
 * (a removal voids every hint at once instead of visiting every job). */
static inline sc_node *sc_job_last_node(const sc_cluster *c, const sc_job *j)
{
    return j->last_node_gen == c->node_gen ? j->last_node : NULL;
}

static inline void sc_job_set_last_node(const sc_cluster *c, sc_job *j, sc_node *n)
{
    j->last_node = n;
    j->last_node_gen = c->node_gen;
}

#endif
