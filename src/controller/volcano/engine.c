/* engine.c - the Volcano Job controller's thread: watch, work queue and
 * retry timers (see vcjob.h). The decisions are in reconcile.c and policy.c.
 *
 * The Kubeflow engine's thread (controller/jobs/engine.c) is keyed on its
 * kf_kind table; until it is keyed on the resource (as jobs.md plans) this
 * controller keeps its own small loop of the same shape: a de-duplicated
 * FIFO of (namespace, name), fed by events on Volcano Jobs and on objects a
 * Volcano Job controls, and a full resync when the watch is (re)opened. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "controller/volcano/vc_int.h"
#include "controller/volcano/vcjob.h"

#define EVENT_BATCH 1024
#define RETRY_MS 1000
#define MAX_WAIT_MS 1000
#define VC_API_VERSION "batch.volcano.sh/v1alpha1"

typedef struct vc_key {
    char *ns, *name;
    int64_t due_ms; /* timers only */
    struct vc_key *next;
} vc_key;

struct ty_vcjobs {
    ty_store *s;
    pthread_t thread;
    pthread_mutex_t mu; /* guards stop and w against vcjobs_stop */
    bool stop;
    store_watch *w;
    vc_key *queue, *timers;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static vc_key *key_new(const char *ns, const char *name)
{
    vc_key *k = calloc(1, sizeof(*k));

    if (!k || !(k->ns = strdup(ns)) || !(k->name = strdup(name))) {
        if (k)
            free(k->ns);
        free(k);
        return NULL;
    }
    return k;
}

static void key_free(vc_key *k)
{
    free(k->ns);
    free(k->name);
    free(k);
}

static void free_list(vc_key *k)
{
    while (k) {
        vc_key *n = k->next;
        key_free(k);
        k = n;
    }
}

static bool same(const vc_key *k, const char *ns, const char *name)
{
    return strcmp(k->ns, ns) == 0 && strcmp(k->name, name) == 0;
}

/* Appends (ns, name) to list unless it is there; a timer keeps the earlier due. */
static void add(vc_key **list, const char *ns, const char *name, int64_t due_ms)
{
    vc_key **pp = list, *k;

    if (!ns || !name)
        return;
    for (; (k = *pp); pp = &k->next) {
        if (same(k, ns, name)) {
            if (due_ms < k->due_ms)
                k->due_ms = due_ms;
            return;
        }
    }
    if ((k = key_new(ns, name))) {
        k->due_ms = due_ms;
        *pp = k;
    }
}

/* Moves due timers to the queue; returns ms until the next one (or -1). */
static int64_t timers_fire(ty_vcjobs *v)
{
    int64_t now = now_ms(), next = -1;
    vc_key **pp = &v->timers, *t;

    while ((t = *pp)) {
        if (t->due_ms <= now) {
            *pp = t->next;
            add(&v->queue, t->ns, t->name, 0);
            key_free(t);
            continue;
        }
        if (next < 0 || t->due_ms - now < next)
            next = t->due_ms - now;
        pp = &t->next;
    }
    return next;
}

static void apply_event(ty_vcjobs *v, const store_event *ev)
{
    const json_t *meta = json_object_get(store_obj_json(ev->obj), "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    json_t *r;
    size_t i;

    if (strcmp(ev->resource, api_store_key(&api_vcjob)) == 0) {
        if (ev->type != STORE_DELETED)
            add(&v->queue, ns, json_string_value(json_object_get(meta, "name")), 0);
        return;
    }
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r) {
        const char *api = json_string_value(json_object_get(r, "apiVersion"));
        const char *kind = json_string_value(json_object_get(r, "kind"));
        if (json_is_true(json_object_get(r, "controller")) && api && kind &&
            !strcmp(api, VC_API_VERSION) && !strcmp(kind, "Job"))
            add(&v->queue, ns, json_string_value(json_object_get(r, "name")), 0);
    }
}

static bool stopping(ty_vcjobs *v)
{
    bool stop;
    pthread_mutex_lock(&v->mu);
    stop = v->stop;
    pthread_mutex_unlock(&v->mu);
    return stop;
}

static void drop_watch(ty_vcjobs *v)
{
    pthread_mutex_lock(&v->mu);
    store_watch_close(v->w);
    v->w = NULL;
    pthread_mutex_unlock(&v->mu);
}

/* Watch from now, then queue every job, so nothing changed meanwhile is lost. */
static int resync(ty_vcjobs *v)
{
    store_list l;
    ty_error err;

    ty_error_init(&err);
    pthread_mutex_lock(&v->mu);
    if (!v->stop)
        v->w = store_watch_open(v->s, NULL, NULL, store_current_rv(v->s), &err);
    pthread_mutex_unlock(&v->mu);
    if (!v->w) {
        ty_error_clear(&err);
        return -1;
    }
    if (store_list_objects(v->s, api_store_key(&api_vcjob), NULL, &l, &err) < 0) {
        ty_error_clear(&err);
        return 0;
    }
    for (size_t k = 0; k < l.n; k++) {
        const json_t *meta = json_object_get(store_obj_json(l.items[k]), "metadata");
        add(&v->queue, json_string_value(json_object_get(meta, "namespace")),
            json_string_value(json_object_get(meta, "name")), 0);
    }
    store_list_free(&l);
    return 0;
}

static void work(ty_vcjobs *v)
{
    vc_key *k;

    while ((k = v->queue) && !stopping(v)) {
        time_t wake_at = 0;
        v->queue = k->next;
        if (vc_reconcile(v->s, k->ns, k->name, &wake_at) < 0)
            add(&v->timers, k->ns, k->name, now_ms() + RETRY_MS);
        /* Seconds resolution: look again just after the second ticks over. */
        if (wake_at)
            add(&v->timers, k->ns, k->name,
                now_ms() + ((int64_t)wake_at - (int64_t)time(NULL)) * 1000 + 20);
        key_free(k);
    }
}

static int step(ty_vcjobs *v)
{
    int64_t next = timers_fire(v);
    int timeout = v->queue ? 0 : (next >= 0 && next < MAX_WAIT_MS) ? (int)next : MAX_WAIT_MS;
    store_event ev;
    ty_error err;

    ty_error_init(&err);
    for (int i = 0; i < EVENT_BATCH; i++) {
        int rc = store_watch_next(v->w, i ? 0 : timeout, &ev, &err);
        if (rc < 0) {
            ty_error_clear(&err);
            return -1;
        }
        if (rc == 0)
            break;
        apply_event(v, &ev);
        store_event_release(&ev);
    }
    timers_fire(v);
    work(v);
    return 0;
}

static void *vc_main(void *arg)
{
    ty_vcjobs *v = arg;

    while (!stopping(v)) {
        if (!v->w && resync(v) < 0) {
            if (!stopping(v))
                usleep(100 * 1000); /* do not spin on a failing store */
            continue;
        }
        if (step(v) < 0)
            drop_watch(v);
    }
    drop_watch(v);
    return NULL;
}

ty_vcjobs *vcjobs_start(ty_store *s, ty_error *err)
{
    ty_vcjobs *v = calloc(1, sizeof(*v));

    if (!v) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    v->s = s;
    pthread_mutex_init(&v->mu, NULL);
    if (pthread_create(&v->thread, NULL, vc_main, v) != 0) {
        pthread_mutex_destroy(&v->mu);
        free(v);
        ty_seterr(err, TY_EINTERNAL, "vcjobs: cannot start thread");
        return NULL;
    }
    return v;
}

void vcjobs_stop(ty_vcjobs *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&v->mu);
    v->stop = true;
    if (v->w)
        store_watch_cancel(v->w);
    pthread_mutex_unlock(&v->mu);
    pthread_join(v->thread, NULL);
    free_list(v->queue);
    free_list(v->timers);
    pthread_mutex_destroy(&v->mu);
    free(v);
}
