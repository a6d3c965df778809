/* quota_limited.c - ResourceQuota admission's limited resources (see
 * quota_limited.h). */
#include "api/quota_limited.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/buf.h"
#include "base/jsonget.h"
#include "model/quota.h"

/* obj[key] when a string, else NULL (ty_jstr's "" would hide a missing one). */
static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *limited; /* checked limitedResources; NULL until first use */

static json_t *default_limited(void)
{
    return json_pack("[{s:s, s:s, s:[{s:s, s:s, s:[s, s]}]}]", "apiGroup", "", "resource",
                     "pods", "matchScopes", "scopeName", "PriorityClass", "operator", "In",
                     "values", "system-node-critical", "system-cluster-critical");
}

/* ---- checking a configuration ---- */

static int bad(ty_error *err, const char *field, const char *what)
{
    return ty_seterr(err, TY_EBADREQUEST, "%s: %s", field, what);
}

static bool all_strings(const json_t *a)
{
    size_t i;
    json_t *v;

    json_array_foreach(a, i, v)
        if (!json_is_string(v) || !json_string_length(v))
            return false;
    return true;
}

static int check_scope(const json_t *s, const char *at, ty_error *err)
{
    const char *name = jstr(s, "scopeName"), *op = jstr(s, "operator");
    const json_t *values = json_object_get(s, "values");
    bool has_values = json_array_size(values) > 0;
    char f[160];

    if (!json_is_object(s))
        return bad(err, at, "want an object {scopeName, operator, values}");
    snprintf(f, sizeof(f), "%.120s.scopeName", at);
    if (!name || !quota_scope_known(name))
        return bad(err, f, "want Terminating, NotTerminating, BestEffort, NotBestEffort or "
                           "PriorityClass");
    snprintf(f, sizeof(f), "%.120s.operator", at);
    if (!op || (strcmp(op, "In") && strcmp(op, "NotIn") && strcmp(op, "Exists") &&
                strcmp(op, "DoesNotExist")))
        return bad(err, f, "want In, NotIn, Exists or DoesNotExist");
    snprintf(f, sizeof(f), "%.120s.values", at);
    if (values && !json_is_null(values) &&
        (!json_is_array(values) || !all_strings(values) ||
                   json_array_size(values) > QUOTA_LIMITED_MAX))
        return bad(err, f, "want a list of at most 64 names");
    if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
        if (strcmp(name, "PriorityClass") != 0)
            return bad(err, f, "In and NotIn are for the PriorityClass scope");
        if (!has_values)
            return bad(err, f, "must be at least one value when `operator` is 'In' or 'NotIn'");
    } else if (has_values) {
        return bad(err, f, "must be no value when `operator` is 'Exists' or 'DoesNotExist'");
    }
    return 0;
}

static const char *const entry_fields[] = {"apiGroup", "resource", "matchContains",
                                           "matchScopes", NULL};

static int check_entry(const json_t *e, size_t i, ty_error *err)
{
    const json_t *contains = json_object_get(e, "matchContains");
    const json_t *scopes = json_object_get(e, "matchScopes");
    const char *k;
    json_t *v;
    char at[64], f[160];
    size_t j;

    snprintf(at, sizeof(at), "limitedResources[%zu]", i);
    if (!json_is_object(e))
        return bad(err, at, "want an object {apiGroup, resource, matchContains, matchScopes}");
    json_object_foreach((json_t *)e, k, v) {
        bool known = false;
        for (j = 0; entry_fields[j]; j++)
            known = known || !strcmp(k, entry_fields[j]);
        snprintf(f, sizeof(f), "%s.%.60s", at, k);
        if (!known)
            return bad(err, f, "unknown field");
    }
    snprintf(f, sizeof(f), "%s.apiGroup", at);
    if (json_object_get(e, "apiGroup") && !json_is_string(json_object_get(e, "apiGroup")))
        return bad(err, f, "want a string");
    snprintf(f, sizeof(f), "%s.resource", at);
    if (!jstr(e, "resource") || !*jstr(e, "resource"))
        return bad(err, f, "Required value");
    snprintf(f, sizeof(f), "%s.matchContains", at);
    if (contains && (!json_is_array(contains) || !all_strings(contains) ||
                     json_array_size(contains) > QUOTA_LIMITED_MAX))
        return bad(err, f, "want a list of at most 64 resource names");
    snprintf(f, sizeof(f), "%s.matchScopes", at);
    if (scopes && (!json_is_array(scopes) || json_array_size(scopes) > QUOTA_LIMITED_MAX))
        return bad(err, f, "want a list of at most 64 scope selector requirements");
    json_array_foreach(scopes, j, v) {
        snprintf(f, sizeof(f), "%s.matchScopes[%zu]", at, j);
        if (check_scope(v, f, err) < 0)
            return -1;
    }
    return 0;
}

int quota_limited_set(const json_t *lr, ty_error *err)
{
    json_t *copy, *old;
    size_t i;
    json_t *e;

    if (lr && (!json_is_array(lr) || json_array_size(lr) > QUOTA_LIMITED_MAX))
        return bad(err, "limitedResources", "want a list of at most 64 entries");
    json_array_foreach(lr, i, e)
        if (check_entry(e, i, err) < 0)
            return -1;
    if (!(copy = lr ? json_deep_copy(lr) : default_limited()))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    pthread_mutex_lock(&lock);
    old = limited;
    limited = copy;
    pthread_mutex_unlock(&lock);
    json_decref(old);
    return 0;
}

/* ---- the check ---- */

/* A requirement as kube-apiserver prints it (Go's %v of the struct):
 * {PriorityClass In [a b]}. */
static void fmt_scope(ty_buf *b, const json_t *s)
{
    size_t i;
    json_t *v;

    ty_buf_printf(b, "%s{%s %s [", b->len && b->data[b->len - 1] == '}' ? " " : "",
                  jstr(s, "scopeName"), jstr(s, "operator"));
    json_array_foreach(json_object_get(s, "values"), i, v)
        ty_buf_printf(b, "%s%s", i ? " " : "", json_string_value(v));
    ty_buf_printf(b, "]}");
}

/* Whether one of the quotas has a scope named like s that matches obj. */
static bool scope_covered(const json_t *s, const json_t *obj, json_t *const *q, size_t n)
{
    const char *name = jstr(s, "scopeName");

    for (size_t i = 0; i < n; i++) {
        const json_t *spec = json_object_get(q[i], "spec");
        size_t j;
        json_t *e;
        json_array_foreach(json_object_get(json_object_get(spec, "scopeSelector"),
                                           "matchExpressions"), j, e)
            if (!strcmp(jstr(e, "scopeName") ?: "", name) && quota_scope_expr_matches(e, obj))
                return true;
        json_array_foreach(json_object_get(spec, "scopes"), j, e)
            if (json_is_string(e) && !strcmp(json_string_value(e), name) &&
                quota_scope_matches(name, obj))
                return true;
    }
    return false;
}

/* Whether k is an extended resource's bare name (nvidia.com/gpu), which a
 * pod's usage has beside its requests. name. */
static bool bare_extended(const char *k)
{
    return strchr(k, '/') && strncmp(k, "requests.", 9) && strncmp(k, "count/", 6) &&
           strncmp(k, "limits.", 7);
}

/* Whether a quota that matches obj limits usage name k (or, for an
 * extended name a pod uses unprefixed too, its requests. name: a quota
 * limits extended resources by that one, as kube-apiserver's). */
static bool name_covered(const api_resource *res, const char *k, const json_t *obj,
                         json_t *const *q, size_t n)
{
    char group[128], plural[128], req[300];

    snprintf(req, sizeof(req), "requests.%s", k);
    for (size_t i = 0; i < n; i++) {
        const json_t *hard = json_object_get(json_object_get(q[i], "spec"), "hard");
        if (!quota_matches(q[i], res->group, res->plural, obj))
            continue;
        const char *name = json_object_get(hard, k)                         ? k
                           : bare_extended(k) && json_object_get(hard, req) ? req
                                                                             : NULL;
        if (name &&
            quota_key_resource(name, group, sizeof(group), plural, sizeof(plural)) == 0 &&
            !strcmp(group, res->group) && !strcmp(plural, res->plural))
            return true;
    }
    return false;
}

/* The names obj uses that contain one of e's matchContains and no quota
 * covers, as keys of set. */
static void uncovered_names(const api_resource *res, const json_t *e, const json_t *obj,
                            json_t *const *q, size_t n, json_t *set)
{
    const json_t *contains = json_object_get(e, "matchContains");
    json_t *usage;
    const char *k;
    json_t *v;
    char req[300];

    if (!json_array_size(contains) || !(usage = json_object()))
        return;
    quota_usage_add(usage, res->group, res->plural, obj);
    json_object_foreach(usage, k, v) {
        size_t i;
        json_t *c;
        bool hit = false;
        json_array_foreach(contains, i, c)
            hit = hit || strstr(k, json_string_value(c)) != NULL;
        if (!hit || json_integer_value(v) <= 0 || name_covered(res, k, obj, q, n))
            continue;
        /* once: both nvidia.com/gpu and requests.nvidia.com/gpu name one thing */
        snprintf(req, sizeof(req), "requests.%s", k);
        if (bare_extended(k) && json_object_get(usage, req))
            continue;
        json_object_set_new(set, k, json_true());
    }
    json_decref(usage);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* set's keys, sorted and comma-separated, into b (kube-apiserver's set). */
static void join_sorted(const json_t *set, ty_buf *b)
{
    const char *keys[QUOTA_LIMITED_MAX * 4], *k;
    size_t n = 0;
    json_t *v;

    json_object_foreach((json_t *)set, k, v)
        if (n < sizeof(keys) / sizeof(keys[0]))
            keys[n++] = k;
    qsort(keys, n, sizeof(keys[0]), cmp_str);
    for (size_t i = 0; i < n; i++)
        ty_buf_printf(b, "%s%s", i ? "," : "", keys[i]);
}

static int refuse(ty_error *err, const api_resource *res, const json_t *obj, const char *what,
                  const char *list, const char *end)
{
    char gr[128];

    api_group_resource(res, gr, sizeof(gr));
    return ty_seterr(err, TY_EFORBIDDEN, "%s \"%s\" is forbidden: %s%s%s", gr,
                     ty_jmeta(obj, "name") ?: "", what, list, end);
}

int quota_limited_check(const api_resource *res, const json_t *obj, json_t *const *q, size_t n,
                        ty_error *err)
{
    ty_buf scopes = {0}, names = {0};
    json_t *name_set = json_object();
    size_t i, j;
    json_t *e, *s;
    int rc = 0;

    pthread_mutex_lock(&lock);
    if (!limited)
        limited = default_limited();
    if (!limited || !name_set) { /* out of memory: refused, never let through */
        pthread_mutex_unlock(&lock);
        json_decref(name_set);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    json_array_foreach(limited, i, e) {
        /* matchScopes of every entry, as kube-apiserver's: only the pod
         * evaluator has scopes; names of the entries for this resource */
        json_array_foreach(res == &api_pod ? json_object_get(e, "matchScopes") : NULL, j, s)
            if (quota_scope_expr_matches(s, obj) && !scope_covered(s, obj, q, n))
                fmt_scope(&scopes, s);
        if (!strcmp(jstr(e, "apiGroup") ?: "", res->group) &&
            !strcmp(jstr(e, "resource") ?: "", res->plural))
            uncovered_names(res, e, obj, q, n, name_set);
    }
    pthread_mutex_unlock(&lock);
    join_sorted(name_set, &names);
    if (names.len)
        rc = refuse(err, res, obj, "insufficient quota to consume: ", names.data, "");
    else if (scopes.len)
        rc = refuse(err, res, obj, "insufficient quota to match these scopes: [", scopes.data,
                    "]");
    json_decref(name_set);
    ty_buf_free(&scopes);
    ty_buf_free(&names);
    return rc;
}
