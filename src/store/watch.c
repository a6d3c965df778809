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
 * 2.6 KB pod), so 100,000 events of trees would be gigabytes. Watchers in the
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
 * counts snapshots without trees, and only those the ring alone keeps alive
 * (an event's version once it is replaced or deleted: a current one is the
 * index's anyway); the history's own trees are bounded by the window. A
 * watcher is
 * just a cursor (the last rv it took) into that ring; it never copies
 * events it is not interested in, so a hundred watchers cost a hundred cursors
 * and one ring of a bell per batch (base/thread.h ty_bell: a condvar's
 * broadcast could sleep until the woken watchers had run). It takes up to 64
 * matching events per hold of the hub's lock, which the leader needs for
 * every event it publishes, and copies texts after letting it go. A cursor
 * that the ring has overtaken gets TY_EGONE, the same as a client asking for
 * a version that is too old.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/thread.h"
#include "base/timeutil.h"
#include "store/hub_int.h"


/* How many matching events a watcher takes per hold of the hub's lock. */
#define WATCH_TAKE 64

/* Resources a store_watch_open_only watch has decided on (by the history's
 * name pointer, which lives as long as the store). */
#define WATCH_MEMO 32

struct store_watch {
    store_hub *hub;
    ty_bell *bell;   /* its resource's, or the hub's (hub_int.h hub_rbell) */
    hub_rbell *rbell; /* its resource's slot, NULL when it has none */
    char *resource;  /* NULL = all */
    char **only;     /* NULL, or the resources it takes (NULL-terminated) */
    struct {
        const char *resource;
        bool wanted;
    } memo[WATCH_MEMO];
    size_t nmemo;
    char *ns;        /* NULL = all */
    uint64_t cursor; /* last rv taken */
    size_t wakeups;  /* times its bell woke it (store_watch_wakeups) */
    atomic_bool cancelled; /* set under h->mu, read without it too */
    /* Events taken from the ring (with references) and not yet returned:
     * one hold of h->mu, which the leader needs for every event it
     * publishes, takes up to WATCH_TAKE of them instead of one, and copies
     * of texts are made after it is let go. */
    store_event taken[WATCH_TAKE];
    size_t ntaken, next_taken;
};

store_hub *hub_new(uint64_t start_rv, size_t max_events, size_t max_bytes, size_t max_trees)
{
    store_hub *h = calloc(1, sizeof(*h));

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
    h->head = h->oldest = h->trimmed = start_rv;
    h->refs = 1;
    pthread_mutex_init(&h->mu, NULL);
    reaper_start(h);
    return h;
}

/* Called with h->mu held: the bell of resource, made if there is room;
 * NULL when the table is full. interned, when given, is the history's
 * pointer for the name, compared before any string. */
static hub_rbell *rbell_of(store_hub *h, const char *resource, const char *interned)
{
    hub_rbell *b;

    for (size_t i = 0; interned && i < h->nrbells; i++)
        if (h->rbells[i].interned == interned)
            return &h->rbells[i];
    for (size_t i = 0; i < h->nrbells; i++) {
        b = &h->rbells[i];
        if (strcmp(b->name, resource) == 0) {
            if (interned && !b->interned)
                b->interned = interned;
            return b;
        }
    }
    if (h->nrbells == HUB_MAX_RBELLS || strlen(resource) >= sizeof(b->name))
        return NULL;
    b = &h->rbells[h->nrbells];
    strcpy(b->name, resource);
    b->interned = interned;
    __atomic_store_n(&h->nrbells, h->nrbells + 1, __ATOMIC_RELEASE);
    return b;
}

/* Called with h->mu held. */
static void evict_oldest(store_hub *h)
{
    hub_entry *e = &h->ring[(h->oldest + 1) % h->cap];
    /* (not while the hub closes: the names may be going with the store) */
    hub_rbell *b = e->resource && !atomic_load(&h->closing)
                       ? rbell_of(h, e->resource, e->resource)
                       : NULL;

    if (b)
        b->evicted_rv = h->oldest + 1;
    h->bytes -= e->held;
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
    hub_rbell *b = rbell_of(h, resource, resource);
    if (b)
        atomic_store_explicit(&b->pending, true, memory_order_relaxed);
    /* a deleted object's last version is the ring's alone */
    e->held = type == STORE_DELETED ? obj_footprint(obj) : 0;
    h->head = obj->rv;
    h->bytes += e->held;
    /* The event leaving the tree window. Only the ring can hand out new
     * references to an object the index no longer holds, and it does so under
     * h->mu, so a count of one cannot grow while we look. */
    if (h->head - h->oldest > h->max_trees) {
        store_obj *gone = h->ring[(h->head - h->max_trees) % h->cap].obj;
        trash_tree_if_refs(h, gone, 1);
        trash_text_if_refs(h, gone, 1);
    }
    /* Keep at least the newest event so a watcher from "now" always works. */
    while (h->bytes > h->max_bytes && h->head - h->oldest > 1)
        evict_oldest(h);
    pthread_mutex_unlock(&h->mu);
}

/* One ring per batch rather than per event: every watcher thread wakes for
 * each, and a batch's events are read in one go. Rung after the lock is let
 * go: the woken watchers need it. */
void hub_wake(store_hub *h)
{
    /* nrbells only grows, and a slot once in use stays: read without h->mu,
     * a slot made meanwhile is rung by the next batch's wake. */
    size_t n = __atomic_load_n(&h->nrbells, __ATOMIC_ACQUIRE);

    for (size_t i = 0; i < n; i++)
        if (atomic_exchange_explicit(&h->rbells[i].pending, false, memory_order_acq_rel))
            ty_bell_ring(&h->rbells[i].bell);
    ty_bell_ring(&h->bell);
    reaper_wake(h);
}

/* Called by the writer right after the commit that replaced old. */
void hub_release_superseded(store_hub *h, store_obj *old)
{
    bool in_ring;

    pthread_mutex_lock(&h->mu);
    in_ring = old->rv > h->oldest && h->ring[old->rv % h->cap].obj == old;
    if (in_ring) {
        hub_entry *e = &h->ring[old->rv % h->cap];

        /* The ring's reference keeps it alive past ours: counted now. */
        if (!e->held) {
            e->held = obj_footprint(old);
            h->bytes += e->held;
        }
        store_obj_unref(old);
        if (h->head - old->rv >= h->max_trees) {
            trash_tree_if_refs(h, old, 1);
            trash_text_if_refs(h, old, 1);
        }
        while (h->bytes > h->max_bytes && h->head - h->oldest > 1)
            evict_oldest(h);
    } else {
        trash_obj(h, old);
    }
    pthread_mutex_unlock(&h->mu);
}

void hub_trim_current(store_hub *h)
{
    const hub_entry *e;
    uint64_t rv, upto;

    pthread_mutex_lock(&h->mu);
    upto = h->head - h->oldest > h->max_trees ? h->head - h->max_trees : h->oldest;
    for (rv = (h->trimmed > h->oldest ? h->trimmed : h->oldest) + 1; rv <= upto; rv++) {
        e = &h->ring[rv % h->cap];
        /* current: the index's flag, not a lookup (a cache miss or two an
         * event, with every reader kept out). Its plain text goes too when
         * it has its compressed copy: the sweeper would drop it a pass or
         * two later (seconds), and at scale the texts waiting for it are a
         * large part of the peak memory. A later reader decompresses. */
        if (e->type == STORE_DELETED || !e->obj->current)
            continue;
        if (obj_has_any_tree(e->obj))
            trash_tree_if_refs(h, e->obj, 2);
        trash_text_if_refs(h, e->obj, 2);
    }
    if (upto > h->trimmed)
        h->trimmed = upto;
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

int hub_event_plain(store_hub *h, uint64_t rv)
{
    int plain = -1;

    pthread_mutex_lock(&h->mu);
    if (rv > h->oldest && rv <= h->head && h->ring[rv % h->cap].obj &&
        h->ring[rv % h->cap].obj->rv == rv)
        plain = atomic_load_explicit(&h->ring[rv % h->cap].obj->text, memory_order_acquire) !=
                NULL;
    pthread_mutex_unlock(&h->mu);
    return plain;
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
    free(h->dead_objs);  /* emptied by hub_shutdown */
    free(h->dead_trees);
    free(h->dead_mem);
    free(h->cold);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

void hub_shutdown(store_hub *h)
{
    pthread_mutex_lock(&h->mu);
    h->closing = true;
    for (size_t i = 0; i < h->nrbells; i++)
        ty_bell_ring(&h->rbells[i].bell);
    pthread_mutex_unlock(&h->mu);
    ty_bell_ring(&h->bell);
    reaper_stop(h);
    hub_unref(h);
}

static void free_only(char **only)
{
    for (size_t i = 0; only && only[i]; i++)
        free(only[i]);
    free(only);
}

static char **copy_only(const char *const *only)
{
    size_t n = 0;
    char **c;

    while (only[n])
        n++;
    if (!(c = calloc(n + 1, sizeof(*c))))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(c[i] = strdup(only[i]))) {
            free_only(c);
            return NULL;
        }
    }
    return c;
}

static store_watch *watch_open(ty_store *s, const char *resource, const char *const *only,
                               const char *ns, uint64_t from_rv, ty_error *err)
{
    store_hub *h = s->hub;
    store_watch *w = calloc(1, sizeof(*w));

    if (!w || (resource && !(w->resource = strdup(resource))) ||
        (only && !(w->only = copy_only(only))) || (ns && !(w->ns = strdup(ns)))) {
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
    hub_rbell *b = resource ? rbell_of(h, resource, NULL) : NULL;
    w->bell = b ? &b->bell : &h->bell;
    w->rbell = b;
    h->refs++;
    pthread_mutex_unlock(&h->mu);
    return w;
error:
    if (w) {
        free(w->resource);
        free_only(w->only);
        free(w->ns);
        free(w);
    }
    return NULL;
}

store_watch *store_watch_open(ty_store *s, const char *resource, const char *ns,
                              uint64_t from_rv, ty_error *err)
{
    return watch_open(s, resource, NULL, ns, from_rv, err);
}

store_watch *store_watch_open_only(ty_store *s, const char *const *only, uint64_t from_rv,
                                   ty_error *err)
{
    return watch_open(s, NULL, only, NULL, from_rv, err);
}

/* Whether resource is one of w->only's, looked up by its pointer once
 * decided (the history names each resource with the same pointer). */
static bool wanted(store_watch *w, const char *resource)
{
    bool yes = false;

    for (size_t i = 0; i < w->nmemo; i++)
        if (w->memo[i].resource == resource)
            return w->memo[i].wanted;
    for (size_t i = 0; w->only[i] && !yes; i++)
        yes = strcmp(w->only[i], resource) == 0;
    if (w->nmemo < WATCH_MEMO) {
        w->memo[w->nmemo].resource = resource;
        w->memo[w->nmemo++].wanted = yes;
    }
    return yes;
}

static bool matches(store_watch *w, const hub_entry *e)
{
    if (w->resource && strcmp(w->resource, e->resource) != 0)
        return false;
    if (w->only && !wanted(w, e->resource))
        return false;
    return !w->ns || strcmp(w->ns, e->obj->ns) == 0;
}

/* Lets go of the taken events not handed out (a stopped watch's). */
static void drop_taken(store_watch *w)
{
    for (size_t i = w->next_taken; i < w->ntaken; i++)
        store_obj_unref(w->taken[i].obj);
    w->ntaken = w->next_taken = 0;
}

/* Called with h->mu held: takes the matching events after the cursor, up to
 * WATCH_TAKE, into w->taken (each with a reference to the ring's snapshot;
 * see give_copies); 1 when it took any, 0 when the cursor caught up, -1 when
 * the cursor fell out of the ring. */
static int take_events(store_watch *w, ty_error *err)
{
    store_hub *h = w->hub;

    w->ntaken = w->next_taken = 0;
    /* A watch of a quiet resource wakes only for its own events (and a
     * once-a-second look): the ring may have moved past its cursor with
     * none of its events in what went. Then nothing is lost. */
    if (w->cursor < h->oldest && w->rbell && w->rbell->evicted_rv <= w->cursor)
        w->cursor = h->oldest;
    if (w->cursor < h->oldest)
        return ty_seterr(err, TY_EGONE, "too old resource version: %llu (%llu)",
                         (unsigned long long)w->cursor, (unsigned long long)h->oldest);
    while (w->cursor < h->head && w->ntaken < WATCH_TAKE) {
        const hub_entry *e = &h->ring[(w->cursor + 1) % h->cap];
        store_event *ev = &w->taken[w->ntaken];

        w->cursor++;
        if (!matches(w, e))
            continue;
        ev->type = e->type;
        ev->resource = e->resource;
        ev->obj = store_obj_ref(e->obj);
        ev->rv = e->obj->rv;
        w->ntaken++;
    }
    return w->ntaken > 0;
}

/* Without h->mu: an event without a tree (whole or light) is handed out as
 * a copy of its text, so that parsing it does not give the history its tree
 * back (our reference keeps the text on the snapshot meanwhile). */
static void give_copies(store_watch *w)
{
    for (size_t i = 0; i < w->ntaken; i++) {
        store_obj *o = w->taken[i].obj, *copy;

        if (!obj_has_any_tree(o) && (copy = obj_text_copy(o))) {
            w->taken[i].obj = copy;
            store_obj_unref(o);
        }
    }
}

static bool stopped(const store_watch *w)
{
    return atomic_load(&w->cancelled) || atomic_load(&w->hub->closing);
}

int store_watch_next(store_watch *w, int timeout_ms, store_event *ev, ty_error *err)
{
    store_hub *h = w->hub;
    struct timespec deadline;
    uint32_t ticket;
    bool timed_out;
    int rc = 0;

    memset(ev, 0, sizeof(*ev));
    if (w->next_taken < w->ntaken && !stopped(w)) {
        *ev = w->taken[w->next_taken];
        w->taken[w->next_taken++].obj = NULL;
        return 1;
    }
    drop_taken(w);
    if (timeout_ms > 0)
        deadline = ty_deadline_ms(CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (stopped(w)) {
            rc = ty_seterr(err, TY_EUNAVAILABLE,
                           atomic_load(&w->cancelled) ? "watch cancelled" : "store is closing");
            break;
        }
        rc = take_events(w, err);
        if (rc != 0 || timeout_ms == 0)
            break;
        ticket = ty_bell_ticket(w->bell);
        pthread_mutex_unlock(&h->mu);
        timed_out = ty_bell_wait(w->bell, ticket, timeout_ms < 0 ? NULL : &deadline) ==
                    ETIMEDOUT;
        pthread_mutex_lock(&h->mu);
        if (!timed_out)
            w->wakeups++;
        if (timed_out) {
            /* One last look: an event may have landed with the timeout. */
            rc = stopped(w) ? 0 : take_events(w, err);
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    if (rc == 1) {
        give_copies(w);
        *ev = w->taken[0];
        w->taken[0].obj = NULL;
        w->next_taken = 1;
    }
    return rc;
}

void store_event_release(store_event *ev)
{
    if (!ev)
        return;
    store_obj_unref(ev->obj);
    ev->obj = NULL;
}

size_t store_watch_wakeups(const store_watch *w)
{
    return w->wakeups;
}

void store_watch_cancel(store_watch *w)
{
    pthread_mutex_lock(&w->hub->mu);
    atomic_store(&w->cancelled, true);
    pthread_mutex_unlock(&w->hub->mu);
    ty_bell_ring(w->bell);
}

void store_watch_close(store_watch *w)
{
    if (!w)
        return;
    drop_taken(w);
    hub_unref(w->hub);
    free(w->resource);
    free_only(w->only);
    free(w->ns);
    free(w);
}
