/* podstatus.c - a pod's status and Events from its supervisor's state.json.
 *
 * Status is written from observation only: whatever state.json says now,
 * onto the pod's current status (PodScheduled and other conditions that are
 * not ours are kept; ours keep their lastTransitionTime while unchanged). */
#include <stdio.h>
#include <string.h>

#include "base/jsonget.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "runtime/agent_kit.h"
#include "runtime/local/rt_internal.h"

static const json_t *find_named(const json_t *list, const char *name)
{
    size_t i;
    json_t *v;

    json_array_foreach(list, i, v)
        if (!strcmp(ty_jstr(v, "name"), name))
            return v;
    return NULL;
}

static void container_id(const json_t *c, char *buf, size_t len)
{
    json_int_t pid = json_integer_value(json_object_get(c, "pid"));
    snprintf(buf, len, "trainyard://%lld", (long long)pid);
}

static json_t *terminated(const json_t *t, const char *cid)
{
    json_t *j = json_pack("{s:I, s:s, s:s, s:s}", "exitCode",
                          json_integer_value(json_object_get(t, "exitCode")), "reason",
                          ty_jstr(t, "reason"), "startedAt", ty_jstr(t, "startedAt"), "finishedAt",
                          ty_jstr(t, "finishedAt"));
    json_int_t sig = json_integer_value(json_object_get(t, "signal"));

    if (sig)
        json_object_set_new(j, "signal", json_integer(sig));
    if (*ty_jstr(t, "message"))
        json_object_set_new(j, "message", json_string(ty_jstr(t, "message")));
    if (cid && *cid)
        json_object_set_new(j, "containerID", json_string(cid));
    return j;
}

static json_t *waiting(const char *reason, const char *msg)
{
    json_t *w = json_pack("{s:s}", "reason", reason);
    if (msg && *msg)
        json_object_set_new(w, "message", json_string(msg));
    return json_pack("{s:o}", "waiting", w);
}

/* One containerStatuses entry from the spec container and its state. */
static json_t *container_status(const json_t *spec_ct, const json_t *c, bool init,
                                const char *wait_reason, const char *wait_msg)
{
    const char *state = ty_jstr(c, "state");
    char cid[64] = "";
    json_t *st, *last = json_object(), *out;
    bool running = !strcmp(state, "running"), ready;

    if (c && json_integer_value(json_object_get(c, "pid")) > 0)
        container_id(c, cid, sizeof(cid));
    if (running)
        st = json_pack("{s:{s:s}}", "running", "startedAt", ty_jstr(c, "startedAt"));
    else if (!strcmp(state, "terminated"))
        st = json_pack("{s:o}", "terminated", terminated(c, cid));
    else if (c)
        st = waiting(ty_jstr(c, "reason"), ty_jstr(c, "message"));
    else
        st = waiting(wait_reason, wait_msg);
    if (json_object_get(c, "lastState"))
        json_object_set_new(last, "terminated",
                            terminated(json_object_get(c, "lastState"), NULL));
    ready = init ? !strcmp(state, "terminated") &&
                       !json_integer_value(json_object_get(c, "exitCode"))
                 : running;
    out = json_pack("{s:s, s:o, s:o, s:b, s:I, s:s, s:s, s:b}", "name", ty_jstr(spec_ct, "name"),
                    "state", st, "lastState", last, "ready", ready, "restartCount",
                    json_integer_value(json_object_get(c, "restartCount")), "image",
                    ty_jstr(spec_ct, "image"), "imageID", "", "started", running);
    if (*cid)
        json_object_set_new(out, "containerID", json_string(cid));
    return out;
}

static json_t *statuses(const json_t *pod, const json_t *state, const char *which, bool init,
                        const char *wait_reason, const char *wait_msg, bool *all_ready)
{
    json_t *out = json_array(), *ct;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), which), i, ct) {
        const json_t *c = find_named(json_object_get(state, which), ty_jstr(ct, "name"));
        json_t *cs = container_status(ct, c, init, wait_reason, wait_msg);
        *all_ready &= json_is_true(json_object_get(cs, "ready"));
        json_array_append_new(out, cs);
    }
    return out;
}


json_t *rt_pod_status(const json_t *pod, const json_t *state, const char *ip,
                      const char *host_ip, const char *wait_reason, const char *wait_msg)
{
    json_t *st = json_deep_copy(json_object_get(pod, "status"));
    const char *phase = state ? ty_jstr(state, "phase") : "Pending";
    bool init_ready = true, ready = true, final;
    char now[32];

    if (!json_is_object(st)) {
        json_decref(st);
        st = json_object();
    }
    ty_time_now(now, sizeof(now));
    if (!wait_reason)
        wait_reason = "ContainerCreating";
    final = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
    json_object_set_new(st, "phase", json_string(*phase ? phase : "Pending"));
    ak_pod_set_addresses(st, host_ip, ip);
    ak_pod_set_start(st, pod, state ? ty_jstr(state, "startTime") : NULL, now);
    if (json_array_size(json_object_get(json_object_get(pod, "spec"), "initContainers")))
        json_object_set_new(st, "initContainerStatuses",
                            statuses(pod, state, "initContainers", true, "PodInitializing",
                                     NULL, &init_ready));
    json_object_set_new(st, "containerStatuses",
                        statuses(pod, state, "containers", false,
                                 init_ready ? wait_reason : "PodInitializing",
                                 init_ready ? wait_msg : NULL, &ready));
    ready &= init_ready && !final;
    ak_pod_set_conditions(st, init_ready || final, ready, final, now);
    return st;
}

/* ---- Events ---- */

/* A run is reported once: when a state shows it started that the previous
 * state did not (a run may start and end between two observations). */
static void container_events(ty_kc *s, const json_t *pod, const json_t *b, const json_t *a)
{
    const char *name = ty_jstr(a, "name"), *state = ty_jstr(a, "state");
    const char *reason = ty_jstr(a, "reason");
    json_int_t rc_a = json_integer_value(json_object_get(a, "restartCount"));
    json_int_t rc_b = json_integer_value(json_object_get(b, "restartCount"));
    bool new_run = json_is_true(json_object_get(a, "started")) &&
                   (!b || !json_is_true(json_object_get(b, "started")) || rc_a != rc_b);
    bool new_state = !b || rc_a != rc_b || strcmp(ty_jstr(b, "state"), state) ||
                     strcmp(ty_jstr(b, "reason"), reason);

    if (new_run) {
        ty_event(s, pod, "Normal", "Created", RT_COMPONENT, "Created container %s", name);
        ty_event(s, pod, "Normal", "Started", RT_COMPONENT, "Started container %s", name);
    }
    if (!new_state)
        return;
    if (!strcmp(state, "waiting") && !strcmp(reason, "CrashLoopBackOff")) {
        const json_t *m = json_object_get(pod, "metadata");
        const json_t *last = json_object_get(a, "lastState");
        /* A start that failed and will be retried goes straight to the
         * back-off: its Failed event is told here, once per attempt. */
        if (!strcmp(ty_jstr(last, "reason"), "StartError"))
            ty_event(s, pod, "Warning", "Failed", RT_COMPONENT, "Error: %s",
                     ty_jstr(last, "message"));
        ty_event(s, pod, "Warning", "BackOff", RT_COMPONENT,
                 "Back-off restarting failed container %s in pod %s_%s(%s)", name,
                 ty_jstr(m, "name"), ty_jstr(m, "namespace"), ty_jstr(m, "uid"));
    } else if (!strcmp(state, "terminated") &&
               (!strcmp(reason, "StartError") || !strcmp(reason, "NoCommand"))) {
        ty_event(s, pod, "Warning", "Failed", RT_COMPONENT, "Error: %s", ty_jstr(a, "message"));
    }
}

void rt_args_only_events(ty_kc *s, const json_t *pod)
{
    const char *lists[] = {"initContainers", "containers"};
    const json_t *spec = json_object_get(pod, "spec");
    size_t i;
    json_t *ct;

    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(spec, lists[l]), i, ct)
            if (rt_args_only(ct))
                ty_event(s, pod, "Warning", "ArgsWithoutCommand", RT_COMPONENT,
                         "Container %s has args but no command: there are no images here, "
                         "so no ENTRYPOINT comes before them and args[0] (\"%s\") runs as "
                         "the program; give the entrypoint as command",
                         ty_jstr(ct, "name"),
                         json_string_value(json_array_get(json_object_get(ct, "args"), 0))
                             ? json_string_value(json_array_get(json_object_get(ct, "args"), 0))
                             : "");
}

void rt_state_events(ty_kc *s, const json_t *pod, const json_t *before, const json_t *after)
{
    const char *lists[] = {"initContainers", "containers"};
    size_t i;
    json_t *a;

    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(after, lists[l]), i, a)
            container_events(s, pod, find_named(json_object_get(before, lists[l]),
                                                ty_jstr(a, "name")),
                             a);
}
