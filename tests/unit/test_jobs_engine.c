/* test_jobs_engine.c - the job engine end to end against a real store: the
 * test plays the node agent by writing pod statuses, and watches the job's
 * pods, services, conditions, annotations and metrics change. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
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
#include "base/metrics.h"
#include "base/timeutil.h"
#include "base/treearena.h"
#include "client/kc_cache.h"
#include "controller/gc.h"
#include "controller/jobs/engine.h"
#include "controller/jobs/jobs_int.h"
#include "scheduler/sched.h"
#include "model/yaml.h"
#include "kc_fixture.h"

#define PT "pytorchjobs.kubeflow.org"
#define WAIT_MS 60000 /* far past what any machine needs: ASan builds on loaded machines */

typedef struct fixture {
    char dir[64];
    ty_store *s;
    ty_gc *gc;
    ty_jobs *jobs;
    ty_sched *sched; /* admits the jobs' PodGroups; there are no nodes */
    ty_kc *remote;   /* setup_cached: the engine's client */
} fixture;

static int setup_with(void **state, bool cached)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->s = store_fixture_open(f->dir, NULL);
    f->gc = gc_start(KC(f->s), &err);
    assert_non_null(f->gc);
    /* cached: the engine as in operator mode, its passes reading its
     * watch's cache. A cache client never attached passes everything to the
     * store's client, but keeps no index (kc_reads_local), as HTTP. */
    if (cached)
        assert_non_null(f->remote = kc_cache_new(KC(f->s), &err));
    f->jobs = jobs_start(cached ? f->remote : KC(f->s), &err);
    assert_non_null(f->jobs);
    f->sched = sched_start(KC(f->s), &err);
    assert_non_null(f->sched);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, false);
}

static int setup_cached(void **state)
{
    return setup_with(state, true);
}

static int teardown(void **state)
{
    fixture *f = *state;
    sched_stop(f->sched);
    jobs_stop(f->jobs);
    kc_free(f->remote);
    gc_stop(f->gc);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

/* ---- helpers ---- */

/* Creates a job from YAML (printf-style), defaulted and validated as the API
 * server would. */
static void create_job(fixture *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void create_job(fixture *f, const char *fmt, ...)
{
    char yaml[4096];
    va_list ap;
    ty_error err;
    json_t *obj;
    const api_resource *res;
    store_obj *o;

    va_start(ap, fmt);
    vsnprintf(yaml, sizeof(yaml), fmt, ap);
    va_end(ap);
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

static bool exists(fixture *f, const char *res, const char *name)
{
    json_t *j = get(f, res, name);
    json_decref(j);
    return j != NULL;
}

static char *uid_of(fixture *f, const char *res, const char *name)
{
    json_t *j = get(f, res, name);
    char *u = j ? strdup(json_string_value(json_object_get(json_object_get(j, "metadata"),
                                                           "uid"))) : NULL;
    json_decref(j);
    return u;
}

/* Polls cond(f, a, b) for up to WAIT_MS. */
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
    (void)unused;
    return exists(f, "pods", name);
}

static bool pod_gone(fixture *f, const char *name, const char *unused)
{
    (void)unused;
    return !exists(f, "pods", name);
}

/* A replica's Service goes after its pod, in the same pass or a later one:
 * waited for, not looked at once the pod went. */
static bool svc_gone(fixture *f, const char *name, const char *unused)
{
    (void)unused;
    return !exists(f, "services", name);
}

/* A pod by that name whose uid differs from old_uid. */
static bool pod_replaced(fixture *f, const char *name, const char *old_uid)
{
    char *u = uid_of(f, "pods", name);
    bool r = u && old_uid && strcmp(u, old_uid) != 0;
    free(u);
    return r;
}

static const json_t *find_cond(const json_t *job, const char *type)
{
    const json_t *conds = json_object_get(json_object_get(job, "status"), "conditions");
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c)
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return c;
    return NULL;
}

/* "<pytorchjob name>" has condition type True. */
static bool job_is(fixture *f, const char *name, const char *type)
{
    json_t *j = get(f, PT, name);
    const json_t *c = find_cond(j, type);
    bool r = c && strcmp(json_string_value(json_object_get(c, "status")), "True") == 0;
    json_decref(j);
    return r;
}

static bool job_gone(fixture *f, const char *name, const char *unused)
{
    (void)unused;
    return !exists(f, PT, name);
}

static void expect_cond(fixture *f, const char *name, const char *type, const char *status,
                        const char *reason, const char *message)
{
    json_t *j = get(f, PT, name);
    const json_t *c = find_cond(j, type);

    if (!c)
        fail_msg("%s: no %s condition", name, type);
    assert_string_equal(json_string_value(json_object_get(c, "status")), status);
    if (reason)
        assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
    if (message)
        assert_string_equal(json_string_value(json_object_get(c, "message")), message);
    assert_non_null(json_object_get(c, "lastTransitionTime"));
    assert_non_null(json_object_get(c, "lastUpdateTime"));
    json_decref(j);
}

static const char *last_state(json_t *job)
{
    return kf_job_state(job);
}

typedef struct pod_state {
    const char *phase;
    int exit_code;  /* -1: running */
    int restarts;
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
                                  "containerStatuses", "name", "pytorch", "restartCount",
                                  ps->restarts, "state", state));
    return 0;
}

/* The node agent's part: the pod's phase and its container's exit code. */
static void pod_set(fixture *f, const char *name, const char *phase, int exit_code, int restarts)
{
    pod_state ps = {phase, exit_code, restarts};
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    assert_true(wait_for(f, pod_exists, name, NULL));
    o = store_mutate(f->s, "pods", "default", name, set_status, &ps, &err);
    if (!o)
        fail_msg("pod %s: %s", name, err.text);
    store_obj_unref(o);
}

static int set_suspend(json_t *job, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "runPolicy"), "suspend",
                        json_boolean(*(bool *)arg));
    return 0;
}

static const char *annotation(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
}

/* A PyTorchJob: Master + n Workers; run-policy and worker lines spliced in. */
#define PTJOB(name, annotations, runpolicy, worker_policy, nworkers)                         \
    "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"                                        \
    "metadata: {name: " name ", annotations: {" annotations "}}\n"                          \
    "spec:\n  runPolicy: {" runpolicy "}\n  pytorchReplicaSpecs:\n"                          \
    "    Master: {replicas: 1, restartPolicy: " worker_policy ",\n"                          \
    "      template: {spec: {containers: [{name: pytorch, image: busybox}]}}}\n"             \
    "    Worker: {replicas: " #nworkers ", restartPolicy: " worker_policy ",\n"              \
    "      template: {spec: {containers: [{name: pytorch, image: busybox}]}}}\n"

/* ---- tests ---- */

static void test_lifecycle(void **state)
{
    fixture *f = *state;
    const char *lbl = "job_namespace=\"default\",framework=\"pytorch\"";
    double created = ty_metric_get("training_operator_jobs_created_total", lbl);
    double ok = ty_metric_get("training_operator_jobs_successful_total", lbl);
    json_t *j, *svc;

    create_job(f, PTJOB("mnist", "", "", "OnFailure", 2));
    assert_true(wait_for(f, pod_exists, "mnist-master-0", NULL));
    assert_true(wait_for(f, pod_exists, "mnist-worker-0", NULL));
    assert_true(wait_for(f, pod_exists, "mnist-worker-1", NULL));
    assert_true(exists(f, "services", "mnist-master-0"));
    assert_true(exists(f, "services", "mnist-worker-1"));
    assert_false(exists(f, "pods", "mnist-worker-2"));
    svc = get(f, "services", "mnist-worker-1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(svc, "spec"),
                                                          "clusterIP")), "None");
    json_decref(svc);
    expect_cond(f, "mnist", "Created", "True", "PyTorchJobCreated", "PyTorchJob mnist is created.");
    assert_false(job_is(f, "mnist", "Running"));
    assert_true(ty_metric_get("training_operator_jobs_created_total", lbl) >= created + 1);

    /* Running only when the whole gang runs. */
    pod_set(f, "mnist-master-0", "Running", -1, 0);
    pod_set(f, "mnist-worker-0", "Running", -1, 0);
    usleep(200 * 1000);
    assert_false(job_is(f, "mnist", "Running"));
    pod_set(f, "mnist-worker-1", "Running", -1, 0);
    assert_true(wait_for(f, job_is, "mnist", "Running"));
    expect_cond(f, "mnist", "Running", "True", "PyTorchJobRunning",
                "PyTorchJob default/mnist is running.");
    j = get(f, PT, "mnist");
    assert_string_equal(last_state(j), "Running");
    assert_non_null(json_object_get(json_object_get(j, "status"), "startTime"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
                         json_object_get(j, "status"), "replicaStatuses"), "Worker"), "active")),
                     2);
    json_decref(j);

    pod_set(f, "mnist-master-0", "Succeeded", 0, 0);
    assert_true(wait_for(f, job_is, "mnist", "Succeeded"));
    expect_cond(f, "mnist", "Succeeded", "True", "PyTorchJobSucceeded",
                "PyTorchJob default/mnist successfully completed.");
    expect_cond(f, "mnist", "Running", "False", NULL, NULL);
    j = get(f, PT, "mnist");
    assert_string_equal(last_state(j), "Succeeded");
    assert_non_null(json_object_get(json_object_get(j, "status"), "completionTime"));
    json_decref(j);
    /* the version the engine's status write made, its top and metadata
     * built in the tree arena (its tree goes as a pod's does:
     * base/treearena.h) */
    store_obj *o = store_get(f->s, PT, "default", "mnist", NULL);
    assert_non_null(o);
    if (!f->remote) { /* the embedded client's batch; the cache's writes are HTTP's */
        assert_true(ty_tree_arena_owns(store_obj_json(o)));
        assert_true(ty_tree_arena_owns(json_object_get(store_obj_json(o), "metadata")));
    }
    store_obj_unref(o);
    assert_true(ty_metric_get("training_operator_jobs_successful_total", lbl) >= ok + 1);
    /* cleanPodPolicy None: the pods stay. */
    assert_true(exists(f, "pods", "mnist-worker-0"));

    /* Nothing changes after Succeeded. */
    pod_set(f, "mnist-worker-0", "Failed", 1, 0);
    usleep(200 * 1000);
    assert_false(job_is(f, "mnist", "Failed"));
    /* The Event is written after the status it tells of (a reader that
     * fetches the job when the Event comes finds it Succeeded): it was
     * written first. */
    {
        store_list l;
        store_list_opts lo = {.ns = "default"};
        long long ev_rv = -1, job_rv;
        o = store_get(f->s, PT, "default", "mnist", NULL);
        job_rv = atoll(json_string_value(json_object_get(
            json_object_get(store_obj_json(o), "metadata"), "resourceVersion")));
        store_obj_unref(o);
        /* (Events are written after the call that makes them returns when
         * another writer is committing: waited for) */
        for (int64_t deadline = ty_now_ms() + WAIT_MS; ev_rv < 0 && ty_now_ms() < deadline;) {
            assert_int_equal(store_list_objects(f->s, "events", &lo, &l, NULL), 0);
            for (size_t i = 0; i < l.n; i++) {
                const json_t *ev = store_obj_json(l.items[i]);
                if (!strcmp(json_string_value(json_object_get(ev, "reason")) ?: "",
                            "PyTorchJobSucceeded"))
                    ev_rv = atoll(json_string_value(json_object_get(
                        json_object_get(ev, "metadata"), "resourceVersion")));
            }
            store_list_free(&l);
            if (ev_rv < 0)
                usleep(10000);
        }
        assert_true(ev_rv > job_rv);
    }
}

static void test_never_failure(void **state)
{
    fixture *f = *state;

    create_job(f, PTJOB("nv", "", "", "Never", 2));
    pod_set(f, "nv-master-0", "Running", -1, 0);
    pod_set(f, "nv-worker-0", "Running", -1, 0);
    pod_set(f, "nv-worker-1", "Failed", 1, 0);
    assert_true(wait_for(f, job_is, "nv", "Failed"));
    expect_cond(f, "nv", "Failed", "True", "PyTorchJobFailed",
                "PyTorchJob nv has failed because 1 Worker replica(s) failed.");
    /* Not recreated. */
    usleep(200 * 1000);
    json_t *p = get(f, "pods", "nv-worker-1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "status"),
                                                          "phase")), "Failed");
    json_decref(p);
}

static void test_exit_code(void **state)
{
    fixture *f = *state;
    char *uid;
    json_t *j;

    create_job(f, PTJOB("ec", "", "", "ExitCode", 1));
    pod_set(f, "ec-master-0", "Running", -1, 0);
    pod_set(f, "ec-worker-0", "Running", -1, 0);
    assert_true(wait_for(f, job_is, "ec", "Running"));
    /* The engine creates the job's pods one after another: wait for this one. */
    assert_true(wait_for(f, pod_exists, "ec-worker-0", NULL));
    uid = uid_of(f, "pods", "ec-worker-0");
    assert_non_null(uid);
    pod_set(f, "ec-worker-0", "Failed", 137, 0);
    assert_true(wait_for(f, pod_replaced, "ec-worker-0", uid));
    free(uid);
    assert_true(wait_for(f, job_is, "ec", "Restarting"));
    expect_cond(f, "ec", "Restarting", "True", "PyTorchJobRestarting", NULL);
    expect_cond(f, "ec", "Running", "False", NULL, NULL);
    j = get(f, PT, "ec");
    assert_string_equal(annotation(j, "trainyard.io/restarts"), "1");
    assert_string_equal(last_state(j), "Restarting");
    json_decref(j);

    /* Back to Running: Restarting goes False. */
    pod_set(f, "ec-worker-0", "Running", -1, 0);
    assert_true(wait_for(f, job_is, "ec", "Running"));
    expect_cond(f, "ec", "Restarting", "False", NULL, NULL);

    /* 1-127 is permanent. */
    pod_set(f, "ec-worker-0", "Failed", 1, 0);
    assert_true(wait_for(f, job_is, "ec", "Failed"));
    expect_cond(f, "ec", "Failed", "True", "PyTorchJobFailed",
                "PyTorchJob ec has failed because 1 Worker replica(s) failed.");
}

static void test_backoff(void **state)
{
    fixture *f = *state;
    char *uid;

    /* ExitCode recreations count: the second would reach the limit of 2. */
    create_job(f, PTJOB("bo", "", "backoffLimit: 2", "ExitCode", 1));
    pod_set(f, "bo-master-0", "Running", -1, 0);
    /* The engine creates the job's pods one after another: wait for this one. */
    assert_true(wait_for(f, pod_exists, "bo-worker-0", NULL));
    uid = uid_of(f, "pods", "bo-worker-0");
    assert_non_null(uid);
    pod_set(f, "bo-worker-0", "Failed", 143, 0);
    assert_true(wait_for(f, pod_replaced, "bo-worker-0", uid));
    free(uid);
    pod_set(f, "bo-worker-0", "Failed", 137, 0);
    assert_true(wait_for(f, job_is, "bo", "Failed"));
    expect_cond(f, "bo", "Failed", "True", "BackoffLimitExceeded",
                "Job bo has failed because it has reached the specified backoff limit");

    /* In-place restarts (OnFailure) count too, Running or not. */
    create_job(f, PTJOB("bo2", "", "backoffLimit: 3", "OnFailure", 1));
    pod_set(f, "bo2-master-0", "Running", -1, 1);
    pod_set(f, "bo2-worker-0", "Pending", -1, 1);
    usleep(200 * 1000);
    assert_false(job_is(f, "bo2", "Failed"));
    pod_set(f, "bo2-worker-0", "Pending", -1, 2);
    assert_true(wait_for(f, job_is, "bo2", "Failed"));
    expect_cond(f, "bo2", "Failed", "True", "BackoffLimitExceeded", NULL);
}

/* 2 s, not 1: startTime has whole seconds, so a 1 s deadline can pass a
 * few milliseconds after the first pass, before the pass that creates the
 * pods (it failed so once in CI under ASan). */
static void test_deadline(void **state)
{
    fixture *f = *state;
    int64_t t0 = ty_now_ms();

    create_job(f, PTJOB("dl", "", "activeDeadlineSeconds: 2, cleanPodPolicy: All", "OnFailure", 1));
    pod_set(f, "dl-master-0", "Running", -1, 0);
    /* not before its time: told only while well inside it (a loaded machine
     * may get here after it; startTime's whole seconds take up to 1 s off) */
    {
        bool failed = job_is(f, "dl", "Failed"); /* read before the clock */
        if (ty_now_ms() - t0 < 900)
            assert_false(failed);
    }
    assert_true(wait_for(f, job_is, "dl", "Failed"));
    expect_cond(f, "dl", "Failed", "True", "DeadlineExceeded",
                "Job dl has failed because it was active longer than specified deadline");
    assert_true(wait_for(f, pod_gone, "dl-master-0", NULL));
    assert_true(wait_for(f, pod_gone, "dl-worker-0", NULL));
}

static void test_suspend_resume(void **state)
{
    fixture *f = *state;
    bool on = false;
    store_obj *o;
    json_t *j;

    create_job(f, PTJOB("sus", "", "suspend: true", "OnFailure", 1));
    assert_true(wait_for(f, job_is, "sus", "Suspended"));
    expect_cond(f, "sus", "Suspended", "True", "PyTorchJobSuspended", "PyTorchJob sus is suspended.");
    assert_false(exists(f, "pods", "sus-master-0"));

    o = store_mutate(f->s, PT, "default", "sus", set_suspend, &on, NULL);
    store_obj_unref(o);
    assert_true(wait_for(f, pod_exists, "sus-master-0", NULL));
    assert_true(wait_for(f, pod_exists, "sus-worker-0", NULL));
    expect_cond(f, "sus", "Suspended", "False", "PyTorchJobResumed", "PyTorchJob sus is resumed.");
    j = get(f, PT, "sus");
    assert_non_null(json_object_get(json_object_get(j, "status"), "startTime"));
    json_decref(j);
    pod_set(f, "sus-master-0", "Running", -1, 0);
    pod_set(f, "sus-worker-0", "Running", -1, 0);
    assert_true(wait_for(f, job_is, "sus", "Running"));

    on = true;
    o = store_mutate(f->s, PT, "default", "sus", set_suspend, &on, NULL);
    store_obj_unref(o);
    assert_true(wait_for(f, pod_gone, "sus-master-0", NULL));
    assert_true(wait_for(f, pod_gone, "sus-worker-0", NULL));
    assert_true(wait_for(f, svc_gone, "sus-worker-0", NULL));
    assert_true(wait_for(f, job_is, "sus", "Suspended"));
    expect_cond(f, "sus", "Running", "False", "PyTorchJobSuspended", NULL);
}

static void test_clean_pod_policy(void **state)
{
    fixture *f = *state;

    create_job(f, PTJOB("cr", "", "cleanPodPolicy: Running", "OnFailure", 2));
    pod_set(f, "cr-master-0", "Running", -1, 0);
    pod_set(f, "cr-worker-0", "Running", -1, 0);
    pod_set(f, "cr-worker-1", "Succeeded", 0, 0);
    pod_set(f, "cr-master-0", "Succeeded", 0, 0);
    assert_true(wait_for(f, job_is, "cr", "Succeeded"));
    assert_true(wait_for(f, pod_gone, "cr-worker-0", NULL));
    assert_true(wait_for(f, svc_gone, "cr-worker-0", NULL));
    assert_true(exists(f, "pods", "cr-master-0"));
    assert_true(exists(f, "pods", "cr-worker-1"));

    create_job(f, PTJOB("ca", "", "cleanPodPolicy: All", "OnFailure", 1));
    pod_set(f, "ca-worker-0", "Running", -1, 0);
    pod_set(f, "ca-master-0", "Succeeded", 0, 0);
    assert_true(wait_for(f, job_is, "ca", "Succeeded"));
    assert_true(wait_for(f, pod_gone, "ca-master-0", NULL));
    assert_true(wait_for(f, pod_gone, "ca-worker-0", NULL));
    assert_true(wait_for(f, svc_gone, "ca-master-0", NULL));
}

static void test_ttl(void **state)
{
    fixture *f = *state;

    create_job(f, PTJOB("ttl", "", "ttlSecondsAfterFinished: 1", "OnFailure", 1));
    pod_set(f, "ttl-master-0", "Succeeded", 0, 0);
    assert_true(wait_for(f, job_is, "ttl", "Succeeded"));
    assert_true(exists(f, PT, "ttl"));
    assert_true(wait_for(f, job_gone, "ttl", NULL));
    /* The garbage collector takes the pods with it. */
    assert_true(wait_for(f, pod_gone, "ttl-worker-0", NULL));
}

static void test_gang_restart(void **state)
{
    fixture *f = *state;
    char *m, *w0, *w1;
    json_t *j;

    create_job(f, PTJOB("gg", "trainyard.io/restart-policy: gang", "", "OnFailure", 2));
    pod_set(f, "gg-master-0", "Running", -1, 0);
    pod_set(f, "gg-worker-0", "Running", -1, 0);
    pod_set(f, "gg-worker-1", "Running", -1, 0);
    j = get(f, "pods", "gg-worker-0");
    /* The engine restarts the gang itself: the node agent must not. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "spec"),
                                                          "restartPolicy")), "Never");
    json_decref(j);
    m = uid_of(f, "pods", "gg-master-0");
    w0 = uid_of(f, "pods", "gg-worker-0");
    w1 = uid_of(f, "pods", "gg-worker-1");
    pod_set(f, "gg-worker-1", "Failed", 1, 0);
    assert_true(wait_for(f, pod_replaced, "gg-master-0", m));
    assert_true(wait_for(f, pod_replaced, "gg-worker-0", w0));
    assert_true(wait_for(f, pod_replaced, "gg-worker-1", w1));
    assert_true(wait_for(f, job_is, "gg", "Restarting"));
    j = get(f, PT, "gg");
    assert_string_equal(annotation(j, "trainyard.io/restarts"), "1");
    json_decref(j);
    free(m);
    free(w0);
    free(w1);
}

static bool cm_exists(fixture *f, const char *name, const char *unused)
{
    (void)unused;
    return exists(f, "configmaps", name);
}

/* Whether the PodGroup `name` has minMember a (decimal). */
static bool pg_min_member(fixture *f, const char *name, const char *want)
{
    json_t *pg = get(f, api_store_key(&api_podgroup), name);
    json_t *mm = json_object_get(json_object_get(pg, "spec"), "minMember");
    bool ok = json_is_integer(mm) && json_integer_value(mm) == atoll(want);

    json_decref(pg);
    return ok;
}

/* The launcher is created with its workers and is one of the gang, as the
 * training operator makes it (minMember = workers + launcher); minResources
 * counts the same pods. The launcher used to wait for running workers, out
 * of minMember but inside minResources. */
static void test_mpi_launcher_in_gang(void **state)
{
    fixture *f = *state;
    json_t *cm, *pg, *res;

    create_job(f, "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: pi}\n"
                  "spec:\n  mpiReplicaSpecs:\n"
                  "    Launcher: {replicas: 1, template: {spec: {containers: [{name: mpi, "
                  "image: m, command: [mpirun]}]}}}\n"
                  "    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, "
                  "image: m}]}}}\n");
    assert_true(wait_for(f, pg_min_member, "pi", "3"));
    assert_true(wait_for(f, pod_exists, "pi-worker-0", NULL));
    assert_true(wait_for(f, pod_exists, "pi-worker-1", NULL));
    assert_true(wait_for(f, pod_exists, "pi-launcher", NULL));
    assert_true(wait_for(f, cm_exists, "pi-config", NULL));
    assert_false(exists(f, "services", "pi-worker-0"));
    cm = get(f, "configmaps", "pi-config");
    assert_string_equal(json_string_value(json_object_get(json_object_get(cm, "data"),
                                                          "hostfile")),
                        "pi-worker-0 slots=1\npi-worker-1 slots=1\n");
    json_decref(cm);

    /* minResources: the launcher's 1 CPU and both workers' 2 */
    create_job(f, "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: big}\n"
                  "spec:\n  mpiReplicaSpecs:\n"
                  "    Launcher: {replicas: 1, template: {spec: {containers: [{name: l, "
                  "image: m, command: [mpirun], resources: {requests: {cpu: '1'}}}]}}}\n"
                  "    Worker: {replicas: 2, template: {spec: {containers: [{name: w, "
                  "image: m, resources: {requests: {cpu: '2'}}}]}}}\n");
    assert_true(wait_for(f, pg_min_member, "big", "3"));
    pg = get(f, api_store_key(&api_podgroup), "big");
    res = json_object_get(json_object_get(pg, "spec"), "minResources");
    assert_string_equal(json_string_value(json_object_get(res, "cpu")), "5");
    json_decref(pg);
}

/* The message of the Event with reason `reason` in default, or NULL
 * (caller frees). */
static char *event_message(fixture *f, const char *reason)
{
    store_list l;
    store_list_opts o = {.ns = "default"};
    char *msg = NULL;
    ty_error err;

    ty_error_init(&err);
    assert_int_equal(store_list_objects(f->s, "events", &o, &l, &err), 0);
    for (size_t i = 0; i < l.n && !msg; i++) {
        const json_t *ev = store_obj_json(l.items[i]);
        if (strcmp(json_string_value(json_object_get(ev, "reason")) ?: "", reason) == 0)
            msg = strdup(json_string_value(json_object_get(ev, "message")) ?: "");
    }
    store_list_free(&l);
    return msg;
}

/* A Secret a controller makes (the Volcano ssh plugin's) is reported as a
 * secret; it was "SuccessfulCreateConfigMap ... Created configmap". */
static void test_created_secret_event(void **state)
{
    fixture *f = *state;
    json_t *owner = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
                              "batch.volcano.sh/v1alpha1", "kind", "Job", "metadata", "name",
                              "sshj", "namespace", "default", "uid", "0000-1111");
    json_t *secret = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
                               "Secret", "metadata", "name", "sshj-ssh", "namespace", "default",
                               "stringData", "id_rsa", "k");
    ty_error err;
    char *msg;

    (void)state;
    ty_error_init(&err);
    assert_int_equal(jobs_create(KC(f->s), &api_secret, secret, owner, "vc-controller-manager",
                                 &err), 0);
    /* An Event is written after the call returns when another writer is
     * committing (client/events.h): waited for, not read at once (it was
     * not there yet in a loaded CI run). */
    for (int64_t deadline = ty_now_ms() + WAIT_MS;
         !(msg = event_message(f, "SuccessfulCreateSecret")) && ty_now_ms() < deadline;)
        usleep(10000);
    assert_non_null(msg);
    assert_string_equal(msg, "Created secret: sshj-ssh");
    free(msg);
    assert_null(event_message(f, "SuccessfulCreateConfigMap"));
    json_decref(owner);
}

/* runPolicy.managedBy naming another controller: that one runs the job; this
 * engine makes no pods and writes no status (it used to run it anyway). */
static void test_managed_elsewhere(void **state)
{
    fixture *f = *state;
    json_t *j;

    create_job(f, PTJOB("mk", "", "managedBy: kueue.x-k8s.io/multikueue", "Never", 1));
    create_job(f, PTJOB("own", "", "managedBy: kubeflow.org/training-operator", "Never", 1));
    /* The job this engine manages is run, so the other one was looked at. */
    assert_true(wait_for(f, pod_exists, "own-master-0", NULL));
    usleep(200 * 1000);
    assert_false(exists(f, "pods", "mk-master-0"));
    j = get(f, "pytorchjobs.kubeflow.org", "mk");
    assert_null(json_object_get(json_object_get(j, "status"), "conditions"));
    json_decref(j);
}

/* An engine started for some kinds only (operator mode's --enable-scheme)
 * leaves the jobs of the others alone: no pods, no status. */
static void test_some_kinds_only(void **state)
{
    fixture *f = *state;
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);
    uint64_t mask = 0;
    ty_error err;
    json_t *j;

    for (size_t i = 0; i < n; i++)
        if (!strcmp(kinds[i]->kind, "PyTorchJob"))
            mask |= (uint64_t)1 << i;
    jobs_stop(f->jobs);
    ty_error_init(&err);
    f->jobs = jobs_start_kinds(KC(f->s), mask, &err);
    assert_non_null(f->jobs);
    create_job(f, "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: tf}\n"
                  "spec:\n  tfReplicaSpecs:\n    Worker: {replicas: 1, template: {spec: "
                  "{containers: [{name: tensorflow, image: busybox}]}}}\n");
    create_job(f, PTJOB("pt", "", "", "Never", 1));
    /* the PyTorchJob created after it runs: the TFJob's event came first */
    assert_true(wait_for(f, pod_exists, "pt-master-0", NULL));
    usleep(200 * 1000);
    assert_false(exists(f, "pods", "tf-worker-0"));
    j = get(f, "tfjobs.kubeflow.org", "tf");
    assert_null(json_object_get(json_object_get(j, "status"), "conditions"));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_managed_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_some_kinds_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_suspend_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clean_pod_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gang_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mpi_launcher_in_gang, setup, teardown),
        cmocka_unit_test_setup_teardown(test_created_secret_event, setup, teardown),
        /* the same, reading from the cache (operator mode) */
        cmocka_unit_test_setup_teardown(test_lifecycle, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_never_failure, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_exit_code, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_backoff, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_deadline, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_suspend_resume, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_clean_pod_policy, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_ttl, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_gang_restart, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_mpi_launcher_in_gang, setup_cached, teardown),
        cmocka_unit_test_setup_teardown(test_created_secret_event, setup_cached, teardown),
    };
    /* forced: the engine's writes build in tree arena scopes, sanitizer
     * builds included (base/treearena.h) */
    if (!ty_tree_arena_init(true))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
