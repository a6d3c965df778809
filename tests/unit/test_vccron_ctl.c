/* test_vccron_ctl.c - the Volcano CronJob controller on a real store, its
 * clock made irrelevant by setting status.lastScheduleTime in the past (a
 * scheduled time is then due at once): a due time starts a Job named by its
 * minute; Forbid skips while a Job is active; Replace deletes the active Job
 * first; finished Jobs past the history limits are deleted, the oldest
 * first, and the newest completion is lastSuccessfulTime. No Volcano Job
 * controller runs, so Jobs keep the phases the test gives them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/timeutil.h"
#include "controller/volcano/vcflow.h"
#include "store_fixture.h"
#include "kc_fixture.h"

#define WAIT_MS 30000

typedef struct {
    store_fixture sf;
    ty_vccron *c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->sf.s = store_fixture_open(f->sf.dir, NULL);
    f->c = vccron_start(KC(f->sf.s), &err);
    assert_non_null(f->c);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    vccron_stop(f->c);
    store_fixture_close(f->sf.dir, f->sf.s);
    free(f);
    return 0;
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o)
        fail_msg("bad test JSON: %s", je.text);
    return o;
}

#define JOB_SPEC "{\"tasks\":[{\"name\":\"t\",\"replicas\":1,\"template\":{\"spec\":" \
                 "{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}}]}"

static void create(ty_store *s, const api_resource *res, json_t *obj)
{
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    if (api_prepare(res, obj, NULL, &err) != 0)
        fail_msg("prepare: %s", err.text);
    o = store_create_take(s, api_store_key(res), "default", obj, &err);
    if (!o)
        fail_msg("create: %s", err.text);
    store_obj_unref(o);
}

/* A daily schedule whose time was five minutes ago, in a zone utc_offset
 * seconds east of UTC: due once between ten_minutes_ago() and now, and not
 * again for a day, so that a minute boundary during a slow test starts no
 * second Job. */
static void due_schedule(char *buf, size_t len, int utc_offset)
{
    time_t t = time(NULL) - 300 + utc_offset;
    struct tm tm;

    gmtime_r(&t, &tm);
    snprintf(buf, len, "%d %d * * *", tm.tm_min, tm.tm_hour);
}

static void create_cronjob(ty_store *s, const char *name, const char *extra, int utc_offset)
{
    char buf[2048], sched[32];

    due_schedule(sched, sizeof(sched), utc_offset);
    snprintf(buf, sizeof(buf), "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":"
             "\"CronJob\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":"
             "{\"schedule\":\"%s\",%s\"jobTemplate\":{\"spec\":" JOB_SPEC "}}}",
             name, sched, extra);
    create(s, &api_vccronjob, parse(buf));
}

static json_t *get(ty_store *s, const api_resource *res, const char *name)
{
    store_obj *o = store_get(s, api_store_key(res), "default", name, NULL);
    json_t *j = o ? store_obj_json_copy(o) : NULL;
    store_obj_unref(o);
    return j;
}

static const char *uid_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
}

static int set_status(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(obj, "status", json_deep_copy(arg));
    return 0;
}

static void put_status(ty_store *s, const api_resource *res, const char *name, json_t *status)
{
    store_obj *o = store_mutate_status(s, api_store_key(res), "default", name, set_status, status,
                                       NULL);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(status);
}

/* A Job controlled by the CronJob, in phase (finished at `at`, or ""), as
 * stored then. */
static json_t *owned_job(ty_store *s, const char *cron, const char *name, const char *phase,
                         const char *at)
{
    json_t *cj = get(s, &api_vccronjob, cron), *job;
    char buf[2048];

    snprintf(buf, sizeof(buf), "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"ownerReferences\":"
             "[{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"CronJob\",\"name\":"
             "\"%s\",\"uid\":\"%s\",\"controller\":true}]},\"spec\":" JOB_SPEC "}", name, cron,
             uid_of(cj));
    json_decref(cj);
    create(s, &api_vcjob, parse(buf));
    put_status(s, &api_vcjob, name,
               json_pack("{s:{s:s, s:s}}", "state", "phase", phase, "lastTransitionTime", at));
    /* NULL when the controller already took it (past a history limit). */
    job = get(s, &api_vcjob, name);
    return job;
}

static json_t *ref(const json_t *job)
{
    const json_t *m = json_object_get(job, "metadata");
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", "Job", "apiVersion",
                     "batch.volcano.sh/v1alpha1", "namespace", "default", "name",
                     json_string_value(json_object_get(m, "name")), "uid", uid_of(job));
}

static void ten_minutes_ago(char *buf, size_t len)
{
    ty_time_format(time(NULL) / 60 * 60 - 600, buf, len);
}

static size_t owned_count(ty_store *s, const char *cron)
{
    json_t *cj = get(s, &api_vccronjob, cron);
    store_list l = {0};
    size_t n;

    store_list_owned(s, api_store_key(&api_vcjob), "default", uid_of(cj), &l, NULL);
    n = l.n;
    store_list_free(&l);
    json_decref(cj);
    return n;
}

static bool has_event(ty_store *s, const char *name, const char *reason)
{
    store_list l = {0};
    bool found = false;

    if (store_list_objects(s, "events", &(store_list_opts){.ns = "default"}, &l, NULL) == 0)
        for (size_t i = 0; i < l.n && !found; i++) {
            const json_t *ev = store_obj_json(l.items[i]);
            const char *n = json_string_value(json_object_get(json_object_get(ev, "involvedObject"), "name"));
            const char *r = json_string_value(json_object_get(ev, "reason"));
            found = n && r && !strcmp(n, name) && !strcmp(r, reason);
        }
    store_list_free(&l);
    return found;
}

static bool job_exists(ty_store *s, const char *name)
{
    json_t *j = get(s, &api_vcjob, name);
    json_decref(j);
    return j != NULL;
}

/* The CronJob's status.active[i].name ("" none), status[key] ("" none):
 * copies in buf. */
static const char *status_of(ty_store *s, const char *cron, const char *key, char *buf, size_t len)
{
    json_t *cj = get(s, &api_vccronjob, cron), *st = json_object_get(cj, "status");
    const char *v = NULL;

    if (!strcmp(key, "active0"))
        v = json_string_value(json_object_get(json_array_get(json_object_get(st, "active"), 0),
                                              "name"));
    else if (!strcmp(key, "nactive"))
        v = json_array_size(json_object_get(st, "active")) == 1 ? "1" : "n";
    else
        v = json_string_value(json_object_get(st, key));
    snprintf(buf, len, "%s", v ? v : "");
    json_decref(cj);
    return buf;
}

/* Polls cond until it holds or WAIT_MS passed. */
#define WAIT_FOR(cond)                                                          \
    do {                                                                        \
        int64_t end_ = ty_now_ms() + WAIT_MS;                                   \
        while (!(cond) && ty_now_ms() < end_)                                   \
            usleep(20000);                                                      \
        if (!(cond))                                                            \
            fail_msg("timed out waiting for %s", #cond);                        \
    } while (0)

static void test_due_time_starts_a_job(void **state)
{
    fixture *f = *state;
    char past[40], want[64], b1[128], b2[128];
    time_t t;

    create_cronjob(f->sf.s, "c", "", 0);
    ten_minutes_ago(past, sizeof(past));
    put_status(f->sf.s, &api_vccronjob, "c", json_pack("{s:s}", "lastScheduleTime", past));
    WAIT_FOR(owned_count(f->sf.s, "c") == 1);
    /* The Job is named by the minute now in lastScheduleTime, and active. */
    WAIT_FOR(!strcmp(status_of(f->sf.s, "c", "nactive", b1, sizeof(b1)), "1") &&
             strcmp(status_of(f->sf.s, "c", "lastScheduleTime", b2, sizeof(b2)), past));
    assert_int_equal(ty_time_parse(status_of(f->sf.s, "c", "lastScheduleTime", b2, sizeof(b2)), &t),
                     0);
    vccron_job_name("c", (int64_t)t, want, sizeof(want));
    assert_string_equal(status_of(f->sf.s, "c", "active0", b1, sizeof(b1)), want);
    assert_true(job_exists(f->sf.s, want));
    assert_true(has_event(f->sf.s, "c", "SuccessfulCreate"));
}

/* The Job's scheduled-timestamp annotation is the scheduled time in the
 * CronJob's zone, as Go writes RFC 3339: local wall time and "+05:30". */
static void test_scheduled_annotation_in_zone(void **state)
{
    fixture *f = *state;
    char past[40], name[64], want[64], b1[128], b2[128];
    struct tm tm;
    time_t t, local;
    json_t *job;

    if (access("/usr/share/zoneinfo/Asia/Kolkata", R_OK) != 0)
        skip(); /* no tzdata */
    create_cronjob(f->sf.s, "z", "\"timeZone\":\"Asia/Kolkata\",", 5 * 3600 + 30 * 60);
    ten_minutes_ago(past, sizeof(past));
    put_status(f->sf.s, &api_vccronjob, "z", json_pack("{s:s}", "lastScheduleTime", past));
    WAIT_FOR(!strcmp(status_of(f->sf.s, "z", "nactive", b1, sizeof(b1)), "1") &&
             strcmp(status_of(f->sf.s, "z", "lastScheduleTime", b2, sizeof(b2)), past));
    assert_int_equal(ty_time_parse(status_of(f->sf.s, "z", "lastScheduleTime", b2, sizeof(b2)), &t),
                     0);
    /* India has kept +05:30 since 1945: the expected text by hand */
    local = t + 5 * 3600 + 30 * 60;
    gmtime_r(&local, &tm);
    strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S+05:30", &tm);
    vccron_job_name("z", (int64_t)t, name, sizeof(name));
    job = get(f->sf.s, &api_vcjob, name);
    assert_non_null(job);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(job, "metadata"), "annotations"),
                            "volcano.sh/cronjob-scheduled-timestamp")),
                        want);
    json_decref(job);
}

static void test_forbid(void **state)
{
    fixture *f = *state;
    char past[40];
    json_t *old;

    create_cronjob(f->sf.s, "f", "\"concurrencyPolicy\":\"Forbid\",", 0);
    old = owned_job(f->sf.s, "f", "f-old", "Running", "");
    assert_non_null(old);
    ten_minutes_ago(past, sizeof(past));
    put_status(f->sf.s, &api_vccronjob, "f",
               json_pack("{s:[o], s:s}", "active", ref(old), "lastScheduleTime", past));
    WAIT_FOR(has_event(f->sf.s, "f", "ForbidConcurrent"));
    assert_int_equal(owned_count(f->sf.s, "f"), 1);
    json_decref(old);
}

static void test_replace(void **state)
{
    fixture *f = *state;
    char past[40], b1[128], b2[128];
    json_t *old;

    create_cronjob(f->sf.s, "r", "\"concurrencyPolicy\":\"Replace\",", 0);
    old = owned_job(f->sf.s, "r", "r-old", "Running", "");
    assert_non_null(old);
    ten_minutes_ago(past, sizeof(past));
    put_status(f->sf.s, &api_vccronjob, "r",
               json_pack("{s:[o], s:s}", "active", ref(old), "lastScheduleTime", past));
    WAIT_FOR(!job_exists(f->sf.s, "r-old") && owned_count(f->sf.s, "r") == 1);
    WAIT_FOR(!strcmp(status_of(f->sf.s, "r", "nactive", b1, sizeof(b1)), "1") &&
             strcmp(status_of(f->sf.s, "r", "active0", b2, sizeof(b2)), "r-old") != 0);
    assert_true(has_event(f->sf.s, "r", "ReplaceConcurrent"));
    json_decref(old);
}

static void test_history_limits(void **state)
{
    fixture *f = *state;
    char b1[128];

    create_cronjob(f->sf.s, "h", "\"suspend\":true,\"successfulJobsHistoryLimit\":1,"
                                 "\"failedJobsHistoryLimit\":0,", 0);
    json_decref(owned_job(f->sf.s, "h", "h-1", "Completed", "2026-01-01T00:00:03Z"));
    json_decref(owned_job(f->sf.s, "h", "h-2", "Completed", "2026-01-01T00:00:09Z"));
    json_decref(owned_job(f->sf.s, "h", "h-3", "Completed", "2026-01-01T00:00:05Z"));
    json_decref(owned_job(f->sf.s, "h", "h-4", "Failed", "2026-01-01T00:00:07Z"));
    /* Created in this order (names break creation-time ties): h-3 stays. */
    WAIT_FOR(!job_exists(f->sf.s, "h-1") && !job_exists(f->sf.s, "h-2") &&
             !job_exists(f->sf.s, "h-4"));
    assert_true(job_exists(f->sf.s, "h-3"));
    WAIT_FOR(!strcmp(status_of(f->sf.s, "h", "lastSuccessfulTime", b1, sizeof(b1)),
                     "2026-01-01T00:00:09Z"));
    assert_true(has_event(f->sf.s, "h", "SuccessfulDelete"));
    /* Suspended: nothing was started. */
    assert_int_equal(owned_count(f->sf.s, "h"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_due_time_starts_a_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scheduled_annotation_in_zone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forbid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_limits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
