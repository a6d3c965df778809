/* kit_status.c - what the controller kit reads and writes of status:
 * conditions, a pod's observations, times, the TTL after finishing, and the
 * PodGroup's resource sums (see kit.h). Pure functions over JSON but for
 * kit_ttl_expire. */
#include <string.h>

#include "api/kinds.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "controller/kit.h"
#include "model/podres.h"
#include "model/quantity.h"

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

void kit_add_requests(json_t *sums, const json_t *pod_spec, long long times)
{
    podres r;

    podres_of_spec(pod_spec, &r);
    for (size_t i = 0; i < r.n; i++) {
        const char *k = r.r[i].name;
        json_object_set_new(sums, k, json_integer(json_integer_value(json_object_get(sums, k)) +
                                                  r.r[i].milli * times));
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

/* Whether the PodGroup's spec holds every field of want already. */
static bool spec_follows(const json_t *pg, const json_t *want)
{
    const json_t *spec = json_object_get(pg, "spec"), *v;
    const char *k;

    json_object_foreach((json_t *)want, k, v)
        if (!json_equal(json_object_get(spec, k), v))
            return false;
    return true;
}

bool kit_pg_admitted(const json_t *pg)
{
    const char *phase =
        json_string_value(json_object_get(json_object_get(pg, "status"), "phase"));

    return phase && *phase && strcmp(phase, "Pending") != 0;
}

int kit_pg_gate(ty_kc *s, const char *ns, json_t *pg)
{
    const char *key = api_store_key(&api_podgroup);
    const char *name =
        json_string_value(json_object_get(json_object_get(pg, "metadata"), "name"));
    json_t *spec = json_incref(json_object_get(pg, "spec"));
    ty_error err;
    ty_obj *o;
    int open;

    ty_error_init(&err);
    if (!name || !json_is_object(spec)) {
        json_decref(spec);
        json_decref(pg);
        return -1;
    }
    /* Read first: most passes find the PodGroup as it should be, and a
     * mutate that changes nothing still took a turn on the store's one
     * writer (a copy and a comparison of the PodGroup, in line behind every
     * other write). */
    o = kc_get(s, key, ns, name, &err);
    if (o && !spec_follows(ty_obj_json(o), spec)) {
        ty_obj_unref(o);
        o = kc_mutate(s, key, ns, name, kit_pg_follow, spec, 0, &err);
    }
    if (!o && err.code == TY_ENOTFOUND) {
        ty_error_clear(&err);
        if (api_prepare(&api_podgroup, pg, NULL, &err) < 0) {
            ty_warn("PodGroup %s/%s: %s", ns, name, err.text);
            ty_error_clear(&err);
            json_decref(pg);
            json_decref(spec);
            return -1;
        }
        /* Pending until the scheduler says more (where the API keeps a
         * create's status; elsewhere no phase reads the same) */
        if (!json_object_get(pg, "status"))
            json_object_set_new(pg, "status", json_pack("{s:s}", "phase", "Pending"));
        o = kc_create(s, key, ns, pg, &err); /* pg taken */
        pg = NULL;
    }
    json_decref(pg);
    json_decref(spec);
    if (!o) {
        /* a PodGroup made meanwhile: the next pass reads it */
        open = err.code == TY_EEXISTS ? 0 : -1;
        ty_error_clear(&err);
        return open;
    }
    open = kit_pg_admitted(ty_obj_json(o)) ? 1 : 0;
    ty_obj_unref(o);
    ty_error_clear(&err);
    return open;
}
