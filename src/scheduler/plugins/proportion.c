/* proportion.c - queues share the cluster by weight.
 *
 * Each queue's deserved share is found by water-filling: the cluster is
 * divided by weight among the queues still asking for more; a queue whose
 * demand (or capability) is met keeps only that, and what it leaves is
 * divided again among the rest, until nothing is left or everyone is met.
 * guarantee is a floor. Child queues (spec.parent) share their parent's
 * deserved the same way.
 *
 * The queue with the smallest allocated/deserved share is served first; a
 * queue at or above its deserved share in every resource is overused and
 * gets nothing more in this cycle; capability is a hard cap on allocation and
 * on admission; reclaim may take back only what a reclaimable queue holds
 * above its deserved share. */
#include <string.h>

#include "scheduler/core_int.h"

static int64_t cap_of(const sc_queue *q, int r)
{
    return (q->cap_mask & (1u << r)) ? q->capability.v[r] : INT64_MAX;
}

static int64_t min3(int64_t a, int64_t b, int64_t c)
{
    int64_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Divides total among the children of parent (NULL = top level). */
static void water_fill(sc_session *s, const sc_queue *parent, const sc_res *total)
{
    sc_cluster *c = s->c;
    sc_res remaining = *total;

    for (size_t i = 0; i < c->nqueues; i++) {
        sc_queue *q = c->queues[i];
        if (q->parent != parent)
            continue;
        memset(&q->deserved, 0, sizeof(q->deserved));
        q->met = sc_res_empty(&q->demand);
    }
    for (int round = 0; round < 64; round++) {
        int64_t wsum = 0;
        bool moved = false;
        for (size_t i = 0; i < c->nqueues; i++)
            if (c->queues[i]->parent == parent && !c->queues[i]->met)
                wsum += c->queues[i]->weight;
        if (!wsum)
            break;
        for (size_t i = 0; i < c->nqueues; i++) {
            sc_queue *q = c->queues[i];
            bool met = true;
            if (q->parent != parent || q->met)
                continue;
            for (int r = 0; r < SC_MAXRES; r++) {
                int64_t add = remaining.v[r] > 0 ? remaining.v[r] * q->weight / wsum : 0;
                int64_t want = min3(q->deserved.v[r] + add, q->demand.v[r], cap_of(q, r));
                if (want < q->deserved.v[r])
                    want = q->deserved.v[r];
                if (want != q->deserved.v[r])
                    moved = true;
                q->deserved.v[r] = want;
                if (want < q->demand.v[r] && want < cap_of(q, r))
                    met = false;
            }
            q->met = met;
        }
        remaining = *total;
        for (size_t i = 0; i < c->nqueues; i++)
            if (c->queues[i]->parent == parent)
                sc_res_sub(&remaining, &c->queues[i]->deserved);
        if (!moved)
            break;
    }
    for (size_t i = 0; i < c->nqueues; i++) {
        sc_queue *q = c->queues[i];
        if (q->parent != parent)
            continue;
        for (int r = 0; r < SC_MAXRES; r++)
            if (q->deserved.v[r] < q->guarantee.v[r])
                q->deserved.v[r] = q->guarantee.v[r];
        water_fill(s, q, &q->deserved);
    }
}

static void open(sc_session *s, const sc_plugin_conf *pc)
{
    sc_cluster *c = s->c;

    (void)pc;
    for (size_t i = 0; i < c->nqueues; i++)
        c->queues[i]->demand = c->queues[i]->request;
    /* groups without pods ask for their minResources, up the hierarchy */
    for (size_t i = 0; i < c->nqueues; i++)
        for (sc_queue *q = c->queues[i]; q; q = q->parent)
            sc_res_add(&q->demand, &c->queues[i]->wait_demand);
    water_fill(s, NULL, &s->total);
}

static double share(const sc_queue *q)
{
    double m = 0;
    for (int r = 0; r < SC_MAXRES; r++) {
        if (r == SC_PODS)
            continue;
        if (q->deserved.v[r] > 0) {
            double f = (double)q->allocated.v[r] / (double)q->deserved.v[r];
            if (f > m)
                m = f;
        } else if (q->allocated.v[r] > 0) {
            m = m > 1 ? m : 1;
        }
    }
    return m;
}

static int queue_order(sc_session *s, const sc_queue *a, const sc_queue *b)
{
    double x = share(a), y = share(b);
    (void)s;
    return x < y ? -1 : x > y ? 1 : 0;
}

static bool overused(sc_session *s, const sc_queue *q)
{
    (void)s;
    /* at or above deserved in every resource, holding something */
    for (; q; q = q->parent) {
        bool all = true, holds = false;
        for (int r = 0; r < SC_MAXRES && all; r++) {
            if (r == SC_PODS)
                continue;
            if (q->deserved.v[r] > q->allocated.v[r])
                all = false;
            if (q->allocated.v[r] > 0)
                holds = true;
        }
        if (all && holds)
            return true;
    }
    return false;
}

static bool allocatable(sc_session *s, const sc_queue *q, const sc_task *t)
{
    (void)s;
    for (; q; q = q->parent)
        for (int r = 0; r < SC_MAXRES; r++)
            if (t->req.v[r] && q->allocated.v[r] + t->req.v[r] > cap_of(q, r))
                return false;
    return true;
}

static bool enqueueable(sc_session *s, const sc_plugin_conf *pc, const sc_job *j)
{
    (void)s;
    (void)pc;
    for (const sc_queue *q = j->queue; q; q = q->parent)
        for (int r = 0; r < SC_MAXRES; r++)
            if (j->min_res.v[r] &&
                q->allocated.v[r] + q->inqueue.v[r] + j->min_res.v[r] > cap_of(q, r))
                return false;
    return true;
}

static bool victim_ok(sc_session *s, const sc_job *preemptor, const sc_task *victim, bool reclaim)
{
    const sc_queue *q = victim->job->queue;

    (void)preemptor;
    if (!reclaim)
        return true;
    if (!q->reclaimable)
        return false;
    /* Only what the queue holds above its deserved share, in a resource the
     * reclaimer is short of (or any, when none is short in total): a queue
     * at its deserved GPUs keeps them even if it holds less CPU than it
     * deserves, and one above its deserved GPUs gives them back even if its
     * CPU is exactly what it deserves. The victims before this one are
     * already RELEASING and out of allocated, so this counts cumulatively. */
    for (int r = 0; r < SC_MAXRES; r++) {
        if (r == SC_PODS || !victim->req.v[r])
            continue;
        if (s->short_mask && !(s->short_mask & (1u << r)))
            continue;
        if (q->allocated.v[r] - victim->req.v[r] >= q->deserved.v[r])
            return true;
    }
    return false;
}

const sc_plugin sc_plugin_proportion = {
    .name = "proportion",
    .open = open,
    .queue_order = queue_order,
    .overused = overused,
    .allocatable = allocatable,
    .enqueueable = enqueueable,
    .victim_ok = victim_ok,
};
