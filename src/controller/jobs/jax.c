/* jax.c - JAXJob: Workers that jax.distributed.initialize() joins through
 * worker 0, the coordinator. */
#include <string.h>

#include "controller/jobs/framework.h"

static void jax_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    char coord[300];

    (void)rtype;
    jf_host(c, "Worker", 0, coord, sizeof(coord));
    jf_env(env, "PYTHONUNBUFFERED", "1");
    jf_envf(env, "COORDINATOR_PORT", "%d", jf_port(c, "Worker"));
    jf_env(env, "COORDINATOR_ADDRESS", coord);
    jf_envf(env, "NUM_PROCESSES", "%lld", jf_total(c));
    jf_envf(env, "PROCESS_ID", "%d", index);
}

static bool jax_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)rtype;
    return index == 0;
}

static bool jax_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "Worker"));
}

const jobs_framework jf_jax = {
    .kind = &kf_jaxjob,
    .env_all_containers = true,
    .env = jax_env,
    .is_master = jax_is_master,
    .succeeded = jax_succeeded,
};
