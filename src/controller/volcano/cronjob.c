/* cronjob.c - Volcano's CronJob controller (see vcflow.h).
 *
 * Keys are "namespace/name" of CronJobs, fed by events on CronJobs and on the
 * Volcano Jobs they control. A pass, as Volcano's controller (a port of
 * Kubernetes' CronJob controller):
 *   1. Jobs that finished (Completed, Failed, Terminated) leave status.active
 *      (Event SawCompletedJob); a Completed one's state.lastTransitionTime
 *      may advance status.lastSuccessfulTime; beyond successfulJobsHistoryLimit
 *      and failedJobsHistoryLimit the oldest finished Jobs are deleted.
 *      Active references to Jobs that are gone are dropped (StaleReference).
 *   2. Unless suspended: the latest scheduled time not yet started, within
 *      startingDeadlineSeconds, by the schedule read in spec.timeZone (else
 *      the server's local zone), starts a Job "<name>-<minutes>" from the
 *      template, as concurrencyPolicy allows (Forbid: not while one is
 *      active; Replace: the active ones are deleted first).
 *   3. status written when it changed; the queue's timer brings the next pass
 *      at the next scheduled time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "api/meta.h"
#include "client/events.h"
#include "controller/kit.h"
#include "controller/volcano/vc_int.h"
#include "controller/volcano/vcflow.h"
#include "controller/workqueue.h"

#define CRON_WORKERS 2
#define VC_API_VERSION "batch.volcano.sh/v1alpha1"
#define ANN_SCHEDULED "volcano.sh/cronjob-scheduled-timestamp"
#define TOO_MANY_MISSED 100

struct ty_vccron {
    ty_kc *s;
    ty_workqueue *q;
    tz_zone *local; /* the zone of CronJobs without spec.timeZone */
    const char *watched[3];
};

/* ---- schedule arithmetic ------------------------------------------------ */

/* The latest time of spec in (earliest, now] (0: none) and how many there
 * were, found as upstream does: from the first two times' interval, then
 * walking the last few. -1 when two times are less than a second apart. */
static int most_recent(const cron_spec *spec, const tz_zone *z, int64_t earliest, int64_t now,
                       int64_t *recent, int64_t *missed)
{
    int64_t t1 = cron_next(spec, z, earliest), t2, interval, n, from;

    *recent = 0;
    *missed = 0;
    if (t1 == 0 || now < t1)
        return 0;
    t2 = cron_next(spec, z, t1);
    if (t2 == 0 || now < t2) {
        *recent = t1;
        return 0;
    }
    interval = t2 - t1;
    if (interval < 1)
        return -1;
    n = (now - t1) / interval + 1;
    from = t1 + (n - 2) * interval;
    for (int64_t t = cron_next(spec, z, from); t != 0 && t <= now; t = cron_next(spec, z, t))
        *recent = t;
    *missed = n;
    return 0;
}

int vccron_due(const cron_spec *spec, const tz_zone *z, int64_t earliest, int64_t deadline,
               int64_t now, int64_t *scheduled, int64_t *wake, int64_t *missed)
{
    int64_t from = earliest, recent, n, base;
    int rc;

    if (deadline >= 0 && now - deadline > from)
        from = now - deadline;
    rc = most_recent(spec, z, from, now, scheduled, missed);
    if (rc == 0 && *scheduled > now)
        *scheduled = 0;
    /* The next look: after the latest time, whether it ran or was missed. */
    if (most_recent(spec, z, earliest, now, &recent, &n) < 0)
        base = now;
    else if (recent)
        base = recent;
    else
        base = n == 0 ? earliest : now;
    *wake = cron_next(spec, z, base);
    return rc;
}

void vccron_job_name(const char *cronjob, int64_t t, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%lld", cronjob, (long long)(t / 60));
}

/* ---- keys ---------------------------------------------------------------- */

static void enqueue(ty_workqueue *q, const char *ns, const char *name)
{
    char key[600];

    if (!ns || !name)
        return;
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    wq_add(q, key);
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    ty_vccron *c = ctx;
    const char *ns, *name;
    json_t *meta, *r;
    size_t i;

    ty_obj_key(ev->obj, &ns, &name);
    if (strcmp(ev->resource, api_store_key(&api_vccronjob)) == 0) {
        if (ev->type != KC_DELETED)
            enqueue(q, ns, name);
        return;
    }
    if (kc_count_hint(c->s, api_store_key(&api_vccronjob)) == 0)
        return;
    meta = ty_obj_metadata(ev->obj);
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
        if (json_is_true(json_object_get(r, "controller")) &&
            !strcmp(ty_jstr(r, "apiVersion"), VC_API_VERSION) &&
            !strcmp(ty_jstr(r, "kind"), "CronJob"))
            enqueue(q, ns, json_string_value(json_object_get(r, "name")));
    json_decref(meta);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    kc_list l;
    ty_error err;
    (void)ctx;

    ty_error_init(&err);
    if (kc_list_objects(s, api_store_key(&api_vccronjob), NULL, &l, &err) < 0) {
        ty_error_clear(&err);
        return;
    }
    for (size_t k = 0; k < l.n; k++) {
        const char *ns, *name;
        ty_obj_key(l.items[k], &ns, &name);
        enqueue(q, ns, name);
    }
    kc_list_free(&l);
}

/* ---- one pass ------------------------------------------------------------ */

typedef struct {
    ty_vccron *c;
    const json_t *cj;       /* the CronJob (a copy of the stored one) */
    const char *ns, *name;
    json_t *active;         /* status.active as it will be written */
    char last_schedule[40]; /* status.lastScheduleTime ("" none) */
    char last_success[40];  /* status.lastSuccessfulTime ("" none) */
} pass;

static const char *phase_of(const json_t *job)
{
    return ty_jpath(job, "status", "state", "phase", NULL);
}

static bool finished(const json_t *job)
{
    const char *ph = phase_of(job);
    return !strcmp(ph, "Completed") || !strcmp(ph, "Failed") || !strcmp(ph, "Terminated");
}

static long active_index(const json_t *active, const char *uid, const char *name)
{
    size_t i;
    json_t *r;

    json_array_foreach(active, i, r)
        if ((uid && !strcmp(ty_jstr(r, "uid"), uid)) ||
            (name && !strcmp(ty_jstr(r, "name"), name)))
            return (long)i;
    return -1;
}

static json_t *ref_of(const json_t *job)
{
    const json_t *m = json_object_get(job, "metadata");
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind", "Job", "namespace",
                     ty_jstr(m, "namespace"), "name", ty_jstr(m, "name"), "uid", ty_jstr(m, "uid"),
                     "apiVersion", VC_API_VERSION, "resourceVersion",
                     ty_jstr(m, "resourceVersion"));
}

/* Deletes job (Background) and drops it from active. */
static bool delete_job(pass *p, const json_t *job)
{
    const json_t *m = json_object_get(job, "metadata");
    kc_delete_opts o = {.propagation = KC_PROPAGATE_BACKGROUND,
                           .precondition_uid = ty_jstr(m, "uid")};
    bool deleted;
    long i;
    ty_error err;
    ty_obj *gone;

    ty_error_init(&err);
    gone = kc_delete(p->c->s, api_store_key(&api_vcjob), p->ns, ty_jstr(m, "name"), &o,
                        &deleted, &err);
    ty_obj_unref(gone);
    if (!gone && err.code != TY_ENOTFOUND) {
        ty_event(p->c->s, p->cj, "Warning", "FailedDelete", VC_COMPONENT,
                 "Error deleting job \"%s\": %s", ty_jstr(m, "name"), err.text);
        ty_error_clear(&err);
        return false;
    }
    ty_error_clear(&err);
    if ((i = active_index(p->active, ty_jstr(m, "uid"), NULL)) >= 0)
        json_array_remove(p->active, (size_t)i);
    ty_event(p->c->s, p->cj, "Normal", "SuccessfulDelete", VC_COMPONENT, "Deleted job \"%s\"",
             ty_jstr(m, "name"));
    return true;
}

static int by_creation(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const json_t *mx = json_object_get(x, "metadata"), *my = json_object_get(y, "metadata");
    int c = strcmp(ty_jstr(mx, "creationTimestamp"), ty_jstr(my, "creationTimestamp"));
    return c ? c : strcmp(ty_jstr(mx, "name"), ty_jstr(my, "name"));
}

/* The oldest of jobs (n of them) beyond limit are deleted. */
static void trim_history(pass *p, const json_t **jobs, size_t n, json_int_t limit)
{
    if (limit < 0 || n <= (size_t)limit)
        return;
    qsort(jobs, n, sizeof(*jobs), by_creation);
    for (size_t i = 0; i < n - (size_t)limit; i++)
        delete_job(p, jobs[i]);
}

static void observe_jobs(pass *p, const kc_list *owned)
{
    const json_t *spec = json_object_get(p->cj, "spec");
    const json_t **ok = calloc(owned->n + 1, sizeof(*ok)), **bad = calloc(owned->n + 1, sizeof(*bad));
    size_t nok = 0, nbad = 0, i;
    json_t *r;

    for (i = 0; i < owned->n; i++) {
        const json_t *job = ty_obj_json(owned->items[i]);
        const char *uid = ty_jmeta(job, "uid");
        long k;
        if (!finished(job))
            continue;
        if ((k = active_index(p->active, uid, NULL)) >= 0) {
            json_array_remove(p->active, (size_t)k);
            ty_event(p->c->s, p->cj, "Normal", "SawCompletedJob", VC_COMPONENT,
                     "Saw completed job: %s in active, remove",
                     ty_jmeta(job, "name"));
        }
        if (!strcmp(phase_of(job), "Completed")) {
            const char *at = ty_jstr(json_object_get(json_object_get(job, "status"), "state"),
                                    "lastTransitionTime");
            time_t a, b;
            if (*at && (!*p->last_success ||
                        (ty_time_parse(at, &a) == 0 && ty_time_parse(p->last_success, &b) == 0 &&
                         a > b)))
                snprintf(p->last_success, sizeof(p->last_success), "%s", at);
            if (ok)
                ok[nok++] = job;
        } else if (!strcmp(phase_of(job), "Failed") && bad) {
            bad[nbad++] = job;
        }
    }
    /* Active references to Jobs that are gone or were replaced. */
    for (i = json_array_size(p->active); i-- > 0;) {
        const char *uid = ty_jstr(r = json_array_get(p->active, i), "uid");
        bool found = false;
        for (size_t k = 0; k < owned->n && !found; k++)
            found = !strcmp(ty_jmeta(ty_obj_json(owned->items[k]), "uid"), uid);
        if (found)
            continue;
        ty_obj *o = kc_get(p->c->s, api_store_key(&api_vcjob), p->ns, ty_jstr(r, "name"), NULL);
        if (!o)
            ty_event(p->c->s, p->cj, "Warning", "StaleReference", VC_COMPONENT,
                     "Active job \"%s\" no longer exists (UID: %s)", ty_jstr(r, "name"), uid);
        else if (strcmp(ty_jmeta(ty_obj_json(o), "uid"), uid))
            ty_event(p->c->s, p->cj, "Warning", "StaleReference", VC_COMPONENT,
                     "Active job reference \"%s\" points to a different UID (expected: %s, actual: "
                     "%s)", ty_jstr(r, "name"), uid, ty_jmeta(ty_obj_json(o), "uid"));
        if (!o || strcmp(ty_jmeta(ty_obj_json(o), "uid"), uid))
            json_array_remove(p->active, i);
        ty_obj_unref(o);
    }
    if (ok && bad) {
        trim_history(p, ok, nok, meta_int(spec, "successfulJobsHistoryLimit", -1));
        trim_history(p, bad, nbad, meta_int(spec, "failedJobsHistoryLimit", -1));
    }
    free(ok);
    free(bad);
}

/* The Job for scheduled time t from the template (caller owns). */
static json_t *job_from_template(pass *p, int64_t t, const tz_zone *z)
{
    const json_t *tmpl = json_object_get(json_object_get(p->cj, "spec"), "jobTemplate");
    const json_t *tm = json_object_get(tmpl, "metadata");
    json_t *labels = json_deep_copy(json_object_get(tm, "labels"));
    json_t *ann = json_deep_copy(json_object_get(tm, "annotations"));
    json_t *spec = json_deep_copy(json_object_get(tmpl, "spec"));
    char name[320], when[64];

    if (!json_is_object(labels))
        json_decref(labels), labels = json_object();
    if (!json_is_object(ann))
        json_decref(ann), ann = json_object();
    if (!json_is_object(spec))
        json_decref(spec), spec = json_object();
    /* RFC 3339 in the CronJob's zone, as Go writes it ("Z" for a zero offset). */
    ty_time_format_offset((time_t)t, tz_offset(z, t), when, sizeof(when));
    json_object_set_new(ann, ANN_SCHEDULED, json_string(when));
    vccron_job_name(p->name, t, name, sizeof(name));
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o, s:[o]}, s:o}", "apiVersion",
                     VC_API_VERSION, "kind", "Job", "metadata", "name", name, "namespace", p->ns,
                     "labels", labels, "annotations", ann, "ownerReferences",
                     kit_owner_ref(p->cj), "spec", spec);
}

static bool controlled_by(const json_t *job, const char *uid)
{
    json_t *r;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(job, "metadata"), "ownerReferences"), i, r)
        if (json_is_true(json_object_get(r, "controller")) && !strcmp(ty_jstr(r, "uid"), uid))
            return true;
    return false;
}

/* Creates the Job for t; its reference goes to active. false: none made. */
static bool start_job(pass *p, int64_t t, const tz_zone *z)
{
    json_t *job = job_from_template(p, t, z);
    const char *uid = ty_jmeta(p->cj, "uid");
    char name[320];
    ty_obj *o;
    ty_error err;

    vccron_job_name(p->name, t, name, sizeof(name));
    ty_error_init(&err);
    if (!job || api_prepare(&api_vcjob, job, NULL, &err) < 0) {
        ty_event(p->c->s, p->cj, "Warning", "FailedCreate", VC_COMPONENT,
                 "Failed to create job: %s", job ? err.text : "out of memory");
        json_decref(job);
        ty_error_clear(&err);
        return false;
    }
    o = kc_create(p->c->s, api_store_key(&api_vcjob), p->ns, job, &err);
    if (!o && err.code == TY_EEXISTS) {
        o = kc_get(p->c->s, api_store_key(&api_vcjob), p->ns, name, NULL);
        if (o && !controlled_by(ty_obj_json(o), uid)) {
            ty_event(p->c->s, p->cj, "Warning", "ForeignJob", VC_COMPONENT,
                     "Job %s exists but is not owned by this CronJob", name);
            ty_obj_unref(o);
            o = NULL;
        } else if (o && finished(ty_obj_json(o))) {
            ty_obj_unref(o);
            o = NULL;
        }
    } else if (!o) {
        ty_event(p->c->s, p->cj, "Warning", "FailedCreate", VC_COMPONENT,
                 "Failed to create job: %s", err.text);
    } else {
        ty_event(p->c->s, p->cj, "Normal", "SuccessfulCreate", VC_COMPONENT,
                 "Created job %s for CronJob %s/%s", name, p->ns, p->name);
    }
    ty_error_clear(&err);
    if (!o)
        return false;
    if (active_index(p->active, ty_jmeta(ty_obj_json(o), "uid"), NULL) < 0)
        json_array_append_new(p->active, ref_of(ty_obj_json(o)));
    ty_obj_unref(o);
    return true;
}

/* The schedule step: may start a Job; *wake_at for the next look. */
static void schedule(pass *p, time_t *wake_at)
{
    const json_t *spec = json_object_get(p->cj, "spec"), *meta = json_object_get(p->cj, "metadata");
    const char *tzname = ty_jstr(spec, "timeZone"), *policy = ty_jstr(spec, "concurrencyPolicy");
    tz_zone *own = NULL;
    const tz_zone *z = p->c->local;
    int64_t now = (int64_t)time(NULL), scheduled, wake, missed;
    time_t earliest = 0;
    cron_spec cs;
    ty_error err;
    char name[320], ts[40];

    ty_error_init(&err);
    if (json_is_string(json_object_get(spec, "timeZone"))) {
        if (!(z = own = tz_load(NULL, tzname, &err))) {
            ty_event(p->c->s, p->cj, "Warning", "InvalidTimeZone", VC_COMPONENT,
                     "Invalid time zone \"%s\": %s", tzname, err.text);
            goto out;
        }
    }
    if (cron_parse(ty_jstr(spec, "schedule"), &cs, &err) < 0) {
        ty_event(p->c->s, p->cj, "Warning", "UnparseableSchedule", VC_COMPONENT,
                 "unparseable schedule: %s: %s", ty_jstr(spec, "schedule"), err.text);
        goto out;
    }
    if (ty_time_parse(*p->last_schedule ? p->last_schedule : ty_jstr(meta, "creationTimestamp"),
                      &earliest) < 0)
        earliest = (time_t)now;
    if (vccron_due(&cs, z, (int64_t)earliest, meta_int(spec, "startingDeadlineSeconds", -1), now,
                   &scheduled, &wake, &missed) < 0) {
        ty_event(p->c->s, p->cj, "Warning", "InvalidSchedule", VC_COMPONENT,
                 "Error getting schedule time: time difference between two schedules is less "
                 "than 1 second");
        goto out;
    }
    *wake_at = (time_t)wake;
    if (!scheduled)
        goto out;
    if (missed > TOO_MANY_MISSED)
        ty_event(p->c->s, p->cj, "Warning", "TooManyMissedTimes", VC_COMPONENT,
                 "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                 "or check clock skew");
    vccron_job_name(p->name, scheduled, name, sizeof(name));
    ty_time_format((time_t)scheduled, ts, sizeof(ts));
    if (active_index(p->active, NULL, name) >= 0 || !strcmp(ts, p->last_schedule))
        goto out;
    if (!strcmp(policy, "Forbid") && json_array_size(p->active) > 0) {
        ty_event(p->c->s, p->cj, "Warning", "ForbidConcurrent",
                 VC_COMPONENT, "Skipping job creation because another job is already running");
        goto out;
    }
    if (!strcmp(policy, "Replace") && json_array_size(p->active) > 0) {
        ty_event(p->c->s, p->cj, "Warning", "ReplaceConcurrent", VC_COMPONENT,
                 "Replacing active job for CronJob");
        for (size_t i = json_array_size(p->active); i-- > 0;) {
            json_t *r = json_array_get(p->active, i);
            ty_obj *o = kc_get(p->c->s, api_store_key(&api_vcjob), p->ns,
                                     ty_jstr(r, "name"), NULL);
            bool gone = !o || delete_job(p, ty_obj_json(o));
            ty_obj_unref(o);
            if (!gone)
                goto out; /* retried at the next look */
            if (!o && i < json_array_size(p->active))
                json_array_remove(p->active, i);
        }
    }
    if (start_job(p, scheduled, z))
        snprintf(p->last_schedule, sizeof(p->last_schedule), "%s", ts);
out:
    ty_error_clear(&err);
    tz_free(own);
}

typedef struct {
    json_t *active;
    const char *last_schedule, *last_success;
    const char *rv; /* the version the pass read: a write since is a conflict */
} status_arg;

static int write_status(json_t *obj, void *arg, ty_error *err)
{
    const status_arg *a = arg;
    json_t *st = json_object_get(obj, "status");
    (void)err;

    /* What the pass decided rests on the status it read (active, the last
     * schedule): written over a newer one, it would lose that one's news. */
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(a->rv));
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    if (json_array_size(a->active))
        json_object_set_new(st, "active", json_deep_copy(a->active));
    else
        json_object_del(st, "active");
    if (*a->last_schedule)
        json_object_set_new(st, "lastScheduleTime", json_string(a->last_schedule));
    if (*a->last_success)
        json_object_set_new(st, "lastSuccessfulTime", json_string(a->last_success));
    return 0;
}

static int pass_cronjob(ty_vccron *c, const char *ns, const char *name, time_t *wake_at)
{
    ty_obj *o = kc_get(c->s, api_store_key(&api_vccronjob), ns, name, NULL), *w;
    const json_t *st;
    kc_list owned = {0};
    ty_error err;
    pass p = {.c = c, .ns = ns, .name = name};
    int rc = 0;

    if (!o)
        return 0;
    p.cj = ty_obj_json(o);
    if (json_object_get(json_object_get(p.cj, "metadata"), "deletionTimestamp"))
        goto done;
    st = json_object_get(p.cj, "status");
    p.active = json_is_array(json_object_get(st, "active"))
                   ? json_deep_copy(json_object_get(st, "active"))
                   : json_array();
    snprintf(p.last_schedule, sizeof(p.last_schedule), "%s", ty_jstr(st, "lastScheduleTime"));
    snprintf(p.last_success, sizeof(p.last_success), "%s", ty_jstr(st, "lastSuccessfulTime"));
    ty_error_init(&err);
    if (kc_list_owned(c->s, api_store_key(&api_vcjob), ns, ty_jmeta(p.cj, "uid"), &owned,
                      &err) < 0) {
        ty_error_clear(&err);
        rc = -1;
        goto done;
    }
    observe_jobs(&p, &owned);
    kc_list_free(&owned);
    if (!json_is_true(json_object_get(json_object_get(p.cj, "spec"), "suspend")))
        schedule(&p, wake_at);
    status_arg a = {p.active, p.last_schedule, p.last_success, ty_jmeta(p.cj, "resourceVersion")};
    w = kc_mutate(c->s, api_store_key(&api_vccronjob), ns, name, write_status, &a, KC_STATUS, &err);
    if (!w && err.code != TY_ENOTFOUND)
        rc = -1;
    ty_obj_unref(w);
    ty_error_clear(&err);
done:
    json_decref(p.active);
    ty_obj_unref(o);
    return rc;
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    char ns[256], name[300];
    (void)q;

    if (sscanf(key, "%255[^/]/%299s", ns, name) != 2)
        return 0;
    return pass_cronjob(ctx, ns, name, wake_at);
}

ty_vccron *vccron_start(ty_kc *s, ty_error *err)
{
    wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_vccron *c = calloc(1, sizeof(*c));

    if (c && !(c->local = tz_load(NULL, NULL, NULL))) {
        ty_warn("vccronjobs: /etc/localtime is not a zone file; CronJobs without a "
                "timeZone follow UTC");
        c->local = tz_utc();
    }
    if (!c || !c->local) {
        free(c);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    c->s = s;
    c->watched[0] = api_store_key(&api_vccronjob);
    c->watched[1] = api_store_key(&api_vcjob);
    ops.resources = c->watched;
    if (!(c->q = wq_start(s, "vccronjobs", CRON_WORKERS, &ops, c, err))) {
        tz_free(c->local);
        free(c);
        return NULL;
    }
    return c;
}

void vccron_stop(ty_vccron *c)
{
    if (!c)
        return;
    wq_stop(c->q);
    tz_free(c->local);
    free(c);
}
