/* agent_kit_agent.c - the kit's status writer and the agent loop for a
 * backend without one of its own (see agent_kit.h, "the agent").
 *
 * The loop is level-triggered like the built-in agents: whatever a batch of
 * watch events (or a full listing after the watch reopened) shows is acted
 * on, and what it already did is recognised by uid. */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "model/finalizers.h"
#include "runtime/agent_kit.h"
#include "runtime/backend.h"

#define DEFAULT_SYNC_MS 2000
#define GANG_ANNOTATION "scheduling.k8s.io/group-name"
#define MAX_BATCH 4096 /* pods started per call at most */

/* ---- the status writer ---- */

typedef struct report_args {
    const char *uid;
    const ak_pod_state *s;
} report_args;

static const ak_container *observed(const ak_pod_state *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->containers[i].name && !strcmp(s->containers[i].name, name))
            return &s->containers[i];
    return NULL;
}

static json_t *container_status(const json_t *spec_ct, const ak_container *c)
{
    json_t *st, *out;
    bool running = c && c->state == AK_RUNNING;

    if (running)
        st = json_pack("{s:{s:s}}", "running", "startedAt", c->started_at ? c->started_at : "");
    else if (c && c->state == AK_TERMINATED)
        st = json_pack("{s:o}", "terminated",
                       ak_terminated(c->exit_code, c->reason, c->started_at ? c->started_at : "",
                                     c->finished_at ? c->finished_at : "", c->container_id));
    else
        st = json_pack("{s:{s:s}}", "waiting", "reason",
                       c && c->reason ? c->reason : "ContainerCreating");
    if (c && c->state == AK_TERMINATED && c->message)
        json_object_set_new(json_object_get(st, "terminated"), "message",
                            json_string(c->message));
    else if (c && c->state == AK_WAITING && c->message)
        json_object_set_new(json_object_get(st, "waiting"), "message", json_string(c->message));
    out = json_pack("{s:s, s:o, s:{}, s:b, s:i, s:s, s:s, s:b}", "name", ty_jstr(spec_ct, "name"),
                    "state", st, "lastState", "ready", running, "restartCount",
                    c ? c->restart_count : 0, "image", ty_jstr(spec_ct, "image"), "imageID", "",
                    "started", running);
    if (out && c && c->container_id && *c->container_id)
        json_object_set_new(out, "containerID", json_string(c->container_id));
    return out;
}

static int report_fn(json_t *pod, void *arg, ty_error *err)
{
    const report_args *a = arg;
    const ak_pod_state *s = a->s;
    json_t *st, *list, *ct;
    bool ready = true, final;
    char now[32];
    size_t i;

    if (strcmp(ty_jmeta(pod, "uid"), a->uid))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    st = json_object_get(pod, "status");
    if (!json_is_object(st))
        json_object_set_new(pod, "status", st = json_object());
    if (ak_pod_is_final(st))
        return 0; /* an end once reported stays */
    ty_time_now(now, sizeof(now));
    final = !strcmp(s->phase, "Succeeded") || !strcmp(s->phase, "Failed");
    json_object_set_new(st, "phase", json_string(s->phase));
    if (s->host_ip && s->pod_ip)
        ak_pod_set_addresses(st, s->host_ip, s->pod_ip);
    ak_pod_set_start(st, pod, s->start_time, now);
    list = json_array();
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, ct) {
        const ak_container *c = observed(s, ty_jstr(ct, "name"));
        ready &= c && c->state == AK_RUNNING;
        json_array_append_new(list, container_status(ct, c));
    }
    json_object_set_new(st, "containerStatuses", list);
    ready &= !final;
    ak_pod_set_conditions(st, 1, ready, final, now);
    return 0;
}

int ak_pod_report(ty_kc *kc, const char *ns, const char *name, const char *uid,
                  const ak_pod_state *s, ty_error *err)
{
    report_args a = {.uid = uid, .s = s};
    ty_obj *o;

    if (!s || !s->phase)
        return ty_seterr(err, TY_EINVALID, "ak_pod_report: no phase");
    o = kc_mutate(kc, "pods", ns, name, report_fn, &a, KC_STATUS, err);
    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

/* ---- the agent ---- */

struct ak_agent {
    ty_kc *kc;
    const rt_backend_ops *ops;
    void *impl;
    int sync_ms;
    int evfd;
    ak_watch *aw;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    json_t *seen;       /* uid -> false: started here, true: stopped too */
    json_t *batch;      /* "<ns>/<gang or uid>" -> [pod, ...] to start */
};

static const char *const agent_watched[] = {"pods", NULL};

typedef struct fin_args {
    const char *uid, *finalizer;
    bool add;
} fin_args;

static int fin_fn(json_t *pod, void *arg, ty_error *err)
{
    const fin_args *a = arg;
    json_t *meta = json_object_get(pod, "metadata");

    if (strcmp(ty_jstr(meta, "uid"), a->uid))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    if (a->add && json_object_get(meta, "deletionTimestamp"))
        return ty_seterr(err, TY_ECONFLICT, "pod is being deleted");
    if (finalizer_set(pod, a->finalizer, a->add) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

static int set_finalizer(ak_agent *a, const json_t *pod, bool add, ty_error *err)
{
    const json_t *meta = json_object_get(pod, "metadata");
    fin_args f = {.uid = ty_jstr(meta, "uid"), .finalizer = a->ops->finalizer, .add = add};
    ty_obj *o;

    if (!a->ops->finalizer)
        return 0;
    o = kc_mutate(a->kc, "pods", ty_jstr(meta, "namespace"), ty_jstr(meta, "name"), fin_fn, &f, 0,
                  err);
    if (!o)
        return -1;
    ty_obj_unref(o);
    return 0;
}

static void remember(ak_agent *a, const char *uid)
{
    if (!json_object_get(a->seen, uid))
        json_object_set_new(a->seen, uid, json_false());
}

static void forget(ak_agent *a, const char *uid)
{
    json_object_del(a->seen, uid);
}

static int grace_of(const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    json_int_t g = json_integer_value(json_object_get(meta, "deletionGracePeriodSeconds"));

    if (g <= 0)
        g = json_integer_value(
            json_object_get(json_object_get(pod, "spec"), "terminationGracePeriodSeconds"));
    return g < 0 ? 0 : g > 86400 ? 86400 : (int)g;
}

/* A pod being deleted: stopped once through the backend, then released
 * (its finalizer removed, so the deletion completes) when the backend has
 * reported its end; a pod never started here, or that ended before, is
 * released at once. */
static void stop_pod(ak_agent *a, const json_t *pod, const char *uid)
{
    json_t *k = json_object_get(a->seen, uid);
    bool final = ak_pod_is_final(json_object_get(pod, "status"));
    ty_error err;

    ty_error_init(&err);
    if (k && !json_is_true(k) && !final && a->ops->pod_stop) {
        if (a->ops->pod_stop(a->impl, a->kc, pod, grace_of(pod), &err) == 0)
            json_object_set_new(a->seen, uid, json_true());
        else
            ty_warn("runtime %s: cannot stop pod %s/%s: %s", a->ops->name,
                    ty_jmeta(pod, "namespace"), ty_jmeta(pod, "name"), err.text);
        ty_error_clear(&err);
        return; /* released when its end is reported (its next event) */
    }
    if (k && !final && a->ops->pod_stop)
        return; /* stopping: the backend reports the end */
    if (a->ops->finalizer && finalizer_has(pod, a->ops->finalizer) &&
        set_finalizer(a, pod, false, &err) < 0 && err.code != TY_ENOTFOUND)
        ty_warn("runtime %s: cannot release pod %s: %s", a->ops->name, uid, err.text);
    ty_error_clear(&err);
}

/* Everything for one pod from its current object (deleted: its last). */
static void handle_pod(ak_agent *a, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = ty_jstr(meta, "uid");
    const char *node = ty_jstr(json_object_get(pod, "spec"), "nodeName");
    const char *gang;
    char key[600];
    json_t *group;

    if (!*uid)
        return;
    if (deleted) {
        forget(a, uid);
        return;
    }
    if (!*node || !a->ops->owns_node(a->impl, node))
        return;
    if (json_object_get(meta, "deletionTimestamp")) {
        stop_pod(a, pod, uid);
        return;
    }
    if (json_object_get(a->seen, uid) || ak_pod_is_final(json_object_get(pod, "status")))
        return; /* started here already (an echo), or over */
    gang = ty_jstr(json_object_get(meta, "annotations"), GANG_ANNOTATION);
    snprintf(key, sizeof(key), "%c%s/%s", *gang ? 'g' : 'p', ty_jstr(meta, "namespace"),
             *gang ? gang : uid);
    if (!(group = json_object_get(a->batch, key)))
        json_object_set_new(a->batch, key, group = json_array());
    json_array_append(group, (json_t *)pod);
}

typedef struct gang_filter {
    const char *gang;
} gang_filter;

static bool in_gang(const json_t *obj, void *arg)
{
    const gang_filter *g = arg;
    return !strcmp(ty_jstr(json_object_get(json_object_get(obj, "metadata"), "annotations"),
                       GANG_ANNOTATION),
                   g->gang);
}

/* Whether pod, bound to one of ours, is still to start. */
static bool to_start(ak_agent *a, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *node = ty_jstr(json_object_get(pod, "spec"), "nodeName");

    return *node && a->ops->owns_node(a->impl, node) &&
           !json_object_get(meta, "deletionTimestamp") &&
           !json_object_get(a->seen, ty_jstr(meta, "uid")) &&
           !ak_pod_is_final(json_object_get(pod, "status"));
}

/* Every member of the gang (key "g<ns>/<gang>") bound here and not started,
 * as the store shows them now: the events of a gang's binding may reach the
 * batch one by one, but the scheduler binds a gang in one write, so once
 * one member's binding is seen, the store has them all. NULL on failure
 * (then the events' members are started). */
static json_t *gang_members(ak_agent *a, const char *key)
{
    const char *slash = strchr(key, '/');
    char ns[256];
    gang_filter g = {.gang = slash ? slash + 1 : ""};
    kc_list_opts lo = {.ns = ns, .filter = in_gang, .filter_arg = &g};
    kc_list l;
    json_t *out;

    if (!slash || (size_t)(slash - key - 1) >= sizeof(ns))
        return NULL;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key - 1), key + 1);
    if (kc_list_objects(a->kc, "pods", &lo, &l, NULL) < 0) {
        kc_list_free(&l);
        return NULL;
    }
    out = json_array();
    for (size_t i = 0; out && i < l.n; i++)
        if (to_start(a, ty_obj_json(l.items[i])))
            json_array_append_new(out, json_deep_copy(ty_obj_json(l.items[i])));
    kc_list_free(&l);
    return out;
}

/* Starts what the batch gathered, a gang at a time. */
static void start_batch(ak_agent *a)
{
    const char *key;
    json_t *group;
    json_t *batch = a->batch;

    a->batch = json_object();
    json_object_foreach(batch, key, group) {
        const json_t *pods[MAX_BATCH];
        size_t n = 0, i;
        json_t *pod, *members;
        ty_error err;

        ty_error_init(&err);
        members = key[0] == 'g' ? gang_members(a, key) : NULL;
        if (members)
            group = members;
        json_array_foreach(group, i, pod) {
            /* Held by the finalizer before anything runs: a deletion then
             * waits for the backend to stop it. */
            if (n == MAX_BATCH || set_finalizer(a, pod, true, &err) < 0) {
                ty_error_clear(&err);
                continue; /* gone, or being deleted: the next event says */
            }
            pods[n++] = pod;
        }
        for (i = 0; i < n; i++)
            remember(a, ty_jmeta(pods[i], "uid"));
        if (n && a->ops->pods_start(a->impl, a->kc, pods, n, &err) < 0) {
            ty_warn("runtime %s: cannot start %s: %s", a->ops->name, key + 1, err.text);
            /* Unknown again: the next listing retries. */
            for (i = 0; i < n; i++)
                forget(a, ty_jmeta(pods[i], "uid"));
        }
        ty_error_clear(&err);
        json_decref(members);
    }
    json_decref(batch);
}

static void relist(ak_agent *a)
{
    kc_list l;

    if (kc_list_objects(a->kc, "pods", NULL, &l, NULL) == 0)
        for (size_t i = 0; i < l.n && !atomic_load(&a->stop); i++)
            handle_pod(a, ty_obj_json(l.items[i]), false);
    kc_list_free(&l);
}

static void *agent_main(void *arg)
{
    ak_agent *a = arg;
    int64_t next_sync = ty_now_ms() + a->sync_ms;

    while (!atomic_load(&a->stop)) {
        struct pollfd pfd = {.fd = a->evfd, .events = POLLIN};
        int64_t left = next_sync - ty_now_ms();
        uint64_t count;
        bool again;
        size_t n;
        kc_event *q;

        if (poll(&pfd, 1, left < 0 ? 0 : (int)left) > 0)
            (void)!read(a->evfd, &count, sizeof(count));
        q = ak_watch_take(a->aw, &n, &again);
        for (size_t i = 0; i < n; i++) {
            handle_pod(a, ty_obj_json(q[i].obj), q[i].type == KC_DELETED);
            kc_event_release(&q[i]);
        }
        free(q);
        if (again)
            relist(a);
        start_batch(a);
        if (ty_now_ms() >= next_sync) {
            if (a->ops->pods_sync)
                a->ops->pods_sync(a->impl, a->kc);
            next_sync = ty_now_ms() + a->sync_ms;
        }
    }
    return NULL;
}

static void free_agent(ak_agent *a)
{
    ak_watch_free(a->aw);
    if (a->evfd >= 0)
        close(a->evfd);
    json_decref(a->batch);
    json_decref(a->seen);
    free(a);
}

ak_agent *ak_agent_start(ty_kc *kc, const rt_backend_ops *ops, void *impl, int sync_ms,
                         ty_error *err)
{
    ak_agent *a;

    if (!ops || !ops->owns_node || !ops->pods_start) {
        ty_seterr(err, TY_EINVALID, "runtime: backend %s has no pods_start / owns_node",
                  ops && ops->name ? ops->name : "(none)");
        return NULL;
    }
    if (!(a = calloc(1, sizeof(*a)))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    a->kc = kc;
    a->ops = ops;
    a->impl = impl;
    a->sync_ms = sync_ms > 0 ? sync_ms : DEFAULT_SYNC_MS;
    a->seen = json_object();
    a->batch = json_object();
    a->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!a->seen || !a->batch || a->evfd < 0) {
        ty_seterr(err, TY_EINTERNAL, "runtime: out of memory or descriptors");
        goto error;
    }
    /* Its first open asks for a listing: the pods bound before start. */
    if (!(a->aw = ak_watch_start(kc, agent_watched, a->evfd, 0, "ty-kit-watch", err)))
        goto error;
    if (pthread_create(&a->thread, NULL, agent_main, a) != 0) {
        ty_seterr(err, TY_EINTERNAL, "runtime: cannot start the agent thread");
        goto error;
    }
    a->started = true;
    ty_thread_setup(a->thread, "ty-kit-agent", TY_THREAD_INTERACTIVE);
    return a;
error:
    free_agent(a);
    return NULL;
}

void ak_agent_stop(ak_agent *a)
{
    uint64_t one = 1;

    if (!a)
        return;
    atomic_store(&a->stop, true);
    (void)!write(a->evfd, &one, sizeof(one));
    if (a->started)
        pthread_join(a->thread, NULL);
    free_agent(a);
}
