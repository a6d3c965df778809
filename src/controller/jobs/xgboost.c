/* xgboost.c - XGBoostJob: Rabit's tracker on the Master, Workers after it. */
#include <string.h>

#include "base/buf.h"
#include "controller/jobs/framework.h"

static void xgb_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    long long total = jf_total(c), masters = jf_replicas(c, "Master");
    int rank = index + (strcmp(rtype, "Worker") == 0 ? (int)masters : 0);
    char master[300], host[300];

    jf_host(c, "Master", 0, master, sizeof(master));
    jf_envf(env, "MASTER_PORT", "%d", jf_port(c, "Master"));
    jf_env(env, "MASTER_ADDR", master);
    jf_envf(env, "WORLD_SIZE", "%lld", total);
    jf_envf(env, "RANK", "%d", rank);
    jf_env(env, "PYTHONUNBUFFERED", "1");
    if (total > 1) {
        ty_buf addrs = {0};
        for (long long i = 0; i < jf_replicas(c, "Worker"); i++) {
            jf_host(c, "Worker", (int)i, host, sizeof(host));
            ty_buf_printf(&addrs, "%s%s", i ? "," : "", host);
        }
        jf_envf(env, "WORKER_PORT", "%d", jf_port(c, "Worker"));
        jf_env(env, "WORKER_ADDRS", addrs.data ? addrs.data : "");
        ty_buf_free(&addrs);
    }
}

static bool xgb_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c;
    return jf_master_is(rtype, index, "Master");
}

static bool xgb_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "Master"));
}

const jobs_framework jf_xgboost = {
    .kind = &kf_xgboostjob,
    .env_all_containers = true,
    .env = xgb_env,
    .is_master = xgb_is_master,
    .succeeded = xgb_succeeded,
};
