/* test_sched_quota.c - the enqueue gate's namespace quotas (core.h,
 * sc_quota_spec; scheduler/quota_gate.c) on small clusters built by hand:
 * a gang its namespace's quota cannot hold waits whole with the quota
 * named, admitted-but-not-created gangs hold their place across cycles,
 * the status's reading counts when it is the larger, a quota holds back
 * its namespace's jobs only, and a job starts once quota frees; and the
 * scheduler component reading ResourceQuotas from a store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"

#include <unistd.h>

#include "base/timeutil.h"
#include "kc_fixture.h"
#include "scheduler/core_int.h"
#include "scheduler/sched.h"

#define GPU(n) ((int64_t)(n) * 1000)

static size_t nbound;

static void on_bind(void *ctx, sc_task *t, sc_node *n)
{
    (void)ctx, (void)n;
    nbound++;
    (void)t;
}

static void cycle(sc_cluster *c, const sc_conf *conf)
{
    sc_hooks h = {.bind = on_bind};
    sc_cycle_stats st;

    nbound = 0;
    sc_cycle(c, conf, &h, &st);
    /* binds confirmed, as the runtime would */
    for (size_t i = 0; i < sc_job_count(c); i++) {
        sc_job *j = sc_job_at(c, i);
        for (size_t k = 0; k < sc_job_ntasks(j); k++)
            if (sc_task_get_status(sc_job_task(j, k)) == SC_TASK_BINDING)
                sc_task_set_status(c, sc_job_task(j, k), SC_TASK_RUNNING);
    }
}

static void node(sc_cluster *c, const char *name, int gpus)
{
    sc_node_spec s = {.name = name, .ready = true};
    s.allocatable.v[SC_CPU] = 64000;
    s.allocatable.v[SC_MEM] = (int64_t)64 << 40;
    s.allocatable.v[SC_PODS] = 110 * 1000;
    s.allocatable.v[SC_GPU] = GPU(gpus);
    assert_non_null(sc_node_upsert(c, &s));
}

/* A gang's PodGroup: min_member pods of gpus GPUs each; no pods yet. */
static sc_job *group(sc_cluster *c, const char *key, int min_member, int gpus, double created)
{
    sc_job_spec s = {.key = key, .min_member = min_member, .created = created,
                     .preemptable = true};
    sc_job *j;
    s.min_resources.v[SC_GPU] = GPU(gpus) * min_member;
    j = sc_job_upsert(c, &s);
    assert_non_null(j);
    return j;
}

/* Its controller made its pods (the gang was admitted). */
static void pods(sc_cluster *c, sc_job *j, int gpus)
{
    char name[128];
    for (int i = 0; i < j->min_member; i++) {
        snprintf(name, sizeof(name), "%s-%d", sc_job_key(j), i);
        sc_task_spec s = {.key = name, .job = sc_job_key(j), .status = SC_TASK_PENDING};
        s.request.v[SC_GPU] = GPU(gpus);
        s.request.v[SC_CPU] = 1000;
        s.request.v[SC_PODS] = 1000;
        assert_non_null(sc_task_upsert(c, &s));
    }
}

static void finish(sc_cluster *c, sc_job *j)
{
    for (size_t i = 0; i < sc_job_ntasks(j); i++)
        sc_task_set_status(c, sc_job_task(j, i), SC_TASK_SUCCEEDED);
}

static void quota(sc_cluster *c, const char *ns, const char *name, int gpus, int used_gpus,
                  int max_pods)
{
    sc_quota_spec q = {.ns = ns, .name = name};
    q.hard.v[SC_GPU] = GPU(gpus);
    q.used.v[SC_GPU] = GPU(used_gpus);
    q.names[SC_GPU] = "requests.nvidia.com/gpu";
    q.hard_mask = 1u << SC_GPU;
    if (max_pods >= 0) {
        q.hard.v[SC_PODS] = (int64_t)max_pods * 1000;
        q.names[SC_PODS] = "pods";
        q.hard_mask |= 1u << SC_PODS;
    }
    sc_quota_upsert(c, &q);
}

/* The case: 6 GPUs of quota, a job holding 4, a second job of 2x2
 * waits whole with the quota named and starts once the first finished. */
static void test_gang_waits_whole_then_runs(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 8);
    quota(c, "team-a", "gpu-quota", 6, 0, -1);
    a = group(c, "team-a/first", 2, 2, 1);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    pods(c, a, 2);
    cycle(c, conf);
    assert_int_equal(nbound, 2);

    b = group(c, "team-a/second", 2, 2, 2);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    assert_string_equal(sc_job_message(b),
                        "resource quota \"gpu-quota\" in namespace \"team-a\": "
                        "requests.nvidia.com/gpu 4 used + 4 requested > 6 hard");
    /* nothing changed: it still waits */
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);

    finish(c, a);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);
    pods(c, b, 2);
    cycle(c, conf);
    assert_int_equal(nbound, 2);
    assert_string_equal(sc_job_message(b), "");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Two gangs of 4 GPUs under a 6-GPU quota, in one cycle: one is admitted;
 * the other still waits in the next cycles while the first's pods are not
 * created yet (its admission holds its place), and after they are. */
static void test_admitted_groups_hold_their_place(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 8);
    quota(c, "ns", "q", 6, 0, -1);
    a = group(c, "ns/a", 2, 2, 1);
    b = group(c, "ns/b", 2, 2, 2);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    pods(c, a, 2);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    assert_non_null(strstr(sc_job_message(b), "4 used + 4 requested > 6 hard"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* The quota's status counts pods the model does not hold (another
 * scheduler's): the larger reading wins; and the quota raised lets it go. */
static void test_status_reading_and_raise(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *a;
    (void)state;

    node(c, "n1", 8);
    quota(c, "ns", "q", 6, 5, -1);
    a = group(c, "ns/a", 1, 2, 1);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_PENDING);
    assert_string_equal(sc_job_message(a), "resource quota \"q\" in namespace \"ns\": "
                                           "requests.nvidia.com/gpu 5 used + 2 requested > 6 hard");
    quota(c, "ns", "q", 7, 5, -1);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A quota is its namespace's: a job of another namespace in the same queue,
 * behind the held one, is admitted; a removed quota holds nothing. */
static void test_other_namespaces_pass(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 8);
    quota(c, "small", "q", 1, 0, -1);
    a = group(c, "small/a", 1, 2, 1);
    b = group(c, "other/b", 1, 2, 2);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_PENDING);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);
    assert_int_equal(sc_quota_count(c), 1);
    sc_quota_remove(c, "small", "q");
    assert_int_equal(sc_quota_count(c), 0);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* pods: a gang of 2 where 2 of 3 pods are taken waits; GPUs not asked for
 * are not checked (a CPU-only gang passes a full GPU quota). */
static void test_pod_count_and_unasked(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *a, *b, *cpu;
    (void)state;

    node(c, "n1", 8);
    quota(c, "ns", "q", 4, 4, 3);
    a = group(c, "ns/a", 2, 0, 1);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    pods(c, a, 0);
    b = group(c, "ns/b", 2, 0, 2);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    assert_string_equal(sc_job_message(b), "resource quota \"q\" in namespace \"ns\": "
                                           "pods 2 used + 2 requested > 3 hard");
    cpu = group(c, "ns/cpu", 1, 0, 3);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(cpu), SC_JOB_INQUEUE);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Several quotas in several namespaces, read in one pass: each sees its
 * own namespace's use, and any of a namespace's quotas holds a job. */
static void test_many_quotas(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *a, *b, *cj, *d;
    sc_quota_spec qp = {.ns = "ns1", .name = "q-pods"};
    (void)state;

    node(c, "n1", 16);
    quota(c, "ns1", "q-gpu", 4, 0, -1);
    qp.hard.v[SC_PODS] = 3000;
    qp.names[SC_PODS] = "count/pods";
    qp.hard_mask = 1u << SC_PODS;
    sc_quota_upsert(c, &qp);
    quota(c, "ns2", "q", 2, 0, -1);
    a = group(c, "ns1/a", 2, 1, 1);
    b = group(c, "ns2/b", 1, 2, 2);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);
    pods(c, a, 1);
    pods(c, b, 2);
    cj = group(c, "ns1/c", 2, 1, 3);
    d = group(c, "ns2/d", 1, 1, 4);
    cycle(c, conf);
    assert_int_equal(sc_job_get_phase(cj), SC_JOB_PENDING);
    assert_string_equal(sc_job_message(cj), "resource quota \"q-pods\" in namespace \"ns1\": "
                                            "count/pods 2 used + 2 requested > 3 hard");
    assert_int_equal(sc_job_get_phase(d), SC_JOB_PENDING);
    assert_string_equal(sc_job_message(d), "resource quota \"q\" in namespace \"ns2\": "
                                           "requests.nvidia.com/gpu 2 used + 1 requested > 2 hard");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A volcano-scheduler.conf naming Volcano's resourcequota plugin loads. */
static void test_conf_names_the_plugin(void **state)
{
    static const char yaml[] = "actions: \"enqueue, allocate\"\n"
                               "tiers:\n- plugins:\n  - name: gang\n  - name: resourcequota\n";
    ty_error err;
    sc_conf *conf;
    (void)state;

    ty_error_init(&err);
    conf = sc_conf_parse(yaml, strlen(yaml), &err);
    if (!conf)
        fail_msg("conf: %s", err.text);
    sc_conf_free(conf);
}

/* ---- the component: quotas read from the store ---- */

#define WAIT_MS 60000
#define PGS "podgroups.scheduling.volcano.sh"

static void put(ty_store *s, const char *resource, const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    ty_error err;
    store_obj *so;

    assert_non_null(o);
    ty_error_init(&err);
    so = store_create(s, resource, "team-a", o, &err);
    if (!so)
        fail_msg("create %s: %s", resource, err.text);
    store_obj_unref(so);
    json_decref(o);
}

static void set_quota(ty_store *s, const char *hard, const char *used)
{
    store_obj *o = store_get(s, "resourcequotas", "team-a", "gpu-quota", NULL);
    json_t *q = json_deep_copy(store_obj_json(o));
    store_obj_unref(o);
    json_object_set_new(json_object_get(json_object_get(q, "spec"), "hard"),
                        "requests.nvidia.com/gpu", json_string(hard));
    json_object_set_new(q, "status", json_pack("{s:{s:s}, s:{s:s}}", "hard",
                                               "requests.nvidia.com/gpu", hard, "used",
                                               "requests.nvidia.com/gpu", used));
    o = store_update(s, "resourcequotas", "team-a", q, NULL);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(q);
}

/* The PodGroup's phase and its Unschedulable message once the phase is
 * want (or the wait ran out). */
static const char *wait_pg(ty_store *s, const char *want, const char *msg_part, char *msg,
                           size_t len)
{
    static char phase[32];

    for (int64_t deadline = ty_now_ms() + WAIT_MS; ty_now_ms() < deadline; usleep(10000)) {
        store_obj *o = store_get(s, PGS, "team-a", "g", NULL);
        const json_t *st = o ? json_object_get(store_obj_json(o), "status") : NULL;
        size_t i;
        json_t *c;
        snprintf(phase, sizeof(phase), "%s", json_string_value(json_object_get(st, "phase")) ?: "");
        msg[0] = 0;
        json_array_foreach(json_object_get(st, "conditions"), i, c)
            if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Unschedulable") &&
                !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True"))
                snprintf(msg, len, "%s", json_string_value(json_object_get(c, "message")) ?: "");
        store_obj_unref(o);
        if (!strcmp(phase, want) && (!msg_part || strstr(msg, msg_part)))
            break;
    }
    return phase;
}

static void test_component_reads_quotas(void **state)
{
    char dir[64], msg[400];
    ty_store *s = store_fixture_open(dir, NULL);
    ty_error err;
    ty_sched *sc;
    (void)state;

    ty_error_init(&err);
    put(s, "nodes", "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                    "\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"110\","
                    "\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\","
                    "\"status\":\"True\"}]}}");
    /* a scoped quota is admission's alone: it holds nothing back here */
    put(s, "resourcequotas", "{\"metadata\":{\"name\":\"scoped\",\"namespace\":\"team-a\"},"
                             "\"spec\":{\"hard\":{\"pods\":\"0\"},\"scopes\":[\"BestEffort\"]}}");
    put(s, "resourcequotas", "{\"metadata\":{\"name\":\"gpu-quota\",\"namespace\":"
                             "\"team-a\"},\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":"
                             "\"6\",\"limits.cpu\":\"0\"}},\"status\":{\"used\":"
                             "{\"requests.nvidia.com/gpu\":\"4\"}}}");
    sc = sched_start(KC(s), &err);
    assert_non_null(sc);
    put(s, PGS, "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                "\"metadata\":{\"name\":\"g\",\"namespace\":\"team-a\"},\"spec\":"
                "{\"minMember\":2,\"minResources\":{\"nvidia.com/gpu\":\"4\"}},"
                "\"status\":{\"phase\":\"Pending\"}}");
    assert_string_equal(wait_pg(s, "Pending", "resource quota", msg, sizeof(msg)), "Pending");
    assert_string_equal(msg, "resource quota \"gpu-quota\" in namespace \"team-a\": "
                             "requests.nvidia.com/gpu 4 used + 4 requested > 6 hard");
    /* the controller counts the first job's pods gone */
    set_quota(s, "6", "2");
    assert_string_equal(wait_pg(s, "Inqueue", NULL, msg, sizeof(msg)), "Inqueue");
    sched_stop(sc);
    store_fixture_close(dir, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_waits_whole_then_runs),
        cmocka_unit_test(test_admitted_groups_hold_their_place),
        cmocka_unit_test(test_status_reading_and_raise),
        cmocka_unit_test(test_other_namespaces_pass),
        cmocka_unit_test(test_pod_count_and_unasked),
        cmocka_unit_test(test_many_quotas),
        cmocka_unit_test(test_conf_names_the_plugin),
        cmocka_unit_test(test_component_reads_quotas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
