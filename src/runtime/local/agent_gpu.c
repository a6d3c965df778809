/* agent_gpu.c - what the agent does with the GPUs' readings (gpu.h): the
 * Node's GPU health (a condition, and broken GPUs out of allocatable and
 * never handed to a pod; a Warning Event for the pod on one that breaks),
 * and a Warning Event for a pod that holds GPUs idle longer than
 * --gpu-idle-warning. Runs on the agent's thread. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "runtime/local/agent.h"

/* The pod's Event, about it by name and uid (no copy of the object needed). */
static void pod_event(rt_local *rt, const rt_pod *p, const char *reason, const char *msg)
{
    json_t *involved = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
                                 "Pod", "metadata", "namespace", p->ns, "name", p->name, "uid",
                                 p->uid);

    if (!involved)
        return;
    ty_event(rt->s, involved, "Warning", reason, RT_COMPONENT, "%s", msg);
    json_decref(involved);
}

/* A pod running on a GPU that has just gone bad hears of it: its program
 * may well fail next, and this says why. */
static void tell_holders(rt_local *rt, int gpu, const char *uuid, const char *why)
{
    char msg[256];

    snprintf(msg, sizeof(msg), "GPU %d (%s) is out of service: %s", gpu, uuid, why);
    for (size_t k = 0; k < rt->npods; k++)
        if (rt->pods[k]->gpus & (1ull << gpu))
            pod_event(rt, rt->pods[k], "GPUUnhealthy", msg);
}

static void check_health(rt_local *rt)
{
    char problem[1024] = "", why[64];
    uint64_t bad = 0;
    int healthy = 0;
    size_t o = 0;
    rt_gpu_info d;
    ty_error err;

    for (int i = 0; i < rt->ngpus; i++) {
        if (rt_gpus_get(rt->gpus, i, &d) < 0)
            continue;
        if (rt_gpu_healthy(&d, why, sizeof(why))) {
            healthy++;
            continue;
        }
        bad |= 1ull << i;
        if (!(rt->gpu_bad & (1ull << i)))
            tell_holders(rt, i, d.uuid, why);
        if (o < sizeof(problem))
            o += (size_t)snprintf(problem + o, sizeof(problem) - o, "%sGPU %d (%s): %s",
                                  o ? "; " : "", i, d.uuid, why);
    }
    if (bad == rt->gpu_bad && rt->gpu_health_written)
        return;
    if (bad & ~rt->gpu_bad)
        ty_warn("runtime: GPUs out of service on node %s: %s", rt->node_name, problem);
    rt->gpu_bad = bad; /* no pod gets them from now on, written or not */
    ty_error_init(&err);
    if (rt_node_set_gpu_health(rt->s, rt->node_name, healthy, bad ? problem : NULL, &err) < 0)
        ty_warn("runtime: cannot write the GPU health of node %s: %s", rt->node_name, err.text);
    else
        rt->gpu_health_written = true;
    ty_error_clear(&err);
}

/* true when every GPU p holds read 0 % the last time round. */
static bool pod_gpus_idle(rt_local *rt, const rt_pod *p, char *list, size_t len)
{
    size_t o = 0;
    rt_gpu_info d;

    *list = '\0';
    for (int i = 0; i < RT_MAX_GPUS; i++) {
        if (!(p->gpus & (1ull << i)))
            continue;
        if (rt_gpus_get(rt->gpus, i, &d) < 0 || !(d.has & RT_GPU_HAS_UTIL) || d.util_pct > 0)
            return false;
        if (o < len)
            o += (size_t)snprintf(list + o, len - o, "%s%d", o ? "," : "", i);
    }
    return p->gpus != 0;
}

static void check_idle(rt_local *rt, int64_t now)
{
    char list[RT_MAX_GPUS * 3 + 1], msg[320];

    for (size_t k = 0; k < rt->npods; k++) {
        rt_pod *p = rt->pods[k];

        if (!p->gpus || !p->started || p->finished || p->killing ||
            !pod_gpus_idle(rt, p, list, sizeof(list))) {
            p->gpu_idle_since_ms = 0;
            p->gpu_idle_warned = false;
            continue;
        }
        if (!p->gpu_idle_since_ms)
            p->gpu_idle_since_ms = now;
        if (p->gpu_idle_warned || now - p->gpu_idle_since_ms < rt->gpu_idle_warn_ms)
            continue;
        p->gpu_idle_warned = true; /* once per idle stretch */
        snprintf(msg, sizeof(msg), "pod holds GPU %s at 0%% utilization for %llds", list,
                 (long long)((now - p->gpu_idle_since_ms) / 1000));
        pod_event(rt, p, "GPUIdle", msg);
    }
}

void agent_check_gpus(rt_local *rt)
{
    if (rt->ngpus == 0)
        return;
    check_health(rt);
    if (rt->gpu_idle_warn_ms > 0)
        check_idle(rt, ty_now_ms());
    agent_report_gpus(rt);
}
