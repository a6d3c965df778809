/* preempt.c - preempt (within a queue, by priority) and reclaim (across
 * queues, from queues above their deserved share).
 *
 * For a gang that cannot be placed, first see whether what is already being
 * released will hold it; if so it is pipelined onto those nodes and no one
 * else is evicted. Otherwise victims are chosen a whole gang at a time, or
 * only the members a victim can lose while keeping its minMember, lowest
 * priority and youngest first; evictions stop as soon as the preemptor fits
 * on what will be free. All of it is one statement: if the preemptor still
 * does not fit, nothing is evicted. The preemptor's pods are pipelined (they
 * hold a reservation on their nodes) and bound only once the victims are
 * gone. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

/* Pipelines j's unplaced tasks onto future-free room; true when the gang is
 * whole counting the pipelined ones. */
static bool pipeline_gang(sc_session *s, sc_stmt *st, sc_job *j)
{
    size_t n;
    sc_task **tasks = sc_job_pending_tasks(s, j, false, &n);

    for (size_t i = 0; tasks && i < n; i++) {
        sc_task *t = tasks[i];
        if (!sc_task_allocatable(s, t))
            continue;
        sc_node *node = sc_pick_node(s, t, SC_FIT_FUTURE);
        if (node)
            sc_stmt_pipeline(st, t, node);
    }
    free(tasks);
    return sc_job_gang_ready(j, true, s->gang);
}

static sc_session *vsort_session;

/* lowest priority first; then the youngest */
static int victim_job_qsort(const void *a, const void *b)
{
    const sc_job *x = *(sc_job *const *)a, *y = *(sc_job *const *)b;
    int r = -sc_job_cmp(vsort_session, x, y);
    return r;
}

static bool evictable(const sc_task *t)
{
    return t->st == SC_TASK_RUNNING || t->st == SC_TASK_BOUND || t->st == SC_TASK_BINDING;
}

/* Every job that could lose members, in victim order; sorted once per
 * action (the order is the session's, and victims lose members as the
 * action goes on, which victim_jobs checks again). */
static sc_job **all_victims(sc_session *s, size_t *n)
{
    sc_cluster *c = s->c;
    sc_job **out = malloc((c->njobs + 1) * sizeof(*out));
    size_t k = 0;

    if (!out) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < c->njobs; i++) {
        sc_job *v = c->jobs[i];
        if (v->preemptable && v->n_ready > 0)
            out[k++] = v;
    }
    vsort_session = s;
    qsort(out, k, sizeof(*out), victim_job_qsort);
    *n = k;
    return out;
}

/* Candidate victim jobs for j: same queue (preempt) or other queues
 * (reclaim), still holding evictable tasks. */
static sc_job **victim_jobs(sc_job *const *all, size_t nall, const sc_job *j, bool reclaim,
                            size_t *n)
{
    sc_job **out = malloc((nall + 1) * sizeof(*out));
    size_t k = 0;

    if (!out) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < nall; i++) {
        sc_job *v = all[i];
        if (v == j || v->n_ready == 0)
            continue;
        if (reclaim ? v->queue == j->queue : v->queue != j->queue)
            continue;
        out[k++] = v;
    }
    *n = k;
    return out;
}

static bool try_fit(sc_session *s, sc_stmt *pipe, sc_job *j)
{
    if (pipeline_gang(s, pipe, j))
        return true;
    sc_stmt_discard(pipe);
    sc_stmt_init(pipe, s);
    return false;
}

/* Does evicting t give back something the preemptor is short of? */
static bool useful(const sc_session *s, const sc_task *t)
{
    if (!s->short_mask)
        return true;
    for (int r = 0; r < SC_MAXRES; r++)
        if ((s->short_mask & (1u << r)) && t->req.v[r] > 0)
            return true;
    return false;
}

static unsigned short_mask(const sc_session *s, const sc_job *j)
{
    sc_res need = {0};
    unsigned m = 0;

    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->st == SC_TASK_PENDING)
            sc_res_add(&need, &j->tasks[i]->req);
    for (int r = 0; r < SC_MAXRES; r++)
        if (need.v[r] > 0 && need.v[r] > s->free_future.v[r])
            m |= 1u << r;
    return m;
}

/* Evicts vj whole, member by member (each member is vetted with the ones
 * before it already gone: queue shares move as they go); true when all of it
 * could go and some of it helps. Otherwise nothing of it is evicted. */
static bool evict_gang(sc_session *s, sc_stmt *ev, const sc_job *j, sc_job *vj, bool reclaim,
                       const char *reason)
{
    size_t mark = ev->n;
    bool helps = false;

    for (size_t k = 0; k < vj->ntasks; k++) {
        sc_task *t = vj->tasks[k];
        if (!evictable(t))
            continue;
        if (!sc_victim_ok(s, j, t, reclaim)) {
            sc_stmt_rollback(ev, mark);
            return false;
        }
        helps |= useful(s, t);
        sc_stmt_evict(ev, t, reason);
    }
    if (!helps)
        sc_stmt_rollback(ev, mark);
    return helps;
}

/* Evicts members of vj one at a time (at most spare of them, -1 = any
 * number) until j fits; true when it does. */
static bool evict_members(sc_session *s, sc_stmt *ev, sc_stmt *pipe, sc_job *j, sc_job *vj,
                          int spare, bool reclaim, const char *reason)
{
    for (size_t k = 0; k < vj->ntasks && spare != 0; k++) {
        sc_task *t = vj->tasks[k];
        if (!evictable(t) || !useful(s, t) || !sc_victim_ok(s, j, t, reclaim))
            continue;
        sc_stmt_evict(ev, t, reason);
        if (spare > 0)
            spare--;
        if (try_fit(s, pipe, j))
            return true;
    }
    return false;
}

static bool preempt_for(sc_session *s, sc_job *j, bool reclaim, sc_job *const *all, size_t nall)
{
    const char *reason = reclaim ? "Reclaimed" : "Preempted";
    sc_stmt ev, pipe;
    size_t nv;
    sc_job **victims;
    bool ok = false;

    sc_stmt_init(&pipe, s);
    if (pipeline_gang(s, &pipe, j)) {
        sc_stmt_commit(&pipe, j);
        return true;
    }
    sc_stmt_discard(&pipe);
    victims = victim_jobs(all, nall, j, reclaim, &nv);
    if (!victims || !nv) {
        free(victims);
        return false;
    }
    s->preemptor = j;
    s->short_mask = short_mask(s, j);
    sc_stmt_init(&ev, s);
    sc_stmt_init(&pipe, s);
    /* Pass 1: members beyond each victim's minMember. Pass 2: whole gangs
     * (without the gang plugin: any member). A runtime that places gangs
     * itself (admit-only) frees nothing until a whole gang is gone. */
    bool whole = s->conf->whole_gangs;
    for (int pass = s->gang && !whole ? 1 : 2; pass <= 2 && !ok; pass++) {
        for (size_t v = 0; v < nv && !ok; v++) {
            sc_job *vj = victims[v];
            if (pass == 1) {
                int spare = vj->n_ready - (vj->min_member > 0 ? vj->min_member : 1);
                if (spare > 0)
                    ok = evict_members(s, &ev, &pipe, j, vj, spare, reclaim, reason);
            } else if (!s->gang && !whole) {
                ok = evict_members(s, &ev, &pipe, j, vj, -1, reclaim, reason);
            } else if (evict_gang(s, &ev, j, vj, reclaim, reason)) {
                ok = try_fit(s, &pipe, j);
            }
        }
    }
    s->preemptor = NULL;
    s->short_mask = 0;
    if (ok) {
        sc_stmt_commit(&ev, j);
        sc_stmt_commit(&pipe, j);
    } else {
        sc_stmt_discard(&pipe);
        sc_stmt_discard(&ev);
    }
    free(victims);
    return ok;
}

/* Reclaim only for a gang its queue can hold within its deserved share:
 * taking back more would let the other queue take it back in turn, and the
 * two would trade the same GPUs for ever. */
static bool within_deserved(sc_session *s, sc_job *j)
{
    const sc_res *need = sc_job_need(s, j);
    const sc_queue *q = j->queue;

    for (int r = 0; r < SC_MAXRES; r++) {
        if (r == SC_PODS || !need->v[r])
            continue;
        if (q->allocated.v[r] + need->v[r] > q->deserved.v[r])
            return false;
    }
    return true;
}

void sc_action_preempt(sc_session *s, bool reclaim)
{
    size_t n, nall = 0;
    sc_job **jobs = sc_waiting_jobs_for(s, true, reclaim ? SC_PASS_RECLAIM : SC_PASS_PREEMPT, &n);
    sc_job **all = n ? all_victims(s, &nall) : NULL;

    for (size_t i = 0; jobs && i < n; i++) {
        sc_job *j = jobs[i];
        if (!j->waiting || j->n_pending == 0 || sc_job_gang_ready(j, true, s->gang))
            continue;
        if (sc_job_skippable(s->c, j, reclaim ? SC_PASS_RECLAIM : SC_PASS_PREEMPT))
            continue;
        if (reclaim && (!j->queue->defined || sc_queue_overused(s, j->queue) ||
                        !within_deserved(s, j)))
            continue;
        if (!preempt_for(s, j, reclaim, all, nall))
            sc_job_mark_failed(s->c, j, reclaim ? SC_PASS_RECLAIM : SC_PASS_PREEMPT);
    }
    free(all);
    free(jobs);
}
