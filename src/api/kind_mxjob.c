/* kind_mxjob.c - MXJob (kubeflow.org/v1, removed upstream in 1.9): MXNet's
 * parameter-server training (MXTrain) or auto-tuning (MXTune). */
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

static const char *const job_modes[] = {"MXTrain", "MXTune", NULL};

static void mx_defaults(const kf_kind *k, json_t *obj)
{
    (void)k;
    meta_default(json_object_get(obj, "spec"), "jobMode", json_string("MXTrain"));
}

static void mx_validate(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err)
{
    (void)old;
    kf_check_enum(spec, "jobMode", "spec.jobMode", job_modes, err);
    kf_check_single_replica(k, spec, "Scheduler", err);
}

const kf_kind kf_mxjob = {
    .resource = &api_mxjob,
    .kind = "MXJob",
    .replica_field = "mxReplicaSpecs",
    .types = {{"Scheduler", 1, NULL}, {"Server", 1, NULL}, {"Worker", 1, NULL},
              {"TunerTracker", 1, NULL}, {"TunerServer", 1, NULL}, {"Tuner", 1, NULL}},
    .default_container = "mxnet",
    .port_name = "mxjob-port",
    .port = 9091,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "mxjob-controller",
    .framework = "mxnet",
    .defaults = mx_defaults,
    .validate = mx_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("mxReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("jobMode", API_T_STRING),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema mxjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(mxjob, "kubeflow.org", "MXJob", "mxjobs", &mxjob_schema);
