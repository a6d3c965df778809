/* backend_local.c - the local runtime as a runtime backend (runtime/backend.h):
 * its agent runs pods itself (agent.c), so the table has no pods_* ops; it
 * adds the node inventory, the logs under <data>/logs and exec. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/agent_kit.h"
#include "runtime/backend.h"
#include "runtime/local/agent.h"
#include "runtime/local/logfile.h"

extern char **environ;

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

/* ---- exec ---- */

/* The environment of a command run as pod: the server's, less TY_POD_IP
 * (no bind shim: the command picks its own addresses), with the pod's name
 * as HOSTNAME and TRAINYARD_TARGET_POD; as the MPI agent sets it. */
static char **pod_env(const char *pod)
{
    size_t n = 0, k = 0;
    char **env;

    while (environ[n])
        n++;
    if (!(env = calloc(n + 3, sizeof(*env))))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TY_POD_IP=", 10) && strncmp(environ[i], "HOSTNAME=", 9) &&
            strncmp(environ[i], "TRAINYARD_TARGET_POD=", 21))
            env[k++] = environ[i];
    if (asprintf(&env[k], "HOSTNAME=%s", pod) < 0) {
        free(env);
        return NULL; /* asprintf leaves its pointer undefined: not freed */
    }
    if (asprintf(&env[k + 1], "TRAINYARD_TARGET_POD=%s", pod) < 0) {
        free(env[k]);
        free(env);
        return NULL;
    }
    return env;
}

static int local_exec(void *impl, const char *ns, const char *pod, const char *const *argv,
                      int in_fd, int out_fd, int *exit_code, ty_error *err)
{
    posix_spawn_file_actions_t fa;
    char **env;
    size_t k = 0;
    pid_t pid;
    int rc, st;

    (void)impl, (void)ns;
    if (!argv || !argv[0] || !safe_component(pod))
        return ty_seterr(err, TY_EINVALID, "exec: no command, or a bad pod name");
    if (!(env = pod_env(pod)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    while (env[k])
        k++;
    posix_spawn_file_actions_init(&fa);
    if (in_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0) {
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
    } else {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env[k - 1]);
    free(env[k - 2]);
    free(env);
    if (rc != 0)
        return ty_seterr(err, TY_EINVALID, "exec %s: %s", argv[0], strerror(rc));
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return ty_seterr(err, TY_EINTERNAL, "exec %s: waitpid: %s", argv[0],
                             strerror(errno));
    *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
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

const rt_backend_ops rt_local_log_store = {
    .name = "local-logs",
    .log_open = dir_log_open,
    .log_gets = rt_local_log_gets,
    .log_rotated = rt_local_log_rotated,
    .log_close = rt_local_log_close,
    .log_containers = dir_log_containers,
};
