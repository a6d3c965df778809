/* test_vcjob_policy.c - the Volcano Job controller's pure decisions: policy
 * matching, every row of the phase table (docs/internals/volcano.md) and the
 * env/svc/pytorch plugins. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "controller/volcano/vc_int.h"
#include "store_fixture.h"
#include "kc_fixture.h"

typedef struct match_row {
    const char *task;  /* task policies (JSON), may be NULL */
    const char *job;   /* job policies (JSON), may be NULL */
    const char *event;
    int exit_code;
    vc_action want;
    long long elapsed_ms; /* how long the condition has lasted */
    long long want_wait;  /* -1: no delayed action pending */
} match_row;

static const match_row match_rows[] = {
    {NULL, "[{\"event\":\"PodFailed\",\"action\":\"RestartJob\"}]", "PodFailed", 1,
     VC_RESTART_JOB, 0, -1},
    {NULL, "[{\"event\":\"PodEvicted\",\"action\":\"RestartJob\"}]", "PodFailed", 1, VC_SYNC, 0, -1},
    {NULL, "[{\"events\":[\"PodEvicted\",\"PodFailed\"],\"action\":\"AbortJob\"}]", "PodEvicted",
     -1, VC_ABORT_JOB, 0, -1},
    {NULL, "[{\"event\":\"*\",\"action\":\"TerminateJob\"}]", "Unknown", -1, VC_TERMINATE_JOB, 0, -1},
    {"[{\"event\":\"TaskCompleted\",\"action\":\"CompleteJob\"}]", NULL, "TaskCompleted", 0,
     VC_COMPLETE_JOB, 0, -1},
    /* task policies win over job policies */
    {"[{\"event\":\"PodFailed\",\"action\":\"RestartTask\"}]",
     "[{\"event\":\"PodFailed\",\"action\":\"RestartJob\"}]", "PodFailed", 1, VC_RESTART_TASK, 0, -1},
    /* the job's apply when the task has none for the event */
    {"[{\"event\":\"PodEvicted\",\"action\":\"RestartPod\"}]",
     "[{\"event\":\"PodFailed\",\"action\":\"RestartJob\"}]", "PodFailed", 1, VC_RESTART_JOB, 0, -1},
    {NULL, "[{\"exitCode\":3,\"action\":\"AbortJob\"}]", "PodFailed", 3, VC_ABORT_JOB, 0, -1},
    {NULL, "[{\"exitCode\":3,\"action\":\"AbortJob\"}]", "PodFailed", 4, VC_SYNC, 0, -1},
    {NULL, "[{\"exitCode\":3,\"action\":\"AbortJob\"}]", "PodEvicted", 3, VC_SYNC, 0, -1},
    /* a timeout delays the action: not yet, then due */
    {NULL, "[{\"event\":\"PodFailed\",\"action\":\"RestartJob\",\"timeout\":\"1m\"}]",
     "PodFailed", 1, VC_SYNC, 20000, 40000},
    {NULL, "[{\"event\":\"PodFailed\",\"action\":\"RestartJob\",\"timeout\":\"1m\"}]",
     "PodFailed", 1, VC_RESTART_JOB, 60000, -1},
    /* PodPending matches only with a timeout */
    {NULL, "[{\"event\":\"PodPending\",\"action\":\"AbortJob\"}]", "PodPending", -1,
     VC_SYNC, 999999, -1},
    {NULL, "[{\"event\":\"*\",\"action\":\"AbortJob\"}]", "PodPending", -1, VC_SYNC, 0, -1},
    {NULL, "[{\"event\":\"PodPending\",\"action\":\"AbortJob\",\"timeout\":\"1m30s\"}]",
     "PodPending", -1, VC_ABORT_JOB, 90000, -1},
    {NULL, "[{\"event\":\"PodPending\",\"action\":\"AbortJob\",\"timeout\":\"1m30s\"}]",
     "PodPending", -1, VC_SYNC, 89500, 500},
    {NULL, NULL, "PodFailed", 1, VC_SYNC, 0, -1},
    {"[{\"event\":\"TaskFailed\",\"action\":\"TerminateJob\"}]", NULL, "TaskFailed", 0,
     VC_TERMINATE_JOB, 0, -1},
    /* JobUpdated: a job-level event (no task policies), by name or `*` */
    {NULL, "[{\"event\":\"JobUpdated\",\"action\":\"RestartJob\"}]", "JobUpdated", 0,
     VC_RESTART_JOB, 0, -1},
    {NULL, "[{\"events\":[\"PodFailed\",\"JobUpdated\"],\"action\":\"AbortJob\"}]",
     "JobUpdated", 0, VC_ABORT_JOB, 0, -1},
    {NULL, "[{\"event\":\"*\",\"action\":\"RestartJob\"}]", "JobUpdated", 0, VC_RESTART_JOB,
     0, -1},
    {NULL, "[{\"event\":\"PodFailed\",\"action\":\"RestartJob\"}]", "JobUpdated", 0, VC_SYNC,
     0, -1},
    {NULL, "[{\"exitCode\":1,\"action\":\"AbortJob\"}]", "JobUpdated", 1, VC_SYNC, 0, -1},
};

static void test_policy_match(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(match_rows) / sizeof(match_rows[0]); i++) {
        const match_row *r = &match_rows[i];
        json_t *task = r->task ? json_loads(r->task, 0, NULL) : NULL;
        json_t *job = r->job ? json_loads(r->job, 0, NULL) : NULL;
        long long wait = -1;
        vc_action got = vc_policy_match(task, job, r->event, r->exit_code, r->elapsed_ms, &wait);
        if (got != r->want || wait != r->want_wait)
            fail_msg("row %zu: got %s wait %lld, want %s wait %lld", i, vc_action_name(got), wait,
                     vc_action_name(r->want), r->want_wait);
        json_decref(task);
        json_decref(job);
    }
}

/* Observations: pending, running, succeeded, failed, terminating, unknown,
 * replicas, minAvailable, minSuccess, task_below_min, retry, maxRetry. */
typedef struct step_row {
    vc_phase from;
    vc_action action;
    vc_obs obs;
    vc_phase to;
    vc_kill kill;
    bool retry, create;
} step_row;

#define OBS(pe, ru, su, fa, te, un, re, ma, ms, below, rc, mr) \
    {pe, ru, su, fa, te, un, re, ma, ms, below, rc, mr, false}
/* As OBS, with a task that can no longer reach its minAvailable. */
#define OBS_UNREACHABLE(pe, ru, su, fa, re, ma) \
    {pe, ru, su, fa, 0, 0, re, ma, 0, true, 0, 3, true}

static const step_row step_rows[] = {
    /* Pending, Running + restart actions: kill, retryCount++, Restarting */
    {VC_PENDING, VC_RESTART_JOB, OBS(1, 1, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RESTARTING,
     VC_KILL_ALL, true, false},
    {VC_RUNNING, VC_RESTART_JOB, OBS(0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RESTARTING,
     VC_KILL_ALL, true, false},
    {VC_RUNNING, VC_RESTART_TASK, OBS(0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RESTARTING,
     VC_KILL_TASK, true, false},
    {VC_RUNNING, VC_RESTART_POD, OBS(0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RESTARTING,
     VC_KILL_POD, true, false},
    /* Pending, Running + Abort/Complete/Terminate: kill live pods */
    {VC_PENDING, VC_ABORT_JOB, OBS(3, 0, 0, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_ABORTING,
     VC_KILL_LIVE, false, false},
    {VC_RUNNING, VC_ABORT_JOB, OBS(0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_ABORTING,
     VC_KILL_LIVE, false, false},
    {VC_RUNNING, VC_COMPLETE_JOB, OBS(0, 1, 2, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_COMPLETING,
     VC_KILL_LIVE, false, false},
    {VC_RUNNING, VC_TERMINATE_JOB, OBS(0, 3, 0, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_TERMINATING,
     VC_KILL_LIVE, false, false},
    /* Pending + sync: create; Running once running+succeeded+failed >= minAvailable */
    {VC_PENDING, VC_SYNC, OBS(3, 0, 0, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_PENDING, VC_KILL_NONE,
     false, true},
    {VC_PENDING, VC_SYNC, OBS(0, 2, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RUNNING, VC_KILL_NONE,
     false, true},
    /* Running + sync */
    {VC_RUNNING, VC_SYNC, OBS(0, 3, 0, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_RUNNING, VC_KILL_NONE,
     false, true},
    {VC_RUNNING, VC_SYNC, OBS(0, 1, 2, 0, 0, 0, 3, 3, 2, 0, 0, 3), VC_COMPLETED, VC_KILL_LIVE,
     false, false},
    {VC_RUNNING, VC_SYNC, OBS(0, 0, 3, 0, 0, 0, 3, 3, 0, 0, 0, 3), VC_COMPLETED, VC_KILL_NONE,
     false, false},
    {VC_RUNNING, VC_SYNC, OBS(0, 0, 2, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_FAILED, VC_KILL_NONE,
     false, false},
    {VC_RUNNING, VC_SYNC, OBS(0, 0, 1, 2, 0, 0, 3, 3, 2, 0, 0, 3), VC_FAILED, VC_KILL_NONE,
     false, false},
    {VC_RUNNING, VC_SYNC, OBS(2, 1, 0, 0, 0, 0, 3, 2, 0, 1, 0, 3), VC_PENDING, VC_KILL_NONE,
     false, true},
    /* a task that cannot reach its minAvailable fails the job at once */
    {VC_RUNNING, VC_SYNC, OBS_UNREACHABLE(0, 2, 0, 1, 3, 3), VC_FAILED, VC_KILL_LIVE, false,
     false},
    {VC_PENDING, VC_SYNC, OBS_UNREACHABLE(1, 0, 0, 1, 2, 2), VC_FAILED, VC_KILL_LIVE, false,
     false},
    /* Restarting */
    {VC_RESTARTING, VC_SYNC, OBS(0, 0, 0, 0, 0, 0, 3, 3, 0, 1, 3, 3), VC_FAILED, VC_KILL_LIVE,
     false, false},
    {VC_RESTARTING, VC_SYNC, OBS(0, 0, 0, 0, 2, 0, 3, 3, 0, 1, 1, 3), VC_RESTARTING,
     VC_KILL_NONE, false, false},
    {VC_RESTARTING, VC_SYNC, OBS(0, 0, 0, 0, 0, 0, 3, 3, 0, 1, 1, 3), VC_PENDING, VC_KILL_NONE,
     false, false},
    /* ResumeJob from Aborting / Aborted */
    {VC_ABORTING, VC_RESUME_JOB, OBS(0, 1, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RESTARTING,
     VC_KILL_ALL, true, false},
    {VC_ABORTED, VC_RESUME_JOB, OBS(0, 0, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_RESTARTING,
     VC_KILL_ALL, true, false},
    {VC_ABORTED, VC_SYNC, OBS(0, 0, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_ABORTED, VC_KILL_NONE,
     false, false},
    /* Aborting, Completing, Terminating: final once no live pods */
    {VC_ABORTING, VC_SYNC, OBS(0, 0, 0, 1, 1, 0, 3, 3, 0, 1, 0, 3), VC_ABORTING, VC_KILL_NONE,
     false, false},
    {VC_ABORTING, VC_SYNC, OBS(0, 0, 0, 1, 0, 0, 3, 3, 0, 1, 0, 3), VC_ABORTED, VC_KILL_NONE,
     false, false},
    {VC_COMPLETING, VC_SYNC, OBS(0, 0, 2, 0, 1, 0, 3, 3, 0, 1, 0, 3), VC_COMPLETING,
     VC_KILL_NONE, false, false},
    {VC_COMPLETING, VC_SYNC, OBS(0, 0, 2, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_COMPLETED,
     VC_KILL_NONE, false, false},
    {VC_TERMINATING, VC_SYNC, OBS(0, 1, 0, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_TERMINATING,
     VC_KILL_NONE, false, false},
    {VC_TERMINATING, VC_SYNC, OBS(0, 0, 0, 0, 0, 0, 3, 3, 0, 1, 0, 3), VC_TERMINATED,
     VC_KILL_NONE, false, false},
    /* final phases stay */
    {VC_COMPLETED, VC_RESTART_JOB, OBS(0, 0, 3, 0, 0, 0, 3, 3, 0, 0, 0, 3), VC_COMPLETED,
     VC_KILL_NONE, false, false},
    {VC_FAILED, VC_RESUME_JOB, OBS(0, 0, 0, 3, 0, 0, 3, 3, 0, 1, 3, 3), VC_FAILED, VC_KILL_NONE,
     false, false},
};

static void test_transitions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(step_rows) / sizeof(step_rows[0]); i++) {
        const step_row *r = &step_rows[i];
        vc_step st = vc_transition(r->from, r->action, &r->obs);
        if (st.next != r->to || st.kill != r->kill || st.retry != r->retry ||
            st.create != r->create)
            fail_msg("row %zu (%s + %s): got %s kill %d retry %d create %d", i,
                     vc_phase_name(r->from), vc_action_name(r->action), vc_phase_name(st.next),
                     st.kill, st.retry, st.create);
    }
}

static void test_names(void **state)
{
    char buf[64];

    (void)state;
    assert_int_equal(vc_duration_ms("90s"), 90000);
    assert_int_equal(vc_duration_ms("1h2m3s"), 3723000);
    assert_int_equal(vc_duration_ms("500ms"), 500);
    assert_int_equal(vc_duration_ms("1.5m"), 90000);
    assert_int_equal(vc_duration_ms("10"), -1);
    assert_int_equal(vc_duration_ms("x"), -1);
    assert_int_equal(vc_duration_ms(""), -1);
    for (int p = 0; p < VC_NPHASES; p++)
        assert_int_equal(vc_phase_parse(vc_phase_name((vc_phase)p)), p);
    for (int a = 0; a < VC_NACTIONS; a++)
        assert_int_equal(vc_action_parse(vc_action_name((vc_action)a)), a);
    assert_int_equal(vc_phase_parse(NULL), VC_PENDING);
    assert_int_equal(vc_action_parse("Bogus"), VC_SYNC);
    assert_false(vc_counts_as_retry("PodEvicted"));
    assert_true(vc_counts_as_retry("PodFailed"));
    assert_true(vc_counts_as_retry(NULL));
    vc_env_name("my-ps", buf, sizeof(buf));
    assert_string_equal(buf, "MY_PS");
}

static const char *env_value(const json_t *env, const char *name)
{
    json_t *e;
    size_t i;

    json_array_foreach(env, i, e)
        if (!strcmp(json_string_value(json_object_get(e, "name")), name))
            return json_string_value(json_object_get(e, "value"));
    return NULL;
}

static json_t *job_with(const char *plugins)
{
    json_t *job = json_loads(
        "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"tasks\":["
        "{\"name\":\"master\",\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}},"
        "{\"name\":\"worker\",\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}]}}",
        0, NULL);
    json_object_set_new(json_object_get(job, "spec"), "plugins", json_loads(plugins, 0, NULL));
    return job;
}

static void test_plugins_env(void **state)
{
    json_t *job = job_with("{\"env\":[],\"svc\":[],\"pytorch\":[\"--port=5000\"]}");
    json_t *env = json_array(), *data;

    (void)state;
    vc_plugins_env(job, "worker", 1, env);
    assert_string_equal(env_value(env, "VK_TASK_INDEX"), "1");
    assert_string_equal(env_value(env, "VC_TASK_INDEX"), "1");
    assert_string_equal(env_value(env, "VC_WORKER_HOSTS"), "j-worker-0.j,j-worker-1.j");
    assert_string_equal(env_value(env, "VC_MASTER_NUM"), "1");
    assert_string_equal(env_value(env, "MASTER_ADDR"), "j-master-0.j");
    assert_string_equal(env_value(env, "MASTER_PORT"), "5000");
    assert_string_equal(env_value(env, "WORLD_SIZE"), "3");
    assert_string_equal(env_value(env, "RANK"), "2");
    data = vc_svc_configmap_data(job);
    assert_string_equal(json_string_value(json_object_get(data, "worker.host")),
                        "j-worker-0.j\nj-worker-1.j");
    json_decref(data);
    json_decref(env);
    json_decref(job);

    job = job_with("{}");
    env = json_array();
    vc_plugins_env(job, "worker", 0, env);
    assert_int_equal(json_array_size(env), 0);
    json_decref(env);
    json_decref(job);
}

static void test_tf_mpi_env(void **state)
{
    json_t *job = json_loads(
        "{\"metadata\":{\"name\":\"t\"},\"spec\":{\"plugins\":{\"tensorflow\":[\"--port=3000\"],"
        "\"mpi\":[]},\"tasks\":[{\"name\":\"ps\",\"replicas\":1},{\"name\":\"worker\",\"replicas\":2},"
        "{\"name\":\"master\",\"replicas\":1}]}}", 0, NULL);
    json_t *env = json_array();

    (void)state;
    vc_plugins_env(job, "worker", 1, env);
    assert_string_equal(env_value(env, "TF_CONFIG"),
                        "{\"cluster\":{\"ps\":[\"t-ps-0.t:3000\"],\"worker\":[\"t-worker-0.t:3000\","
                        "\"t-worker-1.t:3000\"]},\"task\":{\"index\":1,\"type\":\"worker\"}}");
    assert_null(env_value(env, "MPI_HOST"));
    json_decref(env);
    env = json_array();
    vc_plugins_env(job, "master", 0, env);
    assert_string_equal(env_value(env, "MPI_HOST"), "t-worker-0.t,t-worker-1.t");
    assert_null(env_value(env, "TF_CONFIG")); /* master is no TF role */
    json_decref(env);
    json_decref(job);
}

static void test_job_volumes(void **state)
{
    json_t *job = json_loads("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"volumes\":["
                             "{\"mountPath\":\"/data\",\"volumeClaimName\":\"shared\"},"
                             "{\"mountPath\":\"/scratch\"}]}}", 0, NULL);
    json_t *pod = json_loads("{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
                             0, NULL);
    json_t *vols, *mounts;

    (void)state;
    vc_job_volumes(job, pod);
    vols = json_object_get(json_object_get(pod, "spec"), "volumes");
    assert_int_equal(json_array_size(vols), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(vols, 1), "name")),
                        "j-volume-1");
    mounts = json_object_get(
        json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 1),
        "volumeMounts");
    assert_string_equal(json_string_value(json_object_get(json_array_get(mounts, 0), "name")),
                        "shared");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(mounts, 1), "mountPath")), "/scratch");
    json_decref(pod);
    json_decref(job);
}

static void test_svc_decorate(void **state)
{
    json_t *job = job_with("{\"svc\":[]}");
    json_t *pod = json_loads("{\"metadata\":{\"name\":\"j-worker-0\"},\"spec\":{\"containers\":"
                             "[{\"name\":\"c\"}]}}", 0, NULL);
    json_t *spec = json_object_get(pod, "spec"), *c;

    (void)state;
    vc_plugins_decorate(job, pod);
    assert_string_equal(json_string_value(json_object_get(spec, "hostname")), "j-worker-0");
    assert_string_equal(json_string_value(json_object_get(spec, "subdomain")), "j");
    c = json_array_get(json_object_get(spec, "containers"), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(c, "volumeMounts"), 0), "mountPath")),
                        "/etc/volcano");
    json_decref(pod);
    json_decref(job);
}

typedef struct dep_row {
    const char *depends; /* the task's dependsOn (JSON) or NULL */
    const char *tsc;     /* taskStatusCount (JSON) */
    bool want_succeeded, ready;
} dep_row;

static const dep_row dep_rows[] = {
    {NULL, "{}", false, true},
    {"{\"name\":[\"a\"]}", "{}", false, false},
    {"{\"name\":[\"a\"]}", "{\"a\":{\"phase\":{\"Running\":1}}}", false, false},
    {"{\"name\":[\"a\"]}", "{\"a\":{\"phase\":{\"Running\":1,\"Succeeded\":1}}}", false,
     true},
    {"{\"name\":[\"a\"]}", "{\"a\":{\"phase\":{\"Running\":2}}}", true, false},
    {"{\"name\":[\"a\"]}", "{\"a\":{\"phase\":{\"Succeeded\":2}}}", true, true},
    {"{\"name\":[\"a\",\"b\"]}", "{\"a\":{\"phase\":{\"Running\":2}}}", false, false},
    {"{\"name\":[\"a\",\"b\"],\"iteration\":\"any\"}",
     "{\"a\":{\"phase\":{\"Running\":2}}}", false, true},
    {"{\"name\":[\"a\",\"b\"],\"iteration\":\"all\"}",
     "{\"a\":{\"phase\":{\"Running\":2}},\"b\":{\"phase\":{\"Running\":1}}}", false,
     true},
};

static void test_depends_on(void **state)
{
    json_t *tasks = json_loads("[{\"name\":\"a\",\"minAvailable\":2},"
                               "{\"name\":\"b\",\"minAvailable\":1},{\"name\":\"c\"}]",
                               0, NULL);

    (void)state;
    for (size_t i = 0; i < sizeof(dep_rows) / sizeof(dep_rows[0]); i++) {
        const dep_row *r = &dep_rows[i];
        json_t *task = json_pack("{s:s}", "name", "c");
        json_t *tsc = json_loads(r->tsc, 0, NULL);
        if (r->depends)
            json_object_set_new(task, "dependsOn", json_loads(r->depends, 0, NULL));
        if (vc_depends_ready(task, tasks, tsc, r->want_succeeded) != r->ready)
            fail_msg("row %zu: want %d", i, r->ready);
        json_decref(task);
        json_decref(tsc);
    }
    json_decref(tasks);
}

typedef struct updated_row {
    const char *job, *status;
    bool updated;
} updated_row;

static const updated_row updated_rows[] = {
    /* never observed (a new job, or one from before observedGeneration) */
    {"{\"metadata\":{\"generation\":1}}", "{}", false},
    {"{\"metadata\":{\"generation\":3}}", "{}", false},
    {"{\"metadata\":{\"generation\":1}}", "{\"observedGeneration\":1}", false},
    /* the spec changed since the last pass */
    {"{\"metadata\":{\"generation\":2}}", "{\"observedGeneration\":1}", true},
    {"{\"metadata\":{\"generation\":5}}", "{\"observedGeneration\":2}", true},
    {"{\"metadata\":{}}", "{\"observedGeneration\":2}", false},
};

static void test_spec_updated(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(updated_rows) / sizeof(updated_rows[0]); i++) {
        json_t *job = json_loads(updated_rows[i].job, 0, NULL);
        json_t *st = json_loads(updated_rows[i].status, 0, NULL);
        if (vc_spec_updated(job, st) != updated_rows[i].updated)
            fail_msg("row %zu: want %d", i, updated_rows[i].updated);
        json_decref(job);
        json_decref(st);
    }
}

static const json_t *volume_named(const json_t *spec, const char *name)
{
    json_t *v;
    size_t i;

    json_array_foreach(json_object_get(spec, "volumes"), i, v)
        if (!strcmp(json_string_value(json_object_get(v, "name")), name))
            return v;
    return NULL;
}

static const char *mount_path(const json_t *container, const char *name)
{
    json_t *m;
    size_t i;

    json_array_foreach(json_object_get(container, "volumeMounts"), i, m)
        if (!strcmp(json_string_value(json_object_get(m, "name")), name))
            return json_string_value(json_object_get(m, "mountPath"));
    return NULL;
}

static void test_plugin_args(void **state)
{
    static const struct { const char *args, *path; } rows[] = {
        {"[]", "/root/.ssh"},
        {"[\"--ssh-key-file-path=/home/u/.ssh\"]", "/home/u/.ssh"},
        {"[\"-ssh-key-file-path=/a\"]", "/a"},
        {"[\"--ssh-key-file-path\", \"/a/b\"]", "/a/b"},
        {"[\"--ssh-key-file-path\"]", "/root/.ssh"},        /* no value */
        {"[\"--ssh-key-file-path=rel\"]", "/root/.ssh"},    /* not absolute */
        {"[\"--ssh-key-file-pathx=/x\"]", "/root/.ssh"},    /* another flag */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char plugins[256];
        json_t *job;
        snprintf(plugins, sizeof(plugins), "{\"ssh\":%s}", rows[i].args);
        job = job_with(plugins);
        if (strcmp(vc_ssh_path(job), rows[i].path) != 0)
            fail_msg("row %zu: got %s, want %s", i, vc_ssh_path(job), rows[i].path);
        json_decref(job);
    }
}

static void test_ssh_mpi_decorate(void **state)
{
    json_t *job = job_with("{\"svc\":[],\"ssh\":[],\"mpi\":[]}");
    json_t *pod = json_loads("{\"metadata\":{\"name\":\"j-master-0\"},\"spec\":{\"containers\":"
                             "[{\"name\":\"a\"},{\"name\":\"b\",\"env\":[{\"name\":"
                             "\"OMPI_MCA_plm_rsh_agent\",\"value\":\"ssh\"}]}]}}", 0, NULL);
    json_t *spec = json_object_get(pod, "spec"), *a, *b, *data;
    const json_t *v;
    char *config;

    (void)state;
    vc_plugins_decorate(job, pod);
    a = json_array_get(json_object_get(spec, "containers"), 0);
    b = json_array_get(json_object_get(spec, "containers"), 1);
    v = volume_named(spec, "j-ssh");
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "secret"),
                                                          "secretName")), "j-ssh");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "secret"),
                                                        "defaultMode")), 0600);
    assert_string_equal(mount_path(a, "j-ssh"), "/root/.ssh");
    assert_string_equal(mount_path(b, "j-ssh"), "/root/.ssh");
    assert_non_null(volume_named(spec, "j-mpi"));
    assert_string_equal(mount_path(a, "j-mpi"), "/etc/mpi");
    assert_string_equal(env_value(json_object_get(a, "env"), "OMPI_MCA_plm_rsh_agent"),
                        "/etc/mpi/kubexec.sh");
    /* a container that names its own agent keeps it */
    assert_int_equal(json_array_size(json_object_get(b, "env")), 1);
    assert_string_equal(env_value(json_object_get(b, "env"), "OMPI_MCA_plm_rsh_agent"), "ssh");
    data = vc_mpi_configmap_data(job);
    assert_non_null(strstr(json_string_value(json_object_get(data, "kubexec.sh")),
                           "POD_NAME=${1%%.*}"));
    json_decref(data);

    config = vc_ssh_config(job);
    assert_non_null(strstr(config, "StrictHostKeyChecking no\n"));
    assert_non_null(strstr(config, "Host j-master-0\n  HostName j-master-0.j\n"));
    assert_non_null(strstr(config, "Host j-worker-1\n  HostName j-worker-1.j\n"));
    assert_null(strstr(config, "j-worker-2"));
    free(config);
    data = vc_ssh_secret_data(job, "PRIV", "ssh-rsa PUB j");
    assert_string_equal(json_string_value(json_object_get(data, "id_rsa")), "PRIV");
    assert_string_equal(json_string_value(json_object_get(data, "id_rsa.pub")), "ssh-rsa PUB j");
    assert_string_equal(json_string_value(json_object_get(data, "authorized_keys")),
                        "ssh-rsa PUB j");
    assert_non_null(json_object_get(data, "config"));
    json_decref(data);
    json_decref(pod);
    json_decref(job);

    /* no ssh/mpi plugin: no such volumes */
    job = job_with("{\"svc\":[]}");
    pod = json_loads("{\"metadata\":{\"name\":\"j-master-0\"},\"spec\":{\"containers\":"
                     "[{\"name\":\"a\"}]}}", 0, NULL);
    vc_plugins_decorate(job, pod);
    assert_null(volume_named(json_object_get(pod, "spec"), "j-ssh"));
    assert_null(volume_named(json_object_get(pod, "spec"), "j-mpi"));
    json_decref(pod);
    json_decref(job);
}

/* The key pair is OpenSSH's own: skipped where ssh-keygen is not installed. */
static void test_ssh_keygen(void **state)
{
    char *priv = NULL, *pub = NULL;
    ty_error err;

    (void)state;
    if (system("command -v ssh-keygen >/dev/null 2>&1") != 0)
        skip();
    ty_error_init(&err);
    assert_int_equal(vc_ssh_keygen("j", &priv, &pub, &err), 0);
    assert_non_null(strstr(priv, "PRIVATE KEY-----"));
    assert_int_equal(strncmp(pub, "ssh-rsa ", 8), 0);
    assert_non_null(strstr(pub, " j"));
    free(priv);
    free(pub);
    ty_error_clear(&err);
}

/* A PodGroup's minResources: the first minAvailable pods, tasks by their
 * template's PriorityClass value, highest first (in their order among
 * equals); tasks made later (dependsOn) left out when staged; limits stand
 * in for missing requests. */
static void test_min_resources(void **state)
{
    char dir[64];
    ty_store *s = store_fixture_open(dir, NULL);
    json_t *pc = json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1",
                           "kind", "PriorityClass", "metadata", "name", "high", "value", 1000);
    store_obj *o = store_create(s, api_store_key(&api_priorityclass), "", pc, NULL);
    json_t *tasks, *mr;
    (void)state;

    assert_non_null(o);
    store_obj_unref(o);
    json_decref(pc);
    tasks = json_loads(
        "[{\"name\":\"a\",\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
        "\"resources\":{\"requests\":{\"cpu\":\"500m\"},\"limits\":{\"nvidia.com/gpu\":1}}}]}}},"
        "{\"name\":\"b\",\"replicas\":2,\"template\":{\"spec\":{\"priorityClassName\":\"high\","
        "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":4}}}]}}},"
        "{\"name\":\"z\",\"replicas\":1,\"dependsOn\":{\"name\":[\"a\"]},\"template\":{\"spec\":"
        "{\"priorityClassName\":\"high\",\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"limits\":{\"nvidia.com/gpu\":8}}}]}}}]",
        0, NULL);
    assert_non_null(tasks);
    /* staged: z waits for a; b's two pods (high) come first, then one of a */
    mr = vc_min_resources(KC(s), tasks, 3, true);
    assert_string_equal(json_string_value(json_object_get(mr, "nvidia.com/gpu")), "9");
    assert_string_equal(json_string_value(json_object_get(mr, "cpu")), "500m");
    json_decref(mr);
    /* not staged, z counts: the high ones in their order, b's two and z's one */
    mr = vc_min_resources(KC(s), tasks, 3, false);
    assert_string_equal(json_string_value(json_object_get(mr, "nvidia.com/gpu")), "16");
    assert_null(json_object_get(mr, "cpu"));
    json_decref(mr);
    json_decref(tasks);
    store_fixture_close(dir, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_match), cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_names), cmocka_unit_test(test_plugins_env),
        cmocka_unit_test(test_svc_decorate), cmocka_unit_test(test_depends_on),
        cmocka_unit_test(test_tf_mpi_env), cmocka_unit_test(test_job_volumes),
        cmocka_unit_test(test_spec_updated), cmocka_unit_test(test_plugin_args),
        cmocka_unit_test(test_ssh_mpi_decorate), cmocka_unit_test(test_ssh_keygen),
        cmocka_unit_test(test_min_resources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
