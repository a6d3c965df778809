/* kc.c - the client interface's calls, each one call through the ops table
 * (kc.h), and what implementations share. */
#include "client/kc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "api/schema.h"
#include "client/kc_record.h"
#include "model/patch.h"

ty_obj *kc_get(ty_kc *c, const char *resource, const char *ns, const char *name,
               ty_error *err)
{
    return c->ops->get(c, resource, ns ? ns : "", name, err);
}

int kc_list_objects(ty_kc *c, const char *resource, const kc_list_opts *opts, kc_list *out,
            ty_error *err)
{
    static const kc_list_opts none;

    memset(out, 0, sizeof(*out));
    return c->ops->list(c, resource, opts ? opts : &none, out, err);
}

int kc_list_owned(ty_kc *c, const char *resource, const char *ns, const char *owner_uid,
                  kc_list *out, ty_error *err)
{
    memset(out, 0, sizeof(*out));
    return c->ops->list_owned(c, resource, ns, owner_uid, out, err);
}

void kc_list_items_free(kc_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        ty_obj_unref(l->items[i]);
    free(l->items);
    free(l->continue_token);
    memset(l, 0, sizeof(*l));
}

void kc_list_free(kc_list *l)
{
    if (l->free_fn)
        l->free_fn(l);
    else
        kc_list_items_free(l);
}

int kc_list_owned_sel(ty_kc *c, const char *resource, const char *ns, const char *owner_uid,
                      const char *label_selector, kc_list *out, ty_error *err)
{
    if (!c->ops->list_owned_sel || !label_selector || !*label_selector)
        return kc_list_owned(c, resource, ns, owner_uid, out, err);
    memset(out, 0, sizeof(*out));
    return c->ops->list_owned_sel(c, resource, ns, owner_uid, label_selector, out, err);
}

size_t kc_count(ty_kc *c, const char *resource)
{
    return c->ops->count(c, resource);
}

size_t kc_count_hint(ty_kc *c, const char *resource)
{
    return c->ops->count_is_cheap ? c->ops->count(c, resource) : SIZE_MAX;
}

bool kc_reads_local(ty_kc *c)
{
    return c->ops->count_is_cheap;
}

json_t *kc_resources(ty_kc *c)
{
    return c->ops->resources(c);
}

ty_obj *kc_create(ty_kc *c, const char *resource, const char *ns, json_t *obj, ty_error *err)
{
    return c->ops->create(c, resource, ns ? ns : "", obj, err);
}

ty_obj *kc_update(ty_kc *c, const char *resource, const char *ns, const json_t *obj,
                  ty_error *err)
{
    return c->ops->update(c, resource, ns ? ns : "", obj, err);
}

ty_obj *kc_mutate(ty_kc *c, const char *resource, const char *ns, const char *name,
                  kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err)
{
    return c->ops->mutate(c, resource, ns ? ns : "", name, fn, arg, flags, err);
}

ty_obj *kc_patch(ty_kc *c, const char *resource, const char *ns, const char *name,
                 kc_patch_type type, const json_t *patch, bool status, ty_error *err)
{
    return c->ops->patch(c, resource, ns ? ns : "", name, type, patch, status, err);
}

ty_obj *kc_delete(ty_kc *c, const char *resource, const char *ns, const char *name,
                  const kc_delete_opts *opts, bool *deleted, ty_error *err)
{
    bool d;

    return c->ops->del(c, resource, ns ? ns : "", name, opts, deleted ? deleted : &d, err);
}

int kc_bind(ty_kc *c, const char *ns, const char *name, const char *uid, const char *node,
            ty_error *err)
{
    return c->ops->bind(c, ns, name, uid, node, err);
}

void kc_run_op(ty_kc *c, kc_op *op)
{
    ty_error_init(&op->err);
    op->result = NULL;
    switch (op->kind) {
    case KC_OP_CREATE:
        op->result = kc_create(c, op->resource, op->ns, op->obj, &op->err);
        op->obj = NULL;
        break;
    case KC_OP_MUTATE:
        op->result = kc_mutate(c, op->resource, op->ns, op->name, op->fn, op->arg, op->flags,
                               &op->err);
        break;
    case KC_OP_DELETE:
        op->result = kc_delete(c, op->resource, op->ns, op->name, op->dopts, NULL, &op->err);
        break;
    case KC_OP_BIND:
        kc_bind(c, op->ns, op->name, op->uid, op->node, &op->err);
        break;
    case KC_OP_RECORD:
        kc_record_run(c, op, !kc_reads_local(c));
        break;
    }
}

size_t kc_write_all(ty_kc *c, kc_op *ops, size_t n)
{
    size_t failed = 0;

    if (c->ops->write_all)
        return c->ops->write_all(c, ops, n);
    for (size_t i = 0; i < n; i++) {
        kc_run_op(c, &ops[i]);
        if (ops[i].kind != KC_OP_RECORD && ops[i].err.code)
            failed++;
    }
    return failed;
}

void kc_op_clear(kc_op *op)
{
    ty_obj_unref(op->result);
    op->result = NULL;
    json_decref(op->obj);
    op->obj = NULL;
    free(op->text);
    op->text = NULL;
    ty_error_clear(&op->err);
}

kc_watch *kc_watch_open(ty_kc *c, const char *const *only, const char *from_rv, ty_error *err)
{
    return c->ops->watch_open(c, only, from_rv && *from_rv ? from_rv : NULL, err);
}

int kc_watch_next(kc_watch *w, int timeout_ms, kc_event *ev, ty_error *err)
{
    return w->ops->watch_next(w, timeout_ms, ev, err);
}

void kc_event_release(kc_event *ev)
{
    if (!ev)
        return;
    ty_obj_unref(ev->obj);
    ev->obj = NULL;
}

void kc_watch_cancel(kc_watch *w)
{
    if (w)
        w->ops->watch_cancel(w);
}

void kc_watch_close(kc_watch *w)
{
    if (w)
        w->ops->watch_close(w);
}

const char *kc_kind(const ty_kc *c)
{
    return c->ops->kind;
}

void kc_free(ty_kc *c)
{
    if (!c)
        return;
    kc_record_forget_client(c);
    c->ops->free(c);
}

int kc_rv_parse(const char *rv, uint64_t *out, ty_error *err)
{
    char *end;

    errno = 0;
    *out = strtoull(rv, &end, 10);
    if (errno || *end || end == rv || *rv == '-')
        return ty_seterr(err, TY_EBADREQUEST, "invalid resourceVersion: %s", rv);
    return 0;
}

json_t *kc_patch_apply(const json_t *obj, kc_patch_type type, const json_t *patch,
                       ty_error *err)
{
    /* strategic: the merge keys the object's kind declares in its schema (a
     * kind the API does not serve: the pod-template keys anywhere) */
    patch_schema ps = api_patch_schema(api_find_kind(
        json_string_value(json_object_get(obj, "apiVersion")),
        json_string_value(json_object_get(obj, "kind"))));
    json_t *next = type == KC_PATCH_MERGE ? patch_merge(obj, patch)
                   : type == KC_PATCH_JSON ? patch_json(obj, patch, err)
                                           : patch_strategic(obj, patch, &ps, err);

    if (next && !json_is_object(next)) {
        json_decref(next);
        ty_seterr(err, TY_EINVALID, "the patch leaves no object");
        return NULL;
    }
    return next;
}

/* Whether v, set as a merge patch's value, would lose something: a null
 * member of an object is a removal in a merge patch, not a value (arrays
 * are taken whole, nulls and all). */
static bool has_null_member(const json_t *v)
{
    const char *k;
    json_t *m;

    if (!json_is_object(v))
        return false;
    json_object_foreach((json_t *)v, k, m)
        if (json_is_null(m) || has_null_member(m))
            return true;
    return false;
}

/* The merge patch (RFC 7386) that makes from into to, both objects: a new
 * object, or NULL when one cannot say it (a null value) or memory ran out. */
json_t *kc_merge_diff(const json_t *from, const json_t *to)
{
    json_t *d = json_object(), *a, *b;
    const char *k;

    if (!d)
        return NULL;
    json_object_foreach((json_t *)from, k, a)
        if (!json_object_get(to, k) && json_object_set_new(d, k, json_null()) < 0)
            goto fail;
    json_object_foreach((json_t *)to, k, b) {
        a = json_object_get(from, k);
        if (a && json_equal(a, b))
            continue;
        if (json_is_object(a) && json_is_object(b)) {
            json_t *sub = kc_merge_diff(a, b);
            if (!sub || json_object_set_new(d, k, sub) < 0)
                goto fail;
        } else if (json_is_null(b) || has_null_member(b) ||
                   json_object_set(d, k, b) < 0) {
            goto fail;
        }
    }
    return d;
fail:
    json_decref(d);
    return NULL;
}
