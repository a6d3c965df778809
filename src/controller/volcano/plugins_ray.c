/* plugins_ray.c - Volcano 1.13's ray and hcclrank job plugins.
 *
 * ray turns a job of a head task and a worker task into a Ray cluster: the
 * head's container runs the GCS (`ray start --head --block`), the workers'
 * join it by the head pod's DNS name, and a Service `<job>-head-svc` gives
 * clients the GCS, dashboard and client-server ports. The plugin only writes
 * commands; the image must have `ray` on its PATH, as upstream.
 *
 * hcclrank gives each master and worker pod its rank for Ascend's HCCL as
 * the annotation hccl/rankIndex, which device plugins and launchers read.
 *
 * Pure, as plugins.c: reconcile.c creates the Service and skips creating
 * pods of a ray job without its head task. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/volcano/vc_int.h"

#define RAY_GCS_PORT 6379
#define RAY_DASHBOARD_PORT 8265
#define RAY_CLIENT_PORT 10001

static const char *job_name(const json_t *job)
{
    const char *n = json_string_value(json_object_get(json_object_get(job, "metadata"), "name"));
    return n ? n : "";
}

static const json_t *task_named(const json_t *job, const char *name)
{
    json_t *t;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(job, "spec"), "tasks"), i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && strcmp(n, name) == 0)
            return t;
    }
    return NULL;
}

static const char *pod_annotation(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), key));
}

/* A port argument: Go's flag package takes any int; a port outside
 * 1..65535 (or not a number) would make pods the API refuses, so the
 * default stands instead. */
static int port_arg(const json_t *job, const char *name, int def)
{
    const char *v = vc_plugin_arg(job, "ray", name, NULL);
    char *end;
    long n;

    if (!v)
        return def;
    n = strtol(v, &end, 10);
    return *v && !*end && n >= 1 && n <= 65535 ? (int)n : def;
}

void vc_ray_args_of(const json_t *job, vc_ray_args *a)
{
    a->head = vc_plugin_arg(job, "ray", "head", "head");
    a->head_container = vc_plugin_arg(job, "ray", "headContainer", "head");
    a->worker = vc_plugin_arg(job, "ray", "worker", "worker");
    a->worker_container = vc_plugin_arg(job, "ray", "workerContainer", "worker");
    a->port = port_arg(job, "port", RAY_GCS_PORT);
    a->dashboard_port = port_arg(job, "dashboardPort", RAY_DASHBOARD_PORT);
    a->client_port = port_arg(job, "clientPort", RAY_CLIENT_PORT);
}

bool vc_ray_has_head(const json_t *job)
{
    vc_ray_args a;

    vc_ray_args_of(job, &a);
    return task_named(job, a.head) != NULL;
}

static void set_command(json_t *container, const char *script)
{
    json_object_set_new(container, "command", json_pack("[s, s, s]", "sh", "-c", script));
}

/* Adds {name, containerPort} unless the container has a port of that number. */
static void open_port(json_t *container, const char *name, int port)
{
    json_t *ports = json_object_get(container, "ports"), *p;
    size_t i;

    json_array_foreach(ports, i, p)
        if (json_integer_value(json_object_get(p, "containerPort")) == port)
            return;
    if (!json_is_array(ports)) {
        ports = json_array();
        json_object_set_new(container, "ports", ports);
    }
    json_array_append_new(ports, json_pack("{s:s, s:i}", "name", name, "containerPort", port));
}

void vc_ray_decorate(const json_t *job, json_t *pod)
{
    const char *task = pod_annotation(pod, VC_ANN_TASK_SPEC);
    char script[700], host[600];
    vc_ray_args a;
    json_t *c;
    size_t i;

    vc_ray_args_of(job, &a);
    if (!task || !task_named(job, a.head))
        return;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (!name)
            continue;
        if (strcmp(task, a.head) == 0 && strcmp(name, a.head_container) == 0) {
            open_port(c, "gcs", a.port);
            open_port(c, "dashboard", a.dashboard_port);
            open_port(c, "client-server", a.client_port);
            snprintf(script, sizeof(script),
                     "ray start --head --block --dashboard-host=0.0.0.0 --port=%d "
                     "--dashboard-port=%d --ray-client-server-port=%d",
                     a.port, a.dashboard_port, a.client_port);
            set_command(c, script);
        }
        if (strcmp(task, a.worker) == 0 && strcmp(name, a.worker_container) == 0) {
            /* the head pod's name (its template's hostname and subdomain) */
            vc_pod_host(job, a.head, 0, host, sizeof(host));
            snprintf(script, sizeof(script), "ray start --block --address=%s:%d", host, a.port);
            set_command(c, script);
        }
    }
}

json_t *vc_ray_service(const json_t *job, const char *ns)
{
    char name[300];
    vc_ray_args a;

    vc_ray_args_of(job, &a);
    snprintf(name, sizeof(name), "%s-head-svc", job_name(job));
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:s, s:s}, s:["
                     "{s:s, s:i, s:s, s:s}, {s:s, s:i, s:s, s:s}, {s:s, s:i, s:s, s:s}]}}",
                     "apiVersion", "v1", "kind", "Service", "metadata", "name", name,
                     "namespace", ns, "spec", "selector", VC_ANN_JOB_NAME, job_name(job),
                     VC_LABEL_JOB_NAMESPACE, ns, VC_ANN_TASK_SPEC, a.head, "ports", "name",
                     "gcs", "port", a.port, "targetPort", "gcs", "protocol", "TCP", "name",
                     "dashboard", "port", a.dashboard_port, "targetPort", "dashboard",
                     "protocol", "TCP", "name", "client-server", "port", a.client_port,
                     "targetPort", "client-server", "protocol", "TCP");
}

/* ---- hcclrank ---- */

/* The value of the first env var named name in any container (upstream
 * stops at the first, even when its value is empty or comes from a
 * reference); NULL when there is none. */
static const char *container_env(const json_t *pod, const char *name)
{
    json_t *c, *e;
    size_t i, j;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c)
        json_array_foreach(json_object_get(c, "env"), j, e) {
            const char *n = json_string_value(json_object_get(e, "name"));
            if (n && strcmp(n, name) == 0)
                return json_string_value(json_object_get(e, "value"));
        }
    return NULL;
}

void vc_hcclrank_decorate(const json_t *job, json_t *pod)
{
    const char *master = vc_plugin_arg(job, "hcclrank", "master", "master");
    const char *worker = vc_plugin_arg(job, "hcclrank", "worker", "worker");
    const char *task = pod_annotation(pod, VC_ANN_TASK_SPEC);
    const char *index = pod_annotation(pod, VC_ANN_TASK_INDEX);
    const char *rank, *have = pod_annotation(pod, VC_ANN_HCCL_RANK);
    json_t *meta = json_object_get(pod, "metadata"), *ann;
    char buf[32];

    if (have && *have)
        return;
    rank = container_env(pod, "RANK");
    if (!rank || !*rank) {
        const json_t *m = task_named(job, master);
        long long masters = m ? json_integer_value(json_object_get(m, "replicas")) : 0;
        if (!task || !index || (strcmp(task, master) != 0 && strcmp(task, worker) != 0))
            return;
        snprintf(buf, sizeof(buf), "%lld",
                 (strcmp(task, master) == 0 ? 0 : masters) + atoll(index));
        rank = buf;
    }
    if (!json_is_object(ann = json_object_get(meta, "annotations"))) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    json_object_set_new(ann, VC_ANN_HCCL_RANK, json_string(rank));
}
