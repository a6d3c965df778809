/* test_cli_jobs.c - the job commands' pure parts: a job's status, replicas
 * and summary (src/cli/jobs.c) and why it waits (src/cli/job_pending.c),
 * from JSON objects alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/timeutil.h"
#include "cli/job_pending.h"
#include "cli/jobs.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v)
        fail_msg("bad test JSON at %d: %s\n%s", e.position, e.text, text);
    return v;
}

/* A PyTorchJob: Master 1 x mgpu, Worker nworkers x wgpu; uid u-NAME. */
static json_t *ptjob(const char *name, int mgpu, int nworkers, int wgpu, const char *extra_meta,
                     const char *status)
{
    char buf[4096];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"u-%s\","
             "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"%s},"
             "\"spec\":{\"runPolicy\":{\"schedulingPolicy\":{\"queue\":\"q1\"}},"
             "\"pytorchReplicaSpecs\":{"
             "\"Master\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
             "\"pytorch\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\",\"cpu\":\"1\"}}}]}}},"
             "\"Worker\":{\"replicas\":%d,\"template\":{\"spec\":{\"containers\":[{\"name\":"
             "\"pytorch\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":%d,\"cpu\":\"1\"}}}]}}}}},"
             "\"status\":%s}",
             name, name, extra_meta ? extra_meta : "", mgpu, nworkers, wgpu,
             status ? status : "{}");
    return J(buf);
}

/* A pod of job uid (NULL: none), role type/idx, gpus, on node (NULL:
 * unbound), in phase. */
static json_t *pod(const char *name, const char *uid, const char *type, int idx, int gpus,
                   const char *node, const char *phase)
{
    char buf[2048], nodepart[128] = "", owner[256] = "";
    if (node)
        snprintf(nodepart, sizeof(nodepart), "\"nodeName\":\"%s\",", node);
    if (uid)
        snprintf(owner, sizeof(owner),
                 ",\"ownerReferences\":[{\"uid\":\"%s\",\"name\":\"x\",\"controller\":true}]",
                 uid);
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"labels\":{"
             "\"training.kubeflow.org/replica-type\":\"%s\","
             "\"training.kubeflow.org/replica-index\":\"%d\"}%s},"
             "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
             "\"nvidia.com/gpu\":\"%d\",\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"%s\"}}",
             name, type, idx, owner, nodepart, gpus, phase);
    return J(buf);
}

static json_t *node(const char *name, int gpus)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":"
             "\"%d\",\"cpu\":\"16\",\"memory\":\"64Gi\",\"pods\":\"110\"},\"conditions\":[{"
             "\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, gpus);
    return J(buf);
}

/* A PodGroup of job name (owner u-NAME) in queue q. */
static json_t *podgroup(const char *name, const char *queue, const char *created,
                        const char *pc, const char *phase)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"creationTimestamp\":\"%s\","
             "\"ownerReferences\":[{\"uid\":\"u-%s\",\"name\":\"%s\"}]},"
             "\"spec\":{\"queue\":\"%s\"%s%s%s},\"status\":{\"phase\":\"%s\"}}",
             name, created, name, name, queue, pc ? ",\"priorityClassName\":\"" : "",
             pc ? pc : "", pc ? "\"" : "", phase);
    return J(buf);
}

/* ---- status ---- */

static void test_kubeflow_status_from_conditions(void **state)
{
    (void)state;
    json_t *j = ptjob("a", 1, 1, 1, NULL,
                      "{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\","
                      "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}");
    json_t *pg = podgroup("a", "q1", "2026-01-01T00:00:00Z", NULL, "Pending");
    assert_string_equal(cli_job_status(j, NULL, NULL), "Created");
    assert_string_equal(cli_job_status(j, NULL, pg), "Pending");
    json_decref(j);

    j = ptjob("a", 1, 1, 1, NULL,
              "{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\","
              "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},{\"type\":\"Running\",\"status\":"
              "\"True\",\"lastTransitionTime\":\"2026-01-01T00:01:00Z\"}]}");
    assert_string_equal(cli_job_status(j, NULL, pg), "Running");
    json_decref(j);

    j = ptjob("a", 1, 1, 1, NULL,
              "{\"conditions\":[{\"type\":\"Running\",\"status\":\"False\","
              "\"lastTransitionTime\":\"2026-01-01T00:01:00Z\"},{\"type\":\"Restarting\",\"status\":"
              "\"True\",\"lastTransitionTime\":\"2026-01-01T00:02:00Z\"}]}");
    assert_string_equal(cli_job_status(j, NULL, NULL), "Restarting");
    json_decref(j);

    j = ptjob("a", 1, 1, 1, NULL,
              "{\"conditions\":[{\"type\":\"Running\",\"status\":\"False\"},{\"type\":"
              "\"Suspended\",\"status\":\"True\"}]}");
    assert_string_equal(cli_job_status(j, NULL, NULL), "Suspended");
    json_decref(j);

    /* suspend asked for, the engine not there yet */
    j = ptjob("a", 1, 1, 1, NULL, "{}");
    json_object_set_new(json_object_get(json_object_get(j, "spec"), "runPolicy"), "suspend",
                        json_true());
    assert_string_equal(cli_job_status(j, NULL, NULL), "Suspended");
    json_decref(j);

    j = ptjob("a", 1, 1, 1, NULL,
              "{\"conditions\":[{\"type\":\"Running\",\"status\":\"False\"},{\"type\":"
              "\"Succeeded\",\"status\":\"True\"}]}");
    assert_string_equal(cli_job_status(j, NULL, NULL), "Succeeded");
    json_decref(j);
    json_decref(pg);
}

static void test_volcano_status_from_phase(void **state)
{
    static const char *const map[][2] = {
        {"Pending", "Pending"},     {"Running", "Running"},     {"Aborted", "Suspended"},
        {"Aborting", "Suspended"}, {"Completed", "Succeeded"}, {"Terminated", "Failed"},
        {"Failed", "Failed"},      {"Restarting", "Restarting"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        char buf[512];
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
                 "\"metadata\":{\"name\":\"v\",\"namespace\":\"ns1\"},"
                 "\"status\":{\"state\":{\"phase\":\"%s\"}}}",
                 map[i][0]);
        json_t *j = J(buf);
        assert_string_equal(cli_job_status(j, NULL, NULL), map[i][1]);
        json_decref(j);
    }
}

/* ---- replicas and summary ---- */

static void test_replicas_of_every_form(void **state)
{
    cli_job_replica r[CLI_JOB_MAX_REPLICAS];
    (void)state;

    json_t *j = ptjob("a", 1, 3, 2, NULL, NULL);
    assert_int_equal(cli_job_replicas(j, r, CLI_JOB_MAX_REPLICAS), 2);
    assert_string_equal(r[0].role, "Master");
    assert_int_equal(r[0].replicas, 1);
    assert_int_equal(r[0].gpus, 1);
    assert_string_equal(r[1].role, "Worker");
    assert_int_equal(r[1].replicas, 3);
    assert_int_equal(r[1].gpus, 2);
    json_decref(j);

    j = J("{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",\"metadata\":"
          "{\"name\":\"v\"},\"spec\":{\"tasks\":[{\"name\":\"ps\",\"template\":{\"spec\":{"
          "\"containers\":[{\"name\":\"c\"}]}}},{\"name\":\"worker\",\"replicas\":4,\"template\":"
          "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
          "\"amd.com/gpu\":\"1\"}}}]}}}]}}");
    assert_int_equal(cli_job_replicas(j, r, CLI_JOB_MAX_REPLICAS), 2);
    assert_string_equal(r[0].role, "ps");
    assert_int_equal(r[0].replicas, 1);
    assert_int_equal(r[0].gpus, 0);
    assert_int_equal(r[1].replicas, 4);
    assert_int_equal(r[1].gpus, 1); /* any vendor's <vendor>/gpu */
    json_decref(j);

    /* MSJob kubeflow.org/v1: a list of replica specs */
    j = J("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"MSJob\",\"metadata\":{\"name\":\"m\"},"
          "\"spec\":{\"replicaSpecs\":[{\"replicaType\":\"WORKER\",\"replicas\":2,\"template\":"
          "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
          "\"nvidia.com/gpu\":\"8\"}}}]}}}]}}");
    assert_int_equal(cli_job_replicas(j, r, CLI_JOB_MAX_REPLICAS), 1);
    assert_string_equal(r[0].role, "WORKER");
    assert_int_equal(r[0].replicas, 2);
    assert_int_equal(r[0].gpus, 8);
    json_decref(j);
}

static void test_summary(void **state)
{
    cli_job_summary s;
    time_t now;
    (void)state;

    ty_time_parse("2026-01-01T01:02:03Z", &now);
    json_t *j = ptjob("a", 1, 3, 2, ",\"annotations\":{\"trainyard.io/created-by\":\"alice\"}",
                      "{\"startTime\":\"2026-01-01T00:00:03Z\",\"conditions\":[{\"type\":"
                      "\"Running\",\"status\":\"True\",\"lastTransitionTime\":"
                      "\"2026-01-01T00:00:03Z\"}]}");
    json_t *pods = json_array();
    json_array_append_new(pods, pod("a-master-0", "u-a", "master", 0, 1, "n1", "Running"));
    json_array_append_new(pods, pod("a-worker-0", "u-a", "worker", 0, 2, "n2", "Running"));
    json_array_append_new(pods, pod("a-worker-1", "u-a", "worker", 1, 2, "n1", "Running"));
    json_array_append_new(pods, pod("a-worker-2", "u-a", "worker", 2, 2, NULL, "Pending"));
    json_array_append_new(pods, pod("b-worker-0", "u-b", "worker", 0, 2, "n3", "Running"));
    json_array_append_new(pods, pod("a-old", "u-a", "worker", 9, 2, "n4", "Succeeded"));

    cli_job_summarise(j, pods, NULL, now, &s);
    assert_string_equal(s.name, "a");
    assert_string_equal(s.ns, "ns1");
    assert_string_equal(s.trainer, "PyTorchJob");
    assert_string_equal(s.status, "Running");
    assert_int_equal(s.duration, 3600 + 120);
    assert_int_equal(s.gpus_requested, 1 + 3 * 2);
    assert_int_equal(s.gpus_allocated, 1 + 2 + 2); /* bound and live: not b's, not a-old */
    assert_string_equal(s.nodes, "n1,n2");
    assert_string_equal(s.queue, "q1");
    assert_string_equal(s.user, "alice");
    assert_int_equal(s.npods, 5);
    assert_int_equal(s.nrunning, 3);
    json_decref(j);

    /* no pods, no creator */
    j = ptjob("c", 0, 1, 0, NULL, NULL);
    cli_job_summarise(j, NULL, NULL, now, &s);
    assert_string_equal(s.nodes, "N/A");
    assert_string_equal(s.user, "N/A");
    assert_string_equal(s.status, "Created");
    assert_int_equal(s.duration, 3723); /* waiting since its creation */
    json_decref(j);
    json_decref(pods);
}

static void test_owns(void **state)
{
    (void)state;
    json_t *j = ptjob("a", 1, 1, 1, NULL, NULL);
    json_t *mine = pod("p", "u-a", "worker", 0, 0, NULL, "Pending");
    json_t *other = pod("p", "u-zz", "worker", 0, 0, NULL, "Pending");
    json_t *by_label = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\",\"labels\":{"
                         "\"training.kubeflow.org/job-name\":\"a\"}}}");
    json_t *other_ns = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns2\",\"ownerReferences\":"
                         "[{\"uid\":\"u-a\"}]}}");
    assert_true(cli_job_owns(j, mine));
    assert_false(cli_job_owns(j, other));
    assert_true(cli_job_owns(j, by_label));
    assert_false(cli_job_owns(j, other_ns));
    json_decref(j);
    json_decref(mine);
    json_decref(other);
    json_decref(by_label);
    json_decref(other_ns);
}

static void test_duration_text(void **state)
{
    char b[32];
    (void)state;
    cli_duration_text(45, b, sizeof(b));
    assert_string_equal(b, "45s");
    cli_duration_text(192, b, sizeof(b));
    assert_string_equal(b, "3m");
    cli_duration_text(2 * 3600 + 5 * 60, b, sizeof(b));
    assert_string_equal(b, "2h5m");
    cli_duration_text(3 * 86400 + 4 * 3600 + 7, b, sizeof(b));
    assert_string_equal(b, "3d4h");
    cli_duration_text(-5, b, sizeof(b));
    assert_string_equal(b, "0s");
}

/* The owner index finds exactly what cli_job_owns accepts. */
static void test_owned_index(void **state)
{
    (void)state;
    json_t *a = ptjob("a", 1, 1, 1, NULL, NULL), *b = ptjob("b", 1, 1, 1, NULL, NULL);
    json_t *objs = json_array(), *ix, *got;
    json_array_append_new(objs, pod("a-0", "u-a", "master", 0, 1, NULL, "Running"));
    json_array_append_new(objs, pod("b-0", "u-b", "master", 0, 1, NULL, "Running"));
    json_array_append_new(objs, pod("a-1", "u-a", "worker", 0, 1, NULL, "Running"));
    /* no owner reference: the job-name label says */
    json_t *bylabel = pod("hand", NULL, "worker", 1, 1, NULL, "Running");
    json_object_set_new(json_object_get(json_object_get(bylabel, "metadata"), "labels"),
                        "training.kubeflow.org/job-name", json_string("b"));
    json_array_append_new(objs, bylabel);
    /* the same label in another namespace is another job's */
    json_t *other = json_deep_copy(bylabel);
    json_object_set_new(json_object_get(other, "metadata"), "namespace", json_string("ns2"));
    json_array_append_new(objs, other);
    ix = cli_owned_index(objs);
    const json_t *jobs[] = {a, b};
    for (int j = 0; j < 2; j++) {
        size_t i, n = 0;
        json_t *o;
        got = cli_owned_by(ix, jobs[j]);
        json_array_foreach(objs, i, o)
            if (cli_job_owns(jobs[j], o)) {
                assert_true(json_array_get(got, n) == o);
                n++;
            }
        assert_int_equal(json_array_size(got), n);
        assert_int_equal(n, j == 0 ? 2 : 2);
        json_decref(got);
    }
    json_decref(ix);
    json_decref(objs);
    json_decref(a);
    json_decref(b);
}

/* ---- why pending ---- */

typedef struct world {
    json_t *job, *pods, *pg, *queue, *quotas, *nodes, *all_pods, *pgs, *pcs;
} world;

/* Two nodes of 4 GPUs, 3 of them used by a running job's pods. */
static void world_init(world *w, json_t *job)
{
    memset(w, 0, sizeof(*w));
    w->job = job;
    w->pods = json_array();
    w->nodes = json_array();
    json_array_append_new(w->nodes, node("n1", 4));
    json_array_append_new(w->nodes, node("n2", 4));
    w->all_pods = json_array();
    json_array_append_new(w->all_pods, pod("r-0", "u-r", "worker", 0, 2, "n1", "Running"));
    json_array_append_new(w->all_pods, pod("r-1", "u-r", "worker", 1, 1, "n2", "Running"));
    json_array_append_new(w->all_pods, pod("done", "u-d", "worker", 0, 4, "n2", "Succeeded"));
    w->pg = podgroup(cli_obj_name(job), "q1", "2026-01-01T00:00:10Z", NULL, "Pending");
    w->pgs = json_array();
    json_array_append(w->pgs, w->pg);
    w->pcs = J("[{\"metadata\":{\"name\":\"high\"},\"value\":1000},"
               "{\"metadata\":{\"name\":\"low\"},\"value\":-5}]");
}

static void world_explain(world *w, jp_result *r)
{
    jp_input in = {.job = w->job, .pods = w->pods, .pg = w->pg, .queue = w->queue,
                   .quotas = w->quotas, .nodes = w->nodes, .all_pods = w->all_pods,
                   .podgroups = w->pgs, .priority_classes = w->pcs};
    jp_explain(&in, r);
}

static void world_free(world *w)
{
    json_t **all[] = {&w->job,   &w->pods,     &w->pg,  &w->queue, &w->quotas,
                      &w->nodes, &w->all_pods, &w->pgs, &w->pcs};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        json_decref(*all[i]);
}

static void test_pending_never_fits(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("big", 1, 2, 16, NULL, NULL));
    world_explain(&w, &r);
    assert_true(r.reasons & JP_NEVER_FITS);
    assert_false(r.reasons & JP_GPUS); /* no use saying it waits */
    assert_non_null(strstr(r.text, "Never fits: replica Worker asks for 16 nvidia.com/gpu per "
                                    "pod, and the largest node has 4 (n1)"));
    world_free(&w);
}

/* Each replica fits a node but the gang does not fit the cluster: more
 * GPUs in all than it has (before: "waiting for GPUs ... it starts when
 * enough are released", which never came), or pods that no packing of the
 * empty nodes holds together. */
static void test_pending_gang_never_fits(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("wide", 3, 2, 3, NULL, NULL)); /* 9 GPUs, 8 in all */
    world_explain(&w, &r);
    assert_true(r.reasons & JP_NEVER_FITS);
    assert_false(r.reasons & JP_GPUS);
    assert_non_null(strstr(r.text, "Never fits: the gang's 3 pods ask for 9 nvidia.com/gpu "
                                    "together, and the 2 nodes have 8 in all"));
    world_free(&w);

    world_init(&w, ptjob("frag", 2, 2, 3, NULL, NULL)); /* 3+3+2 on 4+4: 8 of 8, no packing */
    world_explain(&w, &r);
    assert_true(r.reasons & JP_NEVER_FITS);
    assert_non_null(strstr(r.text, "the gang needs 3 of its 3 pods placed together, and the 2 "
                                    "nodes hold, even empty, only 2 of them"));
    world_free(&w);

    world_init(&w, ptjob("fits", 2, 2, 2, NULL, NULL)); /* 2+2+2 on 4+4: waits, may run */
    world_explain(&w, &r);
    assert_false(r.reasons & JP_NEVER_FITS);
    world_free(&w);
}

static void test_pending_waits_for_gpus(void **state)
{
    world w;
    jp_result r;
    (void)state;
    /* 1 + 2 x 2 = 5 GPUs; 8 - 3 = 5 free but... n1 has 2, n2 has 3 free:
     * 2-GPU pods fit (one on each, then the master), so it fits now */
    world_init(&w, ptjob("fits", 1, 2, 2, NULL, NULL));
    world_explain(&w, &r);
    assert_int_equal(r.reasons, 0);
    assert_int_equal(r.gpus_needed, 5);
    assert_int_equal(r.gpus_free, 5);
    assert_int_equal(r.gpus_total, 8);
    assert_string_equal(r.text, "");
    world_free(&w);

    world_init(&w, ptjob("more", 2, 2, 2, NULL, NULL));
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_GPUS);
    assert_non_null(strstr(r.text, "Waiting for GPUs: the gang needs 6 more, 5 free now (of 8 "
                                   "on 2 schedulable nodes)"));
    world_free(&w);

    /* 4 free in all, in pieces of 2: a 3-GPU pod fits nowhere now */
    world_init(&w, ptjob("pieces", 3, 0, 0, NULL, NULL));
    json_array_append_new(w.all_pods, pod("r-2", "u-r", "worker", 2, 1, "n2", "Running"));
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_GPUS);
    assert_non_null(strstr(r.text, "Waiting for room: 4 GPUs are free in all, but not together"));
    world_free(&w);

    /* a node that is cordoned counts for nothing */
    world_init(&w, ptjob("cordon", 1, 2, 2, NULL, NULL));
    json_object_set_new(json_object_get(json_array_get(w.nodes, 1), "status"), "conditions",
                        J("[{\"type\":\"Ready\",\"status\":\"False\"}]"));
    world_explain(&w, &r);
    assert_true(r.reasons & JP_GPUS);
    assert_int_equal(r.nnodes, 1);
    assert_int_equal(r.gpus_free, 2);
    world_free(&w);
}

static void test_pending_counts_its_own_bound_pods(void **state)
{
    world w;
    jp_result r;
    (void)state;
    /* 2 of its 3 pods are placed: it needs 2 more, not 6 */
    world_init(&w, ptjob("part", 2, 2, 2, NULL, NULL));
    json_array_append_new(w.pods, pod("part-master-0", "u-part", "master", 0, 2, "n2", "Running"));
    json_array_append_new(w.pods, pod("part-worker-0", "u-part", "worker", 0, 2, "n1", "Running"));
    json_array_append_new(w.pods, pod("part-worker-1", "u-part", "worker", 1, 2, NULL, "Pending"));
    json_array_extend(w.all_pods, w.pods);
    world_explain(&w, &r);
    assert_int_equal(r.gpus_needed, 2);
    assert_int_equal(r.gpus_free, 1);
    assert_int_equal(r.reasons, JP_GPUS);
    world_free(&w);
}

static void test_pending_behind_in_queue(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("me", 1, 0, 0, NULL, NULL));
    /* before it: a later job of higher priority, an earlier one of its own;
     * not before it: a lower-priority earlier one, another queue's, a
     * running one */
    json_array_append_new(w.pgs, podgroup("hi", "q1", "2026-01-01T00:00:20Z", "high", "Pending"));
    json_array_append_new(w.pgs, podgroup("early", "q1", "2026-01-01T00:00:05Z", NULL, "Inqueue"));
    json_array_append_new(w.pgs, podgroup("lo", "q1", "2026-01-01T00:00:01Z", "low", "Pending"));
    json_array_append_new(w.pgs, podgroup("elsewhere", "q2", "2026-01-01T00:00:01Z", NULL, "Pending"));
    json_array_append_new(w.pgs, podgroup("running", "q1", "2026-01-01T00:00:01Z", NULL, "Running"));
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_BEHIND);
    assert_int_equal(r.position, 3);
    assert_int_equal(r.waiting, 4);
    assert_int_equal(r.nahead, 2);
    assert_string_equal(r.ahead[0], "ns1/hi (priority 1000)");
    assert_string_equal(r.ahead[1], "ns1/early (priority 0)");
    assert_non_null(strstr(r.text, "Behind other jobs: position 3 of 4 waiting in queue q1"));
    world_free(&w);

    /* same time: by namespace/name, as the scheduler */
    world_init(&w, ptjob("b", 1, 0, 0, NULL, NULL));
    json_array_append_new(w.pgs, podgroup("a", "q1", "2026-01-01T00:00:10Z", NULL, "Pending"));
    json_array_append_new(w.pgs, podgroup("c", "q1", "2026-01-01T00:00:10Z", NULL, "Pending"));
    world_explain(&w, &r);
    assert_int_equal(r.position, 2);
    world_free(&w);
}

static void test_pending_quota(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("q", 1, 1, 1, NULL, NULL));
    w.quotas = J("[{\"metadata\":{\"name\":\"gpus\",\"namespace\":\"ns1\"},\"spec\":{\"hard\":{"
                 "\"requests.nvidia.com/gpu\":\"4\",\"limits.cpu\":\"1\"}},\"status\":{\"used\":{"
                 "\"requests.nvidia.com/gpu\":\"3\"}}},"
                 "{\"metadata\":{\"name\":\"scoped\"},\"spec\":{\"scopes\":[\"BestEffort\"],"
                 "\"hard\":{\"pods\":\"0\"}}}]");
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_QUOTA);
    assert_non_null(strstr(r.text, "Over quota: ResourceQuota gpus of namespace ns1 allows 4 "
                                   "requests.nvidia.com/gpu, 3 used by others, this job needs 2"));
    world_free(&w);

    /* its own pods are in status.used already: not counted twice */
    world_init(&w, ptjob("q", 1, 1, 1, NULL, NULL));
    json_array_append_new(w.pods, pod("q-master-0", "u-q", "master", 0, 1, NULL, "Pending"));
    w.quotas = J("[{\"metadata\":{\"name\":\"gpus\"},\"spec\":{\"hard\":{\"nvidia.com/gpu\":"
                 "\"3\"}},\"status\":{\"used\":{\"nvidia.com/gpu\":\"2\"}}}]");
    world_explain(&w, &r);
    assert_int_equal(r.reasons & JP_QUOTA, 0);
    world_free(&w);
}

static void test_pending_queue(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("qc", 1, 1, 1, NULL, NULL));
    w.queue = J("{\"metadata\":{\"name\":\"q1\"},\"spec\":{\"capability\":{\"nvidia.com/gpu\":"
                "\"2\"}},\"status\":{\"state\":\"Open\",\"allocated\":{\"nvidia.com/gpu\":\"1\"}}}");
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_QUEUE);
    assert_non_null(strstr(r.text, "Over queue capability: queue q1 may hold 2 nvidia.com/gpu, 1 "
                                   "allocated to its other jobs, this job needs 2; it waits"));
    world_free(&w);

    world_init(&w, ptjob("qc", 1, 1, 1, NULL, NULL));
    w.queue = J("{\"metadata\":{\"name\":\"q1\"},\"status\":{\"state\":\"Closed\"}}");
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_QUEUE);
    assert_non_null(strstr(r.text, "Queue closed: queue q1 is Closed"));
    world_free(&w);
}

/* Nodes or pods not readable (a user's credentials): not "no nodes". */
static void test_pending_without_nodes(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("big", 1, 2, 16, NULL, NULL));
    json_decref(w.nodes);
    w.nodes = NULL;
    world_explain(&w, &r);
    assert_int_equal(r.reasons, 0);
    assert_string_equal(r.text, "");
    world_free(&w);

    world_init(&w, ptjob("more", 2, 2, 2, NULL, NULL));
    json_decref(w.all_pods);
    w.all_pods = NULL;
    world_explain(&w, &r);
    assert_int_equal(r.reasons & JP_GPUS, 0);
    world_free(&w);

    /* really none: said */
    world_init(&w, ptjob("none", 1, 0, 0, NULL, NULL));
    json_array_clear(w.nodes);
    world_explain(&w, &r);
    assert_int_equal(r.reasons, JP_NEVER_FITS);
    assert_non_null(strstr(r.text, "there is no schedulable node"));
    world_free(&w);
}

static void test_pending_scheduler_message(void **state)
{
    world w;
    jp_result r;
    (void)state;
    world_init(&w, ptjob("m", 1, 0, 0, NULL, NULL));
    json_object_set_new(json_object_get(w.pg, "status"), "conditions",
                        J("[{\"type\":\"Unschedulable\",\"status\":\"True\",\"message\":"
                          "\"1/1 tasks in gang unschedulable: 2 Insufficient cpu\"}]"));
    world_explain(&w, &r);
    assert_string_equal(r.scheduler, "1/1 tasks in gang unschedulable: 2 Insufficient cpu");
    assert_int_equal(r.position, 1);
    world_free(&w);
}

/* Pods refused at creation (Pod Security, a quota, a system priority
 * class): the API server's words from the job's last FailedCreate, while
 * pods are missing; not once a later create succeeded, nor for another
 * job's event. (It said nothing of them: "waiting for the scheduler".) */
static void test_pending_refused(void **state)
{
    world w;
    jp_result r;
    jp_input in;
    json_t *events;
    (void)state;
    world_init(&w, ptjob("ref", 0, 1, 0, NULL, NULL));
    events = J("[{\"involvedObject\":{\"kind\":\"PyTorchJob\",\"name\":\"ref\",\"uid\":\"u-ref\"},"
               "\"type\":\"Warning\",\"reason\":\"FailedCreate\",\"lastTimestamp\":"
               "\"2026-01-01T00:00:05Z\",\"message\":\"Error creating Pod ref-master-0: pods "
               "\\\"ref-master-0\\\" is forbidden: violates PodSecurity \\\"baseline:latest\\\": "
               "host namespaces (hostNetwork=true)\"},"
               "{\"involvedObject\":{\"kind\":\"PyTorchJob\",\"name\":\"ref\",\"uid\":\"u-ref\"},"
               "\"type\":\"Normal\",\"reason\":\"SuccessfulCreatePod\",\"lastTimestamp\":"
               "\"2026-01-01T00:00:01Z\",\"message\":\"Created pod: ref-worker-0\"},"
               "{\"involvedObject\":{\"kind\":\"PyTorchJob\",\"name\":\"other\",\"uid\":\"u-o\"},"
               "\"type\":\"Warning\",\"reason\":\"FailedCreate\",\"lastTimestamp\":"
               "\"2026-01-01T00:00:09Z\",\"message\":\"Error creating Pod other-0: nope\"}]");
    json_array_append_new(w.pods, pod("ref-worker-0", "u-ref", "worker", 0, 0, NULL, "Pending"));
    in = (jp_input){.job = w.job, .pods = w.pods, .pg = w.pg, .nodes = w.nodes,
                    .all_pods = w.all_pods, .podgroups = w.pgs, .priority_classes = w.pcs,
                    .events = events};
    jp_explain(&in, &r);
    assert_int_equal(r.reasons & JP_REFUSED, JP_REFUSED);
    assert_non_null(strstr(r.text, "Refused: 1 of its 2 pods exist; the last one tried was "
                                   "refused: Error creating Pod ref-master-0: pods "
                                   "\"ref-master-0\" is forbidden: violates PodSecurity"));
    /* a later success: the refusal is over */
    json_array_append_new(events, J("{\"involvedObject\":{\"kind\":\"PyTorchJob\",\"name\":"
                                    "\"ref\",\"uid\":\"u-ref\"},\"type\":\"Normal\",\"reason\":"
                                    "\"SuccessfulCreatePod\",\"lastTimestamp\":"
                                    "\"2026-01-01T00:00:07Z\",\"message\":\"Created pod: x\"}"));
    jp_explain(&in, &r);
    assert_int_equal(r.reasons & JP_REFUSED, 0);
    /* every pod there: nothing is refused now */
    json_array_remove(events, 3);
    json_array_append_new(w.pods, pod("ref-master-0", "u-ref", "master", 0, 0, NULL, "Pending"));
    jp_explain(&in, &r);
    assert_int_equal(r.reasons & JP_REFUSED, 0);
    /* Volcano's reason, without a uid */
    json_array_clear(w.pods);
    json_array_clear(events);
    json_array_append_new(events, J("{\"involvedObject\":{\"kind\":\"PyTorchJob\",\"name\":"
                                    "\"ref\"},\"type\":\"Warning\",\"reason\":\"FailedCreatePod\","
                                    "\"lastTimestamp\":\"2026-01-01T00:00:05Z\",\"message\":"
                                    "\"Error creating: insufficient quota to match these scopes\"}"));
    jp_explain(&in, &r);
    assert_non_null(strstr(r.text, "Refused: 0 of its 2 pods exist; the last one tried was "
                                   "refused: Error creating: insufficient quota"));
    json_decref(events);
    world_free(&w);
}

/* ---- TrainJob ---- */

/* A TrainJob of numNodes nodes with gpus per node, status st. */
static json_t *trainjob(const char *name, int nodes, int gpus, const char *extra_spec,
                        const char *st)
{
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"u-%s\","
             "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
             "\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},\"trainer\":{"
             "\"numNodes\":%d,\"resourcesPerNode\":{\"limits\":{\"nvidia.com/gpu\":%d}}}%s},"
             "\"status\":%s}",
             name, name, nodes, gpus, extra_spec ? extra_spec : "", st ? st : "{}");
    return J(buf);
}

/* A pod of TrainJob job: replicated job rjob, completion index idx, owned
 * by u-JOB when owned, else only labelled. */
static json_t *tjpod(const char *job, const char *rjob, int idx, bool owned, const char *phase)
{
    char buf[2048], owner[128] = "";
    if (owned)
        snprintf(owner, sizeof(owner), ",\"ownerReferences\":[{\"uid\":\"u-%s\",\"name\":\"%s\","
                 "\"controller\":true}]", job, job);
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s-%s-0-%d-x\",\"namespace\":\"ns1\",\"labels\":{"
             "\"jobset.sigs.k8s.io/jobset-name\":\"%s\","
             "\"jobset.sigs.k8s.io/replicatedjob-name\":\"%s\","
             "\"batch.kubernetes.io/job-completion-index\":\"%d\"}%s},"
             "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"node\",\"resources\":"
             "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]},\"status\":{\"phase\":\"%s\"}}",
             job, rjob, idx, job, rjob, idx, owner, phase);
    return J(buf);
}

static void test_trainjob(void **state)
{
    json_t *j, *pods;
    cli_job_replica reps[CLI_JOB_MAX_REPLICAS];
    cli_job_summary s;
    char sel[256], text[64];
    (void)state;

    /* a kind of the commands, with the SDK's selector */
    j = trainjob("t", 2, 4, NULL, NULL);
    assert_true(cli_is_trainjob(j));
    assert_true(cli_job_resource_of(j) != NULL);
    assert_string_equal(cli_job_trainer(cli_job_resource_of(j)), "TrainJob");
    cli_job_pod_selector(j, sel, sizeof(sel));
    assert_string_equal(sel, "jobset.sigs.k8s.io/jobset-name=t");
    assert_string_equal(cli_job_queue(j), "lq");
    /* no pods yet: the trainer's numNodes and resourcesPerNode */
    assert_int_equal(cli_job_replicas(j, reps, CLI_JOB_MAX_REPLICAS), 1);
    assert_string_equal(reps[0].role, "node");
    assert_int_equal(reps[0].replicas, 2);
    assert_int_equal(reps[0].gpus, 4);
    assert_string_equal(cli_job_status(j, NULL, NULL), "Created");
    assert_false(cli_trainjob_progress(j, text, sizeof(text)));

    /* pods: Pending while one waits, Running when every node runs; the
     * replicas counted from them */
    pods = json_array();
    json_array_append_new(pods, tjpod("t", "node", 0, true, "Running"));
    json_array_append_new(pods, tjpod("t", "node", 1, true, "Pending"));
    json_array_append_new(pods, tjpod("t", "dataset-initializer", 0, true, "Succeeded"));
    json_array_append_new(pods, tjpod("other", "node", 0, false, "Pending"));
    assert_string_equal(cli_job_status(j, pods, NULL), "Pending");
    json_object_set_new(json_object_get(json_array_get(pods, 1), "status"), "phase",
                        json_string("Running"));
    assert_string_equal(cli_job_status(j, pods, NULL), "Running");
    assert_int_equal(cli_trainjob_replicas(j, pods, reps, CLI_JOB_MAX_REPLICAS), 2);
    assert_string_equal(reps[0].role, "node");
    assert_int_equal(reps[0].replicas, 2);
    assert_string_equal(reps[1].role, "dataset-initializer");
    /* a pod labelled but owned by nothing (written by hand) counts by label */
    {
        json_t *other = trainjob("other", 1, 0, NULL, NULL);
        assert_true(cli_job_owns(other, json_array_get(pods, 3)));
        assert_false(cli_job_owns(j, json_array_get(pods, 3)));
        json_decref(other);
    }
    {
        json_t *ix = cli_owned_index(pods), *mine = cli_owned_by(ix, j);
        assert_int_equal(json_array_size(mine), 3);
        json_decref(mine);
        json_decref(ix);
    }

    /* progress reported */
    json_object_set_new(json_object_get(j, "status"), "trainerStatus",
                        J("{\"progressPercentage\":45,\"estimatedRemainingSeconds\":150,"
                          "\"metrics\":[{\"name\":\"loss\",\"value\":\"0.25\"},"
                          "{\"name\":\"acc\",\"value\":\"0.9\"}],"
                          "\"lastUpdatedTime\":\"2026-01-01T00:10:00Z\"}"));
    cli_job_summarise(j, pods, NULL, 1767226200, &s);
    assert_string_equal(s.status, "Running");
    assert_string_equal(s.progress, "45% (2m left)");
    assert_int_equal(s.gpus_requested, 6);
    assert_int_equal(s.npods, 3);
    cli_trainjob_metrics(j, text, sizeof(text));
    assert_string_equal(text, "loss=0.25, acc=0.9");
    cli_trainjob_metrics(j, text, 12);
    assert_string_equal(text, "loss=0.2...");
    json_decref(j);

    /* conditions win over pods; spec.suspend before the controller acts */
    j = trainjob("t", 2, 0, NULL, "{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\","
                                   "\"lastTransitionTime\":\"2026-01-01T01:00:00Z\"}]}");
    assert_string_equal(cli_job_status(j, pods, NULL), "Succeeded");
    assert_int_equal(cli_job_duration(j, 1767240000), 3600);
    json_decref(j);
    j = trainjob("t", 2, 0, NULL, "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}");
    assert_string_equal(cli_job_status(j, pods, NULL), "Failed");
    json_decref(j);
    j = trainjob("t", 2, 0, ",\"suspend\":true", NULL);
    assert_string_equal(cli_job_status(j, pods, NULL), "Suspended");
    json_decref(j);
    j = trainjob("t", 2, 0, NULL, "{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"True\"}]}");
    assert_string_equal(cli_job_status(j, NULL, NULL), "Suspended");
    json_decref(j);
    json_decref(pods);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeflow_status_from_conditions),
        cmocka_unit_test(test_volcano_status_from_phase),
        cmocka_unit_test(test_replicas_of_every_form),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_owns),
        cmocka_unit_test(test_duration_text),
        cmocka_unit_test(test_owned_index),
        cmocka_unit_test(test_pending_never_fits),
        cmocka_unit_test(test_pending_gang_never_fits),
        cmocka_unit_test(test_pending_waits_for_gpus),
        cmocka_unit_test(test_pending_counts_its_own_bound_pods),
        cmocka_unit_test(test_pending_behind_in_queue),
        cmocka_unit_test(test_pending_quota),
        cmocka_unit_test(test_pending_queue),
        cmocka_unit_test(test_pending_without_nodes),
        cmocka_unit_test(test_pending_scheduler_message),
        cmocka_unit_test(test_pending_refused),
        cmocka_unit_test(test_trainjob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
