/* record.c - a TrainJob's JobRecord (api/kinds.h, kind_jobrecord.c): what
 * it was when it was deleted, kept for the record retention (tj_int.h).
 *
 * The controller holds each TrainJob with the finalizer TJ_FINALIZER_RECORD
 * (added at its first pass); when the job is being deleted its pods still
 * exist (the garbage collector waits for the job itself to go), so the
 * pass writes the record from the job and its pods, then lets the job go.
 * A record is swept once it is older than the retention; its events queue
 * it, and a sweep that finds it young asks to be woken when it is due. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "controller/kit.h"
#include "controller/trainer/tj_int.h"
#include "controller/trainer/trainjob_ctl.h"
#include "model/finalizers.h"

static pthread_mutex_t retention_mu = PTHREAD_MUTEX_INITIALIZER;
static long long retention_s = TJ_RECORD_RETENTION_DEFAULT;

void trainjobs_set_record_retention(long long seconds)
{
    pthread_mutex_lock(&retention_mu);
    retention_s = seconds < 0 ? 0 : seconds;
    pthread_mutex_unlock(&retention_mu);
}

long long tj_record_retention(void)
{
    long long s;

    pthread_mutex_lock(&retention_mu);
    s = retention_s;
    pthread_mutex_unlock(&retention_mu);
    return s;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

void tj_record_name(const char *job, const char *uid, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%.8s", job, uid);
}

/* The first container's terminated state: state, else lastState. */
static const json_t *terminated(const json_t *pod)
{
    const json_t *cs = json_array_get(json_object_get(json_object_get(pod, "status"),
                                                      "containerStatuses"), 0);
    const json_t *t = json_object_get(json_object_get(cs, "state"), "terminated");

    return t ? t : json_object_get(json_object_get(cs, "lastState"), "terminated");
}

static json_t *pod_summary(const json_t *pod)
{
    const json_t *t = terminated(pod);
    const char *reason = str_at(pod, "status", "reason");
    json_t *o = json_pack("{s:s, s:s, s:I}", "name", str_at(pod, "metadata", "name") ?: "",
                          "phase", kit_pod_phase(pod), "restarts",
                          (json_int_t)kit_pod_restarts(pod));
    int code = kit_pod_exit_code(pod, NULL);

    if (code >= 0)
        json_object_set_new(o, "exitCode", json_integer(code));
    if (!reason)
        reason = json_string_value(json_object_get(t, "reason"));
    if (reason)
        json_object_set_new(o, "reason", json_string(reason));
    if (json_is_string(json_object_get(t, "finishedAt")))
        json_object_set(o, "finishedAt", json_object_get(t, "finishedAt"));
    return o;
}

int tj_record_write(ty_kc *s, const json_t *job, const json_t *pods, ty_error *err)
{
    const json_t *meta = json_object_get(job, "metadata"), *pod;
    static const char *const keep[] = {"name", "namespace", "uid", "labels", "annotations",
                                       "creationTimestamp", NULL};
    json_t *jm = json_object(), *list = json_array(), *rec, *status;
    long long omitted = 0;
    char name[320];
    size_t i;
    ty_obj *o;

    for (size_t k = 0; keep[k]; k++)
        if (json_object_get(meta, keep[k]))
            json_object_set(jm, keep[k], json_object_get(meta, keep[k]));
    json_array_foreach(pods, i, pod) {
        if (json_array_size(list) >= JOBRECORD_PODS_MAX) {
            omitted++;
            continue;
        }
        json_array_append_new(list, pod_summary(pod));
    }
    tj_record_name(str_at(job, "metadata", "name") ?: "", str_at(job, "metadata", "uid") ?: "",
                   name, sizeof(name));
    status = json_object_get(job, "status");
    status = status ? json_incref(status) : json_object();
    rec = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:{s:O, s:O, s:o, s:O, s:o},"
                    " s:s, s:o}}",
                    "apiVersion", "trainyard.io/v1", "kind", "JobRecord", "metadata", "name",
                    name, "namespace", str_at(job, "metadata", "namespace") ?: "", "labels",
                    TJ_LABEL_RECORD_KIND, "TrainJob", TJ_LABEL_RECORD_JOB,
                    str_at(job, "metadata", "name") ?: "", "spec", "job", "apiVersion",
                    json_object_get(job, "apiVersion") ?: json_null(), "kind",
                    json_object_get(job, "kind") ?: json_null(), "metadata", jm, "spec",
                    json_object_get(job, "spec") ?: json_null(), "status", status, "deletedAt",
                    str_at(job, "metadata", "deletionTimestamp") ?: "", "pods", list);
    if (!rec)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (omitted)
        json_object_set_new(json_object_get(rec, "spec"), "podsOmitted", json_integer(omitted));
    o = kc_create(s, api_store_key(&api_jobrecord), str_at(job, "metadata", "namespace") ?: "",
                  rec, err);
    if (!o && err->code == TY_EEXISTS) { /* written by an earlier pass */
        ty_error_clear(err);
        return 0;
    }
    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

int tj_record_sweep(ty_kc *s, const char *ns, const char *name, time_t *wake_at)
{
    long long keep = tj_record_retention();
    time_t made, due;
    ty_error err;
    ty_obj *o;
    int rc = 0;

    ty_error_init(&err);
    if (!(o = kc_get(s, api_store_key(&api_jobrecord), ns, name, &err))) {
        rc = err.code == TY_ENOTFOUND ? 0 : -1;
        ty_error_clear(&err);
        return rc;
    }
    if (str_at(ty_obj_json(o), "metadata", "deletionTimestamp") ||
        ty_time_parse(str_at(ty_obj_json(o), "metadata", "creationTimestamp") ?: "", &made) < 0) {
        ty_obj_unref(o);
        return 0;
    }
    due = made + (time_t)keep;
    if (time(NULL) < due) {
        *wake_at = due;
    } else if (kit_delete(s, api_store_key(&api_jobrecord), ty_obj_json(o), NULL,
                          TJ_COMPONENT) < 0) {
        rc = -1;
    }
    ty_obj_unref(o);
    return rc;
}

static int drop_record_finalizer(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    if (strcmp(str_at(obj, "metadata", "uid") ?: "", arg))
        return 0;
    return finalizer_remove(obj, TJ_FINALIZER_RECORD) < 0 ? -1 : 0;
}

int tj_record_finalize(ty_kc *s, const json_t *job)
{
    const char *ns = str_at(job, "metadata", "namespace") ?: "";
    const char *name = str_at(job, "metadata", "name") ?: "";
    const char *uid = str_at(job, "metadata", "uid");
    json_t *pods = NULL;
    ty_error err;
    ty_obj *o;
    int rc = 0;

    if (!finalizer_has(job, TJ_FINALIZER_RECORD))
        return 0;
    ty_error_init(&err);
    if (tj_record_retention() > 0) {
        if (kit_list_owned_views(s, api_store_key(&api_pod), ns, uid, NULL, NULL, &pods) < 0 ||
            tj_record_write(s, job, pods, &err) < 0) {
            /* a namespace being deleted takes no new object (nor would it
             * keep one): the job goes without a record */
            bool never = err.code == TY_EFORBIDDEN || err.code == TY_ENOTFOUND;
            ty_warn("trainjob %s/%s: its record: %s%s", ns, name, err.text,
                    never ? "; the job goes without one" : "");
            json_decref(pods);
            ty_error_clear(&err);
            if (!never)
                return -1;
            pods = NULL;
        }
        json_decref(pods);
    }
    o = kc_mutate(s, api_store_key(&api_trainjob), ns, name, drop_record_finalizer, (void *)uid,
                  0, &err);
    if (!o && err.code != TY_ENOTFOUND)
        rc = -1;
    ty_obj_unref(o);
    ty_error_clear(&err);
    return rc;
}
