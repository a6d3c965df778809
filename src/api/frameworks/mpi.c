/* mpi.c - MPIJob (v1 semantics): a Launcher running mpirun and Workers it
 * starts ranks on. mpirun reads the hostfile and reaches each worker through
 * the rsh agent kubexec.sh, both from the ConfigMap {job}-config mounted at
 * /etc/mpi in the launcher.
 *
 * Upstream's kubexec.sh runs `kubectl exec <pod> -- sh -c "<cmd>"`. Ours is
 * the runtime backend's (api/mpi_agent.h): on one machine it runs the command
 * here directly (with the target pod's name exported): OpenMPI's orted binds
 * its own ports, and the worker pod exists so that the job's lifecycle, its
 * resources and its status are what users see upstream.
 *
 * The kind: MPIJob (kubeflow.org/v1): one Launcher running mpirun and Workers it execs into;
 * slotsPerWorker processes per worker. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/mpi_agent.h"
#include "api/schema.h"
#include "base/buf.h"

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

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

#define CONFIG_VOLUME "mpi-job-config"
#define CONFIG_PATH MPI_AGENT_DIR

/* Workers with no command of their own idle until mpirun's ranks are done
 * and the pod is stopped; TERM ends them with status 0. */
static const char idle_script[] = "trap 'exit 0' TERM; while :; do sleep 3600 & wait; done";

static long long slots(const job_ctx *c)
{
    json_t *v = json_object_get(json_object_get(c->job, "spec"), "slotsPerWorker");
    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 1;
}

static void mpi_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    (void)c, (void)index;
    if (strcmp(rtype, "Launcher") != 0)
        return;
    jf_env(env, "OMPI_MCA_plm_rsh_agent", MPI_AGENT_PATH);
    jf_env(env, "OMPI_MCA_orte_default_hostfile", CONFIG_PATH "/hostfile");
    jf_env(env, "I_MPI_HYDRA_BOOTSTRAP", "rsh");
    jf_env(env, "I_MPI_HYDRA_BOOTSTRAP_EXEC", MPI_AGENT_PATH);
}

bool jf_mpi_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)index;
    return strcmp(rtype, "Launcher") == 0;
}

bool jf_mpi_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "Launcher"));
}

jf_service_mode jf_mpi_service(const job_ctx *c, const char *rtype)
{
    (void)c, (void)rtype;
    return JF_SVC_NONE;
}

void jf_mpi_pod_name(const job_ctx *c, const char *rtype, int index, char *buf, size_t len)
{
    if (strcmp(rtype, "Launcher") == 0)
        snprintf(buf, len, "%s-launcher", c->name);
    else
        jf_host(c, rtype, index, buf, len);
}

static void mount_config(const job_ctx *c, json_t *spec)
{
    char cm[300];
    json_t *vols = json_object_get(spec, "volumes"), *ct;
    size_t i;

    snprintf(cm, sizeof(cm), "%s-config", c->name);
    if (!json_is_array(vols)) {
        vols = json_array();
        json_object_set_new(spec, "volumes", vols);
    }
    json_array_append_new(vols, json_pack(
        "{s:s, s:{s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}, {s:s, s:s, s:i}]}}", "name",
        CONFIG_VOLUME, "configMap", "name", cm, "items", "key", "kubexec.sh", "path",
        "kubexec.sh", "mode", 0555, "key", "hostfile", "path", "hostfile", "mode", 0444, "key",
        "discover_hosts.sh", "path", "discover_hosts.sh", "mode", 0555));
    json_array_foreach(json_object_get(spec, "containers"), i, ct) {
        json_t *mounts = json_object_get(ct, "volumeMounts");
        if (!json_is_array(mounts)) {
            mounts = json_array();
            json_object_set_new(ct, "volumeMounts", mounts);
        }
        json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", CONFIG_VOLUME,
                                                "mountPath", CONFIG_PATH));
    }
}

static void mpi_decorate(const job_ctx *c, const char *rtype, int index, json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec"), *ct;
    size_t i;

    (void)index;
    if (strcmp(rtype, "Launcher") == 0) {
        mount_config(c, spec);
        return;
    }
    json_array_foreach(json_object_get(spec, "containers"), i, ct) {
        json_t *cmd = json_object_get(ct, "command");
        if (cmd && json_array_size(cmd))
            continue;
        json_object_set_new(ct, "command", json_pack("[s, s, s]", "/bin/sh", "-c", idle_script));
        json_object_del(ct, "args");
    }
}

/* Whether pods holds the worker pod name and it has ended (Succeeded or
 * Failed): it listens on nothing any more. */
static bool worker_ended(const json_t *pods, const char *name)
{
    json_t *p;
    size_t i;

    json_array_foreach(pods, i, p) {
        const char *n = json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
        const char *phase =
            json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
        if (n && strcmp(n, name) == 0)
            return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    }
    return false;
}

/* hostfile lists every worker; discover_hosts.sh (Horovod's elastic host
 * discovery) those that have not ended. The launcher starts with its workers
 * (one gang), and a pod's volumes are written once as it starts: listing
 * only the workers seen Running would hand it whatever the last pass saw,
 * often nobody. */
static json_t *mpi_configmap(const job_ctx *c, const json_t *pods)
{
    ty_buf hosts = {0}, discover = {0};
    long long n = jf_replicas(c, "Worker"), s = slots(c);
    char host[300];
    json_t *cm;

    ty_buf_puts(&discover, "#!/bin/sh\n");
    for (long long w = 0; w < n; w++) {
        jf_host(c, "Worker", (int)w, host, sizeof(host));
        ty_buf_printf(&hosts, "%s slots=%lld\n", host, s);
        if (!worker_ended(pods, host))
            ty_buf_printf(&discover, "echo %s:%lld\n", host, s);
    }
    snprintf(host, sizeof(host), "%s-config", c->name);
    cm = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s%, s:s, s:s%}}", "apiVersion", "v1", "kind",
                   "ConfigMap", "metadata", "name", host, "namespace", c->ns, "data", "hostfile",
                   hosts.data ? hosts.data : "", hosts.len, MPI_AGENT_FILE, mpi_agent_script(),
                   "discover_hosts.sh", discover.data ? discover.data : "", discover.len);
    ty_buf_free(&hosts);
    ty_buf_free(&discover);
    return cm;
}

const jobs_framework jf_mpi = {
    .kind = &kf_mpijob,
    .env_all_containers = true,
    .env = mpi_env,
    .is_master = jf_mpi_is_master,
    .succeeded = jf_mpi_succeeded,
    .service = jf_mpi_service,
    .pod_name = jf_mpi_pod_name,
    .decorate = mpi_decorate,
    .configmap = mpi_configmap,
};
