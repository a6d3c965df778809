/* kind_mpijob.c - MPIJob (kubeflow.org/v1): one Launcher running mpirun and
 * Workers it execs into; slotsPerWorker processes per worker. */
#include <stdint.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

static void mpi_defaults(const kf_kind *k, json_t *obj)
{
    (void)k;
    meta_default(json_object_get(obj, "spec"), "slotsPerWorker", json_integer(1));
}

static void mpi_validate(const kf_kind *k, const json_t *spec, const json_t *old,
                         ty_error *err)
{
    (void)old;
    kf_require_replica(k, spec, "Launcher", err);
    kf_check_single_replica(k, spec, "Launcher", err);
    kf_check_int(spec, "slotsPerWorker", "spec.slotsPerWorker", 1, INT32_MAX, err, NULL);
}

const kf_kind kf_mpijob = {
    .resource = &api_mpijob,
    .kind = "MPIJob",
    .replica_field = "mpiReplicaSpecs",
    .types = {{"Launcher", 1, NULL}, {"Worker", 0, NULL}},
    .default_container = "mpi",
    .default_container_optional = true,
    .port_name = "mpi-port",
    .port = 9999,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "mpijob-controller",
    .framework = "mpi",
    .legacy_clean_pod_policy = true,
    .defaults = mpi_defaults,
    .validate = mpi_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("mpiReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("slotsPerWorker", API_T_INTEGER),
    API_FIELD("cleanPodPolicy", API_T_STRING),
    API_FIELD("mainContainer", API_T_STRING),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema mpijob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(mpijob, "kubeflow.org", "MPIJob", "mpijobs", &mpijob_schema);
