/* kind_mpijob_v2.c - MPIJob kubeflow.org/v2beta1, the API of mpi-operator v2:
 * one Launcher running mpirun and Workers it starts ranks on, with the
 * MPI implementation (OpenMPI, Intel, MPICH), slots per worker, where the
 * ssh credentials are mounted and when the launcher is created.
 *
 * The same group, kind and plural as the training operator's MPIJob v1
 * (kind_mpijob.c), another schema: both are served, each object is read and
 * written only in the version it was created in (docs/compatibility.md). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

static const char *const implementations[] = {"Intel", "MPICH", "OpenMPI", NULL};
static const char *const restart_policies[] = {"Never", "OnFailure", NULL};
static const char *const managers[] = {"kubeflow.org/mpi-operator",
                                       "kueue.x-k8s.io/multikueue", NULL};

/* An empty string counts as unset: the controller defaults it so. */
static void default_str(json_t *spec, const char *key, const char *value)
{
    const char *v = meta_str(spec, key);

    if (v && !*v)
        json_object_del(spec, key);
    meta_default(spec, key, json_string(value));
}

/* The CRD's schema defaults and the controller's (SetDefaults_MPIJob);
 * replicas, restartPolicy (Launcher OnFailure, Worker Never), cleanPodPolicy
 * None and suspend false come from kf_apply_defaults. */
static void mpi2_defaults(const kf_kind *k, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");

    (void)k;
    meta_default(spec, "slotsPerWorker", json_integer(1));
    default_str(spec, "sshAuthMountPath", "/root/.ssh");
    default_str(spec, "mpiImplementation", "OpenMPI");
    default_str(spec, "launcherCreationPolicy", "AtStartup");
    meta_default(spec, "runLauncherAsWorker", json_false());
}

/* Every pod's hostname is `<job>-worker-<i>` (a DNS-1035 label): the name
 * must leave room for the last worker's. */
static void check_hostname(const json_t *spec, const char *name, ty_error *err)
{
    json_t *w = json_object_get(json_object_get(spec, "mpiReplicaSpecs"), "Worker");
    long long n = json_integer_value(json_object_get(w, "replicas"));
    char host[400];

    if (!name || strlen(name) > 300)
        return; /* kf_check_name reports it */
    snprintf(host, sizeof(host), "%s-worker-%lld", name, n > 0 ? n - 1 : 0);
    if (strlen(host) > 63)
        meta_invalid_str(err, "metadata.name", name,
                         "will not able to create pod and service with invalid DNS label "
                         "\"%s\": must be no more than 63 characters", host);
}

static void check_replica(const json_t *spec, const char *type, ty_error *err)
{
    json_t *r = json_object_get(json_object_get(spec, "mpiReplicaSpecs"), type);
    json_t *n = json_object_get(r, "replicas"), *rp = json_object_get(r, "restartPolicy");
    char path[128];

    if (!json_is_object(r))
        return;
    snprintf(path, sizeof(path), "spec.mpiReplicaSpecs[%s].restartPolicy", type);
    /* Always and ExitCode pass the common enum; mpi-operator takes two. */
    if (json_is_string(rp) && (!strcmp(json_string_value(rp), "Always") ||
                               !strcmp(json_string_value(rp), "ExitCode")))
        meta_not_supported(err, path, rp, restart_policies);
    snprintf(path, sizeof(path), "spec.mpiReplicaSpecs[%s].replicas", type);
    if (!json_is_integer(n))
        return;
    if (!strcmp(type, "Launcher") && json_integer_value(n) != 1)
        meta_invalid(err, path, n, "must be 1");
    else if (!strcmp(type, "Worker") && json_integer_value(n) <= 0)
        meta_invalid(err, path, n, "must be greater than or equal to 1");
}

/* mpi-operator's ValidateMPIJob (its controller's check, made here at
 * admission; see docs/compatibility.md). */
static void mpi2_validate(const kf_kind *k, const json_t *spec, const json_t *old,
                          ty_error *err)
{
    json_t *map = json_object_get(spec, "mpiReplicaSpecs");

    (void)k, (void)old;
    if (json_object_size(map) > 0 && !json_object_get(map, "Launcher"))
        meta_required(err, "spec.mpiReplicaSpecs[Launcher]", "must have Launcher replica spec");
    check_replica(spec, "Launcher", err);
    check_replica(spec, "Worker", err);
    kf_check_int(spec, "slotsPerWorker", "spec.slotsPerWorker", 0, INT32_MAX, err, NULL);
    kf_check_enum(spec, "mpiImplementation", "spec.mpiImplementation", implementations, err);
}

static int mpi2_validate_all(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    int rc = kf_validate(&kf_mpijob_v2, obj, old, err);

    /* the name rule needs the worker count, which kf_validate has checked */
    check_hostname(json_object_get(obj, "spec"),
                   meta_str(json_object_get(obj, "metadata"), "name"), err);
    if (rc == 0 && ty_error_ncauses(err) > before)
        return ty_seterr(err, TY_EINVALID, "MPIJob is invalid");
    return rc;
}

const kf_kind kf_mpijob_v2 = {
    .resource = &api_mpijob_v2,
    .kind = "MPIJob",
    .replica_field = "mpiReplicaSpecs",
    .types = {{"Launcher", 1, "OnFailure"}, {"Worker", 0, NULL}},
    .default_container = "mpi",
    .default_container_optional = true,
    .port_name = "mpi-port",
    .port = 9999,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "mpi-operator",
    .framework = "mpi",
    .managed_by = managers,
    .defaults = mpi2_defaults,
    .validate = mpi2_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("mpiReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("slotsPerWorker", API_T_INT32),
    API_FIELD("sshAuthMountPath", API_T_STRING),
    API_FIELD("mpiImplementation", API_T_STRING),
    API_FIELD("launcherCreationPolicy", API_T_STRING),
    API_FIELD("runLauncherAsWorker", API_T_BOOLEAN),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema mpijob_v2_schema = API_SCHEMA(top_fields);

/* mpi-operator's CRD declares no printer columns: kubectl shows NAME, AGE. */
static const api_column columns[] = {
    {.name = "Age", .type = "date", .format = "", .description = "", .priority = 0},
};

static void mpi2_row_cells(const json_t *obj, time_t now, json_t *cells)
{
    char age[32];

    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}

static void mpi2_apply_defaults(json_t *obj)
{
    kf_apply_defaults(&kf_mpijob_v2, obj);
}

const api_resource api_mpijob_v2 = {
    .group = "kubeflow.org", .version = "v2beta1", .kind = "MPIJob",
    .list_kind = "MPIJobList", .plural = "mpijobs", .singular = "mpijob",
    .namespaced = true, .has_status = true, .builtin = false,
    .apply_defaults = mpi2_apply_defaults, .validate = mpi2_validate_all,
    .columns = columns, .ncolumns = 1, .row_cells = mpi2_row_cells,
    .schema = &mpijob_v2_schema,
};
