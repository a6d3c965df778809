/* mindspore.c - MSJob (ms-operator): MindSpore's dynamic cluster, whose
 * processes find the scheduler through MS_SCHED_HOST/MS_SCHED_PORT. Only the
 * Scheduler gets a Service, an ordinary ClusterIP one.
 *
 * The kind: MSJob (mindspore.gitee.com/v1, ms-operator): MindSpore's Scheduler, PS and Worker
 * roles. */
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

/* One scheduler coordinates the cluster; zero is allowed (standalone workers). */
static void ms_validate(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err)
{
    json_t *sched = json_object_get(json_object_get(spec, k->replica_field), "Scheduler");
    json_t *n = json_object_get(sched, "replicas");

    (void)old;
    if (json_is_integer(n) && json_integer_value(n) > 1)
        meta_invalid_int(err, "spec.msReplicaSpecs.Scheduler.replicas", json_integer_value(n),
                         "must be less than or equal to 1");
}

const kf_kind kf_msjob = {
    .resource = &api_msjob,
    .kind = "MSJob",
    .replica_field = "msReplicaSpecs",
    .types = {{"Scheduler", 1, NULL}, {"PS", 1, NULL}, {"Worker", 1, NULL}},
    .default_container = "mindspore",
    .port_name = "msjob-port",
    .port = 2222,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "Running",
    .operator_name = "msjob-controller",
    .framework = "mindspore",
    .has_success_policy = true,
    .validate = ms_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("msReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("successPolicy", API_T_STRING),
    API_FIELD("enableDynamicWorker", API_T_BOOLEAN),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema msjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(msjob, "mindspore.gitee.com", "MSJob", "msjobs", &msjob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

static const char *role(const char *rtype)
{
    if (strcmp(rtype, "Scheduler") == 0)
        return "MS_SCHED";
    if (strcmp(rtype, "PS") == 0)
        return "MS_PSERVER";
    return "MS_WORKER";
}

static void ms_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    char host[300];

    if (jf_has(c, "Scheduler")) {
        /* The scheduler binds its own address; the others reach its Service. */
        if (strcmp(rtype, "Scheduler") == 0) {
            jf_env_field(env, "MS_SCHED_HOST", "status.podIP");
        } else {
            jf_host(c, "Scheduler", 0, host, sizeof(host));
            jf_env(env, "MS_SCHED_HOST", host);
        }
        jf_envf(env, "MS_SCHED_PORT", "%d", jf_port(c, "Scheduler"));
    }
    jf_env(env, "MS_ROLE", role(rtype));
    jf_host(c, rtype, index, host, sizeof(host));
    jf_env(env, "MS_NODE_ID", host);
    jf_envf(env, "MS_WORKER_NUM", "%lld", jf_replicas(c, "Worker"));
    jf_envf(env, "MS_SERVER_NUM", "%lld", jf_replicas(c, "PS"));
}

static bool ms_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)rtype, (void)index;
    return false;
}

static bool ms_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    const jf_counts *w = jf_find(counts, n, "Worker");
    const char *policy =
        json_string_value(json_object_get(json_object_get(c->job, "spec"), "successPolicy"));

    if (!w)
        return false;
    if (policy && strcmp(policy, "AllWorkers") == 0)
        return jf_all_succeeded(w);
    return w->first_succeeded || jf_all_succeeded(w);
}

static jf_service_mode ms_service(const job_ctx *c, const char *rtype)
{
    (void)c;
    return strcmp(rtype, "Scheduler") == 0 ? JF_SVC_CLUSTERIP : JF_SVC_NONE;
}

const jobs_framework jf_mindspore = {
    .kind = &kf_msjob,
    .env_all_containers = false,
    .env = ms_env,
    .is_master = ms_is_master,
    .succeeded = ms_succeeded,
    .service = ms_service,
};
