/* kind_trainingruntime.c - Kubeflow Trainer v2's TrainingRuntime (namespaced)
 * and ClusterTrainingRuntime (cluster-scoped), trainer.kubeflow.org/v1alpha1:
 * the reusable template a TrainJob names. One spec for both kinds: an ML
 * policy (nodes and the framework's settings), a gang policy and a JobSet
 * template whose replicated jobs are batch/v1 Job templates.
 *
 * Defaults are upstream's (mlPolicy.numNodes 1, the MPI settings, the
 * coscheduling timeout);
 * validation is the rules upstream's CRD and webhook state, worded as
 * kube-apiserver words a CRD's validation errors. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "api/trainer.h"

#define PATH_LEN 256
/* Upstream has no bound; a runtime with more replicated jobs than this is
 * no training job anyone runs, and every TrainJob built from it walks them. */
#define MAX_REPLICATED_JOBS 64
#define MAX_DEPENDS_ON 64

static const char *const ml_sources[] = {"torch", "mpi", "flux", "jax", "xgboost", NULL};
static const char *const mpi_impls[] = {"OpenMPI", "Intel", "MPICH", NULL};
static const char *const depends_statuses[] = {"Ready", "Complete", NULL};
static const char *const success_operators[] = {"All", "Any", NULL};
static const char *const startup_orders[] = {"AnyOrder", "InOrder", NULL};
static const char *const restart_strategies[] = {"Recreate", "BlockingRecreate",
                                                 "InPlaceRestart", NULL};
static const char *const topology_modes[] = {"hard", "soft", NULL};
static const char *const retention_policies[] = {"Delete", "Retain", NULL};
#define CLAIM_POLICIES_MAX 50 /* JobSet's bound, on the policies and on each one's templates */

/* ---- defaults ------------------------------------------------------------ */

static void runtime_defaults(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *ml, *mpi, *pg, *cs;

    if (!json_is_object(spec))
        return;
    ml = json_object_get(spec, "mlPolicy");
    if (json_is_object(ml)) {
        meta_default(ml, "numNodes", json_integer(1));
        mpi = json_object_get(ml, "mpi");
        if (json_is_object(mpi)) {
            meta_default(mpi, "numProcPerNode", json_integer(1));
            meta_default(mpi, "mpiImplementation", json_string("OpenMPI"));
            meta_default(mpi, "sshAuthMountPath", json_string("/root/.ssh"));
            meta_default(mpi, "runLauncherAsNode", json_false());
        }
    }
    pg = json_object_get(spec, "podGroupPolicy");
    cs = json_object_get(pg, "coscheduling");
    if (json_is_object(cs))
        meta_default(cs, "scheduleTimeoutSeconds", json_integer(60));
    /* replicatedJobs[].replicas is JobSet's to default (1), and is not
     * stored: a default inside a list made every `kubectl apply` of an
     * unchanged runtime send the whole list back ("configured"). Readers
     * take a missing one as 1. */
}

/* ---- validation ---------------------------------------------------------- */

static void check_min(const json_t *obj, const char *key, json_int_t min, const char *path,
                      ty_error *err)
{
    const json_t *v = json_object_get(obj, key);
    char f[PATH_LEN];

    if (!json_is_integer(v) || json_integer_value(v) >= min)
        return;
    snprintf(f, sizeof(f), "%s.%s", path, key);
    meta_invalid(err, f, v, "%s.%s in body should be greater than or equal to %lld", path, key,
                 (long long)min);
}

static void check_enum(const json_t *obj, const char *key, const char *const *allowed,
                       const char *path, ty_error *err)
{
    const json_t *v = json_object_get(obj, key);
    const char *s = json_string_value(v);
    char f[PATH_LEN];

    if (!s)
        return;
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0)
            return;
    snprintf(f, sizeof(f), "%s.%s", path, key);
    meta_not_supported(err, f, v, allowed);
}

/* How many of keys obj has; upstream's rule is "at most one". */
static int count_present(const json_t *obj, const char *const *keys)
{
    int n = 0;
    for (size_t i = 0; keys[i]; i++)
        n += json_object_get(obj, keys[i]) != NULL;
    return n;
}

static void check_ml_policy(const json_t *ml, ty_error *err)
{
    const json_t *mpi = json_object_get(ml, "mpi");

    if (!json_is_object(ml))
        return;
    check_min(ml, "numNodes", 1, "spec.mlPolicy", err);
    if (count_present(ml, ml_sources) > 1)
        meta_invalid_str(err, "spec.mlPolicy", "object",
                         "Only one of the policy can be configured");
    if (json_is_object(mpi)) {
        check_min(mpi, "numProcPerNode", 1, "spec.mlPolicy.mpi", err);
        check_enum(mpi, "mpiImplementation", mpi_impls, "spec.mlPolicy.mpi", err);
    }
}

static void check_pod_group_policy(const json_t *pg, ty_error *err)
{
    static const char *const sources[] = {"coscheduling", "volcano", NULL};
    const json_t *nt = json_object_get(json_object_get(pg, "volcano"), "networkTopology");

    if (!json_is_object(pg))
        return;
    if (count_present(pg, sources) > 1)
        meta_invalid_str(err, "spec.podGroupPolicy", "object",
                         "Only one of the policy can be configured");
    check_min(json_object_get(pg, "coscheduling"), "scheduleTimeoutSeconds", 0,
              "spec.podGroupPolicy.coscheduling", err);
    check_enum(nt, "mode", topology_modes, "spec.podGroupPolicy.volcano.networkTopology", err);
    check_min(nt, "highestTierAllowed", 0, "spec.podGroupPolicy.volcano.networkTopology", err);
}

/* A cycle through the replicated jobs' dependsOn would hang the job with
 * nothing to say why. (Upstream's runtimes list a job before the one it
 * waits on, so JobSet's "preceding jobs only" is not held to.) */
static const json_t *rjob_deps(const json_t *rj)
{
    return json_object_get(rj, "dependsOn");
}

static void check_depends_on(const json_t *jobs, const json_t *rj, const char *path,
                             ty_error *err)
{
    const json_t *deps = json_object_get(rj, "dependsOn"), *d;
    const char *self = meta_str(rj, "name");
    char f[PATH_LEN + 96], dp[PATH_LEN + 32];
    size_t i;

    if (json_array_size(deps) > MAX_DEPENDS_ON) {
        snprintf(f, sizeof(f), "%s.dependsOn", path);
        meta_too_many(err, f, json_array_size(deps), MAX_DEPENDS_ON);
        return;
    }
    json_array_foreach(deps, i, d) {
        const char *name = meta_str(d, "name");
        snprintf(dp, sizeof(dp), "%s.dependsOn[%zu]", path, i);
        snprintf(f, sizeof(f), "%s.name", dp);
        if (!name || !*name)
            meta_required(err, f, NULL);
        else if (self && strcmp(name, self) == 0)
            meta_invalid_str(err, f, name, "a replicated job cannot depend on itself");
        else if (meta_named_index(jobs, name) < 0)
            meta_invalid_str(err, f, name, "must name a replicated job of this template");
        snprintf(f, sizeof(f), "%s.status", dp);
        if (!json_object_get(d, "status"))
            meta_required(err, f, NULL);
        else
            check_enum(d, "status", depends_statuses, dp, err);
    }
}

static void check_replicated_jobs(const json_t *tspec, ty_error *err)
{
    const json_t *jobs = json_object_get(tspec, "replicatedJobs"), *rj, *t;
    unsigned char state[MAX_REPLICATED_JOBS];
    const char *base = "spec.template.spec.replicatedJobs";
    json_t *seen;
    char path[PATH_LEN], f[PATH_LEN + 32];
    size_t i;

    if (json_array_size(jobs) > MAX_REPLICATED_JOBS) {
        meta_too_many(err, base, json_array_size(jobs), MAX_REPLICATED_JOBS);
        return;
    }
    seen = json_object();
    json_array_foreach(jobs, i, rj) {
        const char *name = meta_str(rj, "name");
        snprintf(path, sizeof(path), "%s[%zu]", base, i);
        snprintf(f, sizeof(f), "%s.name", path);
        if (!name || !*name) {
            meta_required(err, f, NULL);
        } else if (json_object_get(seen, name)) {
            meta_duplicate(err, f, json_object_get(rj, "name"));
        } else {
            meta_check_dns1123_label(f, name, err);
            json_object_set_new(seen, name, json_true());
        }
        check_min(rj, "replicas", 0, path, err);
        snprintf(f, sizeof(f), "%s.template.spec", path);
        check_min(json_object_get(json_object_get(rj, "template"), "spec"), "backoffLimit", 0, f,
                  err);
        check_depends_on(jobs, rj, path, err);
        t = json_object_get(json_object_get(rj, "template"), "metadata");
        snprintf(f, sizeof(f), "%s.template.metadata.labels", path);
        if (json_object_get(t, "labels"))
            meta_check_labels(f, json_object_get(t, "labels"), err);
    }
    json_decref(seen);
    memset(state, 0, sizeof(state));
    json_array_foreach(jobs, i, rj) {
        if (!json_array_size(json_object_get(rj, "dependsOn")) ||
            !meta_depends_cycle(jobs, i, rjob_deps, state))
            continue;
        snprintf(f, sizeof(f), "%s[%zu].dependsOn", base, i);
        meta_invalid(err, f, json_object_get(rj, "dependsOn"),
                     "replicated jobs cannot depend on each other in a cycle");
        break;
    }
}

static void check_jobset_policies(const json_t *tspec, ty_error *err)
{
    const char *base = "spec.template.spec";
    const json_t *sp = json_object_get(tspec, "successPolicy"), *target;
    const json_t *jobs = json_object_get(tspec, "replicatedJobs");
    const json_t *fp = json_object_get(tspec, "failurePolicy");
    char f[PATH_LEN];
    size_t i;

    check_enum(sp, "operator", success_operators, "spec.template.spec.successPolicy", err);
    json_array_foreach(json_object_get(sp, "targetReplicatedJobs"), i, target) {
        const char *name = json_string_value(target);
        snprintf(f, sizeof(f), "%s.successPolicy.targetReplicatedJobs[%zu]", base, i);
        if (name && meta_named_index(jobs, name) < 0)
            meta_invalid_str(err, f, name, "must name a replicated job of this template");
    }
    check_min(fp, "maxRestarts", 0, "spec.template.spec.failurePolicy", err);
    check_enum(fp, "restartStrategy", restart_strategies, "spec.template.spec.failurePolicy",
               err);
    check_min(tspec, "ttlSecondsAfterFinished", 0, base, err);
    check_enum(json_object_get(tspec, "startupPolicy"), "startupPolicyOrder", startup_orders,
               "spec.template.spec.startupPolicy", err);
}

/* JobSet's volumeClaimPolicies: at most 50 policies of at most 50 PVC
 * templates, each named (a volume's name: a DNS label) and with no
 * namespace; retentionPolicy.whenDeleted Delete or Retain. */
static void check_claim_policies(const json_t *tspec, ty_error *err)
{
    const json_t *list = json_object_get(tspec, "volumeClaimPolicies"), *vcp, *t;
    char f[PATH_LEN];
    size_t i, k;

    if (json_array_size(list) > CLAIM_POLICIES_MAX)
        meta_too_many(err, "spec.template.spec.volumeClaimPolicies", json_array_size(list),
                      CLAIM_POLICIES_MAX);
    json_array_foreach(list, i, vcp) {
        const json_t *ts = json_object_get(vcp, "templates");
        snprintf(f, sizeof(f), "spec.template.spec.volumeClaimPolicies[%zu].retentionPolicy", i);
        check_enum(json_object_get(vcp, "retentionPolicy"), "whenDeleted", retention_policies, f,
                   err);
        snprintf(f, sizeof(f), "spec.template.spec.volumeClaimPolicies[%zu].templates", i);
        if (json_array_size(ts) > CLAIM_POLICIES_MAX)
            meta_too_many(err, f, json_array_size(ts), CLAIM_POLICIES_MAX);
        json_array_foreach(ts, k, t) {
            const json_t *meta = json_object_get(t, "metadata");
            const char *name = meta_str(meta, "name"), *ns = meta_str(meta, "namespace");
            snprintf(f, sizeof(f),
                     "spec.template.spec.volumeClaimPolicies[%zu].templates[%zu].metadata", i, k);
            if (ns && *ns)
                meta_invalid_str(err, f, ns, "namespace cannot be set for VolumeClaimPolicies "
                                 "templates");
            snprintf(f, sizeof(f),
                     "spec.template.spec.volumeClaimPolicies[%zu].templates[%zu].metadata.name",
                     i, k);
            if (!name || !*name)
                meta_required(err, f, NULL);
            else
                meta_check_dns1123_label(f, name, err);
        }
    }
}

static int runtime_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *tspec = json_object_get(json_object_get(spec, "template"), "spec");
    const json_t *tmeta = json_object_get(json_object_get(spec, "template"), "metadata");
    size_t before = ty_error_ncauses(err);

    (void)old;
    check_ml_policy(json_object_get(spec, "mlPolicy"), err);
    check_pod_group_policy(json_object_get(spec, "podGroupPolicy"), err);
    if (json_object_get(tmeta, "labels"))
        meta_check_labels("spec.template.metadata.labels", json_object_get(tmeta, "labels"),
                          err);
    if (json_object_get(tmeta, "annotations"))
        meta_check_annotations("spec.template.metadata.annotations",
                               json_object_get(tmeta, "annotations"), err);
    check_replicated_jobs(tspec, err);
    check_jobset_policies(tspec, err);
    check_claim_policies(tspec, err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* ---- columns -------------------------------------------------------------- */

static void runtime_cells(const json_t *obj, time_t now, json_t *cells)
{
    char age[32];

    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}

static const api_column runtime_columns[] = {
    {"Age", "date", "", "", 0},
};
static const api_column_path runtime_column_paths[] = {
    {"Age", ".metadata.creationTimestamp"},
    {NULL, NULL},
};

/* ---- schema --------------------------------------------------------------- */

static const api_schema empty_object = {.fields = NULL, .nfields = 0};

static const api_field env_target_fields[] = {
    API_FIELD("jobName", API_T_STRING),
    API_ARRAY("containerNames", API_T_STRING),
};
static const api_schema env_target = API_SCHEMA(env_target_fields);
static const api_field env_injection_fields[] = {
    API_ARRAY_OF("targets", &env_target),
};
static const api_schema env_injection = API_SCHEMA(env_injection_fields);

static const api_field elastic_fields[] = {
    API_FIELD("maxRestarts", API_T_INT32),
    API_FIELD("minNodes", API_T_INT32),
    API_FIELD("maxNodes", API_T_INT32),
    API_ARRAY("metrics", API_T_OPEN),
};
static const api_schema elastic_policy = API_SCHEMA(elastic_fields);

/* torch: v2.3's envInjection; numProcPerNode and elasticPolicy are v2.0's,
 * kept so that runtimes written for it are accepted unchanged. */
static const api_field torch_fields[] = {
    API_OBJECT("envInjection", &env_injection),
    API_FIELD("numProcPerNode", API_T_INT_OR_STRING),
    API_OBJECT("elasticPolicy", &elastic_policy),
};
static const api_schema torch_policy = API_SCHEMA(torch_fields);

static const api_field mpi_fields[] = {
    API_FIELD("numProcPerNode", API_T_INT32),
    API_FIELD("mpiImplementation", API_T_STRING),
    API_FIELD("sshAuthMountPath", API_T_STRING),
    API_FIELD("runLauncherAsNode", API_T_BOOLEAN),
};
static const api_schema mpi_policy = API_SCHEMA(mpi_fields);

static const api_field flux_fields[] = {
    API_FIELD("numProcPerNode", API_T_INT32),
};
static const api_schema flux_policy = API_SCHEMA(flux_fields);

static const api_field ml_policy_fields[] = {
    API_FIELD("numNodes", API_T_INT32),
    API_OBJECT("torch", &torch_policy),
    API_OBJECT("mpi", &mpi_policy),
    API_OBJECT("flux", &flux_policy),
    API_OBJECT("jax", &empty_object),
    API_OBJECT("xgboost", &empty_object),
};
static const api_schema ml_policy = API_SCHEMA(ml_policy_fields);

static const api_field coscheduling_fields[] = {
    API_FIELD("scheduleTimeoutSeconds", API_T_INT32),
};
static const api_schema coscheduling = API_SCHEMA(coscheduling_fields);
static const api_field network_topology_fields[] = {
    API_FIELD("mode", API_T_STRING),
    API_FIELD("highestTierAllowed", API_T_INT32),
};
static const api_schema network_topology = API_SCHEMA(network_topology_fields);
static const api_field volcano_fields[] = {
    API_OBJECT("networkTopology", &network_topology),
};
static const api_schema volcano_policy = API_SCHEMA(volcano_fields);
static const api_field pod_group_fields[] = {
    API_OBJECT("coscheduling", &coscheduling),
    API_OBJECT("volcano", &volcano_policy),
};
static const api_schema pod_group_policy = API_SCHEMA(pod_group_fields);

/* batch/v1 JobSpec and JobTemplateSpec, as a replicated job embeds them. */
static const api_field job_spec_fields[] = {
    API_FIELD("parallelism", API_T_INT32),
    API_FIELD("completions", API_T_INT32),
    API_FIELD("activeDeadlineSeconds", API_T_INTEGER),
    API_FIELD("podFailurePolicy", API_T_OPEN),
    API_FIELD("successPolicy", API_T_OPEN),
    API_FIELD("backoffLimit", API_T_INT32),
    API_FIELD("backoffLimitPerIndex", API_T_INT32),
    API_FIELD("maxFailedIndexes", API_T_INT32),
    API_OBJECT("selector", &api_schema_label_selector),
    API_FIELD("manualSelector", API_T_BOOLEAN),
    API_OBJECT("template", &api_schema_pod_template_spec),
    API_FIELD("ttlSecondsAfterFinished", API_T_INT32),
    API_FIELD("completionMode", API_T_STRING),
    API_FIELD("suspend", API_T_BOOLEAN),
    API_FIELD("podReplacementPolicy", API_T_STRING),
    API_FIELD("managedBy", API_T_STRING),
};
static const api_schema job_spec = API_SCHEMA(job_spec_fields);
static const api_field job_template_fields[] = {
    API_OBJECT("metadata", &api_schema_object_meta),
    API_OBJECT("spec", &job_spec),
};
static const api_schema job_template = API_SCHEMA(job_template_fields);

static const api_field depends_on_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("status", API_T_STRING),
};
static const api_schema depends_on = API_SCHEMA(depends_on_fields);
static const api_field replicated_job_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("groupName", API_T_STRING),
    API_OBJECT("template", &job_template),
    API_FIELD("replicas", API_T_INT32),
    API_ARRAY_OF("dependsOn", &depends_on),
};
static const api_schema replicated_job = API_SCHEMA(replicated_job_fields);

static const api_field network_fields[] = {
    API_FIELD("enableDNSHostnames", API_T_BOOLEAN),
    API_FIELD("subdomain", API_T_STRING),
    API_FIELD("publishNotReadyAddresses", API_T_BOOLEAN),
};
static const api_schema jobset_network = API_SCHEMA(network_fields);
static const api_field success_policy_fields[] = {
    API_FIELD("operator", API_T_STRING),
    API_ARRAY("targetReplicatedJobs", API_T_STRING),
};
static const api_schema success_policy = API_SCHEMA(success_policy_fields);
static const api_field failure_policy_fields[] = {
    API_FIELD("maxRestarts", API_T_INT32),
    API_FIELD("restartStrategy", API_T_STRING),
    API_ARRAY("rules", API_T_OPEN),
};
static const api_schema failure_policy = API_SCHEMA(failure_policy_fields);
static const api_field startup_policy_fields[] = {
    API_FIELD("startupPolicyOrder", API_T_STRING),
};
static const api_schema startup_policy = API_SCHEMA(startup_policy_fields);

/* JobSet v0.12's shared PVCs: core/v1 PersistentVolumeClaims as templates
 * (their spec is checked as a PVC's when the controller makes one). */
static const api_field claim_template_fields[] = {
    API_FIELD("apiVersion", API_T_STRING),
    API_FIELD("kind", API_T_STRING),
    API_OBJECT("metadata", &api_schema_object_meta),
    API_FIELD("spec", API_T_OPEN),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema claim_template = API_SCHEMA(claim_template_fields);
static const api_field retention_fields[] = {
    API_FIELD("whenDeleted", API_T_STRING),
};
static const api_schema retention_policy = API_SCHEMA(retention_fields);
static const api_field claim_policy_fields[] = {
    API_ARRAY_OF("templates", &claim_template),
    API_OBJECT("retentionPolicy", &retention_policy),
};
static const api_schema claim_policy = API_SCHEMA(claim_policy_fields);

static const api_field jobset_spec_fields[] = {
    API_MERGE_LIST("replicatedJobs", &replicated_job, "name"),
    API_OBJECT("network", &jobset_network),
    API_OBJECT("successPolicy", &success_policy),
    API_OBJECT("failurePolicy", &failure_policy),
    API_OBJECT("startupPolicy", &startup_policy),
    API_FIELD("suspend", API_T_BOOLEAN),
    API_FIELD("coordinator", API_T_OPEN),
    API_FIELD("managedBy", API_T_STRING),
    API_FIELD("ttlSecondsAfterFinished", API_T_INT32),
    API_ARRAY_OF("volumeClaimPolicies", &claim_policy),
};
static const api_schema jobset_spec = API_SCHEMA(jobset_spec_fields);
static const api_field jobset_template_fields[] = {
    API_OBJECT("metadata", &api_schema_object_meta),
    API_OBJECT("spec", &jobset_spec),
};
static const api_schema jobset_template = API_SCHEMA(jobset_template_fields);

static const api_field runtime_spec_fields[] = {
    {.name = "mlPolicy", .type = API_T_OBJECT, .schema = &ml_policy,
     .description = "The number of nodes (default 1) and at most one framework's settings: "
                    "torch, mpi, flux, jax or xgboost."},
    {.name = "podGroupPolicy", .type = API_T_OBJECT, .schema = &pod_group_policy,
     .description = "Gang scheduling of the job's pods: coscheduling or volcano."},
    {.name = "template", .type = API_T_OBJECT, .schema = &jobset_template,
     .description = "The JobSet template: replicated jobs (batch/v1 Job templates), their "
                    "dependsOn order, network, success and failure policies."},
};
static const api_schema runtime_spec = API_SCHEMA(runtime_spec_fields);
static const api_field runtime_fields[] = {
    API_OBJECT("spec", &runtime_spec),
};
static const api_schema training_runtime_schema = {
    .fields = runtime_fields, .nfields = API_NFIELDS(runtime_fields),
    .description = "TrainingRuntime represents a training runtime which can be referenced as "
                   "part of runtimeRef API in TrainJob. This resource is a namespaced-scoped "
                   "and can be referenced by TrainJob that created in the *same* namespace as "
                   "the TrainingRuntime.",
};
static const api_schema cluster_training_runtime_schema = {
    .fields = runtime_fields, .nfields = API_NFIELDS(runtime_fields),
    .description = "ClusterTrainingRuntime represents a training runtime which can be "
                   "referenced as part of runtimeRef API in TrainJob. This resource is a "
                   "cluster-scoped and can be referenced by TrainJob that created in *any* "
                   "namespace.",
};

const api_resource api_trainingruntime = {
    .group = TRAINER_GROUP, .version = "v1alpha1", .kind = "TrainingRuntime",
    .list_kind = "TrainingRuntimeList", .plural = "trainingruntimes",
    .singular = "trainingruntime",
    .namespaced = true,
    .apply_defaults = runtime_defaults, .validate = runtime_validate,
    .columns = runtime_columns, .ncolumns = API_NFIELDS(runtime_columns),
    .row_cells = runtime_cells, .column_paths = runtime_column_paths,
    .schema = &training_runtime_schema,
};

const api_resource api_clustertrainingruntime = {
    .group = TRAINER_GROUP, .version = "v1alpha1", .kind = "ClusterTrainingRuntime",
    .list_kind = "ClusterTrainingRuntimeList", .plural = "clustertrainingruntimes",
    .singular = "clustertrainingruntime",
    .namespaced = false,
    .apply_defaults = runtime_defaults, .validate = runtime_validate,
    .columns = runtime_columns, .ncolumns = API_NFIELDS(runtime_columns),
    .row_cells = runtime_cells, .column_paths = runtime_column_paths,
    .schema = &cluster_training_runtime_schema,
};
