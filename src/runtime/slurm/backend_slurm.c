/* backend_slurm.c - the Slurm backend's ops table, its agent thread (watch
 * events, the sync tick, submissions), its Nodes (from sinfo) and its logs
 * (the local runtime's reader over the shared directory). See slurm.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/kinds.h"
#include "api/mpi_agent.h"
#include "api/registry.h"
#include "base/jsonget.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "model/finalizers.h"
#include "model/obj.h"
#include "runtime/local/rt_internal.h"
#include "runtime/local/runtime.h"
#include "runtime/slurm/sl_int.h"

#define NODES_EVERY_MS 10000
#define SYNC_MS 1000
#define SYNC_FAST_MS 150
#define SUBMIT_BATCH_MS 20
#define SWEEP_EVERY_MS (10 * 60 * 1000)

/* ---- small things ---- */

void sl_pod_dir(const rt_slurm *s, const char *uid, char *buf, size_t len)
{
    snprintf(buf, len, "%s/pods/%s", s->shared, uid);
}

void sl_gang_path(const rt_slurm *s, const char *anchor, char *buf, size_t len)
{
    snprintf(buf, len, "%s/slurm/gang-%s.json", s->shared, anchor);
}

const char *sl_job_text(const sl_pod *p, char *buf, size_t len)
{
    if (p->comp >= 0)
        snprintf(buf, len, "%s+%d", p->job, p->comp);
    else
        snprintf(buf, len, "%s", p->job);
    return buf;
}

sl_pod *sl_find(rt_slurm *s, const char *uid)
{
    return strmap_get(&s->pods, uid);
}

const sl_node *sl_node_find(rt_slurm *s, const char *name, sl_node *copy)
{
    const sl_node *found = NULL;

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nnodes; i++)
        if (!strcmp(s->nodes[i].name, name)) {
            *copy = s->nodes[i];
            found = copy;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    return found;
}

/* Pods this backend runs: a scheduler name it serves (the scheduler admits
 * their gangs; nothing else places them). */
bool sl_serves(const rt_slurm *s, const json_t *pod)
{
    const char *want = ty_jstr(json_object_get(pod, "spec"), "schedulerName");

    if (!*want)
        want = "default-scheduler";
    for (size_t i = 0; s->names[i]; i++)
        if (!strcmp(s->names[i], want))
            return true;
    return false;
}

typedef struct fin_args {
    const char *uid;
    bool add;
} fin_args;

static int edit_finalizer(json_t *obj, void *arg, ty_error *err)
{
    const fin_args *a = arg;

    if (strcmp(ty_jmeta(obj, "uid"), a->uid))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    if (a->add) {
        if (json_is_string(json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp")))
            return ty_seterr(err, TY_ECONFLICT, "being deleted");
        finalizer_add(obj, SL_FINALIZER);
    } else {
        finalizer_remove(obj, SL_FINALIZER);
    }
    return 0;
}

int sl_finalizer(rt_slurm *s, sl_pod *p, bool add)
{
    fin_args a = {.uid = p->uid, .add = add};
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(s->kc, "pods", p->ns, p->name, edit_finalizer, &a, 0, &err);
    if (o) {
        p->finalizer = add;
        ty_obj_unref(o);
    } else if (err.code == TY_ENOTFOUND && !add) {
        p->finalizer = false; /* gone: nothing left to hold */
    }
    ty_error_clear(&err);
    return o ? 0 : -1;
}

/* ---- pods from the watch ---- */

static int remember(rt_slurm *s, sl_pod *p)
{
    if (s->nall == s->capall) {
        size_t cap = s->capall ? 2 * s->capall : 64;
        sl_pod **all = realloc(s->all, cap * sizeof(*all));
        if (!all)
            return -1;
        s->all = all;
        s->capall = cap;
    }
    if (strmap_put(&s->pods, p->uid, p) < 0)
        return -1;
    p->idx = s->nall;
    s->all[s->nall++] = p;
    return 0;
}

static void forget(rt_slurm *s, sl_pod *p)
{
    sl_unwatch(s, p);
    strmap_del(&s->pods, p->uid);
    s->all[p->idx] = s->all[--s->nall];
    s->all[p->idx]->idx = p->idx;
    ty_obj_unref(p->obj);
    json_decref(p->state);
    json_decref(p->ports);
    free(p);
}

static const char *group_of(const json_t *pod)
{
    const char *g = ty_jstr(json_object_get(json_object_get(pod, "metadata"), "annotations"),
                            "scheduling.k8s.io/group-name");
    return g;
}

/* A pod as the store has it now (deleted: its last state). */
static void pod_seen(rt_slurm *s, ty_obj *o, bool deleted)
{
    const json_t *pod = ty_obj_json(o), *meta = json_object_get(pod, "metadata");
    const char *uid = ty_jstr(meta, "uid"), *node;
    sl_pod *p = sl_find(s, uid);

    if (deleted) {
        if (!p)
            return;
        /* Its files go with it once nothing runs there (its logs stay for
         * the retention period); whatever still runs is found by squeue and
         * cancelled, its directory then left for the supervisor. */
        rt_logs_mark_gone(s->kc, s->shared, p->ns, p->name, json_object_get(meta, "labels"));
        if (p->st != SP_STARTED) {
            char dir[PATH_MAX + 128];
            sl_pod_dir(s, p->uid, dir, sizeof(dir));
            rt_remove_tree(dir);
            sl_gang_path(s, p->uid, dir, sizeof(dir));
            unlink(dir);
        }
        forget(s, p);
        return;
    }
    node = ty_jstr(json_object_get(pod, "spec"), "nodeName");
    if (!p) {
        /* Ours: served and unbound (to be submitted), or bound to one of our
         * nodes (started by us, seen again after a restart). */
        sl_node tmp;
        const char *phase = ty_jstr(json_object_get(pod, "status"), "phase");
        if (!sl_serves(s, pod) || strlen(uid) >= sizeof(p->uid) || !*uid)
            return;
        if (*node && !sl_node_find(s, node, &tmp) && !finalizer_has(pod, SL_FINALIZER))
            return;
        if (!*node && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")) &&
            !finalizer_has(pod, SL_FINALIZER))
            return;
        if (strmap_len(&s->pods) >= SL_MAX_PODS || !(p = calloc(1, sizeof(*p))))
            return;
        snprintf(p->uid, sizeof(p->uid), "%s", uid);
        snprintf(p->ns, sizeof(p->ns), "%s", ty_jstr(meta, "namespace"));
        snprintf(p->name, sizeof(p->name), "%s", ty_jstr(meta, "name"));
        snprintf(p->group, sizeof(p->group), "%s", group_of(pod));
        p->comp = -1;
        p->wd = -1;
        p->finalizer = finalizer_has(pod, SL_FINALIZER);
        if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
            p->st = SP_DONE;
        else if (*node)
            p->st = SP_SUBMITTED; /* adopted: squeue and its state say more */
        p->submitted_ms = ty_now_ms();
        snprintf(p->node, sizeof(p->node), "%s", node);
        if (remember(s, p) < 0) {
            free(p);
            return;
        }
    }
    ty_obj_unref(p->obj);
    p->obj = ty_obj_ref(o);
    if (json_is_string(json_object_get(meta, "deletionTimestamp")) && !p->deleting) {
        const json_t *g = json_object_get(meta, "deletionGracePeriodSeconds");
        p->deleting = true;
        p->grace_s = json_is_integer(g) ? (int)json_integer_value(g)
                                        : (int)json_integer_value(json_object_get(
                                              json_object_get(pod, "spec"),
                                              "terminationGracePeriodSeconds"));
        if (p->grace_s < 0)
            p->grace_s = 0;
    }
}

static void group_seen(rt_slurm *s, ty_obj *o, bool deleted)
{
    const json_t *pg = ty_obj_json(o);
    char key[520];

    snprintf(key, sizeof(key), "%s/%s", ty_jmeta(pg, "namespace"), ty_jmeta(pg, "name"));
    if (deleted)
        json_object_del(s->groups, key);
    else
        json_object_set_new(s->groups, key, json_deep_copy(pg));
}

static void service_seen(rt_slurm *s, ty_obj *o, bool deleted)
{
    rt_hosts_put_service(s->hosts, ty_obj_json(o), deleted);
}

static void relist(rt_slurm *s)
{
    const char *res[] = {"pods", s->k_podgroups, "services"};

    for (int r = 0; r < 3; r++) {
        kc_list l = {0};
        ty_error err;
        ty_error_init(&err);
        if (kc_list_objects(s->kc, res[r], NULL, &l, &err) < 0) {
            ty_warn("slurm: cannot list %s: %s", res[r], err.text);
            ty_error_clear(&err);
            continue;
        }
        if (r == 1)
            json_object_clear(s->groups);
        if (r == 2)
            rt_hosts_clear(s->hosts);
        for (size_t i = 0; i < l.n; i++) {
            if (r == 0) {
                pod_seen(s, l.items[i], false);
                rt_hosts_put_pod(s->hosts, ty_obj_json(l.items[i]), false);
            } else if (r == 1) {
                group_seen(s, l.items[i], false);
            } else {
                service_seen(s, l.items[i], false);
            }
        }
        kc_list_free(&l);
    }
}

static void take_events(rt_slurm *s)
{
    size_t n = 0;
    bool again = false;
    kc_event *ev = ak_watch_take(s->w, &n, &again);

    for (size_t i = 0; i < n; i++) {
        bool del = ev[i].type == KC_DELETED;
        if (ev[i].type == KC_BOOKMARK || !ev[i].obj)
            goto next;
        if (!strcmp(ev[i].resource, "pods")) {
            pod_seen(s, ev[i].obj, del);
            rt_hosts_put_pod(s->hosts, ty_obj_json(ev[i].obj), del);
        } else if (!strcmp(ev[i].resource, s->k_podgroups)) {
            group_seen(s, ev[i].obj, del);
        } else if (!strcmp(ev[i].resource, "services")) {
            service_seen(s, ev[i].obj, del);
        }
    next:
        kc_event_release(&ev[i]);
    }
    free(ev);
    if (again)
        relist(s);
}

/* ---- the thread ---- */

static void *agent_main(void *arg)
{
    rt_slurm *s = arg;

    relist(s);
    while (!atomic_load(&s->stop)) {
        int64_t now = ty_now_ms(), wait;
        struct pollfd pfd = {.fd = s->wake_fd, .events = POLLIN};
        uint64_t v;

        if (now >= s->next_nodes_ms) {
            sl_refresh_nodes(s);
            s->next_nodes_ms = now + NODES_EVERY_MS;
        }
        if (now >= s->next_sweep_ms) {
            /* the logs of pods gone longer than the retention period */
            rt_logs_sweep(s->kc, s->shared, RT_LOG_RETENTION_DEFAULT_MS, rt_logs_wall_ms());
            s->next_sweep_ms = now + SWEEP_EVERY_MS;
        }
        if (now >= s->next_sync_ms) {
            s->fast = false;
            sl_sync(s);
            if (s->synced_once)
                sl_submit_ready(s);
            sl_start_ready(s);
            s->next_sync_ms = ty_now_ms() + (s->fast ? SYNC_FAST_MS : SYNC_MS);
            s->next_submit_ms = 0;
        } else if (s->next_submit_ms && now >= s->next_submit_ms) {
            /* new pods: submitted without waiting for the tick */
            s->next_submit_ms = 0;
            if (s->synced_once)
                sl_submit_ready(s);
        }
        int64_t next = s->next_submit_ms && s->next_submit_ms < s->next_sync_ms
                           ? s->next_submit_ms
                           : s->next_sync_ms;
        wait = next - ty_now_ms();
        if (wait < 0)
            wait = 0;
        struct pollfd pfds[2] = {pfd, {.fd = s->ino_fd, .events = POLLIN}};
        if (poll(pfds, s->ino_fd >= 0 ? 2 : 1, (int)(wait > 1000 ? 1000 : wait)) <= 0)
            continue;
        if (pfds[0].revents & POLLIN) {
            if (read(s->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                ty_debug("slurm: wake: %s", strerror(errno));
            take_events(s);
            /* New pods may complete a gang: a short wait lets the rest of
             * the controller's burst arrive first. */
            if (!s->next_submit_ms)
                s->next_submit_ms = ty_now_ms() + SUBMIT_BATCH_MS;
        }
        if (s->ino_fd >= 0 && (pfds[1].revents & POLLIN)) {
            char buf[4096] __attribute__((aligned(8)));
            while (read(s->ino_fd, buf, sizeof(buf)) > 0)
                ;
            sl_start_ready(s);
        }
    }
    return NULL;
}

/* mpirun's rsh agent on Slurm: the command runs in the target pod, on its
 * node, through this pod's supervisor (runtime/local/sv_exec.c: an srun
 * step of the same job). Static text, as mpi_agent_register wants; the
 * supervisor's path is this server's. */
static char mpi_agent[PATH_MAX * 2 + 1024];

static void register_mpi_agent(const rt_slurm *s)
{
    snprintf(mpi_agent, sizeof(mpi_agent),
             "#!/bin/sh\n"
             "# rsh agent for mpirun on Slurm: kubexec.sh [ssh options] <host> <command...>\n"
             "# runs the command in the pod <host> names, where Slurm runs it.\n"
             MPI_AGENT_SKIP_SSH_OPTIONS
             "host=$1\n"
             "shift\n"
             "exec %s%s --exec \"$host\" -- /bin/sh -c \"$*\"\n",
             *s->sup ? s->sup : s->exe, *s->sup ? "" : " supervise");
    mpi_agent_register(mpi_agent);
}

/* The id that marks this server's Slurm jobs (their comments), made once
 * and kept in the data directory: a second Trainyard on the same cluster
 * never adopts or cancels them. */
static int load_instance(rt_slurm *s, const char *data_dir, ty_error *err)
{
    char path[PATH_MAX + 32], buf[64];
    size_t len = 0;
    char *text;

    snprintf(path, sizeof(path), "%s/slurm-instance", data_dir);
    if ((text = rt_read_file(path, 64, &len)) && len >= 8) {
        snprintf(s->inst, sizeof(s->inst), "%.*s", (int)strcspn(text, "\n"), text);
        free(text);
        return 0;
    }
    free(text);
    unsigned char rnd[8];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd)) {
        if (fd >= 0)
            close(fd);
        return ty_seterr(err, TY_EINTERNAL, "cannot read /dev/urandom");
    }
    close(fd);
    for (int i = 0; i < 8; i++)
        snprintf(buf + 2 * i, 3, "%02x", rnd[i]);
    snprintf(s->inst, sizeof(s->inst), "%.16s", buf);
    snprintf(buf + 16, sizeof(buf) - 16, "\n");
    if (rt_write_durable(path, buf, strlen(buf), 0600) < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

static void slurm_free(rt_slurm *s)
{
    if (!s)
        return;
    ak_watch_free(s->w);
    if (s->wake_fd >= 0)
        close(s->wake_fd);

    while (s->nall)
        forget(s, s->all[s->nall - 1]);
    if (s->ino_fd >= 0)
        close(s->ino_fd);
    free(s->all);
    strmap_free(&s->pods);
    json_decref(s->groups);
    if (s->hosts)
        rt_hosts_free(s->hosts);
    for (size_t i = 0; s->names && s->names[i]; i++)
        free(s->names[i]);
    free(s->names);
    free(s->partitions);
    free(s->account);
    free(s->qos);
    free(s->nodes);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* trainyard on the nodes (this binary unless told), and beside it the
 * bind shim and the small supervisor (it starts faster than the whole of
 * trainyard); either may be missing. */
static int find_binaries(rt_slurm *s, const char *self_exe, ty_error *err)
{
    if (self_exe && *self_exe) {
        snprintf(s->exe, sizeof(s->exe), "%s", self_exe);
    } else {
        ssize_t len = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
        if (len <= 0) {
            ty_seterr(err, TY_EINTERNAL, "cannot find this program's path");
            return -1;
        }
        s->exe[len] = '\0';
    }
    /* Beside the binary: the bind shim, and the small supervisor (it starts
     * faster than the whole of trainyard). */
    snprintf(s->shim, sizeof(s->shim), "%s", s->exe);
    snprintf(s->sup, sizeof(s->sup), "%s", s->exe);
    char *slash = strrchr(s->shim, '/');
    if (slash) {
        size_t at = (size_t)(slash + 1 - s->shim);
        snprintf(s->shim + at, sizeof(s->shim) - at, "libtybind.so");
        snprintf(s->sup + at, sizeof(s->sup) - at, "trainyard-supervise");
    }
    if (access(s->shim, R_OK) < 0)
        s->shim[0] = '\0';
    if (access(s->sup, X_OK) < 0)
        s->sup[0] = '\0';
    return 0;
}

static char *dup_or_null(const char *v)
{
    return v && *v ? strdup(v) : NULL;
}

static void *slurm_start(ty_kc *kc, const void *opts, ty_error *err)
{
    const rt_slurm_opts *o = opts;
    static const char *const defaults[] = {"volcano", "default-scheduler", NULL};
    const char *const *names = o->sched_names && o->sched_names[0] ? o->sched_names : defaults;
    rt_slurm *s = calloc(1, sizeof(*s));
    char path[PATH_MAX + 32];
    size_t n = 0;

    if (!s) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    s->wake_fd = s->ino_fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    strmap_init(&s->pods);
    s->kc = kc;
    s->groups = json_object();
    s->hosts = rt_hosts_new();
    s->partitions = dup_or_null(o->partitions);
    s->account = dup_or_null(o->account);
    s->qos = dup_or_null(o->qos);
    s->port_min = o->port_min > 0 ? o->port_min : 20000;
    s->port_max = o->port_max > 0 ? o->port_max : 32767;
    while (names[n])
        n++;
    s->names = calloc(n + 1, sizeof(*s->names));
    for (size_t i = 0; s->names && i < n; i++)
        s->names[i] = strdup(names[i]);
    snprintf(s->k_podgroups, sizeof(s->k_podgroups), "%s", api_store_key(&api_podgroup));
    if (!s->groups || !s->hosts || !s->names) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto fail;
    }
    if (!o->shared_dir || o->shared_dir[0] != '/') {
        ty_seterr(err, TY_EINVALID, "the Slurm runtime needs an absolute shared directory");
        goto fail;
    }
    snprintf(s->shared, sizeof(s->shared), "%s", o->shared_dir);
    if (find_binaries(s, o->self_exe, err) < 0)
        goto fail;
    register_mpi_agent(s);
    for (int i = 0; i < 3; i++) {
        static const char *const sub[] = {"pods", "logs", "slurm"};
        snprintf(path, sizeof(path), "%s/%s", s->shared, sub[i]);
        if (rt_mkdirs_mode(path, 0700) < 0) {
            ty_seterr(err, TY_EINTERNAL, "cannot make %s: %s", path, strerror(errno));
            goto fail;
        }
    }
    if (load_instance(s, o->data_dir ? o->data_dir : s->shared, err) < 0)
        goto fail;
    /* The cluster must answer before the server says it is up. */
    sl_refresh_nodes(s);
    pthread_mutex_lock(&s->mu);
    n = s->nnodes;
    pthread_mutex_unlock(&s->mu);
    if (!n) {
        ty_seterr(err, TY_EINVALID,
                  "the Slurm cluster shows no nodes%s%s (is SLURM_CONF right? sinfo -N)",
                  s->partitions ? " in partition " : "", s->partitions ? s->partitions : "");
        goto fail;
    }
    s->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC); /* -1: the tick alone */
    if ((s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        ty_seterr(err, TY_EINTERNAL, "eventfd: %s", strerror(errno));
        goto fail;
    }
    const char *watch[] = {"pods", s->k_podgroups, "services", NULL};
    if (!(s->w = ak_watch_start(kc, watch, s->wake_fd, 0, "ty-slurm-watch", err)))
        goto fail;
    s->next_nodes_ms = ty_now_ms() + NODES_EVERY_MS;
    if (pthread_create(&s->thread, NULL, agent_main, s) != 0) {
        ty_seterr(err, TY_EINTERNAL, "cannot start the Slurm agent thread");
        ak_watch_stop(s->w);
        goto fail;
    }
    ty_thread_setup(s->thread, "ty-slurm", TY_THREAD_BACKGROUND);
    ty_info("slurm: %zu nodes%s%s; shared directory %s; jobs marked ty:%s", n,
            s->partitions ? " in " : "", s->partitions ? s->partitions : "", s->shared, s->inst);
    return s;
fail:
    slurm_free(s);
    return NULL;
}

static void slurm_stop(void *impl)
{
    rt_slurm *s = impl;

    if (!s)
        return;
    atomic_store(&s->stop, true);
    ak_watch_stop(s->w);
    uint64_t one = 1;
    if (write(s->wake_fd, &one, sizeof(one)) < 0)
        ty_debug("slurm: wake: %s", strerror(errno));
    pthread_join(s->thread, NULL);
    slurm_free(s);
}

static json_t *slurm_nodes(void *impl)
{
    rt_slurm *s = impl;
    json_t *out = json_array();

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; out && i < s->nnodes; i++) {
        json_t *inv = ak_node_inventory(s->kc, s->nodes[i].name);
        if (inv)
            json_array_append_new(out, inv);
    }
    pthread_mutex_unlock(&s->mu);
    return out;
}

static bool slurm_owns_node(void *impl, const char *node)
{
    sl_node tmp;
    return sl_node_find(impl, node, &tmp) != NULL;
}

/* ---- logs: the supervisors write them under the shared directory in the
 * local runtime's format ---- */

static rt_log *slurm_log_open(void *impl, const char *ns, const char *pod, const char *container,
                              bool previous, long tail_lines, ty_error *err)
{
    return rt_local_log_open(((rt_slurm *)impl)->shared, ns, pod, container, previous,
                             tail_lines, err);
}

static json_t *slurm_log_containers(void *impl, const char *ns, const char *pod)
{
    return rt_local_log_containers(((rt_slurm *)impl)->shared, ns, pod);
}

static json_t *slurm_log_retained(void *impl, const char *ns)
{
    return rt_logs_retained(((rt_slurm *)impl)->shared, ns);
}

const rt_backend_ops rt_slurm_backend = {
    .name = "slurm",
    .start = slurm_start,
    .stop = slurm_stop,
    .nodes = slurm_nodes,
    .owns_node = slurm_owns_node,
    .finalizer = SL_FINALIZER,
    .log_open = slurm_log_open,
    .log_gets = rt_local_log_gets,
    .log_rotated = rt_local_log_rotated,
    .log_close = rt_local_log_close,
    .log_containers = slurm_log_containers,
    .log_retained = slurm_log_retained,
};
