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
 * sshd is needed. */
#include <stdio.h>
#include <string.h>

#include "api/mpi_agent.h"
#include "base/buf.h"
#include "controller/jobs/framework.h"

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
