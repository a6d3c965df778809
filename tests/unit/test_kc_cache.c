/* test_kc_cache.c - the cache's client (client/kc_cache.h) over the embedded
 * client of a throwaway store, its informer polled by the test: reads come
 * from the cache once it synced (a write made behind its back is not seen
 * until the watch brings it), and the client's own writes are read back
 * before the cache has them (gets and owner lists), then from the cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_fixture.h"
#include "kc_fixture.h"

#include "base/timeutil.h"
#include "client/informer.h"
#include "client/kc_cache.h"

#define DEADLINE_MS 60000

typedef struct fixture {
    char dir[64];
    ty_store *s;
    ty_informer *inf;
    ty_kc *c;
} fixture;

static const char *const res[] = {"configmaps", NULL};

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->s = store_fixture_open(f->dir, &(store_options){0});
    store_fixture_namespace(f->s, "a");
    store_fixture_namespace(f->s, "b");
    store_fixture_namespace(f->s, "ns");
    f->inf = inf_new(KC(f->s), &(inf_config){.name = "test", .watch = res, .list = res,
                                             .cache = true},
                     NULL, NULL, &err);
    f->c = kc_cache_new(KC(f->s), &err);
    assert_non_null(f->inf);
    assert_non_null(f->c);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    kc_free(f->c);
    inf_free(f->inf);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

static json_t *cm(const char *name, const char *owner_uid, int v)
{
    json_t *obj = json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", name, "data", "v", v);

    if (owner_uid)
        json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1",
                                      "kind", "ConfigMap", "name", "owner", "uid", owner_uid,
                                      "controller", 1));
    return obj;
}

static void create(ty_kc *c, const char *name, const char *owner_uid)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_create(c, "configmaps", "a", cm(name, owner_uid, 0), &err);
    if (!o)
        fail_msg("create %s: %s", name, err.text);
    ty_obj_unref(o);
}

static bool exists(ty_kc *c, const char *name)
{
    ty_obj *o = kc_get(c, "configmaps", "a", name, NULL);

    ty_obj_unref(o);
    return o != NULL;
}

static size_t owned(ty_kc *c, const char *uid)
{
    kc_list l;
    ty_error err;
    size_t n;

    ty_error_init(&err);
    assert_int_equal(kc_list_owned_sel(c, "configmaps", "a", uid, "x=y", &l, &err), 0);
    n = l.n;
    kc_list_free(&l);
    return n;
}

/* Polls until the cache holds n config maps. */
static void poll_count(fixture *f, size_t n)
{
    int64_t end = ty_now_ms() + DEADLINE_MS;

    while (!inf_has_synced(f->inf) || inf_count(f->inf, "configmaps") != n) {
        assert_true(ty_now_ms() < end);
        assert_true(inf_poll(f->inf, 100) >= 0);
    }
}

static void test_passthrough_until_synced(void **state)
{
    fixture *f = *state;
    uint64_t hits;

    create(KC(f->s), "early", "u1");
    /* not attached: the store's answers */
    assert_true(exists(f->c, "early"));
    kc_cache_attach(f->c, f->inf);
    /* attached, not synced yet: the same */
    assert_true(exists(f->c, "early"));
    assert_int_equal(owned(f->c, "u1"), 1);
    kc_cache_stats(f->c, &hits, NULL, NULL);
    assert_int_equal(hits, 0);
    assert_false(inf_caches(f->inf, "secrets"));
    assert_true(inf_caches(f->inf, "configmaps"));
}

static void test_reads_from_cache(void **state)
{
    fixture *f = *state;
    uint64_t hits, misses;

    create(KC(f->s), "one", "u1");
    kc_cache_attach(f->c, f->inf);
    poll_count(f, 1);
    assert_true(exists(f->c, "one"));
    assert_int_equal(owned(f->c, "u1"), 1);
    /* made behind the cache's back: not there until the watch brings it */
    create(KC(f->s), "two", "u1");
    assert_false(exists(f->c, "two"));
    assert_int_equal(owned(f->c, "u1"), 1);
    poll_count(f, 2);
    assert_true(exists(f->c, "two"));
    assert_int_equal(owned(f->c, "u1"), 2);
    kc_cache_stats(f->c, &hits, &misses, NULL);
    assert_int_equal(hits, 6);
    assert_int_equal(misses, 0);
    /* a resource the cache does not keep: the store's */
    assert_null(kc_get(f->c, "secrets", "a", "none", NULL));
}

/* The client's own writes: read back before the watch brings them, so that
 * a pass does not act again on what the one before did. */
static void test_reads_own_writes(void **state)
{
    fixture *f = *state;
    uint64_t hits, misses;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    create(KC(f->s), "base", "u1");
    kc_cache_attach(f->c, f->inf);
    poll_count(f, 1);
    create(f->c, "mine", "u1");
    assert_true(exists(f->c, "mine"));
    assert_int_equal(owned(f->c, "u1"), 2);
    /* another owner's list is not held up */
    assert_int_equal(owned(f->c, "u2"), 0);
    kc_cache_stats(f->c, &hits, &misses, NULL);
    assert_int_equal(misses, 2);
    assert_int_equal(hits, 1);
    /* once the cache has it, from the cache again */
    poll_count(f, 2);
    assert_true(exists(f->c, "mine"));
    assert_int_equal(owned(f->c, "u1"), 2);
    kc_cache_stats(f->c, &hits, &misses, NULL);
    assert_int_equal(misses, 2);
    assert_int_equal(hits, 3);

    /* an update: the new version, not the cache's older one */
    o = kc_get(f->c, "configmaps", "a", "mine", &err);
    json_t *j = ty_obj_json_copy(o);
    ty_obj_unref(o);
    json_object_set_new(json_object_get(j, "data"), "v", json_integer(7));
    o = kc_update(f->c, "configmaps", "a", j, &err);
    json_decref(j);
    assert_non_null(o);
    ty_obj_unref(o);
    o = kc_get(f->c, "configmaps", "a", "mine", &err);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(ty_obj_json(o), "data"), "v")), 7);
    ty_obj_unref(o);

    /* a delete: gone from the reads at once, and from the owner list */
    o = kc_delete(f->c, "configmaps", "a", "mine", NULL, NULL, &err);
    ty_obj_unref(o);
    assert_false(exists(f->c, "mine"));
    assert_int_equal(owned(f->c, "u1"), 1);
    poll_count(f, 1);
    assert_false(exists(f->c, "mine"));
    assert_int_equal(owned(f->c, "u1"), 1);

    /* several at once (kc_write_all) */
    kc_op ops[2] = {kc_op_create("configmaps", "a", cm("w1", "u3", 0)),
                    kc_op_create("configmaps", "a", cm("w2", "u3", 0))};
    assert_int_equal(kc_write_all(f->c, ops, 2), 0);
    kc_op_clear(&ops[0]);
    kc_op_clear(&ops[1]);
    assert_int_equal(owned(f->c, "u3"), 2);
    assert_true(exists(f->c, "w2"));
    poll_count(f, 3);
    assert_int_equal(owned(f->c, "u3"), 2);
}

/* Writes the cache has caught up with are forgotten, also those of objects
 * nobody reads again. */
static void test_forgets_caught_up(void **state)
{
    fixture *f = *state;
    char name[32];
    size_t pending;

    kc_cache_attach(f->c, f->inf);
    poll_count(f, 0);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        create(f->c, name, "u1");
    }
    kc_cache_stats(f->c, NULL, NULL, &pending);
    assert_int_equal(pending, 300); /* swept once: the cache had seen none */
    poll_count(f, 300);
    for (int i = 0; i < 256; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        create(f->c, name, "u2");
    }
    /* swept at the 212th: the 300 seen went, the 212 new stayed; 44 more */
    kc_cache_stats(f->c, NULL, NULL, &pending);
    assert_int_equal(pending, 212 + 44);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_passthrough_until_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_from_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_own_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forgets_caught_up, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
