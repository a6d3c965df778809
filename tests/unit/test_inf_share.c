/* test_inf_share.c - informers' caches over one client keep one copy of
 * each object version (client/inf_share.h): the second cache holds the
 * first's object, a new version is shared again, nothing stays once the
 * caches let go; caches over two clients never share (the same name and
 * resourceVersion on two servers are two objects). Over the fake client,
 * the informers polled by the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/inf_share.h"
#include "client/informer.h"
#include "client/kc_fake.h"

static const char *const res[] = {"configmaps", NULL};

static ty_informer *informer(ty_kc *c)
{
    ty_error err;
    ty_informer *inf;

    ty_error_init(&err);
    inf = inf_new(c, &(inf_config){.name = "test", .watch = res, .list = res, .cache = true},
                  NULL, NULL, &err);
    assert_non_null(inf);
    return inf;
}

static void poll_all(ty_informer *inf)
{
    for (int i = 0; i < 20; i++)
        assert_true(inf_poll(inf, 0) >= 0);
    assert_true(inf_has_synced(inf));
}

static void put(ty_kc *c, const char *name, int v)
{
    ty_error err;
    char uid[64];

    ty_error_init(&err);
    snprintf(uid, sizeof(uid), "uid-%s", name); /* the same on two clients */
    ty_obj_unref(kc_fake_put(c, "configmaps",
                             json_pack("{s:{s:s, s:s, s:s}, s:{s:i}}", "metadata", "name", name,
                                       "namespace", "a", "uid", uid, "data", "v", v),
                             &err));
    assert_int_equal(err.code, TY_OK);
}

/* Whether a's and b's cached copies of name are one object. */
static bool same(ty_informer *a, ty_informer *b, const char *name)
{
    ty_obj *x = inf_get(a, "configmaps", "a", name), *y = inf_get(b, "configmaps", "a", name);
    bool r;

    assert_non_null(x);
    assert_non_null(y);
    r = x == y;
    ty_obj_unref(x);
    ty_obj_unref(y);
    return r;
}

static void test_one_copy(void **state)
{
    ty_kc *c = kc_fake_new();
    ty_informer *a, *b;
    size_t versions, shared;
    (void)state;

    put(c, "one", 1);
    put(c, "two", 2);
    a = informer(c);
    b = informer(c);
    poll_all(a);
    poll_all(b);
    assert_true(same(a, b, "one"));
    assert_true(same(a, b, "two"));
    inf_share_stats(&versions, &shared);
    assert_int_equal(versions, 2);
    assert_int_equal(shared, 2);
    /* a new version: shared once both have it, the old one gone */
    put(c, "one", 3);
    poll_all(a);
    inf_share_stats(&versions, &shared);
    assert_int_equal(versions, 3);
    assert_int_equal(shared, 1);
    poll_all(b);
    assert_true(same(a, b, "one"));
    inf_share_stats(&versions, &shared);
    assert_int_equal(versions, 2);
    assert_int_equal(shared, 2);
    /* a delete */
    ty_obj_unref(kc_delete(c, "configmaps", "a", "two", NULL, NULL, NULL));
    poll_all(a);
    poll_all(b);
    inf_share_stats(&versions, &shared);
    assert_int_equal(versions, 1);
    inf_free(a);
    inf_share_stats(&versions, &shared);
    assert_int_equal(versions, 1);
    assert_int_equal(shared, 0);
    inf_free(b);
    inf_share_stats(&versions, NULL);
    assert_int_equal(versions, 0);
    kc_free(c);
}

static void test_clients_apart(void **state)
{
    ty_kc *c1 = kc_fake_new(), *c2 = kc_fake_new();
    ty_informer *a, *b;
    size_t versions, shared;
    (void)state;

    put(c1, "one", 1);
    put(c2, "one", 1);
    a = informer(c1);
    b = informer(c2);
    poll_all(a);
    poll_all(b);
    {
        ty_obj *x = inf_get(a, "configmaps", "a", "one"), *y = inf_get(b, "configmaps", "a", "one");
        char rx[TY_RV_MAX], ry[TY_RV_MAX];
        ty_obj_rv(x, rx, sizeof(rx));
        ty_obj_rv(y, ry, sizeof(ry));
        assert_string_equal(rx, ry); /* the same version's key but for the client */
        ty_obj_unref(x);
        ty_obj_unref(y);
    }
    assert_false(same(a, b, "one"));
    inf_share_stats(&versions, &shared);
    assert_int_equal(versions, 2);
    assert_int_equal(shared, 0);
    inf_free(a);
    inf_free(b);
    kc_free(c1);
    kc_free(c2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_copy),
        cmocka_unit_test(test_clients_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
