/* kc_cache.h - a client (kc.h) that answers a controller's reads from an
 * informer's cache and sends everything else to the client it wraps.
 *
 * For clients without an index of their own (HTTP: operator mode), where
 * every kc_get and kc_list_owned of a reconcile pass would be a request.
 * The controller's own informer (controller/workqueue.c) keeps the cache:
 * it applies each event to the cache before the handlers queue the key, so
 * a pass that an event brought sees at least that event's state.
 *
 * Served from the cache, once the informer has synced: kc_get of a cached
 * resource, kc_list_owned and kc_list_owned_sel (every owned object; the
 * selector is not applied, which kc.h allows). Everything else (lists,
 * counts, writes, watches, resources not cached) goes to the inner client.
 *
 * Read-your-writes: a write made through this client is remembered (its
 * key, the resourceVersion it produced, the owner of the object) until the
 * cache has caught up with it: the cached object's resourceVersion is at
 * least the write's (a delete: the object has gone from the cache, or is
 * marked there). Until then reads of that object, and owner lists of its
 * owner, go to the inner client, so that a pass never acts again on what
 * its previous pass just did (the watch event of a write may come after
 * the next pass begins). This compares resourceVersions as integers, as
 * kube-apiserver's and the stand-in's are; a write whose resourceVersion is
 * not one is read from the server until it expires (KCC_PENDING_TTL_MS).
 * Writes made by others are not known here: like upstream's controllers,
 * a pass reads what the cache has seen, and their events bring another.
 *
 * kc_mutate does not read first (over HTTP a GET per write): its function
 * is given a copy of this client's own last write of the object, while the
 * cache lacks it, else of the cached object, and the change is sent as a
 * merge patch carrying that copy's resourceVersion, which the server takes
 * only if the object is still at that version. On 409 Conflict (another
 * writer was first, or the cache was behind) the inner client's kc_mutate
 * runs: a fresh read, the function again, the write; so a stale cache costs
 * one request more and never overwrites another writer's change. Over a
 * client whose reads are local (kc_reads_local) the inner kc_mutate runs
 * at once, with its fast paths. */
#ifndef TY_CLIENT_KC_CACHE_H
#define TY_CLIENT_KC_CACHE_H

#include "base/error.h"
#include "client/informer.h"
#include "client/kc.h"

/* A client over inner (borrowed: it must outlive this one; kc_free frees
 * only the wrapper). Until kc_cache_attach it sends everything to inner.
 * NULL with err when out of memory. */
ty_kc *kc_cache_new(ty_kc *inner, ty_error *err);
/* Serves reads from inf's cache from now on (inf: config.cache, on inner
 * or on c; it must outlive c, or be detached with NULL first). From any
 * thread. */
void kc_cache_attach(ty_kc *c, ty_informer *inf);
/* How many reads were served from the cache, how many went to the inner
 * client because a write of this client's own was not in the cache yet,
 * and how many such writes are remembered now (for tests; any may be
 * NULL). */
void kc_cache_stats(ty_kc *c, uint64_t *hits, uint64_t *own_write_misses, size_t *pending);
/* How many kc_mutate calls started from what this client knew (no read
 * first), and how many of those read the object after all (a conflict: the
 * base was stale). For tests; either may be NULL. */
void kc_cache_mutate_stats(ty_kc *c, uint64_t *unread, uint64_t *read_again);

#endif
