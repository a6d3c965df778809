/* obj.c - snapshots of objects that come from elsewhere than the store.
 *
 * The store's snapshots (store/obj.c) keep text, compressed copies and
 * views; these keep only the tree they were given, which is all an HTTP
 * answer or a test gives. */
#include "model/obj.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct json_obj {
    ty_obj base;
    atomic_size_t refs;
    json_t *tree;
} json_obj;

static const json_t *j_json(const ty_obj *o)
{
    return ((const json_obj *)o)->tree;
}

static const json_t *j_light(const ty_obj *o, bool *light)
{
    if (light)
        *light = false;
    return j_json(o);
}

static json_t *j_copy(const ty_obj *o)
{
    return json_deep_copy(j_json(o));
}

static json_t *j_read(const ty_obj *o)
{
    return json_incref((json_t *)j_json(o));
}

static json_t *j_meta(const ty_obj *o)
{
    return json_incref(json_object_get(j_json(o), "metadata"));
}

static json_t *j_view(const ty_obj *o, const ty_view *view)
{
    return view->make(j_json(o));
}

static const char *j_text(const ty_obj *o, size_t *len, char **owned)
{
    char *t = json_dumps(j_json(o), JSON_COMPACT);

    *owned = t;
    if (len)
        *len = t ? strlen(t) : 0;
    return t;
}

static const char *meta_str(const ty_obj *o, const char *field)
{
    const char *s = json_string_value(json_object_get(json_object_get(j_json(o), "metadata"),
                                                      field));
    return s ? s : "";
}

static void j_key(const ty_obj *o, const char **ns, const char **name)
{
    *ns = meta_str(o, "namespace");
    *name = meta_str(o, "name");
}

static void j_rv(const ty_obj *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s", meta_str(o, "resourceVersion"));
}

static ty_obj *j_ref(ty_obj *o)
{
    atomic_fetch_add_explicit(&((json_obj *)o)->refs, 1, memory_order_relaxed);
    return o;
}

static void j_unref(ty_obj *o)
{
    json_obj *j = (json_obj *)o;

    if (atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) != 1)
        return;
    json_decref(j->tree);
    free(j);
}

static const ty_obj_class json_class = {
    .json = j_json, .json_light = j_light, .json_copy = j_copy, .json_read = j_read,
    .metadata = j_meta, .view = j_view, .text_read = j_text, .key = j_key, .rv = j_rv,
    .ref = j_ref, .unref = j_unref,
};

ty_obj *ty_obj_new(json_t *json)
{
    json_obj *j = json ? malloc(sizeof(*j)) : NULL;

    if (!j) {
        json_decref(json);
        return NULL;
    }
    j->base.cls = &json_class;
    atomic_init(&j->refs, 1);
    j->tree = json;
    return &j->base;
}
