/* test_msjob_v1.c - MSJob kubeflow.org/v1 (ms-operator's first form, a list
 * of replicaSpecs): served beside mindspore.gitee.com/v1, admission with
 * field paths, the stored object left as written, the engine's defaulted
 * map form, and the pods it builds (ms-operator's exact environment). */
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
#include "base/treearena.h"
#include "controller/jobs/jobs_int.h"
#include "model/yaml.h"

/* The seed manifest's shape, quirks kept: spec.masterPort a string, the
 * PyTorch operator's backend, containers not named "mindspore", a hostPath
 * written into a volumeMount (a field upstream's schema-less CRD kept). */
static const char *const seed =
    "apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: msjob-mnist}\n"
    "spec:\n"
    "  backend: tcp\n"
    "  masterPort: \"23456\"\n"
    "  replicaSpecs:\n"
    "  - replicas: 1\n"
    "    replicaType: MASTER\n"
    "    template:\n"
    "      spec:\n"
    "        containers:\n"
    "        - {name: msjob-mnist, image: 'ms:0.1', command: [python3, a.py]}\n"
    "        restartPolicy: OnFailure\n"
    "  - replicas: 3\n"
    "    replicaType: WORKER\n"
    "    template:\n"
    "      spec:\n"
    "        containers:\n"
    "        - name: msjob-mnist\n"
    "          image: 'ms:0.1'\n"
    "          volumeMounts: [{name: local, hostPath: {path: /x}}]\n"
    "        restartPolicy: OnFailure\n";

static json_t *load(const char *yaml)
{
    ty_error err;
    json_t *obj;

    ty_error_init(&err);
    obj = yaml_load_one(yaml, strlen(yaml), &err);
    if (!obj)
        fail_msg("yaml: %s", err.text);
    return obj;
}

/* seed with one line replaced (`from` must occur once). */
static json_t *seed_with(const char *from, const char *to)
{
    char buf[4096];
    const char *at = strstr(seed, from);

    assert_non_null(at);
    snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - seed), seed, to, at + strlen(from));
    return load(buf);
}

static int prepare(json_t *obj, const json_t *old, ty_error *err)
{
    ty_error_init(err);
    return api_prepare(&api_msjob_v1, obj, old, err);
}

/* Admission refuses obj with a cause at `field` whose message contains
 * `msg`. */
static void expect_cause(json_t *obj, const char *field, const char *msg)
{
    ty_error err;
    size_t i;
    json_t *c;
    bool found = false;

    assert_int_equal(prepare(obj, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    json_array_foreach(err.causes, i, c) {
        const char *f = json_string_value(json_object_get(c, "field"));
        const char *m = json_string_value(json_object_get(c, "message"));
        if (f && strcmp(f, field) == 0 && m && strstr(m, msg))
            found = true;
    }
    if (!found) {
        char *s = json_dumps(err.causes, JSON_COMPACT);
        print_error("want %s: ...%s..., got %s\n", field, msg, s ? s : "[]");
        free(s);
    }
    assert_true(found);
    ty_error_clear(&err);
    json_decref(obj);
}

/* ---- served resources --------------------------------------------------- */

static void test_two_groups(void **state)
{
    (void)state;
    assert_ptr_equal(api_find_kind("kubeflow.org/v1", "MSJob"), &api_msjob_v1);
    assert_ptr_equal(api_find_kind("mindspore.gitee.com/v1", "MSJob"), &api_msjob);
    assert_ptr_equal(api_find("kubeflow.org", "v1", "msjobs"), &api_msjob_v1);
    assert_ptr_equal(api_find("mindspore.gitee.com", "v1", "msjobs"), &api_msjob);
    assert_string_equal(api_store_key(&api_msjob_v1), "msjobs.kubeflow.org");
    assert_string_equal(api_store_key(&api_msjob), "msjobs.mindspore.gitee.com");
    assert_string_equal(api_msjob_v1.singular, "msjob");
    assert_string_equal(api_msjob_v1.list_kind, "MSJobList");
    assert_ptr_equal(kf_kind_for_resource(&api_msjob_v1), &kf_msjob_v1);
    assert_ptr_equal(kf_kind_for_resource(&api_msjob), &kf_msjob);
    assert_ptr_equal(jobs_framework_for(&kf_msjob_v1), &jf_mindspore_v1);
    /* By name alone, the first group in discovery's order answers, as
     * kubectl's choice of the plural does. */
    assert_ptr_equal(kf_kind_for("MSJob"), &kf_msjob_v1);

    /* kubectl takes a plural served in two groups from the first group that
     * discovery lists: kubeflow.org must come before mindspore.gitee.com. */
    size_t n, first_kf = SIZE_MAX, first_ms = SIZE_MAX;
    const api_resource *const *all = api_resources(&n);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(all[i]->group, "kubeflow.org") && first_kf == SIZE_MAX)
            first_kf = i;
        if (!strcmp(all[i]->group, "mindspore.gitee.com") && first_ms == SIZE_MAX)
            first_ms = i;
    }
    assert_true(first_kf < first_ms);
}

/* ---- admission ---------------------------------------------------------- */

static void test_seed_accepted_as_written(void **state)
{
    json_t *obj = load(seed), *orig = json_deep_copy(obj);
    ty_error err;

    (void)state;
    assert_int_equal(prepare(obj, NULL, &err), 0);
    /* Nothing is defaulted into the stored object: an unchanged manifest
     * applies as "unchanged" (the list would otherwise differ each time). */
    assert_true(json_equal(json_object_get(obj, "spec"), json_object_get(orig, "spec")));
    /* Upstream's CRD had no schema: unknown fields are kept, not refused. */
    ty_error_init(&err);
    assert_int_equal(api_check_unknown_fields(&api_msjob_v1, obj, &err), 0);
    ty_error_clear(&err);
    /* An update of the same object passes too. */
    assert_int_equal(prepare(obj, orig, &err), 0);
    json_decref(obj);
    json_decref(orig);
}

static void test_admission_paths(void **state)
{
    (void)state;
    expect_cause(seed_with("    replicaType: WORKER\n", "    replicaType: PS\n"),
                 "spec.replicaSpecs[1].replicaType", "Unsupported value: \"PS\"");
    expect_cause(seed_with("    replicaType: WORKER\n", "    replicaType: worker\n"),
                 "spec.replicaSpecs[1].replicaType", "supported values: \"MASTER\", \"WORKER\"");
    expect_cause(seed_with("    replicaType: WORKER\n", "    replicaType: MASTER\n"),
                 "spec.replicaSpecs[1].replicaType", "Duplicate value: \"MASTER\"");
    /* An absent replicaType is MASTER (upstream's default): two MASTERs. */
    expect_cause(seed_with("    replicaType: WORKER\n", ""), "spec.replicaSpecs[1].replicaType",
                 "Duplicate value");
    expect_cause(seed_with("    replicaType: MASTER\n", "    replicaType: WORKER\n"),
                 "spec.replicaSpecs", "must have one replica spec of replicaType MASTER");
    expect_cause(seed_with("  - replicas: 1\n", "  - replicas: 2\n"),
                 "spec.replicaSpecs[0].replicas", "must be 1 for replicaType MASTER");
    expect_cause(seed_with("  - replicas: 3\n", "  - replicas: -1\n"),
                 "spec.replicaSpecs[1].replicas", "must be greater than or equal to 0");
    expect_cause(seed_with("  - replicas: 3\n", "  - replicas: 3\n    masterPort: 70000\n"),
                 "spec.replicaSpecs[1].masterPort", "must be less than or equal to 65535");
    expect_cause(seed_with("  masterPort: \"23456\"\n", "  masterPort: \"23x\"\n"),
                 "spec.masterPort", "must be a port number between 1 and 65535");
    expect_cause(seed_with("  masterPort: \"23456\"\n", "  masterPort: 0\n"), "spec.masterPort",
                 "must be a port number");
    expect_cause(seed_with("        - {name: msjob-mnist, image: 'ms:0.1', command: [python3, a.py]}\n",
                           "        - {name: msjob-mnist, command: [python3, a.py]}\n"),
                 "spec.replicaSpecs[0].template.spec.containers[0].image", "Required value");
    expect_cause(seed_with("        restartPolicy: OnFailure\n  - replicas: 3",
                           "        restartPolicy: Sometimes\n  - replicas: 3"),
                 "spec.replicaSpecs[0].template.spec.restartPolicy", "Unsupported value");
    expect_cause(seed_with("  backend: tcp\n", "  backend: tcp\n  terminationPolicy: {master: "
                                               "{replicaName: WORKER, replicaRank: 0}}\n"),
                 "spec.terminationPolicy.master.replicaName", "Unsupported value: \"WORKER\"");
    expect_cause(seed_with("  backend: tcp\n", "  backend: tcp\n  terminationPolicy: {master: "
                                               "{replicaName: MASTER, replicaRank: 2}}\n"),
                 "spec.terminationPolicy.master.replicaRank", "must be 0");
    expect_cause(seed_with("  backend: tcp\n", "  backend: tcp\n  runPolicy: {cleanPodPolicy: "
                                               "Some}\n"),
                 "spec.runPolicy.cleanPodPolicy", "Unsupported value");
    expect_cause(seed_with("{name: msjob-mnist}", "{name: MSJob.1}"), "metadata.name",
                 "DNS-1035");
    /* Types are the schema's: the map form of the newer operators is not
     * this kind's. */
    expect_cause(load("apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: m}\n"
                      "spec: {replicaSpecs: {Worker: {replicas: 1}}}\n"),
                 "spec.replicaSpecs", "must be of type array");
    expect_cause(load("apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: m}\n"
                      "spec: {backend: tcp}\n"),
                 "spec.replicaSpecs", "Required value");
    expect_cause(load("apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: m}\n"
                      "spec: {replicaSpecs: [{replicaType: MASTER}]}\n"),
                 "spec.replicaSpecs[0].template", "Required value");
    expect_cause(load("apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: m}\n"
                      "spec: {replicaSpecs: [{replicaType: MASTER}, {replicaType: WORKER}, "
                      "{replicaType: WORKER}]}\n"),
                 "spec.replicaSpecs", "Too many: 3");
}

/* ---- the engine's form -------------------------------------------------- */

static json_t *engine_form_of(json_t *job)
{
    ty_error err;

    assert_int_equal(prepare(job, NULL, &err), 0);
    json_object_set_new(json_object_get(job, "metadata"), "namespace", json_string("default"));
    json_object_set_new(json_object_get(job, "metadata"), "uid", json_string("0000-uid"));
    kf_msjob_v1.engine_form(&kf_msjob_v1, job);
    kf_default_ports(&kf_msjob_v1, job);
    return job;
}

static json_t *engine_form(const char *yaml)
{
    return engine_form_of(load(yaml));
}

static json_t *at(json_t *root, const char *path)
{
    char buf[256], *save = NULL, *tok;
    json_t *v = root;

    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
        v = json_is_array(v) ? json_array_get(v, (size_t)atoi(tok)) : json_object_get(v, tok);
    return v;
}

#define STR_AT(root, path, want) assert_string_equal(json_string_value(at(root, path)), want)
#define INT_AT(root, path, want) assert_int_equal(json_integer_value(at(root, path)), want)

static void test_engine_form_defaults(void **state)
{
    json_t *job = engine_form(seed);
    json_t *bare;

    (void)state;
    /* The list became the map the engine reads; upstream's defaults. */
    INT_AT(job, "spec.replicaSpecs.MASTER.replicas", 1);
    INT_AT(job, "spec.replicaSpecs.WORKER.replicas", 3);
    INT_AT(job, "spec.replicaSpecs.MASTER.masterPort", 23456);
    STR_AT(job, "spec.replicaSpecs.MASTER.restartPolicy", "OnFailure");
    STR_AT(job, "spec.terminationPolicy.master.replicaName", "MASTER");
    INT_AT(job, "spec.terminationPolicy.master.replicaRank", 0);
    STR_AT(job, "spec.msImage", "mindspore/mindspore:v0.1.0-alpha");
    STR_AT(job, "spec.runPolicy.cleanPodPolicy", "None");
    /* The port upstream's Service named, on the first container. */
    STR_AT(job, "spec.replicaSpecs.WORKER.template.spec.containers.0.ports.0.name", "ms-port");
    INT_AT(job, "spec.replicaSpecs.WORKER.template.spec.containers.0.ports.0.containerPort",
           23456);
    json_decref(job);

    /* replicaType and replicas absent: MASTER, 1; spec.masterPort (an
     * integer here) is every replica's default, a replica's own wins; no
     * restartPolicy anywhere: OnFailure. */
    bare = engine_form("apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: b}\n"
                       "spec:\n  masterPort: 3000\n  replicaSpecs:\n"
                       "  - template: {spec: {containers: [{name: mindspore, image: m}]}}\n"
                       "  - {replicaType: WORKER, masterPort: 4000, replicas: 2,\n"
                       "     template: {spec: {containers: [{name: side, image: s},\n"
                       "       {name: mindspore, image: m}]}}}\n");
    INT_AT(bare, "spec.replicaSpecs.MASTER.replicas", 1);
    INT_AT(bare, "spec.replicaSpecs.MASTER.masterPort", 3000);
    INT_AT(bare, "spec.replicaSpecs.WORKER.masterPort", 4000);
    STR_AT(bare, "spec.replicaSpecs.WORKER.restartPolicy", "OnFailure");
    /* the "mindspore" container takes the port, not the first */
    assert_null(at(bare, "spec.replicaSpecs.WORKER.template.spec.containers.0.ports"));
    INT_AT(bare, "spec.replicaSpecs.WORKER.template.spec.containers.1.ports.0.containerPort",
           4000);
    json_decref(bare);
}

/* ---- pods and services -------------------------------------------------- */

static json_t *pod_of(const json_t *job, const char *rtype, int index)
{
    job_ctx c = {&kf_msjob_v1, job, "msjob-mnist", "default"};
    json_t *pod, *copy;
    ty_error err;

    ty_tree_arena_begin(TY_TREES_STORED);
    pod = jobs_build_pod(&jf_mindspore_v1, &c, rtype, index, false);
    ty_tree_arena_end();
    /* Whatever the engine builds must pass the API's own pod rules. */
    ty_error_init(&err);
    copy = json_deep_copy(pod);
    if (api_prepare(&api_pod, copy, NULL, &err) != 0)
        fail_msg("built pod invalid: %s", err.text);
    json_decref(copy);
    return pod;
}

/* The names of the env of container i, in order, joined by spaces. */
static void env_names(const json_t *pod, size_t i, char *buf, size_t len)
{
    const json_t *env = at((json_t *)pod, "spec.containers");
    const json_t *e;
    size_t k, off = 0;

    env = json_object_get(json_array_get(env, i), "env");
    buf[0] = '\0';
    json_array_foreach(env, k, e)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " " : "",
                                json_string_value(json_object_get(e, "name")));
}

static const char *env_val(const json_t *pod, size_t i, const char *name)
{
    const json_t *c = json_array_get(at((json_t *)pod, "spec.containers"), i);
    const json_t *e;
    size_t k;

    json_array_foreach(json_object_get(c, "env"), k, e)
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            return json_string_value(json_object_get(e, "value"));
    return NULL;
}

static void test_environment(void **state)
{
    /* without the stray volumeMount, which makes the pods invalid (the e2e
     * test applies it as written and sees the pods refused) */
    json_t *job = engine_form_of(
        seed_with("          volumeMounts: [{name: local, hostPath: {path: /x}}]\n", ""));
    json_t *m = pod_of(job, "MASTER", 0), *w = pod_of(job, "WORKER", 1);
    char names[256];

    (void)state;
    STR_AT(m, "metadata.name", "msjob-mnist-master-0");
    STR_AT(w, "metadata.name", "msjob-mnist-worker-1");
    /* Upstream's variables in upstream's order, into the first container
     * (none is named "mindspore"). */
    env_names(w, 0, names, sizeof(names));
    assert_string_equal(names, "MS_CONFIG MASTER_PORT MASTER_ADDR WORLD_SIZE RANK");
    assert_string_equal(env_val(m, 0, "MASTER_ADDR"), "localhost");
    assert_string_equal(env_val(m, 0, "RANK"), "0");
    assert_string_equal(env_val(m, 0, "WORLD_SIZE"), "4");
    assert_string_equal(env_val(m, 0, "MASTER_PORT"), "23456");
    assert_string_equal(
        env_val(m, 0, "MS_CONFIG"),
        "{\"cluster\":{\"master\":[\"msjob-mnist-master-0:23456\"],\"worker\":["
        "\"msjob-mnist-worker-0:23456\",\"msjob-mnist-worker-1:23456\","
        "\"msjob-mnist-worker-2:23456\"]},\"task\":{\"type\":\"master\",\"index\":0},"
        "\"environment\":\"cloud\"}");
    assert_string_equal(env_val(w, 0, "MASTER_ADDR"), "msjob-mnist-master-0");
    assert_string_equal(env_val(w, 0, "RANK"), "2"); /* worker i is rank i + 1 */
    assert_non_null(strstr(env_val(w, 0, "MS_CONFIG"), "\"task\":{\"type\":\"worker\",\"index\":2}"));
    json_decref(m);
    json_decref(w);
    json_decref(job);
}

static const char *label(const json_t *obj, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

static void test_labels_services_scheduler(void **state)
{
    json_t *job = engine_form(
        "apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: msjob-mnist}\n"
        "spec:\n  schedulerName: volcano\n  replicaSpecs:\n"
        "  - {replicaType: MASTER, template: {spec: {containers: [{name: mindspore, image: m}]}}}\n"
        "  - {replicaType: WORKER, replicas: 2, template: {spec: {containers: [\n"
        "      {name: side, image: s}, {name: mindspore, image: m}]}}}\n");
    json_t *m = pod_of(job, "MASTER", 0), *w = pod_of(job, "WORKER", 0), *svc;
    job_ctx c = {&kf_msjob_v1, job, "msjob-mnist", "default"};

    (void)state;
    assert_string_equal(label(m, "training.kubeflow.org/operator-name"), "ms-operator");
    assert_string_equal(label(m, "training.kubeflow.org/job-name"), "msjob-mnist");
    assert_string_equal(label(m, "training.kubeflow.org/replica-type"), "master");
    assert_string_equal(label(m, "training.kubeflow.org/job-role"), "master");
    assert_null(label(w, "training.kubeflow.org/job-role"));
    assert_string_equal(label(w, "kubeflow.org"), "");
    assert_string_equal(label(w, "job_type"), "WORKER");
    assert_string_equal(label(w, "ms_job_name"), "msjob-mnist");
    assert_string_equal(label(w, "task_index"), "1");
    assert_string_equal(label(w, "training.kubeflow.org/replica-index"), "0");
    STR_AT(w, "spec.schedulerName", "volcano");
    STR_AT(w, "spec.restartPolicy", "OnFailure");
    /* Only the "mindspore" container gets the environment, as upstream. */
    assert_null(env_val(w, 0, "RANK"));
    assert_string_equal(env_val(w, 1, "RANK"), "1");
    /* A headless Service per replica, so MASTER_ADDR resolves to the pod;
     * its port is the masterPort, named as upstream's Service port. */
    svc = jobs_build_service(&jf_mindspore_v1, &c, "MASTER", 0);
    assert_non_null(svc);
    STR_AT(svc, "metadata.name", "msjob-mnist-master-0");
    STR_AT(svc, "spec.clusterIP", "None");
    STR_AT(svc, "spec.ports.0.name", "ms-port");
    INT_AT(svc, "spec.ports.0.port", 23456);
    json_decref(svc);
    json_decref(m);
    json_decref(w);
    json_decref(job);
}

/* The job ends as its MASTER does (terminationPolicy MASTER/0). */
static void test_success_rule(void **state)
{
    json_t *job = engine_form(seed);
    job_ctx c = {&kf_msjob_v1, job, "msjob-mnist", "default"};
    jf_counts counts[2] = {
        {.type = "MASTER", .replicas = 1, .active = 1},
        {.type = "WORKER", .replicas = 3, .succeeded = 3, .first_succeeded = true},
    };

    (void)state;
    assert_false(jf_mindspore_v1.succeeded(&c, counts, 2));
    counts[0] = (jf_counts){.type = "MASTER", .replicas = 1, .succeeded = 1};
    counts[1] = (jf_counts){.type = "WORKER", .replicas = 3, .active = 3};
    assert_true(jf_mindspore_v1.succeeded(&c, counts, 2));
    json_decref(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_groups),
        cmocka_unit_test(test_seed_accepted_as_written),
        cmocka_unit_test(test_admission_paths),
        cmocka_unit_test(test_engine_form_defaults),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_labels_services_scheduler),
        cmocka_unit_test(test_success_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
