/* agent_watch.c - what wakes the node agent.
 *
 * The agent thread sleeps in one epoll_wait on three kinds of descriptors:
 *   - an eventfd, written by the pump thread when store events are queued
 *     for it (and by rt_local_stop);
 *   - an inotify descriptor that watches every live pod's directory for
 *     state.json being renamed into place (the supervisor writes it
 *     tmp + rename on every change);
 *   - one pidfd per live supervisor, readable when it exits (supervisors are
 *     not necessarily our children: adopted ones belong to nobody here).
 *
 * The store's watch has no descriptor (kc_watch_next blocks on a condition
 * variable), hence the pump: a thread that only moves events of the resources
 * the agent cares about into a queue. It owns the watch, reopens it when it
 * falls behind and then asks the agent for a resync, so the agent stays
 * level-triggered: it acts when it wakes, not in polling rounds, so its
 * latency is the time it takes to wake up. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "runtime/local/agent.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define QUEUE_MAX 100000        /* events waiting for the agent; beyond: resync */
#define REOPEN_WAIT_MS 100      /* between attempts to open the store watch */
#define MAX_WAKEUPS 64
#define TAG_EVENTFD 1ull
#define TAG_INOTIFY 2ull
#define TAG_PIDFD (1ull << 32)  /* | the pidfd */

static void wake(rt_local *rt)
{
    uint64_t one = 1;

    if (rt->evfd >= 0)
        (void)!write(rt->evfd, &one, sizeof(one));
}

/* ---- the pump thread ---- */

/* What the watch takes (wanted says the same of an event). */
static const char *const agent_watched[] = {"pods", "services", "nodes", NULL};

static bool wanted(const kc_event *ev)
{
    return !strcmp(ev->resource, "pods") || !strcmp(ev->resource, "services") ||
           !strcmp(ev->resource, "nodes");
}

/* Called with rt->mu held. */
static void enqueue(rt_local *rt, kc_event *ev)
{
    if (rt->nqueue == rt->qcap && rt->qcap < QUEUE_MAX) {
        size_t cap = rt->qcap ? rt->qcap * 2 : 256;
        kc_event *q = realloc(rt->queue, (cap < QUEUE_MAX ? cap : QUEUE_MAX) * sizeof(*q));
        if (q) {
            rt->queue = q;
            rt->qcap = cap < QUEUE_MAX ? cap : QUEUE_MAX;
        }
    }
    if (rt->nqueue == rt->qcap) {
        /* Dropped: the resync that follows finds what it would have said. */
        kc_event_release(ev);
        if (!rt->resync_due) {
            rt->resync_due = true;
            wake(rt);
        }
        return;
    }
    rt->queue[rt->nqueue++] = *ev;
    if (rt->nqueue == 1)
        wake(rt); /* the agent drains the whole queue per wake-up */
}

static void wait_to_reopen(rt_local *rt)
{
    struct timespec ts = ty_deadline_ms(CLOCK_REALTIME, REOPEN_WAIT_MS);

    pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
}

static void *pump_main(void *arg)
{
    rt_local *rt = arg;
    kc_event ev;
    ty_error err;

    ty_error_init(&err);
    pthread_mutex_lock(&rt->mu);
    while (!rt->stop) {
        kc_watch *w = rt->w;
        int rc;
        if (!w) {
            w = rt->w = kc_watch_open(rt->s, agent_watched, NULL, &err);
            ty_error_clear(&err);
            if (!w) {
                wait_to_reopen(rt);
                continue;
            }
            /* After the watch opened: nothing falls between it and the list. */
            rt->resync_due = true;
            wake(rt);
        }
        pthread_mutex_unlock(&rt->mu);
        /* Only this thread closes w; rt_local_stop cancels it under mu. */
        rc = kc_watch_next(w, -1, &ev, &err);
        ty_error_clear(&err);
        pthread_mutex_lock(&rt->mu);
        if (rc < 0) {
            kc_watch_close(w); /* fell behind, or stopping: reopen + resync */
            rt->w = NULL;
        } else if (rc > 0 && wanted(&ev)) {
            enqueue(rt, &ev);
        } else if (rc > 0) {
            kc_event_release(&ev);
        }
    }
    kc_watch_close(rt->w);
    rt->w = NULL;
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

kc_event *agent_take_queue(rt_local *rt, size_t *n, bool *resync)
{
    kc_event *q;

    pthread_mutex_lock(&rt->mu);
    q = rt->queue;
    *n = rt->nqueue;
    *resync = rt->resync_due;
    rt->queue = NULL;
    rt->nqueue = rt->qcap = 0;
    rt->resync_due = false;
    pthread_mutex_unlock(&rt->mu);
    return q;
}

/* ---- descriptors ---- */

int agent_watch_init(rt_local *rt, ty_error *err)
{
    struct epoll_event ev = {.events = EPOLLIN};

    rt->epfd = epoll_create1(EPOLL_CLOEXEC);
    rt->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    rt->infd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (rt->epfd < 0 || rt->evfd < 0)
        return ty_seterr(err, TY_EINTERNAL, "runtime: epoll/eventfd: %s", strerror(errno));
    ev.data.u64 = TAG_EVENTFD;
    if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, rt->evfd, &ev) < 0)
        return ty_seterr(err, TY_EINTERNAL, "runtime: epoll_ctl: %s", strerror(errno));
    ev.data.u64 = TAG_INOTIFY;
    if (rt->infd < 0 || epoll_ctl(rt->epfd, EPOLL_CTL_ADD, rt->infd, &ev) < 0) {
        /* Still correct without it: the sweep reads every state.json. */
        ty_warn("runtime: inotify: %s: pod status follows the periodic sweep",
                strerror(errno));
        if (rt->infd >= 0)
            close(rt->infd);
        rt->infd = -1;
    }
    return 0;
}

int agent_pump_start(rt_local *rt, ty_error *err)
{
    if (pthread_create(&rt->pump, NULL, pump_main, rt) != 0)
        return ty_seterr(err, TY_EINTERNAL, "runtime: cannot start the watch thread");
    ty_thread_setup(rt->pump, "ty-agent-watch", TY_THREAD_INTERACTIVE);
    rt->pump_started = true;
    return 0;
}

void agent_watch_stop(rt_local *rt)
{
    pthread_mutex_lock(&rt->mu);
    atomic_store(&rt->stop, true);
    if (rt->w)
        kc_watch_cancel(rt->w);
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
    wake(rt);
    if (rt->pump_started)
        pthread_join(rt->pump, NULL);
    rt->pump_started = false;
}

void agent_watch_free(rt_local *rt)
{
    for (size_t i = 0; i < rt->nqueue; i++)
        kc_event_release(&rt->queue[i]);
    free(rt->queue);
    rt->queue = NULL;
    rt->nqueue = rt->qcap = 0;
    if (rt->infd >= 0)
        close(rt->infd);
    if (rt->evfd >= 0)
        close(rt->evfd);
    if (rt->epfd >= 0)
        close(rt->epfd);
    rt->infd = rt->evfd = rt->epfd = -1;
}

/* ---- per pod ---- */

void agent_track_dir(rt_local *rt, rt_pod *p)
{
    if (p->wd >= 0 || rt->infd < 0)
        return;
    /* Renames only: the agent's own writes there (hosts, in place) and the
     * supervisor's logs elsewhere do not wake it. */
    p->wd = inotify_add_watch(rt->infd, p->dir, IN_MOVED_TO | IN_ONLYDIR);
    if (p->wd < 0)
        ty_warn("runtime: cannot watch %s (%s): its status follows the periodic sweep",
                p->dir, strerror(errno));
}

void agent_track_sup(rt_local *rt, rt_pod *p)
{
    struct epoll_event ev = {.events = EPOLLIN};
    int fd;

    if (p->pidfd >= 0 || p->sup <= 0)
        return;
    fd = (int)syscall(SYS_pidfd_open, (pid_t)p->sup, 0);
    if (fd < 0) {
        p->poll_due = true; /* gone already (ESRCH): the poll finds out */
        return;
    }
    ev.data.u64 = TAG_PIDFD | (uint32_t)fd;
    if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close(fd);
        return;
    }
    p->pidfd = fd;
}

void agent_untrack(rt_local *rt, rt_pod *p)
{
    /* A supervisor this process spawned is its child: reap it once it exited
     * (WNOHANG: one still running, or adopted from an earlier server, is left
     * alone). */
    if (p->sup > 0)
        waitpid(p->sup, NULL, WNOHANG);
    if (p->pidfd >= 0) {
        /* Explicitly: a fork in flight may hold a copy of the descriptor, and
         * an exited process's pidfd would stay readable in the set. */
        epoll_ctl(rt->epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
        close(p->pidfd);
        p->pidfd = -1;
    }
    if (p->wd >= 0) {
        inotify_rm_watch(rt->infd, p->wd); /* EINVAL once the directory is gone */
        p->wd = -1;
    }
}

/* ---- waiting ---- */

static rt_pod *by_wd(rt_local *rt, int wd)
{
    for (size_t i = 0; i < rt->npods; i++)
        if (rt->pods[i]->wd == wd)
            return rt->pods[i];
    return NULL;
}

static rt_pod *by_pidfd(rt_local *rt, int fd)
{
    for (size_t i = 0; i < rt->npods; i++)
        if (rt->pods[i]->pidfd == fd)
            return rt->pods[i];
    return NULL;
}

static void drain_inotify(rt_local *rt)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

    for (;;) {
        ssize_t n = read(rt->infd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        for (char *at = buf; at < buf + n;) {
            const struct inotify_event *ie = (const struct inotify_event *)at;
            rt_pod *p;
            at += sizeof(*ie) + ie->len;
            if (ie->mask & IN_Q_OVERFLOW) {
                for (size_t i = 0; i < rt->npods; i++)
                    rt->pods[i]->poll_due = true;
            } else if (ie->len && !strcmp(ie->name, "state.json") && (p = by_wd(rt, ie->wd))) {
                p->poll_due = true;
            }
        }
    }
}

void agent_wait(rt_local *rt, int timeout_ms)
{
    struct epoll_event evs[MAX_WAKEUPS];
    uint64_t count;
    int n = epoll_wait(rt->epfd, evs, MAX_WAKEUPS, timeout_ms);

    for (int i = 0; i < n; i++) {
        uint64_t tag = evs[i].data.u64;
        if (tag == TAG_EVENTFD) {
            (void)!read(rt->evfd, &count, sizeof(count));
        } else if (tag == TAG_INOTIFY) {
            drain_inotify(rt);
        } else if (tag & TAG_PIDFD) {
            rt_pod *p = by_pidfd(rt, (int)(uint32_t)tag);
            if (p)
                p->poll_due = true;
        }
    }
}
