/* test_runtime_crashloop.c - a container that keeps failing, as the kubelet
 * reports it: the pod Running, the container waiting with CrashLoopBackOff
 * and the kubelet's message, lastState.terminated and restartCount; also for
 * a command that cannot start (which kept the pod Pending); and a container
 * with args only, which runs them as its command line. The fixture's
 * back-off is 200 ms, doubled per restart. */
#include "test_runtime_fixture.h"

static const char *str_at(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_string_value(v) ? json_string_value(v) : "";
}

/* Polls until the pod's first container is waiting in CrashLoopBackOff
 * with at least min_restarts; returns the pod (caller decrefs). */
static json_t *wait_backoff(fixture *f, const char *name, json_int_t min_restarts)
{
    for (int64_t deadline = rt_deadline(60000); ty_now_ms() < deadline;) {
        json_t *p = get_pod(f, name);
        const json_t *cs = container_status(p, 0);
        if (cs && !strcmp(str_at(cs, "state", "waiting", "reason"), "CrashLoopBackOff") &&
            json_integer_value(json_object_get(cs, "restartCount")) >= min_restarts)
            return p;
        json_decref(p);
        usleep(20 * 1000);
    }
    fail_msg("pod %s never waited in CrashLoopBackOff after %lld restarts", name,
             (long long)min_restarts);
    return NULL;
}

static void assert_message(const json_t *pod, const char *ct)
{
    /* the wait the kubelet names, in Go's duration form: base 200 ms << restarts */
    static const char *const waits[] = {"200ms", "400ms", "800ms", "1.6s", "3.2s", "6.4s",
                                        "12.8s", "25.6s"};
    const json_t *cs = container_status(pod, 0);
    json_int_t n = json_integer_value(json_object_get(cs, "restartCount"));
    const json_t *m = json_object_get(pod, "metadata");
    char want[512];

    assert_true(n >= 0 && n < 8);
    snprintf(want, sizeof(want), "back-off %s restarting failed container=%s pod=%s_%s(%s)",
             waits[n], ct, str_at(m, "name", NULL, NULL), str_at(m, "namespace", NULL, NULL),
             str_at(m, "uid", NULL, NULL));
    assert_string_equal(str_at(cs, "state", "waiting", "message"), want);
}

static void test_exit_1_crash_loops_running(void **state)
{
    fixture *f = *state;
    json_t *pod;
    const json_t *cs;

    make_pod(f, "crash", "{`restartPolicy`:`Always`,`containers`:[{`name`:`c`,`image`:`x`,"
                         "`command`:[`sh`,`-c`,`exit 1`]}]}");
    pod = wait_backoff(f, "crash", 0);
    assert_string_equal(phase_of(pod), "Running");
    assert_message(pod, "c");
    json_decref(pod);
    /* later, after restarts, the wait has doubled as often */
    pod = wait_backoff(f, "crash", 3);
    cs = container_status(pod, 0);
    assert_string_equal(phase_of(pod), "Running");
    assert_message(pod, "c");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(cs, "lastState"), "terminated"),
                         "exitCode")), 1);
    assert_string_equal(str_at(cs, "lastState", "terminated", "reason"), "Error");
    assert_false(json_is_true(json_object_get(cs, "ready")));
    json_decref(pod);
}

static void test_missing_program_crash_loops_running(void **state)
{
    fixture *f = *state;
    json_t *pod;
    const json_t *cs;

    make_pod(f, "nocmd", "{`restartPolicy`:`Always`,`containers`:[{`name`:`c`,`image`:`x`,"
                         "`command`:[`/no/such/program`]}]}");
    pod = wait_backoff(f, "nocmd", 1);
    cs = container_status(pod, 0);
    assert_string_equal(phase_of(pod), "Running"); /* was Pending: it never "started" */
    assert_message(pod, "c");
    assert_string_equal(str_at(cs, "lastState", "terminated", "reason"), "StartError");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(cs, "lastState"), "terminated"),
                         "exitCode")), 128);
    assert_non_null(strstr(str_at(cs, "lastState", "terminated", "message"), "/no/such/program"));
    json_decref(pod);
}

/* The message of the pod's first Event with this reason, polled for
 * (events are written apart from the status); caller frees. */
static char *wait_event(fixture *f, const char *pod, const char *reason)
{
    for (int64_t deadline = rt_deadline(0); ty_now_ms() < deadline;) {
        store_list l = {0};
        store_list_opts o = {.ns = "default"};
        char *msg = NULL;
        assert_int_equal(store_list_objects(f->s, "events", &o, &l, NULL), 0);
        for (size_t i = 0; i < l.n && !msg; i++) {
            const json_t *e = store_obj_json(l.items[i]);
            if (!strcmp(str_at(e, "involvedObject", "name", NULL), pod) &&
                !strcmp(str_at(e, "reason", NULL, NULL), reason))
                msg = strdup(str_at(e, "message", NULL, NULL));
        }
        store_list_free(&l);
        if (msg)
            return msg;
        usleep(50 * 1000);
    }
    fail_msg("no %s event for pod %s", reason, pod);
    return NULL;
}

/* args without command run as the command line (no image ENTRYPOINT here):
 * the pod says so in a Warning event, and a start that fails says why. */
static void test_args_only_warned(void **state)
{
    fixture *f = *state;
    json_t *pod;
    char *msg;

    make_pod(f, "argsonly", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                            "`args`:[`--epochs`,`1`]}]}");
    pod = wait_phase(f, "argsonly", "Failed", 20000);
    assert_string_equal(str_at(container_status(pod, 0), "state", "terminated", "reason"),
                        "StartError");
    assert_non_null(strstr(str_at(container_status(pod, 0), "state", "terminated", "message"),
                           "exec: \"--epochs\": No such file or directory (the container has "
                           "args but no command"));
    json_decref(pod);
    msg = wait_event(f, "argsonly", "ArgsWithoutCommand");
    assert_non_null(strstr(msg, "Container c has args but no command"));
    assert_non_null(strstr(msg, "args[0] (\"--epochs\") runs as the program"));
    free(msg);

    /* the form that works on a cluster with an image without ENTRYPOINT runs */
    make_pod(f, "shargs", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                          "`args`:[`sh`,`-c`,`echo ran`]}]}");
    json_decref(wait_phase(f, "shargs", "Succeeded", 20000));
    free(wait_log(f, "shargs", "c", "ran\n", 100));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exit_1_crash_loops_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_program_crash_loops_running, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_args_only_warned, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
