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

typedef struct qrun {
    sc_queue *q;
    size_t next, end;
    bool stopped;
} qrun;

void sc_action_enqueue(sc_session *s)
{
    size_t n, nq = 0;
    sc_job **jobs = sc_waiting_jobs(s, false, &n);
    qrun *qs = calloc(n + 1, sizeof(*qs));

    if (!jobs || !qs) {
        free(jobs);
        free(qs);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!nq || qs[nq - 1].q != jobs[i]->queue)
            qs[nq++] = (qrun){.q = jobs[i]->queue, .next = i};
        qs[nq - 1].end = i + 1;
    }
    for (;;) {
        qrun *best = NULL;
        char msg[SC_MSG_LEN];
        for (size_t i = 0; i < nq; i++) {
            qrun *r = &qs[i];
            if (r->stopped || r->next >= r->end)
                continue;
            if (!best || promised_share(r->q) < promised_share(best->q) ||
                (promised_share(r->q) == promised_share(best->q) &&
                 sc_queue_cmp(s, r->q, best->q) < 0))
                best = r;
        }
        if (!best)
            break;
        sc_job *j = jobs[best->next];
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
            sc_job_admit(s, j);
            best->next++;
            continue;
        }
        /* the rest of this queue waits behind its first job */
        for (size_t k = best->next; k < best->end; k++)
            say(s, jobs[k], msg);
        best->stopped = true;
    }
    free(qs);
    free(jobs);
}
