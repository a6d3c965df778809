/* test_trainjob.c - Kubeflow Trainer v2's kinds (api/trainer.h): TrainJob,
 * TrainingRuntime and ClusterTrainingRuntime defaulting and validation with
 * field paths, the admission rules that read the runtime, the built-in
 * runtimes, and upstream's manifests (tests/data/trainer) accepted as they
 * are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/trainer.h"
#include "model/yaml.h"

static json_t *yaml(const char *text)
{
    ty_error err;
    json_t *o;

    ty_error_init(&err);
    o = yaml_load_one(text, strlen(text), &err);
    if (!o)
        fail_msg("yaml: %s", err.text);
    ty_error_clear(&err);
    return o;
}

/* The cause at field whose message holds want, or fails listing them all. */
static void expect_cause(const ty_error *err, const char *field, const char *want)
{
    json_t *c;
    size_t i;

    json_array_foreach(err->causes, i, c) {
        const char *f = meta_str(c, "field"), *m = meta_str(c, "message");
        if (f && m && strcmp(f, field) == 0 && strstr(m, want))
            return;
    }
    fail_msg("no cause %s: ...%s... in: %s", field, want, err->text);
}

/* api_prepare of obj (taken) as res on create (old NULL) or update. Returns
 * the error, which the caller clears. */
static ty_error prepare(const api_resource *res, json_t *obj, const json_t *old, json_t **out)
{
    ty_error err;

    ty_error_init(&err);
    obj = obj ? obj : json_object();
    if (old)
        json_object_set(json_object_get(obj, "metadata"), "namespace",
                        json_object_get(json_object_get(old, "metadata"), "namespace"));
    api_prepare(res, obj, old, &err);
    if (out)
        *out = obj;
    else
        json_decref(obj);
    return err;
}

static json_t *minimal_job(void)
{
    return yaml("apiVersion: trainer.kubeflow.org/v1alpha1\n"
                "kind: TrainJob\n"
                "metadata: {name: pytorch-simple, namespace: default}\n"
                "spec:\n"
                "  runtimeRef: {name: torch-distributed}\n"
                "  trainer:\n"
                "    numNodes: 2\n"
                "    image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727\n"
                "    command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]\n");
}

/* ---- TrainJob ------------------------------------------------------------- */

static void test_trainjob_defaults(void **state)
{
    json_t *obj, *spec, *ref;
    ty_error err;
    (void)state;

    err = prepare(&api_trainjob, minimal_job(), NULL, &obj);
    assert_int_equal(ty_error_ncauses(&err), 0);
    assert_int_equal(err.code, TY_OK);
    spec = json_object_get(obj, "spec");
    ref = json_object_get(spec, "runtimeRef");
    assert_string_equal(meta_str(ref, "apiGroup"), "trainer.kubeflow.org");
    assert_string_equal(meta_str(ref, "kind"), "ClusterTrainingRuntime");
    assert_true(json_is_false(json_object_get(spec, "suspend")));
    assert_string_equal(meta_str(spec, "managedBy"), "trainer.kubeflow.org/trainjob-controller");
    ty_error_clear(&err);
    json_decref(obj);
}

/* Sets spec.<key> of a minimal job to the YAML value and prepares it. */
static ty_error job_with(const char *key, const char *value)
{
    json_t *obj = minimal_job();
    json_object_set_new(json_object_get(obj, "spec"), key, yaml(value));
    return prepare(&api_trainjob, obj, NULL, NULL);
}

static void test_trainjob_field_errors(void **state)
{
    ty_error err;
    json_t *obj;
    (void)state;

    err = job_with("runtimeRef", "{name: torch-distributed, kind: JobSet, apiGroup: jobset.x-k8s.io}");
    assert_int_equal(err.code, TY_EINVALID);
    expect_cause(&err, "spec.runtimeRef.kind", "Unsupported value: \"JobSet\": supported values: "
                 "\"ClusterTrainingRuntime\", \"TrainingRuntime\"");
    expect_cause(&err, "spec.runtimeRef.apiGroup", "Unsupported value: \"jobset.x-k8s.io\"");
    assert_non_null(strstr(err.text, "TrainJob.trainer.kubeflow.org \"pytorch-simple\" is "
                           "invalid: ["));
    ty_error_clear(&err);

    err = job_with("runtimeRef", "{kind: TrainingRuntime}");
    expect_cause(&err, "spec.runtimeRef.name", "Required value");
    ty_error_clear(&err);

    obj = minimal_job();
    json_object_del(json_object_get(obj, "spec"), "runtimeRef");
    err = prepare(&api_trainjob, obj, NULL, NULL);
    expect_cause(&err, "spec.runtimeRef", "Required value");
    ty_error_clear(&err);

    err = job_with("trainer", "{numNodes: -1, numProcPerNode: 0, env: [{value: x}]}");
    expect_cause(&err, "spec.trainer.numNodes", "Invalid value: -1: spec.trainer.numNodes in body "
                 "should be greater than or equal to 0");
    expect_cause(&err, "spec.trainer.numProcPerNode", "greater than or equal to 1");
    expect_cause(&err, "spec.trainer.env[0].name", "Required value");
    ty_error_clear(&err);

    /* upstream's CRD: env a map by name, bounded lists and strings, int32 */
    err = job_with("trainer", "{numNodes: 2147483648, env: [{name: A, value: '1'}, "
                              "{name: A, value: '2'}, {name: 'A=B'}]}");
    expect_cause(&err, "spec.trainer.numNodes", "less than or equal to 2147483647");
    expect_cause(&err, "spec.trainer.env[1]", "Duplicate value: {\"name\":\"A\"}");
    expect_cause(&err, "spec.trainer.env[2].name", "a valid environment variable name");
    ty_error_clear(&err);
    {
        json_t *tr = json_pack("{s:[], s:[], s:[s], s:s}", "command", "env", "args", "x",
                               "image", "i");
        char *big = malloc(65538);
        assert_non_null(big);
        memset(big, 'a', 65537);
        big[65537] = 0;
        for (int i = 0; i < 129; i++) {
            json_array_append_new(json_object_get(tr, "command"), json_string("c"));
            char n[16];
            snprintf(n, sizeof(n), "E%d", i);
            json_array_append_new(json_object_get(tr, "env"), json_pack("{s:s}", "name", n));
        }
        json_array_append_new(json_object_get(tr, "args"), json_string(big));
        memset(big, 'i', 501);
        big[501] = 0;
        json_object_set_new(tr, "image", json_string(big));
        free(big);
        obj = minimal_job();
        json_object_set_new(json_object_get(obj, "spec"), "trainer", tr);
        err = prepare(&api_trainjob, obj, NULL, NULL);
        expect_cause(&err, "spec.trainer.command", "must have at most 128 items");
        expect_cause(&err, "spec.trainer.env", "must have at most 128 items");
        expect_cause(&err, "spec.trainer.args[1]", "must have at most 65536 bytes");
        expect_cause(&err, "spec.trainer.image", "must have at most 500 bytes");
        ty_error_clear(&err);
    }

    err = job_with("trainer", "{numProcPerNode: auto}");
    expect_cause(&err, "spec.trainer.numProcPerNode", "must be of type integer");
    ty_error_clear(&err);

    err = job_with("initializer", "{dataset: {storageUri: /no/scheme}, model: {secretRef: {}}}");
    expect_cause(&err, "spec.initializer.dataset.storageUri", "Invalid value: \"/no/scheme\": "
                 "spec.initializer.dataset.storageUri in body should match "
                 "'^[A-Za-z][A-Za-z0-9+.-]*://.+$'");
    expect_cause(&err, "spec.initializer.model.secretRef.name", "Required value");
    ty_error_clear(&err);

    err = job_with("activeDeadlineSeconds", "0");
    expect_cause(&err, "spec.activeDeadlineSeconds", "greater than or equal to 1");
    ty_error_clear(&err);

    err = job_with("managedBy", "example.com/mine");
    expect_cause(&err, "spec.managedBy", "Unsupported value: \"example.com/mine\"");
    ty_error_clear(&err);

    err = job_with("runtimePatches", "[{manager: a}, {manager: a}, {time: x}]");
    expect_cause(&err, "spec.runtimePatches[1].manager", "Duplicate value: \"a\"");
    expect_cause(&err, "spec.runtimePatches[2].manager", "Required value");
    ty_error_clear(&err);

    err = job_with("labels", "{\"bad key!\": x}");
    assert_int_equal(err.code, TY_EINVALID);
    ty_error_clear(&err);

    /* strict field validation names unknown fields by path */
    obj = minimal_job();
    json_object_set_new(json_object_get(json_object_get(obj, "spec"), "trainer"), "replicas",
                        json_integer(2));
    ty_error_init(&err);
    assert_int_equal(api_check_unknown_fields(&api_trainjob, obj, &err), 1);
    expect_cause(&err, "spec.trainer.replicas", "unknown field \"spec.trainer.replicas\"");
    ty_error_clear(&err);
    json_decref(obj);
}

static void test_trainjob_name(void **state)
{
    char longname[80];
    ty_error err;
    json_t *obj;
    (void)state;

    obj = minimal_job();
    json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("1st.job"));
    err = prepare(&api_trainjob, obj, NULL, NULL);
    expect_cause(&err, "metadata.name", "Invalid value: \"1st.job\": metadata.name must match "
                 "RFC 1035 DNS label format");
    ty_error_clear(&err);

    memset(longname, 'a', 64);
    longname[64] = '\0';
    obj = minimal_job();
    json_object_set_new(json_object_get(obj, "metadata"), "name", json_string(longname));
    err = prepare(&api_trainjob, obj, NULL, NULL);
    expect_cause(&err, "metadata.name", "metadata.name must be no more than 63 characters");
    ty_error_clear(&err);
}

static void test_trainjob_immutable(void **state)
{
    json_t *old, *obj;
    ty_error err;
    (void)state;

    err = prepare(&api_trainjob, minimal_job(), NULL, &old);
    assert_int_equal(err.code, TY_OK);
    ty_error_clear(&err);

    /* suspend may change (Kueue resumes a job); the trainer may not */
    obj = json_deep_copy(old);
    json_object_set_new(json_object_get(obj, "spec"), "suspend", json_true());
    err = prepare(&api_trainjob, obj, old, NULL);
    assert_int_equal(err.code, TY_OK);
    ty_error_clear(&err);

    obj = json_deep_copy(old);
    json_object_set_new(json_object_get(json_object_get(obj, "spec"), "trainer"), "numNodes",
                        json_integer(4));
    json_object_set_new(json_object_get(json_object_get(obj, "spec"), "runtimeRef"), "name",
                        json_string("jax-distributed"));
    err = prepare(&api_trainjob, obj, old, NULL);
    expect_cause(&err, "spec.trainer", "field is immutable");
    expect_cause(&err, "spec.runtimeRef", "field is immutable");
    ty_error_clear(&err);
    json_decref(old);
}

/* Trainyard's annotations are checked on every write: an update could set
 * a TTL the controller then ignored, or elastic bounds it could not use. */
static void test_trainjob_annotations_on_update(void **state)
{
    static const char *const bad[][3] = {
        {"trainyard.io/ttl-seconds-after-finished", "-7", "must be a whole number of seconds"},
        {"trainyard.io/elastic-nodes", "9:1", "must be MIN:MAX"},
        {"trainyard.io/elastic-nodes", "a:b", "must be MIN:MAX"},
    };
    json_t *old, *obj;
    ty_error err;
    char field[96];
    (void)state;

    err = prepare(&api_trainjob, minimal_job(), NULL, &old);
    assert_int_equal(err.code, TY_OK);
    ty_error_clear(&err);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        obj = json_deep_copy(old);
        json_object_set_new(json_object_get(obj, "metadata"), "annotations",
                            json_pack("{s:s}", bad[i][0], bad[i][1]));
        err = prepare(&api_trainjob, obj, old, NULL);
        snprintf(field, sizeof(field), "metadata.annotations[%s]", bad[i][0]);
        expect_cause(&err, field, bad[i][2]);
        ty_error_clear(&err);
    }
    /* bounds that leave out the job's numNodes (2) */
    obj = json_deep_copy(old);
    json_object_set_new(json_object_get(obj, "metadata"), "annotations",
                        json_pack("{s:s}", "trainyard.io/elastic-nodes", "3:4"));
    err = prepare(&api_trainjob, obj, old, NULL);
    expect_cause(&err, "spec.trainer.numNodes", "must be within the elastic bounds 3:4");
    ty_error_clear(&err);
    /* good ones pass */
    obj = json_deep_copy(old);
    json_object_set_new(json_object_get(obj, "metadata"), "annotations",
                        json_pack("{s:s, s:s}", "trainyard.io/elastic-nodes", "1:2",
                                  "trainyard.io/ttl-seconds-after-finished", "60"));
    err = prepare(&api_trainjob, obj, old, NULL);
    assert_int_equal(err.code, TY_OK);
    json_decref(old);
}

/* ---- runtimes ----------------------------------------------------------- */

static void test_runtime_defaults(void **state)
{
    json_t *obj, *spec, *mpi;
    ty_error err;
    (void)state;

    err = prepare(&api_clustertrainingruntime,
                  yaml("metadata: {name: r}\n"
                       "spec:\n"
                       "  mlPolicy: {mpi: {}}\n"
                       "  podGroupPolicy: {coscheduling: {}}\n"
                       "  template: {spec: {replicatedJobs: [{name: node}]}}\n"),
                  NULL, &obj);
    assert_int_equal(err.code, TY_OK);
    spec = json_object_get(obj, "spec");
    mpi = json_object_get(json_object_get(spec, "mlPolicy"), "mpi");
    assert_int_equal(meta_int(json_object_get(spec, "mlPolicy"), "numNodes", 0), 1);
    assert_int_equal(meta_int(mpi, "numProcPerNode", 0), 1);
    assert_string_equal(meta_str(mpi, "mpiImplementation"), "OpenMPI");
    assert_string_equal(meta_str(mpi, "sshAuthMountPath"), "/root/.ssh");
    assert_true(json_is_false(json_object_get(mpi, "runLauncherAsNode")));
    assert_int_equal(meta_int(json_object_get(json_object_get(spec, "podGroupPolicy"),
                                              "coscheduling"), "scheduleTimeoutSeconds", 0), 60);
    /* not stored: a default in a list makes kubectl apply resend the list */
    assert_null(json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(
        spec, "template"), "spec"), "replicatedJobs"), 0), "replicas"));
    assert_string_equal(meta_str(obj, "kind"), "ClusterTrainingRuntime");
    ty_error_clear(&err);
    json_decref(obj);
}

static void test_runtime_field_errors(void **state)
{
    ty_error err;
    (void)state;

    err = prepare(&api_trainingruntime,
                  yaml("metadata: {name: r, namespace: team}\n"
                       "spec:\n"
                       "  mlPolicy: {numNodes: 0, torch: {}, mpi: {mpiImplementation: LAM}}\n"
                       "  podGroupPolicy:\n"
                       "    coscheduling: {scheduleTimeoutSeconds: -1}\n"
                       "    volcano: {networkTopology: {mode: strict}}\n"
                       "  template:\n"
                       "    spec:\n"
                       "      successPolicy: {operator: Some, targetReplicatedJobs: [ghost]}\n"
                       "      failurePolicy: {maxRestarts: -2, restartStrategy: Never}\n"
                       "      replicatedJobs:\n"
                       "      - {name: node, replicas: -1}\n"
                       "      - name: node\n"
                       "      - name: launcher\n"
                       "        dependsOn: [{name: launcher, status: Ready},\n"
                       "                    {name: nowhere, status: Complete},\n"
                       "                    {name: node, status: Running}]\n"
                       "      - name: Bad_Name\n"),
                  NULL, NULL);
    assert_int_equal(err.code, TY_EINVALID);
    expect_cause(&err, "spec.mlPolicy.numNodes", "Invalid value: 0: spec.mlPolicy.numNodes in "
                 "body should be greater than or equal to 1");
    expect_cause(&err, "spec.mlPolicy", "Only one of the policy can be configured");
    expect_cause(&err, "spec.mlPolicy.mpi.mpiImplementation", "Unsupported value: \"LAM\": "
                 "supported values: \"OpenMPI\", \"Intel\", \"MPICH\"");
    expect_cause(&err, "spec.podGroupPolicy", "Only one of the policy can be configured");
    expect_cause(&err, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds",
                 "greater than or equal to 0");
    expect_cause(&err, "spec.podGroupPolicy.volcano.networkTopology.mode",
                 "supported values: \"hard\", \"soft\"");
    expect_cause(&err, "spec.template.spec.successPolicy.operator", "Unsupported value: \"Some\"");
    expect_cause(&err, "spec.template.spec.successPolicy.targetReplicatedJobs[0]",
                 "must name a replicated job of this template");
    expect_cause(&err, "spec.template.spec.failurePolicy.maxRestarts", "greater than or equal");
    expect_cause(&err, "spec.template.spec.failurePolicy.restartStrategy",
                 "Unsupported value: \"Never\"");
    expect_cause(&err, "spec.template.spec.replicatedJobs[0].replicas", "greater than or equal");
    expect_cause(&err, "spec.template.spec.replicatedJobs[1].name", "Duplicate value: \"node\"");
    expect_cause(&err, "spec.template.spec.replicatedJobs[2].dependsOn[0].name",
                 "cannot depend on itself");
    expect_cause(&err, "spec.template.spec.replicatedJobs[2].dependsOn[1].name",
                 "must name a replicated job of this template");
    expect_cause(&err, "spec.template.spec.replicatedJobs[2].dependsOn[2].status",
                 "Unsupported value: \"Running\": supported values: \"Ready\", \"Complete\"");
    expect_cause(&err, "spec.template.spec.replicatedJobs[3].name", "RFC 1123 label");
    assert_non_null(strstr(err.text, "TrainingRuntime.trainer.kubeflow.org \"r\" is invalid"));
    ty_error_clear(&err);

    /* jobs waiting on each other would wait for ever */
    err = prepare(&api_trainingruntime,
                  yaml("metadata: {name: r, namespace: team}\n"
                       "spec:\n"
                       "  template:\n"
                       "    spec:\n"
                       "      replicatedJobs:\n"
                       "      - {name: a, dependsOn: [{name: c, status: Complete}]}\n"
                       "      - {name: b, dependsOn: [{name: a, status: Complete}]}\n"
                       "      - {name: c, dependsOn: [{name: b, status: Ready}]}\n"
                       "      - {name: d, dependsOn: [{name: a, status: Ready}]}\n"),
                  NULL, NULL);
    assert_int_equal(err.code, TY_EINVALID);
    expect_cause(&err, "spec.template.spec.replicatedJobs[0].dependsOn",
                 "replicated jobs cannot depend on each other in a cycle");
    assert_int_equal(ty_error_ncauses(&err), 1);
    ty_error_clear(&err);
    /* a job listed before the one it waits on (upstream's deepspeed) is fine */
    err = prepare(&api_trainingruntime,
                  yaml("metadata: {name: r, namespace: team}\n"
                       "spec:\n"
                       "  template:\n"
                       "    spec:\n"
                       "      replicatedJobs:\n"
                       "      - {name: launcher, dependsOn: [{name: node, status: Ready}]}\n"
                       "      - {name: node}\n"),
                  NULL, NULL);
    assert_int_equal(err.code, TY_OK);

    /* cluster-scoped: a namespace is refused */
    err = prepare(&api_clustertrainingruntime, yaml("metadata: {name: r, namespace: x}\n"), NULL,
                  NULL);
    assert_int_equal(err.code, TY_EINVALID);
    ty_error_clear(&err);
}

/* ---- upstream's manifests and the built-in runtimes ----------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf;
    long len;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* Accepted unchanged: no unknown field, no type or rule broken. */
static void expect_accepted(json_t *obj, const char *what)
{
    const api_resource *res = api_find_kind(meta_str(obj, "apiVersion"), meta_str(obj, "kind"));
    ty_error err;

    if (!res)
        fail_msg("%s: no resource for %s", what, meta_str(obj, "kind"));
    ty_error_init(&err);
    if (res->namespaced && !meta_str(json_object_get(obj, "metadata"), "namespace"))
        json_object_set_new(json_object_get(obj, "metadata"), "namespace",
                            json_string("default"));
    if (api_check_unknown_fields(res, obj, &err) != 0)
        fail_msg("%s: unknown fields: %s", what,
                 meta_str(json_array_get(err.causes, 0), "message"));
    if (api_prepare(res, obj, NULL, &err) != 0)
        fail_msg("%s: refused: %s", what, err.text);
    ty_error_clear(&err);
}

static void test_upstream_manifests_accepted(void **state)
{
    static const char *const files[] = {
        "trainjob-minimal.yaml", "trainjob-full.yaml", "runtime-torchtune.yaml",
        "runtime-deepspeed.yaml", "trainingruntime-torch-v20.yaml", "trainjob-v21-overrides.yaml",
        NULL,
    };
    const char *tail = strstr(__FILE__, "tests/unit/test_trainjob.c");
    char path[4096];
    (void)state;

    assert_non_null(tail);
    for (size_t i = 0; files[i]; i++) {
        char *text;
        json_t *obj;
        snprintf(path, sizeof(path), "%.*stests/data/trainer/%s", (int)(tail - __FILE__),
                 __FILE__, files[i]);
        text = read_text(path);
        if (!text)
            fail_msg("cannot read %s", path);
        obj = yaml(text);
        expect_accepted(obj, files[i]);
        json_decref(obj);
        free(text);
    }
}

static void test_builtin_runtimes(void **state)
{
    static const char *const want[] = {
        "torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed",
        "xgboost-distributed", "tensorflow-distributed", "paddle-distributed",
        "mindspore-distributed", "mpi-distributed", NULL,
    };
    json_t *all = trainer_builtin_runtimes(), *rt;
    size_t i;
    (void)state;

    assert_int_equal(json_array_size(all), 9);
    json_array_foreach(all, i, rt) {
        json_t *md = json_object_get(rt, "metadata");
        const json_t *jobs;
        assert_string_equal(meta_str(md, "name"), want[i]);
        assert_non_null(meta_str(json_object_get(md, "labels"), TRAINER_FRAMEWORK_LABEL));
        expect_accepted(rt, want[i]);
        /* every runtime's trainer is the container `node` of replicated job `node` */
        jobs = json_object_get(json_object_get(json_object_get(json_object_get(rt, "spec"),
                                                               "template"), "spec"),
                               "replicatedJobs");
        assert_string_equal(meta_str(json_array_get(jobs, 0), "name"), "node");
    }
    json_decref(all);
}

/* ---- admission: the runtime a job names ------------------------------------ */

static json_t *runtimes; /* "<kind>/<ns>/<name>" -> object */

static json_t *get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    char key[256];
    (void)ctx;
    snprintf(key, sizeof(key), "%s/%s/%s", res->kind, ns, name);
    return json_incref(json_object_get(runtimes, key));
}

static size_t count(void *ctx, const api_resource *res,
                    bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    (void)ctx, (void)res, (void)filter, (void)arg;
    return 0;
}

static char warned[256];

static void warn(void *hook_ctx, const char *text)
{
    (void)hook_ctx;
    snprintf(warned, sizeof(warned), "%s", text);
}

static const api_lookup lk = {.get = get, .count = count, .warn = warn};

static ty_error admit_job(json_t *job)
{
    ty_error err;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_trainjob, job, NULL, &err), 0);
    api_admit(&lk, API_ADMIT_CREATE, &api_trainjob, job,
              meta_str(json_object_get(job, "metadata"), "name"), &err);
    json_decref(job);
    return err;
}

static void test_admit_runtime_lookup(void **state)
{
    json_t *all = trainer_builtin_runtimes(), *job;
    ty_error err;
    (void)state;

    runtimes = json_object();
    json_object_set(runtimes, "ClusterTrainingRuntime//torch-distributed", json_array_get(all, 0));
    json_object_set_new(runtimes, "TrainingRuntime/team/mine",
                        yaml("spec: {template: {spec: {replicatedJobs: "
                             "[{name: a-rather-long-replicated-job-name, replicas: 100}]}}}"));

    err = admit_job(minimal_job());
    assert_int_equal(err.code, TY_OK);
    ty_error_clear(&err);

    /* a runtime that does not exist: refused, at spec.runtimeRef */
    job = minimal_job();
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "runtimeRef"), "name",
                        json_string("ghost"));
    err = admit_job(job);
    assert_int_equal(err.code, TY_EINVALID);
    expect_cause(&err, "spec.runtimeRef", "clustertrainingruntimes.trainer.kubeflow.org "
                 "\"ghost\" not found: specified clusterTrainingRuntime must be created before "
                 "the TrainJob is created");
    assert_non_null(strstr(err.text, "TrainJob.trainer.kubeflow.org \"pytorch-simple\" is "
                           "invalid: spec.runtimeRef"));
    ty_error_clear(&err);

    /* a TrainingRuntime is the job's namespace's */
    job = minimal_job();
    json_object_set_new(json_object_get(job, "spec"), "runtimeRef",
                        yaml("{name: mine, kind: TrainingRuntime}"));
    err = admit_job(job);
    assert_int_equal(err.code, TY_EINVALID);
    expect_cause(&err, "spec.runtimeRef", "trainingruntimes.trainer.kubeflow.org \"mine\" not "
                 "found");
    ty_error_clear(&err);

    /* found there, but `<job>-<replicated job>-99` passes 63 characters */
    job = minimal_job();
    json_object_set_new(json_object_get(job, "metadata"), "namespace", json_string("team"));
    json_object_set_new(json_object_get(job, "metadata"), "name",
                        json_string("a-name-of-thirty-characters-x"));
    json_object_set_new(json_object_get(job, "spec"), "runtimeRef",
                        yaml("{name: mine, kind: TrainingRuntime}"));
    err = admit_job(job);
    expect_cause(&err, "metadata.name", "will exceed 63 characters");
    ty_error_clear(&err);

    /* `<job>-node-0-<index>`: 52 + 8 + 2 digits of numNodes 100 = 62 fits;
     * 1000 nodes (3 digits) with a 54-character name does not */
    job = minimal_job();
    json_object_set_new(json_object_get(job, "metadata"), "name",
                        json_string("a-job-name-of-fifty-two-characters-aaaaaaaaaaaaaaaaa"));
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "trainer"), "numNodes",
                        json_integer(100));
    err = admit_job(job);
    assert_int_equal(err.code, TY_OK);
    ty_error_clear(&err);
    job = minimal_job();
    json_object_set_new(json_object_get(job, "metadata"), "name",
                        json_string("a-job-name-of-fifty-four-characters-aaaaaaaaaaaaaaaaaa"));
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "trainer"), "numNodes",
                        json_integer(1000));
    err = admit_job(job);
    expect_cause(&err, "metadata.name", "pod host names generated for this TrainJob (65 "
                 "characters) will exceed 63 characters");
    ty_error_clear(&err);

    /* the torch runtime sets PET_*: a job may not */
    job = minimal_job();
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "trainer"), "env",
                        yaml("[{name: OK, value: x}, {name: PET_NODE_RANK, value: '3'}]"));
    err = admit_job(job);
    expect_cause(&err, "spec.trainer.env[1].name", "must not have reserved envs");
    ty_error_clear(&err);

    /* a deprecated runtime: admitted, with a warning */
    assert_string_equal(warned, "");
    json_object_set_new(runtimes, "ClusterTrainingRuntime//old",
                        yaml("metadata: {labels: {trainer.kubeflow.org/support: deprecated}}"));
    job = minimal_job();
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "runtimeRef"), "name",
                        json_string("old"));
    err = admit_job(job);
    assert_int_equal(err.code, TY_OK);
    assert_string_equal(warned, "ClusterTrainingRuntime \"old\" is deprecated and will be "
                        "removed in a future release");
    ty_error_clear(&err);

    json_decref(runtimes);
    json_decref(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trainjob_defaults),
        cmocka_unit_test(test_trainjob_field_errors),
        cmocka_unit_test(test_trainjob_name),
        cmocka_unit_test(test_trainjob_immutable),
        cmocka_unit_test(test_trainjob_annotations_on_update),
        cmocka_unit_test(test_runtime_defaults),
        cmocka_unit_test(test_runtime_field_errors),
        cmocka_unit_test(test_upstream_manifests_accepted),
        cmocka_unit_test(test_builtin_runtimes),
        cmocka_unit_test(test_admit_runtime_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
