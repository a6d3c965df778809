/* test_kc_status.c - a KC_STATUS write through the embedded client takes
 * what a status subresource takes (client/kc.h): a custom resource's status
 * alone, a pod's status with its labels, annotations and finalizers; the
 * rest the function changed is dropped, on every path (kc_mutate, a batch,
 * light and arena hints), and a resourceVersion it set stays a precondition.
 * The job controllers kept their memory (restart counts, consumed actions)
 * in annotations changed in status writes: against an API server those were
 * lost (test_jobs_engine checks the restarts, t0800 the actions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "store_fixture.h"
#include <string.h>

#include "base/jsonown.h"
#include "kc_fixture.h"

#define VCJOBS "jobs.batch.volcano.sh"

static void make(store_fixture *f, const char *res, const char *text)
{
    ty_error err;
    json_t *obj = json_loads(text, 0, NULL);
    ty_obj *o;

    ty_error_init(&err);
    assert_non_null(obj);
    o = kc_create(KC(f->s), res, "default", obj, &err);
    if (!o)
        fail_msg("create: %s", err.text);
    ty_obj_unref(o);
}

/* A status function that also writes an annotation, a label, a finalizer,
 * the spec and an ownerReference: what a controller must not rely on. */
static int greedy(json_t *obj, void *arg, ty_error *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *ann, *spec;

    (void)err;
    json_object_set_new(obj, "status", json_pack("{s:s}", "phase", (const char *)arg));
    ann = ty_json_own(meta, "annotations");
    if (!ann) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    json_object_set_new(ann, "trainyard.io/restarts", json_string("7"));
    json_object_set_new(meta, "labels", json_pack("{s:s}", "l", "v"));
    json_object_set_new(meta, "finalizers", json_pack("[s]", "example.org/f"));
    json_object_set_new(meta, "ownerReferences",
                        json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind", "Pod",
                                  "name", "x", "uid", "u"));
    spec = json_deep_copy(json_object_get(obj, "spec"));
    json_object_set_new(spec, "added", json_true());
    json_object_set_new(obj, "spec", spec);
    json_object_set_new(obj, "extra", json_true());
    return 0;
}

static json_t *get(store_fixture *f, const char *res, const char *name)
{
    ty_obj *o = kc_get(KC(f->s), res, "default", name, NULL);
    json_t *j;

    assert_non_null(o);
    j = ty_obj_json_copy(o);
    ty_obj_unref(o);
    return j;
}

static const char *at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

static void test_custom_resource_status_only(void **state)
{
    store_fixture *f = *state;
    ty_obj *o;
    json_t *j;

    make(f, VCJOBS,
         "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
         "\"metadata\":{\"name\":\"j\",\"annotations\":{\"a\":\"1\"}},"
         "\"spec\":{\"minAvailable\":1,\"tasks\":[]}}");
    o = kc_mutate(KC(f->s), VCJOBS, "default", "j", greedy, "Running", KC_STATUS, NULL);
    assert_non_null(o);
    ty_obj_unref(o);
    j = get(f, VCJOBS, "j");
    assert_string_equal(at(j, "status", "phase"), "Running");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(j, "metadata"), "annotations"),
                            "a")),
                        "1");
    assert_null(json_object_get(json_object_get(json_object_get(j, "metadata"), "annotations"),
                                "trainyard.io/restarts"));
    assert_null(json_object_get(json_object_get(j, "metadata"), "labels"));
    assert_null(json_object_get(json_object_get(j, "metadata"), "finalizers"));
    assert_null(json_object_get(json_object_get(j, "metadata"), "ownerReferences"));
    assert_null(json_object_get(json_object_get(j, "spec"), "added"));
    assert_null(json_object_get(j, "extra"));
    json_decref(j);
}

/* The same in a batch with the arena hint, as the controllers write. */
static void test_batch_status_only(void **state)
{
    store_fixture *f = *state;
    kc_op op;
    json_t *j;

    make(f, VCJOBS,
         "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
         "\"metadata\":{\"name\":\"b\"},\"spec\":{\"minAvailable\":1,\"tasks\":[]}}");
    op = kc_op_mutate(VCJOBS, "default", "b", greedy, "Pending", KC_STATUS);
    op.flags |= KC_ARENA;
    assert_int_equal(kc_write_all(KC(f->s), &op, 1), 0);
    kc_op_clear(&op);
    j = get(f, VCJOBS, "b");
    assert_string_equal(at(j, "status", "phase"), "Pending");
    assert_null(json_object_get(json_object_get(j, "metadata"), "annotations"));
    assert_null(json_object_get(json_object_get(j, "spec"), "added"));
    json_decref(j);
}

/* kube-apiserver's pods/status takes labels, annotations and finalizers,
 * not the spec or ownerReferences. */
static void test_pod_status_metadata(void **state)
{
    store_fixture *f = *state;
    ty_obj *o;
    json_t *j;

    make(f, "pods",
         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
         "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
    o = kc_mutate(KC(f->s), "pods", "default", "p", greedy, "Running", KC_STATUS, NULL);
    assert_non_null(o);
    ty_obj_unref(o);
    j = get(f, "pods", "p");
    assert_string_equal(at(j, "status", "phase"), "Running");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(j, "metadata"), "annotations"),
                            "trainyard.io/restarts")),
                        "7");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(j, "metadata"), "labels"), "l")),
                        "v");
    assert_int_equal(json_array_size(json_object_get(json_object_get(j, "metadata"),
                                                     "finalizers")),
                     1);
    assert_null(json_object_get(json_object_get(j, "metadata"), "ownerReferences"));
    assert_null(json_object_get(json_object_get(j, "spec"), "added"));
    assert_null(json_object_get(j, "extra"));
    json_decref(j);
}

static int stale_rv(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(arg));
    json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Failed"));
    return 0;
}

/* A resourceVersion the function sets is still the write's precondition. */
static void test_rv_precondition_kept(void **state)
{
    store_fixture *f = *state;
    ty_error err;
    ty_obj *o;
    char rv[TY_RV_MAX];

    make(f, VCJOBS,
         "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
         "\"metadata\":{\"name\":\"r\"},\"spec\":{\"minAvailable\":1,\"tasks\":[]}}");
    o = kc_get(KC(f->s), VCJOBS, "default", "r", NULL);
    ty_obj_rv(o, rv, sizeof(rv));
    ty_obj_unref(o);
    o = kc_mutate(KC(f->s), VCJOBS, "default", "r", greedy, "Running", KC_STATUS, NULL);
    ty_obj_unref(o);
    ty_error_init(&err);
    o = kc_mutate(KC(f->s), VCJOBS, "default", "r", stale_rv, rv, KC_STATUS, &err);
    assert_null(o);
    assert_int_equal(err.code, TY_ECONFLICT);
    ty_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_custom_resource_status_only, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_batch_status_only, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_pod_status_metadata, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_rv_precondition_kept, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
