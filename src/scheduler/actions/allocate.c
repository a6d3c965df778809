/* allocate.c - places admitted gangs all-or-nothing, queue by queue in
 * fair-share order and job by job in job order.
 *
 * allocate keeps each queue's order strictly: once a queue's first job does
 * not fit, the rest of that queue waits behind it, so a big gang is not
 * starved by a stream of small ones. backfill then runs the same placement
 * over every waiting job, filling the gaps the blocked gangs cannot use
 * (and BestEffort pods, which need nothing). Without backfill in the
 * configuration a queue is strictly first-in first-out. */
#include <stdint.h>
#include <stdio.h>
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

/* What try_job did: nothing (the job waits), placed what it could, or
 * placed a member of a gang that is ready and has more to place (the job
 * goes back in line behind the others of its turn). */
typedef enum { TRY_FAILED, TRY_PLACED, TRY_MORE } try_result;

/* A ready gang's turn, cheaply: its first pending member in task order,
 * found without sorting them all, goes where it fits (two elastic jobs of
 * 3,000 pods filling 6,000 CPUs: 0.75 s sorting at every turn, 0.1 s so).
 * TRY_FAILED when it fits nowhere: the whole job is tried then. */
static try_result one_turn(sc_session *s, sc_job *j)
{
    sc_task *first = NULL;
    size_t left = 0;
    sc_node *node;
    sc_stmt st;

    for (size_t i = 0; i < j->ntasks; i++) {
        sc_task *t = j->tasks[i];
        if (t->st != SC_TASK_PENDING)
            continue;
        left++;
        if (!first || sc_task_cmp(s, t, first) < 0)
            first = t;
    }
    if (!first || !sc_task_allocatable(s, first) || !(node = sc_pick_node(s, first, SC_FIT_NOW)))
        return TRY_FAILED;
    sc_stmt_init(&st, s);
    sc_stmt_allocate(&st, first, node);
    sc_stmt_commit(&st, NULL);
    j->fail_at[SC_PASS_ALLOCATE] = 0;
    sc_job_note(s->c, j);
    return left > 1 ? TRY_MORE : TRY_PLACED;
}

/* Tries to place j; whether (and how) the gang was committed. turns: other
 * jobs are in line, so a ready gang hands the turn on after each member
 * (alone, it places all it can at once: a turn per member sorts its pending
 * members again each time). */
static try_result try_job(sc_session *s, sc_job *j, bool turns)
{
    size_t n, placed = 0, failed = 0;
    bool more = false;
    int want = (s->gang ? j->min_member : 1) - j->n_ready - j->n_pipelined;
    /* placed already: the members beyond minMember go as they fit */
    bool was_ready = sc_job_gang_ready(j, false, s->gang);
    char reasons[200] = "";
    const char *short_of = NULL;
    sc_task **tasks;
    sc_stmt st;
    int fit;

    if (sc_job_skippable(s->c, j, SC_PASS_ALLOCATE))
        return TRY_FAILED;
    if (s->stats)
        s->stats->jobs_considered++;
    if (turns && was_ready && j->n_pipelined == 0) {
        try_result r = one_turn(s, j);
        if (r != TRY_FAILED)
            return r;
    }
    tasks = sc_job_pending_tasks(s, j, true, &n);
    if (!tasks)
        return TRY_FAILED;
    if (s->c->nnodes > SC_EXPLAIN_NODES && (fit = precheck(s, tasks, n, want, &short_of)) < want) {
        snprintf(reasons, sizeof(reasons), "%zu Insufficient %s", s->c->nnodes, short_of);
        unschedulable(s, j, (size_t)(want - fit), reasons);
        free(tasks);
        return TRY_FAILED;
    }
    sc_stmt_init(&st, s);
    for (size_t i = 0; i < n; i++) {
        sc_task *t = tasks[i];
        sc_node *node = sc_task_allocatable(s, t) ? sc_pick_node(s, t, SC_FIT_NOW) : NULL;
        if (!node) {
            /* why, as the cluster looks with the gang's members so far on it */
            if (!failed++) {
                if (s->hooks && s->hooks->no_reasons)
                    snprintf(reasons, sizeof(reasons), "does not fit");
                else if (sc_task_allocatable(s, t))
                    sc_node_reasons(s, t, reasons, sizeof(reasons));
                else
                    snprintf(reasons, sizeof(reasons), "queue %s capability reached",
                             j->queue->name);
            }
            continue;
        }
        sc_stmt_allocate(&st, t, node);
        placed++;
        /* As Volcano: once the gang is ready (minMember and its roles),
         * each further member is one turn, and the next job of the queue,
         * or the next queue by share, has the next (an elastic job does not
         * take the whole cluster before its neighbours start). */
        if (turns && i + 1 < n && sc_job_gang_ready(j, false, s->gang)) {
            more = true;
            break;
        }
    }
    if (placed && sc_job_gang_ready(j, false, s->gang)) {
        sc_stmt_commit(&st, NULL);
        j->msg[0] = 0;
        j->fail_at[SC_PASS_ALLOCATE] = 0;
        if (failed) {
            if (!more) /* the rest waits for room */
                sc_job_mark_failed(s->c, j, SC_PASS_ALLOCATE);
            sc_job_explain_surplus(s, j, reasons);
        }
        sc_job_note(s->c, j);
        free(tasks);
        return more ? TRY_MORE : TRY_PLACED;
    }
    sc_stmt_discard(&st);
    if (was_ready) {
        /* nothing of the rest fits: they wait, the gang is not unschedulable */
        sc_job_explain_surplus(s, j, failed ? reasons : NULL);
        sc_job_mark_failed(s->c, j, SC_PASS_ALLOCATE);
        free(tasks);
        return TRY_FAILED;
    }
    /* as Volcano counts: the members still missing for minMember */
    want += j->n_pipelined;
    unschedulable(s, j, want > (int)placed ? (size_t)want - placed : (failed ? failed : n),
                  failed ? reasons : NULL);
    free(tasks);
    return TRY_FAILED;
}

/* ---- the order jobs are tried in ----
 *
 * A cycle must not cost what the whole waiting list costs to sort: with
 * thousands of gangs waiting on a full cluster, one that finishes would make
 * every one of them a candidate again. So only the candidates are ordered,
 * and lazily: a job that failed before and has seen nothing freed since, or
 * whose need is more than the cluster has free in total, is left out; the
 * rest sit in one binary heap per queue and come out in job order only as
 * far as the action gets. Once what is free is below every candidate's need
 * in some resource, the action stops.
 *
 * In allocate a left-out job still holds its queue's line: a queue is
 * blocked at its first job in job order that cannot go, left out or not. */

/* On a large cluster a job whose need is more than is free in total is left
 * out; one not told why since it last changed is told now (try_job's
 * precheck fails at once and says so from the totals). Small clusters try
 * every candidate node by node: their messages count nodes. */
static bool left_out(sc_session *s, sc_job *j)
{
    if (sc_job_skippable(s->c, j, SC_PASS_ALLOCATE))
        return true;
    if (s->c->nnodes <= SC_EXPLAIN_NODES || sc_res_le(sc_job_need(s, j), &s->free_now))
        return false;
    if (!j->fail_at[SC_PASS_ALLOCATE] || j->change_epoch > j->fail_at[SC_PASS_ALLOCATE])
        try_job(s, j, false);
    return true;
}

/* Is free below every candidate's need in some resource? */
static bool nothing_fits(const sc_session *s, const sc_res *least)
{
    for (int r = 0; r < SC_MAXRES; r++)
        if (s->free_now.v[r] < least->v[r])
            return true;
    return false;
}

/* A placed gang whose other members had no turn, or no further turn, as
 * the action ends says why on them: no node fits them, or, where the
 * cluster has room for one, its queue holds its share. */
static void surplus_waits(sc_session *s, sc_job *j)
{
    char why[SC_MSG_LEN];
    bool room = false;

    if (!j->waiting || !j->inqueue || j->n_pending == 0 ||
        sc_job_skippable(s->c, j, SC_PASS_ALLOCATE) || !sc_job_gang_ready(j, false, s->gang))
        return;
    for (size_t i = 0; i < j->ntasks && !room; i++)
        room = j->tasks[i]->st == SC_TASK_PENDING && sc_res_le(&j->tasks[i]->req, &s->free_now);
    if (room && !sc_queue_overused(s, j->queue))
        return; /* it was left in line for a reason of its queue's order */
    snprintf(why, sizeof(why), "queue %s holds its deserved share", j->queue->name);
    sc_job_explain_surplus(s, j, room ? why : NULL);
    if (!room)
        sc_job_mark_failed(s->c, j, SC_PASS_ALLOCATE);
}

/* The first waiting job of a queue that holds its deserved share says so
 * (its other jobs wait behind it, with their own last message). A placed
 * gang whose extra members wait says nothing: it is scheduled, and its
 * waiting pods keep their own last reasons. */
static void say_overused(sc_session *s, sc_job *j)
{
    char msg[SC_MSG_LEN];

    if (sc_job_gang_ready(j, false, s->gang))
        return;

    snprintf(msg, sizeof(msg), "queue %s holds its deserved share; the job waits for the "
             "queue's own jobs to finish or for other queues to need less", j->queue->name);
    if (strcmp(msg, j->msg) != 0) {
        snprintf(j->msg, sizeof(j->msg), "%s", msg);
        sc_job_note(s->c, j);
    }
}

/* The queue whose turn it is (by the queue order), blocking the ones over
 * their share on the way; NULL when none may go. */
static sc_qheap *next_queue(sc_session *s, sc_qheap *qs)
{
    sc_qheap *best = NULL;

    for (size_t i = 0; i < s->c->nqueues; i++) {
        sc_qheap *qh = &qs[i];
        if (qh->blocked || !qh->n || !qh->q->defined)
            continue;
        if (sc_queue_overused(s, qh->q)) {
            qh->blocked = true;
            say_overused(s, qh->h[0]);
            continue;
        }
        if (!best || sc_queue_cmp(s, qh->q, best->q) < 0)
            best = qh;
    }
    return best;
}

void sc_action_allocate(sc_session *s, bool backfill)
{
    sc_cluster *c = s->c;
    size_t nadmitted = c->nwaiting[SC_WAIT_ADMITTED];
    sc_job **all = malloc((nadmitted + 1) * sizeof(*all));
    sc_qheap *qs = calloc(c->nqueues + 1, sizeof(*qs));
    size_t *count = calloc(c->nqueues + 1, sizeof(*count));
    sc_res least;
    size_t ncand = 0, nq = 0, in_line;
    /* small clusters try every candidate (their messages count nodes) */
    bool by_need = c->nnodes > SC_EXPLAIN_NODES;

    if (!all || !qs || !count)
        goto out;
    for (int r = 0; r < SC_MAXRES; r++)
        least.v[r] = INT64_MAX;
    /* candidates, grouped by queue (counting sort on the queue's index);
     * the left-out ones gather at the end of the array */
    size_t nout = 0;
    /* (left_out may place a job, which takes it off the list) */
    for (sc_job *j = c->waiting[SC_WAIT_ADMITTED], *next; j; j = next) {
        next = j->wnext;
        if (j->n_pending == 0 && j->n_pipelined == 0)
            continue;
        if (left_out(s, j)) {
            all[nadmitted - ++nout] = j;
            continue;
        }
        const sc_res *need = by_need ? sc_job_need(s, j) : &(sc_res){{0}};
        for (int r = 0; r < SC_MAXRES; r++)
            if (need->v[r] < least.v[r])
                least.v[r] = need->v[r];
        all[ncand++] = j;
        count[j->queue->idx]++;
    }
    if (!ncand)
        goto out;
    /* allocate: each queue's first left-out job, where the queue has
     * candidates it could hold back */
    for (size_t i = 0; !backfill && i < nout; i++) {
        sc_job *j = all[nadmitted - 1 - i];
        sc_qheap *qh = &qs[j->queue->idx];
        if (count[j->queue->idx] && (!qh->blocker || sc_job_cmp(s, j, qh->blocker) < 0))
            qh->blocker = j;
    }
    if ((nq = sc_queue_heaps(s, all, ncand, count, qs)) == (size_t)-1)
        goto out;
    in_line = ncand;
    /* Gangs that hold reservations (pipelined by preempt) go first and are
     * not held back by a blocked queue: their room was promised to them. */
    for (size_t i = 0; !backfill && i < ncand; i++)
        if (all[i]->n_pipelined > 0 && all[i]->waiting)
            try_job(s, all[i], false);
    while (nq && !nothing_fits(s, &least)) {
        sc_qheap *best = next_queue(s, qs);
        if (!best)
            break;
        /* allocate: a left-out job ahead holds the line */
        if (best->blocker && sc_job_cmp(s, best->blocker, best->h[0]) < 0) {
            best->blocked = true;
            continue;
        }
        sc_job *j = sc_qheap_pop(s, best);
        try_result r = TRY_FAILED;
        in_line--;
        if (j->waiting && j->inqueue) {
            if (by_need && !sc_res_le(sc_job_need(s, j), &s->free_now)) {
                /* what is free shrank below its need: it cannot go now */
            } else {
                r = try_job(s, j, in_line > 0);
            }
        }
        if (r == TRY_MORE) {
            sc_qheap_push(s, best, j);
            in_line++;
        }
        bool ok = r != TRY_FAILED;
        /* a placed gang whose extra members wait holds nobody back: the
         * strict order is there so that gangs still waiting are not starved */
        if (!ok && !backfill && !sc_job_gang_ready(j, false, s->gang))
            best->blocked = true;
    }
    /* The placed gangs still in line (their turn ended with members left,
     * or never came) say why those members wait. */
    for (size_t i = 0; i < c->nqueues; i++)
        for (size_t k = 0; k < qs[i].n; k++)
            surplus_waits(s, qs[i].h[k]);
out:
    free(count);
    free(qs);
    free(all);
}
