/* test_gc.c - the garbage collector against a real store: background,
 * foreground (cascading) and orphan propagation, namespace deletion, and the
 * start-up scan. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

#include "base/timeutil.h"
#include "controller/gc.h"
#include "store/store.h"
#include "kc_fixture.h"

typedef struct fixture {
    char dir[64];
    ty_store *s;
    ty_gc *gc;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->s = store_fixture_open(f->dir, NULL);
    f->gc = gc_start(KC(f->s), &err);
    assert_non_null(f->gc);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gc_stop(f->gc);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

/* Creates resource/ns/name; owners is NULL or an array of {uid, block} given
 * as alternating (const char *uid, int block) ending with NULL. */
static store_obj *make(ty_store *s, const char *resource, const char *ns, const char *name,
                       const char *finalizer, ...)
{
    json_t *j = json_pack("{s:s, s:s, s:{s:s}, s:{}}", "apiVersion", "v1", "kind", "Thing",
                          "metadata", "name", name, "spec");
    json_t *refs = json_array();
    ty_error err;
    store_obj *o;
    va_list ap;
    const char *uid;

    ty_error_init(&err);
    va_start(ap, finalizer);
    while ((uid = va_arg(ap, const char *))) {
        int block = va_arg(ap, int);
        json_array_append_new(refs, json_pack("{s:s, s:s, s:s, s:s, s:b}", "apiVersion", "v1",
                                              "kind", "Thing", "name", "owner", "uid", uid,
                                              "blockOwnerDeletion", block));
    }
    va_end(ap);
    if (json_array_size(refs))
        json_object_set(json_object_get(j, "metadata"), "ownerReferences", refs);
    if (finalizer)
        json_object_set_new(json_object_get(j, "metadata"), "finalizers",
                            json_pack("[s]", finalizer));
    o = store_create(s, resource, ns, j, &err);
    assert_non_null(o);
    json_decref(refs);
    json_decref(j);
    return o;
}

static const char *uid_of(const store_obj *o)
{
    return json_string_value(json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                             "uid"));
}

static bool exists(ty_store *s, const char *resource, const char *ns, const char *name)
{
    store_obj *o = store_get(s, resource, ns, name, NULL);
    store_obj_unref(o);
    return o != NULL;
}

static bool deleting(ty_store *s, const char *resource, const char *ns, const char *name)
{
    store_obj *o = store_get(s, resource, ns, name, NULL);
    bool d = o && json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                  "deletionTimestamp");
    store_obj_unref(o);
    return d;
}

/* Polls until the object's existence is `want`, up to a deadline far past
 * what any machine needs. */
static bool wait_exists(ty_store *s, const char *resource, const char *ns, const char *name,
                        bool want)
{
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline;) {
        if (exists(s, resource, ns, name) == want)
            return true;
        usleep(10 * 1000);
    }
    return false;
}

static bool wait_deleting(ty_store *s, const char *resource, const char *ns, const char *name)
{
    for (int64_t deadline = ty_now_ms() + 60000; ty_now_ms() < deadline;) {
        if (deleting(s, resource, ns, name))
            return true;
        usleep(10 * 1000);
    }
    return false;
}

/* Gives the collector time to act on anything it would (wrongly) act on. */
static void settle(void)
{
    usleep(200 * 1000);
}

static void del(ty_store *s, const char *resource, const char *ns, const char *name,
                store_propagation p)
{
    store_delete_opts opts = {.propagation = p};
    ty_error err;
    bool deleted;
    store_obj *o;

    ty_error_init(&err);
    o = store_delete(s, resource, ns, name, &opts, &deleted, &err);
    assert_non_null(o);
    store_obj_unref(o);
}

static int drop_finalizers(json_t *obj, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    json_object_del(json_object_get(obj, "metadata"), "finalizers");
    return 0;
}

static void release(ty_store *s, const char *resource, const char *ns, const char *name)
{
    ty_error err;
    ty_error_init(&err);
    store_obj_unref(store_mutate(s, resource, ns, name, drop_finalizers, NULL, &err));
}

static void test_background_deletes_dependents(void **state)
{
    fixture *f = *state;
    store_obj *owner = make(f->s, "jobs", "default", "owner", NULL, NULL);
    store_obj *other = make(f->s, "jobs", "default", "other", NULL, NULL);
    store_obj *d1 = make(f->s, "pods", "default", "d1", NULL, uid_of(owner), 0, NULL);
    store_obj *d2 = make(f->s, "services", "default", "d2", NULL, uid_of(owner), 1, NULL);
    store_obj *both = make(f->s, "pods", "default", "both", NULL, uid_of(owner), 0,
                           uid_of(other), 0, NULL);
    store_obj *stray = make(f->s, "pods", "default", "stray", NULL, NULL);

    settle();
    assert_true(exists(f->s, "pods", "default", "d1"));
    del(f->s, "jobs", "default", "owner", STORE_PROPAGATE_BACKGROUND);
    assert_false(exists(f->s, "jobs", "default", "owner"));
    assert_true(wait_exists(f->s, "pods", "default", "d1", false));
    assert_true(wait_exists(f->s, "services", "default", "d2", false));
    settle();
    /* Still owned by "other"; and never owned at all. */
    assert_true(exists(f->s, "pods", "default", "both"));
    assert_true(exists(f->s, "pods", "default", "stray"));
    del(f->s, "jobs", "default", "other", STORE_PROPAGATE_DEFAULT);
    assert_true(wait_exists(f->s, "pods", "default", "both", false));
    assert_true(exists(f->s, "pods", "default", "stray"));

    store_obj_unref(owner);
    store_obj_unref(other);
    store_obj_unref(d1);
    store_obj_unref(d2);
    store_obj_unref(both);
    store_obj_unref(stray);
}

static void test_foreground_waits_for_dependents(void **state)
{
    fixture *f = *state;
    store_obj *owner = make(f->s, "jobs", "default", "fg", NULL, NULL);
    /* Blocking and held by another finalizer; blocking; not blocking. */
    store_obj *held = make(f->s, "pods", "default", "held", "test/hold", uid_of(owner), 1, NULL);
    store_obj *block = make(f->s, "pods", "default", "block", NULL, uid_of(owner), 1, NULL);
    store_obj *loose = make(f->s, "pods", "default", "loose", NULL, uid_of(owner), 0, NULL);

    del(f->s, "jobs", "default", "fg", STORE_PROPAGATE_FOREGROUND);
    assert_true(wait_exists(f->s, "pods", "default", "block", false));
    assert_true(wait_exists(f->s, "pods", "default", "loose", false));
    assert_true(wait_deleting(f->s, "pods", "default", "held"));
    settle();
    /* The owner waits for its blocking dependent. */
    assert_true(exists(f->s, "jobs", "default", "fg"));
    assert_true(deleting(f->s, "jobs", "default", "fg"));
    release(f->s, "pods", "default", "held");
    assert_false(exists(f->s, "pods", "default", "held"));
    assert_true(wait_exists(f->s, "jobs", "default", "fg", false));

    store_obj_unref(owner);
    store_obj_unref(held);
    store_obj_unref(block);
    store_obj_unref(loose);
}

static void test_foreground_cascades(void **state)
{
    fixture *f = *state;
    store_obj *top = make(f->s, "jobs", "default", "top", NULL, NULL);
    store_obj *mid = make(f->s, "podgroups", "default", "mid", NULL, uid_of(top), 1, NULL);
    store_obj *leaf = make(f->s, "pods", "default", "leaf", "test/hold", uid_of(mid), 1, NULL);

    del(f->s, "jobs", "default", "top", STORE_PROPAGATE_FOREGROUND);
    /* mid is deleted in the foreground too, so it waits for leaf. */
    assert_true(wait_deleting(f->s, "pods", "default", "leaf"));
    assert_true(wait_deleting(f->s, "podgroups", "default", "mid"));
    settle();
    assert_true(exists(f->s, "podgroups", "default", "mid"));
    assert_true(exists(f->s, "jobs", "default", "top"));
    release(f->s, "pods", "default", "leaf");
    assert_true(wait_exists(f->s, "podgroups", "default", "mid", false));
    assert_true(wait_exists(f->s, "jobs", "default", "top", false));

    store_obj_unref(top);
    store_obj_unref(mid);
    store_obj_unref(leaf);
}

static void test_orphan_keeps_dependents(void **state)
{
    fixture *f = *state;
    store_obj *owner = make(f->s, "jobs", "default", "orph", NULL, NULL);
    store_obj *keep = make(f->s, "jobs", "default", "keep", NULL, NULL);
    store_obj *d1 = make(f->s, "pods", "default", "o1", NULL, uid_of(owner), 1, NULL);
    store_obj *d2 = make(f->s, "pods", "default", "o2", NULL, uid_of(owner), 0, uid_of(keep), 0,
                         NULL);
    ty_error err;
    store_obj *g;
    json_t *refs;

    ty_error_init(&err);
    del(f->s, "jobs", "default", "orph", STORE_PROPAGATE_ORPHAN);
    assert_true(wait_exists(f->s, "jobs", "default", "orph", false));
    settle();
    g = store_get(f->s, "pods", "default", "o1", &err);
    assert_non_null(g);
    assert_null(json_object_get(json_object_get(store_obj_json(g), "metadata"),
                                "ownerReferences"));
    store_obj_unref(g);
    g = store_get(f->s, "pods", "default", "o2", &err);
    assert_non_null(g);
    refs = json_object_get(json_object_get(store_obj_json(g), "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 0), "uid")),
                        uid_of(keep));
    store_obj_unref(g);

    store_obj_unref(owner);
    store_obj_unref(keep);
    store_obj_unref(d1);
    store_obj_unref(d2);
}

static void test_namespace_deletion_deletes_contents(void **state)
{
    fixture *f = *state;
    ty_error err;
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}, s:{s:[s]}}", "apiVersion", "v1", "kind",
                           "Namespace", "metadata", "name", "team", "spec", "finalizers",
                           "kubernetes");
    store_obj *o, *g;

    ty_error_init(&err);
    o = store_create(f->s, "namespaces", "", ns, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(ns);
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        store_obj_unref(make(f->s, "pods", "team", name, NULL, NULL));
    }
    store_obj_unref(make(f->s, "jobs", "team", "held", "test/hold", NULL));
    store_obj_unref(make(f->s, "pods", "default", "p0", NULL, NULL));

    del(f->s, "namespaces", "", "team", STORE_PROPAGATE_BACKGROUND);
    g = store_get(f->s, "namespaces", "", "team", &err);
    assert_non_null(g);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(store_obj_json(g), "status"), "phase")),
                        "Terminating");
    store_obj_unref(g);
    assert_true(wait_exists(f->s, "pods", "team", "p19", false));
    assert_true(wait_deleting(f->s, "jobs", "team", "held"));
    settle();
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        assert_false(exists(f->s, "pods", "team", name));
    }
    /* Held content keeps the namespace; other namespaces are untouched. */
    assert_true(exists(f->s, "namespaces", "", "team"));
    assert_true(exists(f->s, "pods", "default", "p0"));
    release(f->s, "jobs", "team", "held");
    assert_true(wait_exists(f->s, "namespaces", "", "team", false));
    assert_true(exists(f->s, "pods", "default", "p0"));
    assert_true(exists(f->s, "namespaces", "", "default"));
}

static int own_by_event(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                        json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind", "Event",
                                  "name", "ev", "uid", (const char *)arg));
    return 0;
}

/* Events stay out of the graph, as upstream's collector leaves them out:
 * one naming a missing owner is not collected, one named as an owner does
 * not make its dependent look orphaned, and one held by a finalizer in a
 * terminating namespace still lets the namespace go when it goes. */
static void test_events_left_out(void **state)
{
    fixture *f = *state;
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}, s:{s:[s]}}", "apiVersion", "v1", "kind",
                           "Namespace", "metadata", "name", "team", "spec", "finalizers",
                           "kubernetes");
    store_obj *o, *ev;
    ty_error err;

    ty_error_init(&err);
    ev = make(f->s, "events", "default", "ev", NULL, "no-such-uid", 0, NULL);
    o = make(f->s, "pods", "default", "dep", NULL, NULL);
    store_obj_unref(store_mutate(f->s, "pods", "default", "dep", own_by_event,
                                 (void *)uid_of(ev), &err));
    store_obj_unref(o);
    settle();
    assert_true(exists(f->s, "events", "default", "ev"));
    assert_true(exists(f->s, "pods", "default", "dep"));
    store_obj_unref(ev);

    o = store_create(f->s, "namespaces", "", ns, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(ns);
    store_obj_unref(make(f->s, "events", "team", "held", "test/hold", NULL));
    del(f->s, "namespaces", "", "team", STORE_PROPAGATE_BACKGROUND);
    assert_true(wait_deleting(f->s, "events", "team", "held"));
    settle();
    assert_true(exists(f->s, "namespaces", "", "team"));
    release(f->s, "events", "team", "held");
    assert_true(wait_exists(f->s, "namespaces", "", "team", false));
}

static void test_start_scan_finds_orphans(void **state)
{
    fixture *f = *state;
    ty_error err;
    store_obj *owner, *dep;

    ty_error_init(&err);
    gc_stop(f->gc);
    f->gc = NULL;
    owner = make(f->s, "jobs", "default", "gone", NULL, NULL);
    dep = make(f->s, "pods", "default", "left", NULL, uid_of(owner), 1, NULL);
    store_obj_unref(make(f->s, "pods", "default", "bogus", NULL, "no-such-uid", 0, NULL));
    del(f->s, "jobs", "default", "gone", STORE_PROPAGATE_BACKGROUND);
    /* Across a restart of the whole store, too. */
    store_close(f->s);
    f->s = store_open(f->dir, &err);
    assert_non_null(f->s);
    assert_true(exists(f->s, "pods", "default", "left"));
    f->gc = gc_start(KC(f->s), &err);
    assert_non_null(f->gc);
    assert_true(wait_exists(f->s, "pods", "default", "left", false));
    assert_true(wait_exists(f->s, "pods", "default", "bogus", false));
    store_obj_unref(owner);
    store_obj_unref(dep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_background_deletes_dependents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreground_waits_for_dependents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreground_cascades, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphan_keeps_dependents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_deletion_deletes_contents, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_start_scan_finds_orphans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_left_out, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
