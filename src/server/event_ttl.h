/* event_ttl.h - Events expire a while after their last write.
 *
 * kube-apiserver stores each Event with an etcd lease of --event-ttl (one
 * hour by default), renewed by every write of it (a repeat's count bump),
 * so Events of the last hour are kept and older ones vanish. Without that a
 * busy server keeps every Event it ever recorded (three per benchmark pod:
 * 450,000 after 150,000 pods). Here a background thread deletes Events
 * whose last write is older than the TTL.
 *
 * It needs no memory per Event: every tick it notes the store's current
 * resourceVersion with the time (a checkpoint: every write up to that rv
 * happened by then), and deletes the Events whose resourceVersion is at most
 * that of the newest checkpoint older than the TTL, each with its
 * resourceVersion as a precondition, so that one bumped meanwhile stays.
 * An Event goes between TTL and TTL plus one tick after its last write.
 * Events already in the store when the server starts count as written then
 * (the store keeps no write times): after a restart they get a full TTL.
 */
#ifndef TY_SERVER_EVENT_TTL_H
#define TY_SERVER_EVENT_TTL_H

#include <stdint.h>

#include "base/error.h"
#include "store/store.h"

typedef struct ty_event_ttl ty_event_ttl;

/* Starts expiring s's Events ttl_ms after their last write (ttl_ms > 0; a
 * tick is a tenth of it, between 10 ms and one minute). s must outlive it.
 * NULL with err filled when the thread cannot start. */
ty_event_ttl *event_ttl_start(ty_store *s, int64_t ttl_ms, ty_error *err);

/* Stops the thread and frees everything. NULL is fine. */
void event_ttl_stop(ty_event_ttl *t);

/* Events deleted so far (for tests and the curious). */
uint64_t event_ttl_expired(ty_event_ttl *t);

#endif
