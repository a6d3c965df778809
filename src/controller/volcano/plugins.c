/* plugins.c - the Volcano job plugins that shape pods: env, svc, ssh,
 * pytorch, tensorflow and mpi (ray and hcclrank: plugins_ray.c).
 *
 * Pure: they read the job and append to JSON they are handed; reconcile.c
 * creates the svc plugin's Service and ConfigMap from vc_svc_configmap_data,
 * the ssh plugin's Secret (ssh.c), the mpi plugin's ConfigMap from
 * vc_mpi_configmap_data and the ray plugin's Service from vc_ray_service. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/framework.h"
#include "api/mpi_agent.h"
#include "base/buf.h"
#include "controller/kit.h"
#include "controller/volcano/vc_int.h"

#define SVC_MOUNT "/etc/volcano"
#define SSH_DEFAULT_PATH "/root/.ssh"
#define MPI_MOUNT MPI_AGENT_DIR
#define MPI_AGENT_ENV "OMPI_MCA_plm_rsh_agent"
#define PYTORCH_PORT 23456

static const char *job_name(const json_t *job)
{
    const char *n = json_string_value(json_object_get(json_object_get(job, "metadata"), "name"));
    return n ? n : "";
}

static const json_t *tasks(const json_t *job)
{
    return json_object_get(json_object_get(job, "spec"), "tasks");
}

static long long task_replicas(const json_t *job, const char *task)
{
    json_t *t;
    size_t i;

    json_array_foreach(tasks(job), i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && strcmp(n, task) == 0)
            return json_integer_value(json_object_get(t, "replicas"));
    }
    return 0;
}

static long long task_total(const json_t *job)
{
    long long n = 0;
    json_t *t;
    size_t i;

    json_array_foreach(tasks(job), i, t)
        n += json_integer_value(json_object_get(t, "replicas"));
    return n;
}

bool vc_plugin_on(const json_t *job, const char *name)
{
    return json_object_get(json_object_get(json_object_get(job, "spec"), "plugins"), name) !=
           NULL;
}

void vc_env_name(const char *task, char *buf, size_t len)
{
    size_t i;

    for (i = 0; task[i] && i + 1 < len; i++)
        buf[i] = task[i] == '-' ? '_' : (char)toupper((unsigned char)task[i]);
    if (len)
        buf[i] = '\0';
}

/* A template string field, NULL when unset or empty. */
static const char *template_str(const json_t *job, const char *task, const char *key)
{
    json_t *t;
    size_t i;

    json_array_foreach(tasks(job), i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && strcmp(n, task) == 0) {
            const char *v = json_string_value(json_object_get(
                json_object_get(json_object_get(t, "template"), "spec"), key));
            return v && *v ? v : NULL;
        }
    }
    return NULL;
}

void vc_pod_host(const json_t *job, const char *task, long long index, char *buf, size_t len)
{
    const char *host = template_str(job, task, "hostname");
    const char *sub = template_str(job, task, "subdomain");

    if (host)
        snprintf(buf, len, "%s.%s", host, sub ? sub : job_name(job));
    else
        snprintf(buf, len, "%s-%s-%lld.%s", job_name(job), task, index, sub ? sub : job_name(job));
}

/* "<pod>.<job>,..." for every pod of task, the caller frees. A template
 * hostname, which every pod of the task shares, is listed once (upstream's
 * svc and mpi plugins do so). */
static char *task_hosts(const json_t *job, const char *task, const char *sep)
{
    long long n = task_replicas(job, task);
    ty_buf b = {0};
    char host[600];

    if (template_str(job, task, "hostname") && n > 1)
        n = 1;
    for (long long i = 0; i < n; i++) {
        vc_pod_host(job, task, i, host, sizeof(host));
        if (ty_buf_printf(&b, "%s%s", i ? sep : "", host) < 0) {
            ty_buf_free(&b);
            return NULL;
        }
    }
    return ty_buf_steal(&b, NULL);
}

static void svc_env(const json_t *job, json_t *env)
{
    json_t *t;
    size_t i;

    json_array_foreach(tasks(job), i, t) {
        const char *task = json_string_value(json_object_get(t, "name"));
        char ename[128], key[160];
        char *hosts;
        if (!task)
            continue;
        vc_env_name(task, ename, sizeof(ename));
        if ((hosts = task_hosts(job, task, ","))) {
            snprintf(key, sizeof(key), "VC_%s_HOSTS", ename);
            jf_env(env, key, hosts);
            free(hosts);
        }
        snprintf(key, sizeof(key), "VC_%s_NUM", ename);
        jf_envf(env, key, "%lld", task_replicas(job, task));
    }
}

/* A plugin argument, else def. Go's flag forms, as upstream parses them:
 * "--name=value", "-name=value", or "--name" / "-name" followed by the value
 * as the next element. */
static const char *plugin_arg(const json_t *job, const char *plugin, const char *name,
                              const char *def)
{
    json_t *args = json_object_get(json_object_get(json_object_get(job, "spec"), "plugins"),
                                   plugin), *a;
    size_t i, n = strlen(name);

    json_array_foreach(args, i, a) {
        const char *s = json_string_value(a);
        if (!s || s[0] != '-')
            continue;
        s += s[1] == '-' ? 2 : 1;
        if (strncmp(s, name, n) != 0)
            continue;
        if (s[n] == '=')
            return s + n + 1;
        if (s[n] == '\0' && json_is_string(json_array_get(args, i + 1)))
            return json_string_value(json_array_get(args, i + 1));
    }
    return def;
}

const char *vc_plugin_arg(const json_t *job, const char *plugin, const char *name,
                          const char *def)
{
    return plugin_arg(job, plugin, name, def);
}

static void pytorch_env(const json_t *job, const char *task, int index, json_t *env)
{
    const char *master = plugin_arg(job, "pytorch", "master", "master");
    const char *worker = plugin_arg(job, "pytorch", "worker", "worker");
    int port = atoi(plugin_arg(job, "pytorch", "port", "23456"));
    long long masters = task_replicas(job, master);

    char addr[600];

    if (strcmp(task, master) != 0 && strcmp(task, worker) != 0)
        return;
    vc_pod_host(job, master, 0, addr, sizeof(addr));
    jf_env(env, "MASTER_ADDR", addr);
    jf_envf(env, "MASTER_PORT", "%d", port > 0 ? port : PYTORCH_PORT);
    jf_envf(env, "WORLD_SIZE", "%lld", masters + task_replicas(job, worker));
    jf_envf(env, "RANK", "%lld", strcmp(task, master) == 0 ? index : masters + index);
}

/* TF_CONFIG: every cluster task's "<pod>.<job>:port" and this pod's role.
 * Evaluators are not part of a TensorFlow cluster; a one-pod job needs no
 * cluster at all (upstream skips it too). */
static void tensorflow_env(const json_t *job, const char *task, int index, json_t *env)
{
    static const char *const roles[] = {"chief", "ps", "worker", "evaluator"};
    const char *port = plugin_arg(job, "tensorflow", "port", "2222");
    json_t *cluster = json_object(), *cfg;
    const char *type = NULL;
    char *text;

    for (size_t r = 0; r < sizeof(roles) / sizeof(roles[0]); r++) {
        const char *name = plugin_arg(job, "tensorflow", roles[r], roles[r]);
        long long n = task_replicas(job, name);
        json_t *hosts = json_array();
        if (!strcmp(task, name))
            type = roles[r];
        for (long long i = 0; i < n; i++) {
            char host[512];
            snprintf(host, sizeof(host), "%s-%s-%lld.%s:%s", job_name(job), name, i,
                     job_name(job), port);
            json_array_append_new(hosts, json_string(host));
        }
        if (n > 0 && strcmp(roles[r], "evaluator") != 0)
            json_object_set_new(cluster, roles[r], hosts);
        else
            json_decref(hosts);
    }
    if (!type || task_total(job) <= 1) {
        json_decref(cluster);
        return;
    }
    cfg = json_pack("{s:o, s:{s:s, s:i}}", "cluster", cluster, "task", "type", type, "index",
                    index);
    if ((text = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS))) {
        jf_env(env, "TF_CONFIG", text);
        free(text);
    }
    json_decref(cfg);
}

/* MPI_HOST: the worker pods' host names, for the master's mpirun. */
static void mpi_env(const json_t *job, const char *task, json_t *env)
{
    const char *master = plugin_arg(job, "mpi", "master", "master");
    char *hosts;

    if (strcmp(task, master) != 0)
        return;
    if ((hosts = task_hosts(job, plugin_arg(job, "mpi", "worker", "worker"), ","))) {
        jf_env(env, "MPI_HOST", hosts);
        free(hosts);
    }
}

void vc_plugins_env(const json_t *job, const char *task, int index, json_t *env)
{
    if (vc_plugin_on(job, "env")) {
        jf_envf(env, "VK_TASK_INDEX", "%d", index);
        jf_envf(env, "VC_TASK_INDEX", "%d", index);
    }
    if (vc_plugin_on(job, "svc"))
        svc_env(job, env);
    if (vc_plugin_on(job, "pytorch"))
        pytorch_env(job, task, index, env);
    if (vc_plugin_on(job, "tensorflow"))
        tensorflow_env(job, task, index, env);
    if (vc_plugin_on(job, "mpi"))
        mpi_env(job, task, env);
}

/* Adds volume (stolen) to the pod spec and mounts it at path everywhere. */
static void add_volume(json_t *spec, json_t *volume, const char *path)
{
    json_t *vols = json_object_get(spec, "volumes"), *c;
    const char *name = json_string_value(json_object_get(volume, "name"));
    size_t i;

    if (!json_is_array(vols)) {
        vols = json_array();
        json_object_set_new(spec, "volumes", vols);
    }
    json_array_foreach(json_object_get(spec, "containers"), i, c) {
        json_t *mounts = json_object_get(c, "volumeMounts");
        if (!json_is_array(mounts)) {
            mounts = json_array();
            json_object_set_new(c, "volumeMounts", mounts);
        }
        json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", name, "mountPath", path));
    }
    json_array_append_new(vols, volume);
}

bool vc_volume_claim(const json_t *job, const json_t *vol, size_t i, char *name, size_t len)
{
    const char *claim = json_string_value(json_object_get(vol, "volumeClaimName"));

    if (claim && *claim) {
        snprintf(name, len, "%s", claim);
        return true;
    }
    snprintf(name, len, "%s-volume-%zu", job_name(job), i);
    return json_is_object(json_object_get(vol, "volumeClaim"));
}

void vc_job_volumes(const json_t *job, json_t *pod)
{
    json_t *v;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(job, "spec"), "volumes"), i, v) {
        const char *path = json_string_value(json_object_get(v, "mountPath"));
        char name[300];
        if (!path)
            continue;
        if (vc_volume_claim(job, v, i, name, sizeof(name)))
            add_volume(json_object_get(pod, "spec"),
                       json_pack("{s:s, s:{s:s}}", "name", name, "persistentVolumeClaim",
                                 "claimName", name),
                       path);
        else /* neither a claim nor one to make: a scratch directory */
            add_volume(json_object_get(pod, "spec"),
                       json_pack("{s:s, s:{}}", "name", name, "emptyDir"), path);
    }
}

static void mount_svc(json_t *spec, const char *volume)
{
    add_volume(spec, json_pack("{s:s, s:{s:s}}", "name", volume, "configMap", "name", volume),
               SVC_MOUNT);
}

const char *vc_ssh_path(const json_t *job)
{
    const char *path = plugin_arg(job, "ssh", "ssh-key-file-path", SSH_DEFAULT_PATH);
    return path[0] == '/' ? path : SSH_DEFAULT_PATH;
}

/* The Secret `<job>-ssh` at the plugin's path; private files 0600, as ssh
 * requires of them. */
static void mount_ssh(const json_t *job, json_t *spec)
{
    char secret[300];

    snprintf(secret, sizeof(secret), "%s-ssh", job_name(job));
    add_volume(spec,
               json_pack("{s:s, s:{s:s, s:i, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}, "
                         "{s:s, s:s, s:i}, {s:s, s:s, s:i}]}}",
                         "name", secret, "secret", "secretName", secret, "defaultMode", 0600,
                         "items", "key", "id_rsa", "path", "id_rsa", "mode", 0600, "key",
                         "id_rsa.pub", "path", "id_rsa.pub", "mode", 0644, "key",
                         "authorized_keys", "path", "authorized_keys", "mode", 0600, "key",
                         "config", "path", "config", "mode", 0600),
               vc_ssh_path(job));
}

static bool has_env(const json_t *container, const char *name)
{
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(container, "env"), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && !strcmp(n, name))
            return true;
    }
    return false;
}

/* The mpi plugin's rsh agent at /etc/mpi/kubexec.sh, named to Open MPI in
 * every container that does not name an agent of its own (a container that
 * runs a real sshd can set OMPI_MCA_plm_rsh_agent=ssh). */
static void mount_mpi(const json_t *job, json_t *spec)
{
    char cm[300];
    json_t *c, *env;
    size_t i;

    snprintf(cm, sizeof(cm), "%s-mpi", job_name(job));
    add_volume(spec,
               json_pack("{s:s, s:{s:s, s:[{s:s, s:s, s:i}]}}", "name", cm, "configMap", "name",
                         cm, "items", "key", "kubexec.sh", "path", "kubexec.sh", "mode", 0555),
               MPI_MOUNT);
    json_array_foreach(json_object_get(spec, "containers"), i, c) {
        if (has_env(c, MPI_AGENT_ENV))
            continue;
        if (!json_is_array(env = json_object_get(c, "env"))) {
            env = json_array();
            json_object_set_new(c, "env", env);
        }
        json_array_append_new(env, json_pack("{s:s, s:s}", "name", MPI_AGENT_ENV, "value",
                                             MPI_AGENT_PATH));
    }
}

void vc_plugins_decorate(const json_t *job, json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec");
    const char *pod_name =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    char volume[300];

    if (!json_is_object(spec))
        return;
    if (vc_plugin_on(job, "svc") && pod_name) {
        /* the template's own hostname and subdomain stay, as upstream's */
        if (!json_string_length(json_object_get(spec, "hostname")))
            json_object_set_new(spec, "hostname", json_string(pod_name));
        if (!json_string_length(json_object_get(spec, "subdomain")))
            json_object_set_new(spec, "subdomain", json_string(job_name(job)));
        snprintf(volume, sizeof(volume), "%s-svc", job_name(job));
        mount_svc(spec, volume);
    }
    if (vc_plugin_on(job, "ssh"))
        mount_ssh(job, spec);
    if (vc_plugin_on(job, "mpi"))
        mount_mpi(job, spec);
    if (vc_plugin_on(job, "ray"))
        vc_ray_decorate(job, pod);
    /* last: it reads the RANK the other plugins gave the pod */
    if (vc_plugin_on(job, "hcclrank"))
        vc_hcclrank_decorate(job, pod);
}

/* Open MPI's rsh agent: `kubexec.sh <host> <command...>`, where host is a
 * pod's `<pod>.<job>` (MPI_HOST, /etc/volcano/<task>.host): the runtime
 * backend's (api/mpi_agent.h; on one machine it runs the command here, as
 * the target pod). Upstream ssh-es into the pod. */
json_t *vc_mpi_configmap_data(const json_t *job)
{
    (void)job;
    return json_pack("{s:s}", MPI_AGENT_FILE, mpi_agent_script());
}

json_t *vc_svc_configmap_data(const json_t *job)
{
    json_t *data = json_object(), *t;
    size_t i;

    json_array_foreach(tasks(job), i, t) {
        const char *task = json_string_value(json_object_get(t, "name"));
        char key[160], *hosts;
        if (!task || !(hosts = task_hosts(job, task, "\n")))
            continue;
        snprintf(key, sizeof(key), "%s.host", task);
        json_object_set_new(data, key, json_string(hosts));
        free(hosts);
    }
    return data;
}
