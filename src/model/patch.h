/* patch.h - the three patch types of the Kubernetes API.
 *
 * All functions leave their inputs untouched and return a new value (caller
 * owns the reference), or NULL with the error filled in.
 */
#ifndef TY_MODEL_PATCH_H
#define TY_MODEL_PATCH_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/* RFC 7386 JSON merge patch (application/merge-patch+json). Never fails for
 * valid JSON inputs. */
json_t *patch_merge(const json_t *target, const json_t *patch);

/* RFC 6902 JSON patch (application/json-patch+json): add, remove, replace,
 * move, copy, test, with RFC 6901 pointers ("~0", "~1", "-" for append).
 * Errors: TY_EBADREQUEST for a malformed patch document (not an array, unknown
 * op, missing "path"/"value"); TY_EINVALID (422, as kube-apiserver answers) for
 * an op that does not apply: a missing path, an index out of range, a failed
 * "test". The message names the op and the path. More than 10000 operations:
 * TY_ETOOLARGE, as kube-apiserver refuses them. The values "copy" operations
 * copy may add up to PATCH_JSON_MAX_COPY_BYTES of JSON text, as
 * kube-apiserver's JSONPatchMaxCopyBytes; past it TY_EINVALID ("Unable to
 * complete the copy, ..."), before anything is copied. */
#define PATCH_JSON_MAX_COPY_BYTES (3 * 1024 * 1024)
json_t *patch_json(const json_t *target, const json_t *ops, ty_error *err);

/* What strategic merge patch knows of the fields of an object: which lists
 * merge and by which key. The model holds no such table; the API's field
 * schema (api/schema.h, api_patch_schema) is the one place that declares
 * them, and the caller passes its description in. A type is an opaque
 * handle the describer hands out and takes back; {NULL, 0} describes
 * nothing (every list below is replaced). */
typedef struct patch_type {
    const void *p;
    int tag;
} patch_type;

typedef struct patch_field {
    const char *merge_key; /* a list of objects merged by this field of each */
    bool merge_set;        /* a list of scalars merged as a set (finalizers) */
    patch_type type;       /* the type of the value, or of each list element */
} patch_field;

typedef struct patch_schema {
    /* Describes field `name` of a value of type `in` (never {NULL, 0}):
     * fills *out (zeroed by the caller) and returns true, or returns false
     * when the type does not know the field. Must not fail otherwise. */
    bool (*field)(patch_type in, const char *name, patch_field *out);
    patch_type root; /* the type of the whole object */
} patch_schema;

/* Strategic merge patch (application/strategic-merge-patch+json). schema
 * says which lists merge by which key (containers by name, ports by
 * containerPort inside a container and by port in a Service's spec,
 * ownerReferences by uid, conditions by type, finalizers as a set, ...);
 * lists it does not describe are replaced, and so are all lists when schema
 * is NULL. Supports the directives $patch (replace, merge, delete),
 * $retainKeys, $deleteFromPrimitiveList/<field> and
 * $setElementOrder/<field>. Kubernetes refuses the patch for a custom
 * resource; a server that wants that answer must decide it before calling.
 * Malformed directives or list items without their merge key:
 * TY_EBADREQUEST. schema is borrowed for the call. */
json_t *patch_strategic(const json_t *target, const json_t *patch, const patch_schema *schema,
                        ty_error *err);

/* Two-way merge patch that turns a into b (RFC 7386 form). Used by the CLI's
 * apply to send only what changed. Caller owns the result; {} when equal. */
json_t *patch_merge_diff(const json_t *a, const json_t *b);

/* The RFC 6902 patch (patch_json's form) that turns a into b: removes, adds
 * and replaces down to the members that differ ('~' and '/' in keys escaped
 * as "~0" and "~1"), lists of one length item by item, lists of different
 * lengths replaced whole. A mutating admission webhook's answer. Caller owns
 * the result; [] when equal; NULL when memory ran out (patch_diff.c). */
json_t *patch_json_diff(const json_t *a, const json_t *b);

#endif
