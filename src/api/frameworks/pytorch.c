/* pytorch.c - PyTorchJob: a Master and Workers (torch.distributed's
 * MASTER_ADDR/RANK/WORLD_SIZE) or elastic Workers rendezvousing through
 * torchrun (PET_* variables, which torchrun reads as its flags).
 *
 * The kind: PyTorchJob (kubeflow.org/v1): a Master and Workers, or elastic Workers
 * rendezvousing through torchrun. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/framework.h"
#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

static const char *const rdzv_backends[] = {"c10d", "etcd", "etcd-v2", NULL};

static bool has_member(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v);
}

/* nprocPerNode defaults to "auto" unless the deprecated
 * elasticPolicy.nProcPerNode is used; an elastic policy without bounds takes
 * them from the other bound or from the Worker replicas. */
static void pytorch_defaults(const kf_kind *k, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_t *ep = json_object_get(spec, "elasticPolicy");
    json_t *worker;

    if (!json_is_object(ep) || !has_member(ep, "nProcPerNode"))
        meta_default(spec, "nprocPerNode", json_string("auto"));
    if (!json_is_object(ep))
        return;
    if (has_member(ep, "minReplicas") && has_member(ep, "maxReplicas"))
        return;
    if (has_member(ep, "maxReplicas")) {
        json_object_set(ep, "minReplicas", json_object_get(ep, "maxReplicas"));
    } else if (has_member(ep, "minReplicas")) {
        json_object_set(ep, "maxReplicas", json_object_get(ep, "minReplicas"));
    } else if ((worker = kf_replica_spec(k, obj, "Worker")) &&
               json_is_integer(json_object_get(worker, "replicas"))) {
        json_object_set(ep, "minReplicas", json_object_get(worker, "replicas"));
        json_object_set(ep, "maxReplicas", json_object_get(worker, "replicas"));
    }
}

static bool nproc_ok(const char *s)
{
    char *end;
    long v;

    if (strcmp(s, "auto") == 0 || strcmp(s, "cpu") == 0 || strcmp(s, "gpu") == 0)
        return true;
    if (*s < '0' || *s > '9')
        return false;
    v = strtol(s, &end, 10);
    return *end == '\0' && v >= 1 && v <= INT32_MAX;
}

static void check_elastic(const json_t *ep, ty_error *err)
{
    long long min = 0, max = 0;
    int has_min, has_max;
    const char *s;

    if (!json_is_object(ep)) {
        kf_type_error(err, "spec.elasticPolicy", "object", ep);
        return;
    }
    has_min = kf_check_int(ep, "minReplicas", "spec.elasticPolicy.minReplicas", 0, INT32_MAX,
                           err, &min);
    has_max = kf_check_int(ep, "maxReplicas", "spec.elasticPolicy.maxReplicas", 0, INT32_MAX,
                           err, &max);
    if (has_min == 1 && has_max == 1 && min > max)
        meta_invalid_int(err, "spec.elasticPolicy.minReplicas", min,
                         "must be less than or equal to maxReplicas (%lld)", max);
    kf_check_enum(ep, "rdzvBackend", "spec.elasticPolicy.rdzvBackend", rdzv_backends, err);
    kf_check_int(ep, "rdzvPort", "spec.elasticPolicy.rdzvPort", 1, 65535, err, NULL);
    kf_get_str(ep, "rdzvHost", "spec.elasticPolicy.rdzvHost", err, &s);
    kf_get_str(ep, "rdzvId", "spec.elasticPolicy.rdzvId", err, &s);
    kf_check_int(ep, "nProcPerNode", "spec.elasticPolicy.nProcPerNode", 1, INT32_MAX, err,
                 NULL);
    kf_check_int(ep, "maxRestarts", "spec.elasticPolicy.maxRestarts", 0, INT32_MAX, err, NULL);
}

static void pytorch_validate(const kf_kind *k, const json_t *spec, const json_t *old,
                             ty_error *err)
{
    json_t *ep = json_object_get(spec, "elasticPolicy");
    const char *nproc;

    (void)old;
    kf_check_single_replica(k, spec, "Master", err);
    if (kf_get_str(spec, "nprocPerNode", "spec.nprocPerNode", err, &nproc) == 1 &&
        !nproc_ok(nproc))
        meta_invalid_str(err, "spec.nprocPerNode", nproc,
                         "must be a positive integer, \"auto\", \"cpu\" or \"gpu\"");
    if (ep && !json_is_null(ep)) {
        check_elastic(ep, err);
        if (has_member(spec, "nprocPerNode") && has_member(ep, "nProcPerNode"))
            meta_forbidden(err, "spec.nprocPerNode",
                           "must not have both .spec.elasticPolicy.nProcPerNode and "
                           ".spec.nprocPerNode");
    }
}

const kf_kind kf_pytorchjob = {
    .resource = &api_pytorchjob,
    .kind = "PyTorchJob",
    .replica_field = "pytorchReplicaSpecs",
    .types = {{"Master", 1, NULL}, {"Worker", 1, NULL}},
    .default_container = "pytorch",
    .port_name = "pytorchjob-port",
    .port = 23456,
    .default_restart_policy = "OnFailure",
    .default_clean_pod_policy = "None",
    .operator_name = "pytorchjob-controller",
    .framework = "pytorch",
    .defaults = pytorch_defaults,
    .validate = pytorch_validate,
};

static const api_field rdzv_conf_fields[] = {
    API_FIELD("key", API_T_STRING),
    API_FIELD("value", API_T_STRING),
};
static const api_schema rdzv_conf_schema = API_SCHEMA(rdzv_conf_fields);
static const api_field elastic_fields[] = {
    API_FIELD("minReplicas", API_T_INTEGER),
    API_FIELD("maxReplicas", API_T_INTEGER),
    API_FIELD("rdzvBackend", API_T_STRING),
    API_FIELD("rdzvPort", API_T_INTEGER),
    API_FIELD("rdzvHost", API_T_STRING),
    API_FIELD("rdzvId", API_T_STRING),
    API_ARRAY_OF("rdzvConf", &rdzv_conf_schema),
    API_FIELD("standalone", API_T_BOOLEAN),
    API_FIELD("nProcPerNode", API_T_INTEGER),
    API_FIELD("maxRestarts", API_T_INTEGER),
    API_ARRAY("metrics", API_T_OPEN),
};
static const api_schema elastic_schema = API_SCHEMA(elastic_fields);
static const api_field spec_fields[] = {
    API_MAP_OF("pytorchReplicaSpecs", &kf_schema_replica_spec),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
    API_OBJECT("elasticPolicy", &elastic_schema),
    API_FIELD("nprocPerNode", API_T_STRING),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema pytorchjob_schema = API_SCHEMA(top_fields);

KF_RESOURCE(pytorchjob, "kubeflow.org", "PyTorchJob", "pytorchjobs", &pytorchjob_schema);

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

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
