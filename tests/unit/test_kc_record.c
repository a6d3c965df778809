/* test_kc_record.c - Events (client/events.h) over a client whose writes
 * are requests (the fake, told to answer as HTTP): a repeat is one merge
 * patch of count and lastTimestamp, not a create that fails, a read and an
 * update; an Event gone meanwhile is created again; what is remembered is
 * bounded and per client (client/kc_record.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonget.h"
#include "client/events.h"
#include "client/kc_fake.h"
#include "client/kc_record.h"

static json_t *involved(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Pod",
                     "metadata", "name", name, "namespace", "a", "uid", "u-1");
}

static json_int_t only_event_count(ty_kc *c)
{
    kc_list l;
    ty_error err;
    json_int_t n;

    ty_error_init(&err);
    assert_int_equal(kc_list_objects(c, "events", NULL, &l, &err), 0);
    assert_int_equal(l.n, 1);
    n = json_integer_value(json_object_get(ty_obj_json(l.items[0]), "count"));
    kc_list_free(&l);
    return n;
}

static void test_repeat_is_one_patch(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *pod = involved("p");
    (void)state;

    kc_fake_set_reads_local(c, false);
    ty_event(c, pod, "Warning", "FailedScheduling", "test", "0/3 nodes are available");
    assert_int_equal(kc_fake_count(c, "create", "events"), 1);
    kc_fake_clear_actions(c);
    for (int i = 0; i < 3; i++)
        ty_event(c, pod, "Warning", "FailedScheduling", "test", "0/3 nodes are available");
    assert_int_equal(kc_fake_count(c, NULL, NULL), 3);
    assert_int_equal(kc_fake_count(c, "patch", "events"), 3);
    assert_int_equal(only_event_count(c), 4);
    assert_non_null(kc_fake_find(c, "patch", "events", NULL));

    /* another message is another Event: a create */
    kc_fake_clear_actions(c);
    ty_event(c, pod, "Warning", "FailedScheduling", "test", "0/4 nodes are available");
    assert_int_equal(kc_fake_count(c, "create", "events"), 1);
    assert_int_equal(kc_fake_count(c, NULL, NULL), 1);
    json_decref(pod);
    kc_free(c);
}

/* Gone from the server (Event TTL): the patch finds nothing, a create. */
static void test_gone_created_again(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *pod = involved("p");
    kc_list l;
    ty_error err;
    (void)state;

    ty_error_init(&err);
    kc_fake_set_reads_local(c, false);
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    assert_int_equal(only_event_count(c), 2);
    assert_int_equal(kc_list_objects(c, "events", NULL, &l, &err), 0);
    ty_obj_unref(kc_delete(c, "events", "a", ty_jmeta(ty_obj_json(l.items[0]), "name"), NULL, NULL, &err));
    kc_list_free(&l);
    kc_fake_clear_actions(c);
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    assert_int_equal(only_event_count(c), 1);
    assert_int_equal(kc_fake_count(c, "create", "events"), 1);
    /* and the next is a patch again */
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    assert_int_equal(only_event_count(c), 2);
    json_decref(pod);
    kc_free(c);
}

/* A client whose reads are local (embedded) keeps the create-then-bump;
 * so does a repeat this client did not write (another replica's Event). */
static void test_not_remembered(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *pod = involved("p");
    (void)state;

    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    kc_fake_clear_actions(c);
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    assert_int_equal(kc_fake_count(c, "create", "events"), 1); /* 409 */
    assert_int_equal(kc_fake_count(c, "update", "events"), 1);
    assert_int_equal(only_event_count(c), 2);
    kc_fake_set_reads_local(c, false);
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    assert_int_equal(only_event_count(c), 3);
    kc_fake_clear_actions(c);
    ty_event(c, pod, "Normal", "Pulled", "test", "image pulled");
    assert_int_equal(kc_fake_count(c, "patch", "events"), 1);
    assert_int_equal(only_event_count(c), 4);
    json_decref(pod);
    kc_free(c);
}

/* At most 4,096 names, and none of a freed client's. */
static void test_bounded(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *pod = involved("p");
    size_t before = kc_record_remembered();
    (void)state;

    kc_fake_set_reads_local(c, false);
    for (int i = 0; i < 4200; i++)
        ty_event(c, pod, "Normal", "Created", "test", "created %d", i);
    assert_true(kc_record_remembered() <= 4096);
    assert_true(kc_record_remembered() >= 4096 - before);
    kc_free(c);
    assert_int_equal(kc_record_remembered(), 0);
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_is_one_patch),
        cmocka_unit_test(test_gone_created_again),
        cmocka_unit_test(test_not_remembered),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
