/* model.c - the scheduler's cluster model: nodes, queues, jobs and tasks
 * kept incrementally from the objects the scheduler watches; queues are
 * model_queue.c's, and how they are all accounted (buckets, waiting list,
 * sc_task_move) is model_account.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

/* ---- small helpers ---- */

static char *dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void kv_free(sc_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}

static sc_kv *kv_dup(const sc_kv *src, size_t n)
{
    sc_kv *kv;
    if (!n)
        return NULL;
    kv = calloc(n, sizeof(*kv));
    for (size_t i = 0; kv && i < n; i++) {
        kv[i].key = dup0(src[i].key);
        kv[i].value = dup0(src[i].value ? src[i].value : "");
    }
    return kv;
}

/* ---- the cluster ---- */

sc_cluster *sc_cluster_new(void)
{
    sc_cluster *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    strmap_init(&c->node_map);
    strmap_init(&c->queue_map);
    strmap_init(&c->job_map);
    strmap_init(&c->task_map);
    return c;
}

static void tols_free(sc_task *t)
{
    for (size_t i = 0; i < t->ntols; i++) {
        free((char *)t->tols[i].key);
        free((char *)t->tols[i].value);
    }
    free(t->tols);
}

static void aff_free(sc_task *t)
{
    for (size_t i = 0; i < t->naff; i++) {
        sc_match_expr *e = (sc_match_expr *)t->aff[i].exprs;
        for (size_t k = 0; k < t->aff[i].nexprs; k++) {
            free((char *)e[k].key);
            for (size_t v = 0; v < e[k].nvalues; v++)
                free((char *)e[k].values[v]);
            free(e[k].values);
        }
        free(e);
    }
    free(t->aff);
}

static void taints_free(sc_node *n)
{
    for (size_t i = 0; i < n->ntaints; i++) {
        free((char *)n->taints[i].key);
        free((char *)n->taints[i].value);
    }
    free(n->taints);
}

static void task_free(sc_task *t)
{
    free(t->key);
    free(t->uid);
    free(t->task_name);
    kv_free(t->selector, t->nselector);
    tols_free(t);
    aff_free(t);
    free(t);
}

static void job_free(sc_job *j)
{
    free(j->key);
    free(j->queue_name);
    for (size_t i = 0; i < j->ntask_mins; i++)
        free(j->task_mins[i].name);
    free(j->task_mins);
    free(j->tasks);
    free(j);
}

static void node_free(sc_node *n)
{
    free(n->name);
    kv_free(n->labels, n->nlabels);
    taints_free(n);
    free(n);
}

static void queue_free(sc_queue *q)
{
    free(q->name);
    free(q->parent_name);
    free(q);
}

void sc_cluster_free(sc_cluster *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->njobs; i++) {
        for (size_t k = 0; k < c->jobs[i]->ntasks; k++)
            task_free(c->jobs[i]->tasks[k]);
        job_free(c->jobs[i]);
    }
    for (size_t i = 0; i < c->nnodes; i++)
        node_free(c->nodes[i]);
    for (size_t i = 0; i < c->nqueues; i++)
        queue_free(c->queues[i]);
    sc_quotas_free(c);
    free(c->jobs);
    free(c->nodes);
    free(c->queues);
    for (int i = 4; i < SC_MAXRES; i++)
        free(c->res_names[i]);
    strmap_free(&c->node_map);
    strmap_free(&c->queue_map);
    strmap_free(&c->job_map);
    strmap_free(&c->task_map);
    free(c);
}

size_t sc_node_count(const sc_cluster *c)
{
    return c->nnodes;
}

int sc_grow_arr(void *arrp, size_t *cap, size_t n, size_t elem)
{
    void **arr = arrp;
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* ---- nodes ---- */

static bool kv_equal(const sc_kv *a, size_t na, const sc_kv *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].key, b[i].key) != 0 ||
            strcmp(a[i].value, b[i].value ? b[i].value : "") != 0)
            return false;
    return true;
}

static bool taints_equal(const sc_node *n, const sc_node_spec *s)
{
    if (n->ntaints != s->ntaints)
        return false;
    for (size_t i = 0; i < s->ntaints; i++)
        if (strcmp(n->taints[i].key, s->taints[i].key) != 0 ||
            strcmp(n->taints[i].value, s->taints[i].value ? s->taints[i].value : "") != 0 ||
            n->taints[i].effect != s->taints[i].effect)
            return false;
    return true;
}

sc_node *sc_node_upsert(sc_cluster *c, const sc_node_spec *spec)
{
    sc_node *n = strmap_get(&c->node_map, spec->name);

    if (n) {
        if (memcmp(&n->alloc, &spec->allocatable, sizeof(sc_res)) == 0 &&
            n->ready == spec->ready && n->unschedulable == spec->unschedulable &&
            kv_equal(n->labels, n->nlabels, spec->labels, spec->nlabels) && taints_equal(n, spec))
            return n;
        sc_bucket_out(c, n);
        sc_node_sums_out(c, n);
        kv_free(n->labels, n->nlabels);
        taints_free(n);
    } else {
        n = calloc(1, sizeof(*n));
        if (!n || sc_grow_arr(&c->nodes, &c->nodes_cap, c->nnodes, sizeof(*c->nodes)) < 0 ||
            !(n->name = strdup(spec->name)) || strmap_put(&c->node_map, n->name, n) < 0) {
            if (n)
                free(n->name);
            free(n);
            return NULL;
        }
        n->idx = c->nnodes;
        c->nodes[c->nnodes++] = n;
        n->bucket = -1;
    }
    n->alloc = spec->allocatable;
    n->ready = spec->ready;
    n->unschedulable = spec->unschedulable;
    n->labels = kv_dup(spec->labels, spec->nlabels);
    n->nlabels = n->labels ? spec->nlabels : 0;
    n->taints = spec->ntaints ? calloc(spec->ntaints, sizeof(*n->taints)) : NULL;
    n->ntaints = n->taints ? spec->ntaints : 0;
    for (size_t i = 0; i < n->ntaints; i++) {
        n->taints[i].key = dup0(spec->taints[i].key ? spec->taints[i].key : "");
        n->taints[i].value = dup0(spec->taints[i].value ? spec->taints[i].value : "");
        n->taints[i].effect = spec->taints[i].effect;
    }
    sc_bucket_in(c, n);
    sc_node_sums_in(c, n);
    c->release_epoch++;
    c->epoch++;
    return n;
}

void sc_node_remove(sc_cluster *c, const char *name)
{
    sc_node *n = strmap_get(&c->node_map, name);

    sc_task *t;

    if (!n)
        return;
    c->node_gen++;
    while ((t = n->tasks[SC_NOMINATED]))
        sc_task_move(c, t, SC_TASK_PENDING, NULL, NULL);
    while ((t = n->tasks[SC_ON_NODE])) {
        /* The pod still names the node; its resources are gone. */
        sc_account(c, t, -1);
        sc_place(t, NULL, t->nominated);
        sc_account(c, t, +1);
    }
    sc_bucket_out(c, n);
    sc_node_sums_out(c, n);
    strmap_del(&c->node_map, n->name);
    c->nodes[n->idx] = c->nodes[--c->nnodes];
    c->nodes[n->idx]->idx = n->idx;
    node_free(n);
    c->epoch++;
}

sc_node *sc_node_find(const sc_cluster *c, const char *name)
{
    return name ? strmap_get(&c->node_map, name) : NULL;
}

const char *sc_node_name(const sc_node *n)
{
    return n->name;
}

const sc_res *sc_node_allocatable(const sc_node *n)
{
    return &n->alloc;
}

const sc_res *sc_node_used(const sc_node *n)
{
    return &n->used;
}

/* ---- jobs ---- */

size_t sc_job_count(const sc_cluster *c)
{
    return c->njobs;
}

sc_job *sc_job_at(const sc_cluster *c, size_t i)
{
    return i < c->njobs ? c->jobs[i] : NULL;
}

static sc_job *job_new(sc_cluster *c, const char *key)
{
    sc_job *j = calloc(1, sizeof(*j));
    if (!j || sc_grow_arr(&c->jobs, &c->jobs_cap, c->njobs, sizeof(*c->jobs)) < 0 ||
        !(j->key = strdup(key)) || strmap_put(&c->job_map, j->key, j) < 0) {
        if (j)
            free(j->key);
        free(j);
        return NULL;
    }
    j->idx = c->njobs;
    c->jobs[c->njobs++] = j;
    j->min_member = 1;
    j->preemptable = true;
    j->phase = SC_JOB_PENDING;
    j->told_phase = SC_JOB_PENDING;
    j->queue = sc_queue_get_or_default(c, "default");
    j->queue_name = strdup("default");
    j->queue->njobs++;
    return j;
}

static void job_set_queue(sc_cluster *c, sc_job *j, const char *name)
{
    sc_queue *q = sc_queue_get_or_default(c, name);

    if (!q || q == j->queue)
        return;
    for (size_t k = 0; k < j->ntasks; k++)
        sc_account(c, j->tasks[k], -1);
    j->queue->njobs--;
    j->queue = q;
    q->njobs++;
    free(j->queue_name);
    j->queue_name = strdup(q->name);
    for (size_t k = 0; k < j->ntasks; k++)
        sc_account(c, j->tasks[k], +1);
}

sc_job *sc_job_upsert(sc_cluster *c, const sc_job_spec *spec)
{
    sc_job *j = strmap_get(&c->job_map, spec->key);

    if (!j && !(j = job_new(c, spec->key)))
        return NULL;
    j->implicit = false;
    j->groupless = false;
    job_set_queue(c, j, spec->queue);
    j->min_member = spec->min_member;
    for (size_t i = 0; i < j->ntask_mins; i++)
        free(j->task_mins[i].name);
    free(j->task_mins);
    j->task_mins = spec->nmin_task_member ? calloc(spec->nmin_task_member, sizeof(sc_task_min))
                                          : NULL;
    j->ntask_mins = j->task_mins ? spec->nmin_task_member : 0;
    j->task_min_total = 0;
    for (size_t i = 0; i < j->ntask_mins; i++) {
        j->task_mins[i].name = strdup(spec->min_task_member[i].key);
        j->task_mins[i].min = atoi(spec->min_task_member[i].value);
        if (j->task_mins[i].min > 0) /* saturates: the counts come from outside */
            j->task_min_total = j->task_mins[i].min > INT_MAX - j->task_min_total
                                    ? INT_MAX
                                    : j->task_min_total + j->task_mins[i].min;
    }
    j->min_res = spec->min_resources;
    j->priority = spec->priority;
    j->created = spec->created;
    j->preemptable = spec->preemptable;
    if (spec->inqueue)
        j->inqueue = true;
    sc_job_touch(c, j);
    sc_waiting_update(c, j);
    sc_job_note(c, j);
    return j;
}

static void task_detach(sc_cluster *c, sc_task *t);

/* Takes j off the list of jobs with a phase or message to report. */
static void changed_unlink(sc_cluster *c, sc_job *j)
{
    if (!j->in_changed)
        return;
    for (sc_job **pp = &c->changed_head; *pp; pp = &(*pp)->cnext) {
        if (*pp == j) {
            *pp = j->cnext;
            break;
        }
    }
    j->in_changed = false;
    j->cnext = NULL;
}

void sc_job_orphan(sc_cluster *c, const char *key)
{
    sc_job *j = strmap_get(&c->job_map, key);

    if (!j)
        return;
    if (j->ntasks == 0) {
        sc_job_remove(c, key);
        return;
    }
    /* Its pods used to be dropped with it: a bound one's GPUs looked free
     * while it still ran (the collector deletes a job's PodGroup and pods
     * in no set order). */
    j->groupless = true;
    j->reported = false; /* a PodGroup made again is told everything afresh */
    changed_unlink(c, j);
    sc_waiting_update(c, j);
    c->epoch++;
}

void sc_job_remove(sc_cluster *c, const char *key)
{
    sc_job *j = strmap_get(&c->job_map, key);

    if (!j)
        return;
    while (j->ntasks) {
        sc_task *t = j->tasks[j->ntasks - 1];
        task_detach(c, t);
        task_free(t);
    }
    j->completed = true;
    sc_waiting_update(c, j);
    changed_unlink(c, j);
    j->queue->njobs--;
    strmap_del(&c->job_map, j->key);
    c->jobs[j->idx] = c->jobs[--c->njobs];
    c->jobs[j->idx]->idx = j->idx;
    job_free(j);
    c->epoch++;
}

sc_job *sc_job_find(const sc_cluster *c, const char *key)
{
    return strmap_get(&c->job_map, key);
}

const char *sc_job_key(const sc_job *j)
{
    return j->key;
}

bool sc_job_is_group(const sc_job *j)
{
    return !j->implicit && !j->groupless;
}

sc_queue *sc_job_queue(const sc_job *j)
{
    return j->queue;
}

sc_job_phase sc_job_get_phase(const sc_job *j)
{
    return j->phase;
}

void sc_job_set_completed(sc_cluster *c, sc_job *j)
{
    j->completed = true;
    j->msg[0] = 0;
    sc_waiting_update(c, j);
    sc_job_note(c, j);
}

const char *sc_job_message(const sc_job *j)
{
    return j->msg;
}

size_t sc_job_ntasks(const sc_job *j)
{
    return j->ntasks;
}

sc_task *sc_job_task(const sc_job *j, size_t i)
{
    return i < j->ntasks ? j->tasks[i] : NULL;
}

int sc_job_ready_tasks(const sc_job *j)
{
    return j->n_ready;
}

int sc_job_running_tasks(const sc_job *j)
{
    return j->n_running;
}

int sc_job_task_count(const sc_job *j, enum sc_job_count_kind k)
{
    return k >= 0 && k < SC_JOB_NCOUNTS ? j->n_counts[k] : 0;
}

void sc_job_set_priority(sc_cluster *c, sc_job *j, int32_t priority)
{
    if (j->priority == priority)
        return;
    j->priority = priority;
    /* Waiting jobs may now preempt this one, or this one them. */
    c->release_epoch++;
    sc_job_touch(c, j);
}

void sc_job_set_user(sc_job *j, void *user)
{
    j->user = user;
}

void *sc_job_user(const sc_job *j)
{
    return j->user;
}

/* ---- tasks ---- */

static void task_set_constraints(sc_task *t, const sc_task_spec *spec)
{
    kv_free(t->selector, t->nselector);
    t->selector = kv_dup(spec->node_selector, spec->nnode_selector);
    t->nselector = t->selector ? spec->nnode_selector : 0;
    tols_free(t);
    t->tols = spec->ntolerations ? calloc(spec->ntolerations, sizeof(*t->tols)) : NULL;
    t->ntols = t->tols ? spec->ntolerations : 0;
    for (size_t i = 0; i < t->ntols; i++) {
        t->tols[i] = spec->tolerations[i];
        t->tols[i].key = dup0(spec->tolerations[i].key ? spec->tolerations[i].key : "");
        t->tols[i].value = dup0(spec->tolerations[i].value ? spec->tolerations[i].value : "");
    }
    if (t->naff == 0 && spec->naffinity == 0)
        return;
    aff_free(t);
    t->aff = spec->naffinity ? calloc(spec->naffinity, sizeof(*t->aff)) : NULL;
    t->naff = t->aff ? spec->naffinity : 0;
    for (size_t i = 0; i < t->naff; i++) {
        const sc_affinity_term *src = &spec->affinity[i];
        sc_match_expr *e = src->nexprs ? calloc(src->nexprs, sizeof(*e)) : NULL;
        t->aff[i].exprs = e;
        t->aff[i].nexprs = e ? src->nexprs : 0;
        for (size_t k = 0; k < t->aff[i].nexprs; k++) {
            e[k].key = strdup(src->exprs[k].key);
            e[k].op = src->exprs[k].op;
            e[k].values = src->exprs[k].nvalues ? calloc(src->exprs[k].nvalues, sizeof(char *))
                                                : NULL;
            e[k].nvalues = e[k].values ? src->exprs[k].nvalues : 0;
            for (size_t v = 0; v < e[k].nvalues; v++)
                e[k].values[v] = strdup(src->exprs[k].values[v]);
        }
    }
}

bool sc_task_is_pod(const sc_task *t, const char *uid)
{
    return !t || !t->uid || !uid || !*uid || strcmp(t->uid, uid) == 0;
}

const char *sc_task_uid(const sc_task *t)
{
    return t->uid;
}

sc_task *sc_task_upsert(sc_cluster *c, const sc_task_spec *spec)
{
    sc_task *t = strmap_get(&c->task_map, spec->key);
    sc_node *node = sc_node_find(c, spec->node && *spec->node ? spec->node : NULL);
    sc_task_status st = spec->status;
    const char *uid = spec->uid && *spec->uid ? spec->uid : NULL;

    /* A pod of the same name but another uid: the one the model has was
     * deleted and its job made it again (a Volcano Job's evicted pod), and
     * its deletion was not seen on its own (a watch that resumed, or
     * events of one key merged). Left in place, the old pod's RELEASING
     * state would hold its node's resources, and the new pod pending, for
     * ever. */
    if (t && !sc_task_is_pod(t, uid)) {
        sc_task_remove(c, spec->key);
        t = NULL;
    }
    bool new_task = !t;

    if (!t) {
        sc_job *j = spec->job ? strmap_get(&c->job_map, spec->job) : NULL;
        if (!j) {
            /* A pod without a PodGroup is a gang of one, admitted at once. A
             * named group that has not arrived yet is made now and filled in
             * when its object comes; until then its pods wait, as Volcano's
             * do (they were placed one by one: a partial gang when pods
             * came ahead of their PodGroup). */
            j = job_new(c, spec->job ? spec->job : spec->key);
            if (!j)
                return NULL;
            j->implicit = !spec->job;
            j->groupless = spec->job != NULL;
            j->inqueue = !spec->job;
            j->priority = spec->priority;
            j->created = (double)c->epoch;
        }
        t = calloc(1, sizeof(*t));
        if (!t || !(t->key = strdup(spec->key)) ||
            sc_grow_arr(&j->tasks, &j->cap, j->ntasks, sizeof(*j->tasks)) < 0 ||
            strmap_put(&c->task_map, t->key, t) < 0) {
            if (t)
                free(t->key);
            free(t);
            return NULL;
        }
        t->job = j;
        t->st = SC_TASK_PENDING;
        t->job_idx = j->ntasks;
        j->tasks[j->ntasks++] = t;
        sc_account(c, t, +1);
        c->release_epoch++; /* a new task: its job may fit now */
    }
    /* Our own decisions in flight win over an observation that predates them. */
    if (!node && st == SC_TASK_PENDING &&
        (t->st == SC_TASK_BINDING || t->st == SC_TASK_PIPELINED || t->st == SC_TASK_ALLOCATED))
        st = t->st, node = t->st == SC_TASK_PIPELINED ? NULL : t->node;
    if (t->st == SC_TASK_RELEASING && st != SC_TASK_SUCCEEDED && st != SC_TASK_FAILED)
        st = SC_TASK_RELEASING, node = t->node ? t->node : node;
    if (!t->uid && uid)
        t->uid = strdup(uid); /* (without memory: not known, as before) */
    if (!spec->status_only || new_task) {
        sc_account(c, t, -1);
        t->req = spec->request;
        t->priority = spec->priority;
        free(t->task_name);
        t->task_name = dup0(spec->task_name);
        sc_account(c, t, +1);
        task_set_constraints(t, spec);
    }
    sc_task_move(c, t, st, node, st == SC_TASK_PIPELINED ? t->nominated : NULL);
    sc_job_touch(c, t->job);
    return t;
}

static void task_detach(sc_cluster *c, sc_task *t)
{
    sc_job *j = t->job;
    sc_node *n = t->node, *nom = t->nominated;

    if ((n && sc_status_holds(t->st)) || nom)
        c->release_epoch++;
    sc_account(c, t, -1);
    sc_place(t, NULL, NULL);
    if (n)
        sc_bucket_refresh(c, n);
    if (nom && nom != n)
        sc_bucket_refresh(c, nom);
    j->tasks[t->job_idx] = j->tasks[--j->ntasks];
    j->tasks[t->job_idx]->job_idx = t->job_idx;
    strmap_del(&c->task_map, t->key);
    sc_waiting_update(c, j);
    sc_job_note(c, j);
    c->epoch++;
}

void sc_task_remove(sc_cluster *c, const char *key)
{
    sc_task *t = strmap_get(&c->task_map, key);
    sc_job *j;

    if (!t)
        return;
    j = t->job;
    task_detach(c, t);
    task_free(t);
    if ((j->implicit || j->groupless) && j->ntasks == 0)
        sc_job_remove(c, j->key);
}

sc_task *sc_task_find(const sc_cluster *c, const char *key)
{
    return strmap_get(&c->task_map, key);
}

const char *sc_task_key(const sc_task *t)
{
    return t->key;
}

sc_job *sc_task_job(const sc_task *t)
{
    return t->job;
}

sc_node *sc_task_node(const sc_task *t)
{
    return t->node;
}

sc_task_status sc_task_get_status(const sc_task *t)
{
    return t->st;
}

void sc_task_set_status(sc_cluster *c, sc_task *t, sc_task_status st)
{
    sc_task_move(c, t, st, st == SC_TASK_PENDING ? NULL : t->node, NULL);
    sc_job_touch(c, t->job);
}

void sc_task_unbind(sc_cluster *c, sc_task *t)
{
    if (t->st == SC_TASK_BINDING || t->st == SC_TASK_ALLOCATED)
        sc_task_move(c, t, SC_TASK_PENDING, NULL, NULL);
}

const char *sc_task_message(const sc_task *t)
{
    return t->msg;
}
