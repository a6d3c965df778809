/* admission.c - the admission chain (see admission.h): Pod Security's rules
 * (podsecurity_admit.c) first, then Volcano's queue rules, here.
 *
 * A job may be submitted only to an Open leaf queue other than root (for
 * every job kind that names a queue: Volcano's Job spec.queue, a Kubeflow
 * job's runPolicy.schedulingPolicy.queue); a Queue's parents must not come
 * back to it; a Queue goes only once Closed, and `default` never. */
#include "api/admission.h"

#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/podsecurity.h"
#include "api/quota_admit.h"
#include "api/trainer.h"

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *queue_state(const json_t *q)
{
    return jstr(json_object_get(q, "status"), "state");
}

static bool child_of(const json_t *queue, void *parent)
{
    const char *p = jstr(json_object_get(queue, "spec"), "parent");
    return p && strcmp(p, parent) == 0;
}

static int admit_job_queue(const api_lookup *lk, const api_resource *res, const json_t *obj,
                           ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec");
    const char *queue, *state;
    json_t *q;
    size_t children;

    if (res == &api_podgroup || res == &api_queue)
        return 0;
    if (res == &api_vcjob)
        queue = jstr(spec, "queue");
    else
        queue = jstr(json_object_get(json_object_get(spec, "runPolicy"), "schedulingPolicy"),
                     "queue");
    if (!queue || !*queue)
        return 0;
    if (!(q = lk->get(lk->ctx, &api_queue, "", queue))) {
        if (res == &api_vcjob && strcmp(queue, "default") != 0)
            return ty_seterr(err, TY_EFORBIDDEN, "unable to find job queue: queues.scheduling."
                             "volcano.sh \"%s\" not found", queue);
        return 0;
    }
    state = queue_state(q);
    if (state && strcmp(state, "Open") != 0) {
        ty_seterr(err, TY_EFORBIDDEN, "can only submit job to queue with state `Open`, queue "
                  "`%s` status is `%s`", queue, state);
        json_decref(q);
        return -1;
    }
    json_decref(q);
    if (strcmp(queue, "root") == 0)
        return ty_seterr(err, TY_EFORBIDDEN, "can not submit job to root queue");
    if ((children = lk->count(lk->ctx, &api_queue, child_of, (void *)queue)) > 0)
        return ty_seterr(err, TY_EFORBIDDEN,
                         "can only submit job to leaf queue, queue `%s` has %zu child queues",
                         queue, children);
    return 0;
}

/* A Queue's parent chain, as the stored Queues name it, must not come back
 * to the queue: two queues naming each other froze the scheduler's cycle
 * (it walks the chain). A parent not created yet is allowed (queues come
 * in any order); the scheduler treats it as the root until it exists, and
 * breaks a cycle made by racing writes the same way (scheduler/session.c). */
static int admit_queue_parent(const api_lookup *lk, const json_t *obj, ty_error *err)
{
    const char *name = jstr(json_object_get(obj, "metadata"), "name");
    const char *parent = jstr(json_object_get(obj, "spec"), "parent");
    char at[256];

    if (!name || !parent || !*parent || !strcmp(parent, "root"))
        return 0;
    snprintf(at, sizeof(at), "%s", parent);
    for (int hops = 0; hops < 1000; hops++) {
        json_t *q;
        const char *up;
        if (strcmp(at, name) == 0) {
            meta_invalid_str(err, "spec.parent", parent,
                             "the queue would be its own ancestor (a cycle of parents)");
            err->code = TY_EINVALID;
            api_format_invalid(&api_queue, name, err, err->text, sizeof(err->text));
            return -1;
        }
        if (!(q = lk->get(lk->ctx, &api_queue, "", at)))
            return 0;
        up = jstr(json_object_get(q, "spec"), "parent");
        if (!up || !*up || !strcmp(up, "root")) {
            json_decref(q);
            return 0;
        }
        snprintf(at, sizeof(at), "%s", up);
        json_decref(q);
    }
    return 0; /* a cycle among the others: not this queue's to refuse */
}

/* Deleting an Open queue left its jobs with no queue, and a deleted
 * `default` never came back: closing it first stops new jobs. */
static int admit_queue_delete(const json_t *obj, const char *name, ty_error *err)
{
    const char *state;

    if (strcmp(name, "default") == 0)
        return ty_seterr(err, TY_EFORBIDDEN, "`default` queue can not be deleted");
    if (!obj)
        return 0; /* the delete says NotFound */
    state = queue_state(obj);
    if (!state || strcmp(state, "Closed") != 0)
        return ty_seterr(err, TY_EFORBIDDEN,
                         "only queue with state `Closed` can be deleted, queue `%s` state is "
                         "`%s`",
                         name, state ? state : "Open");
    return 0;
}

int api_admit_mutate(const api_lookup *lk, api_admit_op op, const api_resource *res,
                     json_t *obj, ty_error *err)
{
    /* ResourceQuota: a generated name is settled here (api/quota_admit.h) */
    if (op == API_ADMIT_CREATE && quota_admit_mutate(lk, res, obj, err) < 0)
        return -1;
    if (op == API_ADMIT_CREATE && res == &api_pod && priority_admit_pod(lk, obj, err) < 0)
        return -1;
    return psa_admit_mutate(lk, op, res, obj, err);
}

int api_admit_queue(const api_lookup *lk, api_admit_op op, const api_resource *res,
                    const json_t *obj, const char *name, ty_error *err)
{
    switch (op) {
    case API_ADMIT_CREATE:
        if (admit_job_queue(lk, res, obj, err) < 0)
            return -1;
        return res == &api_queue ? admit_queue_parent(lk, obj, err) : 0;
    case API_ADMIT_UPDATE:
        return res == &api_queue ? admit_queue_parent(lk, obj, err) : 0;
    case API_ADMIT_DELETE:
        return res == &api_queue ? admit_queue_delete(obj, name ? name : "", err) : 0;
    }
    return 0;
}

int api_admit(const api_lookup *lk, api_admit_op op, const api_resource *res,
              const json_t *obj, const char *name, ty_error *err)
{
    if (psa_admit(lk, op, res, obj, name, err) < 0 ||
        api_admit_queue(lk, op, res, obj, name, err) < 0)
        return -1;
    /* a TrainJob's runtime must exist when the job is made (api/trainer.h) */
    if (op == API_ADMIT_CREATE && trainer_admit_trainjob(lk, res, obj, err) < 0)
        return -1;
    /* ResourceQuota last, as kube-apiserver orders it: what it reserves is
     * for a create no other rule refuses (api/quota_admit.h) */
    return op == API_ADMIT_CREATE ? quota_admit(lk, res, obj, err) : 0;
}
