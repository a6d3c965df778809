/* test_jsonin.c - ty_json_parse gives the tree json_loadb gives (values, types
 * and key order), fails wherever jansson fails, and leaves to jansson what it
 * does not read itself; ty_json_load then answers exactly as json_loadb. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/jsonin.h"
#include "base/jsonout.h"

/* The compact text of v, key order kept (for comparing orders too). */
static char *text_of(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* text parses to what jansson parses it to, in the same key order. */
static void same_as_jansson(const char *text, size_t len)
{
    json_error_t jerr;
    json_t *want = json_loadb(text, len, JSON_DECODE_ANY, &jerr), *got = ty_json_parse(text, len);
    char *w, *g;

    if (!want)
        fail_msg("jansson refuses %.*s: %s", (int)len, text, jerr.text);
    if (!got)
        fail_msg("ty_json_parse refuses %.*s", (int)len, text);
    assert_true(json_equal(want, got));
    w = text_of(want);
    g = text_of(got);
    assert_string_equal(w, g);
    free(w);
    free(g);
    json_decref(want);
    json_decref(got);
}

static void same(const char *text)
{
    same_as_jansson(text, strlen(text));
}

static void test_values(void **state)
{
    (void)state;
    same("{}");
    same("[]");
    same("0");
    same("-0");
    same("7");
    same("-42");
    same("9223372036854775807");
    same("-9223372036854775808");
    same("true");
    same("false");
    same("null");
    same("\"\"");
    same("\"plain\"");
    same("{\"a\":1,\"b\":[true,false,null,\"x\"],\"c\":{\"d\":{}},\"e\":[]}");
    same("[[[[[]]]],{\"\":\"\"}]");
    /* whitespace jansson allows, anywhere between tokens */
    same(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] ,\"b\"\r:{ } } \n");
    /* key order is the text's, and a repeated key keeps its first place */
    same("{\"z\":1,\"a\":2,\"m\":3}");
    same("{\"k\":1,\"j\":2,\"k\":3}");
}

static void test_strings(void **state)
{
    (void)state;
    same("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"");
    same("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x82\"");
    same("\"\\u00e9\\u20AC\\ud83d\\ude82 \\u0001\\u001f\"");
    same("{\"k\\u00e9y\\n\":\"v\",\"k\\\"2\":{\"\\t\":1}}");
    same("[\"a\\nb\",\"c\\\\\",\"\\u0041\",\"long run then \\\"escape\\\" then run\"]");
    /* an escaped key, then a value that reuses the decoding buffer */
    same("{\"a\\u0062\":\"c\\u0064\",\"e\\u0066\":[\"g\\u0068\"]}");
}

/* What ty_json_parse refuses: all that jansson refuses, and what it leaves to
 * jansson (NULL; then ty_json_load asks jansson, which decides). */
static void test_refused(void **state)
{
    static const char *const bad[] = {
        "", " ", "{", "}", "[1,]", "[1 2]", "{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{a:1}",
        "{\"a\":1,}", "[\"x]", "\"abc", "tru", "nul", "falsey", "01", "-", "--1", "+1", "1 2",
        "{} x", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"\\u0000\"", "\"a\x01" "b\"", "\"\xff\"", "\"\xc3\"",
        "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "[1.5]", "1e3", "2E-1", "0.0",
        "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
        "{\"\\u0000\":1}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        json_t *v = ty_json_parse(bad[i], strlen(bad[i]));
        if (v)
            fail_msg("ty_json_parse accepted '%s'", bad[i]);
    }
    assert_null(ty_json_parse(NULL, 0));
    /* a text cut anywhere fails */
    const char *full = "{\"a\":[1,\"b\\u00e9\",{\"c\":null}],\"d\":true}";
    for (size_t n = 0; n < strlen(full); n++)
        assert_null(ty_json_parse(full, n));
}

/* ty_json_load answers as json_loadb: the same tree or the same error. */
static void same_load(const char *text, size_t flags)
{
    json_error_t want_err, got_err;
    json_t *want = json_loadb(text, strlen(text), flags, &want_err);
    json_t *got = ty_json_load(text, strlen(text), flags, &got_err);

    if (!want) {
        assert_null(got);
        assert_string_equal(want_err.text, got_err.text);
        assert_int_equal(want_err.position, got_err.position);
        return;
    }
    assert_non_null(got);
    assert_true(json_equal(want, got));
    json_decref(want);
    json_decref(got);
}

static void test_load_as_jansson(void **state)
{
    (void)state;
    /* read here */
    same_load("{\"a\":[1,2]}", 0);
    same_load("\"s\"", JSON_DECODE_ANY);
    /* left to jansson, which reads or refuses them */
    same_load("[1.5,2e3,-0.25]", 0);
    same_load("{\"r\":1e400}", 0);
    same_load("\"a\\u0000b\"", JSON_DECODE_ANY | JSON_ALLOW_NUL);
    same_load("\"a\\u0000b\"", JSON_DECODE_ANY);
    same_load("99999999999999999999", JSON_DECODE_ANY);
    same_load("[01]", 0);
    same_load("{\"a\":1,}", 0);
    same_load("\"\xff\"", JSON_DECODE_ANY);
    /* a scalar without JSON_DECODE_ANY: jansson's error */
    same_load("\"s\"", 0);
    same_load("12", 0);
    /* a repeated key: the last value without JSON_REJECT_DUPLICATES, and
     * with it jansson's refusal, at any depth, empty or escaped keys too */
    static const char *const dups[] = {
        "{\"k\":1,\"k\":2}",
        "{\"a\":{\"x\":1,\"y\":2,\"x\":[3]}}",
        "[1,{\"b\":true},{\"c\":{},\"c\":null}]",
        "{\"\":1,\"\":2}",
        "{\"\\u00e9\":1,\"\xc3\xa9\":2}",
    };
    for (size_t i = 0; i < sizeof(dups) / sizeof(*dups); i++) {
        same_load(dups[i], 0);
        same_load(dups[i], JSON_REJECT_DUPLICATES);
        json_error_t e;
        json_t *v = ty_json_load(dups[i], strlen(dups[i]), JSON_REJECT_DUPLICATES, &e);
        if (v)
            fail_msg("'%s' accepted with JSON_REJECT_DUPLICATES", dups[i]);
        assert_non_null(strstr(e.text, "duplicate object key"));
    }
    /* no repeat: read here with the flag too */
    same_load("{\"k\":1,\"K\":2,\"k2\":{\"k\":3}}", JSON_REJECT_DUPLICATES);
    /* other flags of jansson's own: jansson reads */
    same_load("{\"k\":1} trailing", JSON_DISABLE_EOF_CHECK);
}

/* jansson's depth limit: 2048 levels read, one more refused (by both). */
static void test_depth(void **state)
{
    size_t n = 2049;
    char *deep = malloc(2 * n + 1);
    (void)state;

    assert_non_null(deep);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    assert_null(ty_json_parse(deep, 2 * n));
    assert_null(json_loadb(deep, 2 * n, 0, NULL));
    same_as_jansson(deep + 1, 2 * (n - 1));
    free(deep);
}

/* ---- random trees and random damage ---- */

static unsigned seed = 12345;

static unsigned rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) & 0xffffff;
}

static json_t *random_string(void)
{
    static const char *const pieces[] = {"a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t",
                                         "\x01", "\x1f", "\xc3\xa9", "\xe2\x82\xac",
                                         "\xf0\x9f\x9a\x82", "nodeName", "-", ":", "{"};
    char s[64] = "";
    size_t n = rnd() % 6;

    for (size_t i = 0; i < n; i++)
        strcat(s, pieces[rnd() % (sizeof(pieces) / sizeof(*pieces))]);
    return json_string(s);
}

static json_t *random_value(int depth)
{
    switch (depth > 4 ? rnd() % 4 : rnd() % 6) {
    case 0: return json_integer((json_int_t)rnd() - 8000000);
    case 1: return rnd() % 2 ? json_true() : rnd() % 2 ? json_false() : json_null();
    case 2: return random_string();
    case 3: return json_integer(rnd() % 2 ? INT64_MAX - (json_int_t)(rnd() % 3)
                                          : INT64_MIN + (json_int_t)(rnd() % 3));
    case 4: {
        json_t *a = json_array();
        for (unsigned i = rnd() % 5; i > 0; i--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (unsigned i = rnd() % 6; i > 0; i--) {
            json_t *k = random_string();
            json_object_set_new(o, json_string_value(k), random_value(depth + 1));
            json_decref(k);
        }
        return o;
    }
    }
}

/* Random trees written compact and indented (and with every non-ASCII
 * character escaped) read back as jansson reads them. */
static void test_random_trees(void **state)
{
    static const size_t flags[] = {JSON_COMPACT, JSON_INDENT(2), JSON_ENSURE_ASCII | JSON_COMPACT};
    (void)state;

    for (int i = 0; i < 3000; i++) {
        json_t *v = random_value(0);
        for (size_t f = 0; f < sizeof(flags) / sizeof(*flags); f++) {
            char *t = json_dumps(v, flags[f] | JSON_ENCODE_ANY);
            assert_non_null(t);
            same_as_jansson(t, strlen(t));
            free(t);
        }
        json_decref(v);
    }
}

/* Damaged texts (a byte changed, dropped or repeated): ty_json_parse reads
 * what jansson reads, to the same tree, and refuses the rest. */
static void test_damaged(void **state)
{
    static const char alphabet[] = "{}[]\",:\\u0aez19-. \n\x01\xc3\xa9\xff";
    (void)state;

    for (int i = 0; i < 20000; i++) {
        json_t *v = random_value(0), *want, *got;
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        size_t len = strlen(t), at = len ? rnd() % len : 0;
        char c = alphabet[rnd() % (sizeof(alphabet) - 1)];

        switch (rnd() % 3) {
        case 0: if (len) t[at] = c; break;
        case 1: if (len) memmove(t + at, t + at + 1, len - at), len--; break;
        default: t = realloc(t, len + 2); memmove(t + at + 1, t + at, len - at + 1);
                 t[at] = c; len++; break;
        }
        want = json_loadb(t, len, JSON_DECODE_ANY, NULL);
        got = ty_json_parse(t, len);
        if (got && !want)
            fail_msg("ty_json_parse read what jansson refuses: %.*s", (int)len, t);
        if (got)
            assert_true(json_equal(want, got));
        json_decref(want);
        json_decref(got);
        json_decref(v);
        free(t);
    }
}

/* The UTF-8 check jansson makes of strings. */
static void test_utf8(void **state)
{
    (void)state;
    assert_true(ty_utf8_valid((const unsigned char *)"", 0));
    assert_true(ty_utf8_valid((const unsigned char *)"caf\xc3\xa9 \xf0\x9f\x9a\x82", 10));
    assert_false(ty_utf8_valid((const unsigned char *)"\xc0\xaf", 2));     /* overlong */
    assert_false(ty_utf8_valid((const unsigned char *)"\xed\xa0\x80", 3)); /* surrogate */
    assert_false(ty_utf8_valid((const unsigned char *)"\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
    assert_false(ty_utf8_valid((const unsigned char *)"\xe2\x82", 2));     /* cut */
}

/* What the store's text form cannot carry back: a NUL in a string or a
 * key, bytes that are not UTF-8 (a tree made with jansson's _nocheck
 * functions), nesting past the limit. Each stored, the next open of the
 * store failed: the reason is checked by reading the dump back. */
static void test_check_loadable(void **state)
{
    char path[128];
    const char *why = NULL;
    json_t *v = json_pack("{s:{s:{s:s}}, s:[i, s, [s]]}", "metadata", "annotations", "a", "b",
                          "list", 1, "x", "y");
    json_t *deep, *cur;
    char *text;

    (void)state;
    assert_int_equal(ty_json_check_loadable(v, path, sizeof(path), &why), 0);
    /* a NUL in a value, reported with its path */
    json_object_set_new(json_object_get(json_object_get(v, "metadata"), "annotations"), "a",
                        json_stringn("a\0b", 3));
    text = json_dumps(v, JSON_COMPACT);
    assert_null(ty_json_load(text, strlen(text), 0, NULL));
    free(text);
    assert_int_equal(ty_json_check_loadable(v, path, sizeof(path), &why), -1);
    assert_string_equal(path, "metadata.annotations.a");
    assert_non_null(strstr(why, "NUL"));
    json_object_set_new(json_object_get(json_object_get(v, "metadata"), "annotations"), "a",
                        json_string("b"));
    /* in an array, past an array */
    json_array_set_new(json_array_get(json_object_get(v, "list"), 2), 0,
                       json_stringn("\0", 1));
    assert_int_equal(ty_json_check_loadable(v, path, sizeof(path), &why), -1);
    assert_string_equal(path, "list[2][0]");
    json_array_set_new(json_array_get(json_object_get(v, "list"), 2), 0,
                       json_string_nocheck("\xc0\xaf"));
    assert_int_equal(ty_json_check_loadable(v, path, sizeof(path), &why), -1);
    assert_string_equal(path, "list[2][0]");
    assert_non_null(strstr(why, "UTF-8"));
    json_array_set_new(json_array_get(json_object_get(v, "list"), 2), 0, json_string("ok"));
    /* a NUL in a key: shown up to the NUL */
    json_object_setn_new(json_object_get(v, "metadata"), "k\0x", 3, json_true());
    assert_int_equal(ty_json_check_loadable(v, path, sizeof(path), &why), -1);
    assert_string_equal(path, "metadata.k");
    json_decref(v);

    /* nesting: the limit is loadable, one more is not */
    deep = cur = json_array();
    for (int i = 1; i < TY_JSON_LOADABLE_DEPTH; i++) {
        json_t *n = json_array();
        json_array_append_new(cur, n);
        cur = n;
    }
    assert_int_equal(ty_json_check_loadable(deep, path, sizeof(path), &why), 0);
    text = json_dumps(deep, JSON_COMPACT);
    v = ty_json_load(text, strlen(text), 0, NULL);
    assert_non_null(v);
    json_decref(v);
    free(text);
    json_array_append_new(cur, json_array());
    assert_int_equal(ty_json_check_loadable(deep, path, sizeof(path), &why), -1);
    assert_non_null(strstr(why, "nested"));
    assert_true(strlen(path) < sizeof(path));
    json_decref(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),       cmocka_unit_test(test_strings),
        cmocka_unit_test(test_refused),      cmocka_unit_test(test_load_as_jansson),
        cmocka_unit_test(test_depth),        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_damaged),      cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_check_loadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
