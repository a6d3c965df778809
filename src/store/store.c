/* store.c - the write operations of the object store (open.c opens it).
 *
 * Each public write fills a request and submits it (commit.c). The leader of
 * the batch it joins runs the operation here (store_exec) with write_mu held:
 * read the current snapshot as the batch sees it (commit_current: the index,
 * which only the leader changes, plus what the batch staged before), build
 * the next JSON and stage it. The leader then commits the whole batch to
 * SQLite in one transaction, and only then takes index_rw for writing, just
 * long enough to swap the snapshots in, and publishes the events. Readers
 * therefore wait at most for pointer swaps, never for SQLite, and nobody
 * hears of a write before it is durable.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/jsonout.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "model/finalizers.h"
#include "store/store_int.h"

/* Kubernetes keeps generated names within a 63-character DNS label. */
#define GENERATE_NAME_PREFIX_MAX 58
#define GENERATE_NAME_SUFFIX 5
#define GENERATE_NAME_TRIES 16


/* The bucket for a write; adding one changes the table readers search. */
static store_res *res_for_write(ty_store *s, const char *resource, ty_error *err)
{
    store_res *r = index_find(&s->ix, resource);

    if (r)
        return r;
    ty_rwlock_wrlock(&s->index_rw);
    r = index_add(&s->ix, resource);
    ty_rwlock_wrunlock(&s->index_rw);
    if (!r)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    return r;
}

/* ---- create ---- */

int store_init_create_meta(json_t *obj, const char *ns, ty_error *err)
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
    ty_time_now(ts, sizeof(ts));
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
 * that is free in this namespace. Called by the leader. */
static int assign_name(ty_store *s, store_res *r, const char *resource, const char *ns,
                       json_t *obj, ty_error *err)
{
    json_t *meta = meta_of(obj);
    const char *name = ty_jmeta(obj, "name");
    char cand[GENERATE_NAME_PREFIX_MAX + GENERATE_NAME_SUFFIX + 1];
    const char *prefix;
    size_t plen;

    if (*name) {
        if (check_name(name, err) < 0)
            return -1;
        if (commit_current(s, r, ns, name))
            return ty_seterr(err, TY_EEXISTS, "%s \"%s\" already exists", resource, name);
        return 0;
    }
    prefix = ty_jmeta(obj, "generateName");
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
        if (!commit_current(s, r, ns, cand)) {
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
    ns = ns ? ns : "";
    if (!json_is_object(obj)) {
        json_decref(obj);
        ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
        return NULL;
    }
    if (store_init_create_meta(obj, ns, err) < 0) {
        json_decref(obj);
        return NULL;
    }
    write_req req = {.kind = WR_CREATE, .resource = resource, .ns = ns, .obj = obj, .err = err};
    commit_submit(s, &req);
    json_decref(req.obj); /* still ours when it was not staged */
    return req.result;
}

/* An async request and the copies of what it borrows. */
typedef struct async_req {
    write_req req;
    ty_error err;
    max_align_t arg[]; /* the function's argument, then resource and ns */
} async_req;

/* Queues a create nobody waits for: of obj, or of a prepared text record
 * (store_text_prepare; its name trails it). Takes obj or text over. */
static void create_async(ty_store *s, const char *resource, const char *ns, json_t *obj,
                         char *text, size_t len, size_t rv_at, store_mutate_fn fn,
                         const void *arg, size_t arglen)
{
    size_t lres = strlen(resource) + 1, lns = strlen(ns) + 1;
    size_t argsz = (arglen + 15) & ~(size_t)15;
    async_req *a = calloc(1, sizeof(*a) + argsz + lres + lns);
    char *p;

    if (!a) {
        ty_debug("store: async create of %s in \"%s\" dropped: out of memory", resource, ns);
        json_decref(obj);
        free(text);
        return;
    }
    p = (char *)a->arg;
    if (arglen)
        memcpy(p, arg, arglen);
    memcpy(p + argsz, resource, lres);
    memcpy(p + argsz + lres, ns, lns);
    ty_error_init(&a->err);
    a->req = (write_req){.kind = WR_CREATE, .resource = p + argsz, .ns = p + argsz + lres,
                         .name = text ? store_text_name(text, len) : NULL, .obj = obj,
                         .text = text, .text_len = len, .rv_at = rv_at, .fn = fn,
                         .arg = arglen ? p : NULL, .async = true, .err = &a->err};
    commit_submit(s, &a->req);
}

void store_create_async(ty_store *s, const char *resource, const char *ns, json_t *obj,
                        store_mutate_fn fn, const void *arg, size_t arglen)
{
    ns = ns ? ns : "";
    if (!json_is_object(obj) || store_init_create_meta(obj, ns, NULL) < 0) {
        ty_debug("store: async create of %s in \"%s\" dropped", resource, ns);
        json_decref(obj);
        return;
    }
    create_async(s, resource, ns, obj, NULL, 0, 0, fn, arg, arglen);
}

int store_text_prepare(char **text, size_t *len, size_t *meta_end, ty_error *err)
{
    char uid[40], ts[32];
    ty_buf b = {0};
    size_t at = *meta_end, json_len;
    const char *name;

    if (!*text || at >= *len || (*text)[at] != '}' || at == 0 || (*text)[at - 1] == '{')
        return ty_seterr(err, TY_EBADREQUEST, "a text record needs a non-empty metadata");
    name = store_text_name(*text, *len);
    if (!*name)
        return ty_seterr(err, TY_EBADREQUEST, "a text record needs a name");
    if (obj_uuid(uid, sizeof(uid)) < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot read random bytes for a uid");
    ty_time_now(ts, sizeof(ts));
    if (ty_buf_append(&b, *text, at) < 0 ||
        ty_buf_printf(&b, ",\"uid\":\"%s\",\"creationTimestamp\":\"%s\",\"generation\":1", uid,
                      ts) < 0)
        goto oom;
    *meta_end = b.len;
    if (ty_buf_append(&b, *text + at, *len - at) < 0)
        goto oom;
    json_len = b.len;
    if (ty_buf_append(&b, "", 1) < 0 || ty_buf_puts(&b, name) < 0)
        goto oom;
    free(*text);
    *text = ty_buf_steal(&b, NULL);
    *len = json_len;
    return 0;
oom:
    ty_buf_free(&b);
    return ty_seterr(err, TY_EINTERNAL, "out of memory");
}

void store_create_async_text(ty_store *s, const char *resource, const char *ns, char *text,
                             size_t len, size_t meta_end, store_mutate_fn fn)
{
    ty_error err;

    ty_error_init(&err);
    ns = ns ? ns : "";
    if (store_text_prepare(&text, &len, &meta_end, &err) < 0) {
        ty_debug("store: async create of %s in \"%s\" dropped: %s", resource, ns, err.text);
        ty_error_clear(&err);
        free(text);
        return;
    }
    create_async(s, resource, ns, NULL, text, len, meta_end, fn, NULL, 0);
}

/* A text record: its name is given; a taken name goes to fn as for a tree. */
static void exec_create_text(ty_store *s, write_req *req, store_res *r)
{
    if (check_name(req->name, req->err) < 0)
        return;
    if (!commit_current(s, r, req->ns, req->name)) {
        commit_stage_text(s, req, r);
    } else if (req->fn) {
        req->kind = WR_MUTATE;
        store_exec_mutate(s, req);
    } else {
        ty_seterr(req->err, TY_EEXISTS, "%s \"%s\" already exists", req->resource, req->name);
    }
}

static void exec_create(ty_store *s, write_req *req)
{
    store_res *r = res_for_write(s, req->resource, req->err);
    json_t *obj = req->obj;

    if (!r)
        return;
    if (req->text) {
        exec_create_text(s, req, r);
        return;
    }
    if (assign_name(s, r, req->resource, req->ns, obj, req->err) < 0) {
        /* A create with a function (async, or a RECORD op) updates what
         * holds the name. */
        if (req->fn && req->err && req->err->code == TY_EEXISTS) {
            ty_error_clear(req->err);
            req->name = ty_jmeta(obj, "name");
            req->kind = WR_MUTATE;
            store_exec_mutate(s, req);
        }
        return;
    }
    req->obj = NULL;
    commit_stage(s, req, r, obj, STORE_ADDED);
}

/* ---- get ---- */

store_obj *store_get(ty_store *s, const char *resource, const char *ns, const char *name,
                     ty_error *err)
{
    store_res *r;
    idx_node *n = NULL;
    store_obj *o = NULL;

    ns = ns ? ns : "";
    ty_rwlock_rdlock(&s->index_rw);
    r = index_find(&s->ix, resource);
    if (r && name)
        n = res_lookup(r, ns, name);
    if (n)
        o = store_obj_ref(n->obj);
    ty_rwlock_rdunlock(&s->index_rw);
    if (!o)
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", resource, name ? name : "");
    return o;
}

uint64_t store_current_rv(ty_store *s)
{
    uint64_t rv;

    ty_rwlock_rdlock(&s->index_rw);
    rv = s->rv;
    ty_rwlock_rdunlock(&s->index_rw);
    return rv;
}


/* ---- delete ---- */

static void apply_propagation(json_t *obj, store_propagation p)
{
    if (p == STORE_PROPAGATE_DEFAULT)
        return; /* leaves an earlier request's finalizer in place */
    finalizer_set(obj, "foregroundDeletion", p == STORE_PROPAGATE_FOREGROUND);
    finalizer_set(obj, "orphan", p == STORE_PROPAGATE_ORPHAN);
}

static int check_preconditions(const json_t *meta, const store_delete_opts *opts,
                               ty_error *err)
{
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));

    uid = uid ? uid : "";
    rv = rv ? rv : "";
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

/* A delete that removes cur outright (no finalizers of its own, none a
 * propagation would add, not a namespace) stages its last state as text:
 * cur's text with the metadata written again with the deletion's
 * resourceVersion, bytes as the tree path writes them. Nothing is parsed
 * but the metadata (meta, which the caller has), nothing deep-copied or
 * left to the reaper: an expiring Event, or a pod whose tree went cold,
 * cost a parse, a copy and a free each. false: the tree path's turn. */
static bool delete_as_text(ty_store *s, write_req *req, store_res *r, store_obj *cur,
                           const json_t *meta)
{
    store_propagation p = req->dopts ? req->dopts->propagation : STORE_PROPAGATE_DEFAULT;
    size_t len, a, b;
    const char *t;
    json_t *m;
    char rvs[24];
    bool ok;

    if ((p != STORE_PROPAGATE_DEFAULT && p != STORE_PROPAGATE_BACKGROUND) ||
        json_object_get(meta, "finalizers") || strcmp(req->resource, "namespaces") == 0 ||
        !(t = store_obj_text(cur, &len)) || !obj_text_member(t, len, "metadata", &a, &b) ||
        !(m = json_copy((json_t *)meta)))
        return false;
    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)s->staged_rv + 1);
    s->dump.len = 0;
    ok = json_object_set_new(m, "resourceVersion", json_string(rvs)) == 0 &&
         ty_buf_append(&s->dump, t, a) == 0 && ty_json_append(&s->dump, m) == 0 &&
         ty_buf_append(&s->dump, t + b, len - b) == 0;
    json_decref(m);
    if (!ok)
        return false;
    if (commit_stage_dump(s, req, r, STORE_DELETED) == 0)
        req->deleted = true;
    return true;
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
        ty_time_now(ts, sizeof(ts));
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

static void exec_delete(ty_store *s, write_req *req)
{
    const store_delete_opts *opts = req->dopts;
    store_res *r;
    store_obj *cur = store_current_for_write(s, req, &r, req->err);
    json_t *next, *meta;
    bool gone;

    if (!cur)
        return;
    meta = store_obj_metadata(cur);
    if (!meta) {
        ty_seterr(req->err, TY_EINTERNAL, "out of memory");
        return;
    }
    if (check_preconditions(meta, opts, req->err) < 0 ||
        delete_as_text(s, req, r, cur, meta)) {
        json_decref(meta);
        return;
    }
    json_decref(meta);
    next = json_deep_copy(obj_json(cur));
    if (!next) {
        ty_seterr(req->err, TY_EINTERNAL, "out of memory");
        return;
    }
    apply_propagation(next, opts ? opts->propagation : STORE_PROPAGATE_DEFAULT);
    gone = !has_finalizers(req->resource, next);
    if (!gone)
        mark_deleting(req->resource, next, opts);
    if (!gone && json_equal(next, obj_json(cur))) {
        json_decref(next);
        req->result = store_obj_ref(cur);
        return;
    }
    if (commit_stage(s, req, r, next, gone ? STORE_DELETED : STORE_MODIFIED) == 0)
        req->deleted = gone;
}

store_obj *store_delete(ty_store *s, const char *resource, const char *ns, const char *name,
                        const store_delete_opts *opts, bool *deleted, ty_error *err)
{
    write_req req = {.kind = WR_DELETE, .resource = resource, .ns = ns ? ns : "", .name = name,
                     .dopts = opts, .err = err};

    commit_submit(s, &req);
    if (deleted)
        *deleted = req.result && req.deleted;
    return req.result;
}

void store_exec(ty_store *s, write_req *req)
{
    switch (req->kind) {
    case WR_CREATE: exec_create(s, req); break;
    case WR_MUTATE: store_exec_mutate(s, req); break;
    case WR_DELETE: exec_delete(s, req); break;
    }
}
