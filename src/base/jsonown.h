/* jsonown.h - changing a tree whose members may be shared with another.
 *
 * A status write (store_mutate_status) gives its function a copy of the
 * object whose top (the object, its metadata and its status) is its own and
 * whose members below that are shared with the committed version, which
 * readers hold and which must never change. A function that changes
 * something below the top makes it its own first with these: a one-level
 * copy (json_copy) is put in its place, unless the tree was its only holder
 * already (a reference count of 1: then it is changed where it is). */
#ifndef TY_BASE_JSONOWN_H
#define TY_BASE_JSONOWN_H

#include <jansson.h>

/* parent[key] (an object or an array) made parent's own to change; NULL
 * when parent has no such member, it is neither, or memory ran out.
 * parent must be the caller's own. */
json_t *ty_json_own(json_t *parent, const char *key);
/* The same for element i of array. */
json_t *ty_json_own_at(json_t *array, size_t i);

#endif
