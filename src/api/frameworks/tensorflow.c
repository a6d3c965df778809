/* tensorflow.c - TFJob: TF_CONFIG for tf.distribute's cluster resolver.
 *
 * The kind: TFJob (kubeflow.org/v1): TensorFlow's Chief/Master, PS, Worker and Evaluator
 * replicas. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/buf.h"
#include "base/jsonout.h"

/* Upstream counts Chief and Master as one role: a job has at most one of them. */
static void tf_validate(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err)
{
    json_t *map = json_object_get(spec, k->replica_field);

    (void)old;
    if (json_object_get(map, "Chief") && json_object_get(map, "Master"))
        meta_forbidden(err, "spec.tfReplicaSpecs",
                       "must not have more than 1 Chief or Master role");
    kf_check_single_replica(k, spec, "Chief", err);
    kf_check_single_replica(k, spec, "Master", err);
}

const kf_kind kf_tfjob = {
    .resource = &api_tfjob,
    .kind = "TFJob",
    .replica_field = "tfReplicaSpecs",
    .types = {{"Chief", 1, NULL}, {"Master", 1, NULL}, {"PS", 1, NULL}, {"Worker", 1, NULL}, {"Evaluator", 1, NULL}},
    .default_container = "tensorflow",
    .port_name = "tfjob-port",
    .port = 2222,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "tfjob-controller",
    .framework = "tensorflow",
    .has_success_policy = true,
    .validate = tf_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("tfReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("successPolicy", API_T_STRING),
    API_FIELD("enableDynamicWorker", API_T_BOOLEAN),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema tfjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(tfjob, "kubeflow.org", "TFJob", "tfjobs", &tfjob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

/* Lowercase type names in the order Go's encoding/json writes a map's keys
 * (sorted), which is the order upstream's TF_CONFIG has. */
static const char *const tf_types_sorted[] = {"Chief", "Evaluator", "Master", "PS", "Worker"};
#define NTYPES (sizeof(tf_types_sorted) / sizeof(tf_types_sorted[0]))

static json_t *addr(const job_ctx *c, const char *rtype, int i)
{
    char host[300];

    jf_host(c, rtype, i, host, sizeof(host));
    return json_sprintf("%s.%s.svc:%d", host, c->ns, jf_port(c, rtype));
}

static json_t *cluster_spec(const job_ctx *c)
{
    json_t *cluster = json_object();
    char lower[16];

    for (size_t t = 0; t < NTYPES; t++) {
        json_t *list;
        if (!jf_has(c, tf_types_sorted[t]))
            continue;
        list = json_array();
        for (long long i = 0; i < jf_replicas(c, tf_types_sorted[t]); i++)
            json_array_append_new(list, addr(c, tf_types_sorted[t], (int)i));
        jf_lower(tf_types_sorted[t], lower, sizeof(lower));
        json_object_set_new(cluster, lower, list);
    }
    return cluster;
}

/* enableDynamicWorker: a worker sees every PS and only itself (as a map keyed
 * by its index); a PS sees only itself; nothing else is listed. */
static json_t *sparse_cluster_spec(const job_ctx *c, const char *rtype, int index)
{
    json_t *workers = json_object(), *ps = json_array();
    char key[16];

    if (strcmp(rtype, "PS") == 0) {
        json_array_append_new(ps, addr(c, "PS", index));
    } else if (strcmp(rtype, "Worker") == 0) {
        for (long long i = 0; i < jf_replicas(c, "PS"); i++)
            json_array_append_new(ps, addr(c, "PS", (int)i));
        snprintf(key, sizeof(key), "%d", index);
        json_object_set_new(workers, key, addr(c, "Worker", index));
    }
    return json_pack("{s:o, s:o}", "worker", workers, "ps", ps);
}

static void tf_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    bool dynamic = json_is_true(json_object_get(json_object_get(c->job, "spec"),
                                                "enableDynamicWorker"));
    char lower[16];
    json_t *config;
    ty_buf text = {0};

    /* A single-process job is not distributed: TF must not see a cluster. */
    if (jf_total(c) <= 1)
        return;
    jf_lower(rtype, lower, sizeof(lower));
    if (dynamic)
        config = json_pack("{s:o, s:{s:s, s:i}}", "cluster", sparse_cluster_spec(c, rtype, index),
                           "task", "type", lower, "index", index);
    else
        config = json_pack("{s:o, s:{s:s, s:i}, s:s}", "cluster", cluster_spec(c), "task", "type",
                           lower, "index", index, "environment", "cloud");
    /* ty_json_append, not json_dumps: this runs while the pod is built in
     * a tree arena scope, where json_dumps' text would not be free()'s */
    if (ty_json_append(&text, config) == 0)
        jf_env(env, "TF_CONFIG", text.data);
    ty_buf_free(&text);
    json_decref(config);
}

static bool tf_is_master(const job_ctx *c, const char *rtype, int index)
{
    if (jf_has(c, "Chief") || jf_has(c, "Master"))
        return strcmp(rtype, "Chief") == 0 || strcmp(rtype, "Master") == 0;
    return strcmp(rtype, "Worker") == 0 && index == 0;
}

/* The chief decides; without one, worker 0 finishing ends the job unless
 * successPolicy AllWorkers asks for every worker. */
static bool tf_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    const jf_counts *chief = jf_find(counts, n, "Chief");
    const jf_counts *w = jf_find(counts, n, "Worker");
    const char *policy =
        json_string_value(json_object_get(json_object_get(c->job, "spec"), "successPolicy"));

    if (!chief)
        chief = jf_find(counts, n, "Master");
    if (chief)
        return jf_all_succeeded(chief);
    if (!w)
        return false;
    if (policy && strcmp(policy, "AllWorkers") == 0)
        return jf_all_succeeded(w);
    return w->first_succeeded || jf_all_succeeded(w);
}

const jobs_framework jf_tensorflow = {
    .kind = &kf_tfjob,
    .env_all_containers = false,
    .env = tf_env,
    .is_master = tf_is_master,
    .succeeded = tf_succeeded,
};
