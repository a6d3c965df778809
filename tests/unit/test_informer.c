/* test_informer.c - the informer (client/informer.h) on the embedded client
 * over a store in a throwaway directory: the first list, events in order,
 * the relist after the watch fell behind (nothing lost or doubled in the
 * resulting state, with the cache and without), the owner index, cancel and
 * the informer's own thread. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "store_fixture.h"
#include "kc_fixture.h"

#include "base/timeutil.h"
#include "client/informer.h"

#define DEADLINE_MS 60000

typedef struct fixture {
    char dir[64];
    ty_store *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    /* A short history: a watcher that reads nothing for 16 events falls
     * behind (the relist tests). */
    f->s = store_fixture_open(f->dir, &(store_options){.history_events = 16});
    store_fixture_namespace(f->s, "a");
    store_fixture_namespace(f->s, "b");
    store_fixture_namespace(f->s, "ns");
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

/* What the handlers saw. */
typedef struct seen {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* each call */
    int relists, synced;
    json_t *log;   /* ["ADDED res ns/name", ...] of the watch's events */
    json_t *state; /* "res ns/name" -> resourceVersion, from every event */
    bool clear_on_relist; /* without a cache: on_relist is the full resync */
    size_t listed;        /* events with INF_LISTED */
} seen;

static void seen_init(seen *s, bool clear)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->log = json_array();
    s->state = json_object();
    s->clear_on_relist = clear;
}

static void seen_free(seen *s)
{
    json_decref(s->log);
    json_decref(s->state);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

static void on_relist(ty_informer *inf, void *ctx)
{
    seen *s = ctx;
    (void)inf;
    pthread_mutex_lock(&s->mu);
    s->relists++;
    if (s->clear_on_relist)
        json_object_clear(s->state);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void on_events(ty_informer *inf, const kc_event *evs, size_t n, unsigned flags, void *ctx)
{
    static const char *types[] = {"", "ADDED", "MODIFIED", "DELETED", "BOOKMARK"};
    seen *s = ctx;
    (void)inf;

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < n; i++) {
        const char *ns, *name;
        char key[300], rv[TY_RV_MAX];
        ty_obj_key(evs[i].obj, &ns, &name);
        ty_obj_rv(evs[i].obj, rv, sizeof(rv));
        snprintf(key, sizeof(key), "%s %s/%s", evs[i].resource, ns, name);
        if (flags & INF_LISTED)
            s->listed++;
        else
            json_array_append_new(s->log, json_sprintf("%s %s", types[evs[i].type], key));
        if (evs[i].type == KC_DELETED)
            json_object_del(s->state, key);
        else
            json_object_set_new(s->state, key, json_string(rv));
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void on_synced(ty_informer *inf, void *ctx)
{
    seen *s = ctx;
    (void)inf;
    pthread_mutex_lock(&s->mu);
    s->synced++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static const inf_handlers handlers = {.on_relist = on_relist, .on_events = on_events,
                                      .on_synced = on_synced};

static const char *const both[] = {"configmaps", "secrets", NULL};

static ty_informer *start(fixture *f, seen *s, bool cache)
{
    inf_config cfg = {.name = "test", .watch = both, .list = both, .cache = cache, .batch = 4};
    ty_error err;
    ty_informer *inf;

    ty_error_init(&err);
    inf = inf_new(KC(f->s), &cfg, &handlers, s, &err);
    if (!inf)
        fail_msg("inf_new: %s", err.text);
    return inf;
}

static void put(fixture *f, const char *res, const char *ns, const char *name,
                const char *owner_uid, int v)
{
    json_t *obj = json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", name, "data", "v", v);
    ty_error err;
    ty_obj *o;

    if (owner_uid)
        json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1", "kind",
                                      "ConfigMap", "name", "owner", "uid", owner_uid,
                                      "controller", 1));
    ty_error_init(&err);
    o = kc_get(KC(f->s), res, ns, name, &err);
    ty_error_clear(&err);
    if (o) {
        char rv[TY_RV_MAX];
        ty_obj_rv(o, rv, sizeof(rv));
        json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(rv));
        ty_obj_unref(o);
        o = kc_update(KC(f->s), res, ns, obj, &err);
        json_decref(obj);
    } else {
        o = kc_create(KC(f->s), res, ns, obj, &err);
    }
    if (!o)
        fail_msg("write %s %s/%s: %s", res, ns, name, err.text);
    ty_obj_unref(o);
}

static void del(fixture *f, const char *res, const char *ns, const char *name)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_delete(KC(f->s), res, ns, name, NULL, NULL, &err);
    if (!o && err.code != TY_ENOTFOUND)
        fail_msg("delete %s %s/%s: %s", res, ns, name, err.text);
    ty_error_clear(&err);
    ty_obj_unref(o);
}

/* What the store holds now, as the handlers keep it. */
static json_t *store_state(fixture *f)
{
    json_t *out = json_object();

    for (size_t r = 0; both[r]; r++) {
        kc_list l;
        ty_error err;
        ty_error_init(&err);
        assert_int_equal(kc_list_objects(KC(f->s), both[r], NULL, &l, &err), 0);
        for (size_t i = 0; i < l.n; i++) {
            const char *ns, *name;
            char key[300], rv[TY_RV_MAX];
            ty_obj_key(l.items[i], &ns, &name);
            ty_obj_rv(l.items[i], rv, sizeof(rv));
            snprintf(key, sizeof(key), "%s %s/%s", both[r], ns, name);
            json_object_set_new(out, key, json_string(rv));
        }
        kc_list_free(&l);
    }
    return out;
}

static bool log_len_at_least(seen *s, size_t n)
{
    bool ok;
    pthread_mutex_lock(&s->mu);
    ok = json_array_size(s->log) >= n;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* Polls until the log holds n events (or the deadline fails the test). */
static void poll_for(ty_informer *inf, seen *s, size_t n)
{
    int64_t end = ty_now_ms() + DEADLINE_MS;

    while (!log_len_at_least(s, n)) {
        assert_true(ty_now_ms() < end);
        assert_true(inf_poll(inf, 100) >= 0);
    }
}

/* Polls until the informer has delivered its nth list. */
static void poll_lists(ty_informer *inf, uint64_t n)
{
    int64_t end = ty_now_ms() + DEADLINE_MS;

    while (inf_lists(inf) < n || !inf_has_synced(inf)) {
        assert_true(ty_now_ms() < end);
        assert_true(inf_poll(inf, 100) >= 0);
    }
}

static void assert_json_equal(json_t *a, json_t *b)
{
    if (!json_equal(a, b)) {
        char *sa = json_dumps(a, JSON_SORT_KEYS), *sb = json_dumps(b, JSON_SORT_KEYS);
        fail_msg("state differs:\n  got  %s\n  want %s", sa, sb);
    }
}

static void test_initial_list(void **state)
{
    fixture *f = *state;
    seen s;
    ty_informer *inf;
    ty_obj *o;

    seen_init(&s, false);
    put(f, "configmaps", "a", "c1", NULL, 1);
    put(f, "configmaps", "b", "c2", NULL, 1);
    put(f, "secrets", "a", "s1", NULL, 1);
    put(f, "services", "a", "x", NULL, 1); /* neither listed nor watched */
    inf = start(f, &s, true);
    assert_false(inf_has_synced(inf));
    assert_int_equal(inf_poll(inf, 0), 1);
    assert_true(inf_has_synced(inf));
    assert_int_equal(inf_lists(inf), 1);
    assert_int_equal(s.relists, 1);
    assert_int_equal(s.synced, 1);
    assert_int_equal(s.listed, 3);
    assert_int_equal(json_array_size(s.log), 0);
    json_t *want = store_state(f);
    assert_json_equal(s.state, want);
    json_decref(want);
    assert_int_equal(inf_count(inf, "configmaps"), 2);
    assert_int_equal(inf_count(inf, "secrets"), 1);
    assert_int_equal(inf_count(inf, "services"), 0);
    o = inf_get(inf, "configmaps", "b", "c2");
    assert_non_null(o);
    ty_obj_unref(o);
    assert_null(inf_get(inf, "configmaps", "a", "c2"));
    /* nothing more at hand */
    assert_int_equal(inf_poll(inf, 0), 0);
    inf_free(inf);
    seen_free(&s);
}

static void test_events_in_order(void **state)
{
    fixture *f = *state;
    seen s;
    ty_informer *inf;
    const char *want[] = {"ADDED configmaps a/x", "MODIFIED configmaps a/x",
                          "ADDED secrets a/y", "DELETED configmaps a/x",
                          "MODIFIED secrets a/y", "ADDED configmaps b/x"};
    size_t n = sizeof(want) / sizeof(want[0]);

    seen_init(&s, false);
    inf = start(f, &s, true);
    assert_int_equal(inf_poll(inf, 0), 1);
    put(f, "configmaps", "a", "x", NULL, 1);
    put(f, "configmaps", "a", "x", NULL, 2);
    put(f, "secrets", "a", "y", NULL, 1);
    put(f, "services", "a", "z", NULL, 1); /* not watched */
    del(f, "configmaps", "a", "x");
    put(f, "secrets", "a", "y", NULL, 2);
    put(f, "configmaps", "b", "x", NULL, 1);
    poll_for(inf, &s, n);
    assert_int_equal(json_array_size(s.log), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_array_get(s.log, i)), want[i]);
    assert_int_equal(s.relists, 1);
    assert_null(inf_get(inf, "configmaps", "a", "x"));
    assert_int_equal(inf_count(inf, "configmaps"), 1);
    json_t *st = store_state(f);
    assert_json_equal(s.state, st);
    json_decref(st);
    inf_free(inf);
    seen_free(&s);
}

/* Writes far past the history while the informers read nothing: each falls
 * behind, lists again, and ends with the store's state: with the cache, what
 * went during the gap comes as deletes; without, on_relist dropped it. */
static void test_relist_after_gone(void **state)
{
    fixture *f = *state;
    seen sc, sn;
    ty_informer *cached, *plain;
    char name[32];
    json_t *want;

    seen_init(&sc, false);
    seen_init(&sn, true);
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "old%d", i);
        put(f, i % 2 ? "configmaps" : "secrets", "ns", name, NULL, 0);
    }
    cached = start(f, &sc, true);
    plain = start(f, &sn, false);
    poll_lists(cached, 1);
    poll_lists(plain, 1);
    assert_int_equal(sc.listed, 10);
    /* the gap: deletes, changes and new objects, 40 events */
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "old%d", i);
        if (i < 5)
            del(f, i % 2 ? "configmaps" : "secrets", "ns", name);
        else
            put(f, i % 2 ? "configmaps" : "secrets", "ns", name, NULL, 1);
    }
    for (int i = 0; i < 25; i++) {
        snprintf(name, sizeof(name), "new%d", i);
        put(f, i % 3 ? "configmaps" : "secrets", "ns", name, NULL, i);
    }
    poll_lists(cached, 2);
    poll_lists(plain, 2);
    assert_int_equal(sc.relists, 2);
    assert_int_equal(sn.relists, 2);
    assert_int_equal(sc.synced, 2);
    want = store_state(f);
    assert_json_equal(sc.state, want);
    assert_json_equal(sn.state, want);
    assert_int_equal(inf_count(cached, "configmaps") + inf_count(cached, "secrets"),
                     json_object_size(want));
    /* and the watch goes on from the list */
    put(f, "configmaps", "ns", "after", NULL, 1);
    del(f, "secrets", "ns", "new0");
    poll_for(cached, &sc, 2);
    poll_for(plain, &sn, 2);
    json_decref(want);
    want = store_state(f);
    assert_json_equal(sc.state, want);
    assert_json_equal(sn.state, want);
    json_decref(want);
    inf_free(cached);
    inf_free(plain);
    seen_free(&sc);
    seen_free(&sn);
}

/* Counts the KC_DELETED events a list delivered. */
static void count_listed_deletes(ty_informer *inf, const kc_event *evs, size_t n,
                                 unsigned flags, void *ctx)
{
    (void)inf;
    for (size_t i = 0; i < n; i++)
        if ((flags & INF_LISTED) && evs[i].type == KC_DELETED)
            (*(int *)ctx)++;
}

static void test_gap_deletes_once(void **state)
{
    fixture *f = *state;
    inf_config cfg = {.name = "t", .watch = both, .list = both, .cache = true};
    inf_handlers h = {.on_events = count_listed_deletes};
    int deletes = 0;
    char name[32];
    ty_informer *inf;

    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof(name), "o%d", i);
        put(f, "configmaps", "ns", name, NULL, 0);
    }
    inf = inf_new(KC(f->s), &cfg, &h, &deletes, NULL);
    assert_non_null(inf);
    poll_lists(inf, 1);
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "o%d", i);
        del(f, "configmaps", "ns", name);
    }
    for (int i = 0; i < 20; i++) /* past the history */
        put(f, "configmaps", "ns", "o5", NULL, i + 1);
    poll_lists(inf, 2);
    assert_int_equal(deletes, 3);
    assert_int_equal(inf_count(inf, "configmaps"), 3);
    inf_free(inf);
}

static void test_owner_index(void **state)
{
    fixture *f = *state;
    seen s;
    ty_informer *inf;
    kc_list l;
    ty_error err;
    const char *ns, *name;

    ty_error_init(&err);
    seen_init(&s, false);
    put(f, "configmaps", "a", "p2", "uid-1", 0);
    put(f, "configmaps", "a", "p1", "uid-1", 0);
    put(f, "configmaps", "b", "p3", "uid-1", 0);
    put(f, "configmaps", "a", "q", "uid-2", 0);
    inf = start(f, &s, true);
    poll_lists(inf, 1);
    assert_int_equal(inf_list_owned(inf, "configmaps", "a", "uid-1", &l, &err), 0);
    assert_int_equal(l.n, 2);
    ty_obj_key(l.items[0], &ns, &name);
    assert_string_equal(name, "p1");
    ty_obj_key(l.items[1], &ns, &name);
    assert_string_equal(name, "p2");
    kc_list_free(&l);
    assert_int_equal(inf_list_owned(inf, "configmaps", NULL, "uid-1", &l, &err), 0);
    assert_int_equal(l.n, 3);
    kc_list_free(&l);
    /* a new owner, a deletion: the index follows the watch */
    put(f, "configmaps", "a", "p1", "uid-2", 1);
    del(f, "configmaps", "a", "p2");
    poll_for(inf, &s, 2);
    assert_int_equal(inf_list_owned(inf, "configmaps", NULL, "uid-1", &l, &err), 0);
    assert_int_equal(l.n, 1);
    kc_list_free(&l);
    assert_int_equal(inf_list_owned(inf, "configmaps", "a", "uid-2", &l, &err), 0);
    assert_int_equal(l.n, 2);
    kc_list_free(&l);
    inf_free(inf);
    seen_free(&s);
}

/* Nothing listed (the work queue's way: its resync lists in on_relist):
 * the watch opens from now, on_relist comes first at each (re)list, and
 * after a fall-behind again. */
static void test_watch_only(void **state)
{
    fixture *f = *state;
    inf_config cfg = {.name = "t", .watch = both};
    seen s;
    ty_informer *inf;
    char name[32];

    seen_init(&s, false);
    put(f, "configmaps", "a", "before", NULL, 0);
    inf = inf_new(KC(f->s), &cfg, &handlers, &s, NULL);
    assert_non_null(inf);
    poll_lists(inf, 1);
    assert_int_equal(s.relists, 1);
    assert_int_equal(s.listed, 0);
    put(f, "configmaps", "a", "x", NULL, 0);
    poll_for(inf, &s, 1);
    assert_string_equal(json_string_value(json_array_get(s.log, 0)), "ADDED configmaps a/x");
    for (int i = 0; i < 20; i++) { /* past the history */
        snprintf(name, sizeof(name), "n%d", i);
        put(f, "secrets", "a", name, NULL, 0);
    }
    poll_lists(inf, 2);
    assert_int_equal(s.relists, 2);
    assert_int_equal(s.synced, 2);
    inf_free(inf);
    seen_free(&s);
}

static void *cancel_later(void *arg)
{
    inf_cancel(arg);
    return NULL;
}

/* A poll blocked forever returns -1 on inf_cancel from another thread, and
 * every poll after it too. */
static void test_cancel(void **state)
{
    fixture *f = *state;
    seen s;
    ty_informer *inf;
    pthread_t t;

    seen_init(&s, false);
    inf = start(f, &s, false);
    poll_lists(inf, 1);
    assert_int_equal(pthread_create(&t, NULL, cancel_later, inf), 0);
    assert_int_equal(inf_poll(inf, -1), -1);
    pthread_join(t, NULL);
    assert_int_equal(inf_poll(inf, 0), -1);
    inf_free(inf);
    seen_free(&s);
}

/* Waits (the informer's thread delivering) until the handlers have synced
 * n times and logged nlog events; fails the test past the deadline. */
static void wait_seen(seen *s, int n, size_t nlog)
{
    struct timespec dl;

    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += DEADLINE_MS / 1000;
    pthread_mutex_lock(&s->mu);
    while (s->synced < n || json_array_size(s->log) < nlog)
        if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) != 0)
            fail_msg("timed out: synced %d, %zu events", s->synced, json_array_size(s->log));
    pthread_mutex_unlock(&s->mu);
}

/* inf_start's thread delivers on its own; inf_free stops it. */
static void test_thread(void **state)
{
    fixture *f = *state;
    seen s;
    ty_informer *inf;
    ty_error err;

    ty_error_init(&err);
    seen_init(&s, false);
    inf = start(f, &s, true);
    assert_int_equal(inf_start(inf, "ty-inf-test", &err), 0);
    wait_seen(&s, 1, 0);
    put(f, "secrets", "a", "t", NULL, 1);
    wait_seen(&s, 1, 1);
    pthread_mutex_lock(&s.mu);
    assert_string_equal(json_string_value(json_array_get(s.log, 0)), "ADDED secrets a/t");
    pthread_mutex_unlock(&s.mu);
    inf_free(inf);
    seen_free(&s);
}

static void test_bad_config(void **state)
{
    fixture *f = *state;
    const char *const only[] = {"configmaps", NULL};
    inf_config cfg = {.watch = only, .list = both};
    ty_error err;

    ty_error_init(&err);
    assert_null(inf_new(KC(f->s), &cfg, NULL, NULL, &err));
    assert_int_equal(err.code, TY_EINVALID);
    ty_error_clear(&err);
}

/* A client over the embedded one whose kc_resources lets a writer slip in
 * between the asking and the lists: an object of a resource that held none
 * when asked. An informer of every resource must still see it (the
 * garbage collector judged such objects' dependents ownerless). */
typedef struct racing_kc {
    ty_kc base;
    ty_kc *inner;
    kc_ops ops;
    ty_store *s;
} racing_kc;

static json_t *racing_resources(ty_kc *c)
{
    racing_kc *r = (racing_kc *)c;
    json_t *names = kc_resources(r->inner);
    ty_error err;

    ty_error_init(&err);
    store_obj_unref(store_create_take(r->s, "widgets", "a", json_pack("{s:s, s:s, s:{s:s}}",
                                      "apiVersion", "v1", "kind", "Widget", "metadata",
                                      "name", "w1"), &err));
    return names;
}

static int racing_list(ty_kc *c, const char *res, const kc_list_opts *o, kc_list *out,
                       ty_error *err)
{
    ty_kc *in = ((racing_kc *)c)->inner;
    return in->ops->list(in, res, o, out, err);
}

static kc_watch *racing_watch(ty_kc *c, const char *const *only, const char *rv, ty_error *err)
{
    ty_kc *in = ((racing_kc *)c)->inner;
    return in->ops->watch_open(in, only, rv, err);
}

static void test_list_all_sees_new_resources(void **state)
{
    fixture *f = *state;
    seen s;
    ty_error err;
    racing_kc rk;
    ty_informer *inf;

    ty_error_init(&err);
    seen_init(&s, true);
    rk.inner = KC(f->s);
    rk.ops = *rk.inner->ops;
    rk.ops.resources = racing_resources;
    rk.ops.list = racing_list;        /* what the informer calls, forwarded */
    rk.ops.watch_open = racing_watch;
    rk.base.ops = &rk.ops;
    rk.s = f->s;
    inf = inf_new(&rk.base, &(inf_config){.name = "all", .list_all = true}, &handlers, &s,
                  &err);
    assert_non_null(inf);
    assert_int_equal(inf_poll(inf, 0), 1);
    assert_true(inf_has_synced(inf));
    assert_non_null(json_object_get(s.state, "widgets a/w1"));
    inf_free(inf);
    seen_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_initial_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_after_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_deletes_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_all_sees_new_resources, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
