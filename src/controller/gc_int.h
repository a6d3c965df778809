/* gc_int.h - what the garbage collector's two files share: gc_graph.c keeps
 * the owner graph from the watch, gc.c works its queue (store edits,
 * reconciles) and runs the thread. Not part of the API (see gc.h). */
#ifndef TY_CONTROLLER_GC_INT_H
#define TY_CONTROLLER_GC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/strmap.h"
#include "client/informer.h"
#include "controller/gc.h"

#define FG_FINALIZER "foregroundDeletion"
#define ORPHAN_FINALIZER "orphan"
#define NS_FINALIZER "kubernetes"
#define NS_RESOURCE "namespaces"
#define EVENT_BATCH 1024
#define RETRY_MS 1000

typedef struct gc_node gc_node;

typedef struct gc_owner {
    gc_node *node;
    bool block; /* blockOwnerDeletion */
} gc_owner;

struct gc_node {
    gc_node *hnext;
    size_t hash;                /* of uid (the graph's table) */
    const char *resource, *ns;  /* set once seen present; ty_gc.names' */
    char *name;
    bool present, deleting;
    bool fg, orphan;            /* propagation finalizers */
    bool ns_finalizer;          /* a namespace still holding "kubernetes" */
    bool delete_sent;           /* we asked the store to delete it */
    bool queued, retry;
    gc_owner *owners;
    size_t nowners;
    gc_node **deps;
    size_t ndeps, capdeps;
    gc_node *qnext;
    /* in the node itself: a lookup compares it without another cache miss
     * (the graph holds a node per object, ~850,000 at 150,000 pods) */
    char uid[];
};

struct ty_gc {
    ty_kc *s;
    pthread_t thread;
    ty_informer *inf;   /* every resource, no cache (gc.c) */
    /* The graph: a chained hash table keyed by uid. */
    gc_node **buckets;
    size_t nbuckets, nnodes;
    gc_node *qhead, *qtail;
    gc_node **retries;
    size_t nretries, capretries;
    int64_t retry_at;
    /* The resource and namespace names of the nodes, each held once (a
     * copy per node would be two blocks more for every object in the
     * store); dropped with the graph (gc_graph_clear), so a namespace gone
     * is held until the next full scan. */
    strmap names;
};

/* ---- synchronous use (tests; gc.c) ---- */

/* A collector on s without its thread (s must outlive it): nothing happens
 * until gc_turn. NULL when out of memory. Free with gc_sync_free. */
ty_gc *gc_sync_new(ty_kc *s);
void gc_sync_free(ty_gc *g);
/* One turn of the thread's loop without waiting: the informer (re)lists
 * when it must and delivers the events at hand, then every queued node is
 * reconciled once the graph has synced. Writes it makes come back as
 * events at the next turn. Nodes on the retry list wait RETRY_MS of real
 * time. -1 once cancelled. */
int gc_turn(ty_gc *g);

/* ---- gc_graph.c ---- */

/* The next node to reconcile (the queue is FIFO, deduplicated), or NULL. */
gc_node *gc_dequeue(ty_gc *g);
/* Forgets the whole graph (before a full scan). */
void gc_graph_clear(ty_gc *g);
/* Whether n is a Namespace. */
bool gc_is_namespace(const gc_node *n);
/* Frees n when nothing refers to it any more (not present, no edges, not queued). */
void gc_node_release(ty_gc *g, gc_node *n);
/* Puts the nodes waiting on the retry list back in the queue. */
void gc_requeue_retries(ty_gc *g);
/* Tries n again after RETRY_MS (a store call failed). */
void gc_retry_later(ty_gc *g, gc_node *n);
/* Applies one object state (or its deletion) from the store to the graph. */
void gc_observe_obj(ty_gc *g, const char *resource, const ty_obj *o, bool deleted);
/* Resources left out of the graph (Events). */
bool gc_ignored(const char *resource);

#endif
