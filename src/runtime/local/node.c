/* node.c - this machine as a Node object: capacity, GPUs, heartbeat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/jsonown.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "model/quantity.h"
#include "runtime/agent_kit.h"
#include "runtime/local/gpu.h"
#include "runtime/local/rt_internal.h"

#define DISK_TAINT "node.kubernetes.io/disk-pressure"

static long long mem_total_kib(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    long long kib = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static void os_image(char *buf, size_t len)
{
    FILE *f = fopen("/etc/os-release", "re");
    char line[512];

    snprintf(buf, len, "Linux");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *v;
        if (strncmp(line, "PRETTY_NAME=", 12))
            continue;
        v = line + 12;
        v[strcspn(v, "\n")] = '\0';
        if (*v == '"') {
            v++;
            v[strcspn(v, "\"")] = '\0';
        }
        snprintf(buf, len, "%.200s", v);
        break;
    }
    fclose(f);
}

static const char *go_arch(const char *machine)
{
    if (!strcmp(machine, "x86_64"))
        return "amd64";
    if (!strcmp(machine, "aarch64"))
        return "arm64";
    return machine;
}

static json_t *node_status(const char *name, int gpus)
{
    char cpu[16], mem[32], img[256], now[32];
    struct utsname u;
    json_t *cap;

    snprintf(cpu, sizeof(cpu), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(mem, sizeof(mem), "%lldKi", mem_total_kib());
    os_image(img, sizeof(img));
    ty_time_now(now, sizeof(now));
    if (uname(&u) < 0)
        memset(&u, 0, sizeof(u));
    cap = json_pack("{s:s, s:s, s:s}", "cpu", cpu, "memory", mem, "pods", "110");
    if (gpus > 0) {
        char g[16];
        snprintf(g, sizeof(g), "%d", gpus);
        json_object_set_new(cap, "nvidia.com/gpu", json_string(g));
    }
    return json_pack(
        "{s:o, s:o, s:[o, {s:s, s:s, s:s, s:s, s:s, s:s}],"
        " s:[{s:s, s:s}, {s:s, s:s}], s:o, s:{s:{s:i}}}",
        "capacity", json_deep_copy(cap), "allocatable", cap,
        "conditions", ak_node_ready_condition("trainyard local runtime is posting ready status",
                                              now),
        "type", "DiskPressure", "status", "False", "reason", "KubeletHasNoDiskPressure",
        "message", "kubelet has no disk pressure",
        "lastHeartbeatTime", now, "lastTransitionTime", now,
        "addresses", "type", "InternalIP", "address", "127.0.0.1", "type", "Hostname",
        "address", name,
        "nodeInfo", ak_node_info("local", u.release, img, go_arch(u.machine)),
        "daemonEndpoints", "kubeletEndpoint", "Port", 0);
}

/* A node's labels go through the main resource, its status through the
 * status subresource (an API server ignores the status of a plain write and
 * everything but the status of a status write): two writes. */
static int set_node_labels(json_t *obj, void *arg, ty_error *err)
{
    json_t *fresh = arg, *meta = json_object_get(obj, "metadata");
    json_t *labels = json_object_get(meta, "labels");

    (void)err;
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    json_object_update(labels, json_object_get(json_object_get(fresh, "metadata"), "labels"));
    return 0;
}

static int set_node_status(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set(obj, "status", json_object_get(arg, "status"));
    return 0;
}

static json_t *copy_node(void *arg)
{
    return json_deep_copy(arg);
}

/* A label value from free text (GPU feature discovery's form: "NVIDIA
 * H200" -> "NVIDIA-H200"): [A-Za-z0-9._-], at most 63, alphanumeric ends. */
static void label_value(const char *in, char *out, size_t len)
{
    size_t o = 0;

    for (; *in && o + 1 < len && o < 63; in++) {
        char c = *in;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (o == 0 && !(ok && c != '.' && c != '_' && c != '-'))
            continue;
        out[o++] = ok ? c : '-';
    }
    while (o > 0 && (out[o - 1] == '.' || out[o - 1] == '_' || out[o - 1] == '-'))
        o--;
    out[o] = '\0';
}

/* GPU feature discovery's labels for what the GPUs are (GPU 0 speaks for
 * all): fake ones say so in gpu.product. */
static void gpu_labels(json_t *labels, rt_gpus *g)
{
    char v[64];
    rt_gpu_info d;

    if (rt_gpus_get(g, 0, &d) < 0)
        return;
    label_value(d.model, v, sizeof(v));
    if (*v)
        json_object_set_new(labels, "nvidia.com/gpu.product", json_string(v));
    snprintf(v, sizeof(v), "%d", rt_gpus_count(g));
    json_object_set_new(labels, "nvidia.com/gpu.count", json_string(v));
    if (d.has & RT_GPU_HAS_MEM) {
        snprintf(v, sizeof(v), "%llu", d.fb_total_mib);
        json_object_set_new(labels, "nvidia.com/gpu.memory", json_string(v));
    }
}

int rt_node_register(ty_kc *s, const char *name, rt_gpus *g, ty_error *err)
{
    int gpus = rt_gpus_count(g);
    json_t *node = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s, s:s}}, s:{}, s:o}",
                             "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
                             "labels", "kubernetes.io/hostname", name, "kubernetes.io/os",
                             "linux", "kubernetes.io/arch", "amd64",
                             "trainyard.io/runtime", "local",
                             "spec", "status", node_status(name, gpus));
    struct utsname u;
    int rc;

    if (!node)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    gpu_labels(json_object_get(json_object_get(node, "metadata"), "labels"), g);
    if (uname(&u) == 0)
        json_object_set_new(json_object_get(json_object_get(node, "metadata"), "labels"),
                            "kubernetes.io/arch", json_string(go_arch(u.machine)));
    rc = ak_node_ensure(s, name, set_node_labels, set_node_status, copy_node, node, NULL, err);
    json_decref(node);
    return rc;
}

/* The conditions a heartbeat renews besides Ready. */
static const char *const beat_also[] = {"DiskPressure", RT_GPU_CONDITION, NULL};

int rt_node_heartbeat(ty_kc *s, const char *name, ty_error *err)
{
    return ak_node_heartbeat(s, name, beat_also, err);
}

/* ---- disk pressure ---- */

int rt_disk_min_parse(const char *text, rt_disk_min *m, ty_error *err)
{
    size_t n = text ? strlen(text) : 0;
    int64_t milli;
    char *end;

    memset(m, 0, sizeof(*m));
    if (!text || !strcmp(text, "default")) {
        m->pct = 5;
        m->bytes = 1ll << 30;
        return 0;
    }
    if (n > 1 && text[n - 1] == '%') {
        long v = strtol(text, &end, 10);
        if (end != text + n - 1 || v < 0 || v > 99)
            return ty_seterr(err, TY_EINVALID,
                             "invalid disk free minimum %s: a percentage is 0%% to 99%%", text);
        m->pct = (int)v;
        return 0;
    }
    if (quantity_parse(text, &milli, err) < 0 || milli < 0)
        return ty_seterr(err, TY_EINVALID,
                         "invalid disk free minimum %s: want a size such as 1Gi or 500Mi, "
                         "a percentage such as 5%%, or 0", text);
    m->bytes = quantity_value(milli);
    return 0;
}

int rt_disk_pressure(const char *dir, const rt_disk_min *m, long long *free_bytes)
{
    struct statvfs st;
    long long avail, size, min = -1;

    if (statvfs(dir, &st) < 0)
        return -1;
    avail = (long long)st.f_bavail * (long long)st.f_frsize;
    size = (long long)st.f_blocks * (long long)st.f_frsize;
    if (free_bytes)
        *free_bytes = avail;
    if (m->pct > 0)
        min = size / 100 * m->pct;
    if (m->bytes > 0 && (min < 0 || m->bytes < min))
        min = m->bytes;
    return min > 0 && avail < min ? 1 : 0;
}

/* The DiskPressure condition and, as the node lifecycle controller does
 * for it, the NoSchedule taint that keeps new pods off the node. */
static const ak_node_cond disk_cond = {
    .type = "DiskPressure", .taint_key = DISK_TAINT,
    .reason_on = "KubeletHasDiskPressure", .message_on = "kubelet has disk pressure",
    .reason_off = "KubeletHasNoDiskPressure", .message_off = "kubelet has no disk pressure",
};

int rt_node_set_disk_pressure(ty_kc *s, const char *name, bool pressure, ty_error *err)
{
    return ak_node_set_condition(s, name, &disk_cond, pressure, err);
}

/* ---- GPU health ---- */

typedef struct gpu_alloc_args {
    int healthy;
} gpu_alloc_args;

static int set_gpu_allocatable(json_t *obj, void *arg, ty_error *err)
{
    const gpu_alloc_args *a = arg;
    json_t *status = json_object_get(obj, "status"), *alloc;
    char n[16];

    (void)err;
    if (!json_is_object(status))
        json_object_set_new(obj, "status", status = json_object());
    if (!json_is_object(alloc = ty_json_own(status, "allocatable")))
        json_object_set_new(status, "allocatable", alloc = json_object());
    snprintf(n, sizeof(n), "%d", a->healthy);
    json_object_set_new(alloc, "nvidia.com/gpu", json_string(n));
    return 0;
}

int rt_node_set_gpu_health(ty_kc *s, const char *name, int healthy, const char *problem,
                           ty_error *err)
{
    /* No taint: the healthy GPUs still take pods, the broken ones are out
     * of allocatable (as NVIDIA's device plugin reports them). */
    const ak_node_cond cond = {
        .type = RT_GPU_CONDITION, .reason_on = "GPUErrors",
        .message_on = problem ? problem : "", .reason_off = "GPUsHealthy",
        .message_off = "no GPU has reported an error",
    };
    gpu_alloc_args a = {.healthy = healthy};
    ty_obj *o = kc_mutate(s, "nodes", "", name, set_gpu_allocatable, &a, KC_STATUS, err);

    if (!o)
        return -1;
    ty_obj_unref(o);
    return ak_node_set_condition(s, name, &cond, problem != NULL, err);
}
