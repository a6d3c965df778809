/* kind_msjob.c - MSJob (mindspore.gitee.com/v1, ms-operator): MindSpore's
 * Scheduler, PS and Worker roles. */
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
