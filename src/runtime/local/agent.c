/* agent.c - the node agent thread: the Node, the table of pods it runs,
 * the loop that reacts to what wakes it and the adoption of pods left by an
 * earlier agent.
 *
 * One thread does everything. It sleeps until something happens (see
 * agent_watch.c: store events for pods, services and nodes; a pod's
 * state.json renamed into place; a supervisor's exit; the next timer), then
 * reconciles the pods the store events touched, reads the state.json of the
 * pods that were signalled, rewrites the hosts files of namespaces whose
 * names or addresses changed, and now and then beats the Node's heartbeat,
 * reads every pod's state (the sweep) and rescans the store. Everything stays
 * level-triggered: a missed event is repaired by the next sweep or rescan. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/timeutil.h"
#include "base/thread.h"
#include "runtime/local/agent.h"

#define SWEEP_MS 2000       /* every state.json read, whatever woke us */
#define HEARTBEAT_MS 10000
#define GPU_CHECK_MS 2000    /* GPU health and idle GPUs, from the last sample */
#define GPU_SAMPLE_MS 2000   /* NVML readings: DCGM exporter scrapes are 15-30 s */
#define DISK_CHECK_MS 2000  /* free space of the data directory (statvfs) */
#define RESYNC_MS 30000
#define LOG_SWEEP_MS 60000  /* at most: a quarter of the log retention when shorter */
#define MAX_PODS 100000

/* ---- the pod table ---- */

rt_pod *agent_find(rt_local *rt, const char *uid)
{
    return strmap_get(&rt->by_uid, uid);
}

static int push(rt_pod ***v, size_t *n, size_t *cap, rt_pod *p)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        rt_pod **nv = realloc(*v, ncap * sizeof(*nv));
        if (!nv)
            return -1;
        *v = nv;
        *cap = ncap;
    }
    p->slot = *n;
    (*v)[(*n)++] = p;
    return 0;
}

static void pull(rt_pod **v, size_t *n, rt_pod *p)
{
    size_t i = p->slot;

    if (i >= *n || v[i] != p)
        return;
    v[i] = v[--*n];
    if (i < *n)
        v[i]->slot = i;
}

/* Finished entries leave rt->pods: nothing is left to do for them until the
 * pod is deleted, and rt->pods is what every wake-up walks. */
static void park(rt_local *rt, rt_pod *p)
{
    if (p->parked)
        return;
    pull(rt->pods, &rt->npods, p);
    if (push(&rt->idle, &rt->nidle, &rt->idle_cap, p) < 0) {
        push(&rt->pods, &rt->npods, &rt->cap, p); /* room was there a moment ago */
        return;
    }
    p->parked = true;
}

static void unpark(rt_local *rt, rt_pod *p)
{
    if (!p->parked)
        return;
    pull(rt->idle, &rt->nidle, p);
    if (push(&rt->pods, &rt->npods, &rt->cap, p) < 0) {
        push(&rt->idle, &rt->nidle, &rt->idle_cap, p);
        return;
    }
    p->parked = false;
    p->poll_due = true; /* whatever woke it (a deletion) is handled now */
}

void agent_note_state(rt_local *rt, rt_pod *p)
{
    bool live = !p->killing && !p->finished;

    if (rt_hosts_set_local(rt->hosts, p->ns, p->uid, live && *p->ip ? p->ip : NULL))
        json_object_set_new(rt->dirty_ns, p->ns, json_true());
    /* A status not yet written keeps it where the sweep retries it. */
    if (p->finished && !p->killing && !p->status_pending)
        park(rt, p);
    else
        unpark(rt, p);
}

static int write_identity(rt_pod *p)
{
    char path[PATH_MAX + 16];
    json_t *meta = json_pack("{s:s, s:s, s:s}", "uid", p->uid, "namespace", p->ns, "name",
                             p->name);
    int rc;

    snprintf(path, sizeof(path), "%s/meta.json", p->dir);
    rc = rt_save_json(path, meta);
    json_decref(meta);
    snprintf(path, sizeof(path), "%s/ip", p->dir);
    if (rc == 0)
        rc = rt_write_atomic(path, p->ip, strlen(p->ip), 0644);
    return rc;
}

static rt_pod *new_entry(rt_local *rt, const char *uid, const char *ns, const char *name)
{
    rt_pod *p;

    if (rt->npods + rt->nidle >= MAX_PODS || strlen(uid) >= sizeof(p->uid) ||
        strchr(uid, '/') || !*uid || strlen(ns) >= sizeof(p->ns) ||
        strlen(name) >= sizeof(p->name) || agent_find(rt, uid))
        return NULL;
    if (!(p = calloc(1, sizeof(*p))))
        return NULL;
    snprintf(p->uid, sizeof(p->uid), "%s", uid);
    snprintf(p->ns, sizeof(p->ns), "%s", ns);
    snprintf(p->name, sizeof(p->name), "%s", name);
    snprintf(p->dir, sizeof(p->dir), "%s/pods/%s", rt->data_dir, uid);
    p->wd = p->pidfd = -1;
    if (push(&rt->pods, &rt->npods, &rt->cap, p) < 0) {
        free(p);
        return NULL;
    }
    if (strmap_put(&rt->by_uid, p->uid, p) < 0) {
        pull(rt->pods, &rt->npods, p);
        free(p);
        return NULL;
    }
    return p;
}

rt_pod *agent_add(rt_local *rt, const char *uid, const char *ns, const char *name)
{
    rt_pod *p = new_entry(rt, uid, ns, name);

    if (!p)
        return NULL;
    addr_take(rt, p);
    if (!*p->ip || rt_mkdirs_mode(p->dir, 0700) < 0 || write_identity(p) < 0) {
        ty_warn("runtime: cannot prepare %s for pod %s/%s: %s", p->dir, ns, name,
                strerror(errno));
        agent_remove(rt, p);
        return NULL;
    }
    agent_note_state(rt, p);
    return p;
}

void agent_remove(rt_local *rt, rt_pod *p)
{
    agent_untrack(rt, p);
    if (rt_hosts_set_local(rt->hosts, p->ns, p->uid, NULL))
        json_object_set_new(rt->dirty_ns, p->ns, json_true());
    strmap_del(&rt->by_uid, p->uid);
    addr_forget(rt, p);
    if (p->parked)
        pull(rt->idle, &rt->nidle, p);
    else
        pull(rt->pods, &rt->npods, p);
    json_decref(p->state);
    free(p->state_text);
    free(p);
}

/* ---- adoption: pod directories left by an earlier agent ---- */

static void adopt(rt_local *rt)
{
    char path[PATH_MAX];
    struct dirent *d;
    DIR *dir;

    snprintf(path, sizeof(path), "%s/pods", rt->data_dir);
    if (!(dir = opendir(path)))
        return;
    while ((d = readdir(dir))) {
        char meta_path[PATH_MAX + 300];
        json_t *meta;
        rt_pod *p;
        if (d->d_name[0] == '.')
            continue;
        snprintf(meta_path, sizeof(meta_path), "%s/%s/meta.json", path, d->d_name);
        meta = rt_load_json(meta_path);
        if (!meta || strcmp(ty_jstr(meta, "uid"), d->d_name) ||
            !(p = new_entry(rt, d->d_name, ty_jstr(meta, "namespace"), ty_jstr(meta, "name")))) {
            json_decref(meta);
            continue; /* not ours or damaged: left alone */
        }
        json_decref(meta);
        pod_load_adopted(rt, p);
        addr_adopt(rt, p);
        agent_note_state(rt, p);
        if (p->started && !p->finished) {
            agent_track_dir(rt, p);
            agent_track_sup(rt, p);
            p->poll_due = true; /* what it wrote while nobody watched */
        }
        json_object_set_new(rt->dirty, p->uid, json_pack("{s:s, s:s}", "ns", p->ns, "name",
                                                         p->name));
    }
    closedir(dir);
}

/* ---- store events ---- */

bool agent_stopping(rt_local *rt)
{
    return atomic_load_explicit(&rt->stop, memory_order_relaxed);
}

static void mark_pod(rt_local *rt, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = ty_jstr(meta, "uid");

    if (!*uid)
        return;
    if (!agent_find(rt, uid) &&
        strcmp(ty_jstr(json_object_get(pod, "spec"), "nodeName"), rt->node_name))
        return;
    json_object_set_new(rt->dirty, uid, json_pack("{s:s, s:s}", "ns", ty_jstr(meta, "namespace"),
                                                  "name", ty_jstr(meta, "name")));
}

static void apply_event(rt_local *rt, const kc_event *ev)
{
    const json_t *obj = ty_obj_json(ev->obj);
    const char *ns = ty_jmeta(obj, "namespace");

    /* Most pod updates are status only: they change no hosts file, and
     * must not cost a rewrite of every hosts file of the namespace each. */
    if (!strcmp(ev->resource, "pods")) {
        mark_pod(rt, obj);
        if (rt_hosts_put_pod(rt->hosts, obj, ev->type == KC_DELETED))
            json_object_set_new(rt->dirty_ns, ns, json_true());
        /* Before any pod this batch binds starts (reconcile_dirty). */
        addr_note_pod(rt, obj, ev->type == KC_DELETED);
    } else if (!strcmp(ev->resource, "services")) {
        if (rt_hosts_put_service(rt->hosts, obj, ev->type == KC_DELETED))
            json_object_set_new(rt->dirty_ns, ns, json_true());
    } else if (!strcmp(ev->resource, "nodes") && ev->type == KC_DELETED &&
               !strcmp(ty_jmeta(obj, "name"), rt->node_name)) {
        rt->next_beat_ms = 0; /* registers again */
    }
}

static void resync(rt_local *rt);

static void take_events(rt_local *rt)
{
    bool again;
    size_t n;
    kc_event *q = agent_take_queue(rt, &n, &again);

    for (size_t i = 0; i < n; i++) {
        apply_event(rt, &q[i]);
        kc_event_release(&q[i]);
    }
    free(q);
    if (again)
        resync(rt);
}

static void reconcile_dirty(rt_local *rt)
{
    json_t *dirty = rt->dirty, *v;
    const char *uid;

    rt->dirty = json_object();
    json_object_foreach(dirty, uid, v) {
        rt_pod *p = agent_find(rt, uid);
        ty_obj *o;
        if (agent_stopping(rt))
            break; /* level-triggered: the next agent redoes what is left */
        if (p) {
            pod_reconcile(rt, p);
            continue;
        }
        o = kc_get(rt->s, "pods", ty_jstr(v, "ns"), ty_jstr(v, "name"), NULL);
        if (o && !strcmp(ty_jmeta(ty_obj_json(o), "uid"), uid) &&
            !strcmp(ty_jstr(json_object_get(ty_obj_json(o), "spec"), "nodeName"),
                    rt->node_name))
            pod_new_object(rt, ty_obj_json(o));
        ty_obj_unref(o);
    }
    json_decref(dirty);
}

static void mark_entry(rt_local *rt, rt_pod *p)
{
    json_object_set_new(rt->dirty, p->uid, json_pack("{s:s, s:s}", "ns", p->ns, "name", p->name));
    json_object_set_new(rt->dirty_ns, p->ns, json_true());
    p->hosts_gen = 0; /* compare its hosts file again */
}

/* Every pod bound here, and every entry, goes through reconcile; the hosts
 * table is loaded again from the store (events may have been missed) and
 * every namespace with an entry gets its hosts files checked. */
static void resync(rt_local *rt)
{
    kc_list_opts all = {0};
    kc_list l;

    rt_hosts_clear(rt->hosts);
    if (kc_list_objects(rt->s, "pods", &all, &l, NULL) == 0) {
        for (size_t i = 0; i < l.n; i++) {
            const json_t *pod = ty_obj_json(l.items[i]);
            rt_hosts_put_pod(rt->hosts, pod, false);
            mark_pod(rt, pod);
        }
        addr_note_listing(rt, l.items, l.n);
        kc_list_free(&l);
    }
    if (kc_list_objects(rt->s, "services", &all, &l, NULL) == 0) {
        for (size_t i = 0; i < l.n; i++)
            rt_hosts_put_service(rt->hosts, ty_obj_json(l.items[i]), false);
        kc_list_free(&l);
    }
    for (size_t i = 0; i < rt->npods; i++)
        mark_entry(rt, rt->pods[i]);
    for (size_t i = 0; i < rt->nidle; i++)
        mark_entry(rt, rt->idle[i]);
    rt->next_resync_ms = ty_now_ms() + RESYNC_MS;
}

/* ---- supervisors ---- */

/* Whose processes may still read their hosts file. */
static bool pod_live(const rt_pod *p)
{
    return !p->killing && !p->finished;
}

static void rewrite_hosts(rt_local *rt)
{
    json_t *dirty = rt->dirty_ns, *v;
    const char *ns;

    rt->dirty_ns = json_object();
    json_object_foreach(dirty, ns, v) {
        if (agent_stopping(rt))
            break;
        /* The lines are rendered once per namespace (rt_hosts_body caches
         * them), and a file already showing them is not touched. A pod that
         * has finished reads no hosts file any more (it is not even in
         * rt->pods); one not started yet gets its file when it starts. */
        for (size_t i = 0; i < rt->npods; i++)
            if (!strcmp(rt->pods[i]->ns, ns) && pod_live(rt->pods[i]) && rt->pods[i]->started)
                pod_write_hosts(rt, rt->pods[i]);
    }
    json_decref(dirty);
}

/* Reads the state of pods that were signalled, or of every pod when the
 * sweep is due; retries and forced kills whose time has come. */
static void poll_pods(rt_local *rt)
{
    int64_t now = ty_now_ms();
    bool sweep = now >= rt->next_sweep_ms;

    if (sweep)
        rt->next_sweep_ms = now + rt->sweep_ms;
    /* Backwards: pod_poll may remove the entry it is given. */
    for (size_t i = rt->npods; i-- > 0 && !agent_stopping(rt);) {
        rt_pod *p;
        if (i >= rt->npods)
            continue;
        p = rt->pods[i];
        if (sweep || p->poll_due || (p->killing && now >= p->force_at_ms) ||
            (!p->started && !p->killing && now >= p->retry_at_ms) ||
            (p->killing && (!p->started || p->finished))) {
            p->poll_due = false;
            pod_poll(rt, p);
        }
    }
}

/* How long the agent may sleep: until the next timer of any kind. */
static int sleep_ms(rt_local *rt)
{
    int64_t now = ty_now_ms(), next = rt->next_sweep_ms;

    if (rt->next_beat_ms < next)
        next = rt->next_beat_ms;
    if (rt->next_resync_ms < next)
        next = rt->next_resync_ms;
    if (rt->log_retention_ms > 0 && rt->next_log_sweep_ms < next)
        next = rt->next_log_sweep_ms;
    if (rt->next_disk_ms < next)
        next = rt->next_disk_ms;
    if (rt->ngpus > 0 && rt->next_gpu_ms < next)
        next = rt->next_gpu_ms;
    for (size_t i = 0; i < rt->npods; i++) {
        const rt_pod *p = rt->pods[i];
        if (p->poll_due)
            return 0;
        if (p->killing && p->started && !p->finished && p->force_at_ms < next)
            next = p->force_at_ms;
        if (!p->started && !p->killing && p->retry_at_ms < next)
            next = p->retry_at_ms;
    }
    if (json_object_size(rt->dirty) || json_object_size(rt->dirty_ns))
        return 0; /* left over by a pass cut short */
    return next <= now ? 0 : next - now > INT32_MAX ? INT32_MAX : (int)(next - now);
}

/* DiskPressure on the Node while the data directory's file system has less
 * free space than --disk-free-min; written only when it changes. */
static void check_disk(rt_local *rt)
{
    long long avail = 0;
    int now = rt_disk_pressure(rt->data_dir, &rt->disk_min, &avail);
    ty_error err;

    if (now < 0 || now == rt->disk_state)
        return;
    ty_error_init(&err);
    if (rt_node_set_disk_pressure(rt->s, rt->node_name, now == 1, &err) < 0) {
        ty_warn("runtime: cannot set DiskPressure=%s on node %s: %s", now ? "True" : "False",
                rt->node_name, err.text);
    } else {
        if (now || rt->disk_state == 1)
            ty_warn("runtime: %s: %lld bytes free: DiskPressure=%s", rt->data_dir, avail,
                    now ? "True" : "False");
        rt->disk_state = now;
    }
    ty_error_clear(&err);
}

static void housekeeping(rt_local *rt)
{
    int64_t now = ty_now_ms();
    ty_error err;

    if (now >= rt->next_beat_ms) {
        ty_error_init(&err);
        if (rt_node_heartbeat(rt->s, rt->node_name, &err) < 0) {
            ty_error_clear(&err);
            if (rt_node_register(rt->s, rt->node_name, rt->gpus, &err) < 0)
                ty_warn("runtime: cannot register node %s: %s", rt->node_name, err.text);
            rt->disk_state = -1; /* registered afresh: written again */
            rt->gpu_health_written = false;
            rt->gpu_report_hash = 0; /* and its GPU annotation */
        }
        ty_error_clear(&err);
        rt->next_beat_ms = now + HEARTBEAT_MS;
    }
    if (now >= rt->next_resync_ms)
        resync(rt);
    if (rt->log_retention_ms > 0 && now >= rt->next_log_sweep_ms) {
        int64_t every = rt->log_retention_ms / 4;
        rt_logs_sweep(rt->s, rt->data_dir, rt->log_retention_ms, rt_logs_wall_ms());
        rt->next_log_sweep_ms = now + (every < 100 ? 100 : every > LOG_SWEEP_MS ? LOG_SWEEP_MS
                                                                              : every);
    }
    if (now >= rt->next_gpu_ms) {
        agent_check_gpus(rt);
        rt->next_gpu_ms = now + GPU_CHECK_MS;
    }
    if (now >= rt->next_disk_ms) {
        check_disk(rt);
        rt->next_disk_ms = now + DISK_CHECK_MS;
    }
}

static void *agent_main(void *arg)
{
    rt_local *rt = arg;

    while (!agent_stopping(rt)) {
        agent_wait(rt, sleep_ms(rt));
        take_events(rt);
        reconcile_dirty(rt);
        poll_pods(rt);
        if (json_object_size(rt->dirty_ns))
            rewrite_hosts(rt);
        if (!agent_stopping(rt))
            housekeeping(rt);
    }
    return NULL;
}

/* ---- start / stop ---- */

static char *abs_path(const char *path)
{
    char buf[PATH_MAX];
    return realpath(path, buf) ? strdup(buf) : NULL;
}

/* The data directory holds the store, the credentials and every pod's
 * files. Pods run as other uids and need no path into it: their volumes,
 * hosts file and /tmp reach them as bind mounts. So when we are root it is
 * closed (0700), and pods/ and logs/ too, whatever an earlier version or
 * `mkdir` left. */
static void close_data_dir(const char *dir)
{
    const char *subs[] = {"", "/pods", "/logs"};
    char path[PATH_MAX];
    struct stat st;

    if (geteuid() != 0)
        return;
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", dir, subs[i]);
        if (rt_mkdirs_mode(path, 0700) < 0 || stat(path, &st) < 0)
            continue;
        if ((st.st_mode & 077) && chmod(path, st.st_mode & 07700) == 0 && !*subs[i])
            ty_info("runtime: data directory %s was mode %04o, now %04o: pods must not read "
                    "it", path, (unsigned)(st.st_mode & 07777), (unsigned)(st.st_mode & 07700));
        if (!*subs[i] && st.st_uid != 0)
            ty_warn("runtime: data directory %s belongs to uid %u: a pod running as that uid "
                    "could read the store; give it to root", path, (unsigned)st.st_uid);
    }
}

/* The small supervisor program beside the server binary; NULL = run the
 * server binary's own `supervise` command. */
static char *find_supervisor(const char *exe)
{
    char buf[PATH_MAX];
    const char *slash = strrchr(exe, '/');

    snprintf(buf, sizeof(buf), "%.*s/trainyard-supervise", slash ? (int)(slash - exe) : 1,
             slash ? exe : ".");
    return access(buf, X_OK) == 0 ? strdup(buf) : NULL;
}

/* Whether any uid can read path: the file readable by others and every
 * directory above it searchable. Pods run as their own uids and preload the
 * shim from here. */
static bool readable_by_all(const char *path)
{
    char buf[PATH_MAX], *slash;
    struct stat st;

    snprintf(buf, sizeof(buf), "%s", path);
    if (stat(buf, &st) < 0 || !(st.st_mode & S_IROTH))
        return false;
    while ((slash = strrchr(buf, '/')) && slash != buf) {
        *slash = '\0';
        if (stat(buf, &st) < 0 || !(st.st_mode & S_IXOTH))
            return false;
    }
    return true;
}

static char *find_shim(const char *exe)
{
    char buf[PATH_MAX];
    const char *slash = strrchr(exe, '/');

    snprintf(buf, sizeof(buf), "%.*s/libtybind.so", slash ? (int)(slash - exe) : 1,
             slash ? exe : ".");
    if (access(buf, R_OK) < 0) {
        ty_warn("runtime: %s not found: pods bind wildcard addresses on the host", buf);
        return NULL;
    }
    if (strncmp(buf, "/tmp/", 5) == 0) {
        /* each pod has a private /tmp (sv_mount.c): its loader would not
         * find the file, and every log would start with ld.so's error */
        ty_warn("runtime: %s is under /tmp, which pods see as their own: they cannot preload "
                "it and bind wildcard addresses on the host; install trainyard outside /tmp",
                buf);
        return NULL;
    }
    if (geteuid() == 0 && !readable_by_all(buf))
        ty_warn("runtime: %s cannot be read by other users: pods that are not root cannot "
                "preload it (their wildcard binds stay on the host); install trainyard where "
                "every user can read it", buf);
    return strdup(buf);
}

static int backoff_base(const rt_local_opts *o)
{
    const char *env = getenv("TY_RESTART_BACKOFF_MS");
    long v;

    if (o->restart_backoff_ms > 0)
        return o->restart_backoff_ms;
    v = env ? strtol(env, NULL, 10) : 0;
    return v > 0 && v <= RT_MAX_BACKOFF_MS ? (int)v : RT_DEFAULT_BACKOFF_MS;
}

/* The GPUs' series on /metrics, read at each scrape (metrics.h). */
static void render_gpus(ty_buf *out, void *arg)
{
    rt_local *rt = arg;

    rt_gpus_render(rt->gpus, rt->node_name, out);
}

static void free_rt(rt_local *rt)
{
    /* First: a scrape under way finishes before the reader goes. */
    ty_metrics_remove_collector(render_gpus, rt);
    while (rt->npods)
        agent_remove(rt, rt->pods[rt->npods - 1]);
    while (rt->nidle)
        agent_remove(rt, rt->idle[rt->nidle - 1]);
    free(rt->pods);
    free(rt->idle);
    strmap_free(&rt->by_uid);
    addr_free_all(rt);
    rt_hosts_free(rt->hosts);
    agent_watch_free(rt);
    json_decref(rt->dirty);
    json_decref(rt->dirty_ns);
    free(rt->data_dir);
    free(rt->node_name);
    free(rt->self_exe);
    free(rt->supervisor_exe);
    free(rt->shim);
    rt_gpus_close(rt->gpus);
    free(rt);
}

static int init_rt(rt_local *rt, const rt_local_opts *o, ty_error *err)
{
    char host[256] = "localhost";

    if (!o || !o->data_dir)
        return ty_seterr(err, TY_EINVALID, "runtime: no data directory");
    rt_mkdirs(o->data_dir);
    gethostname(host, sizeof(host) - 1);
    rt->data_dir = abs_path(o->data_dir);
    if (rt->data_dir)
        close_data_dir(rt->data_dir);
    rt->node_name = strdup(o->node_name && *o->node_name ? o->node_name : host);
    rt->sweep_ms = o->sweep_ms > 0 ? o->sweep_ms : SWEEP_MS;
    rt->self_exe = abs_path(o->self_exe ? o->self_exe : "/proc/self/exe");
    if (!rt->data_dir || !rt->node_name || !rt->self_exe)
        return ty_seterr(err, TY_EINVALID, "runtime: bad data directory or trainyard binary: %s",
                         strerror(errno));
    rt->shim = find_shim(rt->self_exe);
    rt->supervisor_exe = find_supervisor(rt->self_exe);
    if (!(rt->gpus = rt_gpus_open(o->fake_gpus)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    rt->ngpus = rt_gpus_count(rt->gpus);
    if (rt->ngpus > RT_MAX_GPUS)
        rt->ngpus = RT_MAX_GPUS;
    if (rt_gpus_start(rt->gpus, GPU_SAMPLE_MS) < 0)
        ty_warn("runtime: cannot start the GPU sampler; GPU readings stay as first read");
    if (ty_metrics_add_collector(render_gpus, rt) < 0)
        ty_warn("runtime: too many metrics collectors; no GPU series on /metrics");
    rt->gpu_idle_warn_ms = o->gpu_idle_warn_ms > 0 ? o->gpu_idle_warn_ms : 0;
    rt->backoff_ms = backoff_base(o);
    rt->log_max_bytes = o->log_max_bytes > 0 ? o->log_max_bytes : RT_LOG_MAX_DEFAULT;
    rt->log_retention_ms = o->log_retention_ms > 0 ? o->log_retention_ms : 0;
    if (rt_disk_min_parse(o->disk_free_min, &rt->disk_min, err) < 0)
        return -1;
    rt->disk_state = -1;
    snprintf(rt->host_ip, sizeof(rt->host_ip), "127.0.0.1");
    addr_init(rt);
    return rt_node_register(rt->s, rt->node_name, rt->gpus, err);
}

rt_local *rt_local_start(ty_kc *s, const rt_local_opts *o, ty_error *err)
{
    rt_local *rt = calloc(1, sizeof(*rt));

    if (!rt) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    rt->s = s;
    rt->epfd = rt->evfd = rt->infd = -1;
    rt->dirty = json_object();
    rt->dirty_ns = json_object();
    strmap_init(&rt->by_uid);
    strmap_init(&rt->by_ip);
    strmap_init(&rt->resv_by_uid);
    strmap_init(&rt->waiting);
    strmap_init(&rt->gangs);
    if (!(rt->hosts = rt_hosts_new())) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (init_rt(rt, o, err) < 0 || agent_watch_init(rt, err) < 0)
        goto error;
    /* The supervisors are not our children; no SIGCHLD of theirs reaches us,
     * but the short-lived middle process of the double fork is reaped. */
    adopt(rt);
    /* The hosts table before any pod starts (the pump's first open asks for
     * another resync: events between this listing and the watch). */
    resync(rt);
    rt->next_beat_ms = ty_now_ms() + HEARTBEAT_MS;
    rt->next_sweep_ms = ty_now_ms() + rt->sweep_ms;
    check_disk(rt); /* before the first pod is scheduled here */
    rt->next_disk_ms = ty_now_ms() + DISK_CHECK_MS;
    rt->next_resync_ms = INT64_MAX; /* the pump's first open asks for one */
    if (agent_pump_start(rt, err) < 0)
        goto error;
    if (pthread_create(&rt->thread, NULL, agent_main, rt) != 0) {
        ty_seterr(err, TY_EINTERNAL, "runtime: cannot start the agent thread");
        agent_watch_stop(rt);
        goto error;
    }
    ty_thread_setup(rt->thread, "ty-agent", TY_THREAD_INTERACTIVE);
    ty_info("runtime: node %s, %d GPU(s), %zu pod(s) adopted", rt->node_name, rt->ngpus,
            rt->npods + rt->nidle);
    return rt;
error:
    free_rt(rt);
    return NULL;
}

void rt_local_stop(rt_local *rt)
{
    if (!rt)
        return;
    /* The agent checks for this between pods, so a long pass is cut short:
     * whatever it leaves undone is redone by the next agent's resync. */
    agent_watch_stop(rt);
    pthread_join(rt->thread, NULL);
    free_rt(rt);
}

const char *rt_local_node_name(const rt_local *rt)
{
    return rt->node_name;
}
