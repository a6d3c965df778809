/* kc_embedded.c - the client interface as direct calls into the store.
 *
 * Everything the store does fast stays fast: reads come from its in-memory
 * index, kc_list_owned from its owner index, a batch of writes shares one
 * transaction, and the kc_mutate hints choose its status, spec-top, arena
 * and light writes. Its snapshots are ty_objs already (store_obj_base). */
#include "client/kc_embedded.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/kc_status.h"
#include "store/admit.h"
#include "model/podcond.h"
#include "model/selector.h"

typedef struct emb {
    ty_kc base;
    ty_store *s;
    bool admit; /* creates pass the admission chain (store/admit.h) */
} emb;

typedef struct emb_watch {
    kc_watch base;
    store_watch *w;
} emb_watch;

#define S(c) (((emb *)(c))->s)
#define B(o) store_obj_base(o)

static ty_obj *e_get(ty_kc *c, const char *res, const char *ns, const char *name, ty_error *err)
{
    return B(store_get(S(c), res, ns, name, err));
}

/* A store list handed over as a client list: the references move, the
 * store's arrays go. */
static int take_list(store_list *l, kc_list *out, ty_error *err)
{
    if (l->n && !(out->items = malloc(l->n * sizeof(*out->items)))) {
        store_list_free(l);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < l->n; i++)
        out->items[i] = B(l->items[i]);
    out->n = l->n;
    l->n = 0;
    snprintf(out->rv, sizeof(out->rv), "%" PRIu64, l->rv);
    out->continue_token = l->continue_token;
    l->continue_token = NULL;
    out->remaining = l->remaining;
    store_list_free(l);
    return 0;
}

typedef struct sel_filter {
    ty_label_selector *labels;
    ty_field_selector *fields;
    kc_filter_fn fn;
    void *arg;
} sel_filter;

static bool sel_match(const json_t *obj, void *arg)
{
    const sel_filter *f = arg;

    if (f->labels &&
        !label_selector_matches(f->labels,
                                json_object_get(json_object_get(obj, "metadata"), "labels")))
        return false;
    if (f->fields && !field_selector_matches(f->fields, obj))
        return false;
    return !f->fn || f->fn(obj, f->arg);
}

static int e_list(ty_kc *c, const char *res, const kc_list_opts *o, kc_list *out, ty_error *err)
{
    sel_filter f = {.fn = o->filter, .arg = o->filter_arg};
    store_list_opts so = {.ns = o->ns, .filter = o->filter, .filter_arg = o->filter_arg,
                          .limit = o->limit, .continue_token = o->continue_token};
    store_list l;
    int rc = -1;

    if (o->label_selector && *o->label_selector &&
        !(f.labels = label_selector_parse(o->label_selector, err)))
        return -1;
    if (o->field_selector && *o->field_selector &&
        !(f.fields = field_selector_parse(o->field_selector, NULL, err)))
        goto out;
    if (f.labels || f.fields) {
        so.filter = sel_match;
        so.filter_arg = &f;
    }
    if (store_list_objects(S(c), res, &so, &l, err) == 0)
        rc = take_list(&l, out, err);
out:
    label_selector_free(f.labels);
    field_selector_free(f.fields);
    return rc;
}

static int e_list_owned(ty_kc *c, const char *res, const char *ns, const char *uid,
                        kc_list *out, ty_error *err)
{
    store_list l;

    if (store_list_owned(S(c), res, ns, uid, &l, err) < 0) {
        store_list_free(&l);
        return -1;
    }
    return take_list(&l, out, err);
}

static size_t e_count(ty_kc *c, const char *res)
{
    return store_count(S(c), res);
}

static json_t *e_resources(ty_kc *c)
{
    return store_resources(S(c));
}

/* The admission chain for a create of obj (a store key's resource), as the
 * HTTP API runs it: a controller's create (a job's pods) meets the rules a
 * user's would. */
static int admit_create(ty_kc *c, const char *res, const char *ns, json_t *obj, ty_error *err)
{
    const api_resource *r;
    json_t *md;

    if (!((emb *)c)->admit || !obj || !(r = api_find_store_key(res)))
        return 0;
    /* The rules read the object's namespace (a pod's Pod Security level),
     * which the store would fill from ns only after them. */
    md = json_object_get(obj, "metadata");
    if (r->namespaced && ns && *ns && json_is_object(md) &&
        !json_string_value(json_object_get(md, "namespace")))
        json_object_set_new(md, "namespace", json_string(ns));
    if (store_admit_namespace(
            S(c), r, ns && *ns ? ns : json_string_value(json_object_get(md, "namespace")),
            json_string_value(json_object_get(md, "name")), err) < 0)
        return -1;
    return store_admit(S(c), API_ADMIT_CREATE, r, obj, NULL, err);
}

static ty_obj *e_create(ty_kc *c, const char *res, const char *ns, json_t *obj, ty_error *err)
{
    if (admit_create(c, res, ns, obj, err) < 0) {
        json_decref(obj);
        return NULL;
    }
    return B(store_create_take(S(c), res, ns, obj, err));
}

static ty_obj *e_update(ty_kc *c, const char *res, const char *ns, const json_t *obj,
                        ty_error *err)
{
    return B(store_update(S(c), res, ns, obj, err));
}

/* The store_op a kc_op stands for (BIND and a KC_STATUS MUTATE need their
 * arguments kept by the caller: *x). */
typedef struct bind_arg {
    const char *node, *uid;
} bind_arg;

typedef union op_extra {
    bind_arg bind;
    kc_status_call status;
} op_extra;

static int bind_fn(json_t *pod, void *arg, ty_error *err)
{
    const bind_arg *b = arg;

    return podcond_bind(pod, b->node, b->uid, err);
}

static store_op to_store(const kc_op *k, op_extra *x)
{
    store_op op;

    switch (k->kind) {
    case KC_OP_CREATE:
        return store_op_create(k->resource, k->ns, k->obj);
    case KC_OP_MUTATE:
        x->status = (kc_status_call){k->fn, k->arg, !strcmp(k->resource, "pods")};
        op = (k->flags & KC_STATUS)
                 ? store_op_mutate(k->resource, k->ns, k->name, kc_status_only_fn, &x->status)
                 : store_op_mutate(k->resource, k->ns, k->name, k->fn, k->arg);
        op.status_only = k->flags & KC_STATUS;
        op.spec_top = k->flags & KC_SPEC_TOP;
        op.arena = k->flags & KC_ARENA;
        op.light = (k->flags & KC_LIGHT) && (k->flags & KC_STATUS);
        return op;
    case KC_OP_DELETE:
        /* kc_delete_opts is store_delete_opts member for member (asserted below) */
        return store_op_delete(k->resource, k->ns, k->name,
                               (const store_delete_opts *)k->dopts);
    case KC_OP_BIND:
        x->bind = (bind_arg){k->node, k->uid};
        /* the binding sets spec.nodeName and a condition: the rest of the
         * spec (most of a pod) is shared, and the new top lives with the pod */
        op = store_op_mutate_spec_top("pods", k->ns, k->name, bind_fn, &x->bind);
        op.arena = true;
        return op;
    case KC_OP_RECORD:
        if (k->text)
            return store_op_record_text(k->resource, k->ns, k->text, k->text_len, k->meta_end,
                                        k->fn, k->arg);
        return store_op_record(k->resource, k->ns, k->obj, k->fn, k->arg);
    }
    return (store_op){0};
}

_Static_assert(sizeof(kc_delete_opts) == sizeof(store_delete_opts), "delete options differ");
_Static_assert((int)KC_PROPAGATE_ORPHAN == (int)STORE_PROPAGATE_ORPHAN, "propagation differs");
_Static_assert((int)KC_DELETED == (int)STORE_DELETED, "event types differ");

static size_t e_write_all(ty_kc *c, kc_op *ops, size_t n)
{
    store_op one, *sops = n == 1 ? &one : malloc(n * sizeof(*sops));
    op_extra bone, *binds = n == 1 ? &bone : malloc(n * sizeof(*binds));
    size_t failed = 0, refused = 0;
    bool *skip = NULL;

    /* Creates the admission chain refuses fail alone; the rest go on. */
    for (size_t i = 0; i < n; i++) {
        ty_error aerr;
        if (ops[i].kind != KC_OP_CREATE)
            continue;
        ty_error_init(&aerr);
        if (admit_create(c, ops[i].resource, ops[i].ns, ops[i].obj, &aerr) == 0)
            continue;
        if (!skip && !(skip = calloc(n, sizeof(*skip)))) {
            ty_error_clear(&aerr);
            continue; /* no memory to mark it: the store's own checks still run */
        }
        skip[i] = true;
        json_decref(ops[i].obj);
        ops[i].obj = NULL;
        ops[i].result = NULL;
        ops[i].err = aerr; /* the causes move with it */
        refused++;
    }
    if (refused == n) {
        if (n != 1) {
            free(sops);
            free(binds);
        }
        free(skip);
        return refused;
    }
    if (refused) {
        /* the admitted ones, as a batch of their own */
        kc_op *rest = malloc((n - refused) * sizeof(*rest));
        size_t k = 0;
        if (rest) {
            for (size_t i = 0; i < n; i++)
                if (!skip[i])
                    rest[k++] = ops[i];
            failed = e_write_all(c, rest, k);
            for (size_t i = 0, j = 0; i < n; i++)
                if (!skip[i])
                    ops[i] = rest[j++];
            free(rest);
        } else {
            for (size_t i = 0; i < n; i++)
                if (!skip[i])
                    failed += (kc_run_op(c, &ops[i]),
                               ops[i].kind != KC_OP_RECORD && ops[i].err.code);
        }
        if (n != 1) {
            free(sops);
            free(binds);
        }
        free(skip);
        return failed + refused;
    }

    if (!sops || !binds) {
        if (n != 1) {
            free(sops);
            free(binds);
        }
        for (size_t i = 0; i < n; i++) /* one at a time, then */
            failed += (kc_run_op(c, &ops[i]), ops[i].kind != KC_OP_RECORD && ops[i].err.code);
        return failed;
    }
    for (size_t i = 0; i < n; i++) {
        sops[i] = to_store(&ops[i], &binds[i]);
        ops[i].obj = NULL; /* taken over by the store */
        ops[i].text = NULL;
    }
    failed = store_write_all(S(c), sops, n);
    for (size_t i = 0; i < n; i++) {
        ops[i].result = B(sops[i].result);
        sops[i].result = NULL;
        ty_error_init(&ops[i].err);
        if (sops[i].err.code)
            ops[i].err = sops[i].err; /* the causes move with it */
        else
            store_op_clear(&sops[i]);
    }
    if (n != 1) {
        free(sops);
        free(binds);
    }
    return failed;
}

static ty_obj *one_op(ty_kc *c, kc_op op, ty_error *err)
{
    ty_obj *o;

    e_write_all(c, &op, 1);
    o = op.result;
    if (op.err.code && err)
        *err = op.err; /* the causes move with it */
    else
        ty_error_clear(&op.err);
    return o;
}

static ty_obj *e_mutate(ty_kc *c, const char *res, const char *ns, const char *name,
                        kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err)
{
    if (flags & (KC_SPEC_TOP | KC_ARENA | KC_LIGHT))
        return one_op(c, (kc_op){.kind = KC_OP_MUTATE, .resource = res, .ns = ns, .name = name,
                                 .fn = fn, .arg = arg, .flags = flags},
                      err);
    if (flags & KC_STATUS)
        return B(store_mutate_status(S(c), res, ns, name, kc_status_only_fn,
                                     &(kc_status_call){fn, arg, !strcmp(res, "pods")}, err));
    return B(store_mutate(S(c), res, ns, name, fn, arg, err));
}

typedef struct patch_arg {
    kc_patch_type type;
    const json_t *patch;
    bool status, pod;
} patch_arg;

static int patch_fn(json_t *obj, void *arg, ty_error *err)
{
    const patch_arg *p = arg;
    json_t *next = kc_patch_apply(obj, p->type, p->patch, err);

    if (!next)
        return -1;
    if (p->status) { /* the status subresource takes the status alone */
        json_t *st = json_object_get(next, "status");
        if (st)
            json_object_set(obj, "status", st);
        else
            json_object_del(obj, "status");
        if (p->pod) /* and pods/status a pod's labels, annotations, finalizers */
            kc_status_take_meta(true, json_object_get(obj, "metadata"),
                                json_object_get(next, "metadata"));
    } else {
        json_object_clear(obj);
        json_object_update(obj, next);
    }
    json_decref(next);
    return 0;
}

static ty_obj *e_patch(ty_kc *c, const char *res, const char *ns, const char *name,
                       kc_patch_type type, const json_t *patch, bool status, ty_error *err)
{
    patch_arg a = {type, patch, status, !strcmp(res, "pods")};

    /* the patch functions read the whole object: a status patch gets a
     * whole copy too */
    return B(store_mutate(S(c), res, ns, name, patch_fn, &a, err));
}

static ty_obj *e_delete(ty_kc *c, const char *res, const char *ns, const char *name,
                        const kc_delete_opts *opts, bool *deleted, ty_error *err)
{
    return B(store_delete(S(c), res, ns, name, (const store_delete_opts *)opts, deleted, err));
}

static int e_bind(ty_kc *c, const char *ns, const char *name, const char *uid,
                  const char *node, ty_error *err)
{
    ty_error e;

    ty_error_init(&e);
    ty_obj_unref(one_op(c, kc_op_bind(ns, name, uid, node), &e));
    if (e.code) {
        if (err)
            *err = e;
        else
            ty_error_clear(&e);
        return -1;
    }
    return 0;
}

static const kc_ops emb_ops;

static kc_watch *e_watch_open(ty_kc *c, const char *const *only, const char *from_rv,
                              ty_error *err)
{
    emb_watch *w = malloc(sizeof(*w));
    uint64_t rv = 0;

    if (!w) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (from_rv && kc_rv_parse(from_rv, &rv, err) < 0) {
        free(w);
        return NULL;
    }
    if (!from_rv) /* from now */
        rv = store_current_rv(S(c));
    w->base.ops = &emb_ops;
    w->w = only ? store_watch_open_only(S(c), only, rv, err)
                : store_watch_open(S(c), NULL, NULL, rv, err);
    if (!w->w) {
        free(w);
        return NULL;
    }
    return &w->base;
}

static int e_watch_next(kc_watch *kw, int timeout_ms, kc_event *ev, ty_error *err)
{
    store_event se;
    int rc = store_watch_next(((emb_watch *)kw)->w, timeout_ms, &se, err);

    if (rc == 1)
        *ev = (kc_event){.type = (kc_event_type)se.type, .resource = se.resource,
                         .obj = B(se.obj)};
    return rc;
}

static void e_watch_cancel(kc_watch *kw)
{
    store_watch_cancel(((emb_watch *)kw)->w);
}

static void e_watch_close(kc_watch *kw)
{
    store_watch_close(((emb_watch *)kw)->w);
    free(kw);
}

static void e_free(ty_kc *c)
{
    free(c);
}

static const kc_ops emb_ops = {
    .kind = "embedded",
    .get = e_get,
    .list = e_list,
    .list_owned = e_list_owned,
    .count = e_count,
    .count_is_cheap = true,
    .resources = e_resources,
    .create = e_create,
    .update = e_update,
    .mutate = e_mutate,
    .patch = e_patch,
    .del = e_delete,
    .bind = e_bind,
    .write_all = e_write_all,
    .watch_open = e_watch_open,
    .watch_next = e_watch_next,
    .watch_cancel = e_watch_cancel,
    .watch_close = e_watch_close,
    .free = e_free,
};

ty_kc *kc_embedded_new(ty_store *s)
{
    emb *e = malloc(sizeof(*e));

    if (!e)
        return NULL;
    e->base.ops = &emb_ops;
    e->s = s;
    e->admit = true;
    return &e->base;
}
