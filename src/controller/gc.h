/* gc.h - the garbage collector.
 *
 * A background thread that follows every resource through an informer
 * (client/informer.h) and keeps an
 * in-memory graph of owners and dependents (metadata.ownerReferences, by uid).
 * It deletes dependents whose owners are all gone (Background), carries out
 * Foreground deletion (dependents first; the owner's "foregroundDeletion"
 * finalizer goes once no dependent with blockOwnerDeletion remains) and Orphan
 * deletion (ownerReferences to the owner removed, then its "orphan"
 * finalizer), and empties a Namespace being deleted before removing its
 * "kubernetes" finalizer (spec.finalizers). A full scan at start (and after
 * falling behind the watch history) makes it miss nothing across restarts.
 * Uses only the public store API.
 */
#ifndef TY_CONTROLLER_GC_H
#define TY_CONTROLLER_GC_H

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_gc ty_gc;

/* Starts the collector's thread on s, which must outlive it. Caller stops it
 * with gc_stop. NULL with err filled when the thread cannot start. */
ty_gc *gc_start(ty_kc *s, ty_error *err);

/* Stops the thread, waits for it and frees everything. NULL is fine. */
void gc_stop(ty_gc *gc);

#endif
