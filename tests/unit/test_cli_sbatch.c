/* test_cli_sbatch.c - sbatch's directive parser, Slurm's value forms and
 * the Volcano Job a batch script becomes (src/cli/slurm_batch.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/slurm_batch.h"

static void test_directives(void **state)
{
    (void)state;
    const char *script = "#!/bin/bash\n"
                         "# a comment\n"
                         "\n"
                         "#SBATCH --job-name=\"my job\"\n"
                         "#SBATCH -N 2 --ntasks-per-node 4\n"
                         "#SBATCH -t 1:30:00 -o out-%j.txt # trailing comment\n"
                         "#SBATCH --gres=gpu:a100:2 --mem=4G -p gpuq\n"
                         "#SBATCHX --nodes=9\n"
                         "echo hi\n"
                         "#SBATCH --nodes=7\n";
    sb_opts o;
    ty_error err;

    ty_error_init(&err);
    sb_opts_init(&o);
    assert_int_equal(sb_parse_directives(script, &o, &err), 0);
    assert_string_equal(o.job_name, "my job");
    /* #SBATCHX is not a directive; nothing after the first command counts */
    assert_int_equal(o.nodes, 2);
    assert_int_equal(o.ntasks_per_node, 4);
    assert_int_equal(o.time_s, 5400);
    assert_string_equal(o.output, "out-%j.txt");
    assert_int_equal(o.gpus_per_node, 2);
    assert_string_equal(o.mem, "4Gi");
    assert_string_equal(o.partition, "gpuq");
    /* the command line's options are applied after: they win */
    assert_int_equal(sb_apply(&o, 'N', "3", &err), 0);
    assert_int_equal(o.nodes, 3);
}

static void test_directive_errors(void **state)
{
    (void)state;
    sb_opts o;
    ty_error err;

    ty_error_init(&err);
    sb_opts_init(&o);
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH --bogus=1\n", &o, &err), -1);
    assert_non_null(strstr(err.text, "line 2: #SBATCH --bogus=1"));
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH --nodes\n", &o, &err), -1);
    assert_non_null(strstr(err.text, "needs a value"));
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH --nodes=0\n", &o, &err), -1);
    assert_non_null(strstr(err.text, "invalid node count"));
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH --array=0-3\n", &o, &err), -1);
    assert_non_null(strstr(err.text, "--array is not supported yet"));
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH -a 1-3\n", &o, &err), -1);
    assert_non_null(strstr(err.text, "--array is not supported yet"));
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH --gres=mps:10\n", &o, &err), -1);
    assert_int_equal(sb_parse_directives("#!/bin/sh\n#SBATCH -W=1\n", &o, &err), -1);
    /* a script with CRLF lines still reads */
    sb_opts_init(&o);
    assert_int_equal(sb_parse_directives("#!/bin/sh\r\n#SBATCH -n 5\r\n", &o, &err), 0);
    assert_int_equal(o.ntasks, 5);
}

static void test_time_forms(void **state)
{
    (void)state;
    assert_int_equal(sb_parse_time("30"), 1800);
    assert_int_equal(sb_parse_time("30:15"), 1815);
    assert_int_equal(sb_parse_time("1:00:05"), 3605);
    assert_int_equal(sb_parse_time("2-0"), 2 * 86400);
    assert_int_equal(sb_parse_time("1-2:30"), 86400 + 2 * 3600 + 30 * 60);
    assert_int_equal(sb_parse_time("1-2:30:5"), 86400 + 2 * 3600 + 30 * 60 + 5);
    assert_int_equal(sb_parse_time("UNLIMITED"), 0);
    assert_int_equal(sb_parse_time("infinite"), 0);
    assert_int_equal(sb_parse_time(""), -1);
    assert_int_equal(sb_parse_time("1:2:3:4"), -1);
    assert_int_equal(sb_parse_time("abc"), -1);
    assert_int_equal(sb_parse_time("-5"), -1);
    assert_int_equal(sb_parse_time("5x"), -1);
}

static void test_mem_and_gpus(void **state)
{
    (void)state;
    char q[32];
    sb_opts o;
    ty_error err;

    assert_int_equal(sb_parse_mem("512", q, sizeof(q)), 0);
    assert_string_equal(q, "512Mi");
    assert_int_equal(sb_parse_mem("16G", q, sizeof(q)), 0);
    assert_string_equal(q, "16Gi");
    assert_int_equal(sb_parse_mem("100kb", q, sizeof(q)), 0);
    assert_string_equal(q, "100Ki");
    assert_int_equal(sb_parse_mem("0", q, sizeof(q)), 0);
    assert_string_equal(q, "");
    assert_int_equal(sb_parse_mem("4X", q, sizeof(q)), -1);
    assert_int_equal(sb_parse_mem("G", q, sizeof(q)), -1);

    ty_error_init(&err);
    sb_opts_init(&o);
    assert_int_equal(sb_apply(&o, SB_OPT_GRES, "gpu", &err), 0);
    assert_int_equal(o.gpus_per_node, 1);
    assert_int_equal(sb_apply(&o, SB_OPT_GRES, "gpu:4", &err), 0);
    assert_int_equal(o.gpus_per_node, 4);
    assert_int_equal(sb_apply(&o, SB_OPT_GRES, "gpu:h100", &err), 0);
    assert_int_equal(o.gpus_per_node, 1);
    assert_int_equal(sb_apply(&o, SB_OPT_GRES, "gpu:4,mps:2", &err), -1);
    /* --gpus is the whole job's: split over the nodes, evenly or refused */
    sb_opts_init(&o);
    assert_int_equal(sb_apply(&o, 'N', "2", &err), 0);
    assert_int_equal(sb_apply(&o, 'G', "a100:8", &err), 0);
    assert_int_equal(sb_resolve(&o, &err), 0);
    assert_int_equal(o.gpus_per_node, 4);
    sb_opts_init(&o);
    o.nodes = 3, o.gpus = 4;
    assert_int_equal(sb_resolve(&o, &err), -1);
    assert_non_null(strstr(err.text, "not a multiple"));
}

static void test_resolve_and_layout(void **state)
{
    (void)state;
    sb_opts o;
    ty_error err;

    ty_error_init(&err);
    /* nothing given: one node, one task */
    sb_opts_init(&o);
    assert_int_equal(sb_resolve(&o, &err), 0);
    assert_int_equal(o.nodes, 1);
    assert_int_equal(o.ntasks, 1);
    /* -N 2 --ntasks-per-node 2: four tasks, two a node */
    sb_opts_init(&o);
    o.nodes = 2, o.ntasks_per_node = 2;
    assert_int_equal(sb_resolve(&o, &err), 0);
    assert_int_equal(o.ntasks, 4);
    assert_int_equal(sb_tasks_on(&o, 0), 2);
    assert_int_equal(sb_tasks_on(&o, 1), 2);
    assert_int_equal(sb_tasks_on(&o, 2), 0);
    /* -N 3 -n 4: as even as it goes, the first nodes one more */
    sb_opts_init(&o);
    o.nodes = 3, o.ntasks = 4;
    assert_int_equal(sb_resolve(&o, &err), 0);
    assert_int_equal(sb_tasks_on(&o, 0), 2);
    assert_int_equal(sb_tasks_on(&o, 1), 1);
    assert_int_equal(sb_tasks_on(&o, 2), 1);
    /* -n 5 --ntasks-per-node 2: three nodes, 2 2 1 */
    sb_opts_init(&o);
    o.ntasks = 5, o.ntasks_per_node = 2;
    assert_int_equal(sb_resolve(&o, &err), 0);
    assert_int_equal(o.nodes, 3);
    assert_int_equal(sb_tasks_on(&o, 2), 1);
    /* fewer tasks than nodes; more than the nodes hold; a node left empty */
    sb_opts_init(&o);
    o.nodes = 4, o.ntasks = 2;
    assert_int_equal(sb_resolve(&o, &err), -1);
    sb_opts_init(&o);
    o.nodes = 2, o.ntasks = 5, o.ntasks_per_node = 2;
    assert_int_equal(sb_resolve(&o, &err), -1);
    sb_opts_init(&o);
    o.nodes = 3, o.ntasks = 4, o.ntasks_per_node = 2;
    assert_int_equal(sb_resolve(&o, &err), -1);
    assert_non_null(strstr(err.text, "Requested node configuration is not available"));
}

static void test_names_and_patterns(void **state)
{
    (void)state;
    char b[256];

    sb_nodelist(7, 1, b, sizeof(b));
    assert_string_equal(b, "slurm-7-node-0");
    sb_nodelist(7, 4, b, sizeof(b));
    assert_string_equal(b, "slurm-7-node-[0-3]");
    sb_expand_pattern("%x-%j-%u-%N-100%%-%q.out", 12, "train", "ann", b, sizeof(b));
    assert_string_equal(b, "train-12-ann-slurm-12-node-0-100%-%q.out");
    sb_expand_pattern("", 1, "n", "u", b, sizeof(b));
    assert_string_equal(b, "");
}

static const char *env_value(const json_t *env, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e)
        if (!strcmp(json_string_value(json_object_get(e, "name")), name))
            return json_string_value(json_object_get(e, "value"));
    return NULL;
}

static void test_manifest(void **state)
{
    (void)state;
    char *args[] = {"a b", "c"};
    sb_submit s = {.id = 42, .script = "#!/bin/sh\nsrun true\n", .args = args, .nargs = 2,
                   .user = "ann", .submit_dir = "/home/ann", .submit_host = "login1"};
    sb_opts o;
    ty_error err;
    json_t *job, *task, *pod, *ctr, *env, *res;

    ty_error_init(&err);
    sb_opts_init(&o);
    o.nodes = 2, o.ntasks_per_node = 2, o.cpus_per_task = 3, o.gpus_per_node = 1;
    o.time_s = 600;
    strcpy(o.job_name, "train");
    strcpy(o.partition, "gpuq");
    strcpy(o.mem, "8Gi");
    strcpy(o.error, "%x.err");
    assert_int_equal(sb_resolve(&o, &err), 0);
    job = sb_manifest(&o, &s, &err);
    assert_non_null(job);
    assert_string_equal(json_string_value(json_object_get(json_object_get(job, "metadata"), "name")),
                        "slurm-42");
    assert_int_equal(sb_job_id(job), 42);
    assert_string_equal(json_string_value(json_object_get(json_object_get(job, "spec"), "queue")),
                        "gpuq");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(job, "spec"), "minAvailable")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(job, "spec"), "minSuccess")), 1);
    json_t *plugins = json_object_get(json_object_get(job, "spec"), "plugins");
    assert_non_null(json_object_get(plugins, "svc"));
    assert_non_null(json_object_get(plugins, "env"));
    assert_non_null(json_object_get(plugins, "mpi"));
    task = json_array_get(json_object_get(json_object_get(job, "spec"), "tasks"), 0);
    assert_string_equal(json_string_value(json_object_get(task, "name")), "node");
    assert_int_equal(json_integer_value(json_object_get(task, "replicas")), 2);
    assert_int_equal(json_integer_value(json_object_get(task, "minAvailable")), 2);
    pod = json_object_get(json_object_get(task, "template"), "spec");
    assert_string_equal(json_string_value(json_object_get(pod, "restartPolicy")), "Never");
    assert_int_equal(json_integer_value(json_object_get(pod, "activeDeadlineSeconds")), 600);
    ctr = json_array_get(json_object_get(pod, "containers"), 0);
    /* /bin/sh -c WRAPPER sbatch ARGS: srun and scontrol are in the wrapper */
    json_t *cmd = json_object_get(ctr, "command");
    assert_int_equal(json_array_size(cmd), 6);
    assert_non_null(strstr(json_string_value(json_array_get(cmd, 2)), "/etc/mpi/kubexec.sh"));
    assert_non_null(strstr(json_string_value(json_array_get(cmd, 2)), "show hostnames"));
    assert_null(strstr(json_string_value(json_array_get(cmd, 2)), "@SRUN@"));
    assert_string_equal(json_string_value(json_array_get(cmd, 4)), "a b");
    env = json_object_get(ctr, "env");
    assert_string_equal(env_value(env, "SLURM_JOB_ID"), "42");
    assert_string_equal(env_value(env, "SLURM_JOB_NAME"), "train");
    assert_string_equal(env_value(env, "SLURM_NTASKS"), "4");
    assert_string_equal(env_value(env, "SLURM_NNODES"), "2");
    assert_string_equal(env_value(env, "SLURM_JOB_NODELIST"), "slurm-42-node-[0-1]");
    assert_string_equal(env_value(env, "SLURM_TASKS_PER_NODE"), "2(x2)");
    assert_string_equal(env_value(env, "SLURM_NTASKS_PER_NODE"), "2");
    assert_string_equal(env_value(env, "SLURM_GPUS_ON_NODE"), "1");
    assert_string_equal(env_value(env, "SLURM_SUBMIT_DIR"), "/home/ann");
    assert_string_equal(env_value(env, "TY_SLURM_HOSTS"), "slurm-42-node-0 slurm-42-node-1");
    assert_string_equal(env_value(env, "TY_SLURM_TASK_COUNTS"), "2 2");
    assert_string_equal(env_value(env, "TY_SBATCH_OUTPUT"), "slurm-42.out");
    assert_string_equal(env_value(env, "TY_SBATCH_ERROR"), "train.err");
    assert_string_equal(env_value(env, "TY_SBATCH_SCRIPT"), s.script);
    res = json_object_get(ctr, "resources");
    assert_string_equal(json_string_value(json_object_get(json_object_get(res, "requests"), "cpu")), "6");
    assert_string_equal(json_string_value(json_object_get(json_object_get(res, "limits"), "memory")), "8Gi");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(res, "limits"), "nvidia.com/gpu")), "1");
    json_decref(job);

    /* a script too long for one environment variable */
    static char big[SB_MAX_SCRIPT + 2];
    memset(big, 'x', sizeof(big) - 1);
    s.script = big;
    assert_null(sb_manifest(&o, &s, &err));
    assert_non_null(strstr(err.text, "at most"));
}

static void test_states_and_times(void **state)
{
    (void)state;
    char b[32];

    assert_string_equal(sb_state("Pending"), "PENDING");
    assert_string_equal(sb_state(NULL), "PENDING");
    assert_string_equal(sb_state("Running"), "RUNNING");
    assert_string_equal(sb_state("Terminating"), "COMPLETING");
    assert_string_equal(sb_state("Completed"), "COMPLETED");
    assert_string_equal(sb_state("Failed"), "FAILED");
    assert_string_equal(sb_state("Terminated"), "CANCELLED");
    assert_string_equal(sb_state("Aborted"), "CANCELLED");
    assert_string_equal(sb_state_short("PENDING"), "PD");
    assert_string_equal(sb_state_short("COMPLETING"), "CG");
    assert_string_equal(sb_state_short("CANCELLED"), "CA");
    sb_format_elapsed(5, b, sizeof(b));
    assert_string_equal(b, "0:05");
    sb_format_elapsed(3725, b, sizeof(b));
    assert_string_equal(b, "1:02:05");
    sb_format_elapsed(90061, b, sizeof(b));
    assert_string_equal(b, "1-01:01:01");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directives),
        cmocka_unit_test(test_directive_errors),
        cmocka_unit_test(test_time_forms),
        cmocka_unit_test(test_mem_and_gpus),
        cmocka_unit_test(test_resolve_and_layout),
        cmocka_unit_test(test_names_and_patterns),
        cmocka_unit_test(test_manifest),
        cmocka_unit_test(test_states_and_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
