/* ctl_fixture.h - helpers for synchronous controller tests over the fake
 * client (client/kc_fake.h): seed objects from YAML as the API server would
 * have stored them, read them back, and look at what a pass wrote. No
 * store, no threads, no sleeps: a test calls one reconcile and looks. */
#ifndef TY_TESTS_UNIT_CTL_FIXTURE_H
#define TY_TESTS_UNIT_CTL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/registry.h"
#include "client/kc_fake.h"
#include "model/yaml.h"

/* The object of a YAML manifest (printf-style), defaulted and validated as
 * the API server would (api_prepare), seeded into c in namespace default
 * (unless it names one, or is cluster-scoped). Returns its uid (static
 * buffer, valid until the next call). */
static const char *ctl_put_yaml(ty_kc *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), unused));
static const char *ctl_put_yaml(ty_kc *c, const char *fmt, ...)
{
    static char uid[64];
    char yaml[8192];
    va_list ap;
    ty_error err;
    json_t *obj, *meta;
    const api_resource *res;
    ty_obj *o;

    va_start(ap, fmt);
    vsnprintf(yaml, sizeof(yaml), fmt, ap);
    va_end(ap);
    ty_error_init(&err);
    obj = yaml_load_one(yaml, strlen(yaml), &err);
    if (!obj)
        fail_msg("yaml: %s", err.text);
    res = api_find_kind(json_string_value(json_object_get(obj, "apiVersion")),
                        json_string_value(json_object_get(obj, "kind")));
    assert_non_null(res);
    if (api_prepare(res, obj, NULL, &err) != 0)
        fail_msg("invalid: %s", err.text);
    meta = json_object_get(obj, "metadata");
    if (res->namespaced && !json_object_get(meta, "namespace"))
        json_object_set_new(meta, "namespace", json_string("default"));
    o = kc_fake_put(c, api_store_key(res), obj, &err);
    if (!o)
        fail_msg("put: %s", err.text);
    snprintf(uid, sizeof(uid), "%s",
             json_string_value(json_object_get(json_object_get(ty_obj_json(o), "metadata"),
                                               "uid")));
    ty_obj_unref(o);
    return uid;
}

/* A copy of resource default/name (ns "" for cluster-scoped: pass it in
 * name's place as ctl_get_in), or NULL. Caller decrefs. */
static json_t *ctl_get_in(ty_kc *c, const char *resource, const char *ns, const char *name)
{
    ty_obj *o = kc_get(c, resource, ns, name, NULL);
    json_t *j = o ? ty_obj_json_copy(o) : NULL;

    ty_obj_unref(o);
    return j;
}

static json_t *ctl_get(ty_kc *c, const char *resource, const char *name)
    __attribute__((unused));
static json_t *ctl_get(ty_kc *c, const char *resource, const char *name)
{
    return ctl_get_in(c, resource, "default", name);
}

static bool ctl_exists(ty_kc *c, const char *resource, const char *name)
    __attribute__((unused));
static bool ctl_exists(ty_kc *c, const char *resource, const char *name)
{
    json_t *j = ctl_get(c, resource, name);

    json_decref(j);
    return j != NULL;
}

/* A member by dotted path ("status.phase"), borrowed from obj. */
static const json_t *ctl_at(const json_t *obj, const char *path)
{
    char key[128];
    const char *dot;

    while (obj && (dot = strchr(path, '.'))) {
        snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
        obj = json_object_get(obj, key);
        path = dot + 1;
    }
    return obj ? json_object_get(obj, path) : NULL;
}

static const char *ctl_str(const json_t *obj, const char *path) __attribute__((unused));
static const char *ctl_str(const json_t *obj, const char *path)
{
    return json_string_value(ctl_at(obj, path));
}

/* The name of every successful action matching verb on what (as
 * kc_fake_count), in order, comma-separated: what a failed assertion
 * prints. Static buffer. */
static const char *ctl_names(ty_kc *c, const char *verb, const char *what)
    __attribute__((unused));
static const char *ctl_names(ty_kc *c, const char *verb, const char *what)
{
    static char buf[4096];
    size_t n, len = 0;
    const kc_fake_action *a = kc_fake_actions(c, &n);

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *slash = what ? strchr(what, '/') : NULL;
        size_t rlen = slash ? (size_t)(slash - what) : what ? strlen(what) : 0;
        if (a[i].code || (verb && strcmp(verb, a[i].verb)))
            continue;
        if (what && (strlen(a[i].resource) != rlen || strncmp(what, a[i].resource, rlen) ||
                     strcmp(slash ? slash + 1 : "", a[i].subresource)))
            continue;
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? "," : "",
                                a[i].name);
        if (len >= sizeof(buf))
            break;
    }
    return buf;
}

/* How many Events with reason the writes so far recorded (an Event folded
 * into an earlier one counts again). */
static size_t ctl_events(ty_kc *c, const char *reason) __attribute__((unused));
static size_t ctl_events(ty_kc *c, const char *reason)
{
    size_t n, count = 0;
    const kc_fake_action *a = kc_fake_actions(c, &n);

    for (size_t i = 0; i < n; i++)
        if (!a[i].code && !strcmp(a[i].resource, "events") && a[i].obj &&
            !strcmp(json_string_value(json_object_get(ty_obj_json(a[i].obj), "reason")) ?: "",
                    reason))
            count++;
    return count;
}

/* The value of env var name in the first container of pod, or NULL. */
static const char *ctl_env(const json_t *pod, const char *name) __attribute__((unused));
static const char *ctl_env(const json_t *pod, const char *name)
{
    const json_t *ct = json_array_get(ctl_at(pod, "spec.containers"), 0), *e;
    size_t i;

    json_array_foreach(json_object_get(ct, "env"), i, e)
        if (!strcmp(json_string_value(json_object_get(e, "name")) ?: "", name))
            return json_string_value(json_object_get(e, "value"));
    return NULL;
}

#endif
