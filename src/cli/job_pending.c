/* job_pending.c - why a training job waits (see job_pending.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/timeutil.h"
#include "cli/job_pending.h"
#include "cli/jobs.h"
#include "model/podres.h"
#include "model/quota.h"

/* ---- resource vectors: name -> milli-units ---- */

#define RV_MAX 24
typedef struct rvec {
    size_t n;
    struct {
        char name[128];
        int64_t milli;
    } r[RV_MAX];
} rvec;

static int64_t rv_get(const rvec *v, const char *name)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->r[i].name, name) == 0)
            return v->r[i].milli;
    return 0;
}

static void rv_add(rvec *v, const char *name, int64_t milli)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->r[i].name, name) == 0) {
            v->r[i].milli += milli;
            return;
        }
    if (v->n < RV_MAX) {
        snprintf(v->r[v->n].name, sizeof(v->r[v->n].name), "%s", name);
        v->r[v->n++].milli = milli;
    }
}

/* A map of quantities (allocatable, capability, hard, minResources). */
static void rv_from_map(rvec *v, const json_t *map)
{
    const char *k;
    json_t *q;

    memset(v, 0, sizeof(*v));
    json_object_foreach((json_t *)map, k, q) {
        int64_t m;
        ty_error err;
        ty_error_init(&err);
        if (quota_parse(q, &m, &err) == 0)
            rv_add(v, k, m);
        ty_error_clear(&err);
    }
}

static void rv_from_spec(rvec *v, const json_t *pod_spec)
{
    podres r;

    memset(v, 0, sizeof(*v));
    if (!json_is_object(pod_spec))
        return;
    podres_of_spec(pod_spec, &r);
    for (size_t i = 0; i < r.n; i++)
        rv_add(v, r.r[i].name, r.r[i].milli);
}

/* "2", "500m", "64Gi": milli-units of name as a user reads them. */
static void qty(const char *name, int64_t milli, char *buf, size_t len)
{
    quota_format(name, milli, buf, len);
}

/* ---- small readers ---- */

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

static const char *str_or(const json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

static void say(jp_result *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(jp_result *out, const char *fmt, ...)
{
    size_t used = strlen(out->text);
    va_list ap;

    if (used + 2 >= sizeof(out->text))
        return;
    va_start(ap, fmt);
    vsnprintf(out->text + used, sizeof(out->text) - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(out->text);
    out->text[used] = '\n';
    out->text[used + 1] = '\0';
}

/* ---- nodes ---- */

typedef struct jp_node {
    const char *name;
    rvec alloc, used;
} jp_node;

static bool node_schedulable(const json_t *node)
{
    const json_t *c;
    size_t i;

    if (json_is_true(at(node, "spec", "unschedulable")))
        return false;
    json_array_foreach(at(node, "status", "conditions"), i, c)
        if (strcmp(str_or(json_object_get(c, "type"), ""), "Ready") == 0)
            return strcmp(str_or(json_object_get(c, "status"), ""), "True") == 0;
    return true; /* a node that reports no Ready condition is taken as ready */
}

/* The schedulable nodes, with what their active pods use. Caller frees. */
static jp_node *load_nodes(const jp_input *in, size_t *n)
{
    size_t cap = json_array_size(in->nodes), i, k;
    jp_node *nodes = calloc(cap ? cap : 1, sizeof(*nodes));
    const json_t *node, *pod;

    *n = 0;
    if (!nodes)
        return NULL;
    json_array_foreach(in->nodes, i, node) {
        if (!node_schedulable(node))
            continue;
        nodes[*n].name = cli_obj_name(node);
        rv_from_map(&nodes[*n].alloc, at(node, "status", "allocatable"));
        (*n)++;
    }
    json_array_foreach(in->all_pods, i, pod) {
        const char *nn = json_string_value(at(pod, "spec", "nodeName"));
        if (!cli_pod_active(pod))
            continue;
        for (k = 0; k < *n; k++) {
            if (strcmp(nodes[k].name, nn) != 0)
                continue;
            rvec r;
            rv_from_spec(&r, json_object_get(pod, "spec"));
            for (size_t j = 0; j < r.n; j++)
                rv_add(&nodes[k].used, r.r[j].name, r.r[j].milli);
            break;
        }
    }
    return nodes;
}

static bool fits(const rvec *req, const jp_node *node, bool now)
{
    for (size_t i = 0; i < req->n; i++) {
        if (strcmp(req->r[i].name, "pods") == 0)
            continue;
        int64_t room = rv_get(&node->alloc, req->r[i].name) -
                       (now ? rv_get(&node->used, req->r[i].name) : 0);
        if (req->r[i].milli > room)
            return false;
    }
    return true;
}

/* ---- the reasons ---- */

/* JP_NEVER_FITS: a replica whose pod no node could ever hold. */
static void never_fits(const cli_job_replica *reps, size_t nrep, const jp_node *nodes,
                       size_t nnodes, jp_result *out)
{
    for (size_t i = 0; i < nrep; i++) {
        rvec req;
        size_t k;

        if (reps[i].replicas <= 0)
            continue;
        rv_from_spec(&req, reps[i].pod_spec);
        for (k = 0; k < nnodes; k++)
            if (fits(&req, &nodes[k], false))
                break;
        if (k < nnodes)
            continue;
        out->reasons |= JP_NEVER_FITS;
        if (nnodes == 0) {
            say(out, "Never fits: there is no schedulable node");
            return;
        }
        /* the resource no node has enough of, with the largest node's */
        for (size_t r = 0; r < req.n; r++) {
            const char *name = req.r[r].name, *best = NULL;
            int64_t most = -1;
            char a[32], b[32];
            if (strcmp(name, "pods") == 0)
                continue;
            for (k = 0; k < nnodes; k++)
                if (rv_get(&nodes[k].alloc, name) > most) {
                    most = rv_get(&nodes[k].alloc, name);
                    best = nodes[k].name;
                }
            if (req.r[r].milli <= most)
                continue;
            qty(name, req.r[r].milli, a, sizeof(a));
            qty(name, most, b, sizeof(b));
            say(out,
                "Never fits: replica %s asks for %s %s per pod, and the largest node has %s "
                "(%s) in allocatable; ask for less per pod, or add a bigger node",
                reps[i].role, a, name, b, best);
            return;
        }
        say(out, "Never fits: replica %s's pod asks for more than any one node has of "
                 "all its resources together",
            reps[i].role);
        return;
    }
}

/* Subtracts req from room when room holds it (pods not counted). */
static bool take(rvec *room, const rvec *req)
{
    for (size_t i = 0; i < req->n; i++)
        if (strcmp(req->r[i].name, "pods") != 0 && req->r[i].milli > rv_get(room, req->r[i].name))
            return false;
    for (size_t i = 0; i < req->n; i++)
        if (strcmp(req->r[i].name, "pods") != 0)
            rv_add(room, req->r[i].name, -req->r[i].milli);
    return true;
}

typedef struct rep_req {
    rvec req;
    long long count;
    const char *role;
} rep_req;

static int rep_gpus_desc(const void *a, const void *b)
{
    int64_t x = rv_get(&((const rep_req *)a)->req, "nvidia.com/gpu");
    int64_t y = rv_get(&((const rep_req *)b)->req, "nvidia.com/gpu");
    if (x != y)
        return x > y ? -1 : 1;
    x = rv_get(&((const rep_req *)a)->req, "cpu");
    y = rv_get(&((const rep_req *)b)->req, "cpu");
    return x > y ? -1 : x < y;
}

/* JP_NEVER_FITS for the gang as a whole, each replica fitting some node:
 * its pods, the largest first, packed first-fit onto every node as if they
 * were empty (a cordoned or not-ready node may come back: only what the
 * whole cluster cannot hold is never). The gang must have minMember of them placed
 * together (every pod unless its PodGroup says fewer); when even the empty
 * cluster cannot hold that many, it never starts. */
static void gang_never_fits(const jp_input *in, const cli_job_replica *reps, size_t nrep,
                            jp_result *out)
{
    rep_req rr[CLI_JOB_MAX_REPLICAS];
    size_t nnodes = json_array_size(in->nodes);
    rvec *room = nnodes ? malloc(nnodes * sizeof(*room)) : NULL;
    rvec total = {0}, need = {0};
    long long pods = 0, placed = 0, min;
    size_t n = 0;

    if (!room)
        return;
    for (size_t i = 0; i < nrep && n < CLI_JOB_MAX_REPLICAS; i++) {
        if (reps[i].replicas <= 0)
            continue;
        rv_from_spec(&rr[n].req, reps[i].pod_spec);
        rr[n].count = reps[i].replicas;
        rr[n].role = reps[i].role;
        pods += rr[n].count;
        for (size_t r = 0; r < rr[n].req.n; r++)
            rv_add(&need, rr[n].req.r[r].name, rr[n].req.r[r].milli * rr[n].count);
        n++;
    }
    min = json_integer_value(at(in->pg, "spec", "minMember"));
    if (min <= 0 || min > pods)
        min = pods;
    for (size_t k = 0; k < nnodes; k++) {
        rv_from_map(&room[k], at(json_array_get(in->nodes, k), "status", "allocatable"));
        for (size_t r = 0; r < room[k].n; r++)
            rv_add(&total, room[k].r[r].name, room[k].r[r].milli);
    }
    /* the whole gang: the biggest pods first; fewer (elastic): the smallest
     * first, as many as will go */
    qsort(rr, n, sizeof(*rr), rep_gpus_desc);
    for (size_t t = 0; t < n; t++) {
        const rep_req *x = &rr[min == pods ? t : n - 1 - t];
        size_t k = 0;
        for (long long c = 0; c < x->count && k < nnodes; c++) {
            while (k < nnodes && !take(&room[k], &x->req))
                k++; /* the pods of a replica are alike: a node full for one is for all */
            if (k < nnodes)
                placed++;
        }
    }
    free(room);
    if (placed >= min)
        return;
    out->reasons |= JP_NEVER_FITS;
    /* the resource the gang asks more of than the cluster has, if one does */
    for (size_t r = 0; r < need.n; r++) {
        char a[32], b[32];
        if (strcmp(need.r[r].name, "pods") == 0 || need.r[r].milli <= rv_get(&total, need.r[r].name))
            continue;
        qty(need.r[r].name, need.r[r].milli, a, sizeof(a));
        qty(need.r[r].name, rv_get(&total, need.r[r].name), b, sizeof(b));
        say(out,
            "Never fits: the gang's %lld pods ask for %s %s together, and the %zu "
            "%s %s in all; ask for fewer replicas or less per pod, or add nodes",
            pods, a, need.r[r].name, nnodes, nnodes == 1 ? "node has" : "nodes have", b);
        return;
    }
    say(out,
        "Never fits: the gang needs %lld of its %lld pods placed together, and the %zu "
        "%s, even empty, only %lld of them; ask for less per pod, or add nodes",
        min, pods, nnodes, nnodes == 1 ? "node holds" : "nodes hold", placed);
}

/* What the gang asks for in all: the PodGroup's minResources when it has
 * them (what the scheduler and the quota gate compare), else every
 * replica's requests. */
static void gang_need(const jp_input *in, const cli_job_replica *reps, size_t nrep, rvec *need)
{
    const json_t *mr = at(in->pg, "spec", "minResources");

    if (json_object_size(mr)) {
        rv_from_map(need, mr);
        return;
    }
    memset(need, 0, sizeof(*need));
    for (size_t i = 0; i < nrep; i++) {
        rvec r;
        rv_from_spec(&r, reps[i].pod_spec);
        for (size_t j = 0; j < r.n; j++)
            rv_add(need, r.r[j].name, r.r[j].milli * reps[i].replicas);
    }
}

/* What the job's own live pods use (its share of a quota's status.used or a
 * queue's allocation). bound_only: only those on a node. */
static void own_use(const jp_input *in, bool bound_only, rvec *own)
{
    const json_t *pod;
    size_t i;

    memset(own, 0, sizeof(*own));
    json_array_foreach(in->pods, i, pod) {
        const char *phase = str_or(at(pod, "status", "phase"), "Pending");
        if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
            continue;
        if (bound_only && !cli_pod_active(pod))
            continue;
        rvec r;
        rv_from_spec(&r, json_object_get(pod, "spec"));
        for (size_t j = 0; j < r.n; j++)
            rv_add(own, r.r[j].name, r.r[j].milli);
        rv_add(own, "pods", 1000);
    }
}

static void quota_check(const jp_input *in, const rvec *need, size_t npods, jp_result *out)
{
    const json_t *q;
    size_t i;
    rvec own;

    own_use(in, false, &own);
    json_array_foreach(in->quotas, i, q) {
        const json_t *spec = json_object_get(q, "spec");
        const char *key;
        json_t *hv;

        /* a scoped quota takes only some pods: not judged here */
        if (json_array_size(json_object_get(spec, "scopes")) ||
            json_object_get(spec, "scopeSelector"))
            continue;
        json_object_foreach(json_object_get(spec, "hard"), key, hv) {
            const char *req = quota_key_request(key);
            int64_t hard, used = 0, want;
            ty_error err;
            char a[32], b[32], c[32];

            if (!req)
                continue;
            want = strcmp(req, "pods") == 0 ? (int64_t)npods * 1000 : rv_get(need, req);
            if (want <= 0)
                continue;
            ty_error_init(&err);
            if (quota_parse(hv, &hard, &err) < 0) {
                ty_error_clear(&err);
                continue;
            }
            quota_parse(json_object_get(at(q, "status", "used"), key), &used, &err);
            ty_error_clear(&err);
            used -= rv_get(&own, req);
            if (used < 0)
                used = 0;
            if (used + want <= hard)
                continue;
            out->reasons |= JP_QUOTA;
            qty(key, hard, a, sizeof(a));
            qty(key, used, b, sizeof(b));
            qty(key, want, c, sizeof(c));
            say(out,
                "Over quota: ResourceQuota %s of namespace %s allows %s %s, %s used by others, "
                "this job needs %s; wait for them to finish, or ask for a bigger quota",
                cli_obj_name(q), cli_obj_ns(in->job), a, key, b, c);
        }
    }
}

static void queue_check(const jp_input *in, const rvec *need, jp_result *out)
{
    const json_t *cap = at(in->queue, "spec", "capability");
    const char *key;
    json_t *cv;
    rvec own, alloc;

    if (!in->queue)
        return;
    if (strcmp(str_or(at(in->queue, "status", "state"), "Open"), "Closed") == 0) {
        out->reasons |= JP_QUEUE;
        say(out, "Queue closed: queue %s is Closed; it takes no new jobs until it is opened",
            out->queue);
    }
    own_use(in, true, &own);
    rv_from_map(&alloc, at(in->queue, "status", "allocated"));
    json_object_foreach((json_t *)cap, key, cv) {
        int64_t c, used = rv_get(&alloc, key) - rv_get(&own, key), want = rv_get(need, key);
        ty_error err;
        char a[32], b[32], d[32];

        ty_error_init(&err);
        if (want <= 0 || quota_parse(cv, &c, &err) < 0) {
            ty_error_clear(&err);
            continue;
        }
        if (used < 0)
            used = 0;
        if (used + want <= c)
            continue;
        out->reasons |= JP_QUEUE;
        qty(key, c, a, sizeof(a));
        qty(key, used, b, sizeof(b));
        qty(key, want, d, sizeof(d));
        say(out,
            "Over queue capability: queue %s may hold %s %s, %s allocated to its other jobs, "
            "this job needs %s%s",
            out->queue, a, key, b, d,
            want > c ? " (more than the queue may ever hold)" : "; it waits for them to finish");
    }
}

int32_t jp_priority_value(const json_t *pcs, const char *name)
{
    const json_t *pc;
    size_t i;

    json_array_foreach(pcs, i, pc) {
        bool match = name && *name ? strcmp(cli_obj_name(pc), name) == 0
                                   : json_is_true(json_object_get(pc, "globalDefault"));
        if (match)
            return (int32_t)json_integer_value(json_object_get(pc, "value"));
    }
    return 0;
}

typedef struct waiting {
    const json_t *pg;
    int32_t prio;
    time_t created;
    char key[512];
} waiting;

/* The scheduler's order (priority plugin, then sc_job_cmp's creation time
 * and key). */
static int waiting_cmp(const void *a, const void *b)
{
    const waiting *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return strcmp(x->key, y->key);
}

static bool pg_waits(const json_t *pg)
{
    const char *phase = str_or(at(pg, "status", "phase"), "Pending");
    return strcmp(phase, "Pending") == 0 || strcmp(phase, "Inqueue") == 0;
}

/* "ns/name" of the job that owns pg (its PodGroup's own name without one). */
static void owner_key(const json_t *pg, char *buf, size_t len)
{
    const json_t *ref = json_array_get(at(pg, "metadata", "ownerReferences"), 0);
    snprintf(buf, len, "%s/%s", cli_obj_ns(pg),
             str_or(json_object_get(ref, "name"), cli_obj_name(pg)));
}

static void behind_check(const jp_input *in, jp_result *out)
{
    size_t cap = json_array_size(in->podgroups), n = 0, i;
    waiting *w;
    const json_t *pg;

    out->priority = jp_priority_value(in->priority_classes,
                                      str_or(at(in->pg, "spec", "priorityClassName"), ""));
    if (!in->pg || !pg_waits(in->pg) || !cap || !(w = calloc(cap, sizeof(*w))))
        return;
    json_array_foreach(in->podgroups, i, pg) {
        time_t t = 0;
        const char *q = str_or(at(pg, "spec", "queue"), "");
        if (strcmp(*q ? q : "default", out->queue) != 0 || !pg_waits(pg))
            continue;
        w[n].pg = pg;
        w[n].prio = jp_priority_value(in->priority_classes,
                                      str_or(at(pg, "spec", "priorityClassName"), ""));
        ty_time_parse(str_or(at(pg, "metadata", "creationTimestamp"), ""), &t);
        w[n].created = t;
        snprintf(w[n].key, sizeof(w[n].key), "%s/%s", cli_obj_ns(pg), cli_obj_name(pg));
        n++;
    }
    qsort(w, n, sizeof(*w), waiting_cmp);
    for (i = 0; i < n; i++) {
        if (strcmp(cli_obj_ns(w[i].pg), cli_obj_ns(in->pg)) == 0 &&
            strcmp(cli_obj_name(w[i].pg), cli_obj_name(in->pg)) == 0)
            break;
        if (out->nahead < JP_MAX_AHEAD) {
            char key[400];
            owner_key(w[i].pg, key, sizeof(key));
            snprintf(out->ahead[out->nahead++], sizeof(out->ahead[0]), "%.200s (priority %d)",
                     key, (int)w[i].prio);
        }
    }
    if (i < n) {
        out->position = i + 1;
        out->waiting = n;
    }
    free(w);
    if (out->position > 1) {
        char list[1024] = "";
        size_t used = 0;
        out->reasons |= JP_BEHIND;
        for (size_t k = 0; k < out->nahead && used < sizeof(list); k++)
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", k ? ", " : "",
                                     out->ahead[k]);
        say(out,
            "Behind other jobs: position %zu of %zu waiting in queue %s (this job's priority "
            "%d), after %s%s",
            out->position, out->waiting, out->queue, (int)out->priority, list,
            out->position - 1 > out->nahead ? ", ..." : "");
    }
}

/* The job's pods not yet bound, replica by replica: per pod requests. */
typedef struct want_pod {
    rvec req;
    int64_t gpus;
} want_pod;

static int want_cmp(const void *a, const void *b)
{
    const want_pod *x = a, *y = b;
    return x->gpus > y->gpus ? -1 : x->gpus < y->gpus ? 1 : 0;
}

/* The role a pod plays: its replica-type label (Kubeflow) or task-spec
 * (Volcano). */
static const char *pod_role(const json_t *pod)
{
    const json_t *l = at(pod, "metadata", "labels");
    const char *r = json_string_value(json_object_get(l, "training.kubeflow.org/replica-type"));
    return r ? r : str_or(json_object_get(l, "volcano.sh/task-spec"), "");
}

static void gpus_check(const jp_input *in, const cli_job_replica *reps, size_t nrep,
                       jp_node *nodes, size_t nnodes, jp_result *out)
{
    size_t nwant = 0, cap = 0, i, k;
    want_pod *want;

    for (i = 0; i < nrep; i++)
        cap += reps[i].replicas > 0 ? (size_t)reps[i].replicas : 0;
    if (cap > 10000)
        cap = 10000;
    for (k = 0; k < nnodes; k++) {
        int64_t a = 0, u = 0;
        for (size_t r = 0; r < nodes[k].alloc.n; r++)
            if (cli_resource_is_gpu(nodes[k].alloc.r[r].name))
                a += nodes[k].alloc.r[r].milli;
        for (size_t r = 0; r < nodes[k].used.n; r++)
            if (cli_resource_is_gpu(nodes[k].used.r[r].name))
                u += nodes[k].used.r[r].milli;
        out->gpus_total += a / 1000;
        out->gpus_free += (a - u > 0 ? a - u : 0) / 1000;
    }
    if (!cap || !(want = calloc(cap, sizeof(*want))))
        return;
    for (i = 0; i < nrep; i++) {
        long long bound = 0;
        const json_t *pod;
        json_array_foreach(in->pods, k, pod)
            if (cli_pod_active(pod) && strcasecmp(pod_role(pod), reps[i].role) == 0)
                bound++;
        for (long long r = bound; r < reps[i].replicas && nwant < cap; r++) {
            rv_from_spec(&want[nwant].req, reps[i].pod_spec);
            want[nwant].gpus = reps[i].gpus;
            out->gpus_needed += reps[i].gpus;
            nwant++;
        }
    }
    if (out->gpus_needed > out->gpus_free) {
        out->reasons |= JP_GPUS;
        say(out,
            "Waiting for GPUs: the gang needs %lld more, %lld free now (of %lld on %zu "
            "schedulable node%s); it starts when enough are released",
            (long long)out->gpus_needed, (long long)out->gpus_free, (long long)out->gpus_total,
            nnodes, nnodes == 1 ? "" : "s");
    } else if (out->gpus_needed > 0) {
        /* enough in all: do they come in pieces a pod can use? (first fit,
         * biggest pods first, over what is free now) */
        qsort(want, nwant, sizeof(*want), want_cmp);
        for (i = 0; i < nwant; i++) {
            for (k = 0; k < nnodes; k++)
                if (fits(&want[i].req, &nodes[k], true))
                    break;
            if (k == nnodes)
                break;
            for (size_t r = 0; r < want[i].req.n; r++)
                rv_add(&nodes[k].used, want[i].req.r[r].name, want[i].req.r[r].milli);
        }
        if (i < nwant) {
            out->reasons |= JP_GPUS;
            say(out,
                "Waiting for room: %lld GPUs are free in all, but not together on the nodes "
                "its pods need (%lld GPUs per pod); it starts when a node frees up",
                (long long)out->gpus_free, (long long)want[i].gpus);
        }
    }
    free(want);
}

/* ---- pods refused at creation ---- */

/* Whether event e is the job's (by uid, else by kind and name). */
static bool job_event(const json_t *job, const json_t *e)
{
    const json_t *io = json_object_get(e, "involvedObject");
    const char *uid = str_or(json_object_get(io, "uid"), "");

    if (*uid)
        return strcmp(uid, str_or(at(job, "metadata", "uid"), "")) == 0;
    return strcmp(str_or(json_object_get(io, "kind"), ""),
                  str_or(json_object_get(job, "kind"), "")) == 0 &&
           strcmp(str_or(json_object_get(io, "name"), ""),
                  str_or(at(job, "metadata", "name"), "")) == 0;
}

/* 1 for a pod the job's controller failed to make, 0 for one it made, -1
 * for another event (the controller kit's FailedCreate "Error creating Pod
 * ...", FailedCreatePod; SuccessfulCreate, SuccessfulCreatePod). */
static int pod_create_event(const json_t *e)
{
    const char *reason = str_or(json_object_get(e, "reason"), "");
    const char *msg = str_or(json_object_get(e, "message"), "");

    if (!strcmp(reason, "FailedCreatePod") ||
        (!strcmp(reason, "FailedCreate") && !strncmp(msg, "Error creating Pod ", 19)))
        return 1;
    if (!strcmp(reason, "SuccessfulCreatePod") ||
        (!strcmp(reason, "SuccessfulCreate") && strstr(msg, "pod")))
        return 0;
    return -1;
}

const char *jp_event_time(const json_t *e)
{
    static const char *const keys[] = {"lastTimestamp", "eventTime", "firstTimestamp"};
    const char *ts;

    for (size_t i = 0; i < 3; i++)
        if ((ts = json_string_value(json_object_get(e, keys[i]))))
            return ts;
    ts = json_string_value(at(e, "metadata", "creationTimestamp"));
    return ts ? ts : "";
}

static void refused_check(const jp_input *in, size_t npods, jp_result *out)
{
    const json_t *e, *last = NULL;
    struct timespec lt = {0};
    size_t i;

    if (!in->events || json_array_size(in->pods) >= npods)
        return;
    json_array_foreach(in->events, i, e) {
        struct timespec t;
        if (!job_event(in->job, e) || pod_create_event(e) < 0)
            continue;
        t = (struct timespec){0};
        ty_time_parse_ts(jp_event_time(e), &t);
        /* the later one; a failure over a success of the same instant */
        if (!last || t.tv_sec > lt.tv_sec || (t.tv_sec == lt.tv_sec && t.tv_nsec > lt.tv_nsec) ||
            (t.tv_sec == lt.tv_sec && t.tv_nsec == lt.tv_nsec && pod_create_event(e) == 1)) {
            last = e;
            lt = t;
        }
    }
    if (!last || pod_create_event(last) != 1)
        return;
    out->reasons |= JP_REFUSED;
    say(out, "Refused: %zu of its %zu pods exist; the last one tried was refused: %.1200s",
        json_array_size(in->pods), npods, str_or(json_object_get(last, "message"), ""));
}

void jp_explain(const jp_input *in, jp_result *out)
{
    cli_job_replica reps[CLI_JOB_MAX_REPLICAS];
    size_t nrep, nnodes = 0, npods = 0;
    jp_node *nodes;
    rvec need;
    const json_t *c;
    size_t i;

    memset(out, 0, sizeof(*out));
    snprintf(out->queue, sizeof(out->queue), "%s",
             in->pg ? str_or(at(in->pg, "spec", "queue"), cli_job_queue(in->job))
                    : cli_job_queue(in->job));
    if (!*out->queue)
        snprintf(out->queue, sizeof(out->queue), "default");
    json_array_foreach(at(in->pg, "status", "conditions"), i, c)
        if (strcmp(str_or(json_object_get(c, "type"), ""), "Unschedulable") == 0 &&
            strcmp(str_or(json_object_get(c, "status"), ""), "True") == 0)
            snprintf(out->scheduler, sizeof(out->scheduler), "%s",
                     str_or(json_object_get(c, "message"), ""));
    nrep = cli_job_replicas(in->job, reps, CLI_JOB_MAX_REPLICAS);
    if (nrep > CLI_JOB_MAX_REPLICAS)
        nrep = CLI_JOB_MAX_REPLICAS;
    for (i = 0; i < nrep; i++)
        npods += reps[i].replicas > 0 ? (size_t)reps[i].replicas : 0;
    /* nodes NULL: not readable (a user without the right to list them),
     * which is not the same as none */
    nodes = in->nodes ? load_nodes(in, &nnodes) : NULL;
    out->nnodes = nnodes;
    if (in->nodes)
        never_fits(reps, nrep, nodes, nnodes, out);
    if (in->nodes && !(out->reasons & JP_NEVER_FITS))
        gang_never_fits(in, reps, nrep, out);
    gang_need(in, reps, nrep, &need);
    quota_check(in, &need, npods, out);
    queue_check(in, &need, out);
    behind_check(in, out);
    if (!(out->reasons & JP_NEVER_FITS) && nodes && in->all_pods)
        gpus_check(in, reps, nrep, nodes, nnodes, out);
    refused_check(in, npods, out);
    free(nodes);
}
