/* resource_delete.c - delete, deletecollection and pods/binding. */
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "model/podcond.h"
#include "store/admit.h"
#include "server/decode.h"
#include "server/resource_internal.h"

typedef struct delete_args {
    store_delete_opts opts;
    char uid[80];
    char rv[40];
} delete_args;

/* DeleteOptions come in the body (kubectl, client libraries) or the query. */
static int parse_delete_opts(http_req *r, delete_args *d, ty_error *err)
{
    const char *policy = http_query(r, "propagationPolicy");
    json_t *body = NULL;

    memset(d, 0, sizeof(*d));
    if (r->body && r->body_len > 0) {
        json_error_t jerr;
        body = json_loadb(r->body, r->body_len, 0, &jerr);
        if (!json_is_object(body)) {
            json_decref(body);
            return ty_seterr(err, TY_EBADREQUEST, "invalid DeleteOptions: line %d, column %d: %s",
                             jerr.line, jerr.column, body ? "not an object" : jerr.text);
        }
        const char *bp = json_string_value(json_object_get(body, "propagationPolicy"));
        if (bp)
            policy = bp;
        if (json_is_true(json_object_get(body, "orphanDependents")))
            policy = "Orphan";
        json_t *pre = json_object_get(body, "preconditions");
        const char *u = json_string_value(json_object_get(pre, "uid"));
        const char *v = json_string_value(json_object_get(pre, "resourceVersion"));
        json_t *gp = json_object_get(body, "gracePeriodSeconds");
        if (json_is_integer(gp)) {
            d->opts.has_grace = true;
            d->opts.grace_seconds = json_integer_value(gp);
        }
        if (u)
            snprintf(d->uid, sizeof(d->uid), "%s", u);
        if (v)
            snprintf(d->rv, sizeof(d->rv), "%s", v);
    }
    if (http_query_bool(r, "orphanDependents"))
        policy = "Orphan";
    const char *gq = http_query(r, "gracePeriodSeconds");
    if (gq && *gq) {
        char *end;
        long long g = strtoll(gq, &end, 10);
        if (*end) {
            json_decref(body);
            return ty_seterr(err, TY_EBADREQUEST, "invalid gracePeriodSeconds %s", gq);
        }
        d->opts.has_grace = true;
        d->opts.grace_seconds = g;
    }
    if (!policy || !*policy)
        d->opts.propagation = STORE_PROPAGATE_DEFAULT;
    else if (strcmp(policy, "Background") == 0)
        d->opts.propagation = STORE_PROPAGATE_BACKGROUND;
    else if (strcmp(policy, "Foreground") == 0)
        d->opts.propagation = STORE_PROPAGATE_FOREGROUND;
    else if (strcmp(policy, "Orphan") == 0)
        d->opts.propagation = STORE_PROPAGATE_ORPHAN;
    else {
        json_decref(body);
        return ty_seterr(err, TY_EBADREQUEST,
                         "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: "
                         "Unsupported value: \"%s\": supported values: \"Foreground\", "
                         "\"Background\", \"Orphan\", \"nil\"",
                         policy);
    }
    d->opts.precondition_uid = d->uid;
    d->opts.precondition_rv = d->rv;
    json_decref(body);
    return 0;
}

/* The admission rules for deleting name (Volcano's for a Queue), given what
 * is stored now. */
static int check_delete(ty_store *st, const api_resource *res, const char *ns,
                        const char *name, ty_error *err)
{
    store_obj *o;
    int rc;

    /* NamespaceLifecycle: the namespaces the control plane itself needs */
    if (res == &api_namespace && name &&
        (!strcmp(name, "default") || !strcmp(name, "kube-system") ||
         !strcmp(name, "kube-public")))
        return ty_seterr(err, TY_EFORBIDDEN,
                         "namespaces \"%s\" is forbidden: this namespace may not be deleted",
                         name);
    if (res != &api_queue) /* the only kind with delete rules: no lookup for the rest */
        return 0;
    o = store_get(st, api_store_key(res), ns ? ns : "", name, NULL);
    rc = store_admit(st, API_ADMIT_DELETE, res, o ? (json_t *)store_obj_json(o) : NULL, name, err);
    store_obj_unref(o);
    return rc;
}

enum MHD_Result resource_delete(http_req *r, const res_path *p)
{
    ty_error err;
    delete_args d;
    bool deleted = false;
    store_obj *o;
    enum MHD_Result ret;

    ty_error_init(&err);
    if (parse_delete_opts(r, &d, &err) < 0 ||
        check_delete(server_store(r->srv), p->res, p->ns, p->name, &err) < 0)
        goto error;
    o = store_delete(server_store(r->srv), api_store_key(p->res), p->ns ? p->ns : "", p->name,
                     &d.opts, &deleted, &err);
    if (!o)
        goto error;
    if (deleted) {
        const char *uid =
            json_string_value(json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                              "uid"));
        json_t *st = status_success(p->res, p->name, uid);
        store_obj_unref(o);
        return http_send_json(r, 200, st);
    }
    /* Still there, waiting for finalizers: answer with its current state. */
    size_t len;
    const char *text = store_obj_text(o, &len);
    ret = http_send_text(r, 202, "application/json", text, len);
    store_obj_unref(o);
    return ret;
error:
    resource_not_found(&err, p->res, p->name);
    ret = http_send_error(r, &err, p->res, p->name);
    ty_error_clear(&err);
    return ret;
}

enum MHD_Result resource_delete_collection(http_req *r, const res_path *p)
{
    ty_error err;
    delete_args d;
    resource_filter rf = {0};
    store_list l = {0};
    store_list_opts opts = {.ns = p->ns};
    ty_store *st = server_store(r->srv);
    json_t *items = json_array();
    char av[128];
    enum MHD_Result ret;

    ty_error_init(&err);
    if (parse_delete_opts(r, &d, &err) < 0 || resource_filter_init(r, p->res, &rf, &err) < 0)
        goto error;
    opts.filter = rf.fn;
    opts.filter_arg = rf.arg;
    if (store_list_objects(st, api_store_key(p->res), &opts, &l, &err) < 0)
        goto error;
    /* a Queue that may not go fails the whole request, before any goes */
    for (size_t i = 0; i < l.n; i++) {
        const char *name = json_string_value(json_object_get(
            json_object_get(store_obj_json(l.items[i]), "metadata"), "name"));
        if (store_admit(st, API_ADMIT_DELETE, p->res, (json_t *)store_obj_json(l.items[i]),
                         name ? name : "", &err) < 0) {
            store_list_free(&l);
            goto error;
        }
    }
    for (size_t i = 0; i < l.n; i++) {
        const json_t *meta = json_object_get(store_obj_json(l.items[i]), "metadata");
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        bool deleted;
        ty_error one;
        ty_error_init(&one);
        store_obj *o = store_delete(st, api_store_key(p->res), ns ? ns : "", name, &d.opts,
                                    &deleted, &one);
        if (o) {
            json_array_append_new(items, store_obj_json_copy(o));
            store_obj_unref(o);
        }
        /* An object that went away meanwhile is fine: it is deleted either way. */
        ty_error_clear(&one);
    }
    store_list_free(&l);
    resource_filter_free(&rf);
    api_version_string(p->res, av, sizeof(av));
    return http_send_json(r, 200,
                          json_pack("{s:s, s:s, s:{}, s:o}", "kind", p->res->list_kind,
                                    "apiVersion", av, "metadata", "items", items));
error:
    resource_filter_free(&rf);
    json_decref(items);
    ret = http_send_error(r, &err, p->res, NULL);
    ty_error_clear(&err);
    return ret;
}

/* ---- pods/binding ---- */

typedef struct bind_args {
    const char *node, *uid;
} bind_args;

static int bind_fn(json_t *pod, void *arg, ty_error *err)
{
    const bind_args *b = arg;

    return podcond_bind(pod, b->node, b->uid, err);
}

enum MHD_Result resource_bind(http_req *r, const res_path *p)
{
    ty_error err;
    json_t *body;
    bind_args b;
    store_obj *o;
    enum MHD_Result ret;

    ty_error_init(&err);
    body = decode_body(r, FV_IGNORE, &err);
    if (!body)
        goto error;
    b.node = json_string_value(json_object_get(json_object_get(body, "target"), "name"));
    /* kube-apiserver takes the Binding's own uid as a precondition on the pod's */
    b.uid = json_string_value(json_object_get(json_object_get(body, "metadata"), "uid"));
    if (!b.node || !*b.node) {
        ty_seterr(&err, TY_EINVALID, "Binding \"%s\" is invalid: target.name: Required value",
                  p->name);
        ty_error_add_cause(&err, "FieldValueRequired", "target.name", "Required value");
        json_decref(body);
        goto error;
    }
    o = store_mutate(server_store(r->srv), api_store_key(p->res), p->ns, p->name, bind_fn, &b,
                     &err);
    json_decref(body);
    if (!o)
        goto error;
    store_obj_unref(o);
    return http_send_json(r, 201, status_success(p->res, p->name, NULL));
error:
    resource_not_found(&err, p->res, p->name);
    ret = http_send_error(r, &err, p->res, p->name);
    ty_error_clear(&err);
    return ret;
}
