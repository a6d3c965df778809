/* agent_kit.c - the node agents' watch (see agent_kit.h): a user of the
 * informer (client/informer.h), the one list/watch/relist loop.
 *
 * The informer lists nothing here: each agent lists what it wants with its
 * own filter when told to (its on_relist), and the informer's thread only
 * moves the watch's events into a queue the agent takes when woken through
 * its eventfd. The informer reopens a watch that ended (fell behind:
 * TY_EGONE, or failed) and each (re)open asks the agent to list again, so
 * the agent stays level-triggered: whatever it missed, its listing shows.
 * The queue is the kit's own, bounded: the agent takes it whole per wake-up
 * (the sim handles tens of thousands of events per round), which a handler
 * called per batch on the informer's thread could not do. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "client/informer.h"
#include "runtime/agent_kit.h"

#define MAX_RESOURCES 16

struct ak_watch {
    ty_informer *inf;       /* NULL once stopped */
    int wake_fd;
    size_t queue_max;
    pthread_mutex_t mu;     /* guards what follows */
    kc_event *queue;        /* our own references, taken whole */
    size_t n, cap;
    bool relist;
};

/* Called with mu held. */
static void wake(ak_watch *aw)
{
    uint64_t one = 1;

    if (aw->wake_fd >= 0)
        (void)!write(aw->wake_fd, &one, sizeof(one));
}

/* Called with mu held. Room for need more events, as far as queue_max allows. */
static void reserve(ak_watch *aw, size_t need)
{
    size_t cap = aw->cap ? aw->cap : 256;

    while (cap < aw->n + need && cap < aw->queue_max)
        cap *= 2;
    if (cap > aw->queue_max)
        cap = aw->queue_max;
    if (cap > aw->cap) {
        kc_event *q = realloc(aw->queue, cap * sizeof(*q));
        if (q) {
            aw->queue = q;
            aw->cap = cap;
        }
    }
}

/* on_relist: the watch was (re)opened; what the agent knew may be stale. */
static void on_relist(ty_informer *inf, void *ctx)
{
    ak_watch *aw = ctx;

    (void)inf;
    pthread_mutex_lock(&aw->mu);
    if (!aw->relist) {
        aw->relist = true;
        wake(aw);
    }
    pthread_mutex_unlock(&aw->mu);
}

/* on_events: the watch's events, in order (the informer's: each queued one
 * takes a reference of its own). */
static void on_events(ty_informer *inf, const kc_event *evs, size_t n, unsigned flags, void *ctx)
{
    ak_watch *aw = ctx;
    bool was_empty, dropped = false;

    (void)inf;
    (void)flags; /* nothing is listed: every event is the watch's */
    pthread_mutex_lock(&aw->mu);
    was_empty = aw->n == 0;
    reserve(aw, n);
    for (size_t i = 0; i < n; i++) {
        if (aw->n == aw->cap) {
            dropped = true; /* the listing that follows finds what it would have said */
            break;
        }
        aw->queue[aw->n] = evs[i];
        aw->queue[aw->n++].obj = ty_obj_ref(evs[i].obj);
    }
    if (was_empty && aw->n)
        wake(aw); /* the agent takes the whole queue per wake-up */
    if (dropped && !aw->relist) {
        aw->relist = true;
        wake(aw);
    }
    pthread_mutex_unlock(&aw->mu);
}

static void free_watch(ak_watch *aw)
{
    inf_free(aw->inf);
    for (size_t i = 0; i < aw->n; i++)
        kc_event_release(&aw->queue[i]);
    free(aw->queue);
    pthread_mutex_destroy(&aw->mu);
    free(aw);
}

ak_watch *ak_watch_start(ty_kc *kc, const char *const *only, int wake_fd, size_t queue_max,
                         const char *thread_name, ty_error *err)
{
    static const inf_handlers handlers = {.on_relist = on_relist, .on_events = on_events};
    ak_watch *aw;
    size_t k = 0;

    while (only && only[k])
        k++;
    if (k == 0 || k > MAX_RESOURCES) {
        ty_seterr(err, TY_EINVALID, "agent kit: watch 1 to %d resources", MAX_RESOURCES);
        return NULL;
    }
    if (!(aw = calloc(1, sizeof(*aw)))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&aw->mu, NULL);
    aw->wake_fd = wake_fd;
    aw->queue_max = queue_max ? queue_max : AK_QUEUE_MAX;
    thread_name = thread_name ? thread_name : "ty-agent-watch";
    /* Interactive: the local agent acts when it wakes, so its latency is the
     * time this thread takes to wake up and pass the event on. */
    aw->inf = inf_new(kc, &(inf_config){.name = thread_name, .watch = only, .interactive = true},
                      &handlers, aw, err);
    if (!aw->inf)
        goto error;
    /* The first (re)list here, on the caller's thread: the watch is open
     * before start returns, so whatever happens after is seen (a Node
     * deleted at once: no listing would show that), and on_relist has asked
     * for the agent's listing. When it cannot open, the thread keeps trying
     * (the informer's backoff) and asks once it has. */
    inf_poll(aw->inf, 0);
    if (inf_start(aw->inf, thread_name, err) < 0)
        goto error;
    return aw;
error:
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
    if (!*n) {
        free(q);
        q = NULL;
    }
    return q;
}

void ak_watch_stop(ak_watch *aw)
{
    ty_informer *inf;

    if (!aw)
        return;
    inf = aw->inf;
    aw->inf = NULL;
    /* Cancels the watch (a blocked wait returns at once) and joins. */
    inf_free(inf);
}

void ak_watch_free(ak_watch *aw)
{
    if (aw)
        free_watch(aw);
}
