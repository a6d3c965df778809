/* leader.c - leader election on a coordination.k8s.io/v1 Lease (leader.h).
 *
 * The record is the Lease's spec. Expiry is judged by observation: the
 * elector notes on its own clock when the spec it reads last changed
 * (observed_time), and counts the lease as expired leaseDurationSeconds
 * after that, whatever renewTime says; two machines whose clocks disagree by
 * minutes still elect correctly, because each only compares its own clock
 * with itself. The price is that a candidate that starts after the holder
 * died waits a full lease duration from its first look. */
#include "client/leader.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api/kinds.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/timeutil.h"

#define LEADER_ID_MAX 256
#define JITTER_FACTOR 1.2 /* client-go's: acquire retries wait up to 2.2 x retry */

struct kc_leader {
    ty_kc *c;                      /* borrowed */
    const char *key;               /* the Lease's store key */
    char *ns, *name, *identity;
    int64_t lease_ms, renew_ms, retry_ms;
    kc_leader_opts cb;             /* the callbacks, arg and clock (strings not used) */

    pthread_mutex_t mu;            /* guards what other threads read (below) */
    pthread_cond_t wake;           /* kc_leader_stop wakes the thread (CLOCK_MONOTONIC) */
    bool stopping, has_thread, joined;
    pthread_t thread;
    kc_leader_state state;
    int64_t last_renew;            /* last successful acquire or renewal (our clock) */
    char holder[LEADER_ID_MAX];    /* the holder last observed */

    /* the stepping thread's alone */
    json_t *observed;              /* the spec last read or written (owned) */
    int64_t observed_time;         /* when it last changed, on our clock */
    ty_obj *last;                  /* the Lease last read or written: its resourceVersion */
    char reported[LEADER_ID_MAX];  /* the holder last given to on_new_leader */
    uint64_t rng;
};

/* ---- clocks ---- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_of(const kc_leader *le)
{
    return le->cb.clock ? le->cb.clock(le->cb.clock_arg) : mono_ms();
}

/* The MicroTime written for now_ms: the injected clock's value as epoch
 * milliseconds, else the wall clock (now_ms is then monotonic). */
static void micro_time(const kc_leader *le, int64_t now_ms, char *buf, size_t len)
{
    struct timespec ts;

    if (le->cb.clock) {
        ts.tv_sec = (time_t)(now_ms / 1000);
        ts.tv_nsec = (long)(now_ms % 1000) * 1000000;
    } else {
        clock_gettime(CLOCK_REALTIME, &ts);
    }
    ty_time_format_frac(ts, 6, buf, len);
}

static uint64_t next_rand(kc_leader *le)
{
    /* xorshift64: jitter needs spread, not secrecy */
    le->rng ^= le->rng << 13;
    le->rng ^= le->rng >> 7;
    le->rng ^= le->rng << 17;
    return le->rng;
}

/* ---- the record ---- */

static const char *spec_str(const json_t *spec, const char *key)
{
    const char *s = json_string_value(json_object_get(spec, key));
    return s ? s : "";
}

static void set_holder(kc_leader *le, const char *holder)
{
    pthread_mutex_lock(&le->mu);
    snprintf(le->holder, sizeof(le->holder), "%s", holder);
    pthread_mutex_unlock(&le->mu);
}

/* Notes spec (borrowed) as seen at now: the clock of expiry restarts only
 * when the record changed. */
static void observe(kc_leader *le, const json_t *spec, int64_t now)
{
    if (le->observed && json_equal(le->observed, spec))
        return;
    json_decref(le->observed);
    le->observed = json_deep_copy(spec);
    le->observed_time = now;
    set_holder(le, spec_str(spec, "holderIdentity"));
}

static void keep_last(kc_leader *le, ty_obj *o)
{
    ty_obj_unref(le->last);
    le->last = o;
}

/* The lease the observed record describes is still someone's at now. */
static bool observed_valid(const kc_leader *le, int64_t now)
{
    json_int_t secs = json_integer_value(json_object_get(le->observed, "leaseDurationSeconds"));
    return le->observed_time + (int64_t)secs * 1000 > now;
}

static json_int_t lease_seconds(const kc_leader *le)
{
    return (json_int_t)((le->lease_ms + 999) / 1000);
}

/* A Lease held by us from now on. */
static json_t *new_lease(const kc_leader *le, const char *now_text)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:s, s:s, s:i}}",
                     "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
                     "metadata", "name", le->name, "namespace", le->ns,
                     "spec", "holderIdentity", le->identity,
                     "leaseDurationSeconds", (json_int_t)lease_seconds(le),
                     "acquireTime", now_text, "renewTime", now_text, "leaseTransitions", 0);
}

/* Writes the observed record as held by us, over base (the Lease read or
 * written last: its resourceVersion is the precondition). mine: we held it
 * already (acquireTime and leaseTransitions kept). true when written. */
static bool write_held(kc_leader *le, const ty_obj *base, bool mine, int64_t now,
                       const char *now_text)
{
    ty_error err;
    json_t *obj = ty_obj_json_copy(base), *spec = json_deep_copy(le->observed);
    json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    ty_obj *done;

    json_object_set_new(spec, "holderIdentity", json_string(le->identity));
    json_object_set_new(spec, "leaseDurationSeconds", json_integer(lease_seconds(le)));
    json_object_set_new(spec, "renewTime", json_string(now_text));
    if (!mine || !json_is_string(json_object_get(spec, "acquireTime")))
        json_object_set_new(spec, "acquireTime", json_string(now_text));
    if (!mine)
        json_object_set_new(spec, "leaseTransitions", json_integer(transitions + 1));
    json_object_set_new(obj, "spec", spec);
    ty_error_init(&err);
    done = kc_update(le->c, le->key, le->ns, obj, &err);
    json_decref(obj);
    if (!done) {
        /* a conflict: someone else wrote first (renewed, or won the race) */
        ty_debug("leader: writing lease %s/%s: %s", le->ns, le->name, err.text);
        ty_error_clear(&err);
        return false;
    }
    observe(le, json_object_get(ty_obj_json(done), "spec"), now);
    keep_last(le, done);
    return true;
}

/* One attempt to acquire or renew at now: client-go's tryAcquireOrRenew.
 * true when the Lease is ours after it. */
static bool try_acquire_or_renew(kc_leader *le, int64_t now)
{
    ty_error err;
    char now_text[TY_TIME_FRAC_LEN];
    ty_obj *cur, *done;
    json_t *spec;
    bool mine;

    micro_time(le, now, now_text, sizeof(now_text));
    /* A leader renews without reading first, as client-go: one request per
     * period while nothing changes; a conflict falls back to reading. */
    if (le->last && strcmp(spec_str(le->observed, "holderIdentity"), le->identity) == 0 &&
        observed_valid(le, now) && write_held(le, le->last, true, now, now_text))
        return true;
    ty_error_init(&err);
    cur = kc_get(le->c, le->key, le->ns, le->name, &err);
    if (!cur) {
        if (err.code != TY_ENOTFOUND) {
            ty_debug("leader: reading lease %s/%s: %s", le->ns, le->name, err.text);
            ty_error_clear(&err);
            return false;
        }
        ty_error_clear(&err);
        done = kc_create(le->c, le->key, le->ns, new_lease(le, now_text), &err);
        if (!done) {
            /* another candidate created it first: its record is read next round */
            ty_debug("leader: creating lease %s/%s: %s", le->ns, le->name, err.text);
            ty_error_clear(&err);
            return false;
        }
        observe(le, json_object_get(ty_obj_json(done), "spec"), now);
        keep_last(le, done);
        return true;
    }
    /* a Lease without a spec (made by hand) is one nobody holds */
    spec = json_object_get(ty_obj_json(cur), "spec"); /* borrowed: the snapshot's */
    if (json_is_object(spec)) {
        observe(le, spec, now);
    } else {
        json_t *none = json_object();
        observe(le, none, now);
        json_decref(none);
    }
    keep_last(le, cur); /* the precondition of the write below */
    const char *holder = spec_str(le->observed, "holderIdentity");
    mine = strcmp(holder, le->identity) == 0;
    if (*holder && !mine && observed_valid(le, now))
        return false; /* someone else's, and alive as far as we can tell */

    return write_held(le, cur, mine, now, now_text);
}

/* on_new_leader when the observed holder changed since the last report. */
static void report_transition(kc_leader *le)
{
    const char *holder = spec_str(le->observed, "holderIdentity");

    if (strcmp(holder, le->reported) == 0)
        return;
    snprintf(le->reported, sizeof(le->reported), "%s", holder);
    if (le->cb.on_new_leader)
        le->cb.on_new_leader(le->reported, le->cb.arg);
}

static void set_state(kc_leader *le, kc_leader_state st, int64_t renewed)
{
    pthread_mutex_lock(&le->mu);
    le->state = st;
    if (renewed >= 0)
        le->last_renew = renewed;
    pthread_mutex_unlock(&le->mu);
}

kc_leader_state kc_leader_state_now(kc_leader *le)
{
    kc_leader_state st;

    pthread_mutex_lock(&le->mu);
    st = le->state;
    pthread_mutex_unlock(&le->mu);
    return st;
}

kc_leader_state kc_leader_try(kc_leader *le, int64_t now)
{
    kc_leader_state st = kc_leader_state_now(le);
    int64_t last;
    bool ok;

    if (st == KC_LEADER_DONE)
        return st;
    ok = try_acquire_or_renew(le, now);
    report_transition(le);
    if (st == KC_LEADER_FOLLOWING) {
        if (!ok)
            return st;
        set_state(le, KC_LEADER_LEADING, now);
        ty_info("leader: %s acquired lease %s/%s", le->identity, le->ns, le->name);
        if (le->cb.on_started_leading)
            le->cb.on_started_leading(le->cb.arg);
        return KC_LEADER_LEADING;
    }
    if (ok) {
        set_state(le, KC_LEADER_LEADING, now);
        return KC_LEADER_LEADING;
    }
    pthread_mutex_lock(&le->mu);
    last = le->last_renew;
    pthread_mutex_unlock(&le->mu);
    const char *holder = spec_str(le->observed, "holderIdentity");
    bool taken = *holder && strcmp(holder, le->identity) != 0;
    if (!taken && now - last < le->renew_ms)
        return KC_LEADER_LEADING; /* try again next period */
    set_state(le, KC_LEADER_DONE, -1);
    ty_warn("leader: %s lost lease %s/%s (%s)", le->identity, le->ns, le->name,
            taken ? "taken by another" : "renew deadline passed");
    if (le->cb.on_stopped_leading)
        le->cb.on_stopped_leading(le->cb.arg);
    return KC_LEADER_DONE;
}

int kc_leader_release(kc_leader *le, int64_t now, ty_error *err)
{
    char now_text[TY_TIME_FRAC_LEN];
    kc_leader_state st = kc_leader_state_now(le);
    json_t *obj, *spec;
    ty_obj *done;
    int rc = 0;

    set_state(le, KC_LEADER_DONE, -1);
    if (st != KC_LEADER_LEADING)
        return 0;
    if (le->last && strcmp(spec_str(le->observed, "holderIdentity"), le->identity) == 0) {
        ty_error local;
        ty_error *e = err ? err : &local;
        if (!err)
            ty_error_init(&local);
        micro_time(le, now, now_text, sizeof(now_text));
        obj = ty_obj_json_copy(le->last);
        spec = json_deep_copy(le->observed);
        json_object_set_new(spec, "holderIdentity", json_string(""));
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
        json_object_set_new(spec, "acquireTime", json_string(now_text));
        json_object_set_new(spec, "renewTime", json_string(now_text));
        json_object_set_new(obj, "spec", spec);
        done = kc_update(le->c, le->key, le->ns, obj, e);
        json_decref(obj);
        if (done) {
            observe(le, json_object_get(ty_obj_json(done), "spec"), now);
            keep_last(le, done);
            ty_info("leader: %s released lease %s/%s", le->identity, le->ns, le->name);
        } else {
            ty_warn("leader: %s could not release lease %s/%s: %s", le->identity, le->ns,
                    le->name, e->text);
            rc = -1;
        }
        if (!err)
            ty_error_clear(&local);
    }
    if (le->cb.on_stopped_leading)
        le->cb.on_stopped_leading(le->cb.arg);
    return rc;
}

/* ---- the thread ---- */

/* Sleeps ms or until stopped; true when stopped. */
static bool pause_ms(kc_leader *le, int64_t ms)
{
    struct timespec until = ty_deadline_ms(CLOCK_MONOTONIC, ms);
    bool stop;

    pthread_mutex_lock(&le->mu);
    while (!le->stopping &&
           pthread_cond_timedwait(&le->wake, &le->mu, &until) != ETIMEDOUT)
        ;
    stop = le->stopping;
    pthread_mutex_unlock(&le->mu);
    return stop;
}

static void *leader_main(void *arg)
{
    kc_leader *le = arg;
    kc_leader_state st = KC_LEADER_FOLLOWING;

    /* acquire: jittered so candidates started together do not collide forever */
    while (st == KC_LEADER_FOLLOWING) {
        st = kc_leader_try(le, now_of(le));
        if (st != KC_LEADER_FOLLOWING)
            break;
        double f = (double)(next_rand(le) >> 11) / (double)(1ull << 53);
        if (pause_ms(le, le->retry_ms + (int64_t)(le->retry_ms * JITTER_FACTOR * f)))
            break;
    }
    while (st == KC_LEADER_LEADING) {
        if (pause_ms(le, le->retry_ms))
            break;
        st = kc_leader_try(le, now_of(le));
    }
    if (kc_leader_state_now(le) == KC_LEADER_LEADING) /* stopped while leading */
        kc_leader_release(le, now_of(le), NULL);
    else
        set_state(le, KC_LEADER_DONE, -1);
    return NULL;
}

/* ---- life ---- */

static void default_identity(char *buf, size_t len)
{
    char host[128] = "";
    uint32_t r = 0;

    if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (uint32_t)mono_ms() ^ (uint32_t)getpid() << 16;
    snprintf(buf, len, "%s_%d-%08x", host, (int)getpid(), r);
}

kc_leader *kc_leader_new(ty_kc *c, const kc_leader_opts *opts, ty_error *err)
{
    kc_leader *le;
    char id[LEADER_ID_MAX];
    pthread_condattr_t ca;

    if (!c || !opts || !opts->ns || !*opts->ns || !opts->name || !*opts->name) {
        ty_seterr(err, TY_EINVALID, "leader election needs the Lease's namespace and name");
        return NULL;
    }
    int64_t lease = opts->lease_duration_ms ? opts->lease_duration_ms : 15000;
    int64_t renew = opts->renew_deadline_ms ? opts->renew_deadline_ms : 10000;
    int64_t retry = opts->retry_period_ms ? opts->retry_period_ms : 2000;
    if (lease <= renew) {
        ty_seterr(err, TY_EINVALID, "leaseDuration must be greater than renewDeadline");
        return NULL;
    }
    if (retry < 1 || (double)renew <= JITTER_FACTOR * (double)retry) {
        ty_seterr(err, TY_EINVALID, "renewDeadline must be greater than retryPeriod*JitterFactor");
        return NULL;
    }
    if (opts->identity && strlen(opts->identity) >= LEADER_ID_MAX) {
        ty_seterr(err, TY_EINVALID, "identity longer than %d bytes", LEADER_ID_MAX - 1);
        return NULL;
    }
    if (opts->identity && *opts->identity)
        snprintf(id, sizeof(id), "%s", opts->identity);
    else
        default_identity(id, sizeof(id));

    le = calloc(1, sizeof(*le));
    if (!le)
        goto nomem;
    le->c = c;
    le->key = api_store_key(&api_lease);
    le->lease_ms = lease;
    le->renew_ms = renew;
    le->retry_ms = retry;
    le->cb = *opts;
    le->cb.ns = le->cb.name = le->cb.identity = NULL;
    le->ns = strdup(opts->ns);
    le->name = strdup(opts->name);
    le->identity = strdup(id);
    pthread_mutex_init(&le->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&le->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (getrandom(&le->rng, sizeof(le->rng), 0) != (ssize_t)sizeof(le->rng) || !le->rng)
        le->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)mono_ms();
    if (!le->ns || !le->name || !le->identity)
        goto nomem;
    return le;
nomem:
    kc_leader_free(le);
    ty_seterr(err, TY_EINTERNAL, "out of memory");
    return NULL;
}

kc_leader *kc_leader_start(ty_kc *c, const kc_leader_opts *opts, ty_error *err)
{
    kc_leader *le = kc_leader_new(c, opts, err);
    int rc;

    if (!le)
        return NULL;
    rc = pthread_create(&le->thread, NULL, leader_main, le);
    if (rc != 0) {
        kc_leader_free(le);
        ty_seterr(err, TY_EINTERNAL, "starting the leader election thread: %s", strerror(rc));
        return NULL;
    }
    le->has_thread = true;
    ty_thread_setup(le->thread, "ty-leader", TY_THREAD_INTERACTIVE);
    return le;
}

void kc_leader_stop(kc_leader *le)
{
    if (!le)
        return;
    pthread_mutex_lock(&le->mu);
    le->stopping = true;
    pthread_cond_broadcast(&le->wake);
    pthread_mutex_unlock(&le->mu);
    if (le->has_thread) {
        if (!le->joined) {
            pthread_join(le->thread, NULL);
            le->joined = true;
        }
        return;
    }
    kc_leader_release(le, now_of(le), NULL);
}

bool kc_leader_is_leader(kc_leader *le)
{
    bool yes;
    int64_t now = now_of(le);

    pthread_mutex_lock(&le->mu);
    yes = le->state == KC_LEADER_LEADING && now - le->last_renew < le->renew_ms;
    pthread_mutex_unlock(&le->mu);
    return yes;
}

const char *kc_leader_identity(const kc_leader *le)
{
    return le->identity;
}

void kc_leader_holder(kc_leader *le, char *buf, size_t len)
{
    pthread_mutex_lock(&le->mu);
    snprintf(buf, len, "%s", le->holder);
    pthread_mutex_unlock(&le->mu);
}

void kc_leader_free(kc_leader *le)
{
    if (!le)
        return;
    if (le->ns && le->name && le->identity)
        kc_leader_stop(le);
    pthread_mutex_destroy(&le->mu);
    pthread_cond_destroy(&le->wake);
    json_decref(le->observed);
    ty_obj_unref(le->last);
    free(le->ns);
    free(le->name);
    free(le->identity);
    free(le);
}
