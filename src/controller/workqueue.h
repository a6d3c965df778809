/* workqueue.h - the loop every job controller runs: one watch on the store,
 * a work queue of keys, workers that reconcile them, and timers.
 *
 * The queue follows client-go's workqueue rules: a key is queued at most
 * once; a key being reconciled is never handed to a second worker, and an
 * event for it meanwhile marks it dirty, so it is queued again when its pass
 * ends. A pass that fails is retried a second later, and after each
 * further failure in a row twice as late, up to 16 s; a pass may ask for
 * another look at a given time (deadlines, TTLs). When the watch is opened
 * (at start, and after it fell behind the store's history) the controller
 * lists what it owns and queues everything, after the watch opened, so that
 * nothing changed in between is missed.
 *
 * Several workers, because a pass spends most of its time waiting for its
 * writes to commit: with one, a whole controller waited with it. */
#ifndef TY_CONTROLLER_WORKQUEUE_H
#define TY_CONTROLLER_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_workqueue ty_workqueue;

typedef struct wq_ops {
    /* The keys an event concerns (wq_add each). Runs on the watch thread;
     * must be quick: look at ev->resource before the object's JSON. */
    void (*on_event)(ty_workqueue *q, const kc_event *ev, void *ctx);
    /* Queues every object the controller follows (wq_add each). */
    void (*resync)(ty_workqueue *q, ty_kc *s, void *ctx);
    /* One pass over key, on a worker (which may run it before wq_start
     * returns: the queue is q). -1: retried later (1 s, then backing off
     * while it keeps failing). *wake_at
     * (seconds since the epoch, 0 = never) asks for another look then. */
    int (*reconcile)(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx);
    /* The resources whose events on_event is given (NULL-terminated, living
     * as long as the queue); NULL: every resource's. */
    const char *const *resources;
    /* Of those, the ones a pass reads (NULL-terminated, living as long as
     * the queue; NULL: none): when the client keeps no index of its own
     * (kc_reads_local: HTTP, operator mode), or always with cache_always,
     * the watch lists them into a cache (client/informer.h) and wq_client
     * answers kc_get and kc_list_owned of them from it (client/kc_cache.h),
     * updated before their events queue a key. */
    const char *const *cache;
    bool cache_always;
} wq_ops;

/* Starts `workers` workers on s (which must outlive the queue), opens the
 * watch and queues what exists (resync) before it returns, then starts the
 * watch thread: a change made after wq_start returns comes as an event. name
 * is for logs. NULL with err when a thread cannot start. */
ty_workqueue *wq_start(ty_kc *s, const char *name, size_t workers, const wq_ops *ops,
                       void *ctx, ty_error *err);

/* The client a pass reads and writes through: s, or the cache's over s
 * (wq_ops.cache). Valid while the queue is, from reconcile and resync. */
ty_kc *wq_client(ty_workqueue *q);

/* Queues key (copied) unless it is queued already; marks it dirty when a
 * worker has it. From on_event and resync (or any thread). */
void wq_add(ty_workqueue *q, const char *key);

/* As wq_add, for an event at resourceVersion rv ("": not known; opaque,
 * compared for equality): dropped when it is the controller's own write of
 * key noted by wq_wrote. */
void wq_add_event(ty_workqueue *q, const char *key, const char *rv);

/* From a pass over key: it wrote key's object itself, at rv. That write's
 * event brings no pass of its own: the pass saw everything before it, and
 * an event that came meanwhile from somebody else's write still does. */
void wq_wrote(ty_workqueue *q, const char *key, const char *rv);

/* Stops the threads (a pass under way finishes first), frees everything.
 * NULL is fine. */
void wq_stop(ty_workqueue *q);

#endif
