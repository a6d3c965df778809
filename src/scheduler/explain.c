/* explain.c - the messages that say why a job waits: the gang's own
 * ("U/T tasks in gang unschedulable: ..."), and each pending pod's as
 * kube-scheduler words it ("0/N nodes are available: ..."), for gangs that
 * cannot be placed and for the waiting members of gangs that are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

typedef struct reason_count {
    char text[120];
    size_t n;
} reason_count;

static void add_reason(reason_count *rc, size_t *nrc, size_t cap, const char *why)
{
    for (size_t i = 0; i < *nrc; i++) {
        if (strcmp(rc[i].text, why) == 0) {
            rc[i].n++;
            return;
        }
    }
    if (*nrc < cap) {
        snprintf(rc[*nrc].text, sizeof(rc[*nrc].text), "%s", why);
        rc[(*nrc)++].n = 1;
    }
}

static int reason_qsort(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->text, y->text);
}

/* "3 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable" for t over
 * every node (large clusters: from the cluster's free totals). */
void sc_node_reasons(sc_session *s, const sc_task *t, char *out, size_t len)
{
    sc_cluster *c = s->c;
    reason_count rc[8];
    size_t nrc = 0, used = 0;

    out[0] = 0;
    if (c->nnodes > SC_EXPLAIN_NODES) {
        for (int r = 0; r < SC_MAXRES; r++) {
            if (t->req.v[r] > s->free_now.v[r]) {
                snprintf(out, len, "%zu Insufficient %s", c->nnodes, sc_res_name(c, r));
                return;
            }
        }
        snprintf(out, len, "no node of %zu fits", c->nnodes);
        return;
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        char why[120];
        if (c->nodes[i]->unschedulable)
            snprintf(why, sizeof(why), "node(s) were unschedulable");
        else if (sc_fits(s, t, c->nodes[i], SC_FIT_NOW, why, sizeof(why)))
            continue;
        add_reason(rc, &nrc, 8, why);
    }
    qsort(rc, nrc, sizeof(*rc), reason_qsort);
    for (size_t i = 0; i < nrc && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%zu %s", i ? ", " : "", rc[i].n,
                                 rc[i].text);
    if (!nrc)
        snprintf(out, len, "%s", c->nnodes ? "the gang does not fit as a whole" : "no nodes");
}

/* reasons as given, or else those of j's first pending task into buf;
 * NULL when none is pending. */
static const char *reasons_of(sc_session *s, const sc_job *j, const char *reasons, char *buf,
                              size_t len)
{
    const sc_task *first = NULL;

    if (reasons)
        return reasons;
    for (size_t i = 0; i < j->ntasks; i++) {
        const sc_task *t = j->tasks[i];
        if (t->st != SC_TASK_PENDING)
            continue;
        if (!first || sc_task_cmp(s, t, first) < 0)
            first = t;
    }
    if (!first)
        return NULL;
    if (s->hooks && s->hooks->no_reasons)
        snprintf(buf, len, "does not fit");
    else
        sc_node_reasons(s, first, buf, len);
    return buf;
}

/* Each pending task of j says why it fits on no node; all of them when
 * again (the reasons changed), else those without a message. Whether any
 * message changed. */
static bool tell_pending(sc_session *s, sc_job *j, const char *reasons, bool again)
{
    char msg[SC_MSG_LEN];
    bool changed = false;

    snprintf(msg, sizeof(msg), "0/%zu nodes are available: %s.", s->c->nnodes, reasons);
    for (size_t i = 0; i < j->ntasks; i++) {
        sc_task *t = j->tasks[i];
        if (t->st != SC_TASK_PENDING || (!again && t->msg[0]) || strcmp(t->msg, msg) == 0)
            continue;
        memcpy(t->msg, msg, sizeof(msg));
        changed = true;
    }
    return changed;
}

void sc_job_explain(sc_session *s, sc_job *j, size_t unschedulable, size_t total,
                    const char *reasons)
{
    char buf[200], msg[SC_MSG_LEN];

    if (!(reasons = reasons_of(s, j, reasons, buf, sizeof(buf))))
        return;
    snprintf(msg, sizeof(msg), "%zu/%zu tasks in gang unschedulable: %s", unschedulable, total,
             reasons);
    /* A gang that keeps failing for the same reason rewrites nothing (but a
     * task that came since, or came back, gets the message too). */
    bool same = strcmp(msg, j->msg) == 0;
    if (!same)
        memcpy(j->msg, msg, sizeof(msg));
    tell_pending(s, j, reasons, !same);
    if (!same)
        sc_job_note(s->c, j);
}

/* As Volcano: a gang that is ready is Scheduled, and its members still
 * pending are ordinary pending pods with the fit errors of their own. */
void sc_job_explain_surplus(sc_session *s, sc_job *j, const char *reasons)
{
    char buf[200];
    bool changed = j->msg[0] != 0;

    j->msg[0] = 0;
    if ((reasons = reasons_of(s, j, reasons, buf, sizeof(buf))) &&
        tell_pending(s, j, reasons, true)) {
        j->task_msg_gen++;
        changed = true;
    }
    if (changed)
        sc_job_note(s->c, j);
}
