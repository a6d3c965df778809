/* jsonout.c - compact JSON text of a jansson tree (see jsonout.h). */
#include "base/jsonout.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonin.h"

/* Room for n more bytes and the NUL. */
static bool reserve(ty_buf *b, size_t n)
{
    size_t cap;
    char *g;

    if (b->len + n < b->cap)
        return true;
    cap = b->cap ? b->cap : 256;
    while (cap <= b->len + n)
        cap *= 2;
    if (!(g = realloc(b->data, cap)))
        return false;
    b->data = g;
    b->cap = cap;
    return true;
}

static bool put(ty_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return false;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return true;
}

static bool putc1(ty_buf *b, char c)
{
    if (!reserve(b, 1))
        return false;
    b->data[b->len++] = c;
    return true;
}

/* Which bytes need an escape: '"', '\\' and the control characters. A
 * table: one load a byte instead of three compares, on every byte of every
 * string the store writes. */
#define ESC4(n) [n] = true, [n + 1] = true, [n + 2] = true, [n + 3] = true
static const bool escaped[256] = {ESC4(0),  ESC4(4),  ESC4(8),  ESC4(12), ESC4(16),
                                  ESC4(20), ESC4(24), ESC4(28), ['"'] = true, ['\\'] = true};
#undef ESC4

static bool needs_escape(unsigned char c)
{
    return escaped[c];
}

static bool put_string(ty_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = 0, run;

    /* Worst case every byte becomes \u00XX: reserve once for the common case. */
    if (!reserve(b, n + 2))
        return false;
    b->data[b->len++] = '"';
    while (i < n) {
        char esc[6];
        size_t elen = 2;
        unsigned char c;

        for (run = i; run < n && !needs_escape((unsigned char)s[run]); run++)
            ;
        if (run > i && !put(b, s + i, run - i))
            return false;
        if (run == n)
            break;
        c = (unsigned char)s[run];
        esc[0] = '\\';
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        }
        if (!put(b, esc, elen))
            return false;
        i = run + 1;
    }
    return putc1(b, '"');
}

static bool put_integer(ty_buf *b, json_int_t v)
{
    char tmp[24];
    size_t n = sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--n] = '-';
    return put(b, tmp + n, sizeof(tmp) - n);
}

/* Reals are rare in API objects: jansson's own formatting, exactly. */
static bool put_real(ty_buf *b, const json_t *v)
{
    char tmp[64];
    size_t n = json_dumpb(v, tmp, sizeof(tmp), JSON_COMPACT | JSON_ENCODE_ANY);

    return n && n <= sizeof(tmp) && put(b, tmp, n);
}

/* As deep as jansson's parser lets a document be: a tree deeper than that
 * (or one that contains itself) is refused, not followed forever. */
#define MAX_DEPTH 2048

/* What a write looks out for: mark, a node whose offset in b goes to at
 * (still (size_t)-1) the first time it is written, and known, a node whose
 * text is known_text (copied instead of written again). */
typedef struct out_ctx {
    const json_t *mark;
    size_t at;
    const json_t *known;
    const char *known_text;
    size_t known_len;
} out_ctx;

static bool put_value(ty_buf *b, const json_t *v, int depth, out_ctx *c)
{
    if (depth > MAX_DEPTH)
        return false;
    if (c) {
        if (v == c->mark && c->at == (size_t)-1)
            c->at = b->len;
        if (v == c->known)
            return put(b, c->known_text, c->known_len);
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        bool first = true;
        if (!putc1(b, '{'))
            return false;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            if ((!first && !putc1(b, ',')) ||
                !put_string(b, json_object_iter_key(it), json_object_iter_key_len(it)) ||
                !putc1(b, ':') || !put_value(b, json_object_iter_value(it), depth + 1, c))
                return false;
            first = false;
        }
        return putc1(b, '}');
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (!putc1(b, '['))
            return false;
        for (size_t i = 0; i < n; i++)
            if ((i && !putc1(b, ',')) || !put_value(b, json_array_get(v, i), depth + 1, c))
                return false;
        return putc1(b, ']');
    }
    case JSON_STRING:
        return put_string(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return put_integer(b, json_integer_value(v));
    case JSON_REAL:
        return put_real(b, v);
    case JSON_TRUE:
        return put(b, "true", 4);
    case JSON_FALSE:
        return put(b, "false", 5);
    case JSON_NULL:
        return put(b, "null", 4);
    }
    return false;
}

int ty_json_append(ty_buf *b, const json_t *v)
{
    bool ok = v && put_value(b, v, 0, NULL);

    if (b->data)
        b->data[b->len] = '\0';
    return ok ? 0 : -1;
}

int ty_json_append_known(ty_buf *b, const json_t *v, const json_t *mark, size_t *mark_at,
                         const json_t *known, const char *known_text, size_t known_len)
{
    out_ctx c = {mark, (size_t)-1, known_text ? known : NULL, known_text, known_len};
    bool ok = v && mark && put_value(b, v, 0, &c) && c.at != (size_t)-1;

    if (b->data)
        b->data[b->len] = '\0';
    if (ok)
        *mark_at = c.at;
    return ok ? 0 : -1;
}

int ty_json_append_mark(ty_buf *b, const json_t *v, const json_t *mark, size_t *mark_at)
{
    return ty_json_append_known(b, v, mark, mark_at, NULL, NULL, 0);
}

int ty_json_append_str(ty_buf *b, const char *s, size_t n)
{
    size_t len = b->len;
    bool ok = s && ty_utf8_valid((const unsigned char *)s, n) && put_string(b, s, n);

    if (!ok)
        b->len = len;
    if (b->data)
        b->data[b->len] = '\0';
    return ok ? 0 : -1;
}
