/* test_watch.c - the store's watch hub: order, resume, expiry, filters,
 * cancellation and many concurrent watchers; the sweeper of cold trees and
 * texts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

#include "base/timeutil.h"
#include "store/store.h"

typedef struct fixture {
    char dir[64];
    ty_store *s;
} fixture;

static void open_with(fixture *f, size_t history)
{
    store_options o = {.history_events = history};
    ty_error err;

    ty_error_init(&err);
    f->s = store_open_with(f->dir, &o, &err);
    assert_non_null(f->s);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    f->s = store_fixture_open(f->dir, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

static store_obj *put(ty_store *s, const char *resource, const char *ns, const char *name)
{
    ty_error err;
    json_t *j = json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", name, "spec", "n", 0);
    store_obj *o;

    ty_error_init(&err);
    o = store_create(s, resource, ns, j, &err);
    json_decref(j);
    assert_non_null(o);
    return o;
}

static void add(ty_store *s, const char *resource, const char *ns, const char *name)
{
    store_obj_unref(put(s, resource, ns, name));
}

static int bump(json_t *obj, void *arg, ty_error *err)
{
    json_t *spec = json_object_get(obj, "spec");
    (void)arg, (void)err;
    json_object_set_new(spec, "n", json_integer(json_integer_value(json_object_get(spec, "n")) + 1));
    return 0;
}

static void modify(ty_store *s, const char *resource, const char *ns, const char *name)
{
    ty_error err;
    ty_error_init(&err);
    store_obj *o = store_mutate(s, resource, ns, name, bump, NULL, &err);
    assert_non_null(o);
    store_obj_unref(o);
}

static void del(ty_store *s, const char *resource, const char *ns, const char *name)
{
    ty_error err;
    bool deleted;
    ty_error_init(&err);
    store_obj *o = store_delete(s, resource, ns, name, NULL, &deleted, &err);
    assert_non_null(o);
    assert_true(deleted);
    store_obj_unref(o);
}

/* Expects the next event to be type on name at rv (a commit publishes its
 * events before it returns: the wait is only a bound). */
static void expect(store_watch *w, store_event_type type, const char *name, uint64_t rv)
{
    store_event ev;
    ty_error err;

    ty_error_init(&err);
    assert_int_equal(store_watch_next(w, 60000, &ev, &err), 1);
    assert_int_equal(ev.type, type);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(store_obj_json(ev.obj), "metadata"), "name")),
                        name);
    assert_int_equal(ev.rv, rv);
    assert_int_equal(store_obj_rv(ev.obj), rv);
    store_event_release(&ev);
}

static void expect_none(store_watch *w)
{
    store_event ev;
    ty_error err;
    ty_error_init(&err);
    assert_int_equal(store_watch_next(w, 20, &ev, &err), 0);
}

static void test_events_in_order(void **state)
{
    fixture *f = *state;
    ty_error err;
    uint64_t rv = store_current_rv(f->s);
    store_watch *w = store_watch_open(f->s, "pods", NULL, 0, &err);
    store_event ev;

    ty_error_init(&err);
    assert_non_null(w);
    expect_none(w);
    add(f->s, "pods", "default", "a");
    modify(f->s, "pods", "default", "a");
    del(f->s, "pods", "default", "a");
    assert_int_equal(store_watch_next(w, 60000, &ev, &err), 1);
    assert_int_equal(ev.type, STORE_ADDED);
    assert_string_equal(ev.resource, "pods");
    store_event_release(&ev);
    expect(w, STORE_MODIFIED, "a", rv + 2);
    expect(w, STORE_DELETED, "a", rv + 3);
    expect_none(w);
    store_watch_close(w);
}

static void test_resume_from_rv(void **state)
{
    fixture *f = *state;
    ty_error err;
    uint64_t rv;
    store_watch *w;

    ty_error_init(&err);
    add(f->s, "pods", "default", "a");
    rv = store_current_rv(f->s);
    add(f->s, "pods", "default", "b");
    modify(f->s, "pods", "default", "a");
    /* Opened after the writes, from rv: exactly the two later events. */
    w = store_watch_open(f->s, "pods", NULL, rv, &err);
    assert_non_null(w);
    expect(w, STORE_ADDED, "b", rv + 1);
    expect(w, STORE_MODIFIED, "a", rv + 2);
    expect_none(w);
    store_watch_close(w);
}

static void test_too_old_rv_is_gone(void **state)
{
    fixture *f = *state;
    ty_error err;
    uint64_t rv0;
    store_watch *w;
    char want[128];

    ty_error_init(&err);
    store_close(f->s);
    open_with(f, 10);
    rv0 = store_current_rv(f->s);
    for (int i = 0; i < 25; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        add(f->s, "pods", "default", name);
    }
    /* The ring keeps the last 10 events: (rv0+15, rv0+25]. */
    assert_null(store_watch_open(f->s, NULL, NULL, rv0 + 14, &err));
    assert_int_equal(err.code, TY_EGONE);
    snprintf(want, sizeof(want), "too old resource version: %llu (%llu)",
             (unsigned long long)(rv0 + 14), (unsigned long long)(rv0 + 15));
    assert_string_equal(err.text, want);
    w = store_watch_open(f->s, NULL, NULL, rv0 + 15, &err);
    assert_non_null(w);
    expect(w, STORE_ADDED, "p15", rv0 + 16);
    store_watch_close(w);
}

/* The byte cap counts what only the history keeps alive: versions replaced
 * or deleted since. Objects that are still current cost it nothing (the
 * index holds them anyway), so a stream of new objects stays watchable far
 * past the cap, while versions replaced over and over leave it by bytes. */
static void test_history_bytes_count_replaced_versions(void **state)
{
    fixture *f = *state;
    store_options o = {.history_events = 1000, .history_bytes = 4096};
    store_watch *w;
    ty_error err;
    uint64_t rv0, rv1;
    char name[16];

    ty_error_init(&err);
    store_close(f->s);
    f->s = store_open_with(f->dir, &o, &err);
    assert_non_null(f->s);
    rv0 = store_current_rv(f->s);
    /* 100 new objects, ~200 bytes of snapshot each: 20,000 bytes, all current */
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        add(f->s, "pods", "default", name);
    }
    w = store_watch_open(f->s, NULL, NULL, rv0, &err);
    assert_non_null(w);
    expect(w, STORE_ADDED, "n0", rv0 + 1);
    store_watch_close(w);
    /* 100 versions of one object: each replaced one is the history's alone */
    rv1 = store_current_rv(f->s);
    for (int i = 0; i < 100; i++)
        modify(f->s, "pods", "default", "n0");
    assert_null(store_watch_open(f->s, NULL, NULL, rv1, &err));
    assert_int_equal(err.code, TY_EGONE);
    ty_error_clear(&err);
    /* what is left fits the cap: ~20 replaced versions, the newest events */
    w = store_watch_open(f->s, NULL, NULL, store_current_rv(f->s) - 10, &err);
    assert_non_null(w);
    expect(w, STORE_MODIFIED, "n0", store_current_rv(f->s) - 9);
    store_watch_close(w);
    /* a deleted object's last version counts too */
    rv1 = store_current_rv(f->s);
    for (int i = 1; i < 100; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        del(f->s, "pods", "default", name);
    }
    assert_null(store_watch_open(f->s, NULL, NULL, rv1, &err));
    assert_int_equal(err.code, TY_EGONE);
}

static void test_reopen_starts_history_anew(void **state)
{
    fixture *f = *state;
    ty_error err;
    uint64_t rv0, rv1;
    store_watch *w;

    ty_error_init(&err);
    rv0 = store_current_rv(f->s);
    add(f->s, "pods", "default", "a");
    rv1 = store_current_rv(f->s);
    store_close(f->s);
    open_with(f, 0);
    assert_int_equal(store_current_rv(f->s), rv1);
    assert_null(store_watch_open(f->s, NULL, NULL, rv0, &err));
    assert_int_equal(err.code, TY_EGONE);
    /* From the restart's rv is fine. */
    w = store_watch_open(f->s, "pods", NULL, rv1, &err);
    assert_non_null(w);
    add(f->s, "pods", "default", "b");
    expect(w, STORE_ADDED, "b", rv1 + 1);
    store_watch_close(w);
}

static void test_filters(void **state)
{
    fixture *f = *state;
    ty_error err;
    uint64_t rv = store_current_rv(f->s);
    store_watch *pods_a = store_watch_open(f->s, "pods", "a", 0, &err);
    store_watch *all_b = store_watch_open(f->s, NULL, "b", 0, &err);
    store_watch *svc = store_watch_open(f->s, "services", NULL, 0, &err);

    ty_error_init(&err);
    add(f->s, "pods", "a", "p1");     /* rv+1 */
    add(f->s, "pods", "b", "p2");     /* rv+2 */
    add(f->s, "services", "a", "s1"); /* rv+3 */
    add(f->s, "services", "b", "s2"); /* rv+4 */
    add(f->s, "pods", "a", "p3");     /* rv+5 */
    expect(pods_a, STORE_ADDED, "p1", rv + 1);
    expect(pods_a, STORE_ADDED, "p3", rv + 5);
    expect_none(pods_a);
    expect(all_b, STORE_ADDED, "p2", rv + 2);
    expect(all_b, STORE_ADDED, "s2", rv + 4);
    expect_none(all_b);
    expect(svc, STORE_ADDED, "s1", rv + 3);
    expect(svc, STORE_ADDED, "s2", rv + 4);
    expect_none(svc);
    store_watch_close(pods_a);
    store_watch_close(all_b);
    store_watch_close(svc);
}

/* A watch of a set of resources takes their events alone, in order, past
 * more resources than it remembers decisions for (32). */
static void test_only_resources(void **state)
{
    static const char *const only[] = {"pods", "r39", "services", NULL};
    fixture *f = *state;
    ty_error err;
    uint64_t rv = store_current_rv(f->s);
    store_watch *w, *none;
    char res[16];

    ty_error_init(&err);
    w = store_watch_open_only(f->s, only, 0, &err);
    none = store_watch_open_only(f->s, (const char *const[]){NULL}, 0, &err);
    assert_non_null(w);
    assert_non_null(none);
    add(f->s, "events", "a", "e1"); /* rv+1 */
    add(f->s, "pods", "a", "p1");   /* rv+2 */
    for (int i = 0; i < 40; i++) {  /* rv+3 .. rv+42 */
        snprintf(res, sizeof(res), "r%d", i);
        add(f->s, res, "a", "x");
    }
    add(f->s, "services", "b", "s1"); /* rv+43 */
    add(f->s, "events", "b", "e2");   /* rv+44 */
    add(f->s, "pods", "b", "p2");     /* rv+45 */
    expect(w, STORE_ADDED, "p1", rv + 2);
    expect(w, STORE_ADDED, "x", rv + 42); /* r39, decided past the memo */
    expect(w, STORE_ADDED, "s1", rv + 43);
    expect(w, STORE_ADDED, "p2", rv + 45);
    expect_none(w);
    expect_none(none);
    store_watch_close(w);
    store_watch_close(none);
}

static void test_slow_watcher_falls_behind(void **state)
{
    fixture *f = *state;
    ty_error err;
    store_watch *w;
    store_event ev;

    ty_error_init(&err);
    store_close(f->s);
    open_with(f, 8);
    w = store_watch_open(f->s, NULL, NULL, 0, &err);
    assert_non_null(w);
    add(f->s, "pods", "default", "first");
    expect(w, STORE_ADDED, "first", store_current_rv(f->s));
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        add(f->s, "pods", "default", name);
    }
    assert_int_equal(store_watch_next(w, 100, &ev, &err), -1);
    assert_int_equal(err.code, TY_EGONE);
    store_watch_close(w);
}

static void *cancel_later(void *p)
{
    usleep(50 * 1000);
    store_watch_cancel(p);
    return NULL;
}

static void test_cancel_wakes_waiter(void **state)
{
    fixture *f = *state;
    ty_error err;
    store_watch *w = store_watch_open(f->s, NULL, NULL, 0, &err);
    store_event ev;
    pthread_t t;

    ty_error_init(&err);
    assert_int_equal(pthread_create(&t, NULL, cancel_later, w), 0);
    assert_int_equal(store_watch_next(w, -1, &ev, &err), -1);
    pthread_join(t, NULL);
    assert_int_equal(store_watch_next(w, 0, &ev, &err), -1);
    store_watch_close(w);
}

/* ---- many watchers ---- */

enum { WATCHERS = 120, EVENTS = 300 };

typedef struct watcher_arg {
    store_watch *w;
    uint64_t first_rv;
    int got;
    bool in_order;
} watcher_arg;

static void *watcher(void *p)
{
    watcher_arg *a = p;
    ty_error err;
    store_event ev;
    uint64_t want = a->first_rv;

    ty_error_init(&err);
    a->in_order = true;
    while (a->got < EVENTS && store_watch_next(a->w, 60000, &ev, &err) == 1) {
        if (ev.rv != want++)
            a->in_order = false;
        a->got++;
        store_event_release(&ev);
    }
    return NULL;
}

static void *writer(void *p)
{
    ty_store *s = p;
    for (int i = 0; i < EVENTS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "w%d", i);
        add(s, "pods", "default", name);
    }
    return NULL;
}

static void test_many_concurrent_watchers(void **state)
{
    fixture *f = *state;
    static watcher_arg args[WATCHERS];
    pthread_t t[WATCHERS], wt;
    ty_error err;
    uint64_t rv = store_current_rv(f->s);

    ty_error_init(&err);
    for (int i = 0; i < WATCHERS; i++) {
        args[i] = (watcher_arg){.w = store_watch_open(f->s, "pods", NULL, rv, &err),
                                .first_rv = rv + 1};
        assert_non_null(args[i].w);
        assert_int_equal(pthread_create(&t[i], NULL, watcher, &args[i]), 0);
    }
    assert_int_equal(pthread_create(&wt, NULL, writer, f->s), 0);
    pthread_join(wt, NULL);
    for (int i = 0; i < WATCHERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].got, EVENTS);
        assert_true(args[i].in_order);
        store_watch_close(args[i].w);
    }
}

static void test_watch_outlives_close(void **state)
{
    fixture *f = *state;
    ty_error err;
    store_watch *w = store_watch_open(f->s, NULL, NULL, 0, &err);
    store_event ev;

    ty_error_init(&err);
    add(f->s, "pods", "default", "x");
    store_close(f->s);
    f->s = NULL;
    /* A closing store answers -1; closing the watch afterwards is safe. */
    assert_int_equal(store_watch_next(w, 100, &ev, &err), -1);
    store_watch_close(w);
    open_with(f, 0);
}

/* With a window of 4 trees, events further back keep only their text: a
 * watcher replaying them still gets every event, in order, with the JSON
 * and text of that version (parsed again on demand), and so does a second
 * watcher, and the current objects are untouched. */
static void test_old_events_keep_text_only(void **state)
{
    fixture *f = *state;
    store_options o = {.history_trees = 4};
    store_watch *w[2];
    store_event ev;
    ty_error err;
    uint64_t from;
    store_obj *cur;

    ty_error_init(&err);
    store_close(f->s);
    f->s = store_open_with(f->dir, &o, &err);
    assert_non_null(f->s);
    from = store_current_rv(f->s);
    add(f->s, "pods", "default", "a");
    add(f->s, "pods", "default", "b");
    for (int i = 0; i < 20; i++)
        modify(f->s, "pods", "default", i % 2 ? "a" : "b");
    del(f->s, "pods", "default", "b");
    for (int k = 0; k < 2; k++) {
        int n_a = 0, n_b = 0;
        w[k] = store_watch_open(f->s, "pods", NULL, from, &err);
        assert_non_null(w[k]);
        for (uint64_t rv = from + 1; rv <= from + 23; rv++) {
            const json_t *json;
            const char *name;
            size_t len;
            char *dump;
            assert_int_equal(store_watch_next(w[k], 1000, &ev, &err), 1);
            assert_int_equal(ev.rv, rv);
            json = store_obj_json(ev.obj);
            assert_non_null(json);
            name = json_string_value(json_object_get(json_object_get(json, "metadata"), "name"));
            /* The version this event carries, not the latest one. */
            if (rv == from + 23) {
                assert_int_equal(ev.type, STORE_DELETED);
                assert_string_equal(name, "b");
            } else if (rv > from + 2) {
                assert_int_equal(ev.type, STORE_MODIFIED);
                int *count = strcmp(name, "a") == 0 ? &n_a : &n_b;
                ++*count;
                assert_int_equal(json_integer_value(json_object_get(
                                     json_object_get(json, "spec"), "n")),
                                 *count);
            }
            dump = json_dumps(json, JSON_COMPACT);
            assert_string_equal(dump, store_obj_text(ev.obj, &len));
            assert_int_equal(strlen(dump), len);
            free(dump);
            store_event_release(&ev);
        }
        expect_none(w[k]);
    }
    cur = store_get(f->s, "pods", "default", "a", &err);
    assert_non_null(cur);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(store_obj_json(cur), "spec"), "n")),
                     10);
    store_obj_unref(cur);
    /* Resume and 410 are unchanged by it. */
    modify(f->s, "pods", "default", "a");
    expect(w[0], STORE_MODIFIED, "a", from + 24);
    expect(w[1], STORE_MODIFIED, "a", from + 24);
    store_watch_close(w[0]);
    store_watch_close(w[1]);
}

/* A current object whose event leaves the tree window while only the
 * index and the history hold it gives up its tree (its text stays, and a
 * reader parses it again); one whose event is still in the window, or that
 * a reader holds, keeps it. */
static void test_current_tree_trimmed_past_window(void **state)
{
    fixture *f = *state;
    store_options o = {.history_trees = 4};
    store_obj *held, *cur;
    ty_error err;

    ty_error_init(&err);
    store_close(f->s);
    f->s = store_open_with(f->dir, &o, &err);
    assert_non_null(f->s);
    add(f->s, "pods", "default", "c");
    add(f->s, "pods", "default", "h");
    held = store_get(f->s, "pods", "default", "h", &err);
    assert_true(store_obj_has_tree(held));
    add(f->s, "pods", "default", "d");
    for (int i = 0; i < 10; i++)
        modify(f->s, "pods", "default", "d");
    cur = store_get(f->s, "pods", "default", "c", &err);
    assert_non_null(cur);
    assert_false(store_obj_has_tree(cur));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(store_obj_json(cur), "metadata"), "name")),
                        "c");
    store_obj_unref(cur);
    assert_true(store_obj_has_tree(held)); /* a reader holds it */
    store_obj_unref(held);
    cur = store_get(f->s, "pods", "default", "d", &err);
    assert_true(store_obj_has_tree(cur)); /* its event is the newest */
    store_obj_unref(cur);
}

/* The tree sweeper (store/sweep.c) drops the trees of current objects that
 * were not used for a pass while readers, watchers and writers go on: every
 * read still sees the right JSON (and ASan sees no tree freed under a
 * reader). */
typedef struct sweep_reader {
    ty_store *s;
    atomic_int *stop;
    long reads;
} sweep_reader;

static void *sweep_read(void *arg)
{
    sweep_reader *r = arg;
    ty_error err;
    char name[16];

    ty_error_init(&err);
    for (unsigned i = 0; !atomic_load(r->stop); i++) {
        snprintf(name, sizeof(name), "s%u", i % 300);
        store_obj *o = store_get(r->s, "pods", "default", name, &err);
        if (!o)
            abort();
        const json_t *j = store_obj_json(o);
        if (!j || strcmp(json_string_value(json_object_get(json_object_get(j, "metadata"),
                                                           "name")),
                         name) != 0)
            abort();
        store_obj_unref(o);
        r->reads++;
    }
    return NULL;
}

static void test_sweeper_under_readers(void **state)
{
    fixture *f = *state;
    store_options o = {.history_trees = 8};
    enum { READERS = 3 };
    sweep_reader r[READERS];
    pthread_t t[READERS];
    atomic_int stop = 0;
    store_watch *w;
    store_event ev;
    ty_error err;
    char name[16];
    struct timespec t0, t1;

    ty_error_init(&err);
    store_close(f->s);
    f->s = store_open_with(f->dir, &o, &err);
    assert_non_null(f->s);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        add(f->s, "pods", "default", name);
    }
    w = store_watch_open(f->s, "pods", NULL, store_current_rv(f->s), &err);
    for (int i = 0; i < READERS; i++) {
        r[i] = (sweep_reader){f->s, &stop, 0};
        assert_int_equal(pthread_create(&t[i], NULL, sweep_read, &r[i]), 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0;; i++) {
        snprintf(name, sizeof(name), "s%d", (i * 7) % 300);
        modify(f->s, "pods", "default", name);
        while (store_watch_next(w, 0, &ev, &err) == 1) {
            assert_non_null(store_obj_json(ev.obj));
            store_event_release(&ev);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (t1.tv_sec - t0.tv_sec >= 2)
            break;
        if (i % 16 == 0)
            usleep(1000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < READERS; i++) {
        pthread_join(t[i], NULL);
        assert_true(r[i].reads > 0);
    }
    store_watch_close(w);
}

/* Cold texts (store/sweep.c): objects nobody reads are compressed with
 * their resource's dictionary and their plain text goes; every way back in
 * (get, list with a filter, a watch over old events) gives the same bytes. */
static json_t *cold_pod(int i)
{
    char name[16], idx[16];

    if (i == 63) /* one whose metadata the scanner must not be fooled about */
        return json_pack("{s:s, s:s, s:{s:{s:s}}, s:s, s:[{s:i}, s, [[]]], s:{s:s, s:{s:s}}, "
                         "s:{s:[]}}",
                         "apiVersion", "v1", "kind", "Pod", "zz", "metadata", "name", "fake", "s",
                         "\"metadata\":{\"name\":\"x\"}", "arr", "metadata", 1,
                         "]}\\\"metadata\":", "metadata", "name", "c63", "labels", "k", "v",
                         "spec", "containers");
    snprintf(name, sizeof(name), "c%d", i);
    snprintf(idx, sizeof(idx), "%d", i);
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:[{s:s, s:s, s:[{s:s, s:s}, {s:s, "
                     "s:s}]}], s:s}}",
                     "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "labels",
                     "training.kubeflow.org/replica-index", idx, "training.kubeflow.org/job-name",
                     "cold-job", "spec", "containers", "name", "pytorch", "image",
                     "pytorch/pytorch:2.1", "env", "name", "RANK", "value", idx, "name",
                     "MASTER_ADDR", "value", "cold-job-master-0", "restartPolicy", "Never");
}

/* Waits until cond holds of the store's memory, or 60 s pass; with tick,
 * writing all along (the sweeper runs after each batch). */
static bool wait_until(ty_store *s, bool tick, bool (*cond)(const store_mem *m, size_t n),
                       size_t n)
{
    store_mem m;

    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline;) {
        if (tick)
            modify(s, "configmaps", "default", "tick");
        store_memory(s, &m);
        if (cond(&m, n))
            return true;
        usleep(10000);
    }
    return false;
}

enum { COLD_PODS = 64 };

/* Every pod compressed and n of them without their plain text (the tick and
 * the namespaces, too few for a dictionary, stay plain). */
static bool cold(const store_mem *m, size_t n)
{
    return m->compressed == COLD_PODS && m->objects - m->plain == n;
}

static bool starts_with_c(const json_t *obj, void *arg)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    (void)arg;
    return name && name[0] == 'c';
}

/* Reopens f's store so that only the newest few events keep their objects'
 * trees (and texts): the history holds every event of a small test. */
static void reopen_small_window(fixture *f)
{
    store_options o = {.history_trees = 4};
    ty_error err;

    ty_error_init(&err);
    store_close(f->s);
    f->s = store_open_with(f->dir, &o, &err);
    assert_non_null(f->s);
}

static void test_cold_texts_compressed(void **state)
{
    fixture *f = *state;
    enum { N = COLD_PODS };
    char *texts[N];
    const char *held_text;
    store_obj *held;
    uint64_t before;
    store_watch *w;
    store_event ev;
    store_list l;
    store_list_opts lo = {.filter = starts_with_c};
    store_mem m;
    ty_error err;
    size_t len;

    ty_error_init(&err);
    reopen_small_window(f);
    add(f->s, "configmaps", "default", "tick");
    before = store_current_rv(f->s);
    for (int i = 0; i < N; i++) {
        json_t *j = cold_pod(i);
        store_obj *p = store_create(f->s, "pods", "default", j, &err);
        assert_non_null(p);
        texts[i] = strdup(store_obj_text(p, &len));
        assert_int_equal(strlen(texts[i]), len);
        json_decref(j);
        store_obj_unref(p);
    }
    /* Somebody holds c0 and the text it read: that text stays. */
    held = store_get(f->s, "pods", "default", "c0", &err);
    assert_non_null(held);
    held_text = store_obj_text(held, NULL);
    assert_true(wait_until(f->s, true, cold, N - 1));
    assert_string_equal(held_text, texts[0]);
    store_obj_unref(held);
    assert_true(wait_until(f->s, true, cold, N));
    store_memory(f->s, &m);
    /* A pod is ~330 bytes of text; against its dictionary a few dozen. */
    assert_true(m.compressed_bytes * 3 < (size_t)N * strlen(texts[0]));

    /* A watch from before the pods: their events carry the cold versions. */
    w = store_watch_open(f->s, "pods", NULL, before, &err);
    assert_non_null(w);
    for (int i = 0; i < N; i++) {
        assert_int_equal(store_watch_next(w, 60000, &ev, &err), 1);
        assert_string_equal(store_obj_text(ev.obj, &len), texts[i]);
        store_event_release(&ev);
    }
    store_watch_close(w);

    /* Their metadata alone, parsed from the text and kept nowhere. */
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        store_obj *p = store_get(f->s, "pods", "default", name, &err);
        json_t *meta = store_obj_metadata(p), *whole = json_loads(texts[i], 0, NULL);
        assert_non_null(meta);
        assert_true(json_equal(meta, json_object_get(whole, "metadata")));
        json_decref(meta);
        json_decref(whole);
        store_obj_unref(p);
    }
    store_memory(f->s, &m);
    assert_int_equal(m.objects - m.plain, N);
    assert_true(m.trees < m.objects - N);

    /* A filtered list parses cold objects without keeping anything. */
    assert_int_equal(store_list_objects(f->s, "pods", &lo, &l, &err), 0);
    assert_int_equal(l.n, N);
    store_list_free(&l);
    store_memory(f->s, &m);
    assert_int_equal(m.objects - m.plain, N);

    /* A read brings the plain text back, the same bytes. */
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        store_obj *p = store_get(f->s, "pods", "default", name, &err);
        assert_non_null(p);
        assert_string_equal(store_obj_text(p, &len), texts[i]);
        assert_int_equal(len, strlen(texts[i]));
        assert_string_equal(json_string_value(json_object_get(
                                json_object_get(store_obj_json(p), "metadata"), "name")),
                            name);
        store_obj_unref(p);
        free(texts[i]);
    }
    store_memory(f->s, &m);
    assert_int_equal(m.plain, m.objects);
    assert_int_equal(m.compressed, N);
}

/* Nothing written after a burst: the idle sweeper still lets it go cold
 * (all but the newest four, whose events are in the tree window). */
/* A store whose history keeps only the newest four trees, with the
 * COLD_PODS pods of cold_pod in it. */
static void make_cold_pods(fixture *f)
{
    ty_error err;

    ty_error_init(&err);
    reopen_small_window(f);
    for (int i = 0; i < COLD_PODS; i++) {
        json_t *j = cold_pod(i);
        store_obj *p = store_create(f->s, "pods", "default", j, &err);
        assert_non_null(p);
        json_decref(j);
        store_obj_unref(p);
    }
}

static void test_cold_without_writes(void **state)
{
    fixture *f = *state;

    make_cold_pods(f);
    assert_true(wait_until(f->s, false, cold, COLD_PODS - 4));
}

/* The same when the burst was read just before the writes stopped: a pass
 * sees the reads and keeps everything, the next ones let it go cold. (In a
 * store this small a step is a whole pass; the idle sweeper's extra pass for
 * the reads matters where a pass takes its full 2 s.) */
static void test_cold_without_writes_after_reads(void **state)
{
    fixture *f = *state;
    char name[16];

    make_cold_pods(f);
    for (int i = 0; i < COLD_PODS; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        store_obj *p = store_get(f->s, "pods", "default", name, NULL);
        assert_non_null(p);
        assert_non_null(store_obj_json(p)); /* a read: the object is used */
        store_obj_unref(p);
    }
    assert_true(wait_until(f->s, false, cold, COLD_PODS - 4));
}

/* Views (store_obj_view): a few fields of an object, made once per version
 * (from its tree while it has one, else from a parse nothing keeps), kept as
 * text and parsed for each reader, dropped when the object goes cold. */
static int views_made, views_made_from_members;

static json_t *name_and_index(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");

    views_made++;
    /* Made from the object's tree, or from its metadata parsed alone. */
    if (!json_object_get(obj, "spec"))
        views_made_from_members++;
    return json_pack("{s:O, s:O*}", "name", json_object_get(meta, "name"), "index",
                     json_object_get(json_object_get(meta, "labels"),
                                     "training.kubeflow.org/replica-index"));
}

static json_t *just_kind(const json_t *obj)
{
    views_made++;
    return json_pack("{s:O}", "kind", json_object_get(obj, "kind"));
}

static const store_view name_view = {"test-name", name_and_index,
                                     (const char *const[]){"metadata", NULL}};
static const store_view kind_view = {"test-kind", just_kind, NULL};

static bool views_are(const store_mem *m, size_t n)
{
    return m->views == n;
}

static bool few_trees(const store_mem *m, size_t n)
{
    return m->trees <= n;
}

static store_obj *get_pod(ty_store *s, int i)
{
    char name[16];
    ty_error err;
    store_obj *p;

    ty_error_init(&err);
    snprintf(name, sizeof(name), "c%d", i);
    p = store_get(s, "pods", "default", name, &err);
    assert_non_null(p);
    return p;
}

static void assert_view(json_t *v, int i)
{
    char name[16], idx[16];

    snprintf(name, sizeof(name), "c%d", i);
    snprintf(idx, sizeof(idx), "%d", i);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "name")), name);
    assert_string_equal(json_string_value(json_object_get(v, "index")), idx);
    assert_int_equal(json_object_size(v), 2);
    json_decref(v);
}

static int set_running(json_t *obj, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    return json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Running"));
}

static void test_views(void **state)
{
    fixture *f = *state;
    enum { N = 32 };
    store_obj *held, *p;
    store_mem m;
    ty_error err;
    json_t *copy, *whole;

    ty_error_init(&err);
    reopen_small_window(f);
    add(f->s, "configmaps", "default", "tick");
    views_made = views_made_from_members = 0;
    for (int i = 0; i < N; i++) {
        json_t *j = cold_pod(i);
        p = store_create(f->s, "pods", "default", j, &err);
        assert_non_null(p);
        json_decref(j);
        /* The even ones get their view now, from the tree they still have. */
        if (i % 2 == 0)
            json_decref(store_obj_view(p, &name_view));
        store_obj_unref(p);
    }
    assert_int_equal(views_made, N / 2);
    assert_int_equal(views_made_from_members, 0);
    store_memory(f->s, &m);
    assert_int_equal(m.views, N / 2);

    /* Trees gone (the newest four are in the tree window): a read of an
     * even one parses its view, of an odd one makes it once, from a parse
     * that leaves no tree behind. */
    assert_true(wait_until(f->s, true, few_trees, 4 + 2));
    store_memory(f->s, &m);
    assert_int_equal(views_made, N / 2);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            p = get_pod(f->s, i);
            assert_view(store_obj_view(p, &name_view), i);
            store_obj_unref(p);
        }
        assert_int_equal(views_made, N);
        /* The odd ones without a tree (all but the few in the tree window)
         * had their metadata parsed alone. */
        assert_true(views_made_from_members >= N / 2 - 4);
    }
    store_mem after;
    store_memory(f->s, &after);
    assert_int_equal(after.views, N);
    assert_true(after.trees <= m.trees);

    /* Another view of the same object is made each time, and not kept. */
    p = get_pod(f->s, 3);
    for (int k = 0; k < 2; k++) {
        json_t *v = store_obj_view(p, &kind_view);
        assert_string_equal(json_string_value(json_object_get(v, "kind")), "Pod");
        json_decref(v);
    }
    assert_int_equal(views_made, N + 2);

    /* A copy to change: of a tree-less object, a parse that is not kept. */
    copy = store_obj_json_copy(p);
    whole = json_loads(store_obj_text(p, NULL), 0, NULL);
    assert_true(json_equal(copy, whole));
    json_object_set_new(copy, "kind", json_string("Changed"));
    assert_string_equal(json_string_value(json_object_get(store_obj_json(p), "kind")), "Pod");
    json_decref(copy);
    json_decref(whole);
    store_obj_unref(p);

    /* Cold: the views go with the plain texts, but for the one held. */
    held = get_pod(f->s, 5);
    assert_true(wait_until(f->s, true, views_are, 1));
    assert_view(store_obj_view(held, &name_view), 5);
    assert_int_equal(views_made, N + 2);
    store_obj_unref(held);
    assert_true(wait_until(f->s, true, views_are, 0));

    /* A write to a cold object starts from a parse of its text. */
    p = get_pod(f->s, 9);
    whole = json_loads(store_obj_text(p, NULL), 0, NULL);
    store_obj_unref(p);
    p = store_mutate_status(f->s, "pods", "default", "c9", set_running, NULL, &err);
    assert_non_null(p);
    copy = json_deep_copy(store_obj_json(p));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(copy, "status"), "phase")), "Running");
    json_object_del(copy, "status");
    json_object_del(whole, "status");
    json_object_del(json_object_get(copy, "metadata"), "resourceVersion");
    json_object_del(json_object_get(whole, "metadata"), "resourceVersion");
    assert_true(json_equal(copy, whole));
    json_decref(copy);
    json_decref(whole);
    store_obj_unref(p);
}

/* Readers that come back to each object only after it went cold, while the
 * sweeper compresses and drops texts: every read sees the right bytes (and
 * ASan sees no text freed under a reader). */
enum { COLD_N = 600 };

typedef struct cold_reader {
    ty_store *s;
    atomic_int *stop;
    unsigned seed;
    atomic_long reads;
} cold_reader;

static void *cold_read(void *arg)
{
    cold_reader *r = arg;
    ty_error err;
    char name[16], want[32];
    size_t len;

    ty_error_init(&err);
    while (!atomic_load(r->stop)) {
        int i = (int)(rand_r(&r->seed) % COLD_N);
        snprintf(name, sizeof(name), "c%d", i);
        snprintf(want, sizeof(want), "\"name\":\"c%d\"", i);
        store_obj *o = store_get(r->s, "pods", "default", name, &err);
        const char *text = o ? store_obj_text(o, &len) : NULL;
        if (!text || !strstr(text, want) || strlen(text) != len)
            abort();
        store_obj_unref(o);
        r->reads++;
        usleep(5000); /* each object about once a second: a sweeper pass is ~0.3 s */
    }
    return NULL;
}

static void test_cold_texts_under_readers(void **state)
{
    fixture *f = *state;
    enum { READERS = 3 };
    cold_reader r[READERS];
    pthread_t t[READERS];
    atomic_int stop = 0;
    store_mem m;
    ty_error err;
    size_t cold_seen = 0;

    ty_error_init(&err);
    reopen_small_window(f);
    add(f->s, "configmaps", "default", "tick");
    for (int i = 0; i < COLD_N; i++) {
        json_t *j = cold_pod(i);
        store_obj *p = store_create(f->s, "pods", "default", j, &err);
        assert_non_null(p);
        json_decref(j);
        store_obj_unref(p);
    }
    for (int i = 0; i < READERS; i++) {
        r[i] = (cold_reader){f->s, &stop, (unsigned)i + 1, 0};
        assert_int_equal(pthread_create(&t[i], NULL, cold_read, &r[i]), 0);
    }
    /* until the sweeper and the readers really did cross (objects without
     * their plain text, read meanwhile), however slowly they run */
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline;) {
        bool read_enough = true;

        modify(f->s, "configmaps", "default", "tick");
        store_memory(f->s, &m);
        if (m.objects - m.plain > cold_seen)
            cold_seen = m.objects - m.plain;
        for (int i = 0; i < READERS; i++)
            read_enough &= atomic_load(&r[i].reads) > 100;
        if (read_enough && cold_seen > COLD_N / 5)
            break;
        usleep(10000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < READERS; i++) {
        pthread_join(t[i], NULL);
        assert_true(r[i].reads > 100);
    }
    assert_true(cold_seen > COLD_N / 5);
}

typedef struct waiter {
    store_watch *w;
    store_event ev;
    int rc;
    atomic_int tid;
} waiter;

/* Waits (up to 30 s) until thread tid sleeps, so that what the test writes
 * next finds the watcher asleep, as a watcher mostly is. */
static void wait_asleep(int tid)
{
    char path[64], stat[256];

    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
    for (int i = 0; i < 30000; i++) {
        FILE *fp = fopen(path, "r");
        char *p = NULL;
        if (fp) {
            p = fgets(stat, sizeof(stat), fp) ? strrchr(stat, ')') : NULL;
            fclose(fp);
        }
        if (p && p[1] == ' ' && p[2] == 'S')
            return;
        usleep(1000);
    }
}

static void *wait_one(void *arg)
{
    waiter *wt = arg;
    ty_error err;

    atomic_store(&wt->tid, (int)gettid());
    ty_error_init(&err);
    wt->rc = store_watch_next(wt->w, 60000, &wt->ev, &err);
    ty_error_clear(&err);
    return NULL;
}

/* A watch of one resource sleeps through the batches of the others: with a
 * thousand HTTP watchers of configmaps, every pod write woke each of them
 * (and each took the hub's lock the writer needs) to find nothing. */
static void test_watch_sleeps_through_other_resources(void **state)
{
    fixture *f = *state;
    ty_error err;
    waiter wt = {0};
    pthread_t th;
    char name[32];

    ty_error_init(&err);
    wt.w = store_watch_open(f->s, "configmaps", NULL, 0, &err);
    assert_non_null(wt.w);
    assert_int_equal(pthread_create(&th, NULL, wait_one, &wt), 0);
    while (!atomic_load(&wt.tid))
        usleep(1000);
    for (int i = 0; i < 50; i++) {
        wait_asleep(atomic_load(&wt.tid));
        snprintf(name, sizeof(name), "p%d", i);
        add(f->s, "pods", "default", name); /* one commit, one batch, each */
    }
    add(f->s, "configmaps", "default", "cm");
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(wt.rc, 1);
    assert_string_equal(wt.ev.resource, "configmaps");
    /* one wake for the configmap's batch; a spurious futex return or two at most */
    assert_true(store_watch_wakeups(wt.w) <= 3);
    store_event_release(&wt.ev);
    store_watch_close(wt.w);
}

/* The ring moving past a quiet watcher's cursor with none of its events in
 * what it let go loses it nothing: no 410 (it got one before, once it
 * stopped waking for every batch). */
static void test_quiet_watch_outlives_the_ring(void **state)
{
    fixture *f = *state;
    ty_error err;
    store_watch *w, *pw;
    store_event ev;
    char name[32];

    store_fixture_close(f->dir, f->s);
    open_with(f, 16);
    ty_error_init(&err);
    add(f->s, "configmaps", "default", "first");
    w = store_watch_open(f->s, "configmaps", NULL, 0, &err);
    assert_non_null(w);
    pw = store_watch_open(f->s, "pods", NULL, 0, &err);
    assert_non_null(pw);
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        add(f->s, "pods", "default", name);
    }
    add(f->s, "configmaps", "default", "cm");
    assert_int_equal(store_watch_next(w, 0, &ev, &err), 1);
    const char *ens, *ename;
    store_obj_key(ev.obj, &ens, &ename);
    assert_string_equal(ename, "cm");
    store_event_release(&ev);
    /* one whose own events went is still told */
    assert_int_equal(store_watch_next(pw, 0, &ev, &err), -1);
    assert_int_equal(err.code, TY_EGONE);
    ty_error_clear(&err);
    store_watch_close(pw);
    store_watch_close(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_events_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_from_rv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_old_rv_is_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_bytes_count_replaced_versions, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reopen_starts_history_anew, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_resources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_watcher_falls_behind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_wakes_waiter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_concurrent_watchers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_outlives_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_events_keep_text_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_current_tree_trimmed_past_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweeper_under_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_texts_compressed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_texts_under_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_without_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cold_without_writes_after_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_sleeps_through_other_resources, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_quiet_watch_outlives_the_ring, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
