/* test_runtime_logs.c - a pod's logs under the local runtime: rotation at
 * the configured size (one older file kept, the server reads both), and the
 * retention of a deleted pod's logs: the sweep alone on a clock the test
 * moves, then the agent with a retention short enough to watch. */
#include "test_runtime_fixture.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "runtime/local/rt_internal.h"
#include "runtime/local/logfile.h"
#include "kc_fixture.h"

static void mkdir_p(const char *path)
{
    char buf[512];

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Restarts the fixture's agent with these log options. */
static void restart_agent(fixture *f, long long max_bytes, int64_t retention_ms)
{
    rt_local_opts o = {.data_dir = f->dir, .node_name = NODE, .fake_gpus = 2,
                       .self_exe = exe_path(), .restart_backoff_ms = 200,
                       .log_max_bytes = max_bytes, .log_retention_ms = retention_ms};
    ty_error err;

    rt_local_stop(f->rt);
    ty_error_init(&err);
    f->rt = rt_local_start(KC(f->s), &o, &err);
    if (!f->rt)
        fail_msg("rt_local_start: %s", err.text);
}

/* The sweep on a clock the test sets: a pod gone is marked the first time,
 * removed once the retention has passed since; a pod that exists keeps its
 * logs (and loses an old mark); retention 0 keeps everything. */
static void test_sweep_retention(void **state)
{
    fixture *f = *state;
    char gone[256], live[256], mark[300];

    rt_local_stop(f->rt); /* the sweep alone */
    f->rt = NULL;
    make_pod(f, "live", "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`true`]}]}");
    snprintf(gone, sizeof(gone), "%s/logs/default/gone", f->dir);
    snprintf(live, sizeof(live), "%s/logs/default/live", f->dir);
    mkdir_p(gone);
    mkdir_p(live);
    snprintf(mark, sizeof(mark), "%s/.gone", live);
    fclose(fopen(mark, "w")); /* left by an earlier pod of the same name */

    assert_int_equal(rt_logs_sweep(KC(f->s), f->dir, 0, 1000000), 0);
    assert_true(exists(gone));
    assert_int_equal(rt_logs_sweep(KC(f->s), f->dir, 500, 1000000), 0); /* marked now */
    assert_true(exists(gone));
    assert_false(exists(mark));
    assert_int_equal(rt_logs_sweep(KC(f->s), f->dir, 500, 1000499), 0);
    assert_true(exists(gone));
    assert_int_equal(rt_logs_sweep(KC(f->s), f->dir, 500, 1000500), 1);
    assert_false(exists(gone));
    assert_true(exists(live));

    /* Marked when it went: from then, not from the first sweep. */
    mkdir_p(gone);
    rt_logs_mark_gone(KC(f->s), f->dir, "default", "gone", NULL);
    assert_int_equal(rt_logs_sweep(KC(f->s), f->dir, 1000, rt_logs_wall_ms() + 1000), 1);
    assert_false(exists(gone));
    f->rt = start_agent(f); /* for teardown */
}

/* The retained logs of a namespace: only pods marked gone, with the
 * labels kept when they went (how `trainyard logs JOB` finds a deleted
 * job's replicas), and only containers that left a log. */
static void test_retained_list(void **state)
{
    fixture *f = *state;
    char dir[256], path[300];
    json_t *labels = json_pack("{s:s}", "training.kubeflow.org/job-name", "j");
    json_t *l, *e;
    FILE *fp;

    rt_local_stop(f->rt);
    f->rt = NULL;
    make_obj(f, "namespaces", &api_namespace, NULL,
             "{`apiVersion`:`v1`,`kind`:`Namespace`,`metadata`:{`name`:`ns1`}}");
    snprintf(dir, sizeof(dir), "%s/logs/ns1/j-master-0", f->dir);
    mkdir_p(dir);
    snprintf(path, sizeof(path), "%s/c.log", dir);
    fp = fopen(path, "w");
    fputs("2026-11-28T10:00:00Z hello\n", fp);
    fclose(fp);
    snprintf(dir, sizeof(dir), "%s/logs/ns1/running", f->dir); /* not gone */
    mkdir_p(dir);
    snprintf(path, sizeof(path), "%s/c.log", dir);
    fclose(fopen(path, "w"));
    snprintf(dir, sizeof(dir), "%s/logs/ns1/nolog", f->dir); /* gone, no log left */
    mkdir_p(dir);
    rt_logs_mark_gone(KC(f->s), f->dir, "ns1", "nolog", NULL);

    l = rt_logs_retained(f->dir, "ns1");
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    rt_logs_mark_gone(KC(f->s), f->dir, "ns1", "j-master-0", labels);
    l = rt_logs_retained(f->dir, "ns1");
    assert_int_equal(json_array_size(l), 1);
    e = json_array_get(l, 0);
    assert_string_equal(json_string_value(json_object_get(e, "pod")), "j-master-0");
    assert_string_equal(json_string_value(json_array_get(json_object_get(e, "containers"), 0)),
                        "c");
    assert_true(json_equal(json_object_get(e, "labels"), labels));
    assert_non_null(json_string_value(json_object_get(e, "goneTime")));
    {
        /* The mark names the namespace it went from, so that a later
         * namespace of that name is not given these logs (server/podlog.c). */
        store_obj *ns = store_get(f->s, "namespaces", NULL, "ns1", NULL);
        assert_non_null(ns);
        assert_string_equal(
            json_string_value(json_object_get(e, "namespaceUID")),
            json_string_value(json_object_get(json_object_get(store_obj_json(ns), "metadata"),
                                              "uid")));
        store_obj_unref(ns);
    }
    json_decref(l);
    l = rt_logs_retained(f->dir, ".."); /* no path component: nothing */
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    l = rt_logs_retained(f->dir, "other"); /* no such namespace: empty */
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    json_decref(labels);
    f->rt = start_agent(f); /* for teardown */
}

/* Everything the server would serve for the container (with tail), joined. */
static char *served(fixture *f, const char *pod, const char *suffix, long tail)
{
    char path[512], line[256];
    size_t cap = 1 << 22, n = 0;
    char *out = calloc(1, cap);
    logfile *lf;

    snprintf(path, sizeof(path), "%s/logs/default/%s/c.log%s", f->dir, pod, suffix);
    lf = logfile_open(path, tail);
    assert_non_null(lf);
    while (logfile_gets(lf, line, sizeof(line))) {
        const char *text = strchr(line, ' ') ? strchr(line, ' ') + 1 : line;
        size_t l = strlen(text);
        assert_true(n + l < cap);
        memcpy(out + n, text, l);
        n += l;
    }
    logfile_close(lf);
    return out;
}

/* Lines "first..last\n" as seq prints them. */
static char *seq_text(int first, int last)
{
    char *out = calloc(1, 16 * (size_t)(last - first + 2)), *p = out;

    for (int i = first; i <= last; i++)
        p += sprintf(p, "%d\n", i);
    return out;
}

/* The log is rotated at the configured size, one older file kept: what the
 * two hold is the end of the output, whole and in order; a restart moves
 * both to .prev. */
static void test_rotation(void **state)
{
    fixture *f = *state;
    char path[512], spec[1024], *got, *want, *nl;
    struct stat st;
    int first;
    json_t *p;

    restart_agent(f, 2048, 0);
    /* The first run prints 2000 lines and fails; the second prints one. (As
     * uid 0, the owner of the test's directory, where it leaves its mark.) */
    snprintf(spec, sizeof(spec),
             "{`restartPolicy`:`OnFailure`,`securityContext`:{`runAsUser`:0},"
             "`containers`:[{`name`:`c`,`image`:`x`,"
             "`command`:[`sh`,`-c`,`if [ -e %s/ran ]; then echo second; sleep 100; fi; "
             "touch %s/ran; seq 1 2000; exit 1`]}]}",
             f->dir, f->dir);
    make_pod(f, "chatty", spec);
    p = NULL;
    for (int t = 0; t < 30000; t += 50) {
        json_decref(p);
        p = get_pod(f, "chatty");
        const json_t *cs = container_status(p, 0);
        if (json_integer_value(json_object_get(cs, "restartCount")) >= 1 &&
            json_object_get(json_object_get(cs, "state"), "running"))
            break;
        usleep(50 * 1000);
    }
    json_decref(p);
    free(wait_log(f, "chatty", "c", "second", 30000));

    /* The first run: rotated many times; .prev and .prev.1 hold its end. */
    snprintf(path, sizeof(path), "%s/logs/default/chatty/c.log.prev", f->dir);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size <= 2048 + 64);
    snprintf(path, sizeof(path), "%s/logs/default/chatty/c.log.prev.1", f->dir);
    assert_int_equal(stat(path, &st), 0);
    got = served(f, "chatty", ".prev", -1);
    first = atoi(got);
    assert_true(first > 1 && first < 2000);
    want = seq_text(first, 2000);
    assert_string_equal(got, want);
    free(got);
    free(want);
    /* A tail that crosses the cut between the two files. */
    nl = served(f, "chatty", "", -1);
    assert_string_equal(nl, "second\n"); /* the second run sees none of the first's */
    free(nl);
    got = served(f, "chatty", ".prev", 2000 - first);
    want = seq_text(first + 1, 2000);
    assert_string_equal(got, want);
    free(got);
    free(want);
    delete_pod(f, "chatty");
    assert_true(wait_gone(f, "chatty", 30000));
}

/* The log sweep removes a namespace's log directory when its last pod's
 * has gone (rmdir of an empty directory); a pod starting then makes
 * logs/NS/POD. Before, the parent removed between the walk's two mkdirs
 * left the pod without its log directory and its output lost (1 CI run in
 * many: test_agent_retention). The walk now starts again. */
typedef struct remover {
    const char *dir;
    atomic_bool stop;
} remover;

static void *remove_parent(void *arg)
{
    remover *r = arg;
    /* a sweep's rmdir every millisecond (the agent's come 75 ms apart at
     * the shortest): often enough to fall between a walk's two mkdirs */
    while (!atomic_load(&r->stop)) {
        rmdir(r->dir); /* fails while it holds a pod's directory */
        usleep(1000);
    }
    return NULL;
}

static void test_mkdirs_races_removal(void **state)
{
    fixture *f = *state;
    char ns[300], pod[400];
    remover r = {.dir = ns};
    pthread_t t;

    snprintf(ns, sizeof(ns), "%s/logs/race", f->dir);
    assert_int_equal(pthread_create(&t, NULL, remove_parent, &r), 0);
    for (int i = 0; i < 3000; i++) {
        snprintf(pod, sizeof(pod), "%s/p%d", ns, i);
        if (rt_mkdirs_mode(pod, 0700) != 0)
            fail_msg("rt_mkdirs_mode(%s): %s", pod, strerror(errno));
        assert_true(exists(pod));
        rmdir(pod); /* the namespace is empty again: the remover's chance */
    }
    atomic_store(&r.stop, true);
    pthread_join(t, NULL);
}

/* The agent: a deleted pod's logs stay readable, then go after the retention. */
static void test_agent_retention(void **state)
{
    fixture *f = *state;
    char dir[512];
    int t;

    restart_agent(f, 0, 300);
    make_pod(f, "brief", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                         "`command`:[`echo`,`hello`]}]}");
    json_decref(wait_phase(f, "brief", "Succeeded", 20000));
    snprintf(dir, sizeof(dir), "%s/logs/default/brief", f->dir);
    assert_true(exists(dir));
    delete_pod(f, "brief");
    assert_true(wait_gone(f, "brief", 30000));
    for (t = 0; t < 30000 && exists(dir); t += 50)
        usleep(50 * 1000);
    assert_false(exists(dir));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sweep_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retained_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_agent_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mkdirs_races_removal, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
