/* test_cli_top.c - the pure parts of `trainyard logs JOB`, `top` and
 * `queue` (src/cli/cli_top.c), and the job summary the node agent writes
 * (runtime/local/gpu.h's rt_gpu_job_summary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli_top.h"
#include "runtime/local/gpu.h"

static void test_duration(void **state)
{
    long s = -1;
    (void)state;

    assert_int_equal(cli_duration_seconds("5s", &s), 0);
    assert_int_equal(s, 5);
    assert_int_equal(cli_duration_seconds("2m", &s), 0);
    assert_int_equal(s, 120);
    assert_int_equal(cli_duration_seconds("1h", &s), 0);
    assert_int_equal(s, 3600);
    assert_int_equal(cli_duration_seconds("1h30m10s", &s), 0);
    assert_int_equal(s, 5410);
    assert_int_equal(cli_duration_seconds("0s", &s), 0);
    assert_int_equal(s, 0);
    /* kubectl wants units; nothing else is a duration */
    assert_int_equal(cli_duration_seconds("5", &s), -1);
    assert_int_equal(cli_duration_seconds("", &s), -1);
    assert_int_equal(cli_duration_seconds(NULL, &s), -1);
    assert_int_equal(cli_duration_seconds("5x", &s), -1);
    assert_int_equal(cli_duration_seconds("-5s", &s), -1);
    assert_int_equal(cli_duration_seconds("h", &s), -1);
    assert_int_equal(cli_duration_seconds("1d", &s), -1);
    /* bounded: no overflow from a hostile number */
    assert_int_equal(cli_duration_seconds("99999999999999999999s", &s), -1);
    assert_int_equal(cli_duration_seconds("9000h", &s), -1);
}

static json_t *kf_pod(const char *name, const char *type, const char *index)
{
    return json_pack("{s:{s:s, s:{s:s, s:s}}}", "metadata", "name", name, "labels",
                     "training.kubeflow.org/replica-type", type,
                     "training.kubeflow.org/replica-index", index);
}

static json_t *vc_pod(const char *name, const char *task, const char *index)
{
    return json_pack("{s:{s:s, s:{s:s, s:s}}}", "metadata", "name", name, "annotations",
                     "volcano.sh/task-spec", task, "volcano.sh/task-index", index);
}

static json_t *tj_pod(const char *name, const char *rjob, const char *index)
{
    return json_pack("{s:{s:s, s:{s:s, s:s}}}", "metadata", "name", name, "labels",
                     "jobset.sigs.k8s.io/replicatedjob-name", rjob,
                     "batch.kubernetes.io/job-completion-index", index);
}

static void test_default_replica(void **state)
{
    json_t *pods = json_array();
    (void)state;

    assert_int_equal(cli_default_replica(pods, NULL), -1);
    json_array_append_new(pods, kf_pod("j-worker-1", "worker", "1"));
    json_array_append_new(pods, kf_pod("j-worker-0", "worker", "0"));
    assert_int_equal(cli_default_replica(pods, NULL), 1); /* worker 0 */
    json_array_append_new(pods, kf_pod("j-ps-0", "ps", "0"));
    assert_int_equal(cli_default_replica(pods, NULL), 1); /* a worker before a ps */
    json_array_append_new(pods, kf_pod("j-launcher", "launcher", "0"));
    assert_int_equal(cli_default_replica(pods, NULL), 3);
    json_array_append_new(pods, kf_pod("j-master-0", "master", "0"));
    assert_int_equal(cli_default_replica(pods, NULL), 4);
    json_array_append_new(pods, kf_pod("j-chief-0", "Chief", "0")); /* any case */
    assert_int_equal(cli_default_replica(pods, NULL), 5);
    json_decref(pods);

    pods = json_array();
    json_array_append_new(pods, vc_pod("v-ps-0", "ps", "0"));
    json_array_append_new(pods, vc_pod("v-worker-1", "worker", "1"));
    json_array_append_new(pods, vc_pod("v-worker-0", "worker", "0"));
    /* the first task's pod 0 */
    assert_int_equal(cli_default_replica(pods, "worker"), 2);
    assert_int_equal(cli_default_replica(pods, "ps"), 0);
    /* no first task known: the lowest index, then the name */
    assert_int_equal(cli_default_replica(pods, NULL), 0);
    json_decref(pods);

    /* a TrainJob's: the launcher, else node 0, before the initializers
     * (which sort first by name) */
    pods = json_array();
    json_array_append_new(pods, tj_pod("t-dataset-initializer-0-0", "dataset-initializer", "0"));
    json_array_append_new(pods, tj_pod("t-node-0-1", "node", "1"));
    json_array_append_new(pods, tj_pod("t-node-0-0", "node", "0"));
    assert_int_equal(cli_default_replica(pods, NULL), 2);
    json_array_append_new(pods, tj_pod("t-launcher-0-0", "launcher", "0"));
    assert_int_equal(cli_default_replica(pods, NULL), 3);
    json_decref(pods);

    /* pods without labels: the first by name */
    pods = json_pack("[{s:{s:s}}, {s:{s:s}}]", "metadata", "name", "b", "metadata", "name", "a");
    assert_int_equal(cli_default_replica(pods, NULL), 1);
    json_decref(pods);
}

static void test_gpu_report(void **state)
{
    cli_gpu_report r;
    int busy, util;
    long long used, total;
    (void)state;

    assert_int_equal(cli_gpu_report_parse(NULL, &r), -1);
    assert_int_equal(cli_gpu_report_parse("not json", &r), -1);
    assert_int_equal(cli_gpu_report_parse("{\"gpus\":3}", &r), -1);
    assert_int_equal(r.n, 0);
    assert_int_equal(cli_gpu_report_parse(
                         "{\"fake\":true,\"gpus\":[{\"index\":0,\"memTotalMiB\":16384,"
                         "\"memUsedMiB\":8192,\"util\":100},{\"index\":1,\"memTotalMiB\":16384,"
                         "\"memUsedMiB\":0,\"util\":0},{\"index\":2}]}",
                         &r),
                     0);
    assert_true(r.fake);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.g[0].util, 100);
    assert_int_equal(r.g[1].mem_used, 0);
    assert_int_equal(r.g[2].index, 2);
    assert_int_equal(r.g[2].util, -1); /* no reading, not 0 % */
    assert_int_equal(r.g[2].mem_total, -1);
    cli_gpu_report_sum(&r, &busy, &util, &used, &total);
    assert_int_equal(busy, 1);
    assert_int_equal(util, 50); /* over the GPUs with a reading */
    assert_int_equal(used, 8192);
    assert_int_equal(total, 32768);

    /* bounded: a report of more GPUs than a node has keeps CLI_GPU_MAX */
    json_t *many = json_array();
    for (int i = 0; i < CLI_GPU_MAX + 10; i++)
        json_array_append_new(many, json_pack("{s:i, s:i}", "index", i, "util", 1));
    json_t *rep = json_pack("{s:o}", "gpus", many);
    char *text = json_dumps(rep, 0);
    assert_int_equal(cli_gpu_report_parse(text, &r), 0);
    assert_int_equal(r.n, CLI_GPU_MAX);
    free(text);
    json_decref(rep);
}

static void test_job_summary(void **state)
{
    rt_gpu_job_summary s = {0};
    char *text;
    (void)state;

    rt_gpu_job_summary_add(&s, NULL);
    rt_gpu_job_summary_add(&s, "garbage");
    assert_int_equal(s.pods, 0);
    rt_gpu_job_summary_add(&s, "{\"fake\":false,\"gpus\":[{\"index\":0,\"memTotalMiB\":81920,"
                               "\"memUsedMiB\":40960,\"util\":87}]}");
    rt_gpu_job_summary_add(&s, "{\"fake\":false,\"gpus\":[{\"index\":1,\"memTotalMiB\":81920,"
                               "\"memUsedMiB\":0,\"util\":13},{\"index\":2}]}");
    text = rt_gpu_job_summary_text(&s);
    assert_string_equal(text, "{\"fake\":false,\"gpus\":3,\"memTotalMiB\":163840,"
                              "\"memUsedMiB\":40960,\"pods\":2,\"util\":50}");
    free(text);
    rt_gpu_job_summary_add(&s, "{\"fake\":true,\"gpus\":[]}");
    text = rt_gpu_job_summary_text(&s);
    assert_non_null(strstr(text, "\"fake\":true"));
    free(text);
    /* figures a pod's own creator wrote into its annotation: out of a
     * GPU's range, they count for nothing (the sums could overflow) */
    s = (rt_gpu_job_summary){0};
    rt_gpu_job_summary_add(&s, "{\"gpus\":[{\"index\":0,\"util\":9223372036854775807,"
                               "\"memUsedMiB\":9223372036854775807,\"memTotalMiB\":-5}]}");
    rt_gpu_job_summary_add(&s, "{\"gpus\":[{\"index\":0,\"util\":9223372036854775807,"
                               "\"memUsedMiB\":9223372036854775807}]}");
    assert_int_equal(s.util_n, 0);
    assert_int_equal(s.mem_used, 0);
    assert_int_equal(s.mem_total, 0);
    /* no reading at all: no util key, not 0 % */
    s = (rt_gpu_job_summary){0};
    rt_gpu_job_summary_add(&s, "{\"gpus\":[{\"index\":0}]}");
    text = rt_gpu_job_summary_text(&s);
    assert_null(strstr(text, "util"));
    free(text);
}

static json_t *pg(const char *ns, const char *name, const char *created, const char *pc)
{
    json_t *g = json_pack("{s:{s:s, s:s, s:s}, s:{}}", "metadata", "namespace", ns, "name", name,
                          "creationTimestamp", created, "spec");
    if (pc)
        json_object_set_new(json_object_get(g, "spec"), "priorityClassName", json_string(pc));
    return g;
}

static void test_sort_waiting(void **state)
{
    json_t *classes = json_pack("{s:i, s:i}", "high", 1000, "low", -5);
    json_t *groups = json_array();
    const char *want[] = {"hi-new", "hi-old-b", "old", "same-a", "same-b", "new", "lowest"};
    (void)state;

    json_array_append_new(groups, pg("b", "new", "2026-11-28T10:00:05Z", NULL));
    json_array_append_new(groups, pg("a", "lowest", "2026-11-28T09:00:00Z", "low"));
    json_array_append_new(groups, pg("a", "old", "2026-11-28T10:00:01Z", NULL));
    json_array_append_new(groups, pg("b", "hi-old-b", "2026-11-28T10:00:04Z", "high"));
    json_array_append_new(groups, pg("a", "hi-new", "2026-11-28T10:00:03Z", "high"));
    json_array_append_new(groups, pg("a", "same-b", "2026-11-28T10:00:02Z", "unknown"));
    json_array_append_new(groups, pg("a", "same-a", "2026-11-28T10:00:02Z", NULL));
    cli_sort_waiting(groups, classes);
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(json_array_get(groups, i), "metadata"), "name")),
                            want[i]);
    json_decref(groups);
    groups = json_array();
    cli_sort_waiting(groups, classes); /* empty: nothing */
    assert_int_equal(json_array_size(groups), 0);
    json_decref(groups);
    json_decref(classes);
}

static void test_mib(void **state)
{
    char b[32];
    (void)state;

    cli_mib(-1, b, sizeof(b));
    assert_string_equal(b, "-");
    cli_mib(512, b, sizeof(b));
    assert_string_equal(b, "512Mi");
    cli_mib(16384, b, sizeof(b));
    assert_string_equal(b, "16Gi");
    cli_mib(40000, b, sizeof(b));
    assert_string_equal(b, "39.1Gi");
}

static void test_color(void **state)
{
    FILE *f = tmpfile();
    char b[64] = {0};
    (void)state;

    /* not a terminal: never */
    cli_print_colored(f, "Running", NULL);
    cli_print_colored(f, "fake", "(fake)");
    cli_print_colored(f, "Whatever", NULL);
    rewind(f);
    assert_non_null(fgets(b, sizeof(b), f));
    assert_string_equal(b, "Running(fake)Whatever");
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),      cmocka_unit_test(test_default_replica),
        cmocka_unit_test(test_gpu_report),    cmocka_unit_test(test_job_summary),
        cmocka_unit_test(test_sort_waiting),  cmocka_unit_test(test_mib),
        cmocka_unit_test(test_color),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
