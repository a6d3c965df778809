/* test_event_ttl.c - Events expire a TTL after their last write (never
 * before), repeats bumped meanwhile stay their own TTL, Events already in the
 * store at start get a full TTL, other objects are left alone; and the
 * --event-ttl duration syntax. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

#include "base/timeutil.h"
#include "server/event_ttl.h"
#include "client/events.h"
#include "store/store.h"

#define TTL_MS 600

static void put(ty_store *s, const char *resource, const char *name)
{
    json_t *j = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s}", "apiVersion", "v1", "kind",
                          strcmp(resource, "events") ? "ConfigMap" : "Event", "metadata", "name",
                          name, "namespace", "default", "reason", "Test");
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    o = store_create(s, resource, "default", j, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(j);
}

/* A repeat of the event name. On a machine so loaded that the test slept
 * past its TTL, it already went: written again then (the restart of its
 * TTL is not seen in that run, its expiry still is). */
static void bump(ty_store *s, const char *name)
{
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    o = store_mutate(s, "events", "default", name, ty_event_bump, NULL, &err);
    if (!o && err.code == TY_ENOTFOUND) {
        put(s, "events", name);
        return;
    }
    assert_non_null(o);
    store_obj_unref(o);
}

static bool exists(ty_store *s, const char *resource, const char *name)
{
    store_obj *o = store_get(s, resource, "default", name, NULL);

    store_obj_unref(o);
    return o != NULL;
}

static void test_events_expire(void **state)
{
    enum { E0, E1, E2, N };
    const char *names[N] = {"e0", "e1", "e2"};
    int64_t written[N], gone[N] = {0}, t0;
    char dir[64];
    ty_event_ttl *t;
    ty_store *s;
    ty_error err;
    size_t left;

    (void)state;
    ty_error_init(&err);
    s = store_fixture_open(dir, NULL);
    /* e0 was there before: it counts as written when expiry starts. */
    put(s, "events", "e0");
    put(s, "configmaps", "keep");
    t0 = ty_now_ms();
    t = event_ttl_start(s, TTL_MS, &err);
    assert_non_null(t);
    written[E0] = t0;
    /* (each time read before its write, and each end after it was seen:
     * what is compared is never shorter than what the store saw) */
    written[E1] = ty_now_ms();
    put(s, "events", "e1");
    usleep(TTL_MS / 2 * 1000);
    /* A repeat: e1's TTL starts again; e2 is new. */
    written[E1] = ty_now_ms();
    bump(s, "e1");
    written[E2] = ty_now_ms();
    put(s, "events", "e2");
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline;) {
        left = 0;
        for (int k = 0; k < N; k++) {
            if (!gone[k] && !exists(s, "events", names[k]))
                gone[k] = ty_now_ms();
            left += !gone[k];
        }
        if (!left)
            break;
        usleep(10 * 1000);
    }
    assert_int_equal(left, 0);
    /* Never before a TTL after the last write (a checkpoint is taken after
     * the write it covers; for e1 the repeat, which so restarted its TTL),
     * and at some point after it: how soon depends on the machine's load
     * (a few ticks when idle), so only the deadline above bounds it. */
    for (int k = 0; k < N; k++)
        assert_true(gone[k] - written[k] >= TTL_MS);
    assert_int_equal(event_ttl_expired(t), N);
    assert_true(exists(s, "configmaps", "keep"));
    event_ttl_stop(t);
    store_fixture_close(dir, s);
}

static void test_duration_syntax(void **state)
{
    static const struct {
        const char *s;
        int64_t ms; /* -1: rejected */
    } cases[] = {
        {"1h", 3600000},  {"30m", 1800000},   {"90s", 90000},   {"250ms", 250},
        {"1h30m", 5400000}, {"1.5h", 5400000}, {"0", 0},        {".5s", 500},
        {"1h0m0s", 3600000}, {"", -1},         {"1", -1},        {"1x", -1},
        {"h", -1},        {"1e3s", -1},        {"1..5s", -1},    {"-1s", -1},
        {"1h 30m", -1},   {"s1", -1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -7;
        int rc = ty_duration_parse(cases[i].s, &ms);
        if (cases[i].ms < 0) {
            assert_int_equal(rc, -1);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(ms, cases[i].ms);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_expire),
        cmocka_unit_test(test_duration_syntax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
