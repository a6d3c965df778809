/* informer.c - list, watch, relist, and the optional cache (see informer.h).
 *
 * The poll thread owns the watch and the cache's writes; inf_cancel (any
 * thread) only cancels the watch and wakes a backoff wait, under mu. The
 * cache has a lock of its own so that workers read it while the poll thread
 * applies a batch. */
#include "client/informer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/strmap.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "client/inf_share.h"

#define DEFAULT_BATCH 1024
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

/* ---- the cache ---- */

typedef struct inf_entry {
    char *key;     /* "ns/name" (the maps' key) */
    ty_obj *obj;
    char *owner;   /* the controller ownerReference's uid, or NULL */
    uint64_t gen;  /* the list that last saw it */
    size_t idx;    /* in its resource's entries */
    size_t oidx;   /* in its owner's */
} inf_entry;

typedef struct inf_owner {
    inf_entry **v;
    size_t n, cap;
    char uid[];    /* the map's key */
} inf_owner;

typedef struct inf_res {
    char *name;
    const ty_kc *client; /* the informer's (inf_share.h) */
    strmap by_key;   /* key -> inf_entry */
    strmap by_owner; /* uid -> inf_owner */
    inf_entry **entries;
    size_t n, cap;
} inf_res;

struct ty_informer {
    ty_kc *c;
    char *name;
    char **watch, **list; /* NULL-terminated copies, or NULL */
    bool list_all, cache, interactive;
    bool (*list_skip)(const char *resource);
    size_t batch;
    inf_handlers h;
    void *ctx;
    kc_event *evs;        /* batch slots */

    pthread_mutex_t mu;   /* guards w (against inf_cancel) and cancelled */
    pthread_cond_t cv;    /* a backoff wait, woken by inf_cancel */
    bool cancelled;
    kc_watch *w;          /* NULL: a (re)list is due */

    /* the poll thread's */
    int64_t retry_at;     /* monotonic ms: no attempt before */
    int backoff_ms;
    bool synced;          /* read by inf_has_synced under mu */
    uint64_t lists, gen;
    pthread_t thread;
    bool started;

    pthread_mutex_t cache_mu; /* guards res */
    inf_res **res;
    size_t nres;
};

static char **strv_copy(const char *const *v)
{
    size_t n = 0;
    char **out;

    if (!v)
        return NULL;
    while (v[n])
        n++;
    if (!(out = calloc(n + 1, sizeof(*out))))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(out[i] = strdup(v[i]))) {
            for (size_t k = 0; k < i; k++)
                free(out[k]);
            free(out);
            return NULL;
        }
    return out;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static bool strv_has(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (!strcmp(v[i], s))
            return true;
    return false;
}

/* Whether the cache follows resource. */
static bool cached(const ty_informer *inf, const char *resource)
{
    if (!inf->cache)
        return false;
    if (inf->list_all)
        return !inf->list_skip || !inf->list_skip(resource);
    return strv_has(inf->list, resource);
}

static inf_res *res_find(ty_informer *inf, const char *name, bool create)
{
    inf_res *r, **g;

    for (size_t i = 0; i < inf->nres; i++)
        if (!strcmp(inf->res[i]->name, name))
            return inf->res[i];
    if (!create || !(r = calloc(1, sizeof(*r))))
        return NULL;
    if (!(r->name = strdup(name)) || !(g = realloc(inf->res, (inf->nres + 1) * sizeof(*g)))) {
        free(r->name);
        free(r);
        return NULL;
    }
    strmap_init(&r->by_key);
    strmap_init(&r->by_owner);
    r->client = inf->c;
    inf->res = g;
    inf->res[inf->nres++] = r;
    return r;
}

/* The uid of o's controller ownerReference (caller frees), or NULL. */
static char *controller_uid(const ty_obj *o)
{
    json_t *meta = ty_obj_metadata(o), *r;
    char *uid = NULL;
    size_t i;

    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r) {
        const char *u = json_string_value(json_object_get(r, "uid"));
        if (u && json_is_true(json_object_get(r, "controller"))) {
            uid = strdup(u);
            break;
        }
    }
    json_decref(meta);
    return uid;
}

static void owner_unlink(inf_res *r, inf_entry *e)
{
    inf_owner *ow = e->owner ? strmap_get(&r->by_owner, e->owner) : NULL;

    if (ow) {
        ow->v[e->oidx] = ow->v[--ow->n];
        ow->v[e->oidx]->oidx = e->oidx;
        if (!ow->n) {
            strmap_del(&r->by_owner, ow->uid);
            free(ow->v);
            free(ow);
        }
    }
    free(e->owner);
    e->owner = NULL;
}

/* Files e under its owner (e->owner set); on failure it is left out of the
 * owner index (inf_list_owned then misses it: out of memory only). */
static void owner_link(inf_res *r, inf_entry *e)
{
    inf_owner *ow = strmap_get(&r->by_owner, e->owner);

    if (!ow) {
        if (!(ow = calloc(1, sizeof(*ow) + strlen(e->owner) + 1)))
            goto fail;
        strcpy(ow->uid, e->owner);
        if (strmap_put(&r->by_owner, ow->uid, ow) < 0) {
            free(ow);
            goto fail;
        }
    }
    if (ow->n == ow->cap) {
        size_t cap = ow->cap ? 2 * ow->cap : 4;
        inf_entry **g = realloc(ow->v, cap * sizeof(*g));
        if (!g) {
            if (!ow->n) {
                strmap_del(&r->by_owner, ow->uid);
                free(ow);
            }
            goto fail;
        }
        ow->v = g;
        ow->cap = cap;
    }
    e->oidx = ow->n;
    ow->v[ow->n++] = e;
    return;
fail:
    free(e->owner);
    e->owner = NULL;
}

static void entry_remove(inf_res *r, inf_entry *e)
{
    owner_unlink(r, e);
    strmap_del(&r->by_key, e->key);
    r->entries[e->idx] = r->entries[--r->n];
    r->entries[e->idx]->idx = e->idx;
    inf_share_release(r->client, r->name, e->obj);
    ty_obj_unref(e->obj);
    free(e->key);
    free(e);
}

static void obj_key(const ty_obj *o, char *buf, size_t len)
{
    const char *ns, *name;

    ty_obj_key(o, &ns, &name);
    snprintf(buf, len, "%s/%s", ns ? ns : "", name ? name : "");
}

/* The object's new state (a reference is taken), seen by list gen (or by
 * the watch: the current one). cache_mu held. */
static void cache_put(ty_informer *inf, const char *resource, ty_obj *o)
{
    char key[600];
    inf_res *r = res_find(inf, resource, true);
    inf_entry *e;

    if (!r)
        return;
    obj_key(o, key, sizeof(key));
    if ((e = strmap_get(&r->by_key, key))) {
        owner_unlink(r, e);
        inf_share_release(r->client, r->name, e->obj);
        ty_obj_unref(e->obj);
    } else {
        if (r->n == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 64;
            inf_entry **g = realloc(r->entries, cap * sizeof(*g));
            if (!g)
                return;
            r->entries = g;
            r->cap = cap;
        }
        if (!(e = calloc(1, sizeof(*e))) || !(e->key = strdup(key))) {
            free(e);
            return;
        }
        if (strmap_put(&r->by_key, e->key, e) < 0) {
            free(e->key);
            free(e);
            return;
        }
        e->idx = r->n;
        r->entries[r->n++] = e;
    }
    /* another cache's copy of this version when there is one */
    e->obj = inf_share_acquire(inf->c, r->name, o);
    e->gen = inf->gen;
    if ((e->owner = controller_uid(o)))
        owner_link(r, e);
}

static void cache_del(ty_informer *inf, const char *resource, const ty_obj *o)
{
    char key[600];
    inf_res *r = res_find(inf, resource, false);
    inf_entry *e;

    obj_key(o, key, sizeof(key));
    if (r && (e = strmap_get(&r->by_key, key)))
        entry_remove(r, e);
}

static void cache_apply(ty_informer *inf, const kc_event *evs, size_t n)
{
    pthread_mutex_lock(&inf->cache_mu);
    for (size_t i = 0; i < n; i++) {
        if (!cached(inf, evs[i].resource))
            continue;
        if (evs[i].type == KC_DELETED)
            cache_del(inf, evs[i].resource, evs[i].obj);
        else
            cache_put(inf, evs[i].resource, evs[i].obj);
    }
    pthread_mutex_unlock(&inf->cache_mu);
}

static void cache_free(ty_informer *inf)
{
    for (size_t i = 0; i < inf->nres; i++) {
        inf_res *r = inf->res[i];
        while (r->n)
            entry_remove(r, r->entries[r->n - 1]);
        strmap_free(&r->by_key);
        strmap_free(&r->by_owner);
        free(r->entries);
        free(r->name);
        free(r);
    }
    free(inf->res);
    inf->res = NULL;
    inf->nres = 0;
}

/* ---- delivery ---- */

static void deliver(ty_informer *inf, kc_event *evs, size_t n, unsigned flags)
{
    if (!n)
        return;
    if (inf->cache)
        cache_apply(inf, evs, n);
    if (inf->h.on_events)
        inf->h.on_events(inf, evs, n, flags, inf->ctx);
}

/* The listed objects, as KC_ADDED events in batches (borrowed: the list
 * holds them). */
static void deliver_list(ty_informer *inf, const char *resource, kc_list *l)
{
    size_t n = 0;

    for (size_t i = 0; i < l->n; i++) {
        inf->evs[n++] = (kc_event){.type = KC_ADDED, .resource = resource, .obj = l->items[i]};
        if (n == inf->batch) {
            deliver(inf, inf->evs, n, INF_LISTED);
            n = 0;
        }
    }
    deliver(inf, inf->evs, n, INF_LISTED);
}

/* What the cache holds that this list (gen) did not see went during the
 * gap: out of the cache, and to the handlers as KC_DELETED. */
static void sweep(ty_informer *inf)
{
    for (size_t k = 0; k < inf->nres; k++) {
        inf_res *r = inf->res[k];
        for (;;) {
            size_t n = 0;
            pthread_mutex_lock(&inf->cache_mu);
            for (size_t i = r->n; i-- > 0 && n < inf->batch;) {
                inf_entry *e = r->entries[i];
                if (e->gen == inf->gen)
                    continue;
                inf->evs[n++] = (kc_event){.type = KC_DELETED, .resource = r->name,
                                           .obj = ty_obj_ref(e->obj)};
                entry_remove(r, e);
            }
            pthread_mutex_unlock(&inf->cache_mu);
            if (!n)
                break;
            if (inf->h.on_events)
                inf->h.on_events(inf, inf->evs, n, INF_LISTED, inf->ctx);
            for (size_t i = 0; i < n; i++)
                ty_obj_unref(inf->evs[i].obj);
        }
    }
}

/* Reads up to a batch of events (the first waiting up to timeout_ms) and
 * delivers them. 1: delivered some, 0: none came, -1: the watch ended
 * (what came before was delivered). */
static int pump(ty_informer *inf, int timeout_ms)
{
    size_t n = 0;
    int rc = 0;
    ty_error err;

    ty_error_init(&err);
    while (n < inf->batch) {
        kc_event *ev = &inf->evs[n];
        rc = kc_watch_next(inf->w, n ? 0 : timeout_ms, ev, &err);
        if (rc <= 0)
            break;
        if (ev->type == KC_BOOKMARK) {
            kc_event_release(ev);
            continue;
        }
        n++;
    }
    deliver(inf, inf->evs, n, 0);
    for (size_t i = 0; i < n; i++)
        kc_event_release(&inf->evs[i]);
    if (rc < 0) {
        if (err.code == TY_EGONE)
            ty_warn("%s: fell behind the watch history; listing again", inf->name);
        else if (!inf->cancelled)
            ty_debug("%s: the watch ended (%s); listing again", inf->name, err.text);
        ty_error_clear(&err);
        return -1;
    }
    return n ? 1 : 0;
}

/* ---- (re)list ---- */

static void set_watch(ty_informer *inf, kc_watch *w)
{
    pthread_mutex_lock(&inf->mu);
    if (inf->w)
        kc_watch_close(inf->w);
    inf->w = w;
    if (!w)
        inf->synced = false;
    pthread_mutex_unlock(&inf->mu);
}

static void failed(ty_informer *inf)
{
    set_watch(inf, NULL);
    inf->backoff_ms = inf->backoff_ms ? inf->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (inf->backoff_ms > BACKOFF_MAX_MS)
        inf->backoff_ms = BACKOFF_MAX_MS;
    inf->retry_at = ty_now_ms() + inf->backoff_ms;
}

/* Opens the watch from rv (NULL or "": now); then on_relist. -1 when it
 * cannot open, or when cancelled (w closed again). */
static int open_watch(ty_informer *inf, const char *rv)
{
    ty_error err;
    kc_watch *w;

    ty_error_init(&err);
    w = kc_watch_open(inf->c, (const char *const *)inf->watch, rv && *rv ? rv : NULL, &err);
    if (!w) {
        ty_debug("%s: cannot watch: %s", inf->name, err.text);
        ty_error_clear(&err);
        return -1;
    }
    pthread_mutex_lock(&inf->mu);
    if (inf->cancelled) {
        pthread_mutex_unlock(&inf->mu);
        kc_watch_close(w);
        return -1;
    }
    inf->w = w;
    pthread_mutex_unlock(&inf->mu);
    if (inf->h.on_relist)
        inf->h.on_relist(inf, inf->ctx);
    return 0;
}

/* What to list this time (a JSON array of names; caller decrefs). */
static json_t *to_list(ty_informer *inf)
{
    json_t *all, *out = json_array(), *r;
    size_t i;

    if (!inf->list_all) {
        for (i = 0; inf->list && inf->list[i]; i++)
            json_array_append_new(out, json_string(inf->list[i]));
        return out;
    }
    all = kc_resources(inf->c);
    json_array_foreach(all, i, r) {
        const char *name = json_string_value(r);
        if (name && (!inf->list_skip || !inf->list_skip(name)))
            json_array_append(out, r);
    }
    json_decref(all);
    return out;
}

/* Lists (the first list's resourceVersion opens the watch; for list_all the
 * watch opens first, from now), delivers, and
 * catches the watch up. 0, or -1 with the watch closed. */
static int relist(ty_informer *inf)
{
    json_t *names = NULL;
    size_t n;
    ty_error err;
    int rc;

    inf->gen++;
    ty_error_init(&err);
    /* Every resource (list_all): which ones hold objects is known only by
     * asking, and an object of a resource that held none when asked, made
     * before the first list, would be in neither the lists nor a watch
     * opened from the first list's resourceVersion (the garbage collector
     * then judged its dependents ownerless). So the watch opens first, from
     * now: every change after it comes, everything before it is listed. */
    if (inf->list_all && open_watch(inf, NULL) < 0)
        goto fail;
    names = to_list(inf);
    n = json_array_size(names);
    if (!n && !inf->list_all && open_watch(inf, NULL) < 0)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const char *res = json_string_value(json_array_get(names, i));
        kc_list l = {0};
        if (kc_list_objects(inf->c, res, NULL, &l, &err) < 0) {
            ty_debug("%s: cannot list %s: %s", inf->name, res, err.text);
            ty_error_clear(&err);
            kc_list_free(&l);
            goto fail;
        }
        if (i == 0 && !inf->list_all && open_watch(inf, l.rv) < 0) {
            kc_list_free(&l);
            goto fail;
        }
        /* The resource's name as the informer's own (the list's goes). */
        const char *name = res;
        for (size_t k = 0; inf->list && inf->list[k]; k++)
            if (!strcmp(inf->list[k], res))
                name = inf->list[k];
        if (inf->list_all) {
            pthread_mutex_lock(&inf->cache_mu);
            inf_res *r = res_find(inf, res, true);
            pthread_mutex_unlock(&inf->cache_mu);
            if (r)
                name = r->name;
        }
        deliver_list(inf, name, &l);
        kc_list_free(&l);
    }
    json_decref(names);
    names = NULL;
    if (inf->cache)
        sweep(inf);
    /* Catch up: what the watch has at hand is older than the lists' end. */
    while ((rc = pump(inf, 0)) == 1)
        ;
    if (rc < 0)
        goto fail;
    pthread_mutex_lock(&inf->mu);
    inf->synced = true;
    pthread_mutex_unlock(&inf->mu);
    inf->lists++;
    inf->backoff_ms = 0;
    if (inf->h.on_synced)
        inf->h.on_synced(inf, inf->ctx);
    return 0;
fail:
    json_decref(names);
    failed(inf);
    return -1;
}

/* ---- polling ---- */

static bool is_cancelled(ty_informer *inf)
{
    bool c;
    pthread_mutex_lock(&inf->mu);
    c = inf->cancelled;
    pthread_mutex_unlock(&inf->mu);
    return c;
}

/* Waits until the backoff is over, or timeout_ms, or inf_cancel. Whether the
 * backoff is over. */
static bool backoff_wait(ty_informer *inf, int timeout_ms)
{
    int64_t now = ty_now_ms(), until = inf->retry_at;

    if (now >= until)
        return true;
    if (timeout_ms >= 0 && now + timeout_ms < until)
        until = now + timeout_ms;
    struct timespec dl = ty_deadline_ms(CLOCK_MONOTONIC, until - now);
    pthread_mutex_lock(&inf->mu);
    while (!inf->cancelled && ty_now_ms() < until)
        if (pthread_cond_timedwait(&inf->cv, &inf->mu, &dl) != 0)
            break;
    pthread_mutex_unlock(&inf->mu);
    return ty_now_ms() >= inf->retry_at;
}

int inf_poll(ty_informer *inf, int timeout_ms)
{
    int rc;

    if (is_cancelled(inf))
        return -1;
    if (!inf->w) {
        if (!backoff_wait(inf, timeout_ms))
            return is_cancelled(inf) ? -1 : 0;
        if (is_cancelled(inf))
            return -1;
        rc = relist(inf);
        if (is_cancelled(inf))
            return -1;
        return rc == 0 ? 1 : 0;
    }
    rc = pump(inf, timeout_ms);
    if (rc < 0) {
        set_watch(inf, NULL); /* relist at once: only a failed attempt backs off */
        inf->retry_at = 0;
        return is_cancelled(inf) ? -1 : 1;
    }
    return rc;
}

static void *inf_main(void *arg)
{
    ty_informer *inf = arg;

    while (inf_poll(inf, -1) >= 0)
        ;
    return NULL;
}

int inf_start(ty_informer *inf, const char *thread_name, ty_error *err)
{
    if (pthread_create(&inf->thread, NULL, inf_main, inf) != 0)
        return ty_seterr(err, TY_EINTERNAL, "%s: cannot start the informer's thread",
                         inf->name);
    ty_thread_setup(inf->thread, thread_name,
                    inf->interactive ? TY_THREAD_INTERACTIVE : TY_THREAD_BACKGROUND);
    inf->started = true;
    return 0;
}

void inf_cancel(ty_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    inf->cancelled = true;
    if (inf->w)
        kc_watch_cancel(inf->w);
    pthread_cond_broadcast(&inf->cv);
    pthread_mutex_unlock(&inf->mu);
}

/* ---- the rest ---- */

ty_informer *inf_new(ty_kc *c, const inf_config *cfg, const inf_handlers *h, void *ctx,
                     ty_error *err)
{
    ty_informer *inf;

    if (cfg->list_all && cfg->watch) {
        ty_seterr(err, TY_EINVALID, "informer: list_all watches every resource");
        return NULL;
    }
    for (size_t i = 0; cfg->list && cfg->watch && cfg->list[i]; i++)
        if (!strv_has((char *const *)cfg->watch, cfg->list[i])) {
            ty_seterr(err, TY_EINVALID, "informer: %s is listed but not watched", cfg->list[i]);
            return NULL;
        }
    if (!(inf = calloc(1, sizeof(*inf))))
        goto oom;
    inf->c = c;
    inf->list_all = cfg->list_all;
    inf->list_skip = cfg->list_skip;
    inf->cache = cfg->cache;
    inf->interactive = cfg->interactive;
    inf->batch = cfg->batch ? cfg->batch : DEFAULT_BATCH;
    if (h)
        inf->h = *h;
    inf->ctx = ctx;
    pthread_mutex_init(&inf->mu, NULL);
    pthread_mutex_init(&inf->cache_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* backoff_wait's deadline */
    pthread_cond_init(&inf->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (!(inf->name = strdup(cfg->name ? cfg->name : "informer")) ||
        (cfg->watch && !(inf->watch = strv_copy(cfg->watch))) ||
        (cfg->list && !(inf->list = strv_copy(cfg->list))) ||
        !(inf->evs = calloc(inf->batch, sizeof(*inf->evs)))) {
        inf_free(inf);
        goto oom;
    }
    return inf;
oom:
    ty_seterr(err, TY_EINTERNAL, "out of memory");
    return NULL;
}

void inf_free(ty_informer *inf)
{
    if (!inf)
        return;
    inf_cancel(inf);
    if (inf->started)
        pthread_join(inf->thread, NULL);
    set_watch(inf, NULL);
    cache_free(inf);
    strv_free(inf->watch);
    strv_free(inf->list);
    free(inf->evs);
    free(inf->name);
    pthread_cond_destroy(&inf->cv);
    pthread_mutex_destroy(&inf->cache_mu);
    pthread_mutex_destroy(&inf->mu);
    free(inf);
}

bool inf_has_synced(ty_informer *inf)
{
    bool s;
    pthread_mutex_lock(&inf->mu);
    s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

uint64_t inf_lists(ty_informer *inf)
{
    return inf->lists;
}

ty_obj *inf_get(ty_informer *inf, const char *resource, const char *ns, const char *name)
{
    char key[600];
    inf_res *r;
    inf_entry *e;
    ty_obj *o = NULL;

    if (!inf->cache)
        return NULL;
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    pthread_mutex_lock(&inf->cache_mu);
    if ((r = res_find(inf, resource, false)) && (e = strmap_get(&r->by_key, key)))
        o = ty_obj_ref(e->obj);
    pthread_mutex_unlock(&inf->cache_mu);
    return o;
}

static int by_key(const void *a, const void *b)
{
    const char *ans, *aname, *bns, *bname;
    int c;

    ty_obj_key(*(ty_obj *const *)a, &ans, &aname);
    ty_obj_key(*(ty_obj *const *)b, &bns, &bname);
    c = strcmp(ans ? ans : "", bns ? bns : "");
    return c ? c : strcmp(aname ? aname : "", bname ? bname : "");
}

int inf_list_owned(ty_informer *inf, const char *resource, const char *ns,
                   const char *owner_uid, kc_list *out, ty_error *err)
{
    inf_res *r;
    inf_owner *ow = NULL;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!inf->cache)
        return ty_seterr(err, TY_EINTERNAL, "%s: the informer keeps no cache", inf->name);
    pthread_mutex_lock(&inf->cache_mu);
    if ((r = res_find(inf, resource, false)))
        ow = strmap_get(&r->by_owner, owner_uid);
    if (ow && !(out->items = malloc(ow->n * sizeof(*out->items))))
        rc = ty_seterr(err, TY_EINTERNAL, "out of memory");
    for (size_t i = 0; rc == 0 && ow && i < ow->n; i++) {
        const char *ons, *name;
        ty_obj_key(ow->v[i]->obj, &ons, &name);
        if (!ns || !strcmp(ns, ons ? ons : ""))
            out->items[out->n++] = ty_obj_ref(ow->v[i]->obj);
    }
    pthread_mutex_unlock(&inf->cache_mu);
    if (out->n)
        qsort(out->items, out->n, sizeof(*out->items), by_key);
    out->remaining = 0;
    return rc;
}

bool inf_caches(const ty_informer *inf, const char *resource)
{
    return cached(inf, resource);
}

size_t inf_count(ty_informer *inf, const char *resource)
{
    inf_res *r;
    size_t n = 0;

    pthread_mutex_lock(&inf->cache_mu);
    if ((r = res_find(inf, resource, false)))
        n = r->n;
    pthread_mutex_unlock(&inf->cache_mu);
    return n;
}
