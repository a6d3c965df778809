/* test_rt_sim.c - the simulated-node runtime against a real store: node
 * registration and what a restart keeps, a pod's run (Running, then
 * Succeeded or Failed after its sim-duration), deletion, re-adoption of a
 * running pod, and the --sim-nodes spec. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

#include "api/kinds.h"
#include "api/registry.h"
#include "base/timeutil.h"
#include "base/treearena.h"
#include "runtime/sim/sim.h"
#include "store/store.h"
#include "kc_fixture.h"

typedef struct fixture {
    char dir[64];
    ty_store *s;
    rt_sim *rt;
} fixture;

static rt_sim *start_sim(fixture *f, int count)
{
    rt_sim_opts o = {.count = count, .gpus = 8, .cpu = "32", .memory = "256Gi"};
    ty_error err;
    rt_sim *rt;

    ty_error_init(&err);
    rt = rt_sim_start(KC(f->s), &o, &err);
    if (!rt)
        fail_msg("rt_sim_start: %s", err.text);
    return rt;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->s = store_fixture_open(f->dir, NULL);
    f->rt = start_sim(f, 3);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rt_sim_stop(f->rt);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

static json_t *get(fixture *f, const char *resource, const char *ns, const char *name)
{
    store_obj *o = store_get(f->s, resource, ns, name, NULL);
    json_t *j = o ? json_deep_copy(store_obj_json(o)) : NULL;
    store_obj_unref(o);
    return j;
}

static const char *at(const json_t *o, const char *a, const char *b)
{
    const char *v = json_string_value(json_object_get(json_object_get(o, a), b));
    return v ? v : "";
}

/* A pod bound to node with the given annotations (a JSON object text, ` for "). */
static void make_pod(fixture *f, const char *name, const char *node, const char *ann)
{
    char text[2048];
    json_t *obj;
    ty_error err;
    store_obj *o;

    snprintf(text, sizeof(text),
             "{`apiVersion`:`v1`,`kind`:`Pod`,`metadata`:{`name`:`%s`,`namespace`:`default`,"
             "`annotations`:%s},`spec`:{`nodeName`:`%s`,`restartPolicy`:`Never`,"
             "`initContainers`:[{`name`:`init`,`image`:`x`}],"
             "`containers`:[{`name`:`main`,`image`:`x`,`resources`:{`limits`:"
             "{`nvidia.com/gpu`:`1`}}}]}}",
             name, ann, node);
    for (char *p = text; *p; p++)
        if (*p == '`')
            *p = '"';
    obj = json_loads(text, 0, NULL);
    assert_non_null(obj);
    ty_error_init(&err);
    if (api_prepare(&api_pod, obj, NULL, &err) < 0)
        fail_msg("invalid pod: %s", err.text);
    o = store_create(f->s, "pods", "default", obj, &err);
    if (!o)
        fail_msg("create: %s", err.text);
    store_obj_unref(o);
    json_decref(obj);
}

/* How long a wait for the runtime may take: far past what any machine
 * needs, so that only a runtime that never gets there fails. */
#define WAIT_MS 60000

static json_t *wait_phase(fixture *f, const char *name, const char *want)
{
    for (int64_t deadline = ty_now_ms() + WAIT_MS; ty_now_ms() < deadline;) {
        json_t *p = get(f, "pods", "default", name);
        if (p && !strcmp(at(p, "status", "phase"), want))
            return p;
        json_decref(p);
        usleep(10 * 1000);
    }
    json_t *p = get(f, "pods", "default", name);
    char *dump = p ? json_dumps(p, JSON_INDENT(1)) : NULL;
    fail_msg("pod %s did not reach %s in %d ms: %s", name, want, WAIT_MS,
             dump ? dump : "(no pod)");
    return NULL;
}

static const json_t *cstate(const json_t *pod, const char *list, const char *state)
{
    return json_object_get(json_object_get(json_array_get(json_object_get(json_object_get(
                                                               pod, "status"),
                                                           list),
                                                           0),
                                           "state"),
                           state);
}

static void test_nodes_registered(void **state)
{
    fixture *f = *state;
    const char *names[] = {"sim-0", "sim-1", "sim-2"};

    for (int i = 0; i < 3; i++) {
        json_t *n = get(f, "nodes", "", names[i]);
        const json_t *alloc;
        assert_non_null(n);
        alloc = json_object_get(json_object_get(n, "status"), "allocatable");
        assert_string_equal(json_string_value(json_object_get(alloc, "nvidia.com/gpu")), "8");
        assert_string_equal(json_string_value(json_object_get(alloc, "cpu")), "32");
        assert_string_equal(json_string_value(json_object_get(alloc, "memory")), "256Gi");
        assert_string_equal(json_string_value(json_object_get(alloc, "pods")), "110");
        assert_true(json_equal(alloc, json_object_get(json_object_get(n, "status"),
                                                      "capacity")));
        assert_string_equal(at(json_object_get(n, "metadata"), "labels", "trainyard.io/sim"),
                            "true");
        assert_string_equal(
            at(json_object_get(n, "metadata"), "labels", "kubernetes.io/hostname"), names[i]);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(json_object_get(json_object_get(n, "status"),
                                                               "conditions"),
                                               0),
                                "status")),
                            "True");
        json_decref(n);
    }
    assert_null(get(f, "nodes", "", "sim-3"));
}

static void test_pod_runs_then_succeeds(void **state)
{
    fixture *f = *state;
    json_t *p;
    const json_t *t;

    /* (Running for 3 s: a look every 10 ms sees it however loaded the
     * machine is) */
    make_pod(f, "p1", "sim-1", "{`trainyard.io/sim-duration`:`3`}");
    p = wait_phase(f, "p1", "Running");
    assert_non_null(cstate(p, "containerStatuses", "running"));
    assert_non_null(cstate(p, "initContainerStatuses", "terminated"));
    assert_string_equal(at(p, "status", "hostIP"), "10.0.0.2");
    assert_true(strlen(at(p, "status", "podIP")) > 0);
    assert_true(strlen(at(p, "status", "startTime")) > 0);
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(p, "metadata"), "finalizers"), 0)),
                        RT_SIM_FINALIZER);
    json_decref(p);
    p = wait_phase(f, "p1", "Succeeded");
    t = cstate(p, "containerStatuses", "terminated");
    assert_non_null(t);
    assert_int_equal(json_integer_value(json_object_get(t, "exitCode")), 0);
    assert_string_equal(json_string_value(json_object_get(t, "reason")), "Completed");
    json_decref(p);
    /* the ended version, as the running one, built in the tree arena */
    store_obj *o = store_get(f->s, "pods", "default", "p1", NULL);
    assert_non_null(o);
    assert_true(store_obj_has_tree(o));
    assert_true(ty_tree_arena_owns(json_object_get(store_obj_json(o), "status")));
    store_obj_unref(o);
}

/* A store whose history keeps the tree of its last event only: a running
 * pod's tree goes as soon as anything else is written. */
static int setup_few_trees(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    store_options o = {.history_trees = 1};

    f->s = store_fixture_open(f->dir, &o);
    f->rt = start_sim(f, 3);
    *state = f;
    return 0;
}

/* A pod whose tree went while it ran ends through a light copy (its
 * metadata and status; sim_pod_finish_op): the ended version keeps that
 * light tree, its text still holds the whole spec, and the containers'
 * statuses are what the whole pod gives (one per container, terminated,
 * from the Running status's list), the init containers' kept. */
static void test_cold_pod_ends_light(void **state)
{
    fixture *f = *state;
    json_t *p, *running;
    const json_t *cs, *t;
    store_obj *o = NULL;
    bool light = false;
    char cid[64];

    make_pod(f, "cold", "sim-1", "{`trainyard.io/sim-duration`:`6`}");
    running = wait_phase(f, "cold", "Running");
    /* The runtime is stopped meanwhile, so that the pod cannot end before
     * its tree went however slowly the sweeper comes (it ends the pod once
     * started again, reading its text: a cold pod stays cold). A later
     * write pushes its Running event out of the tree window, and the
     * sweeper (a step every 100 ms) takes the tree nobody reads. */
    rt_sim_stop(f->rt);
    f->rt = NULL;
    make_pod(f, "other", "realnode", "{}");
    for (int64_t deadline = ty_now_ms() + WAIT_MS; ty_now_ms() < deadline;) {
        o = store_get(f->s, "pods", "default", "cold", NULL);
        assert_non_null(o);
        light = store_obj_has_tree(o);
        store_obj_unref(o);
        if (!light)
            break;
        usleep(10 * 1000);
    }
    assert_false(light); /* gone before the pod ends */
    f->rt = start_sim(f, 3);
    /* waited for in its text: a look at the whole object would parse it
     * and keep that tree */
    for (int64_t deadline = ty_now_ms() + WAIT_MS; ty_now_ms() < deadline;) {
        char *owned;
        const char *text;
        bool ended;

        o = store_get(f->s, "pods", "default", "cold", NULL);
        assert_non_null(o);
        text = store_obj_text_read(o, NULL, &owned);
        ended = text && strstr(text, "\"phase\":\"Succeeded\"");
        free(owned);
        if (ended)
            break;
        store_obj_unref(o);
        o = NULL;
        usleep(10 * 1000);
    }
    assert_non_null(o);
    assert_false(store_obj_has_tree(o));
    const json_t *lt = store_obj_json_light(o, &light);
    assert_true(light);
    assert_null(json_object_get(json_object_get(lt, "spec"), "containers"));
    assert_string_equal(at(lt, "spec", "nodeName"), "sim-1");
    assert_string_equal(at(lt, "status", "phase"), "Succeeded");
    /* the text (and what the whole object parses to) keeps the spec */
    p = json_deep_copy(store_obj_json(o));
    store_obj_unref(o);
    assert_true(json_equal(json_object_get(p, "spec"), json_object_get(running, "spec")));
    assert_int_equal(json_array_size(json_object_get(json_object_get(p, "status"),
                                                     "containerStatuses")),
                     1);
    cs = json_array_get(json_object_get(json_object_get(p, "status"), "containerStatuses"), 0);
    snprintf(cid, sizeof(cid), "sim://%.8s-main", at(p, "metadata", "uid"));
    assert_string_equal(json_string_value(json_object_get(cs, "name")), "main");
    assert_string_equal(json_string_value(json_object_get(cs, "image")), "x");
    assert_string_equal(json_string_value(json_object_get(cs, "containerID")), cid);
    assert_true(json_is_false(json_object_get(cs, "ready")));
    assert_true(json_is_false(json_object_get(cs, "started")));
    t = cstate(p, "containerStatuses", "terminated");
    assert_non_null(t);
    assert_int_equal(json_integer_value(json_object_get(t, "exitCode")), 0);
    assert_string_equal(json_string_value(json_object_get(t, "reason")), "Completed");
    assert_string_equal(json_string_value(json_object_get(t, "containerID")), cid);
    assert_string_equal(json_string_value(json_object_get(t, "startedAt")),
                        at(p, "status", "startTime"));
    assert_true(json_equal(json_object_get(json_object_get(p, "status"), "initContainerStatuses"),
                           json_object_get(json_object_get(running, "status"),
                                           "initContainerStatuses")));
    json_decref(running);
    json_decref(p);
}

static void test_exit_code_fails(void **state)
{
    fixture *f = *state;
    json_t *p;
    const json_t *t;

    make_pod(f, "p3", "sim-0",
             "{`trainyard.io/sim-duration`:`0.05`,`trainyard.io/sim-exit-code`:`3`}");
    p = wait_phase(f, "p3", "Failed");
    t = cstate(p, "containerStatuses", "terminated");
    assert_int_equal(json_integer_value(json_object_get(t, "exitCode")), 3);
    assert_string_equal(json_string_value(json_object_get(t, "reason")), "Error");
    json_decref(p);
}

static void test_unbound_and_foreign_pods_left_alone(void **state)
{
    fixture *f = *state;
    json_t *p;

    make_pod(f, "elsewhere", "realnode", "{}");
    make_pod(f, "beyond", "sim-3", "{}"); /* not one of the 3 */
    make_pod(f, "mine", "sim-2", "{}");
    /* the runtime handles the pods in the order they were written: by the
     * time mine runs, it has passed over the two before it */
    json_decref(wait_phase(f, "mine", "Running"));
    p = get(f, "pods", "default", "elsewhere");
    assert_string_equal(at(p, "status", "phase"), "Pending");
    json_decref(p);
    p = get(f, "pods", "default", "beyond");
    assert_string_equal(at(p, "status", "phase"), "Pending");
    json_decref(p);
}

static void test_delete_running(void **state)
{
    fixture *f = *state;
    store_delete_opts o = {0};
    bool deleted = true;
    ty_error err;
    json_t *p;

    make_pod(f, "victim", "sim-2", "{}");
    json_decref(wait_phase(f, "victim", "Running"));
    ty_error_init(&err);
    store_obj_unref(store_delete(f->s, "pods", "default", "victim", &o, &deleted, &err));
    assert_false(deleted); /* the finalizer holds it until the node lets go */
    for (int64_t deadline = ty_now_ms() + WAIT_MS;
         ty_now_ms() < deadline && (p = get(f, "pods", "default", "victim"));) {
        json_decref(p);
        usleep(10 * 1000);
    }
    assert_null(get(f, "pods", "default", "victim"));
}

static int add_user_bits(json_t *obj, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"), "team",
                        json_string("vision"));
    json_object_set_new(json_object_get(obj, "spec"), "unschedulable", json_true());
    json_object_set_new(json_object_get(obj, "spec"), "taints",
                        json_pack("[{s:s, s:s, s:s}]", "key", "gpu", "value", "a100", "effect",
                                  "NoSchedule"));
    return 0;
}

static void test_restart_keeps_user_changes(void **state)
{
    fixture *f = *state;
    store_obj *o;
    json_t *n;
    uint64_t rv;

    o = store_mutate(f->s, "nodes", "", "sim-1", add_user_bits, NULL, NULL);
    assert_non_null(o);
    rv = store_obj_rv(o);
    store_obj_unref(o);
    rt_sim_stop(f->rt);
    f->rt = start_sim(f, 3);
    n = get(f, "nodes", "", "sim-1");
    assert_string_equal(at(json_object_get(n, "metadata"), "labels", "team"), "vision");
    assert_true(json_is_true(json_object_get(json_object_get(n, "spec"), "unschedulable")));
    assert_int_equal(json_array_size(json_object_get(json_object_get(n, "spec"), "taints")), 1);
    /* an unchanged node is not even rewritten */
    assert_int_equal(strtoull(at(n, "metadata", "resourceVersion"), NULL, 10), rv);
    json_decref(n);

    /* Fewer nodes: the ones beyond the count go. */
    rt_sim_stop(f->rt);
    f->rt = start_sim(f, 2);
    assert_null(get(f, "nodes", "", "sim-2"));
    n = get(f, "nodes", "", "sim-1");
    assert_string_equal(at(json_object_get(n, "metadata"), "labels", "team"), "vision");
    json_decref(n);
}

static void test_restart_adopts_running_pod(void **state)
{
    fixture *f = *state;

    make_pod(f, "long", "sim-0", "{`trainyard.io/sim-duration`:`1.5`}");
    json_decref(wait_phase(f, "long", "Running"));
    rt_sim_stop(f->rt);
    f->rt = start_sim(f, 3);
    json_decref(wait_phase(f, "long", "Succeeded"));
}

static void test_deleted_node_registers_again(void **state)
{
    fixture *f = *state;
    json_t *n = NULL;

    store_obj_unref(store_delete(f->s, "nodes", "", "sim-0", NULL, NULL, NULL));
    for (int64_t deadline = ty_now_ms() + WAIT_MS;
         ty_now_ms() < deadline && !(n = get(f, "nodes", "", "sim-0"));)
        usleep(10 * 1000);
    assert_non_null(n);
    json_decref(n);
}

static void test_parse_spec(void **state)
{
    char cpu[64], mem[64];
    const char *bad[] = {"", "0", "x8", "4x", "4x8:", "4x8:gpu=1", "4x8:cpu=abc", "4x8:cpu=",
                         "4x8:pods=0", "4x8,cpu=1", "-4", "4y8", "100001", "4x8:cpu=1,",
                         "4x2000"};
    rt_sim_opts o = {0};
    ty_error err;

    (void)state;
    ty_error_init(&err);
    assert_int_equal(rt_sim_parse_spec("7", &o, cpu, mem, sizeof(cpu), &err), 0);
    assert_int_equal(o.count, 7);
    assert_int_equal(o.gpus, 0);
    assert_int_equal(rt_sim_parse_spec("5000x8", &o, cpu, mem, sizeof(cpu), &err), 0);
    assert_int_equal(o.count, 5000);
    assert_int_equal(o.gpus, 8);
    assert_int_equal(
        rt_sim_parse_spec("4x2:cpu=96,memory=1Ti,pods=200", &o, cpu, mem, sizeof(cpu), &err),
        0);
    assert_int_equal(o.count, 4);
    assert_int_equal(o.gpus, 2);
    assert_string_equal(o.cpu, "96");
    assert_string_equal(o.memory, "1Ti");
    assert_int_equal(o.pods, 200);
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        rt_sim_opts b = {0};
        if (rt_sim_parse_spec(bad[i], &b, cpu, mem, sizeof(cpu), &err) == 0)
            fail_msg("spec '%s' was accepted", bad[i]);
        assert_true(strlen(err.text) > 0);
        ty_error_clear(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nodes_registered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_runs_then_succeeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_code_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unbound_and_foreign_pods_left_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delete_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_keeps_user_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_adopts_running_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_node_registers_again, setup, teardown),
        cmocka_unit_test(test_parse_spec),
        cmocka_unit_test_setup_teardown(test_cold_pod_ends_light, setup_few_trees, teardown),
    };
    /* forced: the simulated nodes' and the scheduler's writes build in a
     * tree arena scope, sanitizer builds included (base/treearena.h) */
    if (!ty_tree_arena_init(true))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
