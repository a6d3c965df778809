/* sched_feed.c - store objects into the gang scheduler's model: nodes
 * (allocatable, readiness, labels, taints), Volcano Queues, PodGroups,
 * PriorityClasses and pods (requests, group, role, priority, constraints,
 * status). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/timeutil.h"
#include "model/podres.h"
#include "model/quantity.h"
#include "model/quota.h"
#include "scheduler/sched_int.h"

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

/* admin: the map is from an object only administrators make (a Node, a
 * Queue), whose names may take a slot; a tenant's names are only looked up
 * (sc_res_find: all that no node offers add up in SC_UNOFFERED). */
static void res_from_map(sc_cluster *c, const json_t *map, bool admin, sc_res *out,
                         unsigned *mask)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v) {
        int slot = admin ? sc_res_slot(c, k) : sc_res_find(c, k);
        if (slot < 0)
            continue;
        if (slot == SC_UNOFFERED)
            out->v[slot] += qty(v);
        else
            out->v[slot] = qty(v);
        if (mask)
            *mask |= 1u << slot;
    }
}

static size_t res_names_known(const sc_cluster *c)
{
    size_t n = 0;
    for (int i = SC_GPU + 1; i < SC_UNOFFERED; i++)
        n += sc_res_name(c, i) != NULL;
    return n;
}

/* A pod's effective requests by the one rule (model/podres.h), in the
 * cluster's slots; one "pods" slot. */
static void pod_requests(sc_cluster *c, const json_t *pod, sc_res *out)
{
    podres r;

    memset(out, 0, sizeof(*out));
    podres_of_spec(json_object_get(pod, "spec"), &r);
    for (size_t i = 0; i < r.n; i++) {
        int slot = sc_res_find(c, r.r[i].name);
        if (slot == SC_UNOFFERED)
            out->v[slot] += r.r[i].milli;
        else if (slot != SC_PODS)
            out->v[slot] = r.r[i].milli;
    }
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
    size_t known = res_names_known(sc->cluster);
    res_from_map(sc->cluster, json_object_get(json_object_get(node, "status"), "allocatable"), true,
                 &spec.allocatable, NULL);
    if (res_names_known(sc->cluster) != known)
        sc->refeed_unbound = true;
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
    res_from_map(sc->cluster, json_object_get(spec, "capability"), true, &qs.capability,
                 &qs.cap_mask);
    res_from_map(sc->cluster, json_object_get(json_object_get(spec, "guarantee"), "resource"), true,
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
        sc_job_orphan(sc->cluster, key);
        sched_forget_job(sc, key);
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
    res_from_map(sc->cluster, json_object_get(spec, "minResources"), false, &js.min_resources,
                 NULL);
    js.priority = class_value(sc, json_string_value(json_object_get(spec, "priorityClassName")));
    js.created = created_of(pg);
    js.inqueue = phase && strcmp(phase, "Pending") != 0;
    /* volcano.sh/preemptable "false" (annotation, else label) keeps the
     * gang from being a victim of preempt and reclaim. */
    {
        const json_t *m = json_object_get(pg, "metadata");
        const char *pre = json_string_value(
            json_object_get(json_object_get(m, "annotations"), "volcano.sh/preemptable"));
        if (!pre)
            pre = json_string_value(
                json_object_get(json_object_get(m, "labels"), "volcano.sh/preemptable"));
        js.preemptable = !pre || strcasecmp(pre, "false") != 0;
    }
    /* Completed is the scheduler's own word: a job that restarts its pods
     * is scheduled again, so it is not taken from the object. */
    j = sc_job_upsert(sc->cluster, &js);
    (void)j;
}

/* A ResourceQuota into the enqueue gate: the hard names a gang's
 * minResources carry (requests and pod counts), the smaller where two
 * spellings name one slot (requests.cpu and cpu), with status.used. A
 * scoped quota is left to admission: which of a gang's pods its scopes
 * take is not known before they exist. */
static void apply_quota(ty_sched *sc, const json_t *q, bool deleted)
{
    const char *name = str_at(q, "metadata", "name"), *ns = str_at(q, "metadata", "namespace");
    const json_t *spec = json_object_get(q, "spec");
    const json_t *used = json_object_get(json_object_get(q, "status"), "used");
    sc_quota_spec qs = {.ns = ns, .name = name};
    const char *k;
    json_t *v;

    if (!name || !ns)
        return;
    if (deleted || json_array_size(json_object_get(spec, "scopes")) ||
        json_object_get(spec, "scopeSelector")) {
        sc_quota_remove(sc->cluster, ns, name);
        return;
    }
    json_object_foreach(json_object_get(spec, "hard"), k, v) {
        const char *rn = quota_key_request(k);
        int slot = rn ? sc_res_slot(sc->cluster, rn) : -1;
        int64_t h, u = 0;
        if (slot < 0 || quota_parse(v, &h, NULL) < 0)
            continue;
        if (json_object_get(used, k))
            quota_parse(json_object_get(used, k), &u, NULL);
        if (!(qs.hard_mask & (1u << slot)) || h < qs.hard.v[slot]) {
            qs.hard.v[slot] = h;
            qs.names[slot] = k;
        }
        if (u > qs.used.v[slot])
            qs.used.v[slot] = u;
        qs.hard_mask |= 1u << slot;
    }
    if (!qs.hard_mask)
        sc_quota_remove(sc->cluster, ns, name);
    else
        sc_quota_upsert(sc->cluster, &qs);
}

int sched_names_set(ty_sched *sc, const char *const *names, ty_error *err)
{
    static const char *const dflt[] = SCHED_NAMES_EMBEDDED;
    size_t n = 0;

    if (!names || !names[0])
        names = dflt;
    for (; names[n]; n++) {
        if (n == SCHED_MAX_NAMES) {
            sched_names_free(sc);
            return ty_seterr(err, TY_EINVALID, "at most %d scheduler names", SCHED_MAX_NAMES);
        }
        if (!*names[n]) {
            sched_names_free(sc);
            return ty_seterr(err, TY_EINVALID, "a scheduler name must not be empty");
        }
        if (!(sc->names[n] = strdup(names[n]))) {
            sched_names_free(sc);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
    }
    sc->names[n] = NULL;
    return 0;
}

void sched_names_free(ty_sched *sc)
{
    for (size_t i = 0; i < SCHED_MAX_NAMES && sc->names[i]; i++) {
        free(sc->names[i]);
        sc->names[i] = NULL;
    }
}

/* Whether the pod names one of the schedulers this one is: only those are
 * bound, admitted and told why they wait. An unset name is the API's
 * default, default-scheduler. */
static bool ours(const ty_sched *sc, const json_t *pod)
{
    const char *sn = str_at(pod, "spec", "schedulerName");

    if (!sn || !*sn)
        sn = "default-scheduler";
    for (size_t i = 0; sc->names[i]; i++)
        if (strcmp(sc->names[i], sn) == 0)
            return true;
    return false;
}

/* The pod's tolerations into tols (at most MAX_KV; strings borrowed). */
static size_t pod_tolerations(const json_t *spec, sc_toleration *tols)
{
    size_t i, n = 0;
    json_t *t;

    json_array_foreach(json_object_get(spec, "tolerations"), i, t) {
        const char *op = json_string_value(json_object_get(t, "operator"));
        const char *eff = json_string_value(json_object_get(t, "effect"));
        if (n == MAX_KV)
            break;
        tols[n++] = (sc_toleration){.key = json_string_value(json_object_get(t, "key")),
                                    .value = json_string_value(json_object_get(t, "value")),
                                    .exists = op && strcmp(op, "Exists") == 0,
                                    .any_effect = !eff || !*eff,
                                    .effect = effect_of(eff)};
    }
    return n;
}

static sc_op match_op(const char *op)
{
    return strcmp(op, "NotIn") == 0          ? SC_OP_NOT_IN
           : strcmp(op, "Exists") == 0       ? SC_OP_EXISTS
           : strcmp(op, "DoesNotExist") == 0 ? SC_OP_NOT_EXISTS
           : strcmp(op, "Gt") == 0           ? SC_OP_GT
           : strcmp(op, "Lt") == 0           ? SC_OP_LT
                                             : SC_OP_IN;
}

/* Where the pod's required node affinity terms go (strings borrowed). */
typedef struct affinity_buf {
    sc_affinity_term terms[16];
    sc_match_expr exprs[MAX_KV];
    const char *vals[MAX_KV * 4];
} affinity_buf;

/* The pod's requiredDuringSchedulingIgnoredDuringExecution terms into b;
 * how many. */
static size_t pod_affinity(const json_t *spec, affinity_buf *b)
{
    const json_t *nst = json_object_get(
        json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
                        "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms");
    size_t i, n = 0, ne = 0, nv = 0;
    json_t *t;

    json_array_foreach(nst, i, t) {
        size_t k, first = ne;
        json_t *e;
        if (n == 16)
            break;
        json_array_foreach(json_object_get(t, "matchExpressions"), k, e) {
            size_t x, fv = nv;
            json_t *val;
            if (ne == MAX_KV)
                break;
            json_array_foreach(json_object_get(e, "values"), x, val)
                if (nv < MAX_KV * 4 && json_is_string(val))
                    b->vals[nv++] = json_string_value(val);
            b->exprs[ne++] = (sc_match_expr){
                .key = json_string_value(json_object_get(e, "key")) ?: "",
                .op = match_op(json_string_value(json_object_get(e, "operator")) ?: ""),
                .values = &b->vals[fv],
                .nvalues = nv - fv};
        }
        b->terms[n++] = (sc_affinity_term){&b->exprs[first], ne - first};
    }
    return n;
}

/* The task state a pod's phase, node and deletion mark say. */
static sc_task_status pod_status(const json_t *meta, const char *phase, const char *node)
{
    if (json_object_get(meta, "deletionTimestamp"))
        return SC_TASK_RELEASING;
    if (strcmp(phase, "Succeeded") == 0)
        return SC_TASK_SUCCEEDED;
    if (strcmp(phase, "Failed") == 0)
        return SC_TASK_FAILED;
    if (node)
        return strcmp(phase, "Running") == 0 ? SC_TASK_RUNNING : SC_TASK_BOUND;
    return SC_TASK_PENDING;
}

/* What a pod event does to the model when that needs nothing of the pod but
 * its metadata, its status and its spec's scalars (ty_obj_json_light):
 * true when done; false when the pod's requests and placement rules must be
 * read (apply_pod). */
static bool apply_pod_short(ty_sched *sc, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *node = str_at(pod, "spec", "nodeName");
    char key[512];
    sc_task_spec ts = {0};

    if (!name)
        return true;
    group_key(pod, name, key, sizeof(key));
    if (node && !*node)
        node = NULL;
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    sc_task *known = sc_task_find(sc->cluster, key);
    if (!deleted && !sc_task_is_pod(known, uid))
        free(strmap_del(&sc->told, key)); /* a new pod: nothing told it yet */
    if (deleted || (!node && (json_object_get(meta, "deletionTimestamp") || !ours(sc, pod)))) {
        /* (the end of an older pod of that name says nothing of the one
         * the model has now) */
        if (!sc_task_is_pod(known, uid))
            return true;
        free(strmap_del(&sc->told, key));
        sc_task_remove(sc->cluster, key);
        return true;
    }
    /* A pod the model has on the node it names (bound, running, ending):
     * what its spec says of requests, priority and placement cannot change
     * any more (the API refuses such updates), only its status can. Most
     * pod events are these, and reading the spec again was most of them. */
    if (node && known && sc_task_is_pod(known, uid) && sc_task_node(known) &&
        strcmp(sc_node_name(sc_task_node(known)), node) == 0) {
        ts.key = key;
        ts.uid = uid;
        ts.node = node;
        ts.status = pod_status(meta, str_at(pod, "status", "phase") ?: "Pending", node);
        ts.status_only = true;
        sc_task_upsert(sc->cluster, &ts);
        return true;
    }
    return false;
}

static void apply_pod(ty_sched *sc, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const json_t *ann = json_object_get(meta, "annotations");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = str_at(pod, "status", "phase") ?: "Pending";
    const char *group = json_string_value(json_object_get(ann, GROUP_ANN));
    char key[512], gkey[512];
    sc_task_spec ts = {0};
    sc_kv sel[MAX_KV];
    sc_toleration tols[MAX_KV];
    affinity_buf aff;

    if (apply_pod_short(sc, pod, deleted))
        return;
    group_key(pod, name, key, sizeof(key));
    if (node && !*node)
        node = NULL;
    ts.key = key;
    ts.uid = json_string_value(json_object_get(meta, "uid"));
    if (group) {
        group_key(pod, group, gkey, sizeof(gkey));
        ts.job = gkey;
    }
    ts.task_name = json_string_value(json_object_get(ann, "volcano.sh/task-spec"));
    if (!ts.task_name)
        ts.task_name = json_string_value(json_object_get(json_object_get(meta, "labels"),
                                                         "training.kubeflow.org/replica-type"));
    pod_requests(sc->cluster, pod, &ts.request);
    if (json_is_integer(json_object_get(spec, "priority")))
        ts.priority = (int32_t)json_integer_value(json_object_get(spec, "priority"));
    else
        ts.priority = class_value(sc, json_string_value(json_object_get(spec, "priorityClassName")));
    ts.node = node;
    ts.status = pod_status(meta, phase, node);
    ts.node_selector = sel;
    ts.nnode_selector = map_kv(json_object_get(spec, "nodeSelector"), sel, MAX_KV);
    ts.tolerations = tols;
    ts.ntolerations = pod_tolerations(spec, tols);
    ts.affinity = aff.terms;
    ts.naffinity = pod_affinity(spec, &aff);
    sc_task_upsert(sc->cluster, &ts);
}

void sched_apply_obj(ty_sched *sc, const char *resource, const ty_obj *o, bool deleted)
{
    const json_t *pod;
    bool light = false;

    if (strcmp(resource, "pods") != 0) {
        sched_apply(sc, resource, ty_obj_json(o), deleted);
        return;
    }
    /* An ended pod's version is often light (the simulated nodes' ends):
     * read whole only when the model must learn its spec. */
    pod = ty_obj_json_light(o, &light);
    if (!light)
        apply_pod(sc, pod, deleted);
    else if (!apply_pod_short(sc, pod, deleted))
        apply_pod(sc, ty_obj_json(o), deleted);
}

void sched_apply(ty_sched *sc, const char *resource, const json_t *obj, bool deleted)
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
    else if (strcmp(resource, sc->k_quotas) == 0)
        apply_quota(sc, obj, deleted);
}

/* (sc->watched names the same to the store's watch) */
bool sched_interesting(const ty_sched *sc, const char *resource)
{
    return strcmp(resource, "pods") == 0 || strcmp(resource, "nodes") == 0 ||
           strcmp(resource, sc->k_podgroups) == 0 || strcmp(resource, sc->k_queues) == 0 ||
           strcmp(resource, sc->k_pcs) == 0 || strcmp(resource, sc->k_quotas) == 0;
}
