/* test_cli_submit.c - `trainyard submit`'s manifests (src/cli/submit_build.c):
 * each kind's replicas from Arena's flags, the container every replica
 * gets, and the usage errors that name the flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/submit_build.h"

static submit_opts opts(const char *kind, const char *name)
{
    submit_opts o;
    submit_opts_init(&o);
    o.kind = kind;
    o.name = name;
    o.shell = "echo hi";
    return o;
}

/* The value at a dotted path ("spec.pytorchReplicaSpecs.Worker.replicas";
 * a number is an array index). Borrowed. */
static json_t *at(json_t *v, const char *path)
{
    char buf[512], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(v))
            v = json_array_get(v, (size_t)atoi(tok));
        else
            v = json_object_get(v, tok);
    }
    return v;
}

static const char *str_at(json_t *v, const char *path)
{
    return json_string_value(at(v, path));
}

static long long int_at(json_t *v, const char *path)
{
    json_t *n = at(v, path);
    return json_is_integer(n) ? (long long)json_integer_value(n) : -999;
}

static json_t *build_ok(const submit_opts *o)
{
    ty_error err;
    ty_error_init(&err);
    json_t *m = submit_build(o, &err);
    if (!m)
        fail_msg("submit_build: %s", err.text);
    ty_error_clear(&err);
    return m;
}

/* The usage error's text, which must contain want. */
static void build_fails(const submit_opts *o, const char *want)
{
    ty_error err;
    ty_error_init(&err);
    json_t *m = submit_build(o, &err);
    if (m) {
        json_decref(m);
        fail_msg("submit_build accepted what should fail with \"%s\"", want);
    }
    assert_int_equal(err.code, TY_EINVALID);
    if (!strstr(err.text, want))
        fail_msg("error \"%s\" does not say \"%s\"", err.text, want);
    ty_error_clear(&err);
}

static void test_pytorch_workers_count_the_master(void **state)
{
    (void)state;
    submit_opts o = opts("pytorch", "ddp");
    o.workers = 3;
    o.gpus = 2;
    o.cpu = "1";
    o.memory = "2Gi";
    json_t *m = build_ok(&o);

    assert_string_equal(str_at(m, "apiVersion"), "kubeflow.org/v1");
    assert_string_equal(str_at(m, "kind"), "PyTorchJob");
    assert_string_equal(str_at(m, "metadata.name"), "ddp");
    assert_null(at(m, "metadata.namespace"));
    assert_int_equal(int_at(m, "spec.pytorchReplicaSpecs.Master.replicas"), 1);
    assert_int_equal(int_at(m, "spec.pytorchReplicaSpecs.Worker.replicas"), 2);
    assert_string_equal(str_at(m, "spec.pytorchReplicaSpecs.Worker.restartPolicy"), "Never");
    json_t *c = at(m, "spec.pytorchReplicaSpecs.Worker.template.spec.containers.0");
    assert_string_equal(str_at(c, "name"), "pytorch");
    assert_string_equal(str_at(c, "command.0"), "sh");
    assert_string_equal(str_at(c, "command.1"), "-c");
    assert_string_equal(str_at(c, "command.2"), "echo hi");
    assert_string_equal(str_at(c, "resources.limits.cpu"), "1");
    json_decref(m);
}

static void test_resources_and_summary(void **state)
{
    (void)state;
    submit_opts o = opts("pytorch", "ddp");
    o.workers = 3;
    o.gpus = 2;
    o.cpu = "1";
    o.memory = "2Gi";
    json_t *m = build_ok(&o);
    json_t *res = at(m, "spec.pytorchReplicaSpecs.Master.template.spec.containers.0.resources");
    char what[128];

    assert_string_equal(json_string_value(json_object_get(json_object_get(res, "limits"),
                                                          "nvidia.com/gpu")),
                        "2");
    assert_string_equal(str_at(res, "requests.cpu"), "1");
    assert_string_equal(str_at(res, "limits.cpu"), "1");
    assert_string_equal(str_at(res, "requests.memory"), "2Gi");
    assert_string_equal(str_at(res, "limits.memory"), "2Gi");
    assert_null(json_object_get(json_object_get(res, "requests"), "nvidia.com/gpu"));
    submit_describe(m, what, sizeof(what));
    assert_string_equal(what, "1 Master + 2 Workers");
    json_decref(m);
}

static void test_pytorch_single_and_nproc(void **state)
{
    (void)state;
    submit_opts o = opts("pytorch", "one");
    o.nproc_per_node = "4";
    json_t *m = build_ok(&o);
    assert_null(at(m, "spec.pytorchReplicaSpecs.Worker"));
    assert_string_equal(str_at(m, "spec.nprocPerNode"), "4");
    assert_null(at(m, "spec.runPolicy"));
    json_decref(m);

    o.nproc_per_node = "many";
    build_fails(&o, "--nproc-per-node");
    o.nproc_per_node = NULL;
    o.workers = 0;
    build_fails(&o, "--workers must be at least 1");
}

static void test_argv_command_and_env(void **state)
{
    (void)state;
    char *argv[] = {"python3", "-c", "print(1)"};
    submit_opts o = opts("jax", "j");
    o.shell = NULL;
    o.argv = argv;
    o.argc = 3;
    o.env[o.nenv++] = "A=1";
    o.env[o.nenv++] = "B=x=y";
    o.working_dir = "/tmp";
    o.workers = 2;
    json_t *m = build_ok(&o);
    json_t *c = at(m, "spec.jaxReplicaSpecs.Worker.template.spec.containers.0");

    assert_int_equal(int_at(m, "spec.jaxReplicaSpecs.Worker.replicas"), 2);
    assert_int_equal(json_array_size(at(c, "command")), 3);
    assert_string_equal(str_at(c, "command.2"), "print(1)");
    assert_string_equal(str_at(c, "env.1.name"), "B");
    assert_string_equal(str_at(c, "env.1.value"), "x=y");
    assert_string_equal(str_at(c, "workingDir"), "/tmp");
    assert_string_equal(str_at(c, "name"), "jax");
    assert_non_null(str_at(c, "image"));
    json_decref(m);

    char longkey[400];
    memset(longkey, 'K', 300);
    strcpy(longkey + 300, "=v");
    o.env[o.nenv++] = longkey;
    build_fails(&o, "--env: the key of \"KKKK");
    o.nenv--;
    o.env[o.nenv++] = "=nokey";
    build_fails(&o, "--env \"=nokey\": expected KEY=VALUE");
}

static void test_tf_roles(void **state)
{
    (void)state;
    submit_opts o = opts("tf", "tf");
    o.workers = 2;
    o.ps = 1;
    o.chief = true;
    o.evaluator = true;
    o.gpus = 1;
    json_t *m = build_ok(&o);
    char what[128];

    assert_string_equal(str_at(m, "kind"), "TFJob");
    assert_int_equal(int_at(m, "spec.tfReplicaSpecs.Chief.replicas"), 1);
    assert_int_equal(int_at(m, "spec.tfReplicaSpecs.PS.replicas"), 1);
    assert_int_equal(int_at(m, "spec.tfReplicaSpecs.Worker.replicas"), 2);
    assert_int_equal(int_at(m, "spec.tfReplicaSpecs.Evaluator.replicas"), 1);
    /* parameter servers hold variables, not GPUs */
    assert_null(at(m, "spec.tfReplicaSpecs.PS.template.spec.containers.0.resources"));
    assert_non_null(at(m, "spec.tfReplicaSpecs.Worker.template.spec.containers.0.resources"));
    assert_string_equal(str_at(m, "spec.tfReplicaSpecs.PS.template.spec.containers.0.name"),
                        "tensorflow");
    submit_describe(m, what, sizeof(what));
    assert_string_equal(what, "1 Chief + 1 PS + 2 Workers + 1 Evaluator");
    json_decref(m);

    o.workers = 0;
    o.chief = false;
    build_fails(&o, "--workers must be greater than 0");
}

static void test_mpi_v2beta1(void **state)
{
    (void)state;
    submit_opts o = opts("mpi", "mpi");
    o.workers = 2;
    o.gpus = 4;
    o.launcher_cpu = "500m";
    json_t *m = build_ok(&o);

    assert_string_equal(str_at(m, "apiVersion"), "kubeflow.org/v2beta1");
    assert_string_equal(str_at(m, "kind"), "MPIJob");
    assert_int_equal(int_at(m, "spec.slotsPerWorker"), 4);
    assert_int_equal(int_at(m, "spec.mpiReplicaSpecs.Launcher.replicas"), 1);
    assert_int_equal(int_at(m, "spec.mpiReplicaSpecs.Worker.replicas"), 2);
    json_t *l = at(m, "spec.mpiReplicaSpecs.Launcher.template.spec.containers.0");
    json_t *w = at(m, "spec.mpiReplicaSpecs.Worker.template.spec.containers.0");
    assert_string_equal(str_at(l, "command.2"), "echo hi");
    assert_string_equal(str_at(l, "resources.limits.cpu"), "500m");
    assert_null(json_object_get(json_object_get(json_object_get(l, "resources"), "limits"),
                                "nvidia.com/gpu"));
    assert_null(at(w, "command")); /* mpirun starts the ranks there */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(w, "resources"), "limits"),
                            "nvidia.com/gpu")),
                        "4");
    json_decref(m);

    o.slots = 2;
    m = build_ok(&o);
    assert_int_equal(int_at(m, "spec.slotsPerWorker"), 2);
    json_decref(m);
}

static void test_other_kubeflow_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *kind, *av, *k, *field, *first, *container;
    } cases[] = {
        {"xgboost", "kubeflow.org/v1", "XGBoostJob", "xgbReplicaSpecs", "Master", "xgboost"},
        {"paddle", "kubeflow.org/v1", "PaddleJob", "paddleReplicaSpecs", "Worker", "paddle"},
        {"mx", "kubeflow.org/v1", "MXJob", "mxReplicaSpecs", "Scheduler", "mxnet"},
        {"ms", "mindspore.gitee.com/v1", "MSJob", "msReplicaSpecs", "Scheduler", "mindspore"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        submit_opts o = opts(cases[i].kind, "j");
        o.workers = 2;
        json_t *m = build_ok(&o);
        char path[256];
        assert_string_equal(str_at(m, "apiVersion"), cases[i].av);
        assert_string_equal(str_at(m, "kind"), cases[i].k);
        snprintf(path, sizeof(path), "spec.%s.%s.template.spec.containers.0.name", cases[i].field,
                 cases[i].first);
        assert_string_equal(str_at(m, path), cases[i].container);
        json_decref(m);
    }
    submit_opts o = opts("mx", "j");
    json_t *m = build_ok(&o);
    assert_string_equal(str_at(m, "spec.jobMode"), "MXTrain");
    assert_int_equal(int_at(m, "spec.mxReplicaSpecs.Server.replicas"), 1);
    json_decref(m);
    o = opts("xgboost", "x");
    o.workers = 3;
    m = build_ok(&o);
    assert_int_equal(int_at(m, "spec.xgbReplicaSpecs.Worker.replicas"), 2);
    json_decref(m);
}

static void test_volcano_job(void **state)
{
    (void)state;
    submit_opts o = opts("volcano", "vc");
    o.workers = 3;
    o.queue = "research";
    o.retry = 2;
    o.ttl = 600;
    o.priority = "high";
    json_t *m = build_ok(&o);

    assert_string_equal(str_at(m, "apiVersion"), "batch.volcano.sh/v1alpha1");
    assert_string_equal(str_at(m, "kind"), "Job");
    assert_int_equal(int_at(m, "spec.minAvailable"), 3);
    assert_string_equal(str_at(m, "spec.schedulerName"), "volcano");
    assert_string_equal(str_at(m, "spec.queue"), "research");
    assert_string_equal(str_at(m, "spec.priorityClassName"), "high");
    assert_int_equal(int_at(m, "spec.maxRetry"), 2);
    assert_int_equal(int_at(m, "spec.ttlSecondsAfterFinished"), 600);
    assert_true(json_is_array(at(m, "spec.plugins.env")));
    assert_true(json_is_array(at(m, "spec.plugins.svc")));
    assert_string_equal(str_at(m, "spec.tasks.0.name"), "worker");
    assert_int_equal(int_at(m, "spec.tasks.0.replicas"), 3);
    assert_string_equal(str_at(m, "spec.tasks.0.template.spec.restartPolicy"), "OnFailure");
    assert_string_equal(str_at(m, "spec.tasks.0.template.spec.priorityClassName"), "high");
    json_decref(m);

    o = opts("volcano", "vc");
    o.ps = 1;
    o.workers = 2;
    m = build_ok(&o);
    assert_int_equal(int_at(m, "spec.minAvailable"), 3);
    assert_string_equal(str_at(m, "spec.tasks.0.name"), "ps");
    assert_string_equal(str_at(m, "spec.queue"), "default");
    json_decref(m);
}

static void test_run_policy_and_metadata(void **state)
{
    (void)state;
    submit_opts o = opts("pytorch", "p");
    o.ns = "team-a";
    o.retry = 3;
    o.ttl = 60;
    o.running_timeout = 3600;
    o.queue = "q1";
    o.priority = "high";
    o.clean_policy = "All";
    o.labels[o.nlabels++] = "team=vision";
    o.annotations[o.nannotations++] = "note=first run";
    json_t *m = build_ok(&o);

    assert_string_equal(str_at(m, "metadata.namespace"), "team-a");
    assert_int_equal(int_at(m, "spec.runPolicy.backoffLimit"), 3);
    assert_int_equal(int_at(m, "spec.runPolicy.ttlSecondsAfterFinished"), 60);
    assert_int_equal(int_at(m, "spec.runPolicy.activeDeadlineSeconds"), 3600);
    assert_string_equal(str_at(m, "spec.runPolicy.cleanPodPolicy"), "All");
    assert_string_equal(str_at(m, "spec.runPolicy.schedulingPolicy.queue"), "q1");
    assert_string_equal(str_at(m, "spec.runPolicy.schedulingPolicy.priorityClass"), "high");
    /* restarts are what --retry allows: OnFailure */
    assert_string_equal(str_at(m, "spec.pytorchReplicaSpecs.Master.restartPolicy"), "OnFailure");
    assert_string_equal(str_at(m, "metadata.labels.team"), "vision");
    assert_string_equal(str_at(m, "metadata.annotations.note"), "first run");
    json_t *t = at(m, "spec.pytorchReplicaSpecs.Master.template");
    assert_string_equal(str_at(t, "metadata.labels.team"), "vision");
    assert_string_equal(str_at(t, "spec.priorityClassName"), "high");
    json_decref(m);
    /* Arena's --running-timeout 0 (its default) is no timeout, not a deadline
     * of 0 s (the job failed at once) */
    o.running_timeout = 0;
    m = build_ok(&o);
    assert_null(at(m, "spec.runPolicy.activeDeadlineSeconds"));
    json_decref(m);
    o.running_timeout = 3600;

    o.clean_policy = "Sometimes";
    build_fails(&o, "--clean-task-policy \"Sometimes\"");
    o.clean_policy = NULL;
    o.labels[0] = "novalue";
    build_fails(&o, "--label \"novalue\": expected KEY=VALUE");
}

static void test_data_mounts(void **state)
{
    (void)state;
    submit_opts o = opts("paddle", "p");
    o.data[o.ndata++] = "training-data:/data";
    o.data[o.ndata++] = "/srv/imagenet:/imagenet";
    o.data_dir[o.ndata_dir++] = "/scratch";
    json_t *m = build_ok(&o);
    json_t *spec = at(m, "spec.paddleReplicaSpecs.Worker.template.spec");

    assert_string_equal(str_at(spec, "volumes.0.persistentVolumeClaim.claimName"),
                        "training-data");
    assert_string_equal(str_at(spec, "volumes.1.hostPath.path"), "/srv/imagenet");
    assert_string_equal(str_at(spec, "volumes.2.hostPath.path"), "/scratch");
    assert_string_equal(str_at(spec, "containers.0.volumeMounts.0.mountPath"), "/data");
    assert_string_equal(str_at(spec, "containers.0.volumeMounts.1.mountPath"), "/imagenet");
    assert_string_equal(str_at(spec, "containers.0.volumeMounts.2.mountPath"), "/scratch");
    assert_string_equal(str_at(spec, "containers.0.volumeMounts.2.name"),
                        str_at(spec, "volumes.2.name"));
    json_decref(m);

    o = opts("paddle", "p");
    o.data[o.ndata++] = "claim-without-path";
    build_fails(&o, "--data \"claim-without-path\": the mount path must be an absolute path");
    o = opts("paddle", "p");
    o.data_dir[o.ndata_dir++] = "relative:/x";
    build_fails(&o, "the host directory must be an absolute path");
}

static void test_usage_errors(void **state)
{
    (void)state;
    submit_opts o = opts("pytorch", NULL);
    build_fails(&o, "--name is required");
    o = opts("caffe", "c");
    build_fails(&o, "unknown kind \"caffe\": use one of pytorch tf mpi");
    o = opts("pytorch", "p");
    o.shell = NULL;
    build_fails(&o, "no command");
    o = opts("pytorch", "p");
    o.ps = 1;
    build_fails(&o, "--ps is not a flag of `submit pytorch`: only tf, mx, ms and volcano");
    o = opts("jax", "p");
    o.chief = true;
    build_fails(&o, "--chief is not a flag of `submit jax`");
    o = opts("tf", "p");
    o.launcher_memory = "1Gi";
    build_fails(&o, "--launcher-memory is not a flag of `submit tf`: only mpi");
    o = opts("pytorch", "p");
    o.cpu = "lots";
    build_fails(&o, "--cpu \"lots\" is not a quantity");
    o = opts("pytorch", "p");
    o.workers = 20000;
    build_fails(&o, "--workers must be at most");
    o = opts("pytorch", "p");
    o.working_dir = "code";
    build_fails(&o, "--working-dir \"code\" must be an absolute path");
    o = opts("volcano", "v");
    o.running_timeout = 5;
    build_fails(&o, "--running-timeout is not a flag of `submit volcano`: only the Kubeflow kinds");
    o = opts("mx", "m");
    o.ps = 2;
    o.chief = true; /* a valid --ps does not hide an invalid --chief */
    build_fails(&o, "--chief is not a flag of `submit mx`: only tf");
    o = opts("volcano", "v");
    o.ps = 2;
    json_t *m = build_ok(&o);
    char what[64];
    submit_describe(m, what, sizeof(what));
    assert_string_equal(what, "2 ps + 1 worker");
    json_decref(m);
}

static void test_parse_seconds(void **state)
{
    (void)state;
    int64_t s = -1;
    assert_int_equal(submit_parse_seconds("600", &s), 0);
    assert_int_equal(s, 600);
    assert_int_equal(submit_parse_seconds("1h30m", &s), 0);
    assert_int_equal(s, 5400);
    assert_int_equal(submit_parse_seconds("90s", &s), 0);
    assert_int_equal(s, 90);
    assert_int_equal(submit_parse_seconds("0", &s), 0);
    assert_int_equal(s, 0);
    assert_int_equal(submit_parse_seconds("-5", &s), -1);
    assert_int_equal(submit_parse_seconds("soon", &s), -1);
    assert_int_equal(submit_parse_seconds("", &s), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pytorch_workers_count_the_master),
        cmocka_unit_test(test_resources_and_summary),
        cmocka_unit_test(test_pytorch_single_and_nproc),
        cmocka_unit_test(test_argv_command_and_env),
        cmocka_unit_test(test_tf_roles),
        cmocka_unit_test(test_mpi_v2beta1),
        cmocka_unit_test(test_other_kubeflow_kinds),
        cmocka_unit_test(test_volcano_job),
        cmocka_unit_test(test_run_policy_and_metadata),
        cmocka_unit_test(test_data_mounts),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_parse_seconds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
