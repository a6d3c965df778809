/* jax.c - JAXJob: Workers that jax.distributed.initialize() joins through
 * worker 0, the coordinator.
 *
 * The kind: JAXJob (kubeflow.org/v1): Worker replicas only; worker-0 is the coordinator. */
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/schema.h"

const kf_kind kf_jaxjob = {
    .resource = &api_jaxjob,
    .kind = "JAXJob",
    .replica_field = "jaxReplicaSpecs",
    .types = {{"Worker", 1, NULL}},
    .default_container = "jax",
    .port_name = "jaxjob-port",
    .port = 6666,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "jaxjob-controller",
    .framework = "jax",
};

static const api_field spec_fields[] = {
    API_MAP_OF("jaxReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema jaxjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(jaxjob, "kubeflow.org", "JAXJob", "jaxjobs", &jaxjob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

static void jax_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    char coord[300];

    (void)rtype;
    jf_host(c, "Worker", 0, coord, sizeof(coord));
    jf_env(env, "PYTHONUNBUFFERED", "1");
    jf_envf(env, "COORDINATOR_PORT", "%d", jf_port(c, "Worker"));
    jf_env(env, "COORDINATOR_ADDRESS", coord);
    jf_envf(env, "NUM_PROCESSES", "%lld", jf_total(c));
    jf_envf(env, "PROCESS_ID", "%d", index);
}

static bool jax_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)rtype;
    return index == 0;
}

static bool jax_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "Worker"));
}

const jobs_framework jf_jax = {
    .kind = &kf_jaxjob,
    .env_all_containers = true,
    .env = jax_env,
    .is_master = jax_is_master,
    .succeeded = jax_succeeded,
};
