/* kind_quota.c - core/v1 ResourceQuota: hard limits per namespace (the
 * rules of what counts are model/quota.h; admission api/quota_admit.c;
 * status.used kept by controller/quota.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kind_core_int.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "model/quota.h"

#define QUOTA_MAX_HARD 64 /* hard names in one quota: more is refused */

static const char *const selector_ops[] = {"DoesNotExist", "Exists", "In", "NotIn", NULL};
static const char *const scope_names[] = {"BestEffort", "CrossNamespacePodAffinity",
                                          "NotBestEffort", "NotTerminating", "PriorityClass",
                                          "Terminating", "VolumeAttributesClass", NULL};

static void check_hard(const json_t *hard, ty_error *err)
{
    const char *k;
    json_t *v;
    char f[PATH_LEN];

    if (json_object_size(hard) > QUOTA_MAX_HARD) {
        meta_too_long(err, "spec.hard", QUOTA_MAX_HARD);
        return;
    }
    json_object_foreach((json_t *)hard, k, v) {
        int64_t m;
        ty_error perr;
        snprintf(f, sizeof(f), "spec.hard[%s]", k);
        if (!quota_key_valid(k)) {
            meta_invalid_str(err, f, k, "must be a standard resource for quota");
            continue;
        }
        ty_error_init(&perr);
        if (quota_parse(v, &m, &perr) < 0)
            meta_invalid(err, f, v, "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        else if (m < 0)
            meta_invalid(err, f, v, "must be greater than or equal to 0");
        ty_error_clear(&perr);
    }
}

/* The scopes of spec (scopes and the selector's scope names) as one list,
 * checked against each other and against the hard names. */
static void check_scopes(const json_t *spec, ty_error *err)
{
    const json_t *scopes = json_object_get(spec, "scopes"), *hard = json_object_get(spec, "hard");
    const json_t *exprs = json_object_get(json_object_get(spec, "scopeSelector"),
                                          "matchExpressions");
    const char *all[32];
    size_t n = 0, i;
    json_t *s;
    char f[PATH_LEN];

    json_array_foreach(scopes, i, s) {
        snprintf(f, sizeof(f), "spec.scopes[%zu]", i);
        if (!quota_scope_known(json_string_value(s)))
            meta_not_supported(err, f, s, scope_names);
        else if (n < 32)
            all[n++] = json_string_value(s);
    }
    json_array_foreach(exprs, i, s) {
        const json_t *sn = json_object_get(s, "scopeName"), *op = json_object_get(s, "operator");
        const json_t *vals = json_object_get(s, "values");
        const char *scope = json_string_value(sn), *ops = json_string_value(op);
        snprintf(f, sizeof(f), "spec.scopeSelector.matchExpressions[%zu].scopeName", i);
        if (!quota_scope_known(scope)) {
            meta_not_supported(err, f, sn, scope_names);
            continue;
        }
        snprintf(f, sizeof(f), "spec.scopeSelector.matchExpressions[%zu].operator", i);
        if (!in_set(ops, selector_ops)) {
            meta_not_supported(err, f, op, selector_ops);
            continue;
        }
        snprintf(f, sizeof(f), "spec.scopeSelector.matchExpressions[%zu].values", i);
        if ((!strcmp(ops, "In") || !strcmp(ops, "NotIn")) && json_array_size(vals) == 0)
            meta_required(err, f, "must be at least one value when `operator` is 'In' or "
                          "'NotIn' for scope selector");
        else if ((!strcmp(ops, "Exists") || !strcmp(ops, "DoesNotExist")) &&
                 json_array_size(vals) > 0)
            meta_invalid(err, f, vals, "must be no value when `operator` is 'Exist' or "
                         "'DoesNotExist' for scope selector");
        else if (strcmp(scope, "PriorityClass") != 0 && strcmp(ops, "Exists") != 0 &&
                 strcmp(ops, "DoesNotExist") != 0) {
            snprintf(f, sizeof(f), "spec.scopeSelector.matchExpressions[%zu].operator", i);
            meta_invalid(err, f, op, "must be 'Exist' when scope is any of "
                         "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
                         "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
                         "ResourceQuotaScopeCrossNamespacePodAffinity");
        }
        if (n < 32 && !strcmp(ops, "Exists"))
            all[n++] = scope;
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            if ((!strcmp(all[a], "Terminating") && !strcmp(all[b], "NotTerminating")) ||
                (!strcmp(all[a], "BestEffort") && !strcmp(all[b], "NotBestEffort"))) {
                meta_invalid(err, "spec.scopes", scopes ? scopes : exprs, "conflicting scopes");
                a = n;
                break;
            }
    for (size_t a = 0; a < n; a++) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)hard, k, v) {
            if (quota_key_valid(k) && !quota_scope_allows(all[a], k)) {
                snprintf(f, sizeof(f), "spec.hard[%s]", k);
                meta_invalid_str(err, f, k, "unsupported scope applied to resource");
            }
        }
    }
}

/* Quantities given as JSON numbers become strings, as the API writes every
 * quantity (kubectl's columns and describe read strings). */
static void quota_defaults(json_t *obj)
{
    json_t *hard = json_object_get(json_object_get(obj, "spec"), "hard"), *v;
    const char *k;
    void *tmp;

    json_object_foreach_safe(hard, tmp, k, v) {
        int64_t m;
        char q[64];
        if (!json_is_number(v) || quota_parse(v, &m, NULL) < 0 || m < 0)
            continue;
        quota_format(k, m, q, sizeof(q));
        json_object_set_new(hard, k, json_string(q));
    }
}

static int quota_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const json_t *spec = json_object_get(obj, "spec");

    (void)old;
    check_hard(json_object_get(spec, "hard"), err);
    if (json_array_size(json_object_get(spec, "scopes")) > 16)
        meta_too_long(err, "spec.scopes", 16);
    else if (json_array_size(json_object_get(json_object_get(spec, "scopeSelector"),
                                             "matchExpressions")) > 16)
        meta_too_long(err, "spec.scopeSelector.matchExpressions", 16);
    else
        check_scopes(spec, err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* kubectl's REQUEST and LIMIT cells: "name: used/hard" for every name of
 * status.hard (sorted), those under limits. in the second. */
static void quota_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *st = json_object_get(obj, "status");
    const json_t *hard = json_object_get(st, "hard"), *used = json_object_get(st, "used");
    const char *keys[QUOTA_MAX_HARD];
    size_t n = 0, lr = 0, ll = 0;
    char req[1024] = "", lim[1024] = "";
    const char *k;
    json_t *v;

    age_cell(obj, now, cells);
    json_object_foreach((json_t *)hard, k, v)
        if (n < QUOTA_MAX_HARD)
            keys[n++] = k;
    qsort(keys, n, sizeof(keys[0]), cmp_key);
    for (size_t i = 0; i < n; i++) {
        const char *h = json_string_value(json_object_get(hard, keys[i]));
        const char *u = json_string_value(json_object_get(used, keys[i]));
        bool limit = strncmp(keys[i], "limits.", 7) == 0;
        char *buf = limit ? lim : req;
        size_t *at = limit ? &ll : &lr;
        if (*at < sizeof(req))
            *at += (size_t)snprintf(buf + *at, sizeof(req) - *at, "%s%s: %s/%s",
                                    *at ? ", " : "", keys[i], u ? u : "0", h ? h : "0");
    }
    json_array_append_new(cells, json_string(req));
    json_array_append_new(cells, json_string(lim));
}

static const api_column quota_columns[] = {
    AGE_COLUMN,
    {"Request", "string", "", "Request represents a minimum amount of cpu/memory that a "
     "container may consume.", 0},
    {"Limit", "string", "", "Limits control the maximum amount of cpu/memory that a container "
     "may use independent of contention on the node.", 0},
};

static const api_field scope_expr_fields[] = {
    API_FIELD("scopeName", API_T_STRING), API_FIELD("operator", API_T_STRING),
    API_ARRAY("values", API_T_STRING),
};
static const api_schema scope_expr_schema = {
    .fields = scope_expr_fields, .nfields = API_NFIELDS(scope_expr_fields),
    .go_name = "ScopedResourceSelectorRequirement",
};
static const api_field scope_selector_fields[] = {
    API_ARRAY_OF("matchExpressions", &scope_expr_schema),
};
static const api_schema scope_selector_schema = {
    .fields = scope_selector_fields, .nfields = API_NFIELDS(scope_selector_fields),
    .go_name = "ScopeSelector",
};
static const api_field quota_spec_fields[] = {
    API_MAP("hard", API_T_QUANTITY), API_ARRAY("scopes", API_T_STRING),
    API_OBJECT("scopeSelector", &scope_selector_schema),
};
static const api_schema quota_spec_schema = {
    .fields = quota_spec_fields, .nfields = API_NFIELDS(quota_spec_fields),
    .go_name = "ResourceQuotaSpec",
};
static const api_field quota_status_fields[] = {
    API_MAP("hard", API_T_QUANTITY), API_MAP("used", API_T_QUANTITY),
};
static const api_schema quota_status_schema = {
    .fields = quota_status_fields, .nfields = API_NFIELDS(quota_status_fields),
    .go_name = "ResourceQuotaStatus",
};
static const api_field quota_fields[] = {
    API_OBJECT("spec", &quota_spec_schema), API_OBJECT("status", &quota_status_schema),
};
static const api_schema quota_schema = API_SCHEMA(quota_fields);

const api_resource api_resourcequota = {
    .group = "", .version = "v1", .kind = "ResourceQuota", .list_kind = "ResourceQuotaList",
    .plural = "resourcequotas", .singular = "resourcequota", .short_names = {"quota", NULL},
    .namespaced = true, .has_status = true, .builtin = true,
    .apply_defaults = quota_defaults, .validate = quota_validate,
    .columns = quota_columns, .ncolumns = NCOLS(quota_columns),
    .row_cells = quota_cells, .schema = &quota_schema,
};
