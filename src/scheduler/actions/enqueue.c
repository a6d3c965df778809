/* enqueue.c - admits pod groups: a job leaves Pending (and its controller
 * creates its pods) only when its queue is open and the enqueue plugins
 * (proportion's capability, overcommit's cluster headroom) say it has room.
 *
 * Queues take turns by how much of their deserved share they already hold
 * or have been promised (allocated + admitted-but-not-running): with a
 * limited overcommit budget, the first queue in the list must not take all
 * admissions, or the other queues' jobs never get pods to be scheduled and
 * fair share is never reached. Within a queue, jobs are admitted in job
 * order; the first one that does not fit stops its queue for this cycle. */
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
    size_t *count = calloc(c->nqueues + 1, sizeof(*count));
    sc_qheap *qs = calloc(c->nqueues + 1, sizeof(*qs));

    if (!jobs || !count || !qs)
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
        else if (!sc_job_enqueueable(s, j))
            snprintf(msg, sizeof(msg),
                     "queue %s has no room for the job's minResources (capability or "
                     "cluster overcommit reached)", q->name);
        else {
            sc_qheap_pop(s, best);
            sc_job_admit(s, j);
            continue;
        }
        /* the rest of this queue waits behind its first job */
        for (size_t k = 0; k < best->n; k++)
            say(s, best->h[k], msg);
        best->blocked = true;
    }
out:
    free(qs);
    free(count);
    free(jobs);
}
