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

/* Cached for one action: an ordering must not move while jobs are sorted. */
static double share_of(const sc_session *s, const sc_job *cj)
{
    sc_job *j = (sc_job *)cj; /* the cache only */
    if (j->share_serial != s->c->action_serial) {
        j->share = dominant_share(s, j);
        j->share_serial = s->c->action_serial;
    }
    return j->share;
}

static int job_order(sc_session *s, const sc_job *a, const sc_job *b)
{
    double x = share_of(s, a), y = share_of(s, b);
    return x < y ? -1 : x > y ? 1 : 0;
}

const sc_plugin sc_plugin_drf = {.name = "drf", .job_order = job_order};
