/* registry.c - the table of served resources and the steps every kind shares:
 * lookup, store keys, defaulting + validation, strict field checks, tables. */
#include "api/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/timeutil.h"

/* Discovery, the OpenAPI index and `kubectl api-resources` list resources in
 * this order: core first, then each group together. The order of the groups
 * is kubectl's preference for a plural served in two of them: `msjobs` means
 * kubeflow.org's MSJob (as on a cluster, where CRD groups of equal priority
 * come in name order), msjobs.mindspore.gitee.com the other. */
static const api_resource *const resources[] = {
    &api_namespace, &api_node, &api_pod, &api_service, &api_configmap, &api_secret,
    &api_event, &api_pvc, &api_pv, &api_resourcequota, &api_priorityclass, &api_storageclass,
    &api_role, &api_clusterrole, &api_rolebinding, &api_clusterrolebinding,
    &api_lease, &api_crd,
#define TY_FRAMEWORK(kind, plugin) &api_##kind,
#include "api/frameworks.def"
#undef TY_FRAMEWORK
    &api_vcjob, &api_vccronjob, &api_podgroup, &api_queue,
    &api_jobflow, &api_jobtemplate,
    &api_trainjob, &api_trainingruntime, &api_clustertrainingruntime,
    &api_jobrecord,
};
#define NRESOURCES (sizeof(resources) / sizeof(resources[0]))

const api_resource *const *api_resources(size_t *n)
{
    if (n)
        *n = NRESOURCES;
    return resources;
}

const api_resource *api_find(const char *group, const char *version, const char *plural)
{
    if (!group || !version || !plural)
        return NULL;
    for (size_t i = 0; i < NRESOURCES; i++) {
        const api_resource *r = resources[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 &&
            strcmp(r->plural, plural) == 0)
            return r;
    }
    return NULL;
}

const api_resource *api_find_kind(const char *api_version, const char *kind)
{
    const char *slash;
    size_t glen;

    if (!api_version || !kind)
        return NULL;
    slash = strchr(api_version, '/');
    glen = slash ? (size_t)(slash - api_version) : 0;
    for (size_t i = 0; i < NRESOURCES; i++) {
        const api_resource *r = resources[i];
        const char *ver = slash ? slash + 1 : api_version;
        if (strcmp(r->kind, kind) != 0 || strcmp(r->version, ver) != 0)
            continue;
        if (strlen(r->group) == glen && strncmp(r->group, api_version, glen) == 0)
            return r;
    }
    return NULL;
}

/* Store keys are computed once; the table is const so they never change. */
static char store_keys[NRESOURCES][128];
static pthread_once_t store_keys_once = PTHREAD_ONCE_INIT;

/* A resource served in a second version (MPIJob kubeflow.org/v2beta1 beside
 * v1) is another schema, not a conversion: its objects are filed apart, under
 * "<plural>.<version>.<group>", and the first version keeps the plain key
 * (docs/compatibility.md, "Served versions"). */
static void store_keys_init(void)
{
    for (size_t i = 0; i < NRESOURCES; i++) {
        const api_resource *other = api_other_version(resources[i]);
        bool second = false;
        for (size_t j = 0; other && j < i; j++)
            second = second || resources[j] == other;
        if (second)
            snprintf(store_keys[i], sizeof(store_keys[i]), "%s.%s.%s", resources[i]->plural,
                     resources[i]->version, resources[i]->group);
        else
            api_group_resource(resources[i], store_keys[i], sizeof(store_keys[i]));
    }
}

const api_resource *api_other_version(const api_resource *res)
{
    for (size_t i = 0; res && i < NRESOURCES; i++) {
        const api_resource *r = resources[i];
        if (r != res && strcmp(r->group, res->group) == 0 &&
            strcmp(r->plural, res->plural) == 0)
            return r;
    }
    return NULL;
}

const char *api_store_key(const api_resource *res)
{
    pthread_once(&store_keys_once, store_keys_init);
    for (size_t i = 0; i < NRESOURCES; i++)
        if (resources[i] == res)
            return store_keys[i];
    /* Not a table entry (a test double): only core kinds have a plain key. */
    return res->plural;
}

const api_resource *api_find_store_key(const char *key)
{
    if (!key)
        return NULL;
    pthread_once(&store_keys_once, store_keys_init);
    for (size_t i = 0; i < NRESOURCES; i++)
        if (strcmp(store_keys[i], key) == 0)
            return resources[i];
    return NULL;
}

void api_qualified_kind(const api_resource *res, char *buf, size_t len)
{
    if (*res->group)
        snprintf(buf, len, "%s.%s", res->kind, res->group);
    else
        snprintf(buf, len, "%s", res->kind);
}

void api_group_resource(const api_resource *res, char *buf, size_t len)
{
    if (*res->group)
        snprintf(buf, len, "%s.%s", res->plural, res->group);
    else
        snprintf(buf, len, "%s", res->plural);
}

void api_version_string(const api_resource *res, char *buf, size_t len)
{
    if (*res->group)
        snprintf(buf, len, "%s/%s", res->group, res->version);
    else
        snprintf(buf, len, "%s", res->version);
}

/* The name rule of each kind, as upstream validates metadata.name. */
static meta_name_rule name_rule(const api_resource *res)
{
    if (res == &api_namespace)
        return META_NAME_DNS1123_LABEL;
    if (res == &api_service)
        return META_NAME_DNS1035_LABEL;
    if (res == &api_vcjob)
        return META_NAME_DNS1123_LABEL;
    if (strcmp(res->group, api_role.group) == 0)
        return META_NAME_PATH_SEGMENT; /* system:basic-user */
    /* The job kinds add their DNS-1035 rule in their own validate (as the
     * operators' webhooks do); the API server itself checks a subdomain. */
    return META_NAME_SUBDOMAIN;
}

/* apiVersion and kind in a body must name this resource; absent ones are filled. */
static void check_type_meta(const api_resource *res, json_t *obj, ty_error *err)
{
    char want[128];
    const char *av = meta_str(obj, "apiVersion");
    const char *kind = meta_str(obj, "kind");

    api_version_string(res, want, sizeof(want));
    if (av && *av && strcmp(av, want) != 0)
        meta_invalid_str(err, "apiVersion", av, "must be %s", want);
    else if (!av || !*av)
        json_object_set_new(obj, "apiVersion", json_string(want));
    if (kind && *kind && strcmp(kind, res->kind) != 0)
        meta_invalid_str(err, "kind", kind, "must be %s", res->kind);
    else if (!kind || !*kind)
        json_object_set_new(obj, "kind", json_string(res->kind));
}

void api_format_invalid(const api_resource *res, const char *name, const ty_error *err,
                        char *buf, size_t len)
{
    char qkind[160];
    size_t n = ty_error_ncauses(err), used;
    int w;

    api_qualified_kind(res, qkind, sizeof(qkind));
    w = snprintf(buf, len, "%s \"%s\" is invalid: %s", qkind, name ? name : "",
                 n > 1 ? "[" : "");
    used = w < 0 ? 0 : (size_t)w;
    for (size_t i = 0; i < n && used < len; i++) {
        json_t *c = json_array_get(err->causes, i);
        const char *field = meta_str(c, "field");
        w = snprintf(buf + used, len - used, "%s%s%s%s", i ? ", " : "",
                     field && *field ? field : "", field && *field ? ": " : "",
                     meta_str(c, "message") ? meta_str(c, "message") : "");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (n > 1 && used < len)
        snprintf(buf + used, len - used, "]");
}

int api_prepare(const api_resource *res, json_t *obj, const json_t *old, ty_error *err)
{
    ty_error local;
    ty_error *e = err ? err : &local;
    const char *name;
    json_t *meta;
    size_t before;

    if (!err)
        ty_error_init(&local);
    if (!json_is_object(obj)) {
        ty_seterr(e, TY_EBADREQUEST, "the object must be a JSON object");
        goto fail;
    }
    meta = json_object_get(obj, "metadata");
    if (meta && !json_is_object(meta)) {
        ty_seterr(e, TY_EBADREQUEST, "metadata must be an object");
        goto fail;
    }
    if (!meta)
        json_object_set_new(obj, "metadata", json_object());
    meta = json_object_get(obj, "metadata");

    before = ty_error_ncauses(e);
    check_type_meta(res, obj, e);
    if (res->apply_defaults)
        res->apply_defaults(obj);
    /* A custom resource's types are its OpenAPI schema's to check, after
     * defaulting as upstream's webhook (replica keys made canonical), and
     * the kind's rules are not asked about mistyped fields. A built-in
     * kind's are decoding's (api_check_types before this). */
    if (!res->builtin && api_check_types(res, obj, e) < 0)
        goto invalid;
    meta_check_object_meta(meta, name_rule(res), res->namespaced, e);
    if (res->validate && res->validate(obj, old, e) != 0 && ty_error_ncauses(e) == before)
        meta_invalid(e, "", obj, "invalid object");
    if (ty_error_ncauses(e) == before)
        return 0;
invalid:
    name = meta_str(meta, "name");
    if (!name || !*name)
        name = meta_str(meta, "generateName");
    e->code = TY_EINVALID;
    api_format_invalid(res, name, e, e->text, sizeof(e->text));
fail:
    if (!err)
        ty_error_clear(&local);
    return -1;
}

int api_check_unknown_fields(const api_resource *res, const json_t *obj, ty_error *err)
{
    const char *key;
    json_t *val;
    int n = 0;

    if (!json_is_object(obj))
        return 0;
    json_object_foreach((json_t *)obj, key, val) {
        const api_field *f = res->schema ? api_schema_field(res->schema, key) : NULL;
        if (strcmp(key, "status") == 0)
            continue;
        if (strcmp(key, "metadata") == 0 && (!f || f->type != API_T_OBJECT)) {
            n += api_schema_check(&api_schema_object_meta, val, "metadata", err);
            continue;
        }
        if (!f && (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0))
            continue;
        if (!res->schema)
            continue;
        if (!f) {
            if (!res->schema->preserve_unknown) {
                ty_error_add_cause(err, "FieldValueInvalid", key, "unknown field \"%s\"", key);
                n++;
            }
            continue;
        }
        /* Check the field through a one-field schema so that arrays and maps
         * are walked by the same code as nested fields. */
        api_schema one = {.fields = f, .nfields = 1};
        json_t *wrap = json_pack("{s:O}", key, val);
        n += api_schema_check(&one, wrap, "", err);
        json_decref(wrap);
    }
    return n;
}

/* Every table starts with the name, except events: upstream prints them
 * LAST SEEN first and keeps the name as a wide column of their own. */
static bool has_name_column(const api_resource *res)
{
    return res != &api_event;
}

json_t *api_table_columns(const api_resource *res)
{
    json_t *cols = json_array();

    if (has_name_column(res))
        json_array_append_new(cols, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Name",
        "type", "string", "format", "name", "description",
        "Name must be unique within a namespace. Is required when creating resources, "
        "although some resources may allow a client to request the generation of an "
        "appropriate name automatically. Name is primarily intended for creation "
        "idempotence and configuration definition. Cannot be updated.",
        "priority", 0));
    for (size_t i = 0; i < res->ncolumns; i++) {
        const api_column *c = &res->columns[i];
        json_array_append_new(cols, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", c->name,
            "type", c->type ? c->type : "string", "format", c->format ? c->format : "",
            "description", c->description ? c->description : "", "priority", c->priority));
    }
    return cols;
}

json_t *api_table_cells(const api_resource *res, const json_t *obj, time_t now)
{
    json_t *cells = json_array();
    const char *name = meta_str(json_object_get(obj, "metadata"), "name");
    size_t want = res->ncolumns + (has_name_column(res) ? 1 : 0);

    if (has_name_column(res))
        json_array_append_new(cells, json_string(name ? name : ""));
    if (res->row_cells)
        res->row_cells(obj, now, cells);
    /* A row always has one cell per column definition. */
    while (json_array_size(cells) < want)
        json_array_append_new(cells, json_null());
    while (json_array_size(cells) > want)
        json_array_remove(cells, json_array_size(cells) - 1);
    return cells;
}

void api_age(const json_t *obj, time_t now, char *buf, size_t len)
{
    const char *ts = meta_str(json_object_get(obj, "metadata"), "creationTimestamp");
    time_t t;

    if (!ts || ty_time_parse(ts, &t) != 0) {
        snprintf(buf, len, "<unknown>");
        return;
    }
    ty_duration_human((int64_t)(now - t), buf, len);
}
