/* kind_queue.c - Volcano's Queue (scheduling.volcano.sh/v1beta1, cluster
 * scoped): weight, capability, guarantee and deserved shares. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "model/quantity.h"

#define PATH_LEN 256

static const char *const queue_states[] = {"Open", "Closed", NULL};

static bool in_set_state(const char *s)
{
    for (size_t i = 0; s && queue_states[i]; i++)
        if (strcmp(s, queue_states[i]) == 0)
            return true;
    return false;
}

static void queue_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec");

    meta_default(spec, "weight", json_integer(1));
    meta_default(spec, "reclaimable", json_true());
    meta_default(meta_child(obj, "status"), "state", json_string("Open"));
}

/* Parses a quantity cell; false (with a cause) when it is not one. */
static bool quantity_of(const json_t *v, const char *field, int64_t *milli, ty_error *err)
{
    ty_error qe;
    bool ok;

    if (json_is_integer(v)) {
        *milli = json_integer_value(v) * 1000;
        ok = true;
    } else {
        ty_error_init(&qe);
        ok = json_is_string(v) && quantity_parse(json_string_value(v), milli, &qe) == 0;
        ty_error_clear(&qe);
    }
    if (!ok)
        meta_invalid(err, field, v, "quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    else if (*milli < 0)
        meta_invalid(err, field, v, "must be greater than or equal to 0");
    return ok && *milli >= 0;
}

static void check_list(const json_t *map, const char *path, ty_error *err)
{
    char f[PATH_LEN];
    const char *key;
    json_t *v;
    int64_t m;

    json_object_foreach((json_t *)map, key, v) {
        snprintf(f, sizeof(f), "%s[%s]", path, key);
        quantity_of(v, f, &m, err);
    }
}

/* Each resource in small must not exceed the same resource in big. */
static void check_le(const json_t *small, const char *spath, const json_t *big,
                     const char *bname, ty_error *err)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)small, key, v) {
        json_t *b = json_object_get(big, key);
        int64_t sm, bm;
        char f[PATH_LEN];
        if (!b || !quantity_of(v, spath, &sm, NULL) || !quantity_of(b, spath, &bm, NULL))
            continue;
        if (sm > bm) {
            snprintf(f, sizeof(f), "%s[%s]", spath, key);
            meta_invalid(err, f, v, "must be less than or equal to %s", bname);
        }
    }
}

static int queue_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
    const json_t *guarantee = json_object_get(json_object_get(spec, "guarantee"), "resource");
    const char *name = meta_str(json_object_get(obj, "metadata"), "name");
    size_t before = ty_error_ncauses(err);
    json_t *v;

    (void)old;
    v = json_object_get(spec, "weight");
    if (v && (!json_is_integer(v) || json_integer_value(v) <= 0))
        meta_invalid(err, "spec.weight", v, "queue weight must be a positive integer");
    if ((v = json_object_get(st, "state")) && !in_set_state(json_string_value(v)))
        meta_not_supported(err, "status.state", v, queue_states);
    if (name && meta_str(spec, "parent") && strcmp(name, meta_str(spec, "parent")) == 0)
        meta_invalid_str(err, "spec.parent", name, "queue cannot be its own parent");
    check_list(json_object_get(spec, "capability"), "spec.capability", err);
    check_list(json_object_get(spec, "deserved"), "spec.deserved", err);
    check_list(guarantee, "spec.guarantee.resource", err);
    check_le(json_object_get(spec, "deserved"), "spec.deserved",
             json_object_get(spec, "capability"), "capability", err);
    check_le(guarantee, "spec.guarantee.resource", json_object_get(spec, "deserved"),
             "deserved", err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void queue_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *parent = meta_str(json_object_get(obj, "spec"), "parent");
    (void)now;
    json_array_append_new(cells, parent ? json_string(parent) : json_null());
}

static const api_column queue_columns[] = {
    {"PARENT", "string", "", "", 0},
};
static const api_column_path queue_columns_paths[] = {
    {"PARENT", ".spec.parent"},
    {NULL, NULL},
};

static const api_field guarantee_fields[] = {API_MAP("resource", API_T_QUANTITY)};
static const api_schema guarantee = API_SCHEMA(guarantee_fields);

static const api_field queue_spec_fields[] = {
    API_FIELD("weight", API_T_INTEGER),
    API_MAP("capability", API_T_QUANTITY),
    API_FIELD("reclaimable", API_T_BOOLEAN),
    API_ARRAY("extendClusters", API_T_OPEN),
    API_OBJECT("guarantee", &guarantee),
    API_FIELD("affinity", API_T_OPEN),
    API_FIELD("type", API_T_STRING),
    API_FIELD("parent", API_T_STRING),
    API_MAP("deserved", API_T_QUANTITY),
    API_FIELD("priority", API_T_INTEGER),
    API_FIELD("dequeueStrategy", API_T_STRING),
};
static const api_schema queue_spec = API_SCHEMA(queue_spec_fields);
static const api_field queue_fields[] = {
    API_OBJECT("spec", &queue_spec),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema queue_schema = {
    .fields = queue_fields, .nfields = API_NFIELDS(queue_fields),
    .description = "Queue is a queue of PodGroup.",
};

const api_resource api_queue = {
    .group = "scheduling.volcano.sh", .version = "v1beta1", .kind = "Queue",
    .list_kind = "QueueList", .plural = "queues", .singular = "queue",
    .short_names = {"q", "queue-v1beta1", NULL},
    .namespaced = false, .has_status = true,
    .apply_defaults = queue_defaults, .validate = queue_validate,
    .columns = queue_columns, .ncolumns = sizeof(queue_columns) / sizeof(queue_columns[0]),
    .row_cells = queue_cells, .schema = &queue_schema,
    .column_paths = queue_columns_paths,
};
