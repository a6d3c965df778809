/* jobflow.c - Volcano's JobFlow and JobTemplate controllers (see vcflow.h).
 *
 * Keys: "f/<ns>/<name>" a JobFlow, "t/<ns>/<name>" a JobTemplate, "n/<ns>"
 * every JobFlow of a namespace (a template came or changed: flows waiting
 * for it look again). Fed by events on JobFlows, JobTemplates and the
 * Volcano Jobs a JobFlow controls.
 *
 * A JobFlow pass, as Volcano's controller:
 *   - Succeed with jobRetainPolicy delete: its Jobs are deleted, nothing else;
 *   - each flow whose Job "<jobflow>-<flow>" does not exist gets one from the
 *     JobTemplate named like the flow, once every dependsOn target's Job is
 *     Completed (labels and annotations volcano.sh/createdByJobFlow and
 *     volcano.sh/createdByJobTemplate = "<ns>.<name>", controller reference to
 *     the JobFlow; Event Created);
 *   - status from the Jobs it controls: the names by phase, conditions,
 *     jobStatusList with each Job's running history, and state.phase:
 *     Pending → Running once a Job runs or completed with none failed, or
 *     Failed once one failed or was terminated; Running → Succeed when every
 *     flow's Job completed, or Failed.
 * A JobTemplate pass lists the Jobs made from it in status.jobDependsOnList. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/registry.h"
#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "controller/kit.h"
#include "controller/volcano/vc_int.h"
#include "controller/volcano/vcflow.h"
#include "controller/workqueue.h"

#define FLOW_WORKERS 2
#define FLOW_API_VERSION "flow.volcano.sh/v1alpha1"
#define BY_FLOW "volcano.sh/createdByJobFlow"
#define BY_TEMPLATE "volcano.sh/createdByJobTemplate"

struct ty_jobflows {
    ty_kc *s;
    ty_workqueue *q;
    const char *watched[4];
};

static void add_key(ty_workqueue *q, char kind, const char *ns, const char *name)
{
    char key[600];

    if (!ns || !*ns)
        return;
    if (name)
        snprintf(key, sizeof(key), "%c/%s/%s", kind, ns, name);
    else
        snprintf(key, sizeof(key), "%c/%s", kind, ns);
    wq_add(q, key);
}

/* ---- keys ---------------------------------------------------------------- */

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    ty_jobflows *f = ctx;
    const char *ns, *name;
    json_t *meta, *r;
    size_t i;

    ty_obj_key(ev->obj, &ns, &name);
    if (!strcmp(ev->resource, api_store_key(&api_jobflow))) {
        if (ev->type != KC_DELETED)
            add_key(q, 'f', ns, name);
        return;
    }
    if (!strcmp(ev->resource, api_store_key(&api_jobtemplate))) {
        if (ev->type != KC_DELETED)
            add_key(q, 't', ns, name);
        add_key(q, 'n', ns, NULL);
        return;
    }
    if (kc_count_hint(f->s, api_store_key(&api_jobflow)) == 0 &&
        kc_count_hint(f->s, api_store_key(&api_jobtemplate)) == 0)
        return;
    meta = ty_obj_metadata(ev->obj);
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
        if (json_is_true(json_object_get(r, "controller")) &&
            !strcmp(ty_jstr(r, "apiVersion"), FLOW_API_VERSION) &&
            !strcmp(ty_jstr(r, "kind"), "JobFlow"))
            add_key(q, 'f', ns, ty_jstr(r, "name"));
    /* "<ns>.<template>": a namespace has no dot. */
    const char *by = ty_jstr(json_object_get(meta, "labels"), BY_TEMPLATE), *dot = strchr(by, '.');
    if (dot && (size_t)(dot - by) == strlen(ns) && !strncmp(by, ns, strlen(ns)))
        add_key(q, 't', ns, dot + 1);
    json_decref(meta);
}

static void list_keys(ty_workqueue *q, ty_kc *s, const api_resource *res, char kind,
                      const char *ns)
{
    kc_list l;
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, api_store_key(res), &(kc_list_opts){.ns = ns}, &l, &err) < 0) {
        ty_error_clear(&err);
        return;
    }
    for (size_t k = 0; k < l.n; k++) {
        const char *ons, *name;
        ty_obj_key(l.items[k], &ons, &name);
        add_key(q, kind, ons, name);
    }
    kc_list_free(&l);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    (void)ctx;
    list_keys(q, s, &api_jobflow, 'f', NULL);
    list_keys(q, s, &api_jobtemplate, 't', NULL);
}

/* ---- making Jobs --------------------------------------------------------- */

static ty_obj *get_job(ty_kc *s, const char *ns, const char *flow, const char *step)
{
    char name[600];

    snprintf(name, sizeof(name), "%s-%s", flow, step);
    return kc_get(s, api_store_key(&api_vcjob), ns, name, NULL);
}

/* Every target's Job exists and is Completed. */
static bool targets_done(ty_kc *s, const char *ns, const char *flow, const json_t *targets)
{
    size_t i;
    json_t *t;

    json_array_foreach(targets, i, t) {
        ty_obj *o = get_job(s, ns, flow, json_string_value(t) ? json_string_value(t) : "");
        bool done =
            o && !strcmp(ty_jpath(ty_obj_json(o), "status", "state", "phase", NULL), "Completed");
        ty_obj_unref(o);
        if (!done)
            return false;
    }
    return true;
}

static void create_job(ty_kc *s, const json_t *jf, const char *step)
{
    const char *ns = ty_jmeta(jf, "namespace"), *flow = ty_jmeta(jf, "name");
    ty_obj *t = kc_get(s, api_store_key(&api_jobtemplate), ns, step, NULL), *o;
    char name[600], by_flow[600], by_tmpl[600];
    json_t *job, *spec;
    ty_error err;

    if (!t)
        return; /* its template's event brings the flow back */
    snprintf(name, sizeof(name), "%s-%s", flow, step);
    snprintf(by_flow, sizeof(by_flow), "%s.%s", ns, flow);
    snprintf(by_tmpl, sizeof(by_tmpl), "%s.%s", ns, step);
    spec = json_deep_copy(json_object_get(ty_obj_json(t), "spec"));
    ty_obj_unref(t);
    job = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:[o]}, s:o}",
                    "apiVersion", "batch.volcano.sh/v1alpha1", "kind", "Job", "metadata",
                    "name", name, "namespace", ns, "labels", BY_TEMPLATE, by_tmpl, BY_FLOW,
                    by_flow, "annotations", BY_TEMPLATE, by_tmpl, BY_FLOW, by_flow,
                    "ownerReferences", kit_owner_ref(jf), "spec",
                    json_is_object(spec) ? spec : json_object());
    if (!json_is_object(spec))
        json_decref(spec);
    ty_error_init(&err);
    if (!job || api_prepare(&api_vcjob, job, NULL, &err) < 0) {
        ty_event(s, jf, "Warning", "FailedCreate", VC_COMPONENT, "Failed to create job %s: %s",
                 name, job ? err.text : "out of memory");
        json_decref(job);
        ty_error_clear(&err);
        return;
    }
    o = kc_create(s, api_store_key(&api_vcjob), ns, job, &err);
    if (o)
        ty_event(s, jf, "Normal", "Created", VC_COMPONENT, "create a job named %s!", name);
    else if (err.code != TY_EEXISTS)
        ty_event(s, jf, "Warning", "FailedCreate", VC_COMPONENT, "Failed to create job %s: %s",
                 name, err.text);
    ty_obj_unref(o);
    ty_error_clear(&err);
}

static void deploy(ty_kc *s, const json_t *jf)
{
    const char *ns = ty_jmeta(jf, "namespace"), *flow = ty_jmeta(jf, "name");
    size_t i;
    json_t *step;

    json_array_foreach(json_object_get(json_object_get(jf, "spec"), "flows"), i, step) {
        const char *sname = ty_jstr(step, "name");
        json_t *targets = json_object_get(json_object_get(step, "dependsOn"), "targets");
        ty_obj *o = get_job(s, ns, flow, sname);
        if (o) {
            ty_obj_unref(o);
            continue;
        }
        if (!json_is_array(targets) || targets_done(s, ns, flow, targets))
            create_job(s, jf, sname);
    }
}

/* ---- status -------------------------------------------------------------- */

static const char *const known_phases[] = {"Pending", "Running", "Completing", "Completed",
                                           "Terminating", "Terminated", "Failed", NULL};

static void append_name(json_t *st, const char *key, const char *name)
{
    json_t *a = json_object_get(st, key);

    if (!a) {
        a = json_array();
        json_object_set_new(st, key, a);
    }
    json_array_append_new(a, json_string(name));
}

/* The entry of old's jobStatusList for job, updated: its running history
 * gains an entry when the phase changed (ending the last one now). */
static json_t *job_status(const json_t *old_list, const json_t *job, const char *now)
{
    const json_t *st = json_object_get(job, "status"), *e;
    const char *name = ty_jmeta(job, "name");
    const char *phase = ty_jstr(json_object_get(st, "state"), "phase");
    const char *created = ty_jmeta(job, "creationTimestamp");
    json_t *hist = NULL, *out;
    size_t i;

    json_array_foreach(old_list, i, e)
        if (!strcmp(ty_jstr(e, "name"), name) &&
            json_is_array(json_object_get(e, "runningHistories")))
            hist = json_deep_copy(json_object_get(e, "runningHistories"));
    if (!hist)
        hist = json_array();
    json_t *last = json_array_get(hist, json_array_size(hist) - 1);
    if (*phase && (!last || strcmp(ty_jstr(last, "state"), phase))) {
        if (last)
            json_object_set_new(last, "endTimestamp", json_string(now));
        json_array_append_new(hist, json_pack("{s:s, s:s}", "startTimestamp", now, "state", phase));
    }
    out = json_pack("{s:s, s:s, s:s, s:o}", "name", name, "state", phase, "startTimestamp",
                    created, "runningHistories", hist);
    if (out && meta_int(st, "retryCount", 0) > 0) /* omitted when 0, as upstream's */
        json_object_set_new(out, "restartCount", json_integer(meta_int(st, "retryCount", 0)));
    long long ms = vc_duration_ms(ty_jstr(st, "runningDuration"));
    time_t c;
    if (ms >= 0 && *ty_jstr(st, "runningDuration") && ty_time_parse(created, &c) == 0) {
        char end[40];
        ty_time_format(c + (time_t)(ms / 1000), end, sizeof(end));
        json_object_set_new(out, "endTimestamp", json_string(end));
    }
    return out;
}

/* The status of jf from the Jobs it controls (owned), as upstream's. */
static json_t *flow_status(const json_t *jf, const kc_list *owned)
{
    const json_t *old = json_object_get(jf, "status");
    const json_t *old_list = json_object_get(old, "jobStatusList");
    json_t *st = json_object(), *conds = json_object(), *list = json_array(), *e;
    size_t nflows = json_array_size(json_object_get(json_object_get(jf, "spec"), "flows"));
    char now[40];
    size_t i;

    ty_time_now(now, sizeof(now));
    /* Entries of Jobs no longer there are kept, as upstream's. */
    json_array_foreach(old_list, i, e)
        json_array_append(list, e);
    for (i = 0; i < owned->n; i++) {
        const json_t *job = ty_obj_json(owned->items[i]), *js = json_object_get(job, "status");
        const char *name = ty_jmeta(job, "name");
        const char *phase = ty_jstr(json_object_get(js, "state"), "phase");
        bool known = false;
        for (size_t k = 0; known_phases[k]; k++)
            known |= !strcmp(phase, known_phases[k]);
        if (!known)
            append_name(st, "unKnowJobs", name);
        else if (!strcmp(phase, "Pending"))
            append_name(st, "pendingJobs", name);
        else if (!strcmp(phase, "Running"))
            append_name(st, "runningJobs", name);
        else if (!strcmp(phase, "Completed"))
            append_name(st, "completedJobs", name);
        else if (!strcmp(phase, "Failed"))
            append_name(st, "failedJobs", name);
        else if (!strcmp(phase, "Terminated"))
            append_name(st, "terminatedJobs", name);
        json_t *c = json_pack("{s:s, s:s}", "phase", phase, "createTime",
                              ty_jmeta(job, "creationTimestamp"));
        if (json_object_get(js, "runningDuration"))
            json_object_set(c, "runningDuration", json_object_get(js, "runningDuration"));
        if (json_object_get(js, "taskStatusCount"))
            json_object_set_new(c, "taskStatusCount",
                                json_deep_copy(json_object_get(js, "taskStatusCount")));
        json_object_set_new(conds, name, c);
        json_t *entry = job_status(old_list, job, now);
        size_t k;
        json_array_foreach(list, k, e)
            if (!strcmp(ty_jstr(e, "name"), name))
                break;
        if (k < json_array_size(list))
            json_array_set_new(list, k, entry);
        else
            json_array_append_new(list, entry);
    }
    if (json_array_size(list))
        json_object_set_new(st, "jobStatusList", list);
    else
        json_decref(list);
    if (json_object_size(conds))
        json_object_set_new(st, "conditions", conds);
    else
        json_decref(conds);

    /* The state machine. */
    const char *phase = ty_jstr(json_object_get(old, "state"), "phase");
    size_t running = json_array_size(json_object_get(st, "runningJobs"));
    size_t completed = json_array_size(json_object_get(st, "completedJobs"));
    size_t failed = json_array_size(json_object_get(st, "failedJobs"));
    size_t terminated = json_array_size(json_object_get(st, "terminatedJobs"));
    const char *next = phase;
    if (!*phase || !strcmp(phase, "Pending")) {
        if ((running || completed) && !failed)
            next = "Running";
        else if (failed || terminated)
            next = "Failed";
        else
            next = "Pending";
    } else if (!strcmp(phase, "Running")) {
        if (completed == nflows)
            next = "Succeed";
        else if (failed || terminated)
            next = "Failed";
    }
    json_object_set_new(st, "state", json_pack("{s:s}", "phase", next));
    return st;
}

typedef struct {
    json_t *status;
    const char *rv; /* the version the pass read: a write since is a conflict */
} status_arg;

static int set_status(json_t *obj, void *arg, ty_error *err)
{
    const status_arg *a = arg;
    (void)err;

    /* The running histories carry on from the status the pass read. */
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(a->rv));
    json_object_set_new(obj, "status", json_deep_copy(a->status));
    return 0;
}

static int pass_flow(ty_jobflows *f, const char *ns, const char *name)
{
    ty_obj *o = kc_get(f->s, api_store_key(&api_jobflow), ns, name, NULL), *w;
    const json_t *jf;
    kc_list owned = {0};
    ty_error err;
    json_t *st;
    int rc = 0;

    if (!o)
        return 0;
    jf = ty_obj_json(o);
    if (json_object_get(json_object_get(jf, "metadata"), "deletionTimestamp"))
        goto out;
    ty_error_init(&err);
    if (!strcmp(ty_jstr(json_object_get(jf, "spec"), "jobRetainPolicy"), "delete") &&
        !strcmp(ty_jpath(jf, "status", "state", "phase", NULL), "Succeed")) {
        if (kc_list_owned(f->s, api_store_key(&api_vcjob), ns, ty_jmeta(jf, "uid"), &owned,
                             &err) < 0)
            rc = -1;
        for (size_t i = 0; i < owned.n; i++)
            if (kit_delete(f->s, api_store_key(&api_vcjob), ty_obj_json(owned.items[i]), NULL,
                            VC_COMPONENT) < 0)
                rc = -1;
        goto out_list;
    }
    deploy(f->s, jf);
    if (kc_list_owned(f->s, api_store_key(&api_vcjob), ns, ty_jmeta(jf, "uid"), &owned,
                         &err) < 0) {
        rc = -1;
        goto out_list;
    }
    st = flow_status(jf, &owned);
    status_arg a = {st, ty_jmeta(jf, "resourceVersion")};
    w = kc_mutate(f->s, api_store_key(&api_jobflow), ns, name, set_status, &a, KC_STATUS, &err);
    if (!w && err.code != TY_ENOTFOUND)
        rc = -1;
    ty_obj_unref(w);
    json_decref(st);
out_list:
    kc_list_free(&owned);
    ty_error_clear(&err);
out:
    ty_obj_unref(o);
    return rc;
}

/* ---- JobTemplate ---------------------------------------------------------- */

static bool made_from(const json_t *job, void *arg)
{
    return !strcmp(ty_jpath(job, "metadata", "labels", BY_TEMPLATE, NULL), arg);
}

static int set_depends_on(json_t *obj, void *arg, ty_error *err)
{
    json_t *st = json_object_get(obj, "status");
    (void)err;

    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    json_object_set_new(st, "jobDependsOnList", json_deep_copy(arg));
    return 0;
}

static int pass_template(ty_jobflows *f, const char *ns, const char *name)
{
    char by[600];
    kc_list l = {0};
    ty_error err;
    json_t *names;
    ty_obj *w;
    int rc = 0;

    snprintf(by, sizeof(by), "%s.%s", ns, name);
    ty_error_init(&err);
    if (kc_list_objects(f->s, api_store_key(&api_vcjob),
                           &(kc_list_opts){.ns = ns, .filter = made_from, .filter_arg = by}, &l,
                           &err) < 0) {
        ty_error_clear(&err);
        return -1;
    }
    /* None: the list is left as it was, as upstream. */
    if (l.n > 0) {
        names = json_array();
        for (size_t i = 0; i < l.n; i++)
            json_array_append_new(names, json_string(ty_jmeta(ty_obj_json(l.items[i]), "name")));
        w = kc_mutate(f->s, api_store_key(&api_jobtemplate), ns, name, set_depends_on,
                                names, KC_STATUS, &err);
        if (!w && err.code != TY_ENOTFOUND)
            rc = -1;
        ty_obj_unref(w);
        json_decref(names);
    }
    kc_list_free(&l);
    ty_error_clear(&err);
    return rc;
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    ty_jobflows *f = ctx;
    char ns[256], name[300];
    (void)wake_at;

    if (key[0] == 'n' && sscanf(key, "n/%255s", ns) == 1) {
        list_keys(q, f->s, &api_jobflow, 'f', ns);
        return 0;
    }
    if (sscanf(key + 1, "/%255[^/]/%299s", ns, name) != 2)
        return 0;
    return key[0] == 'f' ? pass_flow(f, ns, name) : pass_template(f, ns, name);
}

ty_jobflows *jobflows_start(ty_kc *s, ty_error *err)
{
    wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_jobflows *f = calloc(1, sizeof(*f));

    if (!f) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    f->s = s;
    f->watched[0] = api_store_key(&api_jobflow);
    f->watched[1] = api_store_key(&api_jobtemplate);
    f->watched[2] = api_store_key(&api_vcjob);
    ops.resources = f->watched;
    if (!(f->q = wq_start(s, "jobflows", FLOW_WORKERS, &ops, f, err))) {
        free(f);
        return NULL;
    }
    return f;
}

void jobflows_stop(ty_jobflows *f)
{
    if (!f)
        return;
    wq_stop(f->q);
    free(f);
}
