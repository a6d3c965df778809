/* resource_write.c - create, update (PUT), patch, delete, deletecollection and
 * pods/binding.
 *
 * Every write to an existing object runs inside store_mutate, so the read of
 * the current object, the patch, defaulting, validation and the
 * resourceVersion check happen atomically, and a failure writes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "api/userinfo.h"
#include "base/jsonin.h"
#include "model/patch.h"
#include "model/yaml.h"
#include "server/authz.h"
#include "server/creator.h"
#include "store/admit.h"
#include "server/progress.h"
#include "server/decode.h"
#include "server/resource_internal.h"

/* obj.metadata[key] as a string */
static const char *md_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

static enum MHD_Result fail(http_req *r, ty_error *err, const api_resource *res,
                            const char *name)
{
    enum MHD_Result ret;
    decode_invalid_message(err, res, name);
    ret = http_send_error(r, err, res, name);
    ty_error_clear(err);
    return ret;
}

static enum MHD_Result send_obj(http_req *r, unsigned status, store_obj *o)
{
    size_t len;
    const char *text = store_obj_text(o, &len);
    enum MHD_Result ret = http_send_text(r, status, "application/json", text, len);
    store_obj_unref(o);
    return ret;
}

static bool dry_run(http_req *r)
{
    const char *d = http_query(r, "dryRun");
    return d && strcmp(d, "All") == 0;
}

/* Checks and fills apiVersion, kind, metadata.namespace of a body. */
static int check_identity(const res_path *p, json_t *obj, ty_error *err)
{
    char av[128];
    const char *bav = json_string_value(json_object_get(obj, "apiVersion"));
    const char *bkind = json_string_value(json_object_get(obj, "kind"));
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns;

    if (!json_is_object(obj))
        return ty_seterr(err, TY_EBADREQUEST, "the request body must be a JSON object");
    api_version_string(p->res, av, sizeof(av));
    if (bav && strcmp(bav, av) != 0)
        return ty_seterr(err, TY_EBADREQUEST,
                         "the API version in the data (%s) does not match the expected API "
                         "version (%s)",
                         bav, av);
    if (bkind && strcmp(bkind, p->res->kind) != 0)
        return ty_seterr(err, TY_EBADREQUEST,
                         "the kind in the data (%s) does not match the expected kind (%s)",
                         bkind, p->res->kind);
    json_object_set_new(obj, "apiVersion", json_string(av));
    json_object_set_new(obj, "kind", json_string(p->res->kind));
    if (!meta) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    if (!json_is_object(meta))
        return ty_seterr(err, TY_EBADREQUEST, "metadata must be an object");
    ns = json_string_value(json_object_get(meta, "namespace"));
    if (p->res->namespaced) {
        if (ns && *ns && strcmp(ns, p->ns) != 0)
            return ty_seterr(err, TY_EBADREQUEST,
                             "the namespace of the provided object does not match the "
                             "namespace sent on the request");
        json_object_set_new(meta, "namespace", json_string(p->ns));
    } else {
        json_object_del(meta, "namespace");
    }
    return 0;
}

/* What the store could not read back is refused here, whatever the body's
 * format (a YAML "a\0b", a protobuf string, a JSON patch nesting a copy
 * deeper and deeper): stored, it failed the next open of the store and the
 * control plane with it. kube-apiserver stores such strings; see
 * docs/compatibility.md. */
static int check_loadable(const api_resource *res, const json_t *obj, ty_error *err)
{
    char path[256];
    const char *why;

    if (ty_json_check_loadable(obj, path, sizeof(path), &why) == 0)
        return 0;
    ty_seterr(err, TY_EBADREQUEST, "%s in version \"%s\" cannot be handled as a %s: %s%s%s",
              res->kind, res->version, res->kind, path, *path ? ": " : "", why);
    ty_error_add_cause(err, "FieldValueInvalid", path, "%s", why);
    return -1;
}

/* A built-in kind's mistyped fields are decoding's errors (400, before the
 * checks of what was decoded: a kind given as a number is refused, not
 * overwritten); a custom resource's are checked by api_prepare, after its
 * defaults (422). */
static int check_decoding(const api_resource *res, const json_t *obj, ty_error *err)
{
    return res->builtin ? api_check_types(res, obj, err) : 0;
}

/* A JobRecord (trainyard.io/v1) is what the trainer controller saw of a
 * deleted job: the controller writes it (in process, or as the operator's
 * service account in a cluster), users read and delete it. A record a
 * tenant could write would say what never happened; system:masters may
 * (restoring a backup). */
static int record_admit_write(const ty_user *u, const api_resource *res, const json_t *obj,
                              ty_error *err)
{
    const char *name = md_str(obj, "name");

    if (res != &api_jobrecord || !u || userinfo_in_group(u, USERINFO_MASTERS))
        return 0;
    return ty_seterr(err, TY_EFORBIDDEN,
                     "jobrecords.trainyard.io%s%s%s is forbidden: a JobRecord is written by the "
                     "trainer controller; it can be read and deleted",
                     name ? " \"" : "", name ? name : "", name ? "\"" : "");
}

/* The name a failed create is reported under: the name, else generateName. */
static void create_name(const json_t *obj, char *buf, size_t len)
{
    const char *name = md_str(obj, "name");
    if (!name || !*name)
        name = md_str(obj, "generateName");
    snprintf(buf, len, "%s", name ? name : "");
}

/* MPIJob v1 and v2beta1 are one resource in two schemas (api_other_version):
 * a name is one object's across both, as in a cluster's single storage. */
static bool taken_in_other_version(http_req *r, const res_path *p, const char *name)
{
    const api_resource *other = api_other_version(p->res);
    store_obj *o;

    if (!other || !name || !*name)
        return false;
    o = store_get(server_store(r->srv), api_store_key(other), p->ns ? p->ns : "", name, NULL);
    if (!o)
        return false;
    store_obj_unref(o);
    return true;
}

/* An admission rule's warning (Pod Security's warn level) as a Warning
 * header on the answer. */
static void admit_warning(void *req, const char *text)
{
    http_add_warning(req, text);
}

static enum MHD_Result create_obj(http_req *r, const res_path *p, json_t *obj,
                                  field_validation fv)
{
    ty_error err;
    store_obj *o;
    char name[256];

    ty_error_init(&err);
    if (check_loadable(p->res, obj, &err) < 0 || check_decoding(p->res, obj, &err) < 0 ||
        check_identity(p, obj, &err) < 0 || decode_check_fields(r, p->res, obj, fv, &err) < 0)
        goto error;
    if (p->res->has_status)
        json_object_del(obj, "status"); /* status is written through /status only */
    creator_stamp(p->res, obj, r->user);
    creator_guard_state(p->res, obj, NULL, r->user);
    if (api_prepare(p->res, obj, NULL, &err) < 0 ||
        store_admit_namespace(server_store(r->srv), p->res, p->ns, md_str(obj, "name"), &err) < 0 ||
        authz_admit_write(server_authz(r->srv), r->user, p->res, obj, &err) < 0 ||
        progress_admit_secret(r->user, p->res, obj, NULL, &err) < 0 ||
        record_admit_write(r->user, p->res, obj, &err) < 0 ||
        store_admit_hooked(server_store(r->srv), API_ADMIT_CREATE, p->res, obj, NULL,
                           admit_warning, NULL, r, &err) < 0)
        goto error;
    create_name(obj, name, sizeof(name));
    if (taken_in_other_version(r, p, md_str(obj, "name"))) {
        json_decref(obj);
        o = NULL;
        ty_seterr(&err, TY_EEXISTS, "exists");
    } else if (dry_run(r)) {
        /* The one check the store makes on a create: the name is free. */
        o = md_str(obj, "name") ? store_get(server_store(r->srv), api_store_key(p->res),
                                            p->ns ? p->ns : "", name, NULL)
                                : NULL;
        if (!o)
            return http_send_json(r, 201, obj);
        store_obj_unref(o);
        json_decref(obj);
        o = NULL;
        ty_seterr(&err, TY_EEXISTS, "exists");
    } else {
        /* The store takes the tree over: no copy on the hot path. */
        o = store_create_take(server_store(r->srv), api_store_key(p->res), p->ns ? p->ns : "",
                              obj, &err);
    }
    if (!o) {
        if (err.code == TY_EEXISTS) {
            char gr[160];
            api_group_resource(p->res, gr, sizeof(gr));
            ty_seterr(&err, TY_EEXISTS, "%s \"%s\" already exists", gr, name);
        }
        return fail(r, &err, p->res, name);
    }
    return send_obj(r, 201, o);
error:
    create_name(obj, name, sizeof(name));
    json_decref(obj);
    return fail(r, &err, p->res, name);
}

enum MHD_Result resource_create(http_req *r, const res_path *p)
{
    ty_error err;
    field_validation fv;
    json_t *obj;

    ty_error_init(&err);
    if (p->sub || decode_field_validation(r, &fv, &err) < 0)
        goto error;
    obj = decode_body(r, fv, &err);
    if (!obj)
        goto error;
    return create_obj(r, p, obj, fv);
error:
    if (err.code == TY_OK)
        ty_seterr(&err, TY_EMETHOD, "the server does not allow this method on the requested "
                                    "resource");
    return fail(r, &err, p->res, NULL);
}

/* ---- writes to an existing object ---- */

typedef enum { W_PUT, W_MERGE, W_JSONPATCH, W_STRATEGIC, W_APPLY } write_mode;

typedef struct write_ctx {
    http_req *r;
    const res_path *p;
    write_mode mode;
    const json_t *body; /* new object (PUT, APPLY) or patch document */
    field_validation fv;
} write_ctx;

static json_t *compute_new(write_ctx *w, const json_t *cur, ty_error *err)
{
    switch (w->mode) {
    case W_PUT: {
        json_t *n = json_deep_copy(w->body);
        return n;
    }
    case W_MERGE:
    case W_APPLY:
        /* Server-side apply is served as create-or-merge: the applied
         * configuration is merged over the live object (lists replaced). */
        return patch_merge(cur, w->body);
    case W_JSONPATCH:
        return patch_json(cur, w->body, err);
    case W_STRATEGIC: {
        /* The merge keys are the ones the kind's schema declares. */
        patch_schema ps = api_patch_schema(w->p->res);
        return patch_strategic(cur, w->body, &ps, err);
    }
    }
    return NULL;
}

/* The metadata a pods/status write may change, checked as a pod's are
 * (the causes in err, kube-apiserver's 422). */
static int pod_status_meta_check(const json_t *meta, ty_error *err)
{
    const json_t *fins = json_object_get(meta, "finalizers"), *f;
    char field[64];
    size_t i;
    int n = meta_check_labels("metadata.labels", json_object_get(meta, "labels"), err) +
            meta_check_annotations("metadata.annotations",
                                   json_object_get(meta, "annotations"), err);

    json_array_foreach(fins, i, f) {
        snprintf(field, sizeof(field), "metadata.finalizers[%zu]", i);
        n += meta_check_qualified_name(field, json_string_value(f) ?: "", err);
    }
    if (!n)
        return 0;
    err->code = TY_EINVALID;
    api_format_invalid(&api_pod, json_string_value(json_object_get(meta, "name")), err,
                       err->text, sizeof(err->text));
    return -1;
}

static int write_fn(json_t *cur, void *arg, ty_error *err)
{
    write_ctx *w = arg;
    const api_resource *res = w->p->res;
    json_t *old = json_deep_copy(cur);
    json_t *nw = compute_new(w, cur, err);
    int rc = -1;

    if (!nw || check_loadable(res, nw, err) < 0 || check_decoding(res, nw, err) < 0)
        goto out;
    if (w->mode != W_PUT) {
        /* A patch cannot rename or move an object. */
        const char *nn = md_str(nw, "name");
        if (!json_is_object(nw) || (nn && strcmp(nn, w->p->name) != 0)) {
            ty_seterr(err, TY_EBADREQUEST, "the name of the object (%s) does not match the "
                                           "name on the URL (%s)",
                      nn ? nn : "", w->p->name);
            goto out;
        }
    }
    if (check_identity(w->p, nw, err) < 0)
        goto out;
    if (w->p->sub) {
        /* /status: take status only; everything else stays as stored, but
         * for a pod's labels, annotations and finalizers, which
         * kube-apiserver's pods/status takes too (client/kc.h, KC_STATUS:
         * the embedded client does the same). */
        json_t *result = json_deep_copy(old);
        json_t *st = json_object_get(nw, "status");
        const char *rv = md_str(nw, "resourceVersion");
        if (st)
            json_object_set(result, "status", st);
        else
            json_object_del(result, "status");
        if (res == &api_pod) {
            static const char *const taken[] = {"labels", "annotations", "finalizers"};
            json_t *rm = json_object_get(result, "metadata");
            const json_t *nm = json_object_get(nw, "metadata");
            if (pod_status_meta_check(nm, err) < 0) {
                json_decref(result);
                goto out;
            }
            for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
                json_t *v = json_object_get(nm, taken[i]);
                if (v)
                    json_object_set(rm, taken[i], v);
                else
                    json_object_del(rm, taken[i]);
            }
        }
        json_object_set_new(json_object_get(result, "metadata"), "resourceVersion",
                            json_string(rv ? rv : ""));
        json_decref(nw);
        nw = result;
    } else {
        if (decode_check_fields(w->r, res, nw, w->fv, err) < 0)
            goto out;
        if (res->has_status) {
            json_t *st = json_object_get(old, "status");
            if (st)
                json_object_set(nw, "status", st);
            else
                json_object_del(nw, "status");
        }
        creator_keep(res, nw, old);
        creator_guard_state(res, nw, old, w->r->user);
        if (api_prepare(res, nw, old, err) < 0 ||
            authz_admit_write(server_authz(w->r->srv), w->r->user, res, nw, err) < 0 ||
            progress_admit_secret(w->r->user, res, nw, old, err) < 0 ||
            record_admit_write(w->r->user, res, nw, err) < 0)
            goto out;
    }
    json_object_clear(cur);
    json_object_update(cur, nw);
    rc = 0;
out:
    json_decref(nw);
    json_decref(old);
    return rc;
}

static enum MHD_Result run_write(http_req *r, const res_path *p, write_ctx *w)
{
    ty_error err;
    store_obj *o;
    ty_store *st = server_store(r->srv);
    const char *key = api_store_key(p->res);
    const char *ns = p->ns ? p->ns : "";

    ty_error_init(&err);
    if (dry_run(r) || ((p->res == &api_queue || p->res == &api_namespace) && !p->sub)) {
        /* a Queue's new parent is checked against the others, a Namespace's
         * new Pod Security level against its pods (warnings) (which the
         * write function, under the store's writer lock, must not read) */
        json_t *cur;
        o = store_get(st, key, ns, p->name, &err);
        if (!o)
            goto error;
        cur = store_obj_json_copy(o);
        /* A dry run answers what the write would: the store's own checks
         * (a stale resourceVersion is a 409) run on the result too. */
        if (write_fn(cur, w, &err) < 0 ||
            (dry_run(r) && store_dry_run_update(key, store_obj_json(o), cur, &err) < 0) ||
            store_admit_hooked(st, API_ADMIT_UPDATE, p->res, cur, p->name, admit_warning, NULL,
                               r, &err) < 0) {
            store_obj_unref(o);
            json_decref(cur);
            goto error;
        }
        store_obj_unref(o);
        if (dry_run(r))
            return http_send_json(r, 200, cur);
        json_decref(cur);
    }
    o = store_mutate(st, key, ns, p->name, write_fn, w, &err);
    if (!o)
        goto error;
    return send_obj(r, 200, o);
error:
    resource_not_found(&err, p->res, p->name);
    return fail(r, &err, p->res, p->name);
}

enum MHD_Result resource_update(http_req *r, const res_path *p)
{
    ty_error err;
    write_ctx w = {.r = r, .p = p, .mode = W_PUT};
    json_t *body = NULL;
    enum MHD_Result ret;

    ty_error_init(&err);
    if (p->sub && strcmp(p->sub, "status") != 0) {
        ty_seterr(&err, TY_EMETHOD, "the server does not allow this method on the requested "
                                    "resource");
        return fail(r, &err, p->res, p->name);
    }
    if (decode_field_validation(r, &w.fv, &err) < 0 || !(body = decode_body(r, w.fv, &err)))
        return fail(r, &err, p->res, p->name);
    const char *bn = json_is_object(body) ? md_str(body, "name") : NULL;
    if (!bn || strcmp(bn, p->name) != 0) {
        ty_seterr(&err, TY_EBADREQUEST,
                  "the name of the object (%s) does not match the name on the URL (%s)",
                  bn ? bn : "", p->name);
        json_decref(body);
        return fail(r, &err, p->res, p->name);
    }
    w.body = body;
    ret = run_write(r, p, &w);
    json_decref(body);
    return ret;
}

static int patch_mode(http_req *r, const api_resource *res, write_mode *mode, ty_error *err)
{
    const char *ct = r->content_type ? r->content_type : "";
    if (strncmp(ct, "application/merge-patch+json", 28) == 0)
        *mode = W_MERGE;
    else if (strncmp(ct, "application/json-patch+json", 27) == 0)
        *mode = W_JSONPATCH;
    else if (strncmp(ct, "application/strategic-merge-patch+json", 38) == 0 && res->builtin)
        *mode = W_STRATEGIC;
    else if (strncmp(ct, "application/apply-patch+yaml", 28) == 0 ||
             strncmp(ct, "application/apply-patch+json", 28) == 0)
        *mode = W_APPLY;
    else
        return ty_seterr(err, TY_EMEDIATYPE,
                         "the body of the request was in an unknown format - accepted media "
                         "types include: application/json-patch+json, "
                         "application/merge-patch+json, application/apply-patch+yaml%s",
                         res->builtin ? ", application/strategic-merge-patch+json" : "");
    return 0;
}

enum MHD_Result resource_patch(http_req *r, const res_path *p)
{
    ty_error err;
    write_ctx w = {.r = r, .p = p};
    json_t *body = NULL;
    enum MHD_Result ret;

    ty_error_init(&err);
    if ((p->sub && strcmp(p->sub, "status") != 0) || patch_mode(r, p->res, &w.mode, &err) < 0 ||
        decode_field_validation(r, &w.fv, &err) < 0 || !(body = decode_body(r, w.fv, &err))) {
        if (err.code == TY_OK)
            ty_seterr(&err, TY_EMETHOD, "the server does not allow this method on the "
                                        "requested resource");
        return fail(r, &err, p->res, p->name);
    }
    if ((w.mode == W_JSONPATCH && !json_is_array(body)) ||
        (w.mode != W_JSONPATCH && !json_is_object(body))) {
        ty_seterr(&err, TY_EBADREQUEST, "the patch document must be a JSON %s",
                  w.mode == W_JSONPATCH ? "array of operations" : "object");
        json_decref(body);
        return fail(r, &err, p->res, p->name);
    }
    if (w.mode == W_APPLY) {
        const char *fm = http_query(r, "fieldManager");
        if (!fm || !*fm) {
            ty_seterr(&err, TY_EINVALID, "PatchOptions.meta.k8s.io \"\" is invalid: "
                                         "fieldManager: Required value: is required for apply "
                                         "patch");
            json_decref(body);
            return fail(r, &err, NULL, NULL);
        }
        store_obj *existing = p->sub ? NULL
                                     : store_get(server_store(r->srv), api_store_key(p->res),
                                                 p->ns ? p->ns : "", p->name, NULL);
        store_obj_unref(existing);
        if (!p->sub && !existing) {
            json_t *meta = json_object_get(body, "metadata");
            if (!json_is_object(meta) || !md_str(body, "name")) {
                ty_seterr(&err, TY_EBADREQUEST, "metadata.name is required");
                json_decref(body);
                return fail(r, &err, p->res, p->name);
            }
            return create_obj(r, p, body, w.fv);
        }
    }
    w.body = body;
    ret = run_write(r, p, &w);
    json_decref(body);
    return ret;
}
