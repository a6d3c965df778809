/* kc.h - the client interface: how controllers, the scheduler and the
 * runtimes read and write API objects.
 *
 * One ops table, two implementations: embedded (client/kc_embedded.h: direct
 * calls into the store, its fast paths kept inside) and HTTP (client/kc_http.h:
 * libcurl speaking the Kubernetes API to Trainyard's or a cluster's API
 * server). Code above this layer includes neither the store nor the server,
 * and cannot tell which implementation it was given (docs/internals/client.md).
 *
 * Resources are named by their store key (api_store_key: "pods",
 * "pytorchjobs.kubeflow.org", "mpijobs.v2beta1.kubeflow.org"); ns is "" for a
 * cluster-scoped kind. Objects are ty_obj snapshots (model/obj.h), every one
 * returned a new reference the caller unrefs. resourceVersions are opaque
 * strings. Functions return 0 / an object on success, -1 / NULL with err
 * filled (TY_ENOTFOUND, TY_EEXISTS, TY_ECONFLICT, TY_EGONE, TY_EINVALID, ...,
 * as the API's Status would say). Every function may be called from any
 * thread. */
#ifndef TY_CLIENT_KC_H
#define TY_CLIENT_KC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/obj.h"

typedef struct ty_kc ty_kc;
typedef struct kc_watch kc_watch;
typedef struct kc_ops kc_ops;

/* ---- reads ---- */

/* The object, or NULL with TY_ENOTFOUND. */
ty_obj *kc_get(ty_kc *c, const char *resource, const char *ns, const char *name,
               ty_error *err);

/* A list filter: return true to include. obj is borrowed; the filter must be
 * quick and must not call the client. */
typedef bool (*kc_filter_fn)(const json_t *obj, void *arg);

typedef struct kc_list_opts {
    const char *ns;             /* NULL = every namespace */
    const char *label_selector; /* NULL = all; as ?labelSelector= */
    const char *field_selector; /* NULL = all; as ?fieldSelector= */
    kc_filter_fn filter;        /* NULL = all; applied here, after the selectors */
    void *filter_arg;
    size_t limit;               /* 0 = no limit */
    const char *continue_token; /* from a previous page, or NULL */
} kc_list_opts;

typedef struct kc_list {
    ty_obj **items;             /* sorted by namespace, then name */
    size_t n;
    char rv[TY_RV_MAX];         /* the list's resourceVersion: watch from it */
    char *continue_token;       /* non-NULL when more items remain */
    int64_t remaining;          /* items left after this page, or -1 if unknown */
    /* the implementation's: how kc_list_free frees the list (NULL: unref
     * the items and free the arrays), and what it keeps */
    void (*free_fn)(struct kc_list *l);
    void *impl;
} kc_list;

/* A consistent list of resource (opts may be NULL). Free with kc_list_free,
 * also after a failure (out is then empty). A continue token that has
 * expired fails with TY_EGONE. */
int kc_list_objects(ty_kc *c, const char *resource, const kc_list_opts *opts, kc_list *out,
            ty_error *err);
/* The objects of resource in ns (NULL = any) whose controller ownerReference
 * has uid owner_uid: O(result) where the implementation keeps an index.
 * Never paged. */
int kc_list_owned(ty_kc *c, const char *resource, const char *ns, const char *owner_uid,
                  kc_list *out, ty_error *err);
/* The same, for objects that also carry label_selector (as upstream's
 * controllers select what a job controls: its job-name label): an
 * implementation with an owner index may serve it as kc_list_owned, one
 * without (HTTP) asks the server for the selector's objects and keeps the
 * owned ones, so a pass costs the job's objects, not the namespace's.
 * Objects without the labels may or may not be returned: callers check. */
int kc_list_owned_sel(ty_kc *c, const char *resource, const char *ns, const char *owner_uid,
                      const char *label_selector, kc_list *out, ty_error *err);
void kc_list_free(kc_list *l);

/* How many objects of resource exist now (cheap where the implementation
 * keeps a count; a list otherwise). 0 when that cannot be learnt. */
size_t kc_count(ty_kc *c, const char *resource);
/* kc_count where the implementation keeps a count (embedded, fake), else
 * SIZE_MAX ("maybe some") without asking anyone: for shortcuts taken on
 * every watch event, which over HTTP would cost a request each. */
size_t kc_count_hint(ty_kc *c, const char *resource);
/* Whether reads are look-ups in an index the implementation keeps
 * (embedded, fake) rather than requests (HTTP): a controller over a client
 * without one keeps an informer's cache to read from (client/kc_cache.h). */
bool kc_reads_local(ty_kc *c);
/* The resources that may hold objects (a JSON array of store keys, sorted;
 * caller decrefs): those holding at least one object now where the
 * implementation knows, every listable one otherwise. NULL when out of memory
 * or unreachable. For whole-cluster scans (the garbage collector). */
json_t *kc_resources(ty_kc *c);

/* ---- writes ---- */

/* The function of kc_mutate: changes obj in place and returns 0, or returns
 * -1 with err to write nothing; from a KC_LIGHT write given a light copy it
 * may return KC_FN_NEEDS_SPEC to be run again on the whole object. It may run
 * more than once (after a conflict): it depends on nothing but obj and arg. */
typedef int (*kc_mutate_fn)(json_t *obj, void *arg, ty_error *err);
#define KC_FN_NEEDS_SPEC 1

/* kc_mutate flags. */
enum {
    /* Through the status subresource: only .status is written, and the
     * resourceVersion fn sets as a precondition; for pods also their
     * labels, annotations and finalizers (kube-apiserver's pods/status
     * takes them). Anything else fn changes is dropped, as an API server
     * drops it (the embedded implementation too, with a warning): what a
     * controller must remember goes in a status field or a write of its
     * own. fn must not change below the top of anything but status in
     * place: the embedded implementation shares the rest with the current
     * version (store_mutate_status; base/jsonown.h makes a member one's own). */
    KC_STATUS = 1u << 0,
    /* Hints an implementation may ignore (the embedded one's fast paths, see
     * store.h): fn sets or removes only top-level members of spec besides
     * metadata and status; */
    KC_SPEC_TOP = 1u << 1,
    /* build the copy in the tree arena (base/treearena.h; fn makes no text); */
    KC_ARENA = 1u << 2,
    /* with KC_STATUS: fn may be given a light copy (model/obj.h). */
    KC_LIGHT = 1u << 3,
    /* start from a read of the object, not from a copy the implementation
     * remembers (the HTTP client's last write: the caller knows it stale,
     * e.g. after a conflict). */
    KC_FRESH = 1u << 4,
};

/* Creates obj (taken over whatever the outcome); metadata.generateName is
 * honoured. TY_EEXISTS when the name is taken. */
ty_obj *kc_create(ty_kc *c, const char *resource, const char *ns, json_t *obj,
                  ty_error *err);
/* Replaces the object with obj (borrowed). A non-empty
 * metadata.resourceVersion is a precondition (TY_ECONFLICT when stale). */
ty_obj *kc_update(ty_kc *c, const char *resource, const char *ns, const json_t *obj,
                  ty_error *err);
/* Read, change with fn, write with the read's resourceVersion, and again on
 * a conflict (a few times, then TY_ECONFLICT): fn gets a copy of the current
 * object. When fn leaves it equal, nothing is written and the current object
 * is returned. When fn itself sets metadata.resourceVersion, that is the
 * precondition and a conflict is not retried. */
ty_obj *kc_mutate(ty_kc *c, const char *resource, const char *ns, const char *name,
                  kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err);

typedef enum { KC_PATCH_MERGE, KC_PATCH_JSON, KC_PATCH_STRATEGIC } kc_patch_type;
/* A patch as the API applies it (patch is borrowed). */
ty_obj *kc_patch(ty_kc *c, const char *resource, const char *ns, const char *name,
                 kc_patch_type type, const json_t *patch, bool status, ty_error *err);

typedef enum { KC_PROPAGATE_DEFAULT, KC_PROPAGATE_BACKGROUND, KC_PROPAGATE_FOREGROUND,
               KC_PROPAGATE_ORPHAN } kc_propagation;

typedef struct kc_delete_opts {
    kc_propagation propagation;    /* DEFAULT = the resource's default (Background) */
    const char *precondition_uid;  /* NULL or "" = none; mismatch -> TY_ECONFLICT */
    const char *precondition_rv;   /* NULL or "" = none; mismatch -> TY_ECONFLICT */
    bool has_grace;                /* gracePeriodSeconds was given */
    int64_t grace_seconds;
} kc_delete_opts;

/* Deletes the object, or marks it when finalizers hold it; *deleted (may be
 * NULL) says which. Returns its last state or the marked object (NULL
 * without an error when the implementation learnt neither). */
ty_obj *kc_delete(ty_kc *c, const char *resource, const char *ns, const char *name,
                  const kc_delete_opts *opts, bool *deleted, ty_error *err);

/* Binds a pod to a node (pods/binding). uid, when not NULL or "", must be
 * the pod's. TY_ECONFLICT when it is bound already. */
int kc_bind(ty_kc *c, const char *ns, const char *name, const char *uid, const char *node,
            ty_error *err);

/* ---- many writes at once ---- */

typedef enum {
    KC_OP_CREATE, /* kc_create of obj */
    KC_OP_MUTATE, /* kc_mutate of (resource, ns, name) with fn(arg) and flags */
    KC_OP_DELETE, /* kc_delete of (resource, ns, name) with dopts */
    KC_OP_BIND,   /* kc_bind of pod (ns, name) to node, uid as kc_bind's */
    KC_OP_RECORD, /* a create nobody waits for (Events): failures are logged and
                     dropped; when the name is taken and fn is not NULL, fn is
                     applied to the object holding it. obj, or text (below) */
} kc_op_kind;

typedef struct kc_op {
    kc_op_kind kind;
    const char *resource, *ns, *name; /* borrowed until the call returns */
    json_t *obj;                      /* CREATE, RECORD: taken over */
    kc_mutate_fn fn;                  /* MUTATE; RECORD: applied when the name is taken */
    void *arg;                        /* borrowed until the call returns */
    unsigned flags;                   /* MUTATE: as kc_mutate's */
    const kc_delete_opts *dopts;      /* DELETE: NULL or borrowed */
    const char *node, *uid;           /* BIND */
    /* RECORD given as its compact JSON text (malloc'd, taken over): the
     * object's JSON (text_len bytes), a NUL, its name and a NUL; meta_end is
     * the offset of the '}' closing its metadata (see store.h's
     * store_op_record_text for what the metadata may hold). */
    char *text;
    size_t text_len, meta_end;
    /* outcome (CREATE, MUTATE, DELETE, BIND): result a new reference, or
     * NULL with err set; for BIND the bound pod where the implementation
     * has it at no cost, else NULL also on success (err.code says) */
    ty_obj *result;
    ty_error err;
} kc_op;

/* Runs n writes in array order, each succeeding or failing as if it were
 * called alone at that point; the embedded implementation commits them
 * together (one transaction, one wake-up of watchers). Returns how many
 * CREATE/MUTATE/DELETE/BIND ops failed; release every op with kc_op_clear
 * afterwards (RECORD ops report nothing). */
size_t kc_write_all(ty_kc *c, kc_op *ops, size_t n);
void kc_op_clear(kc_op *op);

static inline kc_op kc_op_create(const char *resource, const char *ns, json_t *obj)
{
    return (kc_op){.kind = KC_OP_CREATE, .resource = resource, .ns = ns, .obj = obj};
}

static inline kc_op kc_op_mutate(const char *resource, const char *ns, const char *name,
                                 kc_mutate_fn fn, void *arg, unsigned flags)
{
    return (kc_op){.kind = KC_OP_MUTATE, .resource = resource, .ns = ns, .name = name,
                   .fn = fn, .arg = arg, .flags = flags};
}

static inline kc_op kc_op_delete(const char *resource, const char *ns, const char *name,
                                 const kc_delete_opts *dopts)
{
    return (kc_op){.kind = KC_OP_DELETE, .resource = resource, .ns = ns, .name = name,
                   .dopts = dopts};
}

static inline kc_op kc_op_bind(const char *ns, const char *name, const char *uid,
                               const char *node)
{
    return (kc_op){.kind = KC_OP_BIND, .resource = "pods", .ns = ns, .name = name,
                   .uid = uid, .node = node};
}

static inline kc_op kc_op_record(const char *resource, const char *ns, json_t *obj,
                                 kc_mutate_fn fn, void *arg)
{
    return (kc_op){.kind = KC_OP_RECORD, .resource = resource, .ns = ns, .obj = obj,
                   .fn = fn, .arg = arg};
}

static inline kc_op kc_op_record_text(const char *resource, const char *ns, char *text,
                                      size_t len, size_t meta_end, kc_mutate_fn fn, void *arg)
{
    return (kc_op){.kind = KC_OP_RECORD, .resource = resource, .ns = ns, .text = text,
                   .text_len = len, .meta_end = meta_end, .fn = fn, .arg = arg};
}

/* ---- watches ---- */

typedef enum { KC_ADDED = 1, KC_MODIFIED, KC_DELETED, KC_BOOKMARK } kc_event_type;

typedef struct kc_event {
    kc_event_type type;
    const char *resource; /* the store key; valid while the client is */
    ty_obj *obj;          /* after the change (DELETED: last state, with the
                             deletion's resourceVersion; BOOKMARK: only
                             metadata.resourceVersion); owned by the event */
} kc_event;

/* Watches the resources named in only (NULL-terminated, copied; NULL: every
 * resource the implementation serves) in every namespace, for changes after
 * from_rv (NULL or "": from now). TY_EGONE when from_rv is too old: list
 * again and watch from the list's resourceVersion. */
kc_watch *kc_watch_open(ty_kc *c, const char *const *only, const char *from_rv,
                        ty_error *err);
/* Waits up to timeout_ms (-1 = forever) for the next event: 1 with *ev filled
 * (release it with kc_event_release), 0 on timeout, -1 when the watch ended
 * (TY_EGONE: it fell behind, relist; otherwise cancelled or closing). */
int kc_watch_next(kc_watch *w, int timeout_ms, kc_event *ev, ty_error *err);
void kc_event_release(kc_event *ev);
/* Wakes a blocked kc_watch_next from another thread (it returns -1). */
void kc_watch_cancel(kc_watch *w);
void kc_watch_close(kc_watch *w);

/* ---- the client ---- */

/* Which implementation this is ("embedded", "http", "fake"), for logs. */
const char *kc_kind(const ty_kc *c);
void kc_free(ty_kc *c);

/* ---- implementing the interface ---- */

struct kc_ops {
    const char *kind;
    ty_obj *(*get)(ty_kc *c, const char *resource, const char *ns, const char *name,
                   ty_error *err);
    int (*list)(ty_kc *c, const char *resource, const kc_list_opts *opts, kc_list *out,
                ty_error *err);
    int (*list_owned)(ty_kc *c, const char *resource, const char *ns, const char *owner_uid,
                      kc_list *out, ty_error *err);
    /* NULL: list_owned, the selector unused */
    int (*list_owned_sel)(ty_kc *c, const char *resource, const char *ns,
                          const char *owner_uid, const char *label_selector, kc_list *out,
                          ty_error *err);
    size_t (*count)(ty_kc *c, const char *resource);
    bool count_is_cheap;   /* count is a lookup, not a request (kc_count_hint) */
    json_t *(*resources)(ty_kc *c);
    ty_obj *(*create)(ty_kc *c, const char *resource, const char *ns, json_t *obj,
                      ty_error *err);
    ty_obj *(*update)(ty_kc *c, const char *resource, const char *ns, const json_t *obj,
                      ty_error *err);
    ty_obj *(*mutate)(ty_kc *c, const char *resource, const char *ns, const char *name,
                      kc_mutate_fn fn, void *arg, unsigned flags, ty_error *err);
    ty_obj *(*patch)(ty_kc *c, const char *resource, const char *ns, const char *name,
                     kc_patch_type type, const json_t *patch, bool status, ty_error *err);
    ty_obj *(*del)(ty_kc *c, const char *resource, const char *ns, const char *name,
                   const kc_delete_opts *opts, bool *deleted, ty_error *err);
    int (*bind)(ty_kc *c, const char *ns, const char *name, const char *uid,
                const char *node, ty_error *err);
    size_t (*write_all)(ty_kc *c, kc_op *ops, size_t n); /* NULL: one op at a time */
    kc_watch *(*watch_open)(ty_kc *c, const char *const *only, const char *from_rv,
                            ty_error *err);
    int (*watch_next)(kc_watch *w, int timeout_ms, kc_event *ev, ty_error *err);
    void (*watch_cancel)(kc_watch *w);
    void (*watch_close)(kc_watch *w);
    void (*free)(ty_kc *c);
};

/* Every implementation's client begins with this; its watches with a
 * pointer to their client's ops. */
struct ty_kc {
    const kc_ops *ops;
};
struct kc_watch {
    const kc_ops *ops;
};

/* For implementations: one op run alone, as write_all runs it (when the
 * implementation has no write_all of its own), and a list's items freed. */
void kc_run_op(ty_kc *c, kc_op *op);
void kc_list_items_free(kc_list *l);
/* For implementations whose resourceVersions are decimal counters (the
 * store's, the fake's): rv read as one, or -1 with TY_EBADREQUEST. */
int kc_rv_parse(const char *rv, uint64_t *out, ty_error *err);
/* For implementations that apply patches themselves (the embedded and fake
 * clients): obj patched as the API server patches it (strategic: the merge
 * keys the kind's schema declares), a new object the caller owns, or NULL
 * with err (TY_EINVALID when the patch leaves no object). */
json_t *kc_patch_apply(const json_t *obj, kc_patch_type type, const json_t *patch,
                       ty_error *err);
/* The JSON merge patch (RFC 7386) that turns object from into object to: a
 * new object the caller owns, or NULL when none can say it (to sets a null
 * member, which a merge patch would read as a removal) or memory ran out. */
json_t *kc_merge_diff(const json_t *from, const json_t *to);

#endif
