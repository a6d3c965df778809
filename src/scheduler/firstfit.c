/* firstfit.c - the placeholder placement behind sched.h: each pending pod goes
 * to the first Ready, schedulable node whose allocatable resources still hold
 * its requests. No gangs, queues or priorities yet (the gang scheduler replaces
 * this file, not the interface).
 *
 * A cycle runs after pod or node changes (batched for a few milliseconds) and
 * works from one consistent list of nodes and pods. */
#include "scheduler/sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/timeutil.h"
#include "controller/events.h"
#include "model/quantity.h"

#define MAX_RES 16          /* distinct resource names tracked per node */
#define BATCH_MS 5          /* how long to gather events before a cycle */
#define COMPONENT "trainyard-scheduler"

struct ty_sched {
    ty_store *store;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t w_mu; /* guards w against sched_stop's cancel while it is reopened */
    store_watch *w;
};

typedef struct res_vec {
    const char *name[MAX_RES];
    int64_t milli[MAX_RES];
    int n;
} res_vec;

typedef struct node_state {
    const json_t *node;
    const char *name;
    res_vec alloc, used;
} node_state;

static int64_t *res_slot(res_vec *v, const char *name)
{
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->name[i], name) == 0)
            return &v->milli[i];
    if (v->n == MAX_RES)
        return NULL;
    v->name[v->n] = name;
    v->milli[v->n] = 0;
    return &v->milli[v->n++];
}

static void res_add_map(res_vec *v, const json_t *map, int sign)
{
    const char *k;
    json_t *q;
    json_object_foreach((json_t *)map, k, q) {
        int64_t m;
        int64_t *slot;
        if (!json_is_string(q) && !json_is_number(q))
            continue;
        char buf[64];
        if (json_is_string(q))
            snprintf(buf, sizeof(buf), "%s", json_string_value(q));
        else
            snprintf(buf, sizeof(buf), "%g", json_number_value(q));
        if (quantity_parse(buf, &m, NULL) < 0 || !(slot = res_slot(v, k)))
            continue;
        *slot += sign * m;
    }
}

/* A pod's effective requests: the sum over containers (limits stand in for
 * missing requests, as Kubernetes defaults them), or the largest init
 * container when that is more. */
static void pod_requests(const json_t *pod, res_vec *out)
{
    const json_t *spec = json_object_get(pod, "spec");
    size_t i;
    json_t *c;
    res_vec init = {0};

    memset(out, 0, sizeof(*out));
    json_array_foreach(json_object_get(spec, "containers"), i, c) {
        const json_t *r = json_object_get(c, "resources");
        const json_t *req = json_object_get(r, "requests");
        res_vec one = {0};
        res_add_map(&one, json_object_get(r, "limits"), 1);
        /* requests override limits name by name */
        const char *k;
        json_t *q;
        json_object_foreach((json_t *)req, k, q) {
            int64_t *slot = res_slot(&one, k);
            if (slot)
                *slot = 0;
        }
        res_add_map(&one, req, 1);
        for (int j = 0; j < one.n; j++) {
            int64_t *slot = res_slot(out, one.name[j]);
            if (slot)
                *slot += one.milli[j];
        }
    }
    json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
        res_vec one = {0};
        res_add_map(&one, json_object_get(json_object_get(c, "resources"), "requests"), 1);
        for (int j = 0; j < one.n; j++) {
            int64_t *slot = res_slot(&init, one.name[j]);
            if (slot && one.milli[j] > *slot)
                *slot = one.milli[j];
        }
    }
    for (int j = 0; j < init.n; j++) {
        int64_t *slot = res_slot(out, init.name[j]);
        if (slot && init.milli[j] > *slot)
            *slot = init.milli[j];
    }
    int64_t *pods = res_slot(out, "pods");
    if (pods)
        *pods += 1000;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

static bool pod_terminal(const json_t *pod)
{
    const char *phase = str_at(pod, "status", "phase");
    return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

static bool ours(const json_t *pod)
{
    const char *sn = str_at(pod, "spec", "schedulerName");
    return !sn || !*sn || strcmp(sn, "default-scheduler") == 0 ||
           strcmp(sn, "trainyard") == 0 || strcmp(sn, "volcano") == 0;
}

static bool node_ready(const json_t *node)
{
    size_t i;
    json_t *c;
    if (json_is_true(json_object_get(json_object_get(node, "spec"), "unschedulable")))
        return false;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, "Ready") == 0)
            return strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True") == 0;
    }
    return false;
}

/* The first resource the node lacks for req, or NULL when it fits. */
static const char *lacking(const node_state *ns, const res_vec *req)
{
    for (int i = 0; i < req->n; i++) {
        if (req->milli[i] == 0)
            continue;
        int64_t alloc = 0, used = 0;
        for (int j = 0; j < ns->alloc.n; j++)
            if (strcmp(ns->alloc.name[j], req->name[i]) == 0)
                alloc = ns->alloc.milli[j];
        for (int j = 0; j < ns->used.n; j++)
            if (strcmp(ns->used.name[j], req->name[i]) == 0)
                used = ns->used.milli[j];
        if (used + req->milli[i] > alloc)
            return req->name[i];
    }
    return NULL;
}

typedef struct bind_args {
    const char *node;
    const char *msg;    /* NULL = bind; else mark unschedulable with this message */
} bind_args;

static void set_condition(json_t *pod, const char *status, const char *reason,
                          const char *msg)
{
    json_t *st = json_object_get(pod, "status");
    json_t *conds;
    char now[40];
    size_t i;
    json_t *c;

    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(pod, "status", st);
    }
    conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    ty_time_format(time(NULL), now, sizeof(now));
    json_array_foreach(conds, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "type")) ?: "", "PodScheduled") == 0) {
            if (strcmp(json_string_value(json_object_get(c, "status")) ?: "", status) != 0)
                json_object_set_new(c, "lastTransitionTime", json_string(now));
            json_object_set_new(c, "status", json_string(status));
            json_object_set_new(c, "lastProbeTime", json_null());
            if (reason)
                json_object_set_new(c, "reason", json_string(reason));
            else
                json_object_del(c, "reason");
            if (msg)
                json_object_set_new(c, "message", json_string(msg));
            else
                json_object_del(c, "message");
            return;
        }
    }
    c = json_pack("{s:s, s:s, s:n, s:s}", "type", "PodScheduled", "status", status,
                  "lastProbeTime", "lastTransitionTime", now);
    if (reason)
        json_object_set_new(c, "reason", json_string(reason));
    if (msg)
        json_object_set_new(c, "message", json_string(msg));
    json_array_append_new(conds, c);
}

static int bind_fn(json_t *pod, void *arg, ty_error *err)
{
    bind_args *b = arg;
    json_t *spec = json_object_get(pod, "spec");
    const char *cur = json_string_value(json_object_get(spec, "nodeName"));

    if (cur && *cur)
        return ty_seterr(err, TY_ECONFLICT, "already bound to %s", cur);
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        return ty_seterr(err, TY_ECONFLICT, "being deleted");
    if (b->msg) {
        set_condition(pod, "False", "Unschedulable", b->msg);
        return 0;
    }
    json_object_set_new(spec, "nodeName", json_string(b->node));
    set_condition(pod, "True", NULL, NULL);
    return 0;
}

static bool scheduled_condition_says(const json_t *pod, const char *msg)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c) {
        if (strcmp(json_string_value(json_object_get(c, "type")) ?: "", "PodScheduled") == 0)
            return strcmp(json_string_value(json_object_get(c, "message")) ?: "", msg) == 0;
    }
    return false;
}

static void place(ty_sched *sc, const json_t *pod, node_state *nodes, size_t nnodes)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    res_vec req;
    char msg[256];
    const char *why = NULL;
    size_t nlack = 0;
    ty_error err;

    pod_requests(pod, &req);
    for (size_t i = 0; i < nnodes; i++) {
        const char *l = lacking(&nodes[i], &req);
        if (!l) {
            bind_args b = {nodes[i].name, NULL};
            ty_error_init(&err);
            store_obj *o = store_mutate(sc->store, "pods", ns, name, bind_fn, &b, &err);
            if (o) {
                for (int j = 0; j < req.n; j++) {
                    int64_t *slot = res_slot(&nodes[i].used, req.name[j]);
                    if (slot)
                        *slot += req.milli[j];
                }
                ty_event(sc->store, store_obj_json(o), "Normal", "Scheduled", COMPONENT,
                         "Successfully assigned %s/%s to %s", ns, name, nodes[i].name);
                store_obj_unref(o);
            }
            ty_error_clear(&err);
            return;
        }
        why = l;
        nlack++;
    }
    if (nnodes == 0)
        snprintf(msg, sizeof(msg), "0/0 nodes are available: no nodes registered.");
    else
        snprintf(msg, sizeof(msg), "0/%zu nodes are available: %zu Insufficient %s.", nnodes,
                 nlack, why);
    if (scheduled_condition_says(pod, msg))
        return; /* already said; don't churn the store */
    bind_args b = {NULL, msg};
    ty_error_init(&err);
    store_obj *o = store_mutate(sc->store, "pods", ns, name, bind_fn, &b, &err);
    if (o) {
        ty_event(sc->store, store_obj_json(o), "Warning", "FailedScheduling", COMPONENT, "%s",
                 msg);
        store_obj_unref(o);
    }
    ty_error_clear(&err);
}

static int by_creation(const void *a, const void *b)
{
    const json_t *pa = store_obj_json(*(store_obj *const *)a);
    const json_t *pb = store_obj_json(*(store_obj *const *)b);
    const char *ta = str_at(pa, "metadata", "creationTimestamp") ?: "";
    const char *tb = str_at(pb, "metadata", "creationTimestamp") ?: "";
    int c = strcmp(ta, tb);
    return c ? c : strcmp(str_at(pa, "metadata", "name") ?: "", str_at(pb, "metadata", "name") ?: "");
}

static void cycle(ty_sched *sc)
{
    store_list nodes = {0}, pods = {0};
    store_list_opts all = {0};
    node_state *ns = NULL;
    size_t nn = 0;
    store_obj **pending = NULL;
    size_t np = 0;

    if (store_list_objects(sc->store, "nodes", &all, &nodes, NULL) < 0)
        return;
    if (store_list_objects(sc->store, "pods", &all, &pods, NULL) < 0)
        goto out;
    ns = calloc(nodes.n + 1, sizeof(*ns));
    pending = calloc(pods.n + 1, sizeof(*pending));
    for (size_t i = 0; i < nodes.n; i++) {
        const json_t *n = store_obj_json(nodes.items[i]);
        if (!node_ready(n))
            continue;
        ns[nn].node = n;
        ns[nn].name = str_at(n, "metadata", "name");
        res_add_map(&ns[nn].alloc, json_object_get(json_object_get(n, "status"), "allocatable"), 1);
        nn++;
    }
    for (size_t i = 0; i < pods.n; i++) {
        const json_t *p = store_obj_json(pods.items[i]);
        const char *node = str_at(p, "spec", "nodeName");
        if (node && *node) {
            if (pod_terminal(p))
                continue;
            for (size_t j = 0; j < nn; j++) {
                if (strcmp(ns[j].name, node) == 0) {
                    res_vec req;
                    pod_requests(p, &req);
                    for (int k = 0; k < req.n; k++) {
                        int64_t *slot = res_slot(&ns[j].used, req.name[k]);
                        if (slot)
                            *slot += req.milli[k];
                    }
                }
            }
        } else if (ours(p) && !pod_terminal(p) &&
                   !json_object_get(json_object_get(p, "metadata"), "deletionTimestamp")) {
            pending[np++] = pods.items[i];
        }
    }
    qsort(pending, np, sizeof(*pending), by_creation);
    for (size_t i = 0; i < np && !atomic_load(&sc->stop); i++)
        place(sc, store_obj_json(pending[i]), ns, nn);
out:
    free(ns);
    free(pending);
    store_list_free(&pods);
    store_list_free(&nodes);
}

static bool relevant(const store_event *ev)
{
    if (strcmp(ev->resource, "nodes") == 0)
        return true;
    if (strcmp(ev->resource, "pods") != 0)
        return false;
    const json_t *p = store_obj_json(ev->obj);
    const char *node = str_at(p, "spec", "nodeName");
    /* New pending pods need placing; finished or deleted bound pods free room. */
    return !node || !*node || ev->type == STORE_DELETED || pod_terminal(p);
}

static void *sched_main(void *arg)
{
    ty_sched *sc = arg;
    bool dirty = true;

    while (!atomic_load(&sc->stop)) {
        store_event ev;
        ty_error err;
        ty_error_init(&err);
        int rc = store_watch_next(sc->w, dirty ? BATCH_MS : 1000, &ev, &err);
        if (rc == 1) {
            dirty = dirty || relevant(&ev);
            store_event_release(&ev);
            continue;
        }
        if (rc < 0) {
            ty_error_clear(&err);
            if (atomic_load(&sc->stop))
                break;
            /* Fell behind the watch history: reopen from now and rescan. */
            pthread_mutex_lock(&sc->w_mu);
            store_watch_close(sc->w);
            sc->w = atomic_load(&sc->stop) ? NULL
                                           : store_watch_open(sc->store, NULL, NULL, 0, NULL);
            pthread_mutex_unlock(&sc->w_mu);
            if (!sc->w)
                break;
            dirty = true;
            continue;
        }
        if (dirty) {
            dirty = false;
            cycle(sc);
        }
    }
    return NULL;
}

ty_sched *sched_start(ty_store *s, ty_error *err)
{
    ty_sched *sc = calloc(1, sizeof(*sc));
    if (!sc) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    sc->store = s;
    pthread_mutex_init(&sc->w_mu, NULL);
    sc->w = store_watch_open(s, NULL, NULL, 0, err);
    if (!sc->w) {
        free(sc);
        return NULL;
    }
    if (pthread_create(&sc->thread, NULL, sched_main, sc) != 0) {
        store_watch_close(sc->w);
        free(sc);
        ty_seterr(err, TY_EINTERNAL, "cannot start the scheduler thread");
        return NULL;
    }
    return sc;
}

void sched_stop(ty_sched *sc)
{
    if (!sc)
        return;
    atomic_store(&sc->stop, true);
    pthread_mutex_lock(&sc->w_mu);
    if (sc->w)
        store_watch_cancel(sc->w);
    pthread_mutex_unlock(&sc->w_mu);
    pthread_join(sc->thread, NULL);
    if (sc->w)
        store_watch_close(sc->w);
    pthread_mutex_destroy(&sc->w_mu);
    free(sc);
}
