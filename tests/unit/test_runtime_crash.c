/* test_runtime_crash.c - the local runtime across crashes of the server and
 * a full disk: a pod's command never runs twice for one start, and its exit
 * code is never made up.
 *
 * The windows are reproduced at the module level: the agent is stopped and
 * the pod directory left as a SIGKILL at that moment would leave it (no
 * supervisor.pid: the server died between spawning the supervisor and
 * recording it). */
#include "test_runtime_fixture.h"

#include <fcntl.h>
#include <sys/wait.h>

#include "runtime/local/rt_internal.h"
#include "kc_fixture.h"

/* The pod's directory under the fixture's data dir. */
static void pod_dir(fixture *f, const char *name, char *buf, size_t len)
{
    json_t *pod = get_pod(f, name);
    const char *uid;

    assert_non_null(pod);
    uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    snprintf(buf, len, "%s/pods/%s", f->dir, uid);
    json_decref(pod);
}

static void pod_file(fixture *f, const char *name, const char *file, char *buf, size_t len)
{
    char dir[400];

    pod_dir(f, name, dir, sizeof(dir));
    snprintf(buf, len, "%s/%s", dir, file);
}

/* Lines in a file; 0 when absent. */
static int count_lines(const char *path)
{
    FILE *fp = fopen(path, "r");
    int n = 0, c;

    if (!fp)
        return 0;
    while ((c = fgetc(fp)) != EOF)
        n += c == '\n';
    fclose(fp);
    return n;
}

static pid_t container_pid(const json_t *pod)
{
    const char *cid = json_string_value(json_object_get(container_status(pod, 0), "containerID"));
    return cid && !strncmp(cid, "trainyard://", 12) ? (pid_t)atoi(cid + 12) : 0;
}

/* Each run of the pod appends a line to runs; the log says "once". The pod
 * writes into the test's (root's, closed) directory: it runs as uid 0,
 * which owns it even without capabilities. */
#define ONCE_SPEC                                                                              \
    "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:0},"                              \
    "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,`-c`,"                              \
    "`echo run >> %s/runs-%s; echo once; %s`]}]}"

static void make_counting_pod(fixture *f, const char *name, const char *then)
{
    char spec[1024];

    snprintf(spec, sizeof(spec), ONCE_SPEC, f->dir, name, then);
    make_pod(f, name, spec);
}

static int runs_of(fixture *f, const char *name)
{
    char path[256];

    snprintf(path, sizeof(path), "%s/runs-%s", f->dir, name);
    return count_lines(path);
}

/* The server died after starting the supervisor and before writing its pid:
 * the next server finds the supervisor by its lock and adopts it. */
static void test_unrecorded_supervisor_adopted(void **state)
{
    fixture *f = *state;
    char pidfile[512];
    json_t *pod;
    pid_t pid;
    char *log;

    make_counting_pod(f, "window", "sleep 1000");
    pod = wait_phase(f, "window", "Running", 10000);
    pid = container_pid(pod);
    json_decref(pod);
    free(wait_log(f, "window", "c", " once\n", 5000));
    rt_local_stop(f->rt);
    f->rt = NULL;
    pod_file(f, "window", "supervisor.pid", pidfile, sizeof(pidfile));
    assert_int_equal(unlink(pidfile), 0);
    f->rt = start_agent(f);
    usleep(1000 * 1000); /* a second start would have run by now */
    pod = wait_phase(f, "window", "Running", 5000);
    assert_int_equal(container_pid(pod), pid); /* the same process */
    json_decref(pod);
    assert_int_equal(runs_of(f, "window"), 1);
    log = read_log(f, "window", "c", "");
    assert_non_null(strstr(log, " once\n")); /* the first run's log is still there */
    free(log);
    delete_pod(f, "window");
    assert_true(wait_gone(f, "window", 10000));
    assert_int_not_equal(kill(pid, 0), 0);
}

/* The same window, and the pod finished before the next server came: its
 * exit is reported, not a second run's. */
static void test_unrecorded_finished_not_rerun(void **state)
{
    fixture *f = *state;
    char pidfile[512], statefile[512];
    const json_t *term;
    json_t *pod;
    json_t *st = NULL;

    make_counting_pod(f, "ended", "sleep 1; exit 5");
    json_decref(wait_phase(f, "ended", "Running", 10000));
    rt_local_stop(f->rt);
    f->rt = NULL;
    pod_file(f, "ended", "state.json", statefile, sizeof(statefile));
    for (int64_t end = ty_now_ms() + 60000; ty_now_ms() < end;) { /* it ends while no agent runs */
        json_decref(st);
        st = json_load_file(statefile, 0, NULL);
        if (!strcmp(json_string_value(json_object_get(st, "phase")) ?: "", "Failed"))
            break;
        usleep(50 * 1000);
    }
    assert_string_equal(json_string_value(json_object_get(st, "phase")), "Failed");
    json_decref(st);
    pod_file(f, "ended", "supervisor.pid", pidfile, sizeof(pidfile));
    assert_int_equal(unlink(pidfile), 0);
    f->rt = start_agent(f);
    pod = wait_phase(f, "ended", "Failed", 5000);
    term = json_object_get(json_object_get(container_status(pod, 0), "state"), "terminated");
    assert_int_equal(json_integer_value(json_object_get(term, "exitCode")), 5);
    json_decref(pod);
    usleep(500 * 1000);
    assert_int_equal(runs_of(f, "ended"), 1);
}

/* The machine went down after the pod's end was reported but before its
 * last state reached the disk: the next agent finds the supervisor gone and
 * a state that says Running. The reported end (exit 5) stands; no 137 is
 * made up over it. */
static void test_reported_end_not_overwritten(void **state)
{
    fixture *f = *state;
    char statefile[512], *running = NULL, go[300], then[400];
    const json_t *term;
    json_t *pod;
    FILE *fp;
    int fd;

    /* The container waits for the test's word, so its Running state can be
     * read however slowly the test runs. */
    snprintf(go, sizeof(go), "%s/go-reported", f->dir);
    snprintf(then, sizeof(then), "while [ ! -e %s ]; do sleep 0.05; done; exit 5", go);
    make_counting_pod(f, "reported", then);
    json_decref(wait_phase(f, "reported", "Running", 60000));
    pod_file(f, "reported", "state.json", statefile, sizeof(statefile));
    for (int i = 0; i < 6000 && !running; i++) {
        running = rt_read_file(statefile, 1 << 20, NULL);
        if (running && !strstr(running, "\"phase\":\"Running\"")) {
            free(running);
            running = NULL;
            usleep(10 * 1000);
        }
    }
    assert_non_null(running);
    assert_true((fd = open(go, O_WRONLY | O_CREAT, 0644)) >= 0);
    close(fd);
    json_decref(wait_phase(f, "reported", "Failed", 60000));
    rt_local_stop(f->rt);
    f->rt = NULL;
    /* an out-of-date state file, as a crash between writes could leave */
    assert_non_null(fp = fopen(statefile, "w"));
    fputs(running, fp);
    fclose(fp);
    free(running);
    f->rt = start_agent(f);
    usleep(500 * 1000); /* (only gives a wrong rewrite the chance to show) */
    pod = wait_phase(f, "reported", "Failed", 60000);
    term = json_object_get(json_object_get(container_status(pod, 0), "state"), "terminated");
    assert_int_equal(json_integer_value(json_object_get(term, "exitCode")), 5);
    json_decref(pod);
}

/* Polls up to timeout_ms for a file to contain text. */
static bool wait_file_has(const char *path, const char *text, int timeout_ms)
{
    for (int t = 0; t < timeout_ms; t += 50) {
        char *got = rt_read_file(path, 1 << 20, NULL);
        bool ok = got && strstr(got, text);
        free(got);
        if (ok)
            return true;
        usleep(50 * 1000);
    }
    return false;
}

/* The last state cannot be written (here: state.json is in the way as a
 * directory; a full disk does the same): the supervisor keeps it, stays, and
 * writes it once it can. The pod is never reported with a made-up 137. */
static void test_unwritable_end_kept_until_written(void **state)
{
    fixture *f = *state;
    char statefile[512], blocker[600], svlog[512], go[300], then[400];
    const json_t *term;
    json_t *pod;
    int fd;

    snprintf(go, sizeof(go), "%s/go", f->dir);
    snprintf(then, sizeof(then), "while [ ! -e %s ]; do sleep 0.05; done; exit 3", go);
    make_counting_pod(f, "stuck", then);
    json_decref(wait_phase(f, "stuck", "Running", 10000));
    pod_file(f, "stuck", "state.json", statefile, sizeof(statefile));
    pod_file(f, "stuck", "supervisor.log", svlog, sizeof(svlog));
    assert_int_equal(unlink(statefile), 0);
    assert_int_equal(mkdir(statefile, 0755), 0);
    snprintf(blocker, sizeof(blocker), "%s/x", statefile);
    assert_true((fd = open(blocker, O_WRONLY | O_CREAT, 0644)) >= 0);
    close(fd);
    assert_true((fd = open(go, O_WRONLY | O_CREAT, 0644)) >= 0);
    close(fd);
    assert_true(wait_file_has(svlog, "cannot write ", 60000));
    usleep(300 * 1000); /* a supervisor that gave up would be gone now */
    pod = get_pod(f, "stuck");
    assert_string_equal(phase_of(pod), "Running"); /* what is known; nothing made up */
    json_decref(pod);
    assert_int_equal(unlink(blocker), 0);
    assert_int_equal(rmdir(statefile), 0);
    pod = wait_phase(f, "stuck", "Failed", 10000);
    term = json_object_get(json_object_get(container_status(pod, 0), "state"), "terminated");
    assert_int_equal(json_integer_value(json_object_get(term, "exitCode")), 3);
    json_decref(pod);
}

/* Runs `trainyard supervise --pod-dir dir`; its exit status. */
static int run_supervisor(const char *dir)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        execl(exe_path(), exe_path(), "supervise", "--pod-dir", dir, (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The same with two directories, as a Slurm step's task is started: the
 * one of rank SLURM_PROCID (NULL = unset) is kept. */
static int run_supervisor_rank(const char *dir0, const char *dir1, const char *rank)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        if (rank)
            setenv("SLURM_PROCID", rank, 1);
        else
            unsetenv("SLURM_PROCID");
        execl(exe_path(), exe_path(), "supervise", "--pod-dir", dir0, "--pod-dir", dir1,
              (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A second supervisor on a pod directory leaves without running anything:
 * while the first one lives (its lock), and after it ended (its state). */
static void test_second_supervisor_refuses(void **state)
{
    fixture *f = *state;
    char dir[400];
    char *log;

    make_counting_pod(f, "twice", "sleep 2");
    json_decref(wait_phase(f, "twice", "Running", 10000));
    free(wait_log(f, "twice", "c", " once\n", 5000));
    pod_dir(f, "twice", dir, sizeof(dir));
    assert_int_equal(run_supervisor(dir), 75);
    json_decref(wait_phase(f, "twice", "Succeeded", 10000));
    assert_int_equal(run_supervisor(dir), 75);
    /* rank 1 of two keeps the second directory: this pod's (75 again, where
     * the first, missing, would fail to load); no rank, or one past the
     * list, is a usage error */
    assert_int_equal(run_supervisor_rank("/nonexistent/pod", dir, "1"), 75);
    assert_int_equal(run_supervisor_rank(dir, "/nonexistent/pod", "1"), 1);
    assert_int_equal(run_supervisor_rank(dir, "/nonexistent/pod", NULL), 2);
    assert_int_equal(run_supervisor_rank(dir, "/nonexistent/pod", "2"), 2);
    assert_int_equal(runs_of(f, "twice"), 1);
    log = read_log(f, "twice", "c", "");
    assert_non_null(strstr(log, " once\n"));
    free(log);
}

static void test_disk_min_parse(void **state)
{
    rt_disk_min m;
    ty_error err;

    (void)state;
    ty_error_init(&err);
    assert_int_equal(rt_disk_min_parse(NULL, &m, &err), 0);
    assert_int_equal(m.pct, 5);
    assert_true(m.bytes == 1ll << 30);
    assert_int_equal(rt_disk_min_parse("10%", &m, &err), 0);
    assert_int_equal(m.pct, 10);
    assert_true(m.bytes == 0);
    assert_int_equal(rt_disk_min_parse("512Mi", &m, &err), 0);
    assert_true(m.bytes == 512ll << 20 && m.pct == 0);
    assert_int_equal(rt_disk_min_parse("0", &m, &err), 0);
    assert_true(m.bytes == 0 && m.pct == 0);
    assert_int_equal(rt_disk_min_parse("100%", &m, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    ty_error_clear(&err);
    assert_int_equal(rt_disk_min_parse("lots", &m, &err), -1);
    assert_non_null(strstr(err.text, "lots"));
    ty_error_clear(&err);
    assert_int_equal(rt_disk_min_parse("-1Gi", &m, &err), -1);
    ty_error_clear(&err);
    /* any disk has less than an exbibyte free, and more than nothing */
    m = (rt_disk_min){.bytes = 1ll << 60};
    assert_int_equal(rt_disk_pressure("/tmp", &m, NULL), 1);
    m = (rt_disk_min){0};
    assert_int_equal(rt_disk_pressure("/tmp", &m, NULL), 0);
    assert_int_equal(rt_disk_pressure("/nonexistent/dir", &m, NULL), -1);
}

static const json_t *node_condition(const json_t *node, const char *type)
{
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", type))
            return c;
    return NULL;
}

/* Polls the Node until its DiskPressure status is want; the Node (decref). */
static json_t *wait_disk_pressure(fixture *f, const char *want)
{
    for (int64_t end = ty_now_ms() + 60000; ty_now_ms() < end;) {
        store_obj *o = store_get(f->s, "nodes", "", NODE, NULL);
        json_t *node = o ? json_deep_copy(store_obj_json(o)) : NULL;
        store_obj_unref(o);
        if (node && !strcmp(json_string_value(json_object_get(
                                 node_condition(node, "DiskPressure"), "status")) ?: "",
                            want))
            return node;
        json_decref(node);
        usleep(50 * 1000);
    }
    fail_msg("the node's DiskPressure did not become %s", want);
    return NULL;
}

/* Below the watermark the Node says DiskPressure and is tainted; a new
 * agent with room (a restart after space came back) clears both. */
static void test_disk_pressure_condition(void **state)
{
    fixture *f = *state;
    rt_local_opts o = {.data_dir = f->dir, .node_name = NODE, .fake_gpus = 2,
                       .self_exe = exe_path(), .restart_backoff_ms = 200,
                       .disk_free_min = "1Pi"};
    const json_t *taint;
    ty_error err;
    json_t *node;

    node = wait_disk_pressure(f, "False"); /* the default on a roomy /tmp */
    assert_null(json_object_get(json_object_get(node, "spec"), "taints"));
    json_decref(node);
    rt_local_stop(f->rt);
    f->rt = NULL;
    ty_error_init(&err);
    f->rt = rt_local_start(KC(f->s), &o, &err);
    assert_non_null(f->rt);
    node = wait_disk_pressure(f, "True");
    assert_string_equal(json_string_value(json_object_get(node_condition(node, "DiskPressure"),
                                                          "reason")),
                        "KubeletHasDiskPressure");
    taint = json_array_get(json_object_get(json_object_get(node, "spec"), "taints"), 0);
    assert_string_equal(json_string_value(json_object_get(taint, "key")),
                        "node.kubernetes.io/disk-pressure");
    assert_string_equal(json_string_value(json_object_get(taint, "effect")), "NoSchedule");
    json_decref(node);
    rt_local_stop(f->rt);
    f->rt = NULL;
    f->rt = start_agent(f);
    node = wait_disk_pressure(f, "False");
    assert_null(json_object_get(json_object_get(node, "spec"), "taints"));
    json_decref(node);
    o.disk_free_min = "lots";
    assert_null(rt_local_start(KC(f->s), &o, &err));
    assert_int_equal(err.code, TY_EINVALID);
    ty_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unrecorded_supervisor_adopted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unrecorded_finished_not_rerun, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_supervisor_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reported_end_not_overwritten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_end_kept_until_written, setup, teardown),
        cmocka_unit_test(test_disk_min_parse),
        cmocka_unit_test_setup_teardown(test_disk_pressure_condition, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
