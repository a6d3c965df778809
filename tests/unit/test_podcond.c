/* test_podcond.c - condition lists: transition times move only with the
 * value, reasons and messages follow the call, QoS class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "model/podcond.h"

static const json_t *cond(const json_t *st, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")), type))
            return c;
    return NULL;
}

static const char *field(const json_t *c, const char *k)
{
    return json_string_value(json_object_get(c, k));
}

static void test_transitions(void **state)
{
    (void)state;
    json_t *pod = json_object();
    json_t *st = podcond_status(pod);

    podcond_set(st, "Ready", "False", "ContainersNotReady", NULL, "t1", true);
    const json_t *c = cond(st, "Ready");
    assert_non_null(c);
    assert_string_equal(field(c, "status"), "False");
    assert_string_equal(field(c, "lastTransitionTime"), "t1");
    assert_true(json_is_null(json_object_get(c, "lastProbeTime")));
    /* same value: the transition time stays; the reason follows the call */
    podcond_set(st, "Ready", "False", NULL, "waiting", "t2", true);
    assert_string_equal(field(c, "lastTransitionTime"), "t1");
    assert_null(json_object_get(c, "reason"));
    assert_string_equal(field(c, "message"), "waiting");
    /* a NULL message leaves it, an empty one removes it */
    podcond_set(st, "Ready", "True", NULL, NULL, "t3", true);
    assert_string_equal(field(c, "lastTransitionTime"), "t3");
    assert_string_equal(field(c, "message"), "waiting");
    podcond_set(st, "Ready", "True", NULL, "", "t4", true);
    assert_null(json_object_get(c, "message"));
    /* without probe no lastProbeTime; one entry per type */
    podcond_set(st, "Scheduled", "True", "x", NULL, "t5", false);
    assert_null(json_object_get(cond(st, "Scheduled"), "lastProbeTime"));
    assert_int_equal(json_array_size(json_object_get(st, "conditions")), 2);
    json_decref(pod);
}

static void test_qos(void **state)
{
    (void)state;
    json_t *be = json_loads("{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", 0, NULL);
    json_t *bu = json_loads("{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\","
                            "\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}", 0, NULL);
    assert_string_equal(podcond_qos_class(be), "BestEffort");
    assert_string_equal(podcond_qos_class(bu), "Burstable");
    json_decref(be);
    json_decref(bu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_qos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
