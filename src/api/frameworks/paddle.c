/* paddle.c - PaddleJob: collective Workers, or a Master (parameter server
 * mode) and Workers. PADDLE_MASTER names the rank-0 pod; rank 0 itself uses
 * its own pod IP, which Kubernetes expands from POD_IP_DUMMY.
 *
 * The kind: PaddleJob (kubeflow.org/v1): collective (Workers only) or parameter-server (Master
 * + Workers) PaddlePaddle jobs. */
#include <stdint.h>
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

static void paddle_validate(const kf_kind *k, const json_t *spec, const json_t *old,
                            ty_error *err)
{
    json_t *ep = json_object_get(spec, "elasticPolicy");
    long long min = 0, max = 0;
    int has_min, has_max;

    (void)k;
    (void)old;
    if (!ep || json_is_null(ep))
        return;
    if (!json_is_object(ep)) {
        kf_type_error(err, "spec.elasticPolicy", "object", ep);
        return;
    }
    has_min = kf_check_int(ep, "minReplicas", "spec.elasticPolicy.minReplicas", 0, INT32_MAX,
                           err, &min);
    has_max = kf_check_int(ep, "maxReplicas", "spec.elasticPolicy.maxReplicas", 0, INT32_MAX,
                           err, &max);
    kf_check_int(ep, "maxRestarts", "spec.elasticPolicy.maxRestarts", 0, INT32_MAX, err, NULL);
    if (has_min == 1 && has_max == 1 && min > max)
        meta_invalid_int(err, "spec.elasticPolicy.minReplicas", min,
                         "must be less than or equal to maxReplicas (%lld)", max);
}

const kf_kind kf_paddlejob = {
    .resource = &api_paddlejob,
    .kind = "PaddleJob",
    .replica_field = "paddleReplicaSpecs",
    .types = {{"Master", 1, NULL}, {"Worker", 1, NULL}},
    .default_container = "paddle",
    .port_name = "master",
    .port = 36543,
    .default_restart_policy = "OnFailure",
    .default_clean_pod_policy = "None",
    .operator_name = "paddlejob-controller",
    .framework = "paddle",
    .validate = paddle_validate,
};

static const api_field elastic_fields[] = {
    API_FIELD("minReplicas", API_T_INTEGER),
    API_FIELD("maxReplicas", API_T_INTEGER),
    API_FIELD("maxRestarts", API_T_INTEGER),
    API_ARRAY("metrics", API_T_OPEN),
};
static const api_schema elastic_schema = API_SCHEMA(elastic_fields);
static const api_field spec_fields[] = {
    API_MAP_OF("paddleReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_OBJECT("elasticPolicy", &elastic_schema),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema paddlejob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(paddlejob, "kubeflow.org", "PaddleJob", "paddlejobs", &paddlejob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

static void paddle_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    bool has_master = jf_has(c, "Master");
    const char *lead = has_master ? "Master" : "Worker";
    int port = jf_port(c, lead);
    char host[300];

    jf_env(env, "PYTHONUNBUFFERED", "1");
    jf_env(env, "PADDLE_JOB_ID", c->name);
    jf_envf(env, "PADDLE_NNODES", "%lld", jf_total(c));
    if (strcmp(rtype, lead) == 0 && index == 0) {
        jf_env_field(env, "POD_IP_DUMMY", "status.podIP");
        jf_envf(env, "PADDLE_MASTER", "$(POD_IP_DUMMY):%d", port);
    } else {
        jf_host(c, lead, 0, host, sizeof(host));
        jf_envf(env, "PADDLE_MASTER", "%s:%d", host, port);
    }
    if (has_master && strcmp(rtype, "Master") == 0)
        jf_env(env, "PADDLE_SERVER_NUM", "1");
    else if (has_master)
        jf_env(env, "PADDLE_TRAINER_NUM", "1");
}

static bool paddle_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c;
    return jf_master_is(rtype, index, "Master");
}

static bool paddle_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    const jf_counts *m = jf_find(counts, n, "Master");

    (void)c;
    if (m)
        return jf_all_succeeded(m);
    return jf_all_succeeded(jf_find(counts, n, "Worker"));
}

const jobs_framework jf_paddle = {
    .kind = &kf_paddlejob,
    .env_all_containers = true,
    .env = paddle_env,
    .is_master = paddle_is_master,
    .succeeded = paddle_succeeded,
};
