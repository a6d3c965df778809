/* kc_cache.c - reads from an informer's cache, the rest to the inner client,
 * and this client's own writes read back until the cache has them (see
 * kc_cache.h). */
#include "client/kc_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "base/jsonget.h"
#include "base/strmap.h"
#include "base/timeutil.h"

/* A write the cache has not shown this long is forgotten: the watch is
 * that far behind only when it is broken, and the informer then lists
 * again (its cache is then newer than the write). Bounds the memory too. */
#define KCC_PENDING_TTL_MS 30000
/* Pending writes at most; beyond, the oldest are forgotten. */
#define KCC_PENDING_MAX 65536
/* Every so many writes noted, every pending one is checked against the
 * cache: a write whose object is read no more (a finished job's) is
 * forgotten, and the owner lists' scans stay short. */
#define KCC_SWEEP_EVERY 256

typedef enum { KCC_WRITE, KCC_DELETE } kcc_kind;

typedef struct kcc_pending {
    kcc_kind kind;
    uint64_t rv;          /* the write's resourceVersion */
    bool rv_ok;           /* rv parsed as an integer */
    int64_t at_ms;        /* monotonic: when written */
    size_t idx;           /* in the pending array */
    ty_obj *obj;          /* what the write returned (a reference; NULL for a
                             delete): a mutate's base until the cache has it */
    char uid[64];         /* the object's ("": not known) */
    char owner[64];       /* its controller's uid ("": not known, any owner) */
    const char *resource, *ns, *name; /* into key */
    char key[];           /* "resource\x01ns\x01name" (the map's key), and the
                             three parts after it, NUL-separated */
} kcc_pending;

typedef struct kcc {
    ty_kc base;
    ty_kc *inner;
    _Atomic(ty_informer *) inf;
    pthread_mutex_t mu;   /* guards pending and the counts */
    strmap by_key;
    kcc_pending **pending;
    size_t n, cap;
    size_t since_sweep;   /* writes noted since the last sweep */
    uint64_t hits, misses;
    uint64_t unread_mutates, read_again; /* kc_mutate without a read; read after all */
} kcc;

#define KCC(c) ((kcc *)(c))

/* ---- pending writes (mu held) ---- */

static void pending_remove(kcc *c, kcc_pending *p)
{
    strmap_del(&c->by_key, p->key);
    c->pending[p->idx] = c->pending[--c->n];
    c->pending[p->idx]->idx = p->idx;
    ty_obj_unref(p->obj);
    free(p);
}

static bool rv_num(const char *rv, uint64_t *out)
{
    char *end;

    if (!rv || *rv < '0' || *rv > '9')
        return false;
    errno = 0;
    *out = strtoull(rv, &end, 10);
    return !errno && !*end;
}

static void copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static bool still_pending(kcc *c, ty_informer *inf, kcc_pending *p, int64_t now);

/* Forgets the writes the cache has caught up with (every one past the TTL
 * when no informer is attached). mu held. */
static void sweep(kcc *c)
{
    ty_informer *inf = atomic_load(&c->inf);
    int64_t now = ty_now_ms();

    c->since_sweep = 0;
    for (size_t i = c->n; i-- > 0;) {
        if (i >= c->n)
            continue; /* the one removed before moved here */
        if (inf)
            still_pending(c, inf, c->pending[i], now);
        else if (now - c->pending[i]->at_ms > KCC_PENDING_TTL_MS)
            pending_remove(c, c->pending[i]);
    }
}

/* Remembers the write of (resource, ns, name) that gave o (may be NULL: a
 * delete whose last state the server did not send). */
static void pending_note(kcc *c, kcc_kind kind, const char *resource, const char *ns,
                         const char *name, const ty_obj *o)
{
    size_t lr = strlen(resource), ln = strlen(ns ? ns : ""), lm = strlen(name);
    size_t klen = lr + ln + lm + 3;
    kcc_pending *p = calloc(1, sizeof(*p) + 2 * klen);
    char rv[TY_RV_MAX] = "";
    json_t *meta = o ? ty_obj_metadata(o) : NULL;
    size_t i;
    json_t *r;

    if (!p) {
        json_decref(meta);
        return; /* out of memory: read from the cache as if written long ago */
    }
    snprintf(p->key, klen, "%s\x01%s\x01%s", resource, ns ? ns : "", name);
    p->resource = p->key + klen;
    memcpy((char *)p->resource, resource, lr + 1);
    p->ns = p->resource + lr + 1;
    memcpy((char *)p->ns, ns ? ns : "", ln + 1);
    p->name = p->ns + ln + 1;
    memcpy((char *)p->name, name, lm + 1);
    p->kind = kind;
    p->at_ms = ty_now_ms();
    if (o)
        ty_obj_rv(o, rv, sizeof(rv));
    p->rv_ok = rv_num(rv, &p->rv);
    if (kind == KCC_WRITE)
        p->obj = ty_obj_ref((ty_obj *)o);
    copy_str(p->uid, sizeof(p->uid), ty_jstr(meta, "uid"));
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
        if (json_is_true(json_object_get(r, "controller")))
            copy_str(p->owner, sizeof(p->owner), ty_jstr(r, "uid"));
    json_decref(meta);

    pthread_mutex_lock(&c->mu);
    kcc_pending *old = strmap_get(&c->by_key, p->key);
    if (old)
        pending_remove(c, old);
    if (c->n == KCC_PENDING_MAX) {
        size_t oldest = 0;
        for (size_t k = 1; k < c->n; k++)
            if (c->pending[k]->at_ms < c->pending[oldest]->at_ms)
                oldest = k;
        pending_remove(c, c->pending[oldest]);
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        kcc_pending **g = realloc(c->pending, cap * sizeof(*g));
        if (!g)
            goto drop;
        c->pending = g;
        c->cap = cap;
    }
    if (strmap_put(&c->by_key, p->key, p) < 0)
        goto drop;
    p->idx = c->n;
    c->pending[c->n++] = p;
    if (++c->since_sweep >= KCC_SWEEP_EVERY)
        sweep(c);
    pthread_mutex_unlock(&c->mu);
    return;
drop:
    pthread_mutex_unlock(&c->mu);
    ty_obj_unref(p->obj);
    free(p);
}

/* Whether the cache (its object cached, NULL when it has none) shows the
 * write p, or p expired. */
static bool caught_up(const kcc_pending *p, const ty_obj *cached, int64_t now)
{
    char rv[TY_RV_MAX];
    uint64_t n;
    bool ok = false;

    if (now - p->at_ms > KCC_PENDING_TTL_MS)
        return true;
    if (!cached)
        return p->kind == KCC_DELETE;
    ty_obj_rv(cached, rv, sizeof(rv));
    bool newer = p->rv_ok && rv_num(rv, &n) && n >= p->rv;
    if (p->kind == KCC_WRITE)
        return newer;
    /* a delete: another object of that name now, or this one marked */
    json_t *meta = ty_obj_metadata(cached);
    const char *uid = ty_jstr(meta, "uid");
    if (*p->uid && uid && strcmp(uid, p->uid) != 0)
        ok = true;
    else if (json_object_get(meta, "deletionTimestamp") && (newer || !p->rv_ok))
        ok = true;
    json_decref(meta);
    return ok;
}

/* Whether p is still ahead of the cache; forgets it when not. mu held. */
static bool still_pending(kcc *c, ty_informer *inf, kcc_pending *p, int64_t now)
{
    ty_obj *o = inf_get(inf, p->resource, p->ns, p->name);
    bool up = caught_up(p, o, now);

    ty_obj_unref(o);
    if (up)
        pending_remove(c, p);
    return !up;
}

/* ---- reads ---- */

/* The informer when it serves resource now, else NULL. */
static ty_informer *serving(kcc *c, const char *resource)
{
    ty_informer *inf = atomic_load(&c->inf);

    return inf && inf_caches(inf, resource) && inf_has_synced(inf) ? inf : NULL;
}

static ty_obj *cc_get(ty_kc *kc, const char *resource, const char *ns, const char *name,
                      ty_error *err)
{
    kcc *c = KCC(kc);
    ty_informer *inf = serving(c, resource);
    char key[1024];
    kcc_pending *p;
    ty_obj *o;

    if (!inf)
        return kc_get(c->inner, resource, ns, name, err);
    snprintf(key, sizeof(key), "%s\x01%s\x01%s", resource, ns ? ns : "", name);
    pthread_mutex_lock(&c->mu);
    if ((p = strmap_get(&c->by_key, key)) && still_pending(c, inf, p, ty_now_ms())) {
        c->misses++;
        pthread_mutex_unlock(&c->mu);
        return kc_get(c->inner, resource, ns, name, err);
    }
    c->hits++;
    pthread_mutex_unlock(&c->mu);
    if (!(o = inf_get(inf, resource, ns, name)))
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", resource, name);
    return o;
}

/* Whether a write of resource owned by owner_uid (in ns, NULL: any) is
 * still ahead of the cache. mu held. */
static bool owner_pending(kcc *c, ty_informer *inf, const char *resource, const char *ns,
                          const char *owner_uid)
{
    int64_t now = ty_now_ms();
    bool any = false;

    for (size_t i = c->n; i-- > 0;) {
        kcc_pending *p = c->pending[i];
        if (strcmp(p->resource, resource) || (ns && strcmp(p->ns, ns)) ||
            (*p->owner && strcmp(p->owner, owner_uid)))
            continue;
        if (still_pending(c, inf, p, now))
            any = true; /* go on: the others may be forgotten */
    }
    return any;
}

static int cc_owned(ty_kc *kc, const char *resource, const char *ns, const char *owner_uid,
                    const char *sel, kc_list *out, ty_error *err)
{
    kcc *c = KCC(kc);
    ty_informer *inf = serving(c, resource);
    bool ahead;

    if (inf) {
        pthread_mutex_lock(&c->mu);
        ahead = owner_pending(c, inf, resource, ns, owner_uid);
        if (ahead)
            c->misses++;
        else
            c->hits++;
        pthread_mutex_unlock(&c->mu);
        if (!ahead)
            return inf_list_owned(inf, resource, ns, owner_uid, out, err);
    }
    return sel ? kc_list_owned_sel(c->inner, resource, ns, owner_uid, sel, out, err)
               : kc_list_owned(c->inner, resource, ns, owner_uid, out, err);
}

static int cc_list_owned(ty_kc *kc, const char *resource, const char *ns,
                         const char *owner_uid, kc_list *out, ty_error *err)
{
    return cc_owned(kc, resource, ns, owner_uid, NULL, out, err);
}

static int cc_list_owned_sel(ty_kc *kc, const char *resource, const char *ns,
                             const char *owner_uid, const char *sel, kc_list *out,
                             ty_error *err)
{
    return cc_owned(kc, resource, ns, owner_uid, sel, out, err);
}

static int cc_list(ty_kc *kc, const char *resource, const kc_list_opts *opts, kc_list *out,
                   ty_error *err)
{
    return kc_list_objects(KCC(kc)->inner, resource, opts, out, err);
}

static size_t cc_count(ty_kc *kc, const char *resource)
{
    return kc_count(KCC(kc)->inner, resource);
}

static json_t *cc_resources(ty_kc *kc)
{
    return kc_resources(KCC(kc)->inner);
}

/* ---- writes: the inner client's, remembered ---- */

static ty_obj *noted(kcc *c, kcc_kind kind, const char *resource, const char *ns,
                     const char *name, ty_obj *o)
{
    const char *ons = ns, *oname = name;
    ty_informer *inf = atomic_load(&c->inf);

    if (inf && !inf_caches(inf, resource))
        return o; /* never read from the cache: nothing to catch up with */
    if (o)
        ty_obj_key(o, &ons, &oname);
    if (oname && (o || kind == KCC_DELETE))
        pending_note(c, kind, resource, ons ? ons : ns, oname, o);
    return o;
}

static ty_obj *cc_create(ty_kc *kc, const char *resource, const char *ns, json_t *obj,
                         ty_error *err)
{
    return noted(KCC(kc), KCC_WRITE, resource, ns, NULL,
                 kc_create(KCC(kc)->inner, resource, ns, obj, err));
}

static ty_obj *cc_update(ty_kc *kc, const char *resource, const char *ns, const json_t *obj,
                         ty_error *err)
{
    return noted(KCC(kc), KCC_WRITE, resource, ns, NULL,
                 kc_update(KCC(kc)->inner, resource, ns, obj, err));
}

/* ---- kc_mutate from what this client knows, without a read ----
 *
 * The inner client's kc_mutate reads the object first (over HTTP a GET per
 * write). Here the base is the newest version this client has: its own
 * last write of the object while the cache lacks it, else the cache's copy.
 * fn changes a copy of it, and the change goes as a merge patch carrying
 * the base's resourceVersion: the API server applies it only if the object
 * is still at that version (409 Conflict otherwise), so a stale base never
 * overwrites another writer's change. On a conflict the inner client's
 * kc_mutate runs: read, fn again, write, as client-go's RetryOnConflict
 * with a fresh GET. */

/* A new reference to the base for a mutate of (resource, ns, name), or NULL
 * (not cached, cache not synced, or an own write known only by its key). */
static ty_obj *mutate_base(kcc *c, const char *resource, const char *ns, const char *name)
{
    ty_informer *inf = serving(c, resource);
    char key[1024];
    kcc_pending *p;
    ty_obj *o = NULL;

    if (!inf)
        return NULL;
    snprintf(key, sizeof(key), "%s\x01%s\x01%s", resource, ns ? ns : "", name);
    pthread_mutex_lock(&c->mu);
    if ((p = strmap_get(&c->by_key, key)) && still_pending(c, inf, p, ty_now_ms())) {
        o = p->kind == KCC_WRITE ? ty_obj_ref(p->obj) : NULL;
        pthread_mutex_unlock(&c->mu);
        return o;
    }
    pthread_mutex_unlock(&c->mu);
    return inf_get(inf, resource, ns, name);
}

/* metadata.resourceVersion = rv in patch: the write's precondition. */
static int set_precondition(json_t *patch, const char *rv)
{
    json_t *meta = json_object_get(patch, "metadata");

    if (!meta && json_object_set_new(patch, "metadata", meta = json_object()) < 0)
        return -1;
    return json_object_set_new(meta, "resourceVersion", json_string(rv));
}

typedef enum { KCC_DONE, KCC_READ_AGAIN } kcc_outcome;

/* fn on a copy of base, the change written as a patch with base's
 * resourceVersion. KCC_DONE with *out (NULL with err on failure), or
 * KCC_READ_AGAIN: the base was stale (a conflict), fn refused it, or the
 * change cannot be a merge patch; nothing written then. */
static kcc_outcome mutate_from(kcc *c, ty_obj *base, const char *resource, const char *ns,
                               const char *name, kc_mutate_fn fn, void *arg, unsigned flags,
                               ty_obj **out, ty_error *err)
{
    const api_resource *res = api_find_store_key(resource);
    json_t *copy = ty_obj_json_copy(base), *patch = NULL;
    char rv[TY_RV_MAX];
    const char *nrv;
    bool own_rv;
    ty_error perr;
    int rc;

    *out = NULL;
    if (!copy) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return KCC_DONE;
    }
    ty_obj_rv(base, rv, sizeof(rv));
    ty_error_init(&perr);
    rc = fn(copy, arg, &perr);
    ty_error_clear(&perr);
    if (rc != 0) {
        /* a refusal may come of a stale base: the server's state decides */
        json_decref(copy);
        return KCC_READ_AGAIN;
    }
    if (json_equal(copy, ty_obj_json(base))) {
        /* nothing to write; were the base stale, the cache catching up
         * brings another pass */
        json_decref(copy);
        *out = ty_obj_ref(base);
        return KCC_DONE;
    }
    nrv = json_string_value(json_object_get(json_object_get(copy, "metadata"),
                                            "resourceVersion"));
    own_rv = !nrv || strcmp(nrv, rv) != 0; /* fn chose the precondition */
    if (!*rv || !(patch = kc_merge_diff(ty_obj_json(base), copy)) ||
        (!own_rv && set_precondition(patch, rv) < 0)) {
        json_decref(patch);
        json_decref(copy);
        return KCC_READ_AGAIN;
    }
    json_decref(copy);
    ty_error_init(&perr); /* the caller's err may be NULL: conflicts are told here */
    *out = kc_patch(c->inner, resource, ns, name, KC_PATCH_MERGE, patch,
                    (flags & KC_STATUS) && res && res->has_status, &perr);
    json_decref(patch);
    if (!*out && perr.code == TY_ECONFLICT && !own_rv) {
        ty_error_clear(&perr);
        return KCC_READ_AGAIN;
    }
    if (err && !*out)
        *err = perr; /* the causes move with it */
    else
        ty_error_clear(&perr);
    return KCC_DONE;
}

static ty_obj *cc_mutate(ty_kc *kc, const char *resource, const char *ns, const char *name,
                         kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err)
{
    kcc *c = KCC(kc);
    ty_obj *base = kc_reads_local(c->inner) ? NULL : mutate_base(c, resource, ns, name);
    ty_obj *o = NULL;

    if (base) {
        kcc_outcome r = mutate_from(c, base, resource, ns, name, fn, arg, flags, &o, err);
        bool wrote = o && o != base;

        ty_obj_unref(base);
        pthread_mutex_lock(&c->mu);
        if (r == KCC_DONE)
            c->unread_mutates++;
        else
            c->read_again++;
        pthread_mutex_unlock(&c->mu);
        if (r == KCC_DONE)
            return wrote ? noted(c, KCC_WRITE, resource, ns, name, o) : o;
    }
    return noted(c, KCC_WRITE, resource, ns, name,
                 kc_mutate(c->inner, resource, ns, name, fn, arg,
                           base ? flags | KC_FRESH : flags, err));
}

static ty_obj *cc_patch(ty_kc *kc, const char *resource, const char *ns, const char *name,
                        kc_patch_type type, const json_t *patch, bool status, ty_error *err)
{
    return noted(KCC(kc), KCC_WRITE, resource, ns, name,
                 kc_patch(KCC(kc)->inner, resource, ns, name, type, patch, status, err));
}

static ty_obj *cc_delete(ty_kc *kc, const char *resource, const char *ns, const char *name,
                         const kc_delete_opts *opts, bool *deleted, ty_error *err)
{
    ty_obj *o = kc_delete(KCC(kc)->inner, resource, ns, name, opts, deleted, err);

    if (o || !err || !err->code)
        noted(KCC(kc), KCC_DELETE, resource, ns, name, o);
    return o;
}

/* Not remembered: a binding's answer names no resourceVersion, and the
 * controllers that read through this client bind nothing (the scheduler
 * keeps its own model). */
static int cc_bind(ty_kc *kc, const char *ns, const char *name, const char *uid,
                   const char *node, ty_error *err)
{
    return kc_bind(KCC(kc)->inner, ns, name, uid, node, err);
}

static size_t cc_write_all(ty_kc *kc, kc_op *ops, size_t n)
{
    kcc *c = KCC(kc);
    size_t failed = 0;

    /* A client that sends one request per op anyway: each op through this
     * one, so that a mutate starts from what it knows (cc_mutate) and every
     * write is noted. One whose reads are local keeps its batch whole. */
    if (!kc_reads_local(c->inner)) {
        for (size_t i = 0; i < n; i++) {
            kc_run_op(kc, &ops[i]);
            if (ops[i].kind != KC_OP_RECORD && ops[i].err.code)
                failed++;
        }
        return failed;
    }
    failed = kc_write_all(c->inner, ops, n);

    for (size_t i = 0; i < n; i++) {
        kc_op *op = &ops[i];
        switch (op->kind) {
        case KC_OP_CREATE:
        case KC_OP_MUTATE:
            if (op->result)
                noted(c, KCC_WRITE, op->resource, op->ns, op->name, op->result);
            break;
        case KC_OP_DELETE:
            if (op->result || !op->err.code)
                noted(c, KCC_DELETE, op->resource, op->ns, op->name, op->result);
            break;
        case KC_OP_BIND: /* as cc_bind */
        case KC_OP_RECORD:
            break;
        }
    }
    return failed;
}

/* ---- watches: the inner client's (their ops are its own) ---- */

static kc_watch *cc_watch_open(ty_kc *kc, const char *const *only, const char *from_rv,
                               ty_error *err)
{
    return kc_watch_open(KCC(kc)->inner, only, from_rv, err);
}

static int cc_watch_next(kc_watch *w, int timeout_ms, kc_event *ev, ty_error *err)
{
    return kc_watch_next(w, timeout_ms, ev, err);
}

static void cc_watch_cancel(kc_watch *w)
{
    kc_watch_cancel(w);
}

static void cc_watch_close(kc_watch *w)
{
    kc_watch_close(w);
}

static void cc_free(ty_kc *kc)
{
    kcc *c = KCC(kc);

    while (c->n)
        pending_remove(c, c->pending[c->n - 1]);
    free(c->pending);
    strmap_free(&c->by_key);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static const kc_ops cache_ops = {
    .kind = "cache",
    .get = cc_get,
    .list = cc_list,
    .list_owned = cc_list_owned,
    .list_owned_sel = cc_list_owned_sel,
    .count = cc_count,
    .count_is_cheap = false,
    .resources = cc_resources,
    .create = cc_create,
    .update = cc_update,
    .mutate = cc_mutate,
    .patch = cc_patch,
    .del = cc_delete,
    .bind = cc_bind,
    .write_all = cc_write_all,
    .watch_open = cc_watch_open,
    .watch_next = cc_watch_next,
    .watch_cancel = cc_watch_cancel,
    .watch_close = cc_watch_close,
    .free = cc_free,
};

ty_kc *kc_cache_new(ty_kc *inner, ty_error *err)
{
    kcc *c = calloc(1, sizeof(*c));

    if (!c) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    c->base.ops = &cache_ops;
    c->inner = inner;
    atomic_init(&c->inf, NULL);
    pthread_mutex_init(&c->mu, NULL);
    strmap_init(&c->by_key);
    return &c->base;
}

void kc_cache_attach(ty_kc *kc, ty_informer *inf)
{
    atomic_store(&KCC(kc)->inf, inf);
}

void kc_cache_stats(ty_kc *kc, uint64_t *hits, uint64_t *own_write_misses, size_t *pending)
{
    kcc *c = KCC(kc);

    pthread_mutex_lock(&c->mu);
    if (pending)
        *pending = c->n;
    if (hits)
        *hits = c->hits;
    if (own_write_misses)
        *own_write_misses = c->misses;
    pthread_mutex_unlock(&c->mu);
}

void kc_cache_mutate_stats(ty_kc *kc, uint64_t *unread, uint64_t *read_again)
{
    kcc *c = KCC(kc);

    pthread_mutex_lock(&c->mu);
    if (unread)
        *unread = c->unread_mutates;
    if (read_again)
        *read_again = c->read_again;
    pthread_mutex_unlock(&c->mu);
}
