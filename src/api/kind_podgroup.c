/* kind_podgroup.c - Volcano's PodGroup (scheduling.volcano.sh/v1beta1): the
 * gang a scheduler places all-or-nothing. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "model/quantity.h"

#define PATH_LEN 256

static void podgroup_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec");

    meta_default(spec, "queue", json_string("default"));
    meta_default(meta_child(obj, "status"), "phase", json_string("Pending"));
}

static void check_quantities(const json_t *map, const char *path, ty_error *err)
{
    char f[PATH_LEN];
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)map, key, v) {
        int64_t milli;
        ty_error qe;
        ty_error_init(&qe);
        snprintf(f, sizeof(f), "%s[%s]", path, key);
        meta_check_qualified_name(f, key, err); /* a resource's name */
        if (json_is_integer(v))
            milli = json_integer_value(v);
        else if (!json_is_string(v) || quantity_parse(json_string_value(v), &milli, &qe) != 0) {
            meta_invalid(err, f, v, "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
            milli = 0;
        }
        if (milli < 0)
            meta_invalid(err, f, v, "must be greater than or equal to 0");
        ty_error_clear(&qe);
    }
}

static int podgroup_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec");
    size_t before = ty_error_ncauses(err);
    const char *key;
    char f[PATH_LEN];
    json_t *v;

    (void)old;
    v = json_object_get(spec, "minMember");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
        meta_invalid(err, "spec.minMember", v, "must be greater than or equal to 0");
    json_object_foreach(json_object_get(spec, "minTaskMember"), key, v) {
        snprintf(f, sizeof(f), "spec.minTaskMember[%s]", key);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            meta_invalid(err, f, v, "must be greater than or equal to 0");
    }
    check_quantities(json_object_get(spec, "minResources"), "spec.minResources", err);
    if (meta_str(spec, "queue") && *meta_str(spec, "queue"))
        meta_check_dns1123_subdomain("spec.queue", meta_str(spec, "queue"), err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static json_t *int_or_null(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_incref(v) : json_null();
}

static void podgroup_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *st = json_object_get(obj, "status"), *spec = json_object_get(obj, "spec");
    const char *phase = meta_str(st, "phase"), *queue = meta_str(spec, "queue");
    char age[32];

    json_array_append_new(cells, phase ? json_string(phase) : json_null());
    json_array_append_new(cells, int_or_null(spec, "minMember"));
    json_array_append_new(cells, int_or_null(st, "running"));
    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
    json_array_append_new(cells, queue ? json_string(queue) : json_null());
}

static const api_column podgroup_columns[] = {
    {"STATUS", "string", "", "", 0},
    {"minMember", "integer", "", "", 0},
    {"RUNNINGS", "integer", "", "", 0},
    {"AGE", "date", "", "", 0},
    {"QUEUE", "string", "", "", 1},
};
static const api_column_path podgroup_columns_paths[] = {
    {"STATUS", ".status.phase"},
    {"minMember", ".spec.minMember"},
    {"RUNNINGS", ".status.running"},
    {"AGE", ".metadata.creationTimestamp"},
    {"QUEUE", ".spec.queue"},
    {NULL, NULL},
};

static const api_field podgroup_spec_fields[] = {
    API_FIELD("minMember", API_T_INTEGER),
    API_MAP("minTaskMember", API_T_INTEGER),
    API_FIELD("queue", API_T_STRING),
    API_FIELD("priorityClassName", API_T_STRING),
    API_MAP("minResources", API_T_QUANTITY),
    API_FIELD("networkTopology", API_T_OPEN),
    API_ARRAY("subGroupPolicy", API_T_OPEN),
};
static const api_schema podgroup_spec = API_SCHEMA(podgroup_spec_fields);
static const api_field podgroup_fields[] = {
    API_OBJECT("spec", &podgroup_spec),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema podgroup_schema = {
    .fields = podgroup_fields, .nfields = API_NFIELDS(podgroup_fields),
    .description = "PodGroup is a collection of Pod; used for batch workload.",
};

const api_resource api_podgroup = {
    .group = "scheduling.volcano.sh", .version = "v1beta1", .kind = "PodGroup",
    .list_kind = "PodGroupList", .plural = "podgroups", .singular = "podgroup",
    .short_names = {"pg", "podgroup-v1beta1", NULL},
    .namespaced = true, .has_status = true,
    .apply_defaults = podgroup_defaults, .validate = podgroup_validate,
    .columns = podgroup_columns,
    .ncolumns = sizeof(podgroup_columns) / sizeof(podgroup_columns[0]),
    .row_cells = podgroup_cells, .schema = &podgroup_schema,
    .column_paths = podgroup_columns_paths,
};
