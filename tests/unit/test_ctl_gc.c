/* test_ctl_gc.c - the garbage collector's decisions against the fake
 * client, one turn of its loop at a time (gc_int.h: gc_sync_new, gc_turn):
 * dependents of a deleted owner (Background), Foreground's order, Orphan,
 * and an owner that never existed. No store, no threads, no sleeps. */
#include "ctl_fixture.h"

#include "controller/gc_int.h"

typedef struct fixture {
    ty_kc *c;
    ty_gc *g;
    char owner_uid[64];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->c = kc_fake_new();
    assert_non_null(f->c);
    f->g = gc_sync_new(f->c);
    assert_non_null(f->g);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    gc_sync_free(f->g);
    kc_free(f->c);
    free(f);
    return 0;
}

/* A pod controlled by owner uid (block: blockOwnerDeletion). */
static void put_dependent(fixture *f, const char *name, const char *uid, bool block)
{
    ctl_put_yaml(f->c,
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n"
                 "  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %s,\n"
                 "    controller: true, blockOwnerDeletion: %s}]\n"
                 "spec: {containers: [{name: c, image: busybox}]}\n",
                 name, uid, block ? "true" : "false");
}

/* The ConfigMap default/owner and two pods it controls; one turn builds
 * the graph and writes nothing. */
static void world(fixture *f)
{
    snprintf(f->owner_uid, sizeof(f->owner_uid), "%s",
             ctl_put_yaml(f->c, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owner}\n"));
    put_dependent(f, "dep-1", f->owner_uid, true);
    put_dependent(f, "dep-2", f->owner_uid, true);
    assert_int_equal(gc_turn(f->g), 0);
    assert_int_equal(kc_fake_count(f->c, NULL, NULL), 0);
}

static void delete_owner(fixture *f, kc_propagation p)
{
    kc_delete_opts opts = {.propagation = p};
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_delete(f->c, "configmaps", "default", "owner", &opts, NULL, &err);
    if (!o)
        fail_msg("delete owner: %s", err.text);
    ty_obj_unref(o);
    kc_fake_clear_actions(f->c);
}

static void test_background(void **state)
{
    fixture *f = *state;

    world(f);
    delete_owner(f, KC_PROPAGATE_BACKGROUND);
    assert_int_equal(gc_turn(f->g), 0);
    assert_string_equal(ctl_names(f->c, "delete", "pods"), "dep-1,dep-2");
    assert_false(ctl_exists(f->c, "pods", "dep-1"));
    assert_false(ctl_exists(f->c, "pods", "dep-2"));
    /* their deletions come back as events: nothing more to do */
    kc_fake_clear_actions(f->c);
    assert_int_equal(gc_turn(f->g), 0);
    assert_int_equal(kc_fake_count(f->c, NULL, NULL), 0);
}

/* Foreground: the owner waits, marked, with its finalizer, until the
 * dependents that block it are gone; then the collector lets it go. */
static void test_foreground(void **state)
{
    fixture *f = *state;
    json_t *owner;

    world(f);
    delete_owner(f, KC_PROPAGATE_FOREGROUND);
    owner = ctl_get(f->c, "configmaps", "owner");
    assert_non_null(ctl_at(owner, "metadata.deletionTimestamp"));
    json_decref(owner);
    assert_int_equal(gc_turn(f->g), 0);
    assert_string_equal(ctl_names(f->c, "delete", "pods"), "dep-1,dep-2");
    assert_true(ctl_exists(f->c, "configmaps", "owner"));

    kc_fake_clear_actions(f->c);
    assert_int_equal(gc_turn(f->g), 0);
    assert_string_equal(ctl_names(f->c, "update", "configmaps"), "owner");
    assert_false(ctl_exists(f->c, "configmaps", "owner"));
}

/* Orphan: the dependents lose their ownerReference and stay; the owner's
 * orphan finalizer goes, and with it the owner. */
static void test_orphan(void **state)
{
    fixture *f = *state;
    json_t *pod;

    world(f);
    delete_owner(f, KC_PROPAGATE_ORPHAN);
    assert_int_equal(gc_turn(f->g), 0);
    assert_string_equal(ctl_names(f->c, "update", "pods"), "dep-1,dep-2");
    assert_int_equal(kc_fake_count(f->c, "delete", "pods"), 0);
    assert_false(ctl_exists(f->c, "configmaps", "owner"));
    pod = ctl_get(f->c, "pods", "dep-2");
    assert_int_equal(json_array_size(ctl_at(pod, "metadata.ownerReferences")), 0);
    json_decref(pod);
}

/* A dependent whose owner is not there when the graph is built goes at
 * the first turn; one with a live owner stays. */
static void test_owner_never_existed(void **state)
{
    fixture *f = *state;

    snprintf(f->owner_uid, sizeof(f->owner_uid), "%s",
             ctl_put_yaml(f->c, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owner}\n"));
    put_dependent(f, "kept", f->owner_uid, false);
    put_dependent(f, "stray", "00000000-0000-4000-8000-00000000dead", false);
    assert_int_equal(gc_turn(f->g), 0);
    assert_string_equal(ctl_names(f->c, "delete", "pods"), "stray");
    assert_true(ctl_exists(f->c, "pods", "kept"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_background, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreground, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_never_existed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
