/* kind_jobflow.c - Volcano's JobFlow and JobTemplate (flow.volcano.sh/v1alpha1):
 * a JobTemplate holds a Volcano Job's spec; a JobFlow names templates and the
 * templates each waits for. Their CRDs' defaults and bounds, and the JobFlow
 * webhook's rule: the dependencies name flows of the JobFlow and form a DAG. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"

#define PATH_LEN 256
#define MAX_FLOWS 256

static const char *const retain_policies[] = {"retain", "delete", NULL};

/* ---- JobFlow ------------------------------------------------------------ */

static const json_t *flow_deps(const json_t *flow)
{
    return json_object_get(json_object_get(flow, "dependsOn"), "targets");
}

/* The ports of a flow's probes: 0-65535 (the CRD's bounds). */
static void check_probe(const json_t *probe, size_t flow_i, ty_error *err)
{
    const char *lists[] = {"httpGetList", "tcpSocketList", NULL};
    char f[PATH_LEN];
    size_t i;
    json_t *item, *port;

    for (size_t l = 0; lists[l]; l++)
        json_array_foreach(json_object_get(probe, lists[l]), i, item) {
            port = json_object_get(item, "port");
            snprintf(f, sizeof(f), "spec.flows[%zu].dependsOn.probe.%s[%zu].port", flow_i,
                     lists[l], i);
            if (json_is_integer(port) &&
                (json_integer_value(port) < 0 || json_integer_value(port) > 65535))
                meta_invalid(err, f, port, "should be in the range 0 to 65535");
        }
}

static int jobflow_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *flows = json_object_get(spec, "flows");
    size_t before = ty_error_ncauses(err), i, k;
    unsigned char state[MAX_FLOWS] = {0};
    char f[PATH_LEN];
    json_t *flow, *t, *v;

    (void)old;
    if ((v = json_object_get(spec, "jobRetainPolicy")) && json_is_string(v)) {
        bool ok = false;
        for (size_t r = 0; retain_policies[r]; r++)
            ok |= strcmp(json_string_value(v), retain_policies[r]) == 0;
        if (!ok)
            meta_not_supported(err, "spec.jobRetainPolicy", v, retain_policies);
    }
    if (json_array_size(flows) > MAX_FLOWS) {
        meta_too_many(err, "spec.flows", json_array_size(flows), MAX_FLOWS);
        return -1;
    }
    json_array_foreach(flows, i, flow) {
        const char *name = meta_str(flow, "name");
        snprintf(f, sizeof(f), "spec.flows[%zu].name", i);
        if (!name || !*name)
            meta_required(err, f, NULL);
        json_array_foreach(json_object_get(json_object_get(flow, "dependsOn"), "targets"), k, t) {
            snprintf(f, sizeof(f), "spec.flows[%zu].dependsOn.targets[%zu]", i, k);
            if (json_is_string(t) && meta_named_index(flows, json_string_value(t)) < 0)
                meta_invalid(err, f, t, "vertex is not defined: %s", json_string_value(t));
        }
        check_probe(json_object_get(json_object_get(flow, "dependsOn"), "probe"), i, err);
    }
    if (ty_error_ncauses(err) != before)
        return -1;
    for (i = 0; i < json_array_size(flows); i++)
        if (meta_depends_cycle(flows, i, flow_deps, state)) {
            meta_invalid(err, "spec.flows", json_object_get(json_array_get(flows, i), "name"),
                         "jobflow Flow is not DAG");
            return -1;
        }
    return 0;
}

static void jobflow_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *phase = meta_str(json_object_get(json_object_get(obj, "status"), "state"),
                                 "phase");
    char age[32];

    json_array_append_new(cells, phase ? json_string(phase) : json_null());
    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}

static const api_column jobflow_columns[] = {
    {"Status", "string", "", "", 0},
    {"Age", "date", "", "", 0},
};
static const api_column_path jobflow_columns_paths[] = {
    {"Status", ".status.state.phase"},
    {"Age", ".metadata.creationTimestamp"},
    {NULL, NULL},
};

static const api_field header_fields[] = {
    API_FIELD("name", API_T_STRING), API_FIELD("value", API_T_STRING),
};
static const api_schema header = API_SCHEMA(header_fields);
static const api_field http_get_fields[] = {
    API_FIELD("taskName", API_T_STRING), API_FIELD("path", API_T_STRING),
    API_FIELD("port", API_T_INTEGER), API_OBJECT("httpHeader", &header),
};
static const api_schema http_get = API_SCHEMA(http_get_fields);
static const api_field tcp_socket_fields[] = {
    API_FIELD("taskName", API_T_STRING), API_FIELD("port", API_T_INTEGER),
};
static const api_schema tcp_socket = API_SCHEMA(tcp_socket_fields);
static const api_field task_status_fields[] = {
    API_FIELD("taskName", API_T_STRING), API_FIELD("phase", API_T_STRING),
};
static const api_schema task_status = API_SCHEMA(task_status_fields);
static const api_field probe_fields[] = {
    API_ARRAY_OF("httpGetList", &http_get),
    API_ARRAY_OF("tcpSocketList", &tcp_socket),
    API_ARRAY_OF("taskStatusList", &task_status),
};
static const api_schema probe = API_SCHEMA(probe_fields);
static const api_field depends_on_fields[] = {
    API_ARRAY("targets", API_T_STRING), API_OBJECT("probe", &probe),
};
static const api_schema depends_on = API_SCHEMA(depends_on_fields);
static const api_field patch_fields[] = {API_OBJECT("jobSpec", &api_vcjob_spec_schema)};
static const api_schema patch = API_SCHEMA(patch_fields);
static const api_field flow_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_OBJECT("dependsOn", &depends_on),
    API_OBJECT("patch", &patch),
};
static const api_schema flow = API_SCHEMA(flow_fields);
static const api_field jobflow_spec_fields[] = {
    API_ARRAY_OF("flows", &flow),
    API_FIELD("jobRetainPolicy", API_T_STRING),
};
static const api_schema jobflow_spec = API_SCHEMA(jobflow_spec_fields);
static const api_field jobflow_fields[] = {
    API_OBJECT("spec", &jobflow_spec),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema jobflow_schema = {
    .fields = jobflow_fields, .nfields = API_NFIELDS(jobflow_fields),
    .description = "JobFlow is the Schema for the jobflows API",
};

const api_resource api_jobflow = {
    .group = "flow.volcano.sh", .version = "v1alpha1", .kind = "JobFlow",
    .list_kind = "JobFlowList", .plural = "jobflows", .singular = "jobflow",
    .short_names = {"jf", NULL},
    .namespaced = true, .has_status = true,
    .validate = jobflow_validate,
    .columns = jobflow_columns, .ncolumns = sizeof(jobflow_columns) / sizeof(jobflow_columns[0]),
    .row_cells = jobflow_cells, .schema = &jobflow_schema,
    .column_paths = jobflow_columns_paths,
};

/* ---- JobTemplate -------------------------------------------------------- */

/* The CRD's defaults of a Job spec (the Job webhook's come when a Job is
 * made from the template). */
static void jobtemplate_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec");

    meta_default(spec, "maxRetry", json_integer(3));
    meta_default(spec, "queue", json_string("default"));
}

static void jobtemplate_cells(const json_t *obj, time_t now, json_t *cells)
{
    char age[32];

    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}

static const api_column jobtemplate_columns[] = {
    {"Age", "date", "", "", 0},
};
static const api_column_path jobtemplate_columns_paths[] = {
    {"Age", ".metadata.creationTimestamp"},
    {NULL, NULL},
};

static const api_field jobtemplate_fields[] = {
    API_OBJECT("spec", &api_vcjob_spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema jobtemplate_schema = {
    .fields = jobtemplate_fields, .nfields = API_NFIELDS(jobtemplate_fields),
    .description = "JobTemplate is the Schema for the jobtemplate API",
};

const api_resource api_jobtemplate = {
    .group = "flow.volcano.sh", .version = "v1alpha1", .kind = "JobTemplate",
    .list_kind = "JobTemplateList", .plural = "jobtemplates", .singular = "jobtemplate",
    .short_names = {"jt", NULL},
    .namespaced = true, .has_status = true,
    .apply_defaults = jobtemplate_defaults,
    .columns = jobtemplate_columns,
    .ncolumns = sizeof(jobtemplate_columns) / sizeof(jobtemplate_columns[0]),
    .column_paths = jobtemplate_columns_paths,
    .row_cells = jobtemplate_cells, .schema = &jobtemplate_schema,
};
