/* session.c - one scheduling cycle's context: cluster totals, the plugins'
 * orderings and filters consulted tier by tier, node choice, and the
 * statement that makes a gang's placement all-or-nothing (the messages that
 * say why a job waits are explain.c's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

#define FOR_PLUGINS(s, pc)                                                                   \
    for (size_t ti_ = 0; ti_ < (s)->conf->ntiers; ti_++)                                     \
        for (const sc_plugin_conf *pc = (s)->conf->tiers[ti_].plugins;                       \
             pc < (s)->conf->tiers[ti_].plugins + (s)->conf->tiers[ti_].n; pc++)

/* ---- plugin arguments ---- */

const char *sc_arg_get(const sc_plugin_conf *pc, const char *key)
{
    for (size_t i = 0; i < pc->nargs; i++)
        if (strcmp(pc->args[i].key, key) == 0)
            return pc->args[i].value;
    return NULL;
}

double sc_arg_double(const sc_plugin_conf *pc, const char *key, double dflt)
{
    const char *v = sc_arg_get(pc, key);
    char *end;
    double d;

    if (!v)
        return dflt;
    d = strtod(v, &end);
    return end != v ? d : dflt;
}

/* ---- open and close ---- */

void sc_session_open(sc_session *s, sc_cluster *c, const sc_conf *conf, const sc_hooks *h,
                     sc_cycle_stats *st)
{
    memset(s, 0, sizeof(*s));
    s->c = c;
    s->conf = conf;
    s->hooks = h;
    s->stats = st;
    /* the schedulable nodes' sums, kept by the model (sc_node_sums_in):
     * from here on the session's statements adjust its own copies */
    s->total = c->sum_alloc;
    s->free_now = c->sum_free_now;
    s->free_future = c->sum_free_future;
    /* queue parents resolve by name each cycle: queues may arrive in any order */
    for (size_t i = 0; i < c->nqueues; i++) {
        sc_queue *q = c->queues[i];
        sc_queue *p = q->parent_name ? sc_queue_find(c, q->parent_name) : NULL;
        /* A parent whose own chain comes back to q would make every walk up
         * the chain endless (two queues naming each other froze the cycle):
         * q stays at the root until that changes. The API refuses such a
         * parent; writes racing each other could still make one. The chain
         * above p is acyclic, as every parent link set here keeps it. */
        for (sc_queue *a = p; a; a = a->parent)
            if (a == q) {
                p = NULL;
                break;
            }
        if (p != q->parent) {
            /* re-home the parent chain's sums */
            for (sc_queue *a = q->parent; a; a = a->parent) {
                sc_res_sub(&a->allocated, &q->allocated);
                sc_res_sub(&a->request, &q->request);
            }
            q->parent = p == q ? NULL : p;
            for (sc_queue *a = q->parent; a; a = a->parent) {
                sc_res_add(&a->allocated, &q->allocated);
                sc_res_add(&a->request, &q->request);
            }
        }
    }
    /* what admitted groups still expect to get (enqueue's headroom), as it
     * stands now: what the session admits is added as it goes */
    for (size_t i = 0; i < c->nqueues; i++)
        c->queues[i]->inqueue = c->queues[i]->admitted_short;
    s->inqueue_total = c->admitted_short;
    FOR_PLUGINS(s, pc) {
        if (strcmp(pc->plugin->name, "gang") == 0)
            s->gang = true;
        if (strcmp(pc->plugin->name, "proportion") == 0)
            s->shares = true;
        if (pc->job_order && pc->plugin->job_order && s->njob_orders < 16)
            s->job_orders[s->njob_orders++] = pc;
        if (pc->task_order && pc->plugin->task_order && s->ntask_orders < 16)
            s->task_orders[s->ntask_orders++] = pc;
        if (pc->plugin->open)
            pc->plugin->open(s, pc);
    }
}

void sc_session_close(sc_session *s)
{
    sc_cluster *c = s->c;

    while (c->changed_head) {
        sc_job *j = c->changed_head;
        c->changed_head = j->cnext;
        j->in_changed = false;
        j->cnext = NULL;
        if (j->reported && sc_job_told(j))
            continue;
        j->reported = true;
        j->told_phase = j->phase;
        memcpy(j->told_msg, j->msg, sizeof(j->msg));
        memcpy(j->told_counts, j->n_counts, sizeof(j->n_counts));
        j->told_task_msg_gen = j->task_msg_gen;
        if (s->hooks && s->hooks->job_changed)
            s->hooks->job_changed(s->hooks->ctx, j);
    }
}

/* ---- orderings ---- */

int sc_job_cmp(sc_session *s, const sc_job *a, const sc_job *b)
{
    for (size_t i = 0; i < s->njob_orders; i++) {
        int r = s->job_orders[i]->plugin->job_order(s, a, b);
        if (r)
            return r;
    }
    if (a->created != b->created)
        return a->created < b->created ? -1 : 1;
    return strcmp(a->key, b->key);
}

int sc_queue_cmp(sc_session *s, const sc_queue *a, const sc_queue *b)
{
    FOR_PLUGINS(s, pc) {
        if (pc->queue_order && pc->plugin->queue_order) {
            int r = pc->plugin->queue_order(s, a, b);
            if (r)
                return r;
        }
    }
    return strcmp(a->name, b->name);
}

int sc_task_cmp(sc_session *s, const sc_task *a, const sc_task *b)
{
    for (size_t i = 0; i < s->ntask_orders; i++) {
        int r = s->task_orders[i]->plugin->task_order(s, a, b);
        if (r)
            return r;
    }
    return strcmp(a->key, b->key);
}

bool sc_queue_overused(sc_session *s, const sc_queue *q)
{
    FOR_PLUGINS(s, pc) {
        if (pc->overused && pc->plugin->overused && pc->plugin->overused(s, q))
            return true;
    }
    return false;
}

bool sc_job_enqueueable(sc_session *s, const sc_job *j)
{
    FOR_PLUGINS(s, pc) {
        if (pc->enqueueable && pc->plugin->enqueueable && !pc->plugin->enqueueable(s, pc, j))
            return false;
    }
    return true;
}

bool sc_task_allocatable(sc_session *s, const sc_task *t)
{
    FOR_PLUGINS(s, pc) {
        if (pc->plugin->allocatable && !pc->plugin->allocatable(s, t->job->queue, t))
            return false;
    }
    return true;
}

bool sc_victim_ok(sc_session *s, const sc_job *preemptor, const sc_task *victim, bool reclaim)
{
    if (!victim->job->preemptable)
        return false;
    FOR_PLUGINS(s, pc) {
        bool on = reclaim ? pc->reclaimable : pc->preemptable;
        if (on && pc->plugin->victim_ok && !pc->plugin->victim_ok(s, preemptor, victim, reclaim))
            return false;
    }
    return true;
}

/* ---- fitting a task on a node ---- */

bool sc_fits(sc_session *s, const sc_task *t, const sc_node *n, sc_fit_mode mode, char *why,
             size_t len)
{
    if (!n->ready) {
        if (why)
            snprintf(why, len, "node(s) were not ready");
        return false;
    }
    for (int r = 0; r < SC_MAXRES; r++) {
        int64_t avail, need = t->req.v[r];
        if (!need)
            continue;
        avail = n->alloc.v[r] - n->used.v[r] - n->pipelined.v[r];
        if (t->st == SC_TASK_PIPELINED && t->nominated == n)
            avail += need;
        if (mode == SC_FIT_FUTURE)
            avail += n->releasing.v[r];
        if (need > avail) {
            if (why && r == SC_PODS)
                snprintf(why, len, "Too many pods");
            else if (why)
                snprintf(why, len, "Insufficient %s", sc_res_name(s->c, r));
            return false;
        }
    }
    FOR_PLUGINS(s, pc) {
        if (pc->predicate && pc->plugin->predicate && !pc->plugin->predicate(s, t, n, why, len))
            return false;
    }
    return true;
}

static double score(sc_session *s, const sc_task *t, const sc_node *n)
{
    double sum = 0;
    FOR_PLUGINS(s, pc) {
        if (pc->node_order && pc->plugin->node_score)
            sum += pc->plugin->node_score(s, pc, t, n);
    }
    return sum;
}

static bool constrained(const sc_task *t)
{
    return t->nselector || t->naff;
}

/* GPUs the job still has to place, this task included. */
static int64_t gang_gpu_need(const sc_job *j)
{
    int64_t m = 0;
    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->st == SC_TASK_PENDING || j->tasks[i]->st == SC_TASK_PIPELINED)
            m += j->tasks[i]->req.v[SC_GPU];
    return (m + 999) / 1000;
}

typedef struct pick {
    sc_node *best;
    double best_score;
    size_t found, limit;
} pick;

static bool consider(sc_session *s, pick *p, const sc_task *t, sc_node *n, sc_fit_mode mode)
{
    double sc;

    /* hot: the reason is not wanted here, so it is not formatted */
    if (!sc_fits(s, t, n, mode, NULL, 0))
        return false;
    sc = score(s, t, n);
    if (!p->best || sc > p->best_score) {
        p->best = n;
        p->best_score = sc;
    }
    return ++p->found >= p->limit;
}

sc_node *sc_pick_node(sc_session *s, const sc_task *t, sc_fit_mode mode)
{
    sc_cluster *c = s->c;
    pick p = {0};
    int64_t gpus = (t->req.v[SC_GPU] + 999) / 1000;
    sc_node *n;

    if (!c->nnodes)
        return NULL;
    /* A pipelined task waits for its nominated node. */
    if (t->st == SC_TASK_PIPELINED && t->nominated) {
        return sc_fits(s, t, t->nominated, mode, NULL, 0) ? t->nominated : NULL;
    }
    /* The gang's previous task's node first: gangs land on few nodes. */
    if ((n = sc_job_last_node(s->c, t->job)) && sc_fits(s, t, n, mode, NULL, 0))
        return n;
    if (mode == SC_FIT_NOW && gpus > 0 && !constrained(t)) {
        /* Free-GPU buckets: nodes that can hold the rest of the gang first,
         * the tightest of them first, then the largest that hold less. */
        int64_t need = gang_gpu_need(t->job);
        int start = (int)(need < gpus ? gpus : need);
        if (start > SC_BUCKETS - 1)
            start = SC_BUCKETS - 1;
        p.limit = 8;
        for (int b = start; b < SC_BUCKETS && p.found < p.limit; b++)
            for (sc_node *n = c->buckets[b]; n; n = n->bnext)
                if (consider(s, &p, t, n, mode))
                    break;
        if (!p.found)
            for (int b = start - 1; b >= gpus && p.found < p.limit; b--)
                for (sc_node *n = c->buckets[b]; n; n = n->bnext)
                    if (consider(s, &p, t, n, mode))
                        break;
        return p.best;
    }
    /* Everything else: a round-robin scan that stops after enough feasible
     * nodes, as kube-scheduler samples large clusters. */
    p.limit = c->nnodes <= 100 ? c->nnodes : (c->nnodes / 20 < 100 ? 100 : c->nnodes / 20);
    if (mode == SC_FIT_FUTURE)
        p.limit = c->nnodes;
    for (size_t k = 0; k < c->nnodes; k++) {
        sc_node *n = c->nodes[(c->scan_start + k) % c->nnodes];
        if (n->unschedulable)
            continue;
        if (consider(s, &p, t, n, mode))
            break;
    }
    c->scan_start = (c->scan_start + 1) % c->nnodes;
    return p.best;
}

/* ---- lists ---- */

static sc_session *sort_session;

static int job_qsort(const void *a, const void *b)
{
    const sc_job *ja = *(sc_job *const *)a, *jb = *(sc_job *const *)b;
    if (ja->queue != jb->queue)
        return ja->queue->idx < jb->queue->idx ? -1 : 1;
    return sc_job_cmp(sort_session, ja, jb);
}

static int task_qsort(const void *a, const void *b)
{
    return sc_task_cmp(sort_session, *(sc_task *const *)a, *(sc_task *const *)b);
}

sc_task **sc_job_pending_tasks(sc_session *s, sc_job *j, bool with_pipelined, size_t *n)
{
    sc_task **out = malloc((j->ntasks + 1) * sizeof(*out));
    size_t k = 0;

    if (!out) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < j->ntasks; i++) {
        sc_task *t = j->tasks[i];
        if (t->st == SC_TASK_PENDING || (with_pipelined && t->st == SC_TASK_PIPELINED))
            out[k++] = t;
    }
    sort_session = s;
    qsort(out, k, sizeof(*out), task_qsort);
    *n = k;
    return out;
}

/* ---- job-order heaps, one per queue ---- */

static void sift_down(sc_session *s, sc_job **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && sc_job_cmp(s, h[l], h[m]) < 0)
            m = l;
        if (l + 1 < n && sc_job_cmp(s, h[l + 1], h[m]) < 0)
            m = l + 1;
        if (m == i)
            return;
        sc_job *x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

size_t sc_queue_heaps(sc_session *s, sc_job **all, size_t n, const size_t *count, sc_qheap *qs)
{
    sc_cluster *c = s->c;
    sc_job **tmp = malloc((n + 1) * sizeof(*tmp));
    size_t off = 0, nq = 0;

    if (!tmp)
        return (size_t)-1;
    for (size_t i = 0; i < c->nqueues; i++) {
        qs[i].q = c->queues[i];
        qs[i].h = all + off;
        qs[i].n = 0;
        off += count[i];
    }
    memcpy(tmp, all, n * sizeof(*tmp));
    for (size_t i = 0; i < n; i++) {
        sc_qheap *qh = &qs[tmp[i]->queue->idx];
        qh->h[qh->n++] = tmp[i];
    }
    free(tmp);
    for (size_t i = 0; i < c->nqueues; i++) {
        for (size_t k = qs[i].n / 2; k-- > 0;)
            sift_down(s, qs[i].h, qs[i].n, k);
        nq += qs[i].n > 0;
    }
    return nq;
}

sc_job *sc_qheap_pop(sc_session *s, sc_qheap *qh)
{
    sc_job *top = qh->h[0];
    qh->h[0] = qh->h[--qh->n];
    sift_down(s, qh->h, qh->n, 0);
    return top;
}

void sc_qheap_push(sc_session *s, sc_qheap *qh, sc_job *j)
{
    size_t i = qh->n++;

    j->share_serial = 0; /* what it holds changed: drf finds its share afresh */
    qh->h[i] = j;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (sc_job_cmp(s, qh->h[i], qh->h[up]) >= 0)
            break;
        sc_job *x = qh->h[i];
        qh->h[i] = qh->h[up];
        qh->h[up] = x;
        i = up;
    }
}

sc_job **sc_waiting_jobs_for(sc_session *s, bool admitted, int skip_pass, size_t *n)
{
    sc_cluster *c = s->c;
    int l = admitted ? SC_WAIT_ADMITTED : SC_WAIT_PENDING;
    sc_job **out = malloc((c->nwaiting[l] + 1) * sizeof(*out));
    size_t k = 0;

    if (!out) {
        *n = 0;
        return NULL;
    }
    for (sc_job *j = c->waiting[l]; j; j = j->wnext) {
        /* admitted groups whose pods do not exist yet have nothing to place */
        if (admitted && j->n_pending == 0 && j->n_pipelined == 0)
            continue;
        /* jobs this pass would skip anyway are not worth sorting */
        if (skip_pass >= 0 && sc_job_skippable(c, j, skip_pass))
            continue;
        out[k++] = j;
    }
    sort_session = s;
    qsort(out, k, sizeof(*out), job_qsort);
    *n = k;
    return out;
}

const sc_res *sc_job_need(sc_session *s, sc_job *j)
{
    int want;
    sc_res least;
    bool any = false;

    if (j->need_valid && j->need_gang == s->gang)
        return &j->need;
    memset(&j->need, 0, sizeof(j->need));
    j->need_valid = true;
    j->need_gang = s->gang;
    want = (s->gang ? j->min_member : 1) - j->n_ready - j->n_pipelined;
    if (j->n_pending == 0)
        return &j->need;
    /* a placed gang's waiting members go one by one: one is progress */
    if (want <= 0)
        want = 1;
    for (size_t i = 0; i < j->ntasks; i++) {
        const sc_task *t = j->tasks[i];
        if (t->st != SC_TASK_PENDING)
            continue;
        for (int r = 0; r < SC_MAXRES; r++)
            if (!any || t->req.v[r] < least.v[r])
                least.v[r] = t->req.v[r];
        any = true;
    }
    for (int r = 0; r < SC_MAXRES; r++)
        j->need.v[r] = least.v[r] * want;
    return &j->need;
}

bool sc_job_skippable(const sc_cluster *c, const sc_job *j, int pass)
{
    return j->fail_at[pass] && j->fail_epoch[pass] == c->release_epoch &&
           j->change_epoch <= j->fail_at[pass];
}

void sc_job_mark_failed(sc_cluster *c, sc_job *j, int pass)
{
    j->fail_epoch[pass] = c->release_epoch;
    j->fail_at[pass] = c->epoch;
}

void sc_job_admit(sc_session *s, sc_job *j)
{
    j->inqueue = true;
    j->msg[0] = 0;
    sc_res_add(&j->queue->inqueue, &j->min_res);
    sc_res_add(&s->inqueue_total, &j->min_res);
    if (s->stats)
        s->stats->admitted++;
    /* re-file it: admitted jobs without pods leave the waiting list */
    sc_task_move_job_refresh(s->c, j);
}

/* ---- the statement ---- */

void sc_stmt_init(sc_stmt *st, sc_session *s)
{
    memset(st, 0, sizeof(*st));
    st->s = s;
    st->release0 = s->c->release_epoch;
}

static void push(sc_stmt *st, int kind, sc_task *t, const char *reason)
{
    if (st->n == st->cap) {
        size_t nc = st->cap ? st->cap * 2 : 16;
        sc_stmt_op *p = realloc(st->ops, nc * sizeof(*p));
        if (!p)
            abort(); /* an undo log that cannot grow cannot keep its promise */
        st->ops = p;
        st->cap = nc;
    }
    st->ops[st->n++] = (sc_stmt_op){.kind = kind, .t = t, .prev_st = t->st, .prev_node = t->node,
                               .prev_nom = t->nominated,
                               .prev_last = sc_job_last_node(st->s->c, t->job),
                               .reason = reason};
}

static void adjust_free(sc_session *s, const sc_res *r, int sign, bool future_too)
{
    for (int i = 0; i < SC_MAXRES; i++) {
        s->free_now.v[i] += sign * r->v[i];
        if (future_too)
            s->free_future.v[i] += sign * r->v[i];
    }
}

void sc_stmt_allocate(sc_stmt *st, sc_task *t, sc_node *n)
{
    bool was_pipelined = t->st == SC_TASK_PIPELINED;
    push(st, SC_OP_ALLOCATE, t, NULL);
    sc_task_move(st->s->c, t, SC_TASK_ALLOCATED, n, NULL);
    sc_job_set_last_node(st->s->c, t->job, n);
    if (!was_pipelined)
        adjust_free(st->s, &t->req, -1, true);
}

void sc_stmt_pipeline(sc_stmt *st, sc_task *t, sc_node *n)
{
    push(st, SC_OP_PIPELINE, t, NULL);
    sc_task_move(st->s->c, t, SC_TASK_PIPELINED, NULL, n);
    sc_job_set_last_node(st->s->c, t->job, n);
    adjust_free(st->s, &t->req, -1, true);
}

void sc_stmt_evict(sc_stmt *st, sc_task *t, const char *reason)
{
    push(st, SC_OP_EVICT, t, reason);
    sc_task_move(st->s->c, t, SC_TASK_RELEASING, t->node, NULL);
}

void sc_stmt_discard(sc_stmt *st)
{
    sc_cluster *c = st->s->c;

    for (size_t i = st->n; i-- > 0;) {
        sc_stmt_op *op = &st->ops[i];
        if (op->kind != SC_OP_EVICT && op->prev_st != SC_TASK_PIPELINED)
            adjust_free(st->s, &op->t->req, +1, true);
        sc_task_move(c, op->t, op->prev_st, op->prev_node, op->prev_nom);
        /* Where a discarded try went is no hint for the gang's next one. */
        sc_job_set_last_node(c, op->t->job, op->prev_last);
    }
    /* Undoing our own tentative placements frees nothing new. */
    c->release_epoch = st->release0;
    free(st->ops);
    st->ops = NULL;
    st->n = st->cap = 0;
}

void sc_stmt_rollback(sc_stmt *st, size_t mark)
{
    sc_cluster *c = st->s->c;
    uint64_t release = c->release_epoch;

    for (; st->n > mark; st->n--) {
        sc_stmt_op *op = &st->ops[st->n - 1];
        if (op->kind != SC_OP_EVICT && op->prev_st != SC_TASK_PIPELINED)
            adjust_free(st->s, &op->t->req, +1, true);
        sc_task_move(c, op->t, op->prev_st, op->prev_node, op->prev_nom);
        sc_job_set_last_node(c, op->t->job, op->prev_last);
    }
    /* the operations undone freed nothing; undoing them frees nothing new */
    c->release_epoch = release;
}

void sc_stmt_commit(sc_stmt *st, const sc_job *by)
{
    sc_session *s = st->s;

    for (size_t i = 0; i < st->n; i++) {
        sc_stmt_op *op = &st->ops[i];
        switch (op->kind) {
        case SC_OP_ALLOCATE:
            if (op->t->st != SC_TASK_ALLOCATED)
                break;
            sc_task_move(s->c, op->t, SC_TASK_BINDING, op->t->node, NULL);
            op->t->msg[0] = 0;
            if (s->stats)
                s->stats->bound++;
            if (s->hooks && s->hooks->bind)
                s->hooks->bind(s->hooks->ctx, op->t, op->t->node);
            break;
        case SC_OP_PIPELINE:
            /* a reserved gang must be tried again when its room is free,
             * even if nothing else changed since it last failed */
            sc_job_touch(s->c, op->t->job);
            if (s->stats)
                s->stats->pipelined++;
            break;
        case SC_OP_EVICT:
            if (s->stats)
                s->stats->evicted++;
            if (s->hooks && s->hooks->evict)
                s->hooks->evict(s->hooks->ctx, op->t, op->reason, by);
            break;
        }
    }
    free(st->ops);
    st->ops = NULL;
    st->n = st->cap = 0;
}

/* ---- the cycle ---- */

/* Can n hold every task waiting on it once its releasing tasks are gone? */
static bool pipelines_fit(const sc_node *n)
{
    for (int r = 0; r < SC_MAXRES; r++)
        if (n->pipelined.v[r] > n->alloc.v[r] - n->used.v[r] + n->releasing.v[r])
            return false;
    return true;
}

/* A pipelined task waits on its nominated node for what is released
 * there. When the node cannot hold all those waiting on it even after its
 * releasing tasks are gone (something else took the room: a pod another
 * scheduler bound there, a node that shrank), each would wait for ever for
 * the others' share: tasks go back to pending, one at a time, until the
 * rest fit, and are placed afresh. */
static void drop_hopeless_pipelines(sc_cluster *c)
{
    for (size_t i = 0; i < c->nnodes; i++) {
        sc_node *n = c->nodes[i];
        sc_task *t;
        while ((t = n->tasks[SC_NOMINATED]) && !pipelines_fit(n)) {
            sc_task_move(c, t, SC_TASK_PENDING, NULL, NULL);
            sc_job_touch(c, t->job);
            c->release_epoch++; /* its job, and those behind it, are tried again */
        }
    }
}

void sc_cycle(sc_cluster *c, const sc_conf *conf, const sc_hooks *hooks, sc_cycle_stats *stats)
{
    sc_session s;
    sc_cycle_stats local = {0};

    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    drop_hopeless_pipelines(c);
    sc_session_open(&s, c, conf, hooks, stats);
    for (size_t i = 0; i < conf->nactions; i++) {
        c->action_serial++;
        switch (conf->actions[i]) {
        case SC_ACT_ENQUEUE:
            sc_action_enqueue(&s);
            break;
        case SC_ACT_ALLOCATE:
            sc_action_allocate(&s, false);
            break;
        case SC_ACT_BACKFILL:
            sc_action_allocate(&s, true);
            break;
        case SC_ACT_PREEMPT:
            sc_action_preempt(&s, false);
            break;
        case SC_ACT_RECLAIM:
            sc_action_preempt(&s, true);
            break;
        }
    }
    sc_session_close(&s);
}
