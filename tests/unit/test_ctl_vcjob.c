/* test_ctl_vcjob.c - the Volcano Job controller's pass (vc_reconcile) for
 * one Job against the fake client: seeded job and pods, one pass, the
 * writes asserted. No store, no threads, no sleeps. */
#include "ctl_fixture.h"

#include "api/kinds.h"
#include "controller/volcano/vc_int.h"

#define VJ "jobs.batch.volcano.sh"
#define PG "podgroups.scheduling.volcano.sh"

/* default/vj: one task of two workers; a failed pod restarts the job. */
#define VCJOB(policies)                                                                       \
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"                                     \
    "metadata: {name: vj}\n"                                                                 \
    "spec:\n  minAvailable: 2\n  maxRetry: 3\n  schedulerName: volcano\n"                    \
    "  policies: [" policies "]\n"                                                           \
    "  tasks:\n  - name: worker\n    replicas: 2\n"                                          \
    "    template: {spec: {restartPolicy: Never,\n"                                          \
    "      containers: [{name: main, image: busybox}]}}\n"

/* The controller writes the job's status with the job itself (reconcile.c,
 * commit), and its PodGroup's with the PodGroup's create: kept by the
 * embedded client's store, dropped by an API server. These tests take the
 * store's rule (lax) to test the decisions; test_status_kept_by_api_server
 * takes the API server's. */
static int setup(void **state)
{
    ty_kc *c = kc_fake_new();

    assert_non_null(c);
    kc_fake_set_lax_status(c, true);
    *state = c;
    return 0;
}

static int setup_strict(void **state)
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

static int pass(ty_kc *c)
{
    time_t wake_at = 0;

    return vc_reconcile(c, "default", "vj", &wake_at);
}

static const char *phase_of(ty_kc *c)
{
    static char buf[32];
    json_t *job = ctl_get(c, VJ, "vj");

    snprintf(buf, sizeof(buf), "%s", ctl_str(job, "status.state.phase") ?: "");
    json_decref(job);
    return buf;
}

static int admit(json_t *pg, void *arg, ty_error *err)
{
    (void)arg;
    (void)err;
    json_object_set_new(pg, "status", json_pack("{s:s}", "phase", "Inqueue"));
    return 0;
}

static int set_phase(json_t *pod, void *arg, ty_error *err)
{
    const char *phase = arg;
    int code = !strcmp(phase, "Failed") ? 1 : -1;

    (void)err;
    json_object_set_new(
        pod, "status",
        json_pack("{s:s, s:[{s:s, s:i, s:o}]}", "phase", phase, "containerStatuses", "name",
                  "main", "restartCount", 0, "state",
                  code >= 0 ? json_pack("{s:{s:i}}", "terminated", "exitCode", code)
                            : json_pack("{s:{}}", "running")));
    return 0;
}

static void pod_set(ty_kc *c, const char *name, const char *phase)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(c, "pods", "default", name, set_phase, (void *)phase, KC_STATUS, &err);
    if (!o)
        fail_msg("pod %s: %s", name, err.text);
    ty_obj_unref(o);
}

/* The job created and running: its PodGroup admitted, both pods Running,
 * the action log empty. Returns the job's uid (static). */
static const char *running(ty_kc *c, const char *yaml)
{
    static char uid[64];
    char pg[128];

    snprintf(uid, sizeof(uid), "%s", ctl_put_yaml(c, "%s", yaml));
    assert_int_equal(pass(c), 0);
    snprintf(pg, sizeof(pg), "vj-%s", uid);
    ty_obj_unref(kc_mutate(c, PG, "default", pg, admit, NULL, KC_STATUS, NULL));
    assert_int_equal(pass(c), 0);
    pod_set(c, "vj-worker-0", "Running");
    pod_set(c, "vj-worker-1", "Running");
    assert_int_equal(pass(c), 0);
    assert_string_equal(phase_of(c), "Running");
    kc_fake_clear_actions(c);
    return uid;
}

/* The first passes: the PodGroup (named after the job and its uid), then,
 * once admitted, the pods with Volcano's annotations and labels. */
static void test_first_passes(void **state)
{
    ty_kc *c = *state;
    char uid[64], pgname[128];
    json_t *pg, *pod;

    snprintf(uid, sizeof(uid), "%s", ctl_put_yaml(c, VCJOB("{event: PodFailed, action: RestartJob}")));
    snprintf(pgname, sizeof(pgname), "vj-%s", uid);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", PG), pgname);
    assert_int_equal(kc_fake_count(c, "create", "pods"), 0);
    pg = ctl_get(c, PG, pgname);
    assert_int_equal(json_integer_value(ctl_at(pg, "spec.minMember")), 2);
    assert_string_equal(ctl_str(pg, "status.phase"), "Pending");
    json_decref(pg);
    assert_string_equal(phase_of(c), "Pending");

    ty_obj_unref(kc_mutate(c, PG, "default", pgname, admit, NULL, KC_STATUS, NULL));
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", "pods"), "vj-worker-0,vj-worker-1");
    pod = ctl_get(c, "pods", "vj-worker-1");
    assert_string_equal(json_string_value(json_object_get(ctl_at(pod, "metadata.annotations"),
                                                          VC_ANN_TASK_INDEX)), "1");
    assert_string_equal(json_string_value(json_object_get(ctl_at(pod, "metadata.annotations"),
                                                          VC_ANN_GROUP)), pgname);
    assert_string_equal(json_string_value(json_object_get(ctl_at(pod, "metadata.annotations"),
                                                          VC_ANN_JOB_VERSION)), "0");
    assert_string_equal(json_string_value(json_object_get(ctl_at(pod, "metadata.labels"),
                                                          VC_ANN_JOB_NAME)), "vj");
    assert_string_equal(ctl_str(pod, "spec.schedulerName"), "volcano");
    assert_string_equal(ctl_str(json_array_get(ctl_at(pod, "metadata.ownerReferences"), 0), "uid"),
                        uid);
    json_decref(pod);
}

/* PodFailed -> RestartJob: every pod killed, retryCount and version up,
 * Restarting; once the pods are gone Pending, then the pods come back at
 * the new version. */
static void test_pod_failed_restarts_job(void **state)
{
    ty_kc *c = *state;
    json_t *job, *pod;

    running(c, VCJOB("{event: PodFailed, action: RestartJob}"));
    pod_set(c, "vj-worker-1", "Failed");
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "delete", "pods"), "vj-worker-0,vj-worker-1");
    assert_int_equal(ctl_events(c, "ExecuteAction"), 1);
    assert_string_equal(phase_of(c), "Restarting");
    job = ctl_get(c, VJ, "vj");
    assert_int_equal(json_integer_value(ctl_at(job, "status.retryCount")), 1);
    assert_int_equal(json_integer_value(ctl_at(job, "status.version")), 1);
    assert_string_equal(ctl_str(job, "status.state.reason"), "PodFailed");
    json_decref(job);

    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(phase_of(c), "Pending");
    kc_fake_clear_actions(c);
    assert_int_equal(pass(c), 0);
    assert_string_equal(ctl_names(c, "create", "pods"), "vj-worker-0,vj-worker-1");
    pod = ctl_get(c, "pods", "vj-worker-0");
    assert_string_equal(json_string_value(json_object_get(ctl_at(pod, "metadata.annotations"),
                                                          VC_ANN_JOB_VERSION)), "1");
    json_decref(pod);
}

/* Without a policy a failed pod is not replaced: the task cannot reach its
 * minAvailable again and the job fails, its live pods killed. */
static void test_pod_failed_without_policy(void **state)
{
    ty_kc *c = *state;

    running(c, VCJOB(""));
    pod_set(c, "vj-worker-1", "Failed");
    assert_int_equal(pass(c), 0);
    assert_string_equal(phase_of(c), "Failed");
    assert_string_equal(ctl_names(c, "delete", "pods"), "vj-worker-0");
    assert_int_equal(kc_fake_count(c, "create", "pods"), 0);
}

/* A delete that fails fails the pass, to be retried. */
static void test_failed_delete_retried(void **state)
{
    ty_kc *c = *state;

    running(c, VCJOB("{event: PodFailed, action: RestartJob}"));
    pod_set(c, "vj-worker-1", "Failed");
    kc_fake_fail_next(c, "delete", "pods", TY_EUNAVAILABLE);
    assert_int_equal(pass(c), -1);
    assert_int_equal(kc_fake_find(c, "delete", "pods", "vj-worker-0")->code, TY_EUNAVAILABLE);
    assert_true(ctl_exists(c, "pods", "vj-worker-0"));
}

/* Under the API server's rule the first pass's status (phase Pending)
 * must still be there: commit writes it through /status (it was written
 * with the job, and an API server dropped it). */
static void test_status_kept_by_api_server(void **state)
{
    ty_kc *c = *state;

    ctl_put_yaml(c, VCJOB("{event: PodFailed, action: RestartJob}"));
    assert_int_equal(pass(c), 0);
    assert_string_equal(phase_of(c), "Pending");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_failed_restarts_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_failed_without_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_delete_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_kept_by_api_server, setup_strict, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
