/* registry.h - the resources Trainyard serves.
 *
 * One api_resource per kind: its names for discovery, whether it is
 * namespaced, which subresources it has, its defaulting and validation, the
 * columns `kubectl get` prints and the schema used for strict field
 * validation and /openapi/v3. Each kind lives in its own file under src/api/
 * (kind_pod.c, ...; a training framework's in api/frameworks/, listed in
 * api/frameworks.def); registry.c holds the table.
 */
#ifndef TY_API_REGISTRY_H
#define TY_API_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "base/error.h"

typedef struct api_schema api_schema; /* see schema.h */

typedef struct api_column {
    const char *name;        /* "NAME", "State", "Age": as upstream prints them */
    const char *type;        /* "string", "integer", "date" */
    const char *format;      /* "name" for the name column, else "" */
    const char *description;
    int priority;            /* 0 = always shown; 1 = only with -o wide */
} api_column;

/* Where a custom resource's column reads its value, as upstream's CRD
 * declares it (additionalPrinterColumns[].jsonPath), for `trainyard crds`:
 * {"STATUS", ".status.state.phase"}. Matched to api_column by name. */
typedef struct api_column_path {
    const char *name;
    const char *json_path;
} api_column_path;

typedef struct api_resource {
    const char *group;       /* "" for core */
    const char *version;     /* "v1", "v1alpha1", "v1beta1" */
    const char *kind;        /* "PyTorchJob" */
    const char *list_kind;   /* "PyTorchJobList" */
    const char *plural;      /* "pytorchjobs" */
    const char *singular;    /* "pytorchjob" */
    const char *short_names[4];   /* NULL-terminated */
    const char *categories[3];    /* NULL-terminated, e.g. {"all", NULL} */
    bool namespaced;
    bool has_status;         /* serves the /status subresource */
    bool builtin;            /* a core Kubernetes kind: accepts strategic merge patch */
    const char *subresources[4]; /* NULL-terminated extra subresources: "log", "binding" */
    const char *const *field_selectors; /* NULL-terminated extra fieldSelector paths
                                           beyond metadata.name/namespace, or NULL */

    /* Fills defaults in place (names normalised, replicas, ports, ...).
     * Called on create and on every update of the object (not status). */
    void (*apply_defaults)(json_t *obj);

    /* Validates a defaulted object. old is NULL on create, else the stored object
     * (for immutable fields). Returns 0, or -1 with err->code = TY_EINVALID and
     * one cause per bad field (field = path like "spec.pytorchReplicaSpecs.Master.replicas",
     * message like `Invalid value: 2: must be 1`). Common metadata checks are done
     * by api_validate() around it; this checks the kind's own rules. */
    int (*validate)(const json_t *obj, const json_t *old, ty_error *err);

    /* Table columns after NAME (the name column is added by api_table_*). */
    const api_column *columns;
    size_t ncolumns;
    /* Appends one cell per column in `columns` to cells (a JSON array). now is
     * the server's clock for ages. */
    void (*row_cells)(const json_t *obj, time_t now, json_t *cells);
    /* The columns' JSONPaths, ended by {NULL}; NULL for a built-in kind. */
    const api_column_path *column_paths;

    /* Known fields for strict decoding and the OpenAPI schema; NULL = open object. */
    const api_schema *schema;
} api_resource;

/* Every served resource, in a stable order. */
const api_resource *const *api_resources(size_t *n);

/* Looks up by group, version and plural ("" group for core). NULL if unknown. */
const api_resource *api_find(const char *group, const char *version, const char *plural);

/* Looks up by apiVersion ("kubeflow.org/v1" or "v1") and kind. NULL if unknown. */
const api_resource *api_find_kind(const char *api_version, const char *kind);

/* The same group and plural in another version (MPIJob v1 for v2beta1 and
 * back), or NULL. Objects of both share one name space: a name taken in one
 * is refused in the other. */
const api_resource *api_other_version(const api_resource *res);

/* The key the store files objects under: "pods", "pytorchjobs.kubeflow.org";
 * a second version's "mpijobs.v2beta1.kubeflow.org". */
const char *api_store_key(const api_resource *res);
/* The resource filed under store key key (api_store_key's inverse), or
 * NULL when no served resource has it. */
const api_resource *api_find_store_key(const char *key);

/* "PyTorchJob.kubeflow.org" (or "Pod" for core): the qualified kind used in
 * messages such as `PyTorchJob.kubeflow.org "x" is invalid`. */
void api_qualified_kind(const api_resource *res, char *buf, size_t len);
/* "pytorchjobs.kubeflow.org" (or "pods"): the group-resource used in
 * `pytorchjobs.kubeflow.org "x" not found`. */
void api_group_resource(const api_resource *res, char *buf, size_t len);

/* apiVersion string: "kubeflow.org/v1" or "v1". */
void api_version_string(const api_resource *res, char *buf, size_t len);

/* Defaulting + common metadata validation (name is a DNS-1123 subdomain, or
 * DNS-1035 label for the job kinds; labels and annotations well formed;
 * apiVersion/kind match the resource) + the kind's validate(). On failure:
 * -1, TY_EINVALID with causes; message left for the server to compose. */
int api_prepare(const api_resource *res, json_t *obj, const json_t *old, ty_error *err);

/* Strict field validation: adds one cause per unknown field, reason
 * "FieldValueInvalid", field = its path ("spec.pytorchReplicaSpecs.Master.replica"),
 * message `unknown field "spec.pytorchReplicaSpecs.Master.replica"`. The server
 * turns them into the 400 BadRequest kube-apiserver sends for
 * fieldValidation=Strict (or Warning headers for Warn). Does not set err->code.
 * Returns the number of unknown fields found (0 = clean). */
int api_check_unknown_fields(const api_resource *res, const json_t *obj, ty_error *err);

/* Table helpers: the columnDefinitions array (NAME first) and one row's cells
 * (name first). Events are the exception, as upstream: LAST SEEN first, Name
 * as a wide column at the end. All columns are sent; kubectl hides priority > 0 unless -o wide.
 * Caller owns the results. */
json_t *api_table_columns(const api_resource *res);
json_t *api_table_cells(const api_resource *res, const json_t *obj, time_t now);

/* The OpenAPI v3 document for one group-version ("" group = core "api/v1"),
 * listing each resource's paths (with the fieldValidation query parameter and
 * x-kubernetes-group-version-kind) and component schemas. Caller owns result. */
json_t *api_openapi_v3(const char *group, const char *version);

/* The index served at GET /openapi/v3: {"paths": {"api/v1": {"serverRelativeURL":
 * "/openapi/v3/api/v1?hash=<hex>"}, "apis/<group>/<version>": {...}}}. The hash is
 * a digest of that document's serialization, stable across calls and
 * processes. Caller owns result. */
json_t *api_openapi_v3_index(void);

/* The Swagger 2.0 document served at GET /openapi/v2: every resource's paths
 * and operations as in the v3 documents, no definitions (openapi_v2.c says
 * why). Caller owns result. */
json_t *api_openapi_v2(void);

/* doc (as api_openapi_v2 makes it) in gnostic's openapi.v2.Document protobuf
 * encoding, which kubectl asks for. Returns a malloc'd buffer the caller frees
 * and its length, or NULL when memory ran out. doc is borrowed. */
char *api_openapi_v2_protobuf(const json_t *doc, size_t *len);

/* Composes kube-apiserver's 422 message from err's causes:
 * `Pod "x" is invalid: metadata.name: Invalid value: ...`, or with several
 * causes `... is invalid: [f1: m1, f2: m2]`. api_prepare already leaves it in
 * err->text; the server may recompose it (e.g. after adding causes). */
void api_format_invalid(const api_resource *res, const char *name, const ty_error *err,
                        char *buf, size_t len);

/* Age cell for a creationTimestamp ("5m", "<unknown>"). */
void api_age(const json_t *obj, time_t now, char *buf, size_t len);

#endif
