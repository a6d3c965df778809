/* test_vcflow.c - Volcano's CronJob, JobFlow and JobTemplate kinds
 * (defaults, validation with field paths) and the CronJob controller's
 * schedule arithmetic on a fixed clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/timeutil.h"
#include "controller/volcano/vcflow.h"

static const char *cause_msg(const ty_error *err, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach(err->causes, i, c)
        if (strcmp(json_string_value(json_object_get(c, "field")), field) == 0)
            return json_string_value(json_object_get(c, "message"));
    return NULL;
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

static json_t *cronjob(const char *name, const char *spec_body)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"CronJob\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{%s}}", name,
             spec_body);
    return parse(buf);
}

/* The message of the cause at field after preparing obj (which must fail). */
static void refused(const api_resource *res, json_t *obj, const char *field, const char *want)
{
    ty_error err;
    const char *msg;

    ty_error_init(&err);
    if (api_prepare(res, obj, NULL, &err) == 0)
        fail_msg("accepted; wanted %s: %s", field, want);
    msg = cause_msg(&err, field);
    if (!msg || !strstr(msg, want))
        fail_msg("%s: got %s (%s), want ...%s...", field, msg ? msg : "no cause", err.text, want);
    ty_error_clear(&err);
    json_decref(obj);
}

static void accepted(const api_resource *res, json_t *obj)
{
    ty_error err;

    ty_error_init(&err);
    if (api_prepare(res, obj, NULL, &err) != 0)
        fail_msg("refused: %s", err.text);
    ty_error_clear(&err);
}

static void test_cronjob_defaults(void **state)
{
    (void)state;
    json_t *cj = cronjob("tick", "\"schedule\":\"*/5 * * * *\",\"jobTemplate\":{\"spec\":" JOB_SPEC "}");
    json_t *spec = json_object_get(cj, "spec"), *js;

    accepted(&api_vccronjob, cj);
    assert_string_equal(json_string_value(json_object_get(spec, "concurrencyPolicy")), "Allow");
    assert_true(json_is_false(json_object_get(spec, "suspend")));
    assert_int_equal(json_integer_value(json_object_get(spec, "successfulJobsHistoryLimit")), 3);
    assert_int_equal(json_integer_value(json_object_get(spec, "failedJobsHistoryLimit")), 1);
    js = json_object_get(json_object_get(spec, "jobTemplate"), "spec");
    assert_int_equal(json_integer_value(json_object_get(js, "maxRetry")), 3);
    assert_string_equal(json_string_value(json_object_get(js, "queue")), "default");
    json_decref(cj);

    /* Upstream's example/cronjob/cronjob.yaml. */
    cj = cronjob("volcano-cronjob-example",
                 "\"schedule\":\"*/5 * * * *\",\"concurrencyPolicy\":\"Forbid\","
                 "\"startingDeadlineSeconds\":60,\"successfulJobsHistoryLimit\":5,"
                 "\"failedJobsHistoryLimit\":3,\"timeZone\":\"UTC\",\"jobTemplate\":{\"spec\":"
                 "{\"schedulerName\":\"volcano\",\"minAvailable\":1,\"policies\":[{\"event\":"
                 "\"PodEvicted\",\"action\":\"RestartJob\"}],\"tasks\":[{\"replicas\":1,\"name\":"
                 "\"task-1\",\"template\":{\"spec\":{\"restartPolicy\":\"OnFailure\","
                 "\"containers\":[{\"name\":\"busybox-container\",\"image\":\"busybox:latest\","
                 "\"command\":[\"/bin/sh\",\"-c\",\"date\"]}]}}}]}}");
    accepted(&api_vccronjob, cj);
    json_decref(cj);
}

static void test_cronjob_validation(void **state)
{
    (void)state;
#define TMPL ",\"jobTemplate\":{\"spec\":" JOB_SPEC "}"
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"\"" TMPL), "spec.schedule",
            "Required value: schedule is required");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"61 * * * *\"" TMPL), "spec.schedule",
            "schedule is not a valid cron expression");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"CRON_TZ=UTC 0 * * * *\"" TMPL),
            "spec.schedule", "should not contain TZ");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"timeZone\":\"\"" TMPL),
            "spec.timeZone", "timeZone must be nil or non-empty string");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"timeZone\":\"local\"" TMPL),
            "spec.timeZone", "timeZone can't be Local");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"timeZone\":\"../etc/passwd\"" TMPL),
            "spec.timeZone", "unknown timeZone");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"timeZone\":\"Europe/Atlantis\"" TMPL),
            "spec.timeZone", "invalid timeZone");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"concurrencyPolicy\":\"Never\"" TMPL),
            "spec.concurrencyPolicy", "Unsupported value: \"Never\"");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"startingDeadlineSeconds\":-5" TMPL),
            "spec.startingDeadlineSeconds", "greater than or equal to 0");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\",\"failedJobsHistoryLimit\":-1" TMPL),
            "spec.failedJobsHistoryLimit", "greater than or equal to 0");
    refused(&api_vccronjob, cronjob("a", "\"schedule\":\"@daily\""), "spec.jobTemplate",
            "Required value");
    refused(&api_vccronjob,
            cronjob("abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabc", "\"schedule\":\"@daily\"" TMPL),
            "metadata.name", "no more than 52 characters");
    /* 52 is fine. */
    json_t *ok = cronjob("abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijab",
                         "\"schedule\":\"@every 90s\"" TMPL);
    accepted(&api_vccronjob, ok);
    json_decref(ok);
#undef TMPL
}

static json_t *jobflow(const char *spec_body)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "{\"apiVersion\":\"flow.volcano.sh/v1alpha1\",\"kind\":\"JobFlow\","
             "\"metadata\":{\"name\":\"test\",\"namespace\":\"default\"},\"spec\":{%s}}",
             spec_body);
    return parse(buf);
}

static void test_jobflow(void **state)
{
    (void)state;
    /* Upstream's example/jobflow/JobFlow.yaml. */
    json_t *jf = jobflow("\"jobRetainPolicy\":\"delete\",\"flows\":[{\"name\":\"a\"},"
                         "{\"name\":\"b\",\"dependsOn\":{\"targets\":[\"a\"]}},"
                         "{\"name\":\"c\",\"dependsOn\":{\"targets\":[\"b\"]}},"
                         "{\"name\":\"d\",\"dependsOn\":{\"targets\":[\"b\"]}},"
                         "{\"name\":\"e\",\"dependsOn\":{\"targets\":[\"c\",\"d\"]}}]");
    accepted(&api_jobflow, jf);
    json_decref(jf);
    refused(&api_jobflow,
            jobflow("\"flows\":[{\"name\":\"a\",\"dependsOn\":{\"targets\":[\"c\"]}},"
                    "{\"name\":\"b\",\"dependsOn\":{\"targets\":[\"a\"]}},"
                    "{\"name\":\"c\",\"dependsOn\":{\"targets\":[\"b\"]}}]"),
            "spec.flows", "jobflow Flow is not DAG");
    refused(&api_jobflow, jobflow("\"flows\":[{\"name\":\"a\",\"dependsOn\":{\"targets\":[\"a\"]}}]"),
            "spec.flows", "not DAG");
    refused(&api_jobflow, jobflow("\"flows\":[{\"name\":\"a\",\"dependsOn\":{\"targets\":[\"x\"]}}]"),
            "spec.flows[0].dependsOn.targets[0]", "vertex is not defined: x");
    refused(&api_jobflow, jobflow("\"jobRetainPolicy\":\"Retain\",\"flows\":[{\"name\":\"a\"}]"),
            "spec.jobRetainPolicy", "Unsupported value: \"Retain\"");
    refused(&api_jobflow, jobflow("\"flows\":[{\"name\":\"\"}]"), "spec.flows[0].name",
            "Required value");
    refused(&api_jobflow,
            jobflow("\"flows\":[{\"name\":\"a\"},{\"name\":\"b\",\"dependsOn\":{\"targets\":[\"a\"],"
                    "\"probe\":{\"tcpSocketList\":[{\"taskName\":\"t\",\"port\":70000}]}}}]"),
            "spec.flows[1].dependsOn.probe.tcpSocketList[0].port", "0 to 65535");

    json_t *jt = parse("{\"apiVersion\":\"flow.volcano.sh/v1alpha1\",\"kind\":\"JobTemplate\","
                       "\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"},\"spec\":" JOB_SPEC "}");
    accepted(&api_jobtemplate, jt);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(jt, "spec"), "maxRetry")), 3);
    json_decref(jt);
}

static int64_t at(const char *s)
{
    time_t t;
    assert_int_equal(ty_time_parse(s, &t), 0);
    return (int64_t)t;
}

static void test_due(void **state)
{
    (void)state;
    cron_spec every;
    int64_t sched, wake, missed;

    assert_int_equal(cron_parse("*/1 * * * *", &every, NULL), 0);
    /* Created mid-minute: nothing yet, look at the next minute. */
    assert_int_equal(vccron_due(&every, NULL, at("2026-11-28T04:30:10Z"), -1,
                                at("2026-11-28T04:30:50Z"), &sched, &wake, &missed), 0);
    assert_int_equal(sched, 0);
    assert_int_equal(wake, at("2026-11-28T04:31:00Z"));
    /* Past it: that minute is due. */
    vccron_due(&every, NULL, at("2026-11-28T04:30:10Z"), -1, at("2026-11-28T04:31:05Z"), &sched,
               &wake, &missed);
    assert_int_equal(sched, at("2026-11-28T04:31:00Z"));
    assert_int_equal(wake, at("2026-11-28T04:32:00Z"));
    assert_int_equal(missed, 0);
    /* Ten minutes after the last one: the latest only, ten missed. */
    vccron_due(&every, NULL, at("2026-11-28T04:00:00Z"), -1, at("2026-11-28T04:10:30Z"), &sched,
               &wake, &missed);
    assert_int_equal(sched, at("2026-11-28T04:10:00Z"));
    assert_int_equal(wake, at("2026-11-28T04:11:00Z"));
    assert_int_equal(missed, 10);
    /* A deadline of 60 s still takes 04:10; one of 20 s does not. */
    vccron_due(&every, NULL, at("2026-11-28T04:00:00Z"), 60, at("2026-11-28T04:10:30Z"), &sched,
               &wake, &missed);
    assert_int_equal(sched, at("2026-11-28T04:10:00Z"));
    vccron_due(&every, NULL, at("2026-11-28T04:00:00Z"), 20, at("2026-11-28T04:10:30Z"), &sched,
               &wake, &missed);
    assert_int_equal(sched, 0);
    assert_int_equal(wake, at("2026-11-28T04:11:00Z"));
    /* A year behind: the latest minute, and more than 100 missed. */
    vccron_due(&every, NULL, at("2025-11-28T04:00:00Z"), -1, at("2026-11-28T04:10:30Z"), &sched,
               &wake, &missed);
    assert_int_equal(sched, at("2026-11-28T04:10:00Z"));
    assert_true(missed > 100);

    cron_spec daily;
    assert_int_equal(cron_parse("30 2 * * *", &daily, NULL), 0);
    vccron_due(&daily, NULL, at("2026-11-20T00:00:00Z"), -1, at("2026-11-28T04:10:30Z"), &sched,
               &wake, &missed);
    assert_int_equal(sched, at("2026-11-28T02:30:00Z"));
    assert_int_equal(wake, at("2026-11-29T02:30:00Z"));

    char name[64];
    vccron_job_name("tick", at("2026-11-28T04:31:00Z"), name, sizeof(name));
    assert_string_equal(name, "tick-29930671");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cronjob_defaults),
        cmocka_unit_test(test_cronjob_validation),
        cmocka_unit_test(test_jobflow),
        cmocka_unit_test(test_due),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
