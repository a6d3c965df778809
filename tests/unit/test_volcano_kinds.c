/* test_volcano_kinds.c - Volcano Job, PodGroup and Queue: defaulting,
 * validation with field paths, update rules and columns. */
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

#define TEMPLATE "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"

/* A job with the given spec body (tasks, policies, ...). */
static json_t *job(const char *spec_body)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
             "\"metadata\":{\"name\":\"train\",\"namespace\":\"default\"},\"spec\":{%s}}",
             spec_body);
    return parse(buf);
}

static json_int_t ival(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void test_vcjob_defaults(void **state)
{
    ty_error err;
    json_t *j = job("\"tasks\":[{\"replicas\":2,\"template\":" TEMPLATE "},"
                    "{\"name\":\"worker\",\"replicas\":4,\"minAvailable\":1,\"template\":"
                    TEMPLATE "}],\"plugins\":{\"pytorch\":[\"--master=default0\"]}");
    json_t *spec, *t0, *t1;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_vcjob, j, NULL, &err), 0);
    spec = json_object_get(j, "spec");
    t0 = json_array_get(json_object_get(spec, "tasks"), 0);
    t1 = json_array_get(json_object_get(spec, "tasks"), 1);
    assert_string_equal(json_string_value(json_object_get(t0, "name")), "default0");
    assert_string_equal(json_string_value(json_object_get(t1, "name")), "worker");
    assert_int_equal(ival(t0, "minAvailable"), 2);
    assert_int_equal(ival(t1, "minAvailable"), 1);
    assert_int_equal(ival(t0, "maxRetry"), 3);
    assert_int_equal(ival(spec, "minAvailable"), 3);
    assert_int_equal(ival(spec, "maxRetry"), 3);
    assert_string_equal(json_string_value(json_object_get(spec, "queue")), "default");
    assert_string_equal(json_string_value(json_object_get(spec, "schedulerName")), "volcano");
    assert_non_null(json_object_get(json_object_get(spec, "plugins"), "svc"));
    json_decref(j);

    /* Explicit values are kept. */
    j = job("\"minAvailable\":1,\"queue\":\"research\",\"schedulerName\":\"other\","
            "\"maxRetry\":7,\"tasks\":[{\"name\":\"w\",\"replicas\":2,\"template\":" TEMPLATE "}]");
    assert_int_equal(api_prepare(&api_vcjob, j, NULL, &err), 0);
    spec = json_object_get(j, "spec");
    assert_int_equal(ival(spec, "minAvailable"), 1);
    assert_int_equal(ival(spec, "maxRetry"), 7);
    assert_string_equal(json_string_value(json_object_get(spec, "queue")), "research");
    assert_string_equal(json_string_value(json_object_get(spec, "schedulerName")), "other");
    json_decref(j);
}

static void expect_cause(const char *spec_body, const char *field, const char *needle)
{
    ty_error err;
    json_t *j = job(spec_body);
    const char *msg;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_vcjob, j, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    msg = cause_msg(&err, field);
    if (!msg || !strstr(msg, needle))
        fail_msg("field %s: expected \"%s\", got \"%s\" (%s)", field, needle,
                 msg ? msg : "(none)", err.text);
    ty_error_clear(&err);
    json_decref(j);
}

/* Refused with one cause only, at field. */
static void expect_only_cause(const char *spec_body, const char *field)
{
    ty_error err;
    json_t *j = job(spec_body);

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_vcjob, j, NULL, &err), -1);
    if (ty_error_ncauses(&err) != 1 || !cause_msg(&err, field))
        fail_msg("want one cause at %s, got: %s", field, err.text);
    ty_error_clear(&err);
    json_decref(j);
}

#define T(name, rep) "{\"name\":\"" name "\",\"replicas\":" #rep ",\"template\":" TEMPLATE "}"

static void test_vcjob_invalid(void **state)
{
    (void)state;
    expect_cause("\"tasks\":[]", "spec.tasks", "Required value");
    expect_cause("\"tasks\":[" T("a", 1) "," T("a", 1) "]", "spec.tasks[1].name",
                 "Duplicate value: \"a\"");
    expect_cause("\"tasks\":[" T("a", 1) "," T("Bad_Name", 1) "]", "spec.tasks[1].name",
                 "a lowercase RFC 1123 label");
    expect_cause("\"tasks\":[{\"name\":\"a\",\"replicas\":1,\"minAvailable\":3,\"template\":"
                 TEMPLATE "}]", "spec.tasks[0].minAvailable",
                 "Invalid value: 3: must be less than or equal to replicas");
    expect_cause("\"tasks\":[" T("a", -1) "]", "spec.tasks[0].replicas",
                 "must be greater than or equal to 0");
    expect_cause("\"minAvailable\":5,\"tasks\":[" T("a", 2) "," T("b", 2) "]",
                 "spec.minAvailable", "Invalid value: 5: must be less than or equal to the "
                 "total replicas of tasks (4)");
    expect_cause("\"maxRetry\":-1,\"tasks\":[" T("a", 1) "]", "spec.maxRetry",
                 "must be greater than or equal to 0");
    expect_cause("\"ttlSecondsAfterFinished\":-5,\"tasks\":[" T("a", 1) "]",
                 "spec.ttlSecondsAfterFinished", "must be greater than or equal to 0");
    expect_cause("\"tasks\":[{\"name\":\"a\",\"replicas\":1,\"template\":{\"spec\":"
                 "{\"containers\":[]}}}]", "spec.tasks[0].template.spec.containers",
                 "Required value");
    expect_cause("\"plugins\":{\"horovod\":[]},\"tasks\":[" T("a", 1) "]", "spec.plugins",
                 "Unsupported value: \"horovod\"");
    expect_cause("\"tasks\":[" T("a", 10000) "," T("b", 1) "]", "spec.tasks",
                 "Invalid value: 10001: the tasks' replicas add up to more than 10000 pods");
}

static void test_vcjob_policies(void **state)
{
    (void)state;
    expect_cause("\"policies\":[{\"action\":\"RestartJob\"}],\"tasks\":[" T("a", 1) "]",
                 "spec.policies[0]", "Required value");
    expect_cause("\"policies\":[{\"event\":\"PodFailed\",\"exitCode\":1,\"action\":"
                 "\"RestartJob\"}],\"tasks\":[" T("a", 1) "]", "spec.policies[0]",
                 "must not specify event(s) and exitCode simultaneously");
    expect_cause("\"policies\":[{\"exitCode\":0,\"action\":\"RestartJob\"}],\"tasks\":["
                 T("a", 1) "]", "spec.policies[0].exitCode", "Invalid value: 0");
    expect_cause("\"policies\":[{\"event\":\"PodExploded\",\"action\":\"RestartJob\"}],"
                 "\"tasks\":[" T("a", 1) "]", "spec.policies[0].event",
                 "Unsupported value: \"PodExploded\"");
    expect_cause("\"policies\":[{\"events\":[\"PodFailed\",\"Nope\"],\"action\":"
                 "\"AbortJob\"}],\"tasks\":[" T("a", 1) "]", "spec.policies[0].events[1]",
                 "Unsupported value: \"Nope\"");
    expect_cause("\"policies\":[{\"event\":\"PodFailed\",\"action\":\"Explode\"}],"
                 "\"tasks\":[" T("a", 1) "]", "spec.policies[0].action",
                 "Unsupported value: \"Explode\"");
    expect_cause("\"policies\":[{\"event\":\"PodFailed\",\"action\":\"RestartJob\"},"
                 "{\"event\":\"PodFailed\",\"action\":\"AbortJob\"}],\"tasks\":[" T("a", 1) "]",
                 "spec.policies[1].event", "Duplicate value: \"PodFailed\"");
    /* events as a string: the CRD schema's type error, not "Required value"
     * (events must be a list; kube-apiserver checks the type first) */
    expect_cause("\"policies\":[{\"events\":\"PodEvicted\",\"action\":\"RestartJob\"}],"
                 "\"tasks\":[" T("a", 1) "]", "spec.policies[0].events",
                 "Invalid value: \"string\": spec.policies[0].events in body must be of type "
                 "array: \"string\"");
    expect_only_cause("\"policies\":[{\"events\":\"PodEvicted\",\"action\":\"RestartJob\"}],"
                      "\"tasks\":[" T("a", 1) "]", "spec.policies[0].events");
    expect_cause("\"tasks\":[{\"name\":\"a\",\"replicas\":1,\"policies\":[{\"events\":"
                 "\"PodEvicted\",\"action\":\"RestartJob\"}],\"template\":" TEMPLATE "}]",
                 "spec.tasks[0].policies[0].events",
                 "Invalid value: \"string\": spec.tasks[0].policies[0].events in body must be "
                 "of type array: \"string\"");
    expect_cause("\"tasks\":[{\"name\":\"a\",\"replicas\":1,\"policies\":[{\"exitCode\":0}],"
                 "\"template\":" TEMPLATE "}]", "spec.tasks[0].policies[0].exitCode",
                 "Invalid value: 0");

    /* A well-formed set passes. */
    ty_error err;
    json_t *j = job("\"policies\":[{\"event\":\"PodEvicted\",\"action\":\"RestartJob\"},"
                    "{\"exitCode\":3,\"action\":\"AbortJob\"}],\"tasks\":[{\"name\":\"a\","
                    "\"replicas\":1,\"policies\":[{\"events\":[\"TaskCompleted\"],\"action\":"
                    "\"CompleteJob\"}],\"template\":" TEMPLATE "}]");
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_vcjob, j, NULL, &err), 0);
    json_decref(j);
}

static void test_vcjob_depends_on(void **state)
{
    (void)state;
    expect_cause("\"tasks\":[" T("a", 1) ",{\"name\":\"b\",\"replicas\":1,\"dependsOn\":"
                 "{\"name\":[\"zz\"]},\"template\":" TEMPLATE "}]",
                 "spec.tasks[1].dependsOn.name[0]", "Not found: \"zz\"");
    expect_cause("\"tasks\":[{\"name\":\"a\",\"replicas\":1,\"dependsOn\":{\"name\":[\"b\"]},"
                 "\"template\":" TEMPLATE "},{\"name\":\"b\",\"replicas\":1,\"dependsOn\":"
                 "{\"name\":[\"a\"]},\"template\":" TEMPLATE "}]", "spec.tasks[0].dependsOn",
                 "directed acyclic graph");
    expect_cause("\"tasks\":[" T("a", 1) ",{\"name\":\"b\",\"replicas\":1,\"dependsOn\":"
                 "{\"name\":[\"a\"],\"iteration\":\"some\"},\"template\":" TEMPLATE "}]",
                 "spec.tasks[1].dependsOn.iteration", "Unsupported value: \"some\"");

    ty_error err;
    json_t *j = job("\"tasks\":[" T("a", 1) ",{\"name\":\"b\",\"replicas\":1,\"dependsOn\":"
                    "{\"name\":[\"a\"],\"iteration\":\"all\"},\"template\":" TEMPLATE "},"
                    "{\"name\":\"c\",\"replicas\":1,\"dependsOn\":{\"name\":[\"a\",\"b\"]},"
                    "\"template\":" TEMPLATE "}]");
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_vcjob, j, NULL, &err), 0);
    json_decref(j);
}

static void test_vcjob_update(void **state)
{
    ty_error err;
    json_t *old = job("\"priorityClassName\":\"low\",\"tasks\":[" T("a", 2) "," T("b", 2) "]");
    json_t *upd, *spec;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_vcjob, old, NULL, &err), 0);

    upd = json_deep_copy(old);
    spec = json_object_get(upd, "spec");
    json_object_set_new(json_array_get(json_object_get(spec, "tasks"), 1), "replicas",
                        json_integer(6));
    json_object_set_new(spec, "minAvailable", json_integer(3));
    json_object_set_new(spec, "priorityClassName", json_string("high"));
    assert_int_equal(api_prepare(&api_vcjob, upd, old, &err), 0);
    json_decref(upd);

    upd = json_deep_copy(old);
    json_object_set_new(json_object_get(upd, "spec"), "queue", json_string("other"));
    assert_int_equal(api_prepare(&api_vcjob, upd, old, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "spec"), "Forbidden: job updates may not change "
                                                   "fields other than `minAvailable`"));
    ty_error_clear(&err);
    json_decref(upd);

    upd = json_deep_copy(old);
    json_array_remove(json_object_get(json_object_get(upd, "spec"), "tasks"), 1);
    assert_int_equal(api_prepare(&api_vcjob, upd, old, &err), -1);
    assert_string_equal(cause_msg(&err, "spec.tasks"),
                        "Forbidden: job updates may not add or remove tasks");
    ty_error_clear(&err);
    json_decref(upd);
    json_decref(old);
}

static void test_vcjob_columns(void **state)
{
    json_t *cols = api_table_columns(&api_vcjob), *j, *c;
    static const char *const names[] = {"Name", "STATUS", "minAvailable", "RUNNINGS", "AGE",
                                        "QUEUE"};
    (void)state;

    assert_int_equal(json_array_size(cols), 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(cols, i), "name")),
                            names[i]);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(cols, 5), "priority")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 4), "type")),
                        "date");
    json_decref(cols);

    j = parse("{\"metadata\":{\"name\":\"train\",\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},"
              "\"spec\":{\"queue\":\"default\"},\"status\":{\"state\":{\"phase\":\"Running\"},"
              "\"minAvailable\":3,\"running\":3}}");
    c = api_table_cells(&api_vcjob, j, 1704067200 + 90);
    assert_string_equal(json_string_value(json_array_get(c, 0)), "train");
    assert_string_equal(json_string_value(json_array_get(c, 1)), "Running");
    assert_int_equal(json_integer_value(json_array_get(c, 2)), 3);
    assert_int_equal(json_integer_value(json_array_get(c, 3)), 3);
    assert_string_equal(json_string_value(json_array_get(c, 4)), "90s");
    assert_string_equal(json_string_value(json_array_get(c, 5)), "default");
    json_decref(c);
    /* A job with no status yet: the CRD printer leaves the cells empty. */
    json_object_del(j, "status");
    c = api_table_cells(&api_vcjob, j, 0);
    assert_true(json_is_null(json_array_get(c, 1)));
    assert_true(json_is_null(json_array_get(c, 3)));
    json_decref(c);
    json_decref(j);
}

static void test_podgroup(void **state)
{
    ty_error err;
    json_t *pg = parse("{\"metadata\":{\"name\":\"train-uid\"},\"spec\":{\"minMember\":4,"
                       "\"minResources\":{\"cpu\":\"4\",\"nvidia.com/gpu\":\"4\"}}}"), *c;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_podgroup, pg, NULL, &err), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(pg, "spec"), "queue")),
                        "default");
    json_object_set_new(json_object_get(pg, "status"), "phase", json_string("Inqueue"));
    c = api_table_cells(&api_podgroup, pg, 0);
    assert_string_equal(json_string_value(json_array_get(c, 1)), "Inqueue");
    assert_int_equal(json_integer_value(json_array_get(c, 2)), 4);
    assert_string_equal(json_string_value(json_array_get(c, 5)), "default");
    json_decref(c);
    json_object_set_new(json_object_get(pg, "spec"), "minMember", json_integer(-1));
    json_object_set_new(json_object_get(json_object_get(pg, "spec"), "minResources"), "cpu",
                        json_string("four"));
    assert_int_equal(api_prepare(&api_podgroup, pg, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "spec.minMember"));
    assert_non_null(cause_msg(&err, "spec.minResources[cpu]"));
    ty_error_clear(&err);
    json_decref(pg);
}

static void test_queue(void **state)
{
    ty_error err;
    json_t *q = parse("{\"metadata\":{\"name\":\"research\"},\"spec\":{\"capability\":"
                      "{\"cpu\":\"8\"}}}"), *c;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_queue, q, NULL, &err), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(q, "spec"), "weight")), 1);
    assert_true(json_is_true(json_object_get(json_object_get(q, "spec"), "reclaimable")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(q, "status"), "state")),
                        "Open");
    c = api_table_cells(&api_queue, q, 0);
    assert_int_equal(json_array_size(c), 2);
    json_decref(c);

    json_object_set_new(json_object_get(q, "spec"), "weight", json_integer(0));
    json_object_set_new(json_object_get(q, "status"), "state", json_string("Sleeping"));
    json_object_set_new(json_object_get(q, "spec"), "deserved", parse("{\"cpu\":\"16\"}"));
    assert_int_equal(api_prepare(&api_queue, q, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "spec.weight"),
                        "Invalid value: 0: queue weight must be a positive integer");
    assert_non_null(strstr(cause_msg(&err, "status.state"), "Unsupported value: \"Sleeping\""));
    assert_non_null(cause_msg(&err, "spec.deserved[cpu]"));
    ty_error_clear(&err);
    /* Queues are cluster scoped. */
    json_object_set_new(json_object_get(q, "metadata"), "namespace", json_string("default"));
    assert_int_equal(api_prepare(&api_queue, q, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "metadata.namespace"));
    ty_error_clear(&err);
    json_decref(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vcjob_defaults),
        cmocka_unit_test(test_vcjob_invalid),
        cmocka_unit_test(test_vcjob_policies),
        cmocka_unit_test(test_vcjob_depends_on),
        cmocka_unit_test(test_vcjob_update),
        cmocka_unit_test(test_vcjob_columns),
        cmocka_unit_test(test_podgroup),
        cmocka_unit_test(test_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
