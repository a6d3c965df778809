/* store.c - open/close and the write operations of the object store.
 *
 * A write runs entirely under write_mu: read the current snapshot from the
 * index (only writers change the index, so holding write_mu is enough to read
 * it), build the next JSON, commit it to SQLite in one short transaction, then
 * take index_rw for writing just long enough to swap the snapshot pointer and
 * bump the counter, and finally publish the event. Readers therefore wait at
 * most for a pointer swap, never for SQLite, and watchers hear of a commit
 * only after it is durable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "store/store_int.h"

#define DEFAULT_HISTORY_EVENTS 100000
#define DEFAULT_HISTORY_BYTES (256u * 1024u * 1024u)
#define DEFAULT_HISTORY_TREES 4096
/* Kubernetes keeps generated names within a 63-character DNS label. */
#define GENERATE_NAME_PREFIX_MAX 58
#define GENERATE_NAME_SUFFIX 5
#define GENERATE_NAME_TRIES 16

/* ---- small JSON helpers ---- */

static json_t *meta_of(json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static const char *meta_str(const json_t *obj, const char *field)
{
    const char *v = json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
    return v ? v : "";
}

static bool array_nonempty(const json_t *a)
{
    return json_is_array(a) && json_array_size(a) > 0;
}

/* Namespaces carry their "kubernetes" finalizer in spec.finalizers; for
 * deletion both lists count. */
static bool has_finalizers(const char *resource, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");

    if (array_nonempty(json_object_get(meta, "finalizers")))
        return true;
    return strcmp(resource, "namespaces") == 0 &&
           array_nonempty(json_object_get(json_object_get(obj, "spec"), "finalizers"));
}

static void now_rfc3339(char *buf, size_t len)
{
    ty_time_format(time(NULL), buf, len);
}

/* ---- commit ---- */

static owner_set owner_oom_marker;
#define OWNER_OOM (&owner_oom_marker)

/* The owner set o is to join (NULL when it has no controller), created now
 * if need be so that the commit cannot fail later; OWNER_OOM when out of
 * memory. Called with write_mu held: only writers change the sets, so the
 * lookup needs no read lock; creating one changes what readers search. */
static owner_set *owner_for_write(ty_store *s, store_res *r, const store_obj *o)
{
    const char *uid = obj_controller_uid(obj_json(o));
    owner_set *set;

    if (!uid)
        return NULL;
    if ((set = res_owner_find(r, uid)))
        return set;
    pthread_rwlock_wrlock(&s->index_rw);
    set = res_owner_reserve(r, uid);
    pthread_rwlock_unlock(&s->index_rw);
    return set ? set : OWNER_OOM;
}

/* Durably writes obj (stolen) as the next resourceVersion, updates the index
 * and publishes the event. Called with write_mu held. Returns a new reference. */
static store_obj *commit(ty_store *s, store_res *r, json_t *obj, store_event_type type,
                         ty_error *err)
{
    uint64_t rv = s->rv + 1;
    char rvs[24];
    idx_node *node = NULL, *cur;
    store_obj *o, *old = NULL;
    owner_set *owner = NULL;
    int rc;

    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
    json_object_set_new(meta_of(obj), "resourceVersion", json_string(rvs));
    o = obj_new(obj, rv, NULL, 0, err);
    if (!o)
        return NULL;
    /* Allocate before the commit so nothing can fail after it. */
    if (type == STORE_ADDED && !(node = res_node_new(o->ns, o->name)))
        goto oom;
    if (type != STORE_DELETED && (owner = owner_for_write(s, r, o)) == OWNER_OOM) {
        owner = NULL;
        goto oom;
    }
    if (type == STORE_DELETED)
        rc = db_delete(&s->db, r->name, o->ns, o->name, rv, err);
    else
        rc = db_put(&s->db, r->name, o->ns, o->name, rv, o->text, o->len, err);
    if (rc < 0)
        goto error;
    pthread_rwlock_wrlock(&s->index_rw);
    if (type == STORE_DELETED) {
        old = res_remove(r, o->ns, o->name);
    } else if (node) {
        res_insert(r, node, o);
        res_owner_link(r, node, owner);
    } else {
        cur = res_lookup(r, o->ns, o->name);
        old = cur->obj;
        cur->obj = store_obj_ref(o);
        res_owner_link(r, cur, owner);
    }
    s->rv = rv;
    /* Published under the index lock so that trimming (watch.c) sees the
     * index and the history agree. */
    hub_publish(s->hub, type, r->name, store_obj_ref(o));
    if (old)
        hub_release_superseded(s->hub, old);
    hub_trim_current(s->hub, &s->ix);
    pthread_rwlock_unlock(&s->index_rw);
    return o;
oom:
    ty_seterr(err, TY_EINTERNAL, "out of memory");
error:
    if (owner) {
        pthread_rwlock_wrlock(&s->index_rw);
        res_owner_unreserve(r, owner);
        pthread_rwlock_unlock(&s->index_rw);
    }
    free(node);
    store_obj_unref(o);
    return NULL;
}

/* The bucket for a write; adding one changes the table readers search. */
static store_res *res_for_write(ty_store *s, const char *resource, ty_error *err)
{
    store_res *r = index_find(&s->ix, resource);

    if (r)
        return r;
    pthread_rwlock_wrlock(&s->index_rw);
    r = index_add(&s->ix, resource);
    pthread_rwlock_unlock(&s->index_rw);
    if (!r)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    return r;
}

/* ---- create ---- */

static int init_create_meta(json_t *obj, const char *ns, ty_error *err)
{
    json_t *meta = meta_of(obj);
    char uid[40], ts[32];

    if (!meta) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    if (!json_is_object(meta))
        return ty_seterr(err, TY_EBADREQUEST, "metadata must be an object");
    if (obj_uuid(uid, sizeof(uid)) < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot read random bytes for a uid");
    now_rfc3339(ts, sizeof(ts));
    json_object_del(meta, "resourceVersion");
    json_object_del(meta, "deletionTimestamp");
    json_object_del(meta, "deletionGracePeriodSeconds");
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(ts));
    json_object_set_new(meta, "generation", json_integer(1));
    if (*ns)
        json_object_set_new(meta, "namespace", json_string(ns));
    else
        json_object_del(meta, "namespace");
    return 0;
}

static int check_name(const char *name, ty_error *err)
{
    if (strlen(name) > STORE_MAX_NAME_LEN) {
        ty_seterr(err, TY_EINVALID, "metadata.name: Invalid value: must be no more than %d "
                  "characters", STORE_MAX_NAME_LEN);
        ty_error_add_cause(err, "FieldValueTooLong", "metadata.name",
                           "must be no more than %d characters", STORE_MAX_NAME_LEN);
        return -1;
    }
    return 0;
}

/* Settles metadata.name: the caller's, or generateName plus a random suffix
 * that is free in this namespace. Called with write_mu held. */
static int assign_name(store_res *r, const char *resource, const char *ns, json_t *obj,
                       ty_error *err)
{
    json_t *meta = meta_of(obj);
    const char *name = meta_str(obj, "name");
    char cand[GENERATE_NAME_PREFIX_MAX + GENERATE_NAME_SUFFIX + 1];
    const char *prefix;
    size_t plen;

    if (*name) {
        if (check_name(name, err) < 0)
            return -1;
        if (res_lookup(r, ns, name))
            return ty_seterr(err, TY_EEXISTS, "%s \"%s\" already exists", resource, name);
        return 0;
    }
    prefix = meta_str(obj, "generateName");
    if (!*prefix) {
        ty_seterr(err, TY_EINVALID, "metadata.name: Required value: name or generateName is "
                  "required");
        ty_error_add_cause(err, "FieldValueRequired", "metadata.name",
                           "name or generateName is required");
        return -1;
    }
    plen = strlen(prefix);
    if (plen > GENERATE_NAME_PREFIX_MAX)
        plen = GENERATE_NAME_PREFIX_MAX;
    memcpy(cand, prefix, plen);
    for (int i = 0; i < GENERATE_NAME_TRIES; i++) {
        if (obj_random_suffix(cand + plen, GENERATE_NAME_SUFFIX) < 0)
            return ty_seterr(err, TY_EINTERNAL, "cannot read random bytes for a name");
        if (!res_lookup(r, ns, cand)) {
            json_object_set_new(meta, "name", json_string(cand));
            return 0;
        }
    }
    return ty_seterr(err, TY_EEXISTS, "%s \"%s\" already exists: no free generated name",
                     resource, cand);
}

store_obj *store_create(ty_store *s, const char *resource, const char *ns, const json_t *obj,
                        ty_error *err)
{
    json_t *copy;

    if (!json_is_object(obj)) {
        ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
        return NULL;
    }
    copy = json_deep_copy(obj);
    if (!copy) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    return store_create_take(s, resource, ns, copy, err);
}

store_obj *store_create_take(ty_store *s, const char *resource, const char *ns, json_t *obj,
                             ty_error *err)
{
    store_res *r;
    store_obj *o = NULL;

    ns = ns ? ns : "";
    if (!json_is_object(obj)) {
        json_decref(obj);
        ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
        return NULL;
    }
    if (init_create_meta(obj, ns, err) < 0) {
        json_decref(obj);
        return NULL;
    }
    pthread_mutex_lock(&s->write_mu);
    r = res_for_write(s, resource, err);
    if (r && assign_name(r, resource, ns, obj, err) == 0) {
        o = commit(s, r, obj, STORE_ADDED, err);
        obj = NULL;
    }
    pthread_mutex_unlock(&s->write_mu);
    json_decref(obj);
    return o;
}

/* ---- get ---- */

store_obj *store_get(ty_store *s, const char *resource, const char *ns, const char *name,
                     ty_error *err)
{
    store_res *r;
    idx_node *n = NULL;
    store_obj *o = NULL;

    ns = ns ? ns : "";
    pthread_rwlock_rdlock(&s->index_rw);
    r = index_find(&s->ix, resource);
    if (r && name)
        n = res_lookup(r, ns, name);
    if (n)
        o = store_obj_ref(n->obj);
    pthread_rwlock_unlock(&s->index_rw);
    if (!o)
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", resource, name ? name : "");
    return o;
}

uint64_t store_current_rv(ty_store *s)
{
    uint64_t rv;

    pthread_rwlock_rdlock(&s->index_rw);
    rv = s->rv;
    pthread_rwlock_unlock(&s->index_rw);
    return rv;
}

/* Current snapshot for a write, borrowed: valid while write_mu is held. */
static store_obj *current_for_write(ty_store *s, const char *resource, const char *ns,
                                    const char *name, store_res **rp, ty_error *err)
{
    store_res *r = index_find(&s->ix, resource);
    idx_node *n = r && name ? res_lookup(r, ns, name) : NULL;

    if (!n) {
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", resource, name ? name : "");
        return NULL;
    }
    *rp = r;
    return n->obj;
}

/* ---- update ---- */

static bool equal_outside_meta_status(const json_t *a, const json_t *b)
{
    const char *k;
    json_t *v;
    size_t na = 0, nb = 0;

    json_object_foreach((json_t *)a, k, v) {
        if (!strcmp(k, "metadata") || !strcmp(k, "status"))
            continue;
        na++;
        if (!json_equal(v, json_object_get(b, k)))
            return false;
    }
    json_object_foreach((json_t *)b, k, v) {
        if (strcmp(k, "metadata") && strcmp(k, "status"))
            nb++;
    }
    return na == nb;
}

/* Fields a caller can never change through an update. resourceVersion is
 * restored too, so that comparing with the current object shows whether
 * anything the caller controls changed. */
static const char *const kept_fields[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                          "deletionGracePeriodSeconds", "name", "namespace",
                                          "resourceVersion", "generation"};

/* Turns next into a valid successor of cur. Returns 1 when it differs from
 * cur (a write is due), 0 when equal, -1 on a failed precondition. */
static int prepare_update(const char *resource, const store_obj *cur, json_t *next,
                          ty_error *err)
{
    const json_t *cmeta = json_object_get(obj_json(cur), "metadata");
    json_t *nmeta;
    const char *want_rv;
    json_int_t gen;

    if (!json_is_object(next))
        return ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
    nmeta = meta_of(next);
    if (!nmeta) {
        nmeta = json_object();
        json_object_set_new(next, "metadata", nmeta);
    }
    if (!json_is_object(nmeta))
        return ty_seterr(err, TY_EBADREQUEST, "metadata must be an object");
    want_rv = meta_str(next, "resourceVersion");
    if (*want_rv && strcmp(want_rv, meta_str(obj_json(cur), "resourceVersion")) != 0)
        return ty_seterr(err, TY_ECONFLICT,
                         "Operation cannot be fulfilled on %s \"%s\": the object has been "
                         "modified; please apply your changes to the latest version and try "
                         "again",
                         resource, cur->name);
    for (size_t i = 0; i < sizeof(kept_fields) / sizeof(kept_fields[0]); i++) {
        json_t *v = json_object_get(cmeta, kept_fields[i]);
        if (v)
            json_object_set_new(nmeta, kept_fields[i], json_deep_copy(v));
        else
            json_object_del(nmeta, kept_fields[i]);
    }
    if (!equal_outside_meta_status(obj_json(cur), next)) {
        gen = json_integer_value(json_object_get(cmeta, "generation"));
        json_object_set_new(nmeta, "generation", json_integer(gen + 1));
    }
    return json_equal(obj_json(cur), next) ? 0 : 1;
}

/* Commits next (stolen) as the successor of cur: nothing when unchanged, a
 * removal when it is being deleted and its last finalizer just went. */
static store_obj *write_next(ty_store *s, store_res *r, store_obj *cur, json_t *next,
                             ty_error *err)
{
    int rc = prepare_update(r->name, cur, next, err);
    bool gone;

    if (rc <= 0) {
        json_decref(next);
        return rc < 0 ? NULL : store_obj_ref(cur);
    }
    gone = json_object_get(meta_of(next), "deletionTimestamp") &&
           !has_finalizers(r->name, next);
    return commit(s, r, next, gone ? STORE_DELETED : STORE_MODIFIED, err);
}

store_obj *store_mutate(ty_store *s, const char *resource, const char *ns, const char *name,
                        store_mutate_fn fn, void *arg, ty_error *err)
{
    store_res *r;
    store_obj *cur, *o = NULL;
    json_t *next;

    ns = ns ? ns : "";
    pthread_mutex_lock(&s->write_mu);
    cur = current_for_write(s, resource, ns, name, &r, err);
    if (!cur)
        goto out;
    next = json_deep_copy(obj_json(cur));
    if (!next) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    if (fn(next, arg, err) < 0) {
        json_decref(next);
        goto out;
    }
    o = write_next(s, r, cur, next, err);
out:
    pthread_mutex_unlock(&s->write_mu);
    return o;
}

static int replace_with(json_t *obj, void *arg, ty_error *err)
{
    json_t *copy = json_deep_copy(arg);

    if (!copy)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    json_object_clear(obj);
    json_object_update(obj, copy);
    json_decref(copy);
    return 0;
}

store_obj *store_update(ty_store *s, const char *resource, const char *ns, const json_t *newobj,
                        ty_error *err)
{
    const char *name = json_is_object(newobj) ? meta_str(newobj, "name") : "";

    if (!json_is_object(newobj)) {
        ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
        return NULL;
    }
    if (!*name) {
        ty_seterr(err, TY_EINVALID, "metadata.name: Required value: name is required");
        ty_error_add_cause(err, "FieldValueRequired", "metadata.name", "name is required");
        return NULL;
    }
    return store_mutate(s, resource, ns, name, replace_with, (void *)newobj, err);
}

/* ---- delete ---- */

static void finalizer_set(json_t *obj, const char *fin, bool want)
{
    json_t *meta = meta_of(obj), *list = json_object_get(meta, "finalizers");
    size_t i;
    json_t *v;

    if (!json_is_array(list)) {
        if (!want)
            return;
        list = json_array();
        json_object_set_new(meta, "finalizers", list);
    }
    json_array_foreach(list, i, v) {
        if (json_is_string(v) && !strcmp(json_string_value(v), fin)) {
            if (want)
                return;
            json_array_remove(list, i);
            break;
        }
    }
    if (want)
        json_array_append_new(list, json_string(fin));
    else if (!json_array_size(list))
        json_object_del(meta, "finalizers");
}

static void apply_propagation(json_t *obj, store_propagation p)
{
    if (p == STORE_PROPAGATE_DEFAULT)
        return; /* leaves an earlier request's finalizer in place */
    finalizer_set(obj, "foregroundDeletion", p == STORE_PROPAGATE_FOREGROUND);
    finalizer_set(obj, "orphan", p == STORE_PROPAGATE_ORPHAN);
}

static int check_preconditions(const store_obj *cur, const store_delete_opts *opts,
                               ty_error *err)
{
    const json_t *json = obj_json(cur);
    const char *uid = meta_str(json, "uid"), *rv = meta_str(json, "resourceVersion");

    if (opts && opts->precondition_uid && *opts->precondition_uid &&
        strcmp(opts->precondition_uid, uid) != 0)
        return ty_seterr(err, TY_ECONFLICT,
                         "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                         opts->precondition_uid, uid);
    if (opts && opts->precondition_rv && *opts->precondition_rv &&
        strcmp(opts->precondition_rv, rv) != 0)
        return ty_seterr(err, TY_ECONFLICT,
                         "Precondition failed: ResourceVersion in precondition: %s, "
                         "ResourceVersion in object meta: %s",
                         opts->precondition_rv, rv);
    return 0;
}

/* Sets deletionTimestamp once; a namespace also shows Terminating at once. */
/* deletionGracePeriodSeconds as kube-apiserver records it: the request's
 * gracePeriodSeconds, else a pod's own terminationGracePeriodSeconds, else 0. */
static int64_t grace_for(const char *resource, const json_t *obj, const store_delete_opts *opts)
{
    const json_t *g;

    if (opts && opts->has_grace)
        return opts->grace_seconds < 0 ? 0 : opts->grace_seconds;
    if (strcmp(resource, "pods") != 0)
        return 0;
    g = json_object_get(json_object_get(obj, "spec"), "terminationGracePeriodSeconds");
    return json_is_integer(g) && json_integer_value(g) >= 0 ? json_integer_value(g) : 30;
}

static void mark_deleting(const char *resource, json_t *obj, const store_delete_opts *opts)
{
    json_t *meta = meta_of(obj), *status;
    char ts[32];
    int64_t grace = grace_for(resource, obj, opts);

    if (!json_object_get(meta, "deletionTimestamp")) {
        now_rfc3339(ts, sizeof(ts));
        json_object_set_new(meta, "deletionTimestamp", json_string(ts));
        json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
    } else if (opts && opts->has_grace &&
               grace < json_integer_value(json_object_get(meta, "deletionGracePeriodSeconds"))) {
        /* A second delete may only shorten the grace period. */
        json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
    }
    if (!strcmp(resource, "namespaces")) {
        status = json_object_get(obj, "status");
        if (!json_is_object(status)) {
            status = json_object();
            json_object_set_new(obj, "status", status);
        }
        json_object_set_new(status, "phase", json_string("Terminating"));
    }
}

store_obj *store_delete(ty_store *s, const char *resource, const char *ns, const char *name,
                        const store_delete_opts *opts, bool *deleted, ty_error *err)
{
    store_res *r;
    store_obj *cur, *o = NULL;
    json_t *next;
    bool gone;

    ns = ns ? ns : "";
    if (deleted)
        *deleted = false;
    pthread_mutex_lock(&s->write_mu);
    cur = current_for_write(s, resource, ns, name, &r, err);
    if (!cur || check_preconditions(cur, opts, err) < 0)
        goto out;
    next = json_deep_copy(obj_json(cur));
    if (!next) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    apply_propagation(next, opts ? opts->propagation : STORE_PROPAGATE_DEFAULT);
    gone = !has_finalizers(resource, next);
    if (!gone)
        mark_deleting(resource, next, opts);
    if (!gone && json_equal(next, obj_json(cur))) {
        json_decref(next);
        o = store_obj_ref(cur);
        goto out;
    }
    o = commit(s, r, next, gone ? STORE_DELETED : STORE_MODIFIED, err);
    if (o && deleted)
        *deleted = gone;
out:
    pthread_mutex_unlock(&s->write_mu);
    return o;
}

/* ---- open / close ---- */

static int load_row(void *arg, const char *resource, const char *ns, const char *name,
                    uint64_t rv, const char *text, size_t len, ty_error *err)
{
    ty_store *s = arg;
    json_error_t jerr;
    json_t *json = json_loadb(text, len, 0, &jerr);
    store_res *r = index_add(&s->ix, resource);
    idx_node *node = res_node_new(ns, name);
    owner_set *owner = NULL;
    const char *uid;
    store_obj *o;

    if (!json || !r || !node) {
        json_decref(json);
        free(node);
        return ty_seterr(err, TY_EINTERNAL, "store: cannot load %s %s/%s: %s", resource, ns,
                         name, json ? "out of memory" : jerr.text);
    }
    o = obj_new(json, rv, text, len, err);
    if (!o) {
        free(node);
        return -1;
    }
    uid = obj_controller_uid(obj_json(o));
    if (uid && !(owner = res_owner_reserve(r, uid))) {
        free(node);
        store_obj_unref(o);
        return ty_seterr(err, TY_EINTERNAL, "store: out of memory");
    }
    res_insert(r, node, o);
    res_owner_link(r, node, owner);
    store_obj_unref(o);
    /* Puts do not write the stored counter (see db.c): their rows do. */
    if (rv > s->rv)
        s->rv = rv;
    return 0;
}

static int ensure(ty_store *s, const char *resource, const char *name, json_t *obj,
                  ty_error *err)
{
    store_obj *o = store_get(s, resource, "", name, NULL);

    if (!o)
        o = store_create(s, resource, "", obj, err);
    json_decref(obj);
    store_obj_unref(o);
    return o ? 0 : -1;
}

static json_t *namespace_json(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[s]}, s:{s:s}}", "apiVersion", "v1",
                     "kind", "Namespace", "metadata", "name", name, "labels",
                     "kubernetes.io/metadata.name", name, "spec", "finalizers", "kubernetes",
                     "status", "phase", "Active");
}

static int seed(ty_store *s, ty_error *err)
{
    json_t *queue = json_pack("{s:s, s:s, s:{s:s}, s:{s:i, s:b}, s:{s:s}}", "apiVersion",
                              "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata",
                              "name", "default", "spec", "weight", 1, "reclaimable", 1,
                              "status", "state", "Open");

    if (ensure(s, "namespaces", "default", namespace_json("default"), err) < 0 ||
        ensure(s, "namespaces", "kube-system", namespace_json("kube-system"), err) < 0 ||
        ensure(s, "queues.scheduling.volcano.sh", "default", queue, err) < 0)
        return -1;
    return 0;
}

ty_store *store_open(const char *dir, ty_error *err)
{
    return store_open_with(dir, NULL, err);
}

ty_store *store_open_with(const char *dir, const store_options *opts, ty_error *err)
{
    ty_store *s = calloc(1, sizeof(*s));
    pthread_rwlockattr_t ra;
    size_t events = opts && opts->history_events ? opts->history_events : DEFAULT_HISTORY_EVENTS;
    size_t bytes = opts && opts->history_bytes ? opts->history_bytes : DEFAULT_HISTORY_BYTES;
    size_t trees = opts && opts->history_trees ? opts->history_trees : DEFAULT_HISTORY_TREES;

    if (!s) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->write_mu, NULL);
    /* glibc's default lets a steady stream of readers starve the writer. */
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->index_rw, &ra);
    pthread_rwlockattr_destroy(&ra);
    if (db_open(&s->db, dir, &s->rv, err) < 0)
        goto error;
    if (db_load(&s->db, load_row, s, err) < 0)
        goto error;
    /* History starts now: a watch from before this open gets TY_EGONE. */
    s->hub = hub_new(s->rv, events, bytes, trees);
    if (!s->hub) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (seed(s, err) < 0)
        goto error;
    return s;
error:
    store_close(s);
    return NULL;
}

void store_close(ty_store *s)
{
    if (!s)
        return;
    if (s->hub)
        hub_shutdown(s->hub);
    db_close(&s->db);
    index_free(&s->ix);
    pthread_rwlock_destroy(&s->index_rw);
    pthread_mutex_destroy(&s->write_mu);
    free(s);
}

json_t *store_resources(ty_store *s)
{
    json_t *names = json_array();

    pthread_rwlock_rdlock(&s->index_rw);
    for (size_t i = 0; i < s->ix.n; i++)
        if (res_count(s->ix.res[i]))
            json_array_append_new(names, json_string(s->ix.res[i]->name));
    pthread_rwlock_unlock(&s->index_rw);
    return names;
}
