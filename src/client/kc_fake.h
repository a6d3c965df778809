/* kc_fake.h - the client interface (kc.h) over an in-memory map, for tests:
 * no store, no threads, no sleeps. A test seeds objects (kc_fake_put), runs
 * one reconcile of a controller against the client, and asserts the writes
 * it made (kc_fake_actions), as client-go's fake clientset records actions.
 *
 * What it keeps of the API's semantics (docs/internals/testing.md):
 * resourceVersions from one counter (decimal strings); uid,
 * creationTimestamp and generation set on create, generateName honoured;
 * a non-empty metadata.resourceVersion on update, or in a patch (the
 * patched object's), is a precondition (TY_ECONFLICT); generation goes up when anything outside metadata and
 * status changes; KC_STATUS writes and status patches change .status alone
 * (and a pod's labels, annotations and finalizers, which pods/status takes),
 * and for a resource that serves /status a create or a write of the object
 * itself leaves .status alone (drops what it carries), as kube-apiserver
 * and Trainyard's own server do (kc_fake_set_lax_status relaxes this);
 * delete honours uid/resourceVersion preconditions and finalizers (the
 * propagation finalizers included: the object is marked with
 * deletionTimestamp, and goes when its last finalizer is removed); bind
 * applies podcond_bind. No defaulting and no validation: create stores what
 * it is given. A watch sees every change made after it opened (or after
 * from_rv: the whole history is kept) and kc_watch_next never waits, whatever
 * its timeout: nothing queued is 0.
 *
 * Calls are serialised by one mutex, so a stray thread does no harm, but
 * the point is a test that calls the controller and then looks. */
#ifndef TY_CLIENT_KC_FAKE_H
#define TY_CLIENT_KC_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/error.h"
#include "client/kc.h"

/* A new empty fake client; free with kc_free. NULL when out of memory. */
ty_kc *kc_fake_new(void);

/* Seeds (or replaces) an object of resource, as if it had always been
 * there: obj (taken over) keeps the uid, creationTimestamp and generation it
 * names and gets those it lacks, its namespace from metadata.namespace, and
 * a new resourceVersion. Watches see it (ADDED or MODIFIED); the action log
 * does not. Returns the stored object (a new reference; unref it, or pass
 * it to ty_obj_unref at once), NULL with err when obj has no name. */
ty_obj *kc_fake_put(ty_kc *c, const char *resource, json_t *obj, ty_error *err);

/* lax: creates and writes of the object itself keep the .status they
 * carry, as the embedded client's store does, instead of the API server's
 * rule (the default). For a controller that still writes status that way:
 * over HTTP its status would be lost, so say why where a test sets it. */
void kc_fake_set_lax_status(ty_kc *c, bool lax);

/* local false: kc_reads_local and kc_count_hint answer as for a client
 * whose reads are requests (HTTP), so that code taking another path over
 * one (client/kc_cache.h) can be tested here. Call it before opening a
 * watch. The default is true, as the embedded client. */
void kc_fake_set_reads_local(ty_kc *c, bool local);

/* The clock that timestamps (creationTimestamp, deletionTimestamp): t, or
 * the wall clock again when t is 0 (the default). */
void kc_fake_set_time(ty_kc *c, time_t t);

/* One write made through the client, in the order made. Verbs are the
 * API's: "create", "update" (kc_update and kc_mutate), "patch", "delete";
 * a status write (KC_STATUS, a status patch) names subresource "status", a
 * kc_bind is a "create" of pods subresource "binding". A kc_mutate whose
 * function changed nothing (or refused) and an update equal to the object
 * are no writes and are not recorded; a write that failed is, with its
 * code. */
typedef struct kc_fake_action {
    const char *verb;
    const char *resource;    /* the store key */
    const char *subresource; /* "" when none */
    const char *ns, *name;   /* the name generateName chose, for a create */
    ty_errcode code;         /* TY_OK, or why it failed */
    ty_obj *obj;             /* the object written (deleted: its last state;
                                marked: the marked object); NULL on failure */
} kc_fake_action;

/* The actions so far (borrowed until the next call on c); *n their number. */
const kc_fake_action *kc_fake_actions(ty_kc *c, size_t *n);
/* Forgets the actions so far (between the passes of a test). */
void kc_fake_clear_actions(ty_kc *c);
/* How many recorded actions match verb (NULL: any) on what (NULL: any;
 * "pods" matches pods without a subresource, "pods/binding" only
 * bindings), succeeded or not. */
size_t kc_fake_count(ty_kc *c, const char *verb, const char *what);
/* The last action matching verb and what (as kc_fake_count) on name (NULL:
 * any), or NULL. Borrowed as kc_fake_actions' array. */
const kc_fake_action *kc_fake_find(ty_kc *c, const char *verb, const char *what,
                                   const char *name);

/* Makes the next call matching verb (as above, plus "get" and "list" for
 * kc_get and kc_list_objects/kc_list_owned; NULL: any) on what (as
 * kc_fake_count; NULL: any) fail with code and nothing written. Injected
 * failures are matched in the order given, each once. */
void kc_fake_fail_next(ty_kc *c, const char *verb, const char *what, ty_errcode code);

#endif
