/* jsonown.c - see jsonown.h. */
#include "base/jsonown.h"

/* v, or a one-level copy of it when somebody else holds it too (a racing
 * decref of another holder only makes the copy needless). */
static json_t *own(json_t *v)
{
    if (!json_is_object(v) && !json_is_array(v))
        return NULL;
    if (__atomic_load_n(&v->refcount, __ATOMIC_ACQUIRE) == 1)
        return v;
    return json_copy(v);
}

json_t *ty_json_own(json_t *parent, const char *key)
{
    json_t *v = json_object_get(parent, key), *mine = own(v);

    if (!mine || mine == v)
        return mine;
    return json_object_set_new(parent, key, mine) == 0 ? mine : NULL;
}

json_t *ty_json_own_at(json_t *array, size_t i)
{
    json_t *v = json_array_get(array, i), *mine = own(v);

    if (!mine || mine == v)
        return mine;
    return json_array_set_new(array, i, mine) == 0 ? mine : NULL;
}
