/* reconcile.c - one pass over one TrainJob (tj_int.h): snapshot its
 * runtime when it first starts, recompute the plan, observe its pods per
 * replicated job and job index, apply suspend, the active deadline, the
 * success and failure policies, create what dependsOn lets be created
 * once the gang is admitted, and write conditions and jobsStatus.
 * Level-triggered and idempotent: everything it needs is in the job (its
 * snapshot and restart count annotations, its status) and its pods. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/mpi_agent.h"
#include "api/registry.h"
#include "api/trainer.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "controller/kit.h"
#include "controller/trainer/tj_int.h"
#include "controller/trainer/tpass.h"
#include "controller/trainer_progress.h"
#include "controller/volcano/vc_int.h" /* vc_ssh_keygen: the one key maker */

#define MAX_CONDITIONS 8 /* upstream's CRD keeps at most 8 */

const char *tp_str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

static const json_t *tj_spec(const tpass *p) { return json_object_get(p->job, "spec"); }

void tp_event(tpass *p, const char *type, const char *reason, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ty_event(p->s, p->job, type, reason, TJ_COMPONENT, "%s", msg);
}

void tp_set_cond(tpass *p, const char *type, const char *cstatus, const char *reason,
                 const char *msg)
{
    json_t *conds;

    if (!kit_cond_set(p->status, type, cstatus, reason, msg, p->now, NULL))
        return;
    /* upstream's CRD keeps at most 8: the oldest go */
    conds = json_object_get(p->status, "conditions");
    while (json_array_size(conds) > MAX_CONDITIONS)
        json_array_remove(conds, 0);
    if (!strcmp(cstatus, "True"))
        tp_event(p, strcmp(type, "Failed") ? "Normal" : "Warning", reason, "%s", msg);
}

/* ---- the runtime snapshot ---- */

/* The job's trainyard.io/elastic-nodes, into the snapshot being taken: the
 * bounds stay as the job first ran (admission checked the value and the
 * runtime when the job was made; one added later that does not parse is
 * left out, with a Warning). */
static void elastic_bounds(tpass *p)
{
    const char *v = tp_str_at(json_object_get(p->job, "metadata"), "annotations",
                           TRAINER_ANN_ELASTIC);
    long long min, max;

    if (!v)
        return;
    if (trainer_elastic_bounds(v, &min, &max) < 0) {
        tp_event(p, "Warning", "InvalidElasticNodes",
              TRAINER_ANN_ELASTIC " \"%.64s\" is not MIN:MAX: the job runs with numNodes", v);
        return;
    }
    json_object_set_new(p->snapshot, "elastic", json_pack("{s:I, s:I}", "minNodes",
                                                          (json_int_t)min, "maxNodes",
                                                          (json_int_t)max));
}

/* The snapshot the job keeps (borrowed from p->job, or p->snapshot), or
 * NULL: taken now from the runtime it names when it has none yet. */
static const json_t *snapshot_of(tpass *p)
{
    const char *text = tp_str_at(json_object_get(p->job, "metadata"), "annotations",
                              TJ_ANN_SNAPSHOT);
    const json_t *ref = json_object_get(tj_spec(p), "runtimeRef");
    const char *kind = json_string_value(json_object_get(ref, "kind")) ?: "ClusterTrainingRuntime";
    const char *rname = json_string_value(json_object_get(ref, "name")) ?: "";
    bool cluster = strcmp(kind, "TrainingRuntime") != 0;
    ty_error err;
    ty_obj *o;

    if (text) {
        json_error_t jerr;
        p->stored = json_loads(text, 0, &jerr);
        if (json_is_object(p->stored))
            return p->stored;
        ty_warn("trainjob %s/%s: %s unreadable (%s): taken again", p->ns, p->name,
                TJ_ANN_SNAPSHOT, jerr.text);
    }
    ty_error_init(&err);
    o = kc_get(p->s,
               api_store_key(cluster ? &api_clustertrainingruntime : &api_trainingruntime),
               cluster ? "" : p->ns, rname, &err);
    if (!o) {
        if (err.code != TY_ENOTFOUND)
            p->rc = -1;
        else
            tp_set_cond(p, "Failed", "True", "TrainingRuntimeNotSupported",
                     cluster ? "ClusterTrainingRuntime not found" : "TrainingRuntime not found");
        ty_error_clear(&err);
        return NULL;
    }
    p->snapshot = tj_snapshot(ty_obj_json(o));
    ty_obj_unref(o);
    elastic_bounds(p);
    return p->snapshot;
}

/* ---- observe ---- */

static rj_obs *obs_named(tpass *p, const char *name)
{
    for (size_t i = 0; name && i < p->nobs; i++)
        if (!strcmp(p->obs[i].name, name))
            return &p->obs[i];
    return NULL;
}

/* The pods of one job (a replicated job's job index) by state. */
typedef struct job_pods {
    long long present, running, succeeded, failed;
} job_pods;

static void count_pods(const tpass *p, const char *rjob, long long replicas, job_pods *jobs)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod) {
        const json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
        const char *rn = json_string_value(json_object_get(labels, TJ_LABEL_RJOB));
        const char *ji = json_string_value(json_object_get(labels, TJ_LABEL_JOB_INDEX));
        const char *phase = kit_pod_phase(pod);
        long long j = ji ? atoll(ji) : -1;
        if (!rn || strcmp(rn, rjob) || j < 0 || j >= replicas || kit_is_terminating(pod) ||
            json_object_get(p->replaced, tp_str_at(pod, "metadata", "name") ?: "") ||
            json_object_get(p->retried, tp_str_at(pod, "metadata", "name") ?: ""))
            continue;
        jobs[j].present++;
        if (!strcmp(phase, "Running"))
            jobs[j].running++;
        else if (!strcmp(phase, "Succeeded"))
            jobs[j].succeeded++;
        else if (!strcmp(phase, "Failed"))
            jobs[j].failed++;
    }
}

/* Per replicated job, its jobs as JobSet counts them: failed (a pod
 * failed), succeeded (every completion), else active once it has pods, and
 * ready when they all run. */
static void observe(tpass *p)
{
    json_t *rj;
    size_t i;

    p->nobs = json_array_size(json_object_get(p->plan, "rjobs"));
    p->obs = calloc(p->nobs ? p->nobs : 1, sizeof(*p->obs));
    json_array_foreach(json_object_get(p->plan, "rjobs"), i, rj) {
        rj_obs *o = &p->obs[i];
        job_pods *jobs;
        o->rj = rj;
        o->name = json_string_value(json_object_get(rj, "name"));
        o->replicas = json_integer_value(json_object_get(rj, "replicas"));
        o->pods = json_integer_value(json_object_get(rj, "pods"));
        /* the plan bounds replicas (TJ_MAX_PODS) */
        if (!(jobs = calloc((size_t)o->replicas + 1, sizeof(*jobs)))) {
            p->rc = -1;
            continue;
        }
        count_pods(p, o->name, o->replicas, jobs);
        for (long long j = 0; tp_elastic_rjob(p, rj) && j < o->replicas; j++) {
            /* elastic: torchrun ends every node together, so a node that
             * succeeded ends the job once none runs (nodes still waiting
             * for room never join); ready from MIN running nodes */
            if (jobs[j].succeeded && !jobs[j].running)
                o->succeeded++;
            else if (jobs[j].failed && !jobs[j].succeeded)
                o->failed++;
            else if (jobs[j].present) {
                o->active++;
                if (jobs[j].running + jobs[j].succeeded >= tp_elastic_min(p))
                    o->ready++;
            }
        }
        for (long long j = 0; !tp_elastic_rjob(p, rj) && j < o->replicas; j++) {
            if (jobs[j].failed)
                o->failed++;
            else if (jobs[j].succeeded >= o->pods)
                o->succeeded++;
            else if (jobs[j].present) {
                o->active++;
                if (jobs[j].running + jobs[j].succeeded >= o->pods)
                    o->ready++;
            }
        }
        free(jobs);
    }
}

static bool deps_met(tpass *p, const json_t *rj)
{
    json_t *d;
    size_t i;

    json_array_foreach(json_object_get(rj, "dependsOn"), i, d) {
        rj_obs *o = obs_named(p, json_string_value(json_object_get(d, "name")));
        const char *want = json_string_value(json_object_get(d, "status")) ?: "Ready";
        if (!o)
            continue;
        if (!strcmp(want, "Complete") ? o->succeeded < o->replicas
                                      : o->ready + o->succeeded < o->replicas)
            return false;
    }
    return true;
}

static bool targeted(const json_t *targets, const char *name)
{
    json_t *t;
    size_t i;

    if (!json_array_size(targets))
        return true;
    json_array_foreach(targets, i, t)
        if (!strcmp(json_string_value(t) ?: "", name))
            return true;
    return false;
}

/* successPolicy: All (default) needs every job of every targeted replicated
 * job (default: all of them) to have succeeded; Any one of them. */
static bool succeeded(tpass *p)
{
    const json_t *sp = json_object_get(p->plan, "successPolicy");
    const char *op = json_string_value(json_object_get(sp, "operator")) ?: "All";
    const json_t *targets = json_object_get(sp, "targetReplicatedJobs");
    bool any = !strcmp(op, "Any"), all = true, some = false, seen = false;

    for (size_t i = 0; i < p->nobs; i++) {
        if (!targeted(targets, p->obs[i].name))
            continue;
        seen = true;
        if (p->obs[i].succeeded < p->obs[i].replicas)
            all = false;
        if (p->obs[i].succeeded > 0)
            some = true;
    }
    return seen && (any ? some : all);
}

static const char *failed_rjob(tpass *p)
{
    for (size_t i = 0; i < p->nobs; i++)
        if (p->obs[i].failed)
            return p->obs[i].name;
    return NULL;
}

/* ---- act ---- */

/* Deletes the job's pods: all, or only those not finished. */
void tp_kill_pods(tpass *p, bool only_active)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod) {
        const char *phase = kit_pod_phase(pod);
        if (kit_is_terminating(pod) ||
            (only_active && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
            continue;
        if (kit_delete(p->s, api_store_key(&api_pod), pod, p->job, TJ_COMPONENT) < 0)
            p->rc = -1;
    }
}

/* The gang's queue: the Volcano annotation on the TrainJob, else on the
 * JobSet template (runtime or runtime patch), else the Kueue label. */
static const char *queue_of(tpass *p)
{
    const json_t *meta = json_object_get(p->job, "metadata");
    const char *q = tp_str_at(meta, "annotations", TJ_ANN_VOLCANO_QUEUE);

    if (!q || !*q)
        q = json_string_value(json_object_get(p->plan, "queue"));
    if (!q || !*q)
        q = tp_str_at(meta, "labels", TJ_LABEL_KUEUE_QUEUE);
    return q && *q ? q : "default";
}

/* The gang: a PodGroup named after the job, every pod that starts first
 * (replicated jobs without dependsOn: one waiting for others is made only
 * once they are Ready or Complete, and a gang that waits for pods made only
 * after it runs never runs; of an elastic job's nodes MIN) and their
 * requests summed. 1: admitted. */
static int podgroup_gate(tpass *p)
{
    json_t *sums = json_object(), *spec, *pg, *rj;
    long long members = 0;
    const char *pc = NULL;
    size_t i;

    json_array_foreach(json_object_get(p->plan, "rjobs"), i, rj) {
        long long n = json_integer_value(json_object_get(rj, "replicas")) *
                      (tp_elastic_rjob(p, rj) ? tp_elastic_min(p)
                                           : json_integer_value(json_object_get(rj, "pods")));
        const json_t *ps = json_object_get(json_object_get(rj, "template"), "spec");
        if (json_array_size(json_object_get(rj, "dependsOn")))
            continue;
        /* InOrder: the first replicated job; the others join the gang */
        if (i > 0 && json_is_true(json_object_get(p->plan, "startupInOrder")))
            break;
        members += n;
        kit_add_requests(sums, ps, n);
        if (!pc)
            pc = json_string_value(json_object_get(ps, "priorityClassName"));
    }
    spec = json_pack("{s:I, s:s, s:o}", "minMember", (json_int_t)members, "queue", queue_of(p),
                     "minResources", kit_quantities(sums));
    json_decref(sums);
    if (pc && *pc)
        json_object_set_new(spec, "priorityClassName", json_string(pc));
    pg = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:o}", "apiVersion",
                   "scheduling.volcano.sh/v1beta1", "kind", "PodGroup", "metadata", "name",
                   p->name, "namespace", p->ns, "ownerReferences", kit_owner_ref(p->job),
                   "spec", spec);
    return kit_pg_gate(p->s, p->ns, pg);
}

static void create_owned(tpass *p, const api_resource *res, json_t *obj)
{
    ty_error err;

    ty_error_init(&err);
    if (kit_create(p->s, res, obj, p->job, TJ_COMPONENT, &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
}

/* The headless Service `<subdomain>` every pod is reachable under. */
static void ensure_service(tpass *p)
{
    json_t *sel = json_pack("{s:s}", TJ_LABEL_JOBSET, p->name), *svc;

    svc = kit_service_new(p->job, json_string_value(json_object_get(p->plan, "subdomain")), sel,
                          sel, NULL, true);
    json_object_set_new(json_object_get(svc, "spec"), "publishNotReadyAddresses", json_true());
    json_decref(sel);
    create_owned(p, &api_service, svc);
}

/* MPI: the hostfile ConfigMap (with the rsh agent) and the ssh Secret.
 * false while the Secret could not be made: pods would not start. */
static bool ensure_mpi(tpass *p)
{
    char cm[300], secret[300], *hosts, *priv = NULL, *pub = NULL;
    ty_error err;
    ty_obj *o;

    if (strcmp(json_string_value(json_object_get(p->plan, "policy")), "mpi"))
        return true;
    snprintf(cm, sizeof(cm), "%s-mpi-hostfile", p->name);
    hosts = tj_mpi_hostfile(p->plan, p->name);
    create_owned(p, &api_configmap,
                 json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:{s:s, s:s}}", "apiVersion", "v1",
                           "kind", "ConfigMap", "metadata", "name", cm, "namespace", p->ns,
                           "ownerReferences", kit_owner_ref(p->job), "data", "hostfile", hosts,
                           MPI_AGENT_FILE, mpi_agent_script()));
    free(hosts);
    snprintf(secret, sizeof(secret), "%s-mpi-ssh-auth", p->name);
    ty_error_init(&err);
    if ((o = kc_get(p->s, api_store_key(&api_secret), p->ns, secret, &err))) {
        ty_obj_unref(o);
        return true;
    }
    ty_error_clear(&err);
    if (vc_ssh_keygen(p->name, &priv, &pub, &err) < 0) {
        tp_event(p, "Warning", "FailedCreateSecret", "ssh keys: %s", err.text);
        ty_error_clear(&err);
        p->rc = -1;
        return false;
    }
    create_owned(p, &api_secret,
                 json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:s, s:{s:s, s:s, s:s}}",
                           "apiVersion", "v1", "kind", "Secret", "metadata", "name", secret,
                           "namespace", p->ns, "ownerReferences", kit_owner_ref(p->job),
                           "type", "Opaque", "stringData", "id_rsa", priv, "ssh-publickey",
                           pub, "authorized_keys", pub));
    free(priv);
    free(pub);
    return p->rc == 0;
}

/* JobSet's volumeClaimPolicies: a PVC `<template>-<job>` per template,
 * labelled with the JobSet's name label, controlled by the job only when
 * the policy's retentionPolicy says Delete (its default when given; a
 * policy without one keeps its PVCs, as JobSet does). */
static void ensure_claim_policies(tpass *p)
{
    json_t *vcp, *t;
    size_t i, k;

    json_array_foreach(json_object_get(p->plan, "claimPolicies"), i, vcp) {
        const json_t *rp = json_object_get(vcp, "retentionPolicy");
        bool owned = json_is_object(rp) &&
                     !strcmp(json_string_value(json_object_get(rp, "whenDeleted")) ?: "Delete",
                             "Delete");
        json_array_foreach(json_object_get(vcp, "templates"), k, t) {
            const json_t *tm = json_object_get(t, "metadata");
            const char *tname = json_string_value(json_object_get(tm, "name"));
            json_t *labels, *pvc;
            char name[600];
            if (!tname)
                continue;
            tj_claim_name(p->name, tname, name, sizeof(name));
            labels = json_is_object(json_object_get(tm, "labels"))
                         ? json_deep_copy(json_object_get(tm, "labels"))
                         : json_object();
            json_object_set_new(labels, TJ_LABEL_JOBSET, json_string(p->name));
            pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:o}", "apiVersion", "v1", "kind",
                            "PersistentVolumeClaim", "metadata", "name", name, "namespace",
                            p->ns, "labels", labels, "spec",
                            json_is_object(json_object_get(t, "spec"))
                                ? json_deep_copy(json_object_get(t, "spec"))
                                : json_object());
            if (json_is_object(json_object_get(tm, "annotations")))
                json_object_set(json_object_get(pvc, "metadata"), "annotations",
                                json_object_get(tm, "annotations"));
            if (owned)
                json_object_set_new(json_object_get(pvc, "metadata"), "ownerReferences",
                                    json_pack("[o]", kit_owner_ref(p->job)));
            create_owned(p, &api_pvc, pvc);
        }
    }
}

/* The claim Trainyard's initializer steps fill and the trainer reads
 * (tj_add_initializers): 1Gi, ReadWriteMany, the default class. */
static void ensure_claim(tpass *p)
{
    const char *claim = json_string_value(json_object_get(p->plan, "initializerClaim"));

    if (!claim)
        return;
    create_owned(p, &api_pvc,
                 json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:{s:[s], s:{s:{s:s}}}}",
                           "apiVersion", "v1", "kind", "PersistentVolumeClaim", "metadata",
                           "name", claim, "namespace", p->ns, "ownerReferences",
                           kit_owner_ref(p->job), "spec", "accessModes", "ReadWriteMany",
                           "resources", "requests", "storage", "1Gi"));
}

const json_t *tp_pod_named(const tpass *p, const char *name)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod)
        if (!strcmp(tp_str_at(pod, "metadata", "name") ?: "", name))
            return pod;
    return NULL;
}

static bool pod_present(const tpass *p, const char *name)
{
    return tp_pod_named(p, name) != NULL;
}

/* The pods to make now: missing, of replicated jobs whose dependsOn is
 * met; each as [rjob, job index, pod index] (caller owns the array). */
static json_t *missing_pods(tpass *p)
{
    bool in_order = json_is_true(json_object_get(p->plan, "startupInOrder"));
    json_t *out = json_array(), *rj;
    size_t i;

    json_array_foreach(json_object_get(p->plan, "rjobs"), i, rj) {
        const char *rname = json_string_value(json_object_get(rj, "name"));
        long long reps = json_integer_value(json_object_get(rj, "replicas"));
        long long pods = json_integer_value(json_object_get(rj, "pods"));
        /* startupPolicy InOrder: each replicated job once the ones before
         * it are ready */
        if (in_order && i > 0) {
            const rj_obs *prev = &p->obs[i - 1];
            if (prev->ready + prev->succeeded < prev->replicas)
                break;
        }
        if (!deps_met(p, rj))
            continue;
        for (long long j = 0; j < reps; j++)
            for (long long k = 0; k < pods; k++) {
                char name[300];
                tj_pod_name(p->name, rname, j, k, name, sizeof(name));
                if (tp_elastic_rjob(p, rj) && !tp_elastic_may_make(p, k))
                    continue;
                if (!pod_present(p, name))
                    json_array_append_new(out, json_pack("[O, I, I]", rj, (json_int_t)j,
                                                         (json_int_t)k));
            }
    }
    return out;
}

/* The progress endpoint's token Secret, before the first trainer pod that
 * mounts it (controller/trainer_progress.h). false: make no pods now; the
 * pass is retried (the server not listening yet, or the Secret not made). */
static bool ensure_progress(tpass *p)
{
    trainer_progress_cfg cfg;
    int st = trainer_progress_current(&cfg);
    ty_error err;
    bool ok = true;

    if (st == 0)
        return true;
    if (st < 0) {
        p->rc = -1; /* the server's URL comes when it listens */
        return false;
    }
    ty_error_init(&err);
    if (trainer_progress_ensure_secret(p->s, &cfg, p->job, &err) < 0) {
        ty_event(p->s, p->job, "Warning", "FailedCreateSecret", TJ_COMPONENT,
                 "the progress token Secret: %s", err.text);
        p->rc = -1;
        ok = false;
    }
    ty_error_clear(&err);
    trainer_progress_cfg_clear(&cfg);
    return ok;
}

/* failurePolicy.restartStrategy BlockingRecreate: after a whole-set
 * restart no pod is made while any pod of an earlier attempt is still
 * there (Recreate makes each pod again once its own name is free). */
static bool blocked_by_old_attempt(const tpass *p)
{
    const char *how = tp_str_at(p->plan, "failurePolicy", "restartStrategy");
    json_t *pod;
    size_t i;

    if (!how || strcmp(how, "BlockingRecreate"))
        return false;
    json_array_foreach(p->pods, i, pod) {
        const char *a = tp_str_at(json_object_get(pod, "metadata"), "labels",
                               TJ_LABEL_RESTART_ATTEMPT);
        if (kit_is_terminating(pod) || atoll(a ?: "0") < p->restarts)
            return true;
    }
    return false;
}

/* Once the gang is admitted: the objects the pods need, then the missing
 * pods, written together. A pass with nothing missing writes nothing. */
static void create_pods(tpass *p)
{
    json_t *todo = missing_pods(p), *t;
    kit_batch b = {0};
    size_t i;

    if (!json_array_size(todo) || blocked_by_old_attempt(p)) {
        json_decref(todo);
        return;
    }
    switch (podgroup_gate(p)) {
    case 1:
        break;
    case 0:
        json_decref(todo);
        return;
    default:
        p->rc = -1;
        json_decref(todo);
        return;
    }
    if (!ensure_progress(p)) {
        json_decref(todo);
        return;
    }
    ensure_service(p);
    ensure_claim(p);
    ensure_claim_policies(p);
    if (!ensure_mpi(p)) {
        json_decref(todo);
        return;
    }
    json_array_foreach(todo, i, t) {
        ty_error err;
        ty_error_init(&err);
        if (kit_batch_add(&b, &api_pod,
                          tj_build_pod(p->plan, p->job, json_array_get(t, 0),
                                       json_integer_value(json_array_get(t, 1)),
                                       json_integer_value(json_array_get(t, 2))),
                          p->job, TJ_COMPONENT, p->s, &err) < 0)
            p->rc = -1;
        ty_error_clear(&err);
    }
    json_decref(todo);
    if (kit_batch_commit(&b, p->s, p->job, TJ_COMPONENT))
        p->rc = -1;
    kit_batch_free(&b);
}

/* ---- the pass ---- */

static time_t parse_time(const char *s)
{
    time_t t;

    return s && ty_time_parse(s, &t) == 0 ? t : 0;
}

/* When the active deadline counts from: the last resume, else creation. */
static time_t started_at(tpass *p)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(p->status, "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Suspended") &&
            !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "False"))
            return parse_time(json_string_value(json_object_get(c, "lastTransitionTime")));
    return parse_time(tp_str_at(p->job, "metadata", "creationTimestamp"));
}

/* The extension trainyard.io/ttl-seconds-after-finished: the job goes that
 * long after its Complete or Failed condition came (the v1 kinds'
 * runPolicy.ttlSecondsAfterFinished; the garbage collector takes its pods,
 * whose logs the runtime keeps for its retention). */
static void ttl_after_finished(tpass *p)
{
    const char *v = tp_str_at(json_object_get(p->job, "metadata"), "annotations", TJ_ANN_TTL);
    time_t done = 0, due;
    json_t *c;
    size_t i;
    char *end;
    long long ttl;

    if (!v || !*v)
        return;
    ttl = strtoll(v, &end, 10);
    if (*end || ttl < 0)
        return; /* admission refuses it; one stored before is ignored */
    json_array_foreach(json_object_get(p->status, "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type")) ?: "";
        if ((!strcmp(t, "Complete") || !strcmp(t, "Failed")) &&
            !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True"))
            done = parse_time(json_string_value(json_object_get(c, "lastTransitionTime")));
    }
    if (!done)
        return;
    if (kit_ttl_expire(p->s, api_store_key(&api_trainjob), p->job, done, ttl, time(NULL),
                       &due) == 1 &&
        (!*p->wake_at || due < *p->wake_at))
        *p->wake_at = due;
}

static bool deadline_passed(tpass *p)
{
    const json_t *ads = json_object_get(tj_spec(p), "activeDeadlineSeconds");
    time_t due, now = time(NULL);

    if (!json_is_integer(ads))
        return false;
    due = started_at(p) + (time_t)json_integer_value(ads);
    if (now >= due)
        return true;
    if (!*p->wake_at || due < *p->wake_at)
        *p->wake_at = due;
    return false;
}

static void run(tpass *p)
{
    const json_t *snap;
    const char *bad;
    ty_error err;
    bool suspend = json_is_true(json_object_get(tj_spec(p), "suspend"));

    if (kit_cond_true(p->status, "Complete") || kit_cond_true(p->status, "Failed")) {
        if (kit_list_owned_views(p->s, api_store_key(&api_pod), p->ns, p->uid, NULL, NULL,
                                 &p->pods) == 0)
            tp_kill_pods(p, true);
        ttl_after_finished(p);
        return;
    }
    if (!(snap = snapshot_of(p)))
        return;
    ty_error_init(&err);
    if (!(p->plan = tj_plan(p->job, snap, &err))) {
        tp_set_cond(p, "Failed", "True",
                 err.code == TY_EINVALID ? "TrainingRuntimeNotSupported" : "InvalidTrainJob",
                 err.text);
        ty_error_clear(&err);
        return;
    }
    if (kit_list_owned_views(p->s, api_store_key(&api_pod), p->ns, p->uid, NULL, NULL,
                             &p->pods) < 0) {
        p->rc = -1;
        return;
    }
    p->restarts = atoll(tp_str_at(json_object_get(p->job, "metadata"), "annotations",
                               TJ_ANN_RESTARTS) ?: "0");
    if (!suspend) {
        tp_elastic_replace(p);
        tp_job_retry(p);
    }
    observe(p);
    if (suspend) {
        tp_kill_pods(p, false);
        tp_set_cond(p, "Suspended", "True", "Suspended", "TrainJob is suspended");
        tp_jobs_status(p, true);
        return;
    }
    if (kit_cond_true(p->status, "Suspended"))
        tp_set_cond(p, "Suspended", "False", "Resumed", "TrainJob is resumed");
    tp_jobs_status(p, false);
    if (deadline_passed(p)) {
        tp_kill_pods(p, true);
        tp_set_cond(p, "Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline");
        return;
    }
    if (succeeded(p)) {
        tp_kill_pods(p, true);
        tp_set_cond(p, "Complete", "True", "AllJobsCompleted", "jobset completed successfully");
        return;
    }
    if ((bad = failed_rjob(p)))
        tp_on_failure(p, bad);
    else
        create_pods(p);
}

int tj_reconcile(ty_kc *s, const char *ns, const char *name, time_t *wake_at)
{
    tpass p = {.s = s, .ns = ns, .name = name, .wake_at = wake_at, .replaced = json_object(),
                 .retried = json_object()};
    const json_t *st;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_get(s, api_store_key(&api_trainjob), ns, name, &err);
    if (!o) {
        int rc = err.code == TY_ENOTFOUND ? 0 : -1;
        ty_error_clear(&err);
        return rc;
    }
    p.job = ty_obj_json_copy(o);
    ty_obj_unref(o);
    p.uid = tp_str_at(p.job, "metadata", "uid");
    if (p.uid && kit_is_terminating(p.job)) {
        int rc = tj_record_finalize(s, p.job);
        json_decref(p.job);
        return rc;
    }
    /* a job another controller manages (MultiKueue) is left to it */
    if (!p.uid ||
        strcmp(tp_str_at(p.job, "spec", "managedBy") ?: TRAINER_MANAGED_BY_DEFAULT,
               TRAINER_MANAGED_BY_DEFAULT)) {
        json_decref(p.job);
        return 0;
    }
    st = json_object_get(p.job, "status");
    p.status = json_is_object(st) ? json_deep_copy(st) : json_object();
    ty_time_now(p.now, sizeof(p.now));
    run(&p);
    tp_commit(&p);
    free(p.obs);
    json_decref(p.snapshot);
    json_decref(p.stored);
    json_decref(p.plan);
    json_decref(p.pods);
    json_decref(p.replaced);
    json_decref(p.retried);
    json_decref(p.retries);
    json_decref(p.status);
    json_decref(p.job);
    return p.rc;
}
