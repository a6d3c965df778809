/* drf.c - dominant resource fairness between jobs: the job with the smaller
 * dominant share (its largest allocated fraction of any cluster resource)
 * goes first. */
#include "scheduler/core_int.h"

static double dominant_share(const sc_session *s, const sc_job *j)
{
    double m = 0;
    for (int r = 0; r < SC_MAXRES; r++) {
        if (r == SC_PODS || s->total.v[r] <= 0)
            continue;
        double f = (double)j->allocated.v[r] / (double)s->total.v[r];
        if (f > m)
            m = f;
    }
    return m;
}

static int job_order(sc_session *s, const sc_job *a, const sc_job *b)
{
    double x = dominant_share(s, a), y = dominant_share(s, b);
    return x < y ? -1 : x > y ? 1 : 0;
}

const sc_plugin sc_plugin_drf = {.name = "drf", .job_order = job_order};
