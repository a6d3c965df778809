/* event_ttl.c - Events expire a while after their last write (see
 * event_ttl.h). */
#include "server/event_ttl.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/log.h"
#include "base/timeutil.h"
#include "base/thread.h"

#define TICK_MIN_MS 10
#define TICK_MAX_MS 60000

/* Every write up to rv had happened by at_ms (monotonic). */
typedef struct checkpoint {
    uint64_t rv;
    int64_t at_ms;
} checkpoint;

struct ty_event_ttl {
    ty_store *s;
    int64_t ttl_ms, tick_ms;
    checkpoint *cps; /* oldest first */
    size_t ncps, cap;
    uint64_t done_rv; /* Events up to this rv were expired */
    atomic_uint_least64_t expired;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
};

/* Notes (the store's rv, now): every write up to rv was made by now. The
 * rv is read first: a write committed between a clock read and a later rv
 * read would be dated before it was made, and expire early. */
static void note(ty_event_ttl *t)
{
    uint64_t rv = store_current_rv(t->s);
    int64_t now = ty_now_ms();
    checkpoint *g;

    /* The same rv later says less than the checkpoint that has it. */
    if (t->ncps && t->cps[t->ncps - 1].rv == rv)
        return;
    if (t->ncps == t->cap) {
        if (!(g = realloc(t->cps, (t->cap ? t->cap * 2 : 16) * sizeof(*g))))
            return; /* out of memory: the next tick notes it */
        t->cps = g;
        t->cap = t->cap ? t->cap * 2 : 16;
    }
    t->cps[t->ncps++] = (checkpoint){rv, now};
}

/* The rv up to which every write is older than the TTL (the newest
 * checkpoint that old), dropping the checkpoints before it; 0 when none. */
static uint64_t expired_up_to(ty_event_ttl *t, int64_t now)
{
    size_t k = 0;
    uint64_t rv;

    while (k < t->ncps && t->cps[k].at_ms <= now - t->ttl_ms)
        k++;
    if (k == 0)
        return 0;
    rv = t->cps[k - 1].rv;
    for (size_t i = k - 1; i < t->ncps; i++)
        t->cps[i - (k - 1)] = t->cps[i];
    t->ncps -= k - 1;
    return rv;
}

/* Deletes per store_write_all (they share transactions instead of taking
 * one each). */
#define CHUNK 256

/* Runs n deletes; how many went. */
static uint64_t delete_chunk(ty_event_ttl *t, store_op *ops, size_t n)
{
    uint64_t done = 0;

    store_write_all(t->s, ops, n);
    for (size_t i = 0; i < n; i++) {
        if (ops[i].result)
            done++;
        else if (ops[i].err.code != TY_ENOTFOUND && ops[i].err.code != TY_ECONFLICT)
            ty_warn("event-ttl: delete event %s/%s: %s", ops[i].ns, ops[i].name,
                    ops[i].err.text);
        store_op_clear(&ops[i]);
    }
    return done;
}

/* A chunk of deletes (a store_op carries a 1 KB error: on the heap). */
typedef struct chunk {
    store_op ops[CHUNK];
    store_delete_opts opts[CHUNK];
    char rvs[CHUNK][24];
} chunk;

/* Deletes the Events whose resourceVersion is at most rv, each only if it is
 * still that version (a repeat bumped meanwhile stays). */
static void expire(ty_event_ttl *t, uint64_t rv)
{
    chunk *c = malloc(sizeof(*c));
    store_list l;
    ty_error err;
    uint64_t n = 0;
    size_t k = 0;

    ty_error_init(&err);
    if (!c || store_list_objects(t->s, "events", NULL, &l, &err) < 0) {
        ty_warn("event-ttl: cannot list events: %s", c ? err.text : "out of memory");
        ty_error_clear(&err);
        if (c)
            store_list_free(&l);
        free(c);
        return;
    }
    for (size_t i = 0; i < l.n; i++) {
        uint64_t orv = store_obj_rv(l.items[i]);
        const char *ns, *name;

        if (orv > rv)
            continue;
        store_obj_key(l.items[i], &ns, &name);
        snprintf(c->rvs[k], sizeof(c->rvs[k]), "%" PRIu64, orv);
        c->opts[k] = (store_delete_opts){.precondition_rv = c->rvs[k]};
        c->ops[k] = store_op_delete("events", ns, name, &c->opts[k]);
        if (++k == CHUNK) {
            n += delete_chunk(t, c->ops, k);
            k = 0;
        }
    }
    if (k)
        n += delete_chunk(t, c->ops, k);
    store_list_free(&l);
    free(c);
    atomic_fetch_add(&t->expired, n);
    t->done_rv = rv;
    if (n)
        ty_debug("event-ttl: %" PRIu64 " event(s) expired", n);
}

static void *ttl_main(void *arg)
{
    ty_event_ttl *t = arg;
    struct timespec ts;

    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        uint64_t rv;

        note(t);
        if ((rv = expired_up_to(t, ty_now_ms())) > t->done_rv) {
            pthread_mutex_unlock(&t->mu);
            expire(t, rv);
            pthread_mutex_lock(&t->mu);
        }
        ts = ty_deadline_ms(CLOCK_MONOTONIC, t->tick_ms);
        while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

ty_event_ttl *event_ttl_start(ty_store *s, int64_t ttl_ms, ty_error *err)
{
    ty_event_ttl *t = calloc(1, sizeof(*t));
    pthread_condattr_t ca;

    if (!t) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    t->s = s;
    t->ttl_ms = ttl_ms > 0 ? ttl_ms : 1;
    t->tick_ms = t->ttl_ms / 10;
    t->tick_ms = t->tick_ms < TICK_MIN_MS ? TICK_MIN_MS : t->tick_ms;
    t->tick_ms = t->tick_ms > TICK_MAX_MS ? TICK_MAX_MS : t->tick_ms;
    atomic_init(&t->expired, 0);
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* What is in the store now counts as written now. */
    note(t);
    if (pthread_create(&t->thread, NULL, ttl_main, t) == 0) {
        ty_thread_setup(t->thread, "ty-event-ttl", TY_THREAD_BACKGROUND);
    } else {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t->cps);
        free(t);
        ty_seterr(err, TY_EINTERNAL, "event-ttl: cannot start thread");
        return NULL;
    }
    return t;
}

void event_ttl_stop(ty_event_ttl *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t->cps);
    free(t);
}

uint64_t event_ttl_expired(ty_event_ttl *t)
{
    return atomic_load(&t->expired);
}
