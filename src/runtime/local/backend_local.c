/* backend_local.c - the local runtime as a runtime backend (runtime/backend.h):
 * its agent runs pods itself (agent.c), so the table has no pods_* ops; it
 * adds the node inventory, the logs under <data>/logs and exec. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "runtime/agent_kit.h"
#include "runtime/backend.h"
#include "runtime/local/agent.h"
#include "runtime/local/logfile.h"
#include "runtime/local/rt_ident.h"

#define MAX_CONTAINERS 256

/* ---- logs ---- */

/* Names become path components: nothing that leaves the logs directory. */
static bool safe_component(const char *s)
{
    return s && *s && strlen(s) < 254 && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

rt_log *rt_local_log_open(const char *data_dir, const char *ns, const char *pod,
                          const char *container, bool previous, long tail_lines, ty_error *err)
{
    char path[PATH_MAX];
    logfile *lf;

    if (!safe_component(ns) || !safe_component(pod) || !safe_component(container)) {
        ty_seterr(err, TY_EBADREQUEST, "invalid namespace, pod or container name");
        return NULL;
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/logs/%s/%s/%s.log%s", data_dir, ns, pod,
                         container, previous ? ".prev" : "") >= sizeof(path)) {
        ty_seterr(err, TY_EBADREQUEST, "log path too long");
        return NULL;
    }
    lf = logfile_open(path, tail_lines);
    if (!lf) {
        if (errno == ENOENT || errno == ENOTDIR)
            ty_seterr(err, TY_ENOTFOUND, "no log of container %s in pod %s", container, pod);
        else
            ty_seterr(err, TY_EINTERNAL, "cannot read the log of container %s in pod %s: %s",
                      container, pod, strerror(errno));
        return NULL;
    }
    return (rt_log *)lf;
}

char *rt_local_log_gets(rt_log *l, char *buf, int len)
{
    return logfile_gets((logfile *)l, buf, len);
}

bool rt_local_log_rotated(rt_log *l)
{
    return logfile_rotated((logfile *)l);
}

void rt_local_log_close(rt_log *l)
{
    logfile_close((logfile *)l);
}

json_t *rt_local_log_containers(const char *data_dir, const char *ns, const char *pod)
{
    char dir[PATH_MAX];
    json_t *names;
    DIR *d;
    struct dirent *e;

    if (!safe_component(ns) || !safe_component(pod) ||
        (size_t)snprintf(dir, sizeof(dir), "%s/logs/%s/%s", data_dir, ns, pod) >= sizeof(dir) ||
        !(d = opendir(dir)))
        return NULL;
    names = json_array();
    while (names && (e = readdir(d)) && json_array_size(names) < MAX_CONTAINERS) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".log"))
            json_array_append_new(names, json_stringn(e->d_name, l - 4));
    }
    closedir(d);
    return names;
}

static rt_log *local_log_open(void *impl, const char *ns, const char *pod,
                              const char *container, bool previous, long tail_lines,
                              ty_error *err)
{
    return rt_local_log_open(((rt_local *)impl)->data_dir, ns, pod, container, previous,
                             tail_lines, err);
}

static json_t *local_log_containers(void *impl, const char *ns, const char *pod)
{
    return rt_local_log_containers(((rt_local *)impl)->data_dir, ns, pod);
}

static json_t *local_log_retained(void *impl, const char *ns)
{
    return safe_component(ns) ? rt_logs_retained(((rt_local *)impl)->data_dir, ns) : NULL;
}

/* ---- exec ---- */

#define EXEC_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The identity the pod's first container runs as, from its spec.json (the
 * pod's directory found by its meta.json); nobody when there is none (or no
 * data directory). */
static void pod_ident(const char *data_dir, const char *ns, const char *pod, rt_ident *id)
{
    char path[PATH_MAX];
    json_t *meta, *spec = NULL;
    struct dirent *e;
    DIR *d;

    rt_ident_from_json(NULL, id);
    if (!data_dir)
        return;
    snprintf(path, sizeof(path), "%s/pods", data_dir);
    if (!(d = opendir(path)))
        return;
    while (!spec && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/pods/%s/meta.json", data_dir, e->d_name);
        if (!(meta = rt_load_json(path)))
            continue;
        if (!strcmp(ty_jstr(meta, "namespace"), ns) && !strcmp(ty_jstr(meta, "name"), pod)) {
            snprintf(path, sizeof(path), "%s/pods/%s/spec.json", data_dir, e->d_name);
            spec = rt_load_json(path);
        }
        json_decref(meta);
    }
    closedir(d);
    rt_ident_from_json(json_object_get(json_array_get(json_object_get(spec, "containers"), 0),
                                       "user"),
                       id);
    json_decref(spec);
}

/* argv[0] looked up in the default PATH, before the fork (caller frees). */
static char *find_program(const char *name)
{
    char *path = NULL;

    if (strchr(name, '/'))
        return strdup(name);
    for (const char *p = EXEC_PATH; *p;) {
        size_t n = strcspn(p, ":");
        free(path);
        if (asprintf(&path, "%.*s/%s", (int)n, p, name) < 0)
            return NULL;
        if (access(path, X_OK) == 0)
            return path;
        p += n + (p[n] == ':');
    }
    free(path);
    return NULL;
}

/* The child: only async-signal-safe calls (the server has threads). */
static void exec_child(const char *prog, const char *const *argv, char **env, const rt_ident *id,
                       int in_fd, int out_fd, int nul_in, int nul_out)
{
    int step;

    dup2(in_fd >= 0 ? in_fd : nul_in, 0);
    dup2(out_fd >= 0 ? out_fd : nul_out, 1);
    dup2(out_fd >= 0 ? out_fd : nul_out, 2);
    syscall(SYS_close_range, 3u, ~0u, 0u);
    if (rt_ident_apply(id, &step) < 0 || chdir("/") < 0)
        _exit(126);
    execve(prog, (char *const *)argv, env);
    _exit(127);
}

/* argv as the pod: its uid and groups (never the server's root), its name
 * as HOSTNAME and TRAINYARD_TARGET_POD, the default PATH, none of the
 * server's environment; without the bind shim (the command picks its own
 * addresses), as the MPI agent runs it. */
static int local_exec(void *impl, const char *ns, const char *pod, const char *const *argv,
                      int in_fd, int out_fd, int *exit_code, ty_error *err)
{
    char *env[5] = {NULL}, *prog;
    int nul_in, nul_out, st, rc = 0;
    rt_ident id;
    pid_t pid;

    if (!argv || !argv[0] || !safe_component(pod) || !safe_component(ns))
        return ty_seterr(err, TY_EINVALID, "exec: no command, or a bad pod name");
    if (!(prog = find_program(argv[0])))
        return ty_seterr(err, TY_EINVALID, "exec %s: not found in %s", argv[0], EXEC_PATH);
    pod_ident(impl ? ((rt_local *)impl)->data_dir : NULL, ns, pod, &id);
    if (asprintf(&env[0], "PATH=%s", EXEC_PATH) < 0 || asprintf(&env[1], "HOME=/") < 0 ||
        asprintf(&env[2], "HOSTNAME=%s", pod) < 0 ||
        asprintf(&env[3], "TRAINYARD_TARGET_POD=%s", pod) < 0) {
        free(prog);
        for (int i = 0; i < 4 && env[i]; i++)
            free(env[i]);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    nul_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    nul_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (nul_in < 0 || nul_out < 0 || (pid = fork()) < 0) {
        rc = ty_seterr(err, TY_EINTERNAL, "exec %s: %s", argv[0], strerror(errno));
        pid = -1;
    }
    if (pid == 0)
        exec_child(prog, argv, env, &id, in_fd, out_fd, nul_in, nul_out);
    if (nul_in >= 0)
        close(nul_in);
    if (nul_out >= 0)
        close(nul_out);
    free(prog);
    for (int i = 0; i < 4; i++)
        free(env[i]);
    while (pid > 0 && waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return ty_seterr(err, TY_EINTERNAL, "exec %s: waitpid: %s", argv[0],
                             strerror(errno));
    }
    if (pid > 0)
        *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return rc;
}

/* ---- the table ---- */

static void *local_start(ty_kc *kc, const void *opts, ty_error *err)
{
    return rt_local_start(kc, opts, err);
}

static void local_stop(void *impl)
{
    rt_local_stop(impl);
}

static json_t *local_nodes(void *impl)
{
    rt_local *rt = impl;
    json_t *out = json_array(), *one = ak_node_inventory(rt->s, rt->node_name);

    if (one)
        json_array_append_new(out, one);
    return out;
}

static bool local_owns_node(void *impl, const char *node)
{
    return node && !strcmp(node, ((rt_local *)impl)->node_name);
}

const rt_backend_ops rt_local_backend = {
    .name = "local",
    .start = local_start,
    .stop = local_stop,
    .nodes = local_nodes,
    .owns_node = local_owns_node,
    .log_open = local_log_open,
    .log_gets = rt_local_log_gets,
    .log_rotated = rt_local_log_rotated,
    .log_close = rt_local_log_close,
    .log_containers = local_log_containers,
    .log_retained = local_log_retained,
    .exec = local_exec,
    .mpi_agent = NULL, /* the one-machine agent */
};

/* The local runtime's logs without the runtime (a server started with
 * --no-local-node still serves what an earlier run left): the instance is
 * the data directory itself; only the log ops. */
static rt_log *dir_log_open(void *impl, const char *ns, const char *pod,
                              const char *container, bool previous, long tail_lines,
                              ty_error *err)
{
    return rt_local_log_open(impl, ns, pod, container, previous, tail_lines, err);
}

static json_t *dir_log_containers(void *impl, const char *ns, const char *pod)
{
    return rt_local_log_containers(impl, ns, pod);
}

static json_t *dir_log_retained(void *impl, const char *ns)
{
    return safe_component(ns) ? rt_logs_retained(impl, ns) : NULL;
}

const rt_backend_ops rt_local_log_store = {
    .name = "local-logs",
    .log_open = dir_log_open,
    .log_gets = rt_local_log_gets,
    .log_rotated = rt_local_log_rotated,
    .log_close = rt_local_log_close,
    .log_containers = dir_log_containers,
    .log_retained = dir_log_retained,
};
