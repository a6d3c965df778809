/* test_trainer_ctl.c - the TrainJob controller's pure parts
 * (controller/trainer: plan.c, env.c, pods.c): names, the runtime merged
 * with the TrainJob's overrides, each framework's environment, the MPI
 * hostfile and pod edits, JobSet's labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/trainer.h"
#include "controller/trainer/tj_int.h"

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o)
        fail_msg("bad test JSON: %s (%s)", je.text, text);
    return o;
}

/* The snapshot of built-in runtime name. */
static json_t *builtin(const char *name)
{
    json_t *all = trainer_builtin_runtimes(), *rt, *snap = NULL;
    size_t i;

    json_array_foreach(all, i, rt)
        if (!strcmp(json_string_value(json_object_get(json_object_get(rt, "metadata"), "name")),
                    name))
            snap = tj_snapshot(rt);
    json_decref(all);
    assert_non_null(snap);
    return snap;
}

/* A TrainJob "j" in namespace ns1 with spec (JSON text). */
static json_t *trainjob(const char *spec)
{
    char buf[8192];

    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
             "\"metadata\":{\"name\":\"j\",\"namespace\":\"ns1\",\"uid\":\"u1\"},\"spec\":%s}",
             spec);
    return parse(buf);
}

static json_t *plan_of(const char *runtime, const char *spec)
{
    json_t *snap = builtin(runtime), *tj = trainjob(spec), *plan;
    ty_error err;

    ty_error_init(&err);
    plan = tj_plan(tj, snap, &err);
    assert_non_null(plan);
    json_decref(snap);
    json_decref(tj);
    return plan;
}

/* "NAME=VALUE ..." of a container's env (caller frees). */
static char *env_text(const json_t *container)
{
    char *out = calloc(1, 8192);
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(container, "env"), i, e) {
        size_t n = strlen(out);
        snprintf(out + n, 8192 - n, "%s%s=%s", n ? " " : "",
                 json_string_value(json_object_get(e, "name")),
                 json_string_value(json_object_get(e, "value")) ?: "<from>");
    }
    return out;
}

static json_t *container(json_t *pod, const char *name)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "name")), name))
            return c;
    fail_msg("no container %s", name);
    return NULL;
}

static json_t *pod_of(const json_t *plan, const char *rjob, long long j, long long i)
{
    json_t *tj = trainjob("{}"), *pod;

    pod = tj_build_pod(plan, tj, tj_plan_rjob(plan, rjob), j, i);
    json_decref(tj);
    return pod;
}

static const char *label(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "labels"), key));
}

static void test_pod_name(void **state)
{
    char buf[64];

    (void)state;
    tj_pod_name("job", "node", 0, 3, buf, sizeof(buf));
    assert_string_equal(buf, "job-node-0-3");
    tj_pod_name("job", "dataset-initializer", 1, 0, buf, sizeof(buf));
    assert_string_equal(buf, "job-dataset-initializer-1-0");
}

static void test_torch_plan_and_env(void **state)
{
    json_t *plan = plan_of("torch-distributed",
                           "{\"trainer\":{\"numNodes\":3,\"image\":\"my/img\",\"command\":[\"torchrun\","
                           "\"t.py\"],\"env\":[{\"name\":\"A\",\"value\":\"1\"}],"
                           "\"resourcesPerNode\":{\"limits\":{\"cpu\":\"2\"}}}}");
    json_t *pod, *c;
    char *env;

    (void)state;
    assert_string_equal(json_string_value(json_object_get(plan, "policy")), "torch");
    assert_int_equal(tj_plan_pods(plan), 3);
    pod = pod_of(plan, "node", 0, 2);
    c = container(pod, "node");
    assert_string_equal(json_string_value(json_object_get(c, "image")), "my/img");
    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "command"), 0)),
                        "torchrun");
    env = env_text(c);
    assert_string_equal(env, "A=1 PET_NNODES=3 PET_NPROC_PER_NODE=2 PET_NODE_RANK=2 "
                             "PET_MASTER_ADDR=j-node-0-0.j PET_MASTER_PORT=29500");
    free(env);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(c, "ports"), 0), "containerPort")), 29500);
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")),
                        "j-node-0-2");
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "spec"), "hostname")),
                        "j-node-0-2");
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "spec"), "subdomain")),
                        "j");
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "spec"),
                                                          "restartPolicy")), "Never");
    assert_string_equal(label(pod, TJ_LABEL_JOBSET), "j");
    assert_string_equal(label(pod, TJ_LABEL_RJOB), "node");
    assert_string_equal(label(pod, TJ_LABEL_JOB_INDEX), "0");
    assert_string_equal(label(pod, TJ_LABEL_COMPLETION), "2");
    assert_string_equal(label(pod, TJ_LABEL_JOB_NAME), "j-node-0");
    assert_string_equal(label(pod, TJ_LABEL_TRAINJOB), "j");
    assert_string_equal(label(pod, TJ_LABEL_RESTART_ATTEMPT), "0");
    assert_string_equal(label(pod, TRAINER_ANCESTOR_LABEL) ?: "(none)", "(none)");
    json_decref(pod);
    json_decref(plan);
}

/* Elastic: the bounds from the snapshot (the job's annotation) or the
 * runtime's v2.0 elasticPolicy; numNodes defaults to MAX and is held in
 * bounds; torchrun gets c10d rendezvous variables instead of a master. */
static void test_elastic(void **state)
{
    json_t *snap = builtin("torch-distributed"), *tj, *plan, *pod, *rt;
    ty_error err;
    char *env;
    long long lo = 0, hi = 0;

    (void)state;
    ty_error_init(&err);
    json_object_set_new(snap, "elastic", json_pack("{s:i, s:i}", "minNodes", 2, "maxNodes", 4));
    tj = trainjob("{\"trainer\":{\"command\":[\"torchrun\",\"t.py\"]}}");
    plan = tj_plan(tj, snap, &err);
    assert_non_null(plan);
    assert_int_equal(json_integer_value(json_object_get(plan, "numNodes")), 4);
    assert_int_equal(tj_plan_pods(plan), 4);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(plan, "elastic"),
                                                        "maxRestarts")), TJ_ELASTIC_RESTARTS);
    pod = pod_of(plan, "node", 0, 3);
    env = env_text(container(pod, "node"));
    assert_non_null(strstr(env, "PET_NNODES=2:4 "));
    assert_non_null(strstr(env, "PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT=j-node-0-0.j:29400 "
                                "PET_RDZV_ID=j PET_RDZV_CONF=is_host=0 PET_MAX_RESTARTS=3"));
    assert_null(strstr(env, "PET_MASTER_ADDR"));
    free(env);
    json_decref(pod);
    json_decref(plan);
    json_decref(tj);

    /* numNodes in bounds is kept; out of bounds (stored before) clamped */
    tj = trainjob("{\"trainer\":{\"numNodes\":3}}");
    plan = tj_plan(tj, snap, &err);
    assert_int_equal(tj_plan_pods(plan), 3);
    json_decref(plan);
    json_decref(tj);
    tj = trainjob("{\"trainer\":{\"numNodes\":9}}");
    plan = tj_plan(tj, snap, &err);
    assert_int_equal(tj_plan_pods(plan), 4);
    json_decref(plan);
    json_decref(tj);

    /* the runtime's elasticPolicy, a missing bound being numNodes */
    json_object_del(snap, "elastic");
    rt = json_object_get(json_object_get(json_object_get(snap, "spec"), "mlPolicy"), "torch");
    json_object_set_new(rt, "elasticPolicy",
                        json_pack("{s:i, s:i}", "maxNodes", 3, "maxRestarts", 5));
    tj = trainjob("{\"trainer\":{\"numNodes\":2}}");
    plan = tj_plan(tj, snap, &err);
    assert_int_equal(tj_plan_pods(plan), 2);
    pod = pod_of(plan, "node", 0, 0);
    env = env_text(container(pod, "node"));
    assert_non_null(strstr(env, "PET_NNODES=2:3 "));
    assert_non_null(strstr(env, "PET_RDZV_CONF=is_host=1 "));
    assert_non_null(strstr(env, "PET_MAX_RESTARTS=5"));
    free(env);
    json_decref(pod);
    json_decref(plan);
    json_decref(tj);

    /* not elastic: a plain torch job has no bounds */
    json_object_del(rt, "elasticPolicy");
    tj = trainjob("{\"trainer\":{\"numNodes\":2}}");
    plan = tj_plan(tj, snap, &err);
    assert_null(json_object_get(plan, "elastic"));
    json_decref(plan);
    json_decref(tj);
    json_decref(snap);

    /* the annotation's text */
    assert_int_equal(trainer_elastic_bounds("1:4", &lo, &hi), 0);
    assert_true(lo == 1 && hi == 4);
    assert_int_equal(trainer_elastic_bounds("3:3", &lo, &hi), 0);
    assert_int_equal(trainer_elastic_bounds("0:2", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("3:2", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("2", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("2:", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds(":2", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("1:2x", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("1:-2", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("1:10001", &lo, &hi), -1);
    assert_int_equal(trainer_elastic_bounds("1:99999999999999999999", &lo, &hi), -1);
}

/* JobSet's volumeClaimPolicies: a template a container mounts becomes a
 * volume on the claim <template>-<job>; one nobody mounts, or a volume the
 * template has itself, is left alone. */
static void test_claim_policies(void **state)
{
    json_t *snap = builtin("torch-distributed"), *tj, *plan, *vols;
    json_t *js = json_object_get(json_object_get(json_object_get(snap, "spec"), "template"),
                                 "spec");
    json_t *node = json_array_get(json_object_get(js, "replicatedJobs"), 0);
    json_t *c = json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(
                                   json_object_get(node, "template"), "spec"), "template"),
                                   "spec"), "containers"), 0);
    ty_error err;
    (void)state;

    json_object_set_new(c, "volumeMounts",
                        parse("[{\"name\":\"cache\",\"mountPath\":\"/cache\"},"
                              "{\"name\":\"own\",\"mountPath\":\"/own\"}]"));
    json_object_set_new(json_object_get(json_object_get(json_object_get(json_object_get(
                            node, "template"), "spec"), "template"), "spec"),
                        "volumes", parse("[{\"name\":\"own\",\"emptyDir\":{}}]"));
    json_object_set_new(js, "volumeClaimPolicies",
                        parse("[{\"templates\":[{\"metadata\":{\"name\":\"cache\"}},"
                              "{\"metadata\":{\"name\":\"unused\"}},"
                              "{\"metadata\":{\"name\":\"own\"}}]}]"));
    ty_error_init(&err);
    tj = trainjob("{\"trainer\":{\"numNodes\":1}}");
    plan = tj_plan(tj, snap, &err);
    assert_non_null(plan);
    vols = json_object_get(json_object_get(json_object_get(tj_plan_rjob(plan, "node"), "template"),
                                           "spec"), "volumes");
    assert_int_equal(json_array_size(vols), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(vols, 0), "name")), "own");
    assert_string_equal(json_string_value(json_object_get(json_object_get(
                            json_array_get(vols, 1), "persistentVolumeClaim"), "claimName")),
                        "cache-j");
    assert_int_equal(json_array_size(json_object_get(plan, "claimPolicies")), 1);
    json_decref(plan);
    json_decref(tj);
    json_decref(snap);
}

static void test_torch_procs(void **state)
{
    char buf[16];
    json_t *c;

    (void)state;
    tj_torch_procs("4", NULL, buf, sizeof(buf));
    assert_string_equal(buf, "4");
    tj_torch_procs("auto", NULL, buf, sizeof(buf));
    assert_string_equal(buf, "1");
    c = parse("{\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}");
    tj_torch_procs("auto", c, buf, sizeof(buf));
    assert_string_equal(buf, "1");
    json_decref(c);
    c = parse("{\"resources\":{\"limits\":{\"cpu\":\"3500m\"},\"requests\":{\"cpu\":\"1\"}}}");
    tj_torch_procs("auto", c, buf, sizeof(buf));
    assert_string_equal(buf, "3");
    json_decref(c);
    c = parse("{\"resources\":{\"limits\":{\"nvidia.com/gpu\":2}}}");
    tj_torch_procs("auto", c, buf, sizeof(buf));
    assert_string_equal(buf, "auto");
    json_decref(c);
}

static void test_runtime_patches(void **state)
{
    json_t *plan = plan_of(
        "torch-distributed",
        "{\"trainer\":{\"env\":[{\"name\":\"A\",\"value\":\"1\"}]},\"runtimePatches\":[{\"manager\":"
        "\"kueue.x-k8s.io/manager\",\"trainingRuntimeSpec\":{\"template\":{\"spec\":{"
        "\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{\"metadata\":"
        "{\"labels\":{\"l\":\"v\"}},\"spec\":{\"nodeSelector\":{\"zone\":\"a\"},\"tolerations\":[{"
        "\"key\":\"k\",\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"node\",\"env\":[{"
        "\"name\":\"A\",\"value\":\"2\"},{\"name\":\"B\",\"value\":\"3\"}]}]}}}}}]}}}}],"
        "\"podTemplateOverrides\":[{\"targetJobs\":[{\"name\":\"node\"}],\"spec\":{"
        "\"serviceAccountName\":\"sa\"}}]}");
    const json_t *tmpl = json_object_get(tj_plan_rjob(plan, "node"), "template");
    const json_t *spec = json_object_get(tmpl, "spec");
    char *env;

    (void)state;
    assert_string_equal(json_string_value(json_object_get(json_object_get(spec, "nodeSelector"),
                                                          "zone")), "a");
    assert_int_equal(json_array_size(json_object_get(spec, "tolerations")), 1);
    assert_string_equal(json_string_value(json_object_get(spec, "serviceAccountName")), "sa");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(tmpl, "metadata"), "labels"), "l")),
                        "v");
    env = env_text(json_array_get(json_object_get(spec, "containers"), 0));
    assert_string_equal(env, "A=2 B=3"); /* the patch comes after the trainer */
    free(env);
    json_decref(plan);
}

static void test_mpi(void **state)
{
    json_t *plan = plan_of("mpi-distributed",
                           "{\"trainer\":{\"numNodes\":2,\"image\":\"mpi/img\",\"command\":"
                           "[\"mpirun\",\"x\"]}}");
    json_t *node, *launcher, *c;
    char *text;

    (void)state;
    assert_int_equal(tj_plan_pods(plan), 3);
    text = tj_mpi_hostfile(plan, "j");
    assert_string_equal(text, "j-node-0-0.j slots=1\nj-node-0-1.j slots=1\n");
    free(text);
    node = pod_of(plan, "node", 0, 1);
    c = container(node, "node");
    assert_string_equal(json_string_value(json_object_get(c, "image")), "mpi/img");
    /* sshd gives way to an idle loop, its readiness probe with it */
    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "command"), 0)),
                        "/bin/sh");
    assert_null(json_object_get(c, "readinessProbe"));
    assert_null(json_object_get(c, "env"));
    launcher = pod_of(plan, "launcher", 0, 0);
    c = container(launcher, "launcher");
    assert_string_equal(json_string_value(json_array_get(json_object_get(c, "command"), 0)),
                        "mpirun");
    text = env_text(c);
    assert_non_null(strstr(text, "OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile "
                                 "OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10 "
                                 "OMPI_MCA_orte_keep_fqdn_hostnames=true "
                                 "OMPI_MCA_orte_set_default_slots=1"));
    free(text);
    text = json_dumps(json_object_get(json_object_get(launcher, "spec"), "volumes"), JSON_COMPACT);
    assert_non_null(strstr(text, "\"secretName\":\"j-mpi-ssh-auth\""));
    assert_non_null(strstr(text, "\"name\":\"j-mpi-hostfile\""));
    free(text);
    json_decref(node);
    json_decref(launcher);
    json_decref(plan);
}

static void test_launcher_as_node(void **state)
{
    json_t *plan = plan_of("deepspeed-distributed", "{\"trainer\":{\"numNodes\":3}}");
    char *text;

    (void)state;
    assert_int_equal(json_integer_value(json_object_get(tj_plan_rjob(plan, "node"), "pods")), 2);
    text = tj_mpi_hostfile(plan, "j");
    assert_string_equal(text, "j-launcher-0-0.j slots=1\nj-node-0-0.j slots=1\n"
                              "j-node-0-1.j slots=1\n");
    free(text);
    json_decref(plan);
}

static void check_env(const char *runtime, long long rank, const char *want)
{
    json_t *plan = plan_of(runtime, "{\"trainer\":{\"numNodes\":2}}");
    json_t *pod = pod_of(plan, "node", 0, rank);
    char *env = env_text(container(pod, "node"));

    assert_string_equal(env, want);
    free(env);
    json_decref(pod);
    json_decref(plan);
}

static void test_framework_env(void **state)
{
    (void)state;
    check_env("xgboost-distributed", 1,
              "DMLC_TRACKER_URI=j-node-0-0.j DMLC_TRACKER_PORT=29500 DMLC_TASK_ID=1 "
              "DMLC_NUM_WORKER=2");
    check_env("jax-distributed", 1,
              "JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=1 JAX_COORDINATOR_ADDRESS=j-node-0-0.j:29500");
    check_env("tensorflow-distributed", 1,
              "TF_CONFIG={\"cluster\":{\"worker\":[\"j-node-0-0.j:2222\",\"j-node-0-1.j:2222\"]},"
              "\"task\":{\"type\":\"worker\",\"index\":1},\"environment\":\"cloud\"}");
    check_env("paddle-distributed", 0,
              "PYTHONUNBUFFERED=1 PADDLE_JOB_ID=j PADDLE_NNODES=2 PADDLE_MASTER=j-node-0-0.j:36543");
    check_env("mindspore-distributed", 1,
              "MS_SCHED_HOST=j-node-0-0.j MS_SCHED_PORT=2222 MS_ROLE=MS_WORKER "
              "MS_NODE_ID=j-node-0-1.j MS_WORKER_NUM=2 MS_SERVER_NUM=0");
}

static void test_single_node_tf_has_no_cluster(void **state)
{
    json_t *plan = plan_of("tensorflow-distributed", "{}");
    json_t *pod = pod_of(plan, "node", 0, 0);

    (void)state;
    assert_null(json_object_get(container(pod, "node"), "env"));
    json_decref(pod);
    json_decref(plan);
}

static void test_initializers_and_deps(void **state)
{
    json_t *snap = parse(
        "{\"kind\":\"ClusterTrainingRuntime\",\"name\":\"tt\",\"framework\":\"torch\",\"spec\":{"
        "\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":["
        "{\"name\":\"dataset-initializer\",\"template\":{\"metadata\":{\"labels\":{"
        "\"trainer.kubeflow.org/trainjob-ancestor-step\":\"dataset-initializer\"}},\"spec\":{"
        "\"template\":{\"spec\":{\"containers\":[{\"name\":\"dataset-initializer\",\"image\":\"i\"}]}}}}},"
        "{\"name\":\"node\",\"dependsOn\":[{\"name\":\"dataset-initializer\",\"status\":\"Complete\"}],"
        "\"template\":{\"metadata\":{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":"
        "\"trainer\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\"}]}}}}}],"
        "\"successPolicy\":{\"operator\":\"All\",\"targetReplicatedJobs\":[\"node\"]}}}}}");
    json_t *tj = trainjob("{\"initializer\":{\"dataset\":{\"storageUri\":\"hf://x/y\",\"env\":[{"
                          "\"name\":\"E\",\"value\":\"v\"}]}},\"trainer\":{\"numNodes\":2}}");
    json_t *plan, *pod;
    ty_error err;
    char *env;

    (void)state;
    ty_error_init(&err);
    plan = tj_plan(tj, snap, &err);
    assert_non_null(plan);
    assert_int_equal(tj_plan_pods(plan), 3);
    assert_int_equal(json_array_size(json_object_get(tj_plan_rjob(plan, "node"), "dependsOn")), 1);
    pod = tj_build_pod(plan, tj, tj_plan_rjob(plan, "dataset-initializer"), 0, 0);
    env = env_text(container(pod, "dataset-initializer"));
    assert_string_equal(env, "STORAGE_URI=hf://x/y E=v");
    free(env);
    json_decref(pod);
    json_decref(plan);
    /* no replicated job: an error naming the runtime */
    json_object_set_new(json_object_get(json_object_get(json_object_get(snap, "spec"), "template"),
                                        "spec"), "replicatedJobs", json_array());
    assert_null(tj_plan(tj, snap, &err));
    assert_non_null(strstr(err.text, "ClusterTrainingRuntime tt has no replicated job"));
    ty_error_clear(&err);
    json_decref(tj);
    json_decref(snap);
}

/* An initializer the runtime has no step for: Trainyard's step, first,
 * fetching into the claim; the trainer waits for it and mounts the claim. */
static void test_added_initializer(void **state)
{
    json_t *plan = plan_of("torch-distributed",
                           "{\"initializer\":{\"dataset\":{\"storageUri\":\"file:///d/x.csv\"},"
                           "\"model\":{\"storageUri\":\"https://h/m.bin\"}},\"trainer\":{\"numNodes\":2}}");
    const json_t *rjobs = json_object_get(plan, "rjobs"), *node = tj_plan_rjob(plan, "node");
    json_t *pod;
    char *text;

    (void)state;
    assert_int_equal(json_array_size(rjobs), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rjobs, 0), "name")),
                        "dataset-initializer");
    assert_string_equal(json_string_value(json_object_get(json_array_get(rjobs, 1), "name")),
                        "model-initializer");
    assert_string_equal(json_string_value(json_object_get(plan, "initializerClaim")),
                        "j-initializer");
    text = json_dumps(json_object_get(node, "dependsOn"), JSON_COMPACT);
    assert_string_equal(text, "[{\"name\":\"model-initializer\",\"status\":\"Complete\"},"
                              "{\"name\":\"dataset-initializer\",\"status\":\"Complete\"}]");
    free(text);
    pod = pod_of(plan, "node", 0, 0);
    text = json_dumps(json_object_get(pod, "spec"), JSON_COMPACT);
    assert_non_null(strstr(text, "{\"name\":\"initializer\",\"persistentVolumeClaim\":{"
                                 "\"claimName\":\"j-initializer\"}}"));
    assert_non_null(strstr(text, "\"mountPath\":\"/workspace\""));
    free(text);
    json_decref(pod);
    pod = pod_of(plan, "dataset-initializer", 0, 0);
    text = env_text(container(pod, "dataset-initializer"));
    assert_string_equal(text, "STORAGE_URI=file:///d/x.csv DEST=/workspace/dataset");
    free(text);
    assert_string_equal(label(pod, TRAINER_ANCESTOR_LABEL), "dataset-initializer");
    json_decref(pod);
    assert_int_equal(tj_plan_pods(plan), 4);
    json_decref(plan);
}

static void test_failure_rules(void **state)
{
    json_t *plan = parse(
        "{\"failurePolicy\":{\"maxRestarts\":2,\"rules\":["
        "{\"name\":\"init\",\"action\":\"FailJobSet\",\"targetReplicatedJobs\":[\"dataset-initializer\"]},"
        "{\"name\":\"dl\",\"action\":\"FailJobSet\",\"onJobFailureReasons\":[\"DeadlineExceeded\"]},"
        "{\"name\":\"free\",\"action\":\"RestartJobSetAndIgnoreMaxRestarts\",\"targetReplicatedJobs\":[\"node\"],"
        "\"onJobFailureReasons\":[\"BackoffLimitExceeded\"]}]}}");
    const char *rule;

    (void)state;
    assert_int_equal(tj_failure_action(plan, "dataset-initializer", TJ_JOB_FAILURE_REASON, &rule),
                     TJ_FAIL_SET);
    assert_string_equal(rule, "init");
    assert_int_equal(tj_failure_action(plan, "node", "DeadlineExceeded", &rule), TJ_FAIL_SET);
    assert_string_equal(rule, "dl");
    assert_int_equal(tj_failure_action(plan, "node", TJ_JOB_FAILURE_REASON, &rule),
                     TJ_FAIL_RESTART_UNCOUNTED);
    assert_string_equal(rule, "free");
    assert_int_equal(tj_failure_action(plan, "launcher", TJ_JOB_FAILURE_REASON, &rule),
                     TJ_FAIL_RESTART);
    assert_null(rule);
    json_decref(plan);
}

static void test_mpi_slots_from_trainer(void **state)
{
    json_t *plan = plan_of("mpi-distributed", "{\"trainer\":{\"numNodes\":1,\"numProcPerNode\":4}}");
    char *text = tj_mpi_hostfile(plan, "j");

    (void)state;
    assert_string_equal(text, "j-node-0-0.j slots=4\n");
    free(text);
    json_decref(plan);
}

static void test_pods_bounded(void **state)
{
    json_t *snap = builtin("torch-distributed");
    json_t *tj = trainjob("{\"trainer\":{\"numNodes\":2000000000}}");
    ty_error err;

    (void)state;
    ty_error_init(&err);
    assert_null(tj_plan(tj, snap, &err));
    assert_int_equal(err.code, TY_EFORBIDDEN);
    assert_non_null(strstr(err.text, "more than 10000 pods"));
    ty_error_clear(&err);
    json_decref(tj);
    json_decref(snap);
}

static void test_template_queue(void **state)
{
    json_t *snap = builtin("torch-distributed"), *tj, *plan;
    ty_error err;

    (void)state;
    ty_error_init(&err);
    plan = plan_of("torch-distributed", "{}");
    assert_null(json_object_get(plan, "queue"));
    json_decref(plan);
    json_object_set_new(json_object_get(json_object_get(snap, "spec"), "template"), "metadata",
                        parse("{\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"rq\"}}"));
    tj = trainjob("{}");
    plan = tj_plan(tj, snap, &err);
    assert_string_equal(json_string_value(json_object_get(plan, "queue")), "rq");
    json_decref(plan);
    json_decref(tj);
    tj = trainjob("{\"runtimePatches\":[{\"manager\":\"m\",\"trainingRuntimeSpec\":{\"template\":"
                  "{\"metadata\":{\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"pq\"}}}}}]}");
    plan = tj_plan(tj, snap, &err);
    assert_string_equal(json_string_value(json_object_get(plan, "queue")), "pq");
    json_decref(plan);
    json_decref(tj);
    json_decref(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_name),
        cmocka_unit_test(test_torch_plan_and_env),
        cmocka_unit_test(test_torch_procs),
        cmocka_unit_test(test_elastic),
        cmocka_unit_test(test_claim_policies),
        cmocka_unit_test(test_runtime_patches),
        cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_launcher_as_node),
        cmocka_unit_test(test_framework_env),
        cmocka_unit_test(test_single_node_tf_has_no_cluster),
        cmocka_unit_test(test_initializers_and_deps),
        cmocka_unit_test(test_added_initializer),
        cmocka_unit_test(test_failure_rules),
        cmocka_unit_test(test_mpi_slots_from_trainer),
        cmocka_unit_test(test_pods_bounded),
        cmocka_unit_test(test_template_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
