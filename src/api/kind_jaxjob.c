/* kind_jaxjob.c - JAXJob (kubeflow.org/v1): Worker replicas only; worker-0
 * is the coordinator. */
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
