/* test_events.c - Events as controllers record them: written as text (no
 * tree is built, kept or freed for one), byte for byte what a tree's create
 * wrote before, repeats folded into one Event whose count goes up, odd
 * strings escaped or refused, batches with other writes, and uids that are
 * random version-4 UUIDs. */
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

#include "base/strmap.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "store/store.h"
#include "kc_fixture.h"

static json_t *pod(const char *ns, const char *name, const char *uid, const char *rv)
{
    json_t *p = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                          "name", name);
    json_t *meta = json_object_get(p, "metadata");

    if (ns)
        json_object_set_new(meta, "namespace", json_string(ns));
    if (uid)
        json_object_set_new(meta, "uid", json_string(uid));
    if (rv)
        json_object_set_new(meta, "resourceVersion", json_string(rv));
    return p;
}

/* The only Event in ns (the test writes one at a time), or NULL. */
static store_obj *only_event(ty_store *s, const char *ns)
{
    store_list l;
    store_list_opts o = {.ns = ns};
    store_obj *e = NULL;
    ty_error err;

    ty_error_init(&err);
    assert_int_equal(store_list_objects(s, "events", &o, &l, &err), 0);
    assert_true(l.n <= 1);
    if (l.n)
        e = store_obj_ref(l.items[0]);
    store_list_free(&l);
    return e;
}

static const char *meta_s(const json_t *ev, const char *field)
{
    return json_string_value(json_object_get(json_object_get(ev, "metadata"), field));
}

static bool is_uuid4(const char *u)
{
    if (!u || strlen(u) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? u[i] != '-' : !strchr("0123456789abcdef", u[i]))
            return false;
    }
    return u[14] == '4' && strchr("89ab", u[19]);
}

/* Every byte of the stored text: the members, their order and the values
 * a tree's create gave an Event, with the store's uid, times and rv. */
static void test_text_as_a_tree_wrote_it(void **state)
{
    store_fixture *f = *state;
    json_t *p = pod("team-a", "job-0-master-0", "6a1c2f1e-0000-4000-8000-000000000001", "41");
    store_obj *e;
    store_mem m0, m;
    char want[2048];
    const char *text;
    json_t *ev;
    size_t len;

    store_memory(f->s, &m0);
    ty_event(KC(f->s), p, "Normal", "Scheduled", "volcano",
             "Successfully assigned %s/%s to %s", "team-a", "job-0-master-0", "node-7");
    e = only_event(f->s, "team-a");
    assert_non_null(e);
    text = store_obj_text(e, &len);
    ev = json_loads(text, 0, NULL);
    assert_non_null(ev);
    assert_true(is_uuid4(meta_s(ev, "uid")));
    assert_true(strncmp(meta_s(ev, "name"), "job-0-master-0.", 15) == 0);
    assert_int_equal(strlen(meta_s(ev, "name")), 15 + 16);
    snprintf(want, sizeof(want),
             "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"team-a\",\"uid\":\"%s\",\"creationTimestamp\":\"%s\","
             "\"generation\":1,\"resourceVersion\":\"%llu\"},\"involvedObject\":{"
             "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"job-0-master-0\","
             "\"namespace\":\"team-a\",\"uid\":\"6a1c2f1e-0000-4000-8000-000000000001\","
             "\"resourceVersion\":\"41\"},\"reason\":\"Scheduled\",\"message\":"
             "\"Successfully assigned team-a/job-0-master-0 to node-7\",\"type\":\"Normal\","
             "\"source\":{\"component\":\"volcano\"},\"firstTimestamp\":\"%s\","
             "\"lastTimestamp\":\"%s\",\"count\":1,\"reportingComponent\":\"volcano\","
             "\"reportingInstance\":\"volcano\"}",
             meta_s(ev, "name"), meta_s(ev, "uid"), meta_s(ev, "creationTimestamp"),
             (unsigned long long)store_obj_rv(e),
             json_string_value(json_object_get(ev, "firstTimestamp")),
             json_string_value(json_object_get(ev, "firstTimestamp")));
    assert_string_equal(text, want);
    assert_int_equal(len, strlen(want));
    assert_int_equal(store_obj_rv(e), store_current_rv(f->s));
    /* Nothing built a tree for it. */
    store_memory(f->s, &m);
    assert_int_equal(m.objects, m0.objects + 1);
    assert_int_equal(m.trees, m0.trees);
    json_decref(ev);
    store_obj_unref(e);
    json_decref(p);
}

/* The same (object, reason, message, component) again: one Event, count 2. */
static void test_repeat_bumps(void **state)
{
    store_fixture *f = *state;
    json_t *p = pod("ns1", "p", "u-1", "7");
    store_obj *e;
    const json_t *ev;

    for (int i = 0; i < 3; i++)
        ty_event(KC(f->s), p, "Warning", "FailedScheduling", "volcano", "0/%d nodes", 4);
    e = only_event(f->s, "ns1");
    assert_non_null(e);
    ev = store_obj_json(e);
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 3);
    assert_string_equal(json_string_value(json_object_get(ev, "message")), "0/4 nodes");
    store_obj_unref(e);
    /* Another message is another Event. */
    ty_event(KC(f->s), p, "Warning", "FailedScheduling", "volcano", "0/%d nodes", 5);
    {
        store_list l;
        store_list_opts o = {.ns = "ns1"};
        assert_int_equal(store_list_objects(f->s, "events", &o, &l, NULL), 0);
        assert_int_equal(l.n, 2);
        store_list_free(&l);
    }
    json_decref(p);
}

/* Quotes, backslashes and control characters are escaped; a message that is
 * not UTF-8 is not recorded (as jansson refused it), and nothing is left
 * half-written; no namespace means "default"; absent uid and
 * resourceVersion are left out of involvedObject. */
static void test_odd_strings(void **state)
{
    store_fixture *f = *state;
    json_t *p = pod("ns2", "p", "u-2", NULL), *q = pod(NULL, "cluster-thing", NULL, NULL);
    store_obj *e;
    const json_t *ev, *inv;

    ty_event(KC(f->s), p, "Warning", "Odd", "c", "say \"%s\"\\%s\n\ttab\x01", "hi", "x");
    e = only_event(f->s, "ns2");
    assert_non_null(e);
    ev = store_obj_json(e);
    assert_non_null(ev);
    assert_string_equal(json_string_value(json_object_get(ev, "message")),
                        "say \"hi\"\\x\n\ttab\x01");
    inv = json_object_get(ev, "involvedObject");
    assert_string_equal(json_string_value(json_object_get(inv, "uid")), "u-2");
    assert_null(json_object_get(inv, "resourceVersion"));
    store_obj_unref(e);

    ty_event(KC(f->s), p, "Warning", "Bad", "c", "bytes %s", "\xff\xfe");
    e = only_event(f->s, "ns2");
    assert_string_equal(json_string_value(json_object_get(store_obj_json(e), "reason")), "Odd");
    store_obj_unref(e);

    ty_event(KC(f->s), q, "Normal", "Seen", "c", "ok");
    e = only_event(f->s, "default");
    assert_non_null(e);
    ev = store_obj_json(e);
    inv = json_object_get(ev, "involvedObject");
    assert_string_equal(meta_s(ev, "namespace"), "default");
    assert_string_equal(json_string_value(json_object_get(inv, "namespace")), "default");
    assert_null(json_object_get(inv, "uid"));
    assert_null(json_object_get(inv, "resourceVersion"));
    assert_string_equal(json_string_value(json_object_get(inv, "kind")), "Pod");
    store_obj_unref(e);
    json_decref(p);
    json_decref(q);

    /* No apiVersion: involvedObject starts at its kind, still valid JSON. */
    q = json_pack("{s:s, s:{s:s, s:s}}", "kind", "Thing", "metadata", "name", "t", "namespace",
                  "ns5");
    ty_event(KC(f->s), q, "Normal", "Seen", "c", "ok");
    e = only_event(f->s, "ns5");
    assert_non_null(e);
    assert_non_null(strstr(store_obj_text(e, NULL), "\"involvedObject\":{\"kind\":\"Thing\","
                                                    "\"name\":\"t\",\"namespace\":\"ns5\"}"));
    assert_non_null(store_obj_json(e));
    store_obj_unref(e);
    json_decref(q);
}

/* Event ops in a batch with a create somebody waits for (not queued alone):
 * all written, in order. */
static void test_batch_with_other_writes(void **state)
{
    store_fixture *f = *state;
    json_t *cm = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", "cm");
    json_t *p = pod("ns3", "p", "u-3", "9");
    kc_op ops[3];
    size_t n = 0;
    store_obj *e;

    store_fixture_namespace(f->s, "ns3");
    assert_true(ty_event_op(&ops[n++], p, "Normal", "A", "c", "first"));
    ops[n++] = kc_op_create("configmaps", "ns3", cm);
    assert_true(ty_event_op(&ops[n++], p, "Normal", "B", "c", "second"));
    assert_int_equal(kc_write_all(KC(f->s), ops, n), 0);
    json_decref(p);
    assert_non_null(ops[1].result);
    for (size_t i = 0; i < n; i++)
        kc_op_clear(&ops[i]);
    {
        store_list l;
        store_list_opts o = {.ns = "ns3"};
        uint64_t rv[2] = {0};
        assert_int_equal(store_list_objects(f->s, "events", &o, &l, NULL), 0);
        assert_int_equal(l.n, 2);
        for (size_t i = 0; i < 2; i++) {
            const char *reason =
                json_string_value(json_object_get(store_obj_json(l.items[i]), "reason"));
            rv[reason[0] - 'A'] = store_obj_rv(l.items[i]);
        }
        assert_true(rv[0] < rv[1]);
        store_list_free(&l);
    }
    e = store_get(f->s, "configmaps", "ns3", "cm", NULL);
    assert_non_null(e);
    store_obj_unref(e);
}

/* Uids are v4 UUIDs, all different (they come from a per-thread pool of
 * kernel random bytes, each byte used once). */
static void test_uids(void **state)
{
    store_fixture *f = *state;
    json_t *p = pod("ns4", "p", "u-4", "1");
    store_list l;
    store_list_opts o = {.ns = "ns4"};
    strmap seen;

    strmap_init(&seen);
    for (int i = 0; i < 600; i++) /* past one pool of 4 KB (256 uids) twice */
        ty_event(KC(f->s), p, "Normal", "N", "c", "event %d", i);
    assert_int_equal(store_list_objects(f->s, "events", &o, &l, NULL), 0);
    assert_int_equal(l.n, 600);
    for (size_t i = 0; i < l.n; i++) {
        const char *uid = meta_s(store_obj_json(l.items[i]), "uid");
        assert_true(is_uuid4(uid));
        assert_null(strmap_get(&seen, uid));
        assert_int_equal(strmap_put(&seen, uid, (void *)1), 0);
    }
    store_list_free(&l);
    strmap_free(&seen);
    json_decref(p);
}

/* The texts of the Events in ns, in name order (the caller frees them). */
static size_t event_texts(ty_store *s, const char *ns, char **texts, size_t max)
{
    store_list l;
    store_list_opts o = {.ns = ns};
    size_t n, len;

    assert_int_equal(store_list_objects(s, "events", &o, &l, NULL), 0);
    for (n = 0; n < l.n && n < max; n++)
        texts[n] = strdup(store_obj_text(l.items[n], &len));
    store_list_free(&l);
    return n;
}

/* Once Events have a dictionary, each is compressed as it is recorded,
 * before its resourceVersion is known (the rv goes in when the text is
 * read back): the compressed copy and the row read back byte for byte,
 * cold in the server and after a reopen. */
static void test_compressed_before_the_rv(void **state)
{
    enum { N = 60 };
    store_fixture *f = *state;
    json_t *p = pod("team-c", "job-2-master-0", "6a1c2f1e-0000-4000-8000-000000000003", "7");
    json_t *q = pod("team-d", "job-3-master-0", "6a1c2f1e-0000-4000-8000-000000000004", "8");
    char *before[N], *after[N];
    store_mem m0, m;
    ty_error err;
    int i, tries = 0;

    ty_error_init(&err);
    /* only the newest few events keep what a cold object lets go */
    store_close(f->s);
    f->s = store_open_with(f->dir, &(store_options){.history_trees = 4}, &err);
    assert_non_null(f->s);
    /* 16 Events give the sweeper what it makes a dictionary of */
    for (i = 0; i < 20; i++)
        ty_event(KC(f->s), q, "Normal", "Early", "c", "early %d", i);
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline; tries++) {
        store_memory(f->s, &m0);
        if (m0.compressed)
            break;
        ty_event(KC(f->s), q, "Normal", "Tick", "c", "tick %d", tries);
        usleep(20000);
    }
    assert_true(m0.compressed > 0);
    store_memory(f->s, &m0);
    for (i = 0; i < N; i++)
        ty_event(KC(f->s), p, "Warning", "Late", "c", "late event %d of the test", i);
    store_memory(f->s, &m);
    assert_true(m.compressed >= m0.compressed + N); /* compressed as they were written */
    assert_int_equal(event_texts(f->s, "team-c", before, N), N);
    /* cold: every text dropped, then read back from the compressed copies */
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline; tries++) {
        store_memory(f->s, &m);
        if (m.plain + N <= m.objects)
            break;
        ty_event(KC(f->s), q, "Normal", "Tick", "c", "tick %d", 100000 + tries);
        usleep(20000);
    }
    assert_true(m.plain + N <= m.objects);
    assert_int_equal(event_texts(f->s, "team-c", after, N), N);
    for (i = 0; i < N; i++) {
        assert_string_equal(after[i], before[i]);
        free(after[i]);
    }
    store_close(f->s);
    f->s = store_open(f->dir, &err);
    assert_non_null(f->s);
    assert_int_equal(event_texts(f->s, "team-c", after, N), N);
    for (i = 0; i < N; i++) {
        json_t *ev = json_loads(after[i], 0, NULL);
        assert_non_null(ev);
        assert_string_equal(after[i], before[i]);
        json_decref(ev);
        free(after[i]);
        free(before[i]);
    }
    json_decref(p);
    json_decref(q);
}

#define T(t) cmocka_unit_test_setup_teardown(t, store_fixture_setup, store_fixture_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_text_as_a_tree_wrote_it),
        T(test_repeat_bumps),
        T(test_odd_strings),
        T(test_batch_with_other_writes),
        T(test_uids),
        T(test_compressed_before_the_rv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
