/* xgboost.c - XGBoostJob: Rabit's tracker on the Master, Workers after it.
 *
 * The kind: XGBoostJob (kubeflow.org/v1): one Master (rabit tracker) and Workers. */
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/schema.h"
#include "base/buf.h"

static void xgb_validate(const kf_kind *k, const json_t *spec, const json_t *old,
                         ty_error *err)
{
    (void)old;
    kf_require_replica(k, spec, "Master", err);
    kf_check_single_replica(k, spec, "Master", err);
}

const kf_kind kf_xgboostjob = {
    .resource = &api_xgboostjob,
    .kind = "XGBoostJob",
    .replica_field = "xgbReplicaSpecs",
    .types = {{"Master", 1, NULL}, {"Worker", 1, NULL}},
    .default_container = "xgboost",
    .port_name = "xgboostjob-port",
    .port = 9999,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "xgboostjob-controller",
    .framework = "xgboost",
    .validate = xgb_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("xgbReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema xgboostjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(xgboostjob, "kubeflow.org", "XGBoostJob", "xgboostjobs", &xgboostjob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

static void xgb_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    long long total = jf_total(c), masters = jf_replicas(c, "Master");
    int rank = index + (strcmp(rtype, "Worker") == 0 ? (int)masters : 0);
    char master[300], host[300];

    jf_host(c, "Master", 0, master, sizeof(master));
    jf_envf(env, "MASTER_PORT", "%d", jf_port(c, "Master"));
    jf_env(env, "MASTER_ADDR", master);
    jf_envf(env, "WORLD_SIZE", "%lld", total);
    jf_envf(env, "RANK", "%d", rank);
    jf_env(env, "PYTHONUNBUFFERED", "1");
    if (total > 1) {
        ty_buf addrs = {0};
        for (long long i = 0; i < jf_replicas(c, "Worker"); i++) {
            jf_host(c, "Worker", (int)i, host, sizeof(host));
            ty_buf_printf(&addrs, "%s%s", i ? "," : "", host);
        }
        jf_envf(env, "WORKER_PORT", "%d", jf_port(c, "Worker"));
        jf_env(env, "WORKER_ADDRS", addrs.data ? addrs.data : "");
        ty_buf_free(&addrs);
    }
}

static bool xgb_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c;
    return jf_master_is(rtype, index, "Master");
}

static bool xgb_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "Master"));
}

const jobs_framework jf_xgboost = {
    .kind = &kf_xgboostjob,
    .env_all_containers = true,
    .env = xgb_env,
    .is_master = xgb_is_master,
    .succeeded = xgb_succeeded,
};
