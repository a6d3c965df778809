/* agent_pod.c - one pod in the agent: start (finalizer, GPUs, spec.json,
 * supervisor), status from state.json, termination and clean-up.
 *
 * Every step is level-triggered: it looks at the pod object and the pod
 * directory as they are, so it can be repeated after a failure or a restart
 * of the server. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "model/finalizers.h"
#include "runtime/local/agent.h"

extern char **environ;

#define RETRY_MS 2000
#define FORCE_EXTRA_S 15 /* beyond the grace period before the agent kills everything */

static bool has_finalizer(const json_t *pod)
{
    return finalizer_has(pod, RT_FINALIZER);
}

static bool same_uid(const json_t *pod, const char *uid)
{
    return !strcmp(ty_jmeta(pod, "uid"), uid);
}

/* The pod object if it is still this entry's pod (caller unrefs). */
static ty_obj *current(rt_local *rt, const rt_pod *p)
{
    ty_obj *o = kc_get(rt->s, "pods", p->ns, p->name, NULL);

    if (o && !same_uid(ty_obj_json(o), p->uid)) {
        ty_obj_unref(o);
        return NULL;
    }
    return o;
}

/* ---- store edits ---- */

typedef struct pod_edit {
    const char *uid;
    bool add;            /* finalizer: add or remove */
    const rt_pod *p;     /* edit_finalizer: also write p's status (admission) */
} pod_edit;

static json_t *status_of(const json_t *obj, const rt_pod *p)
{
    return rt_pod_status(obj, p->state, p->ip, "127.0.0.1",
                         *p->wait_reason ? p->wait_reason : NULL, p->wait_msg);
}

static int edit_finalizer(json_t *obj, void *arg, ty_error *err)
{
    pod_edit *e = arg;
    json_t *meta = json_object_get(obj, "metadata");

    if (!same_uid(obj, e->uid))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    if (e->add) {
        if (json_object_get(meta, "deletionTimestamp"))
            return ty_seterr(err, TY_ECONFLICT, "pod is being deleted");
        /* One commit for both: a pod's start is on the launch's critical path. */
        if (e->p)
            json_object_set_new(obj, "status", status_of(obj, e->p));
    }
    /* obj may share members with the stored pod (a status write's copy):
     * finalizer_set makes metadata and the list obj's own before editing */
    if (finalizer_set(obj, RT_FINALIZER, e->add) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

static int set_finalizer(rt_local *rt, const char *ns, const char *name, const char *uid,
                         bool add, const rt_pod *with_status, ty_error *err)
{
    pod_edit e = {.uid = uid, .add = add, .p = with_status};
    /* a status write: pods/status takes the finalizers too (client/kc.h),
     * and a plain write's status is ignored */
    ty_obj *o = kc_mutate(rt->s, "pods", ns, name, edit_finalizer, &e, KC_STATUS, err);

    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

static int edit_status(json_t *obj, void *arg, ty_error *err)
{
    pod_edit *e = arg;
    const rt_pod *p = e->p;
    const char *phase;

    if (!same_uid(obj, p->uid))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    /* An end once reported is final, as kubelet keeps it: a state.json
     * older than the report (the machine went down before the last state
     * reached the disk) must not make the pod Running again, nor a
     * supervisor then found dead turn its real exit codes into 137s. */
    phase = ty_jstr(json_object_get(obj, "status"), "phase");
    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return 0;
    json_object_set_new(obj, "status", status_of(obj, p));
    return 0;
}

static void write_status(rt_local *rt, rt_pod *p)
{
    pod_edit e = {.p = p};
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(rt->s, "pods", p->ns, p->name, edit_status, &e, KC_STATUS, &err);
    if (!o && err.code != TY_ENOTFOUND) {
        /* A full disk, say: the state is kept and the write retried at
         * the next sweep (pod_poll), so what is reported is never stale
         * for good. */
        if (!p->status_pending)
            ty_warn("runtime: status of pod %s/%s: %s (retried)", p->ns, p->name, err.text);
        p->status_pending = true;
    } else {
        p->status_pending = false;
    }
    ty_obj_unref(o);
    ty_error_clear(&err);
}

/* ---- starting ---- */

/* A named failure a test asks for in $TY_FAILPOINTS (comma-separated). */
static bool failpoint(const char *name)
{
    const char *fp = getenv("TY_FAILPOINTS");
    size_t n = strlen(name);

    for (const char *at = fp; at && (at = strstr(at, name)); at += n)
        if ((at == fp || at[-1] == ',') && (at[n] == '\0' || at[n] == ','))
            return true;
    return false;
}

static void path_in(const rt_pod *p, const char *file, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", p->dir, file);
}

/* The container the GPUs are labelled with on /metrics: the first that
 * asks for nvidia.com/gpu, else the first. containers is borrowed. */
static const char *gpu_container(const json_t *containers)
{
    size_t i;
    json_t *c;

    json_array_foreach(containers, i, c) {
        json_t *res = json_object_get(c, "resources");
        if (json_object_get(json_object_get(res, "limits"), "nvidia.com/gpu") ||
            json_object_get(json_object_get(res, "requests"), "nvidia.com/gpu"))
            return ty_jstr(c, "name");
    }
    return ty_jstr(json_array_get(containers, 0), "name");
}

/* Tells the GPU reader who holds p's GPUs (none: container NULL and
 * release true). */
static void note_gpu_holder(rt_local *rt, const rt_pod *p, const char *container, bool release)
{
    for (int i = 0; i < RT_MAX_GPUS; i++)
        if (p->gpus & (1ull << i))
            rt_gpus_set_holder(rt->gpus, i, p->ns, release ? NULL : p->name,
                               container ? container : "");
}

/* Lowest free GPUs; false when there are not enough. */
static bool take_gpus(rt_local *rt, rt_pod *p, int need, const char *container)
{
    uint64_t got = 0;
    int n = 0;

    if (need <= 0 || p->gpus)
        return true;
    for (int i = 0; i < rt->ngpus && n < need; i++) {
        if (!((rt->gpu_used | rt->gpu_bad) & (1ull << i))) {
            got |= 1ull << i;
            n++;
        }
    }
    if (n < need)
        return false;
    p->gpus = got;
    rt->gpu_used |= got;
    note_gpu_holder(rt, p, container, false);
    return true;
}

static void release_gpus(rt_local *rt, rt_pod *p)
{
    note_gpu_holder(rt, p, NULL, true);
    rt->gpu_used &= ~p->gpus;
    p->gpus = 0;
}

/* posix_spawn (a vfork: the server's memory is not copied, and this thread
 * waits only for the exec) into a session of its own, so that the server's
 * signals and terminal do not reach it. The supervisor is our child while we
 * run, reaped when its pidfd says it exited (agent_untrack); when the server
 * exits it is reparented like any orphan and lives on to be adopted. */
static pid_t spawn_supervisor(rt_local *rt, rt_pod *p)
{
    char logpath[PATH_MAX + 32];
    char *small[] = {rt->supervisor_exe, "--pod-dir", p->dir, NULL};
    char *full[] = {rt->self_exe, "supervise", "--pod-dir", p->dir, NULL};
    char **argv = rt->supervisor_exe ? small : full;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t block;
    pid_t pid = -1;
    int rc;

    path_in(p, "supervisor.log", logpath, sizeof(logpath));
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    /* SIGTERM stays pending until the supervisor has its signalfd. */
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGCHLD);
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_APPEND,
                                              0644);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    /* The replicas get the default policy whatever the server's threads
     * run under (base/thread.h). */
    if (rc == 0)
        rc = posix_spawnattr_setschedpolicy(&attr, SCHED_OTHER);
    if (rc == 0)
        rc = posix_spawnattr_setschedparam(&attr, &(struct sched_param){.sched_priority = 0});
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSCHEDULER);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &block);
    if (rc == 0)
        rc = posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return pid;
}

static void wait_for(rt_local *rt, rt_pod *p, const json_t *pod, const char *reason,
                     const char *msg)
{
    bool news = strcmp(p->wait_msg, msg) != 0;

    snprintf(p->wait_reason, sizeof(p->wait_reason), "%s", reason);
    snprintf(p->wait_msg, sizeof(p->wait_msg), "%s", msg);
    p->retry_at_ms = ty_now_ms() + RETRY_MS;
    if (news)
        ty_event(rt->s, pod, "Warning", "Failed", RT_COMPONENT, "Error: %s", msg);
    write_status(rt, p);
}

static int write_spec(rt_local *rt, rt_pod *p, const json_t *pod, ty_error *err)
{
    rt_prep prep = {.data_dir = rt->data_dir, .pod_dir = p->dir, .node_name = rt->node_name,
                    .shim = rt->shim, .gpus = p->gpus, .backoff_ms = rt->backoff_ms,
                    .log_max_bytes = rt->log_max_bytes};
    char path[PATH_MAX + 16];
    json_t *spec;
    int rc;

    snprintf(prep.pod_ip, sizeof(prep.pod_ip), "%s", p->ip);
    snprintf(prep.host_ip, sizeof(prep.host_ip), "%s", rt->host_ip);
    if (!(spec = rt_build_spec(rt->s, pod, &prep, err)))
        return -1;
    /* Read back when a restarted server adopts the pod: its GPUs' label. */
    if (p->gpus)
        json_object_set_new(spec, "gpuContainer",
                            json_string(gpu_container(json_object_get(
                                json_object_get(pod, "spec"), "containers"))));
    path_in(p, "spec.json", path, sizeof(path));
    rc = rt_save_json(path, spec);
    json_decref(spec);
    if (rc < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

static void try_start(rt_local *rt, rt_pod *p, const json_t *pod)
{
    char path[PATH_MAX + 16];
    ty_error err;

    ty_error_init(&err);
    /* The finalizer (so that a deletion waits for the processes) and the
     * Pending status with the pod's address, in one write. */
    if (set_finalizer(rt, p->ns, p->name, p->uid, true, p, &err) < 0) {
        p->retry_at_ms = ty_now_ms() + RETRY_MS;
        goto out; /* being deleted or gone: reconcile sees it next */
    }
    if (!take_gpus(rt, p, rt_pod_gpu_request(pod),
                   gpu_container(json_object_get(json_object_get(pod, "spec"), "containers")))) {
        snprintf(path, sizeof(path), "not enough free nvidia.com/gpu on node %s for %d",
                 rt->node_name, rt_pod_gpu_request(pod));
        wait_for(rt, p, pod, "UnexpectedAdmissionError", path);
        goto out;
    }
    /* the pod's names are there before its first instruction: no hosts
     * file (a full disk), no start yet (its supervisor would refuse) */
    if (pod_write_hosts(rt, p) < 0) {
        snprintf(path, sizeof(path), "cannot write the pod's hosts file: %s", strerror(errno));
        wait_for(rt, p, pod, "CreateContainerError", path);
        goto out;
    }
    if (write_spec(rt, p, pod, &err) < 0) {
        wait_for(rt, p, pod, "CreateContainerConfigError", err.text);
        goto out;
    }
    agent_track_dir(rt, p); /* before it can write its first state */
    p->sup = spawn_supervisor(rt, p);
    if (p->sup <= 0) {
        wait_for(rt, p, pod, "CreateContainerError", "cannot start the pod supervisor");
        goto out;
    }
    /* Tests only: the server dies in the window between the supervisor's
     * start and its record (tests/e2e/t0750-crash-windows.sh). */
    if (failpoint("rt-exit-after-supervisor-spawn"))
        _exit(86);
    /* The supervisor writes supervisor.pid itself once it holds the pod's
     * lock: one that loses the lock to an earlier one must not be named. */
    p->started = true;
    agent_track_sup(rt, p);
    rt_args_only_events(rt->s, pod);
    if (*p->wait_reason) {
        /* It waited before (a missing ConfigMap...): no longer. */
        p->wait_reason[0] = p->wait_msg[0] = '\0';
        write_status(rt, p);
    }
out:
    ty_error_clear(&err);
}

/* ---- termination ---- */

/* deletionGracePeriodSeconds (the delete request's gracePeriodSeconds, or the
 * pod's own grace period as the store records it), else the pod's own. */
static long grace_of(const json_t *pod)
{
    const json_t *d = json_object_get(json_object_get(pod, "metadata"),
                                      "deletionGracePeriodSeconds");
    const json_t *g = json_object_get(json_object_get(pod, "spec"),
                                      "terminationGracePeriodSeconds");

    if (json_is_integer(d) && json_integer_value(d) >= 0)
        return (long)json_integer_value(d);
    return json_is_integer(g) && json_integer_value(g) >= 0 ? (long)json_integer_value(g) : 30;
}

static void kill_groups(const rt_pod *p)
{
    const char *lists[] = {"initContainers", "containers"};
    size_t i;
    json_t *c;

    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(p->state, lists[l]), i, c) {
            json_int_t pid = json_integer_value(json_object_get(c, "pid"));
            if (pid > 1)
                kill(-(pid_t)pid, SIGKILL);
        }
}

static void begin_kill(rt_local *rt, rt_pod *p, const json_t *pod)
{
    long grace = pod ? grace_of(pod) : 30;
    char path[PATH_MAX + 16], text[64];
    size_t i;
    json_t *c;

    if (p->killing)
        return;
    p->killing = true;
    agent_note_state(rt, p);
    if (!p->started || p->finished)
        return;
    json_array_foreach(json_object_get(p->state, "containers"), i, c)
        if (pod && !strcmp(ty_jstr(c, "state"), "running"))
            ty_event(rt->s, pod, "Normal", "Killing", RT_COMPONENT, "Stopping container %s",
                     ty_jstr(c, "name"));
    /* The supervisor reads the grace period of this deletion from stop.json. */
    snprintf(text, sizeof(text), "{\"gracePeriodSeconds\":%ld}", grace);
    path_in(p, "stop.json", path, sizeof(path));
    rt_write_atomic(path, text, strlen(text), 0644);
    p->force_at_ms = ty_now_ms() + (grace + FORCE_EXTRA_S) * 1000;
    kill(p->sup, SIGTERM);
}

/* The end of an entry: the finalizer goes (the store then removes the pod),
 * GPUs and the address are freed, the directory removed. Logs stay. */
static bool finalize(rt_local *rt, rt_pod *p)
{
    ty_obj *o = current(rt, p);
    ty_error err;

    ty_error_init(&err);
    if (o && has_finalizer(ty_obj_json(o)) &&
        set_finalizer(rt, p->ns, p->name, p->uid, false, NULL, &err) < 0 &&
        err.code != TY_ENOTFOUND) {
        ty_warn("runtime: cannot release pod %s/%s: %s", p->ns, p->name, err.text);
        ty_error_clear(&err);
        ty_obj_unref(o);
        return false; /* retried at the next poll */
    }
    release_gpus(rt, p);
    rt_remove_tree(p->dir);
    /* Its logs outlive it by the retention, counted from now. */
    rt_logs_mark_gone(rt->s, rt->data_dir, p->ns, p->name,
                      o ? json_object_get(json_object_get(ty_obj_json(o), "metadata"), "labels")
                        : NULL);
    ty_obj_unref(o);
    json_object_set_new(rt->dirty_ns, p->ns, json_true());
    agent_remove(rt, p);
    return true;
}

/* ---- observation ---- */

/* The supervisor died before the pod finished (killed, crashed): whatever it
 * left running is stopped and the pod reported Failed. */
static void supervisor_lost(rt_pod *p)
{
    const char *lists[] = {"initContainers", "containers"};
    char now[32];
    size_t i;
    json_t *c;

    kill_groups(p);
    if (!p->state)
        p->state = json_pack("{s:s, s:[], s:[]}", "phase", "Pending", "initContainers",
                             "containers");
    ty_time_now(now, sizeof(now));
    json_object_set_new(p->state, "phase", json_string("Failed"));
    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(p->state, lists[l]), i, c) {
            if (!strcmp(ty_jstr(c, "state"), "terminated"))
                continue;
            json_object_set_new(c, "state", json_string("terminated"));
            json_object_set_new(c, "reason", json_string("Error"));
            json_object_set_new(c, "message", json_string("the pod's supervisor exited"));
            json_object_set_new(c, "exitCode", json_integer(137));
            json_object_set_new(c, "finishedAt", json_string(now));
        }
}

/* Reads state.json; reports when it changed. */
static void observe(rt_local *rt, rt_pod *p)
{
    char path[PATH_MAX + 16];
    char *text;
    json_t *st, *before;
    ty_obj *o;

    path_in(p, "state.json", path, sizeof(path));
    text = rt_read_file(path, RT_MAX_FILE, NULL);
    if (!text || (p->state_text && !strcmp(text, p->state_text)) ||
        !(st = json_loads(text, 0, NULL))) {
        free(text);
        return;
    }
    o = current(rt, p);
    before = p->state;
    p->state = st;
    free(p->state_text);
    p->state_text = text;
    /* The status first: watchers wait for it, nobody waits for the Events. */
    write_status(rt, p);
    if (o)
        rt_state_events(rt->s, ty_obj_json(o), before, st);
    ty_obj_unref(o);
    json_decref(before);
}

static bool state_final(const rt_pod *p)
{
    const char *ph = ty_jstr(p->state, "phase");
    return !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed");
}

/* The supervisor we knew is gone, but the pod's lock is held: another
 * supervisor runs the pod (ours lost the race for the lock to one started
 * before a crash of the server). It is the pod's supervisor from now on. */
static bool follow_lock_holder(rt_local *rt, rt_pod *p)
{
    pid_t holder = rt_lock_holder(p->dir);

    if (holder <= 0 || holder == p->sup)
        return false;
    agent_untrack(rt, p); /* reaps ours */
    ty_info("runtime: pod %s/%s is run by supervisor %d, not %d", p->ns, p->name, (int)holder,
            (int)p->sup);
    p->sup = holder;
    p->strict = true;
    agent_track_dir(rt, p);
    agent_track_sup(rt, p);
    if (p->killing)
        kill(p->sup, SIGTERM); /* the deletion's stop.json is there for it too */
    return true;
}

void pod_poll(rt_local *rt, rt_pod *p)
{
    if (p->status_pending && p->state) {
        write_status(rt, p);
        if (!p->status_pending && p->finished)
            agent_note_state(rt, p); /* may rest in rt->idle now */
    }
    if (p->started && !p->finished) {
        bool alive = rt_pid_alive(p->sup, p->strict ? p->dir : NULL);
        observe(rt, p);
        if (!alive && follow_lock_holder(rt, p)) {
            alive = true;
            observe(rt, p);
        }
        if (!alive) {
            p->finished = true;
            agent_untrack(rt, p);
            observe(rt, p); /* what it wrote last */
            if (!state_final(p) && !p->killing) {
                supervisor_lost(p);
                free(p->state_text);
                p->state_text = NULL;
                write_status(rt, p);
            }
            agent_note_state(rt, p); /* out of the hosts files, into rt->idle */
        }
        if (state_final(p) || p->finished)
            release_gpus(rt, p);
    }
    if (p->killing) {
        if (!p->started || p->finished) {
            finalize(rt, p);
            return;
        }
        if (ty_now_ms() >= p->force_at_ms) {
            kill(p->sup, SIGKILL);
            kill_groups(p);
        }
        return;
    }
    if (!p->started && ty_now_ms() >= p->retry_at_ms)
        pod_reconcile(rt, p);
}

/* ---- entry points from agent.c ---- */

void pod_reconcile(rt_local *rt, rt_pod *p)
{
    ty_obj *o = current(rt, p);
    const json_t *pod = o ? ty_obj_json(o) : NULL;

    if (!pod) {
        p->gone = true;
        begin_kill(rt, p, NULL);
    } else if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp")) {
        begin_kill(rt, p, pod);
    } else if (!p->started && !p->killing && ty_now_ms() >= p->retry_at_ms) {
        try_start(rt, p, pod);
    }
    ty_obj_unref(o);
}

static int edit_lost(json_t *obj, void *arg, ty_error *err)
{
    json_t *st = json_object_get(obj, "status");

    (void)err;
    if (!same_uid(obj, arg))
        return 0;
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    json_object_set_new(st, "phase", json_string("Failed"));
    json_object_set_new(st, "reason", json_string("Lost"));
    json_object_set_new(st, "message",
                        json_string("the pod's processes and state were lost on this node"));
    return 0;
}

void pod_new_object(rt_local *rt, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = ty_jstr(meta, "uid"), *ns = ty_jstr(meta, "namespace");
    const char *name = ty_jstr(meta, "name");
    const char *phase = ty_jstr(json_object_get(pod, "status"), "phase");
    ty_error err;
    rt_pod *p;

    ty_error_init(&err);
    if (json_object_get(meta, "deletionTimestamp")) {
        /* Nothing of it runs here: let it go. */
        if (has_finalizer(pod))
            set_finalizer(rt, ns, name, uid, false, NULL, &err);
    } else if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")) {
        /* finished before; nothing to run */
    } else if (has_finalizer(pod)) {
        /* We ran it once, but its directory is gone: say so, do not rerun. */
        ty_obj_unref(kc_mutate(rt->s, "pods", ns, name, edit_lost, (void *)uid, KC_STATUS,
                               &err));
    } else if ((p = agent_add(rt, uid, ns, name))) {
        pod_reconcile(rt, p);
    }
    ty_error_clear(&err);
}

int pod_write_hosts(rt_local *rt, rt_pod *p)
{
    char path[PATH_MAX + 16];
    uint64_t gen = 0;
    const char *body = rt_hosts_body(rt->hosts, p->ns, &gen);
    char *text;
    int rc = 0;

    if (body && p->hosts_gen == gen)
        return 0; /* the file shows these lines already */
    if (!body || !(text = rt_hosts_text(body, p->ip))) {
        errno = ENOMEM;
        return -1;
    }
    path_in(p, "hosts", path, sizeof(path));
    if (rt_hosts_file_update(path, text) < 0) {
        ty_warn("runtime: cannot write %s: %s", path, strerror(errno));
        rc = -1;
    } else {
        p->hosts_gen = gen;
    }
    free(text);
    return rc;
}

static uint64_t parse_gpus(const char *s)
{
    uint64_t mask = 0;

    while (s && *s) {
        char *end;
        long i = strtol(s, &end, 10);
        if (end == s)
            break;
        if (i >= 0 && i < RT_MAX_GPUS)
            mask |= 1ull << i;
        s = *end == ',' ? end + 1 : end;
    }
    return mask;
}

int pod_load_adopted(rt_local *rt, rt_pod *p)
{
    char path[PATH_MAX + 16], *text;
    json_t *spec;
    pid_t holder;

    path_in(p, "ip", path, sizeof(path));
    if ((text = rt_read_file(path, 64, NULL))) {
        text[strcspn(text, "\n")] = '\0';
        if (!strncmp(text, "127.", 4) && strlen(text) < sizeof(p->ip))
            snprintf(p->ip, sizeof(p->ip), "%s", text);
        free(text);
    }
    path_in(p, "spec.json", path, sizeof(path));
    spec = rt_load_json(path);
    path_in(p, "supervisor.pid", path, sizeof(path));
    text = spec ? rt_read_file(path, 64, NULL) : NULL;
    /* Started when a supervisor holds the pod's lock (it may have had no
     * time to write its pid: the server died right after spawning it), or
     * left its pid or a state behind. A pod started once is never started
     * again: its supervisor's exit is observed, or reported as lost. */
    holder = spec ? rt_lock_holder(p->dir) : 0;
    path_in(p, "state.json", path, sizeof(path));
    if (holder > 0 || text || (spec && access(path, F_OK) == 0)) {
        p->sup = holder > 0 ? holder : text ? (pid_t)strtol(text, NULL, 10) : 0;
        p->started = true;
        p->strict = true;
        p->gpus = parse_gpus(ty_jstr(spec, "gpus"));
        rt->gpu_used |= p->gpus;
        note_gpu_holder(rt, p, ty_jstr(spec, "gpuContainer"), false);
        /* Supervisors from before the lock hold none: their pid decides. */
        p->finished = holder <= 0 && !rt_pid_alive(p->sup, p->dir);
        if (p->finished) {
            observe(rt, p); /* exits that happened while the server was down */
            if (!state_final(p)) {
                supervisor_lost(p);
                write_status(rt, p);
            }
            /* Its devices are free again, as when it ends under a running
             * agent: a finished pod kept them for good after a restart. */
            release_gpus(rt, p);
        }
    }
    free(text);
    json_decref(spec);
    return 0;
}
