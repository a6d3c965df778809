/* agent_kit_status.c - the Node objects and pod status every node agent
 * writes the same way (see agent_kit.h). */
#include <stdio.h>
#include <string.h>

#include "base/jsonget.h"
#include "base/jsonown.h"
#include "base/timeutil.h"
#include "model/podcond.h"
#include "runtime/agent_kit.h"

/* ---- Nodes ---- */

json_t *ak_node_ready_condition(const char *message, const char *now)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", "Ready", "status", "True",
                     "reason", "KubeletReady", "message", message, "lastHeartbeatTime", now,
                     "lastTransitionTime", now);
}

json_t *ak_node_info(const char *runtime, const char *kernel, const char *os_image,
                     const char *arch)
{
    char crv[64];

    snprintf(crv, sizeof(crv), "trainyard-%s://0.1", runtime);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kernelVersion",
                     kernel, "osImage", os_image, "containerRuntimeVersion", crv,
                     "kubeletVersion", "v1.32.0-trainyard", "kubeProxyVersion", "",
                     "architecture", arch, "operatingSystem", "linux", "machineID", "",
                     "systemUUID", "", "bootID", "");
}

/* kc_mutate's function for a part that has none: changes nothing. */
static int no_change(json_t *obj, void *arg, ty_error *err)
{
    (void)obj, (void)arg, (void)err;
    return 0;
}

int ak_node_ensure(ty_kc *kc, const char *name, kc_mutate_fn fix_meta, kc_mutate_fn fix_status,
                   json_t *(*make)(void *arg), void *arg, bool *created, ty_error *err)
{
    ty_error mine;
    ty_obj *o;

    /* The not-found must be seen even when the caller passes no err. */
    ty_error_init(&mine);
    o = kc_mutate(kc, "nodes", "", name, fix_meta ? fix_meta : no_change, arg, 0, &mine);
    if (o && fix_status) {
        ty_obj_unref(o);
        o = kc_mutate(kc, "nodes", "", name, fix_status, arg, KC_STATUS, &mine);
    }
    if (created)
        *created = false;
    if (!o && mine.code == TY_ENOTFOUND) {
        ty_error_clear(&mine);
        o = kc_create(kc, "nodes", "", make(arg), &mine);
        if (o && created)
            *created = true;
    }
    if (!o && err)
        ty_seterr(err, mine.code, "%s", mine.text);
    ty_error_clear(&mine);
    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

typedef struct beat_args {
    const char *now;
    const char *const *beat;
} beat_args;

static bool listed(const char *const *names, const char *name)
{
    for (size_t i = 0; names && names[i]; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

/* A status write: what it changes below the status it makes its own first
 * (base/jsonown.h; the rest is shared with the stored version). */
static int beat(json_t *obj, void *arg, ty_error *err)
{
    const beat_args *a = arg;
    json_t *conds = ty_json_own(json_object_get(obj, "status"), "conditions"), *c;

    (void)err;
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const char *type = json_string_value(json_object_get(json_array_get(conds, i), "type"));
        if (!type || (strcmp(type, "Ready") && !listed(a->beat, type)) ||
            !(c = ty_json_own_at(conds, i)))
            continue;
        if (!strcmp(type, "Ready")) {
            const char *st = json_string_value(json_object_get(c, "status"));
            if (!st || strcmp(st, "True")) {
                json_object_set_new(c, "status", json_string("True"));
                json_object_set_new(c, "reason", json_string("KubeletReady"));
                json_object_set_new(c, "lastTransitionTime", json_string(a->now));
            }
            json_object_set_new(c, "lastHeartbeatTime", json_string(a->now));
        } else if (listed(a->beat, type)) {
            json_object_set_new(c, "lastHeartbeatTime", json_string(a->now));
        }
    }
    return 0;
}

int ak_node_heartbeat(ty_kc *kc, const char *name, const char *const *beat_also,
                      ty_error *err)
{
    char now[32];
    beat_args a = {.now = now, .beat = beat_also};
    ty_obj *o;

    ty_time_now(now, sizeof(now));
    o = kc_mutate(kc, "nodes", "", name, beat, &a, KC_STATUS, err);
    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

typedef struct cond_args {
    const ak_node_cond *c;
    bool on;
} cond_args;

/* The condition: a status write, so the conditions and the one it changes
 * are made its own first (the rest is shared with the stored version). */
static int set_cond(json_t *obj, void *arg, ty_error *err)
{
    const cond_args *a = arg;
    const ak_node_cond *c = a->c;
    json_t *status = json_object_get(obj, "status"), *conds, *cond = NULL;
    char now[32];

    (void)err;
    ty_time_now(now, sizeof(now));
    if (!json_is_object(status))
        json_object_set_new(obj, "status", status = json_object());
    if (!json_is_array(conds = ty_json_own(status, "conditions")))
        json_object_set_new(status, "conditions", conds = json_array());
    for (size_t i = 0; i < json_array_size(conds) && !cond; i++)
        if (!strcmp(ty_jstr(json_array_get(conds, i), "type"), c->type))
            cond = ty_json_own_at(conds, i);
    if (!cond) {
        json_array_append_new(conds, cond = json_pack("{s:s}", "type", c->type));
        json_object_set_new(cond, "lastTransitionTime", json_string(now));
    } else if (strcmp(ty_jstr(cond, "status"), a->on ? "True" : "False")) {
        json_object_set_new(cond, "lastTransitionTime", json_string(now));
    }
    json_object_set_new(cond, "status", json_string(a->on ? "True" : "False"));
    json_object_set_new(cond, "reason", json_string(a->on ? c->reason_on : c->reason_off));
    json_object_set_new(cond, "message", json_string(a->on ? c->message_on : c->message_off));
    json_object_set_new(cond, "lastHeartbeatTime", json_string(now));
    return 0;
}

/* The taint: a write of the Node (its spec). One that is there already is
 * kept, with the time it was added. */
static int set_taint(json_t *obj, void *arg, ty_error *err)
{
    const cond_args *a = arg;
    const ak_node_cond *c = a->c;
    json_t *spec = json_object_get(obj, "spec"), *taints;
    bool has = false;
    char now[32];

    (void)err;
    if (!json_is_object(spec))
        json_object_set_new(obj, "spec", spec = json_object());
    taints = json_object_get(spec, "taints");
    for (size_t i = json_array_size(taints); i-- > 0;)
        if (!strcmp(ty_jstr(json_array_get(taints, i), "key"), c->taint_key)) {
            if (a->on && !has)
                has = true;
            else
                json_array_remove(taints, i);
        }
    if (a->on && !has) {
        ty_time_now(now, sizeof(now));
        if (!json_is_array(taints))
            json_object_set_new(spec, "taints", taints = json_array());
        json_array_append_new(taints, json_pack("{s:s, s:s, s:s}", "key", c->taint_key,
                                                "effect", "NoSchedule", "timeAdded", now));
    } else if (taints && !json_array_size(taints)) {
        json_object_del(spec, "taints");
    }
    return 0;
}

int ak_node_set_condition(ty_kc *kc, const char *name, const ak_node_cond *c, bool on,
                          ty_error *err)
{
    cond_args a = {.c = c, .on = on};
    ty_obj *o = kc_mutate(kc, "nodes", "", name, set_cond, &a, KC_STATUS, err);

    if (!o)
        return -1;
    ty_obj_unref(o);
    if (!c->taint_key)
        return 0;
    if (!(o = kc_mutate(kc, "nodes", "", name, set_taint, &a, 0, err)))
        return -1;
    ty_obj_unref(o);
    return 0;
}

json_t *ak_node_inventory(ty_kc *kc, const char *name)
{
    ty_obj *o = kc_get(kc, "nodes", "", name, NULL);
    const json_t *node, *st;
    json_t *out;

    if (!o)
        return NULL;
    node = ty_obj_json(o);
    st = json_object_get(node, "status");
    out = json_pack("{s:s, s:O*, s:O*, s:O*, s:O*}", "name", name, "labels",
                    json_object_get(json_object_get(node, "metadata"), "labels"), "capacity",
                    json_object_get(st, "capacity"), "allocatable",
                    json_object_get(st, "allocatable"), "conditions",
                    json_object_get(st, "conditions"));
    ty_obj_unref(o);
    return out;
}

/* ---- pod status ---- */

bool ak_pod_is_final(const json_t *status)
{
    const char *phase = ty_jstr(status, "phase");
    return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

void ak_pod_set_addresses(json_t *st, const char *host_ip, const char *pod_ip)
{
    json_object_set_new(st, "hostIP", json_string(host_ip));
    json_object_set_new(st, "hostIPs", json_pack("[{s:s}]", "ip", host_ip));
    json_object_set_new(st, "podIP", json_string(pod_ip));
    json_object_set_new(st, "podIPs", json_pack("[{s:s}]", "ip", pod_ip));
}

void ak_pod_set_start(json_t *st, const json_t *pod, const char *start, const char *now)
{
    if (start && *start)
        json_object_set_new(st, "startTime", json_string(start));
    else if (!json_object_get(st, "startTime"))
        json_object_set_new(st, "startTime", json_string(now));
    if (!json_object_get(st, "qosClass"))
        json_object_set_new(st, "qosClass", json_string(podcond_qos_class(pod)));
}

static void set_condition(json_t *st, const char *type, bool value, const char *reason,
                          const char *now)
{
    podcond_set(st, type, value ? "True" : "False", reason, NULL, now, true);
}

void ak_pod_set_conditions(json_t *st, int initialized, bool ready, bool final,
                           const char *now)
{
    const char *why = ready ? NULL : final ? "PodCompleted" : "ContainersNotReady";

    if (initialized >= 0)
        set_condition(st, "Initialized", initialized > 0, NULL, now);
    set_condition(st, "ContainersReady", ready, why, now);
    set_condition(st, "Ready", ready, why, now);
}

json_t *ak_terminated(int exit_code, const char *reason, const char *started,
                      const char *finished, const char *container_id)
{
    json_t *t = json_pack("{s:i, s:s, s:s, s:s}", "exitCode", exit_code, "reason",
                          reason ? reason : exit_code == 0 ? "Completed" : "Error",
                          "startedAt", started, "finishedAt", finished);

    if (t && container_id && *container_id)
        json_object_set_new(t, "containerID", json_string(container_id));
    return t;
}
