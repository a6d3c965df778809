/* test_finalizers.c - model/finalizers: a finalizer is listed once, an
 * emptied list goes away, and a tree that shares its metadata with another
 * (a status write's copy) changes without the other seeing it. Also the
 * base/jsonget.h accessors that read the lists and names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonget.h"
#include "model/finalizers.h"

static char *dump(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(s);
    return s;
}

static void assert_json(const json_t *v, const char *want)
{
    char *s = dump(v);
    assert_string_equal(s, want);
    free(s);
}

static void test_add_has_remove(void **state)
{
    json_t *o = json_pack("{s:{s:s}}", "metadata", "name", "p");

    (void)state;
    assert_false(finalizer_has(o, "a"));
    assert_int_equal(finalizer_add(o, "a"), 1);
    assert_int_equal(finalizer_add(o, "a"), 0); /* listed once */
    assert_int_equal(finalizer_add(o, "b"), 1);
    assert_true(finalizer_has(o, "a"));
    assert_json(o, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"],\"name\":\"p\"}}");
    assert_int_equal(finalizer_remove(o, "c"), 0);
    assert_int_equal(finalizer_remove(o, "a"), 1);
    assert_json(o, "{\"metadata\":{\"finalizers\":[\"b\"],\"name\":\"p\"}}");
    /* the last one takes the list with it, as kube-apiserver leaves it */
    assert_int_equal(finalizer_set(o, "b", false), 1);
    assert_json(o, "{\"metadata\":{\"name\":\"p\"}}");
    assert_int_equal(finalizer_set(o, "b", true), 1);
    assert_json(o, "{\"metadata\":{\"finalizers\":[\"b\"],\"name\":\"p\"}}");
    json_decref(o);
}

static void test_odd_shapes(void **state)
{
    json_t *o = json_object();

    (void)state;
    /* no metadata at all: made */
    assert_int_equal(finalizer_remove(o, "a"), 0);
    assert_int_equal(finalizer_add(o, "a"), 1);
    assert_json(o, "{\"metadata\":{\"finalizers\":[\"a\"]}}");
    json_decref(o);
    /* a list that is not one is replaced; duplicates and non-strings */
    o = json_pack("{s:{s:s}}", "metadata", "finalizers", "x");
    assert_int_equal(finalizer_add(o, "a"), 1);
    assert_json(o, "{\"metadata\":{\"finalizers\":[\"a\"]}}");
    json_decref(o);
    o = json_pack("{s:{s:[s,i,s]}}", "metadata", "finalizers", "a", 3, "a");
    assert_int_equal(finalizer_remove(o, "a"), 1);
    assert_json(o, "{\"metadata\":{\"finalizers\":[3]}}");
    json_decref(o);
    assert_false(finalizer_has(NULL, "a"));
}

/* A one-level copy shares metadata and its finalizers with the committed
 * object: editing the copy leaves the committed one byte for byte. */
static void test_shared_tree_untouched(void **state)
{
    json_t *committed = json_pack("{s:{s:s, s:[s,s]}, s:{s:s}}", "metadata", "name", "p",
                                  "finalizers", "a", "b", "spec", "x", "y");
    char *before = dump(committed);
    json_t *mine = json_copy(committed);

    (void)state;
    assert_int_equal(finalizer_add(mine, "c"), 1);
    assert_int_equal(finalizer_remove(mine, "a"), 1);
    assert_json(committed, before);
    assert_json(mine, "{\"metadata\":{\"finalizers\":[\"b\",\"c\"],\"name\":\"p\"},"
                      "\"spec\":{\"x\":\"y\"}}");
    assert_ptr_equal(json_object_get(mine, "spec"), json_object_get(committed, "spec"));
    json_decref(mine);
    mine = json_copy(committed);
    assert_int_equal(finalizer_remove(mine, "a"), 1);
    assert_int_equal(finalizer_remove(mine, "b"), 1);
    assert_json(committed, before);
    assert_json(mine, "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"x\":\"y\"}}");
    free(before);
    json_decref(mine);
    json_decref(committed);
}

static void test_jsonget(void **state)
{
    json_t *o = json_pack("{s:{s:s, s:i, s:{s:s}}, s:{s:s}}", "metadata", "name", "p",
                          "generation", 2, "annotations", "a.b/c", "d", "status", "phase",
                          "Running");

    (void)state;
    assert_string_equal(ty_jstr(json_object_get(o, "metadata"), "name"), "p");
    assert_string_equal(ty_jstr(json_object_get(o, "metadata"), "generation"), "");
    assert_string_equal(ty_jstr(json_object_get(o, "metadata"), "missing"), "");
    assert_string_equal(ty_jstr(NULL, "x"), "");
    assert_string_equal(ty_jstr(json_object_get(json_object_get(o, "status"), "phase"), "x"),
                        ""); /* a string is not an object */
    assert_string_equal(ty_jmeta(o, "name"), "p");
    assert_string_equal(ty_jmeta(NULL, "name"), "");
    assert_string_equal(ty_jpath(o, "status", "phase", NULL), "Running");
    assert_string_equal(ty_jpath(o, "metadata", "annotations", "a.b/c", NULL), "d");
    assert_string_equal(ty_jpath(o, "status", "phase", "deeper", NULL), "");
    assert_string_equal(ty_jpath(o, "nope", "phase", NULL), "");
    assert_string_equal(ty_jpath(o, NULL), ""); /* an object is not a string */
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_has_remove),
        cmocka_unit_test(test_odd_shapes),
        cmocka_unit_test(test_shared_tree_untouched),
        cmocka_unit_test(test_jsonget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
