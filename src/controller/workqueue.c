/* workqueue.c - watch, work queue, workers and timers of a controller (see
 * workqueue.h). */
#include "controller/workqueue.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "base/strmap.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "client/informer.h"
#include "client/kc_cache.h"

#define EVENT_BATCH 1024
/* A failed pass is retried after RETRY_MS, doubled with each failure in a
 * row up to RETRY_MAX_MS (client-go's per-item exponential backoff, with a
 * shorter ceiling): a job whose pods can never be made does not write a
 * FailedCreate Event every second for ever. */
#define RETRY_MS 1000
#define RETRY_MAX_MS 16000
/* How long the watch thread waits for events at most: a worker may add a
 * timer while it waits. */
#define MAX_WAIT_MS 50
#define MAX_WORKERS 64
/* How many resourceVersions of the events that come during a pass are kept
 * to recognise the pass's own write among them. */
#define DIRTY_RVS 4

typedef struct wq_key {
    char *key;
    int64_t due_ms;      /* timers only: CLOCK_MONOTONIC */
    /* Events that came while it was being reconciled (it is queued again
     * when its pass ends), and the resourceVersions of the last few ("":
     * not known): a pass's own write may be among them (wq_wrote). */
    unsigned dirty_n;
    char dirty_rv[DIRTY_RVS][TY_RV_MAX];
    struct wq_key *next;
} wq_key;

typedef struct wq_fail {
    unsigned n;   /* passes failed in a row */
    char key[];   /* the map's key */
} wq_fail;

typedef struct wq_note {
    char rv[TY_RV_MAX];
    char key[]; /* the map's key */
} wq_note;

struct ty_workqueue {
    ty_kc *s;            /* what passes use: the client, or cs */
    ty_kc *base;         /* the client given */
    ty_kc *cs;           /* the cache's client (wq_ops.cache), or NULL */
    char *name;
    wq_ops ops;
    void *ctx;
    pthread_t thread;
    pthread_t workers[MAX_WORKERS];
    size_t nworkers;
    ty_informer *inf;    /* the watch: ops.resources, listed by ops.resync */
    pthread_mutex_t mu;  /* guards everything below */
    pthread_cond_t work_cv;
    bool stop;
    wq_key *queue, *qtail;
    strmap queued;       /* key -> wq_key in the queue */
    strmap active;       /* key -> its wq_key, while a worker reconciles it */
    wq_key *timers;      /* unsorted; few */
    strmap wrote;        /* key -> wq_note: a write of the controller's own whose
                            event the watch thread is still to see (wq_wrote) */
    strmap fails;        /* key -> wq_fail, while its passes fail */
    /* Counted under mu, published by the watch thread (publish); every
     * failed pass is retried. */
    uint64_t adds, passes_ok, passes_failed, passes_requeue_after, own_writes;
    size_t depth;
};

/* Timers run on the monotonic clock (ty_now_ms): a retry is a duration, and
 * a step of the wall clock must not bring it early or late. This is the
 * monotonic time of a wall-clock time (ms since the epoch), as the two
 * clocks stand now. */
static int64_t mono_of_wall_ms(int64_t wall)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ty_now_ms() + wall - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static wq_key *key_new(const char *key)
{
    wq_key *k = calloc(1, sizeof(*k));

    if (!k || !(k->key = strdup(key))) {
        free(k);
        return NULL;
    }
    return k;
}

static void key_free(wq_key *k)
{
    free(k->key);
    free(k);
}

static void free_list(wq_key *k)
{
    while (k) {
        wq_key *n = k->next;
        key_free(k);
        k = n;
    }
}

/* ---- the queue (q->mu held) ---- */

static void push(ty_workqueue *q, wq_key *k)
{
    if (strmap_put(&q->queued, k->key, k) < 0) {
        key_free(k);
        return;
    }
    k->next = NULL;
    q->adds++;
    q->depth++;
    if (q->qtail)
        q->qtail->next = k;
    else
        q->queue = k;
    q->qtail = k;
    pthread_cond_signal(&q->work_cv);
}

static void add_locked(ty_workqueue *q, const char *key, const char *rv)
{
    wq_key *k;

    if (strmap_get(&q->queued, key))
        return;
    if ((k = strmap_get(&q->active, key))) {
        snprintf(k->dirty_rv[k->dirty_n++ % DIRTY_RVS], TY_RV_MAX, "%s", rv);
        return;
    }
    if ((k = key_new(key)))
        push(q, k);
}

ty_kc *wq_client(ty_workqueue *q)
{
    return q->s;
}

void wq_add(ty_workqueue *q, const char *key)
{
    wq_add_event(q, key, "");
}

/* Whether the event at rv is key's own write (wq_wrote), forgetting the
 * note once its event came. resourceVersions are opaque: an event of
 * another rv is somebody else's write, before or after, and the note waits
 * for its own (the watch delivers every event in order; a resync forgets
 * every note). */
static bool own_write(ty_workqueue *q, const char *key, const char *rv)
{
    wq_note *w = *rv ? strmap_get(&q->wrote, key) : NULL;

    if (!w || strcmp(rv, w->rv))
        return false;
    strmap_del(&q->wrote, key);
    free(w);
    return true;
}

void wq_add_event(ty_workqueue *q, const char *key, const char *rv)
{
    if (!key || !*key)
        return;
    pthread_mutex_lock(&q->mu);
    if (own_write(q, key, rv))
        q->own_writes++;
    else
        add_locked(q, key, rv);
    pthread_mutex_unlock(&q->mu);
}

/* Whether one of the last events k got during its pass was at rv. */
static bool dirty_at(const wq_key *k, const char *rv)
{
    for (unsigned i = 0; i < k->dirty_n && i < DIRTY_RVS; i++)
        if (!strcmp(k->dirty_rv[i], rv))
            return true;
    return false;
}

void wq_wrote(ty_workqueue *q, const char *key, const char *rv)
{
    wq_key *k;
    wq_note *w;

    if (!rv || !*rv)
        return;
    pthread_mutex_lock(&q->mu);
    k = strmap_get(&q->active, key);
    if (k && k->dirty_n && dirty_at(k, rv)) {
        /* Its event came during the pass: nothing more when it was alone. */
        if (k->dirty_n == 1) {
            k->dirty_n = 0;
            q->own_writes++;
        }
    } else if (k && k->dirty_n > DIRTY_RVS) {
        /* too many events to tell: the key goes round again anyway */
    } else if ((w = malloc(sizeof(*w) + strlen(key) + 1))) {
        free(strmap_del(&q->wrote, key)); /* an older note (its event missed) */
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
        strcpy(w->key, key);
        if (strmap_put(&q->wrote, w->key, w) < 0)
            free(w);
    }
    pthread_mutex_unlock(&q->mu);
}

static void timer_add(ty_workqueue *q, const char *key, int64_t due_ms)
{
    wq_key *t;

    for (t = q->timers; t; t = t->next) {
        if (strcmp(t->key, key) == 0) {
            if (due_ms < t->due_ms)
                t->due_ms = due_ms;
            return;
        }
    }
    if (!(t = key_new(key)))
        return;
    t->due_ms = due_ms;
    t->next = q->timers;
    q->timers = t;
}

/* Moves due timers to the queue; returns ms until the next one (or -1). */
static int64_t timers_fire(ty_workqueue *q)
{
    int64_t now = ty_now_ms(), next = -1;
    wq_key **pp = &q->timers, *t;

    while ((t = *pp)) {
        if (t->due_ms <= now) {
            *pp = t->next;
            add_locked(q, t->key, 0);
            key_free(t);
            continue;
        }
        if (next < 0 || t->due_ms - now < next)
            next = t->due_ms - now;
        pp = &t->next;
    }
    return next;
}

/* ---- workers ---- */

static bool stopping(ty_workqueue *q)
{
    bool stop;
    pthread_mutex_lock(&q->mu);
    stop = q->stop;
    pthread_mutex_unlock(&q->mu);
    return stop;
}

/* The next key no other worker holds; NULL when stopping. */
static wq_key *take(ty_workqueue *q)
{
    wq_key *k;

    pthread_mutex_lock(&q->mu);
    while (!q->stop && !q->queue)
        pthread_cond_wait(&q->work_cv, &q->mu);
    if (q->stop) {
        pthread_mutex_unlock(&q->mu);
        return NULL;
    }
    k = q->queue;
    q->queue = k->next;
    if (!q->queue)
        q->qtail = NULL;
    strmap_del(&q->queued, k->key);
    q->depth--;
    if (strmap_put(&q->active, k->key, k) < 0) {
        /* cannot mark it as taken: try it again in a second */
        timer_add(q, k->key, ty_now_ms() + RETRY_MS);
        pthread_mutex_unlock(&q->mu);
        key_free(k);
        return NULL;
    }
    pthread_mutex_unlock(&q->mu);
    return k;
}

/* How long after this failure of key's its next pass comes. Under mu. */
static int64_t retry_ms(ty_workqueue *q, const char *key)
{
    wq_fail *f = strmap_get(&q->fails, key);
    size_t len;

    if (!f) {
        len = strlen(key);
        if (!(f = malloc(sizeof(*f) + len + 1)))
            return RETRY_MS;
        f->n = 0;
        memcpy(f->key, key, len + 1);
        if (strmap_put(&q->fails, f->key, f) < 0) {
            free(f);
            return RETRY_MS;
        }
    }
    if (f->n < 16)
        f->n++;
    return f->n > 4 ? RETRY_MAX_MS : (int64_t)RETRY_MS << (f->n - 1);
}

static void done(ty_workqueue *q, wq_key *k, bool failed, time_t wake_at)
{
    pthread_mutex_lock(&q->mu);
    strmap_del(&q->active, k->key);
    if (failed) {
        q->passes_failed++;
        timer_add(q, k->key, ty_now_ms() + retry_ms(q, k->key));
    } else {
        free(strmap_del(&q->fails, k->key)); /* forgotten: the next failure waits 1 s */
        if (wake_at)
            q->passes_requeue_after++;
        else
            q->passes_ok++;
    }
    /* Seconds resolution: look again just after the second ticks over. */
    if (wake_at)
        timer_add(q, k->key, mono_of_wall_ms((int64_t)wake_at * 1000 + 20));
    if (k->dirty_n) {
        k->dirty_n = 0;
        push(q, k); /* the key goes round again */
        k = NULL;
    }
    pthread_mutex_unlock(&q->mu);
    if (k)
        key_free(k);
}

static void *worker_main(void *arg)
{
    ty_workqueue *q = arg;
    wq_key *k;

    ty_thread_upstream_self(); /* what it makes, others drain (base/thread.h) */

    while (!stopping(q)) {
        time_t wake_at = 0;
        bool failed;
        if (!(k = take(q)))
            continue;
        failed = q->ops.reconcile(q, k->key, &wake_at, q->ctx) < 0;
        done(q, k, failed, wake_at);
    }
    return NULL;
}

/* ---- the watch thread ----
 *
 * An informer (client/informer.h) that lists nothing itself: the
 * controller's resync does, in on_relist, after the watch opened, so that
 * nothing changed meanwhile is missed and every object gets a first look.
 * The informer opens it again after it fell behind the history (TY_EGONE),
 * with a backoff while that fails. */

static void on_relist(ty_informer *inf, void *ctx)
{
    ty_workqueue *q = ctx;

    (void)inf;
    /* The resync looks at everything: notes of writes whose events were
     * missed would only drop a later event. */
    pthread_mutex_lock(&q->mu);
    strmap_free_values(&q->wrote);
    strmap_init(&q->wrote);
    pthread_mutex_unlock(&q->mu);
    q->ops.resync(q, q->s, q->ctx);
}

static void on_events(ty_informer *inf, const kc_event *evs, size_t n, unsigned flags,
                      void *ctx)
{
    ty_workqueue *q = ctx;

    (void)inf, (void)flags;
    for (size_t i = 0; i < n; i++)
        q->ops.on_event(q, &evs[i], q->ctx);
}

/* Sets the queue's series to its counts (a scrape sees them at most one
 * step late). */
static void publish(ty_workqueue *q)
{
    char name[160], res[200];
    uint64_t adds, ok, failed, later, own;
    size_t depth;

    pthread_mutex_lock(&q->mu);
    adds = q->adds;
    ok = q->passes_ok;
    failed = q->passes_failed;
    later = q->passes_requeue_after;
    own = q->own_writes;
    depth = q->depth;
    pthread_mutex_unlock(&q->mu);
    snprintf(name, sizeof(name), "name=\"%s\"", q->name);
    ty_metric_set("workqueue_adds_total", name, (double)adds);
    ty_metric_set("workqueue_retries_total", name, (double)failed);
    ty_metric_set("workqueue_depth", name, (double)depth);
    ty_metric_set("trainyard_workqueue_own_writes_total", name, (double)own);
    snprintf(res, sizeof(res), "controller=\"%s\",result=\"success\"", q->name);
    ty_metric_set("controller_runtime_reconcile_total", res, (double)ok);
    snprintf(res, sizeof(res), "controller=\"%s\",result=\"error\"", q->name);
    ty_metric_set("controller_runtime_reconcile_total", res, (double)failed);
    snprintf(res, sizeof(res), "controller=\"%s\",result=\"requeue_after\"", q->name);
    ty_metric_set("controller_runtime_reconcile_total", res, (double)later);
}

/* Fires due timers, then waits for events (a batch goes to on_event) until
 * the next timer is due, at most MAX_WAIT_MS: a worker may add a timer
 * meanwhile. */
static void *watch_main(void *arg)
{
    ty_workqueue *q = arg;
    int64_t next;
    int timeout;

    for (;;) {
        pthread_mutex_lock(&q->mu);
        next = timers_fire(q);
        pthread_mutex_unlock(&q->mu);
        timeout = (next >= 0 && next < MAX_WAIT_MS) ? (int)next : MAX_WAIT_MS;
        if (inf_poll(q->inf, timeout) < 0)
            break; /* stopping */
        publish(q);
    }
    return NULL;
}

/* ---- start / stop ---- */

static void stop_workers(ty_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    inf_cancel(q->inf);
    pthread_cond_broadcast(&q->work_cv);
    pthread_mutex_unlock(&q->mu);
    for (size_t i = 0; i < q->nworkers; i++)
        pthread_join(q->workers[i], NULL);
}

static void free_queue(ty_workqueue *q)
{
    free_list(q->queue);
    free_list(q->timers);
    strmap_free(&q->queued);
    strmap_free(&q->active); /* each worker freed the key it held */
    strmap_free_values(&q->wrote);
    strmap_free_values(&q->fails);
    inf_free(q->inf);
    kc_free(q->cs);
    pthread_cond_destroy(&q->work_cv);
    pthread_mutex_destroy(&q->mu);
    free(q->name);
    free(q);
}

/* "wq-NAME[SUFFIX]" as top -H and perf show it (at most 15 bytes). */
static void thread_name(pthread_t t, const char *name, const char *suffix)
{
    char buf[16];
    size_t n = sizeof(buf) - strlen(suffix) - 1;

    snprintf(buf, sizeof(buf), "wq-%.*s%s", (int)(n > 3 ? n - 3 : 0), name, suffix);
    ty_thread_setup(t, buf, TY_THREAD_BACKGROUND);
}

ty_workqueue *wq_start(ty_kc *s, const char *name, size_t workers, const wq_ops *ops,
                       void *ctx, ty_error *err)
{
    ty_workqueue *q = calloc(1, sizeof(*q));

    if (!q || !(q->name = strdup(name))) {
        free(q);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    q->s = q->base = s;
    q->ops = *ops;
    bool cache = ops->cache && ops->cache[0] && (ops->cache_always || !kc_reads_local(s));
    if (cache && !(q->cs = kc_cache_new(s, err))) {
        free(q->name);
        free(q);
        return NULL;
    }
    if (q->cs)
        q->s = q->cs;
    q->ctx = ctx;
    ty_metric_declare("workqueue_adds_total", TY_COUNTER,
                      "Total number of adds handled by workqueue");
    ty_metric_declare("workqueue_retries_total", TY_COUNTER,
                      "Total number of retries handled by workqueue");
    ty_metric_declare("workqueue_depth", TY_GAUGE, "Current depth of workqueue");
    ty_metric_declare("trainyard_workqueue_own_writes_total", TY_COUNTER,
                      "Events of the controller's own writes that brought no pass");
    ty_metric_declare("controller_runtime_reconcile_total", TY_COUNTER,
                      "Total number of reconciliations per controller");
    strmap_init(&q->queued);
    strmap_init(&q->active);
    strmap_init(&q->wrote);
    strmap_init(&q->fails);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work_cv, NULL);
    if (!(q->inf = inf_new(s, &(inf_config){.name = name, .watch = ops->resources,
                                            .list = cache ? ops->cache : NULL,
                                            .cache = cache, .batch = EVENT_BATCH},
                           &(inf_handlers){.on_relist = on_relist, .on_events = on_events},
                           q, err))) {
        free_queue(q);
        return NULL;
    }
    if (q->cs)
        kc_cache_attach(q->cs, q->inf);
    if (workers < 1)
        workers = 1;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    for (size_t i = 0; i < workers; i++) {
        if (pthread_create(&q->workers[i], NULL, worker_main, q) != 0)
            break;
        thread_name(q->workers[i], q->name, "");
        q->nworkers++;
    }
    /* The watch is opened and what exists queued before wq_start returns,
     * so that a change made after it comes only as an event (opened on the
     * thread, an object created meanwhile could be both listed and seen as an
     * event: a second pass at once after a failed one). If it cannot open
     * now, the thread keeps trying. */
    if (q->nworkers)
        inf_poll(q->inf, 0);
    if (q->nworkers && pthread_create(&q->thread, NULL, watch_main, q) == 0) {
        thread_name(q->thread, q->name, "-watch");
        return q;
    }
    stop_workers(q);
    free_queue(q);
    ty_seterr(err, TY_EINTERNAL, "%s: cannot start threads", name);
    return NULL;
}

void wq_stop(ty_workqueue *q)
{
    if (!q)
        return;
    stop_workers(q);
    pthread_join(q->thread, NULL);
    publish(q); /* the last passes' counts */
    free_queue(q);
}
