/* schema.h - a small static description of the fields a kind knows.
 *
 * Used twice: strict field validation (api_check_unknown_fields names every
 * field the schema does not know, by full path) and the component schemas of
 * /openapi/v3. Schemas are const data built with the macros below:
 *
 *     static const api_field replica_spec_fields[] = {
 *         API_FIELD("replicas", API_T_INTEGER),
 *         API_FIELD("restartPolicy", API_T_STRING),
 *         API_OBJECT("template", &api_schema_pod_template_spec),
 *     };
 *     static const api_schema replica_spec = API_SCHEMA(replica_spec_fields);
 *
 *     static const api_field spec_fields[] = {
 *         API_MAP_OF("pytorchReplicaSpecs", &replica_spec),
 *         API_OBJECT("runPolicy", &run_policy),
 *         API_FIELD("elasticPolicy", API_T_OPEN),
 *     };
 *     static const api_schema spec = API_SCHEMA(spec_fields);
 *     static const api_field top_fields[] = {
 *         API_OBJECT("spec", &spec),
 *         API_FIELD("status", API_T_OPEN),
 *     };
 *     const api_schema pytorchjob_schema = API_SCHEMA(top_fields);
 *
 * A kind's api_resource.schema describes the whole object. apiVersion, kind
 * and metadata (api_schema_object_meta) are implied when it does not list
 * them; status is never checked for unknown fields.
 */
#ifndef TY_API_SCHEMA_H
#define TY_API_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/registry.h"
#include "base/error.h"
#include "model/patch.h"

typedef enum api_type {
    API_T_ANY = 0,       /* any JSON value, never checked */
    API_T_OBJECT,        /* object with the named properties of `schema` */
    API_T_ARRAY,         /* array of item_type (schema when item_type is OBJECT) */
    API_T_MAP,           /* object with free keys, values of item_type */
    API_T_STRING,
    API_T_INTEGER,
    API_T_INT32,         /* an integer Go holds in an int32 (format int32) */
    API_T_NUMBER,
    API_T_BOOLEAN,
    API_T_INT_OR_STRING, /* x-kubernetes-int-or-string */
    API_T_QUANTITY,      /* a resource quantity: int-or-string in OpenAPI */
    API_T_OPEN,          /* any object; x-kubernetes-preserve-unknown-fields */
} api_type;

typedef struct api_field {
    const char *name;
    api_type type;
    api_type item_type;         /* ARRAY / MAP: type of the elements */
    const api_schema *schema;   /* OBJECT, or ARRAY/MAP of OBJECT: their schema */
    const char *merge_key;      /* ARRAY: x-kubernetes-patch-merge-key ("name") */
    const char *patch_strategy; /* ARRAY / MAP: x-kubernetes-patch-strategy ("merge") */
    const char *description;    /* optional, shown by kubectl explain */
} api_field;

struct api_schema {
    const api_field *fields;
    size_t nfields;
    bool preserve_unknown;      /* unknown fields are kept, not reported */
    const char *description;    /* optional */
    const char *go_name;        /* a core kind's Go struct ("Container"), for type errors */
};

#define API_NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
#define API_SCHEMA(fields_) { .fields = (fields_), .nfields = API_NFIELDS(fields_) }
#define API_SCHEMA_OPEN(fields_) \
    { .fields = (fields_), .nfields = API_NFIELDS(fields_), .preserve_unknown = true }

/* A scalar (STRING, INTEGER, ...), ANY or OPEN field. */
#define API_FIELD(n, t) { .name = (n), .type = (t) }
/* A nested object with a known schema. */
#define API_OBJECT(n, s) { .name = (n), .type = API_T_OBJECT, .schema = (s) }
/* An array of scalars, and an array of objects. */
#define API_ARRAY(n, t) { .name = (n), .type = API_T_ARRAY, .item_type = (t) }
#define API_ARRAY_OF(n, s) \
    { .name = (n), .type = API_T_ARRAY, .item_type = API_T_OBJECT, .schema = (s) }
/* An array of objects that strategic merge patch merges by `key`. */
#define API_MERGE_LIST(n, s, key) \
    { .name = (n), .type = API_T_ARRAY, .item_type = API_T_OBJECT, .schema = (s), \
      .merge_key = (key), .patch_strategy = "merge" }
/* A map of scalars (labels: API_MAP("labels", API_T_STRING)), and of objects. */
#define API_MAP(n, t) { .name = (n), .type = API_T_MAP, .item_type = (t) }
#define API_MAP_OF(n, s) \
    { .name = (n), .type = API_T_MAP, .item_type = API_T_OBJECT, .schema = (s) }

/* Reusable schemas of core/v1 and meta/v1 types. */
extern const api_schema api_schema_object_meta;
extern const api_schema api_schema_pod_template_spec;  /* {metadata, spec: PodSpec} */
extern const api_schema api_schema_pod_spec;
extern const api_schema api_schema_container;
extern const api_schema api_schema_resource_requirements;
extern const api_schema api_schema_toleration;
extern const api_schema api_schema_volume;
extern const api_schema api_schema_affinity;
extern const api_schema api_schema_label_selector;
/* Status objects, described for their merge keys only (open otherwise, and
 * never checked): {conditions} merged by type, and a Pod's status. */
extern const api_schema api_schema_condition_status;
extern const api_schema api_schema_pod_status;

/* Looks up a field of an object schema by name; NULL if unknown. */
const api_field *api_schema_field(const api_schema *s, const char *name);

/* The lists of res that strategic merge patch merges, and their keys, as
 * the schemas declare them (merge_key, patch_strategy "merge" on a list of
 * scalars): the one source of the merge keys (schema_patch.c). res NULL, a
 * kind the API does not serve: the pod-template lists (containers by name,
 * env, volumes, ...), metadata's and conditions by type, wherever they
 * appear. The result points at static data. */
patch_schema api_patch_schema(const api_resource *res);

/* Walks val against an object schema and adds one cause per unknown field
 * (reason "FieldValueInvalid", field = full path, message
 * `unknown field "<path>"`). path is the prefix ("" at the top). Returns the
 * number of unknown fields found. Never changes err->code. */
int api_schema_check(const api_schema *s, const json_t *val, const char *path,
                     ty_error *err);

/* The declared types of obj's fields (schema_types.c), as kube-apiserver
 * decodes them: a built-in kind's first mismatch is TY_EBADREQUEST `Pod in
 * version "v1" cannot be handled as a Pod: json: cannot unmarshal object
 * into Go struct field Container.spec.containers.command of type []string`;
 * a custom resource's are TY_EINVALID causes `Invalid value: "object":
 * <path> in body must be of type string: "object"` (the message left for
 * the server to compose). null fits anything; status is not checked.
 * 0 when every field fits. api_prepare checks a custom resource's after
 * its defaults; the server checks a built-in kind's as it decodes. */
int api_check_types(const api_resource *res, const json_t *obj, ty_error *err);

/* A JSON value's type in OpenAPI's words: "object", "array", "string",
 * "integer", "number", "boolean" or "null". */
const char *api_json_type_name(const json_t *v);

/* The OpenAPI v3 schema of an object schema (properties with types, nested
 * objects inlined, patch merge keys, preserve-unknown-fields). Caller owns. */
json_t *api_schema_openapi(const api_schema *s);

#endif
