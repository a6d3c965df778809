/* watch.c - the watch hub.
 *
 * Every commit takes the next resourceVersion and publishes exactly one event,
 * so the history is a ring indexed by resourceVersion: the event of rv r sits
 * in slot r % capacity. The ring keeps the newest events up to a count and a
 * byte budget, and remembers `oldest`: every event with rv > oldest is
 * retained.
 *
 * Memory: a snapshot's parsed tree takes about ten times its compact text
 * (jansson allocates every key, value and hash table separately: 25 KB for a
 * 2.6 KB pod), so 100,000 events of trees were gigabytes. Watchers in the
 * process read an event within moments of its commit, so only the newest
 * max_trees events keep trees that nothing else holds: when an event falls
 * past that window, or the version it carries is replaced in the index while
 * it is past it, and the ring holds the only reference, the tree is freed and
 * the text kept. A watcher that reaches such an event gets a tree-less copy
 * and parses it if it wants the JSON (HTTP watchers only want the text). The
 * same goes for the current version of an object (held by the index too)
 * whose event leaves the window while nobody else holds it: the index keeps
 * text for objects nobody has looked at lately, and the first reader parses
 * it again (that tree then stays until the object changes). The byte budget
 * counts snapshots without trees; the history's own trees are bounded by
 * the window. A watcher is
 * just a cursor (the last rv it consumed) into that ring; it never copies
 * events it is not interested in, so a hundred watchers cost a hundred cursors
 * and one broadcast per commit. A cursor that the ring has overtaken gets
 * TY_EGONE, the same as a client asking for a version that is too old.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "base/thread.h"
#include "store/store_int.h"

typedef struct hub_entry {
    store_event_type type;
    const char *resource;
    store_obj *obj;
} hub_entry;

struct store_hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hub_entry *ring;
    size_t cap;
    uint64_t head;   /* rv of the newest event */
    uint64_t oldest; /* events with rv in (oldest, head] are in the ring */
    size_t bytes, max_bytes;
    size_t max_trees; /* events with rv > head - max_trees keep their trees */
    bool closing;
    int refs;        /* the store's and one per open watch */
    /* What the writer lets go of (snapshots it drops, trees it takes off
     * them), freed by the reaper thread instead of the writer, which runs
     * every commit one after another: freeing a pod's tree is ~10 µs of a
     * write's ~80, and it was done holding the locks watchers wait on. */
    store_obj **dead_objs;
    json_t **dead_trees;
    size_t ndead_objs, cap_objs, ndead_trees, cap_trees;
    /* Cold objects to compress (sweep.c), each with its dictionary. */
    struct to_compress {
        store_obj *obj;
        store_zdict *dict;
    } *cold;
    size_t ncold, cap_cold;
    ZSTD_CCtx *cctx; /* the reaper's */
    pthread_cond_t reap_cv;
    pthread_t reaper;
    bool reaping;    /* the reaper runs: what dies goes to it */
};

struct store_watch {
    store_hub *hub;
    char *resource;  /* NULL = all */
    char *ns;        /* NULL = all */
    uint64_t cursor; /* last rv consumed */
    bool cancelled;
};

static void *reap_main(void *arg);

store_hub *hub_new(uint64_t start_rv, size_t max_events, size_t max_bytes, size_t max_trees)
{
    store_hub *h = calloc(1, sizeof(*h));
    pthread_condattr_t ca;

    if (!h)
        return NULL;
    h->cap = max_events ? max_events : 1;
    h->ring = calloc(h->cap, sizeof(*h->ring));
    if (!h->ring) {
        free(h);
        return NULL;
    }
    h->max_bytes = max_bytes;
    h->max_trees = max_trees;
    h->head = h->oldest = start_rv;
    h->refs = 1;
    pthread_mutex_init(&h->mu, NULL);
    /* Timed waits measure a duration; the monotonic clock ignores clock steps. */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&h->reap_cv, NULL);
    h->cctx = ZSTD_createCCtx(); /* none: cold texts stay plain */
    h->reaping = pthread_create(&h->reaper, NULL, reap_main, h) == 0;
    if (h->reaping)
        ty_thread_setup(h->reaper, "ty-reaper", TY_THREAD_BACKGROUND);
    return h;
}

/* ---- the reaper ---- */

static bool grow_trash(void **arr, size_t *cap, size_t n, size_t size)
{
    void *g;

    if (n < *cap)
        return true;
    if (!(g = realloc(*arr, (*cap ? *cap * 2 : 1024) * size)))
        return false;
    *arr = g;
    *cap = *cap ? *cap * 2 : 1024;
    return true;
}

/* Lets go of a reference to o; with h->mu held. */
static void trash_obj(store_hub *h, store_obj *o)
{
    if (h->reaping && grow_trash((void **)&h->dead_objs, &h->cap_objs, h->ndead_objs,
                                 sizeof(*h->dead_objs)))
        h->dead_objs[h->ndead_objs++] = o;
    else
        store_obj_unref(o);
}

/* Frees o's tree when o has refs references (see obj_take_tree_if_refs);
 * with h->mu held. */
static void trash_tree_if_refs(store_hub *h, store_obj *o, size_t refs)
{
    json_t *t = obj_take_tree_if_refs(o, refs);

    if (!t)
        return;
    if (h->reaping && grow_trash((void **)&h->dead_trees, &h->cap_trees, h->ndead_trees,
                                 sizeof(*h->dead_trees)))
        h->dead_trees[h->ndead_trees++] = t;
    else
        json_decref(t);
}

static void *reap_main(void *arg)
{
    store_hub *h = arg;

    pthread_mutex_lock(&h->mu);
    for (;;) {
        store_obj **objs = h->dead_objs;
        json_t **trees = h->dead_trees;
        struct to_compress *cold = h->cold;
        size_t nobjs = h->ndead_objs, ntrees = h->ndead_trees, ncold = h->ncold;
        bool closing = h->closing; /* compressing then is wasted work */

        if (!nobjs && !ntrees && !ncold) {
            if (h->closing)
                break;
            pthread_cond_wait(&h->reap_cv, &h->mu);
            continue;
        }
        h->dead_objs = NULL;
        h->dead_trees = NULL;
        h->cold = NULL;
        h->ndead_objs = h->cap_objs = h->ndead_trees = h->cap_trees = 0;
        h->ncold = h->cap_cold = 0;
        pthread_mutex_unlock(&h->mu);
        for (size_t i = 0; i < ntrees; i++)
            json_decref(trees[i]);
        for (size_t i = 0; i < nobjs; i++)
            store_obj_unref(objs[i]);
        for (size_t i = 0; i < ncold; i++) {
            if (!closing)
                obj_compress(cold[i].obj, cold[i].dict, h->cctx);
            store_obj_unref(cold[i].obj);
            zdict_unref(cold[i].dict);
        }
        free(trees);
        free(objs);
        free(cold);
        pthread_mutex_lock(&h->mu);
    }
    h->reaping = false;
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* Called with h->mu held. */
static void evict_oldest(store_hub *h)
{
    hub_entry *e = &h->ring[(h->oldest + 1) % h->cap];

    h->bytes -= obj_footprint(e->obj);
    trash_obj(h, e->obj);
    e->obj = NULL;
    h->oldest++;
}

void hub_publish(store_hub *h, store_event_type type, const char *resource, store_obj *obj)
{
    hub_entry *e;

    pthread_mutex_lock(&h->mu);
    if (h->head - h->oldest == h->cap)
        evict_oldest(h);
    e = &h->ring[obj->rv % h->cap];
    e->type = type;
    e->resource = resource;
    e->obj = obj;
    h->head = obj->rv;
    h->bytes += obj_footprint(obj);
    /* The event leaving the tree window. Only the ring can hand out new
     * references to an object the index no longer holds, and it does so under
     * h->mu, so a count of one cannot grow while we look. */
    if (h->head - h->oldest > h->max_trees)
        trash_tree_if_refs(h, h->ring[(h->head - h->max_trees) % h->cap].obj, 1);
    /* Keep at least the newest event so a watcher from "now" always works. */
    while (h->bytes > h->max_bytes && h->head - h->oldest > 1)
        evict_oldest(h);
    pthread_mutex_unlock(&h->mu);
}

/* One broadcast per batch rather than per event: every watcher thread wakes
 * for each broadcast, and a batch's events are read in one go. */
void hub_wake(store_hub *h)
{
    pthread_mutex_lock(&h->mu);
    pthread_cond_broadcast(&h->cv);
    if (h->ndead_objs || h->ndead_trees || h->ncold)
        pthread_cond_signal(&h->reap_cv);
    pthread_mutex_unlock(&h->mu);
}

/* Called by the writer right after the commit that replaced old. */
void hub_release_superseded(store_hub *h, store_obj *old)
{
    bool in_ring;

    pthread_mutex_lock(&h->mu);
    in_ring = old->rv > h->oldest && h->ring[old->rv % h->cap].obj == old;
    if (in_ring) {
        /* The ring's reference keeps it alive past ours. */
        store_obj_unref(old);
        if (h->head - old->rv >= h->max_trees)
            trash_tree_if_refs(h, old, 1);
    } else {
        trash_obj(h, old);
    }
    pthread_mutex_unlock(&h->mu);
}

void hub_trim_current(store_hub *h, const store_index *ix)
{
    const hub_entry *e;
    const store_res *r;
    const idx_node *n;

    pthread_mutex_lock(&h->mu);
    if (h->head - h->oldest > h->max_trees) {
        e = &h->ring[(h->head - h->max_trees) % h->cap];
        if (e->type != STORE_DELETED &&
            atomic_load_explicit(&e->obj->tree, memory_order_relaxed) &&
            (r = index_find(ix, e->resource)) && (n = res_lookup(r, e->obj->ns, e->obj->name)) &&
            n->obj == e->obj)
            trash_tree_if_refs(h, e->obj, 2);
    }
    pthread_mutex_unlock(&h->mu);
}

/* How many references o, a current object, has when only the index and
 * (if it holds o) the history do; 0 when its event is still in the tree
 * window, where what it carries stays. With h->mu held. */
static size_t idle_refs(const store_hub *h, const store_obj *o)
{
    bool held = o->rv > h->oldest && o->rv <= h->head && h->ring[o->rv % h->cap].obj == o;

    if (held && h->head - o->rv < h->max_trees)
        return 0;
    return held ? 2 : 1;
}

void *hub_take_current(store_hub *h, store_obj *o, hub_part part)
{
    void *got = NULL;
    size_t refs;

    pthread_mutex_lock(&h->mu);
    if ((refs = idle_refs(h, o))) {
        switch (part) {
        case HUB_TREE: got = obj_take_tree_if_refs(o, refs); break;
        case HUB_TEXT: got = obj_take_text_if_refs(o, refs); break;
        case HUB_VIEW: got = obj_take_view_if_refs(o, refs); break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return got;
}

void hub_compress(store_hub *h, store_obj *o, store_zdict *d)
{
    bool queued = false;

    pthread_mutex_lock(&h->mu);
    if (h->reaping && h->cctx && !h->closing &&
        grow_trash((void **)&h->cold, &h->cap_cold, h->ncold, sizeof(*h->cold))) {
        h->cold[h->ncold++] = (struct to_compress){o, d};
        queued = true;
        /* A batch's wake-up would do, but a store nobody writes sweeps too. */
        if (h->ncold == 1)
            pthread_cond_signal(&h->reap_cv);
    }
    pthread_mutex_unlock(&h->mu);
    if (!queued) {
        store_obj_unref(o);
        zdict_unref(d);
    }
}

uint64_t hub_oldest(store_hub *h)
{
    uint64_t v;

    pthread_mutex_lock(&h->mu);
    v = h->oldest;
    pthread_mutex_unlock(&h->mu);
    return v;
}

static void hub_unref(store_hub *h)
{
    int left;

    pthread_mutex_lock(&h->mu);
    left = --h->refs;
    pthread_mutex_unlock(&h->mu);
    if (left)
        return;
    while (h->oldest < h->head)
        evict_oldest(h);
    free(h->ring);
    free(h->dead_objs);  /* the reaper emptied them before it stopped */
    free(h->dead_trees);
    free(h->cold);
    ZSTD_freeCCtx(h->cctx);
    pthread_cond_destroy(&h->reap_cv);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

void hub_shutdown(store_hub *h)
{
    bool reaping;

    pthread_mutex_lock(&h->mu);
    h->closing = true;
    pthread_cond_broadcast(&h->cv);
    pthread_cond_signal(&h->reap_cv);
    reaping = h->reaping;
    pthread_mutex_unlock(&h->mu);
    if (reaping)
        pthread_join(h->reaper, NULL); /* it empties the trash first */
    hub_unref(h);
}

store_watch *store_watch_open(ty_store *s, const char *resource, const char *ns,
                              uint64_t from_rv, ty_error *err)
{
    store_hub *h = s->hub;
    store_watch *w = calloc(1, sizeof(*w));

    if (!w || (resource && !(w->resource = strdup(resource))) ||
        (ns && !(w->ns = strdup(ns)))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    w->hub = h;
    pthread_mutex_lock(&h->mu);
    if (from_rv && from_rv < h->oldest) {
        ty_seterr(err, TY_EGONE, "too old resource version: %llu (%llu)",
                  (unsigned long long)from_rv, (unsigned long long)h->oldest);
        pthread_mutex_unlock(&h->mu);
        goto error;
    }
    w->cursor = from_rv ? from_rv : h->head;
    h->refs++;
    pthread_mutex_unlock(&h->mu);
    return w;
error:
    if (w) {
        free(w->resource);
        free(w->ns);
        free(w);
    }
    return NULL;
}

static bool matches(const store_watch *w, const hub_entry *e)
{
    if (w->resource && strcmp(w->resource, e->resource) != 0)
        return false;
    return !w->ns || strcmp(w->ns, e->obj->ns) == 0;
}

static struct timespec deadline_after(int timeout_ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Called with h->mu held: the next matching event after the cursor, or 0 when
 * the cursor caught up, or -1 when the cursor fell out of the ring. */
static int take_next(store_watch *w, store_event *ev, ty_error *err)
{
    store_hub *h = w->hub;

    if (w->cursor < h->oldest)
        return ty_seterr(err, TY_EGONE, "too old resource version: %llu (%llu)",
                         (unsigned long long)w->cursor, (unsigned long long)h->oldest);
    while (w->cursor < h->head) {
        const hub_entry *e = &h->ring[(w->cursor + 1) % h->cap];
        w->cursor++;
        if (!matches(w, e))
            continue;
        ev->type = e->type;
        ev->resource = e->resource;
        /* A tree-less event: parsing a copy leaves the history small. */
        if (!atomic_load_explicit(&e->obj->tree, memory_order_acquire))
            ev->obj = obj_text_copy(e->obj);
        if (!ev->obj)
            ev->obj = store_obj_ref(e->obj);
        ev->rv = e->obj->rv;
        return 1;
    }
    return 0;
}

int store_watch_next(store_watch *w, int timeout_ms, store_event *ev, ty_error *err)
{
    store_hub *h = w->hub;
    struct timespec deadline;
    int rc = 0;

    memset(ev, 0, sizeof(*ev));
    if (timeout_ms > 0)
        deadline = deadline_after(timeout_ms);
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (w->cancelled || h->closing) {
            rc = ty_seterr(err, TY_EUNAVAILABLE,
                           w->cancelled ? "watch cancelled" : "store is closing");
            break;
        }
        rc = take_next(w, ev, err);
        if (rc != 0 || timeout_ms == 0)
            break;
        if (timeout_ms < 0) {
            pthread_cond_wait(&h->cv, &h->mu);
        } else if (pthread_cond_timedwait(&h->cv, &h->mu, &deadline) == ETIMEDOUT) {
            /* One last look: an event may have landed with the timeout. */
            rc = w->cancelled || h->closing ? 0 : take_next(w, ev, err);
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}

void store_event_release(store_event *ev)
{
    if (!ev)
        return;
    store_obj_unref(ev->obj);
    ev->obj = NULL;
}

void store_watch_cancel(store_watch *w)
{
    pthread_mutex_lock(&w->hub->mu);
    w->cancelled = true;
    pthread_cond_broadcast(&w->hub->cv);
    pthread_mutex_unlock(&w->hub->mu);
}

void store_watch_close(store_watch *w)
{
    if (!w)
        return;
    hub_unref(w->hub);
    free(w->resource);
    free(w->ns);
    free(w);
}
