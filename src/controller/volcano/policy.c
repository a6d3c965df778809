/* policy.c - Volcano Job lifecycle policies and the phase state machine.
 *
 * Both are pure so that every row of upstream's table is a unit test
 * (tests/unit/test_vcjob_policy.c); reconcile.c only observes and acts. */
#include <stdlib.h>
#include <string.h>

#include "controller/volcano/vc_int.h"

static const char *const phase_names[VC_NPHASES] = {
    "Pending", "Running", "Restarting", "Aborting", "Aborted",
    "Completing", "Completed", "Terminating", "Terminated", "Failed",
};

static const char *const action_names[VC_NACTIONS] = {
    "SyncJob", "AbortJob", "RestartJob", "RestartTask", "RestartPod",
    "TerminateJob", "CompleteJob", "ResumeJob",
};

const char *vc_phase_name(vc_phase p)
{
    return p < VC_NPHASES ? phase_names[p] : "Pending";
}

vc_phase vc_phase_parse(const char *s)
{
    for (int i = 0; s && i < VC_NPHASES; i++)
        if (strcmp(s, phase_names[i]) == 0)
            return (vc_phase)i;
    return VC_PENDING;
}

const char *vc_action_name(vc_action a)
{
    return a < VC_NACTIONS ? action_names[a] : "SyncJob";
}

vc_action vc_action_parse(const char *s)
{
    for (int i = 0; s && i < VC_NACTIONS; i++)
        if (strcmp(s, action_names[i]) == 0)
            return (vc_action)i;
    return VC_SYNC;
}

static bool event_listed(const json_t *policy, const char *event)
{
    const char *one = json_string_value(json_object_get(policy, "event"));
    json_t *e;
    size_t i;

    if (one && (strcmp(one, event) == 0 || strcmp(one, "*") == 0))
        return true;
    json_array_foreach(json_object_get(policy, "events"), i, e) {
        const char *s = json_string_value(e);
        if (s && (strcmp(s, event) == 0 || strcmp(s, "*") == 0))
            return true;
    }
    return false;
}

long long vc_duration_ms(const char *s)
{
    static const struct { const char *unit; long long ms; } units[] = {
        {"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000},
    };
    long long total = 0;

    if (!s || !*s)
        return -1;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        size_t u;
        if (end == s || v < 0)
            return -1;
        for (u = 0; u < sizeof(units) / sizeof(units[0]); u++)
            if (!strncmp(end, units[u].unit, strlen(units[u].unit)))
                break;
        if (u == sizeof(units) / sizeof(units[0]))
            return -1;
        total += (long long)(v * (double)units[u].ms);
        s = end + strlen(units[u].unit);
    }
    return total;
}

static bool policy_matches(const json_t *p, const char *event, int exit_code, bool timed)
{
    json_t *code = json_object_get(p, "exitCode");

    /* A pod is Pending for a while on every start: only a timeout makes
     * "pending too long" an event worth acting on. */
    if (!strcmp(event, "PodPending") && !timed)
        return false;
    return event_listed(p, event) ||
           (json_is_integer(code) && json_integer_value(code) != 0 &&
            !strcmp(event, "PodFailed") && json_integer_value(code) == exit_code);
}

static vc_action match_list(const json_t *policies, const char *event, int exit_code,
                            long long elapsed_ms, long long *wait_ms, bool *found)
{
    json_t *p;
    size_t i;

    json_array_foreach(policies, i, p) {
        const char *timeout = json_string_value(json_object_get(p, "timeout"));
        long long limit = timeout && *timeout ? vc_duration_ms(timeout) : 0;
        if (!policy_matches(p, event, exit_code, limit > 0))
            continue;
        *found = true;
        if (limit > elapsed_ms) {
            if (wait_ms)
                *wait_ms = limit - elapsed_ms;
            return VC_SYNC;
        }
        return vc_action_parse(json_string_value(json_object_get(p, "action")));
    }
    return VC_SYNC;
}

vc_action vc_policy_match(const json_t *task_policies, const json_t *job_policies,
                          const char *event, int exit_code, long long elapsed_ms,
                          long long *wait_ms)
{
    bool found = false;
    vc_action a = match_list(task_policies, event, exit_code, elapsed_ms, wait_ms, &found);

    if (found)
        return a;
    return match_list(job_policies, event, exit_code, elapsed_ms, wait_ms, &found);
}

bool vc_counts_as_retry(const char *event)
{
    return !event || strcmp(event, "PodEvicted") != 0;
}

bool vc_spec_updated(const json_t *job, const json_t *status)
{
    const json_t *gen = json_object_get(json_object_get(job, "metadata"), "generation");
    const json_t *seen = json_object_get(status, "observedGeneration");

    return json_is_integer(gen) && json_is_integer(seen) &&
           json_integer_value(gen) > json_integer_value(seen);
}

bool vc_phase_final(vc_phase p)
{
    return p == VC_ABORTED || p == VC_COMPLETED || p == VC_TERMINATED || p == VC_FAILED;
}

static long long live(const vc_obs *o)
{
    return o->pending + o->running + o->terminating + o->unknown;
}

/* Pending and Running: policies act; otherwise a sync creates pods and moves
 * by the counts. */
static vc_step active(vc_phase cur, vc_action a, const vc_obs *o)
{
    vc_step st = {.next = cur};

    switch (a) {
    case VC_RESTART_JOB:
        return (vc_step){VC_RESTARTING, VC_KILL_ALL, true, true, false};
    case VC_RESTART_TASK:
        return (vc_step){VC_RESTARTING, VC_KILL_TASK, true, false, false};
    case VC_RESTART_POD:
        return (vc_step){VC_RESTARTING, VC_KILL_POD, true, false, false};
    case VC_ABORT_JOB:
        return (vc_step){VC_ABORTING, VC_KILL_LIVE, false, false, false};
    case VC_TERMINATE_JOB:
        return (vc_step){VC_TERMINATING, VC_KILL_LIVE, false, false, false};
    case VC_COMPLETE_JOB:
        return (vc_step){VC_COMPLETING, VC_KILL_LIVE, false, false, false};
    default:
        break;
    }
    /* Failed pods are only replaced by a policy; without one such a task can
     * never reach its minAvailable again, and the job fails now rather than
     * when its last pod ends (a ps task may never end). */
    if (o->task_unreachable)
        return (vc_step){VC_FAILED, VC_KILL_LIVE, false, false, false};
    st.create = true;
    if (cur == VC_PENDING) {
        if (o->running + o->succeeded + o->failed >= o->min_available)
            st.next = VC_RUNNING;
        return st;
    }
    if (o->min_success > 0 && o->succeeded >= o->min_success) {
        st.next = VC_COMPLETED;
        st.kill = VC_KILL_LIVE;
    } else if (o->replicas > 0 && o->succeeded + o->failed >= o->replicas && live(o) == 0) {
        bool short_of_success = o->min_success > 0 && o->succeeded < o->min_success;
        st.next = o->task_below_min || short_of_success ? VC_FAILED : VC_COMPLETED;
    } else if (o->pending > o->replicas - o->min_available) {
        st.next = VC_PENDING; /* lost its gang: wait for it again */
    }
    if (vc_phase_final(st.next))
        st.create = false;
    return st;
}

vc_step vc_transition(vc_phase cur, vc_action a, const vc_obs *o)
{
    vc_step st = {.next = cur};

    switch (cur) {
    case VC_PENDING:
    case VC_RUNNING:
        return active(cur, a, o);
    case VC_RESTARTING:
        if (o->retry_count >= o->max_retry)
            return (vc_step){VC_FAILED, VC_KILL_LIVE, false, false, false};
        /* The killed pods must be gone before their names are reused. */
        if (o->terminating == 0)
            st.next = VC_PENDING;
        return st;
    case VC_ABORTING:
    case VC_ABORTED:
        if (a == VC_RESUME_JOB)
            return (vc_step){VC_RESTARTING, VC_KILL_ALL, true, true, false};
        if (cur == VC_ABORTING && live(o) == 0)
            st.next = VC_ABORTED;
        return st;
    case VC_COMPLETING:
        if (live(o) == 0)
            st.next = VC_COMPLETED;
        return st;
    case VC_TERMINATING:
        if (live(o) == 0)
            st.next = VC_TERMINATED;
        return st;
    default:
        return st; /* Completed, Terminated, Failed: final */
    }
}

static long long phase_count(const json_t *tsc, const char *task, const char *phase)
{
    return json_integer_value(
        json_object_get(json_object_get(json_object_get(tsc, task), "phase"), phase));
}

static bool dependency_ready(const json_t *tasks, const char *name, const json_t *tsc,
                             bool want_succeeded)
{
    json_t *t;
    size_t i;

    json_array_foreach(tasks, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        long long min = json_integer_value(json_object_get(t, "minAvailable"));
        long long ready = phase_count(tsc, name, "Succeeded");
        if (!n || strcmp(n, name) != 0)
            continue;
        if (!want_succeeded)
            ready += phase_count(tsc, name, "Running");
        return ready >= min;
    }
    return true; /* validation rejects unknown names; nothing to wait for */
}

bool vc_depends_ready(const json_t *task, const json_t *tasks, const json_t *tsc,
                      bool want_succeeded)
{
    const json_t *dep = json_object_get(task, "dependsOn");
    const char *iteration = json_string_value(json_object_get(dep, "iteration"));
    bool any = iteration && strcmp(iteration, "any") == 0;
    json_t *n;
    size_t i;

    if (!json_array_size(json_object_get(dep, "name")))
        return true;
    json_array_foreach(json_object_get(dep, "name"), i, n) {
        bool ready = json_is_string(n) &&
                     dependency_ready(tasks, json_string_value(n), tsc, want_succeeded);
        if (any && ready)
            return true;
        if (!any && !ready)
            return false;
    }
    return !any;
}
