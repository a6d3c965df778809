/* test_sched_elastic.c - gangs whose minMember is below their replica count
 * (Volcano's elastic jobs) and per-role minimums (minTaskMember), in the
 * shapes of upstream's own examples: the job starts once minMember members
 * fit, the rest wait as ordinary pending pods and go as room appears; the
 * role minimums count only where their sum is not above minMember; a gang
 * whose minMember is its replica count stays all-or-nothing.
 *
 * A Volcano Job's PodGroup always carries minTaskMember: the webhook sets
 * each task's minAvailable to its replicas when it is left out, so
 * Volcano's MindSpore CPU example (8 replicas, minAvailable 1) has
 * minMember 1 and minTaskMember {pod: 8}. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

#define MILLI(n) ((int64_t)(n))
#define CPU(n) ((int64_t)(n) * 1000)

typedef struct rec {
    char bound[64][160];
    size_t nbound;
} rec;

static void on_bind(void *ctx, sc_task *t, sc_node *n)
{
    rec *r = ctx;
    (void)n;
    assert_true(r->nbound < 64);
    snprintf(r->bound[r->nbound++], sizeof(r->bound[0]), "%s", sc_task_key(t));
}

static void on_evict(void *ctx, sc_task *t, const char *reason, const sc_job *by)
{
    (void)ctx, (void)t, (void)reason, (void)by;
    fail_msg("nothing is evicted here");
}

static void on_changed(void *ctx, sc_job *j)
{
    (void)ctx, (void)j;
}

/* One cycle; binds are confirmed (RUNNING) afterwards as the runtime would. */
static void cycle(sc_cluster *c, const sc_conf *conf, rec *r)
{
    sc_hooks h = {.ctx = r, .bind = on_bind, .evict = on_evict, .job_changed = on_changed};

    memset(r, 0, sizeof(*r));
    sc_cycle(c, conf, &h, NULL);
    for (size_t i = 0; i < r->nbound; i++)
        sc_task_set_status(c, sc_task_find(c, r->bound[i]), SC_TASK_RUNNING);
}

static size_t bound_prefix(const rec *r, const char *prefix)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nbound; i++)
        n += strncmp(r->bound[i], prefix, strlen(prefix)) == 0;
    return n;
}

static void cpu_node(sc_cluster *c, const char *name, int cpus)
{
    sc_node_spec s = {.name = name, .ready = true};
    s.allocatable.v[SC_CPU] = CPU(cpus);
    s.allocatable.v[SC_MEM] = (int64_t)64 << 30;
    s.allocatable.v[SC_PODS] = 110 * 1000;
    assert_non_null(sc_node_upsert(c, &s));
}

/* A job of minMember min_member and the roles' minimums "role=N" in mins. */
static sc_job *job(sc_cluster *c, const char *key, int min_member, const sc_kv *mins,
                   size_t nmins, double created)
{
    sc_job_spec s = {.key = key, .min_member = min_member, .min_task_member = mins,
                     .nmin_task_member = nmins, .created = created, .preemptable = true};
    sc_job *j = sc_job_upsert(c, &s);
    assert_non_null(j);
    return j;
}

/* n tasks "<job>-<role>-<i>" of milli_cpu each, numbered from first. */
static void tasks(sc_cluster *c, const char *jobkey, const char *role, int first, int n,
                  int64_t milli_cpu, const sc_kv *sel, size_t nsel)
{
    for (int i = first; i < first + n; i++) {
        char key[160];
        snprintf(key, sizeof(key), "%s-%s-%d", jobkey, role, i);
        sc_task_spec s = {.key = key, .job = jobkey, .task_name = role, .status = SC_TASK_PENDING,
                          .node_selector = sel, .nnode_selector = nsel};
        s.request.v[SC_CPU] = milli_cpu;
        s.request.v[SC_PODS] = 1000;
        assert_non_null(sc_task_upsert(c, &s));
    }
}

static int pending(const sc_job *j)
{
    int n = 0;
    for (size_t i = 0; i < sc_job_ntasks(j); i++)
        n += sc_task_get_status(sc_job_task(j, i)) == SC_TASK_PENDING;
    return n;
}

/* The running tasks of j finish. */
static int finish_running(sc_cluster *c, sc_job *j)
{
    int n = 0;
    for (size_t i = 0; i < sc_job_ntasks(j); i++) {
        sc_task *t = sc_job_task(j, i);
        if (sc_task_get_status(t) == SC_TASK_RUNNING) {
            sc_task_set_status(c, t, SC_TASK_SUCCEEDED);
            n++;
        }
    }
    return n;
}

static const char strict_yaml[] = "actions: \"enqueue, allocate\"\n"
                                  "tiers:\n"
                                  "- plugins:\n"
                                  "  - name: priority\n"
                                  "  - name: gang\n"
                                  "  - name: conformance\n"
                                  "- plugins:\n"
                                  "  - name: overcommit\n"
                                  "  - name: drf\n"
                                  "  - name: predicates\n"
                                  "  - name: proportion\n"
                                  "  - name: nodeorder\n";

static sc_conf *conf_of(const char *yaml)
{
    ty_error err;
    sc_conf *conf;
    ty_error_init(&err);
    conf = sc_conf_parse(yaml, strlen(yaml), &err);
    if (!conf)
        fail_msg("conf: %s", err.text);
    ty_error_clear(&err);
    return conf;
}

/* Volcano's MindSpore CPU example: 8 x 1 CPU, minAvailable 1, on 2 CPUs.
 * Two run at once; the rest wait as plain pending pods (the PodGroup says
 * nothing is wrong) and go two by two as the first ones finish. It placed
 * nothing: the role's minimum (8, from its replicas) was required. */
static void test_mindspore_cpu_example(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_kv mins[] = {{"pod", "8"}};
    rec r;
    sc_job *j;
    (void)state;

    cpu_node(c, "n1", 2);
    j = job(c, "ns/ms", 1, mins, 1, 1);
    tasks(c, "ns/ms", "pod", 0, 8, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    assert_int_equal(pending(j), 6);
    assert_string_equal(sc_job_message(j), "");
    assert_string_equal(sc_task_message(sc_task_find(c, "ns/ms-pod-7")),
                        "0/1 nodes are available: 1 Insufficient cpu.");

    /* nothing frees: nothing moves, and the job stays Running */
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    assert_string_equal(sc_job_message(j), "");

    /* the first two finish: the next two go, and so on to the last */
    for (int round = 0; round < 3; round++) {
        assert_int_equal(finish_running(c, j), 2);
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 2);
        assert_int_equal(pending(j), 4 - 2 * round);
        assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    }
    assert_int_equal(finish_running(c, j), 2);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_COMPLETED);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* The reproduction: 5 x 0.5 CPU, minAvailable 1, on 2 CPUs places
 * 4 (it placed none; with 4 replicas all 4 went). */
static void test_half_cpu_replicas(void **state)
{
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    for (int replicas = 4; replicas <= 5; replicas++) {
        sc_cluster *c = sc_cluster_new();
        char min[8];
        snprintf(min, sizeof(min), "%d", replicas);
        sc_kv mins[] = {{"pod", min}};
        sc_job *j;

        cpu_node(c, "n1", 2);
        j = job(c, "ns/half", 1, mins, 1, 1);
        tasks(c, "ns/half", "pod", 0, replicas, MILLI(500), NULL, 0);
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 4);
        assert_int_equal(pending(j), replicas - 4);
        assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
        sc_cluster_free(c);
    }
    sc_conf_free(conf);
}

/* minMember = replicas: all-or-nothing as before, with Volcano's count of
 * the members missing. */
static void test_min_equals_replicas_all_or_nothing(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_kv mins[] = {{"pod", "8"}};
    rec r;
    sc_job *j;
    (void)state;

    cpu_node(c, "n1", 2);
    j = job(c, "ns/rigid", 8, mins, 1, 1);
    tasks(c, "ns/rigid", "pod", 0, 8, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(pending(j), 8);
    assert_int_not_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    assert_string_equal(sc_job_message(j), "6/8 tasks in gang unschedulable: 1 Insufficient cpu");

    /* minMember 3 of 8: never a partial gang below it */
    sc_cluster_free(c);
    c = sc_cluster_new();
    cpu_node(c, "n1", 2);
    j = job(c, "ns/three", 3, mins, 1, 1);
    tasks(c, "ns/three", "pod", 0, 8, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_string_equal(sc_job_message(j), "1/8 tasks in gang unschedulable: 1 Insufficient cpu");
    cpu_node(c, "n2", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Role minimums whose sum is not above minMember are each required (the
 * example of Volcano's task-minAvailable design: minAvailable 2, master 1,
 * work 1); above minMember they are not (minAvailable 1 < 1 + 2). */
static void test_task_minimums(void **state)
{
    sc_conf *conf = sc_conf_default();
    sc_kv sel[] = {{"role", "master"}};
    sc_kv labels[] = {{"role", "master"}};
    rec r;
    (void)state;

    /* sum = minMember: two workers alone would make 2, but the master has
     * nowhere to go */
    {
        sc_cluster *c = sc_cluster_new();
        sc_kv mins[] = {{"master", "1"}, {"work", "1"}};
        cpu_node(c, "n1", 4);
        job(c, "ns/mw", 2, mins, 2, 1);
        tasks(c, "ns/mw", "master", 0, 2, MILLI(50), sel, 1);
        tasks(c, "ns/mw", "work", 0, 2, MILLI(100), NULL, 0);
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 0);
        /* a master node comes: both masters and both workers go */
        sc_node_spec s = {.name = "m1", .ready = true, .labels = labels, .nlabels = 1};
        s.allocatable.v[SC_CPU] = CPU(1);
        s.allocatable.v[SC_PODS] = 110 * 1000;
        assert_non_null(sc_node_upsert(c, &s));
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 4);
        sc_cluster_free(c);
    }
    /* sum below minMember: each role's minimum still holds, and minMember */
    {
        sc_cluster *c = sc_cluster_new();
        sc_kv mins[] = {{"master", "1"}, {"work", "1"}};
        cpu_node(c, "n1", 4);
        job(c, "ns/mw", 3, mins, 2, 1);
        tasks(c, "ns/mw", "master", 0, 1, MILLI(50), sel, 1);
        tasks(c, "ns/mw", "work", 0, 4, MILLI(100), NULL, 0);
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 0);
        sc_cluster_free(c);
    }
    /* sum above minMember (1 < 1 + 2): the roles' minimums are skipped, the
     * workers go without a master */
    {
        sc_cluster *c = sc_cluster_new();
        sc_kv mins[] = {{"master", "1"}, {"work", "2"}};
        sc_job *j;
        cpu_node(c, "n1", 4);
        j = job(c, "ns/mw", 1, mins, 2, 1);
        tasks(c, "ns/mw", "master", 0, 1, MILLI(50), sel, 1);
        tasks(c, "ns/mw", "work", 0, 2, MILLI(100), NULL, 0);
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 2);
        assert_int_equal(bound_prefix(&r, "ns/mw-work-"), 2);
        assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
        assert_string_equal(sc_job_message(j), "");
        assert_string_equal(sc_task_message(sc_task_find(c, "ns/mw-master-0")),
                            "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                            "affinity/selector.");
        sc_cluster_free(c);
    }
    sc_conf_free(conf);
}

/* Kubeflow jobs: schedulingPolicy.minAvailable is the PodGroup's minMember
 * and there is no minTaskMember; 4 workers with minAvailable 2 on room for
 * 3 run 3. */
static void test_kubeflow_min_available(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *j;
    (void)state;

    cpu_node(c, "n1", 3);
    j = job(c, "ns/pt", 2, NULL, 0, 1);
    tasks(c, "ns/pt", "worker", 0, 4, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    assert_int_equal(pending(j), 1);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    assert_string_equal(sc_job_message(j), "");
    /* the one left says why, as any pending pod does */
    assert_string_equal(sc_task_message(sc_task_find(c, "ns/pt-worker-3")),
                        "0/1 nodes are available: 1 Insufficient cpu.");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* With allocate alone (strict queue order), a placed gang whose extra
 * members do not fit does not hold back the jobs behind it: b's extra
 * members take the room a's cannot use. */
static void test_surplus_does_not_block_queue(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(strict_yaml);
    rec r;
    sc_job *a, *b;
    (void)state;

    cpu_node(c, "n1", 5);
    a = job(c, "ns/a", 1, NULL, 0, 1);
    b = job(c, "ns/b", 2, NULL, 0, 2);
    tasks(c, "ns/a", "w", 0, 1, CPU(1), NULL, 0);
    tasks(c, "ns/b", "w", 0, 2, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    /* a's extra members need 3 CPUs each, b's 1: 2 are free */
    tasks(c, "ns/a", "big", 0, 2, CPU(3), NULL, 0);
    tasks(c, "ns/b", "w", 2, 2, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 2);
    assert_int_equal(pending(a), 2);
    assert_int_equal(pending(b), 0);
    assert_string_equal(sc_job_message(a), "");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Volcano's hierarchical-jobs example: four queues of one weight, a job in
 * each of 6 x 0.5 CPU with minAvailable 1, on 2 CPUs. Once a job has its
 * minimum, each further member is a turn of its own: every job starts (one
 * pod each, the queues' deserved shares), none takes the whole node. Two
 * such jobs in one queue both start too. */
static void test_hierarchical_jobs(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    const char *queues[] = {"eng-prod", "eng-dev", "sci-prod", "sci-dev"};
    sc_kv mins[] = {{"default-nginx", "6"}};
    rec r;
    (void)state;

    cpu_node(c, "n1", 2);
    for (int i = 0; i < 4; i++) {
        char key[64];
        sc_queue_spec qs = {.name = queues[i], .weight = 1, .reclaimable = true, .open = true};
        assert_non_null(sc_queue_upsert(c, &qs));
        snprintf(key, sizeof(key), "ns/%s-job", queues[i]);
        sc_job_spec js = {.key = key, .queue = queues[i], .min_member = 1, .min_task_member = mins,
                          .nmin_task_member = 1, .created = i, .preemptable = true};
        assert_non_null(sc_job_upsert(c, &js));
        tasks(c, key, "default-nginx", 0, 6, MILLI(500), NULL, 0);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    for (int i = 0; i < 4; i++) {
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "ns/%s-job-", queues[i]);
        assert_int_equal(bound_prefix(&r, prefix), 1);
    }
    sc_cluster_free(c);

    c = sc_cluster_new();
    cpu_node(c, "n1", 2);
    job(c, "ns/a", 1, (sc_kv[]){{"pod", "8"}}, 1, 1);
    job(c, "ns/b", 1, (sc_kv[]){{"pod", "8"}}, 1, 2);
    tasks(c, "ns/a", "pod", 0, 8, CPU(1), NULL, 0);
    tasks(c, "ns/b", "pod", 0, 8, CPU(1), NULL, 0);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/a-"), 1);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 1);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mindspore_cpu_example),
        cmocka_unit_test(test_half_cpu_replicas),
        cmocka_unit_test(test_min_equals_replicas_all_or_nothing),
        cmocka_unit_test(test_task_minimums),
        cmocka_unit_test(test_kubeflow_min_available),
        cmocka_unit_test(test_surplus_does_not_block_queue),
        cmocka_unit_test(test_hierarchical_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
