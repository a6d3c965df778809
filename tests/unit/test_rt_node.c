/* test_rt_node.c - the local runtime's Node writes keep as an API server
 * keeps them (strict_kc.h): labels and taints by plain writes, conditions
 * and capacity by status writes. The heartbeat and the DiskPressure
 * condition were plain writes, whose status such a server ignores: the
 * node never turned Ready again, nor reported its disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "store_fixture.h"
#include <string.h>

#include "kc_fixture.h"
#include "runtime/local/gpu.h"
#include "runtime/local/rt_internal.h"
#include "strict_kc.h"

static const json_t *cond(const json_t *node, const char *type)
{
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", type))
            return c;
    return NULL;
}

static const char *cond_status(const json_t *node, const char *type)
{
    return json_string_value(json_object_get(cond(node, type), "status")) ?: "";
}

static json_t *node(store_fixture *f)
{
    store_obj *o = store_get(f->s, "nodes", "", "n1", NULL);
    json_t *j;

    assert_non_null(o);
    j = json_deep_copy(store_obj_json(o));
    store_obj_unref(o);
    return j;
}

static int not_ready(json_t *obj, void *arg, ty_error *err)
{
    json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions"), *c;
    size_t i;

    (void)arg, (void)err;
    json_array_foreach(conds, i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Ready"))
            json_object_set_new(c, "status", json_string("Unknown"));
    return 0;
}

static size_t disk_taints(const json_t *n)
{
    size_t i, k = 0;
    json_t *t;

    json_array_foreach(json_object_get(json_object_get(n, "spec"), "taints"), i, t)
        k += !strcmp(json_string_value(json_object_get(t, "key")) ?: "",
                     "node.kubernetes.io/disk-pressure");
    return k;
}

static void test_node_writes(void **state)
{
    store_fixture *f = *state;
    ty_kc *c = strict_new(KC(f->s));
    ty_error err;
    store_obj *o;
    json_t *n;

    rt_gpus *g = rt_gpus_open(2);

    ty_error_init(&err);
    assert_non_null(g);
    assert_int_equal(rt_node_register(c, "n1", g, &err), 0);
    /* again, on the existing node: labels and status both kept */
    assert_int_equal(rt_node_register(c, "n1", g, &err), 0);
    n = node(f);
    assert_string_equal(cond_status(n, "Ready"), "True");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(n, "metadata"), "labels"),
                            "trainyard.io/runtime")),
                        "local");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(n, "metadata"), "labels"),
                            "nvidia.com/gpu.product")),
                        "Trainyard-fake-GPU");
    json_decref(n);

    /* the node controller marks it Unknown; the next heartbeat says Ready */
    o = store_mutate(f->s, "nodes", "", "n1", not_ready, NULL, &err);
    assert_non_null(o);
    store_obj_unref(o);
    assert_int_equal(rt_node_heartbeat(c, "n1", &err), 0);
    n = node(f);
    assert_string_equal(cond_status(n, "Ready"), "True");
    json_decref(n);

    /* disk pressure: the condition (status) and the taint (spec) */
    assert_int_equal(rt_node_set_disk_pressure(c, "n1", true, &err), 0);
    assert_int_equal(rt_node_set_disk_pressure(c, "n1", true, &err), 0);
    n = node(f);
    assert_string_equal(cond_status(n, "DiskPressure"), "True");
    assert_int_equal(disk_taints(n), 1);
    json_decref(n);
    assert_int_equal(rt_node_set_disk_pressure(c, "n1", false, &err), 0);
    n = node(f);
    assert_string_equal(cond_status(n, "DiskPressure"), "False");
    assert_int_equal(disk_taints(n), 0);
    json_decref(n);

    /* GPU health: the condition, allocatable below capacity, no taint */
    assert_int_equal(rt_node_set_gpu_health(c, "n1", 1, "GPU 1 (GPU-x): XID 79", &err), 0);
    n = node(f);
    assert_string_equal(cond_status(n, RT_GPU_CONDITION), "True");
    assert_string_equal(json_string_value(json_object_get(cond(n, RT_GPU_CONDITION), "message")),
                        "GPU 1 (GPU-x): XID 79");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(n, "status"), "allocatable"),
                            "nvidia.com/gpu")),
                        "1");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(n, "status"), "capacity"),
                            "nvidia.com/gpu")),
                        "2");
    assert_int_equal(json_array_size(json_object_get(json_object_get(n, "spec"), "taints")), 0);
    json_decref(n);
    assert_int_equal(rt_node_set_gpu_health(c, "n1", 2, NULL, &err), 0);
    n = node(f);
    assert_string_equal(cond_status(n, RT_GPU_CONDITION), "False");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(n, "status"), "allocatable"),
                            "nvidia.com/gpu")),
                        "2");
    json_decref(n);
    rt_gpus_close(g);
    kc_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_node_writes, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
