/* jsonin.c - jansson trees from JSON text, read in place (see jsonin.h). */
#include "base/jsonin.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* jansson's own limit (JSON_PARSER_MAX_DEPTH): deeper input fails there too */
#define MAX_DEPTH 2048

typedef struct reader {
    const char *p, *end;
    int depth;
    bool dup;       /* an object repeated a key (the last value stayed) */
    ty_buf scratch; /* a string with escapes, decoded */
} reader;

bool ty_utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        uint32_t cp;

        if (c < 0x80) {
            /* ASCII eight bytes at a time: the store checks whole rows at
             * open (quarantine), and they are mostly ASCII */
            for (i++; n - i >= 8; i += 8) {
                uint64_t w;
                memcpy(&w, s + i, 8);
                if (w & 0x8080808080808080ull)
                    break;
            }
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            len = 2, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            len = 3, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            len = 4, cp = c & 0x07;
        else
            return false;
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        i += len;
    }
    return true;
}

static void skip_ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

static int hex4(const char *p)
{
    int v = 0;

    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static bool put_utf8(ty_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;

    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    return ty_buf_append(b, u, n) == 0;
}

/* The escape at r->p (just past its backslash), decoded onto r->scratch. */
static bool unescape(reader *r)
{
    static const char plain[] = "\"\\/bfnrt", as[] = "\"\\/\b\f\n\r\t";
    const char *at;
    int hi, lo;

    if (r->p == r->end)
        return false;
    if (*r->p != 'u') {
        if (!(at = memchr(plain, *r->p, sizeof(plain) - 1)))
            return false;
        r->p++;
        return ty_buf_append(&r->scratch, &as[at - plain], 1) == 0;
    }
    if (r->end - r->p < 5 || (hi = hex4(r->p + 1)) < 0)
        return false;
    r->p += 5;
    if (hi == 0 || (hi >= 0xDC00 && hi <= 0xDFFF))
        return false; /* \u0000 (JSON_ALLOW_NUL) or a lone low surrogate: jansson's to say */
    if (hi < 0xD800 || hi > 0xDBFF)
        return put_utf8(&r->scratch, (uint32_t)hi);
    if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || (lo = hex4(r->p + 2)) < 0 ||
        lo < 0xDC00 || lo > 0xDFFF)
        return false;
    r->p += 6;
    return put_utf8(&r->scratch, 0x10000 + ((uint32_t)(hi - 0xD800) << 10) + (uint32_t)(lo - 0xDC00));
}

/* What a byte is to a string's scan: STOP ends the run (a control
 * character, '"' or '\\'), HIGH belongs to a multi-byte character (to be
 * checked as UTF-8), 0 is plain ASCII. One load a byte instead of four
 * compares. */
enum { HIGH = 1, STOP = 2 };
#define CTL4(n) [n] = STOP, [n + 1] = STOP, [n + 2] = STOP, [n + 3] = STOP
#define HIGH16(n)                                                                       \
    [n] = HIGH, [n + 1] = HIGH, [n + 2] = HIGH, [n + 3] = HIGH, [n + 4] = HIGH,         \
    [n + 5] = HIGH, [n + 6] = HIGH, [n + 7] = HIGH, [n + 8] = HIGH, [n + 9] = HIGH,     \
    [n + 10] = HIGH, [n + 11] = HIGH, [n + 12] = HIGH, [n + 13] = HIGH, [n + 14] = HIGH, \
    [n + 15] = HIGH
static const unsigned char string_byte[256] = {
    CTL4(0),     CTL4(4),     CTL4(8),     CTL4(12),    CTL4(16),    CTL4(20),
    CTL4(24),    CTL4(28),    ['"'] = STOP, ['\\'] = STOP, HIGH16(0x80), HIGH16(0x90),
    HIGH16(0xa0), HIGH16(0xb0), HIGH16(0xc0), HIGH16(0xd0), HIGH16(0xe0), HIGH16(0xf0)};
#undef CTL4
#undef HIGH16

/* The string at r->p (its opening quote): *s and *n point into the text
 * when it has no escapes, else into r->scratch. */
static bool read_string(reader *r, const char **s, size_t *n)
{
    const char *start = ++r->p, *q = start;
    bool high = false, escaped = false;
    unsigned char k;

    for (;;) {
        while (q < r->end && (k = string_byte[(unsigned char)*q]) != STOP) {
            high |= k;
            q++;
        }
        if (q == r->end || (unsigned char)*q < 0x20)
            return false; /* unclosed, or a raw control character */
        if (*q == '"')
            break;
        if (!escaped) {
            r->scratch.len = 0;
            escaped = true;
        }
        /* an escape never splits a character: each run is checked alone */
        if ((high && !ty_utf8_valid((const unsigned char *)start, (size_t)(q - start))) ||
            ty_buf_append(&r->scratch, start, (size_t)(q - start)) < 0)
            return false;
        high = false;
        r->p = q + 1;
        if (!unescape(r))
            return false;
        start = q = r->p;
    }
    if (high && !ty_utf8_valid((const unsigned char *)start, (size_t)(q - start)))
        return false;
    if (escaped) {
        if (ty_buf_append(&r->scratch, start, (size_t)(q - start)) < 0)
            return false;
        *s = r->scratch.data ? r->scratch.data : "";
        *n = r->scratch.len;
    } else {
        *s = start;
        *n = (size_t)(q - start);
    }
    r->p = q + 1;
    return true;
}

/* An integer as jansson reads one; a real number or one out of range is
 * left to it (NULL). */
static json_t *read_number(reader *r)
{
    const char *p = r->p;
    bool neg = *p == '-';
    uint64_t v = 0, limit;

    if (neg)
        p++;
    if (p == r->end || *p < '0' || *p > '9')
        return NULL;
    if (*p == '0' && p + 1 < r->end && p[1] >= '0' && p[1] <= '9')
        return NULL; /* a leading zero */
    limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < r->end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10)
            return NULL;
        v = v * 10 + d;
    }
    if (p < r->end && (*p == '.' || *p == 'e' || *p == 'E'))
        return NULL;
    r->p = p;
    if (neg)
        return json_integer(v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v);
    return json_integer((json_int_t)v);
}

static bool literal(reader *r, const char *word, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return false;
    r->p += n;
    return true;
}

static json_t *read_value(reader *r);

/* Past an opening bracket and the whitespace after it: true when close
 * follows at once (taken too). */
static bool opened_empty(reader *r, char close)
{
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return true;
    }
    return false;
}

/* After a member or an element: 1 past a comma (and the whitespace after
 * it), 0 past close, -1 at anything else. */
static int next_item(reader *r, char close)
{
    skip_ws(r);
    if (r->p == r->end)
        return -1;
    if (*r->p == close) {
        r->p++;
        return 0;
    }
    if (*r->p++ != ',')
        return -1;
    skip_ws(r);
    return 1;
}

static json_t *read_object(reader *r)
{
    json_t *obj = json_object();
    size_t nkeys = 0;
    int more = 1;

    if (opened_empty(r, '}'))
        return obj;
    while (obj && more > 0) {
        const char *k;
        size_t klen;
        json_t *v;
        char *key;

        if (r->p == r->end || *r->p != '"' || !read_string(r, &k, &klen))
            goto bad;
        /* the key outlives the scratch buffer the next string reuses */
        if (k == r->scratch.data) {
            if (!(key = malloc(klen + 1)))
                goto bad;
            memcpy(key, k, klen);
            k = key;
        } else {
            key = NULL;
        }
        skip_ws(r);
        if (r->p == r->end || *r->p++ != ':' || (skip_ws(r), !(v = read_value(r))) ||
            json_object_setn_new_nocheck(obj, k, klen, v) < 0) {
            free(key);
            goto bad;
        }
        free(key);
        nkeys++;
        more = next_item(r, '}');
    }
    if (!more) {
        r->dup |= json_object_size(obj) != nkeys;
        return obj;
    }
bad:
    json_decref(obj);
    return NULL;
}

static json_t *read_array(reader *r)
{
    json_t *arr = json_array();
    int more = 1;

    if (opened_empty(r, ']'))
        return arr;
    while (arr && more > 0) {
        json_t *v = read_value(r);

        if (!v || json_array_append_new(arr, v) < 0)
            goto bad;
        more = next_item(r, ']');
    }
    if (!more)
        return arr;
bad:
    json_decref(arr);
    return NULL;
}

static json_t *read_value(reader *r)
{
    const char *s;
    size_t n;
    json_t *v;

    if (r->p == r->end)
        return NULL;
    switch (*r->p) {
    case '{':
    case '[':
        if (++r->depth > MAX_DEPTH)
            return NULL;
        v = *r->p == '{' ? read_object(r) : read_array(r);
        r->depth--;
        return v;
    case '"':
        /* \u0000 was refused: a string holds no NUL */
        return read_string(r, &s, &n) ? json_stringn_nocheck(s, n) : NULL;
    case 't':
        return literal(r, "true", 4) ? json_true() : NULL;
    case 'f':
        return literal(r, "false", 5) ? json_false() : NULL;
    case 'n':
        return literal(r, "null", 4) ? json_null() : NULL;
    default:
        return read_number(r);
    }
}

/* ty_json_parse; *dup: some object repeated a key. */
static json_t *parse(const char *text, size_t len, bool *dup)
{
    reader r = {.p = text, .end = text + len};
    json_t *v;

    if (!text)
        return NULL;
    skip_ws(&r);
    v = read_value(&r);
    skip_ws(&r);
    if (v && r.p != r.end) {
        json_decref(v);
        v = NULL;
    }
    ty_buf_free(&r.scratch);
    *dup = r.dup;
    return v;
}

json_t *ty_json_parse(const char *text, size_t len)
{
    bool dup;

    return parse(text, len, &dup);
}

json_t *ty_json_load(const char *text, size_t len, size_t flags, json_error_t *err)
{
    json_t *v = NULL;
    bool dup = false;

    if ((flags & ~(size_t)(JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)) == 0 &&
        (v = parse(text, len, &dup)) &&
        ((!(flags & JSON_DECODE_ANY) && !json_is_object(v) && !json_is_array(v)) ||
         (dup && (flags & JSON_REJECT_DUPLICATES)))) {
        json_decref(v);
        v = NULL;
    }
    return v ? v : json_loadb(text, len, flags, err);
}

/* ---- what the store can read back --------------------------------------- */

typedef struct step {
    const char *key; /* NULL: an array index */
    size_t keylen, index;
} step;

typedef struct walk {
    step *steps; /* TY_JSON_LOADABLE_DEPTH + 1 */
    const char *why;
    size_t depth; /* steps in use when why was set */
} walk;

static bool text_loadable(walk *w, const char *s, size_t n)
{
    if (memchr(s, '\0', n))
        w->why = "strings may not contain NUL bytes (\\u0000)";
    else if (!ty_utf8_valid((const unsigned char *)s, n))
        w->why = "strings must be valid UTF-8";
    return !w->why;
}

static bool tree_loadable(walk *w, const json_t *v, size_t depth)
{
    const char *key;
    size_t klen, i;
    json_t *m;

    if (json_is_string(v)) {
        if (text_loadable(w, json_string_value(v), json_string_length(v)))
            return true;
        w->depth = depth;
        return false;
    }
    if (!json_is_object(v) && !json_is_array(v))
        return true;
    if (depth >= TY_JSON_LOADABLE_DEPTH) {
        w->why = "nested too deeply";
        w->depth = depth;
        return false;
    }
    if (json_is_array(v)) {
        json_array_foreach(v, i, m) {
            w->steps[depth] = (step){.index = i};
            if (!tree_loadable(w, m, depth + 1))
                return false;
        }
        return true;
    }
    json_object_keylen_foreach((json_t *)v, key, klen, m) {
        w->steps[depth] = (step){.key = key, .keylen = klen};
        if (!text_loadable(w, key, klen)) {
            w->depth = depth + 1;
            return false;
        }
        if (!tree_loadable(w, m, depth + 1))
            return false;
    }
    return true;
}

int ty_json_check_loadable(const json_t *v, char *path, size_t pathlen, const char **why)
{
    step *steps = malloc((TY_JSON_LOADABLE_DEPTH + 1) * sizeof(*steps));
    walk w = {.steps = steps};
    size_t off = 0;

    if (pathlen)
        path[0] = '\0';
    if (!steps) {
        *why = "out of memory";
        return -1;
    }
    if (tree_loadable(&w, v, 0)) {
        free(steps);
        return 0;
    }
    *why = w.why;
    for (size_t d = 0; d < w.depth && off + 1 < pathlen; d++) {
        int n;
        if (!steps[d].key) {
            n = snprintf(path + off, pathlen - off, "[%zu]", steps[d].index);
        } else {
            /* a key is shown up to a NUL it holds, and not past 64 bytes */
            size_t kl = strnlen(steps[d].key, steps[d].keylen);
            n = snprintf(path + off, pathlen - off, "%s%.*s", off ? "." : "",
                         (int)(kl < 64 ? kl : 64), steps[d].key);
        }
        if (n < 0)
            break;
        off += (size_t)n;
    }
    free(steps);
    return -1;
}
