/* kind_crd.c - apiextensions.k8s.io/v1 CustomResourceDefinition, cluster
 * scoped: stored and validated as kube-apiserver validates the parts that
 * matter (names, group, scope, versions with exactly one storage version,
 * structural schemas), so that `kubectl apply -f deploy/crds` works against
 * Trainyard's own server as against a cluster.
 *
 * Trainyard does not make kinds from CRDs: its kinds are compiled in. A CRD
 * that names one of them (group, plural, kind, scope, every served version)
 * is Established; any other is stored with Established False and a message
 * saying what Trainyard does not serve (docs/compatibility.md). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/crd.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/timeutil.h"

#define FIELD_LEN 256
#define MAX_VERSIONS 64

static const char *const scopes[] = {"Cluster", "Namespaced", NULL};
static const char *const strategies[] = {"None", "Webhook", NULL};

static bool in_set(const char *s, const char *const *set)
{
    for (size_t i = 0; s && set[i]; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

/* ---- which CRDs Trainyard serves ------------------------------------------- */

/* NULL when the CRD names kinds Trainyard serves, else why not, in why. */
static const char *not_served(const json_t *spec, char *why, size_t len)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    const char *group = meta_str(spec, "group");
    const json_t *names = json_object_get(spec, "names");
    const char *plural = meta_str(names, "plural"), *kind = meta_str(names, "kind");
    const char *scope = meta_str(spec, "scope");
    const api_resource *any = NULL;
    const json_t *v;
    size_t i;

    for (size_t j = 0; group && plural && j < n && !any; j++)
        if (crd_is_custom(all[j]) && strcmp(all[j]->group, group) == 0 &&
            strcmp(all[j]->plural, plural) == 0)
            any = all[j];
    if (!any) {
        snprintf(why, len, "Trainyard does not serve %s.%s and makes no kinds from "
                 "CustomResourceDefinitions", plural ? plural : "", group ? group : "");
        return why;
    }
    if (!kind || strcmp(kind, any->kind) != 0) {
        snprintf(why, len, "Trainyard serves %s.%s as kind %s, not %s", plural, group,
                 any->kind, kind ? kind : "");
        return why;
    }
    if (!scope || strcmp(scope, any->namespaced ? "Namespaced" : "Cluster") != 0) {
        snprintf(why, len, "Trainyard serves %s.%s %s, not %s", plural, group,
                 any->namespaced ? "Namespaced" : "Cluster", scope ? scope : "");
        return why;
    }
    json_array_foreach(json_object_get(spec, "versions"), i, v) {
        const char *ver = meta_str(v, "name");
        if (!json_is_true(json_object_get(v, "served")))
            continue;
        if (!ver || !api_find(group, ver, plural)) {
            snprintf(why, len, "Trainyard does not serve version %s of %s.%s", ver ? ver : "",
                     plural, group);
            return why;
        }
    }
    return NULL;
}

/* ---- defaults and status ----------------------------------------------------- */

static json_t *condition(const json_t *old_conds, const char *type, bool ok, const char *reason,
                         const char *message, const char *now)
{
    const char *status = ok ? "True" : "False", *since = now;
    const json_t *c;
    size_t i;

    /* A condition that did not change keeps the time it last changed. */
    json_array_foreach(old_conds, i, c)
        if (meta_str(c, "type") && strcmp(meta_str(c, "type"), type) == 0 &&
            meta_str(c, "status") && strcmp(meta_str(c, "status"), status) == 0 &&
            meta_str(c, "lastTransitionTime"))
            since = meta_str(c, "lastTransitionTime");
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", status,
                     "lastTransitionTime", since, "reason", reason, "message", message);
}

/* Status is the server's to say, from the spec, on every write (level, not
 * edge): NamesAccepted and Established as a cluster reports them. */
static void crd_status(json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec"), *v;
    json_t *st = meta_child(obj, "status"), *conds = json_array(), *stored = json_array();
    const json_t *old_conds = json_object_get(st, "conditions");
    char why[512], now[64];
    const char *reason = not_served(spec, why, sizeof(why));
    size_t i;

    ty_time_now(now, sizeof(now));
    json_array_append_new(conds, condition(old_conds, "NamesAccepted", true, "NoConflicts",
                                           "no conflicts found", now));
    if (reason)
        json_array_append_new(conds, condition(old_conds, "Established", false,
                                               "NotServedByTrainyard", reason, now));
    else
        json_array_append_new(conds, condition(old_conds, "Established", true,
                                               "InitialNamesAccepted",
                                               "the initial names have been accepted", now));
    json_array_foreach(json_object_get(spec, "versions"), i, v)
        if (json_is_true(json_object_get(v, "storage")) && meta_str(v, "name"))
            json_array_append_new(stored, json_string(meta_str(v, "name")));
    json_object_set_new(st, "conditions", conds);
    v = json_object_get(spec, "names");
    json_object_set_new(st, "acceptedNames", v ? json_deep_copy(v) : json_object());
    json_object_set_new(st, "storedVersions", stored);
}

static void crd_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec"), *names = meta_child(spec, "names");
    const char *kind = meta_str(names, "kind");

    if (kind && *kind) {
        char buf[256];
        size_t i;
        for (i = 0; kind[i] && i + 1 < sizeof(buf); i++)
            buf[i] = (char)tolower((unsigned char)kind[i]);
        buf[i] = '\0';
        meta_default(names, "singular", json_string(buf));
        snprintf(buf, sizeof(buf), "%sList", kind);
        meta_default(names, "listKind", json_string(buf));
    }
    meta_default(meta_child(spec, "conversion"), "strategy", json_string("None"));
    crd_status(obj);
}

/* ---- validation ---------------------------------------------------------------- */

static void check_label_list(const json_t *list, const char *path, ty_error *err)
{
    char f[FIELD_LEN];
    const json_t *v;
    size_t i;

    json_array_foreach(list, i, v) {
        snprintf(f, sizeof(f), "%s[%zu]", path, i);
        if (!json_is_string(v))
            meta_invalid(err, f, v, "must be a string");
        else
            meta_check_dns1035_label(f, json_string_value(v), err);
    }
}

static void check_names(const json_t *names, ty_error *err)
{
    const char *plural = meta_str(names, "plural"), *singular = meta_str(names, "singular");
    const char *kind = meta_str(names, "kind"), *list_kind = meta_str(names, "listKind");

    if (!plural || !*plural)
        meta_required(err, "spec.names.plural", NULL);
    else
        meta_check_dns1035_label("spec.names.plural", plural, err);
    if (singular && *singular)
        meta_check_dns1035_label("spec.names.singular", singular, err);
    if (!kind || !*kind)
        meta_required(err, "spec.names.kind", NULL);
    if (kind && list_kind && *kind && strcmp(kind, list_kind) == 0)
        meta_invalid_str(err, "spec.names.listKind", list_kind,
                         "kind and listKind may not be the same");
    check_label_list(json_object_get(names, "shortNames"), "spec.names.shortNames", err);
    check_label_list(json_object_get(names, "categories"), "spec.names.categories", err);
}

static void check_version(const json_t *v, size_t i, ty_error *err)
{
    char f[FIELD_LEN], why[FIELD_LEN * 2];
    const char *name = meta_str(v, "name");
    const json_t *schema = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");

    snprintf(f, sizeof(f), "spec.versions[%zu].name", i);
    if (!name || !*name)
        meta_required(err, f, NULL);
    else
        meta_check_dns1035_label(f, name, err);
    snprintf(f, sizeof(f), "spec.versions[%zu].schema.openAPIV3Schema", i);
    if (!schema) {
        meta_required(err, f, "schemas are required");
        return;
    }
    /* The path in the message names the broken node; the cause's field is
     * the schema's, as kube-apiserver reports a non-structural schema. */
    if (crd_check_structural(schema, "", why, sizeof(why)) < 0)
        meta_forbidden(err, f, "must be structural: %s", why);
}

static void check_versions(const json_t *versions, ty_error *err)
{
    size_t nstorage = 0, i, j;
    const json_t *v;

    if (!json_is_array(versions) || json_array_size(versions) == 0) {
        meta_required(err, "spec.versions", "must have exactly one version marked as storage "
                                            "version");
        return;
    }
    if (json_array_size(versions) > MAX_VERSIONS) {
        meta_forbidden(err, "spec.versions", "must have at most %d versions", MAX_VERSIONS);
        return;
    }
    json_array_foreach(versions, i, v) {
        const char *name = meta_str(v, "name");
        check_version(v, i, err);
        if (json_is_true(json_object_get(v, "storage")))
            nstorage++;
        for (j = 0; name && j < i; j++) {
            const char *other = meta_str(json_array_get(versions, j), "name");
            if (other && strcmp(other, name) == 0) {
                char f[FIELD_LEN];
                snprintf(f, sizeof(f), "spec.versions[%zu].name", i);
                meta_duplicate(err, f, json_object_get(v, "name"));
                break;
            }
        }
    }
    if (nstorage != 1)
        meta_invalid_int(err, "spec.versions", (long long)nstorage,
                         "must have exactly one version marked as storage version");
}

static int crd_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *names = json_object_get(spec, "names");
    const char *group = meta_str(spec, "group"), *plural = meta_str(names, "plural");
    const char *name = meta_str(json_object_get(obj, "metadata"), "name");
    const char *scope = meta_str(spec, "scope");
    const char *strategy = meta_str(json_object_get(spec, "conversion"), "strategy");
    size_t before = ty_error_ncauses(err);
    char want[512];

    if (!group || !*group)
        meta_required(err, "spec.group", NULL);
    else if (!strchr(group, '.'))
        meta_invalid_str(err, "spec.group", group, "should be a domain with at least one dot");
    else
        meta_check_dns1123_subdomain("spec.group", group, err);
    check_names(names, err);
    if (group && plural && name) {
        snprintf(want, sizeof(want), "%s.%s", plural, group);
        if (strcmp(name, want) != 0)
            meta_invalid_str(err, "metadata.name", name,
                             "must be spec.names.plural+\".\"+spec.group");
    }
    if (!scope || !*scope)
        meta_required(err, "spec.scope", NULL);
    else if (!in_set(scope, scopes))
        meta_not_supported(err, "spec.scope", json_object_get(spec, "scope"), scopes);
    if (strategy && !in_set(strategy, strategies))
        meta_not_supported(err, "spec.conversion.strategy",
                           json_object_get(json_object_get(spec, "conversion"), "strategy"),
                           strategies);
    check_versions(json_object_get(spec, "versions"), err);
    if (old) {
        const json_t *ospec = json_object_get(old, "spec");
        if (!json_equal(json_object_get(spec, "group"), json_object_get(ospec, "group")))
            meta_invalid(err, "spec.group", json_object_get(spec, "group"), "field is immutable");
        if (!json_equal(json_object_get(spec, "scope"), json_object_get(ospec, "scope")))
            meta_invalid(err, "spec.scope", json_object_get(spec, "scope"), "field is immutable");
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* ---- table and schema ---------------------------------------------------------- */

static void crd_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *ts = meta_str(json_object_get(obj, "metadata"), "creationTimestamp");
    (void)now;
    json_array_append_new(cells, ts ? json_string(ts) : json_null());
}

static const api_column crd_columns[] = {
    {"Created At", "date", "", "", 0},
};

static const api_field names_fields[] = {
    API_FIELD("plural", API_T_STRING), API_FIELD("singular", API_T_STRING),
    API_ARRAY("shortNames", API_T_STRING), API_FIELD("kind", API_T_STRING),
    API_FIELD("listKind", API_T_STRING), API_ARRAY("categories", API_T_STRING),
};
static const api_schema names_schema = {
    .fields = names_fields, .nfields = API_NFIELDS(names_fields),
    .go_name = "CustomResourceDefinitionNames",
};

static const api_field validation_fields[] = {API_FIELD("openAPIV3Schema", API_T_OPEN)};
static const api_schema validation_schema = {
    .fields = validation_fields, .nfields = API_NFIELDS(validation_fields),
    .go_name = "CustomResourceValidation",
};

static const api_field version_fields[] = {
    API_FIELD("name", API_T_STRING), API_FIELD("served", API_T_BOOLEAN),
    API_FIELD("storage", API_T_BOOLEAN), API_FIELD("deprecated", API_T_BOOLEAN),
    API_FIELD("deprecationWarning", API_T_STRING),
    API_OBJECT("schema", &validation_schema),
    API_FIELD("subresources", API_T_OPEN),
    API_ARRAY("additionalPrinterColumns", API_T_OPEN),
    API_ARRAY("selectableFields", API_T_OPEN),
};
static const api_schema version_schema = {
    .fields = version_fields, .nfields = API_NFIELDS(version_fields),
    .go_name = "CustomResourceDefinitionVersion",
};

static const api_field spec_fields[] = {
    API_FIELD("group", API_T_STRING),
    API_OBJECT("names", &names_schema),
    API_FIELD("scope", API_T_STRING),
    API_ARRAY_OF("versions", &version_schema),
    API_FIELD("conversion", API_T_OPEN),
    API_FIELD("preserveUnknownFields", API_T_BOOLEAN),
};
static const api_schema spec_schema = {
    .fields = spec_fields, .nfields = API_NFIELDS(spec_fields),
    .go_name = "CustomResourceDefinitionSpec",
};

static const api_field crd_fields[] = {
    API_OBJECT("spec", &spec_schema),
    API_OBJECT("status", &api_schema_condition_status),
};
static const api_schema crd_schema_desc = {
    .fields = crd_fields, .nfields = API_NFIELDS(crd_fields),
    .description = "CustomResourceDefinition represents a resource that should be exposed on "
                   "the API server.",
    .go_name = "CustomResourceDefinition",
};

const api_resource api_crd = {
    .group = "apiextensions.k8s.io", .version = "v1", .kind = "CustomResourceDefinition",
    .list_kind = "CustomResourceDefinitionList", .plural = "customresourcedefinitions",
    .singular = "customresourcedefinition", .short_names = {"crd", "crds", NULL},
    .categories = {"api-extensions", NULL},
    .namespaced = false, .has_status = true, .builtin = true,
    .apply_defaults = crd_defaults, .validate = crd_validate,
    .columns = crd_columns, .ncolumns = sizeof(crd_columns) / sizeof(crd_columns[0]),
    .row_cells = crd_cells, .schema = &crd_schema_desc,
};
