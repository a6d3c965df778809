/* scli_run.c - running one Slurm command with bounded time and output
 * (scli.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/timeutil.h"
#include "runtime/slurm/scli.h"

extern char **environ;

/* Bytes read from one stream before the loop looks at the clock again. */
#define DRAIN_BUDGET (1u << 20)

/* One captured stream: what is kept (at most max bytes) and how much was
 * dropped past it. */
typedef struct stream {
    int fd; /* -1 once at EOF */
    ty_buf buf;
    size_t dropped;
} stream;

static const char *cmd_name(const char *const *argv)
{
    const char *slash;

    if (!argv || !argv[0])
        return "?";
    slash = strrchr(argv[0], '/');
    return slash && slash[1] ? slash + 1 : argv[0];
}

/* The input as an in-memory file: the child reads it like a file, and
 * we never write into a pipe the child may have stopped reading (no
 * SIGPIPE, no deadlock between its stdin and its stdout). */
static int input_fd(const char *in)
{
    size_t len = strlen(in), done = 0;
    int fd = memfd_create("scli-stdin", MFD_CLOEXEC);

    if (fd < 0) /* no memfd (an old kernel, a seccomp filter): an unnamed file */
        fd = open(P_tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    while (done < len) {
        ssize_t w = write(fd, in + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    if (lseek(fd, 0, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* posix_spawnp into a process group of its own (the timeout kills the
 * group), with default dispositions and an empty mask: the server's
 * threads block signals the command must not inherit. */
static int spawn(const char *const *argv, int in_fd, int out_fd, int err_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int rc;

    if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
        return rc;
    if ((rc = posix_spawnattr_init(&attr)) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigemptyset(&none);
    sigfillset(&all);
    if (in_fd >= 0)
        rc = posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    else
        rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &all);
    if (rc == 0)
        rc = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* Reads what is there (nonblocking) into s, keeping at most max bytes,
 * and at most `budget` bytes in all: a writer faster than us must not keep
 * us here past the deadline. Returns -1 on a read error other than EAGAIN,
 * else 0; s->fd is closed and set to -1 at EOF. */
static int drain(stream *s, size_t max, size_t budget)
{
    char chunk[16384];

    while (s->fd >= 0 && budget > 0) {
        ssize_t r = read(s->fd, chunk, budget < sizeof(chunk) ? budget : sizeof(chunk));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r < 0)
            return -1;
        if (r == 0) {
            close(s->fd);
            s->fd = -1;
            return 0;
        }
        budget -= (size_t)r;
        size_t keep = s->buf.len < max ? max - s->buf.len : 0;
        if (keep > (size_t)r)
            keep = (size_t)r;
        if (keep && ty_buf_append(&s->buf, chunk, keep) < 0)
            return -1;
        s->dropped += (size_t)r - keep;
    }
    return 0;
}

/* What the pipe holds now: after the child's exit, all it wrote (what a
 * daemon it left writes later is not waited for). */
static int drain_rest(stream *s, size_t max)
{
    int n = 0;

    if (s->fd < 0)
        return 0;
    if (ioctl(s->fd, FIONREAD, &n) < 0 || n < 0)
        n = 0;
    /* at EOF FIONREAD says 0: one read sees it and closes */
    return drain(s, max, n ? (size_t)n : 1);
}

/* A pidfd to poll for the child's exit; -1 on kernels without one (then
 * the loop looks with waitpid every 20 ms). */
static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        /* pidfd_open sets close-on-exec itself; say so for older headers */
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    return fd;
#else
    (void)pid;
    return -1;
#endif
}

static void wait_status(pid_t pid, int *status, int *sig)
{
    int ws = 0;
    pid_t r;

    do
        r = waitpid(pid, &ws, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) { /* ECHILD: someone else reaped it (SIGCHLD ignored) */
        *status = -1;
        *sig = 0;
    } else if (WIFSIGNALED(ws)) {
        *sig = WTERMSIG(ws);
        *status = 128 + *sig;
    } else {
        *sig = 0;
        *status = WEXITSTATUS(ws);
    }
}

/* The loop: read stdout and stderr until the child exits (then drain what
 * it left in the pipes) or the deadline passes. Returns 1 when the child
 * exited (status in *status), 0 at the deadline, -1 on a read error. */
static int pump(pid_t pid, int pidfd, stream *so, stream *se, size_t max_out, int64_t deadline,
                int *status, int *sig)
{
    for (;;) {
        struct pollfd p[3];
        int np = 0, ws = 0;
        int64_t left = deadline - ty_now_ms();
        pid_t r;

        if (left <= 0)
            return 0;
        if (so->fd >= 0)
            p[np++] = (struct pollfd){.fd = so->fd, .events = POLLIN};
        if (se->fd >= 0)
            p[np++] = (struct pollfd){.fd = se->fd, .events = POLLIN};
        if (pidfd >= 0)
            p[np++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        int wait_ms = left > INT32_MAX ? INT32_MAX : (int)left;
        if (pidfd < 0 && wait_ms > 20)
            wait_ms = 20;
        if (poll(p, (nfds_t)np, wait_ms) < 0 && errno != EINTR)
            return -1;
        if (drain(so, max_out, DRAIN_BUDGET) < 0 || drain(se, max_out, DRAIN_BUDGET) < 0)
            return -1;
        do
            r = waitpid(pid, &ws, WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == pid || r < 0) {
            /* What it wrote before exiting is all in the pipes now. */
            if (r < 0) {
                *status = -1;
                *sig = 0;
            } else if (WIFSIGNALED(ws)) {
                *sig = WTERMSIG(ws);
                *status = 128 + *sig;
            } else {
                *sig = 0;
                *status = WEXITSTATUS(ws);
            }
            if (drain_rest(so, max_out) < 0 || drain_rest(se, max_out) < 0)
                return -1;
            return 1;
        }
    }
}

static void note_cut(stream *s, const char *which, size_t max_out, stream *into)
{
    if (!s->dropped)
        return;
    ty_buf_printf(&into->buf, "%sscli: %s cut at %zu bytes (%zu more dropped)\n",
                  into->buf.len && into->buf.data[into->buf.len - 1] != '\n' ? "\n" : "", which,
                  max_out, s->dropped);
}

/* What one run holds open. */
typedef struct run {
    int opipe[2], epipe[2], in_fd, pidfd;
    stream so, se;
} run;

static void run_close(run *r)
{
    int *fds[] = {&r->opipe[0], &r->opipe[1], &r->epipe[0], &r->epipe[1],
                  &r->in_fd,    &r->pidfd,    &r->so.fd,    &r->se.fd};

    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    ty_buf_free(&r->so.buf);
    ty_buf_free(&r->se.buf);
}

/* The pipes and the child; on success only our ends stay open. */
static int run_start(run *r, const char *const *argv, const char *in, const char *name,
                     pid_t *pid, ty_error *err)
{
    int rc;

    if (in && (r->in_fd = input_fd(in)) < 0)
        return ty_seterr(err, TY_EINTERNAL, "%s: cannot hold its input: %s", name,
                         strerror(errno));
    if (pipe2(r->opipe, O_CLOEXEC) < 0 || pipe2(r->epipe, O_CLOEXEC) < 0)
        return ty_seterr(err, TY_EINTERNAL, "%s: pipe: %s", name, strerror(errno));
    if ((rc = spawn(argv, r->in_fd, r->opipe[1], r->epipe[1], pid)) != 0)
        return ty_seterr(err, TY_EUNAVAILABLE, "%s: cannot run: %s", name, strerror(rc));
    close(r->opipe[1]);
    close(r->epipe[1]);
    r->opipe[1] = r->epipe[1] = -1;
    if (r->in_fd >= 0)
        close(r->in_fd);
    r->in_fd = -1;
    r->so.fd = r->opipe[0];
    r->se.fd = r->epipe[0];
    r->opipe[0] = r->epipe[0] = -1;
    (void)fcntl(r->so.fd, F_SETFL, O_NONBLOCK);
    (void)fcntl(r->se.fd, F_SETFL, O_NONBLOCK);
    r->pidfd = pidfd_of(*pid);
    return 0;
}

int scli_run(const char *const *argv, const char *in, int timeout_ms, size_t max_out,
             scli_out *o, ty_error *err)
{
    run r = {.opipe = {-1, -1}, .epipe = {-1, -1}, .in_fd = -1, .pidfd = -1,
             .so = {.fd = -1}, .se = {.fd = -1}};
    const char *name = cmd_name(argv);
    int status = -1, sig = 0, got;
    pid_t pid;

    *o = (scli_out){0};
    if (!argv || !argv[0] || !argv[0][0])
        return ty_seterr(err, TY_EINTERNAL, "scli_run: no command");
    if (timeout_ms <= 0)
        return ty_seterr(err, TY_EINTERNAL, "%s: timeout must be positive", name);
    int64_t deadline = ty_now_ms() + timeout_ms;
    if (run_start(&r, argv, in, name, &pid, err) < 0) {
        run_close(&r);
        return -1;
    }
    got = pump(pid, r.pidfd, &r.so, &r.se, max_out, deadline, &status, &sig);
    if (got <= 0) {
        /* The deadline (or a read error): the whole group goes, and the
         * child is reaped before we return. */
        int saved = errno;
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        wait_status(pid, &status, &sig);
        run_close(&r);
        if (got == 0)
            return ty_seterr(err, TY_ETIMEOUT, "%s: timed out after %d ms (killed)", name,
                             timeout_ms);
        return ty_seterr(err, TY_EINTERNAL, "%s: reading its output: %s", name,
                         strerror(saved));
    }
    note_cut(&r.so, "stdout", max_out, &r.se);
    note_cut(&r.se, "stderr", max_out, &r.se);
    o->status = status;
    o->sig = sig;
    o->truncated = r.so.dropped || r.se.dropped;
    o->out = ty_buf_steal(&r.so.buf, &o->out_len);
    o->err = ty_buf_steal(&r.se.buf, &o->err_len);
    run_close(&r);
    if (!o->out || !o->err) {
        scli_out_free(o);
        return ty_seterr(err, TY_EINTERNAL, "%s: out of memory", name);
    }
    return 0;
}

void scli_out_free(scli_out *o)
{
    if (!o)
        return;
    free(o->out);
    free(o->err);
    *o = (scli_out){0};
}

/* The first non-blank line of text (at most len bytes), bounded and with
 * control bytes shown as '?'. */
static void first_line(ty_buf *b, const char *text, size_t len)
{
    size_t i = 0, n = 0;

    while (i < len && (text[i] == '\n' || text[i] == '\r' || text[i] == ' ' || text[i] == '\t'))
        i++;
    for (; i < len && text[i] != '\n' && text[i] != '\r' && n < 200; i++, n++) {
        unsigned char c = (unsigned char)text[i];
        char ch = c < 0x20 || c == 0x7f ? '?' : (char)c;
        ty_buf_append(b, &ch, 1);
    }
}

char *scli_describe(const char *const *argv, const scli_out *o)
{
    ty_buf b = {0};
    const char *text = NULL;
    size_t len = 0;

    if (o->sig)
        ty_buf_printf(&b, "%s: killed by signal %d", cmd_name(argv), o->sig);
    else
        ty_buf_printf(&b, "%s: exit %d", cmd_name(argv), o->status);
    if (o->err && o->err[strspn(o->err, " \t\r\n")]) {
        text = o->err;
        len = o->err_len ? o->err_len : strlen(o->err);
    } else if (o->out && o->out[strspn(o->out, " \t\r\n")]) {
        text = o->out;
        len = o->out_len ? o->out_len : strlen(o->out);
    }
    if (text) {
        ty_buf_puts(&b, ": ");
        first_line(&b, text, len);
    }
    if (!b.data)
        return NULL;
    return ty_buf_steal(&b, NULL);
}
