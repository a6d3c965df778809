/* overcommit.c - admits a pod group only while the minResources of every
 * admitted-but-not-running group fit in the cluster's idle resources times
 * the overcommit factor (argument overcommit-factor, default 1.2). Groups
 * without minResources are always admitted. */
#include "scheduler/core_int.h"

/* Whether q holds more than its deserved share (proportion's) of some
 * resource: the queues below theirs go first for it, and may reclaim it. */
static bool above_share(sc_session *s, const sc_queue *q)
{
    if (!s->shares)
        return false;
    for (int r = 0; r < SC_MAXRES; r++)
        if (r != SC_PODS && q->allocated.v[r] > q->deserved.v[r])
            return true;
    return false;
}

/* What admitted groups still expect, less what groups of queues above
 * their share of some resource expect: queues below their share go first
 * for it, and may reclaim it. Counted, a group admitted while the cluster
 * still had room kept every queue below its share from being admitted once
 * the cluster was full, and so from ever reclaiming that share (queues of
 * weight 1 and 3 stayed at 4:4 GPUs, a group of the first waiting admitted,
 * the second's waiting to be). */
static void held(sc_session *s, sc_res *out)
{
    sc_cluster *c = s->c;

    *out = s->inqueue_total;
    for (size_t i = 0; i < c->nqueues; i++)
        if (!sc_res_empty(&c->queues[i]->inqueue) && above_share(s, c->queues[i]))
            sc_res_sub(out, &c->queues[i]->inqueue);
}

static bool enqueueable(sc_session *s, const sc_plugin_conf *pc, const sc_job *j)
{
    double f = sc_arg_double(pc, "overcommit-factor", 1.2);
    sc_res h;

    if (sc_res_empty(&j->min_res))
        return true;
    held(s, &h);
    for (int r = 0; r < SC_MAXRES; r++) {
        double idle = (double)s->total.v[r] * f - (double)(s->total.v[r] - s->free_now.v[r]);
        if (j->min_res.v[r] && (double)(h.v[r] + j->min_res.v[r]) > idle)
            return false;
    }
    return true;
}

/* Volcano takes a factor below 1 for a mistake too (it warns and uses 1.2). */
static const sc_number_arg number_args[] = {{"overcommit-factor", 1}, {NULL, 0}};

const sc_plugin sc_plugin_overcommit = {
    .name = "overcommit", .number_args = number_args, .enqueueable = enqueueable};
