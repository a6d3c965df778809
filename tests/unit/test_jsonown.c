/* test_jsonown.c - ty_json_own and ty_json_own_at: what another tree shares
 * is copied (one level) before it is changed, and left as it was; what
 * nobody else holds is changed where it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonown.h"

static char *dump(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT);
    assert_non_null(s);
    return s;
}

/* A status copied one level (as the store's status writes do) shares its
 * conditions with the committed one; owning them on the way down to the
 * condition changed leaves the committed tree byte for byte as it was, and
 * shares what was not changed. */
static void test_shared_is_copied(void **state)
{
    json_t *committed = json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:{s:s}}", "conditions", "type",
                                  "Ready", "status", "True", "type", "Scheduled", "status",
                                  "True", "labels", "a", "b");
    char *before = dump(committed);
    json_t *mine = json_copy(committed), *conds, *c;
    char *after;

    (void)state;
    conds = ty_json_own(mine, "conditions");
    assert_non_null(conds);
    assert_ptr_not_equal(conds, json_object_get(committed, "conditions"));
    c = ty_json_own_at(conds, 1);
    assert_non_null(c);
    assert_ptr_not_equal(c, json_array_get(json_object_get(committed, "conditions"), 1));
    json_object_set_new(c, "status", json_string("False"));
    after = dump(committed);
    assert_string_equal(after, before);
    /* the untouched condition and the labels are still the committed ones */
    assert_ptr_equal(json_array_get(conds, 0),
                     json_array_get(json_object_get(committed, "conditions"), 0));
    assert_ptr_equal(json_object_get(mine, "labels"), json_object_get(committed, "labels"));
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(mine, "conditions"), 1),
                                          "status")),
        "False");
    free(before);
    free(after);
    json_decref(mine);
    json_decref(committed);
}

/* Held by its parent alone: the same node back, no copy. */
static void test_unshared_is_changed_in_place(void **state)
{
    json_t *o = json_pack("{s:[s], s:{s:i}}", "finalizers", "x", "m", "k", 1);
    json_t *fins = json_object_get(o, "finalizers"), *m = json_object_get(o, "m");

    (void)state;
    assert_ptr_equal(ty_json_own(o, "finalizers"), fins);
    assert_ptr_equal(ty_json_own(o, "m"), m);
    assert_ptr_equal(ty_json_own_at(fins, 0), NULL); /* a string: nothing to own */
    json_decref(o);
}

/* Missing members, out-of-range elements and scalars give NULL and change
 * nothing. */
static void test_missing_and_scalars(void **state)
{
    json_t *o = json_pack("{s:s, s:[{}]}", "name", "n", "list");
    char *before = dump(o), *after;

    (void)state;
    assert_null(ty_json_own(o, "nope"));
    assert_null(ty_json_own(o, "name"));
    assert_null(ty_json_own_at(json_object_get(o, "list"), 5));
    assert_null(ty_json_own(NULL, "x"));
    after = dump(o);
    assert_string_equal(after, before);
    free(before);
    free(after);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_is_copied),
        cmocka_unit_test(test_unshared_is_changed_in_place),
        cmocka_unit_test(test_missing_and_scalars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
