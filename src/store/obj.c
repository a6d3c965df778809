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

static const char *meta_string(const json_t *json, const char *field)
{
    const char *v = json_string_value(json_object_get(json_object_get(json, "metadata"), field));
    return v ? v : "";
}

static store_obj *obj_alloc(uint64_t rv, const char *ns, const char *name)
{
    size_t lns = strlen(ns), lname = strlen(name);
    store_obj *o = calloc(1, sizeof(*o) + lns + lname + 2);

    if (!o)
        return NULL;
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
    store_obj *o = obj_alloc(rv, meta_string(json, "namespace"), meta_string(json, "name"));
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

/* ---- the metadata alone ----
 * A scanner over the top level of an object's text that stops at its
 * "metadata" member and hands that one value to jansson. Stored texts are
 * compact, so this is a few dozen bytes of apiVersion and kind to skip;
 * whitespace is allowed anyway. */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* p at a '"': just past the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Just past the value at p (strings, objects and arrays may nest), or NULL. */
static const char *skip_value(const char *p, const char *end)
{
    int depth = 0;

    if (p < end && *p == '"')
        return skip_string(p, end);
    if (p < end && *p != '{' && *p != '[') {
        while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
               *p != '\t' && *p != '\r')
            p++;
        return p;
    }
    while (p < end) {
        if (*p == '"') {
            if (!(p = skip_string(p, end)))
                return NULL;
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if ((*p == '}' || *p == ']') && --depth == 0)
            return p + 1;
        p++;
    }
    return NULL;
}

/* A cursor over the top-level members of the object in a text. */
typedef struct member_scan {
    const char *p, *end;
    const char *key, *value, *value_end; /* the member just read */
    size_t klen;
} member_scan;

/* Starts at the text's opening brace; false when there is none. */
static bool scan_start(member_scan *m, const char *text, size_t len)
{
    m->end = text + len;
    m->p = skip_ws(text, m->end);
    return m->p < m->end && *m->p++ == '{';
}

/* The next member: 1, 0 at the closing brace, -1 when the text is not what
 * the scanner follows. */
static int scan_next(member_scan *m)
{
    const char *p = skip_ws(m->p, m->end), *end = m->end;

    if (p < end && *p == ',')
        p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return 0;
    if (p == end || *p != '"')
        return -1;
    m->key = p + 1;
    if (!(p = skip_string(p, end)))
        return -1;
    m->klen = (size_t)(p - m->key - 1);
    p = skip_ws(p, end);
    if (p == end || *p++ != ':')
        return -1;
    m->value = skip_ws(p, end);
    if (!(m->value_end = m->p = skip_value(m->value, end)))
        return -1;
    return 1;
}

static bool key_is(const member_scan *m, const char *name)
{
    return strlen(name) == m->klen && memcmp(m->key, name, m->klen) == 0;
}

/* The member names[i] asks for at the level of top (NULL: the top level),
 * as a pointer and a length; false when it asks for nothing there. A name
 * "a" asks for all of top-level member a, "a.b" for member b of member a
 * only. *whole: the name asks for all of that member. */
static bool name_at(const char *name, const char *top, const char **key, size_t *klen,
                    bool *whole)
{
    size_t ltop = top ? strlen(top) : 0;
    const char *dot;

    if (top) {
        if (strncmp(name, top, ltop) != 0 || name[ltop] != '.')
            return false;
        name += ltop + 1;
    }
    dot = top ? NULL : strchr(name, '.');
    *key = name;
    *klen = dot ? (size_t)(dot - name) : strlen(name);
    *whole = !dot;
    return true;
}

/* Whether names asks for member key (klen bytes) at the level of top, and
 * (*whole) for all of it. */
static bool asks_for(const char *const *names, const char *top, const char *key, size_t klen,
                     bool *whole)
{
    bool any = false, w;
    const char *k;
    size_t kl;

    *whole = false;
    for (const char *const *n = names; *n; n++) {
        if (!name_at(*n, top, &k, &kl, &w) || kl != klen || memcmp(k, key, klen) != 0)
            continue;
        any = true;
        *whole |= w;
    }
    return any;
}

/* How many different members names asks for at the level of top. */
static size_t members_asked(const char *const *names, const char *top)
{
    size_t count = 0;
    const char *k, *k2;
    size_t kl, kl2;
    bool w;

    for (size_t i = 0; names[i]; i++) {
        bool seen = false;
        if (!name_at(names[i], top, &k, &kl, &w))
            continue;
        for (size_t j = 0; j < i && !seen; j++)
            seen = name_at(names[j], top, &k2, &kl2, &w) && kl2 == kl && !memcmp(k, k2, kl);
        count += !seen;
    }
    return count;
}

/* The object of the members names asks for (asks_for) of the object in
 * text, top's members when top is not NULL: each parsed alone, the rest
 * skipped; the scan stops once it has them all. NULL when the text is not
 * what the scanner expects (the caller then parses the whole of it) or
 * memory runs out. */
static json_t *select_members(const char *text, size_t len, const char *const *names,
                              const char *top)
{
    json_t *out = json_object();
    size_t want = members_asked(names, top);
    member_scan m;
    int rc = 1;

    if (!out || !scan_start(&m, text, len))
        goto bad;
    while (json_object_size(out) < want && (rc = scan_next(&m)) > 0) {
        size_t vlen = (size_t)(m.value_end - m.value);
        json_t *v = NULL;
        char key[256];
        bool whole;

        if (!asks_for(names, top, m.key, m.klen, &whole))
            continue;
        if (whole || *m.value != '{') {
            v = ty_json_load(m.value, vlen, JSON_DECODE_ANY, NULL);
        } else if (m.klen < sizeof(key)) {
            memcpy(key, m.key, m.klen);
            key[m.klen] = '\0';
            v = select_members(m.value, vlen, names, key);
        }
        if (!v || json_object_setn_new(out, m.key, m.klen, v) < 0)
            goto bad;
    }
    if (rc >= 0)
        return out;
bad:
    json_decref(out);
    return NULL;
}

/* A member's key as jansson wants it: keys with escapes are not. */
static bool plain_key(const member_scan *m)
{
    return !memchr(m->key, '\\', m->klen);
}

/* The value of the member m is at, parsed alone. */
static json_t *member_value(const member_scan *m)
{
    return ty_json_load(m->value, (size_t)(m->value_end - m->value), JSON_DECODE_ANY, NULL);
}

/* The members of the object in text, each parsed alone: at the top all of
 * them, the spec's as below; in the spec (top false) only those that are
 * neither objects nor arrays (obj_text_light). */
static json_t *light_members(const char *text, size_t len, bool top)
{
    json_t *out = json_object(), *v;
    member_scan m;
    int rc = 1;

    if (!out || !scan_start(&m, text, len))
        goto bad;
    while ((rc = scan_next(&m)) > 0) {
        if (!top && (*m.value == '{' || *m.value == '['))
            continue;
        if (!plain_key(&m))
            goto bad;
        if (top && key_is(&m, "spec") && *m.value == '{')
            v = light_members(m.value, (size_t)(m.value_end - m.value), false);
        else
            v = member_value(&m);
        if (!v || json_object_setn_new(out, m.key, m.klen, v) < 0)
            goto bad;
    }
    if (rc == 0) /* a stored text: one object, nothing after it */
        return out;
bad:
    json_decref(out);
    return NULL;
}

json_t *obj_text_light(const char *text, size_t len)
{
    return light_members(text, len, true);
}

/* The object of the given members of the object in text (a name "a" is all
 * of top-level member a, "a.b" only member b of it), each parsed alone and
 * the rest skipped; NULL when the text is not what the scanner expects (the
 * caller then parses the whole of it) or memory runs out. */
static json_t *members_from_text(const char *text, size_t len, const char *const *names)
{
    return select_members(text, len, names, NULL);
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

bool obj_text_member(const char *text, size_t len, const char *name, size_t *start,
                     size_t *end)
{
    member_scan m;

    if (!scan_start(&m, text, len))
        return false;
    while (scan_next(&m) > 0) {
        if (key_is(&m, name)) {
            *start = (size_t)(m.value - text);
            *end = (size_t)(m.value_end - text);
            return true;
        }
    }
    return false;
}

json_t *obj_text_metadata(const char *text, size_t len)
{
    static const char *const meta[] = {"metadata", NULL};
    const char *end = text + len, *p = skip_ws(text, end), *e;
    json_t *tree;

    /* One object, whole: its brackets and strings close, nothing after it. */
    if (p == end || *p != '{' || !(e = skip_value(p, end)) || skip_ws(e, end) != end)
        return NULL;
    tree = members_from_text(text, len, meta);
    if (!tree && (tree = ty_json_load(text, len, 0, NULL)) && !json_is_object(tree)) {
        json_decref(tree);
        tree = NULL;
    }
    return tree;
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
    if (!(tree = members_from_text(t, o->len, meta)))
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
        tree = members_from_text(t, o->len, view->members);
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
