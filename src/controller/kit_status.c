/* kit_status.c - what the controller kit reads and writes of status:
 * conditions, a pod's observations, times, the TTL after finishing, and the
 * PodGroup's resource sums (see kit.h). Pure functions over JSON but for
 * kit_ttl_expire. */
#include <string.h>

#include "base/timeutil.h"
#include "controller/kit.h"
#include "model/quantity.h"

void kit_time(time_t t, char *buf, size_t len)
{
    ty_time_format(t, buf, len);
}

/* ---- conditions ---- */

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

bool kit_cond_true(const json_t *status, const char *type)
{
    json_t *c = find_cond(json_object_get(status, "conditions"), type, NULL);
    return c && str_eq(json_object_get(c, "status"), "True");
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

bool kit_cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                  const char *message, const char *now, const char *const *clears)
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
    for (size_t i = 0; is_true && clears && clears[i]; i++)
        set_false(conds, clears[i], now);
    json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "type", type,
                                           "status", cstatus, "reason", reason, "message",
                                           message, "lastUpdateTime", now,
                                           "lastTransitionTime",
                                           transition ? transition : json_string(now)));
    return true;
}

/* ---- a pod's observations ---- */

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

int kit_pod_exit_code(const json_t *pod, const char *name)
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

long long kit_pod_restarts(const json_t *pod)
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

const char *kit_pod_phase(const json_t *pod)
{
    const char *p = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return p ? p : "";
}

bool kit_is_terminating(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL;
}

/* ---- TTL after finished ---- */

int kit_ttl_expire(ty_kc *s, const char *resource, const json_t *obj, time_t done,
                   long long ttl, time_t now, time_t *due)
{
    if (ttl < 0 || !done)
        return 0;
    if (now < done + ttl) {
        *due = done + (time_t)ttl;
        return 1;
    }
    return kit_delete(s, resource, obj, NULL, NULL);
}

/* ---- PodGroups ---- */

void kit_add_requests(json_t *sums, const json_t *containers, long long times)
{
    size_t i;
    json_t *c;

    json_array_foreach(containers, i, c) {
        const json_t *r = json_object_get(c, "resources");
        json_t *one = json_object();
        const char *k;
        json_t *v;
        json_object_update(one, json_object_get(r, "limits"));
        json_object_update(one, json_object_get(r, "requests"));
        json_object_foreach(one, k, v) {
            int64_t m = 0;
            if (json_is_string(v) && quantity_parse(json_string_value(v), &m, NULL) < 0)
                continue;
            if (json_is_integer(v))
                m = json_integer_value(v) * 1000;
            json_object_set_new(sums, k, json_integer(json_integer_value(json_object_get(sums, k)) +
                                                      m * times));
        }
        json_decref(one);
    }
}

json_t *kit_quantities(const json_t *sums)
{
    json_t *out = json_object(), *v;
    const char *k;

    json_object_foreach((json_t *)sums, k, v) {
        char buf[64];
        quantity_format(json_integer_value(v), buf, sizeof(buf));
        json_object_set_new(out, k, json_string(buf));
    }
    return out;
}

int kit_pg_follow(json_t *obj, void *arg, ty_error *err)
{
    json_t *spec = json_object_get(obj, "spec");

    (void)err;
    if (json_is_object(spec))
        json_object_update(spec, arg);
    return 0;
}
