/* kind_tfjob.c - TFJob (kubeflow.org/v1): TensorFlow's Chief/Master, PS,
 * Worker and Evaluator replicas. */
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

/* Upstream counts Chief and Master as one role: a job has at most one of them. */
static void tf_validate(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err)
{
    json_t *map = json_object_get(spec, k->replica_field);

    (void)old;
    if (json_object_get(map, "Chief") && json_object_get(map, "Master"))
        meta_forbidden(err, "spec.tfReplicaSpecs",
                       "must not have more than 1 Chief or Master role");
    kf_check_single_replica(k, spec, "Chief", err);
    kf_check_single_replica(k, spec, "Master", err);
}

const kf_kind kf_tfjob = {
    .resource = &api_tfjob,
    .kind = "TFJob",
    .replica_field = "tfReplicaSpecs",
    .types = {{"Chief", 1, NULL}, {"Master", 1, NULL}, {"PS", 1, NULL}, {"Worker", 1, NULL}, {"Evaluator", 1, NULL}},
    .default_container = "tensorflow",
    .port_name = "tfjob-port",
    .port = 2222,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "tfjob-controller",
    .framework = "tensorflow",
    .has_success_policy = true,
    .validate = tf_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("tfReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("successPolicy", API_T_STRING),
    API_FIELD("enableDynamicWorker", API_T_BOOLEAN),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema tfjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(tfjob, "kubeflow.org", "TFJob", "tfjobs", &tfjob_schema);
