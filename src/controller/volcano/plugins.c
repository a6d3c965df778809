/* plugins.c - the Volcano job plugins that shape pods: env, svc, pytorch.
 *
 * Pure: they read the job and append to JSON they are handed; reconcile.c
 * creates the svc plugin's Service and ConfigMap from vc_svc_configmap_data. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/jobs/framework.h"
#include "controller/volcano/vc_int.h"

#define SVC_MOUNT "/etc/volcano"
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

/* "a.<job>,b.<job>" for every pod of task; the caller frees. */
static char *task_hosts(const json_t *job, const char *task, const char *sep)
{
    long long n = task_replicas(job, task);
    size_t cap = 1, used = 0;
    char *out;

    for (long long i = 0; i < n; i++)
        cap += 2 * strlen(job_name(job)) + strlen(task) + 32;
    if (!(out = calloc(1, cap)))
        return NULL;
    for (long long i = 0; i < n; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s-%s-%lld.%s", i ? sep : "",
                                 job_name(job), task, i, job_name(job));
    return out;
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

/* "--name=value" from the plugin's argument list, else def. */
static const char *plugin_arg(const json_t *job, const char *plugin, const char *name,
                              const char *def)
{
    json_t *args = json_object_get(json_object_get(json_object_get(job, "spec"), "plugins"),
                                   plugin), *a;
    size_t i, n = strlen(name);

    json_array_foreach(args, i, a) {
        const char *s = json_string_value(a);
        if (s && strncmp(s, "--", 2) == 0 && strncmp(s + 2, name, n) == 0 && s[2 + n] == '=')
            return s + 3 + n;
    }
    return def;
}

static void pytorch_env(const json_t *job, const char *task, int index, json_t *env)
{
    const char *master = plugin_arg(job, "pytorch", "master", "master");
    const char *worker = plugin_arg(job, "pytorch", "worker", "worker");
    int port = atoi(plugin_arg(job, "pytorch", "port", "23456"));
    long long masters = task_replicas(job, master);

    if (strcmp(task, master) != 0 && strcmp(task, worker) != 0)
        return;
    jf_envf(env, "MASTER_ADDR", "%s-%s-0.%s", job_name(job), master, job_name(job));
    jf_envf(env, "MASTER_PORT", "%d", port > 0 ? port : PYTORCH_PORT);
    jf_envf(env, "WORLD_SIZE", "%lld", masters + task_replicas(job, worker));
    jf_envf(env, "RANK", "%lld", strcmp(task, master) == 0 ? index : masters + index);
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
}

static void mount_svc(json_t *spec, const char *volume)
{
    json_t *vols = json_object_get(spec, "volumes"), *c;
    size_t i;

    if (!json_is_array(vols)) {
        vols = json_array();
        json_object_set_new(spec, "volumes", vols);
    }
    json_array_append_new(vols, json_pack("{s:s, s:{s:s}}", "name", volume, "configMap",
                                          "name", volume));
    json_array_foreach(json_object_get(spec, "containers"), i, c) {
        json_t *mounts = json_object_get(c, "volumeMounts");
        if (!json_is_array(mounts)) {
            mounts = json_array();
            json_object_set_new(c, "volumeMounts", mounts);
        }
        json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", volume, "mountPath",
                                                SVC_MOUNT));
    }
}

void vc_plugins_decorate(const json_t *job, json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec");
    const char *pod_name =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    char volume[300];

    if (!vc_plugin_on(job, "svc") || !pod_name)
        return;
    json_object_set_new(spec, "hostname", json_string(pod_name));
    json_object_set_new(spec, "subdomain", json_string(job_name(job)));
    snprintf(volume, sizeof(volume), "%s-svc", job_name(job));
    mount_svc(spec, volume);
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
