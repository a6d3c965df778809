/* patch_diff.c - the RFC 6902 JSON patch that turns one value into another
 * (patch.h: patch_json_diff), for answers that must be patches: a mutating
 * admission webhook's (server/webhook.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/patch.h"

/* A JSON pointer being built: the path to the value being compared. */
typedef struct ptr {
    char *s;
    size_t len, cap;
} ptr;

static int ptr_reserve(ptr *p, size_t more)
{
    if (p->len + more + 1 <= p->cap)
        return 0;
    size_t ncap = p->cap ? p->cap : 64;
    while (ncap < p->len + more + 1)
        ncap *= 2;
    char *n = realloc(p->s, ncap);
    if (!n)
        return -1;
    p->s = n;
    p->cap = ncap;
    return 0;
}

/* Appends "/" and the token, '~' and '/' escaped as "~0" and "~1". */
static int ptr_push(ptr *p, const char *tok, size_t toklen)
{
    if (ptr_reserve(p, 1 + 2 * toklen) < 0)
        return -1;
    p->s[p->len++] = '/';
    for (size_t i = 0; i < toklen; i++) {
        if (tok[i] == '~' || tok[i] == '/') {
            p->s[p->len++] = '~';
            p->s[p->len++] = tok[i] == '~' ? '0' : '1';
        } else {
            p->s[p->len++] = tok[i];
        }
    }
    p->s[p->len] = '\0';
    return 0;
}

static int ptr_push_index(ptr *p, size_t i)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%zu", i);
    return ptr_push(p, num, (size_t)n);
}

/* A deep copy that keeps keys holding a NUL byte, which jansson's
 * json_deep_copy cuts at the NUL (a tree from the YAML or protobuf decoder
 * may have them). NULL without memory. */
static json_t *copy(const json_t *v)
{
    json_t *out, *item;
    const char *k;
    size_t klen, i;

    if (json_is_object(v)) {
        if (!(out = json_object()))
            return NULL;
        json_object_keylen_foreach((json_t *)v, k, klen, item) {
            if (json_object_setn_new(out, k, klen, copy(item)) < 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (json_is_array(v)) {
        if (!(out = json_array()))
            return NULL;
        json_array_foreach(v, i, item) {
            if (json_array_append_new(out, copy(item)) < 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    return json_deep_copy(v);
}

static int add_op(json_t *ops, const char *op, const ptr *p, const json_t *value)
{
    json_t *o = json_pack("{s:s, s:s}", "op", op, "path", p->s ? p->s : "");
    if (!o)
        return -1;
    if (value && json_object_set_new(o, "value", copy(value)) < 0) {
        json_decref(o);
        return -1;
    }
    return json_array_append_new(ops, o);
}

/* A key with a NUL byte in it cannot be looked up as a C string: an object
 * holding one is replaced whole rather than diffed key by key. */
static bool plain_keys(const json_t *obj)
{
    const char *k;
    size_t klen;
    json_t *v;

    json_object_keylen_foreach((json_t *)obj, k, klen, v) {
        if (klen != strlen(k))
            return false;
    }
    return true;
}

static int diff(const json_t *a, const json_t *b, ptr *p, json_t *ops);

static int diff_objects(const json_t *a, const json_t *b, ptr *p, json_t *ops)
{
    size_t at = p->len;
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)a, k, v) {
        if (json_object_get(b, k))
            continue;
        if (ptr_push(p, k, strlen(k)) < 0 || add_op(ops, "remove", p, NULL) < 0)
            return -1;
        p->s[p->len = at] = '\0';
    }
    json_object_foreach((json_t *)b, k, v) {
        const json_t *old = json_object_get(a, k);
        int rc;
        if (ptr_push(p, k, strlen(k)) < 0)
            return -1;
        rc = old ? diff(old, v, p, ops) : add_op(ops, "add", p, v);
        p->s[p->len = at] = '\0';
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Arrays of one length are compared item by item (defaults filled inside a
 * list's items give one small op each); others are replaced whole, which is
 * always correct and never longer than the list. */
static int diff_arrays(const json_t *a, const json_t *b, ptr *p, json_t *ops)
{
    size_t at = p->len;

    for (size_t i = 0; i < json_array_size(b); i++) {
        int rc;
        if (ptr_push_index(p, i) < 0)
            return -1;
        rc = diff(json_array_get(a, i), json_array_get(b, i), p, ops);
        p->s[p->len = at] = '\0';
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int diff(const json_t *a, const json_t *b, ptr *p, json_t *ops)
{
    if (json_equal(a, b))
        return 0;
    if (json_is_object(a) && json_is_object(b) && plain_keys(a) && plain_keys(b))
        return diff_objects(a, b, p, ops);
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b))
        return diff_arrays(a, b, p, ops);
    return add_op(ops, "replace", p, b);
}

json_t *patch_json_diff(const json_t *a, const json_t *b)
{
    json_t *ops = json_array();
    ptr p = {0};

    if (!ops || ptr_reserve(&p, 0) < 0)
        goto error;
    p.s[0] = '\0';
    if (diff(a, b, &p, ops) < 0)
        goto error;
    free(p.s);
    return ops;
error:
    free(p.s);
    json_decref(ops);
    return NULL;
}
