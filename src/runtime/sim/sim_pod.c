/* sim_pod.c - what a simulated kubelet writes on a pod: one store_mutate per
 * transition (started, ended, released), each idempotent and checked against
 * the pod's uid, so that a repeated or late call changes nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonget.h"
#include "base/timeutil.h"
#include "model/finalizers.h"
#include "runtime/agent_kit.h"
#include "runtime/sim/sim_internal.h"

#define MAX_DURATION_S (10.0 * 365 * 24 * 3600)

bool sim_pod_has_finalizer(const json_t *pod)
{
    return finalizer_has(pod, RT_SIM_FINALIZER);
}

void sim_pod_plan(const json_t *pod, int64_t *duration_ms, int *exit_code)
{
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    const char *d = json_string_value(json_object_get(ann, RT_SIM_ANN_DURATION));
    const char *e = json_string_value(json_object_get(ann, RT_SIM_ANN_EXIT_CODE));
    char *end;

    *duration_ms = -1;
    *exit_code = 0;
    if (e && *e) {
        long v = strtol(e, &end, 10);
        if (!*end && v >= 0 && v <= 255) {
            *exit_code = (int)v;
            *duration_ms = 0; /* an exit code alone: it ends at once */
        }
    }
    if (d && *d) {
        double s = strtod(d, &end);
        if (!*end && isfinite(s) && s >= 0 && s <= MAX_DURATION_S)
            *duration_ms = (int64_t)llround(s * 1000.0);
    }
}

static bool same_uid(const json_t *pod, const char *uid)
{
    return !strcmp(ty_jmeta(pod, "uid"), uid);
}

static bool is_final(const json_t *status)
{
    return ak_pod_is_final(status);
}

static json_t *ensure_status(json_t *pod)
{
    json_t *st = json_object_get(pod, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(pod, "status", st);
    }
    return st;
}

static json_t *terminated(int code, const char *started, const char *now, const char *cid)
{
    return json_pack("{s:o}", "terminated", ak_terminated(code, NULL, started, now, cid));
}

static void container_id(const json_t *pod, const json_t *ct, char *buf, size_t len)
{
    snprintf(buf, len, "sim://%.8s-%s", ty_jmeta(pod, "uid"),
             ty_jstr(ct, "name"));
}

/* One list of container statuses: running (init containers: completed), or
 * every container terminated with code. */
static json_t *statuses(const json_t *pod, const char *which, bool init, int code,
                        bool running, const char *started, const char *now)
{
    json_t *out = json_array(), *ct;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), which), i, ct) {
        char cid[128];
        bool run = running && !init;
        json_t *state;
        container_id(pod, ct, cid, sizeof(cid));
        if (run)
            state = json_pack("{s:{s:s}}", "running", "startedAt", started);
        else
            state = terminated(init ? 0 : code, started, init ? started : now, cid);
        json_array_append_new(out, json_pack("{s:s, s:o, s:{}, s:b, s:i, s:s, s:s, s:s, s:b}",
                                             "name", ty_jstr(ct, "name"), "state", state,
                                             "lastState", "ready", run || init,
                                             "restartCount", 0, "image", ty_jstr(ct, "image"),
                                             "imageID", "", "containerID", cid, "started", run));
    }
    return out;
}

/* The containers' statuses at their end made from those the Running status
 * lists, for a light copy of the pod (ty_obj_json_light: no containers in
 * its spec): what statuses() makes of the spec's containers, one for each,
 * since the Running status listed every one with its name and image. The
 * init containers' statuses stay as they are: they ended before Running.
 * NULL when the status lists none to go by. */
static json_t *ended_from_status(const json_t *pod, const json_t *st, int code,
                                 const char *started, const char *now)
{
    const json_t *list = json_object_get(st, "containerStatuses"), *cs;
    json_t *out;
    size_t i;

    if (!json_array_size(list) || !(out = json_array()))
        return NULL;
    json_array_foreach(list, i, cs) {
        char cid[128];
        json_t *one;

        container_id(pod, cs, cid, sizeof(cid));
        one = json_pack("{s:s, s:o, s:{}, s:b, s:i, s:s, s:s, s:s, s:b}", "name",
                        ty_jstr(cs, "name"), "state", terminated(code, started, now, cid),
                        "lastState", "ready", false, "restartCount", 0, "image",
                        ty_jstr(cs, "image"), "imageID", "", "containerID", cid, "started", false);
        if (json_array_append_new(out, one) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static void set_statuses(json_t *pod, json_t *st, int code, bool running, const char *started,
                         const char *now)
{
    if (json_array_size(json_object_get(json_object_get(pod, "spec"), "initContainers")))
        json_object_set_new(st, "initContainerStatuses",
                            statuses(pod, "initContainers", true, 0, running, started, now));
    json_object_set_new(st, "containerStatuses",
                        statuses(pod, "containers", false, code, running, started, now));
}

static int start_fn(json_t *pod, void *arg, ty_error *err)
{
    const sim_pod_args *a = arg;
    json_t *meta = json_object_get(pod, "metadata"), *st;
    char now[32];

    if (!same_uid(pod, a->uid) || json_object_get(meta, "deletionTimestamp"))
        return 0;
    st = ensure_status(pod);
    if (is_final(st) || (!strcmp(ty_jstr(st, "phase"), "Running") && sim_pod_has_finalizer(pod)))
        return 0;
    ty_time_now(now, sizeof(now));
    if (finalizer_add(pod, RT_SIM_FINALIZER) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    json_object_set_new(st, "phase", json_string("Running"));
    ak_pod_set_addresses(st, a->node_ip, a->pod_ip);
    ak_pod_set_start(st, pod, now, now);
    set_statuses(pod, st, 0, true, now, now);
    ak_pod_set_conditions(st, 1, true, false, now);
    return 0;
}

/* 100.64.0.0/10, skipping addresses that end in .0 or .255. */
static void next_pod_ip(rt_sim *rt, char *buf, size_t len)
{
    uint32_t a;
    do {
        a = 0x64400000u | (rt->next_ip++ & 0x3fffffu);
    } while ((a & 0xff) == 0 || (a & 0xff) == 255);
    snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

kc_op sim_pod_start_op(rt_sim *rt, sim_pod_args *a, const sim_pod *p, const char *node_ip)
{
    kc_op op;

    *a = (sim_pod_args){.uid = p->uid};
    snprintf(a->node_ip, sizeof(a->node_ip), "%s", node_ip);
    next_pod_ip(rt, a->pod_ip, sizeof(a->pod_ip));
    op = kc_op_mutate("pods", p->ns, p->name, start_fn, a, KC_STATUS);
    op.flags |= KC_ARENA; /* the Running status lives with the pod */
    return op;
}

static int end_fn(json_t *pod, void *arg, ty_error *err)
{
    const sim_pod_args *a = arg;
    json_t *meta = json_object_get(pod, "metadata"), *st;
    const char *started;
    char now[32];

    if (!same_uid(pod, a->uid))
        return 0;
    if (!a->release && json_object_get(meta, "deletionTimestamp"))
        return 0; /* the deletion's own event releases it */
    st = ensure_status(pod);
    if (!is_final(st) && (a->release || !strcmp(ty_jstr(st, "phase"), "Running"))) {
        const json_t *spec = json_object_get(pod, "spec");
        json_t *ended = NULL;

        ty_time_now(now, sizeof(now));
        started = *ty_jstr(st, "startTime") ? ty_jstr(st, "startTime") : now;
        /* a light copy (sim_pod_finish_op) has no containers in its spec
         * (a whole pod always has: the API requires one) */
        if (json_is_object(spec) && !json_object_get(spec, "containers") &&
            !(ended = ended_from_status(pod, st, a->exit_code, started, now)))
            return KC_FN_NEEDS_SPEC;
        json_object_set_new(st, "phase", json_string(a->exit_code ? "Failed" : "Succeeded"));
        if (ended)
            json_object_set_new(st, "containerStatuses", ended);
        else
            set_statuses(pod, st, a->exit_code, false, started, now);
        ak_pod_set_conditions(st, -1, false, true, now);
    }
    if (a->release && finalizer_remove(pod, RT_SIM_FINALIZER) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

static int end(rt_sim *rt, const char *ns, const char *name, const sim_pod_args *a,
               ty_error *err)
{
    ty_obj *o = kc_mutate(rt->s, "pods", ns, name, end_fn, (void *)a, KC_STATUS, err);
    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

int sim_pod_finish(rt_sim *rt, const char *ns, const char *name, const char *uid,
                   int exit_code, ty_error *err)
{
    sim_pod_args a = {.uid = uid, .exit_code = exit_code};
    return end(rt, ns, name, &a, err);
}

kc_op sim_pod_finish_op(sim_pod_args *a, const sim_pod *p, int exit_code)
{
    *a = (sim_pod_args){.uid = p->uid, .exit_code = exit_code};
    kc_op op = kc_op_mutate("pods", p->ns, p->name, end_fn, a, KC_STATUS);
    /* The ended version's tree goes when its event leaves the store's tree
     * window, as the Running one's does; built in the arena, so is the
     * parse of a pod whose tree went before it ended (most: they run for
     * seconds), and the reaper's walk over it is not a miss a block
     * (base/treearena.h; docs/benchmarks.md). */
    op.flags |= KC_ARENA;
    /* A pod whose tree went before it ended is parsed light: its metadata
     * and status, not the containers (end_fn needs only their statuses);
     * the ended version keeps that light tree, which is all the watchers of
     * an ended pod read (the scheduler, this runtime, the job engine, the
     * garbage collector), and its text carries the spec over unparsed. */
    op.flags |= KC_LIGHT;
    return op;
}

int sim_pod_release(rt_sim *rt, const char *ns, const char *name, const char *uid,
                    ty_error *err)
{
    /* As a kubelet reports containers stopped by SIGTERM: 128 + 15. */
    sim_pod_args a = {.uid = uid, .exit_code = 143, .release = true};
    return end(rt, ns, name, &a, err);
}
