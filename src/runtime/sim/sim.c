/* sim.c - the simulated-node runtime's thread: a watch on the store, a table
 * of the pods it runs and a timer heap for the ones with a duration.
 *
 * One thread does everything. Each round takes the watch events that are
 * there (the agent kit's watch thread, an informer's, queues them and wakes
 * it; this thread takes them all at once, and waits at most until the next
 * timer is due), handles the pods bound to our nodes, then ends the pods
 * whose time is up. Whether a pod is ours is
 * decided from its nodeName alone (prefix + index), never by reading the
 * store; the table recognises the echoes of our own writes. A watch that fell
 * behind is reopened and followed by a listing (resync); every RESYNC_MS a
 * lighter one looks at the pods the table lacks, so that a failed write is
 * retried. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "base/thread.h"
#include "runtime/sim/sim_internal.h"

#define EVENT_BATCH 4096
#define MAX_WAIT_MS 1000
#define RESYNC_MS 60000
/* Events the kit's watch thread holds for this one; beyond, a full relist.
 * Each holds its version of the pod alive (text, maybe a tree), which the
 * store's watch history would have let go: the history keeps at most
 * 40 MiB of versions only it holds (store/open.c), and a thread reading it
 * fell behind (and relisted) past that. A queue 250,000 deep held twice the
 * server's memory at 150,000 simulated pods when this thread lagged; this
 * depth is about what those 40 MiB hold of pods' fresh versions. */
#define QUEUE_MAX 16384
#define DEFAULT_PREFIX "sim-"
#define DEFAULT_CPU "64"
#define DEFAULT_MEMORY "512Gi"
#define DEFAULT_PODS 110

/* ---- the pod table (uid -> sim_pod) ---- */

static uint64_t hash_uid(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static sim_pod *find(const rt_sim *rt, const char *uid)
{
    if (!rt->tab_cap)
        return NULL;
    for (sim_pod *p = rt->tab[hash_uid(uid) & (rt->tab_cap - 1)]; p; p = p->next)
        if (!strcmp(p->uid, uid))
            return p;
    return NULL;
}

static int grow(rt_sim *rt)
{
    size_t cap = rt->tab_cap ? rt->tab_cap * 2 : 1024;
    sim_pod **t = calloc(cap, sizeof(*t));

    if (!t)
        return -1;
    for (size_t i = 0; i < rt->tab_cap; i++) {
        sim_pod *p = rt->tab[i], *next;
        for (; p; p = next) {
            size_t b = hash_uid(p->uid) & (cap - 1);
            next = p->next;
            p->next = t[b];
            t[b] = p;
        }
    }
    free(rt->tab);
    rt->tab = t;
    rt->tab_cap = cap;
    return 0;
}

static sim_pod *add(rt_sim *rt, const char *uid, const char *ns, const char *name)
{
    size_t lu = strlen(uid) + 1, ln = strlen(ns) + 1, lm = strlen(name) + 1, b;
    sim_pod *p;

    if (rt->tab_n * 4 >= rt->tab_cap * 3 && grow(rt) < 0)
        return NULL;
    if (!(p = calloc(1, sizeof(*p) + lu + ln + lm)))
        return NULL;
    memcpy(p->uid, uid, lu);
    memcpy(p->uid + lu, ns, ln);
    memcpy(p->uid + lu + ln, name, lm);
    p->ns = p->uid + lu;
    p->name = p->uid + lu + ln;
    p->end_ms = -1;
    b = hash_uid(uid) & (rt->tab_cap - 1);
    p->next = rt->tab[b];
    rt->tab[b] = p;
    rt->tab_n++;
    return p;
}

/* Takes p out of the table; a timer still holding it frees it later. */
static void forget(rt_sim *rt, sim_pod *p)
{
    sim_pod **pp = &rt->tab[hash_uid(p->uid) & (rt->tab_cap - 1)];

    for (; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            rt->tab_n--;
            break;
        }
    }
    if (p->in_heap || p->pending)
        p->dead = true;
    else
        free(p);
}

/* ---- the timer heap (min on end_ms) ---- */

static void heap_swap(rt_sim *rt, size_t a, size_t b)
{
    sim_pod *t = rt->heap[a];
    rt->heap[a] = rt->heap[b];
    rt->heap[b] = t;
}

static int heap_push(rt_sim *rt, sim_pod *p)
{
    size_t i;

    if (rt->heap_n == rt->heap_cap) {
        size_t cap = rt->heap_cap ? rt->heap_cap * 2 : 1024;
        sim_pod **h = realloc(rt->heap, cap * sizeof(*h));
        if (!h)
            return -1;
        rt->heap = h;
        rt->heap_cap = cap;
    }
    i = rt->heap_n++;
    rt->heap[i] = p;
    p->in_heap = true;
    while (i > 0 && rt->heap[(i - 1) / 2]->end_ms > rt->heap[i]->end_ms) {
        heap_swap(rt, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    return 0;
}

static sim_pod *heap_pop(rt_sim *rt)
{
    sim_pod *top = rt->heap[0];
    size_t i = 0;

    rt->heap[0] = rt->heap[--rt->heap_n];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < rt->heap_n && rt->heap[l]->end_ms < rt->heap[m]->end_ms)
            m = l;
        if (r < rt->heap_n && rt->heap[r]->end_ms < rt->heap[m]->end_ms)
            m = r;
        if (m == i)
            break;
        heap_swap(rt, i, m);
        i = m;
    }
    top->in_heap = false;
    return top;
}

/* ---- pods ---- */

static void warn_write(const char *what, const char *ns, const char *name, ty_error *err)
{
    if (err->code != TY_ENOTFOUND)
        ty_warn("sim: cannot %s pod %s/%s: %s", what, ns, name, err->text);
    ty_error_clear(err);
}

static void schedule(rt_sim *rt, sim_pod *p, int64_t end_ms, int exit_code)
{
    p->end_ms = end_ms;
    p->exit_code = exit_code;
    if (end_ms >= 0 && heap_push(rt, p) < 0)
        ty_warn("sim: out of memory: pod %s/%s will not end", p->ns, p->name);
}

/* A pod that runs already (Running, our finalizer) but is not in the table:
 * after a restart of the server, or a resync. Its end counts from startTime. */
static void adopt_running(rt_sim *rt, const json_t *pod, const char *uid, const char *ns,
                          const char *name)
{
    int64_t dur;
    int code;
    time_t start;
    sim_pod *p = add(rt, uid, ns, name);

    if (!p)
        return;
    p->state = SIM_RUNNING;
    sim_pod_plan(pod, &dur, &code);
    if (dur < 0)
        return;
    if (ty_time_parse(ty_jstr(json_object_get(pod, "status"), "startTime"), &start) < 0)
        start = time(NULL);
    schedule(rt, p, ty_now_ms() + (int64_t)(start - time(NULL)) * 1000 + dur, code);
}

/* ---- starts and ends, written together ----
 *
 * The pods a round starts (and the ones whose time is up) are written in one
 * kc_write_all at its end (flush_writes) instead of a transaction each.
 * A pod is in the table from the moment its start is queued, so that the
 * echo of a second event about it in the same round is recognised. */

typedef struct sim_write {
    sim_pod *p;
    bool start;
    int node;    /* start: the node's index */
    int64_t dur; /* start: the plan */
    int code;
    sim_pod_args a;
} sim_write;

static sim_write *queue_write(rt_sim *rt, sim_pod *p, bool start)
{
    if (rt->pend_n == rt->pend_cap) {
        size_t cap = rt->pend_cap ? rt->pend_cap * 2 : 256;
        sim_write *g = realloc(rt->pend, cap * sizeof(*g));
        if (!g)
            return NULL;
        rt->pend = g;
        rt->pend_cap = cap;
    }
    p->pending = true;
    rt->pend[rt->pend_n] = (sim_write){.p = p, .start = start};
    return &rt->pend[rt->pend_n++];
}

static void flush_writes(rt_sim *rt)
{
    size_t n = rt->pend_n;
    kc_op *ops;

    if (!n)
        return;
    if (!(ops = calloc(n, sizeof(*ops)))) {
        ty_warn("sim: out of memory writing %zu pod(s); the next resync retries", n);
        for (size_t i = 0; i < n; i++) {
            rt->pend[i].p->pending = false;
            forget(rt, rt->pend[i].p);
        }
        rt->pend_n = 0;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        sim_write *w = &rt->pend[i];
        char node_ip[16];
        if (w->start) {
            sim_node_ip(w->node, node_ip, sizeof(node_ip));
            ops[i] = sim_pod_start_op(rt, &w->a, w->p, node_ip);
        } else {
            ops[i] = sim_pod_finish_op(&w->a, w->p, w->code);
        }
    }
    kc_write_all(rt->s, ops, n);
    for (size_t i = 0; i < n; i++) {
        sim_write *w = &rt->pend[i];
        sim_pod *p = w->p;
        bool ok = ops[i].result != NULL;
        p->pending = false;
        if (!ok)
            warn_write(w->start ? "start" : "end", p->ns, p->name, &ops[i].err);
        kc_op_clear(&ops[i]);
        if (p->dead) {
            if (!p->in_heap)
                free(p);
            continue;
        }
        if (!w->start) {
            p->state = SIM_DONE;
        } else if (ok) {
            p->state = SIM_RUNNING;
            schedule(rt, p, w->dur < 0 ? -1 : ty_now_ms() + w->dur, w->code);
        } else {
            forget(rt, p); /* gone; or the next resync tries again */
        }
    }
    free(ops);
    rt->pend_n = 0;
}

static void start_pod(rt_sim *rt, const json_t *pod, int node, const char *uid,
                      const char *ns, const char *name)
{
    sim_pod *p = add(rt, uid, ns, name);
    sim_write *w;

    if (!p)
        return;
    p->state = SIM_RUNNING;
    if (!(w = queue_write(rt, p, true))) {
        forget(rt, p);
        return;
    }
    w->node = node;
    sim_pod_plan(pod, &w->dur, &w->code);
}

static void release_pod(rt_sim *rt, const char *uid, const char *ns, const char *name)
{
    ty_error err;
    sim_pod *p;

    ty_error_init(&err);
    if (sim_pod_release(rt, ns, name, uid, &err) < 0) {
        warn_write("release", ns, name, &err);
        /* Unknown again, so that the next resync retries it. */
        if ((p = find(rt, uid)))
            forget(rt, p);
    }
}

/* Everything the runtime does for one pod, from its current object alone:
 * its metadata, its status and spec.nodeName, all that a light tree holds
 * (ty_obj_json_light), which is what the store keeps of an ended pod
 * whose tree went while it ran. */
static void handle_pod(rt_sim *rt, kc_event_type type, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = ty_jstr(meta, "uid"), *ns = ty_jstr(meta, "namespace"),
               *name = ty_jstr(meta, "name");
    int node = sim_node_index(rt, ty_jstr(json_object_get(pod, "spec"), "nodeName"));
    const json_t *st;
    sim_pod *p;

    if (node < 0) {
        /* Bound to a sim node that is no longer ours: still let it go. */
        if (type != KC_DELETED && json_object_get(meta, "deletionTimestamp") &&
            sim_pod_has_finalizer(pod))
            release_pod(rt, uid, ns, name);
        return;
    }
    p = find(rt, uid);
    if (type == KC_DELETED) {
        if (p)
            forget(rt, p);
        return;
    }
    if (json_object_get(meta, "deletionTimestamp")) {
        if (sim_pod_has_finalizer(pod))
            release_pod(rt, uid, ns, name);
        return; /* its DELETED event drops the entry */
    }
    if (p)
        return; /* started (or ended) by us already: an echo */
    st = json_object_get(pod, "status");
    if (!strcmp(ty_jstr(st, "phase"), "Succeeded") || !strcmp(ty_jstr(st, "phase"), "Failed")) {
        if ((p = add(rt, uid, ns, name)))
            p->state = SIM_DONE;
    } else if (!strcmp(ty_jstr(st, "phase"), "Running") && sim_pod_has_finalizer(pod)) {
        adopt_running(rt, pod, uid, ns, name);
    } else {
        start_pod(rt, pod, node, uid, ns, name);
    }
}

static void fire_timers(rt_sim *rt)
{
    int64_t now = ty_now_ms();

    while (rt->heap_n && rt->heap[0]->end_ms <= now) {
        sim_pod *p = heap_pop(rt);
        sim_write *w;
        ty_error err;
        if (p->dead) {
            free(p);
            continue;
        }
        w = queue_write(rt, p, false);
        if (w) {
            w->code = p->exit_code;
            continue;
        }
        ty_error_init(&err);
        if (sim_pod_finish(rt, p->ns, p->name, p->uid, p->exit_code, &err) < 0)
            warn_write("end", p->ns, p->name, &err);
        p->state = SIM_DONE;
    }
    flush_writes(rt);
}

/* ---- the watch ---- */

/* Resync without inflating the store. Listing every pod and reading each
 * one's JSON would parse the text of every pod whose tree the store had
 * dropped (see store/watch.c), and the parsed trees would then stay with
 * the store's snapshots, hundreds of MB at scale, every RESYNC_MS. So a
 * resync reads no JSON of a pod it knows (the table, looked up by the key
 * the snapshot carries), decides from the compact text whether an unknown
 * pod can be ours at all (our nodeName prefix or our finalizer appear in
 * it), and parses those into a private tree that is freed at once. */

typedef struct known_set {
    sim_pod **slot; /* open addressing on (ns, name); NULL = free */
    size_t cap;
} known_set;

static uint64_t hash_key(const char *ns, const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = ns; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int known_build(const rt_sim *rt, known_set *k)
{
    k->cap = 1024;
    while (k->cap < rt->tab_n * 2)
        k->cap *= 2;
    if (!(k->slot = calloc(k->cap, sizeof(*k->slot))))
        return -1;
    for (size_t i = 0; i < rt->tab_cap; i++)
        for (sim_pod *p = rt->tab[i]; p; p = p->next) {
            size_t b = hash_key(p->ns, p->name) & (k->cap - 1);
            while (k->slot[b])
                b = (b + 1) & (k->cap - 1);
            k->slot[b] = p;
        }
    return 0;
}

static bool known(const known_set *k, const char *ns, const char *name)
{
    for (size_t b = hash_key(ns, name) & (k->cap - 1); k->slot[b]; b = (b + 1) & (k->cap - 1))
        if (!strcmp(k->slot[b]->name, name) && !strcmp(k->slot[b]->ns, ns))
            return true;
    return false;
}

/* Whether the compact text of a pod can be one of ours; false only when it
 * certainly is not. A prefix that JSON would escape is never searched for. */
static bool text_may_be_ours(const rt_sim *rt, const char *text)
{
    char needle[256];

    if (strstr(text, "\"" RT_SIM_FINALIZER "\""))
        return true;
    for (const char *c = rt->prefix; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
            return true;
    snprintf(needle, sizeof(needle), "\"nodeName\":\"%s", rt->prefix);
    return strstr(text, needle) != NULL;
}

/* full: after the watch was reopened, when events may have been missed, so
 * known pods are looked at again too; else only the pods the table lacks
 * (what a failed write left behind). */
static void resync(rt_sim *rt, bool full)
{
    kc_list_opts lo = {0};
    known_set k = {0};
    kc_list l;

    rt->next_resync_ms = ty_now_ms() + RESYNC_MS;
    if (!full && known_build(rt, &k) < 0)
        full = true;
    if (kc_list_objects(rt->s, "pods", &lo, &l, NULL) < 0) {
        free(k.slot);
        return;
    }
    for (size_t i = 0; i < l.n; i++) {
        const char *ns, *name, *text;
        char *owned;
        size_t len;
        json_t *pod = NULL;

        ty_obj_key(l.items[i], &ns, &name);
        if (!full && known(&k, ns, name))
            continue;
        /* read once, not kept: a cold pod stays cold */
        text = ty_obj_text_read(l.items[i], &len, &owned);
        if (text && text_may_be_ours(rt, text))
            pod = json_loadb(text, len, 0, NULL);
        free(owned);
        if (!pod)
            continue;
        handle_pod(rt, KC_MODIFIED, pod);
        json_decref(pod);
    }
    kc_list_free(&l);
    free(k.slot);
    flush_writes(rt);
}

/* What the watch takes: pods and nodes; the rest (Events above all) is
 * passed over in the history. */
static const char *const sim_watched[] = {"pods", "nodes", NULL};

/* Pods and deleted nodes matter. */
static void handle_event(rt_sim *rt, const kc_event *ev)
{
    const json_t *obj;

    if (!strcmp(ev->resource, "pods")) {
        handle_pod(rt, ev->type, ty_obj_json_light(ev->obj, NULL));
    } else if (!strcmp(ev->resource, "nodes") && ev->type == KC_DELETED) {
        obj = ty_obj_json(ev->obj);
        /* As a kubelet does: a deleted node of ours registers again. */
        int i = sim_node_index(rt, ty_jstr(json_object_get(obj, "metadata"), "name"));
        ty_error err;
        ty_error_init(&err);
        if (i >= 0 && sim_node_ensure(rt, i, &err) < 0)
            ty_warn("sim: cannot register node %s again: %s",
                    ty_jstr(json_object_get(obj, "metadata"), "name"), err.text);
        ty_error_clear(&err);
    }
}

static bool stopping(rt_sim *rt)
{
    bool stop;
    pthread_mutex_lock(&rt->mu);
    stop = rt->stop;
    pthread_mutex_unlock(&rt->mu);
    return stop;
}

static int wait_ms(const rt_sim *rt)
{
    int64_t left;

    if (!rt->heap_n)
        return MAX_WAIT_MS;
    left = rt->heap[0]->end_ms - ty_now_ms();
    return left <= 0 ? 0 : left > MAX_WAIT_MS ? MAX_WAIT_MS : (int)left;
}

/* Sleeps until the watch thread has something (or stop) or a timer is due. */
static void wait_for_work(rt_sim *rt)
{
    struct pollfd pfd = {.fd = rt->evfd, .events = POLLIN};
    uint64_t count;

    if (poll(&pfd, 1, wait_ms(rt)) > 0)
        (void)!read(rt->evfd, &count, sizeof(count));
}

/* Everything the watch thread queued; a relist after it (re)opened the
 * watch or dropped events. Writes are flushed every EVENT_BATCH events. */
static void take_events(rt_sim *rt)
{
    bool relist;
    size_t n;
    kc_event *q = ak_watch_take(rt->aw, &n, &relist);

    for (size_t i = 0; i < n; i++) {
        handle_event(rt, &q[i]);
        kc_event_release(&q[i]);
        if ((i + 1) % EVENT_BATCH == 0) {
            flush_writes(rt);
            if (stopping(rt)) { /* promptly: the next start relists */
                while (++i < n)
                    kc_event_release(&q[i]);
                relist = false;
            }
        }
    }
    free(q);
    flush_writes(rt);
    if (relist)
        resync(rt, true);
}

static void *sim_main(void *arg)
{
    rt_sim *rt = arg;

    while (!stopping(rt)) {
        wait_for_work(rt);
        take_events(rt);
        fire_timers(rt);
        if (ty_now_ms() >= rt->next_resync_ms)
            resync(rt, false);
    }
    return NULL;
}

/* ---- start / stop ---- */

static void free_rt(rt_sim *rt)
{
    for (size_t i = 0; i < rt->tab_cap; i++) {
        sim_pod *p = rt->tab[i], *next;
        for (; p; p = next) {
            next = p->next;
            if (!p->in_heap)
                free(p);
        }
    }
    for (size_t i = 0; i < rt->heap_n; i++)
        free(rt->heap[i]); /* live or dead, each is in the heap once */
    free(rt->tab);
    free(rt->heap);
    free(rt->pend);
    free(rt->prefix);
    free(rt->cpu);
    free(rt->memory);
    ak_watch_free(rt->aw);
    if (rt->evfd >= 0)
        close(rt->evfd);
    pthread_mutex_destroy(&rt->mu);
    free(rt);
}

static int digits(int n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

static int init_rt(rt_sim *rt, const rt_sim_opts *o, ty_error *err)
{
    const char *prefix = o->prefix && *o->prefix ? o->prefix : DEFAULT_PREFIX;

    if (o->count < 1 || o->count > RT_SIM_MAX_NODES)
        return ty_seterr(err, TY_EINVALID, "sim: node count %d: want 1-%d", o->count,
                         RT_SIM_MAX_NODES);
    if (o->gpus < 0 || o->pods < 0 || strlen(prefix) > 200)
        return ty_seterr(err, TY_EINVALID, "sim: bad node shape or prefix");
    rt->count = o->count;
    rt->width = digits(o->count - 1);
    rt->gpus = o->gpus;
    rt->pods = o->pods > 0 ? o->pods : DEFAULT_PODS;
    rt->prefix = strdup(prefix);
    rt->cpu = strdup(o->cpu && *o->cpu ? o->cpu : DEFAULT_CPU);
    rt->memory = strdup(o->memory && *o->memory ? o->memory : DEFAULT_MEMORY);
    if (!rt->prefix || !rt->cpu || !rt->memory || grow(rt) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    rt->prefix_len = strlen(rt->prefix);
    return sim_nodes_register(rt, err);
}

rt_sim *rt_sim_start(ty_kc *s, const rt_sim_opts *o, ty_error *err)
{
    rt_sim *rt = calloc(1, sizeof(*rt));

    if (!rt) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    rt->s = s;
    rt->evfd = -1;
    pthread_mutex_init(&rt->mu, NULL);
    if (!o) {
        ty_seterr(err, TY_EINVALID, "sim: no options");
        goto error;
    }
    if (init_rt(rt, o, err) < 0)
        goto error;
    /* The kit opens the watch before ak_watch_start returns, so whatever
     * happens once start returns is seen (a node deleted at once), and asks
     * for the listing of what was bound before. */
    rt->next_resync_ms = ty_now_ms() + RESYNC_MS;
    rt->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (rt->evfd < 0) {
        ty_seterr(err, TY_EINTERNAL, "sim: eventfd: %s", strerror(errno));
        goto error;
    }
    rt->aw = ak_watch_start(s, sim_watched, rt->evfd, QUEUE_MAX, "ty-sim-watch", err);
    if (!rt->aw)
        goto error;
    if (pthread_create(&rt->thread, NULL, sim_main, rt) != 0) {
        ty_seterr(err, TY_EINTERNAL, "sim: cannot start the runtime thread");
        goto error;
    }
    ty_thread_setup(rt->thread, "ty-sim", TY_THREAD_BACKGROUND);
    return rt;
error:
    free_rt(rt);
    return NULL;
}

void rt_sim_stop(rt_sim *rt)
{
    if (!rt)
        return;
    uint64_t one = 1;

    pthread_mutex_lock(&rt->mu);
    rt->stop = true;
    pthread_mutex_unlock(&rt->mu);
    (void)!write(rt->evfd, &one, sizeof(one));
    pthread_join(rt->thread, NULL);
    free_rt(rt); /* stops the watch thread */
}
