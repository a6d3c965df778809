/* engine.c - the job engine's threads: watch, work queue, workers and
 * timers (see engine.h). The decisions are in reconcile.c; this file only
 * decides which job to look at, when, and on which worker.
 *
 * Work queue: job keys (kind, namespace, name), each queued at most once,
 * as client-go's workqueue does: a key that is being reconciled is not
 * handed to a second worker; an event for it meanwhile marks it dirty, and
 * it is queued again when its pass ends. Fed by watch events on the job
 * kinds and on pods, services, config maps and PodGroups that a job controls
 * (mapped back through the controller ownerReference, or failing that the
 * job-name and operator-name labels). Timers: a pass that wants another look
 * later (deadline, TTL) or failed (retried after a second) leaves a wake-up
 * time; the earliest per key is kept.
 *
 * JOBS_WORKERS workers reconcile in parallel: a pass spends most of its time
 * waiting for its writes to commit, and with one worker the whole engine
 * waited with it (the end-to-end benchmark's busiest thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/strmap.h"
#include "controller/jobs/engine.h"
#include "api/kinds.h"
#include "controller/jobs/jobs_int.h"

#define EVENT_BATCH 1024
#define RETRY_MS 1000
/* How long the watch thread waits for events at most: a worker may add a
 * timer while it waits. */
#define MAX_WAIT_MS 50
#define JOBS_WORKERS 8

typedef struct job_key {
    const kf_kind *kind;
    char *ns, *name;
    char *id;              /* "kind/ns/name": the queue's set key */
    int64_t due_ms;        /* timers only */
    bool dirty;            /* being reconciled: queued again when its pass ends */
    struct job_key *next;
} job_key;

struct ty_jobs {
    ty_store *s;
    pthread_t thread;
    pthread_t workers[JOBS_WORKERS];
    size_t nworkers;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t work_cv;
    bool stop;
    store_watch *w;
    job_key *queue, *qtail;
    strmap queued;      /* id -> job_key in the queue: a burst of events about
                           1,000 jobs used to scan the queue for each */
    strmap active;      /* id -> its key, while a worker reconciles it */
    job_key *timers;    /* unsorted; few */
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool same_key(const job_key *a, const kf_kind *k, const char *ns, const char *name)
{
    return a->kind == k && strcmp(a->ns, ns) == 0 && strcmp(a->name, name) == 0;
}

static job_key *key_new(const kf_kind *k, const char *ns, const char *name)
{
    job_key *q = calloc(1, sizeof(*q));

    if (!q || !(q->ns = strdup(ns)) || !(q->name = strdup(name)) ||
        asprintf(&q->id, "%s/%s/%s", k->kind, ns, name) < 0) {
        if (q) {
            free(q->ns);
            free(q->name);
        }
        free(q);
        return NULL;
    }
    q->kind = k;
    return q;
}

static void key_free(job_key *q)
{
    free(q->ns);
    free(q->name);
    free(q->id);
    free(q);
}

/* Called with j->mu held. */
static void push(ty_jobs *j, job_key *q)
{
    if (strmap_put(&j->queued, q->id, q) < 0) {
        key_free(q);
        return;
    }
    q->next = NULL;
    if (j->qtail)
        j->qtail->next = q;
    else
        j->queue = q;
    j->qtail = q;
    pthread_cond_signal(&j->work_cv);
}

/* Queues the key unless it is queued already; with j->mu held. */
static void enqueue(ty_jobs *j, const kf_kind *k, const char *ns, const char *name)
{
    job_key *q;
    char id[600]; /* names are at most 253 characters, namespaces 63 */

    if (!k || !ns || !name)
        return;
    snprintf(id, sizeof(id), "%s/%s/%s", k->kind, ns, name);
    if (strmap_get(&j->queued, id))
        return;
    if ((q = strmap_get(&j->active, id))) {
        q->dirty = true;
        return;
    }
    if ((q = key_new(k, ns, name)))
        push(j, q);
}

static void timer_add(ty_jobs *j, const job_key *key, int64_t due_ms)
{
    job_key *t;

    for (t = j->timers; t; t = t->next) {
        if (same_key(t, key->kind, key->ns, key->name)) {
            if (due_ms < t->due_ms)
                t->due_ms = due_ms;
            return;
        }
    }
    if (!(t = key_new(key->kind, key->ns, key->name)))
        return;
    t->due_ms = due_ms;
    t->next = j->timers;
    j->timers = t;
}

/* Moves due timers to the queue; returns ms until the next one (or -1). */
static int64_t timers_fire(ty_jobs *j)
{
    int64_t now = wall_ms(), next = -1;
    job_key **pp = &j->timers, *t;

    while ((t = *pp)) {
        if (t->due_ms <= now) {
            *pp = t->next;
            enqueue(j, t->kind, t->ns, t->name);
            key_free(t);
            continue;
        }
        if (next < 0 || t->due_ms - now < next)
            next = t->due_ms - now;
        pp = &t->next;
    }
    return next;
}

static void free_list(job_key *q)
{
    while (q) {
        job_key *n = q->next;
        key_free(q);
        q = n;
    }
}

/* ---- events to keys ---- */

static const kf_kind *kind_for_store_key(const char *resource)
{
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);

    for (size_t i = 0; i < n; i++)
        if (strcmp(api_store_key(kinds[i]->resource), resource) == 0)
            return kinds[i];
    return NULL;
}

static const kf_kind *kind_for_operator(const char *op)
{
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);

    for (size_t i = 0; op && i < n; i++)
        if (strcmp(kinds[i]->operator_name, op) == 0)
            return kinds[i];
    return NULL;
}

/* The job controlling a pod, service or config map, if any. */
static void enqueue_owner(ty_jobs *j, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const json_t *labels = json_object_get(meta, "labels");
    size_t i;
    json_t *r;

    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r) {
        const kf_kind *k = kf_kind_for(json_string_value(json_object_get(r, "kind")));
        if (k && json_is_true(json_object_get(r, "controller"))) {
            enqueue(j, k, ns, json_string_value(json_object_get(r, "name")));
            return;
        }
    }
    enqueue(j, kind_for_operator(json_string_value(json_object_get(labels, JOBS_LABEL_OPERATOR))),
            ns, json_string_value(json_object_get(labels, JOBS_LABEL_JOB_NAME)));
}

/* The resource is looked at first: the JSON of an object this engine does
 * not follow (Events are a third of all writes) is never read, so never
 * parsed again when the store dropped its tree. */
static void apply_event(ty_jobs *j, const store_event *ev)
{
    const json_t *obj, *meta;
    const kf_kind *k;

    if (!strcmp(ev->resource, "pods") || !strcmp(ev->resource, "services") ||
        !strcmp(ev->resource, "configmaps") ||
        !strcmp(ev->resource, api_store_key(&api_podgroup))) {
        enqueue_owner(j, store_obj_json(ev->obj));
        return;
    }
    if (!(k = kind_for_store_key(ev->resource)))
        return;
    obj = store_obj_json(ev->obj);
    meta = json_object_get(obj, "metadata");
    if (ev->type == STORE_DELETED) {
        jobs_metric_bump("training_operator_jobs_deleted_total",
                         json_string_value(json_object_get(meta, "namespace")), k);
        return;
    }
    enqueue(j, k, json_string_value(json_object_get(meta, "namespace")),
            json_string_value(json_object_get(meta, "name")));
}

/* ---- the threads ---- */

static bool stopping(ty_jobs *j)
{
    bool stop;
    pthread_mutex_lock(&j->mu);
    stop = j->stop;
    pthread_mutex_unlock(&j->mu);
    return stop;
}

static void drop_watch(ty_jobs *j)
{
    pthread_mutex_lock(&j->mu);
    store_watch_close(j->w);
    j->w = NULL;
    pthread_mutex_unlock(&j->mu);
}

/* Watch from now, then queue every job: nothing that changed meanwhile is
 * missed, and every job gets a first look (after a restart, or after this
 * thread fell behind the watch history). */
static int resync(ty_jobs *j)
{
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);
    ty_error err;

    ty_error_init(&err);
    pthread_mutex_lock(&j->mu);
    if (!j->stop)
        j->w = store_watch_open(j->s, NULL, NULL, store_current_rv(j->s), &err);
    pthread_mutex_unlock(&j->mu);
    if (!j->w) {
        ty_error_clear(&err);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        store_list l;
        if (store_list_objects(j->s, api_store_key(kinds[i]->resource), NULL, &l, &err) < 0) {
            ty_error_clear(&err);
            continue;
        }
        pthread_mutex_lock(&j->mu);
        for (size_t k = 0; k < l.n; k++) {
            const char *ns, *name;
            store_obj_key(l.items[k], &ns, &name);
            enqueue(j, kinds[i], ns, name);
        }
        pthread_mutex_unlock(&j->mu);
        store_list_free(&l);
    }
    return 0;
}

/* Takes the next key no other worker holds; NULL when stopping. */
static job_key *take(ty_jobs *j)
{
    job_key *q;

    pthread_mutex_lock(&j->mu);
    while (!j->stop && !j->queue)
        pthread_cond_wait(&j->work_cv, &j->mu);
    if (j->stop) {
        pthread_mutex_unlock(&j->mu);
        return NULL;
    }
    q = j->queue;
    j->queue = q->next;
    if (!j->queue)
        j->qtail = NULL;
    strmap_del(&j->queued, q->id);
    if (strmap_put(&j->active, q->id, q) < 0) {
        /* cannot mark it: put it back and let another round try */
        pthread_mutex_unlock(&j->mu);
        key_free(q);
        return NULL;
    }
    pthread_mutex_unlock(&j->mu);
    return q;
}

static void done(ty_jobs *j, job_key *q, bool failed, time_t wake_at)
{
    pthread_mutex_lock(&j->mu);
    strmap_del(&j->active, q->id);
    if (failed)
        timer_add(j, q, wall_ms() + RETRY_MS);
    /* Seconds resolution: look again just after the second ticks over. */
    if (wake_at)
        timer_add(j, q, (int64_t)wake_at * 1000 + 20);
    if (q->dirty) {
        q->dirty = false;
        push(j, q); /* the key goes round again */
        q = NULL;
    }
    pthread_mutex_unlock(&j->mu);
    if (q)
        key_free(q);
}

static void *worker_main(void *arg)
{
    ty_jobs *j = arg;
    job_key *q;

    while (!stopping(j)) {
        time_t wake_at = 0;
        bool failed;
        if (!(q = take(j)))
            continue;
        failed = jobs_reconcile(j->s, q->kind, q->ns, q->name, &wake_at) < 0;
        done(j, q, failed, wake_at);
    }
    return NULL;
}

/* Waits for events, applies a batch and fires due timers. Returns -1 when
 * the watch ended. */
static int step(ty_jobs *j)
{
    int64_t next;
    int timeout;
    store_event ev;
    ty_error err;
    int rc;

    pthread_mutex_lock(&j->mu);
    next = timers_fire(j);
    pthread_mutex_unlock(&j->mu);
    timeout = (next >= 0 && next < MAX_WAIT_MS) ? (int)next : MAX_WAIT_MS;
    ty_error_init(&err);
    for (int i = 0; i < EVENT_BATCH; i++) {
        rc = store_watch_next(j->w, i ? 0 : timeout, &ev, &err);
        if (rc < 0) {
            ty_error_clear(&err);
            return -1;
        }
        if (rc == 0)
            break;
        pthread_mutex_lock(&j->mu);
        apply_event(j, &ev);
        pthread_mutex_unlock(&j->mu);
        store_event_release(&ev);
    }
    return 0;
}

static void *jobs_main(void *arg)
{
    ty_jobs *j = arg;

    while (!stopping(j)) {
        if (!j->w && resync(j) < 0) {
            if (!stopping(j))
                usleep(100 * 1000); /* do not spin on a failing store */
            continue;
        }
        if (step(j) < 0)
            drop_watch(j);
    }
    drop_watch(j);
    return NULL;
}

ty_jobs *jobs_start(ty_store *s, ty_error *err)
{
    ty_jobs *j = calloc(1, sizeof(*j));

    if (!j) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    j->s = s;
    strmap_init(&j->queued);
    strmap_init(&j->active);
    jobs_metrics_declare();
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->work_cv, NULL);
    for (size_t i = 0; i < JOBS_WORKERS; i++) {
        if (pthread_create(&j->workers[i], NULL, worker_main, j) != 0)
            break;
        j->nworkers++;
    }
    if (j->nworkers && pthread_create(&j->thread, NULL, jobs_main, j) == 0)
        return j;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    pthread_cond_broadcast(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
    for (size_t i = 0; i < j->nworkers; i++)
        pthread_join(j->workers[i], NULL);
    pthread_cond_destroy(&j->work_cv);
    pthread_mutex_destroy(&j->mu);
    strmap_free(&j->queued);
    strmap_free(&j->active);
    free(j);
    ty_seterr(err, TY_EINTERNAL, "jobs: cannot start threads");
    return NULL;
}

void jobs_stop(ty_jobs *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    if (j->w)
        store_watch_cancel(j->w);
    pthread_cond_broadcast(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->thread, NULL);
    for (size_t i = 0; i < j->nworkers; i++)
        pthread_join(j->workers[i], NULL);
    free_list(j->queue);
    strmap_free(&j->queued);
    strmap_free(&j->active); /* each worker freed the key it held */
    free_list(j->timers);
    pthread_cond_destroy(&j->work_cv);
    pthread_mutex_destroy(&j->mu);
    free(j);
}
