/* reconcile.c - one pass of the job engine over one job (see jobs_int.h).
 *
 * Level-triggered: every pass reads the job and the pods and services it
 * controls from the store, decides from what it sees, and writes. Nothing is
 * remembered between passes; the only state of its own, the number of pod
 * recreations (which vanish with the pods they replaced), is kept on the job
 * as the annotation trainyard.io/restarts (upstream's JobStatus has no field
 * for it), in a metadata write of its own just before the status write: a
 * status subresource takes the status alone.
 *
 * Order of a pass: Created condition; if already finished only clean-up and
 * TTL; suspend/resume; startTime; deadline; observe pods; restart, fail or
 * succeed by the rules; create what is missing; Running; write status.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/jsonown.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/timeutil.h"
#include "base/treearena.h"
#include "client/events.h"
#include "controller/jobs/jobs_int.h"
#include "controller/volcano/vc_int.h" /* vc_ssh_keygen: the ssh plugin's key maker */

#include "controller/jobs/pass.h"

/* ---- small readers ---- */

static const json_t *run_policy(const pass *p)
{
    return json_object_get(json_object_get(p->job, "spec"), "runPolicy");
}

static long long run_int(const pass *p, const char *key, long long dflt)
{
    json_t *v = json_object_get(run_policy(p), key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static const char *annotation(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
}


static const char *obj_name(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
}

static void wake(pass *p, time_t t)
{
    if (*p->wake_at == 0 || t < *p->wake_at)
        *p->wake_at = t;
}

/* "<Kind><suffix>": upstream's condition and event reasons. */
static const char *kreason(const pass *p, const char *suffix, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", p->c.kind->kind, suffix);
    return buf;
}

static void set_cond(pass *p, const char *type, const char *st, const char *suffix,
                     const char *msg)
{
    char reason[64];

    jobs_cond_set(p->status, type, st, kreason(p, suffix, reason, sizeof(reason)), msg,
                  p->nows);
}

/* Recorded now, written after the status (pass_commit). */
static void event(pass *p, const char *type, const char *reason, const char *msg)
{
    if (p->nevents < PASS_EVENTS &&
        ty_event_op(&p->events[p->nevents], p->job, type, reason, p->c.kind->operator_name,
                    "%s", msg))
        p->nevents++;
    else
        ty_event(p->s, p->job, type, reason, p->c.kind->operator_name, "%s", msg);
}

/* ---- conditions that end a job ---- */

/* reason: the condition's and the event's, in full. */
static void finish(pass *p, bool ok, const char *reason, const char *msg)
{
    jobs_cond_set(p->status, ok ? "Succeeded" : "Failed", "True", reason, msg, p->nows);
    json_object_set_new(p->status, "completionTime", json_string(p->nows));
    event(p, ok ? "Normal" : "Warning", reason, msg);
    jobs_metric_bump(ok ? "training_operator_jobs_successful_total"
                        : "training_operator_jobs_failed_total", p->c.ns, p->c.kind);
}

static void fail_backoff(pass *p)
{
    char msg[512];

    snprintf(msg, sizeof(msg),
             "Job %s has failed because it has reached the specified backoff limit", p->c.name);
    finish(p, false, "BackoffLimitExceeded", msg);
}

/* ---- observing pods ---- */

static jf_counts *counts_of(pass *p, const char *lower_type)
{
    const char *canon = lower_type ? kf_replica_type_canonical(p->c.kind, lower_type) : NULL;
    return canon ? (jf_counts *)jf_find(p->counts, p->ntypes, canon) : NULL;
}

static const char *replica_restart_policy(const pass *p, const char *rtype)
{
    const char *rp = json_string_value(
        json_object_get(kf_replica_spec(p->c.kind, p->job, rtype), "restartPolicy"));
    return rp && *rp ? rp : p->c.kind->default_restart_policy;
}

static void observe_failed(pass *p, jf_counts *c, json_t *pod)
{
    const char *rp = replica_restart_policy(p, c->type);
    int code = jobs_pod_exit_code(pod, p->c.kind->default_container);

    /* Gang mode runs every pod with restartPolicy Never; the replica's own
     * policy still says whether a failure is worth a restart. */
    if (jobs_classify_exit(rp, code) == JOBS_EXIT_RETRY) {
        json_array_append(p->retry, pod);
    } else {
        c->failed++;
        json_array_append(p->failed, pod);
    }
}

/* Sorts every pod into its replica's counts; pods no replica wants any more
 * (scaled down, type removed) are deleted. */
static void observe(pass *p)
{
    size_t i;
    json_t *pod;

    json_array_foreach(p->pods, i, pod) {
        jf_counts *c = counts_of(p, pass_label(pod, JOBS_LABEL_TYPE));
        const char *idx_s = pass_label(pod, JOBS_LABEL_INDEX);
        long idx = idx_s ? strtol(idx_s, NULL, 10) : -1;
        const char *phase = jobs_pod_phase(pod);

        json_object_set_new(p->present, obj_name(pod), json_true());
        if (jobs_is_terminating(pod))
            continue;
        if (!c || idx < 0 || idx >= c->replicas) {
            jobs_delete(p->s, "pods", pod, p->job, p->c.kind->operator_name);
            continue;
        }
        p->live_restarts += jobs_pod_restarts(pod);
        if (strcmp(phase, "Succeeded") == 0) {
            c->succeeded++;
            if (idx == 0)
                c->first_succeeded = true;
        } else if (strcmp(phase, "Failed") == 0) {
            observe_failed(p, c, pod);
        } else {
            c->active++;
            if (strcmp(phase, "Running") == 0)
                c->running++;
        }
    }
}

/* ---- restarts ---- */

static void exited_event(pass *p, const json_t *pod)
{
    char msg[512];

    snprintf(msg, sizeof(msg), "Pod: %s.%s exited with code %d", p->c.ns, obj_name(pod),
             jobs_pod_exit_code(pod, p->c.kind->default_container));
    event(p, "Warning", "ExitedWithCode", msg);
}

/* Deletes the failed pods (or, in gang mode, every pod); the next passes
 * recreate them once they are gone. Each recreated pod counts one restart
 * plus the in-place restarts it had. */
static void restart(pass *p)
{
    json_t *victims = p->gang ? p->pods : p->retry, *pod;
    const char *type = kf_replica_type_canonical(
        p->c.kind, pass_label(json_array_get(p->retry, 0), JOBS_LABEL_TYPE));
    char msg[512], type_buf[64];
    size_t i;

    json_array_foreach(p->retry, i, pod)
        exited_event(p, pod);
    json_array_foreach(victims, i, pod) {
        if (jobs_is_terminating(pod))
            continue;
        if (jobs_delete(p->s, "pods", pod, p->job, p->c.kind->operator_name) < 0)
            p->rc = -1;
        p->added += p->gang ? 0 : 1 + jobs_pod_restarts(pod);
    }
    if (p->gang)
        p->added += 1;
    snprintf(msg, sizeof(msg), "%s %s is restarting because %zu %s replica(s) failed.",
             p->c.kind->kind, p->c.name, json_array_size(p->retry), type ? type : "");
    set_cond(p, "Restarting", "True", "Restarting", msg);
    event(p, "Warning", kreason(p, "Restarting", type_buf, sizeof(type_buf)), msg);
    jobs_metric_bump("training_operator_jobs_restarted_total", p->c.ns, p->c.kind);
}

/* Restart, fail or succeed, by the plugin's rule and the run policy. Returns
 * true when the job finished in this pass. */
static bool decide(pass *p)
{
    long long limit = run_int(p, "backoffLimit", -1);
    long long total = p->restarts + p->live_restarts;
    char msg[512], reason[64];
    size_t i;

    if (p->fw->succeeded(&p->c, p->counts, p->ntypes)) {
        snprintf(msg, sizeof(msg), "%s %s/%s successfully completed.", p->c.kind->kind, p->c.ns,
                 p->c.name);
        finish(p, true, kreason(p, "Succeeded", reason, sizeof(reason)), msg);
        return true;
    }
    for (i = 0; i < p->ntypes; i++) {
        if (p->counts[i].failed == 0)
            continue;
        json_t *pod;
        size_t k;
        json_array_foreach(p->failed, k, pod)
            exited_event(p, pod);
        snprintf(msg, sizeof(msg), "%s %s has failed because %lld %s replica(s) failed.",
                 p->c.kind->kind, p->c.name, p->counts[i].failed, p->counts[i].type);
        finish(p, false, kreason(p, "Failed", reason, sizeof(reason)), msg);
        return true;
    }
    if (json_array_size(p->retry)) {
        /* A restart that would reach the limit is not worth making. */
        if (jobs_backoff_exceeded(limit, total + 1)) {
            fail_backoff(p);
            return true;
        }
        restart(p);
        return false;
    }
    if (jobs_backoff_exceeded(limit, total)) {
        fail_backoff(p);
        return true;
    }
    return false;
}

/* ---- creating what is missing ---- */

/* ---- the PodGroup (podgroup.c) ---- */

static bool gate_open(pass *p)
{
    int rc = jobs_podgroup_gate(p->s, p->fw, &p->c, p->job, p->counts, p->ntypes);

    if (rc < 0)
        p->rc = -1;
    return rc > 0;
}

static void ensure_configmap(pass *p)
{
    json_t *cm = p->fw->configmap(&p->c, p->pods);
    const char *name = obj_name(cm);
    ty_obj *o = kc_get(p->s, "configmaps", p->c.ns, name, NULL);
    ty_error err;

    ty_error_init(&err);
    if (!o) {
        json_object_set_new(json_object_get(cm, "metadata"), "ownerReferences",
                            json_pack("[o]", jobs_owner_ref(p->job)));
        if (jobs_create(p->s, &api_configmap, cm, p->job, p->c.kind->operator_name, &err) < 0)
            p->rc = -1;
        ty_error_clear(&err);
        return;
    }
    if (!json_equal(json_object_get(ty_obj_json(o), "data"), json_object_get(cm, "data"))) {
        json_t *copy = ty_obj_json_copy(o);
        json_object_set(copy, "data", json_object_get(cm, "data"));
        ty_obj *u = kc_update(p->s, "configmaps", p->c.ns, copy, &err);
        if (!u)
            p->rc = -1;
        ty_obj_unref(u);
        json_decref(copy);
    }
    ty_obj_unref(o);
    json_decref(cm);
    ty_error_clear(&err);
}

/* The framework's other objects (extras), each made once: a Secret of type
 * kubernetes.io/ssh-auth that comes without data gets a new key pair. */
static void ensure_extras(pass *p)
{
    json_t *objs = p->fw->extras(&p->c), *obj;
    ty_error err;
    size_t i;

    ty_error_init(&err);
    json_array_foreach(objs, i, obj) {
        const char *kind = json_string_value(json_object_get(obj, "kind"));
        bool secret = kind && strcmp(kind, "Secret") == 0;
        const api_resource *res = secret ? &api_secret : &api_service;
        ty_obj *o = kc_get(p->s, api_store_key(res), p->c.ns, obj_name(obj), NULL);
        char *priv = NULL, *pub = NULL;

        if (o) {
            ty_obj_unref(o);
            continue;
        }
        if (secret && !json_object_get(obj, "data")) {
            if (vc_ssh_keygen(p->c.name, &priv, &pub, &err) < 0) {
                ty_event(p->s, p->job, "Warning", "FailedCreateSecret",
                         p->c.kind->operator_name, "ssh key pair: %s", err.text);
                ty_error_clear(&err);
                p->rc = -1;
                continue;
            }
            json_object_set_new(obj, "stringData",
                                json_pack("{s:s, s:s}", "ssh-privatekey", priv,
                                          "ssh-publickey", pub));
            free(priv);
            free(pub);
        }
        json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                            json_pack("[o]", jobs_owner_ref(p->job)));
        if (jobs_create(p->s, res, json_incref(obj), p->job, p->c.kind->operator_name,
                        &err) < 0)
            p->rc = -1;
        ty_error_clear(&err);
    }
    json_decref(objs);
}

/* Whether a Service of that name is the job's already: its name is all a
 * pass needs of it (a name taken by anything else fails the create anyway),
 * so Services are listed without their views. */
static bool has_service(const pass *p, const char *name)
{
    for (size_t i = 0; i < p->svcs.n; i++) {
        const char *ns, *n;
        ty_obj_key(p->svcs.items[i], &ns, &n);
        if (strcmp(n, name) == 0)
            return true;
    }
    return false;
}

static void create_replica(pass *p, jobs_batch *b, const char *rtype, int index)
{
    char name[300];
    json_t *obj;
    ty_error err;

    ty_error_init(&err);
    jobs_pod_name(p->fw, &p->c, rtype, index, name, sizeof(name));
    ty_tree_arena_begin(TY_TREES_STORED);
    obj = has_service(p, name) ? NULL : jobs_build_service(p->fw, &p->c, rtype, index);
    ty_tree_arena_end();
    if (obj && jobs_batch_add(b, &api_service, obj, p->job, p->c.kind->operator_name, p->s,
                              &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
    if (json_object_get(p->present, name))
        return;
    if (p->fw->may_create && !p->fw->may_create(&p->c, rtype, p->counts, p->ntypes))
        return;
    ty_tree_arena_begin(TY_TREES_STORED);
    obj = jobs_build_pod(p->fw, &p->c, rtype, index, p->gang);
    if (obj) {
        /* the gang scheduler finds the pod's PodGroup and role by these */
        json_t *meta = json_object_get(obj, "metadata"), *ann = json_object_get(meta, "annotations");
        char role[64];
        size_t k;
        if (!json_is_object(ann)) {
            ann = json_object();
            json_object_set_new(meta, "annotations", ann);
        }
        snprintf(role, sizeof(role), "%s", rtype);
        for (k = 0; role[k]; k++)
            role[k] = (char)tolower((unsigned char)role[k]);
        json_object_set_new(ann, "scheduling.k8s.io/group-name", json_string(p->c.name));
        json_object_set_new(ann, "volcano.sh/task-spec", json_string(role));
    }
    ty_tree_arena_end();
    if (jobs_batch_add(b, &api_pod, obj, p->job, p->c.kind->operator_name, p->s, &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
}

/* Every missing service and pod, written together. */
static void create_missing(pass *p)
{
    jobs_batch b = {0};

    if (!gate_open(p))
        return;
    if (p->fw->configmap)
        ensure_configmap(p);
    if (p->fw->extras)
        ensure_extras(p);
    for (size_t t = 0; t < p->ntypes; t++)
        for (long long i = 0; i < p->counts[t].replicas; i++)
            create_replica(p, &b, p->counts[t].type, (int)i);
    if (jobs_batch_commit(&b, p->s, p->job, p->c.kind->operator_name))
        p->rc = -1;
    jobs_batch_free(&b);
}

/* Running once every replica's pod runs (or already succeeded): a partly
 * started gang is not reported as running. */
static void update_running(pass *p)
{
    long long expected = 0, running = 0, done = 0;
    char msg[512], reason[64];

    for (size_t t = 0; t < p->ntypes; t++) {
        expected += p->counts[t].replicas;
        running += p->counts[t].running;
        done += p->counts[t].succeeded;
    }
    if (json_array_size(p->retry) || running == 0 || running + done < expected)
        return;
    snprintf(msg, sizeof(msg), "%s %s/%s is running.", p->c.kind->kind, p->c.ns, p->c.name);
    if (jobs_cond_true(p->status, "Running"))
        return;
    set_cond(p, "Running", "True", "Running", msg);
    event(p, "Normal", kreason(p, "Running", reason, sizeof(reason)), msg);
}

/* ---- suspend, deadline, finished jobs ---- */

/* Deletes the job's pods (only_active: those Pending or Running) and the
 * Services of the pods it deletes. */
static void delete_all(pass *p, bool only_active)
{
    json_t *gone = json_object(), *o;
    size_t i;

    json_array_foreach(p->pods, i, o) {
        const char *phase = jobs_pod_phase(o);
        if (only_active && strcmp(phase, "Succeeded") == 0)
            continue;
        if (only_active && strcmp(phase, "Failed") == 0)
            continue;
        json_object_set_new(gone, obj_name(o), json_true());
        if (jobs_delete(p->s, "pods", o, p->job, p->c.kind->operator_name) < 0)
            p->rc = -1;
    }
    for (i = 0; i < p->svcs.n; i++) {
        if (!(o = jobs_owned_view(p->svcs.items[i], p->c.name)))
            continue;
        if ((!only_active || json_object_get(gone, obj_name(o))) &&
            jobs_delete(p->s, "services", o, p->job, p->c.kind->operator_name) < 0)
            p->rc = -1;
        json_decref(o);
    }
    json_decref(gone);
}

/* Returns true while the job is suspended. */
static bool suspend_or_resume(pass *p)
{
    char msg[512], reason[64];

    if (json_is_true(json_object_get(run_policy(p), "suspend"))) {
        delete_all(p, false);
        snprintf(msg, sizeof(msg), "%s %s is suspended.", p->c.kind->kind, p->c.name);
        if (jobs_cond_true(p->status, "Running"))
            set_cond(p, "Running", "False", "Suspended", msg);
        if (!jobs_cond_true(p->status, "Suspended")) {
            set_cond(p, "Suspended", "True", "Suspended", msg);
            event(p, "Normal", kreason(p, "Suspended", reason, sizeof(reason)), msg);
        }
        return true;
    }
    if (jobs_cond_true(p->status, "Suspended")) {
        snprintf(msg, sizeof(msg), "%s %s is resumed.", p->c.kind->kind, p->c.name);
        set_cond(p, "Suspended", "False", "Resumed", msg);
        event(p, "Normal", kreason(p, "Resumed", reason, sizeof(reason)), msg);
        json_object_set_new(p->status, "startTime", json_string(p->nows));
    }
    return false;
}

static time_t status_time(const pass *p, const char *key)
{
    time_t t;
    const char *s = json_string_value(json_object_get(p->status, key));
    return s && ty_time_parse(s, &t) == 0 ? t : 0;
}

/* Returns true when the deadline has passed (the job is now Failed). */
static bool deadline(pass *p)
{
    long long ads = run_int(p, "activeDeadlineSeconds", -1);
    time_t start = status_time(p, "startTime");
    char msg[512];

    if (ads < 0 || !start)
        return false;
    if (p->now < start + ads) {
        wake(p, start + (time_t)ads);
        return false;
    }
    snprintf(msg, sizeof(msg),
             "Job %s has failed because it was active longer than specified deadline",
             p->c.name);
    finish(p, false, "DeadlineExceeded", msg);
    return true;
}

static void cleanup_and_ttl(pass *p)
{
    const char *policy = json_string_value(json_object_get(run_policy(p), "cleanPodPolicy"));
    long long ttl = run_int(p, "ttlSecondsAfterFinished", -1);
    time_t done = status_time(p, "completionTime"), due;

    if (!policy)
        policy = p->c.kind->default_clean_pod_policy;
    if (strcmp(policy, "All") == 0)
        delete_all(p, false);
    else if (strcmp(policy, "Running") == 0)
        delete_all(p, true);
    if (kit_ttl_expire(p->s, api_store_key(p->c.kind->resource), p->job, done, ttl, p->now,
                       &due) == 1)
        wake(p, due);
}

/* ---- the pass ---- */

static void created(pass *p)
{
    char msg[512], reason[64];

    if (json_array_size(json_object_get(p->status, "conditions")))
        return;
    snprintf(msg, sizeof(msg), "%s %s is created.", p->c.kind->kind, p->c.name);
    set_cond(p, "Created", "True", "Created", msg);
    event(p, "Normal", kreason(p, "Created", reason, sizeof(reason)), msg);
    jobs_metric_bump("training_operator_jobs_created_total", p->c.ns, p->c.kind);
}

static void init_counts(pass *p)
{
    for (size_t i = 0; i < KF_MAX_REPLICA_TYPES && p->c.kind->types[i].name; i++) {
        const char *t = p->c.kind->types[i].name;
        if (!kf_replica_spec(p->c.kind, p->job, t))
            continue;
        p->counts[p->ntypes] = (jf_counts){.type = t, .replicas = kf_replicas(p->c.kind, p->job, t)};
        p->ntypes++;
    }
}

/* Everything between "not finished before" and the status write. */
static void run(pass *p)
{
    bool done;

    if (suspend_or_resume(p)) {
        pass_replica_statuses(p, false);
        return;
    }
    if (!json_object_get(p->status, "startTime"))
        json_object_set_new(p->status, "startTime", json_string(p->nows));
    observe(p);
    if (deadline(p)) {
        pass_replica_statuses(p, false);
        cleanup_and_ttl(p);
        return;
    }
    done = decide(p);
    if (!done) {
        create_missing(p);
        update_running(p);
    }
    pass_replica_statuses(p, done && jobs_cond_true(p->status, "Succeeded"));
    if (done)
        cleanup_and_ttl(p);
}

static int pass_init(pass *p, ty_kc *s, const kf_kind *k, json_t *job)
{
    const json_t *meta = json_object_get(job, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rs = annotation(job, JOBS_ANN_RESTARTS);
    const char *gang = annotation(job, JOBS_ANN_RESTART_POLICY);
    json_t *st = json_object_get(job, "status");

    p->s = s;
    p->fw = jobs_framework_for(k);
    p->job = job;
    p->c = (job_ctx){.kind = k, .job = job,
                     .name = json_string_value(json_object_get(meta, "name")),
                     .ns = json_string_value(json_object_get(meta, "namespace"))};
    if (!p->fw || !uid || !p->c.name || !p->c.ns)
        return -1;
    p->status = json_is_object(st) ? json_deep_copy(st) : json_object();
    ty_tree_arena_begin(TY_TREES_BRIEF);
    p->pods = jobs_list_owned(s, "pods", p->c.ns, p->c.name, uid);
    jobs_list_owned_objects(s, "services", p->c.ns, uid, &p->svcs);
    ty_tree_arena_end();
    p->present = json_object();
    p->retry = json_array();
    p->failed = json_array();
    p->restarts = rs ? strtoll(rs, NULL, 10) : 0;
    p->gang = gang && strcmp(gang, "gang") == 0;
    p->now = time(NULL);
    ty_time_format(p->now, p->nows, sizeof(p->nows));
    init_counts(p);
    return 0;
}

static void pass_free(pass *p)
{
    for (size_t i = 0; i < p->nevents; i++) /* a pass that ended before its commit */
        kc_op_clear(&p->events[i]);
    json_decref(p->job);
    json_decref(p->status);
    json_decref(p->pods);
    kc_list_free(&p->svcs);
    json_decref(p->present);
    json_decref(p->retry);
    json_decref(p->failed);
}

/* runPolicy.managedBy names another controller (Kueue's MultiKueue): that
 * one runs the job and writes its status, as the training operator and
 * mpi-operator leave such a job alone. A kind with its own managedBy list
 * (MPIJob v2beta1) names its own controller first; the others are the
 * training operator's. */
static bool managed_elsewhere(const kf_kind *k, const json_t *job)
{
    const char *by = json_string_value(json_object_get(
        json_object_get(json_object_get(job, "spec"), "runPolicy"), "managedBy"));

    return by && *by &&
           strcmp(by, k->managed_by ? k->managed_by[0] : "kubeflow.org/training-operator") != 0;
}

int jobs_reconcile(ty_kc *s, const kf_kind *k, const char *ns, const char *name,
                   time_t *wake_at, char *wrote_rv)
{
    ty_obj *o = kc_get(s, api_store_key(k->resource), ns, name, NULL);
    pass p = {.wake_at = wake_at, .wrote_rv = wrote_rv};
    json_t *job;

    if (!o)
        return 0; /* deleted: the garbage collector takes its pods */
    ty_tree_arena_begin(TY_TREES_BRIEF);
    job = ty_obj_json_copy(o);
    ty_tree_arena_end();
    ty_obj_unref(o);
    if (!job || jobs_is_terminating(job) || managed_elsewhere(k, job)) {
        json_decref(job);
        return 0;
    }
    if (k->engine_form)
        k->engine_form(k, job); /* MSJob kubeflow.org/v1's list, as a map */
    kf_default_ports(k, job);
    if (pass_init(&p, s, k, job) < 0) {
        pass_free(&p);
        return 0;
    }
    created(&p);
    if (jobs_finished(p.status))
        cleanup_and_ttl(&p);
    else
        run(&p);
    pass_commit(&p);
    pass_free(&p);
    return p.rc;
}

/* ---- metrics ---- */

void jobs_metrics_declare(void)
{
    ty_metric_declare("training_operator_jobs_created_total", TY_COUNTER,
                      "Counts number of jobs created");
    ty_metric_declare("training_operator_jobs_deleted_total", TY_COUNTER,
                      "Counts number of jobs deleted");
    ty_metric_declare("training_operator_jobs_successful_total", TY_COUNTER,
                      "Counts number of jobs successful");
    ty_metric_declare("training_operator_jobs_failed_total", TY_COUNTER,
                      "Counts number of jobs failed");
    ty_metric_declare("training_operator_jobs_restarted_total", TY_COUNTER,
                      "Counts number of jobs restarted");
}

void jobs_metric_bump(const char *metric, const char *ns, const kf_kind *k)
{
    char labels[512];

    snprintf(labels, sizeof(labels), "job_namespace=\"%s\",framework=\"%s\"", ns ? ns : "",
             k->framework);
    ty_metric_add(metric, labels, 1);
}
