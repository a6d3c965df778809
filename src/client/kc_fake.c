/* kc_fake.c - the client interface over an in-memory map, for tests (see
 * kc_fake.h): the map, the history and the writes; the reads are in
 * kc_fake_read.c, the action log, injected failures and watches in
 * kc_fake_log.c.
 *
 * Plain arrays searched linearly: a test holds tens of objects, and plain
 * code is what a reader of a failing test wants to step through. Every
 * stored tree is frozen in a ty_obj (ty_obj_new) and never changed again; a
 * write builds the next version as a new tree. The watch history is every
 * change ever made, so a watch is a cursor into it and needs no queue. */
#include "client/kc_fake_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "base/jsonget.h"
#include "base/timeutil.h"
#include "model/finalizers.h"
#include "model/podcond.h"

/* ---- small helpers ---- */

/* Room for one more element in *arr (n used of *cap, each size bytes). */
int kc_fake_grow(void *arr, size_t *cap, size_t n, size_t size)
{
    void **p = arr, *next;
    size_t ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 16;
    if (!(next = realloc(*p, ncap * size)))
        return -1;
    *p = next;
    *cap = ncap;
    return 0;
}

const char *kc_fake_intern(fake *f, const char *resource)
{
    char *copy;

    for (size_t i = 0; i < f->nres; i++)
        if (!strcmp(f->res[i], resource))
            return f->res[i];
    if (kc_fake_grow(&f->res, &f->capres, f->nres, sizeof(*f->res)) < 0 || !(copy = strdup(resource)))
        return NULL;
    f->res[f->nres++] = copy;
    return copy;
}

static void now_rfc3339(const fake *f, char *buf, size_t len)
{
    ty_time_format(f->now ? f->now : time(NULL), buf, len);
}

static void set_rv(json_t *obj, uint64_t rv)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%" PRIu64, rv);
    json_object_set_new(meta_of(obj), "resourceVersion", json_string(buf));
}

/* Whether a create or a write of the object itself (not of a subresource)
 * leaves .status as it was: the API server's rule for every resource that
 * serves /status, unless the test asked for the store's (lax). */
static bool status_ignored(const fake *f, const char *resource, const char *sub)
{
    size_t n;
    const api_resource *const *all;

    if (f->lax_status || *sub)
        return false;
    all = api_resources(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(api_store_key(all[i]), resource))
            return all[i]->has_status;
    return false;
}

long kc_fake_index(const fake *f, const char *resource, const char *ns, const char *name)
{
    for (size_t i = 0; i < f->nobjs; i++)
        if (!strcmp(f->objs[i].resource, resource) && !strcmp(f->objs[i].ns, ns) &&
            !strcmp(f->objs[i].name, name))
            return (long)i;
    return -1;
}

/* ---- the map and the history ---- */

static int history_add(fake *f, kc_event_type type, const char *resource, ty_obj *obj)
{
    if (kc_fake_grow(&f->hist, &f->caphist, f->nhist, sizeof(*f->hist)) < 0)
        return -1;
    f->hist[f->nhist++] = (fhist){type, resource, f->rv, ty_obj_ref(obj)};
    return 0;
}

/* Stores next (taken over; its resourceVersion stamped here) at slot idx,
 * or as a new object when idx < 0. Returns the stored object (borrowed). */
static ty_obj *store(fake *f, long idx, const char *resource, json_t *next, ty_error *err)
{
    const char *r = kc_fake_intern(f, resource);
    char *ns = NULL, *name = NULL;
    ty_obj *o;

    if (!r || (idx < 0 && (kc_fake_grow(&f->objs, &f->capobjs, f->nobjs, sizeof(*f->objs)) < 0 ||
                           !(ns = strdup(ty_jmeta(next, "namespace"))) ||
                           !(name = strdup(ty_jmeta(next, "name")))))) {
        free(ns);
        free(name);
        json_decref(next);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    set_rv(next, ++f->rv);
    if (!(o = ty_obj_new(next))) {
        free(ns);
        free(name);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (idx < 0) {
        f->objs[f->nobjs++] = (fobj){r, ns, name, o};
    } else {
        ty_obj_unref(f->objs[idx].obj);
        f->objs[idx].obj = o;
    }
    history_add(f, idx < 0 ? KC_ADDED : KC_MODIFIED, r, o);
    return o;
}

/* Removes the object at idx; last (taken over) is its last state, which
 * gets the deletion's resourceVersion. Returns last as stored (borrowed by
 * the history). */
static ty_obj *remove_at(fake *f, size_t idx, json_t *last)
{
    fobj *o = &f->objs[idx];
    ty_obj *l;

    set_rv(last, ++f->rv);
    l = ty_obj_new(last);
    if (l)
        history_add(f, KC_DELETED, o->resource, l);
    ty_obj_unref(l); /* the history holds it */
    ty_obj_unref(o->obj);
    free(o->ns);
    free(o->name);
    memmove(o, o + 1, (f->nobjs - idx - 1) * sizeof(*o));
    f->nobjs--;
    return l;
}

static bool array_nonempty(const json_t *a)
{
    return json_is_array(a) && json_array_size(a) > 0;
}

static bool has_finalizers(const char *resource, const json_t *obj)
{
    return array_nonempty(json_object_get(meta_of(obj), "finalizers")) ||
           (!strcmp(resource, "namespaces") &&
            array_nonempty(json_object_get(json_object_get(obj, "spec"), "finalizers")));
}

static bool equal_outside_meta_status(const json_t *a, const json_t *b)
{
    json_t *x = json_copy((json_t *)a), *y = json_copy((json_t *)b);
    bool eq;

    json_object_del(x, "metadata");
    json_object_del(x, "status");
    json_object_del(y, "metadata");
    json_object_del(y, "status");
    eq = json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return eq;
}

/* Fields an update never changes (as the store keeps them). */
static const char *const kept_fields[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                          "deletionGracePeriodSeconds", "name", "namespace",
                                          "generation"};

/* The successor next (taken over) of the object at (resource, ns, name),
 * written unless equal to it; want_rv ("" none) is the precondition. A
 * marked object whose last finalizer went is removed. Records the write as
 * verb/sub. Returns a new reference to the result. */
static ty_obj *write_next(fake *f, const char *verb, const char *resource, const char *sub,
                          const char *ns, const char *name, json_t *next, const char *want_rv,
                          ty_error *err)
{
    long idx = kc_fake_index(f, resource, ns, name);
    const json_t *cur, *cmeta;
    json_t *nmeta;
    ty_obj *o;
    char cur_rv[TY_RV_MAX];

    if (idx < 0) {
        json_decref(next);
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", resource, name);
        kc_fake_record(f, verb, resource, sub, ns, name, TY_ENOTFOUND, NULL);
        return NULL;
    }
    cur = ty_obj_json(f->objs[idx].obj);
    cmeta = meta_of(cur);
    if (!json_is_object(next) || !json_is_object(nmeta = meta_of(next))) {
        json_decref(next);
        ty_seterr(err, TY_EBADREQUEST, "object and its metadata must be JSON objects");
        kc_fake_record(f, verb, resource, sub, ns, name, TY_EBADREQUEST, NULL);
        return NULL;
    }
    ty_obj_rv(f->objs[idx].obj, cur_rv, sizeof(cur_rv));
    if (want_rv && *want_rv && strcmp(want_rv, cur_rv)) {
        json_decref(next);
        ty_seterr(err, TY_ECONFLICT,
                  "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                  "please apply your changes to the latest version and try again",
                  resource, name);
        kc_fake_record(f, verb, resource, sub, ns, name, TY_ECONFLICT, NULL);
        return NULL;
    }
    for (size_t i = 0; i < sizeof(kept_fields) / sizeof(kept_fields[0]); i++) {
        json_t *v = json_object_get(cmeta, kept_fields[i]);
        if (v)
            json_object_set_new(nmeta, kept_fields[i], json_deep_copy(v));
        else
            json_object_del(nmeta, kept_fields[i]);
    }
    json_object_set_new(nmeta, "resourceVersion", json_string(cur_rv));
    if (status_ignored(f, resource, sub)) {
        if (json_object_get(cur, "status"))
            json_object_set_new(next, "status", json_deep_copy(json_object_get(cur, "status")));
        else
            json_object_del(next, "status");
    }
    if (!equal_outside_meta_status(cur, next))
        json_object_set_new(nmeta, "generation",
                            json_integer(json_integer_value(json_object_get(cmeta, "generation")) +
                                         1));
    if (json_equal(cur, next)) {
        json_decref(next);
        return ty_obj_ref(f->objs[idx].obj); /* no write */
    }
    if (json_object_get(nmeta, "deletionTimestamp") && !has_finalizers(resource, next))
        o = remove_at(f, (size_t)idx, next);
    else
        o = store(f, idx, resource, next, err);
    kc_fake_record(f, verb, resource, sub, ns, name, o ? TY_OK : err ? err->code : TY_EINTERNAL, o);
    return ty_obj_ref(o);
}

/* ---- writes ---- */

/* generateName's suffix: five characters as kube-apiserver's alphabet
 * has them, from a counter (tests see the same names every run). */
static void generated_name(fake *f, const char *prefix, char *buf, size_t len)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t n = f->names++;
    char suffix[6];

    for (int i = 4; i >= 0; i--) {
        suffix[i] = alphabet[n % (sizeof(alphabet) - 1)];
        n /= sizeof(alphabet) - 1;
    }
    suffix[5] = '\0';
    snprintf(buf, len, "%.*s%s", 58, prefix, suffix);
}

/* uid, creationTimestamp, generation and namespace of a new object; keep:
 * the ones obj names already stay (kc_fake_put). */
static void init_meta(fake *f, json_t *meta, const char *ns, bool keep)
{
    char uid[40], ts[32];

    if (!keep || !json_string_length(json_object_get(meta, "uid"))) {
        snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012" PRIx64, ++f->uids);
        json_object_set_new(meta, "uid", json_string(uid));
    }
    if (!keep || !json_object_get(meta, "creationTimestamp")) {
        now_rfc3339(f, ts, sizeof(ts));
        json_object_set_new(meta, "creationTimestamp", json_string(ts));
    }
    if (!keep || !json_is_integer(json_object_get(meta, "generation")))
        json_object_set_new(meta, "generation", json_integer(1));
    if (!keep) {
        json_object_del(meta, "deletionTimestamp");
        json_object_del(meta, "deletionGracePeriodSeconds");
    }
    if (*ns)
        json_object_set_new(meta, "namespace", json_string(ns));
    else
        json_object_del(meta, "namespace");
}

static ty_obj *f_create(ty_kc *c, const char *res, const char *ns, json_t *obj, ty_error *err)
{
    fake *f = F(c);
    json_t *meta = meta_of(obj);
    const char *name = ty_jmeta(obj, "name"), *prefix = ty_jmeta(obj, "generateName");
    char gen[64];
    ty_obj *o = NULL;

    pthread_mutex_lock(&f->mu);
    if (kc_fake_injected(f, "create", res, "", ns, name, err))
        goto out;
    if (!json_is_object(obj) || !json_is_object(meta)) {
        ty_seterr(err, TY_EBADREQUEST, "object and its metadata must be JSON objects");
        kc_fake_record(f, "create", res, "", ns, name, TY_EBADREQUEST, NULL);
        goto out;
    }
    if (!*name && *prefix) {
        do
            generated_name(f, prefix, gen, sizeof(gen));
        while (kc_fake_index(f, res, ns, gen) >= 0);
        json_object_set_new(meta, "name", json_string(gen));
        name = ty_jmeta(obj, "name");
    }
    if (!*name) {
        ty_seterr(err, TY_EINVALID,
                  "metadata.name: Required value: name or generateName is required");
        ty_error_add_cause(err, "FieldValueRequired", "metadata.name",
                           "name or generateName is required");
        kc_fake_record(f, "create", res, "", ns, name, TY_EINVALID, NULL);
        goto out;
    }
    if (kc_fake_index(f, res, ns, name) >= 0) {
        ty_seterr(err, TY_EEXISTS, "%s \"%s\" already exists", res, name);
        kc_fake_record(f, "create", res, "", ns, name, TY_EEXISTS, NULL);
        goto out;
    }
    init_meta(f, meta, ns, false);
    if (status_ignored(f, res, ""))
        json_object_del(obj, "status");
    o = store(f, -1, res, json_incref(obj), err);
    kc_fake_record(f, "create", res, "", ns, name, o ? TY_OK : TY_EINTERNAL, o);
    o = ty_obj_ref(o);
out:
    pthread_mutex_unlock(&f->mu);
    json_decref(obj);
    return o;
}

static ty_obj *f_update(ty_kc *c, const char *res, const char *ns, const json_t *obj,
                        ty_error *err)
{
    fake *f = F(c);
    char name[300], rv[TY_RV_MAX];
    ty_obj *o = NULL;

    snprintf(name, sizeof(name), "%s", ty_jmeta(obj, "name"));
    snprintf(rv, sizeof(rv), "%s", ty_jmeta(obj, "resourceVersion"));
    pthread_mutex_lock(&f->mu);
    if (!kc_fake_injected(f, "update", res, "", ns, name, err))
        o = write_next(f, "update", res, "", ns, name, json_deep_copy(obj), rv, err);
    pthread_mutex_unlock(&f->mu);
    return o;
}

/* A copy of cur with only status taken from changed (the status
 * subresource's rule: everything else is ignored), and for a pod its
 * labels, annotations and finalizers too (pods/status takes them, as
 * kube-apiserver's does; client/kc.h, KC_STATUS). */
static json_t *status_only(const char *resource, const json_t *cur, const json_t *changed)
{
    static const char *const pod_meta[] = {"labels", "annotations", "finalizers"};
    json_t *next = json_deep_copy(cur), *st = json_object_get(changed, "status");

    if (st)
        json_object_set_new(next, "status", json_deep_copy(st));
    else
        json_object_del(next, "status");
    for (size_t i = 0; !strcmp(resource, "pods") && i < 3; i++) {
        json_t *v = json_object_get(meta_of((json_t *)changed), pod_meta[i]);
        if (v)
            json_object_set_new(meta_of(next), pod_meta[i], json_deep_copy(v));
        else
            json_object_del(meta_of(next), pod_meta[i]);
    }
    return next;
}

static ty_obj *f_mutate(ty_kc *c, const char *res, const char *ns, const char *name,
                        kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err)
{
    fake *f = F(c);
    const char *sub = flags & KC_STATUS ? "status" : "";
    char rv[TY_RV_MAX];
    json_t *copy, *next;
    ty_obj *o = NULL;
    long idx;
    int rc;

    pthread_mutex_lock(&f->mu);
    if (kc_fake_injected(f, "update", res, sub, ns, name, err))
        goto out;
    if ((idx = kc_fake_index(f, res, ns, name)) < 0) {
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", res, name);
        kc_fake_record(f, "update", res, sub, ns, name, TY_ENOTFOUND, NULL);
        goto out;
    }
    /* fn gets the whole object (never a light copy) and a tree of its own */
    if (!(copy = ty_obj_json_copy(f->objs[idx].obj))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    if ((rc = fn(copy, arg, err)) != 0) {
        if (rc > 0)
            ty_seterr(err, TY_EINTERNAL, "mutate function asked for the spec of a whole object");
        json_decref(copy);
        goto out; /* refused by fn: nothing went to the server */
    }
    snprintf(rv, sizeof(rv), "%s", ty_jmeta(copy, "resourceVersion"));
    if (flags & KC_STATUS) {
        next = status_only(res, ty_obj_json(f->objs[idx].obj), copy);
        json_decref(copy);
    } else {
        next = copy;
    }
    o = write_next(f, "update", res, sub, ns, name, next, rv, err);
out:
    pthread_mutex_unlock(&f->mu);
    return o;
}

static ty_obj *f_patch(ty_kc *c, const char *res, const char *ns, const char *name,
                       kc_patch_type type, const json_t *patch, bool status, ty_error *err)
{
    fake *f = F(c);
    const char *sub = status ? "status" : "";
    char want_rv[TY_RV_MAX];
    json_t *next, *st;
    ty_obj *o = NULL;
    long idx;

    pthread_mutex_lock(&f->mu);
    if (kc_fake_injected(f, "patch", res, sub, ns, name, err))
        goto out;
    if ((idx = kc_fake_index(f, res, ns, name)) < 0) {
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", res, name);
        kc_fake_record(f, "patch", res, sub, ns, name, TY_ENOTFOUND, NULL);
        goto out;
    }
    if (!(next = kc_patch_apply(ty_obj_json(f->objs[idx].obj), type, patch, err))) {
        kc_fake_record(f, "patch", res, sub, ns, name, err ? err->code : TY_EINVALID, NULL);
        goto out;
    }
    /* a resourceVersion in the patch is its precondition: the patched
     * object's, as kube-apiserver takes it (also for /status) */
    snprintf(want_rv, sizeof(want_rv), "%s", ty_jmeta(next, "resourceVersion"));
    if (status) {
        st = status_only(res, ty_obj_json(f->objs[idx].obj), next);
        json_decref(next);
        next = st;
    }
    o = write_next(f, "patch", res, sub, ns, name, next, want_rv, err);
out:
    pthread_mutex_unlock(&f->mu);
    return o;
}

static int64_t grace_for(const char *res, const json_t *obj, const kc_delete_opts *opts)
{
    const json_t *g;

    if (opts && opts->has_grace)
        return opts->grace_seconds < 0 ? 0 : opts->grace_seconds;
    if (strcmp(res, "pods"))
        return 0;
    g = json_object_get(json_object_get(obj, "spec"), "terminationGracePeriodSeconds");
    return json_is_integer(g) && json_integer_value(g) >= 0 ? json_integer_value(g) : 30;
}

static int preconditions(const json_t *obj, const kc_delete_opts *opts, ty_error *err)
{
    const char *uid = ty_jmeta(obj, "uid"), *rv = ty_jmeta(obj, "resourceVersion");

    if (opts && opts->precondition_uid && *opts->precondition_uid &&
        strcmp(opts->precondition_uid, uid))
        return ty_seterr(err, TY_ECONFLICT,
                         "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                         opts->precondition_uid, uid);
    if (opts && opts->precondition_rv && *opts->precondition_rv &&
        strcmp(opts->precondition_rv, rv))
        return ty_seterr(err, TY_ECONFLICT,
                         "Precondition failed: ResourceVersion in precondition: %s, "
                         "ResourceVersion in object meta: %s",
                         opts->precondition_rv, rv);
    return 0;
}

static ty_obj *f_delete(ty_kc *c, const char *res, const char *ns, const char *name,
                        const kc_delete_opts *opts, bool *deleted, ty_error *err)
{
    fake *f = F(c);
    kc_propagation p = opts ? opts->propagation : KC_PROPAGATE_DEFAULT;
    json_t *next, *meta;
    ty_obj *o = NULL;
    char ts[32];
    long idx;

    *deleted = false;
    pthread_mutex_lock(&f->mu);
    if (kc_fake_injected(f, "delete", res, "", ns, name, err))
        goto out;
    if ((idx = kc_fake_index(f, res, ns, name)) < 0) {
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", res, name);
        kc_fake_record(f, "delete", res, "", ns, name, TY_ENOTFOUND, NULL);
        goto out;
    }
    if (preconditions(ty_obj_json(f->objs[idx].obj), opts, err) < 0) {
        kc_fake_record(f, "delete", res, "", ns, name, TY_ECONFLICT, NULL);
        goto out;
    }
    next = ty_obj_json_copy(f->objs[idx].obj);
    if (p != KC_PROPAGATE_DEFAULT) {
        finalizer_set(next, "foregroundDeletion", p == KC_PROPAGATE_FOREGROUND);
        finalizer_set(next, "orphan", p == KC_PROPAGATE_ORPHAN);
    }
    meta = meta_of(next); /* after: finalizer_set may give next a metadata of its own */
    if (!has_finalizers(res, next)) {
        o = ty_obj_ref(remove_at(f, (size_t)idx, next));
        *deleted = true;
    } else {
        int64_t grace = grace_for(res, next, opts);
        if (!json_object_get(meta, "deletionTimestamp")) {
            now_rfc3339(f, ts, sizeof(ts));
            json_object_set_new(meta, "deletionTimestamp", json_string(ts));
            json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
        } else if (opts && opts->has_grace &&
                   grace < json_integer_value(
                               json_object_get(meta, "deletionGracePeriodSeconds"))) {
            json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
        }
        if (!strcmp(res, "namespaces")) {
            json_t *st = json_object_get(next, "status");
            if (!json_is_object(st))
                json_object_set_new(next, "status", st = json_object());
            json_object_set_new(st, "phase", json_string("Terminating"));
        }
        if (json_equal(next, ty_obj_json(f->objs[idx].obj))) {
            json_decref(next);
            o = ty_obj_ref(f->objs[idx].obj);
        } else {
            o = ty_obj_ref(store(f, idx, res, next, err));
        }
    }
    kc_fake_record(f, "delete", res, "", ns, name, o ? TY_OK : TY_EINTERNAL, o);
out:
    pthread_mutex_unlock(&f->mu);
    return o;
}

static int f_bind(ty_kc *c, const char *ns, const char *name, const char *uid,
                  const char *node, ty_error *err)
{
    fake *f = F(c);
    json_t *next;
    ty_obj *o = NULL;
    long idx;

    pthread_mutex_lock(&f->mu);
    if (kc_fake_injected(f, "create", "pods", "binding", ns, name, err))
        goto out;
    if ((idx = kc_fake_index(f, "pods", ns, name)) < 0) {
        ty_seterr(err, TY_ENOTFOUND, "pods \"%s\" not found", name);
        kc_fake_record(f, "create", "pods", "binding", ns, name, TY_ENOTFOUND, NULL);
        goto out;
    }
    next = ty_obj_json_copy(f->objs[idx].obj);
    if (podcond_bind(next, node, uid, err) < 0) {
        json_decref(next);
        kc_fake_record(f, "create", "pods", "binding", ns, name, err ? err->code : TY_ECONFLICT, NULL);
        goto out;
    }
    o = write_next(f, "create", "pods", "binding", ns, name, next, NULL, err);
out:
    pthread_mutex_unlock(&f->mu);
    ty_obj_unref(o);
    return o ? 0 : -1;
}

/* ---- the client ---- */

static void f_free(ty_kc *c)
{
    fake *f = F(c);

    for (size_t i = 0; i < f->nobjs; i++) {
        ty_obj_unref(f->objs[i].obj);
        free(f->objs[i].ns);
        free(f->objs[i].name);
    }
    for (size_t i = 0; i < f->nhist; i++)
        ty_obj_unref(f->hist[i].obj);
    for (size_t i = 0; i < f->nacts; i++)
        kc_fake_action_clear(&f->acts[i]);
    for (size_t i = 0; i < f->nfails; i++) {
        free(f->fails[i].verb);
        free(f->fails[i].what);
    }
    for (size_t i = 0; i < f->nres; i++)
        free(f->res[i]);
    free(f->objs);
    free(f->hist);
    free(f->acts);
    free(f->fails);
    free(f->res);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* The fake's ops, its reads local (count_is_cheap) as the embedded
 * client's, or not, as the HTTP client's (kc_fake_set_reads_local). */
#define FAKE_OPS(local)                                                                   \
    {                                                                                     \
        .kind = "fake", .get = kc_fake_op_get, .list = kc_fake_op_list,                   \
        .list_owned = kc_fake_op_list_owned, .count = kc_fake_op_count,                   \
        .count_is_cheap = (local), .resources = kc_fake_op_resources, .create = f_create, \
        .update = f_update, .mutate = f_mutate, .patch = f_patch, .del = f_delete,        \
        .bind = f_bind, .write_all = NULL, /* kc_write_all runs the ops one by one */     \
        .watch_open = kc_fake_op_watch_open, .watch_next = kc_fake_op_watch_next,         \
        .watch_cancel = kc_fake_op_watch_cancel, .watch_close = kc_fake_op_watch_close,   \
        .free = f_free,                                                                   \
    }
static const kc_ops fake_ops = FAKE_OPS(true);
static const kc_ops fake_remote_ops = FAKE_OPS(false);

ty_kc *kc_fake_new(void)
{
    fake *f = calloc(1, sizeof(*f));

    if (!f)
        return NULL;
    f->base.ops = &fake_ops;
    pthread_mutex_init(&f->mu, NULL);
    return &f->base;
}

/* ---- test helpers ---- */

ty_obj *kc_fake_put(ty_kc *c, const char *resource, json_t *obj, ty_error *err)
{
    fake *f = F(c);
    json_t *meta = meta_of(obj);
    ty_obj *o = NULL;
    char ns[256];

    if (!json_is_object(obj) || !json_is_object(meta) || !*ty_jmeta(obj, "name")) {
        json_decref(obj);
        ty_seterr(err, TY_EBADREQUEST, "kc_fake_put: the object has no metadata.name");
        return NULL;
    }
    snprintf(ns, sizeof(ns), "%s", ty_jmeta(obj, "namespace"));
    pthread_mutex_lock(&f->mu);
    init_meta(f, meta, ns, true);
    o = ty_obj_ref(
        store(f, kc_fake_index(f, resource, ns, ty_jmeta(obj, "name")), resource, obj, err));
    pthread_mutex_unlock(&f->mu);
    return o;
}

void kc_fake_set_lax_status(ty_kc *c, bool lax)
{
    pthread_mutex_lock(&F(c)->mu);
    F(c)->lax_status = lax;
    pthread_mutex_unlock(&F(c)->mu);
}

void kc_fake_set_reads_local(ty_kc *c, bool local)
{
    /* before any watch is opened (a watch keeps the ops it was opened with) */
    c->ops = local ? &fake_ops : &fake_remote_ops;
}

void kc_fake_set_time(ty_kc *c, time_t t)
{
    pthread_mutex_lock(&F(c)->mu);
    F(c)->now = t;
    pthread_mutex_unlock(&F(c)->mu);
}

