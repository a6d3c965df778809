/* store.h - the versioned object store and its watch hub.
 *
 * Objects are JSON documents keyed by (resource, namespace, name), where
 * resource is the group-resource string ("pods", "pytorchjobs.kubeflow.org")
 * and namespace is "" for cluster-scoped kinds. SQLite (WAL) under the data
 * directory is the durable copy; an in-memory index serves reads. Every
 * committed write takes the next value of one global resourceVersion counter
 * and is published to the watch hub in commit order; the write is durable in
 * SQLite before any caller or watcher hears of it.
 *
 * The store owns these metadata fields and ignores what callers put there:
 * uid, resourceVersion, creationTimestamp, generation, deletionTimestamp
 * (except through store_delete). name comes from generateName + 5 random
 * characters when name is empty. generation starts at 1 and is bumped when
 * anything outside metadata and status changes.
 *
 * Deletion: an object with finalizers is only marked (deletionTimestamp set,
 * MODIFIED event); it goes away (DELETED event) at the write that leaves it
 * with an empty finalizer list. Propagation: Foreground adds the
 * "foregroundDeletion" finalizer, Orphan adds "orphan"; the garbage collector
 * (controller/gc.c) does the rest and removes them.
 *
 * Thread safety: every function may be called from any thread. Writes are
 * ordered and committed in batches: writers that arrive together share one
 * SQLite transaction (each still returns only once its own write is durable,
 * with its own outcome); readers do not block writers for long. A mutate
 * function may run in another writer's thread.
 */
#ifndef TY_STORE_STORE_H
#define TY_STORE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/obj.h"

typedef struct ty_store ty_store;

/* An immutable snapshot of one stored object: its JSON and that JSON's compact
 * serialisation. Reference counted (atomically); share freely between threads,
 * never modify what store_obj_json returns (json_deep_copy it first). It
 * begins with a ty_obj (model/obj.h): a store_obj * is a ty_obj * (store_obj_base),
 * and the ty_obj accessors of one call the store_obj functions below. */
typedef struct store_obj store_obj;

/* A snapshot's JSON and its compact text, borrowed, valid while the caller
 * holds o. The store keeps either for objects in use and parses or
 * decompresses them again for a reader of a cold one (sweep.c), so either
 * can be NULL when memory runs out. */
const json_t *store_obj_json(const store_obj *o);
const char *store_obj_text(const store_obj *o, size_t *len); /* NUL-terminated */
/* o's text for one look, NUL-terminated: borrowed when o holds its plain
 * text, else decompressed into a buffer the caller frees (*owned) and not
 * kept on o. For a scan over many objects that reads each once (a listing
 * sent to a client, a runtime's resync): store_obj_text would leave every
 * cold object of the scan its plain text until the sweeper came by again
 * (after a restart, the components' catch-up would hold hundreds of MB so).
 * NULL when out of memory. */
const char *store_obj_text_read(const store_obj *o, size_t *len, char **owned);
/* A copy of o's JSON the caller owns and may change (decref it): a deep
 * copy of its tree, or when o has none a parse of its text that is not kept
 * on o (cheaper than giving o its tree back only to copy it). NULL when out
 * of memory. */
json_t *store_obj_json_copy(const store_obj *o);
/* o's JSON for one look, a new reference (read it, never change it; decref
 * it): its tree, or when o has none a parse that is not kept on o. For a
 * scan over many objects that reads each once (a component loading its
 * model at start): store_obj_json would leave every one of them a tree. */
json_t *store_obj_json_read(const store_obj *o);
/* o's metadata, a new reference (caller decrefs): the member of its tree when
 * it has one, else parsed alone from its text, the rest of the object
 * skipped and nothing kept on o. For readers that want only names, owners
 * and finalizers, of many objects (watch handlers, the garbage collector):
 * a whole pod costs four times as much to parse, and a tree kept for every
 * object a scan looked at was most of the server's memory. NULL when o has
 * none or memory runs out. */
json_t *store_obj_metadata(const store_obj *o);
/* o's JSON for a reader that needs only its metadata, its status and the
 * scalar members of its spec (a watcher following phases and nodes), borrowed
 * as store_obj_json's: o's tree when it has one, else its light tree when
 * the write that made o left one (store_op.light), else store_obj_json(o).
 * A light tree holds every top-level member in full except spec, of which it
 * holds only the members that are neither objects nor arrays (nodeName, not
 * containers). *light (may be NULL) says which was given; a reader that
 * finds it needs more asks store_obj_json. */
const json_t *store_obj_json_light(const store_obj *o, bool *light);
/* A view (model/obj.h): the few fields of an object that a controller
 * reads pass after pass. */
typedef ty_view store_view;
/* o as view shows it, a new tree the caller owns (decref), NULL when make
 * gave nothing or memory runs out. Made once per version, from o's tree
 * when it has one and else from a parse nothing keeps, and kept on o as
 * compact text (a few hundred bytes) until o goes cold like its plain text
 * (sweep.c): a reader that comes back for the object after its tree was
 * dropped parses that text, not the object. A view of an object that is
 * cold already (neither tree nor plain text) is made each time and not
 * kept: a pass over finished jobs after a restart would otherwise give
 * every one of their pods and Services a view at once. One view is kept
 * per object; another view of the same object is made each time it is
 * asked for. */
json_t *store_obj_view(const store_obj *o, const store_view *view);
uint64_t store_obj_rv(const store_obj *o);
/* Whether o holds a parsed tree now (a cache: for tests and the curious). */
bool store_obj_has_tree(const store_obj *o);
/* Its namespace ("" when cluster-scoped) and name, without parsing anything.
 * Borrowed, valid while o is. */
void store_obj_key(const store_obj *o, const char **ns, const char **name);
store_obj *store_obj_ref(store_obj *o);
/* o as a ty_obj, and back (only for a ty_obj that store_obj_base gave). */
static inline ty_obj *store_obj_base(store_obj *o) { return (ty_obj *)o; }
static inline store_obj *store_obj_of(ty_obj *o) { return (store_obj *)o; }
void store_obj_unref(store_obj *o);

/* Opens (creating if needed) <dir>/trainyard.db. Creates namespaces "default"
 * and "kube-system", the Volcano queue "default" and kube-system's quota
 * for the system priority classes (system-critical-pods) when absent. */
ty_store *store_open(const char *dir, ty_error *err);
void store_close(ty_store *s);

/* A row the open cannot load (damaged, a string the text form cannot carry,
 * the older of two rows for one object) is set aside: moved whole into the
 * quarantine table of <dir>/trainyard.db with the reason, logged, counted
 * in the trainyard_store_quarantined_rows gauge; the store opens without
 * it. store_quarantine_list reads that table (read-only, beside a running
 * server too): an array of {id, at, row, resource, namespace, name,
 * resourceVersion, bytes, reason}, oldest first (caller decrefs), or NULL
 * with err. */
json_t *store_quarantine_list(const char *dir, ty_error *err);

/* Tuning for store_open_with; 0 in a field means the default. */
typedef struct store_options {
    size_t history_events; /* watch history length in events (default 250,000) */
    size_t history_bytes;  /* and in bytes of the snapshots only it keeps alive (versions
                              replaced or deleted since; a current one is the index's
                              anyway), counted without their parsed trees (default 40 MiB) */
    size_t history_trees;  /* only the newest this many events keep a parsed tree that
                              nothing else holds; older ones keep their text and are
                              parsed again for a watcher that reaches them (default 1,024) */
} store_options;

/* store_open with options (opts may be NULL). */
ty_store *store_open_with(const char *dir, const store_options *opts, ty_error *err);

/* Names of the resources that hold at least one object now, sorted: a JSON
 * array of strings (caller decrefs). For whole-store scans (the GC). */
json_t *store_resources(ty_store *s);

/* How many objects of resource the store holds now (O(1), under the
 * index's read lock). */
size_t store_count(ty_store *s, const char *resource);

/* What the store's objects hold in memory now, counted by a walk of the
 * index (O(objects), under the read lock): for the curious and for tests. */
typedef struct store_mem {
    size_t objects;
    size_t trees;            /* holding a parsed tree (whole or light) */
    size_t plain, plain_bytes; /* holding their plain text, and its bytes */
    size_t compressed, compressed_bytes; /* holding a compressed copy, and its bytes */
    size_t views, view_bytes; /* holding a view (store_obj_view), and its bytes */
} store_mem;
void store_memory(ty_store *s, store_mem *m);

/* The group commit so far (commit.c): transactions, the writes in them, and
 * how long the leaders held the commit section, which every writer waits
 * for, in all and on the CPU (the rest they were preempted or blocked);
 * and how many times the reaper's helper freed what waited for the reaper,
 * which had fallen behind (reaper.c). */
typedef struct store_commit_stats {
    uint64_t transactions, writes;
    double held_s, held_cpu_s;
    uint64_t reaper_overflows;
} store_commit_stats;
void store_commit_stats_get(ty_store *s, store_commit_stats *c);

/* The resourceVersion of the latest commit. */
uint64_t store_current_rv(ty_store *s);

/* Creates obj (steals nothing; obj is copied). Fails with TY_EEXISTS if the key
 * is taken. Returns the stored object (caller unrefs). */
store_obj *store_create(ty_store *s, const char *resource, const char *ns, const json_t *obj,
                        ty_error *err);

/* As store_create, but takes obj over (steals the reference whatever the
 * outcome; obj must not be used by the caller afterwards): no copy is made. */
store_obj *store_create_take(ty_store *s, const char *resource, const char *ns, json_t *obj,
                             ty_error *err);

/* The function of store_mutate and store_create_async (below): 0 done (obj
 * changed or not), negative an error (*err says which), or, from the
 * function of a light write (store_op.light) given a light copy,
 * STORE_FN_NEEDS_SPEC: it needs more of the spec than that holds, and is run
 * again on a copy of the whole object. */
typedef int (*store_mutate_fn)(json_t *obj, void *arg, ty_error *err);
#define STORE_FN_NEEDS_SPEC 1

/* A create nobody waits for, for records that nobody needs to read back at
 * once (Events). Takes obj over. When another writer is committing, this
 * returns at once and the object is written with the next batch, before
 * anything this thread writes afterwards; otherwise it is written before this
 * returns. When the name is taken and fn is not NULL, fn is applied to the
 * object that holds it instead, as store_mutate does, with a copy of the
 * arglen bytes at arg (fn must not keep pointers into them). Failures are
 * logged (debug) and dropped. */
void store_create_async(ty_store *s, const char *resource, const char *ns, json_t *obj,
                        store_mutate_fn fn, const void *arg, size_t arglen);

/* One write of a store_write_all batch. */
typedef enum {
    STORE_OP_CREATE, /* store_create_take of obj */
    STORE_OP_MUTATE, /* store_mutate of (resource, ns, name) with fn(arg) */
    STORE_OP_RECORD, /* store_create_async of obj with fn(arg): nobody needs the outcome */
    STORE_OP_DELETE, /* store_delete of (resource, ns, name) with dopts */
} store_op_kind;

typedef struct store_op {
    store_op_kind kind;
    const char *resource, *ns, *name; /* name: MUTATE, DELETE; borrowed until the call returns */
    json_t *obj;                      /* CREATE, RECORD: taken over by store_write_all */
    store_mutate_fn fn;               /* MUTATE; RECORD: applied when the name is taken */
    void *arg;                        /* borrowed until the call returns */
    bool status_only;                 /* MUTATE: fn changes only metadata and status (see
                                         store_mutate_status) */
    bool spec_top;                    /* MUTATE: fn changes metadata and status, and sets or
                                         removes top-level members of spec (a binding's
                                         nodeName), never anything under them: those are
                                         shared with the current version */
    bool arena;                       /* MUTATE: the copy fn works on, and what fn adds, are
                                         built in the stored lane of the tree arena
                                         (base/treearena.h); only for a fn that makes no
                                         json_dumps text */
    bool light;                       /* MUTATE with status_only: when the committed
                                         version has no tree, fn may be run on a light
                                         copy (see store_obj_json_light: its spec is only
                                         the scalar members) parsed from its text, the
                                         spec's text carried over as it is; the new
                                         version then keeps that light tree, not a whole
                                         one. fn reads nothing else of the spec, or
                                         returns STORE_FN_NEEDS_SPEC when that is not
                                         enough */
    const struct store_delete_opts *dopts; /* DELETE: NULL or borrowed until the call returns */
    char *text;                       /* RECORD given as text (store_op_record_text): taken
                                         over (malloc'd) instead of obj */
    size_t text_len, meta_end;
    /* outcome (CREATE, MUTATE, DELETE): as store_create_take / store_mutate /
     * store_delete would give */
    store_obj *result;                /* new reference, or NULL and err set */
    ty_error err;
} store_op;

/* Runs n writes together, in array order, and (unless they are all RECORD
 * ops without an argument, which are queued as store_create_async queues
 * them, nobody waiting) returns when every one has its outcome: each succeeds or fails on its own exactly as if it were called
 * alone at that point (a later op sees what an earlier one wrote), but they
 * share transactions and wake watchers once, instead of a transaction, a
 * wake-up and a thread hand-off per object. Nothing needs initialising in
 * the outcome fields. Returns how many CREATE/MUTATE/DELETE ops failed; the caller
 * then releases every op with store_op_clear. RECORD ops never report. */
size_t store_write_all(ty_store *s, store_op *ops, size_t n);
void store_op_clear(store_op *op);

static inline store_op store_op_create(const char *resource, const char *ns, json_t *obj)
{
    return (store_op){.kind = STORE_OP_CREATE, .resource = resource, .ns = ns, .obj = obj};
}

static inline store_op store_op_mutate(const char *resource, const char *ns, const char *name,
                                       store_mutate_fn fn, void *arg)
{
    return (store_op){.kind = STORE_OP_MUTATE, .resource = resource, .ns = ns, .name = name,
                      .fn = fn, .arg = arg};
}

static inline store_op store_op_mutate_status(const char *resource, const char *ns,
                                              const char *name, store_mutate_fn fn, void *arg)
{
    return (store_op){.kind = STORE_OP_MUTATE, .resource = resource, .ns = ns, .name = name,
                      .fn = fn, .arg = arg, .status_only = true};
}

static inline store_op store_op_delete(const char *resource, const char *ns, const char *name,
                                       const struct store_delete_opts *dopts)
{
    return (store_op){.kind = STORE_OP_DELETE, .resource = resource, .ns = ns, .name = name,
                      .dopts = dopts};
}

static inline store_op store_op_mutate_spec_top(const char *resource, const char *ns,
                                               const char *name, store_mutate_fn fn,
                                               void *arg)
{
    return (store_op){.kind = STORE_OP_MUTATE, .resource = resource, .ns = ns, .name = name,
                      .fn = fn, .arg = arg, .spec_top = true};
}

static inline store_op store_op_record(const char *resource, const char *ns, json_t *obj,
                                       store_mutate_fn fn, void *arg)
{
    return (store_op){.kind = STORE_OP_RECORD, .resource = resource, .ns = ns, .obj = obj,
                      .fn = fn, .arg = arg};
}

/* A RECORD given as its compact JSON text instead of a tree, for writers of
 * many small objects that nothing in the server reads as trees (Events):
 * none is built, serialised or freed for it. text (malloc'd, taken over
 * whatever the outcome) holds the object's JSON (len bytes), a NUL, then its
 * name and a NUL. The JSON is the object as store_create_async would take
 * it, minus what the store sets; meta_end is the offset of the '}' that
 * closes its metadata, which must hold "name" (the trailing name) and
 * "namespace" (= ns, unless ns is empty), nothing else the store sets (uid,
 * creationTimestamp, generation, resourceVersion, deletion fields) and no
 * ownerReferences: a text record joins no owner index. The store writes
 * uid, creationTimestamp, generation 1 and resourceVersion at meta_end, in
 * that order, as a tree's create would. Bad input is dropped (logged), as
 * records are. */
static inline store_op store_op_record_text(const char *resource, const char *ns, char *text,
                                            size_t len, size_t meta_end, store_mutate_fn fn,
                                            void *arg)
{
    return (store_op){.kind = STORE_OP_RECORD, .resource = resource, .ns = ns, .text = text,
                      .text_len = len, .meta_end = meta_end, .fn = fn, .arg = arg};
}

/* Current object or NULL with TY_ENOTFOUND. Caller unrefs. */
store_obj *store_get(ty_store *s, const char *resource, const char *ns, const char *name,
                     ty_error *err);

/* Read-modify-write under the writer lock. fn gets a deep copy of the current
 * object to change in place; returning -1 (with err filled) aborts and nothing
 * is written. If fn leaves the object equal to the current one, nothing is
 * written and the current object is returned (no new resourceVersion). If the
 * copy's metadata.resourceVersion is non-empty and differs from the current one
 * after fn returns, the write fails with TY_ECONFLICT ("the object has been
 * modified; please apply your changes to the latest version and try again").
 * TY_ENOTFOUND when the object does not exist. Caller unrefs the result. */
store_obj *store_mutate(ty_store *s, const char *resource, const char *ns, const char *name,
                        store_mutate_fn fn, void *arg, ty_error *err);

/* What store_mutate checks and restores on its function's result, without
 * writing, for a dry run: next (the changed copy of cur) fails with the same
 * TY_ECONFLICT when its resourceVersion is stale, and gets back cur's uid,
 * resourceVersion and the other fields no update changes, and the generation
 * the write would give it. Both borrowed; next is changed in place. */
int store_dry_run_update(const char *resource, const json_t *cur, json_t *next, ty_error *err);

/* store_mutate for a function that changes nothing outside metadata and
 * status (a controller writing status, a kubelet its pod's state): fn gets
 * a copy whose metadata and status are its own one level deep and whose
 * other fields (the spec: most of a pod or a job), and everything below
 * metadata's and status's members, are the current version's, shared. fn
 * must not change those in place: they are part of the immutable current
 * object. To change something below the top of metadata or status, it makes
 * it its own first (ty_json_own, base/jsonown.h). Saves copying the spec,
 * and all but the top of metadata and status, on every status write
 * (sanitizer builds check the rule: TY_CHECK_SHARED).
 *
 * fn runs in the calling thread, before the write is queued, on the version
 * committed then; the writer lock's holder only checks that the version is
 * still current and stamps the result. When another write came first, fn
 * runs again on the new version under the lock. So fn must depend on
 * nothing but its object and arg, and do nothing but change its object
 * (and set err): it may run twice. The same holds for the functions of
 * store_op_mutate_status and store_op_mutate_spec_top. */
store_obj *store_mutate_status(ty_store *s, const char *resource, const char *ns,
                               const char *name, store_mutate_fn fn, void *arg, ty_error *err);

/* Replaces the object with newobj (copied), as a mutate whose function swaps in
 * newobj: resourceVersion precondition as above, store-owned fields kept. */
store_obj *store_update(ty_store *s, const char *resource, const char *ns, const json_t *newobj,
                        ty_error *err);

typedef enum { STORE_PROPAGATE_DEFAULT, STORE_PROPAGATE_BACKGROUND, STORE_PROPAGATE_FOREGROUND,
               STORE_PROPAGATE_ORPHAN } store_propagation;

typedef struct store_delete_opts {
    store_propagation propagation; /* DEFAULT = Background */
    const char *precondition_uid;  /* NULL or "" = none; mismatch -> TY_ECONFLICT */
    const char *precondition_rv;   /* NULL or "" = none; mismatch -> TY_ECONFLICT */
    bool has_grace;                /* gracePeriodSeconds was given */
    int64_t grace_seconds;         /* with has_grace: recorded as deletionGracePeriodSeconds
                                      (a later, shorter one replaces it); without: a pod's
                                      spec.terminationGracePeriodSeconds (30), else 0 */
} store_delete_opts;

/* Deletes or marks for deletion (see above). *deleted tells which happened.
 * Returns the last state (deleted) or the marked object. Caller unrefs. */
store_obj *store_delete(ty_store *s, const char *resource, const char *ns, const char *name,
                        const store_delete_opts *opts, bool *deleted, ty_error *err);

/* List filter: return true to include. obj is borrowed. */
typedef bool (*store_filter_fn)(const json_t *obj, void *arg);

typedef struct store_list_opts {
    const char *ns;              /* NULL = every namespace */
    store_filter_fn filter;      /* NULL = all */
    void *filter_arg;
    size_t limit;                /* 0 = no limit */
    const char *continue_token;  /* from a previous page, or NULL */
} store_list_opts;

typedef struct store_list {
    store_obj **items;           /* sorted by namespace, then name */
    size_t n;
    uint64_t rv;                 /* the list's resourceVersion (a consistent snapshot) */
    char *continue_token;        /* non-NULL when more items remain; caller frees via
                                    store_list_free */
    int64_t remaining;           /* items left after this page, or -1 if unknown */
} store_list;

/* A consistent snapshot at one resourceVersion. A continue token whose
 * snapshot is no longer retained fails with TY_EGONE. Caller calls
 * store_list_free. filter runs with the store's read lock held: it must be
 * quick and must not call into the store.
 *
 * Continue pages: the token holds the first page's resourceVersion and the
 * last key returned. A later page is served from the current state after that
 * key, as long as that resourceVersion is still inside the watch history
 * (otherwise TY_EGONE), and reports the first page's resourceVersion as its
 * own, so a watch from it replays every change made during the listing. No
 * key is returned twice, and every object that exists throughout the listing
 * is returned; objects created or deleted meanwhile may or may not appear. */
int store_list_objects(ty_store *s, const char *resource, const store_list_opts *opts,
                       store_list *out, ty_error *err);
void store_list_free(store_list *l);

/* The objects of resource in namespace ns (NULL = any) whose controller
 * ownerReference (the one with controller: true) has uid owner_uid: a
 * consistent snapshot at out->rv, sorted like store_list_objects, never
 * paged (continue_token NULL, remaining 0). Served from an index kept on
 * every write, so it costs O(result), not O(objects in the namespace). An
 * empty or NULL owner_uid gives an empty list. Caller calls store_list_free,
 * also after a failure (out is then empty). */
int store_list_owned(ty_store *s, const char *resource, const char *ns, const char *owner_uid,
                     store_list *out, ty_error *err);

/* ---- watch hub ---- */

typedef enum { STORE_ADDED = 1, STORE_MODIFIED, STORE_DELETED } store_event_type;

typedef struct store_event {
    store_event_type type;
    const char *resource;        /* borrowed from the store, valid while the store is */
    store_obj *obj;              /* the object after the change (DELETED: last state, with
                                    the deletion's resourceVersion); owned by the event */
    uint64_t rv;
} store_event;

typedef struct store_watch store_watch;

/* Watches resource (NULL = every resource) in namespace ns (NULL = all) for
 * commits with resourceVersion > from_rv. from_rv = 0 means "from now".
 * Fails with TY_EGONE ("too old resource version: X (Y)") when events after
 * from_rv are no longer retained. Caller closes. */
store_watch *store_watch_open(ty_store *s, const char *resource, const char *ns,
                              uint64_t from_rv, ty_error *err);
/* As store_watch_open over every namespace, for the resources named in only
 * (NULL-terminated, copied; NULL: every resource). The events of the others
 * are passed over in the history, no reference taken and nothing returned:
 * the controllers' watches skip the Events, a third of what a training job
 * writes, and every kind they do not follow. */
store_watch *store_watch_open_only(ty_store *s, const char *const *only, uint64_t from_rv,
                                   ty_error *err);

/* Waits up to timeout_ms (-1 = forever) for the next event. Returns 1 with *ev
 * filled (release with store_event_release), 0 on timeout, -1 when the watch
 * fell too far behind (TY_EGONE) or the store is closing. */
int store_watch_next(store_watch *w, int timeout_ms, store_event *ev, ty_error *err);
void store_event_release(store_event *ev);
/* How many times store_watch_next woke to look at the history (tests: a
 * watch of one resource sleeps through batches of the others). */
size_t store_watch_wakeups(const store_watch *w);
/* Wakes a blocked store_watch_next from another thread (it returns -1). */
void store_watch_cancel(store_watch *w);
void store_watch_close(store_watch *w);

#endif
