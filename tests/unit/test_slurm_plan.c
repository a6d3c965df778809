/* test_slurm_plan.c - the Slurm backend's port moves (sl_plan.c): where two
 * pods of a node would take one port, the environment and arguments of every
 * pod of the job follow the moved port, and nothing else changes; and the
 * Slurm time limit a gang's deadlines give (sl_submit.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/jsonget.h"
#include "runtime/slurm/sl_int.h"

static json_t *pod(const char *name, const char *env_json, const char *args_json)
{
    json_t *p = json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:o, s:o}]}}", "metadata", "name", name,
                          "namespace", "team", "spec", "containers", "name", "c", "env",
                          json_loads(env_json, 0, NULL), "args",
                          json_loads(args_json ? args_json : "[]", 0, NULL));
    assert_non_null(p);
    return p;
}

static const char *env_of(const json_t *p, const char *name)
{
    const json_t *env = json_object_get(json_array_get(
                            json_object_get(json_object_get(p, "spec"), "containers"), 0),
                                        "env"),
                 *e;
    size_t i;
    json_array_foreach(env, i, e)
        if (!strcmp(ty_jstr(e, "name"), name))
            return ty_jstr(e, "value");
    return NULL;
}

static const char *arg0(const json_t *p)
{
    return json_string_value(json_array_get(
        json_object_get(json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0),
                        "args"),
        0));
}

/* PyTorch: the master's 23456 moved; every pod's MASTER_PORT (beside a
 * MASTER_ADDR naming the master) follows; WORLD_SIZE does not. */
static void test_master_port_follows(void **state)
{
    (void)state;
    const char *env = "[{\"name\":\"MASTER_ADDR\",\"value\":\"job-master-0\"},"
                      "{\"name\":\"MASTER_PORT\",\"value\":\"23456\"},"
                      "{\"name\":\"WORLD_SIZE\",\"value\":\"23456\"}]";
    json_t *pods[2] = {pod("job-master-0", env, NULL), pod("job-worker-0", env, NULL)};
    json_t *ports[2] = {json_pack("{s:i}", "23456", 20001), json_object()};

    sl_rewrite_ports(pods, ports, 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(env_of(pods[i], "MASTER_PORT"), "20001");
        assert_string_equal(env_of(pods[i], "MASTER_ADDR"), "job-master-0");
        assert_string_equal(env_of(pods[i], "WORLD_SIZE"), "23456");
    }
    for (int i = 0; i < 2; i++) {
        json_decref(pods[i]);
        json_decref(ports[i]);
    }
}

/* The worker's port moved, not the master's: MASTER_PORT stays. */
static void test_other_pods_port_stays(void **state)
{
    (void)state;
    const char *env = "[{\"name\":\"MASTER_ADDR\",\"value\":\"job-master-0\"},"
                      "{\"name\":\"MASTER_PORT\",\"value\":\"23456\"}]";
    json_t *pods[2] = {pod("job-master-0", env, NULL), pod("job-worker-0", env, NULL)};
    json_t *ports[2] = {json_object(), json_pack("{s:i}", "23456", 20002)};

    sl_rewrite_ports(pods, ports, 2);
    assert_string_equal(env_of(pods[0], "MASTER_PORT"), "23456");
    assert_string_equal(env_of(pods[1], "MASTER_PORT"), "23456");
    for (int i = 0; i < 2; i++) {
        json_decref(pods[i]);
        json_decref(ports[i]);
    }
}

/* TF_CONFIG-like values: "<name>:<port>" with the pod's name in any of its
 * DNS forms; a name that only ends like a pod's is not it. */
static void test_host_port_pairs(void **state)
{
    (void)state;
    const char *env =
        "[{\"name\":\"TF_CONFIG\",\"value\":\"{\\\"worker\\\":[\\\"tf-worker-0.team.svc:2222\\\","
        "\\\"tf-worker-1.team.svc:2222\\\",\\\"xtf-worker-1:2222\\\",\\\"tf-worker-1:22220\\\"]}\"}]";
    json_t *pods[2] = {pod("tf-worker-0", env, "[\"--peer=tf-worker-1.team.svc.cluster.local:2222\"]"),
                       pod("tf-worker-1", env, NULL)};
    json_t *ports[2] = {json_object(), json_pack("{s:i}", "2222", 20100)};

    sl_rewrite_ports(pods, ports, 2);
    assert_string_equal(env_of(pods[0], "TF_CONFIG"),
                        "{\"worker\":[\"tf-worker-0.team.svc:2222\",\"tf-worker-1.team.svc:20100\","
                        "\"xtf-worker-1:2222\",\"tf-worker-1:22220\"]}");
    assert_string_equal(arg0(pods[0]), "--peer=tf-worker-1.team.svc.cluster.local:20100");
    for (int i = 0; i < 2; i++) {
        json_decref(pods[i]);
        json_decref(ports[i]);
    }
}

/* A PORT variable without a partner is the pod's own; one whose partner
 * says localhost too. */
static void test_own_port(void **state)
{
    (void)state;
    json_t *pods[1] = {pod("ms-scheduler-0",
                           "[{\"name\":\"MY_PORT\",\"value\":\"8118\"},"
                           "{\"name\":\"MS_SCHED_HOST\",\"value\":\"localhost\"},"
                           "{\"name\":\"MS_SCHED_PORT\",\"value\":\"8118\"}]",
                           NULL)};
    json_t *ports[1] = {json_pack("{s:i}", "8118", 20200)};

    sl_rewrite_ports(pods, ports, 1);
    assert_string_equal(env_of(pods[0], "MY_PORT"), "20200");
    assert_string_equal(env_of(pods[0], "MS_SCHED_PORT"), "20200");
    json_decref(pods[0]);
    json_decref(ports[0]);
}

/* Nothing moved: nothing is touched. */
static void test_nothing_moved(void **state)
{
    (void)state;
    json_t *pods[1] = {pod("a", "[{\"name\":\"PORT\",\"value\":\"1\"}]", "[\"a:1\"]")};
    json_t *ports[1] = {json_object()};
    json_t *before = json_deep_copy(pods[0]);

    sl_rewrite_ports(pods, ports, 1);
    assert_true(json_equal(before, pods[0]));
    json_decref(before);
    json_decref(pods[0]);
    json_decref(ports[0]);
}

/* 2026-11-28T12:00:00Z */
#define T0 ((time_t)1795867200)

static void test_time_limit(void **state)
{
    json_t *a = json_pack("{s:{}}", "spec"), *b = json_pack("{s:{s:i}}", "spec",
                                                              "activeDeadlineSeconds", 600);
    json_t *pods[2] = {a, b};
    json_t *owner = json_pack("{s:{s:{s:i}}, s:{s:s}}", "spec", "runPolicy",
                              "activeDeadlineSeconds", 3600, "status", "startTime",
                              "2026-11-28T12:00:00Z");
    json_t *unstarted = json_pack("{s:{s:{s:i}}}", "spec", "runPolicy",
                                  "activeDeadlineSeconds", 90);
    json_t *none = json_pack("{s:{s:{}}}", "spec", "runPolicy");
    (void)state;

    assert_int_equal(sl_time_limit_min(pods, 1, NULL, T0), 0);
    assert_int_equal(sl_time_limit_min(pods, 1, none, T0), 0);
    /* a pod's own deadline: 600 s = 10 minutes */
    assert_int_equal(sl_time_limit_min(pods, 2, NULL, T0), 10);
    /* the job's: an hour from its start, 50 min 1 s left -> 51 minutes */
    assert_int_equal(sl_time_limit_min(pods, 1, owner, T0 + 599), 51);
    /* the tighter of the two */
    assert_int_equal(sl_time_limit_min(pods, 2, owner, T0 + 599), 10);
    assert_int_equal(sl_time_limit_min(pods, 2, owner, T0 + 3300), 5);
    /* not started: the whole deadline, rounded up */
    assert_int_equal(sl_time_limit_min(pods, 1, unstarted, T0), 2);
    /* past it: the least Slurm takes */
    assert_int_equal(sl_time_limit_min(pods, 1, owner, T0 + 7200), 1);
    json_decref(a);
    json_decref(b);
    json_decref(owner);
    json_decref(unstarted);
    json_decref(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_master_port_follows), cmocka_unit_test(test_other_pods_port_stays),
        cmocka_unit_test(test_host_port_pairs),     cmocka_unit_test(test_own_port),
        cmocka_unit_test(test_nothing_moved),      cmocka_unit_test(test_time_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
