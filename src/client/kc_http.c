/* kc_http.c - the client interface (kc.h) as Kubernetes API requests: the
 * reads and writes, and the client itself. Requests are kc_http_req.c's,
 * watches kc_http_watch.c's, kubeconfig and in-cluster set-up
 * kc_http_config.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "client/kc_http_int.h"

/* kc_mutate's tries after a conflict: enough that a writer racing a few
 * others for the same object does not give up (each conflict is another
 * writer's success). */
#define KH_MUTATE_TRIES 16

#define KH(kc) ((kh_client *)(kc))

static const char *md_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

const api_resource *kh_resource(const char *key, ty_error *err)
{
    const api_resource *res = api_find_store_key(key);

    if (!res)
        ty_seterr(err, TY_ENOTFOUND, "the server could not find the requested resource (%s)",
                  key ? key : "");
    return res;
}

void kh_set_type(json_t *obj, const api_resource *res)
{
    char av[128];

    if (!json_is_object(obj))
        return;
    if (!json_object_get(obj, "apiVersion")) {
        api_version_string(res, av, sizeof(av));
        json_object_set_new(obj, "apiVersion", json_string(av));
    }
    if (!json_object_get(obj, "kind"))
        json_object_set_new(obj, "kind", json_string(res->kind));
}

/* A namespaced kind's object is addressed through its namespace. */
static int need_ns(const api_resource *res, const char *ns, ty_error *err)
{
    if (res->namespaced && (!ns || !*ns))
        return ty_seterr(err, TY_EBADREQUEST, "%s are namespaced: a namespace is required",
                         res->plural);
    return 0;
}

/* The object of a 2xx answer (taken over) as a snapshot. */
static ty_obj *snapshot(json_t *v, const api_resource *res, ty_error *err)
{
    ty_obj *o;

    if (!json_is_object(v)) {
        json_decref(v);
        ty_seterr(err, TY_EINTERNAL, "the server answered with no object");
        return NULL;
    }
    kh_set_type(v, res);
    if (!(o = ty_obj_new(v)))
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    return o;
}

/* A request on one object (or its subresource sub), its answer a snapshot. */
static ty_obj *obj_call(kh_client *c, const char *method, const api_resource *res,
                        const char *ns, const char *name, const char *sub, const char *ctype,
                        const json_t *body, ty_error *err)
{
    ty_buf path = {0};
    json_t *v;

    if (kh_path(&path, res, ns, name, sub) < 0) {
        ty_buf_free(&path);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    v = kh_call(c, method, path.data, ctype, body, NULL, err);
    ty_buf_free(&path);
    return v ? snapshot(v, res, err) : NULL;
}

/* ---- reads ---- */

static ty_obj *h_get(ty_kc *kc, const char *key, const char *ns, const char *name,
                     ty_error *err)
{
    const api_resource *res = kh_resource(key, err);

    if (!res || need_ns(res, ns, err) < 0)
        return NULL;
    return obj_call(KH(kc), "GET", res, ns, name, NULL, NULL, NULL, err);
}

/* The items of a list answer v (borrowed) that filter passes, into out. */
static int take_items(json_t *v, const api_resource *res, kc_filter_fn filter, void *arg,
                      kc_list *out, ty_error *err)
{
    json_t *items = json_object_get(v, "items"), *meta = json_object_get(v, "metadata");
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *cont = json_string_value(json_object_get(meta, "continue"));
    json_t *rem = json_object_get(meta, "remainingItemCount");
    size_t n = json_array_size(items), i;
    json_t *item;

    if (items && !json_is_array(items) && !json_is_null(items))
        return ty_seterr(err, TY_EINTERNAL, "the server's list has no items array");
    if (n && !(out->items = malloc(n * sizeof(*out->items))))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    json_array_foreach(items, i, item) {
        kh_set_type(item, res);
        if (filter && !filter(item, arg))
            continue;
        if (!(out->items[out->n] = ty_obj_new(json_incref(item))))
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        out->n++;
    }
    snprintf(out->rv, sizeof(out->rv), "%s", rv ? rv : "");
    if (cont && *cont && !(out->continue_token = strdup(cont)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    out->remaining = json_is_integer(rem) ? json_integer_value(rem) : out->continue_token ? -1 : 0;
    return 0;
}

/* GET of a list of res; NULL with err on failure. */
static json_t *list_call(kh_client *c, const api_resource *res, const kc_list_opts *o,
                         ty_error *err)
{
    char limit[32];
    ty_buf path = {0};
    json_t *v = NULL;

    snprintf(limit, sizeof(limit), "%zu", o->limit);
    if (kh_path(&path, res, o->ns, NULL, NULL) < 0 ||
        kh_query(&path, "labelSelector",
                 o->label_selector && *o->label_selector ? o->label_selector : NULL) < 0 ||
        kh_query(&path, "fieldSelector",
                 o->field_selector && *o->field_selector ? o->field_selector : NULL) < 0 ||
        kh_query(&path, "limit", o->limit ? limit : NULL) < 0 ||
        kh_query(&path, "continue",
                 o->continue_token && *o->continue_token ? o->continue_token : NULL) < 0)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    else
        v = kh_call(c, "GET", path.data, NULL, NULL, NULL, err);
    ty_buf_free(&path);
    return v;
}

static int h_list(ty_kc *kc, const char *key, const kc_list_opts *o, kc_list *out,
                  ty_error *err)
{
    const api_resource *res = kh_resource(key, err);
    json_t *v;
    int rc;

    if (!res || !(v = list_call(KH(kc), res, o, err)))
        return -1;
    rc = take_items(v, res, o->filter, o->filter_arg, out, err);
    json_decref(v);
    if (rc < 0)
        kc_list_items_free(out);
    return rc;
}

static bool owned_by(const json_t *obj, void *arg)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), *r;
    size_t i;

    json_array_foreach(refs, i, r) {
        if (json_is_true(json_object_get(r, "controller"))) {
            const char *uid = json_string_value(json_object_get(r, "uid"));
            return uid && strcmp(uid, arg) == 0;
        }
    }
    return false;
}

/* No owner index on the far side: the namespace's list, filtered here. */
static int h_list_owned(ty_kc *kc, const char *key, const char *ns, const char *uid,
                        kc_list *out, ty_error *err)
{
    kc_list_opts o = {.ns = ns, .filter = owned_by, .filter_arg = (void *)uid};

    if (!uid || !*uid) {
        out->remaining = 0;
        return kh_resource(key, err) ? 0 : -1;
    }
    return h_list(kc, key, &o, out, err);
}

/* The server narrows by the selector (the job-name label): O(the job's
 * objects) where h_list_owned reads the namespace's (the API has no owner
 * index). */
static int h_list_owned_sel(ty_kc *kc, const char *key, const char *ns, const char *uid,
                            const char *sel, kc_list *out, ty_error *err)
{
    kc_list_opts o = {.ns = ns, .label_selector = sel, .filter = owned_by,
                      .filter_arg = (void *)uid};

    if (!uid || !*uid) {
        out->remaining = 0;
        return kh_resource(key, err) ? 0 : -1;
    }
    return h_list(kc, key, &o, out, err);
}

static size_t h_count(ty_kc *kc, const char *key)
{
    const api_resource *res = kh_resource(key, NULL);
    kc_list_opts o = {.limit = 1};
    json_t *v, *meta, *rem;
    size_t n = 0;

    if (!res || !(v = list_call(KH(kc), res, &o, NULL)))
        return 0;
    meta = json_object_get(v, "metadata");
    rem = json_object_get(meta, "remainingItemCount");
    n = json_array_size(json_object_get(v, "items"));
    if (json_is_integer(rem) && json_integer_value(rem) >= 0) {
        n += (size_t)json_integer_value(rem);
    } else if (json_string_length(json_object_get(meta, "continue"))) {
        /* the server does not count (selectors, or an old one): list */
        o.limit = 0;
        json_decref(v);
        if (!(v = list_call(KH(kc), res, &o, NULL)))
            return 0;
        n = json_array_size(json_object_get(v, "items"));
    }
    json_decref(v);
    return n;
}

int kh_current_rv(kh_client *c, const api_resource *res, char *rv, size_t len, ty_error *err)
{
    kc_list_opts o = {.limit = 1};
    json_t *v = list_call(c, res, &o, err);
    const char *s;

    if (!v)
        return -1;
    s = json_string_value(json_object_get(json_object_get(v, "metadata"), "resourceVersion"));
    snprintf(rv, len, "%s", s ? s : "");
    json_decref(v);
    return 0;
}

/* ---- writes ---- */

static ty_obj *h_create(ty_kc *kc, const char *key, const char *ns, json_t *obj, ty_error *err)
{
    const api_resource *res = kh_resource(key, err);
    ty_obj *o = NULL;

    if (res && need_ns(res, ns, err) == 0) {
        kh_set_type(obj, res);
        o = obj_call(KH(kc), "POST", res, ns, NULL, NULL, NULL, obj, err);
    }
    json_decref(obj);
    return o;
}

/* A PUT of obj (borrowed) to its name, or to its status subresource. */
static ty_obj *put(kh_client *c, const api_resource *res, const char *ns, const json_t *obj,
                   bool status, ty_error *err)
{
    const char *name = md_str(obj, "name");
    json_t *typed = NULL;
    ty_obj *o;

    if (!name || !*name) {
        ty_seterr(err, TY_EBADREQUEST, "an update needs metadata.name");
        return NULL;
    }
    if (!json_object_get(obj, "apiVersion") || !json_object_get(obj, "kind")) {
        if (!(typed = json_deep_copy(obj))) {
            ty_seterr(err, TY_EINTERNAL, "out of memory");
            return NULL;
        }
        kh_set_type(typed, res);
    }
    o = obj_call(c, "PUT", res, ns, name, status ? "status" : NULL, NULL, typed ? typed : obj,
                 err);
    json_decref(typed);
    return o;
}

static ty_obj *h_update(ty_kc *kc, const char *key, const char *ns, const json_t *obj,
                        ty_error *err)
{
    const api_resource *res = kh_resource(key, err);

    ty_obj *o;

    if (!res || need_ns(res, ns, err) < 0)
        return NULL;
    o = put(KH(kc), res, ns, obj, false, err);
    kh_memo_put(&KH(kc)->memo, key, ns, md_str(obj, "name"), o, false);
    return o;
}

/* The hints (KC_SPEC_TOP, KC_ARENA, KC_LIGHT) are the embedded store's:
 * fn always gets a whole copy here. The first try starts from the answer
 * of this client's last write of the object when it has one (no GET:
 * kc_http_memo.c), unless KC_FRESH. */
static ty_obj *h_mutate(ty_kc *kc, const char *key, const char *ns, const char *name,
                        kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err)
{
    kh_client *c = KH(kc);
    const api_resource *res = kh_resource(key, err);
    /* a kind without the subresource takes its status with the rest */
    bool status = (flags & KC_STATUS) && res && res->has_status;
    bool memo_ok = !(flags & KC_FRESH);

    if (!res || need_ns(res, ns, err) < 0)
        return NULL;
    for (int attempt = 0;; attempt++) {
        ty_obj *cur = memo_ok ? kh_memo_get(&c->memo, key, ns, name) : NULL, *o;
        bool remembered = cur != NULL;
        char rv[TY_RV_MAX];
        const char *nrv;
        bool own_rv;
        json_t *copy;
        ty_error perr;
        int rc;

        memo_ok = false; /* one try from the memo at most */
        if (!cur && !(cur = obj_call(c, "GET", res, ns, name, NULL, NULL, NULL, err)))
            return NULL;
        if (!(copy = ty_obj_json_copy(cur))) {
            ty_obj_unref(cur);
            ty_seterr(err, TY_EINTERNAL, "out of memory");
            return NULL;
        }
        ty_obj_rv(cur, rv, sizeof(rv));
        rc = fn(copy, arg, err);
        if (remembered && (rc != 0 || json_equal(copy, ty_obj_json(cur)))) {
            /* nothing to write, or refused, on the remembered copy: ask the
             * server's state before deciding so */
            json_decref(copy);
            ty_obj_unref(cur);
            if (rc != 0 && err)
                ty_error_clear(err);
            attempt--;
            continue;
        }
        if (rc != 0 || json_equal(copy, ty_obj_json(cur))) {
            json_decref(copy);
            if (rc == 0)
                return cur;
            ty_obj_unref(cur);
            if (rc > 0) /* it was given the whole object already */
                ty_seterr(err, TY_EINTERNAL, "the mutate function asked for more than a "
                                             "whole object");
            return NULL;
        }
        ty_obj_unref(cur);
        nrv = md_str(copy, "resourceVersion");
        own_rv = !nrv || strcmp(nrv, rv) != 0; /* fn chose the precondition */
        ty_error_init(&perr); /* the caller's err may be NULL: conflicts are told here */
        o = put(c, res, ns, copy, status, &perr);
        json_decref(copy);
        if (remembered)
            kh_memo_count(&c->memo, !o && perr.code == TY_ECONFLICT);
        /* what was written is the next write's base; a conflict: forget */
        kh_memo_put(&c->memo, key, ns, name, o, true);
        if (!o && remembered && !own_rv && perr.code == TY_ECONFLICT) {
            ty_error_clear(&perr);
            attempt--; /* the remembered copy was stale: read, at once */
            continue;
        }
        if (o || own_rv || perr.code != TY_ECONFLICT || attempt + 1 >= KH_MUTATE_TRIES) {
            if (err && !o)
                *err = perr; /* the causes move with it */
            else
                ty_error_clear(&perr);
            return o;
        }
        ty_error_clear(&perr);
        /* a short, spread pause: the writers that collided go apart */
        struct timespec ts = {0, (long)(1 + rand() % 10) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static ty_obj *h_patch(ty_kc *kc, const char *key, const char *ns, const char *name,
                       kc_patch_type type, const json_t *patch, bool status, ty_error *err)
{
    const api_resource *res = kh_resource(key, err);
    const char *ctype = type == KC_PATCH_JSON        ? "application/json-patch+json"
                        : type == KC_PATCH_STRATEGIC ? "application/strategic-merge-patch+json"
                                                     : "application/merge-patch+json";

    ty_obj *o;

    if (!res || need_ns(res, ns, err) < 0)
        return NULL;
    o = obj_call(KH(kc), "PATCH", res, ns, name, status && res->has_status ? "status" : NULL,
                 ctype, patch, err);
    kh_memo_put(&KH(kc)->memo, key, ns, name, o, false);
    return o;
}

static bool is_status(const json_t *v)
{
    const char *kind = json_string_value(json_object_get(v, "kind"));

    return kind && strcmp(kind, "Status") == 0;
}

/* Whether a delete's answer v (a Status, or the object) means the object is
 * gone. kube-apiserver answers 200 with the last state when it deleted the
 * object, 200 (202 with propagationPolicy Foreground or orphanDependents
 * false) with the object when it only marked it: finalizers hold it, or a
 * graceful pod waits for its kubelet (deletionGracePeriodSeconds > 0).
 * Trainyard's server answers 200 with a Status, or 202 with the marked
 * object. */
static bool answer_deleted(long status, const json_t *v)
{
    const json_t *meta = json_object_get(v, "metadata");
    json_t *grace = json_object_get(meta, "deletionGracePeriodSeconds");

    if (is_status(v))
        return true;
    if (status == 202)
        return false;
    if (!json_object_get(meta, "deletionTimestamp"))
        return true;
    return json_array_size(json_object_get(meta, "finalizers")) == 0 &&
           !(json_is_integer(grace) && json_integer_value(grace) > 0);
}

static ty_obj *h_delete(ty_kc *kc, const char *key, const char *ns, const char *name,
                        const kc_delete_opts *opts, bool *deleted, ty_error *err)
{
    static const char *const policies[] = {NULL, "Background", "Foreground", "Orphan"};
    const api_resource *res = kh_resource(key, err);
    json_t *body, *pre, *v;
    ty_buf path = {0};
    long status = 0;

    *deleted = false;
    if (!res || need_ns(res, ns, err) < 0)
        return NULL;
    kh_memo_put(&KH(kc)->memo, key, ns, name, NULL, false);
    body = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
    pre = json_object();
    if (opts && opts->propagation > KC_PROPAGATE_DEFAULT &&
        opts->propagation <= KC_PROPAGATE_ORPHAN)
        json_object_set_new(body, "propagationPolicy",
                            json_string(policies[opts->propagation]));
    if (opts && opts->precondition_uid && *opts->precondition_uid)
        json_object_set_new(pre, "uid", json_string(opts->precondition_uid));
    if (opts && opts->precondition_rv && *opts->precondition_rv)
        json_object_set_new(pre, "resourceVersion", json_string(opts->precondition_rv));
    if (json_object_size(pre))
        json_object_set(body, "preconditions", pre);
    json_decref(pre);
    if (opts && opts->has_grace)
        json_object_set_new(body, "gracePeriodSeconds", json_integer(opts->grace_seconds));
    if (kh_path(&path, res, ns, name, NULL) < 0) {
        ty_buf_free(&path);
        json_decref(body);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    v = kh_call(KH(kc), "DELETE", path.data, NULL, body, &status, err);
    ty_buf_free(&path);
    json_decref(body);
    if (!v)
        return NULL;
    *deleted = answer_deleted(status, v);
    if (!is_status(v))
        return snapshot(v, res, err);
    json_decref(v); /* the last state is not known here */
    return NULL;
}

static int h_bind(ty_kc *kc, const char *ns, const char *name, const char *uid,
                  const char *node, ty_error *err)
{
    const api_resource *res = kh_resource("pods", err);
    json_t *body, *v;
    ty_buf path = {0};

    if (!res || need_ns(res, ns, err) < 0)
        return -1;
    body = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s}}", "kind", "Binding", "apiVersion",
                     "v1", "metadata", "name", name, "target", "apiVersion", "v1", "kind",
                     "Node", "name", node ? node : "");
    if (body && uid && *uid)
        json_object_set_new(json_object_get(body, "metadata"), "uid", json_string(uid));
    if (!body || kh_path(&path, res, ns, name, "binding") < 0) {
        json_decref(body);
        ty_buf_free(&path);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    v = kh_call(KH(kc), "POST", path.data, NULL, body, NULL, err);
    ty_buf_free(&path);
    json_decref(body);
    json_decref(v);
    return v ? 0 : -1;
}

/* ---- discovery ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The resources of one group-version the server lists, as store keys. */
static int discover_gv(kh_client *c, const char *group, const char *version, const char **keys,
                       size_t *n, size_t max)
{
    char path[256];
    ty_error err;
    json_t *v, *r;
    size_t i;

    ty_error_init(&err);
    if (*group)
        snprintf(path, sizeof(path), "/apis/%s/%s", group, version);
    else
        snprintf(path, sizeof(path), "/api/%s", version);
    v = kh_call(c, "GET", path, NULL, NULL, NULL, &err);
    if (!v) {
        int rc = err.code == TY_ENOTFOUND ? 0 : -1; /* a group the server lacks */
        ty_error_clear(&err);
        return rc;
    }
    json_array_foreach(json_object_get(v, "resources"), i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        const api_resource *res = name ? api_find(group, version, name) : NULL;
        json_t *verb;
        size_t j;
        bool listable = false;

        json_array_foreach(json_object_get(r, "verbs"), j, verb)
            listable = listable || (json_string_value(verb) &&
                                    !strcmp(json_string_value(verb), "list"));
        if (res && listable && *n < max)
            keys[(*n)++] = api_store_key(res);
    }
    json_decref(v);
    return 0;
}

json_t *kh_resources(ty_kc *kc)
{
    size_t nres;
    const api_resource *const *all = api_resources(&nres);
    const char **keys = calloc(nres ? nres : 1, sizeof(*keys));
    size_t n = 0;
    json_t *out = NULL;

    if (!keys)
        return NULL;
    for (size_t i = 0; i < nres; i++) {
        bool seen = false; /* each group-version asked once */
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(all[j]->group, all[i]->group) &&
                   !strcmp(all[j]->version, all[i]->version);
        if (!seen && discover_gv(KH(kc), all[i]->group, all[i]->version, keys, &n, nres) < 0)
            goto out;
    }
    qsort(keys, n, sizeof(*keys), cmp_str);
    out = json_array();
    for (size_t i = 0; out && i < n; i++)
        if (i == 0 || strcmp(keys[i], keys[i - 1]) != 0)
            json_array_append_new(out, json_string(keys[i]));
out:
    free(keys);
    return out;
}

/* ---- the client ---- */

static void h_free(ty_kc *kc)
{
    kh_client *c = KH(kc);

    if (!c)
        return;
    for (size_t i = 0; i < c->npool; i++)
        curl_easy_cleanup(c->pool[i]);
    pthread_mutex_destroy(&c->mu);
    kh_memo_free(&c->memo);
    free(c->server);
    free(c->token);
    free(c->token_file);
    free(c->userpwd);
    free(c->user_agent);
    free(c->ca_file);
    free(c->cert_file);
    free(c->key_file);
    free(c->ca.data);
    free(c->cert.data);
    free(c->key.data);
    free(c->file_token);
    free(c);
}

const kc_ops kh_ops = {
    .kind = "http",
    .get = h_get,
    .list = h_list,
    .list_owned = h_list_owned,
    .list_owned_sel = h_list_owned_sel,
    .count = h_count,
    .resources = kh_resources,
    .create = h_create,
    .update = h_update,
    .mutate = h_mutate,
    .patch = h_patch,
    .del = h_delete,
    .bind = h_bind,
    .write_all = NULL, /* one at a time (kc.c) */
    .watch_open = kh_watch_open,
    .watch_next = kh_watch_next,
    .watch_cancel = kh_watch_cancel,
    .watch_close = kh_watch_close,
    .free = h_free,
};

/* A copy of s, NULL for NULL or ""; *bad set when memory ran out. */
static char *opt_dup(const char *s, bool *bad)
{
    char *d;

    if (!s || !*s)
        return NULL;
    if (!(d = strdup(s)))
        *bad = true;
    return d;
}

static void blob_dup(struct curl_blob *b, const void *data, size_t len, bool *bad)
{
    if (!data || !len)
        return;
    if (!(b->data = malloc(len))) {
        *bad = true;
        return;
    }
    memcpy(b->data, data, len);
    b->len = len;
    b->flags = CURL_BLOB_COPY;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

ty_kc *kc_http_new(const kc_http_opts *o, ty_error *err)
{
    const char *files[] = {o->token_file, o->ca_file, o->cert_file, o->key_file};
    kh_client *c;
    bool bad = false;

    if (!o->server || (strncmp(o->server, "http://", 7) && strncmp(o->server, "https://", 8))) {
        ty_seterr(err, TY_EBADREQUEST, "the server must be an http:// or https:// URL, not \"%s\"",
                  o->server ? o->server : "");
        return NULL;
    }
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (files[i] && *files[i] && access(files[i], R_OK) < 0) {
            ty_seterr(err, TY_EBADREQUEST, "cannot read %s: %m", files[i]);
            return NULL;
        }
    pthread_once(&curl_once, curl_init_once);
    if (!(c = calloc(1, sizeof(*c)))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    c->base.ops = &kh_ops;
    pthread_mutex_init(&c->mu, NULL);
    kh_memo_init(&c->memo);
    c->server = opt_dup(o->server, &bad);
    for (size_t n = c->server ? strlen(c->server) : 0; n > 0 && c->server[n - 1] == '/'; n--)
        c->server[n - 1] = '\0';
    c->token = opt_dup(o->token, &bad);
    c->token_file = opt_dup(o->token_file, &bad);
    if (o->username && *o->username) {
        ty_buf up = {0};
        bad = bad || ty_buf_printf(&up, "%s:%s", o->username, o->password ? o->password : "");
        c->userpwd = up.data;
    }
    c->user_agent = opt_dup(o->user_agent && *o->user_agent ? o->user_agent : "trainyard", &bad);
    c->ca_file = opt_dup(o->ca_file, &bad);
    c->cert_file = opt_dup(o->cert_file, &bad);
    c->key_file = opt_dup(o->key_file, &bad);
    blob_dup(&c->ca, o->ca_data, o->ca_len, &bad);
    blob_dup(&c->cert, o->cert_data, o->cert_len, &bad);
    blob_dup(&c->key, o->key_data, o->key_len, &bad);
    c->insecure = o->insecure_skip_verify;
    c->stall_s = o->stall_timeout_s > 0 ? o->stall_timeout_s : KC_HTTP_DEFAULT_STALL_S;
    c->max_body = o->max_response_bytes ? o->max_response_bytes : KC_HTTP_DEFAULT_MAX_RESPONSE;
    c->qps = o->qps ? o->qps : KC_HTTP_DEFAULT_QPS;
    c->burst = o->burst > 0 ? o->burst : KC_HTTP_DEFAULT_BURST;
    c->tokens = c->burst; /* full: refill_ns 0 is the limiter's first use */
    if (bad) {
        h_free(&c->base);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    return &c->base;
}
