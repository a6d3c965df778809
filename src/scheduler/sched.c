/* sched.c - the scheduler component in the server: keeps the core's cluster
 * model (core.h) current from one store watch (nodes, queues, pod groups,
 * priority classes, pods), runs a cycle when something changed, and turns
 * the core's decisions into bindings, evictions, PodGroup status, pod
 * conditions and events.
 *
 * The model is built once from lists at start and then only from events: a
 * cycle never rescans the store. */
#include "scheduler/sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "base/strmap.h"
#include "base/timeutil.h"
#include "controller/events.h"
#include "model/podcond.h"
#include "model/quantity.h"
#include "scheduler/core.h"

#define BATCH_MS 1          /* quiet time to gather a burst of events */
#define MAX_BATCH_MS 50     /* ...but never wait longer than this */
#define COMPONENT "volcano"
#define GROUP_ANN "scheduling.k8s.io/group-name"
#define MAX_KV 64

struct ty_sched {
    ty_store *store;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t w_mu;
    store_watch *w;
    sc_cluster *cluster;
    sc_conf *conf;
    json_t *pcs;        /* PriorityClass name -> value */
    int32_t default_pc; /* the globalDefault class's value */
    strmap told;        /* pod key -> the PodScheduled message last written (owned) */
    strmap told_jobs;   /* job key -> told_job (owned) */
#define DUE_MAX 65536
    struct told_job *due[DUE_MAX];
    size_t ndue;
    const char *k_podgroups, *k_queues, *k_pcs;
};

/* ---- JSON to the model ---- */

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

static int64_t qty(const json_t *v)
{
    char buf[64];
    int64_t m;
    if (json_is_integer(v))
        return json_integer_value(v) * 1000;
    if (json_is_real(v))
        return (int64_t)(json_real_value(v) * 1000);
    if (!json_is_string(v))
        return 0;
    snprintf(buf, sizeof(buf), "%s", json_string_value(v));
    return quantity_parse(buf, &m, NULL) == 0 ? m : 0;
}

static void res_from_map(sc_cluster *c, const json_t *map, sc_res *out, unsigned *mask)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v) {
        int slot = sc_res_slot(c, k);
        if (slot < 0)
            continue;
        out->v[slot] = qty(v);
        if (mask)
            *mask |= 1u << slot;
    }
}

/* A pod's effective requests: the containers' sum (limits stand in for
 * missing requests), or the largest init container when that is more; one
 * "pods" slot. */
static void pod_requests(sc_cluster *c, const json_t *pod, sc_res *out)
{
    const json_t *spec = json_object_get(pod, "spec");
    sc_res init = {0};
    size_t i;
    json_t *ctr;

    memset(out, 0, sizeof(*out));
    json_array_foreach(json_object_get(spec, "containers"), i, ctr) {
        const json_t *r = json_object_get(ctr, "resources");
        sc_res one = {0};
        res_from_map(c, json_object_get(r, "limits"), &one, NULL);
        res_from_map(c, json_object_get(r, "requests"), &one, NULL);
        sc_res_add(out, &one);
    }
    json_array_foreach(json_object_get(spec, "initContainers"), i, ctr) {
        sc_res one = {0};
        const json_t *r = json_object_get(ctr, "resources");
        res_from_map(c, json_object_get(r, "limits"), &one, NULL);
        res_from_map(c, json_object_get(r, "requests"), &one, NULL);
        for (int k = 0; k < SC_MAXRES; k++)
            if (one.v[k] > init.v[k])
                init.v[k] = one.v[k];
    }
    for (int k = 0; k < SC_MAXRES; k++)
        if (init.v[k] > out->v[k])
            out->v[k] = init.v[k];
    out->v[SC_PODS] = 1000;
}

static size_t map_kv(const json_t *map, sc_kv *kv, size_t cap)
{
    const char *k;
    json_t *v;
    size_t n = 0;
    json_object_foreach((json_t *)map, k, v) {
        if (n == cap || !json_is_string(v))
            continue;
        kv[n++] = (sc_kv){k, json_string_value(v)};
    }
    return n;
}

static sc_effect effect_of(const char *e)
{
    if (e && strcmp(e, "NoExecute") == 0)
        return SC_NO_EXECUTE;
    if (e && strcmp(e, "PreferNoSchedule") == 0)
        return SC_PREFER_NO_SCHEDULE;
    return SC_NO_SCHEDULE;
}

static bool node_ready(const json_t *node)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c) {
        if (strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Ready") == 0)
            return strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True") == 0;
    }
    return false;
}

static void apply_node(ty_sched *sc, const json_t *node, bool deleted)
{
    const char *name = str_at(node, "metadata", "name");
    sc_node_spec spec = {0};
    sc_kv labels[MAX_KV];
    sc_taint taints[MAX_KV];
    size_t i, nt = 0;
    json_t *t;

    if (!name)
        return;
    if (deleted) {
        sc_node_remove(sc->cluster, name);
        return;
    }
    spec.name = name;
    res_from_map(sc->cluster, json_object_get(json_object_get(node, "status"), "allocatable"),
                 &spec.allocatable, NULL);
    spec.ready = node_ready(node);
    spec.unschedulable = json_is_true(json_object_get(json_object_get(node, "spec"),
                                                      "unschedulable"));
    spec.labels = labels;
    spec.nlabels = map_kv(json_object_get(json_object_get(node, "metadata"), "labels"), labels,
                          MAX_KV);
    json_array_foreach(json_object_get(json_object_get(node, "spec"), "taints"), i, t) {
        if (nt == MAX_KV || !json_string_value(json_object_get(t, "key")))
            continue;
        taints[nt++] = (sc_taint){json_string_value(json_object_get(t, "key")),
                                  json_string_value(json_object_get(t, "value")),
                                  effect_of(json_string_value(json_object_get(t, "effect")))};
    }
    spec.taints = taints;
    spec.ntaints = nt;
    sc_node_upsert(sc->cluster, &spec);
}

static void apply_queue(ty_sched *sc, const json_t *q, bool deleted)
{
    const char *name = str_at(q, "metadata", "name");
    const json_t *spec = json_object_get(q, "spec");
    const char *state = str_at(q, "status", "state");
    sc_queue_spec qs = {0};

    if (!name)
        return;
    if (deleted) {
        sc_queue_remove(sc->cluster, name);
        return;
    }
    qs.name = name;
    qs.parent = json_string_value(json_object_get(spec, "parent"));
    qs.weight = (int)json_integer_value(json_object_get(spec, "weight"));
    res_from_map(sc->cluster, json_object_get(spec, "capability"), &qs.capability, &qs.cap_mask);
    res_from_map(sc->cluster, json_object_get(json_object_get(spec, "guarantee"), "resource"),
                 &qs.guarantee, NULL);
    qs.reclaimable = !json_is_false(json_object_get(spec, "reclaimable"));
    qs.open = !state || strcmp(state, "Open") == 0;
    sc_queue_upsert(sc->cluster, &qs);
}

static int32_t class_value(ty_sched *sc, const char *name)
{
    const json_t *v = name && *name ? json_object_get(sc->pcs, name) : NULL;
    return v ? (int32_t)json_integer_value(v) : sc->default_pc;
}

static void apply_pc(ty_sched *sc, const json_t *pc, bool deleted)
{
    const char *name = str_at(pc, "metadata", "name");
    json_int_t v = json_integer_value(json_object_get(pc, "value"));

    if (!name)
        return;
    if (deleted)
        json_object_del(sc->pcs, name);
    else
        json_object_set_new(sc->pcs, name, json_integer(v));
    if (json_is_true(json_object_get(pc, "globalDefault")))
        sc->default_pc = deleted ? 0 : (int32_t)v;
}

static double created_of(const json_t *o)
{
    time_t t = 0;
    const char *ts = str_at(o, "metadata", "creationTimestamp");
    if (ts)
        ty_time_parse(ts, &t);
    return (double)t;
}

static void group_key(const json_t *o, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", str_at(o, "metadata", "namespace") ?: "", name);
}

static void apply_podgroup(ty_sched *sc, const json_t *pg, bool deleted)
{
    const char *name = str_at(pg, "metadata", "name");
    const json_t *spec = json_object_get(pg, "spec");
    const char *phase = str_at(pg, "status", "phase");
    char key[512];
    sc_kv mins[MAX_KV];
    char mins_txt[MAX_KV][24];
    sc_job_spec js = {0};
    const char *k;
    json_t *v;
    sc_job *j;

    if (!name)
        return;
    group_key(pg, name, key, sizeof(key));
    if (deleted) {
        sc_job_remove(sc->cluster, key);
        return;
    }
    js.key = key;
    js.queue = json_string_value(json_object_get(spec, "queue"));
    js.min_member = (int)json_integer_value(json_object_get(spec, "minMember"));
    json_object_foreach(json_object_get(spec, "minTaskMember"), k, v) {
        if (js.nmin_task_member == MAX_KV)
            break;
        snprintf(mins_txt[js.nmin_task_member], sizeof(mins_txt[0]), "%lld",
                 (long long)json_integer_value(v));
        mins[js.nmin_task_member] = (sc_kv){k, mins_txt[js.nmin_task_member]};
        js.nmin_task_member++;
    }
    js.min_task_member = mins;
    res_from_map(sc->cluster, json_object_get(spec, "minResources"), &js.min_resources, NULL);
    js.priority = class_value(sc, json_string_value(json_object_get(spec, "priorityClassName")));
    js.created = created_of(pg);
    js.inqueue = phase && strcmp(phase, "Pending") != 0;
    js.preemptable = true;
    /* Completed is the scheduler's own word: a job that restarts its pods
     * is scheduled again, so it is not taken from the object. */
    j = sc_job_upsert(sc->cluster, &js);
    (void)j;
}

static bool ours(const json_t *pod)
{
    const char *sn = str_at(pod, "spec", "schedulerName");
    return !sn || !*sn || strcmp(sn, "default-scheduler") == 0 || strcmp(sn, "trainyard") == 0 ||
           strcmp(sn, "volcano") == 0;
}

static void apply_pod(ty_sched *sc, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = str_at(pod, "status", "phase") ?: "Pending";
    const char *group = json_string_value(json_object_get(json_object_get(meta, "annotations"),
                                                          GROUP_ANN));
    const char *role;
    char key[512], gkey[512];
    sc_task_spec ts = {0};
    sc_kv sel[MAX_KV];
    sc_toleration tols[MAX_KV];
    sc_match_expr exprs[MAX_KV];
    const char *vals[MAX_KV * 4];
    sc_affinity_term terms[16];
    size_t i, nv = 0, ne = 0;
    json_t *t;

    if (!name)
        return;
    group_key(pod, name, key, sizeof(key));
    if (node && !*node)
        node = NULL;
    if (deleted || (!node && (json_object_get(meta, "deletionTimestamp") || !ours(pod)))) {
        free(strmap_del(&sc->told, key));
        sc_task_remove(sc->cluster, key);
        return;
    }
    ts.key = key;
    if (group) {
        group_key(pod, group, gkey, sizeof(gkey));
        ts.job = gkey;
    }
    role = json_string_value(json_object_get(json_object_get(meta, "annotations"),
                                             "volcano.sh/task-spec"));
    if (!role)
        role = json_string_value(json_object_get(json_object_get(meta, "labels"),
                                                 "training.kubeflow.org/replica-type"));
    ts.task_name = role;
    pod_requests(sc->cluster, pod, &ts.request);
    if (json_is_integer(json_object_get(spec, "priority")))
        ts.priority = (int32_t)json_integer_value(json_object_get(spec, "priority"));
    else
        ts.priority = class_value(sc, json_string_value(json_object_get(spec, "priorityClassName")));
    ts.node = node;
    if (json_object_get(meta, "deletionTimestamp"))
        ts.status = SC_TASK_RELEASING;
    else if (strcmp(phase, "Succeeded") == 0)
        ts.status = SC_TASK_SUCCEEDED;
    else if (strcmp(phase, "Failed") == 0)
        ts.status = SC_TASK_FAILED;
    else if (node)
        ts.status = strcmp(phase, "Running") == 0 ? SC_TASK_RUNNING : SC_TASK_BOUND;
    else
        ts.status = SC_TASK_PENDING;
    ts.node_selector = sel;
    ts.nnode_selector = map_kv(json_object_get(spec, "nodeSelector"), sel, MAX_KV);
    json_array_foreach(json_object_get(spec, "tolerations"), i, t) {
        const char *op = json_string_value(json_object_get(t, "operator"));
        const char *eff = json_string_value(json_object_get(t, "effect"));
        if (ts.ntolerations == MAX_KV)
            break;
        tols[ts.ntolerations++] = (sc_toleration){
            .key = json_string_value(json_object_get(t, "key")),
            .value = json_string_value(json_object_get(t, "value")),
            .exists = op && strcmp(op, "Exists") == 0,
            .any_effect = !eff || !*eff,
            .effect = effect_of(eff)};
    }
    ts.tolerations = tols;
    json_t *nst = json_object_get(json_object_get(json_object_get(json_object_get(spec,
        "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms");
    json_array_foreach(nst, i, t) {
        size_t k, first = ne;
        json_t *e;
        if (ts.naffinity == 16)
            break;
        json_array_foreach(json_object_get(t, "matchExpressions"), k, e) {
            const char *op = json_string_value(json_object_get(e, "operator")) ?: "";
            size_t x, fv = nv;
            json_t *val;
            if (ne == MAX_KV)
                break;
            json_array_foreach(json_object_get(e, "values"), x, val)
                if (nv < MAX_KV * 4 && json_is_string(val))
                    vals[nv++] = json_string_value(val);
            exprs[ne++] = (sc_match_expr){
                .key = json_string_value(json_object_get(e, "key")) ?: "",
                .op = strcmp(op, "NotIn") == 0          ? SC_OP_NOT_IN
                      : strcmp(op, "Exists") == 0       ? SC_OP_EXISTS
                      : strcmp(op, "DoesNotExist") == 0 ? SC_OP_NOT_EXISTS
                      : strcmp(op, "Gt") == 0           ? SC_OP_GT
                      : strcmp(op, "Lt") == 0           ? SC_OP_LT
                                                        : SC_OP_IN,
                .values = &vals[fv],
                .nvalues = nv - fv};
        }
        terms[ts.naffinity++] = (sc_affinity_term){&exprs[first], ne - first};
    }
    ts.affinity = terms;
    sc_task_upsert(sc->cluster, &ts);
}

static void apply(ty_sched *sc, const char *resource, const json_t *obj, bool deleted)
{
    if (strcmp(resource, "pods") == 0)
        apply_pod(sc, obj, deleted);
    else if (strcmp(resource, "nodes") == 0)
        apply_node(sc, obj, deleted);
    else if (strcmp(resource, sc->k_podgroups) == 0)
        apply_podgroup(sc, obj, deleted);
    else if (strcmp(resource, sc->k_queues) == 0)
        apply_queue(sc, obj, deleted);
    else if (strcmp(resource, sc->k_pcs) == 0)
        apply_pc(sc, obj, deleted);
}

static bool interesting(const ty_sched *sc, const char *resource)
{
    return strcmp(resource, "pods") == 0 || strcmp(resource, "nodes") == 0 ||
           strcmp(resource, sc->k_podgroups) == 0 || strcmp(resource, sc->k_queues) == 0 ||
           strcmp(resource, sc->k_pcs) == 0;
}

static void load_all(ty_sched *sc)
{
    /* priority classes and queues first: pod groups and pods refer to them */
    const char *order[] = {sc->k_pcs, sc->k_queues, "nodes", sc->k_podgroups, "pods"};
    for (size_t r = 0; r < sizeof(order) / sizeof(order[0]); r++) {
        store_list l = {0};
        store_list_opts all = {0};
        if (store_list_objects(sc->store, order[r], &all, &l, NULL) < 0)
            continue;
        for (size_t i = 0; i < l.n; i++)
            apply(sc, order[r], store_obj_json(l.items[i]), false);
        store_list_free(&l);
    }
}

/* ---- decisions to the store ---- */

static void split_key(const char *key, char *ns, size_t nslen, const char **name)
{
    const char *slash = strchr(key, '/');
    size_t n = slash ? (size_t)(slash - key) : 0;
    if (n >= nslen)
        n = nslen - 1;
    memcpy(ns, key, n);
    ns[n] = 0;
    *name = slash ? slash + 1 : key;
}

/* Sets condition type on obj (see podcond_set); a NULL msg removes it. */
static void set_condition(json_t *obj, const char *type, const char *status, const char *reason,
                          const char *msg, bool probe_time)
{
    char now[40];

    ty_time_format(time(NULL), now, sizeof(now));
    podcond_set(podcond_status(obj), type, status, reason, msg ? msg : "", now, probe_time);
}

typedef struct bind_args {
    const char *node;
} bind_args;

static int bind_fn(json_t *pod, void *arg, ty_error *err)
{
    const bind_args *b = arg;
    json_t *spec = json_object_get(pod, "spec");
    const char *cur = json_string_value(json_object_get(spec, "nodeName"));

    if (cur && *cur)
        return ty_seterr(err, TY_ECONFLICT, "already bound to %s", cur);
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        return ty_seterr(err, TY_ECONFLICT, "being deleted");
    json_object_set_new(spec, "nodeName", json_string(b->node));
    set_condition(pod, "PodScheduled", "True", NULL, NULL, true);
    return 0;
}

static void hook_bind(void *ctx, sc_task *t, sc_node *n)
{
    ty_sched *sc = ctx;
    char ns[256];
    const char *name;
    bind_args b = {sc_node_name(n)};
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    split_key(sc_task_key(t), ns, sizeof(ns), &name);
    o = store_mutate(sc->store, "pods", ns, name, bind_fn, &b, &err);
    if (!o) {
        ty_debug("scheduler: binding %s to %s: %s", sc_task_key(t), b.node, err.text);
        sc_task_unbind(sc->cluster, t);
    } else {
        ty_event(sc->store, store_obj_json(o), "Normal", "Scheduled", COMPONENT,
                 "Successfully assigned %s/%s to %s", ns, name, b.node);
        store_obj_unref(o);
    }
    free(strmap_del(&sc->told, sc_task_key(t)));
    ty_error_clear(&err);
}

typedef struct evict_args {
    const char *msg;
} evict_args;

static int mark_evicted(json_t *pod, void *arg, ty_error *err)
{
    const evict_args *e = arg;
    (void)err;
    set_condition(pod, "DisruptionTarget", "True", "PreemptionByScheduler", e->msg, false);
    return 0;
}

static void hook_evict(void *ctx, sc_task *t, const char *reason, const sc_job *by)
{
    ty_sched *sc = ctx;
    char ns[256], msg[600];
    const char *name;
    store_delete_opts opts = {0};
    bool deleted;
    ty_error err;
    store_obj *o;

    split_key(sc_task_key(t), ns, sizeof(ns), &name);
    snprintf(msg, sizeof(msg), "%s by pod group %s", reason, by ? sc_job_key(by) : "?");
    ty_error_init(&err);
    evict_args e = {msg};
    o = store_mutate(sc->store, "pods", ns, name, mark_evicted, &e, &err);
    if (o) {
        ty_event(sc->store, store_obj_json(o), "Warning", reason, COMPONENT, "%s", msg);
        store_obj_unref(o);
    }
    ty_error_clear(&err);
    o = store_delete(sc->store, "pods", ns, name, &opts, &deleted, &err);
    store_obj_unref(o);
    ty_error_clear(&err);
    ty_info("scheduler: evicted %s (%s)", sc_task_key(t), msg);
}

static const char *phase_name(sc_job_phase p)
{
    switch (p) {
    case SC_JOB_PENDING:
        return "Pending";
    case SC_JOB_INQUEUE:
        return "Inqueue";
    case SC_JOB_RUNNING:
        return "Running";
    case SC_JOB_COMPLETED:
        return "Completed";
    }
    return "Unknown";
}

typedef struct pg_args {
    const char *phase, *msg;
} pg_args;

static int pg_status_fn(json_t *pg, void *arg, ty_error *err)
{
    const pg_args *a = arg;
    json_t *st;
    (void)err;
    st = podcond_status(pg);
    json_object_set_new(st, "phase", json_string(a->phase));
    if (*a->msg)
        set_condition(pg, "Unschedulable", "True", "NotEnoughResources", a->msg, false);
    else
        set_condition(pg, "Scheduled", "True", "tasks in gang are ready to be scheduled", "",
                      false);
    /* one of Scheduled / Unschedulable says True at a time */
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c) {
        const char *type = json_string_value(json_object_get(c, "type")) ?: "";
        if ((strcmp(type, "Unschedulable") == 0 && !*a->msg) ||
            (strcmp(type, "Scheduled") == 0 && *a->msg))
            json_object_set_new(c, "status", json_string("False"));
    }
    return 0;
}

static int pod_unsched_fn(json_t *pod, void *arg, ty_error *err)
{
    const char *msg = arg;
    if (json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")))
        return ty_seterr(err, TY_ECONFLICT, "bound meanwhile");
    set_condition(pod, "PodScheduled", "False", "Unschedulable", msg, true);
    return 0;
}

/* Pending pods of the job say why (PodScheduled False + FailedScheduling),
 * once per distinct message. */
static void tell_pods(ty_sched *sc, sc_job *j)
{
    for (size_t i = 0; i < sc_job_ntasks(j); i++) {
        sc_task *t = sc_job_task(j, i);
        const char *msg = sc_task_message(t), *told, *name;
        char ns[256];
        ty_error err;
        store_obj *o;

        if (sc_task_get_status(t) != SC_TASK_PENDING || !*msg)
            continue;
        told = strmap_get(&sc->told, sc_task_key(t));
        if (told && strcmp(told + strlen(told) + 1, msg) == 0)
            continue;
        split_key(sc_task_key(t), ns, sizeof(ns), &name);
        ty_error_init(&err);
        o = store_mutate(sc->store, "pods", ns, name, pod_unsched_fn, (void *)msg, &err);
        if (o) {
            ty_event(sc->store, store_obj_json(o), "Warning", "FailedScheduling", COMPONENT, "%s",
                     msg);
            store_obj_unref(o);
            /* the value holds its own key: "key\0message\0" */
            size_t kl = strlen(sc_task_key(t)), ml = strlen(msg);
            char *rec = malloc(kl + ml + 2);
            free(strmap_del(&sc->told, sc_task_key(t)));
            if (rec) {
                memcpy(rec, sc_task_key(t), kl + 1);
                memcpy(rec + kl + 1, msg, ml + 1);
                if (strmap_put(&sc->told, rec, rec) < 0)
                    free(rec);
            }
        }
        ty_error_clear(&err);
    }
}

static void write_job(ty_sched *sc, sc_job *j)
{
    char ns[256];
    const char *name;
    pg_args a = {phase_name(sc_job_get_phase(j)), sc_job_message(j)};
    ty_error err;
    store_obj *o;

    split_key(sc_job_key(j), ns, sizeof(ns), &name);
    ty_error_init(&err);
    o = store_mutate(sc->store, sc->k_podgroups, ns, name, pg_status_fn, &a, &err);
    if (o && *a.msg) {
        const json_t *refs = json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                             "ownerReferences");
        size_t i;
        json_t *r;
        ty_event(sc->store, store_obj_json(o), "Warning", "Unschedulable", COMPONENT, "%s", a.msg);
        /* ...and on the job, so that `kubectl describe` of it says why it waits */
        json_array_foreach(refs, i, r) {
            if (!json_is_true(json_object_get(r, "controller")))
                continue;
            json_t *owner = json_pack("{s:O?, s:O?, s:{s:O?, s:s, s:O?}}", "apiVersion",
                                      json_object_get(r, "apiVersion"), "kind",
                                      json_object_get(r, "kind"), "metadata", "name",
                                      json_object_get(r, "name"), "namespace", ns, "uid",
                                      json_object_get(r, "uid"));
            if (owner)
                ty_event(sc->store, owner, "Warning", "Unschedulable", COMPONENT, "%s", a.msg);
            json_decref(owner);
        }
    }
    store_obj_unref(o);
    ty_error_clear(&err);
    tell_pods(sc, j);
}

/* What was last written for a job: a phase change is written at once, a
 * new "why it waits" message at most every MSG_EVERY_MS (a waiting gang's
 * message changes with every cycle that moves the cluster, and each write
 * is the PodGroup, two events and every pending pod). */
#define MSG_EVERY_MS 2000

typedef struct told_job {
    sc_job_phase phase;
    int64_t at;
    bool due;
    char key[]; /* the map's key */
} told_job;

static void hook_job_changed(void *ctx, sc_job *j)
{
    ty_sched *sc = ctx;
    told_job *tj = strmap_get(&sc->told_jobs, sc_job_key(j));
    int64_t now = ty_now_ms();

    if (!tj) {
        size_t kl = strlen(sc_job_key(j));
        tj = calloc(1, sizeof(*tj) + kl + 1);
        if (!tj) {
            write_job(sc, j);
            return;
        }
        memcpy(tj->key, sc_job_key(j), kl + 1);
        tj->phase = (sc_job_phase)-1;
        if (strmap_put(&sc->told_jobs, tj->key, tj) < 0) {
            free(tj);
            write_job(sc, j);
            return;
        }
    }
    if (tj->phase == sc_job_get_phase(j) && now - tj->at < MSG_EVERY_MS) {
        if (!tj->due) {
            tj->due = true;
            if (sc->ndue < DUE_MAX)
                sc->due[sc->ndue++] = tj;
        }
        return;
    }
    tj->phase = sc_job_get_phase(j);
    tj->at = now;
    tj->due = false;
    write_job(sc, j);
}

/* Writes the messages held back by hook_job_changed once their time came. */
static void flush_due(ty_sched *sc)
{
    int64_t now = ty_now_ms();
    size_t k = 0;

    for (size_t i = 0; i < sc->ndue; i++) {
        told_job *tj = sc->due[i];
        sc_job *j;
        if (now - tj->at < MSG_EVERY_MS) {
            sc->due[k++] = tj;
            continue;
        }
        tj->due = false;
        j = sc_job_find(sc->cluster, tj->key);
        if (!j)
            continue;
        tj->phase = sc_job_get_phase(j);
        tj->at = now;
        write_job(sc, j);
    }
    sc->ndue = k;
}

/* ---- queue status ---- */

#define QUEUE_STATUS_MS 1000

static int queue_status_fn(json_t *q, void *arg, ty_error *err)
{
    json_t *st = json_object_get(q, "status");
    (void)err;
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(q, "status", st);
    }
    json_object_update(st, arg);
    if (!json_object_get(st, "state"))
        json_object_set_new(st, "state", json_string("Open"));
    return 0;
}

/* Each Queue's status: what its jobs hold (allocated) and its PodGroups by
 * phase, as Volcano reports them; written only when it changed. */
static void write_queue_status(ty_sched *sc)
{
    sc_cluster *c = sc->cluster;
    size_t nq = sc_queue_count(c);
    int (*counts)[4] = calloc(nq + 1, sizeof(*counts));

    if (!counts)
        return;
    for (size_t i = 0; i < sc_job_count(c); i++) {
        const sc_job *j = sc_job_at(c, i);
        if (!sc_job_is_group(j))
            continue;
        for (size_t k = 0; k < nq; k++)
            if (sc_queue_at(c, k) == sc_job_queue(j))
                counts[k][sc_job_get_phase(j)]++;
    }
    for (size_t k = 0; k < nq; k++) {
        const sc_queue *q = sc_queue_at(c, k);
        const sc_res *a = sc_queue_allocated(q);
        json_t *alloc = json_object(), *st;
        ty_error err;
        store_obj *o;

        if (!sc_queue_defined(q))
            continue;
        for (int r = 0; r < SC_MAXRES; r++) {
            char buf[64];
            if (!a->v[r] || !sc_res_name(c, r))
                continue;
            quantity_format(a->v[r], buf, sizeof(buf));
            json_object_set_new(alloc, sc_res_name(c, r), json_string(buf));
        }
        st = json_pack("{s:o, s:i, s:i, s:i, s:i, s:i}", "allocated", alloc, "pending",
                       counts[k][SC_JOB_PENDING], "inqueue", counts[k][SC_JOB_INQUEUE],
                       "running", counts[k][SC_JOB_RUNNING], "completed",
                       counts[k][SC_JOB_COMPLETED], "unknown", 0);
        ty_error_init(&err);
        o = store_mutate(sc->store, sc->k_queues, "", sc_queue_name(q), queue_status_fn, st, &err);
        store_obj_unref(o);
        ty_error_clear(&err);
        json_decref(st);
    }
    free(counts);
}

/* ---- the loop ---- */

static void cycle(ty_sched *sc)
{
    sc_hooks h = {.ctx = sc, .bind = hook_bind, .evict = hook_evict,
                  .job_changed = hook_job_changed};
    sc_cycle_stats st;
    int64_t t0 = ty_now_ms();

    sc_cycle(sc->cluster, sc->conf, &h, &st);
    if (st.bound || st.evicted || st.admitted)
        ty_debug("scheduler: cycle %lld ms: %zu admitted, %zu bound, %zu pipelined, %zu evicted, "
                 "%zu/%zu jobs unschedulable", (long long)(ty_now_ms() - t0), st.admitted,
                 st.bound, st.pipelined, st.evicted, st.jobs_unschedulable, st.jobs_considered);
}

static void *sched_main(void *arg)
{
    ty_sched *sc = arg;
    bool dirty = true;
    int64_t first_dirty = ty_now_ms(), last_change = first_dirty, last_queue_status = 0;

    load_all(sc);
    while (!atomic_load(&sc->stop)) {
        store_event ev;
        ty_error err;
        int64_t now = ty_now_ms(), due;
        int wait = 1000;
        ty_error_init(&err);
        /* A cycle runs BATCH_MS after the last change that matters (events
         * of other resources do not push it back), at most MAX_BATCH_MS
         * after the first. */
        if (dirty) {
            due = last_change + BATCH_MS;
            if (first_dirty + MAX_BATCH_MS < due)
                due = first_dirty + MAX_BATCH_MS;
            wait = due > now ? (int)(due - now) : 0;
        }
        int rc = wait ? store_watch_next(sc->w, wait, &ev, &err) : 0;
        if (rc == 1) {
            if (interesting(sc, ev.resource)) {
                apply(sc, ev.resource, store_obj_json(ev.obj), ev.type == STORE_DELETED);
                last_change = ty_now_ms();
                if (!dirty)
                    first_dirty = last_change;
                dirty = true;
            }
            store_event_release(&ev);
            continue;
        }
        if (rc < 0) {
            ty_error_clear(&err);
            if (atomic_load(&sc->stop))
                break;
            /* Fell behind the watch history: rebuild the model from lists. */
            pthread_mutex_lock(&sc->w_mu);
            store_watch_close(sc->w);
            sc->w = atomic_load(&sc->stop) ? NULL
                                           : store_watch_open(sc->store, NULL, NULL, 0, NULL);
            pthread_mutex_unlock(&sc->w_mu);
            if (!sc->w)
                break;
            load_all(sc);
            dirty = true;
            continue;
        }
        if (dirty) {
            dirty = false;
            cycle(sc);
        }
        if (sc->ndue)
            flush_due(sc);
        if (ty_now_ms() - last_queue_status >= QUEUE_STATUS_MS) {
            last_queue_status = ty_now_ms();
            write_queue_status(sc);
        }
    }
    return NULL;
}

ty_sched *sched_start(ty_store *s, ty_error *err)
{
    return sched_start_with(s, NULL, err);
}

ty_sched *sched_start_with(ty_store *s, const char *conf_path, ty_error *err)
{
    ty_sched *sc = calloc(1, sizeof(*sc));

    if (!sc) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    sc->store = s;
    sc->k_podgroups = api_store_key(&api_podgroup);
    sc->k_queues = api_store_key(&api_queue);
    sc->k_pcs = api_store_key(&api_priorityclass);
    sc->conf = conf_path ? sc_conf_load(conf_path, err) : sc_conf_default();
    sc->cluster = sc_cluster_new();
    sc->pcs = json_object();
    strmap_init(&sc->told);
    strmap_init(&sc->told_jobs);
    pthread_mutex_init(&sc->w_mu, NULL);
    if (!sc->conf || !sc->cluster)
        goto error;
    sc->w = store_watch_open(s, NULL, NULL, 0, err);
    if (!sc->w)
        goto error;
    if (pthread_create(&sc->thread, NULL, sched_main, sc) != 0) {
        ty_seterr(err, TY_EINTERNAL, "cannot start the scheduler thread");
        store_watch_close(sc->w);
        goto error;
    }
    ty_info("scheduler: actions %s", sc_conf_actions(sc->conf));
    return sc;
error:
    sc_conf_free(sc->conf);
    sc_cluster_free(sc->cluster);
    json_decref(sc->pcs);
    pthread_mutex_destroy(&sc->w_mu);
    free(sc);
    return NULL;
}

void sched_stop(ty_sched *sc)
{
    if (!sc)
        return;
    atomic_store(&sc->stop, true);
    pthread_mutex_lock(&sc->w_mu);
    if (sc->w)
        store_watch_cancel(sc->w);
    pthread_mutex_unlock(&sc->w_mu);
    pthread_join(sc->thread, NULL);
    if (sc->w)
        store_watch_close(sc->w);
    pthread_mutex_destroy(&sc->w_mu);
    sc_conf_free(sc->conf);
    sc_cluster_free(sc->cluster);
    json_decref(sc->pcs);
    strmap_free_values(&sc->told);
    strmap_free_values(&sc->told_jobs);
    free(sc);
}
