/* model_account.c - the scheduler model's accounting: resource vectors,
 * task states, the free-GPU buckets of nodes and the waiting list of jobs,
 * and the one function (sc_task_move) through which every task's resources
 * are counted on its node, job and queue, so that the sums are always exact.
 * The objects themselves (nodes, queues, jobs, tasks) live in model.c.
 *
 * Nodes sit in buckets by free GPUs so that a GPU task finds a node that fits
 * without scanning thousands; jobs that still need something sit on the
 * waiting list so that a cycle never looks at the settled ones. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

static const char *const fixed_res[4] = {"cpu", "memory", "pods", "nvidia.com/gpu"};

/* ---- resources ---- */

int sc_res_slot(sc_cluster *c, const char *name)
{
    int i = sc_res_find(c, name);

    if (i != SC_UNOFFERED)
        return i;
    for (i = 4; i < SC_UNOFFERED; i++) {
        if (!c->res_names[i]) {
            c->res_names[i] = strdup(name);
            return c->res_names[i] ? i : -1;
        }
    }
    return -1;
}

int sc_res_find(const sc_cluster *c, const char *name)
{
    for (int i = 0; i < SC_UNOFFERED; i++) {
        if (i < 4 && strcmp(fixed_res[i], name) == 0)
            return i;
        if (i >= 4 && c->res_names[i] && strcmp(c->res_names[i], name) == 0)
            return i;
    }
    return SC_UNOFFERED;
}

const char *sc_res_name(const sc_cluster *c, int slot)
{
    if (slot < 0 || slot >= SC_MAXRES)
        return NULL;
    if (slot == SC_UNOFFERED)
        return "a resource no node offers";
    return slot < 4 ? fixed_res[slot] : c->res_names[slot];
}

bool sc_res_le(const sc_res *a, const sc_res *b)
{
    for (int i = 0; i < SC_MAXRES; i++)
        if (a->v[i] > b->v[i])
            return false;
    return true;
}

void sc_res_add(sc_res *a, const sc_res *b)
{
    for (int i = 0; i < SC_MAXRES; i++)
        a->v[i] += b->v[i];
}

void sc_res_sub(sc_res *a, const sc_res *b)
{
    for (int i = 0; i < SC_MAXRES; i++)
        a->v[i] -= b->v[i];
}

bool sc_res_empty(const sc_res *a)
{
    for (int i = 0; i < SC_MAXRES; i++)
        if (a->v[i])
            return false;
    return true;
}

/* ---- task and node states ---- */

bool sc_status_holds(sc_task_status st)
{
    return st == SC_TASK_ALLOCATED || st == SC_TASK_BINDING || st == SC_TASK_BOUND ||
           st == SC_TASK_RUNNING || st == SC_TASK_RELEASING;
}

bool sc_status_allocated(sc_task_status st)
{
    return st == SC_TASK_ALLOCATED || st == SC_TASK_BINDING || st == SC_TASK_BOUND ||
           st == SC_TASK_RUNNING;
}

bool sc_status_ready(sc_task_status st)
{
    return sc_status_allocated(st) || st == SC_TASK_SUCCEEDED;
}

bool sc_node_schedulable(const sc_node *n)
{
    return n->ready && !n->unschedulable;
}

int64_t sc_node_free_gpus(const sc_node *n)
{
    int64_t m = n->alloc.v[SC_GPU] - n->used.v[SC_GPU] - n->pipelined.v[SC_GPU];
    return m > 0 ? m / 1000 : 0;
}

void sc_node_sums_out(sc_cluster *c, sc_node *n)
{
    if (!n || !n->summed)
        return;
    sc_res_sub(&c->sum_alloc, &n->alloc);
    sc_res_sub(&c->sum_free_now, &n->sum_now);
    sc_res_sub(&c->sum_free_future, &n->sum_future);
    n->summed = false;
}

void sc_node_sums_in(sc_cluster *c, sc_node *n)
{
    if (!n || n->summed || !sc_node_schedulable(n))
        return;
    for (int r = 0; r < SC_MAXRES; r++) {
        int64_t now = n->alloc.v[r] - n->used.v[r] - n->pipelined.v[r];
        n->sum_now.v[r] = now > 0 ? now : 0;
        n->sum_future.v[r] = now + n->releasing.v[r] > 0 ? now + n->releasing.v[r] : 0;
    }
    sc_res_add(&c->sum_alloc, &n->alloc);
    sc_res_add(&c->sum_free_now, &n->sum_now);
    sc_res_add(&c->sum_free_future, &n->sum_future);
    n->summed = true;
}

/* ---- buckets and the waiting list ---- */

void sc_bucket_out(sc_cluster *c, sc_node *n)
{
    if (n->bucket < 0)
        return;
    if (n->bprev)
        n->bprev->bnext = n->bnext;
    else
        c->buckets[n->bucket] = n->bnext;
    if (n->bnext)
        n->bnext->bprev = n->bprev;
    n->bprev = n->bnext = NULL;
    n->bucket = -1;
}

void sc_bucket_in(sc_cluster *c, sc_node *n)
{
    int64_t f;
    int b;

    if (!sc_node_schedulable(n))
        return;
    f = sc_node_free_gpus(n);
    b = f >= SC_BUCKETS - 1 ? SC_BUCKETS - 1 : (int)f;
    n->bucket = b;
    n->bprev = NULL;
    n->bnext = c->buckets[b];
    if (n->bnext)
        n->bnext->bprev = n;
    c->buckets[b] = n;
}

void sc_bucket_refresh(sc_cluster *c, sc_node *n)
{
    int64_t f = sc_node_free_gpus(n);
    int b = f >= SC_BUCKETS - 1 ? SC_BUCKETS - 1 : (int)f;
    if (n->bucket == b && sc_node_schedulable(n))
        return;
    sc_bucket_out(c, n);
    sc_bucket_in(c, n);
}

static void wait_unlink(sc_cluster *c, sc_job *j)
{
    int l = j->wadmitted ? SC_WAIT_ADMITTED : SC_WAIT_PENDING;

    if (j->wprev)
        j->wprev->wnext = j->wnext;
    else
        c->waiting[l] = j->wnext;
    if (j->wnext)
        j->wnext->wprev = j->wprev;
    j->wprev = j->wnext = NULL;
    c->nwaiting[l]--;
    j->waiting = false;
}

static void wait_link(sc_cluster *c, sc_job *j, bool admitted)
{
    int l = admitted ? SC_WAIT_ADMITTED : SC_WAIT_PENDING;

    j->wprev = NULL;
    j->wnext = c->waiting[l];
    if (j->wnext)
        j->wnext->wprev = j;
    c->waiting[l] = j;
    c->nwaiting[l]++;
    j->waiting = true;
    j->wadmitted = admitted;
}

/* An admitted group that has tasks to place or none yet, with fewer than
 * minMember ready, holds its minResources in its queue's admitted_short and
 * the cluster's (enqueue's sums: what admitted groups still expect to get).
 * Kept here, as each change comes: summing them as a cycle began walked
 * every admitted group, a cache miss each, and with thousands admitted
 * ahead of their pods that walk was most of a session's opening. */
static void short_update(sc_cluster *c, sc_job *j)
{
    bool shorts = !j->completed && !j->groupless && j->inqueue &&
                  (j->n_pending > 0 || j->n_pipelined > 0 || j->ntasks == 0) &&
                  j->n_ready < j->min_member;
    sc_queue *q = shorts ? j->queue : NULL;

    if (q == j->short_q && (!q || memcmp(&j->short_res, &j->min_res, sizeof(sc_res)) == 0))
        return;
    if (j->short_q) {
        sc_res_sub(&j->short_q->admitted_short, &j->short_res);
        sc_res_sub(&c->admitted_short, &j->short_res);
    }
    j->short_q = q;
    if (q) {
        j->short_res = j->min_res;
        sc_res_add(&q->admitted_short, &j->short_res);
        sc_res_add(&c->admitted_short, &j->short_res);
    }
}

void sc_waiting_update(sc_cluster *c, sc_job *j)
{
    /* Waiting: to be admitted, or admitted with tasks to place. An
     * admitted group whose pods do not exist yet has nothing to place, so
     * no action visits it; the admission sums keep its minResources
     * (short_update). */
    bool want = !j->completed && !j->groupless &&
                (!j->inqueue || j->n_pending > 0 || j->n_pipelined > 0);
    bool demand = !j->completed && !j->groupless && j->ntasks == 0;
    sc_queue *dq = demand ? j->queue : NULL;

    if (want != j->waiting || (want && j->inqueue != j->wadmitted)) {
        if (j->waiting)
            wait_unlink(c, j);
        if (want)
            wait_link(c, j, j->inqueue);
    }
    /* a group without pods asks for its minResources (proportion's demand) */
    if (dq != j->demand_q ||
        (dq && memcmp(&j->demand_res, &j->min_res, sizeof(sc_res)) != 0)) {
        if (j->demand_q)
            sc_res_sub(&j->demand_q->wait_demand, &j->demand_res);
        j->demand_q = dq;
        if (dq) {
            j->demand_res = j->min_res;
            sc_res_add(&dq->wait_demand, &j->demand_res);
        }
    }
    short_update(c, j);
}

void sc_job_touch(sc_cluster *c, sc_job *j)
{
    j->need_valid = false;
    j->change_epoch = ++c->epoch;
}

/* ---- accounting ---- */

static void queue_add(sc_queue *q, const sc_res *r, int sign)
{
    for (; q; q = q->parent) {
        if (sign > 0)
            sc_res_add(&q->allocated, r);
        else
            sc_res_sub(&q->allocated, r);
    }
}

void sc_account(sc_cluster *c, sc_task *t, int sign)
{
    sc_job *j = t->job;
    sc_res *r = &t->req;
    sc_node *held = t->node && sc_status_holds(t->st) ? t->node : NULL;
    sc_node *nom = t->st == SC_TASK_PIPELINED && t->nominated != held ? t->nominated : NULL;

    j->need_valid = false;
    sc_node_sums_out(c, held);
    sc_node_sums_out(c, nom);
    if (t->node && sc_status_holds(t->st)) {
        if (sign > 0)
            sc_res_add(&t->node->used, r);
        else
            sc_res_sub(&t->node->used, r);
        if (t->st == SC_TASK_RELEASING) {
            if (sign > 0)
                sc_res_add(&t->node->releasing, r);
            else
                sc_res_sub(&t->node->releasing, r);
        }
        t->node->ntasks += sign;
    }
    if (t->st == SC_TASK_PIPELINED && t->nominated) {
        if (sign > 0)
            sc_res_add(&t->nominated->pipelined, r);
        else
            sc_res_sub(&t->nominated->pipelined, r);
    }
    sc_node_sums_in(c, held);
    sc_node_sums_in(c, nom);
    if (sc_status_allocated(t->st)) {
        if (sign > 0)
            sc_res_add(&j->allocated, r);
        else
            sc_res_sub(&j->allocated, r);
        queue_add(j->queue, r, sign);
    }
    if (t->st == SC_TASK_PENDING || t->st == SC_TASK_PIPELINED || sc_status_allocated(t->st)) {
        for (sc_queue *q = j->queue; q; q = q->parent) {
            if (sign > 0)
                sc_res_add(&q->request, r);
            else
                sc_res_sub(&q->request, r);
        }
    }
    if (sc_status_ready(t->st))
        j->n_ready += sign;
    if (t->st == SC_TASK_RUNNING || t->st == SC_TASK_SUCCEEDED)
        j->n_running += sign;
    if (t->st == SC_TASK_PENDING)
        j->n_pending += sign;
    if (t->st == SC_TASK_PIPELINED)
        j->n_pipelined += sign;
    if (t->st == SC_TASK_RUNNING)
        j->n_counts[SC_JOB_COUNT_RUNNING] += sign;
    else if (t->st == SC_TASK_SUCCEEDED)
        j->n_counts[SC_JOB_COUNT_SUCCEEDED] += sign;
    else if (t->st == SC_TASK_FAILED)
        j->n_counts[SC_JOB_COUNT_FAILED] += sign;
}

/* Moves t from list k of node `from` to that of node `to` (either NULL). */
static void relink(sc_task *t, int k, sc_node *from, sc_node *to)
{
    struct sc_task_link *l = &t->link[k];

    if (from) {
        *(l->prev ? &l->prev->link[k].next : &from->tasks[k]) = l->next;
        if (l->next)
            l->next->link[k].prev = l->prev;
    }
    l->prev = NULL;
    l->next = to ? to->tasks[k] : NULL;
    if (to) {
        if (to->tasks[k])
            to->tasks[k]->link[k].prev = t;
        to->tasks[k] = t;
    }
}

/* Sets where t is and what it is nominated to, keeping the nodes' lists. */
void sc_place(sc_task *t, sc_node *n, sc_node *nom)
{
    if (t->node != n)
        relink(t, SC_ON_NODE, t->node, n);
    if (t->nominated != nom)
        relink(t, SC_NOMINATED, t->nominated, nom);
    t->node = n;
    t->nominated = nom;
}

void sc_task_move(sc_cluster *c, sc_task *t, sc_task_status st, sc_node *n, sc_node *nom)
{
    sc_node *old_node = t->node, *old_nom = t->nominated;
    bool freed;

    /* Resources come free when a task stops holding them or stops
     * reserving them: jobs that failed earlier may fit now. */
    freed = (sc_status_holds(t->st) && (!sc_status_holds(st) || n != old_node)) ||
            (t->st == SC_TASK_RELEASING && st != SC_TASK_RELEASING) ||
            (t->st == SC_TASK_PIPELINED && (st != SC_TASK_PIPELINED || nom != old_nom));
    sc_account(c, t, -1);
    t->st = st;
    sc_place(t, sc_status_holds(st) || st == SC_TASK_SUCCEEDED || st == SC_TASK_FAILED ? n : NULL,
          st == SC_TASK_PIPELINED ? nom : NULL);
    sc_account(c, t, +1);
    if (old_node)
        sc_bucket_refresh(c, old_node);
    if (old_nom && old_nom != old_node)
        sc_bucket_refresh(c, old_nom);
    if (t->node && t->node != old_node)
        sc_bucket_refresh(c, t->node);
    if (t->nominated && t->nominated != old_nom && t->nominated != t->node)
        sc_bucket_refresh(c, t->nominated);
    if (freed)
        c->release_epoch++;
    c->epoch++;
    sc_waiting_update(c, t->job);
    sc_job_note(c, t->job);
}

void sc_task_move_job_refresh(sc_cluster *c, sc_job *j)
{
    sc_waiting_update(c, j);
    sc_job_touch(c, j);
    sc_job_note(c, j);
}

static bool job_all_finished(const sc_job *j)
{
    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->st != SC_TASK_SUCCEEDED && j->tasks[i]->st != SC_TASK_FAILED)
            return false;
    return true;
}

/* Whether minMember of the job's pods were bound (or ran, or finished) at
 * once: the gang was placed, as Volcano counts its allocated tasks. A gang
 * whose workers finished while its parameter server was still starting,
 * and was then killed, never had minMember Running and so never became
 * Completed. */
static bool gang_placed(const sc_job *j, int need)
{
    int n = 0;

    for (size_t i = 0; i < j->ntasks; i++) {
        sc_task_status st = j->tasks[i]->st;
        n += st == SC_TASK_BINDING || st == SC_TASK_BOUND || st == SC_TASK_RUNNING ||
             st == SC_TASK_SUCCEEDED;
    }
    return n >= need;
}

bool sc_job_told(const sc_job *j)
{
    return j->phase == j->told_phase && strcmp(j->msg, j->told_msg) == 0 &&
           memcmp(j->n_counts, j->told_counts, sizeof(j->n_counts)) == 0 &&
           j->task_msg_gen == j->told_task_msg_gen;
}

void sc_job_note(sc_cluster *c, sc_job *j)
{
    int need = j->min_member > 0 ? j->min_member : 1;

    if (!j->ran && j->n_ready >= need && gang_placed(j, need))
        j->ran = true;
    /* A completed job whose pods are then deleted (a finished Volcano Job
     * cleaned up) stays completed until a new pod of it shows up; it used to
     * fall back to Inqueue, sometimes before its Completed was written. */
    if (j->completed ||
        (j->ran && j->ntasks && j->n_pending == 0 && j->n_pipelined == 0 &&
         job_all_finished(j)) ||
        (j->phase == SC_JOB_COMPLETED && j->ntasks == 0))
        j->phase = SC_JOB_COMPLETED;
    else if (!j->inqueue)
        j->phase = SC_JOB_PENDING;
    else if (j->n_running >= need)
        j->phase = SC_JOB_RUNNING, j->ran = true;
    else if (j->phase != SC_JOB_RUNNING || j->n_running == 0)
        j->phase = SC_JOB_INQUEUE;
    if (j->groupless || j->in_changed || (j->reported && sc_job_told(j)))
        return;
    j->in_changed = true;
    j->cnext = c->changed_head;
    c->changed_head = j;
}

bool sc_job_gang_ready(const sc_job *j, bool with_pipelined, bool gang)
{
    int ready = j->n_ready + (with_pipelined ? j->n_pipelined : 0);
    int need = gang ? j->min_member : 1;

    if (need < 1)
        need = 1;
    if (ready < need)
        return false;
    /* Volcano skips the per-role minimums of a job whose minMember is below
     * their sum (its webhook sets each task's minimum to its replicas, so a
     * Volcano Job with minAvailable below its replica count is always one):
     * any minMember members make the gang. */
    if (!gang || j->min_member < j->task_min_total)
        return true;
    for (size_t i = 0; i < j->ntask_mins; i++) {
        int have = 0;
        for (size_t k = 0; k < j->ntasks; k++) {
            const sc_task *t = j->tasks[k];
            if (!t->task_name || strcmp(t->task_name, j->task_mins[i].name) != 0)
                continue;
            if (sc_status_ready(t->st) || (with_pipelined && t->st == SC_TASK_PIPELINED))
                have++;
        }
        if (have < j->task_mins[i].min)
            return false;
    }
    return true;
}
