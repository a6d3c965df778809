/* inf_share.h - one copy of an object version that several informers'
 * caches hold (informer.c).
 *
 * In operator mode the Kubeflow engine and the Volcano Job controller each
 * watch and cache the pods (and PodGroups) of the same API server; each
 * watch parses its own copy of every version. The caches keep one: the
 * first informer's copy of a version (the same client, resource,
 * namespace, name, uid and resourceVersion) is what the others keep too,
 * theirs freed once their handlers saw it. Process-wide, counted by
 * holder: an entry goes when the last cache lets the version go. */
#ifndef TY_CLIENT_INF_SHARE_H
#define TY_CLIENT_INF_SHARE_H

#include <stddef.h>

#include "client/kc.h"

/* The copy of o's version a cache over client c should keep: a new
 * reference to the one already kept by another cache, or to o (then kept
 * for the next). Out of memory: a reference to o, not shared. */
ty_obj *inf_share_acquire(const ty_kc *c, const char *resource, ty_obj *o);
/* A cache over c lets o (what inf_share_acquire gave it) go; the caller
 * still unrefs its reference. */
void inf_share_release(const ty_kc *c, const char *resource, const ty_obj *o);
/* Versions kept now by more than no cache, and of those, by two or more
 * (tests). */
void inf_share_stats(size_t *versions, size_t *shared);

#endif
