/* finalizers.c - see finalizers.h. */
#include "model/finalizers.h"

#include <string.h>

#include "base/jsonown.h"

static bool is_name(const json_t *v, const char *name)
{
    return json_is_string(v) && strcmp(json_string_value(v), name) == 0;
}

bool finalizer_has(const json_t *obj, const char *name)
{
    const json_t *list = json_object_get(json_object_get(obj, "metadata"), "finalizers");
    size_t i;
    json_t *v;

    json_array_foreach(list, i, v)
        if (is_name(v, name))
            return true;
    return false;
}

int finalizer_add(json_t *obj, const char *name)
{
    json_t *meta, *list;

    if (finalizer_has(obj, name))
        return 0;
    meta = ty_json_own(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        if (!meta || json_object_set_new(obj, "metadata", meta) < 0)
            return -1;
    }
    list = ty_json_own(meta, "finalizers");
    if (!json_is_array(list)) {
        list = json_array();
        if (!list || json_object_set_new(meta, "finalizers", list) < 0)
            return -1;
    }
    return json_array_append_new(list, json_string(name)) < 0 ? -1 : 1;
}

int finalizer_remove(json_t *obj, const char *name)
{
    json_t *meta, *list;

    if (!finalizer_has(obj, name))
        return 0;
    meta = ty_json_own(obj, "metadata");
    list = ty_json_own(meta, "finalizers");
    if (!list)
        return -1;
    for (size_t i = json_array_size(list); i-- > 0;)
        if (is_name(json_array_get(list, i), name))
            json_array_remove(list, i);
    if (json_array_size(list) == 0)
        json_object_del(meta, "finalizers");
    return 1;
}

int finalizer_set(json_t *obj, const char *name, bool want)
{
    return want ? finalizer_add(obj, name) : finalizer_remove(obj, name);
}
