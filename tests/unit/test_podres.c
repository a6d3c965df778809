/* test_podres.c - a pod's effective requests (model/podres.h) and its three
 * readers agreeing: the PodGroup's minResources (kit_add_requests) and the
 * local runtime's GPUs (rt_pod_gpu_request) are what the scheduler places
 * (test_sched.c's test_requests_with_overhead reads the scheduler). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "controller/kit.h"
#include "model/podres.h"
#include "runtime/local/rt_internal.h"

/* Main containers of 1 and 2 CPUs (the second's request is its limit), an
 * init container of 4 CPUs and a sidecar of 500m, overhead 250m: the pod
 * needs max(1 + 2 + 0.5, 4 + 0) + 0.25 = 4.25 CPUs. The old rules said 3
 * (PodGroup: containers only) and 4 (scheduler: no sidecar or overhead). */
static const char *SPEC =
    "{\"containers\":["
    "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
    "\"limits\":{\"cpu\":\"8\",\"nvidia.com/gpu\":1}}},"
    "{\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"2\"}}}],"
    "\"initContainers\":["
    "{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"4\",\"nvidia.com/gpu\":\"2\"},"
    "\"limits\":{\"nvidia.com/gpu\":\"2\"}}},"
    "{\"name\":\"side\",\"restartPolicy\":\"Always\","
    "\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}],"
    "\"overhead\":{\"cpu\":\"250m\"}}";

static void test_kubernetes_rule(void **state)
{
    (void)state;
    json_t *spec = json_loads(SPEC, 0, NULL);
    podres r;

    assert_non_null(spec);
    podres_of_spec(spec, &r);
    assert_false(r.truncated);
    assert_int_equal(podres_get(&r, "cpu"), 4250);
    assert_int_equal(podres_get(&r, "memory"), 1024LL * 1024 * 1024 * 1000);
    /* a request wins over its limit; the init container's 2 over the sum 1 */
    assert_int_equal(podres_get(&r, "nvidia.com/gpu"), 2000);
    assert_int_equal(podres_get(&r, "ephemeral-storage"), 0);
    json_decref(spec);
}

/* A sidecar started before an init container runs beside it. */
static void test_sidecar_before_init(void **state)
{
    (void)state;
    json_t *spec = json_loads(
        "{\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
        "\"initContainers\":["
        "{\"name\":\"side\",\"restartPolicy\":\"Always\","
        "\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
        "{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}",
        0, NULL);
    podres r;

    podres_of_spec(spec, &r);
    assert_int_equal(podres_get(&r, "cpu"), 4000); /* max(1 + 1, 3 + 1) */
    json_decref(spec);
}

/* The PodGroup's sums and the runtime's GPUs follow the same rule. */
static void test_readers_agree(void **state)
{
    (void)state;
    json_t *spec = json_loads(SPEC, 0, NULL);
    json_t *sums = json_object(), *pod = json_pack("{s:O}", "spec", spec);

    kit_add_requests(sums, spec, 3);
    assert_int_equal(json_integer_value(json_object_get(sums, "cpu")), 3 * 4250);
    assert_int_equal(json_integer_value(json_object_get(sums, "nvidia.com/gpu")), 3 * 2000);
    assert_int_equal(rt_pod_gpu_request(pod), 2);
    json_decref(sums);
    json_decref(pod);
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubernetes_rule),
        cmocka_unit_test(test_sidecar_before_init),
        cmocka_unit_test(test_readers_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
