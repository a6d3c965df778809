/* sv_exec.c - a command run in another pod of the same job, where that pod
 * runs: what mpirun's rsh agent needs when the pods are on other machines
 * (the Slurm runtime).
 *
 * Three parts, all in the supervisor binary:
 *   - the exec server: a child of the supervisor of a pod whose spec.json
 *     has "exec" (the Slurm backend writes it: the job's id and, for each
 *     pod of the job, its names, node, het component and directory). It
 *     listens on /tmp/.trainyard-exec in the pod (the pod's private /tmp,
 *     the socket owned by the pod's user, mode 0600). A client's request is
 *     a target host name, its argv, and its stdin/stdout/stderr passed as
 *     descriptors; the server runs `srun --jobid=J --overlap -w NODE
 *     <supervisor> --exec-in DIR -- argv` with those descriptors, as root,
 *     and answers the exit status. Only the pods of the job can be named.
 *   - the client, `trainyard-supervise --exec HOST -- argv` (the rsh
 *     agent's last step, inside the launcher's container).
 *   - `--exec-in DIR -- argv` on the target node: joins the mount and UTS
 *     namespaces of the pod's first running container, takes its
 *     environment, uid, gid and groups (/proc/PID), no_new_privs, and execs.
 * So the command runs as the target pod's own processes do, as `kubectl
 * exec` would run it (mpi-operator's kubexec.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "runtime/local/rt_ident.h"
#include "runtime/local/rt_internal.h"
#include "runtime/local/runtime.h"
#include "runtime/local/sv_internal.h"

#define SOCK_NAME ".trainyard-exec"
#define MAX_REQ (256 << 10)
#define MAX_HANDLERS 64
#define SRUN_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* ---- the client ---- */

extern char **environ;

/* Variables MPI launchers configure their daemons with. */
static bool mpi_var(const char *kv)
{
    static const char *const prefixes[] = {"OMPI_", "OPAL_", "PMIX_", "PRTE_", "HYDRA_", "I_MPI_"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (!strncmp(kv, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

static int send_request(int fd, const char *host, int argc, char **argv)
{
    char *buf = malloc(MAX_REQ), cbuf[CMSG_SPACE(3 * sizeof(int))];
    size_t len = 0;
    int fds[3] = {0, 1, 2};

    if (!buf)
        return -1;
    len += (size_t)snprintf(buf, MAX_REQ, "%s", host) + 1;
    /* The MPI launcher's settings go with the command (ssh would not carry
     * them, but mpi-operator's daemons start where the launcher's files and
     * settings are): "env" entries, then a "--" entry, then argv. */
    for (char **e = environ; *e; e++) {
        if (!mpi_var(*e) || len + strlen(*e) + 16 > MAX_REQ / 2)
            continue;
        len += (size_t)snprintf(buf + len, MAX_REQ - len, "env=%s", *e) + 1;
    }
    len += (size_t)snprintf(buf + len, MAX_REQ - len, "--") + 1;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]) + 1;
        if (len + l > MAX_REQ) {
            free(buf);
            errno = E2BIG;
            return -1;
        }
        memcpy(buf + len, argv[i], l);
        len += l;
    }
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = sizeof(cbuf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(fds));
    memcpy(CMSG_DATA(c), fds, sizeof(fds));
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    free(buf);
    if (n != (ssize_t)len)
        return -1;
    return shutdown(fd, SHUT_WR);
}

int sv_exec_client(const char *host, int argc, char **argv)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unsigned char code[4];
    size_t got = 0;

    snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/%s", SOCK_NAME);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        fprintf(stderr, "trainyard exec: cannot reach this pod's supervisor at %s: %s\n",
                a.sun_path, strerror(errno));
        return 255; /* what ssh answers when it cannot connect */
    }
    if (send_request(fd, host, argc, argv) < 0) {
        fprintf(stderr, "trainyard exec: %s\n", strerror(errno));
        return 255;
    }
    while (got < sizeof(code)) {
        ssize_t n = read(fd, code + got, sizeof(code) - got);
        if (n <= 0) {
            fprintf(stderr, "trainyard exec: the supervisor gave no exit status\n");
            return 255;
        }
        got += (size_t)n;
    }
    close(fd);
    return code[0] | code[1] << 8 | code[2] << 16 | code[3] << 24;
}

/* ---- the server ---- */

int sv_exec_parse(const char *buf, size_t len, sv_exec_req *r)
{
    size_t off = 0;

    memset(r, 0, sizeof(*r));
    if (!buf || !len || buf[len] != '\0' || !*buf)
        return -1;
    r->host = buf;
    off = strlen(buf) + 1;
    /* the caller's MPI settings, then "--" */
    for (; off < len && strncmp(buf + off, "env=", 4) == 0; off += strlen(buf + off) + 1)
        if (r->nenv < SV_EXEC_MAX_ENV && mpi_var(buf + off + 4) && strchr(buf + off + 4, '='))
            r->env[r->nenv++] = buf + off + 4;
    if (off >= len || strcmp(buf + off, "--"))
        return -1;
    for (off += 3; off < len; off += strlen(buf + off) + 1) {
        if (r->nargv == SV_EXEC_MAX_ARGV)
            return -1;
        r->argv[r->nargv++] = buf + off;
    }
    return r->nargv ? 0 : -1;
}

/* The pod of the job that host names (its first label, as the one-machine
 * agent reads it, or any of its names); NULL when none. */
static const json_t *target(const json_t *ex, const char *host)
{
    char first[256];
    const json_t *p, *n;
    size_t i, j;

    snprintf(first, sizeof(first), "%.*s", (int)strcspn(host, "."), host);
    json_array_foreach(json_object_get(ex, "pods"), i, p) {
        json_array_foreach(json_object_get(p, "names"), j, n) {
            const char *name = json_string_value(n);
            if (name && (!strcmp(name, host) || !strcmp(name, first)))
                return p;
        }
    }
    return NULL;
}

static void answer(int fd, int code)
{
    unsigned char b[4] = {(unsigned char)code, (unsigned char)(code >> 8),
                          (unsigned char)(code >> 16), (unsigned char)(code >> 24)};
    if (write(fd, b, sizeof(b)) != (ssize_t)sizeof(b))
        fprintf(stderr, "supervise: exec: cannot answer: %s\n", strerror(errno));
}

/* The most words srun_args writes, its NULL included. */
#define SRUN_MAX_ARGS (SV_EXEC_MAX_ENV * 2 + SV_EXEC_MAX_ARGV + 64)

/* srun's words for req on the node of pod t (an overlapping step of the
 * job, in the pod's directory, with the caller's MPI files and settings)
 * into args; their count. The strings are static or borrowed: one request
 * per process. */
static size_t srun_args(const json_t *spec, const json_t *ex, const json_t *t,
                        const sv_exec_req *req, char **args)
{
    static char jobid[64], comp[32];
    size_t na = 0;

    snprintf(jobid, sizeof(jobid), "--jobid=%s", ty_jstr(ex, "job"));
    args[na++] = "srun";
    args[na++] = jobid;
    if (json_integer_value(json_object_get(t, "comp")) >= 0 &&
        json_is_integer(json_object_get(t, "comp"))) {
        snprintf(comp, sizeof(comp), "--het-group=%d",
                 (int)json_integer_value(json_object_get(t, "comp")));
        args[na++] = comp;
    }
    args[na++] = "--overlap";
    args[na++] = "--nodes=1";
    args[na++] = "--ntasks=1";
    args[na++] = "--quiet";
    args[na++] = "-w";
    args[na++] = (char *)ty_jstr(t, "node");
    const json_t *sup = json_object_get(ex, "supervisor"), *w;
    size_t k;
    json_array_foreach(sup, k, w)
        if (json_is_string(w) && na < 16)
            args[na++] = (char *)json_string_value(w);
    args[na++] = "--exec-in";
    args[na++] = (char *)ty_jstr(t, "dir");
    /* The caller's MPI files (/etc/mpi: the hostfile, the rsh agent) go
     * with the command, as the one-machine agent runs it beside them:
     * Open MPI's daemons look for the agent where they start. */
    static char mnt[8][PATH_MAX * 2 + 2];
    size_t nm = 0;
    json_array_foreach(json_object_get(spec, "mounts"), k, w) {
        const char *tg = ty_jstr(w, "target");
        if (nm < 8 && (!strcmp(tg, "/etc/mpi") || !strncmp(tg, "/etc/mpi/", 9))) {
            snprintf(mnt[nm], sizeof(mnt[nm]), "%s=%s", ty_jstr(w, "source"), tg);
            args[na++] = "--mount";
            args[na++] = mnt[nm++];
        }
    }
    for (size_t i = 0; i < req->nenv; i++) {
        args[na++] = "--env";
        args[na++] = (char *)req->env[i];
    }
    args[na++] = "--";
    for (size_t i = 0; i < req->nargv; i++)
        args[na++] = (char *)req->argv[i];
    return na;
}

static void handle(const json_t *spec, const json_t *ex, int conn, uid_t owner)
{
    char *buf = malloc(MAX_REQ + 1), cbuf[CMSG_SPACE(3 * sizeof(int))];
    struct iovec iov = {.iov_base = buf, .iov_len = MAX_REQ};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = sizeof(cbuf)};
    struct ucred cred;
    socklen_t cl = sizeof(cred);
    int fds[3] = {-1, -1, -1}, status;
    size_t len = 0;
    char *args[SRUN_MAX_ARGS];

    if (!buf || getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
        (cred.uid != owner && cred.uid != 0))
        _exit(1);
    ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0)
        _exit(1);
    len = (size_t)n;
    /* the rest of a long request */
    while (len < MAX_REQ && (n = read(conn, buf + len, MAX_REQ - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(fds)))
            memcpy(fds, CMSG_DATA(c), sizeof(fds));
    sv_exec_req req;
    const json_t *t = NULL;
    if (sv_exec_parse(buf, len, &req) < 0 || !(t = target(ex, req.host)) || fds[2] < 0) {
        dprintf(fds[2] >= 0 ? fds[2] : 2, "trainyard exec: %s%s\n",
                t || !req.host ? "malformed request" : "no pod in this job named ",
                t || !req.host ? "" : req.host);
        answer(conn, 255);
        _exit(0);
    }
    size_t na = srun_args(spec, ex, t, &req, args);
    args[na] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        char conf[PATH_MAX + 16];
        const char *c = getenv("SLURM_CONF");
        char *envp[] = {SRUN_PATH, conf, NULL};
        snprintf(conf, sizeof(conf), "SLURM_CONF=%s", c ? c : "");
        if (!c)
            envp[1] = NULL;
        for (int i = 0; i < 3; i++)
            if (dup2(fds[i], i) < 0)
                _exit(127);
        execvpe("srun", args, envp);
        dprintf(2, "trainyard exec: srun: %s\n", strerror(errno));
        _exit(127);
    }
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        answer(conn, 255);
    else
        answer(conn, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    _exit(0);
}

pid_t sv_exec_server_start(sv *s)
{
    const json_t *ex = json_object_get(s->spec, "exec");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    rt_ident id;
    pid_t pid;
    int fd;

    if (!json_is_object(ex) || geteuid() != 0)
        return -1;
    /* The pod's user: the first container's. */
    rt_ident_from_json(json_object_get(json_array_get(json_object_get(s->spec, "containers"), 0),
                                       "user"),
                       &id);
    /* The pod's /tmp may be a long path (a socket's is at most 107 bytes):
     * named through a descriptor of the directory. */
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s/tmp", s->dir);
    int dfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        fprintf(stderr, "supervise: exec: %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dfd, SOCK_NAME);
    unlinkat(dfd, SOCK_NAME, 0);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chown(a.sun_path, id.uid, id.gid) < 0 ||
        chmod(a.sun_path, 0600) < 0 || listen(fd, 64) < 0) {
        fprintf(stderr, "supervise: exec: %s/%s: %s\n", tmp, SOCK_NAME, strerror(errno));
        if (fd >= 0)
            close(fd);
        close(dfd);
        return -1;
    }
    close(dfd);
    if ((pid = fork()) != 0) {
        close(fd);
        return pid;
    }
    /* The server: gone with the supervisor; at most MAX_HANDLERS requests
     * at once (a pod cannot make it fork without end). */
    sigset_t none;
    int handlers = 0;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        while (handlers > 0 && waitpid(-1, NULL, handlers >= MAX_HANDLERS ? 0 : WNOHANG) > 0)
            handlers--;
        int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            _exit(1);
        }
        pid_t h = fork();
        if (h == 0) {
            close(fd);
            handle(s->spec, ex, conn, id.uid);
        }
        if (h > 0)
            handlers++;
        close(conn);
    }
}

/* ---- on the target node ---- */

static int status_ids(pid_t pid, uid_t *uid, gid_t *gid, gid_t *groups, size_t *ng)
{
    char path[64], line[4096];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "re")))
        return -1;
    *ng = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long r;
        if (sscanf(line, "Uid: %lu", &r) == 1)
            *uid = (uid_t)r;
        else if (sscanf(line, "Gid: %lu", &r) == 1)
            *gid = (gid_t)r;
        else if (!strncmp(line, "Groups:", 7)) {
            char *p = line + 7, *end;
            while (*ng < RT_MAX_GROUPS && (r = strtoul(p, &end, 10), end != p)) {
                groups[(*ng)++] = (gid_t)r;
                p = end;
            }
        }
    }
    fclose(f);
    return 0;
}

static char **proc_environ(pid_t pid)
{
    char path[64], *text;
    size_t len = 0, n = 0;
    char **env;

    /* /proc files have no size: read to the end (at most 1 MiB) */
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !(text = malloc((1 << 20) + 1))) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    for (ssize_t r; len < (1 << 20) && (r = read(fd, text + len, (1 << 20) - len)) != 0;) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    text[len] = '\0';
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\0';
    if (!(env = calloc(n + 2, sizeof(*env))))
        return NULL;
    n = 0;
    /* Without the pod-address bind shim's address, as the one-machine agent
     * runs MPI's daemons (api/mpi_agent.h): they pick their ports
     * themselves and advertise every interface. */
    for (size_t i = 0; i < len; i += strlen(text + i) + 1)
        if (strncmp(text + i, "TY_POD_IP=", 10))
            env[n++] = text + i;
    return env;
}

/* env with each K=V of vars set over it (the array leaks: exec follows). */
static char **overlay(char **env, char *const *vars, size_t nvars)
{
    size_t n = 0;
    char **out;

    while (env[n])
        n++;
    if (!nvars || !(out = calloc(n + nvars + 1, sizeof(*out))))
        return env;
    memcpy(out, env, n * sizeof(*out));
    for (size_t v = 0; v < nvars; v++) {
        size_t klen = strcspn(vars[v], "=") + 1, i;
        for (i = 0; i < n; i++)
            if (!strncmp(out[i], vars[v], klen))
                break;
        out[i] = vars[v];
        if (i == n)
            n++;
    }
    out[n] = NULL;
    return out;
}

/* A private mount namespace inside the pod's, with each "SRC=TARGET" of
 * mounts bound read-only at TARGET. */
static int private_mounts(char *const *mounts, size_t n)
{
    if (!n)
        return 0;
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char src[PATH_MAX], *eq = strchr(mounts[i], '=');
        struct stat st;
        if (!eq || eq == mounts[i] || eq[1] != '/')
            continue;
        snprintf(src, sizeof(src), "%.*s", (int)(eq - mounts[i]), mounts[i]);
        if (stat(src, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode) ? rt_mkdirs(eq + 1) < 0 : 0)
            return -1;
        if (mount(src, eq + 1, NULL, MS_BIND, NULL) < 0 ||
            mount(NULL, eq + 1, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0)
            return -1;
    }
    return 0;
}

int sv_exec_in(const char *dir, char *const *mounts, size_t nmounts, char *const *vars,
               size_t nvars, int argc, char **argv)
{
    char path[PATH_MAX + 16];
    json_t *st, *c;
    pid_t pid = 0;
    size_t i, ng = 0;
    uid_t uid = RT_NOBODY;
    gid_t gid = RT_NOBODY, groups[RT_MAX_GROUPS];
    int mnt, uts;
    char **env;

    if (argc < 1)
        return 2;
    snprintf(path, sizeof(path), "%s/state.json", dir);
    if (!(st = rt_load_json(path))) {
        fprintf(stderr, "trainyard exec: the pod in %s has not started\n", dir);
        return 126;
    }
    json_array_foreach(json_object_get(st, "containers"), i, c) {
        if (!strcmp(ty_jstr(c, "state"), "running") && json_integer_value(json_object_get(c, "pid")) > 0) {
            pid = (pid_t)json_integer_value(json_object_get(c, "pid"));
            break;
        }
    }
    json_decref(st);
    if (pid <= 0 || status_ids(pid, &uid, &gid, groups, &ng) < 0 || !(env = proc_environ(pid))) {
        fprintf(stderr, "trainyard exec: the pod in %s runs no container\n", dir);
        return 126;
    }
    snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
    mnt = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof(path), "/proc/%d/ns/uts", (int)pid);
    uts = open(path, O_RDONLY | O_CLOEXEC);
    if (mnt < 0 || uts < 0 || setns(mnt, CLONE_NEWNS) < 0 || setns(uts, CLONE_NEWUTS) < 0 ||
        private_mounts(mounts, nmounts) < 0 || chdir("/") < 0 || setgroups(ng, groups) < 0 || setgid(gid) < 0 || setuid(uid) < 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        fprintf(stderr, "trainyard exec: cannot enter the pod in %s: %s\n", dir, strerror(errno));
        return 126;
    }
    env = overlay(env, vars, nvars);
    execve(argv[0], argv, env);
    fprintf(stderr, "trainyard exec: %s: %s\n", argv[0], strerror(errno));
    return 127;
}
