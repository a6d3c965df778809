/* mpi_v2.c - MPIJob kubeflow.org/v2beta1 (mpi-operator's semantics): a
 * Launcher running mpirun and Workers it starts ranks on, reached by name
 * through the headless Service `<job>` (pods `<job>-worker-<i>` with
 * hostname = pod name and subdomain = job name), the hostfile and
 * discover_hosts.sh at /etc/mpi, the Secret `<job>-ssh` mounted at
 * sshAuthMountPath, and the launcher's environment for OpenMPI, Intel MPI
 * or MPICH.
 *
 * mpi-operator's mpirun reaches the workers over ssh. Every pod of an
 * embedded Trainyard runs on this one machine, so here, as for v1 (mpi.c),
 * the launcher's mpirun is handed an rsh agent (/etc/mpi/kubexec.sh, the
 * runtime backend's: api/mpi_agent.h) that runs the command on this machine
 * as the target pod, its ssh options skipped and its host's first label
 * taken as the pod (OMPI_MCA_orte_keep_fqdn_hostnames); the ssh credentials
 * are made and mounted as upstream's for programs that read them, but no
 * sshd is needed.
 *
 * The kind: MPIJob kubeflow.org/v2beta1, the API of mpi-operator v2: one Launcher running
 * mpirun and Workers it starts ranks on, with the MPI implementation (OpenMPI, Intel, MPICH),
 * slots per worker, where the ssh credentials are mounted and when the launcher is created.
 * The same group, kind and plural as the training operator's MPIJob v1 (kind_mpijob.c), another
 * schema: both are served, each object is read and written only in the version it was created
 * in (docs/compatibility.md). */
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

static const api_column_path column_paths[] = {
    {"Age", ".metadata.creationTimestamp"}, {NULL, NULL},
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
    .column_paths = column_paths,
    .schema = &mpijob_v2_schema,
};

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

#define CONFIG_VOLUME "mpi-job-config"
#define CONFIG_PATH MPI_AGENT_DIR
#define SSH_VOLUME "ssh-auth"
#define ROOT_SSH_PATH "/root/.ssh"

static const char idle_script[] = "trap 'exit 0' TERM; while :; do sleep 3600 & wait; done";

static const char *spec_str(const job_ctx *c, const char *key, const char *dflt)
{
    const char *v =
        json_string_value(json_object_get(json_object_get(c->job, "spec"), key));
    return v && *v ? v : dflt;
}

static long long slots(const job_ctx *c)
{
    json_t *v = json_object_get(json_object_get(c->job, "spec"), "slotsPerWorker");
    return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : 1;
}

static bool launcher_as_worker(const job_ctx *c)
{
    return json_is_true(
        json_object_get(json_object_get(c->job, "spec"), "runLauncherAsWorker"));
}

static const char *impl(const job_ctx *c)
{
    return spec_str(c, "mpiImplementation", "OpenMPI");
}

void jf_mpi2_launcher_env(const job_ctx *c, json_t *env)
{
    const char *mpi = impl(c);

    jf_env(env, "K_MPI_JOB_ROLE", "launcher");
    if (strcmp(mpi, "Intel") == 0) {
        jf_env(env, "I_MPI_HYDRA_HOST_FILE", CONFIG_PATH "/hostfile");
        jf_env(env, "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "-o ConnectionAttempts=10");
        jf_envf(env, "I_MPI_PERHOST", "%lld", slots(c));
        /* Trainyard's: the rsh agent in place of ssh */
        jf_env(env, "I_MPI_HYDRA_BOOTSTRAP", "rsh");
        jf_env(env, "I_MPI_HYDRA_BOOTSTRAP_EXEC", MPI_AGENT_PATH);
    } else if (strcmp(mpi, "MPICH") == 0) {
        jf_env(env, "HYDRA_HOST_FILE", CONFIG_PATH "/hostfile");
        jf_env(env, "HYDRA_LAUNCH_EXTRA_ARGS", "-o ConnectionAttempts=10");
        jf_env(env, "HYDRA_LAUNCHER", "rsh");
        jf_env(env, "HYDRA_LAUNCHER_EXEC", MPI_AGENT_PATH);
    } else {
        jf_env(env, "OMPI_MCA_orte_keep_fqdn_hostnames", "true");
        jf_env(env, "OMPI_MCA_orte_default_hostfile", CONFIG_PATH "/hostfile");
        jf_env(env, "OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10");
        jf_envf(env, "OMPI_MCA_orte_set_default_slots", "%lld", slots(c));
        jf_env(env, "OMPI_MCA_plm_rsh_agent", MPI_AGENT_PATH);
    }
    /* A launcher that runs no ranks is kept off the GPUs. */
    if (!launcher_as_worker(c)) {
        jf_env(env, "NVIDIA_VISIBLE_DEVICES", "");
        jf_env(env, "NVIDIA_DRIVER_CAPABILITIES", "");
    }
}

static json_t *array_member(json_t *obj, const char *key)
{
    json_t *a = json_object_get(obj, key);

    if (!json_is_array(a)) {
        a = json_array();
        json_object_set_new(obj, key, a);
    }
    return a;
}

static void add_env(json_t *ct, json_t *env)
{
    json_array_extend(array_member(ct, "env"), env);
    json_decref(env);
}

/* The Secret <job>-ssh at sshAuthMountPath (mode 0600 when it is root's). */
static void mount_ssh(const job_ctx *c, json_t *spec, json_t *ct)
{
    const char *path = spec_str(c, "sshAuthMountPath", ROOT_SSH_PATH);
    char secret[300];
    json_t *vol;

    snprintf(secret, sizeof(secret), "%s-ssh", c->name);
    vol = json_pack("{s:s, s:{s:s, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}}", "name",
                    SSH_VOLUME, "secret", "secretName", secret, "items", "key",
                    "ssh-privatekey", "path", "id_rsa", "key", "ssh-publickey", "path",
                    "id_rsa.pub", "key", "ssh-publickey", "path", "authorized_keys");
    if (strcmp(path, ROOT_SSH_PATH) == 0)
        json_object_set_new(json_object_get(vol, "secret"), "defaultMode", json_integer(0600));
    json_array_append_new(array_member(spec, "volumes"), vol);
    json_array_append_new(array_member(ct, "volumeMounts"),
                          json_pack("{s:s, s:s}", "name", SSH_VOLUME, "mountPath", path));
}

static void mount_config(const job_ctx *c, json_t *spec, json_t *ct)
{
    char cm[300];

    snprintf(cm, sizeof(cm), "%s-config", c->name);
    json_array_append_new(array_member(spec, "volumes"), json_pack(
        "{s:s, s:{s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}, {s:s, s:s, s:i}]}}", "name",
        CONFIG_VOLUME, "configMap", "name", cm, "items", "key", "hostfile", "path",
        "hostfile", "mode", 0444, "key", "discover_hosts.sh", "path", "discover_hosts.sh",
        "mode", 0555, "key", "kubexec.sh", "path", "kubexec.sh", "mode", 0555));
    json_array_append_new(array_member(ct, "volumeMounts"),
                          json_pack("{s:s, s:s}", "name", CONFIG_VOLUME, "mountPath",
                                    CONFIG_PATH));
}

/* Upstream edits the pod template's first container only: the env, the
 * mounts, and a worker's command when it has neither command nor args (sshd
 * there, an idle loop here). */
static void mpi2_decorate(const job_ctx *c, const char *rtype, int index, json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec");
    json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
    json_t *ct = json_array_get(json_object_get(spec, "containers"), 0);
    bool launcher = strcmp(rtype, "Launcher") == 0;
    char host[300];
    json_t *env = json_array();

    if (!json_is_object(spec) || !json_is_object(ct)) {
        json_decref(env);
        return;
    }
    jf_mpi_pod_name(c, rtype, index, host, sizeof(host));
    json_object_set_new(spec, "hostname", json_string(host));
    json_object_set_new(spec, "subdomain", json_string(c->name));
    if (json_is_object(labels))
        json_object_set_new(labels, "training.kubeflow.org/job-role",
                            json_string(launcher ? "launcher" : "worker"));
    if (launcher) {
        jf_mpi2_launcher_env(c, env);
        add_env(ct, env);
        mount_config(c, spec, ct);
    } else {
        jf_env(env, "K_MPI_JOB_ROLE", "worker");
        add_env(ct, env);
        if (!json_array_size(json_object_get(ct, "command")) &&
            !json_array_size(json_object_get(ct, "args")))
            json_object_set_new(ct, "command",
                                json_pack("[s, s, s]", "/bin/sh", "-c", idle_script));
    }
    mount_ssh(c, spec, ct);
}

/* Whether pods holds the pod and it has ended (Succeeded or Failed). */
static bool pod_ended(const json_t *pods, const char *name)
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

static void host_line(const job_ctx *c, ty_buf *hosts, ty_buf *discover, const char *pod,
                      bool listed)
{
    bool openmpi = strcmp(impl(c), "OpenMPI") == 0;

    ty_buf_printf(hosts, openmpi ? "%s.%s.%s.svc slots=%lld\n" : "%s.%s.%s.svc:%lld\n", pod,
                  c->name, c->ns, slots(c));
    if (listed)
        ty_buf_printf(discover, "echo %s.%s.%s.svc\n", pod, c->name, c->ns);
}

/* hostfile: every worker (the launcher first when it runs ranks), as
 * `<pod>.<job>.<ns>.svc slots=N` (OpenMPI) or `...:N` (Intel, MPICH).
 * discover_hosts.sh: the same hosts that have not ended (upstream lists the
 * running ones; a pod's volumes are written once, as it starts, so that
 * list would be whatever the last pass saw, see mpi.c). */
static json_t *mpi2_configmap(const job_ctx *c, const json_t *pods)
{
    ty_buf hosts = {0}, discover = {0};
    long long n = jf_replicas(c, "Worker");
    char host[300];
    json_t *cm;

    ty_buf_puts(&discover, "#!/bin/sh\n");
    if (launcher_as_worker(c)) {
        jf_mpi_pod_name(c, "Launcher", 0, host, sizeof(host));
        host_line(c, &hosts, &discover, host, true);
    }
    for (long long w = 0; w < n; w++) {
        jf_host(c, "Worker", (int)w, host, sizeof(host));
        host_line(c, &hosts, &discover, host, !pod_ended(pods, host));
    }
    snprintf(host, sizeof(host), "%s-config", c->name);
    cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s%, s:s, s:s%}}", "apiVersion",
                   "v1", "kind", "ConfigMap", "metadata", "name", host, "namespace", c->ns,
                   "labels", "app", c->name, "data", "hostfile", hosts.data ? hosts.data : "",
                   hosts.len, MPI_AGENT_FILE, mpi_agent_script(), "discover_hosts.sh",
                   discover.data ? discover.data : "", discover.len);
    ty_buf_free(&hosts);
    ty_buf_free(&discover);
    return cm;
}

/* launcherCreationPolicy WaitForWorkersReady: the launcher once every
 * worker runs. */
static bool mpi2_may_create(const job_ctx *c, const char *rtype, const jf_counts *counts,
                            size_t n)
{
    const jf_counts *w = jf_find(counts, n, "Worker");

    if (strcmp(rtype, "Launcher") != 0 ||
        strcmp(spec_str(c, "launcherCreationPolicy", "AtStartup"), "WaitForWorkersReady") != 0)
        return true;
    return !w || w->running >= w->replicas;
}

/* The headless Service <job> over every pod of the job (not-ready ones too
 * when the launcher runs ranks), and the Secret <job>-ssh, of type
 * kubernetes.io/ssh-auth, its data left for the engine to fill with a new
 * key pair (ssh-keygen is no pure plugin's to run). */
static json_t *mpi2_extras(const job_ctx *c)
{
    char secret[300];
    json_t *svc;

    svc = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s, s:{s:s, s:s}, s:b}}",
                    "apiVersion", "v1", "kind", "Service", "metadata", "name", c->name,
                    "namespace", c->ns, "labels", "app", c->name, "spec", "clusterIP", "None",
                    "selector", "training.kubeflow.org/operator-name", c->kind->operator_name,
                    "training.kubeflow.org/job-name", c->name, "publishNotReadyAddresses",
                    launcher_as_worker(c));
    snprintf(secret, sizeof(secret), "%s-ssh", c->name);
    return json_pack("[o, {s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:s}]", svc, "apiVersion", "v1",
                     "kind", "Secret", "metadata", "name", secret, "namespace", c->ns,
                     "labels", "app", c->name, "type", "kubernetes.io/ssh-auth");
}

const jobs_framework jf_mpi_v2 = {
    .kind = &kf_mpijob_v2,
    .env_all_containers = false, /* decorate gives the first container its env */
    .is_master = jf_mpi_is_master,
    .succeeded = jf_mpi_succeeded,
    .service = jf_mpi_service,
    .pod_name = jf_mpi_pod_name,
    .decorate = mpi2_decorate,
    .configmap = mpi2_configmap,
    .may_create = mpi2_may_create,
    .extras = mpi2_extras,
};
