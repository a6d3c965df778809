/* test_slurm_cli_run.c - runtime/slurm/scli: running commands, with
 * /bin/sh scripts standing in for Slurm's tools (exit codes, signals,
 * stdin, output caps, the deadline, descriptors, the environment). The
 * parsers are in test_slurm_cli.c. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/timeutil.h"
#include "runtime/slurm/scli.h"

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

/* Descriptors past 2 that any child of this process inherits: not ours. */
static int inheritable_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d))) {
        int fd = atoi(de->d_name);
        if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
            continue;
        int fl = fcntl(fd, F_GETFD);
        if (fl >= 0 && !(fl & FD_CLOEXEC))
            n++;
    }
    closedir(d);
    return n;
}

static int sh(const char *script, const char *in, int timeout_ms, size_t max_out, scli_out *o,
              ty_error *err)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};

    ty_error_init(err);
    return scli_run(argv, in, timeout_ms, max_out, o, err);
}

static void test_run_exit_codes(void **state)
{
    scli_out o;
    ty_error err;

    (void)state;
    assert_int_equal(sh("echo 123; echo oops >&2; exit 0", NULL, 30000, 4096, &o, &err), 0);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.sig, 0);
    assert_string_equal(o.out, "123\n");
    assert_int_equal(o.out_len, 4);
    assert_string_equal(o.err, "oops\n");
    assert_false(o.truncated);
    scli_out_free(&o);
    assert_null(o.out);

    assert_int_equal(sh("echo 'sbatch: error: Batch job submission failed: Invalid partition "
                        "name specified' >&2; exit 1",
                        NULL, 30000, 4096, &o, &err),
                     0);
    assert_int_equal(o.status, 1);
    assert_string_equal(o.out, "");
    const char *argv[] = {"/usr/bin/sbatch", "--parsable", NULL};
    char *d = scli_describe(argv, &o);
    assert_string_equal(d, "sbatch: exit 1: sbatch: error: Batch job submission failed: Invalid "
                           "partition name specified");
    free(d);
    scli_out_free(&o);

    assert_int_equal(sh("exit 42", NULL, 30000, 4096, &o, &err), 0);
    assert_int_equal(o.status, 42);
    d = scli_describe(argv, &o);
    assert_string_equal(d, "sbatch: exit 42");
    free(d);
    scli_out_free(&o);
}

static void test_run_signal(void **state)
{
    scli_out o;
    ty_error err;

    (void)state;
    /* A shell that blocks or ignores signals must not pass that on: the
     * child starts with default dispositions. */
    assert_int_equal(sh("echo before; kill -TERM $$; echo after", NULL, 30000, 4096, &o, &err),
                     0);
    assert_int_equal(o.sig, 15);
    assert_int_equal(o.status, 128 + 15);
    assert_string_equal(o.out, "before\n");
    const char *argv[] = {"scancel", NULL};
    char *d = scli_describe(argv, &o);
    assert_string_equal(d, "scancel: killed by signal 15: before");
    free(d);
    scli_out_free(&o);
}

static void test_run_stdin(void **state)
{
    scli_out o;
    ty_error err;
    const char *script = "#!/bin/bash\n#SBATCH --job-name=ty-default-pt-0\n#SBATCH --nodes=2\n"
                         "srun python train.py\n";

    (void)state;
    assert_int_equal(sh("cat; echo; wc -c", script, 30000, 4096, &o, &err), 0);
    assert_int_equal(o.status, 0);
    char want[512];
    /* cat consumed the input, so wc counts 0 */
    snprintf(want, sizeof(want), "%s\n0\n", script);
    assert_string_equal(o.out, want);
    scli_out_free(&o);

    /* No input: /dev/null, read at once (not a terminal, not a hang). */
    assert_int_equal(sh("wc -c", NULL, 30000, 4096, &o, &err), 0);
    assert_int_equal(atoi(o.out), 0);
    scli_out_free(&o);

    /* A big input the command never reads does not block either side. */
    size_t big = 1 << 20;
    char *in = malloc(big + 1);
    assert_non_null(in);
    memset(in, 'x', big);
    in[big] = '\0';
    assert_int_equal(sh("echo 4242", in, 30000, 4096, &o, &err), 0);
    assert_string_equal(o.out, "4242\n");
    scli_out_free(&o);
    assert_int_equal(sh("wc -c", in, 30000, 4096, &o, &err), 0);
    assert_int_equal(atol(o.out), (long)big);
    scli_out_free(&o);
    free(in);
}

static void test_run_truncates(void **state)
{
    scli_out o;
    ty_error err;

    (void)state;
    /* 1 MiB on each stream against a cap of 1000: the rest is drained (the
     * command is not stuck on a full pipe) and dropped. */
    assert_int_equal(sh("head -c 1048576 /dev/zero | tr '\\0' a; "
                        "head -c 1048576 /dev/zero | tr '\\0' b >&2; echo done >&2; exit 3",
                        NULL, 60000, 1000, &o, &err),
                     0);
    assert_int_equal(o.status, 3);
    assert_true(o.truncated);
    assert_int_equal(o.out_len, 1000);
    assert_int_equal(strlen(o.out), 1000);
    for (size_t i = 0; i < o.out_len; i++)
        assert_int_equal(o.out[i], 'a');
    assert_non_null(strstr(o.err, "scli: stdout cut at 1000 bytes"));
    assert_non_null(strstr(o.err, "scli: stderr cut at 1000 bytes"));
    assert_int_equal(o.err[0], 'b');
    scli_out_free(&o);

    /* NUL bytes in the output are kept; out_len counts them. */
    assert_int_equal(sh("printf 'a\\000b'", NULL, 30000, 100, &o, &err), 0);
    assert_int_equal(o.out_len, 3);
    assert_int_equal(o.out[1], '\0');
    assert_int_equal(o.out[2], 'b');
    scli_out_free(&o);
}

static void test_run_timeout_kills_group(void **state)
{
    scli_out o = {.status = 77};
    ty_error err;

    (void)state;
    int64_t t0 = ty_now_ms();
    /* The sleeps are the shell's children: the whole group goes. */
    assert_int_equal(sh("sleep 100 & sleep 100; echo never", NULL, 300, 4096, &o, &err), -1);
    int64_t took = ty_now_ms() - t0;
    assert_int_equal(err.code, TY_ETIMEOUT);
    assert_non_null(strstr(err.text, "sh: timed out after 300 ms"));
    assert_null(o.out);
    assert_int_equal(o.status, 0);
    /* Far below the 100 s of the sleeps, whatever the machine's load. */
    assert_true(took < 60000);
    /* Reaped: no child of ours is left, not even a zombie (the sleeps were
     * the shell's children and go to init). */
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    scli_out_free(&o);
}

static void test_run_leftover_daemon(void **state)
{
    scli_out o;
    ty_error err;

    (void)state;
    /* The background sleep holds stdout and stderr open after the shell
     * exits; the run ends with the shell, not at the deadline. */
    int64_t t0 = ty_now_ms();
    assert_int_equal(sh("sleep 100 & echo $!", NULL, 60000, 100, &o, &err), 0);
    assert_true(ty_now_ms() - t0 < 50000);
    assert_int_equal(o.status, 0);
    pid_t daemon = (pid_t)atoi(o.out);
    assert_true(daemon > 1);
    kill(daemon, SIGKILL);
    scli_out_free(&o);
}

static void test_run_endless_writers(void **state)
{
    scli_out o;
    ty_error err;

    (void)state;
    /* A writer as fast as we read still meets the deadline. */
    int64_t t0 = ty_now_ms();
    assert_int_equal(sh("yes", NULL, 300, 100, &o, &err), -1);
    assert_int_equal(err.code, TY_ETIMEOUT);
    assert_true(ty_now_ms() - t0 < 50000);
    /* Writers left behind, still writing into the pipes, do not hold the
     * run once the shell has exited (they die of SIGPIPE when we close). */
    t0 = ty_now_ms();
    assert_int_equal(sh("yes & yes no >&2 & exit 0", NULL, 60000, 4096, &o, &err), 0);
    assert_true(ty_now_ms() - t0 < 50000);
    assert_int_equal(o.status, 0);
    scli_out_free(&o);
}

typedef struct runner {
    int id, failures;
} runner;

static void *run_many(void *arg)
{
    runner *r = arg;
    char script[64], want[32];

    for (int i = 0; i < 10; i++) {
        scli_out o;
        ty_error err;
        snprintf(script, sizeof(script), "echo %d-%d; echo e%d >&2", r->id, i, r->id);
        snprintf(want, sizeof(want), "%d-%d\n", r->id, i);
        if (sh(script, i % 2 ? "x" : NULL, 60000, 100, &o, &err) != 0 ||
            strcmp(o.out, want) != 0 || o.status != 0)
            r->failures++;
        scli_out_free(&o);
    }
    return NULL;
}

static void test_run_threads(void **state)
{
    pthread_t t[8];
    runner r[8];
    int before = count_fds();

    (void)state;
    for (int i = 0; i < 8; i++) {
        r[i] = (runner){.id = i};
        assert_int_equal(pthread_create(&t[i], NULL, run_many, &r[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].failures, 0);
    }
    assert_int_equal(count_fds(), before);
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

static void test_run_cannot_start(void **state)
{
    scli_out o;
    ty_error err;
    const char *argv[] = {"ty-no-such-slurm-command", "--version", NULL};
    const char *none[] = {NULL};

    (void)state;
    ty_error_init(&err);
    assert_int_equal(scli_run(argv, NULL, 1000, 100, &o, &err), -1);
    assert_int_equal(err.code, TY_EUNAVAILABLE);
    assert_non_null(strstr(err.text, "ty-no-such-slurm-command: cannot run: No such file"));
    assert_null(o.out);
    ty_error_init(&err);
    assert_int_equal(scli_run(none, NULL, 1000, 100, &o, &err), -1);
    ty_error_init(&err);
    assert_int_equal(scli_run(argv, NULL, 0, 100, &o, &err), -1);
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

static void test_run_no_fd_leak(void **state)
{
    scli_out o;
    ty_error err;
    const char *argv[] = {"ty-no-such-slurm-command", NULL};
    int before;

    (void)state;
    before = count_fds();
    for (int i = 0; i < 20; i++) {
        assert_int_equal(sh("echo x; echo y >&2", i % 2 ? "in" : NULL, 30000, 100, &o, &err), 0);
        scli_out_free(&o);
    }
    assert_int_equal(sh("sleep 100", "in", 100, 100, &o, &err), -1);
    ty_error_init(&err);
    assert_int_equal(scli_run(argv, "in", 1000, 100, &o, &err), -1);
    assert_int_equal(count_fds(), before);

    /* And the child sees only 0, 1 and 2 (everything of ours is
     * close-on-exec). */
    assert_int_equal(sh("ls /proc/self/fd | wc -l", "in", 30000, 100, &o, &err), 0);
    /* 0 1 2, the directory ls reads, and what this process had open
     * without close-on-exec before (the test harness's) */
    assert_int_equal(atoi(o.out), 4 + inheritable_fds());
    scli_out_free(&o);
}

static void test_run_environment(void **state)
{
    scli_out o;
    ty_error err;

    (void)state;
    setenv("SLURM_CONF", "/etc/slurm/test.conf", 1);
    assert_int_equal(sh("echo \"$SLURM_CONF\"", NULL, 30000, 100, &o, &err), 0);
    assert_string_equal(o.out, "/etc/slurm/test.conf\n");
    scli_out_free(&o);
    unsetenv("SLURM_CONF");
    /* argv[0] through PATH, no shell: metacharacters are plain bytes */
    const char *argv[] = {"echo", "a;b", "$(id)", NULL};
    ty_error_init(&err);
    assert_int_equal(scli_run(argv, NULL, 30000, 100, &o, &err), 0);
    assert_string_equal(o.out, "a;b $(id)\n");
    scli_out_free(&o);
}

static void test_describe_bounds(void **state)
{
    char longerr[2000];
    scli_out o = {.status = 1, .out = "", .err = longerr};
    const char *argv[] = {"squeue", NULL};

    (void)state;
    memset(longerr, 'e', sizeof(longerr) - 1);
    longerr[sizeof(longerr) - 1] = '\0';
    longerr[3] = '\033';
    o.err_len = strlen(longerr);
    char *d = scli_describe(argv, &o);
    assert_true(strlen(d) < 250);
    assert_null(strchr(d, '\033'));
    assert_memory_equal(d, "squeue: exit 1: eee?", 20);
    free(d);
    o.err = "\n\n  second line\nthird";
    o.err_len = 0;
    d = scli_describe(argv, &o);
    assert_string_equal(d, "squeue: exit 1: second line");
    free(d);
    o.err = NULL;
    o.out = "stdout says\n";
    d = scli_describe(argv, &o);
    assert_string_equal(d, "squeue: exit 1: stdout says");
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_exit_codes),
        cmocka_unit_test(test_run_signal),
        cmocka_unit_test(test_run_stdin),
        cmocka_unit_test(test_run_truncates),
        cmocka_unit_test(test_run_timeout_kills_group),
        cmocka_unit_test(test_run_leftover_daemon),
        cmocka_unit_test(test_run_endless_writers),
        cmocka_unit_test(test_run_threads),
        cmocka_unit_test(test_run_cannot_start),
        cmocka_unit_test(test_run_no_fd_leak),
        cmocka_unit_test(test_run_environment),
        cmocka_unit_test(test_describe_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
