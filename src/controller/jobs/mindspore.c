/* mindspore.c - MSJob (ms-operator): MindSpore's dynamic cluster, whose
 * processes find the scheduler through MS_SCHED_HOST/MS_SCHED_PORT. Only the
 * Scheduler gets a Service, an ordinary ClusterIP one. */
#include <string.h>

#include "controller/jobs/framework.h"

static const char *role(const char *rtype)
{
    if (strcmp(rtype, "Scheduler") == 0)
        return "MS_SCHED";
    if (strcmp(rtype, "PS") == 0)
        return "MS_PSERVER";
    return "MS_WORKER";
}

static void ms_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    char host[300];

    if (jf_has(c, "Scheduler")) {
        /* The scheduler binds its own address; the others reach its Service. */
        if (strcmp(rtype, "Scheduler") == 0) {
            jf_env_field(env, "MS_SCHED_HOST", "status.podIP");
        } else {
            jf_host(c, "Scheduler", 0, host, sizeof(host));
            jf_env(env, "MS_SCHED_HOST", host);
        }
        jf_envf(env, "MS_SCHED_PORT", "%d", jf_port(c, "Scheduler"));
    }
    jf_env(env, "MS_ROLE", role(rtype));
    jf_host(c, rtype, index, host, sizeof(host));
    jf_env(env, "MS_NODE_ID", host);
    jf_envf(env, "MS_WORKER_NUM", "%lld", jf_replicas(c, "Worker"));
    jf_envf(env, "MS_SERVER_NUM", "%lld", jf_replicas(c, "PS"));
}

static bool ms_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)rtype, (void)index;
    return false;
}

static bool ms_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    const jf_counts *w = jf_find(counts, n, "Worker");
    const char *policy =
        json_string_value(json_object_get(json_object_get(c->job, "spec"), "successPolicy"));

    if (!w)
        return false;
    if (policy && strcmp(policy, "AllWorkers") == 0)
        return jf_all_succeeded(w);
    return w->first_succeeded || jf_all_succeeded(w);
}

static jf_service_mode ms_service(const job_ctx *c, const char *rtype)
{
    (void)c;
    return strcmp(rtype, "Scheduler") == 0 ? JF_SVC_CLUSTERIP : JF_SVC_NONE;
}

const jobs_framework jf_mindspore = {
    .kind = &kf_msjob,
    .env_all_containers = false,
    .env = ms_env,
    .is_master = ms_is_master,
    .succeeded = ms_succeeded,
    .service = ms_service,
};
