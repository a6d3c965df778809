/* Unit tests of the Kubeflow job kinds: defaulting, validation (exact field
 * paths and messages), table cells and the descriptors the job engine reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/schema.h"
#include "base/timeutil.h"

/* Stand-ins so this test links without registry.c and schema.c; the real
 * definitions win whenever those objects are linked in. */
__attribute__((weak)) void api_age(const json_t *obj, time_t now, char *buf, size_t len)
{
    const char *ts = json_string_value(
        json_object_get(json_object_get(obj, "metadata"), "creationTimestamp"));
    time_t t;

    if (!ts || ty_time_parse(ts, &t) != 0) {
        snprintf(buf, len, "<unknown>");
        return;
    }
    ty_duration_human((int64_t)(now - t), buf, len);
}
__attribute__((weak)) const api_schema api_schema_pod_template_spec = {0};

/* ---- helpers ------------------------------------------------------------ */

/* JSON written with single quotes for readability. */
static json_t *J(const char *text)
{
    char *s = strdup(text);
    json_error_t jerr;
    json_t *v;

    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    v = json_loads(s, 0, &jerr);
    if (!v)
        print_error("bad test JSON (%s): %s\n", jerr.text, s);
    free(s);
    assert_non_null(v);
    return v;
}

/* A one-replica-type job with a container named `container`. */
static json_t *job(const char *kind, const char *map, const char *type, const char *container)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{'apiVersion': 'kubeflow.org/v1', 'kind': '%s', 'metadata': {'name': 'mnist', "
             "'namespace': 'default'}, 'spec': {'%s': {'%s': {'template': {'spec': "
             "{'containers': [{'name': '%s', 'image': 'img:1'}]}}}}}}",
             kind, map, type, container);
    return J(buf);
}

static json_t *at(json_t *root, const char *path)
{
    char buf[256], *save = NULL, *tok;
    json_t *v = root;

    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(v))
            v = json_array_get(v, (size_t)atoi(tok));
        else
            v = json_object_get(v, tok);
    }
    return v;
}

static const char *str_at(json_t *root, const char *path)
{
    return json_string_value(at(root, path));
}

static long long int_at(json_t *root, const char *path)
{
    json_t *v = at(root, path);
    if (!json_is_integer(v))
        fail_msg("%s is not an integer", path);
    return json_integer_value(v);
}

/* Defaults then validates through the api_resource, as api_prepare does. */
static int prepare(const api_resource *res, json_t *obj, const json_t *old, ty_error *err)
{
    ty_error_init(err);
    res->apply_defaults(obj);
    kf_default_ports(kf_kind_for_resource(res), obj);
    return res->validate(obj, old, err);
}

static void expect_ok(const api_resource *res, json_t *obj)
{
    ty_error err;
    int rc = prepare(res, obj, NULL, &err);
    if (rc != 0) {
        char *s = json_dumps(err.causes, JSON_COMPACT);
        print_error("%s rejected: %s\n", res->kind, s ? s : "(no causes)");
        free(s);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(ty_error_ncauses(&err), 0);
    ty_error_clear(&err);
}

/* The causes' fields must be exactly `fields` (as a multiset). */
static void expect_fields(const ty_error *err, const char *const *fields, size_t n)
{
    size_t got = ty_error_ncauses(err);
    bool used[16] = {false};

    if (got != n) {
        char *s = json_dumps(err->causes, JSON_COMPACT);
        print_error("want %zu causes, got %zu: %s\n", n, got, s ? s : "[]");
        free(s);
    }
    assert_int_equal(got, n);
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; j < got && !found; j++) {
            const char *f = json_string_value(
                json_object_get(json_array_get(err->causes, j), "field"));
            if (!used[j] && f && strcmp(f, fields[i]) == 0)
                found = used[j] = true;
        }
        if (!found)
            fail_msg("no cause for field %s", fields[i]);
    }
}
#define EXPECT_FIELDS(err, ...)                                                        \
    do {                                                                               \
        const char *const f_[] = {__VA_ARGS__};                                        \
        expect_fields((err), f_, sizeof(f_) / sizeof(f_[0]));                          \
    } while (0)

/* Prepares obj and expects a 422 whose causes name exactly the given fields. */
#define EXPECT_INVALID(res, obj, old, ...)                                             \
    do {                                                                               \
        ty_error e_;                                                                   \
        assert_int_equal(prepare((res), (obj), (old), &e_), -1);                       \
        assert_int_equal(e_.code, TY_EINVALID);                                        \
        EXPECT_FIELDS(&e_, __VA_ARGS__);                                               \
        ty_error_clear(&e_);                                                           \
    } while (0)

/* The message and reason of the only cause for `field`. */
static void expect_cause(const api_resource *res, json_t *obj, const json_t *old,
                         const char *field, const char *reason, const char *message)
{
    ty_error err;
    json_t *c;
    size_t i;
    int hits = 0;

    assert_int_equal(prepare(res, obj, old, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    json_array_foreach(err.causes, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "field")), field) != 0)
            continue;
        hits++;
        assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
        assert_string_equal(json_string_value(json_object_get(c, "message")), message);
    }
    assert_int_equal(hits, 1);
    ty_error_clear(&err);
}

/* ---- good examples ------------------------------------------------------ */

static const char *const good_tfjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'TFJob', 'metadata': {'name': 'dist-mnist'},"
    " 'spec': {'runPolicy': {'cleanPodPolicy': 'Running', 'backoffLimit': 3,"
    "  'schedulingPolicy': {'queue': 'research', 'minAvailable': 3}},"
    " 'tfReplicaSpecs': {"
    "  'PS': {'replicas': 1, 'restartPolicy': 'OnFailure', 'template': {'spec': {'containers':"
    "    [{'name': 'tensorflow', 'image': 'kubeflow/tf-dist-mnist-test:latest'}]}}},"
    "  'Worker': {'replicas': 2, 'restartPolicy': 'ExitCode', 'template': {'spec': {"
    "    'containers': [{'name': 'tensorflow', 'image': 'kubeflow/tf-dist-mnist-test:latest',"
    "     'resources': {'limits': {'nvidia.com/gpu': 1}}}]}}}}}}";

static const char *const good_pytorchjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'PyTorchJob', 'metadata': {'name': 'mnist'},"
    " 'spec': {'pytorchReplicaSpecs': {"
    "  'Master': {'replicas': 1, 'restartPolicy': 'OnFailure', 'template': {'spec': {"
    "    'containers': [{'name': 'pytorch', 'image': 'kubeflow/pytorch-mnist:v1',"
    "     'command': ['python3', '/opt/mnist/src/mnist.py', '--epochs=1']}]}}},"
    "  'Worker': {'replicas': 2, 'restartPolicy': 'OnFailure', 'template': {'spec': {"
    "    'containers': [{'name': 'pytorch', 'image': 'kubeflow/pytorch-mnist:v1'}]}}}}}}";

static const char *const good_elastic_pytorchjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'PyTorchJob', 'metadata': {'name': 'elastic'},"
    " 'spec': {'elasticPolicy': {'rdzvBackend': 'c10d', 'minReplicas': 1, 'maxReplicas': 3,"
    "  'maxRestarts': 100, 'rdzvConf': [{'key': 'timeout', 'value': '900'}]},"
    " 'nprocPerNode': '2', 'pytorchReplicaSpecs': {"
    "  'Worker': {'replicas': 2, 'template': {'spec': {"
    "    'containers': [{'name': 'pytorch', 'image': 'kubeflow/pytorch-elastic:latest'}]}}}}}}";

static const char *const good_mpijob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'MPIJob', 'metadata': {'name': 'tf-mnist'},"
    " 'spec': {'slotsPerWorker': 2, 'runPolicy': {'cleanPodPolicy': 'Running'},"
    " 'mpiReplicaSpecs': {"
    "  'Launcher': {'replicas': 1, 'template': {'spec': {'containers': [{'name': 'mpi',"
    "    'image': 'horovod/horovod:latest', 'command': ['mpirun', 'python', 'mnist.py']}]}}},"
    "  'Worker': {'replicas': 2, 'template': {'spec': {'containers': [{'name': 'mpi',"
    "    'image': 'horovod/horovod:latest'}]}}}}}}";

static const char *const good_xgboostjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'XGBoostJob', 'metadata': {'name': 'iris'},"
    " 'spec': {'xgbReplicaSpecs': {"
    "  'Master': {'replicas': 1, 'restartPolicy': 'Never', 'template': {'spec': {"
    "    'containers': [{'name': 'xgboost', 'image': 'docker.io/kubeflow/xgboost-dist-iris:latest',"
    "     'ports': [{'containerPort': 9991, 'name': 'xgboostjob-port'}]}]}}},"
    "  'Worker': {'replicas': 2, 'restartPolicy': 'ExitCode', 'template': {'spec': {"
    "    'containers': [{'name': 'xgboost', 'image': 'docker.io/kubeflow/xgboost-dist-iris:latest'}]"
    "  }}}}}}";

static const char *const good_paddlejob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'PaddleJob', 'metadata': {'name': 'paddle-simple'},"
    " 'spec': {'paddleReplicaSpecs': {"
    "  'Worker': {'replicas': 2, 'restartPolicy': 'OnFailure', 'template': {'spec': {"
    "    'containers': [{'name': 'paddle', 'image': 'registry.baidubce.com/paddle:2.4',"
    "     'command': ['python'], 'args': ['-m', 'paddle.distributed.launch', 'run_check']}]}}}}}}";

static const char *const good_jaxjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'JAXJob', 'metadata': {'name': 'jaxjob-simple'},"
    " 'spec': {'jaxReplicaSpecs': {"
    "  'Worker': {'replicas': 2, 'restartPolicy': 'OnFailure', 'template': {'spec': {"
    "    'containers': [{'name': 'jax', 'image': 'docker.io/kubeflow/jaxjob-simple:latest',"
    "     'command': ['python3', 'train.py']}]}}}}}}";

static const char *const good_mxjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'MXJob', 'metadata': {'name': 'mxnet-job'},"
    " 'spec': {'jobMode': 'MXTrain', 'mxReplicaSpecs': {"
    "  'Scheduler': {'replicas': 1, 'template': {'spec': {'containers': [{'name': 'mxnet',"
    "    'image': 'kubeflow/mxnet-gpu:latest'}]}}},"
    "  'Server': {'replicas': 1, 'template': {'spec': {'containers': [{'name': 'mxnet',"
    "    'image': 'kubeflow/mxnet-gpu:latest'}]}}},"
    "  'Worker': {'replicas': 1, 'template': {'spec': {'containers': [{'name': 'mxnet',"
    "    'image': 'kubeflow/mxnet-gpu:latest', 'command': ['python', 'train_mnist.py']}]}}}}}}";

static const char *const good_msjob =
    "{'apiVersion': 'mindspore.gitee.com/v1', 'kind': 'MSJob', 'metadata': {'name': 'ms-ps'},"
    " 'spec': {'successPolicy': 'AllWorkers', 'msReplicaSpecs': {"
    "  'Scheduler': {'replicas': 1, 'template': {'spec': {'containers': [{'name': 'mindspore',"
    "    'image': 'mindspore/mindspore-cpu:1.9.0'}]}}},"
    "  'PS': {'replicas': 1, 'template': {'spec': {'containers': [{'name': 'mindspore',"
    "    'image': 'mindspore/mindspore-cpu:1.9.0'}]}}},"
    "  'Worker': {'replicas': 4, 'template': {'spec': {'containers': [{'name': 'mindspore',"
    "    'image': 'mindspore/mindspore-cpu:1.9.0', 'command': ['python', 'train.py']}]}}}}}}";

static void test_good_examples_accepted(void **state)
{
    struct {
        const api_resource *res;
        const char *text;
    } cases[] = {
        {&api_tfjob, good_tfjob},         {&api_pytorchjob, good_pytorchjob},
        {&api_pytorchjob, good_elastic_pytorchjob},
        {&api_mpijob, good_mpijob},       {&api_xgboostjob, good_xgboostjob},
        {&api_paddlejob, good_paddlejob}, {&api_jaxjob, good_jaxjob},
        {&api_mxjob, good_mxjob},         {&api_msjob, good_msjob},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *obj = J(cases[i].text);
        expect_ok(cases[i].res, obj);
        json_decref(obj);
    }
}

/* ---- resources and descriptors ------------------------------------------ */

static void test_resource_names(void **state)
{
    struct {
        const api_resource *res;
        const char *group, *kind, *list_kind, *plural, *singular;
    } cases[] = {
        {&api_tfjob, "kubeflow.org", "TFJob", "TFJobList", "tfjobs", "tfjob"},
        {&api_pytorchjob, "kubeflow.org", "PyTorchJob", "PyTorchJobList", "pytorchjobs",
         "pytorchjob"},
        {&api_mpijob, "kubeflow.org", "MPIJob", "MPIJobList", "mpijobs", "mpijob"},
        {&api_xgboostjob, "kubeflow.org", "XGBoostJob", "XGBoostJobList", "xgboostjobs",
         "xgboostjob"},
        {&api_paddlejob, "kubeflow.org", "PaddleJob", "PaddleJobList", "paddlejobs",
         "paddlejob"},
        {&api_jaxjob, "kubeflow.org", "JAXJob", "JAXJobList", "jaxjobs", "jaxjob"},
        {&api_mxjob, "kubeflow.org", "MXJob", "MXJobList", "mxjobs", "mxjob"},
        {&api_msjob, "mindspore.gitee.com", "MSJob", "MSJobList", "msjobs", "msjob"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const api_resource *r = cases[i].res;
        assert_string_equal(r->group, cases[i].group);
        assert_string_equal(r->version, "v1");
        assert_string_equal(r->kind, cases[i].kind);
        assert_string_equal(r->list_kind, cases[i].list_kind);
        assert_string_equal(r->plural, cases[i].plural);
        assert_string_equal(r->singular, cases[i].singular);
        assert_null(r->short_names[0]);
        assert_null(r->categories[0]);
        assert_true(r->namespaced);
        assert_true(r->has_status);
        assert_false(r->builtin);
        assert_non_null(r->schema);
        assert_int_equal(r->ncolumns, 2);
        assert_string_equal(r->columns[0].name, "State");
        assert_string_equal(r->columns[0].type, "string");
        assert_string_equal(r->columns[1].name, "Age");
        assert_string_equal(r->columns[1].type, "date");
        /* The descriptor and the resource point at each other. */
        assert_ptr_equal(kf_kind_for_resource(r)->resource, r);
    }
}

static void test_descriptor_lookup(void **state)
{
    size_t n;
    const kf_kind *const *all = kf_kinds(&n);
    const kf_kind *pt = kf_kind_for("PyTorchJob");
    const kf_kind *mpi = kf_kind_for("MPIJob");
    const kf_kind *paddle = kf_kind_for("PaddleJob");

    (void)state;
    assert_int_equal(n, 10);
    /* By name and version, each kind but the mindspore.gitee.com MSJob,
     * whose name and version kubeflow.org's MSJob before it answers for
     * (test_msjob_v1.c). */
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(kf_kind_for_version(all[i]->kind, all[i]->resource->version),
                         all[i] == &kf_msjob ? &kf_msjob_v1 : all[i]);
    /* MPIJob is served in two versions: the name alone gives v1 */
    assert_ptr_equal(kf_kind_for("MPIJob"), &kf_mpijob);
    assert_ptr_equal(kf_kind_for_version("MPIJob", "v2beta1"), &kf_mpijob_v2);
    assert_null(kf_kind_for_version("MPIJob", "v3"));
    assert_null(kf_kind_for("Job"));
    assert_null(kf_kind_for(NULL));
    {
        static const api_resource other = {.kind = "Job"};
        assert_null(kf_kind_for_resource(&other));
    }

    assert_string_equal(pt->default_container, "pytorch");
    assert_string_equal(pt->port_name, "pytorchjob-port");
    assert_int_equal(pt->port, 23456);
    assert_string_equal(pt->default_restart_policy, "OnFailure");
    assert_string_equal(pt->operator_name, "pytorchjob-controller");
    assert_string_equal(kf_kind_for("TFJob")->operator_name, "tfjob-controller");
    assert_string_equal(kf_kind_for("MXJob")->port_name, "mxjob-port");
    assert_int_equal(kf_kind_for("MXJob")->port, 9091);
    assert_int_equal(kf_kind_for("JAXJob")->port, 6666);
    assert_string_equal(paddle->port_name, "master");
    assert_int_equal(paddle->port, 36543);
    assert_string_equal(kf_msjob.default_clean_pod_policy, "Running");

    assert_string_equal(kf_replica_type_canonical(kf_kind_for("TFJob"), "ps"), "PS");
    assert_string_equal(kf_replica_type_canonical(kf_kind_for("MXJob"), "tunertracker"),
                        "TunerTracker");
    assert_null(kf_replica_type_canonical(pt, "Launcher"));
    assert_int_equal(kf_replica_type_find(mpi, "Worker")->default_replicas, 0);
    assert_int_equal(kf_replica_type_find(mpi, "Launcher")->default_replicas, 1);
    assert_null(kf_replica_type_find(mpi, "worker"));
}

/* ---- defaulting --------------------------------------------------------- */

/* Every kind: lower-case keys become canonical and each replica gets its
 * replicas, restartPolicy and the port on the default container. */
static void test_defaults_every_kind(void **state)
{
    size_t n;
    const kf_kind *const *all = kf_kinds(&n);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        const kf_kind *k = all[i];
        if (k->engine_form)
            continue; /* stored as a list, defaulted in the engine: test_msjob_v1.c */
        json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {}}");
        json_t *map = json_object();
        char lower[32];

        json_object_set_new(json_object_get(obj, "spec"), k->replica_field, map);
        for (size_t t = 0; k->types[t].name; t++) {
            size_t j = 0;
            for (; k->types[t].name[j] && j < sizeof(lower) - 1; j++)
                lower[j] = (char)(k->types[t].name[j] | 0x20);
            lower[j] = '\0';
            json_t *r = J("{'template': {'spec': {'containers': [{'name': 'sidecar', "
                          "'image': 'a'}, {'name': 'X', 'image': 'b'}]}}}");
            json_object_set_new(at(r, "template.spec.containers.1"), "name",
                                json_string(k->default_container));
            json_object_set_new(map, lower, r);
        }
        k->resource->apply_defaults(obj);
        /* Stored defaults leave the container lists as written... */
        assert_null(at(json_object_get(json_object_get(at(obj, "spec"), k->replica_field),
                                       k->types[0].name),
                       "template.spec.containers.1.ports"));
        kf_default_ports(k, obj);
        map = at(obj, "spec");
        map = json_object_get(map, k->replica_field);
        for (size_t t = 0; k->types[t].name; t++) {
            json_t *r = json_object_get(map, k->types[t].name);
            if (!r)
                fail_msg("%s: %s not canonicalised", k->kind, k->types[t].name);
            assert_int_equal(int_at(r, "replicas"), k->types[t].default_replicas);
            assert_string_equal(str_at(r, "restartPolicy"),
                                k->types[t].default_restart_policy
                                    ? k->types[t].default_restart_policy
                                    : k->default_restart_policy);
            /* The port goes to the default container, not the first one. */
            assert_null(at(r, "template.spec.containers.0.ports"));
            assert_int_equal(json_array_size(at(r, "template.spec.containers.1.ports")), 1);
            assert_string_equal(str_at(r, "template.spec.containers.1.ports.0.name"),
                                k->port_name);
            assert_int_equal(int_at(r, "template.spec.containers.1.ports.0.containerPort"),
                             k->port);
            assert_int_equal(json_object_size(at(r, "template.spec.containers.1.ports.0")), 2);
        }
        /* No lower-case key is left behind. */
        size_t ntypes = 0;
        while (k->types[ntypes].name)
            ntypes++;
        assert_int_equal(json_object_size(map), ntypes);
        assert_string_equal(str_at(obj, "spec.runPolicy.cleanPodPolicy"),
                            k->default_clean_pod_policy);
        assert_true(json_is_false(at(obj, "spec.runPolicy.suspend")));
        if (k->has_success_policy)
            assert_string_equal(str_at(obj, "spec.successPolicy"), "");
        else
            assert_null(at(obj, "spec.successPolicy"));
        json_decref(obj);
    }
}

static void test_defaults_tfjob_keys_and_order(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {"
                    " 'chief': {'template': {'spec': {'containers': [{'name': 'tensorflow',"
                    "   'image': 'a'}]}}},"
                    " 'ps': {'replicas': 2, 'restartPolicy': 'Always', 'template': {'spec':"
                    "   {'containers': [{'name': 'tensorflow', 'image': 'a'}]}}},"
                    " 'WORKER': {'replicas': 4, 'template': {'spec': {'containers':"
                    "   [{'name': 'tensorflow', 'image': 'a'}]}}}}}}");
    const char *want[] = {"Chief", "PS", "Worker"};
    const char *key;
    json_t *v;
    size_t i = 0;

    (void)state;
    expect_ok(&api_tfjob, obj);
    json_object_foreach(at(obj, "spec.tfReplicaSpecs"), key, v) {
        assert_true(i < 3);
        assert_string_equal(key, want[i++]);
    }
    assert_int_equal(i, 3);
    /* User values are kept. */
    assert_int_equal(int_at(obj, "spec.tfReplicaSpecs.PS.replicas"), 2);
    assert_string_equal(str_at(obj, "spec.tfReplicaSpecs.PS.restartPolicy"), "Always");
    assert_int_equal(int_at(obj, "spec.tfReplicaSpecs.Worker.replicas"), 4);
    assert_int_equal(int_at(obj, "spec.tfReplicaSpecs.Chief.replicas"), 1);
    assert_string_equal(str_at(obj, "spec.tfReplicaSpecs.Chief.restartPolicy"), "Never");
    assert_string_equal(str_at(obj, "spec.successPolicy"), "");
    json_decref(obj);
}

/* A key that differs from a replica type only in case replaces the
 * canonical one when both are there, as upstream's defaulting does: kubectl
 * apply of a manifest naming `worker` patches `worker` over the stored
 * `Worker`, and re-applying the file was refused with 422 (Unsupported
 * value) when both were kept. */
static void test_defaults_lowercase_key_replaces_canonical(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {'pytorchReplicaSpecs': {"
                    " 'Worker': {'replicas': 1, 'template': {'spec': {'containers':"
                    "   [{'name': 'pytorch', 'image': 'old'}]}}},"
                    " 'worker': {'replicas': 3, 'template': {'spec': {'containers':"
                    "   [{'name': 'pytorch', 'image': 'new'}]}}}}}}");
    (void)state;
    expect_ok(&api_pytorchjob, obj);
    assert_int_equal(json_object_size(at(obj, "spec.pytorchReplicaSpecs")), 1);
    assert_int_equal(int_at(obj, "spec.pytorchReplicaSpecs.Worker.replicas"), 3);
    assert_string_equal(str_at(obj, "spec.pytorchReplicaSpecs.Worker.template.spec.containers.0."
                                    "image"),
                        "new");
    json_decref(obj);

    /* every kind with replica types */
    size_t nk;
    const kf_kind *const *all = kf_kinds(&nk);
    for (size_t i = 0; i < nk; i++) {
        const kf_kind *k = all[i];
        for (size_t t = 0; !k->engine_form && k->types[t].name; t++) {
            char lower[32];
            size_t j = 0;
            json_t *o = J("{'metadata': {'name': 'x'}, 'spec': {}}"), *m = json_object();
            for (; k->types[t].name[j] && j < sizeof(lower) - 1; j++)
                lower[j] = (char)(k->types[t].name[j] | 0x20);
            lower[j] = '\0';
            json_object_set_new(json_object_get(o, "spec"), k->replica_field, m);
            json_object_set_new(m, k->types[t].name, J("{'replicas': 2}"));
            json_object_set_new(m, lower, J("{'replicas': 7}"));
            k->resource->apply_defaults(o);
            m = json_object_get(at(o, "spec"), k->replica_field);
            if (json_object_size(m) != 1 ||
                int_at(json_object_get(m, k->types[t].name), "replicas") != 7)
                fail_msg("%s: %s not replaced by %s", k->kind, k->types[t].name, lower);
            json_decref(o);
        }
    }
}

static void test_defaults_port_not_duplicated_and_idempotent(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {'pytorchReplicaSpecs': {"
                    " 'Master': {'template': {'spec': {'containers': [{'name': 'pytorch',"
                    "   'image': 'a', 'ports': [{'name': 'pytorchjob-port', 'containerPort': 3000},"
                    "   {'name': 'metrics', 'containerPort': 8080}]}]}}}}}}");
    json_t *copy;

    (void)state;
    expect_ok(&api_pytorchjob, obj);
    assert_int_equal(json_array_size(at(obj, "spec.pytorchReplicaSpecs.Master.template.spec."
                                             "containers.0.ports")),
                     2);
    assert_int_equal(int_at(obj, "spec.pytorchReplicaSpecs.Master.template.spec.containers.0."
                                 "ports.0.containerPort"),
                     3000);
    copy = json_deep_copy(obj);
    api_pytorchjob.apply_defaults(obj);
    kf_default_ports(&kf_pytorchjob, obj);
    assert_true(json_equal(obj, copy));
    json_decref(copy);
    json_decref(obj);
}

/* Without a container of the default name the first one gets the port, and
 * validation then asks for the default container. */
static void test_defaults_port_on_first_container(void **state)
{
    json_t *obj = job("JAXJob", "jaxReplicaSpecs", "Worker", "main");

    (void)state;
    expect_cause(&api_jaxjob, obj, NULL, "spec.jaxReplicaSpecs.Worker.template.spec.containers",
                 "FieldValueRequired",
                 "Required value: must have at least one container with name jax");
    assert_string_equal(
        str_at(obj, "spec.jaxReplicaSpecs.Worker.template.spec.containers.0.ports.0.name"),
        "jaxjob-port");
    assert_int_equal(int_at(obj, "spec.jaxReplicaSpecs.Worker.template.spec.containers.0.ports.0."
                                 "containerPort"),
                     6666);
    json_decref(obj);
}

static void test_defaults_keep_user_run_policy(void **state)
{
    json_t *obj = J(good_tfjob);

    (void)state;
    expect_ok(&api_tfjob, obj);
    assert_string_equal(str_at(obj, "spec.runPolicy.cleanPodPolicy"), "Running");
    assert_int_equal(int_at(obj, "spec.runPolicy.backoffLimit"), 3);
    assert_string_equal(str_at(obj, "spec.runPolicy.schedulingPolicy.queue"), "research");
    assert_string_equal(str_at(obj, "spec.tfReplicaSpecs.Worker.restartPolicy"), "ExitCode");
    json_decref(obj);
}

static void test_defaults_pytorch(void **state)
{
    json_t *obj = J(good_pytorchjob);
    json_t *el;

    (void)state;
    expect_ok(&api_pytorchjob, obj);
    assert_string_equal(str_at(obj, "spec.nprocPerNode"), "auto");
    assert_string_equal(str_at(obj, "spec.pytorchReplicaSpecs.Worker.restartPolicy"),
                        "OnFailure");
    assert_string_equal(str_at(obj, "spec.runPolicy.cleanPodPolicy"), "None");
    assert_null(at(obj, "spec.elasticPolicy"));
    json_decref(obj);

    /* Elastic bounds from the Worker replicas. */
    obj = J("{'metadata': {'name': 'e'}, 'spec': {'elasticPolicy': {'rdzvBackend': 'etcd'},"
            " 'pytorchReplicaSpecs': {'worker': {'replicas': 3, 'template': {'spec':"
            " {'containers': [{'name': 'pytorch', 'image': 'a'}]}}}}}}");
    expect_ok(&api_pytorchjob, obj);
    assert_int_equal(int_at(obj, "spec.elasticPolicy.minReplicas"), 3);
    assert_int_equal(int_at(obj, "spec.elasticPolicy.maxReplicas"), 3);
    assert_string_equal(str_at(obj, "spec.nprocPerNode"), "auto");
    json_decref(obj);

    /* One bound given: the other copies it. */
    obj = J("{'metadata': {'name': 'e'}, 'spec': {'elasticPolicy': {'maxReplicas': 5},"
            " 'pytorchReplicaSpecs': {'Worker': {'replicas': 2, 'template': {'spec':"
            " {'containers': [{'name': 'pytorch', 'image': 'a'}]}}}}}}");
    expect_ok(&api_pytorchjob, obj);
    assert_int_equal(int_at(obj, "spec.elasticPolicy.minReplicas"), 5);
    json_decref(obj);
    obj = J("{'metadata': {'name': 'e'}, 'spec': {'elasticPolicy': {'minReplicas': 2},"
            " 'pytorchReplicaSpecs': {'Worker': {'replicas': 4, 'template': {'spec':"
            " {'containers': [{'name': 'pytorch', 'image': 'a'}]}}}}}}");
    expect_ok(&api_pytorchjob, obj);
    assert_int_equal(int_at(obj, "spec.elasticPolicy.maxReplicas"), 2);
    json_decref(obj);

    /* The deprecated elasticPolicy.nProcPerNode suppresses the "auto" default. */
    obj = J("{'metadata': {'name': 'e'}, 'spec': {'elasticPolicy': {'nProcPerNode': 4},"
            " 'pytorchReplicaSpecs': {'Worker': {'template': {'spec':"
            " {'containers': [{'name': 'pytorch', 'image': 'a'}]}}}}}}");
    expect_ok(&api_pytorchjob, obj);
    assert_null(at(obj, "spec.nprocPerNode"));
    el = at(obj, "spec.elasticPolicy");
    assert_int_equal(int_at(el, "minReplicas"), 1);
    assert_int_equal(int_at(el, "maxReplicas"), 1);
    json_decref(obj);
}

static void test_defaults_mpi(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'm'}, 'spec': {'mpiReplicaSpecs': {"
                    " 'launcher': {'template': {'spec': {'containers': [{'name': 'mpi',"
                    "   'image': 'a'}]}}},"
                    " 'worker': {'template': {'spec': {'containers': [{'name': 'mpi',"
                    "   'image': 'a'}]}}}}}}");

    (void)state;
    expect_ok(&api_mpijob, obj);
    assert_int_equal(int_at(obj, "spec.mpiReplicaSpecs.Launcher.replicas"), 1);
    assert_int_equal(int_at(obj, "spec.mpiReplicaSpecs.Worker.replicas"), 0);
    assert_string_equal(str_at(obj, "spec.mpiReplicaSpecs.Worker.restartPolicy"), "Never");
    assert_int_equal(int_at(obj, "spec.slotsPerWorker"), 1);
    assert_string_equal(str_at(obj, "spec.runPolicy.cleanPodPolicy"), "None");
    assert_string_equal(str_at(obj, "spec.cleanPodPolicy"), "None");
    assert_int_equal(kf_replicas(&kf_mpijob, obj, "Worker"), 0);
    assert_int_equal(kf_replicas(&kf_mpijob, obj, "Launcher"), 1);
    json_decref(obj);

    /* The deprecated spec.cleanPodPolicy carries into runPolicy. */
    obj = J(good_mpijob);
    json_object_del(at(obj, "spec"), "runPolicy");
    json_object_set_new(at(obj, "spec"), "cleanPodPolicy", json_string("All"));
    expect_ok(&api_mpijob, obj);
    assert_string_equal(str_at(obj, "spec.runPolicy.cleanPodPolicy"), "All");
    assert_int_equal(int_at(obj, "spec.slotsPerWorker"), 2);
    json_decref(obj);
}

static void test_defaults_mx_ms_paddle(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'm'}, 'spec': {'mxReplicaSpecs': {"
                    " 'tunertracker': {'template': {'spec': {'containers': [{'name': 'mxnet',"
                    "   'image': 'a'}]}}}}}}");

    (void)state;
    expect_ok(&api_mxjob, obj);
    assert_string_equal(str_at(obj, "spec.jobMode"), "MXTrain");
    assert_int_equal(int_at(obj, "spec.mxReplicaSpecs.TunerTracker.replicas"), 1);
    json_decref(obj);

    obj = J("{'metadata': {'name': 'm'}, 'spec': {'msReplicaSpecs': {"
            " 'worker': {'replicas': 2, 'template': {'spec': {'containers': [{'name': 'mindspore',"
            "   'image': 'a'}]}}}}}}");
    expect_ok(&api_msjob, obj);
    assert_string_equal(str_at(obj, "spec.runPolicy.cleanPodPolicy"), "Running");
    assert_string_equal(str_at(obj, "spec.successPolicy"), "");
    assert_string_equal(
        str_at(obj, "spec.msReplicaSpecs.Worker.template.spec.containers.0.ports.0.name"),
        "msjob-port");
    assert_int_equal(int_at(obj, "spec.msReplicaSpecs.Worker.template.spec.containers.0.ports.0."
                                 "containerPort"),
                     2222);
    json_decref(obj);

    obj = J(good_paddlejob);
    expect_ok(&api_paddlejob, obj);
    assert_string_equal(
        str_at(obj, "spec.paddleReplicaSpecs.Worker.template.spec.containers.0.ports.0.name"),
        "master");
    assert_int_equal(int_at(obj, "spec.paddleReplicaSpecs.Worker.template.spec.containers.0."
                                 "ports.0.containerPort"),
                     36543);
    json_decref(obj);
}

/* Malformed objects must not crash defaulting; validation reports them. */
static void test_defaults_tolerate_garbage(void **state)
{
    const char *texts[] = {
        "{}",
        "{'spec': 3}",
        "{'spec': {'pytorchReplicaSpecs': []}}",
        "{'spec': {'runPolicy': 'x', 'pytorchReplicaSpecs': {'Worker': null, 'Master': 4}}}",
        "{'spec': {'pytorchReplicaSpecs': {'Worker': {'template': {'spec': {'containers': 7}}}}}}",
        ("{'spec': {'pytorchReplicaSpecs': {'Worker': {'template': {'spec': {'containers':"
         " [3, {'name': 'pytorch', 'ports': 'x'}]}}}}}}"),
        "{'spec': {'elasticPolicy': 5, 'pytorchReplicaSpecs': {}}}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *obj = J(texts[i]);
        ty_error err;
        assert_int_equal(prepare(&api_pytorchjob, obj, NULL, &err), -1);
        assert_true(ty_error_ncauses(&err) > 0);
        ty_error_clear(&err);
        json_decref(obj);
    }
}

/* ---- validation: common rules ------------------------------------------ */

static void test_validate_name(void **state)
{
    json_t *obj = J(good_pytorchjob);
    char long_name[70];

    (void)state;
    json_object_set_new(at(obj, "metadata"), "name", json_string("1mnist"));
    expect_cause(&api_pytorchjob, obj, NULL, "metadata.name", "FieldValueInvalid",
                 "Invalid value: \"1mnist\": should match: a DNS-1035 label must consist of "
                 "lower case alphanumeric characters or '-', start with an alphabetic "
                 "character, and end with an alphanumeric character (e.g. 'my-name',  or "
                 "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
    json_object_set_new(at(obj, "metadata"), "name", json_string("my.job"));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL, "metadata.name");
    json_object_set_new(at(obj, "metadata"), "name", json_string("job-"));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL, "metadata.name");
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    json_object_set_new(at(obj, "metadata"), "name", json_string(long_name));
    {
        char want[200];
        snprintf(want, sizeof(want), "Invalid value: \"%s\": should match: must be no more "
                 "than 63 characters", long_name);
        expect_cause(&api_pytorchjob, obj, NULL, "metadata.name", "FieldValueInvalid", want);
    }
    long_name[63] = '\0';
    json_object_set_new(at(obj, "metadata"), "name", json_string(long_name));
    expect_ok(&api_pytorchjob, obj);
    json_decref(obj);
}

static void test_validate_replica_map_required(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {}}");

    (void)state;
    expect_cause(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs", "FieldValueRequired",
                 "Required value: must be required");
    json_decref(obj);
    obj = J("{'metadata': {'name': 'x'}, 'spec': {'tfReplicaSpecs': {}}}");
    EXPECT_INVALID(&api_tfjob, obj, NULL, "spec.tfReplicaSpecs");
    json_decref(obj);
    obj = J("{'metadata': {'name': 'x'}}");
    EXPECT_INVALID(&api_jaxjob, obj, NULL, "spec");
    json_decref(obj);
}

static void test_validate_unknown_replica_type(void **state)
{
    json_t *obj = J(good_pytorchjob);

    (void)state;
    json_object_set(at(obj, "spec.pytorchReplicaSpecs"), "Foo",
                    at(obj, "spec.pytorchReplicaSpecs.Worker"));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs.Foo",
                 "FieldValueNotSupported",
                 "Unsupported value: \"Foo\": supported values: \"Master\", \"Worker\"");
    json_decref(obj);

    obj = job("JAXJob", "jaxReplicaSpecs", "Master", "jax");
    expect_cause(&api_jaxjob, obj, NULL, "spec.jaxReplicaSpecs.Master", "FieldValueNotSupported",
                 "Unsupported value: \"Master\": supported values: \"Worker\"");
    json_decref(obj);

    /* Types of another kind are unknown here. */
    obj = job("MPIJob", "mpiReplicaSpecs", "PS", "mpi");
    EXPECT_INVALID(&api_mpijob, obj, NULL, "spec.mpiReplicaSpecs.PS",
                   "spec.mpiReplicaSpecs.Launcher");
    json_decref(obj);
}

static void test_validate_containers(void **state)
{
    json_t *obj = J(good_pytorchjob);
    json_t *c;

    (void)state;
    /* No containers: upstream reports both rules on the list. */
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.Master.template.spec"), "containers",
                        json_array());
    EXPECT_INVALID(&api_pytorchjob, obj, NULL,
                   "spec.pytorchReplicaSpecs.Master.template.spec.containers",
                   "spec.pytorchReplicaSpecs.Master.template.spec.containers");
    json_decref(obj);

    obj = J(good_pytorchjob);
    json_object_del(at(obj, "spec.pytorchReplicaSpecs.Worker"), "template");
    EXPECT_INVALID(&api_pytorchjob, obj, NULL,
                   "spec.pytorchReplicaSpecs.Worker.template.spec.containers",
                   "spec.pytorchReplicaSpecs.Worker.template.spec.containers");
    json_decref(obj);

    /* Missing and empty images, one cause each. */
    obj = J(good_pytorchjob);
    c = at(obj, "spec.pytorchReplicaSpecs.Master.template.spec.containers");
    json_object_del(json_array_get(c, 0), "image");
    json_array_append_new(c, J("{'name': 'sidecar', 'image': ''}"));
    expect_cause(&api_pytorchjob, obj, NULL,
                 "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image",
                 "FieldValueRequired", "Required value: must be required");
    json_decref(obj);
    obj = J(good_pytorchjob);
    c = at(obj, "spec.pytorchReplicaSpecs.Master.template.spec.containers");
    json_object_set_new(json_array_get(c, 0), "image", json_string(""));
    json_array_append_new(c, J("{'name': 'sidecar'}"));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL,
                   "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image",
                   "spec.pytorchReplicaSpecs.Master.template.spec.containers[1].image");
    json_decref(obj);

    /* No container named like the kind's default. */
    obj = J(good_pytorchjob);
    json_object_set_new(json_array_get(at(obj, "spec.pytorchReplicaSpecs.Worker.template.spec."
                                               "containers"),
                                       0),
                        "name", json_string("trainer"));
    expect_cause(&api_pytorchjob, obj, NULL,
                 "spec.pytorchReplicaSpecs.Worker.template.spec.containers",
                 "FieldValueRequired",
                 "Required value: must have at least one container with name pytorch");
    json_decref(obj);
    /* MPIJob has no such rule (training-operator 1.9's own
     * tensorflow-mnist-elastic.yaml names them mpi-launcher and mpi-worker):
     * the first container is the MPI one. */
    obj = J(good_mpijob);
    json_object_set_new(json_array_get(at(obj, "spec.mpiReplicaSpecs.Worker.template.spec."
                                               "containers"),
                                       0),
                        "name", json_string("mpi-worker"));
    json_object_set_new(json_array_get(at(obj, "spec.mpiReplicaSpecs.Launcher.template.spec."
                                               "containers"),
                                       0),
                        "name", json_string("mpi-launcher"));
    expect_ok(&api_mpijob, obj);
    json_decref(obj);
}

static void test_validate_replicas_and_restart_policy(void **state)
{
    json_t *obj = J(good_pytorchjob);

    (void)state;
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.Worker"), "replicas",
                        json_integer(-1));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs.Worker.replicas",
                 "FieldValueInvalid",
                 "Invalid value: -1: must be greater than or equal to 0");
    json_decref(obj);

    obj = J(good_pytorchjob);
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.Worker"), "replicas",
                        json_string("two"));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs.Worker.replicas",
                 "FieldValueInvalid",
                 "Invalid value: \"string\": spec.pytorchReplicaSpecs.Worker.replicas in body "
                 "must be of type integer: \"string\"");
    json_decref(obj);

    obj = J(good_pytorchjob);
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.Worker"), "replicas", json_integer(0));
    expect_ok(&api_pytorchjob, obj);
    json_decref(obj);

    /* A job of more than KF_MAX_JOB_PODS pods: refused, at the map. */
    obj = J(good_pytorchjob);
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.Worker"), "replicas",
                        json_integer(KF_MAX_JOB_PODS));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs", "FieldValueInvalid",
                 "Invalid value: 10001: the replicas add up to more than 10000 pods");
    json_decref(obj);

    obj = J(good_xgboostjob);
    json_object_set_new(at(obj, "spec.xgbReplicaSpecs.Worker"), "restartPolicy",
                        json_string("Sometimes"));
    expect_cause(&api_xgboostjob, obj, NULL, "spec.xgbReplicaSpecs.Worker.restartPolicy",
                 "FieldValueNotSupported",
                 "Unsupported value: \"Sometimes\": supported values: \"Always\", "
                 "\"OnFailure\", \"Never\", \"ExitCode\"");
    json_decref(obj);
}

static void test_validate_run_policy(void **state)
{
    json_t *obj = J(good_jaxjob);
    json_t *rp;

    (void)state;
    rp = J("{'cleanPodPolicy': 'Some', 'backoffLimit': -1, 'activeDeadlineSeconds': -5,"
           " 'ttlSecondsAfterFinished': -1, 'managedBy': 'me',"
           " 'schedulingPolicy': {'minAvailable': -2}}");
    json_object_set_new(at(obj, "spec"), "runPolicy", rp);
    EXPECT_INVALID(&api_jaxjob, obj, NULL, "spec.runPolicy.cleanPodPolicy",
                   "spec.runPolicy.backoffLimit", "spec.runPolicy.activeDeadlineSeconds",
                   "spec.runPolicy.ttlSecondsAfterFinished", "spec.runPolicy.managedBy",
                   "spec.runPolicy.schedulingPolicy.minAvailable");
    json_decref(obj);

    obj = J(good_jaxjob);
    json_object_set_new(at(obj, "spec"), "runPolicy", J("{'cleanPodPolicy': 'Some'}"));
    expect_cause(&api_jaxjob, obj, NULL, "spec.runPolicy.cleanPodPolicy",
                 "FieldValueNotSupported",
                 "Unsupported value: \"Some\": supported values: \"All\", \"Running\", "
                 "\"None\"");
    json_decref(obj);

    obj = J(good_jaxjob);
    json_object_set_new(at(obj, "spec"), "runPolicy", J("{'backoffLimit': -3}"));
    expect_cause(&api_jaxjob, obj, NULL, "spec.runPolicy.backoffLimit", "FieldValueInvalid",
                 "Invalid value: -3: must be greater than or equal to 0");
    json_decref(obj);

    obj = J(good_jaxjob);
    json_object_set_new(at(obj, "spec"), "runPolicy",
                        J("{'backoffLimit': 0, 'activeDeadlineSeconds': 0,"
                          " 'ttlSecondsAfterFinished': 0, 'suspend': true,"
                          " 'managedBy': 'kueue.x-k8s.io/multikueue'}"));
    expect_ok(&api_jaxjob, obj);
    assert_true(json_is_true(at(obj, "spec.runPolicy.suspend")));
    json_decref(obj);

    obj = J(good_mpijob);
    json_object_set_new(at(obj, "spec"), "cleanPodPolicy", json_string("Everything"));
    EXPECT_INVALID(&api_mpijob, obj, NULL, "spec.cleanPodPolicy");
    json_decref(obj);
}

static void test_validate_queue_immutable(void **state)
{
    json_t *old = J(good_tfjob), *obj;

    (void)state;
    expect_ok(&api_tfjob, old);

    obj = json_deep_copy(old);
    json_object_set_new(at(obj, "spec.runPolicy.schedulingPolicy"), "queue",
                        json_string("other"));
    expect_cause(&api_tfjob, obj, old, "spec.runPolicy.schedulingPolicy.queue",
                 "FieldValueInvalid", "Invalid value: \"other\": field is immutable");
    /* The same change is fine on create. */
    {
        ty_error err;
        assert_int_equal(prepare(&api_tfjob, obj, NULL, &err), 0);
        ty_error_clear(&err);
    }
    json_decref(obj);

    /* Dropping the queue inside a kept schedulingPolicy is a change too. */
    obj = json_deep_copy(old);
    json_object_del(at(obj, "spec.runPolicy.schedulingPolicy"), "queue");
    EXPECT_INVALID(&api_tfjob, obj, old, "spec.runPolicy.schedulingPolicy.queue");
    json_decref(obj);

    /* Other updates pass. */
    obj = json_deep_copy(old);
    json_object_set_new(at(obj, "spec.runPolicy"), "backoffLimit", json_integer(5));
    json_object_set_new(at(obj, "spec.runPolicy.schedulingPolicy"), "minAvailable",
                        json_integer(2));
    {
        ty_error err;
        assert_int_equal(prepare(&api_tfjob, obj, old, &err), 0);
        ty_error_clear(&err);
    }
    json_decref(obj);

    /* Upstream compares only when both versions have a schedulingPolicy. */
    obj = json_deep_copy(old);
    json_object_del(at(obj, "spec.runPolicy"), "schedulingPolicy");
    {
        ty_error err;
        assert_int_equal(prepare(&api_tfjob, obj, old, &err), 0);
        ty_error_clear(&err);
    }
    json_decref(obj);
    json_decref(old);

    /* managedBy is immutable as well. */
    old = J(good_jaxjob);
    expect_ok(&api_jaxjob, old);
    obj = json_deep_copy(old);
    json_object_set_new(at(obj, "spec.runPolicy"), "managedBy",
                        json_string("kueue.x-k8s.io/multikueue"));
    EXPECT_INVALID(&api_jaxjob, obj, old, "spec.runPolicy.managedBy");
    json_decref(obj);
    json_decref(old);
}

static void test_validate_null_error_and_code(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {}}");
    ty_error err;

    (void)state;
    api_pytorchjob.apply_defaults(obj);
    assert_int_equal(api_pytorchjob.validate(obj, NULL, NULL), -1);
    ty_error_init(&err);
    assert_int_equal(api_pytorchjob.validate(obj, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_int_equal(ty_errcode_http(err.code), 422);
    ty_error_clear(&err);
    json_decref(obj);
}

/* ---- validation: kind rules -------------------------------------------- */

static void test_validate_tfjob_chief_master(void **state)
{
    json_t *obj = J(good_tfjob);
    json_t *map = at(obj, "spec.tfReplicaSpecs");

    (void)state;
    json_object_set(map, "Chief", at(obj, "spec.tfReplicaSpecs.PS"));
    expect_ok(&api_tfjob, obj);
    json_object_set_new(map, "Master", json_deep_copy(at(obj, "spec.tfReplicaSpecs.PS")));
    expect_cause(&api_tfjob, obj, NULL, "spec.tfReplicaSpecs", "FieldValueForbidden",
                 "Forbidden: must not have more than 1 Chief or Master role");
    json_object_del(map, "Master");
    json_object_set_new(map, "Chief", json_deep_copy(at(obj, "spec.tfReplicaSpecs.PS")));
    json_object_set_new(at(obj, "spec.tfReplicaSpecs.Chief"), "replicas", json_integer(2));
    expect_cause(&api_tfjob, obj, NULL, "spec.tfReplicaSpecs.Chief.replicas",
                 "FieldValueForbidden", "Forbidden: must be 1");
    json_decref(obj);

    obj = J(good_tfjob);
    json_object_set_new(at(obj, "spec"), "successPolicy", json_string("AnyWorker"));
    expect_cause(&api_tfjob, obj, NULL, "spec.successPolicy", "FieldValueNotSupported",
                 "Unsupported value: \"AnyWorker\": supported values: \"\", \"AllWorkers\"");
    json_object_set_new(at(obj, "spec"), "successPolicy", json_string("AllWorkers"));
    expect_ok(&api_tfjob, obj);
    json_decref(obj);
}

static void test_validate_pytorch_master(void **state)
{
    json_t *obj = J(good_pytorchjob);

    (void)state;
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.Master"), "replicas",
                        json_integer(2));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs.Master.replicas",
                 "FieldValueForbidden", "Forbidden: must be 1");
    json_decref(obj);

    /* Lower-case keys are validated after being made canonical. */
    obj = job("PyTorchJob", "pytorchReplicaSpecs", "master", "pytorch");
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.master"), "replicas", json_integer(3));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL, "spec.pytorchReplicaSpecs.Master.replicas");
    json_decref(obj);
}

static void test_validate_pytorch_elastic(void **state)
{
    json_t *obj = J(good_elastic_pytorchjob);
    json_t *ep = at(obj, "spec.elasticPolicy");

    (void)state;
    json_object_set_new(ep, "minReplicas", json_integer(4));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.elasticPolicy.minReplicas",
                 "FieldValueInvalid",
                 "Invalid value: 4: must be less than or equal to maxReplicas (3)");
    json_object_set_new(ep, "minReplicas", json_integer(1));
    json_object_set_new(ep, "rdzvBackend", json_string("zookeeper"));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.elasticPolicy.rdzvBackend",
                 "FieldValueNotSupported",
                 "Unsupported value: \"zookeeper\": supported values: \"c10d\", \"etcd\", "
                 "\"etcd-v2\"");
    json_object_set_new(ep, "rdzvBackend", json_string("etcd-v2"));
    expect_ok(&api_pytorchjob, obj);

    json_object_set_new(ep, "nProcPerNode", json_integer(2));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.nprocPerNode", "FieldValueForbidden",
                 "Forbidden: must not have both .spec.elasticPolicy.nProcPerNode and "
                 ".spec.nprocPerNode");
    json_object_del(at(obj, "spec"), "nprocPerNode");
    expect_ok(&api_pytorchjob, obj);
    assert_null(at(obj, "spec.nprocPerNode"));

    json_object_set_new(ep, "nProcPerNode", json_integer(0));
    json_object_set_new(ep, "rdzvPort", json_integer(70000));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL, "spec.elasticPolicy.nProcPerNode",
                   "spec.elasticPolicy.rdzvPort");
    json_decref(obj);

    obj = J(good_pytorchjob);
    json_object_set_new(at(obj, "spec"), "nprocPerNode", json_string("many"));
    expect_cause(&api_pytorchjob, obj, NULL, "spec.nprocPerNode", "FieldValueInvalid",
                 "Invalid value: \"many\": must be a positive integer, \"auto\", \"cpu\" or "
                 "\"gpu\"");
    json_object_set_new(at(obj, "spec"), "nprocPerNode", json_string("0"));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL, "spec.nprocPerNode");
    json_object_set_new(at(obj, "spec"), "nprocPerNode", json_integer(4));
    EXPECT_INVALID(&api_pytorchjob, obj, NULL, "spec.nprocPerNode");
    json_object_set_new(at(obj, "spec"), "nprocPerNode", json_string("gpu"));
    expect_ok(&api_pytorchjob, obj);
    json_object_set_new(at(obj, "spec"), "nprocPerNode", json_string("8"));
    expect_ok(&api_pytorchjob, obj);
    json_decref(obj);
}

static void test_validate_xgboost_master(void **state)
{
    json_t *obj = J(good_xgboostjob);

    (void)state;
    json_object_del(at(obj, "spec.xgbReplicaSpecs"), "Master");
    expect_cause(&api_xgboostjob, obj, NULL, "spec.xgbReplicaSpecs.Master", "FieldValueRequired",
                 "Required value: must be present");
    json_decref(obj);

    obj = J(good_xgboostjob);
    json_object_set_new(at(obj, "spec.xgbReplicaSpecs.Master"), "replicas", json_integer(2));
    EXPECT_INVALID(&api_xgboostjob, obj, NULL, "spec.xgbReplicaSpecs.Master.replicas");
    json_decref(obj);
}

static void test_validate_mpi_launcher(void **state)
{
    json_t *obj = J(good_mpijob);

    (void)state;
    json_object_del(at(obj, "spec.mpiReplicaSpecs"), "Launcher");
    expect_cause(&api_mpijob, obj, NULL, "spec.mpiReplicaSpecs.Launcher", "FieldValueRequired",
                 "Required value: must be present");
    json_decref(obj);

    obj = J(good_mpijob);
    json_object_set_new(at(obj, "spec.mpiReplicaSpecs.Launcher"), "replicas", json_integer(2));
    expect_cause(&api_mpijob, obj, NULL, "spec.mpiReplicaSpecs.Launcher.replicas",
                 "FieldValueForbidden", "Forbidden: must be 1");
    json_decref(obj);

    obj = J(good_mpijob);
    json_object_set_new(at(obj, "spec"), "slotsPerWorker", json_integer(0));
    EXPECT_INVALID(&api_mpijob, obj, NULL, "spec.slotsPerWorker");
    json_decref(obj);
}

static void test_validate_msjob_scheduler(void **state)
{
    json_t *obj = J(good_msjob);

    (void)state;
    json_object_set_new(at(obj, "spec.msReplicaSpecs.Scheduler"), "replicas", json_integer(2));
    expect_cause(&api_msjob, obj, NULL, "spec.msReplicaSpecs.Scheduler.replicas",
                 "FieldValueInvalid", "Invalid value: 2: must be less than or equal to 1");
    json_decref(obj);

    obj = J(good_msjob);
    json_object_set_new(at(obj, "spec.msReplicaSpecs.Scheduler"), "replicas", json_integer(0));
    expect_ok(&api_msjob, obj);
    json_decref(obj);
}

static void test_validate_mxjob(void **state)
{
    json_t *obj = J(good_mxjob);

    (void)state;
    json_object_set_new(at(obj, "spec"), "jobMode", json_string("MXServe"));
    expect_cause(&api_mxjob, obj, NULL, "spec.jobMode", "FieldValueNotSupported",
                 "Unsupported value: \"MXServe\": supported values: \"MXTrain\", \"MXTune\"");
    json_decref(obj);

    obj = J(good_mxjob);
    json_object_set_new(at(obj, "spec.mxReplicaSpecs.Scheduler"), "replicas", json_integer(3));
    EXPECT_INVALID(&api_mxjob, obj, NULL, "spec.mxReplicaSpecs.Scheduler.replicas");
    json_decref(obj);
}

/* A map with more keys than any kind has types is rejected as a whole. */
static void test_validate_replica_map_bounded(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x'}, 'spec': {'jaxReplicaSpecs': {}}}");
    char key[16];

    (void)state;
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "T%d", i);
        json_object_set_new(at(obj, "spec.jaxReplicaSpecs"), key, json_object());
    }
    EXPECT_INVALID(&api_jaxjob, obj, NULL, "spec.jaxReplicaSpecs");
    json_decref(obj);
}

/* ---- table -------------------------------------------------------------- */

static void test_row_cells(void **state)
{
    json_t *obj = J("{'metadata': {'name': 'x', 'creationTimestamp': '2026-01-01T00:00:00Z'}}");
    json_t *cells = json_array();
    time_t t0;

    (void)state;
    assert_int_equal(ty_time_parse("2026-01-01T00:00:00Z", &t0), 0);
    api_pytorchjob.row_cells(obj, t0 + 300, cells);
    assert_int_equal(json_array_size(cells), 2);
    assert_true(json_is_null(json_array_get(cells, 0)));
    assert_string_equal(json_string_value(json_array_get(cells, 1)), "5m");
    json_decref(cells);

    json_object_set_new(obj, "status",
                        J("{'conditions': [{'type': 'Created', 'status': 'True'},"
                          " {'type': 'Running', 'status': 'False'},"
                          " {'type': 'Succeeded', 'status': 'True'}]}"));
    cells = json_array();
    api_msjob.row_cells(obj, t0 + 90, cells);
    assert_string_equal(json_string_value(json_array_get(cells, 0)), "Succeeded");
    assert_string_equal(json_string_value(json_array_get(cells, 1)), "90s");
    assert_string_equal(kf_job_state(obj), "Succeeded");
    json_decref(cells);
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_examples_accepted),
        cmocka_unit_test(test_resource_names),
        cmocka_unit_test(test_descriptor_lookup),
        cmocka_unit_test(test_defaults_every_kind),
        cmocka_unit_test(test_defaults_tfjob_keys_and_order),
        cmocka_unit_test(test_defaults_lowercase_key_replaces_canonical),
        cmocka_unit_test(test_defaults_port_not_duplicated_and_idempotent),
        cmocka_unit_test(test_defaults_port_on_first_container),
        cmocka_unit_test(test_defaults_keep_user_run_policy),
        cmocka_unit_test(test_defaults_pytorch),
        cmocka_unit_test(test_defaults_mpi),
        cmocka_unit_test(test_defaults_mx_ms_paddle),
        cmocka_unit_test(test_defaults_tolerate_garbage),
        cmocka_unit_test(test_validate_name),
        cmocka_unit_test(test_validate_replica_map_required),
        cmocka_unit_test(test_validate_unknown_replica_type),
        cmocka_unit_test(test_validate_containers),
        cmocka_unit_test(test_validate_replicas_and_restart_policy),
        cmocka_unit_test(test_validate_run_policy),
        cmocka_unit_test(test_validate_queue_immutable),
        cmocka_unit_test(test_validate_null_error_and_code),
        cmocka_unit_test(test_validate_tfjob_chief_master),
        cmocka_unit_test(test_validate_pytorch_master),
        cmocka_unit_test(test_validate_pytorch_elastic),
        cmocka_unit_test(test_validate_xgboost_master),
        cmocka_unit_test(test_validate_mpi_launcher),
        cmocka_unit_test(test_validate_msjob_scheduler),
        cmocka_unit_test(test_validate_mxjob),
        cmocka_unit_test(test_validate_replica_map_bounded),
        cmocka_unit_test(test_row_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
