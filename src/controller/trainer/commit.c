/* commit.c - what a TrainJob's pass writes (tpass.h): jobsStatus, the
 * status (the training script's trainerStatus kept), and Trainyard's
 * annotations on the job (the runtime snapshot, restarts, elastic
 * replacements, Job retries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/jsonown.h"
#include "base/log.h"
#include "controller/kit.h"
#include "controller/trainer/tj_int.h"
#include "controller/trainer/tpass.h"
#include "model/finalizers.h"

typedef struct write_args {
    const char *uid;
    const json_t *status;
    const json_t *snapshot;
    long long restarts;
    bool bump;
    long long replacements; /* elastic: the new count, or 0 to leave it */
    const json_t *retries;  /* TJ_ANN_RETRIES to write, or NULL to leave it */
    bool finalizer;         /* add TJ_FINALIZER_RECORD */
} write_args;

/* ---- status ---- */

void tp_jobs_status(tpass *p, bool suspended)
{
    json_t *list = json_array();

    for (size_t i = 0; i < p->nobs; i++) {
        const rj_obs *o = &p->obs[i];
        json_array_append_new(list, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "name", o->name,
                                              "ready", (json_int_t)o->ready, "succeeded",
                                              (json_int_t)o->succeeded, "failed",
                                              (json_int_t)o->failed, "active",
                                              (json_int_t)(suspended ? 0 : o->active),
                                              "suspended",
                                              (json_int_t)(suspended ? o->replicas : 0)));
    }
    json_object_set_new(p->status, "jobsStatus", list);
}

static bool same_job(const json_t *obj, const write_args *w)
{
    return !strcmp(tp_str_at(obj, "metadata", "uid") ?: "", w->uid);
}

static int write_status(json_t *obj, void *arg, ty_error *err)
{
    write_args *w = arg;

    if (same_job(obj, w)) {
        /* status.trainerStatus is the training script's (the progress
         * endpoint writes it): what the object has now stays, not the
         * copy this pass read at its start. */
        json_t *ts = json_incref(json_object_get(json_object_get(obj, "status"), "trainerStatus"));
        json_t *st = json_deep_copy(w->status);
        if (!st) {
            json_decref(ts);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
        if (ts)
            json_object_set_new(st, "trainerStatus", ts);
        else
            json_object_del(st, "trainerStatus");
        json_object_set_new(obj, "status", st);
    }
    return 0;
}

/* Whether the job holds a snapshot the controller can read: one that is
 * not (a master wrote over it) is taken again and written once, not taken
 * again at every pass from the live runtime. */
static bool snapshot_readable(const json_t *v)
{
    json_t *o = json_is_string(v) ? json_loads(json_string_value(v), 0, NULL) : NULL;
    bool ok = json_is_object(o);

    json_decref(o);
    return ok;
}

/* The snapshot (once) and the restart count, Trainyard's annotations. */
static int write_meta(json_t *obj, void *arg, ty_error *err)
{
    write_args *w = arg;
    json_t *ann;
    char *text;

    if (!same_job(obj, w))
        return 0;
    if (w->finalizer && !json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") &&
        finalizer_add(obj, TJ_FINALIZER_RECORD) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    ann = ty_json_own(json_object_get(obj, "metadata"), "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        json_object_set_new(json_object_get(obj, "metadata"), "annotations", ann);
    }
    if (w->snapshot && !snapshot_readable(json_object_get(ann, TJ_ANN_SNAPSHOT)) &&
        (text = json_dumps(w->snapshot, JSON_COMPACT | JSON_SORT_KEYS))) {
        json_object_set_new(ann, TJ_ANN_SNAPSHOT, json_string(text));
        free(text);
    }
    if (w->bump) {
        char n[24];
        snprintf(n, sizeof(n), "%lld", w->restarts + 1);
        json_object_set_new(ann, TJ_ANN_RESTARTS, json_string(n));
        json_object_del(ann, TJ_ANN_RETRIES); /* new Jobs, new counts */
    } else if (w->retries &&
               (text = json_dumps(w->retries, JSON_COMPACT | JSON_SORT_KEYS))) {
        json_object_set_new(ann, TJ_ANN_RETRIES, json_string(text));
        free(text);
    }
    if (w->replacements) {
        char n[24];
        snprintf(n, sizeof(n), "%lld", w->replacements);
        json_object_set_new(ann, TJ_ANN_REPLACED, json_string(n));
    }
    return 0;
}

void tp_commit(tpass *p)
{
    long long replaced = (long long)json_object_size(p->replaced);
    write_args w = {.uid = p->uid, .status = p->status, .snapshot = p->snapshot,
                    .restarts = p->restarts, .bump = p->bump_restart,
                    .replacements = replaced ? p->replacements + replaced : 0,
                    .retries = json_object_size(p->retried) ? p->retries : NULL,
                    .finalizer = tj_record_retention() > 0 &&
                                 !finalizer_has(p->job, TJ_FINALIZER_RECORD)};
    const char *res = api_store_key(&api_trainjob);
    kc_op ops[2];
    size_t n = 0;

    if (p->snapshot || p->bump_restart || w.replacements || w.retries || w.finalizer)
        ops[n++] = kc_op_mutate(res, p->ns, p->name, write_meta, &w, 0);
    if (!json_equal(json_object_get(p->job, "status"), p->status))
        ops[n++] = kc_op_mutate(res, p->ns, p->name, write_status, &w, KC_STATUS);
    if (!n)
        return;
    kc_write_all(p->s, ops, n);
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].result && ops[i].err.code != TY_ENOTFOUND) {
            ty_warn("trainjob %s/%s: %s", p->ns, p->name, ops[i].err.text);
            p->rc = -1;
        }
        kc_op_clear(&ops[i]);
    }
}
