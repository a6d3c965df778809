/* paddle.c - PaddleJob: collective Workers, or a Master (parameter server
 * mode) and Workers. PADDLE_MASTER names the rank-0 pod; rank 0 itself uses
 * its own pod IP, which Kubernetes expands from POD_IP_DUMMY. */
#include <string.h>

#include "controller/jobs/framework.h"

static void paddle_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    bool has_master = jf_has(c, "Master");
    const char *lead = has_master ? "Master" : "Worker";
    int port = jf_port(c, lead);
    char host[300];

    jf_env(env, "PYTHONUNBUFFERED", "1");
    jf_env(env, "PADDLE_JOB_ID", c->name);
    jf_envf(env, "PADDLE_NNODES", "%lld", jf_total(c));
    if (strcmp(rtype, lead) == 0 && index == 0) {
        jf_env_field(env, "POD_IP_DUMMY", "status.podIP");
        jf_envf(env, "PADDLE_MASTER", "$(POD_IP_DUMMY):%d", port);
    } else {
        jf_host(c, lead, 0, host, sizeof(host));
        jf_envf(env, "PADDLE_MASTER", "%s:%d", host, port);
    }
    if (has_master && strcmp(rtype, "Master") == 0)
        jf_env(env, "PADDLE_SERVER_NUM", "1");
    else if (has_master)
        jf_env(env, "PADDLE_TRAINER_NUM", "1");
}

static bool paddle_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c;
    return jf_master_is(rtype, index, "Master");
}

static bool paddle_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    const jf_counts *m = jf_find(counts, n, "Master");

    (void)c;
    if (m)
        return jf_all_succeeded(m);
    return jf_all_succeeded(jf_find(counts, n, "Worker"));
}

const jobs_framework jf_paddle = {
    .kind = &kf_paddlejob,
    .env_all_containers = true,
    .env = paddle_env,
    .is_master = paddle_is_master,
    .succeeded = paddle_succeeded,
};
