/* test_workqueue.c - the controllers' shared loop on a real store: events
 * become keys, a key is never on two workers at once and an event during a
 * pass brings it round again, failures are retried, wake-ups come back,
 * the first listing queues what exists, a pass's own writes bring no pass,
 * and the queue's metrics count it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

#include "base/metrics.h"
#include "base/timeutil.h"
#include "controller/workqueue.h"
#include "kc_fixture.h"

enum { NKEYS = 4 };
/* a retry's delay less the timer's slack (timers are checked every 50 ms) */
#define RETRY_LOW_MS(ms) ((ms) - 60)

typedef struct counts {
    atomic_int passes[NKEYS];
    atomic_int inflight[NKEYS];
    atomic_int max_inflight;
    atomic_int fail_first;  /* key 0 fails its first pass when set */
    atomic_int wake_once;   /* key 1 asks for one more look when set */
    atomic_int fail_always; /* key 3 fails every pass while set */
    int64_t pass_ms[8];     /* key 3: when its first passes began (monotonic) */
    atomic_int events;
    /* while hold[i] is set, key i's pass waits at its end (held[i] says it
     * is there): what the test does meanwhile happens during the pass, on a
     * machine of any speed */
    atomic_int hold[NKEYS], held[NKEYS];
    /* key c writes its own object each pass and says so (wq_wrote), after
     * own_sleep_ms */
    atomic_int write_own;
    ty_kc *s;
    int own_sleep_ms;
    ty_workqueue *q;
} counts;

static int key_index(const char *key)
{
    int i = key[0] - 'a';
    return i >= 0 && i < NKEYS && key[1] == '\0' ? i : -1;
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    counts *c = ctx;
    const char *ns, *name;

    if (strcmp(ev->resource, "configmaps") != 0)
        return;
    char rv[TY_RV_MAX];
    ty_obj_key(ev->obj, &ns, &name);
    ty_obj_rv(ev->obj, rv, sizeof(rv));
    wq_add_event(q, name, rv);
    /* counted once the queue has it: a test that waits on the count
     * then sees what the queue did with it */
    atomic_fetch_add(&c->events, 1);
}

static int bump_seen(json_t *obj, void *arg, ty_error *err)
{
    json_t *data = json_object_get(obj, "data");
    (void)arg, (void)err;
    json_int_t seen = json_integer_value(json_object_get(data, "seen"));

    json_object_set_new(data, "seen", json_integer(seen + 1));
    return 0;
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    kc_list l;
    ty_error err;
    (void)ctx;

    ty_error_init(&err);
    assert_int_equal(kc_list_objects(s, "configmaps", NULL, &l, &err), 0);
    for (size_t i = 0; i < l.n; i++) {
        const char *ns, *name;
        ty_obj_key(l.items[i], &ns, &name);
        wq_add(q, name);
    }
    kc_list_free(&l);
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    counts *c = ctx;
    int i = key_index(key), now, max;

    if (i < 0)
        return 0;
    if (i == 3 && atomic_load(&c->passes[3]) < 8)
        c->pass_ms[atomic_load(&c->passes[3])] = ty_now_ms(); /* one worker at a time */
    now = atomic_fetch_add(&c->inflight[i], 1) + 1;
    max = atomic_load(&c->max_inflight);
    while (now > max && !atomic_compare_exchange_weak(&c->max_inflight, &max, now))
        ;
    if (i == 2 && atomic_load(&c->write_own)) {
        ty_obj *o = kc_mutate(c->s, "configmaps", "default", key, bump_seen, NULL, 0, NULL);
        if (!o) /* no assert on a worker: cmocka's longjmp is the test thread's */
            abort();
        usleep((useconds_t)c->own_sleep_ms * 1000);
        char rv[TY_RV_MAX];
        ty_obj_rv(o, rv, sizeof(rv));
        wq_wrote(q, key, rv);
        ty_obj_unref(o);
    }
    while (atomic_load(&c->hold[i])) {
        atomic_store(&c->held[i], 1);
        usleep(1000);
    }
    atomic_store(&c->held[i], 0);
    atomic_fetch_add(&c->passes[i], 1);
    atomic_fetch_sub(&c->inflight[i], 1);
    if (i == 0 && atomic_exchange(&c->fail_first, 0))
        return -1;
    if (i == 3 && atomic_load(&c->fail_always))
        return -1;
    if (i == 1 && atomic_exchange(&c->wake_once, 0))
        *wake_at = time(NULL) + 1;
    return 0;
}

static const wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};

static void put(ty_kc *s, const char *name, int v)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:i}}", "apiVersion", "v1", "kind",
                          "ConfigMap", "metadata", "name", name, "data", "v", v);
    ty_error err;
    ty_obj *r;

    ty_error_init(&err);
    r = kc_create(s, "configmaps", "default", o, &err);
    if (!r) {
        o = json_pack("{s:s, s:s, s:{s:s}, s:{s:i}}", "apiVersion", "v1", "kind", "ConfigMap",
                      "metadata", "name", name, "data", "v", v);
        ty_error_clear(&err);
        r = kc_update(s, "configmaps", "default", o, &err);
        json_decref(o);
    }
    assert_non_null(r);
    ty_obj_unref(r);
}

/* Waits for *v >= n, up to a deadline far past what any machine needs. */
static bool wait_at_least(atomic_int *v, int n)
{
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline;) {
        if (atomic_load(v) >= n)
            return true;
        usleep(10 * 1000);
    }
    return atomic_load(v) >= n;
}

static bool wait_passes(counts *c, int i, int n)
{
    return wait_at_least(&c->passes[i], n);
}

/* How many of this process's threads are called name (/proc/self/task). */
static int threads_named(const char *name)
{
    char path[300], comm[32];
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d))) {
        FILE *f;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        if (fgets(comm, sizeof(comm), f)) {
            comm[strcspn(comm, "\n")] = 0;
            n += !strcmp(comm, name);
        }
        fclose(f);
    }
    closedir(d);
    return n;
}

/* What exists is queued at start; events bring keys; a key is never on two
 * workers, and events during a pass bring it round once more. */
static void test_keys_never_on_two_workers(void **state)
{
    store_fixture *f = *state;
    counts c = {0};
    ty_error err;
    ty_workqueue *q;

    ty_error_init(&err);
    put(KC(f->s), "c", 1); /* exists before the queue starts */
    q = wq_start(KC(f->s), "test", 8, &ops, &c, &err);
    assert_non_null(q);
    /* top -H and perf tell the queue's threads apart */
    assert_int_equal(threads_named("wq-test"), 8);
    assert_int_equal(threads_named("wq-test-watch"), 1);
    assert_true(wait_passes(&c, 2, 1));
    /* d's first pass held while 39 more changes come as events: they wait
     * for it (no second worker takes d) and make one pass more */
    atomic_store(&c.hold[3], 1);
    put(KC(f->s), "d", 0);
    assert_true(wait_at_least(&c.held[3], 1));
    for (int v = 1; v < 40; v++)
        put(KC(f->s), "d", v);
    assert_true(wait_at_least(&c.events, 40)); /* d's changes came as events */
    atomic_store(&c.hold[3], 0);
    assert_true(wait_passes(&c, 3, 2));
    wq_stop(q);
    assert_int_equal(atomic_load(&c.max_inflight), 1);
    assert_int_equal(atomic_load(&c.passes[3]), 2);
    assert_int_equal(atomic_load(&c.passes[2]), 1);
}

/* A failed pass comes back about a second later; a pass that asks for a
 * wake-up gets one. */
static void test_retry_and_wake(void **state)
{
    store_fixture *f = *state;
    counts c = {0};
    ty_error err;
    ty_workqueue *q;
    struct timespec t0, t1;

    ty_error_init(&err);
    atomic_store(&c.fail_first, 1);
    atomic_store(&c.wake_once, 1);
    q = wq_start(KC(f->s), "test", 2, &ops, &c, &err);
    assert_non_null(q);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    put(KC(f->s), "a", 1);
    put(KC(f->s), "b", 1);
    assert_true(wait_passes(&c, 0, 1));
    assert_true(wait_passes(&c, 1, 1));
    assert_true(wait_passes(&c, 0, 2)); /* the retry */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* a second after the failure, on the monotonic clock */
    assert_true((t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L >= 900);
    assert_true(wait_passes(&c, 1, 2)); /* the wake-up */
    usleep(1200 * 1000);
    wq_stop(q);
    assert_int_equal(atomic_load(&c.passes[0]), 2); /* no more than asked */
    assert_int_equal(atomic_load(&c.passes[1]), 2);
    /* The metrics say so, as controller-runtime names them: a and b queued
     * by their events, then once each by the retry and the wake-up. */
    assert_int_equal(ty_metric_get("workqueue_adds_total", "name=\"test\""), 4);
    assert_int_equal(ty_metric_get("workqueue_retries_total", "name=\"test\""), 1);
    assert_int_equal(ty_metric_get("workqueue_depth", "name=\"test\""), 0);
    assert_int_equal(ty_metric_get("controller_runtime_reconcile_total",
                                   "controller=\"test\",result=\"success\""), 2);
    assert_int_equal(ty_metric_get("controller_runtime_reconcile_total",
                                   "controller=\"test\",result=\"error\""), 1);
    assert_int_equal(ty_metric_get("controller_runtime_reconcile_total",
                                   "controller=\"test\",result=\"requeue_after\""), 1);
}

/* A pass that keeps failing is retried ever later (1 s, 2 s, ...: a job
 * whose pods cannot be made does not retry each second for ever); one that
 * passes is forgotten. Lower bounds only: a loaded machine is late, never
 * early. */
static void test_retry_backs_off(void **state)
{
    store_fixture *f = *state;
    counts c = {0};
    ty_error err;
    ty_workqueue *q;

    ty_error_init(&err);
    atomic_store(&c.fail_always, 1);
    q = wq_start(KC(f->s), "test", 2, &ops, &c, &err);
    assert_non_null(q);
    put(KC(f->s), "d", 1);
    assert_true(wait_passes(&c, 3, 3));
    atomic_store(&c.fail_always, 0);
    assert_true(c.pass_ms[1] - c.pass_ms[0] >= RETRY_LOW_MS(1000));
    assert_true(c.pass_ms[2] - c.pass_ms[1] >= RETRY_LOW_MS(2000));
    assert_true(wait_passes(&c, 3, 4)); /* after 4 s, and it passes */
    assert_true(c.pass_ms[3] - c.pass_ms[2] >= RETRY_LOW_MS(4000));
    wq_stop(q);
}

/* A pass's own write brings no pass of its own, whether its event came
 * during the pass or after it (a pass writing each time would otherwise go
 * round for ever); somebody else's write during the pass still brings one. */
static void test_own_writes(void **state)
{
    store_fixture *f = *state;
    ty_error err;

    ty_error_init(&err);
    for (int during = 0; during < 2; during++) {
        counts c = {.s = KC(f->s), .own_sleep_ms = during ? 100 : 0};
        atomic_store(&c.write_own, 1);
        c.q = wq_start(KC(f->s), "own", 2, &ops, &c, &err);
        assert_non_null(c.q);
        put(KC(f->s), "c", during);
        assert_true(wait_passes(&c, 2, 1));
        /* the put's event and the pass's own write's, both handed over */
        assert_true(wait_at_least(&c.events, 2));
        usleep(400 * 1000);
        assert_int_equal(atomic_load(&c.passes[2]), 1);
        wq_stop(c.q);
        assert_int_equal(ty_metric_get("trainyard_workqueue_own_writes_total", "name=\"own\""),
                         1);
        /* gone before the next queue starts (its first listing would queue it) */
        ty_obj_unref(kc_delete(KC(f->s), "configmaps", "default", "c", NULL, NULL, NULL));
    }
    /* Another write while the pass runs: one more pass (which writes too, and
     * that is the end of it). */
    counts c = {.s = KC(f->s)};
    atomic_store(&c.write_own, 1);
    c.q = wq_start(KC(f->s), "own", 2, &ops, &c, &err);
    assert_non_null(c.q);
    atomic_store(&c.hold[2], 1);
    put(KC(f->s), "c", 7);
    assert_true(wait_at_least(&c.held[2], 1)); /* c's first pass, held at its end */
    put(KC(f->s), "c", 8);
    /* the queue saw it during the pass (7, the pass's own, 8) */
    assert_true(wait_at_least(&c.events, 3));
    atomic_store(&c.hold[2], 0);
    assert_true(wait_passes(&c, 2, 2));
    usleep(800 * 1000);
    assert_int_equal(atomic_load(&c.passes[2]), 2);
    wq_stop(c.q);
}

#define T(t) cmocka_unit_test_setup_teardown(t, store_fixture_setup, store_fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_keys_never_on_two_workers),
        T(test_retry_and_wake),
        T(test_retry_backs_off),
        T(test_own_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
