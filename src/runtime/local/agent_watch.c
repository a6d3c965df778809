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
 * variable), hence the pump: the agent kit's watch thread (runtime/agent_kit.h,
 * an informer's thread), which only moves events of the resources the agent
 * cares about into a queue. It owns the watch, reopens it when it falls behind
 * and then asks the agent for a resync, so the agent stays level-triggered:
 * it acts when it wakes, not in polling rounds, so its latency is the time it
 * takes to wake up. */
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

/* ---- the store watch (the agent kit's thread) ---- */

/* What the watch takes. */
static const char *const agent_watched[] = {"pods", "services", "nodes", NULL};

kc_event *agent_take_queue(rt_local *rt, size_t *n, bool *resync)
{
    if (!rt->aw) {
        *n = 0;
        *resync = false;
        return NULL;
    }
    return ak_watch_take(rt->aw, n, resync);
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
    rt->aw = ak_watch_start(rt->s, agent_watched, rt->evfd, QUEUE_MAX, "ty-agent-watch", err);
    return rt->aw ? 0 : -1;
}

void agent_watch_stop(rt_local *rt)
{
    atomic_store(&rt->stop, true);
    wake(rt);
    ak_watch_stop(rt->aw); /* the queue stays readable until agent_watch_free */
}

void agent_watch_free(rt_local *rt)
{
    ak_watch_free(rt->aw);
    rt->aw = NULL;
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
