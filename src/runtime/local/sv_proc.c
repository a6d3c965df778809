/* sv_proc.c - what the supervisor does to the system: each container's
 * environment, identity and process group, its log. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonget.h"
#include "base/timeutil.h"
#include "runtime/local/rt_ident.h"
#include "runtime/local/rt_internal.h"
#include "runtime/local/sv_internal.h"

/* What a container finds in PATH when its env does not set one: the
 * default of containerd and CRI-O. */
#define SV_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

extern char **environ;

/* ---- OOM detection: the oom_kill counter of our cgroup (v2) ---- */

unsigned long long sv_oom_count(const sv *s)
{
    FILE *f = *s->oom_events ? fopen(s->oom_events, "re") : NULL;
    char line[128];
    unsigned long long n = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "oom_kill %llu", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* ---- logs ---- */

static void log_reopen(sv_ct *c, int flags)
{
    struct stat st;

    if (c->log_fd >= 0)
        close(c->log_fd);
    /* The supervisor (root) writes the logs and the server reads them: no
     * other tenant, the pod itself included, needs them (0600). */
    c->log_fd = open(c->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | flags, 0600);
    c->log_size = c->log_fd >= 0 && fstat(c->log_fd, &st) == 0 ? st.st_size : 0;
}

/* The finished run's rotated part (.1) goes with it to .prev.1, so that
 * neither run's reader sees the other's lines (server/logfile.c reads a
 * file's ".1" before it). */
static void log_keep_rotated(const sv_ct *c)
{
    char from[PATH_MAX + 8], to[PATH_MAX + 16];

    snprintf(from, sizeof(from), "%s.1", c->log_path);
    snprintf(to, sizeof(to), "%s.prev.1", c->log_path);
    if (rename(from, to) < 0)
        unlink(to);
}

/* First start: a log left by an earlier pod of the same name is not ours.
 * Restart: the finished run's log becomes .prev (what previous=true reads). */
void sv_log_open(sv *s, sv_ct *c, bool restart)
{
    char other[PATH_MAX + 16];

    if (!*c->log_path) {
        rt_mkdirs_mode(ty_jstr(s->spec, "logDir"), 0700);
        snprintf(c->log_path, sizeof(c->log_path), "%s/%s.log", ty_jstr(s->spec, "logDir"),
                 c->name);
        c->log_fd = -1;
    }
    if (restart) {
        snprintf(other, sizeof(other), "%s.prev", c->log_path);
        rename(c->log_path, other);
        log_keep_rotated(c);
        log_reopen(c, O_TRUNC);
        return;
    }
    if (c->log_fd >= 0)
        return;
    snprintf(other, sizeof(other), "%s.prev", c->log_path);
    unlink(other);
    snprintf(other, sizeof(other), "%s.1", c->log_path);
    unlink(other);
    snprintf(other, sizeof(other), "%s.prev.1", c->log_path);
    unlink(other);
    log_reopen(c, O_TRUNC);
}

static void log_line(sv *s, sv_ct *c, const char *line, size_t len)
{
    char ts[40], rotated[PATH_MAX + 4];
    struct iovec {
        const char *p;
        size_t n;
    } parts[4];
    ty_buf b = {0};

    if (c->log_fd < 0)
        return;
    if (c->log_size >= s->log_max) {
        /* One rotated copy; a follower of the old file stops at the cut. */
        snprintf(rotated, sizeof(rotated), "%s.1", c->log_path);
        rename(c->log_path, rotated);
        log_reopen(c, O_TRUNC);
        if (c->log_fd < 0)
            return;
    }
    ty_time_now_frac(9, ts, sizeof(ts));
    parts[0] = (struct iovec){ts, strlen(ts)};
    parts[1] = (struct iovec){" ", 1};
    parts[2] = (struct iovec){line, len};
    parts[3] = (struct iovec){"\n", 1};
    for (int i = 0; i < 4; i++)
        ty_buf_append(&b, parts[i].p, parts[i].n);
    /* One write per line: O_APPEND keeps lines whole for concurrent readers. */
    if (b.data && write(c->log_fd, b.data, b.len) > 0)
        c->log_size += (long long)b.len;
    ty_buf_free(&b);
}

static void stream_feed(sv *s, sv_ct *c, sv_stream *st, const char *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            log_line(s, c, st->buf, st->len);
            st->len = 0;
            continue;
        }
        if (st->len == sizeof(st->buf)) {
            log_line(s, c, st->buf, st->len);
            st->len = 0;
        }
        st->buf[st->len++] = data[i];
    }
}

static void stream_drain(sv *s, sv_ct *c, sv_stream *st, bool final)
{
    char buf[65536];

    while (st->fd >= 0) {
        ssize_t r = read(st->fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r > 0) {
            stream_feed(s, c, st, buf, (size_t)r);
            if (!final)
                return; /* one read per wake-up keeps streams fair */
            continue;
        }
        if (r < 0 && errno == EAGAIN && !final)
            return;
        /* EOF, error, or the container is gone and the pipe is dry. */
        if (st->len) {
            log_line(s, c, st->buf, st->len);
            st->len = 0;
        }
        close(st->fd);
        st->fd = -1;
    }
}

void sv_drain(sv *s, sv_ct *c, bool final)
{
    stream_drain(s, c, &c->out, final);
    stream_drain(s, c, &c->err, final);
}

/* ---- environment ---- */

static void env_set(json_t *env, const char *kv)
{
    const char *eq = strchr(kv, '=');
    char key[512];

    if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key))
        return;
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    json_object_set_new(env, key, json_string_nocheck(eq + 1));
}

/* The variables spec.json's inheritEnv names, from the supervisor's own
 * environment: what the runtime that started it says (Slurm's step gives
 * CUDA_VISIBLE_DEVICES for the GPUs it allocated, and SLURM_JOB_ID...). A
 * name not set is left out. NVIDIA_VISIBLE_DEVICES follows the inherited
 * CUDA_VISIBLE_DEVICES, as the local runtime pairs them. */
static void inherit_env(json_t *env, const json_t *names)
{
    size_t i;
    json_t *n;

    json_array_foreach(names, i, n) {
        const char *k = json_string_value(n), *v = k ? getenv(k) : NULL;
        if (!v)
            continue;
        json_object_set_new(env, k, json_string_nocheck(v));
        if (!strcmp(k, "CUDA_VISIBLE_DEVICES"))
            json_object_set_new(env, "NVIDIA_VISIBLE_DEVICES", json_string_nocheck(*v ? v : "void"));
    }
}

/* The pod's own environment, never the server's (which may hold tokens and
 * the server's settings): a default PATH and HOME, what the runtime injects,
 * then the container's own variables (which may override those); TY_POD_IP
 * and the bind shim's preload always ours. HOME is the pod's private /tmp:
 * Kubernetes gives a uid without a passwd entry HOME=/, which a non-root
 * uid cannot write, and PyTorch, Triton and pip keep caches under ~. */
static char **build_env(sv *s, const sv_ct *c)
{
    json_t *env = json_object(), *v;
    const char *gpus = ty_jstr(s->spec, "gpus"), *shim = ty_jstr(s->spec, "shim"), *k;
    char **out, home[PATH_MAX + 8];
    size_t i = 0;

    if (s->private_tmp)
        snprintf(home, sizeof(home), "/tmp");
    else
        snprintf(home, sizeof(home), "%s/tmp", s->dir);
    json_object_set_new(env, "PATH", json_string(SV_DEFAULT_PATH));
    json_object_set_new(env, "HOME", json_string_nocheck(home));
    json_object_set_new(env, "HOSTNAME", json_string(ty_jstr(s->spec, "hostname")));
    json_object_set_new(env, "CUDA_VISIBLE_DEVICES", json_string(gpus));
    json_object_set_new(env, "NVIDIA_VISIBLE_DEVICES", json_string(*gpus ? gpus : "void"));
    inherit_env(env, json_object_get(s->spec, "inheritEnv"));
    json_array_foreach(json_object_get(c->spec, "env"), i, v)
        env_set(env, json_string_value(v) ? json_string_value(v) : "");
    json_object_set_new(env, "TY_POD_IP", json_string(ty_jstr(s->spec, "podIP")));
    if (*shim) {
        const char *old = json_string_value(json_object_get(env, "LD_PRELOAD"));
        ty_buf b = {0};
        char *pre;
        ty_buf_printf(&b, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", shim);
        pre = ty_buf_steal(&b, NULL);
        json_object_set_new(env, "LD_PRELOAD", json_string_nocheck(pre));
        free(pre);
    }
    out = calloc(json_object_size(env) + 1, sizeof(*out));
    i = 0;
    json_object_foreach(env, k, v) {
        ty_buf b = {0};
        if (!out)
            break;
        ty_buf_printf(&b, "%s=%s", k, json_string_value(v));
        out[i++] = ty_buf_steal(&b, NULL);
    }
    json_decref(env);
    return out;
}

static void free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static char **build_argv(const sv_ct *c)
{
    const json_t *a = json_object_get(c->spec, "argv");
    size_t n = json_array_size(a);
    char **argv = calloc(n + 1, sizeof(*argv));

    for (size_t i = 0; argv && i < n; i++)
        argv[i] = strdup(json_string_value(json_array_get(a, i)) ? json_string_value(json_array_get(a, i)) : "");
    return argv;
}

/* ---- spawning ---- */

/* What a failed child reports through its error pipe before it exits. */
enum { FAIL_CHDIR = 1, FAIL_EXEC = 2, FAIL_IDENT = 3, FAIL_NS = 4 };

/* In the child: only async-signal-safe calls until exec. A failure is
 * reported through errfd as (stage, errno, step) and the child exits. The
 * identity goes on after the namespaces (set up by the supervisor, as
 * root) and before the working directory, so that a container cannot use
 * the supervisor's root to start in a directory it could not enter. */
static void child_exec(const sv_ct *c, int pod_ns, const rt_ident *id, char **argv,
                       char **envp, int out, int err, int nul, int errfd)
{
    const char *wd = ty_jstr(c->spec, "workingDir");
    sigset_t none;
    int code[3] = {0, 0, 0};

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    setpgid(0, 0);
    dup2(nul, 0);
    dup2(out, 1);
    dup2(err, 2);
    /* No descriptor of the supervisor's (or, through it, the server's)
     * reaches the container; errfd is close-on-exec already. */
    syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
    if (pod_ns >= 0 && setns(pod_ns, CLONE_NEWNS) < 0) {
        code[0] = FAIL_NS;
        goto fail;
    }
    if (rt_ident_apply(id, &code[2]) < 0) {
        code[0] = FAIL_IDENT;
        goto fail;
    }
    /* Without a workingDir, "/" (no image WORKDIR), not the server's cwd. */
    if (chdir(*wd ? wd : "/") < 0) {
        code[0] = FAIL_CHDIR;
        goto fail;
    }
    environ = envp;
    execvp(argv[0], argv);
    code[0] = FAIL_EXEC;
fail:
    code[1] = errno;
    (void)!write(errfd, code, sizeof(code));
    _exit(code[0] == FAIL_EXEC ? 127 : 128);
}

static void start_failed(sv_ct *c, const char *reason, const char *message)
{
    char ts[40];

    ty_time_now(ts, sizeof(ts));
    c->state = "terminated";
    c->exit_code = 128;
    c->signal = 0;
    snprintf(c->reason, sizeof(c->reason), "%s", reason);
    snprintf(c->message, sizeof(c->message), "%s", message);
    snprintf(c->started_at, sizeof(c->started_at), "%s", ts);
    snprintf(c->finished_at, sizeof(c->finished_at), "%s", ts);
}

static int make_pipes(int out[2], int err[2], int ep[2])
{
    out[0] = out[1] = err[0] = err[1] = ep[0] = ep[1] = -1;
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
        return -1;
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    return 0;
}

static void close_fds(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* After fork: waits for exec (the error pipe closes) or its failure. */
static pid_t await_exec(sv_ct *c, const rt_ident *id, char **argv, pid_t pid, int ep[2])
{
    char msg[512];
    int code[3];
    ssize_t r;

    setpgid(pid, pid); /* also here: no window where a kill of -pid misses */
    close(ep[1]);
    ep[1] = -1;
    do
        r = read(ep[0], code, sizeof(code));
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(code))
        return pid;
    /* The child exits by itself; SIGCHLD reaps it as an untracked process. */
    if (code[0] == FAIL_NS)
        snprintf(msg, sizeof(msg), "cannot enter the pod's mount namespace: %s",
                 strerror(code[1]));
    else if (code[0] == FAIL_IDENT)
        snprintf(msg, sizeof(msg), "cannot run as uid %u gid %u: %s: %s", (unsigned)id->uid,
                 (unsigned)id->gid, rt_ident_step_name(code[2]), strerror(code[1]));
    else if (code[0] == FAIL_CHDIR)
        snprintf(msg, sizeof(msg), "chdir to workingDir %s: %s",
                 *ty_jstr(c->spec, "workingDir") ? ty_jstr(c->spec, "workingDir") : "/",
                 strerror(code[1]));
    else
        snprintf(msg, sizeof(msg), "exec: \"%s\": %s%s", argv[0], strerror(code[1]),
                 json_is_true(json_object_get(c->spec, "argsOnly"))
                     ? " (the container has args but no command: with no image ENTRYPOINT "
                       "before them, args[0] is the program)"
                     : "");
    start_failed(c, "StartError", msg);
    return -1;
}

static void mark_running(sv_ct *c, pid_t pid)
{
    c->pid = pid;
    c->state = "running";
    c->reason[0] = c->message[0] = '\0';
    c->exit_code = c->signal = 0;
    ty_time_now(c->started_at, sizeof(c->started_at));
    c->finished_at[0] = '\0';
    c->started_ms = ty_now_ms();
    c->ever_started = true;
    c->run_started = true;
}

int sv_spawn(sv *s, sv_ct *c)
{
    char **argv = build_argv(c), **envp = NULL, msg[512];
    int out[2], err[2], ep[2], nul = -1;
    pid_t pid = -1;
    rt_ident id;

    out[0] = out[1] = err[0] = err[1] = ep[0] = ep[1] = -1;
    if (s->mount_error[0]) {
        start_failed(c, "StartError", s->mount_error);
        free_strv(argv);
        return -1;
    }
    if (!argv || !argv[0]) {
        start_failed(c, "NoCommand", "no command or args: nothing to run on this runtime");
        free_strv(argv);
        return -1;
    }
    envp = build_env(s, c);
    rt_ident_from_json(json_object_get(c->spec, "user"), &id);
    nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || !envp || make_pipes(out, err, ep) < 0) {
        snprintf(msg, sizeof(msg), "cannot prepare %s: %s", argv[0], strerror(errno));
        start_failed(c, "StartError", msg);
    } else {
        c->oom_before = sv_oom_count(s);
        pid = fork();
        if (pid == 0)
            child_exec(c, s->pod_ns, &id, argv, envp, out[1], err[1], nul, ep[1]);
        if (pid < 0) {
            snprintf(msg, sizeof(msg), "cannot fork %s: %s", argv[0], strerror(errno));
            start_failed(c, "StartError", msg);
        } else {
            pid = await_exec(c, &id, argv, pid, ep);
        }
    }
    if (pid > 0) {
        mark_running(c, pid);
        c->out.fd = out[0];
        c->err.fd = err[0];
        out[0] = err[0] = -1;
    }
    int fds[] = {out[0], out[1], err[0], err[1], ep[0], ep[1], nul};
    close_fds(fds, 7);
    free_strv(argv);
    free_strv(envp);
    return pid > 0 ? 0 : -1;
}
