/* hub_int.h - the watch hub's state, shared by the hub (watch.c) and its
 * reaper (reaper.c). Everything here is under the hub's mutex unless said
 * otherwise. */
#ifndef TY_STORE_HUB_INT_H
#define TY_STORE_HUB_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/thread.h"
#include "store/store_int.h"

typedef struct hub_entry {
    store_event_type type;
    const char *resource;
    store_obj *obj;
    size_t held; /* what the ring alone keeps of obj, counted in bytes: 0 while obj is
                    current (the index holds it anyway), its footprint once it is not */
} hub_entry;

/* How many resources get a bell of their own; past that, watchers of the
 * rest wait on the hub's bell, as they all did before. */
#define HUB_MAX_RBELLS 64

/* A bell for the watchers of one resource (every HTTP watch is one): a
 * batch rings only the bells of the resources it has events for. With a
 * thousand watchers of one kind, a batch of pod writes woke each of them
 * to find nothing, and each took the hub's lock, which the leader needs
 * for every event it publishes, to find it. */
typedef struct hub_rbell {
    char name[64];
    const char *interned; /* the history's pointer for name, once published */
    ty_bell bell;
    atomic_bool pending;  /* had an event since the last hub_wake */
    uint64_t evicted_rv;  /* the newest of its events the ring let go */
} hub_rbell;

struct store_hub {
    pthread_mutex_t mu;
    ty_bell bell; /* rung once per batch for the watchers (thread.h: why not a condvar) */
    hub_rbell rbells[HUB_MAX_RBELLS]; /* slots [0, nrbells) are in use, for good */
    size_t nrbells; /* grows under mu; published with a release store (hub_wake reads it
                       without mu) */
    hub_entry *ring;
    size_t cap;
    uint64_t head;   /* rv of the newest event */
    uint64_t oldest; /* events with rv in (oldest, head] are in the ring */
    size_t bytes, max_bytes;
    size_t max_trees; /* events with rv > head - max_trees keep their trees */
    uint64_t trimmed; /* events up to this rv have left the tree window (hub_trim_current) */
    atomic_bool closing; /* written under mu; a watcher with taken events reads it without */
    int refs;        /* the store's and one per open watch */
    /* What the writer lets go of (snapshots it drops, trees it takes off
     * them), freed by the reaper thread instead of the writer, which runs
     * every commit one after another: freeing a pod's tree is a good part
     * of a write's cost, and the writer would do it holding the locks
     * watchers wait on. */
    store_obj **dead_objs;
    json_t **dead_trees;
    void **dead_mem; /* plain blocks (free) */
    size_t ndead_objs, cap_objs, ndead_trees, cap_trees, ndead_mem, cap_mem;
    /* Cold objects to compress (sweep.c), each with its dictionary. */
    struct to_compress {
        store_obj *obj;
        store_zdict *dict;
    } *cold;
    size_t ncold, cap_cold;
    ty_bell reap_bell;
    pthread_t reaper;
    bool reaping;    /* the reaper runs: what dies goes to it */
    /* The reaper's helper (REAP_MAX_TREES): how much may wait for the
     * reaper before it takes it, and how often it did; reap_paused holds
     * the reaper back, not its helper (tests). */
    ty_bell help_bell;
    pthread_t helper;
    bool helping;
    size_t reap_max_trees, reap_max_items;
    uint64_t reap_overflows;
    bool reap_paused;
    atomic_uint reap_slice_sleep_us; /* tests: the reaper sleeps this long per slice (read
                                        without mu) */
    size_t *freed_at_close;       /* tests: what hub_shutdown freed itself */
    struct reap_batch *left;      /* what the reaper had not freed when the hub closed */
};

/* ---- reaper.c ---- */

/* Starts the reaper and its helper (h->reaping, h->helping say whether
 * they run; without them, what dies is freed where it dies). */
void reaper_start(store_hub *h);
/* Wakes the reaper for what the batch just committed left it, and its
 * helper when the reaper has fallen behind. */
void reaper_wake(store_hub *h);
/* With h->closing set: stops both threads and frees whatever they had
 * not (the reaper, at SCHED_IDLE, stops after its slice). */
void reaper_stop(store_hub *h);
/* Lets go of a reference to o. */
void trash_obj(store_hub *h, store_obj *o);
/* Frees o's tree when o has refs references (see obj_take_tree_if_refs). */
void trash_tree_if_refs(store_hub *h, store_obj *o, size_t refs);
/* Frees o's plain text when o has refs references and a compressed copy
 * (obj_take_text_if_refs). */
void trash_text_if_refs(store_hub *h, store_obj *o, size_t refs);

#endif
