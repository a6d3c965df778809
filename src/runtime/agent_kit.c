/* agent_kit.c - the node agents' watch thread (see agent_kit.h).
 *
 * The client's watch has no descriptor (kc_watch_next blocks), so a thread
 * owns it and moves events into a queue the agent takes when woken through
 * its eventfd. The thread reopens a watch that ended (fell behind: TY_EGONE,
 * or was cancelled) and then asks the agent to list again, so the agent
 * stays level-triggered: whatever it missed, the listing shows. This is the
 * local runtime's pump, moved here so that every backend has the same loop
 * (and one place to put an informer in later). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "runtime/agent_kit.h"

#define REOPEN_WAIT_MS 100 /* between attempts to open the watch */
#define MAX_RESOURCES 16

struct ak_watch {
    ty_kc *kc;
    const char *only[MAX_RESOURCES + 1];
    char *names;            /* the strings only points into */
    int wake_fd;
    size_t queue_max;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;     /* guards everything below */
    pthread_cond_t cv;      /* the thread waiting to reopen */
    bool stop;
    kc_watch *w;            /* owned by the thread; cancelled under mu */
    kc_event *queue;
    size_t n, cap;
    bool relist;
};

static void wake(ak_watch *aw)
{
    uint64_t one = 1;

    if (aw->wake_fd >= 0)
        (void)!write(aw->wake_fd, &one, sizeof(one));
}

static bool wanted(const ak_watch *aw, const kc_event *ev)
{
    for (size_t i = 0; aw->only[i]; i++)
        if (!strcmp(aw->only[i], ev->resource))
            return true;
    return false;
}

/* Called with mu held. */
static void enqueue(ak_watch *aw, kc_event *ev)
{
    if (aw->n == aw->cap && aw->cap < aw->queue_max) {
        size_t cap = aw->cap ? aw->cap * 2 : 256;
        if (cap > aw->queue_max)
            cap = aw->queue_max;
        kc_event *q = realloc(aw->queue, cap * sizeof(*q));
        if (q) {
            aw->queue = q;
            aw->cap = cap;
        }
    }
    if (aw->n == aw->cap) {
        /* Dropped: the listing that follows finds what it would have said. */
        kc_event_release(ev);
        if (!aw->relist) {
            aw->relist = true;
            wake(aw);
        }
        return;
    }
    aw->queue[aw->n++] = *ev;
    if (aw->n == 1)
        wake(aw); /* the agent drains the whole queue per wake-up */
}

static void *watch_main(void *arg)
{
    ak_watch *aw = arg;
    kc_event ev;
    ty_error err;

    ty_error_init(&err);
    pthread_mutex_lock(&aw->mu);
    while (!aw->stop) {
        kc_watch *w = aw->w;
        int rc;
        if (!w) {
            w = aw->w = kc_watch_open(aw->kc, aw->only, NULL, &err);
            ty_error_clear(&err);
            if (!w) {
                struct timespec ts = ty_deadline_ms(CLOCK_REALTIME, REOPEN_WAIT_MS);
                pthread_cond_timedwait(&aw->cv, &aw->mu, &ts);
                continue;
            }
            /* After the watch opened: nothing falls between it and the list. */
            aw->relist = true;
            wake(aw);
        }
        pthread_mutex_unlock(&aw->mu);
        /* Only this thread closes w; ak_watch_stop cancels it under mu. */
        rc = kc_watch_next(w, -1, &ev, &err);
        if (rc < 0 && err.code == TY_EGONE)
            ty_debug("agent kit: the watch fell behind; relisting");
        ty_error_clear(&err);
        pthread_mutex_lock(&aw->mu);
        if (rc < 0) {
            kc_watch_close(w); /* fell behind, or stopping: reopen + relist */
            aw->w = NULL;
        } else if (rc > 0 && wanted(aw, &ev)) {
            enqueue(aw, &ev);
        } else if (rc > 0) {
            kc_event_release(&ev);
        }
    }
    kc_watch_close(aw->w);
    aw->w = NULL;
    pthread_mutex_unlock(&aw->mu);
    return NULL;
}

static void free_watch(ak_watch *aw)
{
    for (size_t i = 0; i < aw->n; i++)
        kc_event_release(&aw->queue[i]);
    free(aw->queue);
    free(aw->names);
    pthread_cond_destroy(&aw->cv);
    pthread_mutex_destroy(&aw->mu);
    free(aw);
}

ak_watch *ak_watch_start(ty_kc *kc, const char *const *only, int wake_fd, size_t queue_max,
                         const char *thread_name, ty_error *err)
{
    ak_watch *aw = calloc(1, sizeof(*aw));
    size_t k = 0, len = 0, at = 0;

    if (!aw) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&aw->mu, NULL);
    pthread_cond_init(&aw->cv, NULL);
    aw->kc = kc;
    aw->wake_fd = wake_fd;
    aw->queue_max = queue_max ? queue_max : AK_QUEUE_MAX;
    for (k = 0; only && only[k]; k++)
        len += strlen(only[k]) + 1;
    if (!only || k == 0 || k > MAX_RESOURCES) {
        ty_seterr(err, TY_EINVALID, "agent kit: watch 1 to %d resources", MAX_RESOURCES);
        goto error;
    }
    if (!(aw->names = malloc(len))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(only[i]) + 1;
        memcpy(aw->names + at, only[i], l);
        aw->only[i] = aw->names + at;
        at += l;
    }
    /* Opened here, so that whatever happens once start returns is seen (a
     * Node deleted at once: no listing would show that). When it cannot
     * open, the thread keeps trying. Either way the first relist follows
     * the open. */
    aw->w = kc_watch_open(kc, aw->only, NULL, err);
    if (aw->w) {
        aw->relist = true;
        wake(aw);
    } else {
        ty_error_clear(err);
    }
    if (pthread_create(&aw->thread, NULL, watch_main, aw) != 0) {
        ty_seterr(err, TY_EINTERNAL, "agent kit: cannot start the watch thread");
        goto error;
    }
    aw->started = true;
    ty_thread_setup(aw->thread, thread_name ? thread_name : "ty-agent-watch",
                    TY_THREAD_INTERACTIVE);
    return aw;
error:
    kc_watch_close(aw->w);
    free_watch(aw);
    return NULL;
}

kc_event *ak_watch_take(ak_watch *aw, size_t *n, bool *relist)
{
    kc_event *q;

    pthread_mutex_lock(&aw->mu);
    q = aw->queue;
    *n = aw->n;
    *relist = aw->relist;
    aw->queue = NULL;
    aw->n = aw->cap = 0;
    aw->relist = false;
    pthread_mutex_unlock(&aw->mu);
    return q;
}

void ak_watch_stop(ak_watch *aw)
{
    if (!aw)
        return;
    pthread_mutex_lock(&aw->mu);
    aw->stop = true;
    if (aw->w)
        kc_watch_cancel(aw->w);
    pthread_cond_broadcast(&aw->cv);
    pthread_mutex_unlock(&aw->mu);
    if (aw->started)
        pthread_join(aw->thread, NULL);
    aw->started = false;
}

void ak_watch_free(ak_watch *aw)
{
    if (!aw)
        return;
    ak_watch_stop(aw);
    free_watch(aw);
}
