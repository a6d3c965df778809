/* informer.h - list, watch, relist: one loop for everything that follows
 * API objects through the client interface (kc.h): the job controllers'
 * work queue, the garbage collector, the scheduler, the runtimes.
 *
 * An informer lists the resources it is given, watches from the first
 * list's resourceVersion, and hands what it learns to its handlers in order:
 *
 *   on_relist   a (re)list begins: what the handler learnt before may be
 *               stale (a gap in the watch)
 *   on_events   the listed objects, as KC_ADDED with INF_LISTED, one
 *               resource after the other in the order given; then (with a
 *               cache) KC_DELETED with INF_LISTED for every cached object
 *               that the list no longer holds; then the watch's events, in
 *               commit order, several per call
 *   on_synced   after each (re)list, once the watch has caught up to what
 *               it had at hand: the handler's picture is whole
 *
 * What disappeared during a gap: with the cache (inf_config.cache), the
 * informer knows what it had and reports each such object as a delete.
 * Without it (embedded controllers: the store's own index is the cache, and
 * a second copy of 150,000 pods is not affordable), on_relist is the full
 * resync: a handler that keeps state drops it there (or marks it, and
 * sweeps what on_synced finds unmarked). Listed resources that follow a
 * watch from the first one's resourceVersion may see an event they already
 * listed again, in order; the state at on_synced is the store's.
 *
 * Resources given only to watch (not list) come as events; the handler that
 * wants to list them itself (its own filter, a kc_list_owned per object)
 * does it in on_relist, after which the watch delivers everything newer
 * (the watch was opened first: a change may come both ways).
 *
 * The watch falling behind (TY_EGONE), ending, or failing to open makes the
 * informer list again, after a backoff that grows from 100 ms to 5 s while
 * attempts fail. With nothing to list (no list, not list_all) a relist is
 * the watch's reopening from now, then on_relist: the handler lists what it
 * wants itself (the node agents' watch, runtime/agent_kit.h). Embedded controllers read through kc_get and kc_list_owned
 * (served from the store's index); the cache is for clients that have no
 * such index (the HTTP client, operator mode).
 *
 * Two ways to run one: inf_poll on the caller's own thread (which does its
 * other work between calls: timers, a scheduling cycle), or inf_start, which
 * runs inf_poll on a thread of its own. One inf_poll before inf_start, on
 * the starting thread, makes the first (re)list there: a caller whose
 * handlers need the watch open before it goes on (a change made right after
 * must be seen) does that. Handlers run on whichever thread
 * polls, one call at a time. */
#ifndef TY_CLIENT_INFORMER_H
#define TY_CLIENT_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_informer ty_informer;

/* on_events flags */
enum {
    INF_LISTED = 1u << 0, /* from a (re)list, not the watch */
};

typedef struct inf_handlers {
    /* All may be NULL. ctx is inf_new's. */
    void (*on_relist)(ty_informer *inf, void *ctx);
    /* evs[0..n) in order; the events and their objects are the informer's
     * (ty_obj_ref to keep one). Must be quick: it holds up the watch. Look
     * at ev->resource before the object, and ask ty_obj_metadata where the
     * metadata is all that is wanted. */
    void (*on_events)(ty_informer *inf, const kc_event *evs, size_t n, unsigned flags,
                      void *ctx);
    void (*on_synced)(ty_informer *inf, void *ctx);
} inf_handlers;

typedef struct inf_config {
    const char *name;           /* for logs (copied) */
    /* Watched resources (NULL-terminated, copied); NULL: every resource.
     * kc_watch_open's `only`: the others' events never reach the informer. */
    const char *const *watch;
    /* Listed at each (re)list, in this order (NULL-terminated, copied;
     * NULL: none). Each must be watched. */
    const char *const *list;
    /* Instead of list: every resource kc_resources names at each (re)list,
     * but those list_skip says (may be NULL). watch must be NULL. */
    bool list_all;
    bool (*list_skip)(const char *resource);
    /* Keep the listed resources' objects (inf_get, inf_list_owned): see
     * above for who should. */
    bool cache;
    /* Events per on_events call at most (0: 1024). */
    size_t batch;
    /* inf_start's thread keeps the default scheduling policy, so that its
     * wake-ups preempt (a node agent, which acts as it wakes); else it runs
     * under SCHED_BATCH like the server's other threads (base/thread.h). */
    bool interactive;
} inf_config;

/* An informer on c (which must outlive it). Lists nothing yet: the first
 * inf_poll (or the thread of inf_start) does. NULL with err when out of
 * memory or the config is inconsistent. */
ty_informer *inf_new(ty_kc *c, const inf_config *cfg, const inf_handlers *h, void *ctx,
                     ty_error *err);

/* One step on the caller's thread: (re)lists when needed (handlers called
 * as above) or waits out the backoff of a failed attempt, then waits up to
 * timeout_ms (-1: until something comes or inf_cancel) for events and
 * delivers those at hand, up to the batch. Returns 1 when it delivered
 * something, 0 when not, -1 once cancelled. Not while inf_start's thread
 * runs. */
int inf_poll(ty_informer *inf, int timeout_ms);

/* Runs inf_poll on a thread of its own (named thread_name, at most 15
 * bytes) until inf_cancel or inf_free. -1 with err when it cannot start. */
int inf_start(ty_informer *inf, const char *thread_name, ty_error *err);

/* From any thread (a handler included): the poll under way and every later
 * one return -1 at once. */
void inf_cancel(ty_informer *inf);

/* Cancels, waits for inf_start's thread, frees everything. NULL is fine.
 * Not from a handler. */
void inf_free(ty_informer *inf);

/* Whether the last (re)list has been delivered (on_synced called) and no
 * gap has opened since. */
bool inf_has_synced(ty_informer *inf);
/* How many lists have been delivered so far (for tests and logs). */
uint64_t inf_lists(ty_informer *inf);

/* ---- the cache (config.cache; from any thread) ---- */

/* The cached object (a new reference), or NULL when there is none or no
 * cache. */
ty_obj *inf_get(ty_informer *inf, const char *resource, const char *ns, const char *name);
/* The cached objects of resource in ns (NULL: every namespace) whose
 * controller ownerReference has uid owner_uid, in no order; out as
 * kc_list_owned's (free with kc_list_free; rv is empty). -1 with err when
 * out of memory or without a cache. */
int inf_list_owned(ty_informer *inf, const char *resource, const char *ns,
                   const char *owner_uid, kc_list *out, ty_error *err);
/* Whether the cache keeps resource's objects (config.cache, and resource
 * is listed). */
bool inf_caches(const ty_informer *inf, const char *resource);
/* How many objects of resource the cache holds. */
size_t inf_count(ty_informer *inf, const char *resource);

#endif
