/* reaper.c - frees what the hub and the store let go of.
 *
 * What a commit lets go of (snapshots it drops, trees it takes off them,
 * plain texts, the history's evicted versions) is freed by the reaper
 * thread instead of the writer, which runs every commit one after another:
 * freeing a pod's tree is a good part of a write's cost, and the writer
 * would do it holding the locks watchers wait on. It also compresses the
 * cold objects the sweeper hands it (sweep.c).
 *
 * The reaper runs under SCHED_IDLE (base/thread.h): only when a CPU has
 * nothing else to run. Freeing can wait, and on cores that the pipeline
 * keeps nearly but not quite busy (the job engine, the scheduler and the
 * nodes each waiting on another's writes now and then) it fits in the gaps,
 * where at the writers' share it would take CPU from them
 * (docs/benchmarks.md). On a CPU with no gaps it would barely run, so what
 * waits for it is bounded: past REAP_MAX_TREES trees (~16 KB each for a
 * pod) or REAP_MAX_ITEMS things in all, its helper, a thread at the
 * writers' share that sleeps otherwise, takes them (the leader of the next
 * batch wakes it: freeing them there would hold the commit section). An
 * unprivileged thread cannot leave SCHED_IDLE, hence a second thread
 * rather than raising the reaper.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/thread.h"
#include "store/hub_int.h"

#define REAP_MAX_TREES 4096
#define REAP_MAX_ITEMS 65536

static void *reap_main(void *arg);
static void *help_main(void *arg);

void reaper_start(store_hub *h)
{
    h->reap_max_trees = REAP_MAX_TREES;
    h->reap_max_items = REAP_MAX_ITEMS;
    h->reaping = pthread_create(&h->reaper, NULL, reap_main, h) == 0;
    if (!h->reaping)
        return;
    ty_thread_setup(h->reaper, "ty-reaper", TY_THREAD_IDLE);
    h->helping = pthread_create(&h->helper, NULL, help_main, h) == 0;
    if (h->helping)
        ty_thread_setup(h->helper, "ty-reaper-help", TY_THREAD_BACKGROUND);
}

static bool grow_trash(void **arr, size_t *cap, size_t n, size_t size)
{
    void *g;

    if (n < *cap)
        return true;
    if (!(g = realloc(*arr, (*cap ? *cap * 2 : 1024) * size)))
        return false;
    *arr = g;
    *cap = *cap ? *cap * 2 : 1024;
    return true;
}

/* Lets go of a reference to o; with h->mu held. */
void trash_obj(store_hub *h, store_obj *o)
{
    if (h->reaping && grow_trash((void **)&h->dead_objs, &h->cap_objs, h->ndead_objs,
                                 sizeof(*h->dead_objs)))
        h->dead_objs[h->ndead_objs++] = o;
    else
        store_obj_unref(o);
}

/* Frees o's tree when o has refs references (see obj_take_tree_if_refs);
 * with h->mu held. */
void trash_tree_if_refs(store_hub *h, store_obj *o, size_t refs)
{
    json_t *t = obj_take_tree_if_refs(o, refs);

    if (!t)
        return;
    if (h->reaping && grow_trash((void **)&h->dead_trees, &h->cap_trees, h->ndead_trees,
                                 sizeof(*h->dead_trees)))
        h->dead_trees[h->ndead_trees++] = t;
    else
        json_decref(t);
}

/* Frees o's plain text when o has refs references and a compressed copy
 * (obj_take_text_if_refs); with h->mu held. For a version only the ring
 * holds once it leaves the tree window: otherwise the ring would keep the
 * plain texts of its replaced and deleted versions (up to max_bytes, 40 MB
 * by default) until they are evicted, though their compressed copies were
 * made when they were written. A watcher that comes to one later reads it
 * decompressed. */
void trash_text_if_refs(store_hub *h, store_obj *o, size_t refs)
{
    char *t = obj_take_text_if_refs(o, refs);

    if (!t)
        return;
    if (h->reaping && grow_trash((void **)&h->dead_mem, &h->cap_mem, h->ndead_mem,
                                 sizeof(*h->dead_mem)))
        h->dead_mem[h->ndead_mem++] = t;
    else
        free(t);
}

/* What the reaper takes in one go, and how far it got. */
typedef struct reap_batch {
    store_obj **objs;
    json_t **trees;
    void **mem;
    struct to_compress *cold;
    size_t nobjs, ntrees, nmem, ncold;
    size_t done; /* things freed, in the order trees, objects, memory, cold */
} reap_batch;

/* The reaper looks whether the hub is closing after this many things: at
 * SCHED_IDLE on a busy CPU it may get a few milliseconds a second, and
 * hub_shutdown frees what it left instead of waiting for it. */
#define REAP_SLICE 64

static size_t reap_waiting(const store_hub *h)
{
    return h->ndead_objs + h->ndead_trees + h->ndead_mem + h->ncold;
}

/* Whether the reaper fell behind: more waits for it than REAP_MAX_TREES
 * and REAP_MAX_ITEMS allow (the cold objects to compress are left to it:
 * their number is bounded by hub_compress instead). */
static bool reap_behind(const store_hub *h)
{
    return h->ndead_trees > h->reap_max_trees ||
           h->ndead_objs + h->ndead_trees + h->ndead_mem > h->reap_max_items;
}

/* Takes what waits to be freed and, with cold, what waits to be
 * compressed; with h->mu held. */
static void reap_take(store_hub *h, reap_batch *b, bool cold)
{
    *b = (reap_batch){h->dead_objs, h->dead_trees, h->dead_mem, NULL,
                      h->ndead_objs, h->ndead_trees, h->ndead_mem, 0, 0};
    h->dead_objs = NULL;
    h->dead_trees = NULL;
    h->dead_mem = NULL;
    h->ndead_objs = h->cap_objs = h->ndead_trees = h->cap_trees = 0;
    h->ndead_mem = h->cap_mem = 0;
    if (cold) {
        b->cold = h->cold;
        b->ncold = h->ncold;
        h->cold = NULL;
        h->ncold = h->cap_cold = 0;
    }
}

/* Frees one thing of b: the done'th. */
static void reap_one(reap_batch *b, bool compress)
{
    size_t i = b->done++;

    if (i < b->ntrees) {
        json_decref(b->trees[i]);
        return;
    }
    if ((i -= b->ntrees) < b->nobjs) {
        store_obj_unref(b->objs[i]);
        return;
    }
    if ((i -= b->nobjs) < b->nmem) {
        free(b->mem[i]);
        return;
    }
    i -= b->nmem;
    if (compress)
        obj_compress(b->cold[i].obj, b->cold[i].dict);
    store_obj_unref(b->cold[i].obj);
    zdict_unref(b->cold[i].dict);
}

/* Tests (hub_reaper_slow with HUB_REAPER_HOLD): the reaper waits at the
 * start of a slice until the hub closes, as one that gets no CPU would,
 * however long the closer takes to come. */
static void hold_until_closing(store_hub *h)
{
    while (!atomic_load(&h->closing)) {
        uint32_t ticket = ty_bell_ticket(&h->reap_bell);

        if (atomic_load(&h->closing))
            break;
        ty_bell_wait(&h->reap_bell, ticket, NULL);
    }
}

/* Frees what b holds, compressing its cold objects first unless the hub
 * is closing (the work would be wasted then); without h->mu. The reaper
 * (reaper true) stops between slices once it is closing and returns false,
 * the rest of b left for hub_shutdown. */
static bool reap_free(store_hub *h, reap_batch *b, bool reaper)
{
    size_t n = b->ntrees + b->nobjs + b->nmem + b->ncold;
    bool compress = !atomic_load(&h->closing);

    while (b->done < n) {
        if (reaper && b->done % REAP_SLICE == 0) {
            if (atomic_load(&h->closing))
                return false;
            unsigned us = atomic_load(&h->reap_slice_sleep_us);

            if (us == HUB_REAPER_HOLD) {
                hold_until_closing(h);
                return false;
            }
            if (us)
                usleep(us);
        }
        reap_one(b, compress);
    }
    free(b->trees);
    free(b->objs);
    free(b->mem);
    free(b->cold);
    return true;
}

/* Sleeps until bell rings; with h->mu held, let go meanwhile. */
static void sleep_on(store_hub *h, ty_bell *bell)
{
    uint32_t ticket = ty_bell_ticket(bell);

    pthread_mutex_unlock(&h->mu);
    ty_bell_wait(bell, ticket, NULL);
    pthread_mutex_lock(&h->mu);
}

static void *reap_main(void *arg)
{
    store_hub *h = arg;

    pthread_mutex_lock(&h->mu);
    while (!h->closing) { /* hub_shutdown frees what waits then */
        reap_batch b;

        if (!reap_waiting(h) || h->reap_paused) {
            sleep_on(h, &h->reap_bell);
            continue;
        }
        reap_take(h, &b, true);
        pthread_mutex_unlock(&h->mu);
        if (!reap_free(h, &b, true)) {
            /* closing: the rest goes to hub_shutdown (freed here if there
             * is no memory to hand it over) */
            if ((h->left = malloc(sizeof(*h->left))))
                *h->left = b;
            else
                reap_free(h, &b, false);
        }
        pthread_mutex_lock(&h->mu);
    }
    h->reaping = false;
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* The reaper's helper: takes what waits for the reaper whenever that is
 * more than the limits allow. */
static void *help_main(void *arg)
{
    store_hub *h = arg;

    pthread_mutex_lock(&h->mu);
    for (;;) {
        reap_batch b;

        if (!reap_behind(h)) {
            if (h->closing)
                break; /* hub_shutdown frees the rest */
            sleep_on(h, &h->help_bell);
            continue;
        }
        reap_take(h, &b, false);
        h->reap_overflows++;
        pthread_mutex_unlock(&h->mu);
        reap_free(h, &b, false);
        pthread_mutex_lock(&h->mu);
    }
    h->helping = false;
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

void reaper_wake(store_hub *h)
{
    reap_batch over = {0};
    bool reap, behind;

    pthread_mutex_lock(&h->mu);
    reap = reap_waiting(h) != 0;
    behind = reap_behind(h);
    if (behind && !h->helping) { /* no helper: freed here */
        reap_take(h, &over, false);
        h->reap_overflows++;
    }
    pthread_mutex_unlock(&h->mu);
    if (reap)
        ty_bell_ring(&h->reap_bell);
    if (behind)
        ty_bell_ring(&h->help_bell);
    reap_free(h, &over, false);
}

void reaper_stop(store_hub *h)
{
    bool reaping, helping;
    size_t freed = 0;
    reap_batch b;

    pthread_mutex_lock(&h->mu);
    reaping = h->reaping;
    helping = h->helping;
    pthread_mutex_unlock(&h->mu);
    ty_bell_ring(&h->reap_bell);
    ty_bell_ring(&h->help_bell);
    if (helping)
        pthread_join(h->helper, NULL);
    if (reaping)
        pthread_join(h->reaper, NULL);
    /* What the reaper left and what still waits are freed here: at
     * SCHED_IDLE on a busy machine it could take seconds to. */
    if (h->left) {
        freed += h->left->ntrees + h->left->nobjs + h->left->nmem + h->left->ncold -
                 h->left->done;
        reap_free(h, h->left, false);
        free(h->left);
        h->left = NULL;
    }
    pthread_mutex_lock(&h->mu);
    reap_take(h, &b, true);
    pthread_mutex_unlock(&h->mu);
    freed += b.ntrees + b.nobjs + b.nmem + b.ncold;
    reap_free(h, &b, false);
    if (h->freed_at_close)
        *h->freed_at_close = freed;
}

void hub_trash(store_hub *h, json_t **trees, size_t ntrees, void **mem, size_t nmem)
{
    size_t t = 0, m = 0;

    pthread_mutex_lock(&h->mu);
    if (h->reaping && !h->closing) {
        for (; t < ntrees && grow_trash((void **)&h->dead_trees, &h->cap_trees, h->ndead_trees,
                                        sizeof(*h->dead_trees));
             t++)
            h->dead_trees[h->ndead_trees++] = trees[t];
        for (; m < nmem && grow_trash((void **)&h->dead_mem, &h->cap_mem, h->ndead_mem,
                                      sizeof(*h->dead_mem));
             m++)
            h->dead_mem[h->ndead_mem++] = mem[m];
    }
    pthread_mutex_unlock(&h->mu);
    if (t || m)
        ty_bell_ring(&h->reap_bell);
    /* No reaper (or no memory for the lists): freed here. */
    for (; t < ntrees; t++)
        json_decref(trees[t]);
    for (; m < nmem; m++)
        free(mem[m]);
}

void hub_compress(store_hub *h, store_obj *o, store_zdict *d)
{
    bool queued = false;

    /* Held back (tests), the reaper takes no object to compress: the
     * sweeper would hand it the same ones pass after pass, and the
     * reference each holds keeps its tree on past the tree window
     * (hub_trim_current) for as long as the reaper is held, so what
     * test_reaper_behind_bounded counts would depend on how many passes
     * the machine's speed allowed. Left uncompressed, the next pass after
     * the reaper is let go hands it over again. */
    pthread_mutex_lock(&h->mu);
    /* Bounded like what waits to be freed: the sweeper hands an object
     * over again at each pass until the reaper compressed it, and each
     * holds a reference (its tree and text with it); a reaper that gets no
     * CPU let them pile up for as long as it starved. Refused, the object
     * stays as it is and a later pass hands it over again. */
    if (h->reaping && !h->closing && !h->reap_paused && h->ncold < h->reap_max_items &&
        grow_trash((void **)&h->cold, &h->cap_cold, h->ncold, sizeof(*h->cold))) {
        h->cold[h->ncold++] = (struct to_compress){o, d};
        queued = true;
        /* A batch's wake-up would do, but a store nobody writes sweeps too. */
        if (h->ncold == 1)
            ty_bell_ring(&h->reap_bell);
    }
    pthread_mutex_unlock(&h->mu);
    if (!queued) {
        store_obj_unref(o);
        zdict_unref(d);
    }
}

void hub_reaper_test(store_hub *h, bool paused, size_t max_trees, size_t max_items)
{
    pthread_mutex_lock(&h->mu);
    h->reap_paused = paused;
    h->reap_max_trees = max_trees;
    h->reap_max_items = max_items;
    pthread_mutex_unlock(&h->mu);
    ty_bell_ring(&h->reap_bell);
    ty_bell_ring(&h->help_bell);
}

void hub_reaper_slow(store_hub *h, unsigned sleep_us, size_t *freed_at_close)
{
    pthread_mutex_lock(&h->mu);
    h->reap_slice_sleep_us = sleep_us;
    h->freed_at_close = freed_at_close;
    pthread_mutex_unlock(&h->mu);
}

void hub_reaper_stats(store_hub *h, size_t *trees_waiting, uint64_t *overflows)
{
    pthread_mutex_lock(&h->mu);
    if (trees_waiting)
        *trees_waiting = h->ndead_trees;
    if (overflows)
        *overflows = h->reap_overflows;
    pthread_mutex_unlock(&h->mu);
}
