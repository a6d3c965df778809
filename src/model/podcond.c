/* podcond.c - see podcond.h. */
#include "model/podcond.h"

#include <string.h>
#include <time.h>

#include "base/jsonget.h"
#include "base/jsonown.h"
#include "base/timeutil.h"

json_t *podcond_status(json_t *obj)
{
    json_t *st = json_object_get(obj, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    return st;
}

void podcond_set(json_t *status, const char *type, const char *value, const char *reason,
                 const char *message, const char *now, bool probe)
{
    json_t *conds = ty_json_own(status, "conditions"), *c = NULL, *it;
    size_t i, at = 0;

    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    json_array_foreach(conds, i, it)
        if (!strcmp(ty_jstr(it, "type"), type))
            at = i + 1;
    if (at)
        c = ty_json_own_at(conds, at - 1);
    if (!c) {
        c = json_pack("{s:s}", "type", type);
        json_array_append_new(conds, c);
    }
    if (strcmp(ty_jstr(c, "status"), value) || !json_object_get(c, "lastTransitionTime")) {
        json_object_set_new(c, "status", json_string(value));
        json_object_set_new(c, "lastTransitionTime", json_string(now));
    }
    if (probe && !json_object_get(c, "lastProbeTime"))
        json_object_set_new(c, "lastProbeTime", json_null());
    if (reason)
        json_object_set_new(c, "reason", json_string(reason));
    else
        json_object_del(c, "reason");
    if (message && *message)
        json_object_set_new(c, "message", json_string(message));
    else if (message)
        json_object_del(c, "message");
}

const char *podcond_qos_class(const json_t *pod)
{
    size_t i;
    json_t *ct;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, ct) {
        const json_t *r = json_object_get(ct, "resources");
        if (json_object_size(json_object_get(r, "requests")) ||
            json_object_size(json_object_get(r, "limits")))
            return "Burstable";
    }
    return "BestEffort";
}

int podcond_bind(json_t *pod, const char *node, const char *uid, ty_error *err)
{
    json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const char *name = ty_jstr(meta, "name"), *cur = ty_jstr(spec, "nodeName");
    char now[40];

    if (uid && *uid && strcmp(uid, ty_jstr(meta, "uid")))
        return ty_seterr(err, TY_ECONFLICT,
                         "Operation cannot be fulfilled on pods/binding \"%s\": "
                         "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                         name, uid, ty_jstr(meta, "uid"));
    if (json_object_get(meta, "deletionTimestamp"))
        return ty_seterr(err, TY_ECONFLICT,
                         "pod %s is being deleted, cannot be assigned to a host", name);
    if (*cur)
        return ty_seterr(err, TY_ECONFLICT, "pod %s is already assigned to node \"%s\"", name,
                         cur);
    if (!json_is_object(spec))
        return ty_seterr(err, TY_EINVALID, "pod %s has no spec", name);
    json_object_set_new(spec, "nodeName", json_string(node));
    ty_time_now(now, sizeof(now));
    podcond_set(podcond_status(pod), "PodScheduled", "True", NULL, "", now, true);
    return 0;
}
