/* test_kc_cache_mutate.c - kc_mutate through the cache's client
 * (client/kc_cache.h) without a read first: over the fake client, its
 * informer polled by the test. The base is the cache's copy, or the
 * client's own last write while the cache lacks it; the write is a merge
 * patch carrying the base's resourceVersion; a stale base (another writer
 * was first) costs a conflict and a fresh read, never the other's change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/informer.h"
#include "client/kc_cache.h"
#include "client/kc_fake.h"

typedef struct fixture {
    ty_kc *fake;
    ty_informer *inf;
    ty_kc *c;
} fixture;

static const char *const res[] = {"pods", "configmaps", NULL};

/* Polls until the cache has caught up with every change made so far. */
static void poll_all(fixture *f)
{
    for (int i = 0; i < 100; i++)
        assert_true(inf_poll(f->inf, 0) >= 0);
    assert_true(inf_has_synced(f->inf));
}

static void put_pod(fixture *f, const char *name)
{
    ty_error err;

    ty_error_init(&err);
    ty_obj_unref(kc_fake_put(
        f->fake, "pods",
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s}]}, s:{s:s}}", "apiVersion", "v1",
                  "kind", "Pod", "metadata", "name", name, "namespace", "a", "spec",
                  "containers", "name", "c", "status", "phase", "Pending"),
        &err));
    assert_int_equal(err.code, TY_OK);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    ty_error_init(&err);
    f->fake = kc_fake_new();
    kc_fake_set_reads_local(f->fake, false); /* as HTTP: the path under test */
    put_pod(f, "p");
    f->inf = inf_new(f->fake, &(inf_config){.name = "test", .watch = res, .list = res,
                                            .cache = true},
                     NULL, NULL, &err);
    f->c = kc_cache_new(f->fake, &err);
    assert_non_null(f->inf);
    assert_non_null(f->c);
    kc_cache_attach(f->c, f->inf);
    poll_all(f);
    kc_fake_clear_actions(f->fake);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    kc_free(f->c);
    inf_free(f->inf);
    kc_free(f->fake);
    free(f);
    return 0;
}

/* kc_mutate's functions: set status.<key> (or metadata.<key> with "meta:"
 * before it) to the string value, or null. */
typedef struct setting {
    const char *key, *value;
} setting;

static int set_fn(json_t *obj, void *arg, ty_error *err)
{
    const setting *s = arg;
    const char *k = s->key;
    const char *part = "status";
    json_t *in;

    (void)err;
    if (!strncmp(k, "meta:", 5)) {
        part = "metadata";
        k += 5;
    }
    if (!(in = json_object_get(obj, part)))
        json_object_set_new(obj, part, in = json_object());
    json_object_set_new(in, k, s->value ? json_string(s->value) : json_null());
    return 0;
}

static const char *status_str(const ty_obj *o, const char *key)
{
    return json_string_value(json_object_get(json_object_get(ty_obj_json(o), "status"), key));
}

/* A GET to the server fails from now on until one is made: whether it was. */
static void forbid_get(fixture *f)
{
    kc_fake_fail_next(f->fake, "get", "pods", TY_EINTERNAL);
}

static bool get_made(fixture *f)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_get(f->fake, "pods", "a", "p", &err);
    ty_obj_unref(o);
    return o != NULL; /* the injected failure was used up already */
}

static void mutate_ok(fixture *f, const char *key, const char *value, unsigned flags)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(f->c, "pods", "a", "p", set_fn, &(setting){key, value}, flags, &err);
    if (!o)
        fail_msg("mutate %s: %s", key, err.text);
    ty_obj_unref(o);
}

static void assert_stats(fixture *f, uint64_t unread, uint64_t read_again)
{
    uint64_t u, r;

    kc_cache_mutate_stats(f->c, &u, &r);
    assert_int_equal(u, unread);
    assert_int_equal(r, read_again);
}

/* From the cache: no read, one status patch with the cached version. */
static void test_mutate_from_cache(void **state)
{
    fixture *f = *state;
    const kc_fake_action *a;

    forbid_get(f);
    mutate_ok(f, "phase", "Running", KC_STATUS);
    assert_false(get_made(f));
    assert_int_equal(kc_fake_count(f->fake, NULL, NULL), 1);
    assert_non_null(a = kc_fake_find(f->fake, "patch", "pods/status", "p"));
    assert_int_equal(a->code, TY_OK);
    assert_string_equal(status_str(a->obj, "phase"), "Running");
    assert_stats(f, 1, 0);
}

/* The client's own write, not in the cache yet, is the next one's base:
 * no read, and no conflict (the cache's copy would give one). */
static void test_own_write_not_in_cache(void **state)
{
    fixture *f = *state;
    ty_error err;
    ty_obj *o;

    forbid_get(f);
    mutate_ok(f, "phase", "Running", KC_STATUS);
    mutate_ok(f, "message", "started", KC_STATUS);
    mutate_ok(f, "meta:generateName", "p-", 0);
    assert_false(get_made(f));
    assert_int_equal(kc_fake_count(f->fake, "patch", NULL), 3);
    assert_stats(f, 3, 0);
    ty_error_init(&err);
    o = kc_get(f->fake, "pods", "a", "p", &err);
    assert_string_equal(status_str(o, "phase"), "Running");
    assert_string_equal(status_str(o, "message"), "started");
    ty_obj_unref(o);
    /* once the cache has it, from the cache: still no conflict */
    poll_all(f);
    mutate_ok(f, "reason", "r", KC_STATUS);
    assert_stats(f, 4, 0);
}

/* Another writer changed the object behind the cache: the patch with the
 * cache's version conflicts, the object is read again and fn runs on it,
 * and the other's change stays. */
static void test_stale_cache_keeps_other_write(void **state)
{
    fixture *f = *state;
    const kc_fake_action *a;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(f->fake, "pods", "a", "p", set_fn, &(setting){"message", "other's"},
                  KC_STATUS, &err);
    assert_non_null(o);
    ty_obj_unref(o);
    kc_fake_clear_actions(f->fake);

    mutate_ok(f, "phase", "Running", KC_STATUS);
    assert_stats(f, 0, 1);
    assert_non_null(a = kc_fake_find(f->fake, "patch", "pods/status", "p"));
    assert_int_equal(a->code, TY_ECONFLICT);
    assert_non_null(a = kc_fake_find(f->fake, "update", "pods/status", "p"));
    assert_int_equal(a->code, TY_OK);
    assert_string_equal(status_str(a->obj, "phase"), "Running");
    assert_string_equal(status_str(a->obj, "message"), "other's");

    /* a write of the client's own, then another writer's: the own one's
     * version is stale too */
    mutate_ok(f, "reason", "mine", KC_STATUS);
    o = kc_mutate(f->fake, "pods", "a", "p", set_fn, &(setting){"message", "again"},
                  KC_STATUS, &err);
    ty_obj_unref(o);
    mutate_ok(f, "phase", "Succeeded", KC_STATUS);
    assert_stats(f, 1, 2);
    o = kc_get(f->fake, "pods", "a", "p", &err);
    assert_string_equal(status_str(o, "phase"), "Succeeded");
    assert_string_equal(status_str(o, "message"), "again");
    assert_string_equal(status_str(o, "reason"), "mine");
    ty_obj_unref(o);
}

/* A function that sets the resourceVersion chooses the precondition: its
 * conflict is the caller's, not retried. */
static int stale_rv_fn(json_t *obj, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion",
                        json_string("1"));
    json_object_set_new(json_object_get(obj, "status"), "phase", json_string("Failed"));
    return 0;
}

static void test_own_precondition_not_retried(void **state)
{
    fixture *f = *state;
    ty_error err;
    ty_obj *o;

    put_pod(f, "p"); /* a newer version than "1" */
    poll_all(f);
    ty_error_init(&err);
    o = kc_mutate(f->c, "pods", "a", "p", stale_rv_fn, NULL, KC_STATUS, &err);
    assert_null(o);
    assert_int_equal(err.code, TY_ECONFLICT);
    ty_error_clear(&err);
    assert_int_equal(kc_fake_count(f->fake, NULL, NULL), 1);
    assert_stats(f, 1, 0);
}

/* Nothing changed: nothing written, nothing read. */
static void test_unchanged_writes_nothing(void **state)
{
    fixture *f = *state;

    forbid_get(f);
    mutate_ok(f, "phase", "Pending", KC_STATUS);
    assert_false(get_made(f));
    assert_int_equal(kc_fake_count(f->fake, NULL, NULL), 0);
    assert_stats(f, 1, 0);
}

/* A null value cannot be a merge patch's (null removes): read and written
 * whole, as before. */
static void test_null_value_read_again(void **state)
{
    fixture *f = *state;
    const kc_fake_action *a;

    mutate_ok(f, "message", NULL, KC_STATUS);
    assert_stats(f, 0, 1);
    assert_int_equal(kc_fake_count(f->fake, "patch", NULL), 0);
    assert_non_null(a = kc_fake_find(f->fake, "update", "pods/status", "p"));
    assert_true(json_is_null(json_object_get(
        json_object_get(ty_obj_json(a->obj), "status"), "message")));
}

/* A refusal on the cached copy is asked again of the server's state: a
 * function that refuses a pod bound meanwhile must not refuse on a stale
 * copy that says so, nor accept on one that does not. */
static int refuse_bound(json_t *obj, void *arg, ty_error *err)
{
    if (json_object_get(json_object_get(obj, "spec"), "nodeName"))
        return ty_seterr(err, TY_ECONFLICT, "bound meanwhile");
    json_object_set_new(json_object_get(obj, "status"), "phase", json_string(arg));
    return 0;
}

static int bind_fn(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(obj, "spec"), "nodeName", json_string(arg));
    return 0;
}

static int unbind_fn(json_t *obj, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    json_object_del(json_object_get(obj, "spec"), "nodeName");
    return 0;
}

static void test_refusal_read_again(void **state)
{
    fixture *f = *state;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    /* cached: bound; the server: unbound again (behind the cache) */
    ty_obj_unref(kc_mutate(f->fake, "pods", "a", "p", bind_fn, "n1", 0, &err));
    poll_all(f);
    ty_obj_unref(kc_mutate(f->fake, "pods", "a", "p", unbind_fn, NULL, 0, &err));
    o = kc_mutate(f->c, "pods", "a", "p", refuse_bound, "Failed", KC_STATUS, &err);
    if (!o)
        fail_msg("mutate: %s", err.text);
    assert_string_equal(status_str(o, "phase"), "Failed");
    ty_obj_unref(o);
    assert_stats(f, 0, 1);
    /* cached: unbound (caught up); the server: bound: the patch conflicts */
    poll_all(f);
    ty_obj_unref(kc_mutate(f->fake, "pods", "a", "p", bind_fn, "n2", 0, &err));
    o = kc_mutate(f->c, "pods", "a", "p", refuse_bound, "Succeeded", KC_STATUS, &err);
    assert_null(o);
    assert_int_equal(err.code, TY_ECONFLICT);
    assert_string_equal(err.text, "bound meanwhile");
    ty_error_clear(&err);
}

/* kc_write_all's mutates go the same way (one request per op anyway). */
static void test_write_all(void **state)
{
    fixture *f = *state;
    setting s1 = {"meta:generateName", "q-"}, s2 = {"phase", "Running"};
    kc_op ops[2] = {kc_op_mutate("pods", "a", "p", set_fn, &s1, KC_SPEC_TOP),
                    kc_op_mutate("pods", "a", "p", set_fn, &s2, KC_STATUS)};

    forbid_get(f);
    assert_int_equal(kc_write_all(f->c, ops, 2), 0);
    assert_non_null(ops[1].result);
    assert_string_equal(status_str(ops[1].result, "phase"), "Running");
    kc_op_clear(&ops[0]);
    kc_op_clear(&ops[1]);
    assert_false(get_made(f));
    assert_int_equal(kc_fake_count(f->fake, "patch", NULL), 2);
    assert_stats(f, 2, 0);
}

/* Gone from the server, still in the cache: the patch's answer. */
static void test_deleted_behind_cache(void **state)
{
    fixture *f = *state;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    ty_obj_unref(kc_delete(f->fake, "pods", "a", "p", NULL, NULL, &err));
    o = kc_mutate(f->c, "pods", "a", "p", set_fn, &(setting){"phase", "Running"}, KC_STATUS,
                  &err);
    assert_null(o);
    assert_int_equal(err.code, TY_ENOTFOUND);
    ty_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mutate_from_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_write_not_in_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_cache_keeps_other_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_precondition_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unchanged_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_value_read_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_read_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_behind_cache, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
