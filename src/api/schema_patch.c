/* schema_patch.c - the merge keys of strategic merge patch, read from the
 * field schemas.
 *
 * The schemas declare each list's x-kubernetes-patch-merge-key and
 * x-kubernetes-patch-strategy for /openapi/v3; strategic merge patch
 * (model/patch_strategic.c) takes them from here, so that one declaration
 * serves both and a key added to a schema is honoured by PATCH at once.
 *
 * The types handed to the patch are schemas with a tag saying how to read
 * them: an object's fields, a map whose values all have the schema, the top
 * of a kind (metadata implied, as api_check_unknown_fields has it), or, for
 * a kind the API does not know, pod-template field names wherever they
 * appear. */
#include <string.h>

#include "api/schema.h"

enum {
    T_OBJECT = 1, /* p: api_schema of an object */
    T_MAP,        /* p: api_schema of each value of a map */
    T_TOP,        /* p: a kind's schema (may be NULL: an open kind) */
    T_ANY,        /* an unknown kind: the pod-template names at any depth */
};

/* The type below a field: the schema of the value (an object) or of each
 * element (an array of objects) or each value (a map of objects). */
static patch_type child_type(const api_field *f)
{
    if (!f->schema)
        return (patch_type){NULL, 0};
    if (f->type == API_T_MAP && f->item_type == API_T_OBJECT)
        return (patch_type){f->schema, T_MAP};
    if (f->type == API_T_OBJECT || f->item_type == API_T_OBJECT)
        return (patch_type){f->schema, T_OBJECT};
    return (patch_type){NULL, 0};
}

/* A list merges by key when the schema names one; a list of scalars with
 * patch strategy "merge" (metadata.finalizers) merges as a set. */
static void describe(const api_field *f, patch_field *out)
{
    if (f->type == API_T_ARRAY && f->merge_key) {
        out->merge_key = f->merge_key;
    } else if (f->type == API_T_ARRAY && f->patch_strategy &&
               strncmp(f->patch_strategy, "merge", 5) == 0 && f->item_type != API_T_OBJECT &&
               f->item_type != API_T_OPEN && f->item_type != API_T_ANY) {
        out->merge_set = true;
    }
    out->type = child_type(f);
}

/* A kind the API does not know: what its lists would be in a pod template
 * (containers, volumes, env, ...), metadata's, and conditions by type,
 * wherever they sit; everything else keeps looking at any depth. */
static bool any_field(const char *name, patch_field *out)
{
    const api_field *f;

    if (strcmp(name, "metadata") == 0) {
        out->type = (patch_type){&api_schema_object_meta, T_OBJECT};
        return true;
    }
    f = api_schema_field(&api_schema_pod_spec, name);
    if (!f || !f->merge_key)
        f = api_schema_field(&api_schema_condition_status, name);
    if (f && f->merge_key) {
        describe(f, out);
        return true;
    }
    out->type = (patch_type){NULL, T_ANY};
    return true;
}

static bool field_of(patch_type in, const char *name, patch_field *out)
{
    const api_schema *s = in.p;
    const api_field *f;

    switch (in.tag) {
    case T_ANY:
        return any_field(name, out);
    case T_MAP: /* every key holds an object of the schema */
        out->type = (patch_type){s, T_OBJECT};
        return true;
    case T_TOP:
        f = api_schema_field(s, name);
        if (!f && strcmp(name, "metadata") == 0) {
            out->type = (patch_type){&api_schema_object_meta, T_OBJECT};
            return true;
        }
        break;
    default:
        f = api_schema_field(s, name);
        break;
    }
    if (!f)
        return false;
    describe(f, out);
    return true;
}

patch_schema api_patch_schema(const api_resource *res)
{
    if (!res)
        return (patch_schema){field_of, {NULL, T_ANY}};
    return (patch_schema){field_of, {res->schema, T_TOP}};
}
