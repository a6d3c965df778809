/* test_sched.c - the first-fit placement behind sched.h, against a real store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "scheduler/sched.h"
#include "store/store.h"

typedef struct fixture {
    char dir[64];
    ty_store *s;
    ty_sched *sc;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;
    ty_error_init(&err);
    strcpy(f->dir, "/tmp/ty-sched-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->s = store_open(f->dir, &err);
    assert_non_null(f->s);
    json_t *node = json_loads(
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
        "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\","
        "\"nvidia.com/gpu\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
        0, NULL);
    store_obj *o = store_create(f->s, "nodes", "", node, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(node);
    f->sc = sched_start(f->s, &err);
    assert_non_null(f->sc);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[128];
    sched_stop(f->sc);
    store_close(f->s);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void create_pod(fixture *f, const char *name, int gpus, const char *sched)
{
    ty_error err;
    ty_error_init(&err);
    json_t *pod = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:[{s:s, s:s, s:{s:{s:i}}}]}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "spec",
                            "schedulerName", sched, "containers", "name", "c", "image", "x",
                            "resources", "limits", "nvidia.com/gpu", gpus);
    store_obj *o = store_create(f->s, "pods", "default", pod, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(pod);
}

/* Waits up to 5 s for the pod's nodeName (or "" when expect is ""), returns it. */
static char *wait_node(fixture *f, const char *name, const char *expect)
{
    static char node[64];
    for (int i = 0; i < 500; i++) {
        store_obj *o = store_get(f->s, "pods", "default", name, NULL);
        const char *n = json_string_value(
            json_object_get(json_object_get(store_obj_json(o), "spec"), "nodeName"));
        snprintf(node, sizeof(node), "%s", n ? n : "");
        store_obj_unref(o);
        if (strcmp(node, expect) == 0)
            return node;
        usleep(10000);
    }
    return node;
}

static const char *scheduled_message(fixture *f, const char *name)
{
    static char msg[256];
    store_obj *o = store_get(f->s, "pods", "default", name, NULL);
    size_t i;
    json_t *c;
    msg[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(store_obj_json(o), "status"), "conditions"),
                       i, c)
        if (strcmp(json_string_value(json_object_get(c, "type")), "PodScheduled") == 0)
            snprintf(msg, sizeof(msg), "%s",
                     json_string_value(json_object_get(c, "message")) ?: "");
    store_obj_unref(o);
    return msg;
}

static int set_phase(json_t *pod, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(pod, "status"), "phase", json_string(arg));
    return 0;
}

static void test_binds_until_full_then_waits(void **state)
{
    fixture *f = *state;
    create_pod(f, "a", 3, "volcano");
    assert_string_equal(wait_node(f, "a", "n1"), "n1");
    create_pod(f, "b", 3, "trainyard");
    /* b does not fit next to a: it waits with the reason kube-scheduler gives. */
    for (int i = 0; i < 500 && !*scheduled_message(f, "b"); i++)
        usleep(10000);
    assert_string_equal(scheduled_message(f, "b"),
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    assert_string_equal(wait_node(f, "b", ""), "");
    /* a finishes: its GPUs are free again and b is placed. */
    store_obj *o = store_mutate(f->s, "pods", "default", "a", set_phase, "Succeeded", NULL);
    assert_non_null(o);
    store_obj_unref(o);
    assert_string_equal(wait_node(f, "b", "n1"), "n1");
}

static void test_foreign_scheduler_left_alone(void **state)
{
    fixture *f = *state;
    create_pod(f, "other", 0, "someone-else");
    usleep(200000);
    assert_string_equal(wait_node(f, "other", ""), "");
    create_pod(f, "mine", 0, "default-scheduler");
    assert_string_equal(wait_node(f, "mine", "n1"), "n1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_binds_until_full_then_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_scheduler_left_alone, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
