/* leader.h - leader election on a coordination.k8s.io/v1 Lease, through the
 * client interface (kc.h) only: the same elector runs over the embedded,
 * HTTP and fake clients.
 *
 * Semantics are client-go's leaderelection (docs/internals/client.md,
 * "Leader election"): a candidate takes the Lease when nobody holds it, when
 * it holds it itself, or when the holder's record has not changed for
 * leaseDurationSeconds as measured by the candidate's own clock from the
 * moment it first saw that record (never by the remote renewTime, so clock
 * skew between machines does not matter). Every write carries the
 * resourceVersion of the read it is based on: of two candidates racing for
 * one Lease, one wins and the other gets a conflict and goes back to
 * waiting. The leader renews every retry period; when it has not renewed for
 * the renew deadline it stops leading for good (on_stopped_leading: the
 * operator then exits; a new elector may be started). A clean stop
 * (kc_leader_stop) gives the Lease up (holderIdentity cleared,
 * leaseDurationSeconds 1) so another candidate takes over at once.
 * leaseTransitions counts changes of holder.
 *
 * Timing: lease_duration > renew_deadline > 1.2 x retry_period (client-go's
 * rule; a follower may not take over before the leader gave up). */
#ifndef TY_CLIENT_LEADER_H
#define TY_CLIENT_LEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct kc_leader kc_leader;

/* Milliseconds on a clock that never goes back (see kc_leader_opts.clock). */
typedef int64_t (*kc_leader_clock_fn)(void *arg);

typedef struct kc_leader_opts {
    const char *ns;            /* the Lease's namespace (required) */
    const char *name;          /* the Lease's name (required) */
    const char *identity;      /* NULL or "": "<hostname>_<pid>-<8 hex random>" */
    int64_t lease_duration_ms; /* 0: 15000 */
    int64_t renew_deadline_ms; /* 0: 10000 */
    int64_t retry_period_ms;   /* 0: 2000 */
    /* Callbacks, each optional, called on the thread that runs the elector
     * (kc_leader_start's, or kc_leader_try's caller) without any lock held:
     * they may call kc_leader_is_leader and kc_leader_identity, must not
     * call kc_leader_stop or kc_leader_free, and should return soon (start
     * the work elsewhere). */
    void (*on_started_leading)(void *arg);
    /* Once after on_started_leading: leadership lost (renew deadline
     * passed, or the Lease taken by another) or given up (stop). */
    void (*on_stopped_leading)(void *arg);
    /* The holder this elector observes changed (itself included; "" when
     * the Lease was given up and nobody holds it yet). identity is
     * borrowed for the call. */
    void (*on_new_leader)(const char *identity, void *arg);
    void *arg;                 /* passed to the callbacks */
    /* NULL: CLOCK_MONOTONIC decides, and the times written into the Lease
     * (acquireTime, renewTime) are the wall clock's. Set (tests): its value
     * decides and is also written, read as milliseconds since the epoch. */
    kc_leader_clock_fn clock;
    void *clock_arg;
} kc_leader_opts;

/* What an elector is. */
typedef enum {
    KC_LEADER_FOLLOWING = 0, /* not the holder: waiting to acquire */
    KC_LEADER_LEADING = 1,   /* the holder, renewing */
    KC_LEADER_DONE = 2,      /* stopped leading (lost or released): tries nothing more */
} kc_leader_state;

/* An elector with no thread of its own, driven by kc_leader_try (tests, or
 * a caller's own loop). opts (and its strings) are copied; c is borrowed
 * and must outlive the elector. NULL with TY_EINVALID when opts are not
 * usable (no name, timing out of the rule above), else out of memory. */
kc_leader *kc_leader_new(ty_kc *c, const kc_leader_opts *opts, ty_error *err);

/* kc_leader_new, and a thread ("ty-leader") that runs it: tries to acquire
 * every retry period (jittered by up to 1.2 x, as client-go), then renews
 * every retry period until it loses the Lease or is stopped. */
kc_leader *kc_leader_start(ty_kc *c, const kc_leader_opts *opts, ty_error *err);

/* One step at now_ms (on opts.clock's scale, or CLOCK_MONOTONIC's in ms):
 * following, one attempt to acquire; leading, one attempt to renew, and
 * when it fails and the renew deadline has passed since the last renewal,
 * stopped leading (on_stopped_leading) and DONE. Callbacks run from here.
 * A failed read or write is not an error: the state says what followed. */
kc_leader_state kc_leader_try(kc_leader *le, int64_t now_ms);

/* Gives the Lease up if this elector holds it (holderIdentity cleared,
 * leaseDurationSeconds 1, leaseTransitions kept), calls on_stopped_leading
 * if it was leading, and leaves the elector DONE. 0, or -1 with err when the
 * write failed (the Lease then expires as usual). For a thread-less elector;
 * kc_leader_stop does this for kc_leader_start's. */
int kc_leader_release(kc_leader *le, int64_t now_ms, ty_error *err);

/* Stops the thread (at once between steps; a request in flight is finished
 * first, bounded by the client's own timeouts), gives the Lease up as
 * kc_leader_release, and waits for the thread to end. Idempotent; a no-op
 * for a thread-less elector beyond the release. */
void kc_leader_stop(kc_leader *le);

/* Whether this elector leads now: it is LEADING and its last renewal is
 * younger than the renew deadline on its clock (a renewal stuck in a slow
 * request counts as lost before the elector notices). Any thread. */
bool kc_leader_is_leader(kc_leader *le);
/* The elector's state (any thread). */
kc_leader_state kc_leader_state_now(kc_leader *le);
/* Its identity (valid until kc_leader_free). */
const char *kc_leader_identity(const kc_leader *le);
/* The holder it last observed, copied into buf ("" when none). */
void kc_leader_holder(kc_leader *le, char *buf, size_t len);

/* Stops it if running (kc_leader_stop) and frees it. NULL is fine. */
void kc_leader_free(kc_leader *le);

#endif
