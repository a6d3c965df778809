/* overcommit.c - admits a pod group only while the minResources of every
 * admitted-but-not-running group fit in the cluster's idle resources times
 * the overcommit factor (argument overcommit-factor, default 1.2). Groups
 * without minResources are always admitted. */
#include "scheduler/core_int.h"

static bool enqueueable(sc_session *s, const sc_plugin_conf *pc, const sc_job *j)
{
    double f = sc_arg_double(pc, "overcommit-factor", 1.2);

    if (sc_res_empty(&j->min_res))
        return true;
    for (int r = 0; r < SC_MAXRES; r++) {
        double idle = (double)s->total.v[r] * f - (double)(s->total.v[r] - s->free_now.v[r]);
        if (j->min_res.v[r] && (double)(s->inqueue_total.v[r] + j->min_res.v[r]) > idle)
            return false;
    }
    return true;
}

/* Volcano takes a factor below 1 for a mistake too (it warns and uses 1.2). */
static const sc_number_arg number_args[] = {{"overcommit-factor", 1}, {NULL, 0}};

const sc_plugin sc_plugin_overcommit = {
    .name = "overcommit", .number_args = number_args, .enqueueable = enqueueable};
