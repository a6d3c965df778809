/* simulate.c - the simulator's event loop around the scheduler core.
 *
 * A virtual clock jumps from event to event: arrivals (the trace), finishes
 * (start + remaining run time) and, under LAS, the moments a running job's
 * attained GPU-seconds cross a queue threshold. After each batch of events at
 * one instant, if something changed, the core runs a cycle; its bindings start
 * jobs (every pod bound = the gang runs) and its evictions stop them (the
 * progress is kept, the gang goes back to pending, whole). The core is never
 * told about time: the simulator owns the clock, the core only decides. */
#include "sim/simulate.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core.h"

typedef enum { JS_FUTURE, JS_WAITING, JS_PENDING, JS_RUNNING, JS_DONE, JS_SKIPPED } js_state;

typedef struct sim_js {
    const sim_job *tj;
    int idx;
    int queue;           /* queue index the job runs in (0 without --queues) */
    int npods, pod_gpus; /* every pod pod_gpus, the last one the rest */
    double remaining;    /* run time left */
    double attained;     /* GPU-seconds of service so far */
    double run_start;    /* start of the current stint */
    double first_start, finish;
    double gpu_seconds;
    int level;           /* LAS queue */
    int bound;           /* pods bound in the current attempt */
    unsigned epoch;      /* bumped when the job stops: its pending events are stale */
    js_state st;
    bool victim;
} sim_js;

enum { EV_FINISH = 0, EV_DEMOTE = 1 };

typedef struct sim_ev {
    double t;
    int kind;
    int job;
    unsigned epoch;
} sim_ev;

typedef struct bound_task {
    sim_js *j;
    sc_task *t;
} bound_task;

/* Per queue under FIFO: the jobs in arrival order and how far they got. */
typedef struct fifo_q {
    int *jobs;
    size_t n, arrived, next;
    bool busy; /* its head job is in the core, waiting */
} fifo_q;

typedef struct engine {
    const sim_trace *tr;
    const sim_options *o;
    sc_cluster *c;
    sc_conf *conf;
    sc_hooks hooks;
    sim_js *js;
    sim_ev *heap;
    size_t nheap, capheap;
    fifo_q *fifo;       /* one per trace queue, FIFO only */
    bound_task *bound;
    size_t nbound, capbound;
    sim_js **victims;
    size_t nvictims, capvictims;
    size_t pending_in_core;
    size_t pending_at_level[SIM_MAX_LAS_LEVELS];
    bool admitted;      /* a job entered the core since the last cycle */
    long used_gpus, total_gpus;
    int nlevels;
    double thresholds[SIM_MAX_LAS_LEVELS];
    double now;
    bool oom;
    sim_result *res;
} engine;

int sim_policy_parse(const char *name, sim_policy *out)
{
    static const char *const names[] = {"fifo", "sjf", "las"};
    for (int i = 0; i < 3; i++)
        if (name && strcmp(name, names[i]) == 0) {
            *out = (sim_policy)i;
            return 0;
        }
    return -1;
}

const char *sim_policy_name(sim_policy p)
{
    switch (p) {
    case SIM_FIFO: return "fifo";
    case SIM_SJF: return "sjf";
    case SIM_LAS: return "las";
    }
    return "?";
}

/* ---- the event heap (ordered by time, then kind, then job: deterministic) ---- */

static bool ev_less(const sim_ev *a, const sim_ev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->job < b->job;
}

static void ev_push(engine *e, double t, int kind, const sim_js *j)
{
    if (e->nheap == e->capheap) {
        size_t ncap = e->capheap ? e->capheap * 2 : 1024;
        sim_ev *nh = realloc(e->heap, ncap * sizeof(*nh));
        if (!nh) {
            e->oom = true;
            return;
        }
        e->heap = nh;
        e->capheap = ncap;
    }
    size_t i = e->nheap++;
    sim_ev ev = {.t = t, .kind = kind, .job = j->idx, .epoch = j->epoch};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&ev, &e->heap[p]))
            break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = ev;
}

static sim_ev ev_pop(engine *e)
{
    sim_ev top = e->heap[0], last = e->heap[--e->nheap];
    size_t i = 0, n = e->nheap;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const sim_ev *best = &last;
        if (l < n && ev_less(&e->heap[l], best)) {
            m = l;
            best = &e->heap[l];
        }
        if (l + 1 < n && ev_less(&e->heap[l + 1], best))
            m = l + 1;
        if (m == i)
            break;
        e->heap[i] = e->heap[m];
        i = m;
    }
    if (n)
        e->heap[i] = last;
    return top;
}

/* ---- the policies' knobs ---- */

static int32_t job_priority(const engine *e, const sim_js *j)
{
    switch (e->o->policy) {
    case SIM_FIFO: return 0;
    case SIM_SJF: {
        /* Shorter = higher; equal durations fall back to submission order. */
        double d = ceil(j->tj->duration);
        return (int32_t)(1000000000 - (d > 999999999 ? 999999999 : d));
    }
    case SIM_LAS: return (int32_t)(e->nlevels - j->level);
    }
    return 0;
}

static int las_level(const engine *e, double attained)
{
    int l = 0;
    while (l < e->nlevels - 1 && attained >= e->thresholds[l])
        l++;
    return l;
}

static const char *conf_yaml(const sim_options *o)
{
    /* Volcano's default tiers; the actions are the policy. */
#define TIERS                                                                                   \
    "tiers:\n"                                                                                  \
    "- plugins:\n"                                                                              \
    "  - name: priority\n"                                                                      \
    "  - name: gang\n"                                                                          \
    "- plugins:\n"                                                                              \
    "  - name: drf\n"                                                                           \
    "  - name: predicates\n"                                                                    \
    "  - name: proportion\n"                                                                    \
    "  - name: nodeorder\n"                                                                     \
    "  - name: binpack\n"
    /* FIFO: allocate alone keeps each queue strictly in order. SJF and LAS
     * place what fits (Tiresias' fit-first): backfill skips a job that does
     * not fit instead of holding the queue behind it. */
    switch (o->policy) {
    case SIM_FIFO: return "actions: \"enqueue, allocate\"\n" TIERS;
    case SIM_SJF: return "actions: \"enqueue, allocate, backfill\"\n" TIERS;
    case SIM_LAS:
        /* No reclaim with --queues: gang-sized reclaims overshoot the
         * deserved shares and the queues take GPUs back and forth forever at
         * one instant (see docs/internals/simulator.md). */
        return "actions: \"enqueue, allocate, backfill, preempt\"\n" TIERS;
    }
    return NULL;
#undef TIERS
}

/* ---- jobs in and out of the core ---- */

static void job_key(const sim_js *j, char *buf, size_t len)
{
    snprintf(buf, len, "sim/j%d", j->idx);
}

static int pod_gpus_of(const sim_js *j, int k)
{
    return k < j->npods - 1 ? j->pod_gpus : j->tj->gpus - (j->npods - 1) * j->pod_gpus;
}

static sc_res pod_request(int gpus)
{
    sc_res r = {{0}};
    r.v[SC_CPU] = 100;                           /* 0.1 core */
    r.v[SC_MEM] = (int64_t)1000 << 30;           /* 1 GiB, in milli-bytes */
    r.v[SC_PODS] = 1000;
    r.v[SC_GPU] = (int64_t)gpus * 1000;
    return r;
}

/* Hands a job to the core as a pending gang: a PodGroup with minMember = all
 * its pods. */
static int submit(engine *e, sim_js *j)
{
    char key[32], tkey[48];
    job_key(j, key, sizeof(key));
    sc_res total = {{0}};
    for (int k = 0; k < j->npods; k++) {
        sc_res r = pod_request(pod_gpus_of(j, k));
        sc_res_add(&total, &r);
    }
    int32_t prio = job_priority(e, j);
    sc_job_spec spec = {
        .key = key,
        .queue = e->tr->queues[j->queue],
        .min_member = j->npods,
        .min_resources = total,
        .priority = prio,
        .created = j->tj->submit,
        /* LAS jobs skip the enqueue gate: a job held back there could never
         * preempt, and Tiresias admits every job at once. */
        .inqueue = e->o->policy == SIM_LAS,
        .preemptable = true,
    };
    sc_job *cj = sc_job_upsert(e->c, &spec);
    if (!cj) {
        e->oom = true;
        return -1;
    }
    sc_job_set_user(cj, j);
    for (int k = 0; k < j->npods; k++) {
        snprintf(tkey, sizeof(tkey), "sim/j%d-%d", j->idx, k);
        sc_task_spec ts = {
            .key = tkey,
            .job = key,
            .task_name = "worker",
            .request = pod_request(pod_gpus_of(j, k)),
            .priority = prio,
            .status = SC_TASK_PENDING,
        };
        if (!sc_task_upsert(e->c, &ts)) {
            e->oom = true;
            return -1;
        }
    }
    j->st = JS_PENDING;
    j->bound = 0;
    e->pending_in_core++;
    e->pending_at_level[j->level]++;
    e->admitted = true;
    return 0;
}

static void leave_pending(engine *e, sim_js *j)
{
    e->pending_in_core--;
    e->pending_at_level[j->level]--;
}

static void remove_from_core(engine *e, sim_js *j)
{
    char key[32];
    job_key(j, key, sizeof(key));
    sc_job_remove(e->c, key);
}

/* FIFO: the head of a queue enters the core once the one before it runs. */
static void fifo_admit(engine *e, int q)
{
    fifo_q *f = &e->fifo[q];
    if (f->busy || f->next >= f->arrived)
        return;
    f->busy = true;
    submit(e, &e->js[f->jobs[f->next++]]);
}

/* Moves a running job's clock to now: its service so far is attained. */
static void account(engine *e, sim_js *j)
{
    double ran = e->now - j->run_start;
    j->attained += ran * j->tj->gpus;
    j->gpu_seconds += ran * j->tj->gpus;
    j->remaining -= ran;
    if (j->remaining < 0)
        j->remaining = 0;
    j->run_start = e->now;
}

static void push_demote(engine *e, sim_js *j)
{
    if (e->o->policy != SIM_LAS || j->level >= e->nlevels - 1)
        return;
    double dt = (e->thresholds[j->level] - j->attained) / j->tj->gpus;
    if (dt < 0)
        dt = 0;
    if (dt < j->remaining)
        ev_push(e, e->now + dt, EV_DEMOTE, j);
}

static void start(engine *e, sim_js *j)
{
    leave_pending(e, j);
    j->st = JS_RUNNING;
    j->run_start = e->now;
    if (j->first_start < 0)
        j->first_start = e->now;
    e->used_gpus += j->tj->gpus;
    ev_push(e, e->now + j->remaining, EV_FINISH, j);
    push_demote(e, j);
    if (e->fifo) {
        e->fifo[j->queue].busy = false;
        fifo_admit(e, j->queue);
    }
}

/* An evicted gang stops whole, keeps its progress and waits again. */
static void preempted(engine *e, sim_js *j)
{
    if (j->st == JS_RUNNING) {
        account(e, j);
        e->used_gpus -= j->tj->gpus;
        e->res->preemptions++;
    } else if (j->st == JS_PENDING) {
        leave_pending(e, j);
    }
    j->epoch++;
    remove_from_core(e, j);
    j->level = e->o->policy == SIM_LAS ? las_level(e, j->attained) : 0;
    submit(e, j);
}

/* ---- the core's hooks: decisions are collected, applied after the cycle ---- */

static void on_bind(void *ctx, sc_task *t, sc_node *n)
{
    engine *e = ctx;
    (void)n;
    if (e->nbound == e->capbound) {
        size_t ncap = e->capbound ? e->capbound * 2 : 256;
        bound_task *nb = realloc(e->bound, ncap * sizeof(*nb));
        if (!nb) {
            e->oom = true;
            return;
        }
        e->bound = nb;
        e->capbound = ncap;
    }
    e->bound[e->nbound++] = (bound_task){.j = sc_job_user(sc_task_job(t)), .t = t};
}

static void on_evict(void *ctx, sc_task *t, const char *reason, const sc_job *by)
{
    engine *e = ctx;
    (void)reason;
    (void)by;
    sim_js *j = sc_job_user(sc_task_job(t));
    if (!j || j->victim)
        return;
    if (e->nvictims == e->capvictims) {
        size_t ncap = e->capvictims ? e->capvictims * 2 : 64;
        sim_js **nv = realloc(e->victims, ncap * sizeof(*nv));
        if (!nv) {
            e->oom = true;
            return;
        }
        e->victims = nv;
        e->capvictims = ncap;
    }
    j->victim = true;
    e->victims[e->nvictims++] = j;
}

static void on_job_changed(void *ctx, sc_job *j)
{
    (void)ctx;
    (void)j;
}

/* Applies one cycle's decisions: bound pods run at once (the simulated
 * kubelet has no start-up time); a gang whose every pod is bound starts;
 * victims are gone at once. */
static void settle(engine *e)
{
    for (size_t i = 0; i < e->nbound; i++) {
        bound_task *b = &e->bound[i];
        if (!b->j)
            continue;
        sc_task_set_status(e->c, b->t, SC_TASK_RUNNING);
        if (b->j->st == JS_PENDING && ++b->j->bound == b->j->npods)
            start(e, b->j);
    }
    e->nbound = 0;
    for (size_t i = 0; i < e->nvictims; i++) {
        sim_js *j = e->victims[i];
        j->victim = false;
        preempted(e, j);
    }
    e->nvictims = 0;
}

/* Cycles at one instant until nothing more happens: again after evictions
 * (the preemptor starts once its victims are gone) and after a start let a
 * new job in (FIFO's next head). A non-preemptive policy with every GPU busy
 * has nothing to decide. Evictions are capped per instant so that decisions
 * that undo each other cannot spin forever; FIFO's head-of-line admissions
 * are not (each starts a job). */
static void schedule(engine *e)
{
    sc_cycle_stats st;
    int evicting_rounds = 0;
    for (long round = 0; round < 10000000 && e->pending_in_core > 0 && !e->oom; round++) {
        if (e->o->policy != SIM_LAS && e->used_gpus >= e->total_gpus)
            break;
        e->admitted = false;
        memset(&st, 0, sizeof(st));
        sc_cycle(e->c, e->conf, &e->hooks, &st);
        e->res->cycles++;
        size_t victims = e->nvictims, bound = e->nbound;
        settle(e);
        if (victims > 0 && ++evicting_rounds >= SIM_MAX_EVICTING_ROUNDS) {
            e->res->capped_instants++;
            break;
        }
        if (victims == 0 && !(e->admitted && bound > 0))
            break;
    }
}

/* ---- events ---- */

static bool handle_event(engine *e, const sim_ev *ev)
{
    sim_js *j = &e->js[ev->job];
    if (ev->epoch != j->epoch || j->st != JS_RUNNING)
        return false;
    account(e, j);
    if (ev->kind == EV_FINISH) {
        j->st = JS_DONE;
        j->finish = e->now;
        e->used_gpus -= j->tj->gpus;
        j->epoch++;
        remove_from_core(e, j);
        return true;
    }
    /* A LAS threshold crossed: a lower queue. Only a job waiting in a higher
     * queue can make use of that. */
    j->level++;
    char key[32];
    job_key(j, key, sizeof(key));
    sc_job *cj = sc_job_find(e->c, key);
    if (cj)
        sc_job_set_priority(e->c, cj, job_priority(e, j));
    push_demote(e, j);
    for (int l = 0; l < j->level; l++)
        if (e->pending_at_level[l])
            return true;
    return false;
}

static void arrive(engine *e, sim_js *j)
{
    if (j->st == JS_SKIPPED)
        return;
    if (e->fifo) {
        j->st = JS_WAITING;
        e->fifo[j->queue].arrived++;
        fifo_admit(e, j->queue);
    } else {
        submit(e, j);
    }
}

/* ---- setup ---- */

static int build_cluster(engine *e, ty_error *err)
{
    const sim_cluster_spec *cs = &e->o->cluster;
    e->c = sc_cluster_new();
    if (!e->c)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    ty_error perr;
    ty_error_init(&perr);
    const char *yaml = conf_yaml(e->o);
    e->conf = sc_conf_parse(yaml, strlen(yaml), &perr);
    if (!e->conf)
        return ty_seterr(err, TY_EINTERNAL, "scheduler configuration: %s", perr.text);
    for (size_t q = 0; q < (e->o->queues ? e->tr->nqueues : 1); q++) {
        sc_queue_spec qs = {.name = e->tr->queues[q], .weight = 1, .reclaimable = true,
                            .open = true};
        if (!sc_queue_upsert(e->c, &qs))
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    for (int i = 0; i < cs->nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%05d", i);
        sc_node_spec ns = {.name = name, .ready = true};
        ns.allocatable.v[SC_CPU] = (int64_t)cs->cpus_per_node * 1000;
        ns.allocatable.v[SC_MEM] = ((int64_t)cs->mem_gib_per_node << 30) * 1000;
        ns.allocatable.v[SC_PODS] = 110000;
        ns.allocatable.v[SC_GPU] = (int64_t)cs->gpus_per_node * 1000;
        if (!sc_node_upsert(e->c, &ns))
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    return 0;
}

static int build_jobs(engine *e, sim_result *res, ty_error *err)
{
    const sim_options *o = e->o;
    int per_pod = o->pod_gpus > 0 && o->pod_gpus < o->cluster.gpus_per_node
                      ? o->pod_gpus
                      : o->cluster.gpus_per_node;
    e->js = calloc(e->tr->njobs ? e->tr->njobs : 1, sizeof(*e->js));
    if (!e->js)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    for (size_t i = 0; i < e->tr->njobs; i++) {
        sim_js *j = &e->js[i];
        j->tj = &e->tr->jobs[i];
        j->idx = (int)i;
        j->queue = o->queues ? j->tj->queue : 0;
        j->pod_gpus = per_pod;
        j->npods = (j->tj->gpus + per_pod - 1) / per_pod;
        j->remaining = j->tj->duration;
        j->first_start = j->finish = -1;
        j->st = JS_FUTURE;
        if (j->tj->gpus > e->total_gpus) {
            j->st = JS_SKIPPED;
            res->skipped++;
        }
    }
    if (o->policy != SIM_FIFO)
        return 0;
    size_t nq = e->tr->nqueues;
    e->fifo = calloc(nq, sizeof(*e->fifo));
    if (!e->fifo)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    for (size_t i = 0; i < e->tr->njobs; i++)
        if (e->js[i].st != JS_SKIPPED)
            e->fifo[e->js[i].queue].n++;
    for (size_t q = 0; q < nq; q++) {
        e->fifo[q].jobs = malloc((e->fifo[q].n ? e->fifo[q].n : 1) * sizeof(int));
        if (!e->fifo[q].jobs)
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        e->fifo[q].n = 0;
    }
    for (size_t i = 0; i < e->tr->njobs; i++)
        if (e->js[i].st != JS_SKIPPED) {
            fifo_q *f = &e->fifo[e->js[i].queue];
            f->jobs[f->n++] = (int)i;
        }
    return 0;
}

static int check_options(const sim_options *o, ty_error *err)
{
    const sim_cluster_spec *cs = &o->cluster;
    if (cs->nodes < 1 || cs->nodes > SIM_MAX_NODES || cs->gpus_per_node < 1 ||
        cs->gpus_per_node > SIM_MAX_GPUS_PER_NODE || cs->cpus_per_node < 1 ||
        cs->mem_gib_per_node < 1)
        return ty_seterr(err, TY_EINVALID, "bad cluster shape");
    if (o->nlas_thresholds < 0 || o->nlas_thresholds > SIM_MAX_LAS_LEVELS - 1)
        return ty_seterr(err, TY_EINVALID, "at most %d LAS thresholds", SIM_MAX_LAS_LEVELS - 1);
    for (int i = 0; i < o->nlas_thresholds; i++)
        if (!(o->las_thresholds[i] > 0) || (i && o->las_thresholds[i] <= o->las_thresholds[i - 1]))
            return ty_seterr(err, TY_EINVALID, "LAS thresholds must be positive and ascending");
    return 0;
}

static void engine_free(engine *e)
{
    if (e->c)
        sc_cluster_free(e->c);
    if (e->conf)
        sc_conf_free(e->conf);
    if (e->fifo)
        for (size_t q = 0; q < e->tr->nqueues; q++)
            free(e->fifo[q].jobs);
    free(e->fifo);
    free(e->js);
    free(e->heap);
    free(e->bound);
    free(e->victims);
}

int sim_run(const sim_trace *tr, const sim_options *o, sim_result *res, ty_error *err)
{
    if (check_options(o, err) < 0)
        return -1;
    sim_result r = {0};
    engine e = {.tr = tr, .o = o, .res = &r};
    e.hooks = (sc_hooks){.ctx = &e, .bind = on_bind, .evict = on_evict,
                         .job_changed = on_job_changed, .no_reasons = true};
    e.total_gpus = (long)o->cluster.nodes * o->cluster.gpus_per_node;
    if (o->nlas_thresholds > 0) {
        e.nlevels = o->nlas_thresholds + 1;
        memcpy(e.thresholds, o->las_thresholds, (size_t)o->nlas_thresholds * sizeof(double));
    } else {
        e.nlevels = 2;
        e.thresholds[0] = SIM_LAS_DEFAULT_THRESHOLD;
    }
    if (build_cluster(&e, err) < 0 || build_jobs(&e, &r, err) < 0) {
        engine_free(&e);
        return -1;
    }

    size_t next = 0, n = tr->njobs;
    while (!e.oom) {
        double ta = next < n ? tr->jobs[next].submit : INFINITY;
        double te = e.nheap ? e.heap[0].t : INFINITY;
        if (isinf(ta) && isinf(te))
            break;
        e.now = ta < te ? ta : te;
        bool changed = false;
        /* Finishes first: the GPUs they free are there for this instant's arrivals. */
        while (e.nheap && e.heap[0].t == e.now) {
            sim_ev ev = ev_pop(&e);
            changed |= handle_event(&e, &ev);
        }
        while (next < n && tr->jobs[next].submit == e.now) {
            arrive(&e, &e.js[next++]);
            changed = true;
        }
        if (changed)
            schedule(&e);
    }
    if (e.oom) {
        engine_free(&e);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }

    sim_outcome *out = malloc((n ? n : 1) * sizeof(*out));
    if (!out) {
        engine_free(&e);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const sim_js *j = &e.js[i];
        if (j->st == JS_SKIPPED)
            continue;
        if (j->st != JS_DONE)
            r.unfinished++;
        out[m++] = (sim_outcome){.submit = j->tj->submit, .first_start = j->first_start,
                                 .finish = j->st == JS_DONE ? j->finish : -1,
                                 .gpu_seconds = j->gpu_seconds};
    }
    sim_metrics(out, m, (int)e.total_gpus, &r);
    free(out);
    engine_free(&e);
    *res = r;
    return 0;
}
