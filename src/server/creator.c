/* creator.c - see creator.h. */
#include "server/creator.h"

#include "api/kinds.h"
#include "api/kubeflow.h"

bool creator_is_job_kind(const api_resource *res)
{
    return res == &api_vcjob || res == &api_trainjob || kf_kind_for_resource(res) != NULL;
}

/* obj.metadata.annotations, made when absent (borrowed). */
static json_t *annotations(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata"), *a;

    if (!json_is_object(md))
        return NULL;
    a = json_object_get(md, "annotations");
    if (!json_is_object(a)) {
        a = json_object();
        json_object_set_new(md, "annotations", a);
    }
    return a;
}

static void drop_if_empty(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    if (json_object_size(json_object_get(md, "annotations")) == 0)
        json_object_del(md, "annotations");
}

void creator_stamp(const api_resource *res, json_t *obj, const ty_user *u)
{
    json_t *a;

    if (!creator_is_job_kind(res) || !(a = annotations(obj)))
        return;
    if (u)
        json_object_set_new(a, CREATOR_ANNOTATION, json_string(u->name));
    else
        json_object_del(a, CREATOR_ANNOTATION);
    drop_if_empty(obj);
}

void creator_keep(const api_resource *res, json_t *nw, const json_t *old)
{
    const json_t *was = json_object_get(
        json_object_get(json_object_get(old, "metadata"), "annotations"), CREATOR_ANNOTATION);
    json_t *a;

    if (!creator_is_job_kind(res) || !(a = annotations(nw)))
        return;
    if (was)
        json_object_set(a, CREATOR_ANNOTATION, (json_t *)was);
    else
        json_object_del(a, CREATOR_ANNOTATION);
    drop_if_empty(nw);
}

void creator_guard_state(const api_resource *res, json_t *nw, const json_t *old,
                         const ty_user *u)
{
    static const char *const state[] = {"trainyard.io/restarts", "trainyard.io/runtime-snapshot",
                                         "trainyard.io/node-replacements",
                                         "trainyard.io/job-retries"};
    const json_t *had = json_object_get(json_object_get(old, "metadata"), "annotations");
    json_t *a;

    if (!u || userinfo_in_group(u, USERINFO_MASTERS) || !creator_is_job_kind(res) ||
        !(a = annotations(nw)))
        return;
    for (size_t i = 0; i < sizeof(state) / sizeof(state[0]); i++) {
        const json_t *was = json_object_get(had, state[i]);
        if (was)
            json_object_set(a, state[i], (json_t *)was);
        else
            json_object_del(a, state[i]);
    }
    drop_if_empty(nw);
}
