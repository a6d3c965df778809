/* schema_types.c - the declared types of a kind's fields, enforced.
 *
 * A ConfigMap whose data values were objects, or a container whose command
 * was an object, used to be stored with 201, and typed clients (kubectl,
 * client-go, the Python client) could not read it back. kube-apiserver
 * refuses both, in two ways:
 *
 * - a built-in kind is decoded into Go structs: the first mismatch is a
 *   400 BadRequest, `ConfigMap in version "v1" cannot be handled as a
 *   ConfigMap: json: cannot unmarshal object into Go struct field
 *   ConfigMap.data of type string` (the innermost struct, the JSON path
 *   from the top without indices or map keys, the Go type);
 * - a custom resource is checked against its OpenAPI schema: a 422 with a
 *   cause per mismatch, `spec.x[0]: Invalid value: "object": spec.x[0] in
 *   body must be of type string: "object"`.
 *
 * null is accepted anywhere (Go leaves the zero value; the job kinds treat
 * it as absent). status is not described and not checked. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/registry.h"
#include "api/schema.h"

/* Where a value is, for both forms of the message: the chain of the keys
 * and indices down to it, formatted only when a mismatch is reported. */
typedef struct tpath {
    const struct tpath *parent;
    const char *key;      /* NULL: an array element */
    size_t index;
    bool map_key;         /* a key of a map, not a field: not in Go's path */
    const char *go_struct; /* the Go struct the field belongs to, at fields */
} tpath;

typedef struct tctx {
    bool go;     /* a built-in kind: stop at the first, Go's message */
    int found;
    ty_error *err;
} tctx;

/* spec.containers[0].command (the OpenAPI form) */
static size_t path_text(const tpath *p, char *out, size_t len)
{
    size_t n;
    int w;

    if (!p)
        return out[0] = '\0', 0;
    n = path_text(p->parent, out, len);
    if (p->key)
        w = snprintf(out + n, len - n, "%s%s", n ? "." : "", p->key);
    else
        w = snprintf(out + n, len - n, "[%zu]", p->index);
    if (w < 0)
        return n;
    return n + (size_t)w < len ? n + (size_t)w : len - 1;
}

/* spec.containers.command (Go's form: fields only) */
static size_t go_path_text(const tpath *p, char *out, size_t len)
{
    size_t n;
    int w;

    if (!p)
        return out[0] = '\0', 0;
    n = go_path_text(p->parent, out, len);
    if (!p->key || p->map_key)
        return n;
    w = snprintf(out + n, len - n, "%s%s", n ? "." : "", p->key);
    if (w < 0)
        return n;
    return n + (size_t)w < len ? n + (size_t)w : len - 1;
}

static const char *go_struct_of(const tpath *p)
{
    for (; p; p = p->parent)
        if (p->go_struct)
            return p->go_struct;
    return "";
}

/* The Go types of the open fields of the core/v1 schemas, whose contents
 * are not described; others are named from the field (securityContext:
 * SecurityContext), which is mostly right. */
static const char *const open_go_types[][2] = {
    {"valueFrom", "EnvVarSource"},        {"envFrom", "EnvFromSource"},
    {"resizePolicy", "ContainerResizePolicy"}, {"volumeDevices", "VolumeDevice"},
    {"livenessProbe", "Probe"},           {"readinessProbe", "Probe"},
    {"startupProbe", "Probe"},            {"dnsConfig", "PodDNSConfig"},
    {"readinessGates", "PodReadinessGate"}, {"topologySpreadConstraints", "TopologySpreadConstraint"},
    {"os", "PodOS"},                      {"schedulingGates", "PodSchedulingGate"},
    {"resourceClaims", "PodResourceClaim"}, {"claims", "ResourceClaim"},
    {"managedFields", "ManagedFieldsEntry"}, {"matchExpressions", "LabelSelectorRequirement"},
    {"involvedObject", "ObjectReference"}, {"related", "ObjectReference"},
    {"source", "EventSource"},            {"series", "EventSeries"},
    {"taints", "Taint"},                  {"configSource", "NodeConfigSource"},
    {"sessionAffinityConfig", "SessionAffinityConfig"},
};

static void go_named(const char *field, const api_schema *s, char *out, size_t len)
{
    if (s && s->go_name) {
        snprintf(out, len, "v1.%s", s->go_name);
        return;
    }
    for (size_t i = 0; i < sizeof(open_go_types) / sizeof(*open_go_types); i++)
        if (strcmp(open_go_types[i][0], field) == 0) {
            snprintf(out, len, "v1.%s", open_go_types[i][1]);
            return;
        }
    snprintf(out, len, "v1.%c%s", field[0] >= 'a' && field[0] <= 'z' ? field[0] - 32 : field[0],
             field[0] ? field + 1 : "");
}

/* The Go type of a value of type t (a field's, or its elements'). */
static void go_type(api_type t, const char *field, const api_schema *s, char *out, size_t len)
{
    switch (t) {
    case API_T_STRING: snprintf(out, len, "string"); return;
    case API_T_INTEGER: snprintf(out, len, "int64"); return;
    case API_T_INT32: snprintf(out, len, "int32"); return;
    case API_T_NUMBER: snprintf(out, len, "float64"); return;
    case API_T_BOOLEAN: snprintf(out, len, "bool"); return;
    case API_T_INT_OR_STRING: snprintf(out, len, "intstr.IntOrString"); return;
    case API_T_QUANTITY: snprintf(out, len, "resource.Quantity"); return;
    default: go_named(field, s, out, len); return;
    }
}

static void go_field_type(const api_field *f, char *out, size_t len)
{
    char el[96];

    if (f->type == API_T_ARRAY) {
        go_type(f->item_type, f->name, f->schema, el, sizeof(el));
        snprintf(out, len, "[]%s", el);
    } else if (f->type == API_T_MAP && f->item_type == API_T_QUANTITY) {
        snprintf(out, len, "v1.ResourceList");
    } else if (f->type == API_T_MAP) {
        go_type(f->item_type, f->name, f->schema, el, sizeof(el));
        snprintf(out, len, "map[string]%s", el);
    } else {
        go_type(f->type, f->name, f->schema, out, len);
    }
}

/* A map of base64 strings that Go holds as bytes (Secret.data,
 * ConfigMap.binaryData: map[string][]byte). */
static bool bytes_map(const char *go_struct, const api_field *f)
{
    return f->type == API_T_MAP &&
           ((!strcmp(go_struct, "Secret") && !strcmp(f->name, "data")) ||
            (!strcmp(go_struct, "ConfigMap") && !strcmp(f->name, "binaryData")));
}

/* What a JSON value is, in OpenAPI's words and in Go's (which gives a
 * number's text). */
const char *api_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static void go_kind(const json_t *v, api_type want, char *out, size_t len)
{
    /* a number's text only where an integer was wanted (Go parses it) */
    if (json_is_number(v) && want != API_T_INTEGER && want != API_T_INT32) {
        snprintf(out, len, "number");
        return;
    }
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        snprintf(out, len, "number %" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    case JSON_REAL:
        snprintf(out, len, "number %.17g", json_real_value(v));
        return;
    case JSON_TRUE:
    case JSON_FALSE:
        snprintf(out, len, "bool");
        return;
    default:
        snprintf(out, len, "%s", api_json_type_name(v));
        return;
    }
}

/* Whether v is a t; *int_range: a whole number out of int32's range (Go
 * says so with the number, OpenAPI does not check it). */
static bool fits(api_type t, const json_t *v, bool *int_range)
{
    *int_range = false;
    if (json_is_null(v))
        return true;
    switch (t) {
    case API_T_STRING: return json_is_string(v);
    case API_T_INTEGER: return json_is_integer(v);
    case API_T_INT32:
        if (!json_is_integer(v))
            return false;
        *int_range = json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX;
        return !*int_range;
    case API_T_NUMBER: return json_is_number(v);
    case API_T_BOOLEAN: return json_is_boolean(v);
    case API_T_INT_OR_STRING:
    case API_T_QUANTITY: return json_is_integer(v) || json_is_string(v) || json_is_real(v);
    case API_T_OBJECT:
    case API_T_OPEN:
    case API_T_MAP: return json_is_object(v);
    case API_T_ARRAY: return json_is_array(v);
    default: return true;
    }
}

static const char *openapi_type_name(api_type t)
{
    switch (t) {
    case API_T_STRING: return "string";
    case API_T_INTEGER:
    case API_T_INT32: return "integer";
    case API_T_NUMBER: return "number";
    case API_T_BOOLEAN: return "boolean";
    case API_T_INT_OR_STRING:
    case API_T_QUANTITY: return "integer,string";
    case API_T_ARRAY: return "array";
    default: return "object";
    }
}

/* A mismatch of v at p, which should be a t; f is the field it is (or
 * whose element it is, el). Go's message gives a number's text, which says
 * why for one out of int32's range. */
static void mismatch(tctx *c, const tpath *p, const api_field *f, bool el, api_type t,
                     const json_t *v)
{
    char path[512];

    c->found++;
    if (c->go) {
        char gp[512], gt[128], gk[64];
        if (c->found > 1)
            return;
        if (t == API_T_QUANTITY) {
            /* resource.Quantity decodes itself */
            ty_seterr(c->err, TY_EBADREQUEST,
                      "quantities must match the regular expression "
                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
            return;
        }
        go_kind(v, t, gk, sizeof(gk));
        if (t == API_T_INT_OR_STRING) {
            ty_seterr(c->err, TY_EBADREQUEST,
                      "json: cannot unmarshal %s into Go value of type int32", gk);
            return;
        }
        go_path_text(p, gp, sizeof(gp));
        if (bytes_map(go_struct_of(p), f))
            snprintf(gt, sizeof(gt), "%s", el ? "[]uint8" : "map[string][]uint8");
        else if (el)
            go_type(f->item_type, f->name, f->schema, gt, sizeof(gt));
        else
            go_field_type(f, gt, sizeof(gt));
        ty_seterr(c->err, TY_EBADREQUEST,
                  "json: cannot unmarshal %s into Go struct field %s.%s of type %s", gk,
                  go_struct_of(p), gp, gt);
        return;
    }
    path_text(p, path, sizeof(path));
    ty_error_add_cause(c->err, "FieldValueInvalid", path,
                       "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
                       api_json_type_name(v), path, openapi_type_name(t), api_json_type_name(v));
}

static void check_object(tctx *c, const api_schema *s, const json_t *v, const tpath *p,
                         int depth);

/* v at p, which should be a t (with schema s when an object); f: the field
 * it is, or whose element (el) it is. */
static void check_value(tctx *c, const api_field *f, bool el, api_type t, const api_schema *s,
                        const json_t *v, const tpath *p, int depth)
{
    bool int_range;

    if (c->go && c->found)
        return;
    if (t == API_T_ANY)
        return;
    if (!fits(t, v, &int_range)) {
        /* OpenAPI's integer has no range; Go's int32 has */
        if (!int_range || c->go)
            mismatch(c, p, f, el, t, v);
        return;
    }
    if (t == API_T_OBJECT && json_is_object(v))
        check_object(c, s, v, p, depth + 1);
}

static void check_field(tctx *c, const api_field *f, const json_t *v, const tpath *p, int depth)
{
    bool int_range;
    size_t i;
    const char *k;
    json_t *m;

    if (f->type != API_T_ARRAY && f->type != API_T_MAP) {
        check_value(c, f, false, f->type, f->schema, v, p, depth);
        return;
    }
    if (!fits(f->type, v, &int_range)) {
        mismatch(c, p, f, false, f->type, v);
        return;
    }
    if (json_is_array(v)) {
        json_array_foreach(v, i, m) {
            tpath sub = {.parent = p, .index = i};
            check_value(c, f, true, f->item_type, f->schema, m, &sub, depth + 1);
        }
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, m) {
            tpath sub = {.parent = p, .key = k, .map_key = true};
            check_value(c, f, true, f->item_type, f->schema, m, &sub, depth + 1);
        }
    }
}

/* The fields of object v that s describes (others were the unknown-field
 * check's to report); its Go struct is named at p. */
static void check_object(tctx *c, const api_schema *s, const json_t *v, const tpath *p,
                         int depth)
{
    const char *k;
    json_t *m;

    if (!s || depth > 64)
        return;
    json_object_foreach((json_t *)v, k, m) {
        const api_field *f = api_schema_field(s, k);
        tpath sub = {.parent = p, .key = k, .go_struct = s->go_name};
        if (f)
            check_field(c, f, m, &sub, depth);
        if (c->go && c->found)
            return;
    }
}

/* apiVersion, kind and metadata, which a kind's schema leaves implied */
static const api_field implied_fields[] = {
    API_FIELD("apiVersion", API_T_STRING),
    API_FIELD("kind", API_T_STRING),
    API_OBJECT("metadata", &api_schema_object_meta),
};
static const api_schema implied = API_SCHEMA(implied_fields);

int api_check_types(const api_resource *res, const json_t *obj, ty_error *err)
{
    tctx c = {.go = res->builtin, .err = err};
    const char *k;
    json_t *m;

    if (!json_is_object(obj))
        return 0;
    json_object_foreach((json_t *)obj, k, m) {
        const api_field *f = res->schema ? api_schema_field(res->schema, k) : NULL;
        tpath top = {.key = k, .go_struct = res->kind};
        if (strcmp(k, "status") == 0)
            continue;
        if (!f)
            f = api_schema_field(&implied, k);
        if (f)
            check_field(&c, f, m, &top, 0);
        if (c.go && c.found)
            break;
    }
    if (!c.found)
        return 0;
    if (c.go) {
        char msg[sizeof(err->text)];
        snprintf(msg, sizeof(msg), "%s", err->text);
        ty_seterr(err, TY_EBADREQUEST, "%s in version \"%s\" cannot be handled as a %s: %s",
                  res->kind, res->version, res->kind, msg);
    } else {
        err->code = TY_EINVALID;
    }
    return -1;
}
