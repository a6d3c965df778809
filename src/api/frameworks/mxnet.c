/* mxnet.c - MXJob (legacy): MXNet's parameter-server roles. MX_CONFIG
 * describes the cluster; the DMLC_* variables are what ps-lite reads.
 *
 * The kind: MXJob (kubeflow.org/v1, removed upstream in 1.9): MXNet's parameter-server training
 * (MXTrain) or auto-tuning (MXTune). */
#include <stdlib.h>
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/buf.h"
#include "base/jsonout.h"

static const char *const job_modes[] = {"MXTrain", "MXTune", NULL};

static void mx_defaults(const kf_kind *k, json_t *obj)
{
    (void)k;
    meta_default(json_object_get(obj, "spec"), "jobMode", json_string("MXTrain"));
}

static void mx_validate(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err)
{
    (void)old;
    kf_check_enum(spec, "jobMode", "spec.jobMode", job_modes, err);
    kf_check_single_replica(k, spec, "Scheduler", err);
}

const kf_kind kf_mxjob = {
    .resource = &api_mxjob,
    .kind = "MXJob",
    .replica_field = "mxReplicaSpecs",
    .types = {{"Scheduler", 1, NULL}, {"Server", 1, NULL}, {"Worker", 1, NULL},
              {"TunerTracker", 1, NULL}, {"TunerServer", 1, NULL}, {"Tuner", 1, NULL}},
    .default_container = "mxnet",
    .port_name = "mxjob-port",
    .port = 9091,
    .default_restart_policy = "Never",
    .default_clean_pod_policy = "None",
    .operator_name = "mxjob-controller",
    .framework = "mxnet",
    .defaults = mx_defaults,
    .validate = mx_validate,
};

static const api_field spec_fields[] = {
    API_MAP_OF("mxReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_FIELD("jobMode", API_T_STRING),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema mxjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(mxjob, "kubeflow.org", "MXJob", "mxjobs", &mxjob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

/* Sorted, as Go writes a map's keys (upstream marshals maps). */
static const char *const mx_types_sorted[] = {"Scheduler", "Server",      "Tuner",
                                              "TunerServer", "TunerTracker", "Worker"};
#define NTYPES (sizeof(mx_types_sorted) / sizeof(mx_types_sorted[0]))

static void mx_config(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    json_t *cluster = json_object(), *labels = json_object(), *cfg;
    char lower[16], host[300];
    ty_buf text = {0};

    /* jansson keeps insertion order; sort by the lowercase key as Go does. */
    for (size_t t = 0; t < NTYPES; t++) {
        json_t *list;
        if (!jf_has(c, mx_types_sorted[t]))
            continue;
        jf_lower(mx_types_sorted[t], lower, sizeof(lower));
        list = json_array();
        for (long long i = 0; i < jf_replicas(c, mx_types_sorted[t]); i++) {
            jf_host(c, mx_types_sorted[t], (int)i, host, sizeof(host));
            json_array_append_new(list, json_pack("{s:s, s:i}", "url", host, "port",
                                                  jf_port(c, mx_types_sorted[t])));
        }
        json_object_set_new(cluster, lower, list);
        json_object_set_new(labels, lower, json_string(""));
    }
    jf_lower(rtype, lower, sizeof(lower));
    cfg = json_pack("{s:o, s:o, s:{s:s, s:i}}", "cluster", cluster, "labels", labels, "task",
                    "type", lower, "index", index);
    /* ty_json_append, not json_dumps: this runs while the pod is built in
     * a tree arena scope, where json_dumps' text would not be free()'s */
    if (ty_json_append(&text, cfg) == 0)
        jf_env(env, "MX_CONFIG", text.data);
    ty_buf_free(&text);
    json_decref(cfg);
}

static void mx_env(const job_ctx *c, const char *rtype, int index, json_t *env)
{
    char lower[16], sched[300];

    mx_config(c, rtype, index, env);
    jf_host(c, "Scheduler", 0, sched, sizeof(sched));
    jf_lower(rtype, lower, sizeof(lower));
    jf_env(env, "DMLC_PS_ROOT_URI", sched);
    jf_envf(env, "DMLC_PS_ROOT_PORT", "%d", jf_port(c, "Scheduler"));
    jf_envf(env, "DMLC_NUM_SERVER", "%lld", jf_replicas(c, "Server"));
    jf_envf(env, "DMLC_NUM_WORKER", "%lld", jf_replicas(c, "Worker"));
    jf_env(env, "DMLC_ROLE", lower);
    jf_env(env, "DMLC_USE_KUBERNETES", "1");
}

static bool mx_is_master(const job_ctx *c, const char *rtype, int index)
{
    (void)c, (void)rtype, (void)index;
    return false;
}

static bool mx_succeeded(const job_ctx *c, const jf_counts *counts, size_t n)
{
    (void)c;
    return jf_all_succeeded(jf_find(counts, n, "Scheduler"));
}

const jobs_framework jf_mxnet = {
    .kind = &kf_mxjob,
    .env_all_containers = true,
    .env = mx_env,
    .is_master = mx_is_master,
    .succeeded = mx_succeeded,
};
