/* list.c - consistent, paged lists from the in-memory index.
 *
 * A page is taken under the read lock, so its items and resourceVersion are
 * one snapshot. Pages after the first are served from the current state after
 * the last key of the previous page (see store.h): cheap, no duplicates, and
 * nothing that existed throughout is missed. The token is base64url (no
 * padding, safe in a query string) of {"rv":N,"ns":"...","name":"..."}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

#define TOKEN_MAX 4096

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64url_encode(const char *in, size_t n)
{
    char *out = malloc(4 * (n / 3 + 1) + 1), *p = out;
    size_t i;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 |
                     (unsigned char)in[i + 2];
        *p++ = b64[v >> 18 & 63];
        *p++ = b64[v >> 12 & 63];
        *p++ = b64[v >> 6 & 63];
        *p++ = b64[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned char)in[i] << 16 | (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0);
        *p++ = b64[v >> 18 & 63];
        *p++ = b64[v >> 12 & 63];
        if (i + 1 < n)
            *p++ = b64[v >> 6 & 63];
    }
    *p = '\0';
    return out;
}

static int b64_value(char c)
{
    const char *hit = c ? strchr(b64, c) : NULL;
    return hit ? (int)(hit - b64) : -1;
}

/* Decodes into out (at least 3/4 of strlen(in) + 1 bytes); -1 on bad input. */
static int b64url_decode(const char *in, char *out, size_t *outlen)
{
    size_t n = strlen(in), o = 0;
    unsigned acc = 0;
    int bits = 0;

    while (n > 0 && in[n - 1] == '=')
        n--;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value(in[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    out[o] = '\0';
    *outlen = o;
    return 0;
}

typedef struct list_token {
    uint64_t rv;
    char *ns;
    char *name;
} list_token;

static int token_parse(const char *tok, list_token *t, ty_error *err)
{
    size_t n = strlen(tok), len;
    char *raw;
    json_t *j = NULL;
    json_int_t rv = 0;
    const char *ns = NULL, *name = NULL;
    int rc = -1;

    memset(t, 0, sizeof(*t));
    if (n > TOKEN_MAX || !(raw = malloc(n + 1)))
        return ty_seterr(err, TY_EBADREQUEST, "invalid continue token");
    if (b64url_decode(tok, raw, &len) == 0 && (j = json_loadb(raw, len, 0, NULL)) &&
        json_unpack(j, "{s:I, s:s, s:s}", "rv", &rv, "ns", &ns, "name", &name) == 0 &&
        rv > 0 && (t->ns = strdup(ns)) && (t->name = strdup(name))) {
        t->rv = (uint64_t)rv;
        rc = 0;
    }
    json_decref(j);
    free(raw);
    if (rc < 0) {
        free(t->ns);
        free(t->name);
        return ty_seterr(err, TY_EBADREQUEST, "invalid continue token");
    }
    return 0;
}

static char *token_make(uint64_t rv, const char *ns, const char *name)
{
    json_t *j = json_pack("{s:I, s:s, s:s}", "rv", (json_int_t)rv, "ns", ns, "name", name);
    char *raw = j ? json_dumps(j, JSON_COMPACT) : NULL;
    char *tok = raw ? b64url_encode(raw, strlen(raw)) : NULL;

    free(raw);
    json_decref(j);
    return tok;
}

/* Items of r after key (ns, name), within namespace scope when given; -1
 * when unknown. */
static int64_t remaining_after(const store_res *r, const char *scope, const char *ns,
                               const char *name)
{
    size_t end = res_count(r);

    if (scope) {
        /* Every namespace that sorts after scope sorts at or after scope
         * followed by "\x01", and names are never empty, so the keys before
         * (scope "\x01", "") are exactly those up to the end of scope. */
        char next_ns[STORE_MAX_NAME_LEN + 2];
        size_t len = strlen(scope);
        if (len > STORE_MAX_NAME_LEN)
            return -1;
        memcpy(next_ns, scope, len);
        next_ns[len] = '\x01';
        next_ns[len + 1] = '\0';
        end = res_rank(r, next_ns, "", false);
    }
    return (int64_t)(end - res_rank(r, ns, name, true));
}

static int grow(store_list *out, size_t *cap)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    store_obj **items = realloc(out->items, ncap * sizeof(*items));

    if (!items)
        return -1;
    out->items = items;
    *cap = ncap;
    return 0;
}

/* Runs the list's filter on o. An object whose tree the store dropped (see
 * watch.c) is parsed into a temporary one: a filtered scan of a namespace
 * should not bring back the trees of everything in it. */
static bool filter_obj(const store_list_opts *opts, const store_obj *o)
{
    json_t *tree = atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire);
    bool keep;

    if (tree)
        return opts->filter(tree, opts->filter_arg);
    tree = obj_parse(o);
    keep = tree && opts->filter(tree, opts->filter_arg);
    json_decref(tree);
    return keep;
}

/* Fills out from r under the read lock. Returns -1 only when out of memory. */
static int collect(const store_res *r, const store_list_opts *opts, const list_token *tok,
                   store_list *out, bool *more)
{
    res_iter it;
    idx_node *n;
    size_t cap = 0, limit = opts->limit;

    /* Start after the token's key, or at the namespace when the token lies
     * before it (a token from another namespace cannot skip ours). */
    if (tok->name && (!opts->ns || strcmp(tok->ns, opts->ns) >= 0))
        res_iter_seek(&it, r, tok->ns, tok->name, false);
    else if (opts->ns)
        res_iter_seek(&it, r, opts->ns, "", true);
    else
        res_iter_seek(&it, r, NULL, NULL, true);
    /* Without a limit the whole bucket is the upper bound: one allocation. */
    if (!limit && res_count(r) && !(out->items = malloc(res_count(r) * sizeof(*out->items))))
        return -1;
    if (!limit)
        cap = res_count(r);
    while ((n = res_iter_next(&it))) {
        if (opts->ns && strcmp(n->ns, opts->ns) != 0)
            break;
        if (opts->filter && !filter_obj(opts, n->obj))
            continue;
        if (limit && out->n == limit) {
            *more = true;
            break;
        }
        if (out->n == cap && grow(out, &cap) < 0)
            return -1;
        out->items[out->n++] = store_obj_ref(n->obj);
    }
    return 0;
}

int store_list_objects(ty_store *s, const char *resource, const store_list_opts *opts,
                       store_list *out, ty_error *err)
{
    static const store_list_opts none;
    list_token tok = {0};
    store_res *r;
    bool more = false;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    opts = opts ? opts : &none;
    if (opts->continue_token && *opts->continue_token) {
        if (token_parse(opts->continue_token, &tok, err) < 0)
            return -1;
        /* Older than the watch history: changes made since can no longer be
         * replayed to a client that continues this listing. */
        if (tok.rv < hub_oldest(s->hub)) {
            rc = ty_seterr(err, TY_EGONE,
                           "The provided continue parameter is too old to display a consistent "
                           "list result. You can start a new list without the continue "
                           "parameter.");
            goto out;
        }
    }
    ty_rwlock_rdlock(&s->index_rw);
    out->rv = tok.rv ? tok.rv : s->rv;
    r = index_find(&s->ix, resource);
    if (r && collect(r, opts, &tok, out, &more) < 0)
        rc = ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (rc == 0 && more && !opts->filter) {
        const store_obj *last = out->items[out->n - 1];
        out->remaining = remaining_after(r, opts->ns, last->ns, last->name);
    } else {
        out->remaining = more ? -1 : 0;
    }
    ty_rwlock_rdunlock(&s->index_rw);
    if (rc == 0 && more) {
        const store_obj *last = out->items[out->n - 1];
        out->continue_token = token_make(out->rv, last->ns, last->name);
        if (!out->continue_token)
            rc = ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    if (rc < 0)
        store_list_free(out);
out:
    free(tok.ns);
    free(tok.name);
    return rc;
}

static int item_cmp(const void *a, const void *b)
{
    const store_obj *x = *(store_obj *const *)a, *y = *(store_obj *const *)b;
    int c = strcmp(x->ns, y->ns);

    return c ? c : strcmp(x->name, y->name);
}

int store_list_owned(ty_store *s, const char *resource, const char *ns, const char *owner_uid,
                     store_list *out, ty_error *err)
{
    const store_res *r;
    const owner_set *set = NULL;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    ty_rwlock_rdlock(&s->index_rw);
    out->rv = s->rv;
    r = index_find(&s->ix, resource);
    if (r && owner_uid && *owner_uid)
        set = res_owner_find(r, owner_uid);
    if (set && set->n && !(out->items = malloc(set->n * sizeof(*out->items))))
        rc = ty_seterr(err, TY_EINTERNAL, "out of memory");
    for (const idx_node *n = rc == 0 && set ? set->head : NULL; n; n = n->owner_next)
        if (!ns || strcmp(n->ns, ns) == 0)
            out->items[out->n++] = store_obj_ref(n->obj);
    ty_rwlock_rdunlock(&s->index_rw);
    /* Members are kept in no order; lists are sorted by key everywhere. */
    if (out->n > 1)
        qsort(out->items, out->n, sizeof(*out->items), item_cmp);
    return rc;
}

void store_list_free(store_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        store_obj_unref(l->items[i]);
    free(l->items);
    free(l->continue_token);
    memset(l, 0, sizeof(*l));
}

size_t store_count(ty_store *s, const char *resource)
{
    store_res *r;
    size_t n;

    ty_rwlock_rdlock(&s->index_rw);
    r = index_find(&s->ix, resource);
    n = r ? res_count(r) : 0;
    ty_rwlock_rdunlock(&s->index_rw);
    return n;
}

void store_memory(ty_store *s, store_mem *m)
{
    memset(m, 0, sizeof(*m));
    ty_rwlock_rdlock(&s->index_rw);
    for (size_t i = 0; i < s->ix.n; i++) {
        res_iter it;
        idx_node *n;

        res_iter_seek(&it, s->ix.res[i], NULL, NULL, true);
        while ((n = res_iter_next(&it))) {
            store_obj *o = n->obj;
            obj_z *z = atomic_load_explicit(&o->z, memory_order_acquire);
            obj_view *v;

            m->objects++;
            m->trees += obj_has_any_tree(o);
            if (atomic_load_explicit(&o->text, memory_order_relaxed)) {
                m->plain++;
                m->plain_bytes += o->len;
            }
            if (z && z != &obj_z_none) {
                m->compressed++;
                m->compressed_bytes += z->len;
            }
            if ((v = atomic_load_explicit(&o->view, memory_order_acquire))) {
                m->views++;
                m->view_bytes += v->len;
            }
        }
    }
    ty_rwlock_rdunlock(&s->index_rw);
}
