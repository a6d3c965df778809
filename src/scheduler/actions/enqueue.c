/* enqueue.c - admits pod groups: a job leaves Pending (and its controller
 * creates its pods) only when its queue is open and the enqueue plugins
 * (proportion's capability, overcommit's cluster headroom) say it has room.
 *
 * Queues take turns by how much of their deserved share they already hold
 * or have been promised (allocated + admitted-but-not-running): with a
 * limited overcommit budget, the first queue in the list must not take all
 * admissions, or the other queues' jobs never get pods to be scheduled and
 * fair share is never reached. Within a queue, jobs are admitted in job
 * order; the first one that does not fit stops its queue for this cycle,
 * but for two kinds of job:
 * - one that the cycle's preempt or reclaim can make room for (lower
 *   priority in its queue, or other queues above their share, hold enough):
 *   admitted past the headroom, or on a full cluster a high-priority job
 *   was never admitted, had no pods, and preempted nothing;
 * - one behind the stopped job that fits in what is idle now, after what is
 *   already promised (backfill's gap), or a small job behind a waiting big
 *   gang was never admitted and backfill had nothing to place. Only such
 *   jobs, so that a stream of small ones cannot take the headroom the big
 *   gang waits for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

static double promised_share(const sc_queue *q)
{
    double m = 0;
    for (int r = 0; r < SC_MAXRES; r++) {
        double have = (double)(q->allocated.v[r] + q->inqueue.v[r]);
        if (r == SC_PODS || q->deserved.v[r] <= 0)
            continue;
        if (have / (double)q->deserved.v[r] > m)
            m = have / (double)q->deserved.v[r];
    }
    return m;
}

static bool has_action(const sc_session *s, sc_action a)
{
    for (size_t i = 0; i < s->conf->nactions; i++)
        if (s->conf->actions[i] == a)
            return true;
    return false;
}

/* Whether r covers j's minResources (in what j asks for: r may be short, or
 * below zero, in what it does not). */
static bool covers(const sc_res *r, const sc_job *j)
{
    for (int k = 0; k < SC_MAXRES; k++)
        if (k != SC_PODS && j->min_res.v[k] && j->min_res.v[k] > r->v[k])
            return false;
    return true;
}

/* Whether the cycle's preempt or reclaim could make room for j that the
 * admission gates refuse: the tasks of lower-priority preemptable jobs of
 * j's own queue cover its minResources (preempt: that frees the queue's
 * capability too), or j's queue stays within its deserved share with j and
 * what other reclaimable queues hold above theirs, with what is idle, covers
 * it (reclaim). */
static bool room_by_eviction(sc_session *s, const sc_job *j)
{
    sc_cluster *c = s->c;
    const sc_queue *q = j->queue;

    if (has_action(s, SC_ACT_PREEMPT)) {
        sc_res victims = {0};
        for (size_t i = 0; i < c->njobs; i++) {
            const sc_job *v = c->jobs[i];
            if (v->queue == q && v->preemptable && v->priority < j->priority)
                sc_res_add(&victims, &v->allocated);
        }
        if (covers(&victims, j))
            return true;
    }
    if (has_action(s, SC_ACT_RECLAIM) && s->shares) {
        sc_res have = s->free_now;
        sc_res_sub(&have, &s->inqueue_total);
        for (int r = 0; r < SC_MAXRES; r++)
            if (r != SC_PODS && j->min_res.v[r] &&
                q->allocated.v[r] + q->inqueue.v[r] + j->min_res.v[r] > q->deserved.v[r])
                return false;
        for (size_t i = 0; i < c->nqueues; i++) {
            const sc_queue *o = c->queues[i];
            if (o == q || !o->reclaimable)
                continue;
            for (int r = 0; r < SC_MAXRES; r++)
                if (o->allocated.v[r] > o->deserved.v[r])
                    have.v[r] += o->allocated.v[r] - o->deserved.v[r];
        }
        return covers(&have, j);
    }
    return false;
}

/* Whether j's minResources fit in what is idle now, after what admitted
 * groups were promised. */
static bool fits_idle(const sc_session *s, const sc_job *j)
{
    sc_res room = s->free_now;

    sc_res_sub(&room, &s->inqueue_total);
    return covers(&room, j);
}

static int cmp_session_jobs(const void *a, const void *b, void *s)
{
    return sc_job_cmp(s, *(sc_job *const *)a, *(sc_job *const *)b);
}

static void say(sc_session *s, sc_job *j, const char *msg)
{
    if (strcmp(msg, j->msg) != 0) {
        snprintf(j->msg, sizeof(j->msg), "%s", msg);
        sc_job_note(s->c, j);
    }
}

void sc_action_enqueue(sc_session *s)
{
    sc_cluster *c = s->c;
    size_t n = 0, nq;
    sc_job **jobs = malloc((c->nwaiting[SC_WAIT_PENDING] + 1) * sizeof(*jobs));
    /* the queues' heaps live in jobs: a scratch list of their own */
    sc_job **fit = malloc((c->nwaiting[SC_WAIT_PENDING] + 1) * sizeof(*fit));
    size_t *count = calloc(c->nqueues + 1, sizeof(*count));
    sc_qheap *qs = calloc(c->nqueues + 1, sizeof(*qs));

    if (!jobs || !fit || !count || !qs)
        goto out;
    for (sc_job *j = c->waiting[SC_WAIT_PENDING]; j; j = j->wnext) {
        jobs[n++] = j;
        count[j->queue->idx]++;
    }
    /* each queue's jobs come out in job order only as far as admission gets */
    if ((nq = sc_queue_heaps(s, jobs, n, count, qs)) == (size_t)-1)
        goto out;
    while (nq) {
        sc_qheap *best = NULL;
        char msg[SC_MSG_LEN];
        for (size_t i = 0; i < c->nqueues; i++) {
            sc_qheap *r = &qs[i];
            if (r->blocked || !r->n)
                continue;
            if (!best || promised_share(r->q) < promised_share(best->q) ||
                (promised_share(r->q) == promised_share(best->q) &&
                 sc_queue_cmp(s, r->q, best->q) < 0))
                best = r;
        }
        if (!best)
            break;
        sc_job *j = best->h[0];
        const sc_queue *q = j->queue;
        if (!q->defined)
            snprintf(msg, sizeof(msg), "queue %s does not exist", q->name);
        else if (!q->open)
            snprintf(msg, sizeof(msg), "queue %s is closed", q->name);
        else if (!sc_quota_admits(s, j, msg, sizeof(msg))) {
            /* its namespace's quota holds this job back, not its queue */
            sc_qheap_pop(s, best);
            say(s, j, msg);
            continue;
        } else if (!sc_job_enqueueable(s, j) && !room_by_eviction(s, j))
            snprintf(msg, sizeof(msg),
                     "queue %s has no room for the job's minResources (capability or "
                     "cluster overcommit reached)", q->name);
        else {
            sc_qheap_pop(s, best);
            sc_quota_charge(s, j);
            sc_job_admit(s, j);
            continue;
        }
        /* the rest of this queue waits behind its first job, but for jobs
         * that fit in what is idle now (in job order); one pass over the
         * waiting jobs (thousands of them on a busy cluster) */
        size_t nfit = 0;
        bool gaps = q->defined && q->open;
        say(s, j, msg);
        for (size_t k = 1; k < best->n; k++) {
            sc_job *w = best->h[k];
            if (gaps && !sc_res_empty(&w->min_res) && fits_idle(s, w))
                fit[nfit++] = w;
            else
                say(s, w, msg);
        }
        if (nfit > 1)
            qsort_r(fit, nfit, sizeof(*fit), cmp_session_jobs, s);
        for (size_t k = 0; k < nfit; k++) {
            char qmsg[SC_MSG_LEN];
            if (!sc_quota_admits(s, fit[k], qmsg, sizeof(qmsg)))
                say(s, fit[k], qmsg);
            else if (fits_idle(s, fit[k]) && sc_job_enqueueable(s, fit[k])) {
                sc_quota_charge(s, fit[k]);
                sc_job_admit(s, fit[k]);
            } else
                say(s, fit[k], msg);
        }
        best->blocked = true;
    }
out:
    free(qs);
    free(count);
    free(fit);
    free(jobs);
}
