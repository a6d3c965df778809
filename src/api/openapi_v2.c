/* openapi_v2.c - /openapi/v2: the Swagger 2.0 document, in JSON and in the
 * protobuf form kubectl asks for (gnostic's openapi.v2.Document).
 *
 * kubectl validates with /openapi/v3 first. For a kind no v3 document
 * names (a kind the server does not serve) it falls back to /openapi/v2, and
 * when that answers 404 it stops with "error validating data: the server
 * could not find the requested resource" before it ever looks the kind up;
 * with a v2 document it goes on to the REST mapping and says, as a cluster
 * does, `no matches for kind "Foo" in version "example.com/v1"`.
 *
 * The document lists the same paths and operations as the v3 documents (each
 * with x-kubernetes-group-version-kind, x-kubernetes-action and the
 * fieldValidation parameter, which is what kubectl reads from v2) and no
 * definitions. Definitions are what kubectl's client-side validation checks
 * manifests against, and it only uses them where the server cannot validate
 * (items of a `kind: List`); without them it leaves those to the server's own
 * strict validation instead of to a second copy of every schema that could
 * drift from the first (see docs/compatibility.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "base/buf.h"

/* ---- the JSON document -------------------------------------------------- */

static json_t *v2_param(const json_t *p3)
{
    const json_t *schema = json_object_get(p3, "schema");
    json_t *p = json_pack("{s:O, s:O}", "name", json_object_get(p3, "name"), "in",
                          json_object_get(p3, "in"));
    const char *keys[] = {"description", "required"};

    for (size_t i = 0; i < 2; i++)
        if (json_object_get(p3, keys[i]))
            json_object_set(p, keys[i], json_object_get(p3, keys[i]));
    if (json_object_get(schema, "type"))
        json_object_set(p, "type", json_object_get(schema, "type"));
    if (json_is_true(json_object_get(schema, "uniqueItems")))
        json_object_set_new(p, "uniqueItems", json_true());
    return p;
}

static json_t *v2_params(const json_t *a3)
{
    json_t *a = json_array(), *p;
    size_t i;

    json_array_foreach(a3, i, p)
        json_array_append_new(a, v2_param(p));
    return a;
}

static json_t *v2_operation(const json_t *op3)
{
    json_t *op = json_object(), *consumes = json_array(), *resp = json_object(), *v;
    const json_t *body = json_object_get(json_object_get(op3, "requestBody"), "content");
    const char *key;

    json_object_foreach((json_t *)op3, key, v) {
        if (strcmp(key, "tags") == 0 || strcmp(key, "description") == 0 ||
            strcmp(key, "operationId") == 0 || strncmp(key, "x-", 2) == 0)
            json_object_set(op, key, v);
    }
    json_object_foreach((json_t *)body, key, v)
        json_array_append_new(consumes, json_string(key));
    if (json_array_size(consumes))
        json_object_set(op, "consumes", consumes);
    json_decref(consumes);
    json_object_set_new(op, "produces", json_pack("[s, s]", "application/json",
                                                  "application/yaml"));
    json_object_set_new(op, "parameters", v2_params(json_object_get(op3, "parameters")));
    json_object_foreach(json_object_get(op3, "responses"), key, v)
        json_object_set_new(resp, key, json_pack("{s:O}", "description",
                                                 json_object_get(v, "description")));
    json_object_set_new(op, "responses", resp);
    return op;
}

static const char *const methods[] = {"get", "put", "post", "delete", "patch"};

static void add_paths(json_t *paths, const json_t *paths3)
{
    const char *path;
    json_t *item3;

    json_object_foreach((json_t *)paths3, path, item3) {
        json_t *item = json_object();
        for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
            const json_t *op3 = json_object_get(item3, methods[m]);
            if (op3)
                json_object_set_new(item, methods[m], v2_operation(op3));
        }
        if (json_object_get(item3, "parameters"))
            json_object_set_new(item, "parameters",
                                v2_params(json_object_get(item3, "parameters")));
        json_object_set_new(paths, path, item);
    }
}

json_t *api_openapi_v2(void)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *paths = json_object(), *seen = json_object();

    for (size_t i = 0; i < n; i++) {
        char key[160];
        json_t *doc;
        snprintf(key, sizeof(key), "%s/%s", all[i]->group, all[i]->version);
        if (json_object_get(seen, key))
            continue;
        json_object_set_new(seen, key, json_true());
        doc = api_openapi_v3(all[i]->group, all[i]->version);
        add_paths(paths, json_object_get(doc, "paths"));
        json_decref(doc);
    }
    json_decref(seen);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{}}", "swagger", "2.0", "info", "title",
                     "Kubernetes", "version", "v1.32.0", "paths", paths, "definitions");
}

/* ---- protobuf ----------------------------------------------------------- */

/* Field numbers of gnostic's openapi.v2 messages, the subset written here. */
enum {
    DOC_SWAGGER = 1, DOC_INFO = 2, DOC_PATHS = 8,
    INFO_TITLE = 1, INFO_VERSION = 2,
    PATHS_PATH = 2,                 /* NamedPathItem */
    NAMED_NAME = 1, NAMED_VALUE = 2, /* every Named* message */
    ITEM_PARAMETERS = 9,            /* PathItem; get..patch are 2, 3, 4, 5, 8 */
    OP_TAGS = 1, OP_DESCRIPTION = 3, OP_ID = 5, OP_PRODUCES = 6, OP_CONSUMES = 7,
    OP_PARAMETERS = 8, OP_RESPONSES = 9, OP_EXTENSION = 13,
    RESPONSES_CODE = 1,             /* NamedResponseValue */
    RESPONSE_VALUE_RESPONSE = 1, RESPONSE_DESCRIPTION = 1,
    PARAMS_ITEM_PARAMETER = 1, PARAMETER_NON_BODY = 2,
    NON_BODY_HEADER = 1, NON_BODY_QUERY = 3, NON_BODY_PATH = 4,
    SUB_REQUIRED = 1, SUB_IN = 2, SUB_DESCRIPTION = 3, SUB_NAME = 4,
    ANY_YAML = 2,
};

static const int method_fields[] = {2, 3, 4, 5, 8}; /* PathItem, in methods[] order */

/* A writer that remembers a failed allocation instead of checking each
 * append: the document is thrown away as a whole when any part failed. */
typedef struct pbw {
    ty_buf b;
    bool failed;
} pbw;

static void put_raw(pbw *w, const void *p, size_t n)
{
    if (ty_buf_append(&w->b, p, n) != 0)
        w->failed = true;
}

static void put_varint(pbw *w, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;

    do {
        tmp[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    put_raw(w, tmp, n);
}

static void put_bytes(pbw *w, int field, const void *p, size_t n)
{
    put_varint(w, (uint64_t)field << 3 | 2);
    put_varint(w, n);
    put_raw(w, p, n);
}

/* Proto3 leaves empty strings and false out. */
static void put_string(pbw *w, int field, const char *s)
{
    if (s && *s)
        put_bytes(w, field, s, strlen(s));
}

static void put_bool(pbw *w, int field, bool v)
{
    if (v) {
        put_varint(w, (uint64_t)field << 3);
        put_varint(w, 1);
    }
}

/* Appends sub as a length-delimited field of w and frees it. */
static void put_message(pbw *w, int field, pbw *sub)
{
    w->failed |= sub->failed;
    put_bytes(w, field, sub->b.data ? sub->b.data : "", sub->b.len);
    ty_buf_free(&sub->b);
}

static void put_strings(pbw *w, int field, const json_t *a)
{
    size_t i;
    json_t *s;

    json_array_foreach(a, i, s)
        put_string(w, field, json_string_value(s));
}

/* NonBodyParameter's sub-schemas share their first four fields; type sits at
 * 6 in the query form (after allowEmptyValue) and at 5 in the others, and
 * uniqueItems at 20 and 19. */
static void put_parameter(pbw *w, const json_t *p)
{
    const char *in = json_string_value(json_object_get(p, "in"));
    pbw sub = {0}, nb = {0}, par = {0};
    bool query = in && strcmp(in, "query") == 0;
    int which = query ? NON_BODY_QUERY
                      : in && strcmp(in, "header") == 0 ? NON_BODY_HEADER : NON_BODY_PATH;

    put_bool(&sub, SUB_REQUIRED, json_is_true(json_object_get(p, "required")));
    put_string(&sub, SUB_IN, in);
    put_string(&sub, SUB_DESCRIPTION, json_string_value(json_object_get(p, "description")));
    put_string(&sub, SUB_NAME, json_string_value(json_object_get(p, "name")));
    put_string(&sub, query ? 6 : 5, json_string_value(json_object_get(p, "type")));
    put_bool(&sub, query ? 20 : 19, json_is_true(json_object_get(p, "uniqueItems")));
    put_message(&nb, which, &sub);
    put_message(&par, PARAMETER_NON_BODY, &nb);
    put_message(w, PARAMS_ITEM_PARAMETER, &par);
}

static void put_parameters(pbw *w, int field, const json_t *a)
{
    size_t i;
    json_t *p;

    json_array_foreach(a, i, p) {
        pbw item = {0};
        put_parameter(&item, p);
        put_message(w, field, &item);
    }
}

/* A vendor extension is a NamedAny whose Any carries the value as YAML; a
 * compact JSON text is YAML, and is what kubectl unmarshals
 * x-kubernetes-group-version-kind from. */
static void put_extension(pbw *w, int field, const char *name, const json_t *v)
{
    char *yaml = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    pbw any = {0}, named = {0};

    if (!yaml) {
        w->failed = true;
        return;
    }
    put_string(&any, ANY_YAML, yaml);
    free(yaml);
    put_string(&named, NAMED_NAME, name);
    put_message(&named, NAMED_VALUE, &any);
    put_message(w, field, &named);
}

static void put_operation(pbw *w, int field, const json_t *op)
{
    pbw o = {0}, rs = {0};
    const char *key;
    json_t *v;

    put_strings(&o, OP_TAGS, json_object_get(op, "tags"));
    put_string(&o, OP_DESCRIPTION, json_string_value(json_object_get(op, "description")));
    put_string(&o, OP_ID, json_string_value(json_object_get(op, "operationId")));
    put_strings(&o, OP_PRODUCES, json_object_get(op, "produces"));
    put_strings(&o, OP_CONSUMES, json_object_get(op, "consumes"));
    put_parameters(&o, OP_PARAMETERS, json_object_get(op, "parameters"));
    json_object_foreach(json_object_get(op, "responses"), key, v) {
        pbw resp = {0}, val = {0}, named = {0};
        put_string(&resp, RESPONSE_DESCRIPTION,
                   json_string_value(json_object_get(v, "description")));
        put_message(&val, RESPONSE_VALUE_RESPONSE, &resp);
        put_string(&named, NAMED_NAME, key);
        put_message(&named, NAMED_VALUE, &val);
        put_message(&rs, RESPONSES_CODE, &named);
    }
    put_message(&o, OP_RESPONSES, &rs);
    json_object_foreach((json_t *)op, key, v)
        if (strncmp(key, "x-", 2) == 0)
            put_extension(&o, OP_EXTENSION, key, v);
    put_message(w, field, &o);
}

static void put_path_item(pbw *w, const char *path, const json_t *item)
{
    pbw named = {0}, pi = {0};

    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
        const json_t *op = json_object_get(item, methods[m]);
        if (op)
            put_operation(&pi, method_fields[m], op);
    }
    put_parameters(&pi, ITEM_PARAMETERS, json_object_get(item, "parameters"));
    put_string(&named, NAMED_NAME, path);
    put_message(&named, NAMED_VALUE, &pi);
    put_message(w, PATHS_PATH, &named);
}

char *api_openapi_v2_protobuf(const json_t *doc, size_t *len)
{
    pbw w = {0}, info = {0}, paths = {0};
    const json_t *inf = json_object_get(doc, "info");
    const char *path;
    json_t *item;

    put_string(&w, DOC_SWAGGER, json_string_value(json_object_get(doc, "swagger")));
    put_string(&info, INFO_TITLE, json_string_value(json_object_get(inf, "title")));
    put_string(&info, INFO_VERSION, json_string_value(json_object_get(inf, "version")));
    put_message(&w, DOC_INFO, &info);
    json_object_foreach(json_object_get(doc, "paths"), path, item)
        put_path_item(&paths, path, item);
    put_message(&w, DOC_PATHS, &paths);
    if (w.failed) {
        ty_buf_free(&w.b);
        return NULL;
    }
    return ty_buf_steal(&w.b, len);
}
