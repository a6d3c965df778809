/* fuzz.h - what the libFuzzer targets of tests/fuzz share: turning the
 * fuzzer's bytes into C strings, and failing loudly on a broken invariant
 * (abort: libFuzzer saves the input as a crash). */
#ifndef TY_TESTS_FUZZ_FUZZ_H
#define TY_TESTS_FUZZ_FUZZ_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"

/* Inputs past this are skipped: what the targets look for is in the
 * structure of the input, and a bigger one mostly costs time (the server
 * bounds bodies itself). */
#define FUZZ_MAX_INPUT 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (cut at max bytes and at its first NUL, as
 * a C string from a URL or a header would be), or NULL without memory.
 * Caller frees. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size, size_t max)
{
    size_t n = size < max ? size : max;
    char *s = malloc(n + 1);

    if (!s)
        return NULL;
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

__attribute__((noreturn, format(printf, 1, 2))) static inline void fuzz_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("fuzz invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* Whether two JSON values are the same, keys holding a NUL byte included:
 * jansson's json_equal looks an object's keys up as C strings, so two equal
 * objects with a key "a\0b" compare unequal. Their sorted compact texts
 * (\u0000 escaped) are compared instead. */
static inline bool fuzz_json_same(const json_t *a, const json_t *b)
{
    size_t flags = JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS;
    char *ta = json_dumps(a, flags), *tb = json_dumps(b, flags);
    bool same = ta && tb ? strcmp(ta, tb) == 0 : json_equal(a, b);

    free(ta);
    free(tb);
    return same;
}

/* fuzz_fail with two JSON values printed. */
__attribute__((noreturn)) static inline void fuzz_fail_json(const char *what, const json_t *a,
                                                            const json_t *b)
{
    char *ta = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT),
         *tb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);

    fuzz_fail("%s:\n  %s\n  %s", what, ta ? ta : "?", tb ? tb : "?");
}

#endif
