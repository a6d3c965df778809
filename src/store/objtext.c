/* objtext.c - reading a few members of a stored object's text without
 * parsing the rest: the metadata alone, the members a view names, a light
 * tree (store_obj_json_light), where a member's value lies. */
#include <stdbool.h>
#include <string.h>

#include "base/jsonin.h"
#include "store/store_int.h"

/* A scanner over the members of an object's text that skips values as
 * bytes and hands jansson only those asked for (for the metadata alone, a
 * few dozen bytes of apiVersion and kind to skip). Stored texts are compact;
 * whitespace is allowed anyway. */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* p at a '"': just past the closing quote, or NULL. The quote is found by
 * memchr, and one is the closing quote when an even number of backslashes
 * stand before it (none of them before from, which follows the opening
 * quote or a quote found escaped). A byte loop over every string of a
 * pod's metadata was most of finding where its spec starts. */
static const char *skip_string(const char *p, const char *end)
{
    const char *from = p + 1, *q, *b;

    while (from < end && (q = memchr(from, '"', (size_t)(end - from)))) {
        for (b = q; b > from && b[-1] == '\\'; b--)
            ;
        if ((q - b) % 2 == 0)
            return q + 1;
        from = q + 1;
    }
    return NULL;
}

/* The bytes a container's skip stops at: quotes and brackets. */
static const bool structural[256] = {['"'] = true, ['{'] = true, ['}'] = true,
                                     ['['] = true, [']'] = true};

/* Nesting past this is not what jansson or ty_json_parse read (2048). */
#define TEXT_MAX_DEPTH 2048

/* Just past the value at p (strings, objects and arrays may nest), or NULL
 * (also when it nests past TEXT_MAX_DEPTH: no parse would take it). */
static const char *skip_value(const char *p, const char *end)
{
    int depth = 0;

    if (p < end && *p == '"')
        return skip_string(p, end);
    if (p < end && *p != '{' && *p != '[') {
        while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
               *p != '\t' && *p != '\r')
            p++;
        return p;
    }
    while (p < end) {
        while (p < end && !structural[(unsigned char)*p])
            p++;
        if (p == end)
            break;
        if (*p == '"') {
            if (!(p = skip_string(p, end)))
                return NULL;
            continue;
        }
        if (*p == '{' || *p == '[') {
            if (++depth > TEXT_MAX_DEPTH)
                return NULL;
        } else if (--depth == 0)
            return p + 1;
        p++;
    }
    return NULL;
}

/* A cursor over the top-level members of the object in a text. */
typedef struct member_scan {
    const char *p, *end;
    const char *key, *value, *value_end; /* the member just read */
    size_t klen;
} member_scan;

/* Starts at the text's opening brace; false when there is none. */
static bool scan_start(member_scan *m, const char *text, size_t len)
{
    m->end = text + len;
    m->p = skip_ws(text, m->end);
    return m->p < m->end && *m->p++ == '{';
}

/* The next member: 1, 0 at the closing brace, -1 when the text is not what
 * the scanner follows. */
static int scan_next(member_scan *m)
{
    const char *p = skip_ws(m->p, m->end), *end = m->end;

    if (p < end && *p == ',')
        p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return 0;
    if (p == end || *p != '"')
        return -1;
    m->key = p + 1;
    if (!(p = skip_string(p, end)))
        return -1;
    m->klen = (size_t)(p - m->key - 1);
    p = skip_ws(p, end);
    if (p == end || *p++ != ':')
        return -1;
    m->value = skip_ws(p, end);
    if (!(m->value_end = m->p = skip_value(m->value, end)))
        return -1;
    return 1;
}

static bool key_is(const member_scan *m, const char *name)
{
    return strlen(name) == m->klen && memcmp(m->key, name, m->klen) == 0;
}

/* The member names[i] asks for at the level of top (NULL: the top level),
 * as a pointer and a length; false when it asks for nothing there. A name
 * "a" asks for all of top-level member a, "a.b" for member b of member a
 * only. *whole: the name asks for all of that member. */
static bool name_at(const char *name, const char *top, const char **key, size_t *klen,
                    bool *whole)
{
    size_t ltop = top ? strlen(top) : 0;
    const char *dot;

    if (top) {
        if (strncmp(name, top, ltop) != 0 || name[ltop] != '.')
            return false;
        name += ltop + 1;
    }
    dot = top ? NULL : strchr(name, '.');
    *key = name;
    *klen = dot ? (size_t)(dot - name) : strlen(name);
    *whole = !dot;
    return true;
}

/* Whether names asks for member key (klen bytes) at the level of top, and
 * (*whole) for all of it. */
static bool asks_for(const char *const *names, const char *top, const char *key, size_t klen,
                     bool *whole)
{
    bool any = false, w;
    const char *k;
    size_t kl;

    *whole = false;
    for (const char *const *n = names; *n; n++) {
        if (!name_at(*n, top, &k, &kl, &w) || kl != klen || memcmp(k, key, klen) != 0)
            continue;
        any = true;
        *whole |= w;
    }
    return any;
}

/* How many different members names asks for at the level of top. */
static size_t members_asked(const char *const *names, const char *top)
{
    size_t count = 0;
    const char *k, *k2;
    size_t kl, kl2;
    bool w;

    for (size_t i = 0; names[i]; i++) {
        bool seen = false;
        if (!name_at(names[i], top, &k, &kl, &w))
            continue;
        for (size_t j = 0; j < i && !seen; j++)
            seen = name_at(names[j], top, &k2, &kl2, &w) && kl2 == kl && !memcmp(k, k2, kl);
        count += !seen;
    }
    return count;
}

/* The object of the members names asks for (asks_for) of the object in
 * text, top's members when top is not NULL: each parsed alone, the rest
 * skipped; the scan stops once it has them all. NULL when the text is not
 * what the scanner expects (the caller then parses the whole of it) or
 * memory runs out. */
static json_t *select_members(const char *text, size_t len, const char *const *names,
                              const char *top)
{
    json_t *out = json_object();
    size_t want = members_asked(names, top);
    member_scan m;
    int rc = 1;

    if (!out || !scan_start(&m, text, len))
        goto bad;
    while (json_object_size(out) < want && (rc = scan_next(&m)) > 0) {
        size_t vlen = (size_t)(m.value_end - m.value);
        json_t *v = NULL;
        char key[256];
        bool whole;

        if (!asks_for(names, top, m.key, m.klen, &whole))
            continue;
        if (whole || *m.value != '{') {
            v = ty_json_load(m.value, vlen, JSON_DECODE_ANY, NULL);
        } else if (m.klen < sizeof(key)) {
            memcpy(key, m.key, m.klen);
            key[m.klen] = '\0';
            v = select_members(m.value, vlen, names, key);
        }
        if (!v || json_object_setn_new(out, m.key, m.klen, v) < 0)
            goto bad;
    }
    if (rc >= 0)
        return out;
bad:
    json_decref(out);
    return NULL;
}

/* A member's key as jansson wants it: keys with escapes are not. */
static bool plain_key(const member_scan *m)
{
    return !memchr(m->key, '\\', m->klen);
}

/* The value of the member m is at, parsed alone. */
static json_t *member_value(const member_scan *m)
{
    return ty_json_load(m->value, (size_t)(m->value_end - m->value), JSON_DECODE_ANY, NULL);
}

/* The members of the object in text, each parsed alone: at the top all of
 * them, the spec's as below; in the spec (top false) only those that are
 * neither objects nor arrays (obj_text_light). */
static json_t *light_members(const char *text, size_t len, bool top)
{
    json_t *out = json_object(), *v;
    member_scan m;
    int rc = 1;

    if (!out || !scan_start(&m, text, len))
        goto bad;
    while ((rc = scan_next(&m)) > 0) {
        if (!top && (*m.value == '{' || *m.value == '['))
            continue;
        if (!plain_key(&m))
            goto bad;
        if (top && key_is(&m, "spec") && *m.value == '{')
            v = light_members(m.value, (size_t)(m.value_end - m.value), false);
        else
            v = member_value(&m);
        if (!v || json_object_setn_new(out, m.key, m.klen, v) < 0)
            goto bad;
    }
    if (rc == 0) /* a stored text: one object, nothing after it */
        return out;
bad:
    json_decref(out);
    return NULL;
}

json_t *obj_text_light(const char *text, size_t len)
{
    return light_members(text, len, true);
}

json_t *obj_text_members(const char *text, size_t len, const char *const *names)
{
    return select_members(text, len, names, NULL);
}

bool obj_text_member(const char *text, size_t len, const char *name, size_t *start,
                     size_t *end)
{
    member_scan m;

    if (!scan_start(&m, text, len))
        return false;
    while (scan_next(&m) > 0) {
        if (key_is(&m, name)) {
            *start = (size_t)(m.value - text);
            *end = (size_t)(m.value_end - text);
            return true;
        }
    }
    return false;
}

/* Whether the text holds the escape \u0000 (a NUL, which jansson and
 * ty_json_parse refuse): the backslash before the u is an escape's when an
 * odd number of backslashes end there. */
static bool has_nul_escape(const char *text, size_t len)
{
    size_t at = 0;
    const char *q;

    while (at < len && (q = memmem(text + at, len - at, "\\u0000", 6))) {
        size_t i = (size_t)(q - text), bs = 0;
        while (bs <= i && text[i - bs] == '\\')
            bs++;
        if (bs % 2 == 1)
            return true;
        at = i + 1;
    }
    return false;
}

const char *obj_text_unloadable(const char *text, size_t len)
{
    if (has_nul_escape(text, len))
        return "a string holds a NUL byte (\\u0000)";
    if (!ty_utf8_valid((const unsigned char *)text, len))
        return "not UTF-8";
    return NULL;
}

json_t *obj_text_metadata(const char *text, size_t len)
{
    static const char *const meta[] = {"metadata", NULL};
    const char *end = text + len, *p = skip_ws(text, end), *e;
    json_t *tree;

    /* One object, whole: its brackets and strings close, nothing after it. */
    if (p == end || *p != '{' || !(e = skip_value(p, end)) || skip_ws(e, end) != end)
        return NULL;
    tree = obj_text_members(text, len, meta);
    if (!tree && (tree = ty_json_load(text, len, 0, NULL)) && !json_is_object(tree)) {
        json_decref(tree);
        tree = NULL;
    }
    return tree;
}
