/* yaml.c - YAML (and JSON) manifests to JSON, the way Kubernetes reads them.
 *
 * Built on libyaml's event parser, which is not recursive, so the only nesting
 * is our own explicit stack, capped at YAML_MAX_DEPTH. Aliases are expanded by
 * deep copy (callers may then change one copy without the other); the total
 * number of nodes produced by expansion is capped so that a few lines of
 * nested aliases ("billion laughs") cannot make us build a huge tree.
 * yaml_dump lives in yaml_dump.c.
 */
#include "model/yaml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define YAML_MAX_DEPTH 100
/* Nodes that alias expansion may add across the whole stream. Generous for
 * real manifests (which rarely alias at all) and small enough to build. */
#define YAML_MAX_ALIAS_NODES 1000000
/* Bytes of strings (keys and values) that alias expansion may add across
 * the whole stream. 400 aliases of one 256 KiB string built 100 MB for one
 * request (and answered 500); nothing bigger than 3 MiB can be stored. */
#define YAML_MAX_ALIAS_BYTES (4u * 1024 * 1024)

#define TAG_PREFIX "tag:yaml.org,2002:"

typedef struct frame {
    json_t *node; /* object or array being filled */
    char *key;    /* pending mapping key, NULL while a key is expected */
    size_t keylen;
    bool key_is_merge;
    char *anchor; /* anchor of this container, registered when it ends */
    size_t count; /* nodes in the subtree, for the alias budget */
    int height;   /* levels of containers in the subtree, 1 for a flat one */
    yaml_mark_t start; /* where the container began, for messages about it */
} frame;

typedef struct loader {
    yaml_parser_t parser;
    frame stack[YAML_MAX_DEPTH];
    int depth;
    json_t *anchors; /* name -> [node, count, height] */
    size_t alias_nodes, alias_bytes;
    json_t *doc;
    bool have_doc;
    json_t *docs;
    ty_error *err;
} loader;

static int fail_at(loader *l, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(loader *l, const yaml_mark_t *m, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ty_seterr(l->err, TY_EBADREQUEST, "yaml: line %zu, column %zu: %s", m->line + 1,
                     m->column + 1, msg);
}

/* The parser's own error, with 1-based line and column. Reader errors
 * (bad encoding) only know a byte offset, so the position is counted. */
static int parser_error(loader *l, const char *buf, size_t len)
{
    yaml_parser_t *p = &l->parser;
    yaml_mark_t m = p->problem_mark;

    if (p->error == YAML_MEMORY_ERROR)
        return ty_seterr(l->err, TY_EINTERNAL, "yaml: out of memory");
    if (p->error == YAML_READER_ERROR) {
        m.line = m.column = 0;
        for (size_t i = 0; i < p->problem_offset && i < len; i++) {
            if (buf[i] == '\n') {
                m.line++;
                m.column = 0;
            } else {
                m.column++;
            }
        }
    }
    return fail_at(l, &m, "%s", p->problem ? p->problem : "unknown error");
}

/* ---- scalar resolution ------------------------------------------------ */

static bool is_null_text(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

/* 1 for true, 0 for false, -1 for neither. YAML 1.1 words in any case. */
static int bool_value(const char *s)
{
    static const char *const yes[] = {"true", "yes", "on"};
    static const char *const no[] = {"false", "no", "off"};
    for (int i = 0; i < 3; i++) {
        if (!strcasecmp(s, yes[i]))
            return 1;
        if (!strcasecmp(s, no[i]))
            return 0;
    }
    return -1;
}

/* Integer forms after removing '_': [-+]? then 0x hex, 0o octal, 0b binary,
 * 0 followed by octal digits (YAML 1.1 octal, as Kubernetes reads it), or a
 * decimal. Returns false when s is not one or does not fit int64. */
static bool int_value(const char *s, json_int_t *out)
{
    bool neg = *s == '-';
    int base = 10;
    const char *digits;
    unsigned long long v;
    char *end;

    if (*s == '-' || *s == '+')
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, digits = s + 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, digits = s + 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, digits = s + 2;
    else if (s[0] == '0' && s[1])
        base = 8, digits = s + 1;
    else
        digits = s;
    /* strtoull would accept signs and spaces; the grammar does not. */
    for (const char *p = digits; *p; p++) {
        int d = (*p >= '0' && *p <= '9')   ? *p - '0'
                : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
                : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10
                                           : 99;
        if (d >= base)
            return false;
    }
    if (!*digits)
        return false;
    errno = 0;
    v = strtoull(digits, &end, base);
    if (errno || *end)
        return false;
    if (neg ? v > (unsigned long long)INT64_MAX + 1 : v > (unsigned long long)INT64_MAX)
        return false;
    *out = neg ? (json_int_t)(0 - v) : (json_int_t)v;
    return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool float_syntax(const char *s)
{
    size_t before = 0, after = 0;

    if (*s == '-' || *s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        s++, before++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, after++;
    }
    if (before == 0 && after == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* A whole-valued float is written as an integer in the JSON Kubernetes
 * produces ("1e3" -> 1000), so it becomes one here too. */
static json_t *number_from_double(double d)
{
    if (d > -9007199254740992.0 && d < 9007199254740992.0 && (double)(json_int_t)d == d)
        return json_integer((json_int_t)d);
    return json_real(d);
}

static json_t *resolve_plain(const char *s, size_t len)
{
    char clean[128];
    json_int_t iv;
    int b;

    if (strlen(s) != len) /* an embedded NUL: only a string can hold it */
        return json_stringn(s, len);
    if (is_null_text(s))
        return json_null();
    if ((b = bool_value(s)) >= 0)
        return json_boolean(b);
    /* Numbers are short; anything longer is a string. */
    if (len >= sizeof(clean) || !strpbrk(s, "0123456789"))
        return json_stringn(s, len);
    size_t n = 0;
    for (const char *p = s; *p; p++)
        if (*p != '_')
            clean[n++] = *p;
    clean[n] = '\0';
    if (int_value(clean, &iv))
        return json_integer(iv);
    if (float_syntax(clean)) {
        double d = strtod(clean, NULL);
        if (isfinite(d))
            return number_from_double(d);
    }
    return json_stringn(s, len);
}

/* Resolves a scalar used as a value, honouring explicit core tags. */
static json_t *scalar_value(loader *l, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;

    /* "!" is the non-specific tag: the scalar is a string. */
    if (tag && !strcmp(tag, "!"))
        return json_stringn(s, len);
    if (!tag || strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0)
        return plain ? resolve_plain(s, len) : json_stringn(s, len);
    const char *kind = tag + strlen(TAG_PREFIX);
    if (!strcmp(kind, "str") || !strcmp(kind, "binary") || !strcmp(kind, "timestamp"))
        return json_stringn(s, len);
    json_t *v = resolve_plain(s, len);
    bool ok = (!strcmp(kind, "int") && json_is_integer(v)) ||
              (!strcmp(kind, "float") && json_is_number(v)) ||
              (!strcmp(kind, "bool") && json_is_boolean(v)) ||
              (!strcmp(kind, "null") && json_is_null(v)) ||
              (strcmp(kind, "int") && strcmp(kind, "float") && strcmp(kind, "bool") &&
               strcmp(kind, "null"));
    if (!ok) {
        json_decref(v);
        fail_at(l, &ev->start_mark, "cannot decode !!%s `%.64s`", kind, s);
        return NULL;
    }
    if (!strcmp(kind, "float") && json_is_integer(v)) {
        json_t *r = json_real((double)json_integer_value(v));
        json_decref(v);
        return r;
    }
    return v;
}

/* ---- building --------------------------------------------------------- */

static int register_anchor(loader *l, const char *name, json_t *node, size_t count, int height)
{
    json_t *entry;

    if (!name)
        return 0;
    entry = json_pack("[O,I,i]", node, (json_int_t)count, height);
    if (!entry || json_object_set_new(l->anchors, name, entry) < 0)
        return ty_seterr(l->err, TY_EINTERNAL, "yaml: out of memory");
    return 0;
}

/* `<<: value` puts the keys of value (a map, or each map of a list, earlier
 * ones first) that the mapping does not have yet. Keys written in the mapping
 * itself win wherever they stand, since a later one replaces a merged one. */
static int merge_keys(loader *l, json_t *map, const json_t *v, const yaml_mark_t *m)
{
    const json_t *src[1] = {v};
    size_t nsrc = json_is_array(v) ? json_array_size(v) : 1;

    for (size_t i = 0; i < nsrc; i++) {
        const json_t *one = json_is_array(v) ? json_array_get(v, i) : src[0];
        const char *k;
        size_t klen;
        json_t *val;
        if (!json_is_object(one))
            return fail_at(l, m, "map merge requires map or sequence of maps as the value");
        json_object_keylen_foreach((json_t *)one, k, klen, val) {
            if (!json_object_getn(map, k, klen))
                json_object_setn(map, k, klen, val);
        }
    }
    return 0;
}

/* Hands a finished node (stolen) to its parent, or makes it the document. */
static int add_node(loader *l, json_t *v, size_t count, int height, const yaml_mark_t *m)
{
    if (l->depth == 0) {
        json_decref(l->doc);
        l->doc = v;
        l->have_doc = true;
        return 0;
    }
    frame *f = &l->stack[l->depth - 1];
    f->count += count;
    if (height + 1 > f->height)
        f->height = height + 1;
    if (json_is_array(f->node))
        return json_array_append_new(f->node, v) < 0
                   ? ty_seterr(l->err, TY_EINTERNAL, "yaml: out of memory")
                   : 0;
    if (!f->key) {
        /* Only an alias can bring a non-scalar here as a key. */
        json_decref(v);
        return fail_at(l, m, "mapping keys must be strings");
    }
    int rc = 0;
    if (f->key_is_merge)
        rc = merge_keys(l, f->node, v, m);
    else
        json_object_setn(f->node, f->key, f->keylen, v);
    json_decref(v);
    free(f->key);
    f->key = NULL;
    f->key_is_merge = false;
    return rc;
}

/* A scalar where a mapping key is expected: its text is the key, whatever
 * it looks like ("true", "1" stay strings). */
static int set_key(loader *l, const char *text, size_t len, bool is_merge)
{
    frame *f = &l->stack[l->depth - 1];
    f->key = malloc(len + 1);
    if (!f->key)
        return ty_seterr(l->err, TY_EINTERNAL, "yaml: out of memory");
    memcpy(f->key, text, len);
    f->key[len] = '\0';
    f->keylen = len;
    f->key_is_merge = is_merge;
    return 0;
}

static bool expecting_key(const loader *l)
{
    if (l->depth == 0)
        return false;
    const frame *f = &l->stack[l->depth - 1];
    return json_is_object(f->node) && !f->key;
}

static int on_scalar(loader *l, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    const char *anchor = (const char *)ev->data.scalar.anchor;
    json_t *v;

    if (expecting_key(l)) {
        const char *tag = (const char *)ev->data.scalar.tag;
        bool merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !strcmp(s, "<<") &&
                     (!tag || !strcmp(tag, TAG_PREFIX "merge"));
        if (anchor) {
            v = json_stringn(s, ev->data.scalar.length);
            int rc = register_anchor(l, anchor, v, 1, 0);
            json_decref(v);
            if (rc < 0)
                return -1;
        }
        return set_key(l, s, ev->data.scalar.length, merge);
    }
    v = scalar_value(l, ev);
    if (!v)
        return -1;
    if (register_anchor(l, anchor, v, 1, 0) < 0) {
        json_decref(v);
        return -1;
    }
    return add_node(l, v, 1, 0, &ev->start_mark);
}

/* The bytes of the strings in v (values and keys), or something past cap
 * once they are: the walk stops there. */
static size_t string_bytes(const json_t *v, size_t cap)
{
    size_t n = 0, i;
    const char *k;
    size_t klen;
    json_t *m;

    if (json_is_string(v))
        return json_string_length(v);
    if (json_is_array(v)) {
        json_array_foreach(v, i, m) {
            n += string_bytes(m, cap - (n < cap ? n : cap));
            if (n > cap)
                return n;
        }
    } else if (json_is_object(v)) {
        json_object_keylen_foreach((json_t *)v, k, klen, m) {
            n += klen + string_bytes(m, cap - (n < cap ? n : cap));
            if (n > cap)
                return n;
        }
    }
    return n;
}

static int on_alias(loader *l, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    json_t *entry = json_object_get(l->anchors, name);

    if (!entry)
        return fail_at(l, &ev->start_mark, "unknown anchor '%s' referenced", name);
    json_t *node = json_array_get(entry, 0);
    size_t count = (size_t)json_integer_value(json_array_get(entry, 1));
    int height = (int)json_integer_value(json_array_get(entry, 2));
    if (l->depth + height > YAML_MAX_DEPTH)
        return fail_at(l, &ev->start_mark, "exceeded max depth of %d", YAML_MAX_DEPTH);
    if (count > YAML_MAX_ALIAS_NODES - l->alias_nodes)
        return fail_at(l, &ev->start_mark, "document contains excessive aliasing");
    size_t bytes = string_bytes(node, YAML_MAX_ALIAS_BYTES - l->alias_bytes);
    if (bytes > YAML_MAX_ALIAS_BYTES - l->alias_bytes)
        return fail_at(l, &ev->start_mark, "document contains excessive aliasing");
    l->alias_nodes += count;
    l->alias_bytes += bytes;
    if (expecting_key(l)) {
        if (!json_is_string(node))
            return fail_at(l, &ev->start_mark, "mapping keys must be strings");
        return set_key(l, json_string_value(node), json_string_length(node), false);
    }
    json_t *copy = json_deep_copy(node);
    if (!copy)
        return ty_seterr(l->err, TY_EINTERNAL, "yaml: out of memory");
    return add_node(l, copy, count, height, &ev->start_mark);
}

static int on_start(loader *l, const yaml_event_t *ev, bool is_map)
{
    const char *anchor = is_map ? (const char *)ev->data.mapping_start.anchor
                                : (const char *)ev->data.sequence_start.anchor;

    if (expecting_key(l))
        return fail_at(l, &ev->start_mark, "mapping keys must be strings");
    if (l->depth == YAML_MAX_DEPTH)
        return fail_at(l, &ev->start_mark, "exceeded max depth of %d", YAML_MAX_DEPTH);
    frame *f = &l->stack[l->depth];
    memset(f, 0, sizeof(*f));
    f->node = is_map ? json_object() : json_array();
    f->anchor = anchor ? strdup(anchor) : NULL;
    f->count = 1;
    f->height = 1;
    f->start = ev->start_mark;
    if (!f->node || (anchor && !f->anchor)) {
        json_decref(f->node);
        free(f->anchor);
        return ty_seterr(l->err, TY_EINTERNAL, "yaml: out of memory");
    }
    l->depth++;
    return 0;
}

static int on_end(loader *l)
{
    frame f = l->stack[--l->depth];
    int rc = register_anchor(l, f.anchor, f.node, f.count, f.height);

    free(f.anchor);
    free(f.key);
    if (rc < 0) {
        json_decref(f.node);
        return -1;
    }
    return add_node(l, f.node, f.count, f.height, &f.start);
}

static void unwind(loader *l)
{
    while (l->depth > 0) {
        frame *f = &l->stack[--l->depth];
        json_decref(f->node);
        free(f->key);
        free(f->anchor);
    }
}

static int on_event(loader *l, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        /* Anchors do not cross documents. */
        json_object_clear(l->anchors);
        json_decref(l->doc);
        l->doc = NULL;
        l->have_doc = false;
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        if (l->have_doc && !json_is_null(l->doc))
            json_array_append(l->docs, l->doc);
        return 0;
    case YAML_SCALAR_EVENT: return on_scalar(l, ev);
    case YAML_ALIAS_EVENT: return on_alias(l, ev);
    case YAML_SEQUENCE_START_EVENT: return on_start(l, ev, false);
    case YAML_MAPPING_START_EVENT: return on_start(l, ev, true);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: return on_end(l);
    default: return 0;
    }
}

json_t *yaml_load_all(const char *buf, size_t len, ty_error *err)
{
    loader l;
    yaml_event_t ev;
    bool done = false;

    memset(&l, 0, sizeof(l));
    l.err = err;
    l.anchors = json_object();
    l.docs = json_array();
    if (!l.anchors || !l.docs || !yaml_parser_initialize(&l.parser)) {
        json_decref(l.anchors);
        json_decref(l.docs);
        ty_seterr(err, TY_EINTERNAL, "yaml: out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&l.parser, (const unsigned char *)(buf ? buf : ""),
                                 buf ? len : 0);
    while (!done) {
        if (!yaml_parser_parse(&l.parser, &ev)) {
            parser_error(&l, buf, len);
            goto error;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        int rc = on_event(&l, &ev);
        yaml_event_delete(&ev);
        if (rc < 0)
            goto error;
    }
    unwind(&l);
    json_decref(l.doc);
    json_decref(l.anchors);
    yaml_parser_delete(&l.parser);
    return l.docs;
error:
    unwind(&l);
    json_decref(l.doc);
    json_decref(l.anchors);
    json_decref(l.docs);
    yaml_parser_delete(&l.parser);
    return NULL;
}

json_t *yaml_load_one(const char *buf, size_t len, ty_error *err)
{
    json_t *docs = yaml_load_all(buf, len, err);
    json_t *one;

    if (!docs)
        return NULL;
    if (json_array_size(docs) != 1) {
        ty_seterr(err, TY_EBADREQUEST,
                  json_array_size(docs) ? "yaml: expected exactly one document, found %zu"
                                        : "yaml: no document in the input (found %zu)",
                  json_array_size(docs));
        json_decref(docs);
        return NULL;
    }
    one = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return one;
}
