/* reconcile_status.c - the end of a job's pass: replicaStatuses as upstream
 * writes them, and the write of what the pass changed (pass.h). */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "base/jsonown.h"
#include "base/log.h"
#include "controller/jobs/pass.h"

/* replicaStatuses as upstream writes them: counts omitted when zero, and the
 * label selector of the type's pods. */
void pass_replica_statuses(pass *p, bool succeeded_now)
{
    json_t *rs = json_object();
    char lower[32];

    for (size_t t = 0; t < p->ntypes; t++) {
        const jf_counts *c = &p->counts[t];
        long long active = succeeded_now ? 0 : c->active;
        long long succeeded = c->succeeded + (succeeded_now ? c->active : 0);
        long long failed = c->failed + 0;
        json_t *one = json_object();
        size_t i;
        json_t *pod;

        /* Failed pods awaiting recreation are failed too, as upstream counts. */
        json_array_foreach(p->retry, i, pod)
            if (kf_replica_type_canonical(p->c.kind, pass_label(pod, JOBS_LABEL_TYPE)) == c->type)
                failed++;
        if (active)
            json_object_set_new(one, "active", json_integer(active));
        if (succeeded)
            json_object_set_new(one, "succeeded", json_integer(succeeded));
        if (failed)
            json_object_set_new(one, "failed", json_integer(failed));
        jf_lower(c->type, lower, sizeof(lower));
        json_object_set_new(one, "labelSelector",
                            json_pack("{s:{s:s, s:s, s:s}}", "matchLabels", JOBS_LABEL_JOB_NAME,
                                      p->c.name, JOBS_LABEL_OPERATOR,
                                      p->c.kind->operator_name, JOBS_LABEL_TYPE, lower));
        json_object_set_new(rs, c->type, one);
    }
    json_object_set_new(p->status, "replicaStatuses", rs);
}

typedef struct write_args {
    const char *uid;
    json_t *status;
    long long restarts; /* -1: unchanged */
} write_args;

static bool same_job(const json_t *obj, const write_args *w)
{
    const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));

    return uid && strcmp(uid, w->uid) == 0;
}

static int write_status(json_t *obj, void *arg, ty_error *err)
{
    write_args *w = arg;

    (void)err;
    if (!same_job(obj, w))
        return 0; /* a new job of the same name: its own pass will come */
    json_object_set(obj, "status", w->status);
    return 0;
}

static int write_restarts(json_t *obj, void *arg, ty_error *err)
{
    write_args *w = arg;
    json_t *meta = json_object_get(obj, "metadata"), *ann;
    char buf[32];

    (void)err;
    if (!same_job(obj, w))
        return 0;
    ann = ty_json_own(meta, "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    snprintf(buf, sizeof(buf), "%lld", w->restarts);
    json_object_set_new(ann, JOBS_ANN_RESTARTS, json_string(buf));
    return 0;
}

void pass_commit(pass *p)
{
    const json_t *old = json_object_get(p->job, "status");
    write_args w = {.status = p->status, .restarts = p->added ? p->restarts + p->added : -1};
    const char *res = api_store_key(p->c.kind->resource);
    kc_op ops[2 + PASS_EVENTS];
    size_t n = 0, nw;

    if (json_equal(old, p->status) && w.restarts < 0) {
        kc_write_all(p->s, p->events, p->nevents);
        for (size_t i = 0; i < p->nevents; i++)
            kc_op_clear(&p->events[i]);
        p->nevents = 0;
        return;
    }
    /* Only a pass that changed something says it reconciled: writing the time
     * alone would wake this controller again, for ever. */
    json_object_set_new(p->status, "lastReconcileTime", json_string(p->nows));
    w.uid = json_string_value(json_object_get(json_object_get(p->job, "metadata"), "uid"));
    /* The restarts first, in a metadata write (it changes only metadata:
     * the spec-top hint spares a deep copy of the job), then the status. */
    if (w.restarts >= 0)
        ops[n++] = kc_op_mutate(res, p->c.ns, p->c.name, write_restarts, &w, KC_SPEC_TOP);
    /* In the tree arena, as the pods' status writes are: a version's tree
     * goes when its event leaves the store's tree window, and the reaper's
     * walk over one carved in order costs a third of one malloc scattered
     * (base/treearena.h). */
    ops[n] = kc_op_mutate(res, p->c.ns, p->c.name, write_status, &w, KC_STATUS);
    ops[n++].flags |= KC_ARENA;
    nw = n;
    for (size_t i = 0; i < p->nevents; i++) /* the Events after the status they tell of */
        ops[n++] = p->events[i];
    p->nevents = 0;
    kc_write_all(p->s, ops, n);
    if (ops[nw - 1].result)
        ty_obj_rv(ops[nw - 1].result, p->wrote_rv, TY_RV_MAX);
    for (size_t i = nw; i < n; i++)
        kc_op_clear(&ops[i]);
    n = nw;
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].result && ops[i].err.code != TY_ENOTFOUND) {
            ty_warn("jobs: %s of %s %s/%s: %s", ops[i].fn == write_status ? "status" : "restarts",
                    p->c.kind->kind, p->c.ns, p->c.name, ops[i].err.text);
            p->rc = -1;
        }
        kc_op_clear(&ops[i]);
    }
}
