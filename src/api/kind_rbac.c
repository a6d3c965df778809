/* kind_rbac.c - rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding
 * and ClusterRoleBinding: defaults, kube-apiserver's validation (field paths
 * and wording of pkg/apis/rbac/validation) and kubectl's printer columns.
 * What they grant is server/authz's business. */
#include <stdio.h>
#include <string.h>

#include "api/kind_core_int.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/timeutil.h"
#include "model/selector.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

/* Go's %#v of a []string, as field.Invalid shows one: []string{"a", "b"}. */
static void strlist_text(const json_t *a, char *buf, size_t len)
{
    size_t used = 0, i;
    json_t *v;
    int w = snprintf(buf, len, "[]string{");

    used = w > 0 ? (size_t)w : 0;
    json_array_foreach(a, i, v) {
        if (used >= len)
            break;
        w = snprintf(buf + used, len - used, "%s\"%s\"", i ? ", " : "",
                     json_string_value(v) ? json_string_value(v) : "");
        used += w > 0 ? (size_t)w : 0;
    }
    if (used < len)
        snprintf(buf + used, len - used, "}");
}

static size_t alen(const json_t *obj, const char *key)
{
    return json_array_size(json_object_get(obj, key));
}

/* One PolicyRule (ValidatePolicyRule). */
static void check_rule(const json_t *rule, size_t i, bool namespaced, ty_error *err)
{
    char f[PATH_LEN], text[512];

    if (!json_is_object(rule)) {
        snprintf(f, sizeof(f), "rules[%zu]", i);
        meta_invalid(err, f, rule, "must be an object");
        return;
    }
    if (alen(rule, "verbs") == 0) {
        snprintf(f, sizeof(f), "rules[%zu].verbs", i);
        meta_required(err, f, "verbs must contain at least one value");
    }
    if (alen(rule, "nonResourceURLs") > 0) {
        snprintf(f, sizeof(f), "rules[%zu].nonResourceURLs", i);
        strlist_text(json_object_get(rule, "nonResourceURLs"), text, sizeof(text));
        if (namespaced)
            ty_error_add_cause(err, "FieldValueInvalid", f, "Invalid value: %s: namespaced "
                               "rules cannot apply to non-resource URLs", text);
        if (alen(rule, "apiGroups") || alen(rule, "resources") || alen(rule, "resourceNames"))
            ty_error_add_cause(err, "FieldValueInvalid", f, "Invalid value: %s: rules cannot "
                               "apply to both regular resources and non-resource URLs", text);
        return;
    }
    if (alen(rule, "apiGroups") == 0) {
        snprintf(f, sizeof(f), "rules[%zu].apiGroups", i);
        meta_required(err, f, "resource rules must supply at least one api group");
    }
    if (alen(rule, "resources") == 0) {
        snprintf(f, sizeof(f), "rules[%zu].resources", i);
        meta_required(err, f, "resource rules must supply at least one resource");
    }
}

static void check_rules(const json_t *obj, bool namespaced, ty_error *err)
{
    size_t i;
    json_t *r;

    json_array_foreach(json_object_get(obj, "rules"), i, r)
        check_rule(r, i, namespaced, err);
}

static int role_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);

    (void)old;
    check_rules(obj, true, err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static int clusterrole_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err), i;
    const json_t *agg = json_object_get(obj, "aggregationRule");
    char f[PATH_LEN];
    json_t *sel;

    (void)old;
    check_rules(obj, false, err);
    if (agg && !json_is_null(agg)) {
        if (alen(agg, "clusterRoleSelectors") == 0)
            meta_required(err, "aggregationRule.clusterRoleSelectors",
                          "at least one clusterRoleSelector required if aggregationRule is "
                          "non-nil");
        json_array_foreach(json_object_get(agg, "clusterRoleSelectors"), i, sel) {
            ty_error tmp;
            ty_label_selector *ls;
            snprintf(f, sizeof(f), "aggregationRule.clusterRoleSelectors[%zu].matchLabels", i);
            meta_check_selector_map(f, json_object_get(sel, "matchLabels"), err);
            ty_error_init(&tmp);
            ls = label_selector_from_json(sel, &tmp);
            if (!ls) {
                snprintf(f, sizeof(f), "aggregationRule.clusterRoleSelectors[%zu]", i);
                meta_invalid(err, f, sel, "%s", tmp.text);
            }
            label_selector_free(ls);
            ty_error_clear(&tmp);
        }
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* Subjects get their kind's API group when they name none. */
static void binding_defaults(json_t *obj)
{
    json_t *ref = json_object_get(obj, "roleRef"), *s;
    size_t i;

    if (json_is_object(ref) && !json_string_length(json_object_get(ref, "apiGroup")))
        json_object_set_new(ref, "apiGroup", json_string(RBAC_GROUP));
    json_array_foreach(json_object_get(obj, "subjects"), i, s) {
        const char *kind = meta_str(s, "kind");
        if (!json_is_object(s) || json_object_get(s, "apiGroup") || !kind)
            continue;
        if (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0)
            json_object_set_new(s, "apiGroup", json_string(RBAC_GROUP));
        else if (strcmp(kind, "ServiceAccount") == 0)
            json_object_set_new(s, "apiGroup", json_string(""));
    }
}

static void check_subject(const json_t *s, size_t i, bool namespaced, ty_error *err)
{
    static const char *const kinds[] = {"ServiceAccount", "User", "Group", NULL};
    static const char *const rbac_only[] = {RBAC_GROUP, NULL};
    static const char *const core_only[] = {"", NULL};
    const char *name = meta_str(s, "name"), *kind = meta_str(s, "kind");
    const char *group = or_str(meta_str(s, "apiGroup"), "");
    json_t *g = json_string(group);
    char f[PATH_LEN];

    if (!name || !*name) {
        snprintf(f, sizeof(f), "subjects[%zu].name", i);
        meta_required(err, f, NULL);
    }
    if (kind && strcmp(kind, "ServiceAccount") == 0) {
        snprintf(f, sizeof(f), "subjects[%zu].name", i);
        if (name && *name)
            meta_check_dns1123_subdomain(f, name, err);
        snprintf(f, sizeof(f), "subjects[%zu].apiGroup", i);
        if (*group)
            meta_not_supported(err, f, g, core_only);
        snprintf(f, sizeof(f), "subjects[%zu].namespace", i);
        if (!namespaced && !json_string_length(json_object_get(s, "namespace")))
            meta_required(err, f, NULL);
    } else if (kind && (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0)) {
        snprintf(f, sizeof(f), "subjects[%zu].apiGroup", i);
        if (strcmp(group, RBAC_GROUP) != 0)
            meta_not_supported(err, f, g, rbac_only);
    } else {
        json_t *k = json_string(kind ? kind : "");
        snprintf(f, sizeof(f), "subjects[%zu].kind", i);
        meta_not_supported(err, f, k, kinds);
        json_decref(k);
    }
    json_decref(g);
}

/* Go's %#v of the roleRef, as `cannot change roleRef` shows it. */
static void roleref_text(const json_t *ref, char *buf, size_t len)
{
    snprintf(buf, len, "rbac.RoleRef{APIGroup:\"%s\", Kind:\"%s\", Name:\"%s\"}",
             or_str(meta_str(ref, "apiGroup"), ""), or_str(meta_str(ref, "kind"), ""),
             or_str(meta_str(ref, "name"), ""));
}

static bool same_str(const json_t *a, const json_t *b, const char *key)
{
    return strcmp(or_str(meta_str(a, key), ""), or_str(meta_str(b, key), "")) == 0;
}

static int binding_validate_common(const json_t *obj, const json_t *old, bool namespaced,
                                   const char *const *kinds, ty_error *err)
{
    static const char *const groups[] = {RBAC_GROUP, NULL};
    size_t before = ty_error_ncauses(err), i;
    const json_t *ref = json_object_get(obj, "roleRef");
    const char *name = meta_str(ref, "name");
    json_t *s, *v;

    if (!json_is_object(ref)) {
        meta_required(err, "roleRef", NULL);
        return -1;
    }
    if (strcmp(or_str(meta_str(ref, "apiGroup"), ""), RBAC_GROUP) != 0) {
        v = json_string(or_str(meta_str(ref, "apiGroup"), ""));
        meta_not_supported(err, "roleRef.apiGroup", v, groups);
        json_decref(v);
    }
    if (!in_set(meta_str(ref, "kind"), kinds)) {
        v = json_string(or_str(meta_str(ref, "kind"), ""));
        meta_not_supported(err, "roleRef.kind", v, kinds);
        json_decref(v);
    }
    if (!name || !*name)
        meta_required(err, "roleRef.name", NULL);
    else
        meta_check_path_segment("roleRef.name", name, err);
    json_array_foreach(json_object_get(obj, "subjects"), i, s)
        check_subject(s, i, namespaced, err);
    if (old) {
        const json_t *oref = json_object_get(old, "roleRef");
        if (!same_str(ref, oref, "apiGroup") || !same_str(ref, oref, "kind") ||
            !same_str(ref, oref, "name")) {
            char text[600];
            roleref_text(ref, text, sizeof(text));
            ty_error_add_cause(err, "FieldValueInvalid", "roleRef",
                               "Invalid value: %s: cannot change roleRef", text);
        }
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static int rolebinding_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    static const char *const kinds[] = {"Role", "ClusterRole", NULL};
    return binding_validate_common(obj, old, true, kinds, err);
}

static int clusterrolebinding_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    static const char *const kinds[] = {"ClusterRole", NULL};
    return binding_validate_common(obj, old, false, kinds, err);
}

/* ---- printer columns ---------------------------------------------------- */

/* kubectl's roles print NAME and CREATED AT (RFC 3339, UTC). */
static void created_at_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *ts = meta_str(json_object_get(obj, "metadata"), "creationTimestamp");
    (void)now;
    json_array_append_new(cells, json_string(ts ? ts : ""));
}

static const api_column role_columns[] = {
    {"Created At", "date", "", "CreationTimestamp is a timestamp representing the server "
     "time when this object was created.", 0},
};

/* "Kind/name" of the roleRef; the subjects of one kind joined by ", "
 * (service accounts as namespace/name). */
static void subjects_text(const json_t *obj, const char *kind, char *buf, size_t len)
{
    size_t used = 0, i;
    json_t *s;

    buf[0] = '\0';
    json_array_foreach(json_object_get(obj, "subjects"), i, s) {
        const char *k = meta_str(s, "kind"), *name = or_str(meta_str(s, "name"), "");
        int w;
        if (!k || strcmp(k, kind) != 0 || used >= len)
            continue;
        if (strcmp(kind, "ServiceAccount") == 0)
            w = snprintf(buf + used, len - used, "%s%s/%s", used ? ", " : "",
                         or_str(meta_str(s, "namespace"), ""), name);
        else
            w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
        used += w > 0 ? (size_t)w : 0;
    }
}

static void binding_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *ref = json_object_get(obj, "roleRef");
    char buf[1024];

    snprintf(buf, sizeof(buf), "%s/%s", or_str(meta_str(ref, "kind"), ""),
             or_str(meta_str(ref, "name"), ""));
    json_array_append_new(cells, json_string(buf));
    age_cell(obj, now, cells);
    subjects_text(obj, "User", buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
    subjects_text(obj, "Group", buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
    subjects_text(obj, "ServiceAccount", buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
}

static const api_column binding_columns[] = {
    {"Role", "string", "", "RoleRef can reference a Role in the current namespace or a "
     "ClusterRole in the global namespace.", 0},
    AGE_COLUMN,
    {"Users", "string", "", "Users in the binding", 1},
    {"Groups", "string", "", "Groups in the binding", 1},
    {"ServiceAccounts", "string", "", "ServiceAccounts in the binding", 1},
};

/* ---- schemas ------------------------------------------------------------ */

static const api_field rule_fields[] = {
    API_ARRAY("verbs", API_T_STRING), API_ARRAY("apiGroups", API_T_STRING),
    API_ARRAY("resources", API_T_STRING), API_ARRAY("resourceNames", API_T_STRING),
    API_ARRAY("nonResourceURLs", API_T_STRING),
};
static const api_schema rule_schema = {
    .fields = rule_fields, .nfields = API_NFIELDS(rule_fields), .go_name = "PolicyRule",
};
static const api_field aggregation_fields[] = {
    API_ARRAY_OF("clusterRoleSelectors", &api_schema_label_selector),
};
static const api_schema aggregation_schema = {
    .fields = aggregation_fields, .nfields = API_NFIELDS(aggregation_fields),
    .go_name = "AggregationRule",
};
static const api_field role_fields[] = {API_ARRAY_OF("rules", &rule_schema)};
static const api_schema role_schema = API_SCHEMA(role_fields);
static const api_field clusterrole_fields[] = {
    API_ARRAY_OF("rules", &rule_schema), API_OBJECT("aggregationRule", &aggregation_schema),
};
static const api_schema clusterrole_schema = API_SCHEMA(clusterrole_fields);

static const api_field subject_fields[] = {
    API_FIELD("kind", API_T_STRING), API_FIELD("apiGroup", API_T_STRING),
    API_FIELD("name", API_T_STRING), API_FIELD("namespace", API_T_STRING),
};
static const api_schema subject_schema = {
    .fields = subject_fields, .nfields = API_NFIELDS(subject_fields), .go_name = "Subject",
};
static const api_field roleref_fields[] = {
    API_FIELD("apiGroup", API_T_STRING), API_FIELD("kind", API_T_STRING),
    API_FIELD("name", API_T_STRING),
};
static const api_schema roleref_schema = {
    .fields = roleref_fields, .nfields = API_NFIELDS(roleref_fields), .go_name = "RoleRef",
};
static const api_field binding_fields[] = {
    API_ARRAY_OF("subjects", &subject_schema), API_OBJECT("roleRef", &roleref_schema),
};
static const api_schema binding_schema = API_SCHEMA(binding_fields);

const api_resource api_role = {
    .group = RBAC_GROUP, .version = "v1", .kind = "Role", .list_kind = "RoleList",
    .plural = "roles", .singular = "role", .namespaced = true, .builtin = true,
    .validate = role_validate,
    .columns = role_columns, .ncolumns = NCOLS(role_columns),
    .row_cells = created_at_cells, .schema = &role_schema,
};

const api_resource api_clusterrole = {
    .group = RBAC_GROUP, .version = "v1", .kind = "ClusterRole", .list_kind = "ClusterRoleList",
    .plural = "clusterroles", .singular = "clusterrole", .namespaced = false, .builtin = true,
    .validate = clusterrole_validate,
    .columns = role_columns, .ncolumns = NCOLS(role_columns),
    .row_cells = created_at_cells, .schema = &clusterrole_schema,
};

const api_resource api_rolebinding = {
    .group = RBAC_GROUP, .version = "v1", .kind = "RoleBinding", .list_kind = "RoleBindingList",
    .plural = "rolebindings", .singular = "rolebinding", .namespaced = true, .builtin = true,
    .apply_defaults = binding_defaults, .validate = rolebinding_validate,
    .columns = binding_columns, .ncolumns = NCOLS(binding_columns),
    .row_cells = binding_cells, .schema = &binding_schema,
};

const api_resource api_clusterrolebinding = {
    .group = RBAC_GROUP, .version = "v1", .kind = "ClusterRoleBinding",
    .list_kind = "ClusterRoleBindingList", .plural = "clusterrolebindings",
    .singular = "clusterrolebinding", .namespaced = false, .builtin = true,
    .apply_defaults = binding_defaults, .validate = clusterrolebinding_validate,
    .columns = binding_columns, .ncolumns = NCOLS(binding_columns),
    .row_cells = binding_cells, .schema = &binding_schema,
};
