/* test_ctl_jobs.c - the Kubeflow job engine's pass (jobs_reconcile) for one
 * PyTorchJob against the fake client: each test seeds the job and its pods
 * as they would stand, runs one pass, and asserts the writes it made. No
 * store, no threads, no sleeps (test_jobs_engine.c runs the same rules end
 * to end). */
#include "ctl_fixture.h"

#include <time.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "base/timeutil.h"
#include "controller/jobs/jobs_int.h"

#define PT "pytorchjobs.kubeflow.org"
#define PG "podgroups.scheduling.volcano.sh"

/* A PyTorchJob default/mnist: Master + 2 Workers under restartPolicy rp,
 * runPolicy members spliced in. */
#define PTJOB(runpolicy, rp)                                                                  \
    "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"                                        \
    "metadata: {name: mnist}\n"                                                              \
    "spec:\n  runPolicy: {" runpolicy "}\n  pytorchReplicaSpecs:\n"                          \
    "    Master: {replicas: 1, restartPolicy: " rp ",\n"                                     \
    "      template: {spec: {containers: [{name: pytorch, image: busybox}]}}}\n"             \
    "    Worker: {replicas: 2, restartPolicy: " rp ",\n"                                     \
    "      template: {spec: {containers: [{name: pytorch, image: busybox}]}}}\n"

static const char *const replicas[] = {"mnist-master-0", "mnist-worker-0", "mnist-worker-1"};

static int setup(void **state)
{
    ty_kc *c = kc_fake_new();

    assert_non_null(c);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    kc_free(*state);
    return 0;
}

static int pass_at(ty_kc *c, time_t *wake_at)
{
    char wrote[TY_RV_MAX] = "";

    *wake_at = 0;
    return jobs_reconcile(c, &kf_pytorchjob, "default", "mnist", wake_at, wrote);
}

static int pass(ty_kc *c)
{
    time_t wake_at;

    return pass_at(c, &wake_at);
}

/* The scheduler's part: the job's PodGroup admitted. */
static int admit(json_t *pg, void *arg, ty_error *err)
{
    (void)arg;
    (void)err;
    json_object_set_new(pg, "status", json_pack("{s:s}", "phase", "Inqueue"));
    return 0;
}

static void admit_podgroup(ty_kc *c)
{
    ty_obj_unref(kc_mutate(c, PG, "default", "mnist", admit, NULL, KC_STATUS, NULL));
}

/* The node agent's part: a pod's phase and its container's exit code. */
typedef struct pod_state {
    const char *phase;
    int exit_code; /* -1: running */
} pod_state;

static int set_pod(json_t *pod, void *arg, ty_error *err)
{
    const pod_state *ps = arg;
    json_t *state = ps->exit_code >= 0
                        ? json_pack("{s:{s:i}}", "terminated", "exitCode", ps->exit_code)
                        : json_pack("{s:{}}", "running");

    (void)err;
    json_object_set_new(pod, "status",
                        json_pack("{s:s, s:[{s:s, s:i, s:o}]}", "phase", ps->phase,
                                  "containerStatuses", "name", "pytorch", "restartCount", 0,
                                  "state", state));
    return 0;
}

static void pod_set(ty_kc *c, const char *name, const char *phase, int exit_code)
{
    pod_state ps = {phase, exit_code};
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(c, "pods", "default", name, set_pod, &ps, KC_STATUS, &err);
    if (!o)
        fail_msg("pod %s: %s", name, err.text);
    ty_obj_unref(o);
}

/* The job created, admitted and its pods made: the state the later tests
 * start from, with the action log empty. */
static void started(ty_kc *c, const char *runpolicy_yaml)
{
    ctl_put_yaml(c, "%s", runpolicy_yaml);
    assert_int_equal(pass(c), 0);
    admit_podgroup(c);
    assert_int_equal(pass(c), 0);
    for (size_t i = 0; i < 3; i++)
        assert_true(ctl_exists(c, "pods", replicas[i]));
    kc_fake_clear_actions(c);
}

static const json_t *cond(const json_t *job, const char *type)
{
    const json_t *c;
    size_t i;

    json_array_foreach(ctl_at(job, "status.conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")), type))
            return c;
    return NULL;
}

static bool cond_true(const json_t *job, const char *type)
{
    const json_t *c = cond(job, type);

    return c && !strcmp(json_string_value(json_object_get(c, "status")), "True");
}

/* ---- tests ---- */

/* First pass: the PodGroup and the Created condition, and nothing else
 * until the gang scheduler admits the group; the next pass makes every pod
 * and Service, named, labelled and with PyTorch's env. */
static void test_first_passes(void **state)
{
    ty_kc *c = *state;
    const char *uid = ctl_put_yaml(c, PTJOB("", "OnFailure"));
    char job_uid[64];
    json_t *pg, *job, *pod, *svc;

    snprintf(job_uid, sizeof(job_uid), "%s", uid);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", PG), "mnist");
    assert_int_equal(kc_fake_count(c, "create", "pods"), 0);
    assert_int_equal(kc_fake_count(c, "create", "services"), 0);
    pg = ctl_get(c, PG, "mnist");
    assert_int_equal(json_integer_value(ctl_at(pg, "spec.minMember")), 3);
    assert_string_equal(ctl_str(pg, "spec.queue"), "default");
    assert_string_equal(ctl_str(json_array_get(ctl_at(pg, "metadata.ownerReferences"), 0), "uid"),
                        job_uid);
    json_decref(pg);
    /* the status went through the status subresource */
    assert_int_equal(kc_fake_count(c, "update", PT "/status"), 1);
    assert_int_equal(kc_fake_count(c, "update", PT), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Created"));
    assert_string_equal(ctl_str(cond(job, "Created"), "reason"), "PyTorchJobCreated");
    json_decref(job);
    assert_int_equal(ctl_events(c, "PyTorchJobCreated"), 1);

    /* Not admitted yet: a pass changes nothing. */
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0);

    admit_podgroup(c);
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", "pods"),
                        "mnist-master-0,mnist-worker-0,mnist-worker-1");
    assert_string_equal(ctl_names(c, "create", "services"),
                        "mnist-master-0,mnist-worker-0,mnist-worker-1");
    assert_int_equal(ctl_events(c, "SuccessfulCreatePod"), 3);
    assert_int_equal(ctl_events(c, "SuccessfulCreateService"), 3);

    pod = ctl_get(c, "pods", "mnist-worker-1");
    {
        const json_t *labels = ctl_at(pod, "metadata.labels");
        assert_string_equal(json_string_value(json_object_get(labels, JOBS_LABEL_JOB_NAME)),
                            "mnist");
        assert_string_equal(json_string_value(json_object_get(labels, JOBS_LABEL_TYPE)),
                            "worker");
        assert_string_equal(json_string_value(json_object_get(labels, JOBS_LABEL_INDEX)), "1");
        assert_string_equal(json_string_value(json_object_get(labels, JOBS_LABEL_OPERATOR)),
                            "pytorchjob-controller");
        assert_null(json_object_get(labels, JOBS_LABEL_ROLE));
    }
    assert_string_equal(ctl_str(json_array_get(ctl_at(pod, "metadata.ownerReferences"), 0), "uid"),
                        job_uid);
    assert_string_equal(ctl_str(pod, "spec.restartPolicy"), "OnFailure");
    assert_string_equal(ctl_env(pod, "MASTER_ADDR"), "mnist-master-0");
    assert_string_equal(ctl_env(pod, "WORLD_SIZE"), "3");
    assert_string_equal(ctl_env(pod, "RANK"), "2");
    assert_string_equal(ctl_env(pod, "MASTER_PORT"), "23456");
    assert_string_equal(ctl_env(pod, "PYTHONUNBUFFERED"), "1");
    json_decref(pod);
    pod = ctl_get(c, "pods", "mnist-master-0");
    assert_string_equal(json_string_value(json_object_get(ctl_at(pod, "metadata.labels"),
                                                          JOBS_LABEL_ROLE)), "master");
    assert_string_equal(ctl_env(pod, "RANK"), "0");
    json_decref(pod);
    svc = ctl_get(c, "services", "mnist-worker-1");
    assert_string_equal(ctl_str(svc, "spec.clusterIP"), "None");
    assert_string_equal(json_string_value(json_object_get(ctl_at(svc, "spec.selector"),
                                                          JOBS_LABEL_INDEX)), "1");
    json_decref(svc);

    /* A pass over what it made makes nothing more (level-triggered). */
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_int_equal(kc_fake_count(c, "create", "pods"), 0);
    assert_int_equal(kc_fake_count(c, "create", "services"), 0);
}

/* Running once every replica runs. */
static void test_running(void **state)
{
    ty_kc *c = *state;
    json_t *job;

    started(c, PTJOB("", "OnFailure"));
    pod_set(c, "mnist-master-0", "Running", -1);
    pod_set(c, "mnist-worker-0", "Running", -1);
    assert_int_equal(pass(c), 0);
    job = ctl_get(c, PT, "mnist");
    assert_false(cond_true(job, "Running"));
    json_decref(job);
    pod_set(c, "mnist-worker-1", "Running", -1);
    assert_int_equal(pass(c), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Running"));
    assert_int_equal(json_integer_value(ctl_at(job, "status.replicaStatuses.Worker.active")), 2);
    json_decref(job);
    assert_int_equal(ctl_events(c, "PyTorchJobRunning"), 1);
}

/* Failed pods under OnFailure: the pass deletes them (the next recreates
 * them), sets Restarting and counts the restarts on the job. */
static void test_failed_pods_restart(void **state)
{
    ty_kc *c = *state;
    const kc_fake_action *a;
    json_t *job;

    started(c, PTJOB("", "OnFailure"));
    pod_set(c, "mnist-master-0", "Running", -1);
    pod_set(c, "mnist-worker-0", "Failed", 137);
    pod_set(c, "mnist-worker-1", "Running", -1);
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "delete", "pods"), "mnist-worker-0");
    a = kc_fake_find(c, "delete", "pods", "mnist-worker-0");
    assert_int_equal(a->code, TY_OK);
    assert_false(ctl_exists(c, "pods", "mnist-worker-0"));
    assert_int_equal(ctl_events(c, "ExitedWithCode"), 1);
    assert_int_equal(ctl_events(c, "PyTorchJobRestarting"), 1);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Restarting"));
    assert_int_equal(json_integer_value(ctl_at(job, "status.replicaStatuses.Worker.failed")), 1);
    json_decref(job);

    /* the next pass recreates the pod it deleted */
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", "pods"), "mnist-worker-0");
}

/* The recreation is counted on the job (trainyard.io/restarts), and the
 * count must survive the write that carries it: a metadata write of its own
 * (reconcile.c, commit). It went with the status through the status
 * subresource, where a real API server, and so the fake client, keeps
 * .status alone: the count was lost. */
static void test_restart_count_kept(void **state)
{
    ty_kc *c = *state;
    const char *count;
    json_t *job;

    started(c, PTJOB("", "OnFailure"));
    pod_set(c, "mnist-worker-0", "Failed", 137);
    assert_int_equal(pass(c), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Restarting"));
    count = json_string_value(json_object_get(ctl_at(job, "metadata.annotations"),
                                              JOBS_ANN_RESTARTS));
    assert_non_null(count);
    assert_string_equal(count, "1");
    json_decref(job);
}

/* A restart that would reach backoffLimit fails the job instead. */
static void test_backoff_limit(void **state)
{
    ty_kc *c = *state;
    json_t *job;

    started(c, PTJOB("backoffLimit: 1", "OnFailure"));
    pod_set(c, "mnist-worker-1", "Failed", 137);
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_int_equal(kc_fake_count(c, "delete", "pods"), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Failed"));
    assert_string_equal(ctl_str(cond(job, "Failed"), "reason"), "BackoffLimitExceeded");
    json_decref(job);
}

/* Master succeeded: the job Succeeded, with completionTime; cleanPodPolicy
 * None keeps the pods. */
static void test_succeeded(void **state)
{
    ty_kc *c = *state;
    json_t *job;

    started(c, PTJOB("", "OnFailure"));
    for (size_t i = 0; i < 3; i++)
        pod_set(c, replicas[i], "Succeeded", 0);
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Succeeded"));
    assert_string_equal(ctl_str(cond(job, "Succeeded"), "reason"), "PyTorchJobSucceeded");
    assert_non_null(ctl_str(job, "status.completionTime"));
    assert_string_equal(kf_job_state(job), "Succeeded");
    json_decref(job);
    assert_int_equal(ctl_events(c, "PyTorchJobSucceeded"), 1);
    assert_int_equal(kc_fake_count(c, "delete", NULL), 0);

    /* Finished: the next pass writes nothing. */
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0);
}

static int set_suspend(json_t *job, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(json_object_get(job, "spec"), "runPolicy"), "suspend",
                        json_boolean(*(bool *)arg));
    return 0;
}

/* suspend: every pod and Service deleted, Suspended True; resume makes
 * them again. */
static void test_suspend_resume(void **state)
{
    ty_kc *c = *state;
    bool on = true;
    json_t *job;

    started(c, PTJOB("", "OnFailure"));
    ty_obj_unref(kc_mutate(c, PT, "default", "mnist", set_suspend, &on, 0, NULL));
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "delete", "pods"),
                        "mnist-master-0,mnist-worker-0,mnist-worker-1");
    assert_string_equal(ctl_names(c, "delete", "services"),
                        "mnist-master-0,mnist-worker-0,mnist-worker-1");
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Suspended"));
    json_decref(job);
    assert_int_equal(ctl_events(c, "PyTorchJobSuspended"), 1);

    on = false;
    ty_obj_unref(kc_mutate(c, PT, "default", "mnist", set_suspend, &on, 0, NULL));
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", "pods"),
                        "mnist-master-0,mnist-worker-0,mnist-worker-1");
    job = ctl_get(c, PT, "mnist");
    assert_false(cond_true(job, "Suspended"));
    assert_string_equal(ctl_str(cond(job, "Suspended"), "reason"), "PyTorchJobResumed");
    json_decref(job);
}

/* A finished job's completionTime written as if the job had finished ago
 * seconds before now. */
static int backdate(json_t *job, void *arg, ty_error *err)
{
    char ts[32];

    (void)err;
    ty_time_format(time(NULL) - *(time_t *)arg, ts, sizeof(ts));
    json_object_set_new(json_object_get(job, "status"), "completionTime", json_string(ts));
    return 0;
}

/* ttlSecondsAfterFinished: before its time the pass asks to be woken then
 * (wake_at); after it, the job is deleted. jobs_reconcile reads the wall
 * clock, so the test moves completionTime instead of the clock. */
static void test_ttl(void **state)
{
    ty_kc *c = *state;
    time_t ago = 10, wake_at, before;
    json_t *job;

    started(c, PTJOB("ttlSecondsAfterFinished: 3600", "OnFailure"));
    for (size_t i = 0; i < 3; i++)
        pod_set(c, replicas[i], "Succeeded", 0);
    assert_int_equal(pass(c), 0);
    ty_obj_unref(kc_mutate(c, PT, "default", "mnist", backdate, &ago, KC_STATUS, NULL));
    job = ctl_get(c, PT, "mnist");
    assert_int_equal(ty_time_parse(ctl_str(job, "status.completionTime"), &before), 0);
    json_decref(job);

    kc_fake_clear_actions(c);
    assert_int_equal(pass_at(c, &wake_at), 0);
    assert_int_equal(wake_at, before + 3600);
    assert_int_equal(kc_fake_count(c, "delete", PT), 0);

    ago = 3601;
    ty_obj_unref(kc_mutate(c, PT, "default", "mnist", backdate, &ago, KC_STATUS, NULL));
    kc_fake_clear_actions(c);
    assert_int_equal(pass_at(c, &wake_at), 0);
    assert_string_equal(ctl_names(c, "delete", PT), "mnist");
    assert_false(ctl_exists(c, PT, "mnist"));
}

static int set_start(json_t *job, void *arg, ty_error *err)
{
    char ts[32];

    (void)err;
    ty_time_format(*(time_t *)arg, ts, sizeof(ts));
    json_object_set_new(json_object_get(job, "status"), "startTime", json_string(ts));
    return 0;
}

/* activeDeadlineSeconds: the pass asks to be woken at the deadline; past
 * it the job fails (DeadlineExceeded). */
static void test_deadline(void **state)
{
    ty_kc *c = *state;
    time_t wake_at, start;
    json_t *job;

    started(c, PTJOB("activeDeadlineSeconds: 600", "OnFailure"));
    job = ctl_get(c, PT, "mnist");
    assert_int_equal(ty_time_parse(ctl_str(job, "status.startTime"), &start), 0);
    json_decref(job);
    assert_int_equal(pass_at(c, &wake_at), 0);
    assert_int_equal(wake_at, start + 600);

    start = time(NULL) - 601;
    ty_obj_unref(kc_mutate(c, PT, "default", "mnist", set_start, &start, KC_STATUS, NULL));
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Failed"));
    assert_string_equal(ctl_str(cond(job, "Failed"), "reason"), "DeadlineExceeded");
    json_decref(job);
    assert_int_equal(ctl_events(c, "DeadlineExceeded"), 1);
}

/* A failed status write fails the pass (the work queue retries it); the
 * retry writes it. */
static void test_status_write_fails(void **state)
{
    ty_kc *c = *state;
    json_t *job;

    ctl_put_yaml(c, PTJOB("", "OnFailure"));
    kc_fake_fail_next(c, "update", PT "/status", TY_EUNAVAILABLE);
    assert_int_equal(pass(c), -1);
    assert_int_equal(kc_fake_find(c, "update", PT "/status", "mnist")->code, TY_EUNAVAILABLE);
    job = ctl_get(c, PT, "mnist");
    assert_null(cond(job, "Created"));
    json_decref(job);
    assert_int_equal(pass(c), 0);
    job = ctl_get(c, PT, "mnist");
    assert_true(cond_true(job, "Created"));
    json_decref(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_pods_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_count_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_succeeded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_suspend_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_write_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
