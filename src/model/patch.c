/* patch.c - RFC 7386 merge patch, RFC 6902 JSON patch and the two-way merge
 * diff. The strategic merge patch lives in patch_strategic.c.
 *
 * Every function works on copies: a JSON patch is applied to a deep copy of
 * the target, so a failing operation halfway through leaves nothing behind.
 */
#include "model/patch.h"

#include "base/jsonin.h" /* TY_JSON_LOADABLE_DEPTH */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As kube-apiserver: longer JSON patches are refused outright. */
#define JSON_PATCH_MAX_OPS 10000

/* ---- RFC 7386 --------------------------------------------------------- */

json_t *patch_merge(const json_t *target, const json_t *patch)
{
    const char *k;
    json_t *v;

    if (!json_is_object(patch))
        return json_deep_copy(patch);
    json_t *out = json_object();
    if (!out)
        return NULL;
    /* Target keys first, in their order, so that patching keeps the layout. */
    if (json_is_object(target)) {
        json_object_foreach((json_t *)target, k, v) {
            json_t *pv = json_object_get(patch, k);
            if (json_is_null(pv))
                continue;
            json_object_set_new(out, k, pv ? patch_merge(v, pv) : json_deep_copy(v));
        }
    }
    json_object_foreach((json_t *)patch, k, v) {
        if (json_is_null(v) || (json_is_object(target) && json_object_get(target, k)))
            continue;
        json_object_set_new(out, k, patch_merge(NULL, v));
    }
    return out;
}

/* ---- two-way diff ----------------------------------------------------- */

json_t *patch_merge_diff(const json_t *a, const json_t *b)
{
    const char *k;
    json_t *vb;

    if (!json_is_object(a) || !json_is_object(b))
        return json_deep_copy(b);
    json_t *out = json_object();
    if (!out)
        return NULL;
    json_object_foreach((json_t *)b, k, vb) {
        json_t *va = json_object_get(a, k);
        if (va && json_equal(va, vb))
            continue;
        if (json_is_object(va) && json_is_object(vb))
            json_object_set_new(out, k, patch_merge_diff(va, vb));
        else
            json_object_set_new(out, k, json_deep_copy(vb));
    }
    json_object_foreach((json_t *)a, k, vb) {
        if (!json_object_get(b, k))
            json_object_set_new(out, k, json_null());
    }
    return out;
}

/* ---- RFC 6901 pointers ------------------------------------------------ */

typedef struct pointer {
    char **tok;
    size_t n;
} pointer;

static void pointer_free(pointer *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->tok[i]);
    free(p->tok);
    p->tok = NULL;
    p->n = 0;
}

/* Splits "/a/b~1c" into {"a", "b/c"}. Returns -1 for text that is not a
 * pointer: no leading '/', or '~' not followed by '0' or '1'. */
static int pointer_parse(const char *s, pointer *p)
{
    p->tok = NULL;
    p->n = 0;
    if (!*s)
        return 0;
    if (*s != '/')
        return -1;
    while (*s == '/') {
        const char *end = strchr(s + 1, '/');
        size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
        char *tok = malloc(len + 1);
        char **grown = realloc(p->tok, (p->n + 1) * sizeof(char *));
        if (!tok || !grown) {
            free(tok);
            if (grown)
                p->tok = grown;
            pointer_free(p);
            return -1;
        }
        p->tok = grown;
        p->tok[p->n++] = tok;
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
            char c = s[1 + i];
            if (c == '~') {
                char e = i + 1 < len ? s[2 + i] : '\0';
                if (e != '0' && e != '1') {
                    pointer_free(p);
                    return -1;
                }
                c = e == '0' ? '~' : '/';
                i++;
            }
            tok[o++] = c;
        }
        tok[o] = '\0';
        s += 1 + len;
    }
    return 0;
}

/* A decimal array index without leading zeros; -1 if tok is not one. */
static long array_index(const char *tok)
{
    long v = 0;

    if (!*tok || (tok[0] == '0' && tok[1]))
        return -1;
    for (; *tok; tok++) {
        if (*tok < '0' || *tok > '9' || v > 100000000)
            return -1;
        v = v * 10 + (*tok - '0');
    }
    return v;
}

/* The value at tokens [0, n). Borrowed, or NULL when missing. */
static json_t *pointer_walk(json_t *doc, const pointer *p, size_t n)
{
    json_t *cur = doc;

    for (size_t i = 0; i < n && cur; i++) {
        if (json_is_object(cur)) {
            cur = json_object_get(cur, p->tok[i]);
        } else if (json_is_array(cur)) {
            long idx = array_index(p->tok[i]);
            cur = idx < 0 ? NULL : json_array_get(cur, (size_t)idx);
        } else {
            cur = NULL;
        }
    }
    return cur;
}

/* ---- RFC 6902 --------------------------------------------------------- */

typedef enum op_kind { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST } op_kind;

static const char *const op_names[] = {"add", "remove", "replace", "move", "copy", "test"};

typedef struct json_op {
    op_kind kind;
    const char *path_text;
    const char *from_text;
    pointer path, from;
    const json_t *value; /* borrowed from the patch document */
} json_op;

static int missing_path(ty_error *err, const json_op *op, const char *path)
{
    return ty_seterr(err, TY_EINVALID, "%s operation does not apply: doc is missing path: \"%s\"",
                     op_names[op->kind], path);
}

/* Numbers compare by value, so that a "test" of 1 matches 1.0 (RFC 6902 4.6). */
static bool values_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!values_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        if (json_object_size(a) != json_object_size(b))
            return false;
        json_object_foreach((json_t *)a, k, v) {
            json_t *other = json_object_get(b, k);
            if (!other || !values_equal(v, other))
                return false;
        }
        return true;
    }
    return json_equal(a, b);
}

/* Puts value (stolen) at path. */
static int apply_add(json_t **doc, const json_op *op, const pointer *p, const char *text,
                     json_t *value, ty_error *err)
{
    if (p->n == 0) {
        json_decref(*doc);
        *doc = value;
        return 0;
    }
    json_t *parent = pointer_walk(*doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    if (json_is_object(parent)) {
        json_object_set_new(parent, last, value);
        return 0;
    }
    if (json_is_array(parent)) {
        size_t size = json_array_size(parent);
        if (strcmp(last, "-") == 0) {
            json_array_append_new(parent, value);
            return 0;
        }
        long idx = array_index(last);
        if (idx >= 0 && (size_t)idx <= size) {
            json_array_insert_new(parent, (size_t)idx, value);
            return 0;
        }
        json_decref(value);
        return ty_seterr(err, TY_EINVALID,
                         "%s operation does not apply: index out of range in path \"%s\"",
                         op_names[op->kind], text);
    }
    json_decref(value);
    return missing_path(err, op, text);
}

/* Removes the value at path; hands it to *removed (new reference) if asked. */
static int apply_remove(json_t *doc, const json_op *op, const pointer *p, const char *text,
                        json_t **removed, ty_error *err)
{
    if (p->n == 0)
        return ty_seterr(err, TY_EINVALID,
                         "%s operation does not apply: the document root cannot be removed",
                         op_names[op->kind]);
    json_t *parent = pointer_walk(doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    json_t *target = pointer_walk(doc, p, p->n);
    if (!target)
        return missing_path(err, op, text);
    if (removed)
        *removed = json_incref(target);
    if (json_is_object(parent))
        json_object_del(parent, last);
    else
        json_array_remove(parent, (size_t)array_index(last));
    return 0;
}

/* The bytes of v's compact JSON text (escapes counted as one byte), or
 * something past cap once it is: the walk stops there, so that sizing a
 * copy costs no more than the budget allows. */
static size_t text_size(const json_t *v, size_t cap)
{
    char num[32];
    size_t n = 0, i;
    const char *k;
    json_t *m;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        n = 2;
        json_object_foreach((json_t *)v, k, m) {
            n += strlen(k) + 4 + text_size(m, cap - (n < cap ? n : cap));
            if (n > cap)
                return n;
        }
        return n;
    case JSON_ARRAY:
        n = 2;
        json_array_foreach(v, i, m) {
            n += 1 + text_size(m, cap - (n < cap ? n : cap));
            if (n > cap)
                return n;
        }
        return n;
    case JSON_STRING:
        return json_string_length(v) + 2;
    case JSON_INTEGER:
        return (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        return (size_t)snprintf(num, sizeof(num), "%.17g", json_real_value(v));
    case JSON_TRUE:
    case JSON_NULL:
        return 4;
    case JSON_FALSE:
        return 5;
    }
    return 0;
}

/* How deep containers nest in v (0: a scalar). */
static size_t nesting(const json_t *v)
{
    size_t deepest = 0, i;
    const char *k;
    json_t *m;

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, m) {
            size_t d = nesting(m);
            deepest = d > deepest ? d : deepest;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m) {
            size_t d = nesting(m);
            deepest = d > deepest ? d : deepest;
        }
    } else {
        return 0;
    }
    return deepest + 1;
}

/* The budgets of one patch: bytes copied so far, and a bound on how deep
 * the document nests. Adds, copies and moves into deep paths could nest it
 * a million levels within the byte budget, and jansson copies and frees
 * trees by recursion (a crash, not an error); the stored form is bounded
 * anyway (TY_JSON_LOADABLE_DEPTH). A move or copy is bounded without a
 * walk: what it takes from `from` nests at most (bound - depth of from). */
typedef struct budget {
    size_t copied, depth;
} budget;

static int nest_at(budget *b, const json_op *op, size_t vdepth, ty_error *err)
{
    size_t d = op->path.n + vdepth;

    if (d > TY_JSON_LOADABLE_DEPTH)
        return ty_seterr(err, TY_EINVALID,
                         "%s operation does not apply: the document would nest more than %d "
                         "levels deep at path \"%s\"",
                         op_names[op->kind], TY_JSON_LOADABLE_DEPTH, op->path_text);
    if (d > b->depth)
        b->depth = d;
    return 0;
}

static size_t taken_depth(const budget *b, const json_op *op)
{
    return b->depth > op->from.n ? b->depth - op->from.n : 0;
}

static int apply_one(json_t **doc, const json_op *op, budget *b, ty_error *err)
{
    json_t *value;
    size_t size;

    switch (op->kind) {
    case OP_ADD:
        if (nest_at(b, op, nesting(op->value), err) < 0)
            return -1;
        return apply_add(doc, op, &op->path, op->path_text, json_deep_copy(op->value), err);
    case OP_REMOVE:
        return apply_remove(*doc, op, &op->path, op->path_text, NULL, err);
    case OP_REPLACE:
        if (!pointer_walk(*doc, &op->path, op->path.n))
            return missing_path(err, op, op->path_text);
        if (nest_at(b, op, nesting(op->value), err) < 0)
            return -1;
        if (op->path.n > 0 && apply_remove(*doc, op, &op->path, op->path_text, NULL, err) < 0)
            return -1;
        return apply_add(doc, op, &op->path, op->path_text, json_deep_copy(op->value), err);
    case OP_MOVE: {
        size_t flen = strlen(op->from_text);
        if (strcmp(op->from_text, op->path_text) == 0) {
            return pointer_walk(*doc, &op->from, op->from.n) ? 0
                                                              : missing_path(err, op, op->from_text);
        }
        if (strncmp(op->path_text, op->from_text, flen) == 0 && op->path_text[flen] == '/')
            return ty_seterr(err, TY_EINVALID,
                             "move operation does not apply: \"%s\" cannot be moved into its "
                             "own child \"%s\"", op->from_text, op->path_text);
        if (nest_at(b, op, taken_depth(b, op), err) < 0)
            return -1;
        if (apply_remove(*doc, op, &op->from, op->from_text, &value, err) < 0)
            return -1;
        return apply_add(doc, op, &op->path, op->path_text, value, err);
    }
    case OP_COPY:
        value = pointer_walk(*doc, &op->from, op->from.n);
        if (!value)
            return missing_path(err, op, op->from_text);
        /* Each copy can double the document: 17 of them grew the server
         * to 24 GB. kube-apiserver's budget, its library's words. */
        size = text_size(value, PATCH_JSON_MAX_COPY_BYTES);
        if (size > PATCH_JSON_MAX_COPY_BYTES - b->copied)
            return ty_seterr(err, TY_EINVALID,
                             "Unable to complete the copy, the accumulated size increase of "
                             "copy is %zu, exceeding the limit %d",
                             b->copied + size, PATCH_JSON_MAX_COPY_BYTES);
        b->copied += size;
        if (nest_at(b, op, taken_depth(b, op), err) < 0)
            return -1;
        return apply_add(doc, op, &op->path, op->path_text, json_deep_copy(value), err);
    case OP_TEST:
        value = pointer_walk(*doc, &op->path, op->path.n);
        if (!value)
            return missing_path(err, op, op->path_text);
        if (!values_equal(value, op->value))
            return ty_seterr(err, TY_EINVALID,
                             "test operation failed: the value at path \"%s\" is not equal to "
                             "the expected value", op->path_text);
        return 0;
    }
    return ty_seterr(err, TY_EINTERNAL, "unknown patch operation");
}

/* Checks one operation object and fills op. Every malformation is a 400. */
static int op_decode(const json_t *obj, size_t idx, json_op *op, ty_error *err)
{
    const char *name = json_string_value(json_object_get(obj, "op"));
    const json_t *path = json_object_get(obj, "path");
    const json_t *from = json_object_get(obj, "from");
    size_t k;

    if (!json_is_object(obj))
        return ty_seterr(err, TY_EBADREQUEST, "json patch operation %zu is not an object", idx);
    if (!name)
        return ty_seterr(err, TY_EBADREQUEST, "json patch operation %zu has no \"op\"", idx);
    for (k = 0; k < sizeof(op_names) / sizeof(op_names[0]); k++)
        if (strcmp(name, op_names[k]) == 0)
            break;
    if (k == sizeof(op_names) / sizeof(op_names[0]))
        return ty_seterr(err, TY_EBADREQUEST, "json patch operation %zu: unknown op \"%s\"", idx,
                         name);
    op->kind = (op_kind)k;
    if (!json_is_string(path))
        return ty_seterr(err, TY_EBADREQUEST, "%s operation %zu: missing or invalid \"path\"",
                         name, idx);
    op->path_text = json_string_value(path);
    if (pointer_parse(op->path_text, &op->path) < 0)
        return ty_seterr(err, TY_EBADREQUEST, "%s operation: invalid JSON pointer \"%s\"", name,
                         op->path_text);
    if (op->kind == OP_ADD || op->kind == OP_REPLACE || op->kind == OP_TEST) {
        op->value = json_object_get(obj, "value");
        if (!op->value)
            return ty_seterr(err, TY_EBADREQUEST, "%s operation on \"%s\": missing \"value\"",
                             name, op->path_text);
    }
    if (op->kind == OP_MOVE || op->kind == OP_COPY) {
        if (!json_is_string(from))
            return ty_seterr(err, TY_EBADREQUEST, "%s operation on \"%s\": missing \"from\"",
                             name, op->path_text);
        op->from_text = json_string_value(from);
        if (pointer_parse(op->from_text, &op->from) < 0)
            return ty_seterr(err, TY_EBADREQUEST, "%s operation: invalid JSON pointer \"%s\"",
                             name, op->from_text);
    }
    return 0;
}

static void ops_free(json_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pointer_free(&ops[i].path);
        pointer_free(&ops[i].from);
    }
    free(ops);
}

json_t *patch_json(const json_t *target, const json_t *patch, ty_error *err)
{
    size_t n = json_array_size(patch);
    json_op *ops = NULL;
    json_t *doc = NULL;
    budget b = {0};

    if (!json_is_array(patch)) {
        ty_seterr(err, TY_EBADREQUEST, "json patch must be a JSON array of operations");
        return NULL;
    }
    if (n > JSON_PATCH_MAX_OPS) {
        ty_seterr(err, TY_ETOOLARGE,
                  "The allowed maximum operations in a JSON patch is %d, got %zu",
                  JSON_PATCH_MAX_OPS, n);
        return NULL;
    }
    /* Decode everything first: a malformed patch is a 400 even when an
     * earlier operation would not apply. */
    ops = calloc(n ? n : 1, sizeof(*ops));
    if (!ops) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (op_decode(json_array_get(patch, i), i, &ops[i], err) < 0)
            goto error;
    doc = target ? json_deep_copy(target) : json_null();
    if (!doc) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    b.depth = nesting(doc);
    for (size_t i = 0; i < n; i++)
        if (apply_one(&doc, &ops[i], &b, err) < 0)
            goto error;
    ops_free(ops, n);
    return doc;
error:
    json_decref(doc);
    ops_free(ops, n);
    return NULL;
}
