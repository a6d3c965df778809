/* allocate.c - places admitted gangs all-or-nothing, queue by queue in
 * fair-share order and job by job in job order.
 *
 * allocate keeps each queue's order strictly: once a queue's first job does
 * not fit, the rest of that queue waits behind it, so a big gang is not
 * starved by a stream of small ones. backfill then runs the same placement
 * over every waiting job, filling the gaps the blocked gangs cannot use
 * (and BestEffort pods, which need nothing). Without backfill in the
 * configuration a queue is strictly first-in first-out. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

/* How many of the gang's first unplaced members fit, one after another, in
 * what the whole cluster has free; a gang that cannot get want of them there
 * cannot be placed, and on a large cluster is not tried node by node. */
static int precheck(sc_session *s, sc_task **tasks, size_t n, int want, const char **short_of)
{
    sc_res need = {0};
    int k = 0;

    for (size_t i = 0; i < n && k < want; i++) {
        if (tasks[i]->st == SC_TASK_PIPELINED)
            continue; /* already reserved */
        sc_res_add(&need, &tasks[i]->req);
        for (int r = 0; r < SC_MAXRES; r++) {
            if (need.v[r] > s->free_now.v[r]) {
                *short_of = sc_res_name(s->c, r);
                return k;
            }
        }
        k++;
    }
    return want;
}

static void unschedulable(sc_session *s, sc_job *j, size_t unready, const char *reasons)
{
    size_t total = (size_t)j->min_member > j->ntasks ? (size_t)j->min_member : j->ntasks;
    sc_job_explain(s, j, unready, total, reasons);
    sc_job_mark_failed(s->c, j, SC_PASS_ALLOCATE);
    if (s->stats)
        s->stats->jobs_unschedulable++;
}

/* Tries to place j; true when the gang was committed. */
static bool try_job(sc_session *s, sc_job *j)
{
    size_t n, placed = 0, failed = 0;
    int want = (s->gang ? j->min_member : 1) - j->n_ready - j->n_pipelined;
    char reasons[200] = "";
    const char *short_of = NULL;
    sc_task **tasks;
    sc_stmt st;
    int fit;

    if (sc_job_skippable(s->c, j, SC_PASS_ALLOCATE))
        return false;
    if (s->stats)
        s->stats->jobs_considered++;
    tasks = sc_job_pending_tasks(s, j, true, &n);
    if (!tasks)
        return false;
    if (s->c->nnodes > SC_EXPLAIN_NODES && (fit = precheck(s, tasks, n, want, &short_of)) < want) {
        snprintf(reasons, sizeof(reasons), "%zu Insufficient %s", s->c->nnodes, short_of);
        unschedulable(s, j, (size_t)(want - fit), reasons);
        free(tasks);
        return false;
    }
    sc_stmt_init(&st, s);
    for (size_t i = 0; i < n; i++) {
        sc_task *t = tasks[i];
        sc_node *node = sc_task_allocatable(s, t) ? sc_pick_node(s, t, SC_FIT_NOW) : NULL;
        if (!node) {
            /* why, as the cluster looks with the gang's members so far on it */
            if (!failed++) {
                if (sc_task_allocatable(s, t))
                    sc_node_reasons(s, t, reasons, sizeof(reasons));
                else
                    snprintf(reasons, sizeof(reasons), "queue %s capability reached",
                             j->queue->name);
            }
            continue;
        }
        sc_stmt_allocate(&st, t, node);
        placed++;
    }
    if (placed && sc_job_gang_ready(j, false, s->gang)) {
        sc_stmt_commit(&st, NULL);
        j->msg[0] = 0;
        j->fail_at[SC_PASS_ALLOCATE] = 0;
        if (failed)
            sc_job_mark_failed(s->c, j, SC_PASS_ALLOCATE); /* the rest waits for room */
        sc_job_note(s->c, j);
        free(tasks);
        return true;
    }
    sc_stmt_discard(&st);
    /* as Volcano counts: the members still missing for minMember */
    want += j->n_pipelined;
    unschedulable(s, j, want > (int)placed ? (size_t)want - placed : (failed ? failed : n),
                  failed ? reasons : NULL);
    free(tasks);
    return false;
}

typedef struct qcursor {
    sc_queue *q;
    size_t next, end;
    bool blocked;
} qcursor;

void sc_action_allocate(sc_session *s, bool backfill)
{
    size_t n, nq = 0;
    sc_job **jobs = sc_waiting_jobs(s, true, &n);
    qcursor *qs = calloc(n + 1, sizeof(*qs));

    if (!jobs || !qs) {
        free(jobs);
        free(qs);
        return;
    }
    /* the list is sorted by queue, then job order: cut it into runs */
    for (size_t i = 0; i < n; i++) {
        if (!nq || qs[nq - 1].q != jobs[i]->queue)
            qs[nq++] = (qcursor){.q = jobs[i]->queue, .next = i, .end = i};
        qs[nq - 1].end = i + 1;
    }
    for (;;) {
        qcursor *best = NULL;
        for (size_t i = 0; i < nq; i++) {
            qcursor *c = &qs[i];
            if (c->blocked || c->next >= c->end || !c->q->defined)
                continue;
            if (sc_queue_overused(s, c->q)) {
                c->blocked = true;
                continue;
            }
            if (!best || sc_queue_cmp(s, c->q, best->q) < 0)
                best = c;
        }
        if (!best)
            break;
        sc_job *j = jobs[best->next++];
        if (!j->waiting || !j->inqueue)
            continue;
        if (!try_job(s, j) && !backfill)
            best->blocked = true;
    }
    free(qs);
    free(jobs);
}
