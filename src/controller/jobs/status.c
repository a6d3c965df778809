/* status.c - job conditions, exit-code classification, back-off arithmetic
 * and reading pod observations. Pure functions over JSON (see jobs_int.h). */
#include <string.h>

#include "base/timeutil.h"
#include "controller/jobs/jobs_int.h"

void jobs_time(time_t t, char *buf, size_t len)
{
    ty_time_format(t, buf, len);
}

static json_t *find_cond(const json_t *conds, const char *type, size_t *at)
{
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0) {
            if (at)
                *at = i;
            return c;
        }
    }
    return NULL;
}

static bool str_eq(const json_t *v, const char *s)
{
    const char *x = json_string_value(v);
    return x && s && strcmp(x, s) == 0;
}

bool jobs_cond_true(const json_t *status, const char *type)
{
    json_t *c = find_cond(json_object_get(status, "conditions"), type, NULL);
    return c && str_eq(json_object_get(c, "status"), "True");
}

bool jobs_finished(const json_t *status)
{
    return jobs_cond_true(status, "Succeeded") || jobs_cond_true(status, "Failed");
}

/* Turns a True condition False in place, keeping its reason and message. */
static void set_false(json_t *conds, const char *type, const char *now)
{
    json_t *c = find_cond(conds, type, NULL);

    if (!c || !str_eq(json_object_get(c, "status"), "True"))
        return;
    json_object_set_new(c, "status", json_string("False"));
    json_object_set_new(c, "lastUpdateTime", json_string(now));
    json_object_set_new(c, "lastTransitionTime", json_string(now));
}

bool jobs_cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                   const char *message, const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    json_t *old, *transition = NULL;
    bool is_true = strcmp(cstatus, "True") == 0;
    size_t at = 0;

    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    old = find_cond(conds, type, &at);
    if (old && str_eq(json_object_get(old, "status"), cstatus) &&
        str_eq(json_object_get(old, "reason"), reason) &&
        str_eq(json_object_get(old, "message"), message))
        return false;
    if (old && str_eq(json_object_get(old, "status"), cstatus))
        transition = json_incref(json_object_get(old, "lastTransitionTime"));
    if (old)
        json_array_remove(conds, at);
    if (is_true && strcmp(type, "Running") == 0)
        set_false(conds, "Restarting", now);
    if (is_true && strcmp(type, "Restarting") == 0)
        set_false(conds, "Running", now);
    if (is_true && (strcmp(type, "Succeeded") == 0 || strcmp(type, "Failed") == 0)) {
        set_false(conds, "Running", now);
        set_false(conds, "Restarting", now);
    }
    json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "type", type,
                                           "status", cstatus, "reason", reason, "message",
                                           message, "lastUpdateTime", now,
                                           "lastTransitionTime",
                                           transition ? transition : json_string(now)));
    return true;
}

jobs_exit_class jobs_classify_exit(const char *restart_policy, int exit_code)
{
    if (!restart_policy || strcmp(restart_policy, "Never") == 0)
        return JOBS_EXIT_PERMANENT;
    if (strcmp(restart_policy, "ExitCode") == 0)
        return exit_code >= 128 ? JOBS_EXIT_RETRY : JOBS_EXIT_PERMANENT;
    return JOBS_EXIT_RETRY;
}

bool jobs_backoff_exceeded(long long limit, long long restarts)
{
    if (limit < 0)
        return false;
    if (limit == 0)
        return restarts > 0;
    return restarts >= limit;
}

static const json_t *container_status(const json_t *pod, const char *name)
{
    const json_t *list = json_object_get(json_object_get(pod, "status"), "containerStatuses");
    size_t i;
    json_t *cs;

    json_array_foreach(list, i, cs)
        if (name && str_eq(json_object_get(cs, "name"), name))
            return cs;
    return json_array_get(list, 0);
}

int jobs_pod_exit_code(const json_t *pod, const char *name)
{
    const json_t *cs = container_status(pod, name);
    const char *where[] = {"state", "lastState"};

    for (int i = 0; i < 2; i++) {
        json_t *t = json_object_get(json_object_get(cs, where[i]), "terminated");
        json_t *code = json_object_get(t, "exitCode");
        if (json_is_integer(code))
            return (int)json_integer_value(code);
    }
    return -1;
}

long long jobs_pod_restarts(const json_t *pod)
{
    const json_t *list = json_object_get(json_object_get(pod, "status"), "containerStatuses");
    long long n = 0;
    size_t i;
    json_t *cs;

    json_array_foreach(list, i, cs) {
        json_t *r = json_object_get(cs, "restartCount");
        if (json_is_integer(r) && json_integer_value(r) > 0)
            n += json_integer_value(r);
    }
    return n;
}

const char *jobs_pod_phase(const json_t *pod)
{
    const char *p = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return p ? p : "";
}

bool jobs_is_terminating(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL;
}
