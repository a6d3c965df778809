/* test_jsonout.c - ty_json_append writes exactly what json_dumpb(JSON_COMPACT)
 * writes, for every kind of value and escape, and for large random trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonout.h"

/* Compares with jansson's own compact text. */
static void same_as_jansson(const json_t *v)
{
    char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    ty_buf b = {0};

    assert_non_null(want);
    assert_int_equal(ty_json_append(&b, v), 0);
    assert_int_equal(b.len, strlen(want));
    assert_string_equal(b.data, want);
    free(want);
    ty_buf_free(&b);
}

static void test_scalars(void **state)
{
    (void)state;
    json_t *vals[] = {json_true(), json_false(), json_null(), json_integer(0),
                      json_integer(-1), json_integer(42), json_integer(INT64_MAX),
                      json_integer(INT64_MIN), json_real(1.5), json_real(3.0), json_real(-0.0),
                      json_real(1e20), json_real(1.25e-7), json_real(0.1), json_string(""),
                      json_string("plain"), json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x82"),
                      json_string("a/b \x7f")};
    for (size_t i = 0; i < sizeof(vals) / sizeof(*vals); i++) {
        same_as_jansson(vals[i]);
        json_decref(vals[i]);
    }
}

/* Every control character, quotes and backslashes, in values and keys;
 * a NUL inside a string. */
static void test_escapes(void **state)
{
    char s[40];
    json_t *o = json_object(), *nul;
    (void)state;

    for (int c = 1; c < 32; c++) {
        snprintf(s, sizeof(s), "x%cy\"z\\", c);
        json_object_set_new(o, s, json_string(s));
    }
    json_object_set_new(o, "tab\tkey", json_string("\b\f\n\r\t"));
    same_as_jansson(o);
    nul = json_stringn("a\0b", 3);
    same_as_jansson(nul);
    json_decref(nul);
    json_decref(o);
}

static void test_containers(void **state)
{
    (void)state;
    json_t *v = json_loads("{\"a\":{},\"b\":[],\"c\":[[],[{}],{\"d\":[1,2,{\"e\":null}]}],"
                           "\"z\":1,\"y\":2,\"x\":{\"k\":\"v\"}}",
                           0, NULL);
    assert_non_null(v);
    same_as_jansson(v);
    /* keys keep insertion order, whatever they are */
    json_object_set_new(v, "0first?", json_integer(7));
    json_object_del(v, "z");
    json_object_set_new(v, "z", json_true());
    same_as_jansson(v);
    json_decref(v);
}

/* A deterministic random tree of everything. */
static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static json_t *random_string(void)
{
    static const char *pieces[] = {"a", "Z", "0", " ", "\"", "\\", "\n", "\x01", "\x1f",
                                   "\xc3\xa9", "\xe2\x82\xac", "/", "\x7f", "long-run-of-text"};
    char buf[128] = "";
    size_t n = rnd() % 10;
    for (size_t i = 0; i < n; i++)
        strcat(buf, pieces[rnd() % (sizeof(pieces) / sizeof(*pieces))]);
    return json_string(buf);
}

static json_t *random_value(int depth)
{
    switch (rnd() % (depth > 5 ? 6 : 8)) {
    case 0: return json_integer((json_int_t)rnd());
    case 1: return json_real((double)(rnd() % 100000) / 7.0);
    case 2: return random_string();
    case 3: return json_true();
    case 4: return json_false();
    case 5: return json_null();
    case 6: {
        json_t *a = json_array();
        for (size_t n = rnd() % 6; n; n--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (size_t n = rnd() % 8; n; n--) {
            json_t *k = random_string();
            json_object_set_new(o, json_string_value(k), random_value(depth + 1));
            json_decref(k);
        }
        return o;
    }
    }
}

static void test_random_trees(void **state)
{
    (void)state;
    for (int i = 0; i < 300; i++) {
        json_t *v = random_value(0);
        same_as_jansson(v);
        json_decref(v);
    }
}

/* Appends after what is there; a tree that holds itself is refused. */
static void test_append_and_cycles(void **state)
{
    ty_buf b = {0};
    json_t *a = json_array();
    (void)state;

    ty_buf_puts(&b, "x=");
    json_array_append_new(a, json_integer(1));
    assert_int_equal(ty_json_append(&b, a), 0);
    assert_string_equal(b.data, "x=[1]");
    json_t *c = json_array();
    json_array_append(a, c); /* a -> c -> a: jansson only refuses a -> a */
    json_array_append(c, a);
    assert_int_equal(ty_json_append(&b, a), -1);
    json_array_clear(c); /* break the cycle */
    json_decref(c);
    assert_int_equal(ty_json_append(&b, NULL), -1);
    json_decref(a);
    ty_buf_free(&b);
}

/* A string alone: the bytes jansson writes for the same string, and a
 * refusal (buffer untouched) of what jansson refuses as UTF-8. */
static void test_string_alone(void **state)
{
    const char *good[] = {"", "plain", "q\"b\\s\n\t\x01\x1f", "caf\xc3\xa9 \xe2\x82\xac",
                          "\xf0\x9f\x9a\x82 \xf4\x8f\xbf\xbf", "\xed\x9f\xbf"};
    const char *bad[] = {"\xff", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                         "\xf4\x90\x80\x80", "a\x80" "b", "\xe2\x82"};
    ty_buf b = {0};
    (void)state;

    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
        json_t *j = json_string(good[i]);
        char *want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_non_null(j);
        b.len = 0;
        assert_int_equal(ty_json_append_str(&b, good[i], strlen(good[i])), 0);
        assert_string_equal(b.data, want);
        free(want);
        json_decref(j);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_null(json_string(bad[i])); /* jansson refuses it too */
        ty_buf_puts(&b, "kept");
        size_t len = b.len;
        assert_int_equal(ty_json_append_str(&b, bad[i], strlen(bad[i])), -1);
        assert_int_equal(b.len, len);
        assert_string_equal(b.data + len - 4, "kept");
    }
    ty_buf_free(&b);
}

/* ty_json_append_mark: the same bytes, and the offset where the marked node
 * starts (a value in an object, in an array, the whole tree; after a
 * prefix already in the buffer); a node not in the tree is an error. */
static void test_mark(void **state)
{
    json_t *mark = json_string(""), *other = json_string("");
    json_t *v = json_pack("{s:s, s:{s:s, s:o, s:[i, O]}}", "kind", "Pod", "metadata", "name",
                          "a\"b", "resourceVersion", mark, "list", 1, mark);
    char *want = json_dumps(v, JSON_COMPACT);
    ty_buf b = {0};
    size_t at = 0;

    (void)state;
    assert_non_null(want);
    assert_int_equal(ty_json_append_mark(&b, v, mark, &at), 0);
    assert_string_equal(b.data, want);
    /* the first place it is written: the object member, not the array's */
    assert_int_equal(at, (size_t)(strstr(want, "\"resourceVersion\":") - want) + 18);
    assert_memory_equal(b.data + at, "\"\"", 2);
    /* after text already in the buffer, the offset counts it */
    b.len = 0;
    ty_buf_append(&b, "xyz", 3);
    assert_int_equal(ty_json_append_mark(&b, v, mark, &at), 0);
    assert_int_equal(at, 3 + (size_t)(strstr(want, "\"resourceVersion\":") - want) + 18);
    /* the whole tree */
    b.len = 0;
    assert_int_equal(ty_json_append_mark(&b, v, v, &at), 0);
    assert_int_equal(at, 0);
    /* not in the tree: -1, *mark_at untouched */
    b.len = 0;
    at = 77;
    assert_int_equal(ty_json_append_mark(&b, v, other, &at), -1);
    assert_int_equal(at, 77);
    assert_int_equal(ty_json_append_mark(&b, v, NULL, &at), -1);
    ty_buf_free(&b);
    free(want);
    json_decref(v);
    json_decref(other);
}

/* A node whose text is known is copied, not written: wherever the tree
 * holds it, with the mark still found outside it; without a text, written
 * as usual. */
static void test_known(void **state)
{
    json_t *mark = json_string("");
    json_t *spec = json_pack("{s:[{s:s, s:[s, s]}], s:i}", "containers", "name", "c", "args", "a",
                             "b\n", "replicas", 3);
    json_t *v = json_pack("{s:{s:o}, s:O, s:{s:s}}", "metadata", "resourceVersion", mark, "spec",
                          spec, "status", "phase", "Running");
    char *want = json_dumps(v, JSON_COMPACT), *spec_text = json_dumps(spec, JSON_COMPACT);
    ty_buf b = {0};
    size_t at = 0;

    (void)state;
    assert_non_null(want);
    /* its real text: the same bytes as writing it */
    assert_int_equal(ty_json_append_known(&b, v, mark, &at, spec, spec_text, strlen(spec_text)),
                     0);
    assert_string_equal(b.data, want);
    assert_memory_equal(b.data + at, "\"\"", 2);
    /* the given text is what goes in (the caller vouches for it) */
    b.len = 0;
    assert_int_equal(ty_json_append_known(&b, v, mark, &at, spec, "{\"x\":1}", 7), 0);
    assert_string_equal(b.data,
                        "{\"metadata\":{\"resourceVersion\":\"\"},\"spec\":{\"x\":1},"
                        "\"status\":{\"phase\":\"Running\"}}");
    assert_int_equal(at, 31);
    /* no text: written */
    b.len = 0;
    assert_int_equal(ty_json_append_known(&b, v, mark, &at, spec, NULL, 0), 0);
    assert_string_equal(b.data, want);
    /* held twice: copied both times */
    json_object_set(json_object_get(v, "status"), "copy", spec);
    b.len = 0;
    assert_int_equal(ty_json_append_known(&b, v, mark, &at, spec, "7", 1), 0);
    assert_string_equal(b.data, "{\"metadata\":{\"resourceVersion\":\"\"},\"spec\":7,"
                                "\"status\":{\"phase\":\"Running\",\"copy\":7}}");
    ty_buf_free(&b);
    free(want);
    free(spec_text);
    json_decref(v);
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),     cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_containers),  cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_append_and_cycles), cmocka_unit_test(test_string_alone),
        cmocka_unit_test(test_mark),        cmocka_unit_test(test_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
