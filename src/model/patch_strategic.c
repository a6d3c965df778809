/* patch_strategic.c - Kubernetes strategic merge patch.
 *
 * Kubernetes reads the merge strategy of each list from struct tags of the Go
 * types (patchStrategy:"merge" patchMergeKey:"name"). Here the caller
 * describes the types (patch_schema, made from the API's field schema by
 * api_patch_schema): a lookup of each field gives its list strategy and the
 * type below it, so that "containers" is merged by name in Pod.spec and in a
 * training job's pod templates alike, while "ports" merges by containerPort
 * inside a container but by port in a Service's spec. This file holds no
 * table of its own: a merge key declared in the schema is the merge key.
 *
 * While merging, results share unchanged subtrees with the inputs (reference
 * counts, never mutation); the top level makes one deep copy at the end so that
 * the caller gets a tree of its own.
 */
#include "model/patch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORDER_PREFIX "$setElementOrder/"
#define DELETE_PREFIX "$deleteFromPrimitiveList/"

/* Merging lists is quadratic; no real object has lists this long. */
#define SMP_MAX_LIST 10000

/* A position in the caller's schema: the describer and a type of it. */
typedef struct smp_type {
    const patch_schema *schema;
    patch_type t;
} smp_type;

static bool type_known(smp_type ty)
{
    return ty.schema && ty.schema->field && (ty.t.p || ty.t.tag);
}

/* Field `name` of a value of type ty: true with *f filled when the schema
 * knows it; *child is the type below the field either way ({NULL, 0} when
 * nothing is known). */
static bool field_lookup(smp_type ty, const char *name, patch_field *f, smp_type *child)
{
    bool known = false;

    memset(f, 0, sizeof(*f));
    if (type_known(ty))
        known = ty.schema->field(ty.t, name, f);
    if (!known)
        memset(f, 0, sizeof(*f));
    *child = (smp_type){ty.schema, known ? f->type : (patch_type){NULL, 0}};
    return known;
}

/* ---- ordering --------------------------------------------------------- */

static json_t *smp_map(const json_t *orig, const json_t *patch, smp_type type,
                       ty_error *err);

/* Two list items are the same item: equal merge keys, or equal scalars. */
static bool same_item(const json_t *a, const json_t *b, const char *key)
{
    if (!key)
        return json_equal(a, b);
    const json_t *ka = json_object_get(a, key);
    const json_t *kb = json_object_get(b, key);
    return ka && kb && json_equal(ka, kb);
}

static long item_index(const json_t *list, const json_t *item, const char *key)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (same_item(json_array_get(list, i), item, key))
            return (long)i;
    return -1;
}

typedef struct ranked {
    json_t *item;
    long rank, pos;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The order Kubernetes gives a merged list: the items named in `order` (the
 * $setElementOrder list, else the patch list) in that order; the other items
 * (present only on the server) keep their relative order and are woven in
 * before the first patch item that follows them on the server. New items
 * therefore come first, which is what kube-apiserver does too. */
static json_t *reorder(const json_t *merged, const json_t *order, const json_t *server,
                       const char *key)
{
    size_t n = json_array_size(merged), np = 0, ns = 0;
    ranked *in_patch = calloc(n + 1, sizeof(ranked));
    json_t **server_only = calloc(n + 1, sizeof(json_t *));
    json_t *out = json_array();

    if (!in_patch || !server_only || !out) {
        free(in_patch);
        free(server_only);
        json_decref(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *item = json_array_get(merged, i);
        long rank = item_index(order, item, key);
        if (rank >= 0)
            in_patch[np++] = (ranked){item, rank, (long)i};
        else
            server_only[ns++] = item;
    }
    qsort(in_patch, np, sizeof(ranked), ranked_cmp);
    size_t i = 0, j = 0;
    while (i < ns || j < np) {
        bool take_server = j == np;
        if (i < ns && j < np) {
            long si = item_index(server, server_only[i], key);
            long pj = item_index(server, in_patch[j].item, key);
            take_server = si >= 0 && pj >= 0 && si < pj;
        }
        json_array_append(out, take_server ? server_only[i++] : in_patch[j++].item);
    }
    free(in_patch);
    free(server_only);
    return out;
}

/* ---- lists ------------------------------------------------------------ */

static json_t *merge_set(const json_t *orig, const json_t *patch, const json_t *order)
{
    json_t *merged = json_array();
    const json_t *lists[2] = {orig, patch};

    if (!merged)
        return NULL;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < json_array_size(lists[l]); i++) {
            json_t *v = json_array_get(lists[l], i);
            if (item_index(merged, v, NULL) < 0)
                json_array_append(merged, v);
        }
    json_t *out = reorder(merged, order ? order : patch, orig, NULL);
    json_decref(merged);
    return out;
}

static int check_order_list(const json_t *order, const char *key, const char *name,
                            ty_error *err)
{
    if (!order)
        return 0;
    if (!json_is_array(order))
        return ty_seterr(err, TY_EBADREQUEST, ORDER_PREFIX "%s must be a list", name);
    for (size_t i = 0; key && i < json_array_size(order); i++)
        if (!json_object_get(json_array_get(order, i), key))
            return ty_seterr(err, TY_EBADREQUEST,
                             ORDER_PREFIX "%s: item %zu does not contain the merge key %s", name,
                             i, key);
    return 0;
}

/* Applies the $patch elements of a keyed list: deletions change `work`;
 * the other elements are collected in `plain`. */
static int list_directives(json_t *work, const json_t *patch, const char *key, const char *name,
                           json_t *plain, bool *replace, ty_error *err)
{
    size_t i;
    json_t *e;

    json_array_foreach(patch, i, e) {
        if (!json_is_object(e))
            return ty_seterr(err, TY_EBADREQUEST,
                             "%s: list items must be objects to be merged by %s", name, key);
        const json_t *d = json_object_get(e, "$patch");
        const char *dir = json_string_value(d);
        if (!d || (dir && strcmp(dir, "merge") == 0)) {
            json_array_append(plain, e);
        } else if (dir && strcmp(dir, "replace") == 0) {
            *replace = true;
        } else if (dir && strcmp(dir, "delete") == 0) {
            const json_t *kv = json_object_get(e, key);
            if (!kv)
                return ty_seterr(err, TY_EBADREQUEST,
                                 "%s: $patch: delete item does not contain the merge key %s",
                                 name, key);
            for (size_t w = json_array_size(work); w-- > 0;)
                if (same_item(json_array_get(work, w), e, key))
                    json_array_remove(work, w);
        } else {
            return ty_seterr(err, TY_EBADREQUEST, "%s: unknown patch type: %s", name,
                             dir ? dir : "(not a string)");
        }
    }
    return 0;
}

static json_t *merge_keyed(const json_t *orig, const json_t *patch, const json_t *order,
                           const char *key, smp_type elem, const char *name,
                           ty_error *err)
{
    json_t *work = json_is_array(orig) ? json_copy((json_t *)orig) : json_array();
    json_t *plain = json_array();
    json_t *server = NULL, *out = NULL;
    bool replace = false;
    size_t i;
    json_t *e;

    if (!work || !plain) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto done;
    }
    if (check_order_list(order, key, name, err) < 0 ||
        list_directives(work, patch, key, name, plain, &replace, err) < 0)
        goto done;
    if (replace) {
        /* The list becomes the patch's other items, cleaned of directives. */
        json_array_clear(work);
        json_array_foreach(plain, i, e) {
            json_t *item = smp_map(NULL, e, elem, err);
            if (!item)
                goto done;
            json_array_append_new(work, item);
        }
        out = json_incref(work);
        goto done;
    }
    server = json_copy(work);
    json_array_foreach(plain, i, e) {
        if (!json_object_get(e, key)) {
            ty_seterr(err, TY_EBADREQUEST, "%s: map does not contain declared merge key: %s",
                      name, key);
            goto done;
        }
        long at = item_index(work, e, key);
        json_t *item = smp_map(at >= 0 ? json_array_get(work, (size_t)at) : NULL, e, elem, err);
        if (!item)
            goto done;
        if (at >= 0)
            json_array_set_new(work, (size_t)at, item);
        else
            json_array_append_new(work, item);
    }
    out = reorder(work, order ? order : plain, server, key);
    if (!out)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
done:
    json_decref(work);
    json_decref(plain);
    json_decref(server);
    return out;
}

static json_t *merge_list(const json_t *orig, const json_t *patch, const json_t *order,
                          const patch_field *f, smp_type elem, const char *name,
                          ty_error *err)
{
    if (json_array_size(orig) + json_array_size(patch) > SMP_MAX_LIST) {
        ty_seterr(err, TY_ETOOLARGE, "%s: lists longer than %d items cannot be merged", name,
                  SMP_MAX_LIST);
        return NULL;
    }
    if (f->merge_key)
        return merge_keyed(orig, patch, order, f->merge_key, elem, name, err);
    if (f->merge_set) {
        if (check_order_list(order, NULL, name, err) < 0)
            return NULL;
        json_t *out = merge_set(orig, patch, order);
        if (!out)
            ty_seterr(err, TY_EINTERNAL, "out of memory");
        return out;
    }
    /* No merge strategy: the patch's list replaces the original. */
    return json_incref((json_t *)patch);
}

/* ---- maps ------------------------------------------------------------- */

static bool is_directive(const char *k)
{
    return k[0] == '$' &&
           (strcmp(k, "$patch") == 0 || strcmp(k, "$retainKeys") == 0 ||
            strncmp(k, ORDER_PREFIX, strlen(ORDER_PREFIX)) == 0 ||
            strncmp(k, DELETE_PREFIX, strlen(DELETE_PREFIX)) == 0);
}

static int retain_keys(json_t *out, const json_t *patch, ty_error *err)
{
    const json_t *keep = json_object_get(patch, "$retainKeys");
    const char *k;
    json_t *v;
    void *tmp;

    if (!keep)
        return 0;
    if (!json_is_array(keep))
        return ty_seterr(err, TY_EBADREQUEST, "$retainKeys must be a list of strings");
    for (size_t i = 0; i < json_array_size(keep); i++)
        if (!json_is_string(json_array_get(keep, i)))
            return ty_seterr(err, TY_EBADREQUEST, "$retainKeys must be a list of strings");
    json_object_foreach_safe(out, tmp, k, v) {
        bool kept = false;
        for (size_t i = 0; i < json_array_size(keep) && !kept; i++)
            kept = strcmp(json_string_value(json_array_get(keep, i)), k) == 0;
        if (!kept)
            json_object_del(out, k);
    }
    return 0;
}

static int delete_from_primitive_lists(json_t *out, const json_t *patch, ty_error *err)
{
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)patch, k, v) {
        if (strncmp(k, DELETE_PREFIX, strlen(DELETE_PREFIX)) != 0)
            continue;
        const char *field = k + strlen(DELETE_PREFIX);
        if (!json_is_array(v))
            return ty_seterr(err, TY_EBADREQUEST, "%s must be a list", k);
        json_t *cur = json_object_get(out, field);
        if (!json_is_array(cur))
            continue;
        json_t *kept = json_array();
        for (size_t i = 0; i < json_array_size(cur); i++)
            if (item_index(v, json_array_get(cur, i), NULL) < 0)
                json_array_append(kept, json_array_get(cur, i));
        json_object_set_new(out, field, kept);
    }
    return 0;
}

static const json_t *order_for(const json_t *patch, const char *field)
{
    char name[512];
    int n = snprintf(name, sizeof(name), ORDER_PREFIX "%s", field);
    if (n < 0 || (size_t)n >= sizeof(name))
        return NULL;
    return json_object_get(patch, name);
}

static int merge_field(json_t *out, const char *k, const json_t *pv, const json_t *patch,
                       smp_type type, ty_error *err)
{
    patch_field fd;
    smp_type child;
    json_t *ov = json_object_get(out, k);
    json_t *merged;

    field_lookup(type, k, &fd, &child);
    if (json_is_null(pv)) {
        json_object_del(out, k);
        return 0;
    }
    if (json_is_object(pv)) {
        const char *dir = json_string_value(json_object_get(pv, "$patch"));
        if (!ov && dir && strcmp(dir, "delete") == 0)
            return 0; /* nothing there to delete */
        merged = smp_map(json_is_object(ov) ? ov : NULL, pv, child, err);
    } else if (json_is_array(pv)) {
        merged = merge_list(json_is_array(ov) ? ov : NULL, pv, order_for(patch, k), &fd, child, k,
                            err);
    } else {
        merged = json_incref((json_t *)pv);
    }
    if (!merged)
        return -1;
    json_object_set_new(out, k, merged);
    return 0;
}

/* $setElementOrder/<f> for a list that the patch does not otherwise touch. */
static int order_untouched_lists(json_t *out, const json_t *patch, smp_type type,
                                 ty_error *err)
{
    const char *k;
    json_t *order;

    json_object_foreach((json_t *)patch, k, order) {
        if (strncmp(k, ORDER_PREFIX, strlen(ORDER_PREFIX)) != 0)
            continue;
        const char *field = k + strlen(ORDER_PREFIX);
        patch_field f;
        smp_type child;
        json_t *cur = json_object_get(out, field);
        if (json_object_get(patch, field) || !json_is_array(cur) ||
            !field_lookup(type, field, &f, &child) || (!f.merge_key && !f.merge_set))
            continue;
        if (check_order_list(order, f.merge_key, field, err) < 0)
            return -1;
        json_t *sorted = reorder(cur, order, cur, f.merge_key);
        if (!sorted)
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        json_object_set_new(out, field, sorted);
    }
    return 0;
}

static json_t *smp_map(const json_t *orig, const json_t *patch, smp_type type,
                       ty_error *err)
{
    const json_t *d = json_object_get(patch, "$patch");
    const char *k;
    json_t *pv;

    if (d) {
        const char *dir = json_string_value(d);
        if (dir && strcmp(dir, "delete") == 0)
            return json_object();
        if (dir && strcmp(dir, "replace") == 0) {
            /* The patch's own content, cleaned of directives and nulls. */
            json_t *content = json_copy((json_t *)patch);
            json_object_del(content, "$patch");
            json_t *out = smp_map(NULL, content, type, err);
            json_decref(content);
            return out;
        }
        if (!dir || strcmp(dir, "merge") != 0) {
            ty_seterr(err, TY_EBADREQUEST, "unknown patch type: %s in map",
                      dir ? dir : "(not a string)");
            return NULL;
        }
    }
    json_t *out = json_is_object(orig) ? json_copy((json_t *)orig) : json_object();
    if (!out) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (retain_keys(out, patch, err) < 0 || delete_from_primitive_lists(out, patch, err) < 0)
        goto error;
    json_object_foreach((json_t *)patch, k, pv) {
        if (!is_directive(k) && merge_field(out, k, pv, patch, type, err) < 0)
            goto error;
    }
    if (order_untouched_lists(out, patch, type, err) < 0)
        goto error;
    return out;
error:
    json_decref(out);
    return NULL;
}

json_t *patch_strategic(const json_t *target, const json_t *patch, const patch_schema *schema,
                        ty_error *err)
{
    if (!json_is_object(patch)) {
        ty_seterr(err, TY_EBADREQUEST, "strategic merge patch must be a JSON object");
        return NULL;
    }
    json_t *shared = smp_map(json_is_object(target) ? target : NULL, patch,
                            (smp_type){schema, schema ? schema->root : (patch_type){NULL, 0}},
                            err);
    if (!shared)
        return NULL;
    json_t *out = json_deep_copy(shared);
    json_decref(shared);
    if (!out)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    return out;
}
