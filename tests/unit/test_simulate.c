/* test_simulate.c - the trace-driven simulator (src/sim): trace and cluster
 * readers, the metrics, and whole runs through the scheduler core on small
 * hand-computed cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simulate.h"
#include "sim/trace.h"

/* tests/data/traces, found from this file's own path (the tests run from the
 * build directory). */
static void data_path(const char *name, char *buf, size_t len)
{
    const char *here = __FILE__;
    const char *cut = strstr(here, "tests/unit/");
    int dir = cut ? (int)(cut - here) : 0;
    snprintf(buf, len, "%.*stests/data/traces/%s", dir, here, name);
}

static sim_trace *parse_ok(const char *text)
{
    ty_error err;
    ty_error_init(&err);
    sim_trace *t = sim_trace_parse(text, strlen(text), &err);
    if (!t)
        print_error("sim_trace_parse failed: %s\n", err.text);
    assert_non_null(t);
    return t;
}

static void parse_bad(const char *text, const char *want)
{
    ty_error err;
    ty_error_init(&err);
    assert_null(sim_trace_parse(text, strlen(text), &err));
    assert_int_equal(err.code, TY_EINVALID);
    if (!strstr(err.text, want))
        print_error("error '%s' does not say '%s'\n", err.text, want);
    assert_non_null(strstr(err.text, want));
}

static void test_tiresias_trace(void **state)
{
    (void)state;
    sim_trace *t = parse_ok("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\r\n"
                            "0,1,100,606,vgg19,164,30\r\n"
                            "1,8,130,133,vgg11,147,23\r\n"
                            "\r\n"
                            "2,2,120,157,inception4,127,26\r\n");
    assert_string_equal(t->format, "tiresias");
    assert_int_equal(t->njobs, 3);
    /* Sorted by submission and shifted so that the first is at 0. */
    assert_true(t->jobs[0].submit == 0 && t->jobs[0].gpus == 1 && t->jobs[0].duration == 164);
    assert_true(t->jobs[1].submit == 20 && t->jobs[1].gpus == 2 && t->jobs[1].line == 5);
    assert_true(t->jobs[2].submit == 30 && t->jobs[2].gpus == 8 && t->jobs[2].duration == 147);
    assert_int_equal(t->nqueues, 1);
    assert_string_equal(t->queues[0], "default");
    sim_trace_free(t);
}

static void test_philly_trace(void **state)
{
    (void)state;
    sim_trace *t = parse_ok("timestamp,duration,num_gpus,gpu_time,cluster\n"
                            "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                            "2017-10-08 06:13:03,2951.0,4,11804.0,6214e9\n"
                            "2017-10-09 07:01:55,5.5,2,11.0,6214E9\n"
                            "2016-03-01 00:00:00,1.0,8,8.0,11cb48\n");
    assert_string_equal(t->format, "philly");
    assert_int_equal(t->njobs, 4);
    /* A leap day and a leap year on the way: 2016-03-01 to 2017-10-08 06:13:03. */
    assert_true(t->jobs[0].submit == 0 && t->jobs[0].gpus == 8);
    double d = 586.0 * 86400 + 6 * 3600 + 13 * 60 + 3;
    assert_true(t->jobs[1].submit == d);
    assert_true(t->jobs[1].duration == 2951 && t->jobs[1].gpus == 4);
    /* Equal timestamps keep the file's order. */
    assert_true(t->jobs[2].submit == t->jobs[3].submit);
    assert_true(t->jobs[2].duration == 66 && t->jobs[3].duration == 5.5);
    /* Queues: default first, then in order of first sight, DNS-label shaped. */
    assert_int_equal(t->nqueues, 3);
    assert_string_equal(t->queues[1], "11cb48");
    assert_string_equal(t->queues[2], "6214e9");
    assert_int_equal(t->jobs[2].queue, 1);
    assert_int_equal(t->jobs[1].queue, 2);
    assert_int_equal(t->jobs[3].queue, 2);
    sim_trace_free(t);
}

static void test_bad_traces(void **state)
{
    (void)state;
    parse_bad("", "empty");
    parse_bad("a,b,c\n1,2,3\n", "unknown trace format");
    parse_bad("name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\n",
              "no job durations");
    parse_bad("job_id,num_gpu,submit_time,duration\n", "no jobs");
    parse_bad("job_id,num_gpu,submit_time,duration\n0,1,0,10\n1,x,5,10\n", "line 3");
    parse_bad("job_id,num_gpu,submit_time,duration\n0,0,0,10\n", "GPU count");
    parse_bad("job_id,num_gpu,submit_time,duration\n0,1,0,-1\n", "duration");
    parse_bad("job_id,num_gpu,submit_time,duration\n0,1\n", "fields");
    parse_bad("timestamp,duration,num_gpus\n2017-13-01 00:00:00,1,1\n", "submission time");
    ty_error err;
    ty_error_init(&err);
    assert_null(sim_trace_load("/nonexistent/trace.csv", &err));
    assert_int_equal(err.code, TY_ENOTFOUND);
}

static void test_trace_file(void **state)
{
    (void)state;
    char path[1024];
    ty_error err;
    ty_error_init(&err);
    data_path("60_job.csv", path, sizeof(path));
    sim_trace *t = sim_trace_load(path, &err);
    if (!t)
        print_error("%s\n", err.text);
    assert_non_null(t);
    assert_int_equal(t->njobs, 60);
    assert_true(t->jobs[59].submit == 1779 && t->jobs[59].duration == 122);
    sim_trace_free(t);
}

static void test_cluster_spec(void **state)
{
    (void)state;
    sim_cluster_spec cs = {0};
    ty_error err;
    ty_error_init(&err);
    assert_int_equal(sim_cluster_spec_parse("32x4", &cs, &err), 0);
    assert_int_equal(cs.nodes, 32);
    assert_int_equal(cs.gpus_per_node, 4);
    assert_int_equal(sim_cluster_spec_parse("300X8", &cs, &err), 0);
    assert_int_equal(cs.nodes, 300);
    assert_int_equal(cs.gpus_per_node, 8);

    const char *bad[] = {"", "0x4", "4x0", "x4", "4x", "4x4x4", "-1x4", "4x999", "nosuch.csv"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sim_cluster_spec before = cs;
        assert_int_equal(sim_cluster_spec_parse(bad[i], &cs, &err), -1);
        assert_int_equal(err.code, TY_EINVALID);
        assert_memory_equal(&before, &cs, sizeof(cs));
    }

    const char *csv = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n"
                      "5,32,8,128,256\n";
    assert_int_equal(sim_cluster_spec_parse_csv(csv, strlen(csv), &cs, &err), 0);
    assert_int_equal(cs.nodes, 160);
    assert_int_equal(cs.gpus_per_node, 8);
    assert_int_equal(cs.cpus_per_node, 128);
    assert_int_equal(cs.mem_gib_per_node, 256);
    const char *nodata = "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n";
    assert_int_equal(sim_cluster_spec_parse_csv(nodata, strlen(nodata), &cs, &err), -1);
    const char *nocol = "num_switch,num_gpu_p_node\n1,4\n";
    assert_int_equal(sim_cluster_spec_parse_csv(nocol, strlen(nocol), &cs, &err), -1);

    char path[1024];
    data_path("n32g4.csv", path, sizeof(path));
    assert_int_equal(sim_cluster_spec_parse(path, &cs, &err), 0);
    assert_int_equal(cs.nodes, 32);
    assert_int_equal(cs.gpus_per_node, 4);
    assert_int_equal(cs.cpus_per_node, 40);
}

static void test_metrics(void **state)
{
    (void)state;
    /* 100 jobs: JCTs 1..100 s; one never finished. */
    sim_outcome o[101];
    for (int i = 0; i < 100; i++)
        o[i] = (sim_outcome){.submit = 10 + i, .first_start = 10 + i + 0.5,
                             .finish = 10 + i + (i + 1), .gpu_seconds = 2};
    o[100] = (sim_outcome){.submit = 0, .first_start = -1, .finish = -1, .gpu_seconds = 0};
    sim_result r = {0};
    sim_metrics(o, 101, 4, &r);
    assert_int_equal(r.jobs, 100);
    assert_true(fabs(r.avg_jct - 50.5) < 1e-9);
    assert_true(r.p99_jct == 99);
    assert_true(fabs(r.avg_queue_delay - 0.5) < 1e-9);
    /* First submit 10, last finish 109 + 100 = 209. */
    assert_true(r.makespan == 199);
    assert_true(fabs(r.gpu_utilization - 200.0 / (4 * 199.0)) < 1e-12);

    sim_metrics(o + 100, 1, 4, &r);
    assert_int_equal(r.jobs, 0);
    assert_true(r.avg_jct == 0 && r.makespan == 0);
}

static char *report_json(const sim_result *r, const sim_options *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    sim_report_json(f, r, o);
    fclose(f);
    return buf;
}

static void test_json_format(void **state)
{
    (void)state;
    sim_options o = {.policy = SIM_LAS, .cluster = {32, 4, 64, 256}};
    sim_result r = {.jobs = 60, .preemptions = 3, .avg_jct = 178.41666666,
                    .p99_jct = 1800, .makespan = 3271, .avg_queue_delay = -1e-12,
                    .gpu_utilization = 0.0635891};
    char *s = report_json(&r, &o);
    assert_string_equal(s, "{\n"
                           "  \"avg_jct\": 178.417,\n"
                           "  \"p99_jct\": 1800.000,\n"
                           "  \"makespan\": 3271.000,\n"
                           "  \"avg_queue_delay\": 0.000,\n"
                           "  \"gpu_utilization\": 0.063589,\n"
                           "  \"jobs\": 60,\n"
                           "  \"skipped\": 0,\n"
                           "  \"unfinished\": 0,\n"
                           "  \"preemptions\": 3,\n"
                           "  \"policy\": \"las\",\n"
                           "  \"nodes\": 32,\n"
                           "  \"gpus_per_node\": 4\n"
                           "}\n");
    free(s);
    sim_policy p;
    assert_int_equal(sim_policy_parse("sjf", &p), 0);
    assert_int_equal(p, SIM_SJF);
    assert_int_equal(sim_policy_parse("drf", &p), -1);
}

/* ---- whole runs through the scheduler core ---- */

static sim_result run(const char *trace, sim_policy policy, int nodes, int gpus, double threshold)
{
    sim_trace *t = parse_ok(trace);
    sim_options o = {.policy = policy, .cluster = {nodes, gpus, 64, 256}};
    if (threshold > 0) {
        o.las_thresholds[0] = threshold;
        o.nlas_thresholds = 1;
    }
    sim_result r;
    ty_error err;
    ty_error_init(&err);
    int rc = sim_run(t, &o, &r, &err);
    if (rc < 0)
        print_error("sim_run: %s\n", err.text);
    assert_int_equal(rc, 0);
    sim_trace_free(t);
    return r;
}

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-6)

/* One node of 4 GPUs; gangs of one pod each:
 *   A t=0  2 GPUs 100 s   runs 0-100
 *   B t=10 4 GPUs  50 s   waits for the whole node: 100-150
 *   C t=20 1 GPU   30 s   fits at 20, but FIFO is head of line: 150-180
 *   D t=30 2 GPUs  40 s   150-190
 * JCTs 100, 140, 160, 160; queueing 0, 90, 130, 120; makespan 190;
 * GPU-seconds 200 + 200 + 30 + 80 = 510 of 4 x 190. */
static const char hand_trace[] = "job_id,num_gpu,submit_time,duration\n"
                                 "A,2,0,100\n"
                                 "B,4,10,50\n"
                                 "C,1,20,30\n"
                                 "D,2,30,40\n";

static void test_fifo_hand_case(void **state)
{
    (void)state;
    sim_result r = run(hand_trace, SIM_FIFO, 1, 4, 0);
    assert_int_equal(r.jobs, 4);
    assert_int_equal(r.unfinished, 0);
    assert_int_equal(r.preemptions, 0);
    assert_near(r.avg_jct, 140);
    assert_near(r.p99_jct, 160);
    assert_near(r.makespan, 190);
    assert_near(r.avg_queue_delay, 85);
    assert_near(r.gpu_utilization, 510.0 / 760.0);
}

/* SJF, same jobs: shortest first, skipping what does not fit.
 *   A 0-100; C (30 s) fits at 20: 20-50; D (40 s) waits for C: 50-90;
 *   B (50 s, the whole node) waits for A: 100-150.
 * JCTs 100, 140, 30, 60; queueing 0, 90, 0, 20. */
static void test_sjf_hand_case(void **state)
{
    (void)state;
    sim_result r = run(hand_trace, SIM_SJF, 1, 4, 0);
    assert_int_equal(r.jobs, 4);
    assert_near(r.avg_jct, 82.5);
    assert_near(r.p99_jct, 140);
    assert_near(r.makespan, 150);
    assert_near(r.avg_queue_delay, 27.5);
}

/* LAS with one threshold of 100 GPU-seconds on one node of 4 GPUs:
 *   A t=0 4 GPUs 100 s: runs at 0, reaches 100 GPU-s at 25 and drops a queue;
 *   B t=10 2 GPUs 20 s waits in the top queue, preempts A (whole) at 25, runs
 *   25-45; A resumes at 45 with 75 s left: 45-120.
 * JCTs 120, 35; queueing 0, 15; makespan 120; GPU-s 400 + 40 of 480. */
static void test_las_hand_case(void **state)
{
    (void)state;
    sim_result r = run("job_id,num_gpu,submit_time,duration\n"
                       "A,4,0,100\n"
                       "B,2,10,20\n",
                       SIM_LAS, 1, 4, 100);
    assert_int_equal(r.jobs, 2);
    assert_int_equal(r.preemptions, 1);
    assert_near(r.avg_jct, 77.5);
    assert_near(r.makespan, 120);
    assert_near(r.avg_queue_delay, 7.5);
    assert_near(r.gpu_utilization, 440.0 / 480.0);
}

/* A job larger than the cluster is skipped, not waited for forever. */
static void test_too_large_job(void **state)
{
    (void)state;
    sim_result r = run("job_id,num_gpu,submit_time,duration\n"
                       "0,8,0,10\n"
                       "1,4,5,10\n",
                       SIM_FIFO, 1, 4, 0);
    assert_int_equal(r.jobs, 1);
    assert_int_equal(r.skipped, 1);
    assert_near(r.avg_jct, 10);
}

/* The Tiresias 60-job trace on 32 x 4 GPUs: equal runs print equal bytes. */
static void test_json_stable(void **state)
{
    (void)state;
    char path[1024];
    ty_error err;
    ty_error_init(&err);
    data_path("60_job.csv", path, sizeof(path));
    sim_trace *t = sim_trace_load(path, &err);
    assert_non_null(t);
    for (int p = SIM_FIFO; p <= SIM_LAS; p++) {
        sim_options o = {.policy = (sim_policy)p, .cluster = {32, 4, 40, 256}};
        char *out[2];
        for (int i = 0; i < 2; i++) {
            sim_result r;
            assert_int_equal(sim_run(t, &o, &r, &err), 0);
            assert_int_equal(r.jobs, 60);
            assert_int_equal(r.unfinished, 0);
            out[i] = report_json(&r, &o);
        }
        assert_string_equal(out[0], out[1]);
        free(out[0]);
        free(out[1]);
    }
    sim_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiresias_trace), cmocka_unit_test(test_philly_trace),
        cmocka_unit_test(test_bad_traces),     cmocka_unit_test(test_trace_file),
        cmocka_unit_test(test_cluster_spec),   cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_json_format),    cmocka_unit_test(test_fifo_hand_case),
        cmocka_unit_test(test_sjf_hand_case),  cmocka_unit_test(test_las_hand_case),
        cmocka_unit_test(test_too_large_job),  cmocka_unit_test(test_json_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
