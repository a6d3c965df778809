/* gc.c - the garbage collector (see gc.h).
 *
 * State: a graph node per uid that is present in the store or named as an
 * owner by something present ("virtual" owners, which is how an absent owner
 * is noticed). Each node knows its owners (with blockOwnerDeletion) and its
 * dependents. The graph changes only from watch events, in commit order, so it
 * is always the store as of some resourceVersion; the worker never rescans the
 * store to answer "who depends on X".
 *
 * Work: a FIFO of nodes to reconcile, deduplicated by a flag. reconcile() is
 * level-triggered and idempotent: it looks at the node as the graph shows it
 * and issues the store calls that move it on (delete a dependent, drop an
 * ownerReference, remove a finalizer). Their effects come back as events,
 * which re-queue whoever is waiting on them. A store call that fails for a
 * reason other than "already gone" puts the node on a retry list.
 *
 * The graph, its queue and retry list live in gc_graph.c; this file has the
 * store edits, the reconciles and the thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/timeutil.h"
#include "base/thread.h"
#include "controller/gc_int.h"
#include "model/finalizers.h"

/* ---- store edits ---- */

typedef struct gc_edit {
    const char *uid;   /* the object must still be this one */
    const char *owner; /* remove_owner: the owner uid */
    const char *fin;   /* remove_finalizer: which */
} gc_edit;

static bool same_object(const json_t *obj, const gc_edit *e)
{
    const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
    return uid && !strcmp(uid, e->uid);
}

static void remove_string(json_t *list, const char *s)
{
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *v = json_string_value(json_array_get(list, i));
        if (v && !strcmp(v, s))
            json_array_remove(list, i);
    }
}

/* Mutate functions leave the object untouched (no write) when it is no
 * longer the object the graph knows, e.g. deleted and created again. */
static int edit_remove_owner(json_t *obj, void *arg, ty_error *err)
{
    gc_edit *e = arg;
    json_t *meta = json_object_get(obj, "metadata");
    json_t *refs = json_object_get(meta, "ownerReferences");

    (void)err;
    if (!same_object(obj, e))
        return 0;
    for (size_t i = json_array_size(refs); i-- > 0;) {
        const char *uid = json_string_value(json_object_get(json_array_get(refs, i), "uid"));
        if (uid && !strcmp(uid, e->owner))
            json_array_remove(refs, i);
    }
    if (refs && !json_array_size(refs))
        json_object_del(meta, "ownerReferences");
    return 0;
}

static int edit_remove_finalizer(json_t *obj, void *arg, ty_error *err)
{
    gc_edit *e = arg;

    if (!same_object(obj, e))
        return 0;
    if (finalizer_remove(obj, e->fin) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

static int edit_namespace(json_t *obj, void *arg, ty_error *err)
{
    gc_edit *e = arg;
    json_t *status = json_object_get(obj, "status");

    (void)err;
    if (!same_object(obj, e))
        return 0;
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(obj, "status", status);
    }
    json_object_set_new(status, "phase", json_string("Terminating"));
    if (e->fin)
        remove_string(json_object_get(json_object_get(obj, "spec"), "finalizers"), e->fin);
    return 0;
}

/* "Already gone" and "replaced by another object" both mean done. */
static int settle(ty_error *err, const char *what, const gc_node *n)
{
    if (err->code == TY_ENOTFOUND || err->code == TY_ECONFLICT) {
        ty_error_clear(err);
        return 0;
    }
    ty_warn("gc: %s %s %s/%s: %s", what, n->resource, n->ns, n->name, err->text);
    ty_error_clear(err);
    return -1;
}

static int mutate(ty_gc *g, gc_node *n, kc_mutate_fn fn, gc_edit *e, const char *what)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    e->uid = n->uid;
    o = kc_mutate(g->s, n->resource, n->ns, n->name, fn, e, 0, &err);
    if (!o)
        return settle(&err, what, n);
    ty_obj_unref(o);
    return 0;
}

static int delete_node(ty_gc *g, gc_node *n, kc_propagation p)
{
    kc_delete_opts opts = {.propagation = p, .precondition_uid = n->uid};
    ty_error err;
    ty_obj *o;
    bool deleted;

    /* Once asked, never again: a second request could change the
     * propagation finalizer of an object whose deletion is under way. */
    if (n->deleting || n->delete_sent)
        return 0;
    ty_error_init(&err);
    o = kc_delete(g->s, n->resource, n->ns, n->name, &opts, &deleted, &err);
    if (!o)
        return settle(&err, "delete", n);
    ty_obj_unref(o);
    n->delete_sent = true;
    return 0;
}

/* ---- reconcile ---- */

static bool has_blocking_dependents(const gc_node *n)
{
    for (size_t i = 0; i < n->ndeps; i++) {
        const gc_node *d = n->deps[i];
        for (size_t k = 0; d->present && k < d->nowners; k++)
            if (d->owners[k].node == n && d->owners[k].block)
                return true;
    }
    return false;
}

/* Foreground cascades: a dependent that others block on is itself deleted in
 * the foreground, so the chain goes bottom-up. */
static kc_propagation cascade_policy(const gc_node *dep)
{
    return has_blocking_dependents(dep) ? KC_PROPAGATE_FOREGROUND : KC_PROPAGATE_BACKGROUND;
}

static int reconcile_foreground(ty_gc *g, gc_node *n)
{
    gc_edit e = {.fin = FG_FINALIZER};
    int rc = 0;

    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i]->present && delete_node(g, n->deps[i], cascade_policy(n->deps[i])) < 0)
            rc = -1;
    if (rc == 0 && !has_blocking_dependents(n))
        rc = mutate(g, n, edit_remove_finalizer, &e, "finish foreground deletion of");
    return rc;
}

static int reconcile_orphan(ty_gc *g, gc_node *n)
{
    gc_edit drop = {.owner = n->uid}, fin = {.fin = ORPHAN_FINALIZER};
    int rc = 0;

    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i]->present &&
            mutate(g, n->deps[i], edit_remove_owner, &drop, "orphan") < 0)
            rc = -1;
    if (rc == 0)
        rc = mutate(g, n, edit_remove_finalizer, &fin, "finish orphaning by");
    return rc;
}

/* A dependent goes when no owner is present any more (Background); when the
 * remaining owners are all being deleted in the foreground, it goes now so
 * that they can. */
static int reconcile_owners(ty_gc *g, gc_node *n)
{
    size_t solid = 0, waiting = 0;

    for (size_t i = 0; i < n->nowners; i++) {
        const gc_node *o = n->owners[i].node;
        if (o->present && o->deleting && o->fg)
            waiting++;
        else if (o->present)
            solid++;
    }
    if (solid || n->deleting)
        return 0;
    return delete_node(g, n, waiting ? cascade_policy(n) : KC_PROPAGATE_BACKGROUND);
}

/* Deletes everything in the namespace; when nothing is left, lets the
 * namespace itself go by removing its finalizer. */
static int reconcile_namespace(ty_gc *g, gc_node *n)
{
    json_t *resources = kc_resources(g->s), *r;
    kc_list_opts lo = {.ns = n->name};
    gc_edit e = {0};
    size_t i, left = 0;
    int rc = 0;

    if (n->present && mutate(g, n, edit_namespace, &e, "mark terminating") < 0)
        rc = -1;
    json_array_foreach(resources, i, r) {
        const char *res = json_string_value(r);
        kc_list l;
        ty_error err;
        ty_error_init(&err);
        if (!strcmp(res, NS_RESOURCE))
            continue;
        if (kc_list_objects(g->s, res, &lo, &l, &err) < 0) {
            rc = settle(&err, "list contents of", n);
            continue;
        }
        for (size_t k = 0; k < l.n; k++) {
            const json_t *meta = json_object_get(ty_obj_json(l.items[k]), "metadata");
            const char *name = json_string_value(json_object_get(meta, "name"));
            kc_delete_opts opts = {.propagation = KC_PROPAGATE_BACKGROUND,
                                      .precondition_uid =
                                          json_string_value(json_object_get(meta, "uid"))};
            ty_obj *o;
            bool deleted = false;
            if (!json_object_get(meta, "deletionTimestamp")) {
                o = kc_delete(g->s, res, n->name, name, &opts, &deleted, &err);
                if (!o && settle(&err, "delete contents of", n) < 0)
                    rc = -1;
                ty_obj_unref(o);
            }
            left += !deleted;
        }
        kc_list_free(&l);
    }
    json_decref(resources);
    if (rc == 0 && !left && n->present && n->ns_finalizer) {
        e.fin = NS_FINALIZER;
        rc = mutate(g, n, edit_namespace, &e, "finish deletion of");
    }
    return rc;
}

static int reconcile(ty_gc *g, gc_node *n)
{
    int rc = 0;

    if (gc_is_namespace(n) && (!n->present || n->deleting) && reconcile_namespace(g, n) < 0)
        rc = -1;
    if (!n->present)
        return rc;
    if (n->deleting && n->orphan && reconcile_orphan(g, n) < 0)
        rc = -1;
    if (n->deleting && n->fg && reconcile_foreground(g, n) < 0)
        rc = -1;
    if (n->nowners && reconcile_owners(g, n) < 0)
        rc = -1;
    return rc;
}

/* ---- the thread ---- */

/* The graph follows one informer on every resource (client/informer.h), with
 * no cache: the graph is the collector's own picture. A (re)list rebuilds it
 * from nothing (on_relist), and no node is judged before the informer has
 * synced: after the lists and the watch's catch-up, so never on a partial
 * picture (a dependent listed before its owner's resource was). Replaying a
 * change the lists already showed does no harm: the graph takes each event
 * as the object's state. */

static void on_relist(ty_informer *inf, void *ctx)
{
    (void)inf;
    gc_graph_clear(ctx);
}

static void on_events(ty_informer *inf, const kc_event *evs, size_t n, unsigned flags,
                      void *ctx)
{
    (void)inf, (void)flags;
    for (size_t i = 0; i < n; i++)
        gc_observe_obj(ctx, evs[i].resource, evs[i].obj, evs[i].type == KC_DELETED);
}

/* Waits for events (not at all when work is queued, nor unless wait),
 * applies a batch of them, then works the queue. Returns -1 once stopping. */
static int step(ty_gc *g, bool wait)
{
    gc_node *n;
    bool synced = inf_has_synced(g->inf);
    /* Not synced: the poll lists (or waits out its backoff) first. */
    int timeout = !wait ? 0 : !synced ? -1 : g->qhead ? 0 : g->nretries ? RETRY_MS : -1;

    if (inf_poll(g->inf, timeout) < 0)
        return -1;
    if (!inf_has_synced(g->inf))
        return 0;
    if (g->nretries && ty_now_ms() >= g->retry_at)
        gc_requeue_retries(g);
    while ((n = gc_dequeue(g))) {
        if (reconcile(g, n) < 0)
            gc_retry_later(g, n);
        gc_node_release(g, n);
    }
    return 0;
}

static void *gc_main(void *arg)
{
    ty_gc *g = arg;

    while (step(g, true) == 0)
        ;
    return NULL;
}

/* The collector and its informer, no thread. */
static ty_gc *gc_new(ty_kc *s, ty_error *err)
{
    ty_gc *g = calloc(1, sizeof(*g));

    if (!g || !(g->buckets = calloc(256, sizeof(*g->buckets)))) {
        free(g);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    g->s = s;
    g->nbuckets = 256;
    if (!(g->inf = inf_new(s, &(inf_config){.name = "gc", .list_all = true,
                                            .list_skip = gc_ignored, .batch = EVENT_BATCH},
                           &(inf_handlers){.on_relist = on_relist, .on_events = on_events},
                           g, err))) {
        free(g->buckets);
        free(g);
        return NULL;
    }
    return g;
}

static void gc_free(ty_gc *g)
{
    inf_free(g->inf);
    gc_graph_clear(g);
    free(g->buckets);
    free(g->retries);
    free(g);
}

ty_gc *gc_start(ty_kc *s, ty_error *err)
{
    ty_gc *g = gc_new(s, err);

    if (!g)
        return NULL;
    if (pthread_create(&g->thread, NULL, gc_main, g) != 0) {
        gc_free(g);
        ty_seterr(err, TY_EINTERNAL, "gc: cannot start thread");
        return NULL;
    }
    ty_thread_setup(g->thread, "ty-gc", TY_THREAD_BACKGROUND);
    return g;
}

void gc_stop(ty_gc *g)
{
    if (!g)
        return;
    inf_cancel(g->inf);
    pthread_join(g->thread, NULL);
    gc_free(g);
}

/* The collector without its thread, for tests that drive it one turn at a
 * time (gc_int.h). */
ty_gc *gc_sync_new(ty_kc *s)
{
    return gc_new(s, NULL);
}

void gc_sync_free(ty_gc *g)
{
    if (g)
        gc_free(g);
}

int gc_turn(ty_gc *g)
{
    return step(g, false);
}
