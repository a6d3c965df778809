/* finalizers.h - metadata.finalizers of an object, edited in one place.
 *
 * The store's deletion propagation (orphan, foregroundDeletion), the
 * garbage collector, the volume protection and both runtimes add and remove
 * finalizers; they all do it with these, so that the rules are the same
 * everywhere: a finalizer is listed once, added at the end, and an emptied
 * list is removed rather than left as [] (kube-apiserver drops it too).
 *
 * The editing functions change obj in place and may be given a tree whose
 * members are shared with another (a status write's copy: see
 * base/jsonown.h): metadata and its finalizers list are made obj's own
 * (ty_json_own) before they change, so the other tree never sees the edit.
 * obj itself must be the caller's own. */
#ifndef TY_MODEL_FINALIZERS_H
#define TY_MODEL_FINALIZERS_H

#include <jansson.h>
#include <stdbool.h>

/* Whether obj.metadata.finalizers lists name. obj is borrowed. */
bool finalizer_has(const json_t *obj, const char *name);

/* Appends name to obj.metadata.finalizers unless it is there (metadata and
 * the list are created when missing; a list that is not an array is
 * replaced). 1 when obj changed, 0 when name was there already, -1 when
 * memory ran out (obj then has no side effect beyond own copies). */
int finalizer_add(json_t *obj, const char *name);

/* Removes every name from obj.metadata.finalizers, and the list when that
 * empties it. 1 when obj changed, 0 when name was not there, -1 when memory
 * ran out. */
int finalizer_remove(json_t *obj, const char *name);

/* finalizer_add when want, else finalizer_remove. */
int finalizer_set(json_t *obj, const char *name, bool want);

#endif
