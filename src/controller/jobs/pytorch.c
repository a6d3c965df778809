/* pytorch.c - PyTorchJob: a Master and Workers (torch.distributed's
 * MASTER_ADDR/RANK/WORLD_SIZE) or elastic Workers rendezvousing through
 * torchrun (PET_* variables, which torchrun reads as its flags). */
#include <stdlib.h>
#include <string.h>

#include "controller/jobs/framework.h"

static int nproc_int(const job_ctx *c)
{
    const char *s = json_string_value(json_object_get(json_object_get(c->job, "spec"),
                                                      "nprocPerNode"));
    char *end;
    long v;

    if (!s)
        return 1;
    v = strtol(s, &end, 10);
    /* "auto", "cpu", "gpu": one process per node as far as WORLD_SIZE goes. */
    return (*s && !*end && v > 0 && v < 1 << 20) ? (int)v : 1;
}

/* torchrun's --rdzv-conf: "k1=v1,k2=v2". */
static void rdzv_conf(const json_t *ep, json_t *env)
{
    const json_t *conf = json_object_get(ep, "rdzvConf");
    char buf[1024] = "";
    size_t i, off = 0;
    json_t *kv;

    if (!json_array_size(conf))
        return;
    json_array_foreach(conf, i, kv) {
        const char *k = json_string_value(json_object_get(kv, "key"));
        const char *v = json_string_value(json_object_get(kv, "value"));
        int n = snprintf(buf + off, sizeof(buf) - off, "%s%s=%s", i ? "," : "", k ? k : "",
                         v ? v : "");
        if (n < 0 || (size_t)n >= sizeof(buf) - off)
            break;
        off += (size_t)n;
    }
    jf_env(env, "PET_RDZV_CONF", buf);
}

static void elastic_env(const job_ctx *c, const json_t *ep, json_t *env)
{
    const char *host = json_string_value(json_object_get(ep, "rdzvHost"));
    const char *backend = json_string_value(json_object_get(ep, "rdzvBackend"));
    const json_t *port = json_object_get(ep, "rdzvPort");
    char worker0[300];

    jf_host(c, "Worker", 0, worker0, sizeof(worker0));
    jf_envf(env, "PET_RDZV_ENDPOINT", "%s:%d", host && *host ? host : worker0,
            json_is_integer(port) ? (int)json_integer_value(port) : jf_port(c, "Worker"));
    jf_env(env, "PET_RDZV_BACKEND", backend && *backend ? backend : "c10d");
    jf_envf(env, "PET_NNODES", "%lld:%lld",
            (long long)json_integer_value(json_object_get(ep, "minReplicas")),
            (long long)json_integer_value(json_object_get(ep, "maxReplicas")));
    if (json_is_integer(json_object_get(ep, "maxRestarts")))
        jf_envf(env, "PET_MAX_RESTARTS", "%lld",
                (long long)json_integer_value(json_object_get(ep, "maxRestarts")));
    if (json_is_integer(json_object_get(ep, "nProcPerNode")))
        jf_envf(env, "PET_NPROC_PER_NODE", "%lld",
                (long long)json_integer_value(json_object_get(ep, "nProcPerNode")));
    if (json_is_string(json_object_get(ep, "rdzvId")))
        jf_env(env, "PET_RDZV_ID", json_string_value(json_object_get(ep, "rdzvId")));
    rdzv_conf(ep, env);
    /* torchrun parses its boolean flags with int(): "1", never "". */
    if (json_is_true(json_object_get(ep, "standalone")))
        jf_env(env, "PET_STANDALONE", "1");
}

static void pytorch_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    const json_t *spec = json_object_get(c->job, "spec");
    const json_t *ep = json_object_get(spec, "elasticPolicy");
    const char *nproc = json_string_value(json_object_get(spec, "nprocPerNode"));
    long long total = jf_total(c);

    jf_env(env, "PYTHONUNBUFFERED", "1");
    if (nproc)
        jf_env(env, "PET_NPROC_PER_NODE", nproc);
    if (jf_has(c, "Master")) {
        char master[300];
        int rank = index + (strcmp(rtype, "Worker") == 0 ? 1 : 0);
        jf_host(c, "Master", 0, master, sizeof(master));
        jf_envf(env, "MASTER_PORT", "%d", jf_port(c, "Master"));
        jf_envf(env, "PET_MASTER_PORT", "%d", jf_port(c, "Master"));
        jf_env(env, "MASTER_ADDR", master);
        jf_env(env, "PET_MASTER_ADDR", master);
        jf_envf(env, "WORLD_SIZE", "%lld", total * nproc_int(c));
        jf_envf(env, "RANK", "%d", rank);
        jf_envf(env, "PET_NODE_RANK", "%d", rank);
    }
    if (json_is_object(ep))
        elastic_env(c, ep, env);
    else
        jf_envf(env, "PET_NNODES", "%lld", total);
}

static bool pytorch_is_master(const job_ctx *c, const char *rtype, int index)
{
    if (jf_has(c, "Master"))
        return strcmp(rtype, "Master") == 0;
    return strcmp(rtype, "Worker") == 0 && index == 0;
}

/* Master decides when present; else every Worker, or with an elastic policy
 * any Worker (torchrun ends all of them together). */
static bool pytorch_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    const jf_counts *m = jf_find(counts, n, "Master");
    const jf_counts *w = jf_find(counts, n, "Worker");

    if (m)
        return jf_all_succeeded(m);
    if (json_is_object(json_object_get(json_object_get(c->job, "spec"), "elasticPolicy")))
        return w && w->succeeded > 0;
    return jf_all_succeeded(w);
}

const jobs_framework jf_pytorch = {
    .kind = &kf_pytorchjob,
    .env_all_containers = true,
    .env = pytorch_env,
    .is_master = pytorch_is_master,
    .succeeded = pytorch_succeeded,
};
