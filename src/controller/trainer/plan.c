/* plan.c - what a TrainJob runs: its runtime's JobSet template with the
 * job's trainer, initializer, runtimePatches and podTemplateOverrides laid
 * over it (tj_int.h). Pure: the TrainJob and the snapshot of its runtime
 * in, a new plan out, so a pass recomputes it from what is stored and the
 * tests look at it alone. */
#include <stdio.h>
#include <string.h>

#include "api/trainer.h"
#include "controller/trainer/tj_int.h"

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

json_t *tj_snapshot(const json_t *runtime)
{
    const json_t *meta = json_object_get(runtime, "metadata");
    const char *fw = str_at(meta, "labels", TRAINER_FRAMEWORK_LABEL);
    const json_t *spec = json_object_get(runtime, "spec");

    return json_pack("{s:s, s:s, s:s, s:o}", "kind",
                     json_string_value(json_object_get(runtime, "kind")) ?: "",
                     "name", json_string_value(json_object_get(meta, "name")) ?: "",
                     "framework", fw ? fw : "",
                     "spec", json_is_object(spec) ? json_deep_copy(spec) : json_object());
}

void tj_pod_name(const char *job, const char *rjob, long long job_index, long long pod_index,
                 char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s-%lld-%lld", job, rjob, job_index, pod_index);
}

/* ---- overrides ---- */

static json_t *own_object(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);

    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(parent, key, o);
    }
    return o;
}

static json_t *own_array(json_t *parent, const char *key)
{
    json_t *a = json_object_get(parent, key);

    if (!json_is_array(a)) {
        a = json_array();
        json_object_set_new(parent, key, a);
    }
    return a;
}

static json_t *container_named(json_t *pod_spec, const char *list, const char *name)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(pod_spec, list), i, c)
        if (name && !strcmp(json_string_value(json_object_get(c, "name")) ?: "", name))
            return c;
    return NULL;
}

/* env entries of add (borrowed) over c's: one of the same name is replaced
 * in place, others appended (the runtime's order first, as upstream's
 * merge keeps it). */
static void merge_env(json_t *c, const json_t *add)
{
    json_t *env = own_array(c, "env"), *e, *have;
    size_t i, k;

    json_array_foreach(add, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        bool done = false;
        if (!name)
            continue;
        json_array_foreach(env, k, have)
            if (!strcmp(json_string_value(json_object_get(have, "name")) ?: "", name)) {
                json_array_set(env, k, e);
                done = true;
                break;
            }
        if (!done)
            json_array_append(env, e);
    }
}

static void merge_object(json_t *dst, const char *key, const json_t *src)
{
    if (json_is_object(src))
        json_object_update(own_object(dst, key), (json_t *)src);
}

static void append_all(json_t *dst, const char *key, const json_t *src)
{
    if (json_is_array(src))
        json_array_extend(own_array(dst, key), (json_t *)src);
}

/* A PodSpecPatch (runtimePatches, podTemplateOverrides) over a pod
 * template: metadata merged, lists appended, containers patched by name
 * (env merged, volumeMounts appended, securityContext replaced). */
static void apply_pod_patch(json_t *tmpl, const json_t *meta, const json_t *spec)
{
    static const char *const scalars[] = {"serviceAccountName", "securityContext", "affinity",
                                          "terminationGracePeriodSeconds", "priorityClassName",
                                          "schedulerName", NULL};
    static const char *const lists[] = {"volumes", "tolerations", "imagePullSecrets",
                                        "schedulingGates", NULL};
    static const char *const clists[] = {"containers", "initContainers", NULL};
    json_t *ps = own_object(tmpl, "spec"), *pc, *c;
    size_t i;

    if (json_is_object(meta)) {
        json_t *m = own_object(tmpl, "metadata");
        merge_object(m, "labels", json_object_get(meta, "labels"));
        merge_object(m, "annotations", json_object_get(meta, "annotations"));
    }
    if (!json_is_object(spec))
        return;
    for (size_t k = 0; scalars[k]; k++)
        if (json_object_get(spec, scalars[k]))
            json_object_set(ps, scalars[k], json_object_get(spec, scalars[k]));
    merge_object(ps, "nodeSelector", json_object_get(spec, "nodeSelector"));
    for (size_t k = 0; lists[k]; k++)
        append_all(ps, lists[k], json_object_get(spec, lists[k]));
    for (size_t k = 0; clists[k]; k++)
        json_array_foreach(json_object_get(spec, clists[k]), i, pc) {
            c = container_named(ps, clists[k],
                                json_string_value(json_object_get(pc, "name")));
            if (!c)
                continue;
            merge_env(c, json_object_get(pc, "env"));
            append_all(c, "volumeMounts", json_object_get(pc, "volumeMounts"));
            if (json_object_get(pc, "securityContext"))
                json_object_set(c, "securityContext", json_object_get(pc, "securityContext"));
        }
}

/* The TrainJob's trainer over the trainer ancestor's pod template: image on
 * every trainer container; command, args and env where the trainer runs
 * (container `node`, or the MPI `launcher`); resourcesPerNode on `node`. */
static void apply_trainer(json_t *tmpl, const json_t *trainer, bool mpi)
{
    json_t *ps = own_object(tmpl, "spec"), *c;
    const char *runs = mpi ? "launcher" : "node";
    size_t i;

    if (!json_is_object(trainer))
        return;
    json_array_foreach(json_object_get(ps, "containers"), i, c) {
        const char *name = json_string_value(json_object_get(c, "name")) ?: "";
        if (strcmp(name, "node") && strcmp(name, "launcher"))
            continue;
        if (json_is_string(json_object_get(trainer, "image")))
            json_object_set(c, "image", json_object_get(trainer, "image"));
        if (!strcmp(name, runs)) {
            if (json_is_array(json_object_get(trainer, "command")))
                json_object_set(c, "command", json_object_get(trainer, "command"));
            if (json_is_array(json_object_get(trainer, "args")))
                json_object_set(c, "args", json_object_get(trainer, "args"));
            merge_env(c, json_object_get(trainer, "env"));
        }
        if (!strcmp(name, "node") && json_is_object(json_object_get(trainer, "resourcesPerNode")))
            json_object_set(c, "resources", json_object_get(trainer, "resourcesPerNode"));
    }
}

/* An initializer's {storageUri, env, secretRef} over its container (named
 * after the step): STORAGE_URI and the env, the secret's keys as env. */
static void apply_initializer(json_t *tmpl, const json_t *init, const char *step)
{
    json_t *c = container_named(own_object(tmpl, "spec"), "containers", step), *env;
    const char *secret = str_at(init, "secretRef", "name");

    if (!json_is_object(init) || !c)
        return;
    env = json_array();
    if (json_is_string(json_object_get(init, "storageUri")))
        json_array_append_new(env, json_pack("{s:s, s:O}", "name", "STORAGE_URI", "value",
                                             json_object_get(init, "storageUri")));
    json_array_extend(env, json_object_get(init, "env"));
    merge_env(c, env);
    json_decref(env);
    if (secret)
        json_array_append_new(own_array(c, "envFrom"),
                              json_pack("{s:{s:s}}", "secretRef", "name", secret));
}

/* runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[] and
 * the v2.0-2.2 podTemplateOverrides[] that name rjob, in order. */
static void apply_patches(json_t *tmpl, const json_t *tjspec, const char *rjob)
{
    json_t *patch, *rj, *ov, *target;
    size_t i, k, t;

    json_array_foreach(json_object_get(tjspec, "runtimePatches"), i, patch) {
        const json_t *js = json_object_get(
            json_object_get(json_object_get(patch, "trainingRuntimeSpec"), "template"), "spec");
        json_array_foreach(json_object_get(js, "replicatedJobs"), k, rj) {
            const json_t *pt;
            if (strcmp(json_string_value(json_object_get(rj, "name")) ?: "", rjob))
                continue;
            pt = json_object_get(json_object_get(json_object_get(rj, "template"), "spec"),
                                 "template");
            apply_pod_patch(tmpl, json_object_get(pt, "metadata"), json_object_get(pt, "spec"));
        }
    }
    json_array_foreach(json_object_get(tjspec, "podTemplateOverrides"), i, ov) {
        json_array_foreach(json_object_get(ov, "targetJobs"), t, target)
            if (!strcmp(json_string_value(json_object_get(target, "name")) ?: "", rjob))
                apply_pod_patch(tmpl, json_object_get(ov, "metadata"),
                                json_object_get(ov, "spec"));
    }
}

/* ---- the plan ---- */

static const char *ml_policy(const json_t *ml)
{
    static const char *const kinds[] = {"torch", "mpi", "jax", "xgboost", "flux", NULL};

    for (size_t k = 0; kinds[k]; k++)
        if (json_is_object(json_object_get(ml, kinds[k])))
            return kinds[k];
    return "plain";
}

static json_t *mpi_policy(const json_t *ml)
{
    json_t *m = json_deep_copy(json_object_get(ml, "mpi"));

    if (!json_is_object(m))
        return NULL;
    if (!json_is_integer(json_object_get(m, "numProcPerNode")))
        json_object_set_new(m, "numProcPerNode", json_integer(1));
    if (!json_is_string(json_object_get(m, "sshAuthMountPath")))
        json_object_set_new(m, "sshAuthMountPath", json_string("/root/.ssh"));
    if (!json_is_string(json_object_get(m, "mpiImplementation")))
        json_object_set_new(m, "mpiImplementation", json_string("OpenMPI"));
    if (!json_is_boolean(json_object_get(m, "runLauncherAsNode")))
        json_object_set_new(m, "runLauncherAsNode", json_false());
    return m;
}

/* numProcPerNode: the TrainJob's, else the ML policy's (torch v2.0's may be
 * "auto"), else "auto" for torch and 1 for the others. */
static void procs_of(const json_t *trainer, const json_t *ml, const char *policy, char *buf,
                     size_t len)
{
    const json_t *v = json_object_get(trainer, "numProcPerNode");

    if (!v)
        v = json_object_get(json_object_get(ml, policy), "numProcPerNode");
    if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else
        snprintf(buf, len, "%s", strcmp(policy, "torch") ? "1" : "auto");
}

static long long completions_of(const json_t *job_tmpl)
{
    const json_t *js = json_object_get(job_tmpl, "spec");
    const json_t *v = json_object_get(js, "completions");

    if (!json_is_integer(v))
        v = json_object_get(js, "parallelism");
    return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : 1;
}

static json_t *plan_rjob(const json_t *rj, const json_t *tjspec, const char *policy,
                         long long num_nodes, const json_t *mpi)
{
    const char *name = json_string_value(json_object_get(rj, "name"));
    const json_t *jt = json_object_get(rj, "template");
    const json_t *reps = json_object_get(rj, "replicas");
    const char *ancestor = str_at(json_object_get(jt, "metadata"), "labels",
                                  TRAINER_ANCESTOR_LABEL);
    json_t *tmpl = json_deep_copy(json_object_get(json_object_get(jt, "spec"), "template"));
    long long pods = completions_of(jt);
    const json_t *deps, *backoff = json_object_get(json_object_get(jt, "spec"), "backoffLimit");

    if (!json_is_object(tmpl))
        tmpl = json_object();
    if (!ancestor) /* some runtimes label the pod template instead */
        ancestor = str_at(json_object_get(tmpl, "metadata"), "labels", TRAINER_ANCESTOR_LABEL);
    ancestor = ancestor ? ancestor : "";
    if (!strcmp(ancestor, "trainer")) {
        apply_trainer(tmpl, json_object_get(tjspec, "trainer"), !strcmp(policy, "mpi"));
        if (!strcmp(name, "node")) {
            pods = num_nodes;
            if (json_is_true(json_object_get(mpi, "runLauncherAsNode")))
                pods = num_nodes > 1 ? num_nodes - 1 : 0;
        }
    } else if (!strcmp(ancestor, "dataset-initializer")) {
        apply_initializer(tmpl, json_object_get(json_object_get(tjspec, "initializer"), "dataset"),
                          ancestor);
    } else if (!strcmp(ancestor, "model-initializer")) {
        apply_initializer(tmpl, json_object_get(json_object_get(tjspec, "initializer"), "model"),
                          ancestor);
    }
    apply_patches(tmpl, tjspec, name);
    deps = json_object_get(rj, "dependsOn");
    return json_pack("{s:s, s:I, s:I, s:s, s:o, s:o, s:I}", "name", name, "replicas",
                     (json_int_t)(json_is_integer(reps) ? json_integer_value(reps) : 1), "pods",
                     (json_int_t)pods, "ancestor", ancestor, "dependsOn",
                     json_is_array(deps) ? json_deep_copy(deps) : json_array(), "template", tmpl,
                     "backoffLimit",
                     (json_int_t)(json_is_integer(backoff) && json_integer_value(backoff) > 0
                                      ? json_integer_value(backoff)
                                      : 0));
}

/* The Volcano queue annotation of the JobSet template: a runtime patch's
 * (the last that names one) over the runtime's; NULL when neither names
 * one. Borrowed. */
static const char *template_queue(const json_t *tjspec, const json_t *rs)
{
    const char *q = str_at(json_object_get(json_object_get(rs, "template"), "metadata"),
                           "annotations", TJ_ANN_VOLCANO_QUEUE);
    json_t *patch;
    size_t i;

    json_array_foreach(json_object_get(tjspec, "runtimePatches"), i, patch) {
        const json_t *tm = json_object_get(
            json_object_get(json_object_get(patch, "trainingRuntimeSpec"), "template"),
            "metadata");
        const char *pq = str_at(tm, "annotations", TJ_ANN_VOLCANO_QUEUE);
        if (pq && *pq)
            q = pq;
    }
    return q && *q ? q : NULL;
}

/* The elastic bounds of a torch job: the snapshot's (the job's annotation
 * TRAINER_ANN_ELASTIC, taken with the runtime) over the runtime's v2.0
 * mlPolicy.torch.elasticPolicy (a missing bound is numNodes); NULL when
 * neither or not torch. {minNodes, maxNodes, maxRestarts (the policy's,
 * else TJ_ELASTIC_RESTARTS)}. */
static json_t *elastic_policy(const json_t *snapshot, const json_t *ml, long long num_nodes)
{
    const json_t *ep = json_object_get(json_object_get(ml, "torch"), "elasticPolicy");
    const json_t *ann = json_object_get(snapshot, "elastic");
    const json_t *mr = json_object_get(ep, "maxRestarts");
    const json_t *lo, *hi;
    long long min, max;

    if (!json_is_object(json_object_get(ml, "torch")))
        return NULL;
    if (json_is_object(ann)) {
        lo = json_object_get(ann, "minNodes");
        hi = json_object_get(ann, "maxNodes");
    } else {
        lo = json_object_get(ep, "minNodes");
        hi = json_object_get(ep, "maxNodes");
        if (!json_is_integer(lo) && !json_is_integer(hi))
            return NULL;
    }
    min = json_is_integer(lo) ? json_integer_value(lo) : num_nodes;
    max = json_is_integer(hi) ? json_integer_value(hi) : num_nodes;
    min = min < 1 ? 1 : min;
    max = max < min ? min : max;
    return json_pack("{s:I, s:I, s:I}", "minNodes", (json_int_t)min, "maxNodes", (json_int_t)max,
                     "maxRestarts",
                     (json_int_t)(json_is_integer(mr) && json_integer_value(mr) >= 0
                                      ? json_integer_value(mr)
                                      : TJ_ELASTIC_RESTARTS));
}

void tj_claim_name(const char *job, const char *claim, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s", claim, job);
}

static bool mounts(const json_t *pod_spec, const char *volume)
{
    static const char *const lists[] = {"containers", "initContainers", NULL};
    json_t *c, *m;
    size_t i, k;

    for (size_t l = 0; lists[l]; l++)
        json_array_foreach(json_object_get(pod_spec, lists[l]), i, c)
            json_array_foreach(json_object_get(c, "volumeMounts"), k, m)
                if (!strcmp(json_string_value(json_object_get(m, "name")) ?: "", volume))
                    return true;
    return false;
}

/* JobSet's volumeClaimPolicies: each template a container mounts (by name)
 * becomes a volume of that name on the claim `<template>-<job>`, unless the
 * pod template has a volume of that name itself. */
static void add_claim_volumes(json_t *rjobs, const json_t *policies, const char *job)
{
    json_t *rj, *vcp, *t, *v;
    size_t i, k, n, m;

    json_array_foreach(rjobs, i, rj) {
        json_t *ps = own_object(own_object(rj, "template"), "spec");
        json_array_foreach(policies, k, vcp)
            json_array_foreach(json_object_get(vcp, "templates"), n, t) {
                const char *name = str_at(t, "metadata", "name");
                char claim[600];
                bool have = false;
                if (!name || !mounts(ps, name))
                    continue;
                json_array_foreach(json_object_get(ps, "volumes"), m, v)
                    have |= !strcmp(json_string_value(json_object_get(v, "name")) ?: "", name);
                if (have)
                    continue;
                tj_claim_name(job, name, claim, sizeof(claim));
                json_array_append_new(own_array(ps, "volumes"),
                                      json_pack("{s:s, s:{s:s}}", "name", name,
                                                "persistentVolumeClaim", "claimName", claim));
            }
    }
}

/* Whether the replicated jobs make more than TJ_MAX_PODS pods (each
 * product checked before it is summed: replicas and completions come from
 * the runtime, numNodes from the job, each up to 2^31). */
static bool pods_over(const json_t *rjobs)
{
    long long total = 0;
    json_t *rj;
    size_t i;

    json_array_foreach(rjobs, i, rj) {
        long long r = json_integer_value(json_object_get(rj, "replicas"));
        long long n = json_integer_value(json_object_get(rj, "pods"));
        if (r < 0 || n < 0 || r > TJ_MAX_PODS || n > TJ_MAX_PODS || r * n > TJ_MAX_PODS)
            return true;
        total += r * n;
    }
    return total > TJ_MAX_PODS;
}

json_t *tj_plan(const json_t *trainjob, const json_t *snapshot, ty_error *err)
{
    const json_t *tjspec = json_object_get(trainjob, "spec");
    const json_t *rs = json_object_get(snapshot, "spec");
    const json_t *ml = json_object_get(rs, "mlPolicy");
    const json_t *js = json_object_get(json_object_get(rs, "template"), "spec");
    const json_t *trainer = json_object_get(tjspec, "trainer");
    const char *policy = ml_policy(ml);
    const char *fw = json_string_value(json_object_get(snapshot, "framework"));
    const char *job = str_at(trainjob, "metadata", "name") ?: "";
    const char *sub = str_at(js, "network", "subdomain");
    const json_t *nn = json_object_get(trainer, "numNodes");
    json_t *plan, *rjobs = json_array(), *rj, *mpi = mpi_policy(ml), *elastic;
    long long num_nodes;
    char procs[32];
    size_t i;

    if (!json_is_integer(nn))
        nn = json_object_get(ml, "numNodes");
    num_nodes = json_is_integer(nn) ? json_integer_value(nn) : 1;
    /* elastic: the job's numNodes within the bounds, else the most */
    if ((elastic = elastic_policy(snapshot, ml, num_nodes))) {
        long long min = json_integer_value(json_object_get(elastic, "minNodes"));
        long long max = json_integer_value(json_object_get(elastic, "maxNodes"));
        if (!json_is_integer(json_object_get(trainer, "numNodes")))
            num_nodes = max;
        num_nodes = num_nodes < min ? min : num_nodes > max ? max : num_nodes;
    }
    /* the TrainJob's numProcPerNode is MPI's slots per node too */
    if (mpi && json_is_integer(json_object_get(trainer, "numProcPerNode")))
        json_object_set(mpi, "numProcPerNode", json_object_get(trainer, "numProcPerNode"));
    procs_of(trainer, ml, policy, procs, sizeof(procs));
    json_array_foreach(json_object_get(js, "replicatedJobs"), i, rj) {
        if (!json_is_string(json_object_get(rj, "name")))
            continue;
        json_array_append_new(rjobs, plan_rjob(rj, tjspec, policy, num_nodes, mpi));
    }
    if (!json_array_size(rjobs)) {
        json_decref(rjobs);
        json_decref(mpi);
        json_decref(elastic);
        ty_seterr(err, TY_EINVALID, "%s %s has no replicated job",
                  json_string_value(json_object_get(snapshot, "kind")) ?: "runtime",
                  json_string_value(json_object_get(snapshot, "name")) ?: "");
        return NULL;
    }
    if (num_nodes < 0 || num_nodes > TJ_MAX_PODS || pods_over(rjobs)) {
        json_decref(rjobs);
        json_decref(mpi);
        json_decref(elastic);
        ty_seterr(err, TY_EFORBIDDEN, "the TrainJob would make more than %d pods",
                  TJ_MAX_PODS);
        return NULL;
    }
    plan = json_pack("{s:s, s:s, s:I, s:s, s:s, s:o}", "framework", fw && *fw ? fw : policy,
                     "policy", policy, "numNodes", (json_int_t)num_nodes, "procs", procs,
                     "subdomain", sub && *sub ? sub : job, "rjobs", rjobs);
    if (mpi)
        json_object_set_new(plan, "mpi", mpi);
    if (elastic)
        json_object_set_new(plan, "elastic", elastic);
    if (json_is_object(json_object_get(js, "successPolicy")))
        json_object_set(plan, "successPolicy", json_object_get(js, "successPolicy"));
    if (json_is_object(json_object_get(js, "failurePolicy")))
        json_object_set(plan, "failurePolicy", json_object_get(js, "failurePolicy"));
    if (json_array_size(json_object_get(js, "volumeClaimPolicies"))) {
        add_claim_volumes(rjobs, json_object_get(js, "volumeClaimPolicies"), job);
        json_object_set(plan, "claimPolicies", json_object_get(js, "volumeClaimPolicies"));
    }
    if (!strcmp(str_at(js, "startupPolicy", "startupPolicyOrder") ?: "", "InOrder"))
        json_object_set_new(plan, "startupInOrder", json_true());
    if (json_is_object(json_object_get(rs, "podGroupPolicy")))
        json_object_set(plan, "podGroupPolicy", json_object_get(rs, "podGroupPolicy"));
    if (json_is_object(json_object_get(ml, "torch")))
        json_object_set(plan, "torch", json_object_get(ml, "torch"));
    if (template_queue(tjspec, rs))
        json_object_set_new(plan, "queue", json_string(template_queue(tjspec, rs)));
    tj_add_initializers(plan, trainjob);
    return plan;
}

long long tj_plan_pods(const json_t *plan)
{
    long long n = 0;
    json_t *rj;
    size_t i;

    json_array_foreach(json_object_get(plan, "rjobs"), i, rj)
        n += json_integer_value(json_object_get(rj, "replicas")) *
             json_integer_value(json_object_get(rj, "pods"));
    return n;
}

const json_t *tj_plan_rjob(const json_t *plan, const char *name)
{
    json_t *rj;
    size_t i;

    json_array_foreach(json_object_get(plan, "rjobs"), i, rj)
        if (name && !strcmp(json_string_value(json_object_get(rj, "name")), name))
            return rj;
    return NULL;
}

static bool lists_or_empty(const json_t *list, const char *want)
{
    json_t *v;
    size_t i;

    if (!json_array_size(list))
        return true;
    json_array_foreach(list, i, v)
        if (!strcmp(json_string_value(v) ?: "", want))
            return true;
    return false;
}

tj_fail_action tj_failure_action(const json_t *plan, const char *rjob, const char *reason,
                                 const char **rule)
{
    json_t *r;
    size_t i;

    if (rule)
        *rule = NULL;
    json_array_foreach(json_object_get(json_object_get(plan, "failurePolicy"), "rules"), i, r) {
        const char *action = json_string_value(json_object_get(r, "action")) ?: "";
        if (!lists_or_empty(json_object_get(r, "targetReplicatedJobs"), rjob) ||
            !lists_or_empty(json_object_get(r, "onJobFailureReasons"), reason))
            continue;
        if (rule)
            *rule = json_string_value(json_object_get(r, "name"));
        if (!strcmp(action, "FailJobSet"))
            return TJ_FAIL_SET;
        if (!strcmp(action, "RestartJobSetAndIgnoreMaxRestarts"))
            return TJ_FAIL_RESTART_UNCOUNTED;
        return TJ_FAIL_RESTART;
    }
    return TJ_FAIL_RESTART;
}
