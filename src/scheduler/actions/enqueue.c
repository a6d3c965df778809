/* enqueue.c - admits pod groups: a job leaves Pending (and its controller
 * creates its pods) only when its queue is open and the enqueue plugins
 * (proportion's capability, overcommit's cluster headroom) say it has room. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

void sc_action_enqueue(sc_session *s)
{
    size_t n;
    sc_job **jobs = sc_waiting_jobs(s, false, &n);

    for (size_t i = 0; i < n; i++) {
        sc_job *j = jobs[i];
        const sc_queue *q = j->queue;
        char msg[SC_MSG_LEN];

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
            continue;
        }
        if (strcmp(msg, j->msg) != 0) {
            snprintf(j->msg, sizeof(j->msg), "%s", msg);
            sc_job_note(s->c, j);
        }
    }
    free(jobs);
}
