/* engine.c - the job engine's thread: watch, work queue and timers (see
 * engine.h). The decisions are in reconcile.c; this file only decides which
 * job to look at, and when.
 *
 * Work queue: job keys (kind, namespace, name), each queued at most once.
 * Fed by watch events on the job kinds and on pods, services and config maps
 * that a job controls (mapped back through the controller ownerReference, or
 * failing that the job-name and operator-name labels). Timers: a pass that
 * wants another look later (deadline, TTL) or failed (retried after a second)
 * leaves a wake-up time; the earliest per key is kept.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "controller/jobs/engine.h"
#include "api/kinds.h"
#include "controller/jobs/jobs_int.h"

#define EVENT_BATCH 1024
#define RETRY_MS 1000
#define MAX_WAIT_MS 1000

typedef struct job_key {
    const kf_kind *kind;
    char *ns, *name;
    int64_t due_ms;        /* timers only */
    struct job_key *next;
} job_key;

struct ty_jobs {
    ty_store *s;
    pthread_t thread;
    pthread_mutex_t mu; /* guards stop and w against jobs_stop */
    bool stop;
    store_watch *w;
    job_key *queue, *qtail;
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

    if (!q || !(q->ns = strdup(ns)) || !(q->name = strdup(name))) {
        if (q)
            free(q->ns);
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
    free(q);
}

static void enqueue(ty_jobs *j, const kf_kind *k, const char *ns, const char *name)
{
    job_key *q;

    if (!k || !ns || !name)
        return;
    for (q = j->queue; q; q = q->next)
        if (same_key(q, k, ns, name))
            return;
    if (!(q = key_new(k, ns, name)))
        return;
    if (j->qtail)
        j->qtail->next = q;
    else
        j->queue = q;
    j->qtail = q;
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

static void apply_event(ty_jobs *j, const store_event *ev)
{
    const json_t *obj = store_obj_json(ev->obj);
    const json_t *meta = json_object_get(obj, "metadata");
    const kf_kind *k;

    if (!strcmp(ev->resource, "pods") || !strcmp(ev->resource, "services") ||
        !strcmp(ev->resource, "configmaps") ||
        !strcmp(ev->resource, api_store_key(&api_podgroup))) {
        enqueue_owner(j, obj);
        return;
    }
    if (!(k = kind_for_store_key(ev->resource)))
        return;
    if (ev->type == STORE_DELETED) {
        jobs_metric_bump("training_operator_jobs_deleted_total",
                         json_string_value(json_object_get(meta, "namespace")), k);
        return;
    }
    enqueue(j, k, json_string_value(json_object_get(meta, "namespace")),
            json_string_value(json_object_get(meta, "name")));
}

/* ---- the thread ---- */

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
        for (size_t k = 0; k < l.n; k++) {
            const json_t *meta = json_object_get(store_obj_json(l.items[k]), "metadata");
            enqueue(j, kinds[i], json_string_value(json_object_get(meta, "namespace")),
                    json_string_value(json_object_get(meta, "name")));
        }
        store_list_free(&l);
    }
    return 0;
}

static void work(ty_jobs *j)
{
    job_key *q;

    while ((q = j->queue) && !stopping(j)) {
        time_t wake_at = 0;
        j->queue = q->next;
        if (!j->queue)
            j->qtail = NULL;
        if (jobs_reconcile(j->s, q->kind, q->ns, q->name, &wake_at) < 0)
            timer_add(j, q, wall_ms() + RETRY_MS);
        /* Seconds resolution: look again just after the second ticks over. */
        if (wake_at)
            timer_add(j, q, (int64_t)wake_at * 1000 + 20);
        key_free(q);
    }
}

/* Waits for events (not at all when work is queued), applies a batch, fires
 * due timers and works the queue. Returns -1 when the watch ended. */
static int step(ty_jobs *j)
{
    int64_t next = timers_fire(j);
    int timeout = j->queue ? 0 : (next >= 0 && next < MAX_WAIT_MS) ? (int)next : MAX_WAIT_MS;
    store_event ev;
    ty_error err;
    int rc;

    ty_error_init(&err);
    for (int i = 0; i < EVENT_BATCH; i++) {
        rc = store_watch_next(j->w, i ? 0 : timeout, &ev, &err);
        if (rc < 0) {
            ty_error_clear(&err);
            return -1;
        }
        if (rc == 0)
            break;
        apply_event(j, &ev);
        store_event_release(&ev);
    }
    timers_fire(j);
    work(j);
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
    jobs_metrics_declare();
    pthread_mutex_init(&j->mu, NULL);
    if (pthread_create(&j->thread, NULL, jobs_main, j) != 0) {
        pthread_mutex_destroy(&j->mu);
        free(j);
        ty_seterr(err, TY_EINTERNAL, "jobs: cannot start thread");
        return NULL;
    }
    return j;
}

void jobs_stop(ty_jobs *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    if (j->w)
        store_watch_cancel(j->w);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->thread, NULL);
    free_list(j->queue);
    free_list(j->timers);
    pthread_mutex_destroy(&j->mu);
    free(j);
}
