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
 *
 * The kind: MSJob as ms-operator first served it (kubeflow.org/v1, built on the PyTorch
 * operator): spec.replicaSpecs is a LIST of {replicas, replicaType: MASTER|WORKER, masterPort,
 * template}, with the PyTorch operator's spec.backend and spec.masterPort beside it.  Served
 * beside MSJob mindspore.gitee.com/v1 (kind_msjob.c): same kind and plural, another group.
 * Upstream's CRD had no schema, defaulted only in the controller's memory and checked the spec
 * there (a bad job went Failed); here the same rules answer at admission (422 with field paths)
 * and the stored object stays as written, so `kubectl apply` of an unchanged manifest is
 * "unchanged" (a list is replaced whole by a merge patch: a default stored inside it would
 * differ every time). The defaults are applied to the job engine's working copy
 * (msv1_engine_form), which also turns the list into the replica map the engine reads. */
#include <stdint.h>
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

#define MSV1_PORT 23456 /* ms-operator's MasterPort default */
#define MSV1_IMAGE "mindspore/mindspore:v0.1.0-alpha"
/* One spec per replica type: anything longer is refused as a whole. */
#define MSV1_MAX_SPECS 2

static const char *const replica_types[] = {"MASTER", "WORKER", NULL};
static const char *const pod_restart_policies[] = {"Always", "OnFailure", "Never", NULL};
static const char *const master_names[] = {"MASTER", NULL};

/* replicaType as upstream's defaulting reads it: absent or "" is MASTER. */
static const char *replica_type(const json_t *rs)
{
    const char *t = json_string_value(json_object_get(rs, "replicaType"));
    return t && *t ? t : "MASTER";
}

/* spec.masterPort: the PyTorch operator's field, an integer or (as the seed
 * manifest writes it) a string of digits. 1 and *port when valid, 0 when
 * absent, -1 when malformed. */
static int spec_master_port(const json_t *spec, long long *port)
{
    const json_t *v = json_object_get(spec, "masterPort");
    const char *text;
    char *end;

    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *port = json_integer_value(v);
    } else if (json_is_string(v)) {
        text = json_string_value(v);
        if (*text < '0' || *text > '9' || strlen(text) > 5)
            return -1;
        *port = strtoll(text, &end, 10);
        if (*end)
            return -1;
    } else {
        return -1;
    }
    return *port >= 1 && *port <= 65535 ? 1 : -1;
}

/* ---- validation ------------------------------------------------------- */

static void check_template(const json_t *tmpl, const char *at, ty_error *err)
{
    char path[256], cpath[300];
    const json_t *podspec = json_object_get(tmpl, "spec");
    const json_t *containers = json_object_get(podspec, "containers");
    const json_t *c;
    size_t i;

    snprintf(path, sizeof(path), "%s.template", at);
    if (!tmpl || json_is_null(tmpl)) {
        meta_required(err, path, "must be specified");
        return;
    }
    if (!json_is_object(tmpl)) {
        kf_type_error(err, path, "object", tmpl);
        return;
    }
    if (podspec && !json_is_object(podspec)) {
        snprintf(path, sizeof(path), "%s.template.spec", at);
        kf_type_error(err, path, "object", podspec);
        return;
    }
    snprintf(path, sizeof(path), "%s.template.spec.restartPolicy", at);
    kf_check_enum(podspec, "restartPolicy", path, pod_restart_policies, err);
    snprintf(path, sizeof(path), "%s.template.spec.containers", at);
    if (containers && !json_is_null(containers) && !json_is_array(containers)) {
        kf_type_error(err, path, "array", containers);
        return;
    }
    if (json_array_size(containers) == 0)
        meta_required(err, path, "must be specified");
    /* No container need be named "mindspore": upstream refused such a job,
     * but the seed manifest names its container after the job; the
     * environment then goes to the first container (mindspore_v1.c). */
    json_array_foreach(containers, i, c) {
        const char *image = NULL;
        snprintf(cpath, sizeof(cpath), "%s[%zu]", path, i);
        if (!json_is_object(c)) {
            kf_type_error(err, cpath, "object", c);
            continue;
        }
        snprintf(cpath, sizeof(cpath), "%s[%zu].image", path, i);
        if (kf_get_str(c, "image", cpath, err, &image) >= 0 && (!image || !*image))
            meta_required(err, cpath, "must be required");
    }
}

/* One list entry; returns its (valid) replica type or NULL. */
static const char *check_replica_spec(const json_t *rs, size_t i, ty_error *err)
{
    char at[64], path[128];
    const char *type = NULL;
    long long n;

    snprintf(at, sizeof(at), "spec.replicaSpecs[%zu]", i);
    if (!json_is_object(rs)) {
        kf_type_error(err, at, "object", rs);
        return NULL;
    }
    snprintf(path, sizeof(path), "%s.replicaType", at);
    if (kf_get_str(rs, "replicaType", path, err, &type) >= 0) {
        type = replica_type(rs); /* "" and absent: MASTER */
        if (strcmp(type, "MASTER") != 0 && strcmp(type, "WORKER") != 0) {
            meta_not_supported(err, path, json_object_get(rs, "replicaType"), replica_types);
            type = NULL;
        }
    }
    snprintf(path, sizeof(path), "%s.replicas", at);
    if (kf_check_int(rs, "replicas", path, 0, INT32_MAX, err, &n) == 1 && type &&
        strcmp(type, "MASTER") == 0 && n != 1)
        meta_invalid_int(err, path, n, "must be 1 for replicaType MASTER");
    snprintf(path, sizeof(path), "%s.masterPort", at);
    kf_check_int(rs, "masterPort", path, 1, 65535, err, NULL);
    check_template(json_object_get(rs, "template"), at, err);
    return type;
}

static void check_replica_specs(const json_t *spec, ty_error *err)
{
    const json_t *list = json_object_get(spec, "replicaSpecs"), *rs;
    bool seen[2] = {false, false};
    long long total = 0;
    size_t i;

    if (!list || json_is_null(list)) {
        meta_required(err, "spec.replicaSpecs", "must be specified");
        return;
    }
    if (!json_is_array(list)) {
        kf_type_error(err, "spec.replicaSpecs", "array", list);
        return;
    }
    if (json_array_size(list) > MSV1_MAX_SPECS) {
        ty_error_add_cause(err, "FieldValueTooMany", "spec.replicaSpecs",
                           "Too many: %zu: must have at most %d items (one per replicaType)",
                           json_array_size(list), MSV1_MAX_SPECS);
        return;
    }
    json_array_foreach(list, i, rs) {
        const char *type = check_replica_spec(rs, i, err);
        char path[64];
        int t;
        if (!type)
            continue;
        t = strcmp(type, "MASTER") == 0 ? 0 : 1;
        if (seen[t]) {
            json_t *v = json_string(type);
            snprintf(path, sizeof(path), "spec.replicaSpecs[%zu].replicaType", i);
            meta_duplicate(err, path, v ? v : json_null());
            json_decref(v);
        }
        seen[t] = true;
    }
    /* Upstream: "Missing ReplicaSpec for master" (the terminationPolicy's
     * replica: MASTER by default, and here always). */
    if (!seen[0])
        meta_required(err, "spec.replicaSpecs",
                      "must have one replica spec of replicaType MASTER");
    json_array_foreach(list, i, rs) {
        const json_t *r = json_object_get(rs, "replicas");
        if (json_is_integer(r) && json_integer_value(r) > 0)
            total += json_integer_value(r);
    }
    if (total > KF_MAX_JOB_PODS)
        meta_invalid_int(err, "spec.replicaSpecs", total,
                         "the replicas add up to more than %d pods", KF_MAX_JOB_PODS);
}

/* terminationPolicy.master names the replica whose end ends the job. With
 * exactly one MASTER of one replica, upstream's default (MASTER, rank 0)
 * is the only value that names a replica this engine can follow alone. */
static void check_termination_policy(const json_t *spec, ty_error *err)
{
    const json_t *tp = json_object_get(spec, "terminationPolicy");
    const json_t *m = json_object_get(tp, "master");
    long long rank;

    if (!tp || json_is_null(tp))
        return;
    if (!json_is_object(tp)) {
        kf_type_error(err, "spec.terminationPolicy", "object", tp);
        return;
    }
    if (!m || json_is_null(m))
        return;
    if (!json_is_object(m)) {
        kf_type_error(err, "spec.terminationPolicy.master", "object", m);
        return;
    }
    kf_check_enum(m, "replicaName", "spec.terminationPolicy.master.replicaName", master_names,
                  err);
    if (kf_get_int(m, "replicaRank", "spec.terminationPolicy.master.replicaRank", err, &rank) ==
            1 && rank != 0)
        meta_invalid_int(err, "spec.terminationPolicy.master.replicaRank", rank,
                         "must be 0: the MASTER has one replica");
}

static void msv1_validate(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err)
{
    const json_t *old_spec = old ? json_object_get(old, "spec") : NULL;
    const char *s;
    long long port;

    check_replica_specs(spec, err);
    if (spec_master_port(spec, &port) < 0)
        meta_invalid(err, "spec.masterPort", json_object_get(spec, "masterPort"),
                     "must be a port number between 1 and 65535");
    kf_get_str(spec, "backend", "spec.backend", err, &s);
    kf_get_str(spec, "msImage", "spec.msImage", err, &s);
    kf_get_str(spec, "schedulerName", "spec.schedulerName", err, &s);
    check_termination_policy(spec, err);
    /* runPolicy is Trainyard's addition to this form (cleanPodPolicy,
     * backoffLimit, deadlines, suspend, schedulingPolicy), checked as for
     * every other kind. */
    kf_check_run_policy(k, spec, json_is_object(old_spec) ? old_spec : NULL, err);
}

static int msjob_v1_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const json_t *spec = json_object_get(obj, "spec");

    kf_check_name(meta_str(json_object_get(obj, "metadata"), "name"), err);
    if (!json_is_object(spec)) {
        if (!spec || json_is_null(spec))
            meta_required(err, "spec", NULL);
        else
            kf_type_error(err, "spec", "object", spec);
    } else {
        msv1_validate(&kf_msjob_v1, spec, old, err);
    }
    if (ty_error_ncauses(err) == before)
        return 0;
    return ty_seterr(err, TY_EINVALID, "MSJob is invalid");
}

/* Nothing is defaulted in the stored object (see the top of the file). */
static void msjob_v1_apply_defaults(json_t *obj)
{
    (void)obj;
}

/* ---- the job engine's form -------------------------------------------- */

/* The replica's port, as upstream's Service named it, on the container
 * named "mindspore", else the first; unless a port of that name exists. */
static void add_master_port(json_t *replica, long long port)
{
    json_t *containers = json_object_get(json_object_get(json_object_get(replica, "template"),
                                                         "spec"),
                                         "containers");
    json_t *target = NULL, *c, *ports, *p;
    size_t i;

    json_array_foreach(containers, i, c) {
        const char *name = meta_str(c, "name");
        if (name && strcmp(name, kf_msjob_v1.default_container) == 0)
            target = c;
    }
    if (!target)
        target = json_array_get(containers, 0);
    if (!json_is_object(target))
        return;
    ports = json_object_get(target, "ports");
    if (!json_is_array(ports)) {
        ports = json_array();
        json_object_set_new(target, "ports", ports);
    }
    json_array_foreach(ports, i, p) {
        const char *name = meta_str(p, "name");
        if (name && strcmp(name, kf_msjob_v1.port_name) == 0)
            return;
    }
    json_array_append_new(ports, json_pack("{s:s, s:I}", "name", kf_msjob_v1.port_name,
                                           "containerPort", (json_int_t)port));
}

/* Upstream's SetDefaults_MSJob (replicaType MASTER, replicas 1, masterPort
 * 23456 — here spec.masterPort when given —, msImage, terminationPolicy
 * MASTER/0) on a copy, and the list turned into {MASTER: {...}, WORKER:
 * {...}}: replicas, template (the engine writes the replica's
 * restartPolicy over the template's, so the template's own becomes the
 * replica's), masterPort. The engine's common defaults follow. */
static void msv1_engine_form(const kf_kind *k, json_t *job)
{
    json_t *spec = json_object_get(job, "spec");
    json_t *list = json_object_get(spec, "replicaSpecs");
    json_t *map, *rs;
    long long port = MSV1_PORT;
    size_t i;

    if (!json_is_array(list) || !(map = json_object()))
        return;
    if (spec_master_port(spec, &port) != 1)
        port = MSV1_PORT;
    json_array_foreach(list, i, rs) {
        const char *type = replica_type(rs);
        const json_t *mp = json_object_get(rs, "masterPort");
        const char *rp;
        json_t *r;
        if (!json_is_object(rs) || !kf_replica_type_find(k, type) || json_object_get(map, type))
            continue;
        if (!(r = json_object()))
            continue;
        if (json_object_get(rs, "template"))
            json_object_set(r, "template", json_object_get(rs, "template"));
        json_object_set_new(r, "masterPort",
                            json_integer(json_is_integer(mp) ? json_integer_value(mp) : port));
        if (json_is_integer(json_object_get(rs, "replicas")))
            json_object_set(r, "replicas", json_object_get(rs, "replicas"));
        rp = json_string_value(
            json_object_get(json_object_get(json_object_get(rs, "template"), "spec"),
                            "restartPolicy"));
        if (rp && *rp)
            json_object_set_new(r, "restartPolicy", json_string(rp));
        add_master_port(r, json_integer_value(json_object_get(r, "masterPort")));
        json_object_set_new(map, type, r);
    }
    json_object_set_new(spec, "replicaSpecs", map);
    meta_default(spec, "msImage", json_string(MSV1_IMAGE));
    meta_default(spec, "terminationPolicy",
                 json_pack("{s:{s:s, s:i}}", "master", "replicaName", "MASTER", "replicaRank", 0));
    kf_apply_defaults(k, job);
}

const kf_kind kf_msjob_v1 = {
    .resource = &api_msjob_v1,
    .kind = "MSJob",
    .replica_field = "replicaSpecs",
    .types = {{"MASTER", 1, NULL}, {"WORKER", 1, NULL}},
    .default_container = "mindspore",
    .port_name = "ms-port",
    .port = MSV1_PORT,
    /* Upstream left the template's restartPolicy alone (a pod's default is
     * Always, which restarts a replica that finished); the PyTorch
     * operator's OnFailure, which the seed manifest writes, is the default
     * when the template names none. */
    .default_restart_policy = "OnFailure",
    /* Upstream deleted nothing until the job itself was deleted. */
    .default_clean_pod_policy = "None",
    .operator_name = "ms-operator",
    .framework = "mindspore",
    .engine_form = msv1_engine_form,
};

/* ---- schema: upstream's CRD had none, so every level keeps unknown
 * fields (the seed writes a hostPath into a volumeMount); the known ones
 * are typed for kubectl explain and type errors. */

static const api_field master_fields[] = {
    API_FIELD("replicaName", API_T_STRING),
    API_FIELD("replicaRank", API_T_INTEGER),
};
static const api_schema master_schema = API_SCHEMA_OPEN(master_fields);
static const api_field termination_fields[] = {
    API_OBJECT("master", &master_schema),
};
static const api_schema termination_schema = API_SCHEMA_OPEN(termination_fields);
static const api_field replica_fields[] = {
    API_FIELD("replicas", API_T_INTEGER),
    API_FIELD("replicaType", API_T_STRING),
    API_FIELD("masterPort", API_T_INTEGER),
    API_FIELD("template", API_T_OPEN),
};
static const api_schema replica_schema = API_SCHEMA_OPEN(replica_fields);
static const api_field spec_fields[] = {
    API_ARRAY_OF("replicaSpecs", &replica_schema),
    API_FIELD("backend", API_T_STRING),
    API_FIELD("masterPort", API_T_INT_OR_STRING),
    API_FIELD("msImage", API_T_STRING),
    API_OBJECT("terminationPolicy", &termination_schema),
    API_FIELD("schedulerName", API_T_STRING),
    API_OBJECT("runPolicy", &kf_schema_run_policy),
};
static const api_schema spec_schema = API_SCHEMA_OPEN(spec_fields);
static const api_field top_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema msjob_v1_schema = API_SCHEMA_OPEN(top_fields);

const api_resource api_msjob_v1 = {
    .group = "kubeflow.org", .version = "v1", .kind = "MSJob", .list_kind = "MSJobList",
    .plural = "msjobs", .singular = "msjob", .namespaced = true,
    .has_status = true, .builtin = false,
    .apply_defaults = msjob_v1_apply_defaults, .validate = msjob_v1_validate,
    .columns = kf_columns, .ncolumns = KF_NCOLUMNS, .row_cells = kf_row_cells,
    .column_paths = kf_column_paths,
    .schema = &msjob_v1_schema,
};

/* ---- the framework: what its replicas get, and when it has succeeded ---- */

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
