/* kc_fake_read.c - the fake client's reads (see kc_fake.h): get, lists
 * with selectors, filter and pages, owned lists, counts. */
#include "client/kc_fake_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/selector.h"

/* ---- reads ---- */

ty_obj *kc_fake_op_get(ty_kc *c, const char *res, const char *ns, const char *name, ty_error *err)
{
    fake *f = F(c);
    ty_obj *o = NULL;
    long idx;

    pthread_mutex_lock(&f->mu);
    if (!kc_fake_injected(f, "get", res, "", ns, name, err)) {
        if ((idx = kc_fake_index(f, res, ns, name)) >= 0)
            o = ty_obj_ref(f->objs[idx].obj);
        else
            ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", res, name);
    }
    pthread_mutex_unlock(&f->mu);
    return o;
}

static int by_key(const void *a, const void *b)
{
    const fobj *x = *(fobj *const *)a, *y = *(fobj *const *)b;
    int c = strcmp(x->ns, y->ns);

    return c ? c : strcmp(x->name, y->name);
}

typedef bool (*match_fn)(const fobj *o, const void *arg);

/* The objects of resource in ns (NULL: any) that match, sorted by namespace
 * and name, into out (items referenced; rv the client's). */
static int collect(fake *f, const char *res, const char *ns, match_fn match, const void *arg,
                   kc_list *out, ty_error *err)
{
    fobj **sel = f->nobjs ? malloc(f->nobjs * sizeof(*sel)) : NULL;
    size_t n = 0;

    if (f->nobjs && !sel)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    for (size_t i = 0; i < f->nobjs; i++)
        if (!strcmp(f->objs[i].resource, res) && (!ns || !strcmp(f->objs[i].ns, ns)) &&
            match(&f->objs[i], arg))
            sel[n++] = &f->objs[i];
    if (n)
        qsort(sel, n, sizeof(*sel), by_key);
    if (n && !(out->items = malloc(n * sizeof(*out->items)))) {
        free(sel);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        out->items[i] = ty_obj_ref(sel[i]->obj);
    out->n = n;
    out->remaining = 0;
    snprintf(out->rv, sizeof(out->rv), "%" PRIu64, f->rv);
    free(sel);
    return 0;
}

typedef struct list_arg {
    ty_label_selector *labels;
    ty_field_selector *fields;
    const kc_list_opts *o;
} list_arg;

static bool list_match(const fobj *o, const void *arg)
{
    const list_arg *a = arg;
    const json_t *j = ty_obj_json(o->obj);

    if (a->labels && !label_selector_matches(a->labels, json_object_get(meta_of(j), "labels")))
        return false;
    if (a->fields && !field_selector_matches(a->fields, j))
        return false;
    return !a->o->filter || a->o->filter(j, a->o->filter_arg);
}

/* Pages a sorted list: items after the continue token "<ns>/<name>", at
 * most limit of them. */
static int page(kc_list *out, const kc_list_opts *o, ty_error *err)
{
    size_t from = 0, to;

    if (o->continue_token && *o->continue_token) {
        const char *slash = strchr(o->continue_token, '/');
        if (!slash)
            return ty_seterr(err, TY_EBADREQUEST, "invalid continue token");
        while (from < out->n) {
            const char *ns, *name;
            int c;
            ty_obj_key(out->items[from], &ns, &name);
            c = strncmp(ns, o->continue_token, (size_t)(slash - o->continue_token));
            if (!c && strlen(ns) != (size_t)(slash - o->continue_token))
                c = 1;
            if (c > 0 || (!c && strcmp(name, slash + 1) > 0))
                break;
            from++;
        }
    }
    to = o->limit && out->n - from > o->limit ? from + o->limit : out->n;
    if (to < out->n) {
        const char *ns, *name;
        ty_obj_key(out->items[to - 1], &ns, &name);
        if (asprintf(&out->continue_token, "%s/%s", ns, name) < 0) {
            out->continue_token = NULL;
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
    }
    for (size_t i = 0; i < from; i++)
        ty_obj_unref(out->items[i]);
    for (size_t i = to; i < out->n; i++)
        ty_obj_unref(out->items[i]);
    if (from)
        memmove(out->items, out->items + from, (to - from) * sizeof(*out->items));
    out->remaining = (int64_t)(out->n - to);
    out->n = to - from;
    return 0;
}

int kc_fake_op_list(ty_kc *c, const char *res, const kc_list_opts *o, kc_list *out, ty_error *err)
{
    fake *f = F(c);
    list_arg a = {.o = o};
    int rc = -1;

    if (o->label_selector && *o->label_selector &&
        !(a.labels = label_selector_parse(o->label_selector, err)))
        return -1;
    if (o->field_selector && *o->field_selector &&
        !(a.fields = field_selector_parse(o->field_selector, NULL, err)))
        goto out;
    pthread_mutex_lock(&f->mu);
    if (!kc_fake_injected(f, "list", res, "", o->ns, NULL, err) &&
        collect(f, res, o->ns, list_match, &a, out, err) == 0)
        rc = page(out, o, err);
    pthread_mutex_unlock(&f->mu);
    if (rc < 0)
        kc_list_items_free(out);
out:
    label_selector_free(a.labels);
    field_selector_free(a.fields);
    return rc;
}

static bool owned_by(const fobj *o, const void *uid)
{
    const json_t *r;
    size_t i;

    json_array_foreach(json_object_get(meta_of(ty_obj_json(o->obj)), "ownerReferences"), i, r)
        if (json_is_true(json_object_get(r, "controller")))
            return !strcmp(json_string_value(json_object_get(r, "uid")) ?: "", uid);
    return false;
}

int kc_fake_op_list_owned(ty_kc *c, const char *res, const char *ns, const char *uid,
                        kc_list *out, ty_error *err)
{
    fake *f = F(c);
    int rc = -1;

    pthread_mutex_lock(&f->mu);
    if (!kc_fake_injected(f, "list", res, "", ns, NULL, err))
        rc = collect(f, res, ns, owned_by, uid ? uid : "", out, err);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

size_t kc_fake_op_count(ty_kc *c, const char *res)
{
    fake *f = F(c);
    size_t n = 0;

    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->nobjs; i++)
        n += !strcmp(f->objs[i].resource, res);
    pthread_mutex_unlock(&f->mu);
    return n;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *kc_fake_op_resources(ty_kc *c)
{
    fake *f = F(c);
    const char **names;
    json_t *out = json_array();
    size_t n = 0;

    pthread_mutex_lock(&f->mu);
    names = malloc((f->nres ? f->nres : 1) * sizeof(*names));
    for (size_t r = 0; names && r < f->nres; r++)
        for (size_t i = 0; i < f->nobjs; i++)
            if (f->objs[i].resource == f->res[r]) {
                names[n++] = f->res[r];
                break;
            }
    if (n)
        qsort(names, n, sizeof(*names), by_string);
    for (size_t i = 0; out && i < n; i++)
        json_array_append_new(out, json_string(names[i]));
    pthread_mutex_unlock(&f->mu);
    if (!names) {
        json_decref(out);
        out = NULL;
    }
    free(names);
    return out;
}

