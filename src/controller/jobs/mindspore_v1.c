/* mindspore_v1.c - MSJob kubeflow.org/v1, ms-operator's first controller
 * (a PyTorch operator derivative): one MASTER and WORKERs that meet through
 * torch.distributed's variables.
 *
 * The environment is upstream's, in its order, into the container named
 * "mindspore":
 *   MS_CONFIG    {"cluster":{"master":["<job>-master-0:<port>"],
 *                 "worker":["<job>-worker-0:<port>",...]},
 *                 "task":{"type":"master|worker","index":<rank>},
 *                 "environment":"cloud"}
 *   MASTER_PORT  the replica's masterPort
 *   MASTER_ADDR  <job>-master-0; "localhost" for the master itself
 *   WORLD_SIZE   every replica of the job
 *   RANK         MASTER 0, WORKER i: i + 1
 * Upstream named its pods <job>-<type>-<runtimeId>-<i>-<random> and put the
 * runtime id in MASTER_ADDR; here pods, Services and addresses are
 * <job>-<type>-<i> as in every Kubeflow kind (docs/compatibility.md).
 * A job whose containers have no "mindspore" (the seed manifest's) gets it
 * in its first container, where upstream refused the job.
 */
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "controller/jobs/framework.h"

/* The working copy's replica map entry (kind_msjob_v1.c made it). */
static int master_port(const job_ctx *c, const char *rtype)
{
    const json_t *p = json_object_get(kf_replica_spec(c->kind, c->job, rtype), "masterPort");
    return json_is_integer(p) ? (int)json_integer_value(p) : c->kind->port;
}

static int rank_of(const char *rtype, int index)
{
    return strcmp(rtype, "WORKER") == 0 ? index + 1 : index;
}

static json_t *cluster_spec(const job_ctx *c)
{
    json_t *cluster = json_object();
    char host[300], lower[16];

    /* MASTER before WORKER: the order Go's encoder gives a map's keys. */
    for (size_t t = 0; t < KF_MAX_REPLICA_TYPES && c->kind->types[t].name; t++) {
        const char *type = c->kind->types[t].name;
        json_t *list;
        if (!jf_has(c, type))
            continue;
        list = json_array();
        for (long long i = 0; i < jf_replicas(c, type); i++) {
            jf_host(c, type, (int)i, host, sizeof(host));
            json_array_append_new(list, json_sprintf("%s:%d", host, master_port(c, type)));
        }
        jf_lower(type, lower, sizeof(lower));
        json_object_set_new(cluster, lower, list);
    }
    return cluster;
}

static void msv1_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    int rank = rank_of(rtype, index);
    char lower[16], master[300];
    ty_buf text = {0};
    json_t *config;

    jf_lower(rtype, lower, sizeof(lower));
    config = json_pack("{s:o, s:{s:s, s:i}, s:s}", "cluster", cluster_spec(c), "task", "type",
                       lower, "index", rank, "environment", "cloud");
    /* not json_dumps: pods are built in a tree arena scope (tensorflow.c) */
    if (config && ty_json_append(&text, config) == 0)
        jf_env(env, "MS_CONFIG", text.data);
    ty_buf_free(&text);
    json_decref(config);
    jf_envf(env, "MASTER_PORT", "%d", master_port(c, rtype));
    if (rank == 0)
        snprintf(master, sizeof(master), "localhost");
    else
        jf_host(c, "MASTER", 0, master, sizeof(master));
    jf_env(env, "MASTER_ADDR", master);
    jf_envf(env, "WORLD_SIZE", "%lld", jf_total(c));
    jf_envf(env, "RANK", "%d", rank);
}

static bool msv1_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)index;
    return strcmp(rtype, "MASTER") == 0;
}

/* terminationPolicy.master: the job ends with MASTER rank 0 (the only value
 * admission lets through). */
static bool msv1_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "MASTER"));
}

static bool has_container(const json_t *pod, const char *name)
{
    const json_t *list = json_object_get(json_object_get(pod, "spec"), "containers");
    const json_t *ct;
    size_t i;

    json_array_foreach(list, i, ct) {
        const char *n = json_string_value(json_object_get(ct, "name"));
        if (n && strcmp(n, name) == 0)
            return true;
    }
    return false;
}

/* Upstream's own labels beside the training.kubeflow.org ones (task_index
 * is the rank, as upstream wrote it; it had a random runtime_id too), the
 * job's schedulerName, and the environment in the first container when
 * none is named "mindspore". */
static void msv1_decorate(const job_ctx *c, const char *rtype, int index, json_t *pod)
{
    json_t *meta = json_object_get(pod, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    json_t *spec = json_object_get(pod, "spec");
    const char *sched =
        json_string_value(json_object_get(json_object_get(c->job, "spec"), "schedulerName"));
    char idx[16];

    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    snprintf(idx, sizeof(idx), "%d", rank_of(rtype, index));
    json_object_set_new(labels, "kubeflow.org", json_string(""));
    json_object_set_new(labels, "job_type", json_string(rtype));
    json_object_set_new(labels, "ms_job_name", json_string(c->name));
    json_object_set_new(labels, "task_index", json_string(idx));
    if (sched && *sched)
        json_object_set_new(spec, "schedulerName", json_string(sched));
    if (!has_container(pod, c->kind->default_container)) {
        json_t *first = json_array_get(json_object_get(spec, "containers"), 0);
        json_t *env = json_object_get(first, "env");
        if (!json_is_object(first))
            return;
        if (!json_is_array(env)) {
            env = json_array();
            json_object_set_new(first, "env", env);
        }
        msv1_env(c, rtype, index, env);
    }
}

const jobs_framework jf_mindspore_v1 = {
    .kind = &kf_msjob_v1,
    .env_all_containers = false,
    .env = msv1_env,
    .is_master = msv1_is_master,
    .succeeded = msv1_succeeded,
    .decorate = msv1_decorate,
};
