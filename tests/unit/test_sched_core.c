/* test_sched_core.c - the gang scheduler core on small clusters built by hand:
 * every action (enqueue, allocate, backfill, preempt, reclaim) and plugin,
 * the configuration parser and the model's accounting.
 *
 * The hooks record binds and evictions; after a cycle the test plays the
 * runtime: a bind is confirmed (RUNNING), an eviction completes when the test
 * removes the task. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

#define GPU(n) ((int64_t)(n) * 1000)
#define CPU(n) ((int64_t)(n) * 1000)
#define MAXREC 1100

/* ---- recording hooks ---- */

typedef struct rec {
    char bound[MAXREC][64], bound_node[MAXREC][32];
    size_t nbound;
    char evicted[MAXREC][64], reason[MAXREC][16];
    size_t nevicted;
    size_t nchanged;
} rec;

static void on_bind(void *ctx, sc_task *t, sc_node *n)
{
    rec *r = ctx;
    assert_true(r->nbound < MAXREC);
    assert_int_equal(sc_task_get_status(t), SC_TASK_BINDING);
    snprintf(r->bound[r->nbound], 64, "%s", sc_task_key(t));
    snprintf(r->bound_node[r->nbound++], 32, "%s", sc_node_name(n));
}

static void on_evict(void *ctx, sc_task *t, const char *reason, const sc_job *by)
{
    rec *r = ctx;
    (void)by;
    assert_true(r->nevicted < MAXREC);
    assert_int_equal(sc_task_get_status(t), SC_TASK_RELEASING);
    snprintf(r->evicted[r->nevicted], 64, "%s", sc_task_key(t));
    snprintf(r->reason[r->nevicted++], 16, "%s", reason);
}

static void on_changed(void *ctx, sc_job *j)
{
    rec *r = ctx;
    (void)j;
    r->nchanged++;
}

/* The cluster's node sums against a walk of its nodes (session.c opens a
 * session from the sums; they are kept as nodes and tasks change). */
static void check_node_sums(const sc_cluster *c)
{
    sc_res alloc = {0}, now = {0}, future = {0};

    for (size_t i = 0; i < c->nnodes; i++) {
        const sc_node *n = c->nodes[i];
        if (!n->ready || n->unschedulable)
            continue;
        for (int k = 0; k < SC_MAXRES; k++) {
            int64_t idle = n->alloc.v[k] - n->used.v[k] - n->pipelined.v[k];
            alloc.v[k] += n->alloc.v[k];
            now.v[k] += idle > 0 ? idle : 0;
            future.v[k] += idle + n->releasing.v[k] > 0 ? idle + n->releasing.v[k] : 0;
        }
    }
    assert_memory_equal(&alloc, &c->sum_alloc, sizeof(alloc));
    assert_memory_equal(&now, &c->sum_free_now, sizeof(now));
    assert_memory_equal(&future, &c->sum_free_future, sizeof(future));
}

/* One cycle; binds are confirmed (RUNNING) afterwards as the runtime would.
 * The node sums are checked before and after. */
static sc_cycle_stats cycle(sc_cluster *c, const sc_conf *conf, rec *r)
{
    sc_hooks h = {.ctx = r, .bind = on_bind, .evict = on_evict, .job_changed = on_changed};
    sc_cycle_stats st;
    size_t first = r->nbound;

    memset(r, 0, sizeof(*r));
    (void)first;
    check_node_sums(c);
    sc_cycle(c, conf, &h, &st);
    check_node_sums(c);
    for (size_t i = 0; i < r->nbound; i++)
        sc_task_set_status(c, sc_task_find(c, r->bound[i]), SC_TASK_RUNNING);
    check_node_sums(c);
    return st;
}

static bool was_bound(const rec *r, const char *key)
{
    for (size_t i = 0; i < r->nbound; i++)
        if (strcmp(r->bound[i], key) == 0)
            return true;
    return false;
}

static const char *bound_to(const rec *r, const char *key)
{
    for (size_t i = 0; i < r->nbound; i++)
        if (strcmp(r->bound[i], key) == 0)
            return r->bound_node[i];
    return NULL;
}

static size_t bound_prefix(const rec *r, const char *prefix)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nbound; i++)
        n += strncmp(r->bound[i], prefix, strlen(prefix)) == 0;
    return n;
}

static size_t evicted_prefix(const rec *r, const char *prefix)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nevicted; i++)
        n += strncmp(r->evicted[i], prefix, strlen(prefix)) == 0;
    return n;
}

/* ---- building clusters ---- */

static sc_node *node_full(sc_cluster *c, const char *name, int gpus, int cpus,
                          const sc_kv *labels, size_t nlabels, const sc_taint *taints,
                          size_t ntaints, bool unschedulable)
{
    sc_node_spec s = {.name = name, .ready = true, .unschedulable = unschedulable,
                      .labels = labels, .nlabels = nlabels, .taints = taints,
                      .ntaints = ntaints};
    sc_node *n;
    s.allocatable.v[SC_CPU] = CPU(cpus);
    s.allocatable.v[SC_MEM] = (int64_t)64 << 30;
    s.allocatable.v[SC_PODS] = 110 * 1000;
    s.allocatable.v[SC_GPU] = GPU(gpus);
    n = sc_node_upsert(c, &s);
    assert_non_null(n);
    return n;
}

static sc_node *node(sc_cluster *c, const char *name, int gpus)
{
    return node_full(c, name, gpus, 64, NULL, 0, NULL, 0, false);
}

static sc_queue *queue(sc_cluster *c, const char *name, int weight, int cap_gpus,
                       bool reclaimable, bool open)
{
    sc_queue_spec s = {.name = name, .weight = weight, .reclaimable = reclaimable,
                       .open = open};
    sc_queue *q;
    if (cap_gpus >= 0) {
        s.capability.v[SC_GPU] = GPU(cap_gpus);
        s.cap_mask = 1u << SC_GPU;
    }
    q = sc_queue_upsert(c, &s);
    assert_non_null(q);
    return q;
}

static sc_job *job_full(sc_cluster *c, const char *key, const char *q, int min_member,
                        int32_t prio, double created, int min_gpus)
{
    sc_job_spec s = {.key = key, .queue = q, .min_member = min_member, .priority = prio,
                     .created = created, .preemptable = true};
    sc_job *j;
    s.min_resources.v[SC_GPU] = GPU(min_gpus);
    j = sc_job_upsert(c, &s);
    assert_non_null(j);
    return j;
}

static sc_job *job(sc_cluster *c, const char *key, const char *q, int min_member,
                   int32_t prio, double created)
{
    return job_full(c, key, q, min_member, prio, created, 0);
}

static sc_task *task_spec(sc_cluster *c, sc_task_spec *s, int64_t gpu_milli, int cpus)
{
    sc_task *t;
    s->request.v[SC_GPU] = gpu_milli;
    s->request.v[SC_CPU] = CPU(cpus);
    s->request.v[SC_PODS] = 1000;
    if (!s->status)
        s->status = SC_TASK_PENDING;
    t = sc_task_upsert(c, s);
    assert_non_null(t);
    return t;
}

static sc_task *task(sc_cluster *c, const char *key, const char *jobkey, int gpus)
{
    sc_task_spec s = {.key = key, .job = jobkey};
    return task_spec(c, &s, GPU(gpus), 1);
}

/* A gang of n tasks "<key>-<i>" of g GPUs each. */
static sc_job *gang(sc_cluster *c, const char *key, const char *q, int n, int g, int32_t prio,
                    double created)
{
    sc_job *j = job(c, key, q, n, prio, created);
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "%s-%d", key, i);
        sc_task_spec s = {.key = name, .job = key, .priority = prio};
        task_spec(c, &s, GPU(g), 1);
    }
    return j;
}

static void remove_tasks(sc_cluster *c, sc_job *j)
{
    while (sc_job_ntasks(j))
        sc_task_remove(c, sc_task_key(sc_job_task(j, 0)));
}

static void remove_evicted(sc_cluster *c, const rec *r)
{
    for (size_t i = 0; i < r->nevicted; i++)
        sc_task_remove(c, r->evicted[i]);
}

static int64_t gpus_used(const sc_cluster *c)
{
    int64_t m = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        m += c->nodes[i]->used.v[SC_GPU];
    return m / 1000;
}

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

#define TIERS                                                                                \
    "tiers:\n"                                                                               \
    "- plugins:\n"                                                                           \
    "  - name: priority\n"                                                                   \
    "  - name: gang\n"                                                                       \
    "  - name: conformance\n"                                                                \
    "- plugins:\n"                                                                           \
    "  - name: overcommit\n"                                                                 \
    "  - name: drf\n"                                                                        \
    "  - name: predicates\n"                                                                 \
    "  - name: proportion\n"                                                                 \
    "  - name: nodeorder\n"                                                                  \
    "  - name: binpack\n"

static const char preempt_yaml[] = "actions: \"enqueue, allocate, preempt\"\n" TIERS;
static const char reclaim_yaml[] = "actions: \"enqueue, allocate, reclaim\"\n" TIERS;
static const char strict_yaml[] = "actions: \"enqueue, allocate\"\n" TIERS;

/* ---- gangs ---- */

static void test_two_gangs_one_node(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 4);
    a = gang(c, "ns/a", NULL, 3, 1, 0, 1);
    b = gang(c, "ns/b", NULL, 3, 1, 0, 2);
    sc_cycle_stats st = cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    assert_int_equal(bound_prefix(&r, "ns/a-"), 3);
    assert_int_equal(st.bound, 3);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_RUNNING);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);
    assert_string_equal(sc_job_message(b),
                        "2/3 tasks in gang unschedulable: 1 Insufficient nvidia.com/gpu");
    assert_string_equal(sc_task_message(sc_task_find(c, "ns/b-0")),
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    assert_int_equal(sc_job_ready_tasks(b), 0);
    assert_int_equal(gpus_used(c), 3);

    /* nothing changes: nothing happens, and the failed gang is not retried */
    st = cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(st.jobs_considered, 0);

    /* a finishes: b goes */
    for (size_t i = 0; i < sc_job_ntasks(a); i++)
        sc_task_set_status(c, sc_job_task(a, i), SC_TASK_SUCCEEDED);
    assert_int_equal(gpus_used(c), 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 3);
    assert_string_equal(sc_job_message(b), "");
    assert_int_equal(sc_job_get_phase(b), SC_JOB_RUNNING);
    assert_int_equal(gpus_used(c), 3);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Two gangs that each need the whole cluster: one runs whole, never half each. */
static void test_gang_deadlock(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    gang(c, "ns/a", NULL, 8, 1, 0, 1);
    gang(c, "ns/b", NULL, 8, 1, 0, 2);
    for (int round = 0; round < 3; round++) {
        cycle(c, conf, &r);
        if (round == 0) {
            assert_int_equal(r.nbound, 8);
            assert_int_equal(bound_prefix(&r, "ns/a-"), 8);
        } else {
            assert_int_equal(r.nbound, 0);
        }
        assert_int_equal(sc_job_ready_tasks(sc_job_find(c, "ns/b")), 0);
    }
    assert_int_equal(gpus_used(c), 8);
    assert_true(strstr(sc_job_message(sc_job_find(c, "ns/b")), "8/8 tasks in gang unschedulable") != NULL);
    /* a leaves entirely: b gets the whole cluster */
    sc_job_remove(c, "ns/a");
    assert_int_equal(gpus_used(c), 0);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 8);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A gang bigger than what is free but with spread nodes: all-or-nothing
 * through the statement (the placement is tried and discarded). */
static void test_gang_discarded_leaves_nothing(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "n1", 2);
    node(c, "n2", 2);
    /* 2 GPUs in use on n1 and 1 on n2: 1 free, a 2-pod gang of 1 GPU each
     * does not fit; 2 tasks of 2 GPUs neither */
    gang(c, "ns/big", NULL, 2, 2, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    gang(c, "ns/x", NULL, 2, 1, 0, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_string_equal(sc_job_message(sc_job_find(c, "ns/x")),
                        "2/2 tasks in gang unschedulable: 2 Insufficient nvidia.com/gpu");
    for (size_t i = 0; i < c->nnodes; i++) {
        assert_int_equal(c->nodes[i]->used.v[SC_GPU], GPU(2));
        assert_int_equal(c->nodes[i]->pipelined.v[SC_GPU], 0);
    }
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "default"))->v[SC_GPU], GPU(4));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A gang tried before all its tasks exist is discarded; where that try
 * put its first task must not steer the next try (it used to: the gang
 * then split across a one-GPU node and the node that holds it whole). */
static void test_discarded_try_leaves_no_hint(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "small", 1);
    node(c, "big", 4);
    job(c, "ns/g", NULL, 2, 0, 1);
    task(c, "ns/g-0", "ns/g", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    task(c, "ns/g-1", "ns/g", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    assert_string_equal(bound_to(&r, "ns/g-0"), "big");
    assert_string_equal(bound_to(&r, "ns/g-1"), "big");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A gang that was bound whole completes even if it never had minMember
 * Running at once: workers finish while the parameter server is still
 * starting, then it is killed. */
static void test_completed_without_all_running(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r = {0};
    sc_hooks h = {.ctx = &r, .bind = on_bind, .evict = on_evict, .job_changed = on_changed};
    sc_job *j;
    (void)state;

    node(c, "n", 4);
    j = gang(c, "ns/tf", NULL, 3, 1, 0, 1);
    sc_cycle(c, conf, &h, NULL); /* bound, but none Running yet */
    assert_int_equal(r.nbound, 3);
    for (int i = 0; i < 3; i++) {
        char k[16];
        snprintf(k, sizeof(k), "ns/tf-%d", i);
        sc_task_set_status(c, sc_task_find(c, k), SC_TASK_BOUND);
    }
    sc_task_set_status(c, sc_task_find(c, "ns/tf-1"), SC_TASK_RUNNING);
    sc_task_set_status(c, sc_task_find(c, "ns/tf-1"), SC_TASK_SUCCEEDED);
    sc_task_set_status(c, sc_task_find(c, "ns/tf-2"), SC_TASK_SUCCEEDED);
    sc_task_set_status(c, sc_task_find(c, "ns/tf-0"), SC_TASK_FAILED);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_COMPLETED);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Completed stays when the finished pods are deleted afterwards, and goes
 * when the job starts a new pod. */
static void test_completed_survives_pod_deletion(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_job *j;
    rec r;
    (void)state;

    node(c, "n", 4);
    j = gang(c, "ns/g", NULL, 2, 1, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    for (size_t i = 0; i < sc_job_ntasks(j); i++)
        sc_task_set_status(c, sc_job_task(j, i), SC_TASK_RUNNING);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    for (size_t i = 0; i < sc_job_ntasks(j); i++)
        sc_task_set_status(c, sc_job_task(j, i), SC_TASK_SUCCEEDED);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_COMPLETED);
    remove_tasks(c, j);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_COMPLETED);
    task(c, "ns/g-again", "ns/g", 1);
    cycle(c, conf, &r);
    assert_true(sc_job_get_phase(j) != SC_JOB_COMPLETED);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A pod evicted and made again under its name (a Volcano Job's) whose
 * deletion the model never saw on its own: the new pod (another uid) is a
 * new task, pending, and the old one's resources are free. Before, the old
 * pod's RELEASING state stuck to the name: its GPU stayed held and the new
 * pod pending for ever (t0910's fair share in operator mode, 1 run in 8). */
static void test_pod_made_again_under_its_name(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_task *t;
    rec r;
    (void)state;

    node(c, "n", 1);
    job(c, "ns/j", NULL, 1, 0, 1);
    sc_task_spec s = {.key = "ns/j-0", .job = "ns/j", .uid = "uid-1"};
    task_spec(c, &s, GPU(1), 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    /* evicted: being deleted, still on its node */
    sc_task_spec rel = {.key = "ns/j-0", .job = "ns/j", .uid = "uid-1", .node = "n",
                        .status = SC_TASK_RELEASING};
    task_spec(c, &rel, GPU(1), 1);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/j-0")), SC_TASK_RELEASING);
    /* the same pod's later events keep it releasing */
    sc_task_spec again = {.key = "ns/j-0", .job = "ns/j", .uid = "uid-1"};
    task_spec(c, &again, GPU(1), 1);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/j-0")), SC_TASK_RELEASING);
    /* the new pod of that name, with no DELETED event before it */
    sc_task_spec made = {.key = "ns/j-0", .job = "ns/j", .uid = "uid-2"};
    t = task_spec(c, &made, GPU(1), 1);
    assert_int_equal(sc_task_get_status(t), SC_TASK_PENDING);
    assert_int_equal(gpus_used(c), 0);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_string_equal(r.bound_node[0], "n");
    assert_true(sc_task_is_pod(sc_task_find(c, "ns/j-0"), "uid-2"));
    assert_false(sc_task_is_pod(sc_task_find(c, "ns/j-0"), "uid-1"));
    assert_true(sc_task_is_pod(sc_task_find(c, "ns/j-0"), NULL));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* minMember below the number of tasks: the gang runs with what fits. */
static void test_elastic_gang(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *j;
    (void)state;

    node(c, "n1", 4);
    j = job(c, "ns/e", NULL, 2, 0, 1);
    for (int i = 0; i < 6; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/e-%d", i);
        task(c, k, "ns/e", 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_RUNNING);
    assert_int_equal(sc_job_running_tasks(j), 4);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* minTaskMember: every role must reach its minimum. */
static void test_min_task_member(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_kv mins[] = {{"ps", "1"}, {"worker", "2"}};
    sc_kv sel[] = {{"role", "ps"}};
    sc_kv labels[] = {{"role", "ps"}};
    sc_job_spec js = {.key = "ns/tf", .min_member = 3, .min_task_member = mins,
                      .nmin_task_member = 2, .preemptable = true};
    (void)state;

    node(c, "n1", 8);
    assert_non_null(sc_job_upsert(c, &js));
    {
        sc_task_spec s = {.key = "ns/tf-ps-0", .job = "ns/tf", .task_name = "ps",
                          .node_selector = sel, .nnode_selector = 1};
        task_spec(c, &s, 0, 1);
    }
    for (int i = 0; i < 3; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/tf-worker-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/tf", .task_name = "worker"};
        task_spec(c, &s, GPU(1), 1);
    }
    /* three workers would make minMember, but the ps has nowhere to go */
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(sc_job_ready_tasks(sc_job_find(c, "ns/tf")), 0);
    assert_int_equal(gpus_used(c), 0);
    /* a ps node arrives */
    node_full(c, "ps1", 0, 8, labels, 1, NULL, 0, false);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    assert_string_equal(bound_to(&r, "ns/tf-ps-0"), "ps1");
    assert_string_equal(bound_to(&r, "ns/tf-worker-0"), "n1");

    /* without minTaskMember the three workers alone would have gone */
    sc_cluster_free(c);
    c = sc_cluster_new();
    js.nmin_task_member = 0;
    js.min_task_member = NULL;
    node(c, "n1", 8);
    assert_non_null(sc_job_upsert(c, &js));
    {
        sc_task_spec s = {.key = "ns/tf-ps-0", .job = "ns/tf", .task_name = "ps",
                          .node_selector = sel, .nnode_selector = 1};
        task_spec(c, &s, 0, 1);
    }
    for (int i = 0; i < 3; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/tf-worker-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/tf", .task_name = "worker"};
        task_spec(c, &s, GPU(1), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    assert_false(was_bound(&r, "ns/tf-ps-0"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- queues ---- */

static void test_queue_weights(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    char k[32];
    (void)state;

    for (int i = 0; i < 4; i++) {
        snprintf(k, sizeof(k), "n%d", i);
        node(c, k, 4);
    }
    queue(c, "q1", 1, -1, true, true);
    queue(c, "q3", 3, -1, true, true);
    for (int i = 0; i < 20; i++) {
        char jk[32];
        snprintf(jk, sizeof(jk), "ns/a%02d", i);
        job(c, jk, "q1", 1, 0, i);
        snprintf(k, sizeof(k), "ns/a%02d-0", i);
        task(c, k, jk, 1);
    }
    for (int i = 0; i < 20; i++) {
        char jk[32];
        snprintf(jk, sizeof(jk), "ns/b%02d", i);
        job(c, jk, "q3", 1, 0, i);
        snprintf(k, sizeof(k), "ns/b%02d-0", i);
        task(c, k, jk, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 16);
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "q1"))->v[SC_GPU], GPU(4));
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "q3"))->v[SC_GPU], GPU(12));
    assert_int_equal(sc_queue_deserved(sc_queue_find(c, "q1"))->v[SC_GPU], GPU(4));
    assert_int_equal(sc_queue_deserved(sc_queue_find(c, "q3"))->v[SC_GPU], GPU(12));
    /* the oldest of each queue went first */
    assert_true(was_bound(&r, "ns/a00-0") && was_bound(&r, "ns/a03-0"));
    assert_false(was_bound(&r, "ns/a04-0"));
    assert_true(was_bound(&r, "ns/b11-0"));
    assert_false(was_bound(&r, "ns/b12-0"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A queue alone takes everything it asks for, whatever its weight. */
static void test_queue_alone_takes_all(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "n1", 8);
    queue(c, "q1", 1, -1, true, true);
    queue(c, "q3", 3, -1, true, true);
    for (int i = 0; i < 8; i++) {
        char jk[32], k[32];
        snprintf(jk, sizeof(jk), "ns/a%d", i);
        snprintf(k, sizeof(k), "ns/a%d-0", i);
        job(c, jk, "q1", 1, 0, i);
        task(c, k, jk, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 8);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

static void test_queue_capability(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *j1, *j2, *j3;
    (void)state;

    node(c, "n1", 8);
    queue(c, "capped", 1, 3, true, true);
    /* allocation: 5 single-GPU pods, only 3 fit the cap */
    for (int i = 0; i < 5; i++) {
        char jk[32], k[32];
        snprintf(jk, sizeof(jk), "ns/p%d", i);
        snprintf(k, sizeof(k), "ns/p%d-0", i);
        job(c, jk, "capped", 1, 0, i);
        task(c, k, jk, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "capped"))->v[SC_GPU], GPU(3));
    assert_int_equal(gpus_used(c), 3);
    for (int i = 0; i < 5; i++) {
        char jk[32];
        snprintf(jk, sizeof(jk), "ns/p%d", i);
        remove_tasks(c, sc_job_find(c, jk));
        sc_job_remove(c, jk);
    }
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "capped"))->v[SC_GPU], 0);

    /* admission: minResources 2 GPUs each; the third would pass the cap */
    j1 = job_full(c, "ns/m1", "capped", 1, 0, 1, 2);
    j2 = job_full(c, "ns/m2", "capped", 1, 0, 2, 1);
    j3 = job_full(c, "ns/m3", "capped", 1, 0, 3, 1);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j1), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(j2), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(j3), SC_JOB_PENDING);
    assert_string_equal(sc_job_message(j3),
                        "queue capped has no room for the job's minResources (capability or "
                        "cluster overcommit reached)");
    /* the next cycle, pods still not created: j3 still waits */
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j3), SC_JOB_PENDING);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

static void test_closed_queue(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *j, *k;
    (void)state;

    node(c, "n1", 8);
    queue(c, "shut", 1, -1, true, false);
    j = job_full(c, "ns/j", "shut", 1, 0, 1, 1);
    k = job_full(c, "ns/k", "nosuch", 1, 0, 1, 1);
    for (int i = 0; i < 3; i++) {
        cycle(c, conf, &r);
        assert_int_equal(sc_job_get_phase(j), SC_JOB_PENDING);
        assert_int_equal(sc_job_get_phase(k), SC_JOB_PENDING);
    }
    assert_string_equal(sc_job_message(j), "queue shut is closed");
    assert_string_equal(sc_job_message(k), "queue nosuch does not exist");
    assert_false(sc_queue_open(sc_queue_find(c, "shut")));
    /* opened: admitted */
    queue(c, "shut", 1, -1, true, true);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(j), SC_JOB_INQUEUE);
    assert_string_equal(sc_job_message(j), "");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* overcommit: admitted-but-not-running minResources stay within 1.2 x the
 * idle cluster, across cycles (before the admitted groups' pods exist). */
static void test_overcommit(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 10);
    a = job_full(c, "ns/a", NULL, 1, 0, 1, 8);
    b = job_full(c, "ns/b", NULL, 1, 0, 2, 8);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    /* a's pods arrive and run: 8 used, 12 - 8 = 4 idle < 8 */
    for (int i = 0; i < 8; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/a-%d", i);
        task(c, k, "ns/a", 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 8);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_RUNNING);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_PENDING);
    /* a done */
    remove_tasks(c, a);
    sc_job_set_completed(c, a);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_COMPLETED);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);

    /* a factor of 2 admits both at once */
    sc_conf *two = conf_of("actions: \"enqueue\"\n"
                           "tiers:\n- plugins:\n  - name: overcommit\n"
                           "    arguments:\n      overcommit-factor: 2.0\n");
    sc_job *d = job_full(c, "ns/d", NULL, 1, 0, 3, 8);
    cycle(c, two, &r);
    assert_int_equal(sc_job_get_phase(d), SC_JOB_INQUEUE);
    sc_conf_free(two);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* The admitted groups' sums enqueue reads (each queue's admitted_short and
 * the cluster's) are kept as things change: at every step they are what a
 * walk over the admitted groups short of minMember gives, those with tasks
 * to place or none yet. */
static int64_t check_admitted_short(const sc_cluster *c)
{
    sc_res total = {0};

    for (size_t i = 0; i < c->nqueues; i++) {
        sc_res q = {0};
        for (size_t k = 0; k < c->njobs; k++) {
            const sc_job *j = c->jobs[k];
            if (j->queue == c->queues[i] && !j->completed && j->inqueue &&
                (j->n_pending > 0 || j->n_pipelined > 0 || j->ntasks == 0) &&
                j->n_ready < j->min_member)
                sc_res_add(&q, &j->min_res);
        }
        assert_memory_equal(&q, &c->queues[i]->admitted_short, sizeof(q));
        sc_res_add(&total, &q);
    }
    assert_memory_equal(&total, &c->admitted_short, sizeof(total));
    return total.v[SC_GPU] / 1000;
}

static void test_admitted_sums_kept(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 8);
    queue(c, "q1", 1, -1, true, true);
    queue(c, "q2", 1, -1, true, true);
    a = job_full(c, "ns/a", "q1", 2, 0, 1, 4);
    b = job_full(c, "ns/b", "q2", 2, 0, 2, 4);
    assert_int_equal(check_admitted_short(c), 0); /* not admitted yet */
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(a), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);
    assert_int_equal(check_admitted_short(c), 8); /* admitted, no pods */
    /* b's minResources change, then it moves to q1 */
    b = job_full(c, "ns/b", "q2", 2, 0, 2, 2);
    assert_int_equal(check_admitted_short(c), 6);
    b = job_full(c, "ns/b", "q1", 2, 0, 2, 2);
    assert_int_equal(check_admitted_short(c), 6);
    /* a's pods arrive, one short of its gang, then the other: placed */
    task(c, "ns/a-0", "ns/a", 2);
    assert_int_equal(check_admitted_short(c), 6);
    task(c, "ns/a-1", "ns/a", 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    assert_int_equal(check_admitted_short(c), 2); /* a is whole */
    /* a loses a pod: short again */
    sc_task_remove(c, "ns/a-1");
    assert_int_equal(check_admitted_short(c), sc_job_get_phase(a) == SC_JOB_INQUEUE ? 6 : 2);
    sc_job_remove(c, "ns/a");
    sc_job_remove(c, "ns/b");
    assert_int_equal(check_admitted_short(c), 0);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* The node sums a session opens from follow every change of a node and of
 * the tasks on it or nominated to it, outside cycles too. */
static void test_node_sums_follow_changes(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_task *t;
    (void)state;

    node(c, "n1", 8);
    node(c, "n2", 4);
    check_node_sums(c);
    assert_int_equal(c->sum_alloc.v[SC_GPU], GPU(12));
    queue(c, "q1", 1, -1, true, true);
    gang(c, "ns/a", "q1", 2, 3, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    assert_int_equal(c->sum_free_now.v[SC_GPU], GPU(6));
    /* unschedulable: out of the sums; schedulable again: back */
    node_full(c, "n2", 4, 64, NULL, 0, NULL, 0, true);
    check_node_sums(c);
    assert_int_equal(c->sum_alloc.v[SC_GPU], GPU(8));
    node(c, "n2", 4);
    check_node_sums(c);
    /* a task being released counts in the future sum only */
    t = sc_task_find(c, "ns/a-0");
    sc_task_set_status(c, t, SC_TASK_RELEASING);
    check_node_sums(c);
    assert_int_equal(c->sum_free_future.v[SC_GPU] - c->sum_free_now.v[SC_GPU], GPU(3));
    /* a node that shrinks under its tasks adds no negative room */
    node(c, sc_node_name(sc_task_node(sc_task_find(c, "ns/a-1"))), 1);
    check_node_sums(c);
    /* a node removed with tasks on it, and one that comes back */
    sc_node_remove(c, "n1");
    check_node_sums(c);
    sc_node_remove(c, "n2");
    check_node_sums(c);
    assert_int_equal(c->sum_alloc.v[SC_GPU], 0);
    node(c, "n1", 8);
    check_node_sums(c);
    assert_int_equal(c->sum_free_now.v[SC_GPU], GPU(8));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- backfill and strict order ---- */

static void test_backfill(void **state)
{
    sc_cluster *c;
    sc_conf *dflt = sc_conf_default();
    sc_conf *strict = conf_of(strict_yaml);
    rec r;
    (void)state;

    for (int pass = 0; pass < 2; pass++) {
        sc_conf *conf = pass ? strict : dflt;
        c = sc_cluster_new();
        node(c, "n1", 4);
        gang(c, "ns/big", NULL, 8, 1, 0, 1);
        gang(c, "ns/small", NULL, 2, 1, 0, 2);
        cycle(c, conf, &r);
        if (pass == 0) {
            /* backfill: the small job fills the gap the big one cannot use */
            assert_int_equal(r.nbound, 2);
            assert_int_equal(bound_prefix(&r, "ns/small-"), 2);
        } else {
            /* strict FIFO in the queue: the small job waits behind */
            assert_int_equal(r.nbound, 0);
        }
        assert_int_equal(sc_job_ready_tasks(sc_job_find(c, "ns/big")), 0);
        sc_cluster_free(c);
    }
    sc_conf_free(strict);
    sc_conf_free(dflt);
}

/* In strict order, a higher priority job goes first even if created later. */
static void test_priority_order(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(strict_yaml);
    rec r;
    (void)state;

    node(c, "n1", 2);
    gang(c, "ns/low", NULL, 2, 1, 1, 1);
    gang(c, "ns/high", NULL, 2, 1, 100, 2);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/high-"), 2);
    assert_int_equal(r.nbound, 2);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* drf: the job with the smaller dominant share first. */
static void test_drf_order(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of("actions: \"enqueue, allocate\"\n"
                            "tiers:\n- plugins:\n  - name: drf\n  - name: predicates\n");
    rec r;
    (void)state;

    node(c, "n1", 4);
    /* old (created first) already holds 2 GPUs and wants one more */
    job(c, "ns/old", NULL, 1, 0, 1);
    task(c, "ns/old-0", "ns/old", 1);
    task(c, "ns/old-1", "ns/old", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    node(c, "n1", 3); /* shrink: one GPU left */
    task(c, "ns/old-2", "ns/old", 1);
    job(c, "ns/new", NULL, 1, 0, 2);
    task(c, "ns/new-0", "ns/new", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_true(was_bound(&r, "ns/new-0"));

    /* without drf, age decides */
    sc_conf_free(conf);
    conf = conf_of("actions: \"enqueue, allocate\"\n"
                   "tiers:\n- plugins:\n  - name: predicates\n");
    sc_task_remove(c, "ns/new-0");
    task(c, "ns/new-1", "ns/new", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_true(was_bound(&r, "ns/old-2"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- preempt ---- */

static void test_preempt_whole_gang(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    sc_job *hi;
    (void)state;

    node(c, "n1", 4);
    gang(c, "ns/low", NULL, 4, 1, 1, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    hi = gang(c, "ns/high", NULL, 2, 1, 100, 2);
    sc_cycle_stats st = cycle(c, conf, &r);
    /* the whole low gang goes (keeping 2 of 4 would break its minMember) */
    assert_int_equal(r.nevicted, 4);
    assert_int_equal(evicted_prefix(&r, "ns/low-"), 4);
    assert_string_equal(r.reason[0], "Preempted");
    assert_int_equal(st.evicted, 4);
    assert_int_equal(st.pipelined, 2);
    /* the preemptor is pipelined, not bound */
    assert_int_equal(r.nbound, 0);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/high-0")), SC_TASK_PIPELINED);
    assert_int_equal(c->nodes[0]->pipelined.v[SC_GPU], GPU(2));
    /* victims still there: no bind, no second eviction */
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(r.nevicted, 0);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/high-1")), SC_TASK_PIPELINED);
    /* victims gone: bound */
    for (int i = 0; i < 4; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/low-%d", i);
        sc_task_remove(c, k);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    assert_int_equal(bound_prefix(&r, "ns/high-"), 2);
    assert_int_equal(sc_job_get_phase(hi), SC_JOB_RUNNING);
    assert_int_equal(c->nodes[0]->pipelined.v[SC_GPU], 0);
    assert_int_equal(gpus_used(c), 2);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Two preemptors pipelined on a node for the two GPUs their victims
 * release; one GPU is taken meanwhile by a pod the scheduler did not place
 * (bound by another scheduler, or made again under a released pod's name
 * and bound by a binding that named no uid). Before, each pipelined task
 * counted the other's reservation and neither ever fitted: both waited
 * for ever beside a free GPU (t0910 in operator mode). Now the waits that
 * cannot be met go back to pending: one binds. */
static void test_hopeless_pipelines_dropped(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    (void)state;

    node(c, "n1", 2);
    gang(c, "ns/low", NULL, 2, 1, 1, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    gang(c, "ns/hia", NULL, 1, 1, 100, 2);
    gang(c, "ns/hib", NULL, 1, 1, 100, 3);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 2);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/hia-0")), SC_TASK_PIPELINED);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/hib-0")), SC_TASK_PIPELINED);
    sc_task_remove(c, "ns/low-0");
    sc_task_spec other = {.key = "ns/other", .node = "n1", .status = SC_TASK_RUNNING,
                          .priority = 1000};
    task_spec(c, &other, GPU(1), 1);
    sc_task_remove(c, "ns/low-1");
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_int_equal(c->nodes[0]->pipelined.v[SC_GPU], 0);
    assert_int_equal(gpus_used(c), 2);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

static void test_preempt_cannot_help(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    (void)state;

    node(c, "n1", 4);
    gang(c, "ns/low", NULL, 2, 1, 1, 1);
    gang(c, "ns/same", NULL, 2, 1, 100, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    /* 8 GPUs: even evicting everything would not make room */
    gang(c, "ns/huge", NULL, 8, 1, 100, 3);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    assert_int_equal(r.nbound, 0);
    /* 4 GPUs: only the low gang may go (not the equal priority one) */
    sc_job_remove(c, "ns/huge");
    gang(c, "ns/four", NULL, 4, 1, 100, 4);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/low-0")), SC_TASK_RUNNING);
    assert_int_equal(c->nodes[0]->releasing.v[SC_GPU], 0);
    assert_int_equal(c->nodes[0]->pipelined.v[SC_GPU], 0);
    /* 2 GPUs: the low gang goes */
    sc_job_remove(c, "ns/four");
    gang(c, "ns/two", NULL, 2, 1, 100, 5);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 2);
    assert_int_equal(evicted_prefix(&r, "ns/low-"), 2);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* An elastic victim loses only the members beyond its minMember. */
static void test_preempt_elastic_victim(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    sc_job *v;
    (void)state;

    node(c, "n1", 4);
    v = job(c, "ns/el", NULL, 2, 1, 1);
    for (int i = 0; i < 4; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/el-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/el", .priority = 1};
        task_spec(c, &s, GPU(1), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    gang(c, "ns/hi", NULL, 2, 1, 100, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 2);
    assert_int_equal(sc_job_ready_tasks(v), 2);
    assert_int_equal(sc_job_get_phase(v), SC_JOB_RUNNING);
    remove_evicted(c, &r);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/hi-"), 2);
    assert_int_equal(sc_job_running_tasks(v), 2);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Admit-only (the Slurm runtime places pods): preempt stays, evicts whole
 * gangs only (the runtime frees nothing while part of a gang still runs),
 * and nothing is ever bound or pipelined to a bind. */
static void test_preempt_admit_only(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of("actions: \"enqueue, allocate, backfill, preempt, reclaim\"\n" TIERS);
    rec r;
    sc_job *v, *hi;
    (void)state;

    sc_conf_admit_only(conf);
    assert_string_equal(sc_conf_actions(conf), "enqueue, preempt, reclaim");
    node(c, "n1", 4);
    /* an elastic job (minMember 2 of 4) the runtime placed on n1 */
    v = job(c, "ns/el", NULL, 2, 1, 1);
    for (int i = 0; i < 4; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/el-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/el", .priority = 1, .node = "n1",
                          .status = SC_TASK_RUNNING};
        task_spec(c, &s, GPU(1), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    hi = gang(c, "ns/hi", NULL, 2, 1, 100, 2);
    cycle(c, conf, &r);
    /* all four go, not the two beyond its minMember */
    assert_int_equal(r.nevicted, 4);
    assert_int_equal(evicted_prefix(&r, "ns/el-"), 4);
    assert_int_equal(r.nbound, 0);
    /* no second eviction while the victims stop */
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    assert_int_equal(r.nbound, 0);
    /* the runtime starts the preemptor where the victims were */
    remove_evicted(c, &r);
    for (int i = 0; i < 2; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/hi-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/hi", .priority = 100, .node = "n1",
                          .status = SC_TASK_RUNNING};
        task_spec(c, &s, GPU(1), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(r.nevicted, 0);
    assert_int_equal(sc_job_get_phase(hi), SC_JOB_RUNNING);
    assert_int_equal(c->nodes[0]->pipelined.v[SC_GPU], 0);
    (void)v;
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A kube-system pod and a non-preemptable job are never victims. */
static void test_preempt_conformance(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    (void)state;

    node(c, "n1", 2);
    {
        sc_task_spec s = {.key = "kube-system/dns", .priority = 1};
        task_spec(c, &s, GPU(1), 1);
    }
    {
        sc_job_spec js = {.key = "ns/keep", .min_member = 1, .priority = 1, .created = 1,
                          .preemptable = false};
        sc_job_upsert(c, &js);
        task(c, "ns/keep-0", "ns/keep", 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    gang(c, "ns/hi", NULL, 1, 1, 100, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Victims go lowest priority first, and only those that give back what
 * the preemptor lacks (a CPU-only pod is no help to a GPU gang). */
static void test_preempt_order_no_collateral(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    (void)state;

    node(c, "n1", 4);
    {
        sc_task_spec s = {.key = "ns/cpuonly"};
        task_spec(c, &s, 0, 4);
    }
    gang(c, "ns/p5", NULL, 2, 1, 5, 2);
    gang(c, "ns/p1", NULL, 2, 1, 1, 3);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 5);
    gang(c, "ns/hi", NULL, 2, 1, 100, 4);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 2);
    assert_int_equal(evicted_prefix(&r, "ns/p1-"), 2);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/cpuonly")), SC_TASK_RUNNING);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- reclaim ---- */

static void test_reclaim(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(reclaim_yaml);
    rec r;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    queue(c, "qa", 1, -1, true, true);
    queue(c, "qb", 1, -1, true, true);
    queue(c, "qk", 1, -1, false, true); /* not reclaimable */
    /* qa takes the whole cluster in single-GPU jobs while alone */
    for (int i = 0; i < 8; i++) {
        char jk[32], k[32];
        snprintf(jk, sizeof(jk), "ns/a%d", i);
        snprintf(k, sizeof(k), "ns/a%d-0", i);
        job(c, jk, "qa", 1, 0, i);
        task(c, k, jk, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 8);
    /* qb asks for 4: qa's deserved becomes 4, the 4 above it are taken back */
    gang(c, "ns/b", "qb", 4, 1, 0, 100);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 4);
    assert_int_equal(evicted_prefix(&r, "ns/a"), 4);
    assert_string_equal(r.reason[0], "Reclaimed");
    assert_int_equal(sc_queue_deserved(sc_queue_find(c, "qa"))->v[SC_GPU], GPU(4));
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "qa"))->v[SC_GPU], GPU(4));
    assert_int_equal(r.nbound, 0);
    remove_evicted(c, &r);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 4);
    /* qb asks for more: qa is at its deserved share, nothing more is taken */
    gang(c, "ns/b2", "qb", 2, 1, 0, 101);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Controllers make a group's pods once it is admitted (Inqueue), and make
 * an evicted pod again: one round of that after a cycle. */
static void controllers_round(sc_cluster *c, const rec *r, const char *const *jobs, size_t n)
{
    for (size_t i = 0; i < r->nevicted; i++) {
        char jk[64];
        snprintf(jk, sizeof(jk), "%.*s", (int)(strrchr(r->evicted[i], '-') - r->evicted[i]),
                 r->evicted[i]);
        sc_task_remove(c, r->evicted[i]);
        task(c, r->evicted[i], jk, 1);
    }
    for (size_t i = 0; i < n; i++) {
        sc_job *j = sc_job_find(c, jobs[i]);
        char k[64];
        if (!j || sc_job_ntasks(j) || sc_job_get_phase(j) == SC_JOB_PENDING)
            continue;
        snprintf(k, sizeof(k), "%s-0", jobs[i]);
        task(c, k, jobs[i], 1);
    }
}

/* Queues of weight 1 and 3 on 8 GPUs, one-GPU jobs with minResources
 * arriving in turns while the cluster fills: they end at 2:6. A group of
 * the first queue admitted while there was room, waiting above that
 * queue's share, used to hold the overcommit headroom that the second
 * queue's groups needed to be admitted, and so to reclaim: 4:4 for ever. */
static void test_share_reached_through_admission(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(reclaim_yaml);
    const char *jobs[16];
    char names[16][32];
    size_t n = 0;
    rec r;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    queue(c, "q1", 1, -1, true, true);
    queue(c, "q3", 3, -1, true, true);
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 2; k++) {
            snprintf(names[n], sizeof(names[n]), "ns/%c%d", k ? 'b' : 'a', i);
            jobs[n] = names[n];
            job_full(c, names[n], k ? "q3" : "q1", 1, 0, (double)n, 1);
            n++;
            cycle(c, conf, &r);
            controllers_round(c, &r, jobs, n);
        }
    for (int i = 0; i < 10; i++) {
        cycle(c, conf, &r);
        controllers_round(c, &r, jobs, n);
    }
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "q1"))->v[SC_GPU], GPU(2));
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "q3"))->v[SC_GPU], GPU(6));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* On a full cluster a group with minResources beyond the overcommit
 * headroom is admitted when preempt can make room for it (lower-priority
 * jobs of its queue hold enough), and preempt then takes a gang for it; it
 * was never admitted, had no pods, and preempted nothing. A group of the
 * same priority is not admitted. */
static void test_admitted_for_preemption(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    sc_job *hi, *same;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    sc_job *low = job_full(c, "ns/low", NULL, 4, 10, 1, 8);
    for (int i = 0; i < 4; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/low-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/low", .priority = 10};
        task_spec(c, &s, GPU(2), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    same = job_full(c, "ns/same", NULL, 2, 10, 2, 4);
    hi = job_full(c, "ns/hi", NULL, 2, 1000, 3, 4);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(hi), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(same), SC_JOB_PENDING);
    for (int i = 0; i < 2; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/hi-%d", i);
        sc_task_spec s = {.key = k, .job = "ns/hi", .priority = 1000};
        task_spec(c, &s, GPU(2), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(evicted_prefix(&r, "ns/low-"), 4); /* the gang, whole */
    assert_string_equal(r.reason[0], "Preempted");
    remove_evicted(c, &r);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/hi-"), 2);
    /* it runs: the reason it waited is gone (its PodGroup said Unschedulable
     * while it ran) */
    assert_int_equal(sc_job_get_phase(hi), SC_JOB_RUNNING);
    assert_string_equal(sc_job_message(hi), "");
    (void)low;
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A group of a queue below its share is admitted for reclaim when what
 * other queues hold above theirs covers it, whatever the room in resources
 * it does not ask for (CPU promised beyond what is idle refused it). */
static void test_admitted_for_reclaim(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(reclaim_yaml);
    rec r;
    (void)state;

    node_full(c, "n1", 4, 4, NULL, 0, NULL, 0, false);
    node_full(c, "n2", 4, 4, NULL, 0, NULL, 0, false);
    queue(c, "qa", 1, -1, true, true);
    queue(c, "qb", 1, -1, true, true);
    /* qa: a group admitted while there was room, asking 1 CPU, no pods yet */
    sc_job_spec xs = {.key = "ns/x", .queue = "qa", .min_member = 1, .created = 0,
                      .preemptable = true};
    xs.min_resources.v[SC_CPU] = CPU(1);
    sc_job *x = sc_job_upsert(c, &xs);
    assert_non_null(x);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(x), SC_JOB_INQUEUE);
    /* qa fills every GPU and CPU */
    for (int i = 0; i < 8; i++) {
        char jk[16], k[32];
        snprintf(jk, sizeof(jk), "ns/a%d", i);
        snprintf(k, sizeof(k), "%s-0", jk);
        job(c, jk, "qa", 1, 0, 1 + i);
        task(c, k, jk, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 8);
    /* qb asks for 2 GPUs: past the overcommit headroom, but qa holds more
     * than its share */
    sc_job *b = job_full(c, "ns/b", "qb", 2, 0, 20, 2);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(b), SC_JOB_INQUEUE);
    task(c, "ns/b-0", "ns/b", 1);
    task(c, "ns/b-1", "ns/b", 1);
    cycle(c, conf, &r);
    assert_int_equal(evicted_prefix(&r, "ns/a"), 2);
    assert_string_equal(r.reason[0], "Reclaimed");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Behind a big group that waits for the headroom, a small one that fits in
 * what is idle now is admitted (and backfill places it); one that does not
 * fit waits with the big one. It used to wait behind it whatever its size. */
static void test_admitted_into_the_gap(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    job_full(c, "ns/mid", NULL, 3, 0, 1, 6);
    for (int i = 0; i < 3; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/mid-%d", i);
        task(c, k, "ns/mid", 2);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    sc_job *big = job_full(c, "ns/big", NULL, 2, 0, 2, 8);
    sc_job *small = job_full(c, "ns/small", NULL, 1, 0, 3, 1);
    sc_job *too = job_full(c, "ns/too", NULL, 1, 0, 4, 3);
    cycle(c, conf, &r);
    assert_int_equal(sc_job_get_phase(big), SC_JOB_PENDING);
    assert_int_equal(sc_job_get_phase(small), SC_JOB_INQUEUE);
    assert_int_equal(sc_job_get_phase(too), SC_JOB_PENDING);
    task(c, "ns/small-0", "ns/small", 1);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/small-"), 1);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

static void test_reclaim_not_reclaimable(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(reclaim_yaml);
    rec r;
    (void)state;

    node(c, "n1", 4);
    queue(c, "qk", 1, -1, false, true);
    queue(c, "qb", 1, -1, true, true);
    for (int i = 0; i < 4; i++) {
        char jk[32], k[32];
        snprintf(jk, sizeof(jk), "ns/k%d", i);
        snprintf(k, sizeof(k), "ns/k%d-0", i);
        job(c, jk, "qk", 1, 0, i);
        task(c, k, jk, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    gang(c, "ns/b", "qb", 2, 1, 0, 100);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A whole gang in a reclaimable queue goes only if the queue stays at or
 * above its deserved share once all of it is gone. */
static void test_reclaim_gang_keeps_deserved(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(reclaim_yaml);
    rec r;
    (void)state;

    node(c, "n1", 8);
    queue(c, "qa", 1, -1, true, true);
    queue(c, "qb", 1, -1, true, true);
    gang(c, "ns/a", "qa", 8, 1, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 8);
    /* qb wants 2: qa deserves 6 and holds 8 in one gang of minMember 8:
     * evicting the gang would leave qa at 0, below its deserved share */
    gang(c, "ns/b", "qb", 2, 1, 0, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 0);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- predicates ---- */

static void test_node_selector_affinity(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_kv la[] = {{"zone", "a"}, {"gpu", "h100"}};
    sc_kv lb[] = {{"zone", "b"}};
    sc_kv sel[] = {{"zone", "b"}};
    const char *va[] = {"a"};
    const char *vab[] = {"a", "b"};
    sc_match_expr in_a[] = {{"zone", SC_OP_IN, va, 1}};
    sc_match_expr notin_a[] = {{"zone", SC_OP_NOT_IN, va, 1}};
    sc_match_expr exists_gpu[] = {{"gpu", SC_OP_EXISTS, NULL, 0}};
    sc_match_expr in_ab_notexists[] = {{"zone", SC_OP_IN, vab, 2},
                                       {"gpu", SC_OP_NOT_EXISTS, NULL, 0}};
    sc_affinity_term t_in_a[] = {{in_a, 1}}, t_notin_a[] = {{notin_a, 1}},
                     t_exists[] = {{exists_gpu, 1}}, t_and[] = {{in_ab_notexists, 2}};
    sc_match_expr in_c[] = {{"zone", SC_OP_IN, (const char *[]){"c"}, 1}};
    sc_affinity_term t_none[] = {{in_c, 1}};
    sc_affinity_term t_or[] = {{in_c, 1}, {notin_a, 1}};
    (void)state;

    node_full(c, "na", 4, 16, la, 2, NULL, 0, false);
    node_full(c, "nb", 4, 16, lb, 1, NULL, 0, false);
    node_full(c, "nplain", 4, 16, NULL, 0, NULL, 0, false);
    struct {
        const char *key;
        const sc_kv *sel;
        size_t nsel;
        const sc_affinity_term *aff;
        size_t naff;
        const char *want; /* NULL = stays pending */
    } cases[] = {
        {"ns/sel", sel, 1, NULL, 0, "nb"},
        {"ns/in", NULL, 0, t_in_a, 1, "na"},
        {"ns/exists", NULL, 0, t_exists, 1, "na"},
        {"ns/and", NULL, 0, t_and, 1, "nb"},
        {"ns/none", NULL, 0, t_none, 1, NULL},
        {"ns/or", NULL, 0, t_or, 2, NULL /* nb or nplain */},
        {"ns/notin", NULL, 0, t_notin_a, 1, NULL /* nb or nplain */},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sc_task_spec s = {.key = cases[i].key, .node_selector = cases[i].sel,
                          .nnode_selector = cases[i].nsel, .affinity = cases[i].aff,
                          .naffinity = cases[i].naff};
        task_spec(c, &s, GPU(1), 1);
        cycle(c, conf, &r);
        if (strcmp(cases[i].key, "ns/none") == 0) {
            assert_int_equal(r.nbound, 0);
            assert_string_equal(sc_task_message(sc_task_find(c, "ns/none")),
                                "0/3 nodes are available: 3 node(s) didn't match Pod's node "
                                "affinity/selector.");
        } else if (cases[i].want) {
            assert_int_equal(r.nbound, 1);
            assert_string_equal(bound_to(&r, cases[i].key), cases[i].want);
        } else {
            assert_int_equal(r.nbound, 1);
            assert_string_not_equal(bound_to(&r, cases[i].key), "na");
        }
    }
    sc_conf_free(conf);
    sc_cluster_free(c);
}

static void test_taints_unschedulable(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_taint ns[] = {{"dedicated", "infer", SC_NO_SCHEDULE}};
    sc_taint pref[] = {{"soft", "", SC_PREFER_NO_SCHEDULE}};
    sc_toleration tol_eq[] = {{"dedicated", "infer", false, false, SC_NO_SCHEDULE}};
    sc_toleration tol_wrong[] = {{"dedicated", "train", false, false, SC_NO_SCHEDULE}};
    sc_toleration tol_exists[] = {{"dedicated", NULL, true, true, SC_NO_SCHEDULE}};
    sc_toleration tol_all[] = {{NULL, NULL, true, true, SC_NO_SCHEDULE}};
    (void)state;

    node_full(c, "tainted", 4, 16, NULL, 0, ns, 1, false);
    node_full(c, "cordoned", 4, 16, NULL, 0, NULL, 0, true);
    /* nothing tolerates: pending, both reasons given */
    task(c, "ns/plain", NULL, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_string_equal(sc_task_message(sc_task_find(c, "ns/plain")),
                        "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: "
                        "infer}, 1 node(s) were unschedulable.");
    /* the wrong value does not tolerate */
    {
        sc_task_spec s = {.key = "ns/wrong", .tolerations = tol_wrong, .ntolerations = 1};
        task_spec(c, &s, GPU(1), 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    const sc_toleration *tols[] = {tol_eq, tol_exists, tol_all};
    const char *keys[] = {"ns/eq", "ns/exists", "ns/all"};
    for (int i = 0; i < 3; i++) {
        sc_task_spec s = {.key = keys[i], .tolerations = tols[i], .ntolerations = 1};
        task_spec(c, &s, GPU(1), 1);
        cycle(c, conf, &r);
        assert_int_equal(r.nbound, 1);
        assert_string_equal(bound_to(&r, keys[i]), "tainted");
    }
    /* PreferNoSchedule does not filter */
    node_full(c, "soft", 1, 16, NULL, 0, pref, 1, false);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_string_equal(bound_to(&r, "ns/plain"), "soft");
    /* uncordoned: the other waiting pod goes */
    node_full(c, "cordoned", 4, 16, NULL, 0, NULL, 0, false);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_true(was_bound(&r, "ns/wrong"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- scores ---- */

static void test_binpack_nodeorder(void **state)
{
    sc_conf *pack = conf_of("actions: \"enqueue, allocate\"\n"
                            "tiers:\n- plugins:\n  - name: predicates\n  - name: binpack\n");
    sc_conf *spread = conf_of("actions: \"enqueue, allocate\"\n"
                              "tiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n");
    rec r;
    (void)state;

    for (int mode = 0; mode < 2; mode++) {
        sc_cluster *c = sc_cluster_new();
        node(c, "n1", 4);
        node(c, "n2", 4);
        node(c, "n3", 4);
        const char *first = NULL;
        char seen[3][8] = {{0}};
        for (int i = 0; i < 3; i++) {
            char k[32];
            snprintf(k, sizeof(k), "ns/p%d", i);
            task(c, k, NULL, 1);
            cycle(c, mode ? spread : pack, &r);
            assert_int_equal(r.nbound, 1);
            snprintf(seen[i], sizeof(seen[i]), "%s", bound_to(&r, k));
            if (!first)
                first = seen[0];
        }
        if (mode == 0) {
            assert_string_equal(seen[1], seen[0]);
            assert_string_equal(seen[2], seen[0]);
        } else {
            assert_string_not_equal(seen[1], seen[0]);
            assert_string_not_equal(seen[2], seen[0]);
            assert_string_not_equal(seen[2], seen[1]);
        }
        /* CPU-only pods go through the node scan: same preference */
        for (int i = 0; i < 2; i++) {
            char k[32];
            snprintf(k, sizeof(k), "ns/cpu%d", i);
            sc_task_spec s = {.key = k};
            task_spec(c, &s, 0, 8);
            cycle(c, mode ? spread : pack, &r);
            assert_int_equal(r.nbound, 1);
            snprintf(seen[i], sizeof(seen[i]), "%s", bound_to(&r, k));
        }
        if (mode == 0)
            assert_string_equal(seen[1], seen[0]);
        else
            assert_string_not_equal(seen[1], seen[0]);
        sc_cluster_free(c);
    }
    sc_conf_free(pack);
    sc_conf_free(spread);
}

/* gpulocality: a gang lands where its members are. */
static void test_gpulocality(void **state)
{
    sc_conf *conf = conf_of("actions: \"enqueue, allocate\"\n"
                            "tiers:\n- plugins:\n  - name: gang\n  - name: predicates\n"
                            "  - name: nodeorder\n  - name: gpulocality\n"
                            "    arguments:\n      gpulocality.weight: 10\n");
    sc_cluster *c = sc_cluster_new();
    rec r;
    (void)state;

    node(c, "n1", 8);
    node(c, "n2", 8);
    gang(c, "ns/g", NULL, 4, 1, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    for (int i = 1; i < 4; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/g-%d", i);
        assert_string_equal(bound_to(&r, k), bound_to(&r, "ns/g-0"));
    }
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A gang goes to one node that holds it whole rather than being split. */
static void test_gang_not_split(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "n1", 8);
    node(c, "n2", 8);
    gang(c, "ns/x", NULL, 3, 1, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 3);
    /* n? has 5 free, the other 8: a 4-GPU gang of 2 x 2 goes to one node */
    gang(c, "ns/y", NULL, 2, 2, 0, 2);
    gang(c, "ns/z", NULL, 8, 1, 0, 3);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 10);
    assert_string_equal(bound_to(&r, "ns/y-0"), bound_to(&r, "ns/y-1"));
    for (int i = 1; i < 8; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/z-%d", i);
        assert_string_equal(bound_to(&r, k), bound_to(&r, "ns/z-0"));
    }
    assert_string_not_equal(bound_to(&r, "ns/z-0"), bound_to(&r, "ns/y-0"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A large cluster: messages from the free totals, and gangs whose need is
 * more than is free in total are left out until enough is freed. */
static void test_large_cluster(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    char k[32];
    (void)state;

    for (int i = 0; i < 1001; i++) {
        snprintf(k, sizeof(k), "n%04d", i);
        node(c, k, 1);
    }
    for (int i = 0; i < 1001; i++) {
        snprintf(k, sizeof(k), "ns/p%04d", i);
        task(c, k, NULL, 1);
    }
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1001);
    gang(c, "ns/b", NULL, 2, 1, 0, 1e9);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_string_equal(sc_job_message(sc_job_find(c, "ns/b")),
                        "2/2 tasks in gang unschedulable: 1001 Insufficient nvidia.com/gpu");
    assert_string_equal(sc_task_message(sc_task_find(c, "ns/b-1")),
                        "0/1001 nodes are available: 1001 Insufficient nvidia.com/gpu.");
    sc_task_remove(c, "ns/p0000");
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    sc_task_remove(c, "ns/p0001");
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 2);
    assert_string_equal(sc_job_message(sc_job_find(c, "ns/b")), "");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- the model ---- */

static void test_node_removal(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *j;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    j = gang(c, "ns/a", NULL, 4, 1, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    const char *where = bound_to(&r, "ns/a-0");
    char gone[8];
    snprintf(gone, sizeof(gone), "%s", where);
    sc_node_remove(c, gone);
    assert_null(sc_node_find(c, gone));
    assert_int_equal(sc_node_count(c), 1);
    assert_null(sc_task_node(sc_task_find(c, "ns/a-0")));
    assert_int_equal(gpus_used(c), 0);
    /* a new gang runs on what is left */
    gang(c, "ns/b", NULL, 4, 1, 0, 2);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 4);
    assert_string_not_equal(bound_to(&r, "ns/b-0"), gone);
    /* the orphaned tasks go away cleanly */
    remove_tasks(c, j);
    assert_int_equal(sc_job_ready_tasks(j), 0);
    assert_int_equal(sc_queue_allocated(sc_queue_find(c, "default"))->v[SC_GPU], GPU(4));
    sc_node_remove(c, "nosuch");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A PodGroup deleted while its pods still run (the collector deletes a
 * job's PodGroup and pods in no set order): the pods keep their GPUs until
 * each goes, so no other gang is placed on them meanwhile; the job reports
 * nothing, waits for nothing, is no queue's PodGroup, and goes with its
 * last pod. A group deleted with no pods goes at once. */
static void test_group_deleted_before_pods(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *a, *b;
    (void)state;

    node(c, "n1", 4);
    a = gang(c, "ns/a", NULL, 2, 2, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    sc_job_orphan(c, "ns/a");
    assert_ptr_equal(sc_job_find(c, "ns/a"), a);
    assert_false(sc_job_is_group(a));
    assert_int_equal(gpus_used(c), 4);
    b = gang(c, "ns/b", NULL, 2, 2, 0, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(r.nchanged, 1); /* b's reason; a says nothing */
    assert_string_equal(sc_job_message(b), "2/2 tasks in gang unschedulable: "
                                           "1 Insufficient nvidia.com/gpu");
    /* one of a's pods goes: still no room for the gang of two */
    sc_task_remove(c, "ns/a-0");
    assert_non_null(sc_job_find(c, "ns/a"));
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    /* the last goes, and the job with it: b runs */
    sc_task_remove(c, "ns/a-1");
    assert_null(sc_job_find(c, "ns/a"));
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/b-"), 2);
    /* a group deleted with no pods goes at once */
    job(c, "ns/c", NULL, 1, 0, 3);
    sc_job_orphan(c, "ns/c");
    assert_null(sc_job_find(c, "ns/c"));
    sc_job_orphan(c, "ns/nosuch");
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Pods that come ahead of their PodGroup wait for it, as Volcano's do: they
 * used to be placed one by one as they came, a partial gang when fewer than
 * minMember fitted. */
static void test_pods_before_group(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *j;
    (void)state;

    node(c, "n1", 4);
    task(c, "ns/late-0", "ns/late", 2);
    task(c, "ns/late-1", "ns/late", 2);
    task(c, "ns/late-2", "ns/late", 2);
    j = sc_job_find(c, "ns/late");
    assert_non_null(j);
    assert_false(sc_job_is_group(j));
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(r.nchanged, 0);
    /* the group comes: a gang of 3 x 2 GPUs on 4 GPUs does not fit */
    assert_ptr_equal(job(c, "ns/late", NULL, 3, 0, 1), j);
    assert_true(sc_job_is_group(j));
    cycle(c, conf, &r);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    assert_int_equal(gpus_used(c), 0);
    /* with minMember 2 it runs: two of them, in one cycle */
    job(c, "ns/late", NULL, 2, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(bound_prefix(&r, "ns/late-"), 2);
    /* a group never made: its pods wait, and the job goes with the last */
    task(c, "ns/never-0", "ns/never", 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 0);
    sc_task_remove(c, "ns/never-0");
    assert_null(sc_job_find(c, "ns/never"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Queues whose parents make a cycle (qx -> qy -> qx, and one naming
 * itself): the cycle ends (it walked the chain for ever), one of each loop
 * stays at the root, jobs everywhere are placed, and the sums follow. */
static void test_queue_parent_cycle(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    (void)state;

    node(c, "n1", 8);
    sc_queue_spec x = {.name = "qx", .parent = "qy", .weight = 1, .open = true};
    sc_queue_spec y = {.name = "qy", .parent = "qx", .weight = 1, .open = true};
    sc_queue_spec z = {.name = "qz", .parent = "qz", .weight = 1, .open = true};
    assert_non_null(sc_queue_upsert(c, &x));
    assert_non_null(sc_queue_upsert(c, &y));
    assert_non_null(sc_queue_upsert(c, &z));
    gang(c, "ns/d", NULL, 2, 1, 0, 1);
    gang(c, "ns/x", "qx", 2, 1, 0, 2);
    gang(c, "ns/y", "qy", 2, 1, 0, 3);
    gang(c, "ns/z", "qz", 2, 1, 0, 4);
    for (int i = 0; i < 3; i++)
        cycle(c, conf, &r);
    assert_int_equal(gpus_used(c), 8);
    sc_queue *qx = sc_queue_find(c, "qx"), *qy = sc_queue_find(c, "qy");
    sc_queue *qz = sc_queue_find(c, "qz");
    assert_true((qx->parent == qy && qy->parent == NULL) ||
                (qy->parent == qx && qx->parent == NULL));
    assert_null(qz->parent);
    /* the child's allocation is in its parent's too */
    sc_queue *child = qx->parent ? qx : qy, *top = qx->parent ? qy : qx;
    assert_int_equal(sc_queue_allocated(top)->v[SC_GPU],
                     sc_queue_allocated(child)->v[SC_GPU] + GPU(2));
    /* the loop undone: qy names no parent, and qx sits under it */
    y.parent = NULL;
    assert_non_null(sc_queue_upsert(c, &y));
    cycle(c, conf, &r);
    assert_ptr_equal(qx->parent, qy);
    assert_null(qy->parent);
    assert_int_equal(sc_queue_allocated(qy)->v[SC_GPU], GPU(4));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A PodGroup made again while pods of its deleted namesake remain takes
 * them back: they count toward its gang and its status. */
static void test_group_made_again(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    rec r;
    sc_job *a;
    (void)state;

    node(c, "n1", 4);
    a = gang(c, "ns/a", NULL, 2, 1, 0, 1);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 2);
    sc_job_orphan(c, "ns/a");
    assert_false(sc_job_is_group(a));
    assert_ptr_equal(job(c, "ns/a", NULL, 2, 0, 4), a);
    assert_true(sc_job_is_group(a));
    cycle(c, conf, &r);
    assert_true(r.nchanged >= 1); /* told afresh */
    assert_int_equal(sc_job_get_phase(a), SC_JOB_RUNNING);
    assert_int_equal(sc_job_task_count(a, SC_JOB_COUNT_RUNNING), 2);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* Tasks nominated to a removed node (preemptors waiting for their victims)
 * go back to pending; those bound there keep their pods but hold nothing;
 * tasks elsewhere are untouched. */
static void test_node_removal_nominated(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    (void)state;

    node(c, "n1", 4);
    node(c, "n2", 4);
    gang(c, "ns/low", NULL, 4, 1, 1, 1);
    gang(c, "ns/other", NULL, 4, 1, 1000, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 8);
    const char *low_on = bound_to(&r, "ns/low-0");
    char gone[8];
    snprintf(gone, sizeof(gone), "%s", low_on);
    gang(c, "ns/high", NULL, 2, 1, 100, 3);
    cycle(c, conf, &r);
    assert_int_equal(evicted_prefix(&r, "ns/low-"), 4);
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/high-0")), SC_TASK_PIPELINED);
    assert_int_equal(sc_node_find(c, gone)->pipelined.v[SC_GPU], GPU(2));
    sc_node_remove(c, gone);
    for (int i = 0; i < 2; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/high-%d", i);
        assert_int_equal(sc_task_get_status(sc_task_find(c, k)), SC_TASK_PENDING);
        assert_null(sc_task_find(c, k)->nominated);
    }
    for (int i = 0; i < 4; i++) {
        char k[32];
        snprintf(k, sizeof(k), "ns/low-%d", i);
        assert_null(sc_task_node(sc_task_find(c, k)));
        snprintf(k, sizeof(k), "ns/other-%d", i);
        assert_non_null(sc_task_node(sc_task_find(c, k)));
    }
    assert_int_equal(gpus_used(c), 4); /* the other gang's, on the node left */
    sc_conf_free(conf);
    sc_cluster_free(c);
}

static void test_removal_accounting(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = conf_of(preempt_yaml);
    rec r;
    sc_queue *q;
    (void)state;

    node(c, "n1", 4);
    q = queue(c, "q", 1, -1, true, true);
    gang(c, "ns/a", "q", 2, 1, 1, 1);
    gang(c, "ns/b", "q", 2, 1, 1, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 4);
    /* a pipelined preemptor, a releasing victim, a pending pod */
    gang(c, "ns/hi", "q", 2, 1, 100, 3);
    cycle(c, conf, &r);
    assert_int_equal(r.nevicted, 2);
    task(c, "ns/lone", "ns/hi", 1);
    assert_int_equal(c->nodes[0]->releasing.v[SC_GPU], GPU(2));
    assert_int_equal(c->nodes[0]->pipelined.v[SC_GPU], GPU(2));
    assert_int_equal(q->allocated.v[SC_GPU], GPU(2));
    /* everything goes: every sum returns to zero */
    sc_job_remove(c, "ns/hi");
    remove_tasks(c, sc_job_find(c, "ns/a"));
    sc_task_remove(c, "ns/b-0");
    sc_job_remove(c, "ns/b");
    sc_job_remove(c, "ns/a");
    const sc_res *used = sc_node_used(c->nodes[0]);
    assert_true(sc_res_empty(used));
    assert_true(sc_res_empty(&c->nodes[0]->releasing));
    assert_true(sc_res_empty(&c->nodes[0]->pipelined));
    assert_int_equal(c->nodes[0]->ntasks, 0);
    assert_true(sc_res_empty(&q->allocated));
    assert_true(sc_res_empty(&q->request));
    assert_int_equal(c->nwaiting[SC_WAIT_PENDING] + c->nwaiting[SC_WAIT_ADMITTED], 0);
    assert_null(c->waiting[SC_WAIT_PENDING]);
    assert_null(c->waiting[SC_WAIT_ADMITTED]);
    assert_true(sc_res_empty(&q->wait_demand));
    assert_null(sc_task_find(c, "ns/lone"));
    assert_int_equal(c->buckets[4] == c->nodes[0], 1);
    /* a pod without a group: a job of its own, gone with the pod */
    task(c, "ns/solo", NULL, 1);
    assert_non_null(sc_job_find(c, "ns/solo"));
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    sc_task_set_status(c, sc_task_find(c, "ns/solo"), SC_TASK_SUCCEEDED);
    assert_true(sc_res_empty(sc_node_used(c->nodes[0])));
    sc_task_remove(c, "ns/solo");
    assert_null(sc_job_find(c, "ns/solo"));
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* What sc_waiting_update keeps, checked against the jobs themselves: each
 * job on the list its admission says (or on none: admitted with nothing to
 * place), the lists' lengths, each queue's wait_demand the minResources of
 * its unfinished jobs without pods, and the admission sums
 * (check_admitted_short). */
static void check_waiting(const sc_cluster *c)
{
    size_t on[2] = {0, 0};

    for (int l = 0; l < 2; l++) {
        const sc_job *prev = NULL;
        for (const sc_job *j = c->waiting[l]; j; prev = j, j = j->wnext) {
            assert_true(j->waiting);
            assert_int_equal(j->wadmitted, l == SC_WAIT_ADMITTED);
            assert_ptr_equal(j->wprev, prev);
            on[l]++;
        }
        assert_int_equal(on[l], c->nwaiting[l]);
    }
    size_t want_n[2] = {0, 0};
    for (size_t i = 0; i < c->njobs; i++) {
        const sc_job *j = c->jobs[i];
        bool want = !j->completed && (!j->inqueue || j->n_pending > 0 || j->n_pipelined > 0);
        assert_int_equal(j->waiting, want);
        if (want) {
            assert_int_equal(j->wadmitted, j->inqueue);
            want_n[j->inqueue]++;
        }
    }
    assert_int_equal(want_n[0], on[0]);
    assert_int_equal(want_n[1], on[1]);
    for (size_t qi = 0; qi < c->nqueues; qi++) {
        sc_res sum = {0};
        for (size_t i = 0; i < c->njobs; i++)
            if (c->jobs[i]->queue == c->queues[qi] && !c->jobs[i]->completed &&
                c->jobs[i]->ntasks == 0)
                sc_res_add(&sum, &c->jobs[i]->min_res);
        assert_memory_equal(&sum, &c->queues[qi]->wait_demand, sizeof(sum));
    }
    check_admitted_short(c);
}

/* Jobs come, are admitted, get pods, move queues, change minResources,
 * finish and go, in a random order with cycles between: the waiting lists
 * and the demand sums follow every step (check_waiting), and end empty. */
static void test_waiting_lists_follow_changes(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    const char *queues[] = {"default", "qa", "qb"};
    const sc_task_status sts[] = {SC_TASK_PENDING, SC_TASK_RUNNING, SC_TASK_SUCCEEDED,
                                  SC_TASK_FAILED};
    unsigned seed = 12345;
    char key[64];
    rec r;
    (void)state;

    node(c, "n1", 8);
    node(c, "n2", 8);
    queue(c, "qa", 1, -1, true, true);
    queue(c, "qb", 3, 6, true, true);
    sc_queue_spec child = {.name = "qc", .parent = "qa", .weight = 1, .open = true};
    assert_non_null(sc_queue_upsert(c, &child));
    for (int step = 0; step < 3000; step++) {
        int op = rand_r(&seed) % 8, k = rand_r(&seed) % 12;
        snprintf(key, sizeof(key), "ns/j%d", k);
        sc_job *j = sc_job_find(c, key);
        switch (op) {
        case 0:
        case 1: /* a group is made or changed: queue, size, minResources */
            job_full(c, key, rand_r(&seed) % 4 == 3 ? "qc" : queues[rand_r(&seed) % 3],
                     1 + rand_r(&seed) % 3, rand_r(&seed) % 3, step,
                     rand_r(&seed) % 5);
            break;
        case 2: /* a pod of it */
            if (j) {
                char t[80];
                snprintf(t, sizeof(t), "%s-%d", key, rand_r(&seed) % 4);
                task(c, t, key, rand_r(&seed) % 3);
            }
            break;
        case 3: /* a pod runs, ends or fails */
            if (j && sc_job_ntasks(j))
                sc_task_set_status(c, sc_job_task(j, (size_t)rand_r(&seed) % sc_job_ntasks(j)),
                                   sts[rand_r(&seed) % 4]);
            break;
        case 4: /* a pod goes */
            if (j && sc_job_ntasks(j))
                sc_task_remove(c, sc_task_key(sc_job_task(j, 0)));
            break;
        case 5:
            if (j && rand_r(&seed) % 3 == 0)
                sc_job_remove(c, key);
            else if (j && rand_r(&seed) % 2)
                sc_job_set_completed(c, j);
            break;
        default:
            cycle(c, conf, &r);
            break;
        }
        check_waiting(c);
    }
    for (int k = 0; k < 12; k++) {
        snprintf(key, sizeof(key), "ns/j%d", k);
        sc_job *j = sc_job_find(c, key);
        if (j)
            remove_tasks(c, j);
        sc_job_remove(c, key);
        check_waiting(c);
    }
    assert_int_equal(c->nwaiting[SC_WAIT_PENDING] + c->nwaiting[SC_WAIT_ADMITTED], 0);
    for (size_t qi = 0; qi < c->nqueues; qi++) {
        assert_true(sc_res_empty(&c->queues[qi]->wait_demand));
        assert_true(sc_res_empty(&c->queues[qi]->admitted_short));
    }
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* status_only: a known task's status and node are taken, its request and
 * constraints kept (the scheduler's feed sends placed pods so, without
 * reading their spec); a task not known yet is made from the spec whole. */
static void test_status_only_keeps_spec(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_task_spec s = {.key = "ns/p", .node = "n1", .status = SC_TASK_RUNNING,
                      .status_only = true};
    rec r;
    (void)state;

    node(c, "n1", 4);
    task(c, "ns/t", NULL, 2);
    cycle(c, conf, &r);
    assert_int_equal(r.nbound, 1);
    assert_int_equal(gpus_used(c), 2);
    /* the same pod seen again, running: nothing of its spec re-read */
    sc_task_spec again = {.key = "ns/t", .node = "n1", .status = SC_TASK_RUNNING,
                          .status_only = true};
    assert_non_null(sc_task_upsert(c, &again));
    assert_int_equal(sc_task_get_status(sc_task_find(c, "ns/t")), SC_TASK_RUNNING);
    assert_int_equal(gpus_used(c), 2);
    /* it ends: its resources go back */
    again.status = SC_TASK_SUCCEEDED;
    assert_non_null(sc_task_upsert(c, &again));
    assert_int_equal(gpus_used(c), 0);
    /* unknown: made from what the spec says */
    s.request.v[SC_GPU] = GPU(1);
    assert_non_null(sc_task_upsert(c, &s));
    assert_int_equal(gpus_used(c), 1);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* A failed binding returns the task to pending and frees the node. */
static void test_unbind(void **state)
{
    sc_cluster *c = sc_cluster_new();
    sc_conf *conf = sc_conf_default();
    sc_hooks h = {0};
    sc_task *t;
    (void)state;

    node(c, "n1", 1);
    t = task(c, "ns/p", NULL, 1);
    sc_cycle(c, conf, &h, NULL);
    assert_int_equal(sc_task_get_status(t), SC_TASK_BINDING);
    assert_int_equal(gpus_used(c), 1);
    /* an observation from before the binding does not undo it */
    {
        sc_task_spec s = {.key = "ns/p"};
        task_spec(c, &s, GPU(1), 1);
    }
    assert_int_equal(sc_task_get_status(t), SC_TASK_BINDING);
    sc_task_unbind(c, t);
    assert_int_equal(sc_task_get_status(t), SC_TASK_PENDING);
    assert_int_equal(gpus_used(c), 0);
    sc_cycle(c, conf, &h, NULL);
    assert_int_equal(sc_task_get_status(t), SC_TASK_BINDING);
    /* confirmed by the adapter: BOUND on the node */
    {
        sc_task_spec s = {.key = "ns/p", .node = "n1", .status = SC_TASK_BOUND};
        task_spec(c, &s, GPU(1), 1);
    }
    assert_int_equal(sc_task_get_status(t), SC_TASK_BOUND);
    assert_int_equal(gpus_used(c), 1);
    sc_conf_free(conf);
    sc_cluster_free(c);
}

/* ---- configuration ---- */

static void test_conf(void **state)
{
    sc_conf *conf = sc_conf_default();
    ty_error err;
    (void)state;

    assert_non_null(conf);
    assert_string_equal(sc_conf_actions(conf), "enqueue, allocate, backfill");
    assert_int_equal(conf->ntiers, 2);
    assert_int_equal(conf->tiers[0].n, 3);
    assert_string_equal(conf->tiers[0].plugins[1].plugin->name, "gang");
    assert_int_equal(conf->tiers[1].n, 6);
    sc_conf_free(conf);

    ty_error_init(&err);
    static const char custom[] = "actions: \"enqueue,allocate, preempt ,reclaim\"\n"
                                 "tiers:\n"
                                 "- plugins:\n"
                                 "  - name: priority\n"
                                 "    enableJobOrder: false\n"
                                 "  - name: binpack\n"
                                 "    arguments:\n"
                                 "      binpack.weight: 10\n"
                                 "      binpack.resources.nvidia.com/gpu: 2.5\n";
    conf = sc_conf_parse(custom, sizeof(custom) - 1, &err);
    assert_non_null(conf);
    assert_string_equal(sc_conf_actions(conf), "enqueue, allocate, preempt, reclaim");
    assert_int_equal(conf->nactions, 4);
    assert_int_equal(conf->actions[3], SC_ACT_RECLAIM);
    assert_int_equal(conf->ntiers, 1);
    assert_false(conf->tiers[0].plugins[0].job_order);
    assert_true(conf->tiers[0].plugins[0].task_order);
    assert_true(sc_arg_double(&conf->tiers[0].plugins[1], "binpack.weight", 1) == 10);
    assert_true(sc_arg_double(&conf->tiers[0].plugins[1],
                              "binpack.resources.nvidia.com/gpu", 1) == 2.5);
    assert_true(sc_arg_double(&conf->tiers[0].plugins[1], "binpack.cpu", 7) == 7);
    sc_conf_free(conf);

    static const char badplugin[] = "actions: \"allocate\"\n"
                                    "tiers:\n- plugins:\n  - name: gang\n  - name: sla\n";
    assert_null(sc_conf_parse(badplugin, sizeof(badplugin) - 1, &err));
    assert_int_equal(err.code, TY_EINVALID);
    assert_string_equal(err.text, "tiers[0].plugins[1].name: unknown plugin \"sla\" (known: "
                                  "priority, gang, conformance, overcommit, drf, predicates, "
                                  "proportion, nodeorder, binpack, gpulocality, "
                                  "resourcequota)");
    ty_error_clear(&err);

    /* numeric arguments: numbers, and not below their least value */
    static const char badnumber[] = "actions: \"enqueue, allocate\"\n"
                                    "tiers:\n- plugins:\n  - name: gang\n"
                                    "  - name: overcommit\n"
                                    "    arguments: {overcommit-factor: 1.5x}\n";
    assert_null(sc_conf_parse(badnumber, sizeof(badnumber) - 1, &err));
    assert_int_equal(err.code, TY_EINVALID);
    assert_string_equal(err.text, "tiers[0].plugins[1].arguments.overcommit-factor: must be a "
                                  "number, not \"1.5x\"");
    ty_error_clear(&err);
    static const char lowfactor[] = "actions: \"enqueue, allocate\"\n"
                                    "tiers:\n- plugins:\n  - name: overcommit\n"
                                    "    arguments: {overcommit-factor: 0.5}\n";
    assert_null(sc_conf_parse(lowfactor, sizeof(lowfactor) - 1, &err));
    assert_string_equal(err.text, "tiers[0].plugins[0].arguments.overcommit-factor: must be at "
                                  "least 1, not 0.5");
    ty_error_clear(&err);
    static const char negweight[] = "actions: \"allocate\"\n"
                                    "tiers:\n- plugins:\n  - name: gang\n"
                                    "- plugins:\n  - name: binpack\n"
                                    "    arguments: {binpack.weight: 10, binpack.cpu: -1}\n";
    assert_null(sc_conf_parse(negweight, sizeof(negweight) - 1, &err));
    assert_string_equal(err.text, "tiers[1].plugins[0].arguments.binpack.cpu: must be at least 0, "
                                  "not -1");
    ty_error_clear(&err);
    /* good values, spaces around them, and arguments no plugin reads, pass */
    static const char goodnumbers[] = "actions: \"enqueue, allocate\"\n"
                                      "tiers:\n- plugins:\n  - name: overcommit\n"
                                      "    arguments: {overcommit-factor: \" 1 \"}\n"
                                      "  - name: nodeorder\n"
                                      "    arguments: {leastrequested.weight: 0, other: x}\n";
    conf = sc_conf_parse(goodnumbers, sizeof(goodnumbers) - 1, &err);
    assert_non_null(conf);
    assert_true(sc_arg_double(&conf->tiers[0].plugins[0], "overcommit-factor", 1.2) == 1);
    sc_conf_free(conf);

    static const char badaction[] = "actions: \"enqueue, shuffle\"\n";
    assert_null(sc_conf_parse(badaction, sizeof(badaction) - 1, &err));
    assert_string_equal(err.text, "actions: unknown action \"shuffle\" (known: enqueue, "
                                  "allocate, backfill, preempt, reclaim)");
    ty_error_clear(&err);

    static const char noactions[] = "tiers: []\n";
    assert_null(sc_conf_parse(noactions, sizeof(noactions) - 1, &err));
    assert_string_equal(err.text, "actions: required, a comma-separated string");
    ty_error_clear(&err);

    static const char empty[] = "actions: \" , \"\n";
    assert_null(sc_conf_parse(empty, sizeof(empty) - 1, &err));
    assert_string_equal(err.text, "actions: no action given");
    ty_error_clear(&err);

    static const char badargs[] = "actions: \"allocate\"\n"
                                  "tiers:\n- plugins:\n  - name: binpack\n    arguments: [1]\n";
    assert_null(sc_conf_parse(badargs, sizeof(badargs) - 1, &err));
    assert_string_equal(err.text, "tiers[0].plugins[0].arguments: must be a map");
    ty_error_clear(&err);

    static const char noname[] = "actions: \"allocate\"\ntiers:\n- plugins:\n  - weight: 1\n";
    assert_null(sc_conf_parse(noname, sizeof(noname) - 1, &err));
    assert_string_equal(err.text, "tiers[0].plugins[0].name: required");
    ty_error_clear(&err);

    assert_null(sc_conf_load("/nonexistent/volcano-scheduler.conf", &err));
    assert_non_null(strstr(err.text, "/nonexistent/volcano-scheduler.conf"));
    ty_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_gangs_one_node),
        cmocka_unit_test(test_gang_deadlock),
        cmocka_unit_test(test_gang_discarded_leaves_nothing),
        cmocka_unit_test(test_discarded_try_leaves_no_hint),
        cmocka_unit_test(test_completed_survives_pod_deletion),
        cmocka_unit_test(test_pod_made_again_under_its_name),
        cmocka_unit_test(test_completed_without_all_running),
        cmocka_unit_test(test_elastic_gang),
        cmocka_unit_test(test_min_task_member),
        cmocka_unit_test(test_queue_weights),
        cmocka_unit_test(test_queue_alone_takes_all),
        cmocka_unit_test(test_queue_capability),
        cmocka_unit_test(test_closed_queue),
        cmocka_unit_test(test_overcommit),
        cmocka_unit_test(test_admitted_sums_kept),
        cmocka_unit_test(test_node_sums_follow_changes),
        cmocka_unit_test(test_backfill),
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_drf_order),
        cmocka_unit_test(test_preempt_whole_gang),
        cmocka_unit_test(test_hopeless_pipelines_dropped),
        cmocka_unit_test(test_preempt_cannot_help),
        cmocka_unit_test(test_preempt_elastic_victim),
        cmocka_unit_test(test_preempt_admit_only),
        cmocka_unit_test(test_preempt_conformance),
        cmocka_unit_test(test_preempt_order_no_collateral),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_reclaim_not_reclaimable),
        cmocka_unit_test(test_reclaim_gang_keeps_deserved),
        cmocka_unit_test(test_node_selector_affinity),
        cmocka_unit_test(test_taints_unschedulable),
        cmocka_unit_test(test_binpack_nodeorder),
        cmocka_unit_test(test_gpulocality),
        cmocka_unit_test(test_gang_not_split),
        cmocka_unit_test(test_large_cluster),
        cmocka_unit_test(test_node_removal),
        cmocka_unit_test(test_group_deleted_before_pods),
        cmocka_unit_test(test_group_made_again),
        cmocka_unit_test(test_pods_before_group),
        cmocka_unit_test(test_queue_parent_cycle),
        cmocka_unit_test(test_share_reached_through_admission),
        cmocka_unit_test(test_admitted_for_preemption),
        cmocka_unit_test(test_admitted_for_reclaim),
        cmocka_unit_test(test_admitted_into_the_gap),
        cmocka_unit_test(test_node_removal_nominated),
        cmocka_unit_test(test_removal_accounting),
        cmocka_unit_test(test_waiting_lists_follow_changes),
        cmocka_unit_test(test_status_only_keeps_spec),
        cmocka_unit_test(test_unbind),
        cmocka_unit_test(test_conf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
