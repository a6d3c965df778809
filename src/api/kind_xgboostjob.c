/* kind_xgboostjob.c - XGBoostJob (kubeflow.org/v1): one Master (rabit
 * tracker) and Workers. */
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/schema.h"

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
