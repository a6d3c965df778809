/* sched.c - the scheduler component in the server: keeps the core's cluster
 * model (core.h) current from one store watch (nodes, queues, pod groups,
 * priority classes, pods), runs a cycle when something changed, and turns
 * the core's decisions into bindings, evictions, PodGroup status, pod
 * conditions and events.
 *
 * The model is built once from lists at start and then only from events: a
 * cycle never rescans the store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/jsonown.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "base/thread.h"
#include "client/events.h"
#include "client/informer.h"
#include "model/podcond.h"
#include "model/quantity.h"
#include "scheduler/sched_int.h"

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

    ty_time_now(now, sizeof(now));
    podcond_set(podcond_status(obj), type, status, reason, msg ? msg : "", now, probe_time);
}

/* ---- decisions, written together ----
 *
 * A cycle's bindings, PodGroup statuses and pending pods' reasons are
 * gathered as it makes them and written in one kc_write_all when it ends
 * (flush_writes), then their Events in another, so that a cycle that binds
 * 500 pods waits for one group, not 500 transactions in turn. A binding that
 * fails (the pod went, or was bound meanwhile) gives the task back to the
 * model then. Evictions stay immediate: they are rare and the preemptor
 * waits for them anyway. */

typedef enum { W_BIND, W_PG, W_UNSCHED } write_kind;

typedef struct sched_write {
    write_kind kind;
    sc_task *t;   /* W_BIND: valid until the flush (tasks go only between cycles) */
    char *key;    /* the pod's or PodGroup's "ns/name" (owned) */
    char *text;   /* W_BIND: the node; W_PG, W_UNSCHED: the message (owned) */
    const char *phase; /* W_PG: a static string */
    int counts[SC_JOB_NCOUNTS]; /* W_PG: its tasks running, succeeded, failed */
} sched_write;

static sched_write *new_write(ty_sched *sc, write_kind kind, const char *key, const char *text)
{
    sched_write *w;

    if (sc->nwrites == sc->capwrites) {
        size_t cap = sc->capwrites ? sc->capwrites * 2 : 256;
        sched_write *g = realloc(sc->writes, cap * sizeof(*g));
        if (!g)
            return NULL;
        sc->writes = g;
        sc->capwrites = cap;
    }
    w = &sc->writes[sc->nwrites];
    *w = (sched_write){.kind = kind, .key = strdup(key), .text = strdup(text)};
    if (!w->key || !w->text) {
        free(w->key);
        free(w->text);
        return NULL;
    }
    sc->nwrites++;
    return w;
}

static void hook_bind(void *ctx, sc_task *t, sc_node *n)
{
    ty_sched *sc = ctx;
    sched_write *w = new_write(sc, W_BIND, sc_task_key(t), sc_node_name(n));

    if (!w) {
        ty_warn("scheduler: out of memory binding %s", sc_task_key(t));
        sc_task_unbind(sc->cluster, t);
        return;
    }
    w->t = t;
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
    kc_delete_opts opts = {0};
    bool deleted;
    ty_error err;
    ty_obj *o;

    split_key(sc_task_key(t), ns, sizeof(ns), &name);
    snprintf(msg, sizeof(msg), "%s by pod group %s", reason, by ? sc_job_key(by) : "?");
    ty_error_init(&err);
    evict_args e = {msg};
    o = kc_mutate(sc->store, "pods", ns, name, mark_evicted, &e, KC_STATUS, &err);
    if (o) {
        ty_event(sc->store, ty_obj_json(o), "Warning", reason, COMPONENT, "%s", msg);
        ty_obj_unref(o);
    }
    ty_error_clear(&err);
    o = kc_delete(sc->store, "pods", ns, name, &opts, &deleted, &err);
    ty_obj_unref(o);
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
    const int *counts; /* SC_JOB_NCOUNTS */
} pg_args;

/* status.running, succeeded and failed as Volcano writes them: counts of
 * the group's pods, left out when 0 (omitempty). */
static void set_count(json_t *st, const char *key, int n)
{
    if (n > 0)
        json_object_set_new(st, key, json_integer(n));
    else
        json_object_del(st, key);
}

static int pg_status_fn(json_t *pg, void *arg, ty_error *err)
{
    const pg_args *a = arg;
    json_t *st;
    (void)err;
    st = podcond_status(pg);
    json_object_set_new(st, "phase", json_string(a->phase));
    set_count(st, "running", a->counts[SC_JOB_COUNT_RUNNING]);
    set_count(st, "succeeded", a->counts[SC_JOB_COUNT_SUCCEEDED]);
    set_count(st, "failed", a->counts[SC_JOB_COUNT_FAILED]);
    if (*a->msg)
        set_condition(pg, "Unschedulable", "True", "NotEnoughResources", a->msg, false);
    else
        set_condition(pg, "Scheduled", "True", "tasks in gang are ready to be scheduled", "",
                      false);
    /* one of Scheduled / Unschedulable says True at a time */
    size_t i;
    json_t *c, *conds = json_object_get(st, "conditions"); /* its own: podcond_set */
    json_array_foreach(conds, i, c) {
        const char *type = json_string_value(json_object_get(c, "type")) ?: "";
        if (((strcmp(type, "Unschedulable") == 0 && !*a->msg) ||
             (strcmp(type, "Scheduled") == 0 && *a->msg)) &&
            (c = ty_json_own_at(conds, i)))
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
        const char *msg = sc_task_message(t), *told;

        if (sc_task_get_status(t) != SC_TASK_PENDING || !*msg)
            continue;
        told = strmap_get(&sc->told, sc_task_key(t));
        if (told && strcmp(told + strlen(told) + 1, msg) == 0)
            continue;
        new_write(sc, W_UNSCHED, sc_task_key(t), msg);
    }
}

/* The pod's reason was written: remember it, so that it is written once. */
static void told_pod(ty_sched *sc, const char *key, const char *msg)
{
    /* the value holds its own key: "key\0message\0" */
    size_t kl = strlen(key), ml = strlen(msg);
    char *rec = malloc(kl + ml + 2);

    free(strmap_del(&sc->told, key));
    if (!rec)
        return;
    memcpy(rec, key, kl + 1);
    memcpy(rec + kl + 1, msg, ml + 1);
    if (strmap_put(&sc->told, rec, rec) < 0)
        free(rec);
}

static void write_job(ty_sched *sc, sc_job *j)
{
    sched_write *w = new_write(sc, W_PG, sc_job_key(j), sc_job_message(j));

    if (w) {
        w->phase = phase_name(sc_job_get_phase(j));
        for (int k = 0; k < SC_JOB_NCOUNTS; k++)
            w->counts[k] = sc_job_task_count(j, k);
    }
    tell_pods(sc, j);
}

/* Events for a PodGroup that waits: on it, and on the job that owns it, so
 * that `kubectl describe` of the job says why it waits. */
static size_t pg_events(kc_op *evs, const ty_obj *o, const char *ns, const char *msg,
                        json_t **owners)
{
    const json_t *refs = json_object_get(json_object_get(ty_obj_json(o), "metadata"),
                                         "ownerReferences");
    size_t i, n = 0;
    json_t *r;

    *owners = NULL;
    n += ty_event_op(&evs[n], ty_obj_json(o), "Warning", "Unschedulable", COMPONENT, "%s", msg);
    json_array_foreach(refs, i, r) {
        if (!json_is_true(json_object_get(r, "controller")))
            continue;
        *owners = json_pack("{s:O?, s:O?, s:{s:O?, s:s, s:O?}}", "apiVersion",
                            json_object_get(r, "apiVersion"), "kind", json_object_get(r, "kind"),
                            "metadata", "name", json_object_get(r, "name"), "namespace", ns,
                            "uid", json_object_get(r, "uid"));
        if (*owners)
            n += ty_event_op(&evs[n], *owners, "Warning", "Unschedulable", COMPONENT, "%s", msg);
        break;
    }
    return n;
}

/* Writes what the cycle decided (see above), then the Events. */
static void flush_writes(ty_sched *sc)
{
    size_t n = sc->nwrites, nev = 0;
    kc_op *ops = calloc(n + 1, sizeof(*ops)), *evs = calloc(2 * n + 1, sizeof(*evs));
    pg_args *pgs = calloc(n + 1, sizeof(*pgs));
    json_t **owners = calloc(n + 1, sizeof(*owners));
    char (*nss)[256] = calloc(n + 1, sizeof(*nss));

    if (!n)
        goto out;
    if (!ops || !evs || !pgs || !owners || !nss) {
        ty_warn("scheduler: out of memory writing %zu decisions", n);
        for (size_t i = 0; i < n; i++)
            if (sc->writes[i].kind == W_BIND)
                sc_task_unbind(sc->cluster, sc->writes[i].t);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        sched_write *w = &sc->writes[i];
        const char *name;
        split_key(w->key, nss[i], sizeof(nss[i]), &name);
        switch (w->kind) {
        case W_BIND:
            /* the pod's uid: a pod evicted in this cycle may have been made
             * again under its name since, and that one is not ours to bind */
            ops[i] = kc_op_bind(nss[i], name, sc_task_uid(w->t), w->text);
            break;
        case W_PG:
            pgs[i] = (pg_args){w->phase, w->text, w->counts};
            ops[i] = kc_op_mutate(sc->k_podgroups, nss[i], name, pg_status_fn, &pgs[i], KC_STATUS);
            ops[i].flags |= KC_ARENA; /* a PodGroup's versions are as short-lived */
            break;
        case W_UNSCHED:
            ops[i] = kc_op_mutate("pods", nss[i], name, pod_unsched_fn, w->text, KC_STATUS);
            break;
        }
    }
    kc_write_all(sc->store, ops, n);
    for (size_t i = 0; i < n; i++) {
        sched_write *w = &sc->writes[i];
        ty_obj *o = ops[i].result;
        switch (w->kind) {
        case W_BIND:
            free(strmap_del(&sc->told, w->key));
            if (ops[i].err.code) {
                ty_debug("scheduler: binding %s to %s: %s", w->key, w->text, ops[i].err.text);
                sc_task_unbind(sc->cluster, w->t);
                break;
            }
            if (!o) { /* a client that gives no pod back: the Event names it */
                owners[i] = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind",
                                      "Pod", "metadata", "name", strchr(w->key, '/') + 1,
                                      "namespace", nss[i]);
                if (owners[i] && sc_task_uid(w->t)) /* as kube-scheduler's */
                    json_object_set_new(json_object_get(owners[i], "metadata"), "uid",
                                        json_string(sc_task_uid(w->t)));
            }
            nev += ty_event_op(&evs[nev], o ? ty_obj_json(o) : owners[i], "Normal", "Scheduled",
                               COMPONENT, "Successfully assigned %s to %s", w->key, w->text);
            break;
        case W_PG:
            if (o && *w->text)
                nev += pg_events(&evs[nev], o, nss[i], w->text, &owners[i]);
            break;
        case W_UNSCHED:
            if (!o)
                break;
            nev += ty_event_op(&evs[nev], ty_obj_json(o), "Warning", "FailedScheduling",
                               COMPONENT, "%s", w->text);
            told_pod(sc, w->key, w->text);
            break;
        }
    }
    kc_write_all(sc->store, evs, nev);
    for (size_t i = 0; i < n; i++) {
        kc_op_clear(&ops[i]);
        json_decref(owners[i]);
    }
out:
    for (size_t i = 0; i < n; i++) {
        free(sc->writes[i].key);
        free(sc->writes[i].text);
    }
    sc->nwrites = 0;
    free(ops);
    free(evs);
    free(pgs);
    free(owners);
    free(nss);
}

/* What was last written for a job: a phase change is written at once, a
 * new "why it waits" message at most every MSG_EVERY_MS (a waiting gang's
 * message changes with every cycle that moves the cluster, and each write
 * is the PodGroup, two events and every pending pod). */
#define MSG_EVERY_MS 2000

typedef struct told_job {
    sc_job_phase phase;
    int64_t at;
    bool due;    /* a change waits for its time */
    bool listed; /* in sc->due (once, however often it comes due) */
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
        tj->due = true;
        if (!tj->listed && sc->ndue < DUE_MAX) {
            tj->listed = true;
            sc->due[sc->ndue++] = tj;
        }
        return;
    }
    tj->phase = sc_job_get_phase(j);
    tj->at = now;
    tj->due = false;
    write_job(sc, j);
}

/* Kept per job ever written, this was the scheduler's one record that
 * outlived its PodGroup (~100 bytes a job, for ever). */
void sched_forget_job(ty_sched *sc, const char *key)
{
    told_job *tj = strmap_del(&sc->told_jobs, key);
    size_t k = 0;

    if (!tj)
        return;
    if (tj->listed) {
        for (size_t i = 0; i < sc->ndue; i++)
            if (sc->due[i] != tj)
                sc->due[k++] = sc->due[i];
        sc->ndue = k;
    }
    free(tj);
}

/* Writes the messages held back by hook_job_changed once their time came. */
static void flush_due(ty_sched *sc)
{
    int64_t now = ty_now_ms();
    size_t k = 0;

    for (size_t i = 0; i < sc->ndue; i++) {
        told_job *tj = sc->due[i];
        sc_job *j;
        if (!tj->due) { /* a change of phase wrote it meanwhile */
            tj->listed = false;
            continue;
        }
        if (now - tj->at < MSG_EVERY_MS) {
            sc->due[k++] = tj;
            continue;
        }
        tj->due = tj->listed = false;
        j = sc_job_find(sc->cluster, tj->key);
        if (!j)
            continue;
        tj->phase = sc_job_get_phase(j);
        tj->at = now;
        write_job(sc, j);
    }
    sc->ndue = k;
    flush_writes(sc);
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
        ty_obj *o;

        if (!sc_queue_defined(q))
            continue;
        for (int r = 0; r < SC_UNOFFERED; r++) {
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
        /* through the status subresource: a plain write's status is ignored */
        o = kc_mutate(sc->store, sc->k_queues, "", sc_queue_name(q), queue_status_fn, st,
                      KC_STATUS, &err);
        ty_obj_unref(o);
        ty_error_clear(&err);
        json_decref(st);
    }
    sched_metrics_queues(sc, (const int(*)[4])counts);
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
    flush_writes(sc);
    sched_metrics_cycle(sc, (double)(ty_now_ms() - t0), &st);
    if (st.bound || st.evicted || st.admitted)
        ty_debug("scheduler: cycle %lld ms: %zu admitted, %zu bound, %zu pipelined, %zu evicted, "
                 "%zu/%zu jobs unschedulable", (long long)(ty_now_ms() - t0), st.admitted,
                 st.bound, st.pipelined, st.evicted, st.jobs_unschedulable, st.jobs_considered);
}

/* The model follows one informer (client/informer.h) on what the
 * scheduler watches, without its cache: the model is the scheduler's own
 * picture. It lists priority classes and queues first (pod groups and pods
 * refer to them), then nodes, pod groups and pods; each listed object is read
 * once and its tree not kept (150,000 pods loaded at start would otherwise
 * hold 3.7 GB of trees until the sweeper came). */
static const char *const *listed_order(ty_sched *sc)
{
    sc->listed[0] = sc->k_pcs;
    sc->listed[1] = sc->k_queues;
    sc->listed[2] = "nodes";
    sc->listed[3] = sc->k_podgroups;
    sc->listed[4] = "pods";
    sc->listed[5] = sc->k_quotas;
    sc->listed[6] = NULL;
    return sc->listed;
}

static void on_events(ty_informer *inf, const kc_event *evs, size_t n, unsigned flags,
                      void *ctx)
{
    ty_sched *sc = ctx;
    bool changed = false;

    (void)inf;
    for (size_t i = 0; i < n; i++) {
        const kc_event *ev = &evs[i];
        if (!sched_interesting(sc, ev->resource))
            continue;
        if (flags & INF_LISTED) {
            json_t *obj = ty_obj_json_read(ev->obj);
            sched_apply(sc, ev->resource, obj, ev->type == KC_DELETED);
            json_decref(obj);
        } else {
            sched_apply_obj(sc, ev->resource, ev->obj, ev->type == KC_DELETED);
            changed = true;
        }
    }
    /* A cycle runs BATCH_MS after the last change that matters (events of
     * other resources do not push it back), at most MAX_BATCH_MS after the
     * first. */
    if (changed) {
        sc->last_change = ty_now_ms();
        if (!sc->dirty)
            sc->first_dirty = sc->last_change;
        sc->dirty = true;
    }
}

static void on_synced(ty_informer *inf, void *ctx)
{
    ty_sched *sc = ctx;

    (void)inf;
    if (!sc->dirty)
        sc->first_dirty = sc->last_change = ty_now_ms();
    sc->dirty = true;
}

/* Reads the pods not yet bound again (refeed_unbound): their requests of a
 * name a node has just brought now count in its slot. Rare (a new kind of
 * device on a node), so a plain list. */
static void refeed_unbound(ty_sched *sc)
{
    kc_list_opts lo = {.field_selector = "spec.nodeName="};
    kc_list l;
    ty_error err;

    sc->refeed_unbound = false;
    ty_error_init(&err);
    if (kc_list_objects(sc->store, "pods", &lo, &l, &err) < 0) {
        ty_warn("scheduler: cannot list the pods not yet bound: %s", err.text);
        ty_error_clear(&err);
        sc->refeed_unbound = true; /* at the next cycle */
        return;
    }
    for (size_t i = 0; i < l.n; i++)
        sched_apply_obj(sc, "pods", l.items[i], false);
    kc_list_free(&l);
}

static void *sched_main(void *arg)
{
    ty_sched *sc = arg;
    int64_t last_queue_status = 0;

    while (!atomic_load(&sc->stop)) {
        int64_t now = ty_now_ms(), due;
        int wait = 1000, rc;
        if (sc->dirty) {
            due = sc->last_change + BATCH_MS;
            if (sc->first_dirty + MAX_BATCH_MS < due)
                due = sc->first_dirty + MAX_BATCH_MS;
            wait = due > now ? (int)(due - now) : 0;
        }
        /* Nothing is decided before the model is whole. */
        if (!inf_has_synced(sc->inf))
            wait = -1;
        rc = wait ? inf_poll(sc->inf, wait) : 0;
        if (rc < 0)
            break; /* stopping */
        if (rc == 1 || !inf_has_synced(sc->inf))
            continue;
        if (sc->dirty) {
            sc->dirty = false;
            if (sc->refeed_unbound)
                refeed_unbound(sc);
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

ty_sched *sched_start(ty_kc *s, ty_error *err)
{
    return sched_start_opts(s, NULL, err);
}

ty_sched *sched_start_with(ty_kc *s, const char *conf_path, ty_error *err)
{
    sched_opts o = {.conf_path = conf_path};

    return sched_start_opts(s, &o, err);
}

ty_sched *sched_start_opts(ty_kc *s, const sched_opts *opts, ty_error *err)
{
    const char *conf_path = opts ? opts->conf_path : NULL;
    ty_sched *sc = calloc(1, sizeof(*sc));

    if (!sc) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    sc->store = s;
    sc->k_podgroups = api_store_key(&api_podgroup);
    sc->k_queues = api_store_key(&api_queue);
    sc->k_pcs = api_store_key(&api_priorityclass);
    sc->k_quotas = api_store_key(&api_resourcequota);
    sc->watched[0] = "pods";
    sc->watched[1] = "nodes";
    sc->watched[2] = sc->k_podgroups;
    sc->watched[3] = sc->k_queues;
    sc->watched[4] = sc->k_pcs;
    sc->watched[5] = sc->k_quotas;
    sc->watched[6] = NULL;
    sc->conf = conf_path ? sc_conf_load(conf_path, err) : sc_conf_default();
    sc->cluster = sc_cluster_new();
    sc->pcs = json_object();
    strmap_init(&sc->told);
    strmap_init(&sc->told_jobs);
    if (!sc->conf || !sc->cluster || sched_names_set(sc, opts ? opts->names : NULL, err) < 0)
        goto error;
    if (opts && opts->admit_only)
        sc_conf_admit_only(sc->conf);
    sc->inf = inf_new(s, &(inf_config){.name = "scheduler", .watch = sc->watched,
                                       .list = listed_order(sc)},
                      &(inf_handlers){.on_events = on_events, .on_synced = on_synced},
                      sc, err);
    if (!sc->inf)
        goto error;
    sched_metrics_start(sc);
    if (pthread_create(&sc->thread, NULL, sched_main, sc) != 0) {
        ty_seterr(err, TY_EINTERNAL, "cannot start the scheduler thread");
        sched_metrics_stop(sc);
        inf_free(sc->inf);
        goto error;
    }
    ty_thread_setup(sc->thread, "ty-sched", TY_THREAD_BACKGROUND);
    ty_info("scheduler: actions %s; serves schedulerName %s%s%s%s", sc_conf_actions(sc->conf),
            sc->names[0], sc->names[1] ? ", " : "", sc->names[1] ? sc->names[1] : "",
            sc->names[1] && sc->names[2] ? ", ..." : "");
    return sc;
error:
    sc_conf_free(sc->conf);
    sc_cluster_free(sc->cluster);
    json_decref(sc->pcs);
    sched_names_free(sc);
    free(sc);
    return NULL;
}

void sched_stop(ty_sched *sc)
{
    if (!sc)
        return;
    atomic_store(&sc->stop, true);
    inf_cancel(sc->inf);
    pthread_join(sc->thread, NULL);
    sched_metrics_stop(sc);
    inf_free(sc->inf);
    sc_conf_free(sc->conf);
    sc_cluster_free(sc->cluster);
    json_decref(sc->pcs);
    strmap_free_values(&sc->told);
    strmap_free_values(&sc->told_jobs);
    sched_names_free(sc);
    free(sc->writes);
    free(sc);
}
