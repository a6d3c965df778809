/* strict_kc.h - a test client that writes as an API server with status
 * subresources keeps writes: the embedded client (whose KC_STATUS writes
 * take the status alone, client/kc.h) wrapped so that a plain write leaves
 * the status as it was (kube-apiserver ignores the status of a PUT to a kind
 * that has the subresource). Code that writes a status by a plain write, or
 * its memory by a status write, loses it here as it would there. Free with
 * kc_free (the inner client stays). Include after cmocka.h. */
#ifndef TY_TESTS_UNIT_STRICT_KC_H
#define TY_TESTS_UNIT_STRICT_KC_H

#include <stdlib.h>
#include <string.h>

#include "client/kc.h"


typedef struct strict_kc {
    ty_kc base;
    ty_kc *in;
} strict_kc;

#define STRICT_IN(c) (((strict_kc *)(c))->in)

static ty_obj *s_get(ty_kc *c, const char *r, const char *ns, const char *n, ty_error *e)
{
    return kc_get(STRICT_IN(c), r, ns, n, e);
}
static int s_list(ty_kc *c, const char *r, const kc_list_opts *o, kc_list *out, ty_error *e)
{
    return kc_list_objects(STRICT_IN(c), r, o, out, e);
}
static int s_list_owned(ty_kc *c, const char *r, const char *ns, const char *uid, kc_list *out,
                        ty_error *e)
{
    return kc_list_owned(STRICT_IN(c), r, ns, uid, out, e);
}
static size_t s_count(ty_kc *c, const char *r)
{
    return kc_count(STRICT_IN(c), r);
}
static json_t *s_resources(ty_kc *c)
{
    return kc_resources(STRICT_IN(c));
}
static ty_obj *s_create(ty_kc *c, const char *r, const char *ns, json_t *o, ty_error *e)
{
    return kc_create(STRICT_IN(c), r, ns, o, e);
}
static ty_obj *s_update(ty_kc *c, const char *r, const char *ns, const json_t *o, ty_error *e)
{
    return kc_update(STRICT_IN(c), r, ns, o, e);
}
static ty_obj *s_patch(ty_kc *c, const char *r, const char *ns, const char *n, kc_patch_type t,
                       const json_t *p, bool st, ty_error *e)
{
    return kc_patch(STRICT_IN(c), r, ns, n, t, p, st, e);
}
static ty_obj *s_del(ty_kc *c, const char *r, const char *ns, const char *n,
                     const kc_delete_opts *o, bool *d, ty_error *e)
{
    return kc_delete(STRICT_IN(c), r, ns, n, o, d, e);
}
static int s_bind(ty_kc *c, const char *ns, const char *n, const char *uid, const char *node,
                  ty_error *e)
{
    return kc_bind(STRICT_IN(c), ns, n, uid, node, e);
}

typedef struct plain_call {
    kc_mutate_fn fn;
    void *arg;
} plain_call;

/* A plain write: the status stays as it was. */
static int keep_status(json_t *obj, void *arg, ty_error *err)
{
    const plain_call *p = arg;
    /* a deep copy: fn may change the status in place */
    json_t *st = json_deep_copy(json_object_get(obj, "status"));
    int rc = p->fn(obj, p->arg, err);

    if (rc == 0) {
        json_object_del(obj, "status");
        if (st)
            json_object_set(obj, "status", st);
    }
    json_decref(st);
    return rc;
}


static ty_obj *s_mutate(ty_kc *c, const char *r, const char *ns, const char *n, kc_mutate_fn fn,
                        void *arg, unsigned flags, ty_error *e)
{
    plain_call p = {fn, arg};

    if (flags & KC_STATUS)
        return kc_mutate(STRICT_IN(c), r, ns, n, fn, arg, flags, e);
    /* a whole copy: keep_status changes status in place */
    return kc_mutate(STRICT_IN(c), r, ns, n, keep_status, &p, 0, e);
}

static kc_watch *s_watch_open(ty_kc *c, const char *const *only, const char *from, ty_error *e)
{
    return kc_watch_open(STRICT_IN(c), only, from, e); /* the inner client's watch, its ops */
}

static void s_free(ty_kc *c)
{
    free(c);
}

static const kc_ops strict_ops = {
    .kind = "strict",
    .get = s_get,
    .list = s_list,
    .list_owned = s_list_owned,
    .count = s_count,
    .resources = s_resources,
    .create = s_create,
    .update = s_update,
    .mutate = s_mutate,
    .patch = s_patch,
    .del = s_del,
    .bind = s_bind,
    .watch_open = s_watch_open,
    .free = s_free,
};

static inline ty_kc *strict_new(ty_kc *in)
{
    strict_kc *k = calloc(1, sizeof(*k));

    assert_non_null(k);
    k->base.ops = &strict_ops;
    k->in = in;
    return &k->base;
}

#endif
