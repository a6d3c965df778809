/* kc_status.c - the status subresource's rule for client implementations
 * (see kc_status.h). */
#include "client/kc_status.h"

#include <string.h>

#include "base/log.h"

bool kc_status_may_change(bool pod, const char *key)
{
    return !strcmp(key, "resourceVersion") ||
           (pod && (!strcmp(key, "labels") || !strcmp(key, "annotations") ||
                    !strcmp(key, "finalizers")));
}

/* Whether fn changed obj beyond what a status write may: top (a one-level
 * copy of obj) and meta (of its metadata) were taken before it ran. A
 * member it changed is a new value (the rest is shared, and kc.h's
 * KC_STATUS forbids changing a shared one in place). */
static bool beyond_status(const kc_status_call *c, const json_t *obj, const json_t *top,
                          const json_t *meta)
{
    const json_t *m = json_object_get(obj, "metadata");
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)obj, k, v)
        if (strcmp(k, "status") && strcmp(k, "metadata") && json_object_get(top, k) != v)
            return true;
    json_object_foreach((json_t *)top, k, v)
        if (strcmp(k, "status") && !json_object_get(obj, k))
            return true;
    json_object_foreach((json_t *)m, k, v)
        if (!kc_status_may_change(c->pod, k) && json_object_get(meta, k) != v)
            return true;
    json_object_foreach((json_t *)meta, k, v)
        if (!kc_status_may_change(c->pod, k) && !json_object_get(m, k))
            return true;
    return false;
}

void kc_status_take_meta(bool pod, json_t *meta, const json_t *now)
{
    const char *k;
    json_t *v;
    void *tmp;

    json_object_foreach_safe(meta, tmp, k, v)
        if (kc_status_may_change(pod, k) && !json_object_get(now, k))
            json_object_del(meta, k);
    json_object_foreach((json_t *)now, k, v)
        if (kc_status_may_change(pod, k))
            json_object_set(meta, k, v);
}

int kc_status_only_fn(json_t *obj, void *arg, ty_error *err)
{
    const kc_status_call *c = arg;
    json_t *top = json_copy(obj), *meta = json_copy(json_object_get(obj, "metadata"));
    json_t *st;
    int rc;

    if (!top) {
        json_decref(meta);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    rc = c->fn(obj, c->arg, err);
    if (rc == 0 && beyond_status(c, obj, top, meta)) {
        const json_t *m = json_object_get(top, "metadata");
        ty_warn("kc: a status write of %s %s/%s changed more than its status: dropped",
                c->pod ? "pod" : "object", json_string_value(json_object_get(m, "namespace")) ?: "",
                json_string_value(json_object_get(m, "name")) ?: "");
        if (meta)
            kc_status_take_meta(c->pod, meta, json_object_get(obj, "metadata"));
        st = json_incref(json_object_get(obj, "status"));
        json_object_clear(obj);
        json_object_update(obj, top);
        if (meta)
            json_object_set(obj, "metadata", meta);
        json_object_del(obj, "status");
        if (st)
            json_object_set(obj, "status", st);
        json_decref(st);
    }
    json_decref(top);
    json_decref(meta);
    return rc;
}
