/* test_msjob_v1_engine.c - the job engine runs both MSJob forms side by side
 * against a real store: kubeflow.org/v1 (ms-operator's first form, a list of
 * replica specs) and mindspore.gitee.com/v1. One kind name in two groups:
 * the engine must tell them apart in its keys and when it maps a pod's
 * ownerReference back to its job. The test plays the node agent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "base/timeutil.h"
#include "base/treearena.h"
#include "controller/gc.h"
#include "controller/jobs/engine.h"
#include "model/yaml.h"
#include "scheduler/sched.h"
#include "kc_fixture.h"

#define V1 "msjobs.kubeflow.org"
#define GITEE "msjobs.mindspore.gitee.com"
#define WAIT_MS 60000 /* far past what any machine needs: ASan builds on loaded machines */

typedef struct fixture {
    char dir[64];
    ty_store *s;
    ty_gc *gc;
    ty_jobs *jobs;
    ty_sched *sched; /* admits the jobs' PodGroups */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->s = store_fixture_open(f->dir, NULL);
    f->gc = gc_start(KC(f->s), &err);
    assert_non_null(f->gc);
    f->jobs = jobs_start(KC(f->s), &err);
    assert_non_null(f->jobs);
    f->sched = sched_start(KC(f->s), &err);
    assert_non_null(f->sched);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sched_stop(f->sched);
    jobs_stop(f->jobs);
    gc_stop(f->gc);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

static void create(fixture *f, const char *yaml)
{
    ty_error err;
    json_t *obj;
    const api_resource *res;
    store_obj *o;

    ty_error_init(&err);
    obj = yaml_load_one(yaml, strlen(yaml), &err);
    assert_non_null(obj);
    res = api_find_kind(json_string_value(json_object_get(obj, "apiVersion")),
                        json_string_value(json_object_get(obj, "kind")));
    assert_non_null(res);
    if (api_prepare(res, obj, NULL, &err) != 0)
        fail_msg("invalid: %s", err.text);
    o = store_create_take(f->s, api_store_key(res), "default", obj, &err);
    if (!o)
        fail_msg("create: %s", err.text);
    store_obj_unref(o);
}

static json_t *get(fixture *f, const char *res, const char *name)
{
    store_obj *o = store_get(f->s, res, "default", name, NULL);
    json_t *j;

    if (!o)
        return NULL;
    j = json_deep_copy(store_obj_json(o));
    store_obj_unref(o);
    return j;
}

typedef bool (*cond_fn)(fixture *f, const char *a, const char *b);

static bool wait_for(fixture *f, cond_fn fn, const char *a, const char *b)
{
    for (int64_t deadline = ty_now_ms() + WAIT_MS; ty_now_ms() < deadline;) {
        if (fn(f, a, b))
            return true;
        usleep(10 * 1000);
    }
    return false;
}

static bool pod_exists(fixture *f, const char *name, const char *unused)
{
    json_t *j = get(f, "pods", name);
    (void)unused;
    json_decref(j);
    return j != NULL;
}

/* The job in resource `res` (a) has its last condition `type`: "res/name". */
static bool job_state(fixture *f, const char *res_name, const char *type)
{
    char res[64];
    const char *slash = strchr(res_name, '/');
    json_t *j;
    bool r;

    snprintf(res, sizeof(res), "%.*s", (int)(slash - res_name), res_name);
    j = get(f, res, slash + 1);
    r = j && kf_job_state(j) && strcmp(kf_job_state(j), type) == 0;
    json_decref(j);
    return r;
}

typedef struct pod_state {
    const char *phase;
    int exit_code; /* -1: running */
} pod_state;

static int set_status(json_t *pod, void *arg, ty_error *err)
{
    const pod_state *ps = arg;
    json_t *state;

    (void)err;
    if (ps->exit_code >= 0)
        state = json_pack("{s:{s:i}}", "terminated", "exitCode", ps->exit_code);
    else
        state = json_pack("{s:{}}", "running");
    json_object_set_new(pod, "status",
                        json_pack("{s:s, s:[{s:s, s:i, s:o}]}", "phase", ps->phase,
                                  "containerStatuses", "name", "msjob-mnist", "restartCount",
                                  0, "state", state));
    return 0;
}

static void pod_set(fixture *f, const char *name, const char *phase, int exit_code)
{
    pod_state ps = {phase, exit_code};
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    assert_true(wait_for(f, pod_exists, name, NULL));
    o = store_mutate(f->s, "pods", "default", name, set_status, &ps, &err);
    if (!o)
        fail_msg("pod %s: %s", name, err.text);
    store_obj_unref(o);
}

static void test_both_forms(void **state)
{
    fixture *f = *state;
    json_t *pod, *job, *pg;

    /* Same job name in both groups would share pod names; the engine's keys
     * are what is under test, so the names differ only in the pods. */
    create(f, "apiVersion: kubeflow.org/v1\nkind: MSJob\nmetadata: {name: ms}\n"
              "spec:\n  backend: tcp\n  masterPort: \"23456\"\n  replicaSpecs:\n"
              "  - {replicas: 1, replicaType: MASTER, template: {spec: {containers:\n"
              "      [{name: msjob-mnist, image: m}], restartPolicy: OnFailure}}}\n"
              "  - {replicas: 2, replicaType: WORKER, template: {spec: {containers:\n"
              "      [{name: msjob-mnist, image: m}], restartPolicy: OnFailure}}}\n");
    create(f, "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: {name: gitee}\n"
              "spec:\n  msReplicaSpecs:\n"
              "    Worker: {replicas: 1, template: {spec: {containers: [{name: mindspore, "
              "image: m}]}}}\n");
    assert_true(wait_for(f, pod_exists, "ms-master-0", NULL));
    assert_true(wait_for(f, pod_exists, "ms-worker-0", NULL));
    assert_true(wait_for(f, pod_exists, "ms-worker-1", NULL));
    assert_true(wait_for(f, pod_exists, "gitee-worker-0", NULL));
    assert_false(pod_exists(f, "ms-worker-2", NULL));

    pod = get(f, "pods", "ms-worker-1");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(json_object_get(pod, "metadata"),
                                                           "ownerReferences"), 0),
                            "apiVersion")),
                        "kubeflow.org/v1");
    json_decref(pod);
    pg = get(f, "podgroups.scheduling.volcano.sh", "ms");
    assert_non_null(pg);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(pg, "spec"),
                                                        "minMember")), 3);
    json_decref(pg);

    /* Pod events reach the right job: Running once all three run. */
    pod_set(f, "ms-master-0", "Running", -1);
    pod_set(f, "ms-worker-0", "Running", -1);
    pod_set(f, "ms-worker-1", "Running", -1);
    assert_true(wait_for(f, job_state, V1 "/ms", "Running"));
    /* The MASTER ends the job, workers still running (upstream's rule). */
    pod_set(f, "ms-master-0", "Succeeded", 0);
    assert_true(wait_for(f, job_state, V1 "/ms", "Succeeded"));
    job = get(f, V1, "ms");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
                         json_object_get(job, "status"), "replicaStatuses"), "MASTER"),
                                                        "succeeded")),
                     1);
    /* The stored spec is still the user's list. */
    assert_true(json_is_array(json_object_get(json_object_get(job, "spec"), "replicaSpecs")));
    json_decref(job);
    /* cleanPodPolicy None: nothing deleted. */
    assert_true(pod_exists(f, "ms-worker-1", NULL));

    /* The other form goes its own way. */
    pod_set(f, "gitee-worker-0", "Succeeded", 0);
    assert_true(wait_for(f, job_state, GITEE "/gitee", "Succeeded"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_both_forms, setup, teardown),
    };
    /* forced: the engine's writes build in tree arena scopes (base/treearena.h) */
    if (!ty_tree_arena_init(true))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
