/* openapi.c - /openapi/v3: one OpenAPI 3.0 document per group-version and the
 * index that points at them.
 *
 * kubectl 1.32 needs this much before it will `apply` without --validate=false:
 * a PATCH operation per kind carrying x-kubernetes-group-version-kind and a
 * query parameter named fieldValidation (it then leaves validation to the
 * server), and a component schema carrying x-kubernetes-group-version-kind.
 * For built-in kinds the PATCH body lists application/strategic-merge-patch+json
 * and the schemas carry x-kubernetes-patch-merge-key/-strategy, which is where
 * kubectl looks up how to merge lists such as containers. `kubectl explain`
 * walks the same component schemas.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "api/schema.h"

#define META_PREFIX "io.k8s.apimachinery.pkg.apis.meta.v1."
#define REF_PREFIX "#/components/schemas/"

/* ---- names -------------------------------------------------------------- */

/* Component name prefix: "io.k8s.api.core.v1", "io.k8s.api.scheduling.v1",
 * and for custom resources the reversed group, as a cluster names CRD
 * schemas: "org.kubeflow.v1", "sh.volcano.batch.v1alpha1". */
static void schema_prefix(const api_resource *res, char *buf, size_t len)
{
    const char *g = res->group;
    size_t used = 0;

    if (!*g) {
        snprintf(buf, len, "io.k8s.api.core.%s", res->version);
        return;
    }
    if (res->builtin) {
        const char *dot = strstr(g, ".k8s.io");
        int n = dot ? (int)(dot - g) : (int)strlen(g);
        snprintf(buf, len, "io.k8s.api.%.*s.%s", n, g, res->version);
        return;
    }
    buf[0] = '\0';
    for (const char *end = g + strlen(g); end > g && used < len;) {
        const char *start = end;
        while (start > g && start[-1] != '.')
            start--;
        int w = snprintf(buf + used, len - used, "%s%.*s", used ? "." : "",
                         (int)(end - start), start);
        used += w > 0 ? (size_t)w : 0;
        end = start > g ? start - 1 : g;
    }
    if (used < len)
        snprintf(buf + used, len - used, ".%s", res->version);
}

static void schema_name(const api_resource *res, const char *kind, char *buf, size_t len)
{
    char prefix[160];
    schema_prefix(res, prefix, sizeof(prefix));
    snprintf(buf, len, "%s.%s", prefix, kind);
}

static json_t *ref(const char *name)
{
    char buf[320];
    snprintf(buf, sizeof(buf), REF_PREFIX "%s", name);
    return json_pack("{s:s}", "$ref", buf);
}

/* "kubeflow.org" + "v1" -> "KubeflowOrgV1"; core -> "CoreV1". */
static void op_group(const api_resource *res, char *buf, size_t len)
{
    const char *g = *res->group ? res->group : "core";
    size_t used = 0;
    bool up = true;

    for (const char *p = g; *p && used + 1 < len; p++) {
        if (*p == '.' || *p == '-') {
            up = true;
            continue;
        }
        buf[used++] = up ? (char)toupper((unsigned char)*p) : *p;
        up = false;
    }
    buf[used] = '\0';
    if (used < len)
        snprintf(buf + used, len - used, "%c%s", toupper((unsigned char)res->version[0]),
                 res->version + 1);
}

static json_t *gvk(const api_resource *res, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", res->group, "version", res->version,
                     "kind", kind);
}

/* ---- parameters --------------------------------------------------------- */

static json_t *param(const char *name, const char *in, const char *type, const char *desc)
{
    json_t *p = json_pack("{s:s, s:s, s:s, s:{s:s, s:b}}", "name", name, "in", in,
                          "description", desc, "schema", "type", type, "uniqueItems", 1);
    if (strcmp(in, "path") == 0)
        json_object_set_new(p, "required", json_true());
    return p;
}

static json_t *write_params(bool patch)
{
    json_t *a = json_array();

    json_array_append_new(a, param("dryRun", "query", "string",
        "When present, indicates that modifications should not be persisted. Valid values "
        "are: - All: all dry run stages will be processed"));
    json_array_append_new(a, param("fieldManager", "query", "string",
        "fieldManager is a name associated with the actor or entity that is making these "
        "changes."));
    json_array_append_new(a, param("fieldValidation", "query", "string",
        "fieldValidation instructs the server on how to handle objects in the request "
        "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: "
        "This will ignore any unknown fields that are silently dropped from the object, and "
        "will ignore all but the last duplicate field that the decoder encounters. - Warn: "
        "This will send a warning via the standard warning response header for each unknown "
        "field that is dropped from the object, and for each duplicate field that is "
        "encountered. - Strict: This will fail the request with a BadRequest error if any "
        "unknown fields would be dropped from the object, or if any duplicate fields are "
        "present. The error returned from the server will contain all unknown and duplicate "
        "fields encountered."));
    if (patch)
        json_array_append_new(a, param("force", "query", "boolean",
            "Force is going to \"force\" Apply requests. It means user will re-acquire "
            "conflicting fields owned by other people."));
    return a;
}

static json_t *list_params(void)
{
    static const char *const names[][2] = {
        {"allowWatchBookmarks", "boolean"}, {"continue", "string"},
        {"fieldSelector", "string"}, {"labelSelector", "string"}, {"limit", "integer"},
        {"resourceVersion", "string"}, {"resourceVersionMatch", "string"},
        {"sendInitialEvents", "boolean"}, {"timeoutSeconds", "integer"},
        {"watch", "boolean"},
    };
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        json_array_append_new(a, param(names[i][0], "query", names[i][1], names[i][0]));
    return a;
}

static json_t *delete_params(void)
{
    json_t *a = json_array();
    json_array_append_new(a, param("dryRun", "query", "string", "dryRun"));
    json_array_append_new(a, param("gracePeriodSeconds", "query", "integer",
                                   "The duration in seconds before the object should be "
                                   "deleted."));
    json_array_append_new(a, param("propagationPolicy", "query", "string",
                                   "Whether and how garbage collection will be performed."));
    return a;
}

/* ---- operations --------------------------------------------------------- */

static json_t *content(const char *schema, bool yaml)
{
    json_t *c = json_object();
    json_object_set_new(c, "application/json", json_pack("{s:o}", "schema", ref(schema)));
    if (yaml)
        json_object_set_new(c, "application/yaml", json_pack("{s:o}", "schema", ref(schema)));
    return c;
}

static json_t *responses(const char *schema, bool created)
{
    json_t *r = json_object();
    json_object_set_new(r, "200", json_pack("{s:s, s:o}", "description", "OK",
                                            "content", content(schema, true)));
    if (created)
        json_object_set_new(r, "201", json_pack("{s:s, s:o}", "description", "Created",
                                                "content", content(schema, true)));
    json_object_set_new(r, "401", json_pack("{s:s}", "description", "Unauthorized"));
    return r;
}

typedef struct op_ctx {
    const api_resource *res;
    const char *ns_word;    /* "Namespaced" or "" */
    char kind_schema[256];
    char list_schema[256];
    char group[96];
} op_ctx;

static json_t *operation(const op_ctx *c, const char *verb, const char *action,
                         const char *suffix, json_t *params, json_t *body, json_t *resp)
{
    char id[256], tag[96];
    json_t *op;

    snprintf(id, sizeof(id), "%s%s%s%s%s", verb, c->group, c->ns_word, c->res->kind, suffix);
    snprintf(tag, sizeof(tag), "%c%s", tolower((unsigned char)c->group[0]), c->group + 1);
    op = json_pack("{s:[s], s:s, s:s, s:o, s:o, s:s, s:o}", "tags", tag,
                   "description", action, "operationId", id, "parameters", params,
                   "responses", resp, "x-kubernetes-action", action,
                   "x-kubernetes-group-version-kind", gvk(c->res, c->res->kind));
    if (body)
        json_object_set_new(op, "requestBody", json_pack("{s:o, s:b}", "content", body,
                                                          "required", 1));
    return op;
}

static json_t *patch_body(const op_ctx *c)
{
    static const char *const types[] = {"application/apply-patch+yaml",
        "application/json-patch+json", "application/merge-patch+json",
        "application/strategic-merge-patch+json"};
    json_t *b = json_object();
    size_t n = c->res->builtin ? 4 : 3;

    for (size_t i = 0; i < n; i++)
        json_object_set_new(b, types[i], json_pack("{s:o}", "schema",
                                                   ref(META_PREFIX "Patch")));
    return b;
}

/* Path-level parameters (name, namespace, pretty) shared by a path's operations. */
static json_t *path_params(const api_resource *res, bool named)
{
    json_t *a = json_array();
    char desc[160];

    if (named) {
        snprintf(desc, sizeof(desc), "name of the %s", res->kind);
        json_array_append_new(a, param("name", "path", "string", desc));
    }
    if (res->namespaced)
        json_array_append_new(a, param("namespace", "path", "string",
                                       "object name and auth scope, such as for teams and "
                                       "projects"));
    json_array_append_new(a, param("pretty", "query", "string",
                                   "If 'true', then the output is pretty printed."));
    return a;
}

static void add_paths(json_t *paths, const api_resource *res)
{
    char base[256], p[320];
    op_ctx c = {.res = res, .ns_word = res->namespaced ? "Namespaced" : ""};
    json_t *coll, *item;

    op_group(res, c.group, sizeof(c.group));
    schema_name(res, res->kind, c.kind_schema, sizeof(c.kind_schema));
    schema_name(res, res->list_kind, c.list_schema, sizeof(c.list_schema));
    if (*res->group)
        snprintf(base, sizeof(base), "/apis/%s/%s", res->group, res->version);
    else
        snprintf(base, sizeof(base), "/api/%s", res->version);
    if (res->namespaced)
        snprintf(p, sizeof(p), "%s/namespaces/{namespace}/%s", base, res->plural);
    else
        snprintf(p, sizeof(p), "%s/%s", base, res->plural);

    coll = json_pack("{s:o}", "parameters", path_params(res, false));
    json_object_set_new(coll, "get", operation(&c, "list", "list", "", list_params(), NULL,
                                               responses(c.list_schema, false)));
    json_object_set_new(coll, "post", operation(&c, "create", "post", "", write_params(false),
                                                content(c.kind_schema, true),
                                                responses(c.kind_schema, true)));
    json_object_set_new(paths, p, coll);

    item = json_pack("{s:o}", "parameters", path_params(res, true));
    json_object_set_new(item, "get", operation(&c, "read", "get", "", json_array(), NULL,
                                               responses(c.kind_schema, false)));
    json_object_set_new(item, "put", operation(&c, "replace", "put", "", write_params(false),
                                               content(c.kind_schema, true),
                                               responses(c.kind_schema, true)));
    json_object_set_new(item, "patch", operation(&c, "patch", "patch", "", write_params(true),
                                                 patch_body(&c),
                                                 responses(c.kind_schema, true)));
    json_object_set_new(item, "delete", operation(&c, "delete", "delete", "", delete_params(),
                                                  NULL, responses(META_PREFIX "Status", false)));
    snprintf(p + strlen(p), sizeof(p) - strlen(p), "/{name}");
    json_object_set_new(paths, p, item);

    if (res->has_status) {
        json_t *st = json_pack("{s:o}", "parameters", path_params(res, true));
        json_object_set_new(st, "get", operation(&c, "read", "get", "Status", json_array(),
                                                 NULL, responses(c.kind_schema, false)));
        json_object_set_new(st, "put", operation(&c, "replace", "put", "Status",
                                                 write_params(false), content(c.kind_schema, true),
                                                 responses(c.kind_schema, true)));
        json_object_set_new(st, "patch", operation(&c, "patch", "patch", "Status",
                                                   write_params(true), patch_body(&c),
                                                   responses(c.kind_schema, true)));
        snprintf(p + strlen(p), sizeof(p) - strlen(p), "/status");
        json_object_set_new(paths, p, st);
    }
    if (res->namespaced) {
        /* The list across all namespaces. */
        snprintf(p, sizeof(p), "%s/%s", base, res->plural);
        c.ns_word = "";
        coll = json_pack("{s:o}", "parameters", json_pack("[o]", param("pretty", "query",
                         "string", "If 'true', then the output is pretty printed.")));
        json_object_set_new(coll, "get", operation(&c, "list", "list", "ForAllNamespaces",
                                                   list_params(), NULL,
                                                   responses(c.list_schema, false)));
        json_object_set_new(paths, p, coll);
    }
}

/* ---- component schemas -------------------------------------------------- */

static json_t *meta_ref(const char *name, const char *desc)
{
    return json_pack("{s:[o], s:{}, s:s}", "allOf", ref(name), "default", "description", desc);
}

static void add_type_meta(json_t *props)
{
    json_object_set_new(props, "apiVersion", json_pack("{s:s, s:s}", "type", "string",
        "description", "APIVersion defines the versioned schema of this representation of "
        "an object."));
    json_object_set_new(props, "kind", json_pack("{s:s, s:s}", "type", "string",
        "description", "Kind is a string value representing the REST resource this object "
        "represents."));
}

static void add_kind_schemas(json_t *schemas, const api_resource *res)
{
    char name[256];
    json_t *s = api_schema_openapi(res->schema), *props, *list;

    props = json_object_get(s, "properties");
    if (!props) {
        props = json_object();
        json_object_set_new(s, "properties", props);
    }
    add_type_meta(props);
    json_object_set_new(props, "metadata", meta_ref(META_PREFIX "ObjectMeta",
                                                    "Standard object's metadata."));
    json_object_set_new(s, "x-kubernetes-group-version-kind",
                        json_pack("[o]", gvk(res, res->kind)));
    schema_name(res, res->kind, name, sizeof(name));
    json_object_set_new(schemas, name, s);

    list = json_pack("{s:s, s:[s], s:{}}", "type", "object", "required", "items", "properties");
    props = json_object_get(list, "properties");
    add_type_meta(props);
    json_object_set_new(props, "items", json_pack("{s:s, s:[o]}", "type", "array", "items",
                                                  ref(name)));
    json_object_set_new(props, "metadata", meta_ref(META_PREFIX "ListMeta",
                                                    "Standard list metadata."));
    json_object_set_new(list, "x-kubernetes-group-version-kind",
                        json_pack("[o]", gvk(res, res->list_kind)));
    schema_name(res, res->list_kind, name, sizeof(name));
    json_object_set_new(schemas, name, list);
}

static void add_meta_schemas(json_t *schemas)
{
    json_t *om = api_schema_openapi(&api_schema_object_meta);

    json_object_set_new(schemas, META_PREFIX "ObjectMeta", om);
    json_object_set_new(schemas, META_PREFIX "ListMeta", json_pack(
        "{s:s, s:{s:{s:s}, s:{s:s, s:s}, s:{s:s}, s:{s:s}}}", "type", "object", "properties",
        "continue", "type", "string", "remainingItemCount", "type", "integer", "format", "int64",
        "resourceVersion", "type", "string", "selfLink", "type", "string"));
    json_object_set_new(schemas, META_PREFIX "Patch", json_pack("{s:s, s:s}", "type", "object",
        "description", "Patch is provided to give a concrete name and type to the Kubernetes "
        "PATCH request body."));
    json_object_set_new(schemas, META_PREFIX "Status", json_pack("{s:s, s:b}", "type", "object",
        "x-kubernetes-preserve-unknown-fields", 1));
}

json_t *api_openapi_v3(const char *group, const char *version)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *paths = json_object(), *schemas = json_object();
    size_t found = 0;

    if (!group || !version)
        goto none;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i]->group, group) != 0 || strcmp(all[i]->version, version) != 0)
            continue;
        add_paths(paths, all[i]);
        add_kind_schemas(schemas, all[i]);
        found++;
    }
    if (!found)
        goto none;
    add_meta_schemas(schemas);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0",
                     "info", "title", "Kubernetes", "version", "v1.32.0",
                     "paths", paths, "components", "schemas", schemas);
none:
    json_decref(paths);
    json_decref(schemas);
    return NULL;
}

/* ---- the index ---------------------------------------------------------- */

/* FNV-1a (64 bit) of the document's canonical serialization (sorted keys), so
 * that the hash only changes when the document does. */
static uint64_t doc_hash(const json_t *doc)
{
    char *s = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    uint64_t h = 1469598103934665603ULL;

    for (const char *p = s; p && *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    free(s);
    return h;
}

json_t *api_openapi_v3_index(void)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *paths = json_object();

    for (size_t i = 0; i < n; i++) {
        char key[160], url[256];
        json_t *doc;
        if (*all[i]->group)
            snprintf(key, sizeof(key), "apis/%s/%s", all[i]->group, all[i]->version);
        else
            snprintf(key, sizeof(key), "api/%s", all[i]->version);
        if (json_object_get(paths, key))
            continue;
        doc = api_openapi_v3(all[i]->group, all[i]->version);
        snprintf(url, sizeof(url), "/openapi/v3/%s?hash=%016llX", key,
                 (unsigned long long)doc_hash(doc));
        json_decref(doc);
        json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
    }
    return json_pack("{s:o}", "paths", paths);
}
