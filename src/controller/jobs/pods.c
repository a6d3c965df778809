/* pods.c - pods, services and config maps a job owns: how they are named,
 * labelled, built, created, listed and deleted (see jobs_int.h).
 *
 * The first half knows nothing about Kubeflow: a Volcano Job controller
 * builds its task pods with jobs_pod_new and friends and gets the same
 * ownerReferences, validation and events. The second half turns a Kubeflow
 * replica (type, index) into those parameters through the framework plugin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/log.h"
#include "client/events.h"
#include "controller/jobs/jobs_int.h"

/* ---- generic ---- */

json_t *jobs_owner_ref(const json_t *owner)
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
static bool takes_env(const jobs_pod_params *p, const json_t *ct)
{
    const char *name = json_string_value(json_object_get(ct, "name"));

    return !p->env_container || (name && strcmp(name, p->env_container) == 0);
}

json_t *jobs_pod_new(const jobs_pod_params *p)
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
                     "ownerReferences", jobs_owner_ref(p->owner));
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

json_t *jobs_service_new(const json_t *owner, const char *name, const json_t *labels,
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
                    labels, "ownerReferences", jobs_owner_ref(owner), "spec", "selector",
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

int jobs_create(ty_kc *s, const api_resource *res, json_t *obj, const json_t *job,
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

int jobs_batch_add(jobs_batch *b, const api_resource *res, json_t *obj, const json_t *job,
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

size_t jobs_batch_commit(jobs_batch *b, ty_kc *s, const json_t *job, const char *component)
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

void jobs_batch_free(jobs_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        kc_op_clear(&b->ops[i]);
    free(b->ops);
    free(b->res);
    *b = (jobs_batch){0};
}

int jobs_delete(ty_kc *s, const char *resource, const json_t *obj, const json_t *job,
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

    if (jobs_is_terminating(obj))
        return 0;
    ty_error_init(&err);
    o = kc_delete(s, resource, json_string_value(json_object_get(meta, "namespace")), name,
                     &opts, &deleted, &err);
    if (!o) {
        int rc = err.code == TY_ENOTFOUND || err.code == TY_ECONFLICT ? 0 : -1;
        if (rc)
            ty_warn("jobs: delete %s %s: %s", resource, name, err.text);
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
const ty_view jobs_owned = {
    "jobs-owned", owned_view,
    (const char *const[]){"metadata.name", "metadata.namespace", "metadata.uid",
                          "metadata.labels", "metadata.annotations",
                          "metadata.creationTimestamp", "metadata.deletionTimestamp",
                          "status.phase", "status.reason", "status.containerStatuses", NULL}};

/* The objects a job controls: whose controller ownerReference is the job
 * (the store's owner index; O(pods of the job), not O(pods of the
 * namespace)). */
void jobs_list_owned_objects(ty_kc *s, const char *resource, const char *ns,
                             const char *owner_uid, kc_list *out)
{
    ty_error err;

    ty_error_init(&err);
    if (kc_list_owned(s, resource, ns, owner_uid, out, &err) < 0) {
        ty_error_clear(&err);
        kc_list_free(out); /* empty */
    }
}

json_t *jobs_owned_view(const ty_obj *o, const char *job_name)
{
    json_t *v = ty_obj_view(o, &jobs_owned);
    const char *jn = json_string_value(json_object_get(
        json_object_get(json_object_get(v, "metadata"), "labels"), JOBS_LABEL_JOB_NAME));

    if (jn && strcmp(jn, job_name) == 0)
        return v;
    json_decref(v);
    return NULL;
}

/* What the job controls, as upstream selects it: the objects it controls
 * that carry its job-name label, each as its view. */
json_t *jobs_list_owned(ty_kc *s, const char *resource, const char *ns,
                        const char *job_name, const char *owner_uid)
{
    json_t *out = json_array();
    kc_list l;

    jobs_list_owned_objects(s, resource, ns, owner_uid, &l);
    for (size_t i = 0; i < l.n; i++) {
        json_t *v = jobs_owned_view(l.items[i], job_name);
        if (v)
            json_array_append_new(out, v);
    }
    kc_list_free(&l);
    return out;
}

/* ---- Kubeflow replicas ---- */

void jobs_pod_name(const jobs_framework *fw, const job_ctx *c, const char *rtype, int index,
                   char *buf, size_t len)
{
    if (fw->pod_name)
        fw->pod_name(c, rtype, index, buf, len);
    else
        jf_host(c, rtype, index, buf, len);
}

/* The labels every object of a replica carries (upstream's GenLabels plus
 * type and index); the selector of its Service. */
static json_t *replica_selector(const job_ctx *c, const char *rtype, int index)
{
    char lower[32], idx[16];

    jf_lower(rtype, lower, sizeof(lower));
    snprintf(idx, sizeof(idx), "%d", index);
    return json_pack("{s:s, s:s, s:s, s:s}", JOBS_LABEL_OPERATOR, c->kind->operator_name,
                     JOBS_LABEL_JOB_NAME, c->name, JOBS_LABEL_TYPE, lower, JOBS_LABEL_INDEX, idx);
}

json_t *jobs_pod_labels(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                        int index)
{
    json_t *labels = replica_selector(c, rtype, index);

    if (fw->is_master && fw->is_master(c, rtype, index))
        json_object_set_new(labels, JOBS_LABEL_ROLE, json_string("master"));
    return labels;
}

static bool gang_mode(const json_t *job)
{
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(job, "metadata"), "annotations"), JOBS_ANN_RESTART_POLICY));
    return v && strcmp(v, "gang") == 0;
}

json_t *jobs_build_pod(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                       int index, bool gang)
{
    const json_t *replica = kf_replica_spec(c->kind, c->job, rtype);
    const char *rp = json_string_value(json_object_get(replica, "restartPolicy"));
    char name[300];
    json_t *labels, *env, *pod;

    if (!rp || !*rp)
        rp = c->kind->default_restart_policy;
    /* ExitCode is the engine's policy, not the node agent's: the pod stops
     * and the engine decides from its exit code. Gang mode likewise. */
    if (strcmp(rp, "ExitCode") == 0 || gang || gang_mode(c->job))
        rp = "Never";
    jobs_pod_name(fw, c, rtype, index, name, sizeof(name));
    labels = jobs_pod_labels(fw, c, rtype, index);
    env = json_array();
    if (fw->env)
        fw->env(c, rtype, index, env);
    jobs_pod_params p = {
        .owner = c->job, .name = name, .template = json_object_get(replica, "template"),
        .restart_policy = rp, .labels = labels, .env = env,
        .env_container = fw->env_all_containers ? NULL : c->kind->default_container,
    };
    pod = jobs_pod_new(&p);
    json_decref(labels);
    json_decref(env);
    if (fw->decorate)
        fw->decorate(c, rtype, index, pod);
    return pod;
}

static const json_t *replica_default_container(const job_ctx *c, const char *rtype)
{
    const json_t *spec = kf_replica_spec(c->kind, c->job, rtype);
    const json_t *list = json_object_get(
        json_object_get(json_object_get(spec, "template"), "spec"), "containers");
    size_t i;
    json_t *ct;

    json_array_foreach(list, i, ct) {
        const char *n = json_string_value(json_object_get(ct, "name"));
        if (n && strcmp(n, c->kind->default_container) == 0)
            return ct;
    }
    return json_array_get(list, 0);
}

json_t *jobs_build_service(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                           int index)
{
    jf_service_mode mode = fw->service ? fw->service(c, rtype) : JF_SVC_HEADLESS;
    char name[300];
    json_t *sel, *svc;

    if (mode == JF_SVC_NONE)
        return NULL;
    jobs_pod_name(fw, c, rtype, index, name, sizeof(name));
    sel = replica_selector(c, rtype, index);
    svc = jobs_service_new(c->job, name, sel, sel, replica_default_container(c, rtype),
                           mode == JF_SVC_HEADLESS);
    json_decref(sel);
    return svc;
}
