/* test_runtime_local.c - the local runtime's pod lifecycle against a real
 * store, the real agent and the real supervisor: node registration, exit
 * codes and logs, environment, restarts, deletion, re-adoption. */
#include "test_runtime_fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <sched.h>

#include "base/thread.h"

static void test_node_registered(void **state)
{
    fixture *f = *state;
    store_obj *o = store_get(f->s, "nodes", "", NODE, NULL);
    const json_t *st;

    assert_non_null(o);
    st = json_object_get(store_obj_json(o), "status");
    assert_string_equal(json_string_value(json_object_get(json_object_get(st, "capacity"),
                                                           "nvidia.com/gpu")),
                        "2");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(st, "conditions"), 0), "status")),
                        "True");
    assert_non_null(strstr(json_string_value(json_object_get(
                               json_object_get(st, "capacity"), "memory")),
                           "Ki"));
    store_obj_unref(o);
}

static void test_exit_code_and_log(void **state)
{
    fixture *f = *state;
    const json_t *cs, *term;
    json_t *pod;
    char *log;
    regex_t re;

    make_pod(f, "fail3", "{`restartPolicy`:`Never`,`containers`:[{`name`:`main`,`image`:`x`,"
                         "`command`:[`sh`,`-c`,`echo hello; echo oops >&2; exit 3`]}]}");
    pod = wait_phase(f, "fail3", "Failed", 10000);
    cs = container_status(pod, 0);
    term = json_object_get(json_object_get(cs, "state"), "terminated");
    assert_non_null(term);
    assert_int_equal(json_integer_value(json_object_get(term, "exitCode")), 3);
    assert_string_equal(json_string_value(json_object_get(term, "reason")), "Error");
    assert_int_equal(json_integer_value(json_object_get(cs, "restartCount")), 0);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(pod, "status"),
                                                             "podIP")),
                           "127."));
    /* the finalizer stays until deletion */
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(pod, "metadata"), "finalizers"),
                            0)),
                        "trainyard.io/local-runtime");
    json_decref(pod);
    log = read_log(f, "fail3", "main", "");
    assert_int_equal(regcomp(&re,
                             "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{9}Z "
                             "hello\n",
                             REG_EXTENDED | REG_NEWLINE),
                     0);
    assert_int_equal(regexec(&re, log, 0, NULL, 0), 0);
    assert_non_null(strstr(log, "Z oops\n"));
    regfree(&re);
    free(log);
}

static void test_succeeded(void **state)
{
    fixture *f = *state;
    json_t *pod;

    make_pod(f, "ok", "{`restartPolicy`:`OnFailure`,`initContainers`:[{`name`:`init`,"
                      "`image`:`x`,`command`:[`true`]}],`containers`:[{`name`:`a`,`image`:`x`,"
                      "`command`:[`true`]},{`name`:`b`,`image`:`x`,`args`:[`sh`,`-c`,`exit 0`]}]}");
    pod = wait_phase(f, "ok", "Succeeded", 10000);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                                                              container_status(pod, 1), "state"),
                                                          "terminated"),
                                          "reason")),
                        "Completed");
    json_decref(pod);
}

static void test_env_resolution(void **state)
{
    fixture *f = *state;
    json_t *pod;
    char *log, want[256];
    const char *ip;

    make_obj(f, "configmaps", &api_configmap, "default",
             "{`apiVersion`:`v1`,`kind`:`ConfigMap`,`metadata`:{`name`:`cfg`},"
             "`data`:{`greeting`:`hi there`,`FROMCM`:`yes`}}");
    make_obj(f, "secrets", &api_secret, "default",
             "{`apiVersion`:`v1`,`kind`:`Secret`,`metadata`:{`name`:`sec`},"
             "`data`:{`token`:`czNjcmV0`}}"); /* "s3cret" */
    make_pod(f, "envpod",
             "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
             "`command`:[`sh`,`-c`,`echo N=$MY_NAME NS=$MY_NS IP=$MY_IP G=$GREET S=$TOKEN "
             "F=$FROMCM X=$EXPANDED C=$CUDA_VISIBLE_DEVICES T=$TY_POD_IP`],"
             "`envFrom`:[{`configMapRef`:{`name`:`cfg`}}],"
             "`resources`:{`limits`:{`nvidia.com/gpu`:1}},"
             "`env`:[{`name`:`MY_NAME`,`valueFrom`:{`fieldRef`:{`fieldPath`:`metadata.name`}}},"
             "{`name`:`MY_NS`,`valueFrom`:{`fieldRef`:{`fieldPath`:`metadata.namespace`}}},"
             "{`name`:`MY_IP`,`valueFrom`:{`fieldRef`:{`fieldPath`:`status.podIP`}}},"
             "{`name`:`GREET`,`valueFrom`:{`configMapKeyRef`:{`name`:`cfg`,`key`:`greeting`}}},"
             "{`name`:`TOKEN`,`valueFrom`:{`secretKeyRef`:{`name`:`sec`,`key`:`token`}}},"
             "{`name`:`EXPANDED`,`value`:`<$(MY_NAME)>`}]}]}");
    pod = wait_phase(f, "envpod", "Succeeded", 10000);
    ip = json_string_value(json_object_get(json_object_get(pod, "status"), "podIP"));
    assert_non_null(ip);
    snprintf(want, sizeof(want),
             "N=envpod NS=default IP=%s G=hi there S=s3cret F=yes X=<envpod> C=0 T=%s\n", ip,
             ip);
    log = read_log(f, "envpod", "c", "");
    if (!strstr(log, want))
        fail_msg("want %s got %s", want, log);
    free(log);
    json_decref(pod);
}

static void test_missing_configmap_waits(void **state)
{
    fixture *f = *state;
    json_t *pod = NULL;
    const json_t *w = NULL;

    make_pod(f, "needcm", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                          "`command`:[`sh`,`-c`,`echo $V`],`env`:[{`name`:`V`,`valueFrom`:"
                          "{`configMapKeyRef`:{`name`:`later`,`key`:`k`}}}]}]}");
    for (int64_t deadline = rt_deadline(0); ty_now_ms() < deadline && !w;) {
        usleep(50 * 1000);
        json_decref(pod);
        pod = get_pod(f, "needcm");
        w = json_object_get(json_object_get(container_status(pod, 0), "state"), "waiting");
    }
    assert_non_null(w);
    assert_string_equal(json_string_value(json_object_get(w, "reason")),
                        "CreateContainerConfigError");
    json_decref(pod);
    make_obj(f, "configmaps", &api_configmap, "default",
             "{`apiVersion`:`v1`,`kind`:`ConfigMap`,`metadata`:{`name`:`later`},"
             "`data`:{`k`:`arrived`}}");
    json_decref(wait_phase(f, "needcm", "Succeeded", 10000));
    free(wait_log(f, "needcm", "c", " arrived\n", 1000));
}

static void test_restart_on_failure(void **state)
{
    fixture *f = *state;
    json_t *pod = NULL;
    json_int_t restarts = 0;
    char *prev;

    make_pod(f, "crash", "{`restartPolicy`:`OnFailure`,`containers`:[{`name`:`c`,`image`:`x`,"
                         "`command`:[`sh`,`-c`,`echo run; exit 1`]}]}");
    for (int64_t deadline = rt_deadline(0); ty_now_ms() < deadline && restarts < 2;) {
        usleep(50 * 1000);
        json_decref(pod);
        pod = get_pod(f, "crash");
        restarts = json_integer_value(json_object_get(container_status(pod, 0), "restartCount"));
    }
    assert_true(restarts >= 2);
    assert_string_equal(phase_of(pod), "Running");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(container_status(pod, 0), "lastState"),
                                         "terminated"),
                         "exitCode")),
                     1);
    json_decref(pod);
    prev = read_log(f, "crash", "c", ".prev");
    assert_non_null(strstr(prev, "Z run\n"));
    free(prev);
}

static void test_restart_always_counts(void **state)
{
    fixture *f = *state;
    json_t *pod = NULL;
    json_int_t restarts = 0;

    /* Always restarts even a clean exit. */
    make_pod(f, "always", "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`true`]}]}");
    for (int64_t deadline = rt_deadline(0); ty_now_ms() < deadline && restarts < 1;) {
        usleep(50 * 1000);
        json_decref(pod);
        pod = get_pod(f, "always");
        restarts = json_integer_value(json_object_get(container_status(pod, 0), "restartCount"));
    }
    assert_true(restarts >= 1);
    assert_string_not_equal(phase_of(pod), "Succeeded");
    json_decref(pod);
}

static pid_t container_pid(const json_t *pod)
{
    const char *cid = json_string_value(json_object_get(container_status(pod, 0), "containerID"));
    assert_non_null(cid);
    assert_true(!strncmp(cid, "trainyard://", 12));
    return (pid_t)atoi(cid + 12);
}

static void test_delete_running(void **state)
{
    fixture *f = *state;
    json_t *pod;
    pid_t pid;

    make_pod(f, "sleeper", "{`terminationGracePeriodSeconds`:30,`containers`:[{`name`:`c`,"
                           "`image`:`x`,`command`:[`sleep`,`1000`]}]}");
    pod = wait_phase(f, "sleeper", "Running", 10000);
    pid = container_pid(pod);
    json_decref(pod);
    assert_int_equal(kill(pid, 0), 0);
    delete_pod(f, "sleeper");
    /* sleep dies of SIGTERM at once: well inside the 30 s grace period */
    assert_true(wait_gone(f, "sleeper", 5000));
    assert_int_not_equal(kill(pid, 0), 0);
}

static void test_delete_escalates_to_sigkill(void **state)
{
    fixture *f = *state;
    json_t *pod;
    pid_t pid;
    char *log;

    make_pod(f, "stubborn", "{`terminationGracePeriodSeconds`:1,`containers`:[{`name`:`c`,"
                            "`image`:`x`,`command`:[`sh`,`-c`,`trap 'echo got TERM' TERM; "
                            "echo ready; while :; do sleep 0.1; done`]}]}");
    pod = wait_phase(f, "stubborn", "Running", 10000);
    pid = container_pid(pod);
    json_decref(pod);
    free(wait_log(f, "stubborn", "c", " ready\n", 5000));
    delete_pod(f, "stubborn");
    assert_true(wait_gone(f, "stubborn", 6000));
    assert_int_not_equal(kill(pid, 0), 0);
    log = read_log(f, "stubborn", "c", "");
    assert_non_null(strstr(log, " got TERM\n")); /* TERM first, then KILL; log kept */
    free(log);
}

static void test_readopt_after_restart(void **state)
{
    fixture *f = *state;
    json_t *pod;
    const json_t *term;
    char go[300], spec[800];
    int fd;

    /* The container ends at the test's word, given once no agent runs,
     * however slowly the test gets there. */
    snprintf(go, sizeof(go), "%s/go-outlive", f->dir);
    snprintf(spec, sizeof(spec),
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:0}," /* reads f->dir */
             "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,"
             "`-c`,`echo start; while [ ! -e %s ]; do sleep 0.05; done; echo end; exit 7`]}]}",
             go);
    make_pod(f, "outlive", spec);
    json_decref(wait_phase(f, "outlive", "Running", 10000));
    rt_local_stop(f->rt);
    f->rt = NULL;
    assert_true((fd = open(go, O_WRONLY | O_CREAT, 0644)) >= 0);
    close(fd);
    /* it finishes while no agent is running (its last line, then its exit) */
    free(wait_log(f, "outlive", "c", " end\n", 0));
    pod = get_pod(f, "outlive");
    assert_string_equal(phase_of(pod), "Running"); /* nobody reported it yet */
    json_decref(pod);
    f->rt = start_agent(f);
    pod = wait_phase(f, "outlive", "Failed", 5000);
    term = json_object_get(json_object_get(container_status(pod, 0), "state"), "terminated");
    assert_int_equal(json_integer_value(json_object_get(term, "exitCode")), 7);
    json_decref(pod);
    free(wait_log(f, "outlive", "c", " start\n", 100));
    free(wait_log(f, "outlive", "c", " end\n", 100));
}

/* A finished pod adopted by the next agent holds no GPUs: the next pod
 * that wants them all runs (it was refused, UnexpectedAdmissionError). */
static void test_readopt_finished_frees_gpus(void **state)
{
    fixture *f = *state;

    make_pod(f, "gpudone", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                           "`command`:[`true`],`resources`:{`limits`:{`nvidia.com/gpu`:2}}}]}");
    json_decref(wait_phase(f, "gpudone", "Succeeded", 10000));
    rt_local_stop(f->rt);
    f->rt = start_agent(f);
    make_pod(f, "gpunext", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                           "`command`:[`true`],`resources`:{`limits`:{`nvidia.com/gpu`:2}}}]}");
    json_decref(wait_phase(f, "gpunext", "Succeeded", 10000));
}

static void test_readopt_running(void **state)
{
    fixture *f = *state;
    json_t *pod;
    pid_t pid;

    make_pod(f, "longrun", "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sleep`,`1000`]}]}");
    pod = wait_phase(f, "longrun", "Running", 10000);
    pid = container_pid(pod);
    json_decref(pod);
    rt_local_stop(f->rt);
    f->rt = start_agent(f);
    usleep(500 * 1000);
    pod = get_pod(f, "longrun");
    assert_string_equal(phase_of(pod), "Running");
    assert_int_equal(container_pid(pod), pid); /* the same process, not a new one */
    json_decref(pod);
    delete_pod(f, "longrun");
    assert_true(wait_gone(f, "longrun", 5000));
    assert_int_not_equal(kill(pid, 0), 0);
}

static void test_deleted_pod_log_kept(void **state)
{
    fixture *f = *state;
    char *log;

    make_pod(f, "gone", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                        "`command`:[`echo`,`bye`]}]}");
    json_decref(wait_phase(f, "gone", "Succeeded", 10000));
    delete_pod(f, "gone");
    assert_true(wait_gone(f, "gone", 5000));
    log = read_log(f, "gone", "c", "");
    assert_non_null(strstr(log, "Z bye\n"));
    free(log);
}

static void test_no_command_fails(void **state)
{
    fixture *f = *state;
    json_t *pod;

    make_pod(f, "nocmd", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`}]}");
    pod = wait_phase(f, "nocmd", "Failed", 10000);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(container_status(pod, 0), "state"),
                                            "terminated"),
                            "reason")),
                        "NoCommand");
    json_decref(pod);
}

/* The server runs its threads under SCHED_BATCH (base/thread.h); the
 * replicas it starts get the default policy all the same. */
static void test_replicas_default_policy(void **state)
{
    fixture *f = *state;
    struct sched_param sp;
    int policy;

    rt_local_stop(f->rt);
    assert_int_equal(ty_thread_setup(pthread_self(), NULL, TY_THREAD_BACKGROUND), 0);
    f->rt = start_agent(f); /* its threads start from a SCHED_BATCH one */
    /* $$ is Kubernetes' escape for $: the shell gets $$, its own pid */
    make_pod(f, "policy", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                          "`command`:[`sh`,`-c`,`chrt -p $$$$`]}]}");
    json_decref(wait_phase(f, "policy", "Succeeded", 10000));
    free(wait_log(f, "policy", "c", "scheduling policy: SCHED_OTHER\n", 100));
    assert_int_equal(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    assert_int_equal(policy, SCHED_BATCH); /* the test did run as the server does */
    assert_int_equal(ty_thread_setup(pthread_self(), NULL, TY_THREAD_INTERACTIVE), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_node_registered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_code_and_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_succeeded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_resolution, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_configmap_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_on_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_always_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_escalates_to_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readopt_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readopt_finished_frees_gpus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readopt_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_pod_log_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_command_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replicas_default_policy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
