/* obj.c - immutable snapshots of stored objects, and the store's randomness. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/jsonin.h"
#include "base/jsonout.h"
#include "store/store_int.h"

/* ---- snapshots ---- */

static const ty_obj_class store_class;

static store_obj *obj_alloc(uint64_t rv, const char *ns, const char *name)
{
    size_t lns = strlen(ns), lname = strlen(name);
    store_obj *o = calloc(1, sizeof(*o) + lns + lname + 2);

    if (!o)
        return NULL;
    o->base.cls = &store_class;
    atomic_init(&o->refs, 1);
    atomic_init(&o->tree, NULL);
    atomic_init(&o->light, NULL);
    atomic_init(&o->used, false);
    atomic_init(&o->text, NULL);
    atomic_init(&o->z, NULL);
    atomic_init(&o->view, NULL);
    o->rv = rv;
    memcpy(o->key, ns, lns + 1);
    memcpy(o->key + lns + 1, name, lname + 1);
    o->ns = o->key;
    o->name = o->key + lns + 1;
    return o;
}

store_obj *obj_new_text(uint64_t rv, const char *ns, const char *name, const char *text,
                        size_t len, ty_error *err)
{
    store_obj *o = obj_alloc(rv, ns, name);
    char *t = o ? malloc(len + 1) : NULL;

    if (!t) {
        free(o);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    memcpy(t, text, len);
    t[len] = '\0';
    atomic_store_explicit(&o->text, t, memory_order_relaxed);
    o->len = len;
    return o;
}

store_obj *obj_new_z(uint64_t rv, const char *ns, const char *name, size_t len,
                     const void *data, size_t zlen, size_t rv_at, store_zdict *d,
                     ty_error *err)
{
    store_obj *o = obj_alloc(rv, ns, name);
    obj_z *z = o ? malloc(sizeof(*z) + zlen) : NULL;

    if (!z) {
        free(o);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    memcpy(z->data, data, zlen);
    z->len = (uint32_t)zlen;
    z->rv_at = (uint32_t)rv_at;
    z->dict = zdict_ref(d);
    atomic_store_explicit(&o->z, z, memory_order_relaxed);
    o->len = len;
    return o;
}

static store_obj *new_with(json_t *json, bool light, uint64_t rv, const char *text,
                           size_t len, ty_error *err)
{
    store_obj *o = obj_alloc(rv, ty_jmeta(json, "namespace"), ty_jmeta(json, "name"));
    char *t;

    if (!o) {
        json_decref(json);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }

    atomic_store_explicit(light ? &o->light : &o->tree, json, memory_order_relaxed);
    if (text) {
        if ((t = malloc(len + 1))) {
            memcpy(t, text, len);
            t[len] = '\0';
        }
    } else {
        t = json_dumps(json, JSON_COMPACT);
        len = t ? strlen(t) : 0;
    }
    atomic_store_explicit(&o->text, t, memory_order_relaxed);
    if (!t) {
        ty_seterr(err, TY_EINTERNAL, "cannot serialise object");
        goto error;
    }
    o->len = len;
    if (len > STORE_MAX_OBJECT_BYTES) {
        ty_seterr(err, TY_ETOOLARGE, "Request entity too large: limit is %u",
                  STORE_MAX_OBJECT_BYTES);
        goto error;
    }
    return o;
error:
    store_obj_unref(o);
    return NULL;
}

store_obj *obj_new(json_t *json, uint64_t rv, const char *text, size_t len, ty_error *err)
{
    return new_with(json, false, rv, text, len, err);
}

store_obj *obj_new_light(json_t *json, uint64_t rv, const char *text, size_t len,
                         ty_error *err)
{
    if (!text) { /* a light tree's own text would lack the spec */
        json_decref(json);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    return new_with(json, true, rv, text, len, err);
}

/* For the sweeper (sweep.c): o's tree or text was handed out. Written only
 * when it changes: a cache line every reader writes would bounce. */
static void mark_used(store_obj *o)
{
    if (!atomic_load_explicit(&o->used, memory_order_relaxed))
        atomic_store_explicit(&o->used, true, memory_order_relaxed);
}

json_t *obj_json(const store_obj *o)
{
    store_obj *w = (store_obj *)o; /* the tree is a cache: o stays the same value */
    json_t *tree = atomic_load_explicit(&w->tree, memory_order_acquire), *none = NULL;

    mark_used(w);
    if (tree)
        return tree;
    if (!(tree = obj_parse(o)))
        return NULL;
    /* Two threads may parse at once; the first to publish wins. */
    if (!atomic_compare_exchange_strong_explicit(&w->tree, &none, tree, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        json_decref(tree);
        tree = none;
    }
    return tree;
}

/* o's plain text, as it is now: borrowed when o has it (the caller's
 * reference, or a lock the sweeper takes, keeps it), else decompressed into
 * a buffer the caller frees (*owned). NULL when out of memory. */
static const char *text_now(const store_obj *o, char **owned)
{
    const char *t = atomic_load_explicit(&((store_obj *)o)->text, memory_order_acquire);

    *owned = NULL;
    if (t)
        return t;
    return *owned = obj_inflate(o);
}

json_t *obj_parse(const store_obj *o)
{
    char *owned;
    const char *t = text_now(o, &owned);
    json_t *tree = t ? ty_json_load(t, o->len, 0, NULL) : NULL;

    free(owned);
    return tree;
}

json_t *store_obj_metadata(const store_obj *o)
{
    static const char *const meta[] = {"metadata", NULL};
    json_t *tree = atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire), *m;
    char *owned;
    const char *t;

    if (tree || (tree = atomic_load_explicit(&((store_obj *)o)->light, memory_order_acquire)))
        return json_incref(json_object_get(tree, "metadata"));
    if (!(t = text_now(o, &owned)))
        return NULL;
    if (!(tree = obj_text_members(t, o->len, meta)))
        tree = ty_json_load(t, o->len, 0, NULL);
    m = json_incref(json_object_get(tree, "metadata"));
    json_decref(tree);
    free(owned);
    return m;
}

json_t *store_obj_json_read(const store_obj *o)
{
    json_t *tree = atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire);

    mark_used((store_obj *)o);
    return tree ? json_incref(tree) : obj_parse(o);
}

json_t *store_obj_json_copy(const store_obj *o)
{
    json_t *tree = atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire);

    mark_used((store_obj *)o);
    return tree ? json_deep_copy(tree) : obj_parse(o);
}

/* ---- views ---- */

/* Whether view says it reads nothing of the spec: a light tree serves it. */
static bool view_spares_spec(const store_view *view)
{
    if (!view->members)
        return false;
    for (const char *const *m = view->members; *m; m++)
        if (!strncmp(*m, "spec", 4) && ((*m)[4] == '\0' || (*m)[4] == '.'))
            return false;
    return true;
}

/* view's tree of o, made from its tree or, when it has none, from a parse
 * that is freed at once (nothing kept: a tree given back to an object whose
 * tree was dropped is what views are for not doing). */
static json_t *view_make(const store_obj *o, const store_view *view)
{
    json_t *tree = atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire), *v;
    char *owned;
    const char *t;

    if (!tree && view_spares_spec(view))
        tree = atomic_load_explicit(&((store_obj *)o)->light, memory_order_acquire);
    if (tree)
        return view->make(tree);
    /* Only the members the view reads, when it says which. */
    if (view->members && (t = text_now(o, &owned))) {
        tree = obj_text_members(t, o->len, view->members);
        free(owned);
    }
    if (!tree && !(tree = obj_parse(o)))
        return NULL;
    v = view->make(tree);
    json_decref(tree);
    return v;
}

/* Keeps v's text as o's view, unless o has one already (two threads may
 * make it at once; the first to publish wins). */
static void view_keep(store_obj *o, const store_view *view, const json_t *v)
{
    ty_buf b = {0};
    obj_view *kept = NULL, *none = NULL;

    if (ty_json_append(&b, v) == 0 && (kept = malloc(sizeof(*kept) + b.len + 1))) {
        kept->of = view;
        kept->len = b.len;
        memcpy(kept->text, b.data, b.len + 1);
        if (!atomic_compare_exchange_strong_explicit(&o->view, &none, kept,
                                                     memory_order_acq_rel, memory_order_acquire))
            free(kept);
    }
    ty_buf_free(&b);
}

json_t *store_obj_view(const store_obj *o, const store_view *view)
{
    store_obj *w = (store_obj *)o; /* the view is a cache, as the tree */
    obj_view *kept = atomic_load_explicit(&w->view, memory_order_acquire);
    bool cold;
    json_t *v;

    mark_used(w);
    if (kept && kept->of == view)
        return ty_json_load(kept->text, kept->len, 0, NULL);
    cold = !atomic_load_explicit(&w->tree, memory_order_acquire) &&
           !atomic_load_explicit(&w->text, memory_order_acquire);
    /* another view kept, or o cold: this one is not */
    if ((v = view_make(o, view)) && !kept && !cold)
        view_keep(w, view, v);
    return v;
}

obj_view *obj_take_view_if_refs(store_obj *o, size_t refs)
{
    if (atomic_load_explicit(&o->refs, memory_order_acquire) != refs)
        return NULL;
    return atomic_exchange_explicit(&o->view, NULL, memory_order_acq_rel);
}

store_obj *obj_text_copy(const store_obj *o)
{
    store_obj *c = obj_alloc(o->rv, o->ns, o->name);
    char *owned, *t;
    const char *src = c ? text_now(o, &owned) : NULL;

    if (!src) {
        free(c);
        return NULL;
    }
    if (!(t = owned) && (t = malloc(o->len + 1)))
        memcpy(t, src, o->len + 1);
    if (!t) {
        free(c);
        return NULL;
    }
    atomic_store_explicit(&c->text, t, memory_order_relaxed);
    c->len = o->len;
    return c;
}

json_t *obj_take_tree_if_refs(store_obj *o, size_t refs)
{
    json_t *t;

    if (atomic_load_explicit(&o->refs, memory_order_acquire) != refs)
        return NULL;
    if ((t = atomic_exchange_explicit(&o->tree, NULL, memory_order_acq_rel)))
        return t;
    return atomic_exchange_explicit(&o->light, NULL, memory_order_acq_rel);
}

size_t obj_footprint(const store_obj *o)
{
    return sizeof(*o) + o->len + 1 + strlen(o->ns) + strlen(o->name) + 2;
}

const json_t *store_obj_json(const store_obj *o)
{
    return obj_json(o);
}

const json_t *store_obj_json_light(const store_obj *o, bool *light)
{
    store_obj *w = (store_obj *)o;
    json_t *t = atomic_load_explicit(&w->tree, memory_order_acquire);

    if (light)
        *light = false;
    if (!t && (t = atomic_load_explicit(&w->light, memory_order_acquire))) {
        mark_used(w);
        if (light)
            *light = true;
        return t;
    }
    return obj_json(o);
}

const char *store_obj_text(const store_obj *o, size_t *len)
{
    store_obj *w = (store_obj *)o; /* the plain text is a cache, as the tree */
    char *t = atomic_load_explicit(&w->text, memory_order_acquire), *none = NULL;

    if (len)
        *len = o->len;
    mark_used(w);
    if (t)
        return t;
    if (!(t = obj_inflate(o)))
        return NULL;
    /* Two threads may decompress at once; the first to publish wins. */
    if (!atomic_compare_exchange_strong_explicit(&w->text, &none, t, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(t);
        t = none;
    }
    return t;
}

const char *store_obj_text_read(const store_obj *o, size_t *len, char **owned)
{
    mark_used((store_obj *)o);
    if (len)
        *len = o->len;
    return text_now(o, owned);
}

bool store_obj_has_tree(const store_obj *o)
{
    return atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire) != NULL;
}

uint64_t store_obj_rv(const store_obj *o)
{
    return o->rv;
}

void store_obj_key(const store_obj *o, const char **ns, const char **name)
{
    *ns = o->ns;
    *name = o->name;
}

store_obj *store_obj_ref(store_obj *o)
{
    if (o)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
    return o;
}

void store_obj_unref(store_obj *o)
{
    obj_z *z;

    if (!o)
        return;
    /* acq_rel so that the thread freeing sees every other thread's last use. */
    if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) != 1)
        return;
    z = atomic_load_explicit(&o->z, memory_order_relaxed);
    json_decref(atomic_load_explicit(&o->tree, memory_order_relaxed));
    json_decref(atomic_load_explicit(&o->light, memory_order_relaxed));
    free(atomic_load_explicit(&o->text, memory_order_relaxed));
    free(atomic_load_explicit(&o->view, memory_order_relaxed));
    if (z && z != &obj_z_none) {
        zdict_unref(z->dict);
        free(z);
    }
    free(o);
}

static int fill_random(void *buf, size_t n)
{
    unsigned char *p = buf;

    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* Random bytes for uids, drawn from the kernel a page at a time per thread
 * (a getrandom call per object was a syscall per write); each byte is
 * handed out once. */
#define POOL_BYTES 4096
static _Thread_local struct {
    unsigned char b[POOL_BYTES];
    size_t left;
} pool;

static int pool_take(unsigned char *out, size_t n)
{
    if (pool.left < n) {
        if (fill_random(pool.b, sizeof(pool.b)) < 0)
            return -1;
        pool.left = sizeof(pool.b);
    }
    memcpy(out, pool.b + sizeof(pool.b) - pool.left, n);
    memset(pool.b + sizeof(pool.b) - pool.left, 0, n);
    pool.left -= n;
    return 0;
}

int obj_uuid(char *buf, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    char *p = buf;

    if (len < 37 || pool_take(b, sizeof(b)) < 0)
        return -1;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
    *p = '\0';
    return 0;
}

/* Kubernetes leaves out vowels and look-alike characters so that generated
 * names never spell words and read unambiguously. */
static const char name_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

int obj_random_suffix(char *buf, size_t n)
{
    const unsigned nchars = sizeof(name_alphabet) - 1;
    /* Reject bytes past the largest multiple of 27 so every character is
     * equally likely. */
    const unsigned limit = 256 - 256 % nchars;
    size_t i = 0;

    while (i < n) {
        unsigned char r[16];
        if (fill_random(r, sizeof(r)) < 0)
            return -1;
        for (size_t k = 0; k < sizeof(r) && i < n; k++)
            if (r[k] < limit)
                buf[i++] = name_alphabet[r[k] % nchars];
    }
    buf[n] = '\0';
    return 0;
}

/* ---- the ty_obj class of store snapshots (model/obj.h) ---- */

#define SO(o) ((const store_obj *)(o))

static const json_t *c_json(const ty_obj *o) { return store_obj_json(SO(o)); }
static const json_t *c_light(const ty_obj *o, bool *l) { return store_obj_json_light(SO(o), l); }
static json_t *c_copy(const ty_obj *o) { return store_obj_json_copy(SO(o)); }
static json_t *c_read(const ty_obj *o) { return store_obj_json_read(SO(o)); }
static json_t *c_meta(const ty_obj *o) { return store_obj_metadata(SO(o)); }

static json_t *c_view(const ty_obj *o, const ty_view *v)
{
    return store_obj_view(SO(o), v);
}

static const char *c_text(const ty_obj *o, size_t *len, char **owned)
{
    return store_obj_text_read(SO(o), len, owned);
}

static void c_key(const ty_obj *o, const char **ns, const char **name)
{
    store_obj_key(SO(o), ns, name);
}

static void c_rv(const ty_obj *o, char *buf, size_t len)
{
    snprintf(buf, len, "%llu", (unsigned long long)SO(o)->rv);
}

static ty_obj *c_ref(ty_obj *o) { return store_obj_base(store_obj_ref(store_obj_of(o))); }
static void c_unref(ty_obj *o) { store_obj_unref(store_obj_of(o)); }

static const ty_obj_class store_class = {
    .json = c_json, .json_light = c_light, .json_copy = c_copy, .json_read = c_read,
    .metadata = c_meta, .view = c_view, .text_read = c_text, .key = c_key, .rv = c_rv,
    .ref = c_ref, .unref = c_unref,
};
