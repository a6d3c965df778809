/* kit.c - what a controller owns: pods, Services, ConfigMaps and Secrets
 * built, created (one by one or in a batch), listed through the owner index
 * and deleted, each with its Event on the owner (see kit.h). The Kubeflow
 * engine (controller/jobs) and the Volcano controllers (controller/volcano)
 * both build on these. */
#include "controller/kit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/log.h"
#include "client/events.h"

/* ---- generic ---- */

json_t *kit_owner_ref(const json_t *owner)
{
    const json_t *meta = json_object_get(owner, "metadata");

    /* Copies, not the owner's own strings: the job a pass reads is a brief
     * copy (treearena.h), and what it creates lives on. */
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion",
                     json_string_value(json_object_get(owner, "apiVersion")), "kind",
                     json_string_value(json_object_get(owner, "kind")), "name",
                     json_string_value(json_object_get(meta, "name")), "uid",
                     json_string_value(json_object_get(meta, "uid")), "controller", 1,
                     "blockOwnerDeletion", 1);
}

static json_t *copy_or_new(const json_t *v)
{
    return json_is_object(v) ? json_deep_copy(v) : json_object();
}

/* env's entries appended to container's env; shared (env is the pod's own,
 * made for it and dropped after) when only this container takes them, else
 * each container gets copies, so that no two hold one entry (defaulting
 * changes entries in place). */
static void append_env(json_t *container, const json_t *env, bool share)
{
    json_t *list = json_object_get(container, "env"), *e;
    size_t i;

    if (!json_array_size(env))
        return;
    if (!json_is_array(list)) {
        list = json_array();
        json_object_set_new(container, "env", list);
    }
    json_array_foreach(env, i, e)
        json_array_append_new(list, share ? json_incref(e) : json_deep_copy(e));
}

/* Whether a container is one the env goes to. */
static bool takes_env(const kit_pod_params *p, const json_t *ct)
{
    const char *name = json_string_value(json_object_get(ct, "name"));

    return !p->env_container || (name && strcmp(name, p->env_container) == 0);
}

json_t *kit_pod_new(const kit_pod_params *p)
{
    const json_t *tmeta = json_object_get(p->template, "metadata");
    const json_t *owner_meta = json_object_get(p->owner, "metadata");
    json_t *labels = copy_or_new(json_object_get(tmeta, "labels"));
    json_t *spec = copy_or_new(json_object_get(p->template, "spec"));
    json_t *meta, *ct;
    size_t i, takers = 0;

    json_object_update(labels, (json_t *)p->labels);
    meta = json_pack("{s:s, s:O, s:o, s:[o]}", "name", p->name, "namespace",
                     json_object_get(owner_meta, "namespace"), "labels", labels,
                     "ownerReferences", kit_owner_ref(p->owner));
    if (json_is_object(json_object_get(tmeta, "annotations")))
        json_object_set_new(meta, "annotations",
                            json_deep_copy(json_object_get(tmeta, "annotations")));
    json_object_set_new(spec, "restartPolicy", json_string(p->restart_policy));
    json_array_foreach(json_object_get(spec, "containers"), i, ct)
        takers += takes_env(p, ct);
    json_array_foreach(json_object_get(spec, "containers"), i, ct)
        if (takes_env(p, ct))
            append_env(ct, p->env, takers == 1);
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta,
                     "spec", spec);
}

json_t *kit_service_new(const json_t *owner, const char *name, const json_t *labels,
                         const json_t *selector, const json_t *container, bool headless)
{
    json_t *ports = json_array(), *p, *svc;
    size_t i;

    json_array_foreach(json_object_get(container, "ports"), i, p) {
        json_t *pname = json_object_get(p, "name");
        if (json_is_string(pname) && json_is_integer(json_object_get(p, "containerPort")))
            json_array_append_new(ports, json_pack("{s:O, s:O}", "name", pname, "port",
                                                   json_object_get(p, "containerPort")));
    }
    svc = json_pack("{s:s, s:s, s:{s:s, s:O, s:O, s:[o]}, s:{s:O, s:o}}", "apiVersion", "v1",
                    "kind", "Service", "metadata", "name", name, "namespace",
                    json_object_get(json_object_get(owner, "metadata"), "namespace"), "labels",
                    labels, "ownerReferences", kit_owner_ref(owner), "spec", "selector",
                    selector, "ports", ports);
    if (headless)
        json_object_set_new(json_object_get(svc, "spec"), "clusterIP", json_string("None"));
    else
        json_object_set_new(json_object_get(svc, "spec"), "type", json_string("ClusterIP"));
    return svc;
}

/* The words of the events about what a controller makes: "pod", "service",
 * "configmap", "secret" and their reasons (SuccessfulCreatePod,
 * FailedCreateSecret, ...). A Secret (the ssh plugin's) was reported as a
 * configmap. */
static const char *created_noun(const api_resource *res)
{
    return res == &api_pod       ? "pod"
           : res == &api_service ? "service"
           : res == &api_secret  ? "secret"
                                 : "configmap";
}

static const char *created_kind(const api_resource *res)
{
    return res == &api_pod       ? "Pod"
           : res == &api_service ? "Service"
           : res == &api_secret  ? "Secret"
                                 : "ConfigMap";
}

static void created_reason(const api_resource *res, bool ok, char *buf, size_t len)
{
    snprintf(buf, len, "%sCreate%s", ok ? "Successful" : "Failed", created_kind(res));
}

/* api_prepare, reporting a manifest that does not validate on job. */
static int prepare(ty_kc *s, const api_resource *res, json_t *obj, const json_t *job,
                   const char *component, ty_error *err)
{
    char reason[64];

    if (api_prepare(res, obj, NULL, err) == 0)
        return 0;
    created_reason(res, false, reason, sizeof(reason));
    ty_event(s, job, "Warning", reason, component, "Error creating: %s", err->text);
    return -1;
}

int kit_create(ty_kc *s, const api_resource *res, json_t *obj, const json_t *job,
                const char *component, ty_error *err)
{
    const json_t *meta = json_object_get(obj, "metadata");
    char name[256], ns[256], reason[64];
    ty_obj *o;

    snprintf(name, sizeof(name), "%s", json_string_value(json_object_get(meta, "name")));
    snprintf(ns, sizeof(ns), "%s", json_string_value(json_object_get(meta, "namespace")));
    if (prepare(s, res, obj, job, component, err) < 0) {
        json_decref(obj);
        return -1;
    }
    o = kc_create(s, api_store_key(res), ns, obj, err);
    if (!o) {
        if (err->code == TY_EEXISTS) {
            ty_error_clear(err);
            return 0;
        }
        ty_event(s, job, "Warning", "FailedCreate", component, "Error creating %s %s: %s",
                 res->kind, name, err->text);
        return -1;
    }
    ty_obj_unref(o);
    created_reason(res, true, reason, sizeof(reason));
    ty_event(s, job, "Normal", reason, component, "Created %s: %s", created_noun(res), name);
    return 0;
}

int kit_batch_add(kit_batch *b, const api_resource *res, json_t *obj, const json_t *job,
                   const char *component, ty_kc *s, ty_error *err)
{
    const char *ns;

    if (!obj)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (prepare(s, res, obj, job, component, err) < 0) {
        json_decref(obj);
        return -1;
    }
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        kc_op *ops = realloc(b->ops, cap * sizeof(*ops));
        const api_resource **rs = ops ? realloc(b->res, cap * sizeof(*rs)) : NULL;
        if (ops)
            b->ops = ops;
        if (!rs) {
            json_decref(obj);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
        b->res = rs;
        b->cap = cap;
    }
    /* The namespace is borrowed from the object, which lives until written. */
    ns = json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
    b->res[b->n] = res;
    b->ops[b->n++] = kc_op_create(api_store_key(res), ns, obj);
    return 0;
}

size_t kit_batch_commit(kit_batch *b, ty_kc *s, const json_t *job, const char *component)
{
    kc_op *evs;
    size_t failed = 0, nev = 0;

    if (!b->n)
        return 0;
    /* Names are read from the results; an op that failed still holds its
     * own name in its error text only, so keep them first. */
    char (*names)[256] = malloc(b->n * sizeof(*names));
    for (size_t i = 0; names && i < b->n; i++)
        snprintf(names[i], sizeof(names[i]), "%s",
                 json_string_value(json_object_get(json_object_get(b->ops[i].obj, "metadata"),
                                                   "name")) ?: "");
    kc_write_all(s, b->ops, b->n);
    evs = calloc(b->n, sizeof(*evs));
    for (size_t i = 0; i < b->n; i++) {
        kc_op *op = &b->ops[i];
        const char *name = names ? names[i] : "?";
        bool ok = op->result != NULL;
        if (!ok && op->err.code == TY_EEXISTS) {
            kc_op_clear(op);
            continue;
        }
        failed += !ok;
        char reason[64];
        created_reason(b->res[i], true, reason, sizeof(reason));
        if (evs && ok)
            nev += ty_event_op(&evs[nev], job, "Normal", reason, component, "Created %s: %s",
                               created_noun(b->res[i]), name);
        else if (evs)
            nev += ty_event_op(&evs[nev], job, "Warning", "FailedCreate", component,
                               "Error creating %s %s: %s", b->res[i]->kind, name,
                               op->err.text);
        kc_op_clear(op);
    }
    if (evs)
        kc_write_all(s, evs, nev);
    free(evs);
    free(names);
    b->n = 0;
    return failed;
}

void kit_batch_free(kit_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        kc_op_clear(&b->ops[i]);
    free(b->ops);
    free(b->res);
    *b = (kit_batch){0};
}

int kit_delete(ty_kc *s, const char *resource, const json_t *obj, const json_t *job,
                const char *component)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    kc_delete_opts opts = {.propagation = KC_PROPAGATE_BACKGROUND,
                              .precondition_uid =
                                  json_string_value(json_object_get(meta, "uid"))};
    ty_error err;
    ty_obj *o;
    bool deleted;

    if (kit_is_terminating(obj))
        return 0;
    ty_error_init(&err);
    o = kc_delete(s, resource, json_string_value(json_object_get(meta, "namespace")), name,
                     &opts, &deleted, &err);
    if (!o) {
        int rc = err.code == TY_ENOTFOUND || err.code == TY_ECONFLICT ? 0 : -1;
        if (rc)
            ty_warn("%s: delete %s %s: %s", component ? component : "controller", resource, name,
                    err.text);
        ty_error_clear(&err);
        return rc;
    }
    ty_obj_unref(o);
    if (job)
        ty_event(s, job, "Normal",
                 strcmp(resource, "pods") == 0 ? "SuccessfulDeletePod" : "SuccessfulDeleteService",
                 component, "Deleted %s: %s", strcmp(resource, "pods") == 0 ? "pod" : "service",
                 name);
    return 0;
}

/* ---- what a job controls ---- */

static void keep(json_t *to, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);

    if (v)
        json_object_set(to, key, v);
}

/* The view of a pod or a Service the job engines read (ty_obj_view; the
 * Kubeflow engine and the Volcano Job controller share it): its names, uid,
 * labels, annotations, creation time and deletion mark, and of a pod
 * its phase, reason and, per container, its name, restart count and states
 * (exit codes, finish times). A pass reads every pod of its job, and a pod's
 * tree is mostly the spec it never looks at; whatever either engine comes
 * to read of these objects must be kept here (a pass parses the views of all
 * of its job's pods and Services: each member kept costs every pass). */
static json_t *owned_view(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const json_t *status = json_object_get(obj, "status");
    const json_t *list = json_object_get(status, "containerStatuses");
    json_t *m = json_object(), *st = json_object(), *out;
    size_t i;
    json_t *cs;

    keep(m, meta, "name");
    keep(m, meta, "namespace");
    keep(m, meta, "uid");
    keep(m, meta, "labels");
    keep(m, meta, "annotations");
    keep(m, meta, "creationTimestamp");
    keep(m, meta, "deletionTimestamp");
    keep(st, status, "phase");
    keep(st, status, "reason");
    if (json_is_array(list)) {
        json_t *css = json_array();
        json_array_foreach(list, i, cs) {
            json_t *one = json_object();
            keep(one, cs, "name");
            keep(one, cs, "restartCount");
            keep(one, cs, "state");
            keep(one, cs, "lastState");
            json_array_append_new(css, one);
        }
        json_object_set_new(st, "containerStatuses", css);
    }
    out = json_pack("{s:o}", "metadata", m);
    if (json_object_size(st))
        json_object_set_new(out, "status", st);
    else
        json_decref(st);
    return out;
}

/* What owned_view reads: a pod whose tree was dropped has these parsed
 * alone (not its owner references, finalizers, spec or conditions). */
const ty_view kit_owned = {
    "jobs-owned", owned_view,
    (const char *const[]){"metadata.name", "metadata.namespace", "metadata.uid",
                          "metadata.labels", "metadata.annotations",
                          "metadata.creationTimestamp", "metadata.deletionTimestamp",
                          "status.phase", "status.reason", "status.containerStatuses", NULL}};

/* The objects a job controls: whose controller ownerReference is the job
 * (the store's owner index; O(pods of the job), not O(pods of the
 * namespace)). */
void kit_list_owned_objects(ty_kc *s, const char *resource, const char *ns,
                             const char *owner_uid, kc_list *out)
{
    ty_error err;

    ty_error_init(&err);
    if (kc_list_owned(s, resource, ns, owner_uid, out, &err) < 0) {
        ty_error_clear(&err);
        kc_list_free(out); /* empty */
    }
}


json_t *kit_owned_view(const ty_obj *o, const char *label, const char *value)
{
    json_t *v = ty_obj_view(o, &kit_owned);
    const char *have;

    if (!label)
        return v;
    have = json_string_value(
        json_object_get(json_object_get(json_object_get(v, "metadata"), "labels"), label));
    if (have && value && strcmp(have, value) == 0)
        return v;
    json_decref(v);
    return NULL;
}

int kit_list_owned_views(ty_kc *s, const char *resource, const char *ns, const char *owner_uid,
                         const char *label, const char *value, json_t **out)
{
    kc_list l;
    ty_error err;

    char sel[600];

    *out = json_array();
    ty_error_init(&err);
    /* the label narrows the list where the client has no owner index */
    sel[0] = '\0';
    if (label && value && strlen(label) + strlen(value) + 2 <= sizeof(sel)) {
        size_t n = strlen(label);
        memcpy(sel, label, n);
        sel[n] = '=';
        memcpy(sel + n + 1, value, strlen(value) + 1);
    }
    if (kc_list_owned_sel(s, resource, ns, owner_uid, sel, &l, &err) < 0) {
        ty_error_clear(&err);
        kc_list_free(&l); /* empty */
        return -1;
    }
    for (size_t i = 0; i < l.n; i++) {
        json_t *v = kit_owned_view(l.items[i], label, value);
        if (v)
            json_array_append_new(*out, v);
    }
    kc_list_free(&l);
    return 0;
}

