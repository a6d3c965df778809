/* kind_service.c - core/v1 Service: defaults, validation and kubectl's columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "api/kind_core_int.h"

/* ---- Service ------------------------------------------------------------ */

static const char *const svc_types[] = {"ClusterIP", "ExternalName", "LoadBalancer",
                                        "NodePort", NULL};
static const char *const svc_protocols[] = {"SCTP", "TCP", "UDP", NULL};
static const char *const svc_affinities[] = {"ClientIP", "None", NULL};

static void service_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec"), *p;
    size_t i;

    meta_default(spec, "type", json_string("ClusterIP"));
    meta_default(spec, "sessionAffinity", json_string("None"));
    if (strcmp(or_str(meta_str(spec, "type"), ""), "ExternalName") != 0)
        meta_default(spec, "internalTrafficPolicy", json_string("Cluster"));
    json_array_foreach(json_object_get(spec, "ports"), i, p) {
        meta_default(p, "protocol", json_string("TCP"));
        if (json_object_get(p, "port"))
            meta_default(p, "targetPort", json_deep_copy(json_object_get(p, "port")));
    }
    meta_child(obj, "status");
    meta_default(json_object_get(obj, "status"), "loadBalancer", json_object());
}

static void service_port_checks(const json_t *p, size_t i, size_t nports, json_t *names,
                                ty_error *err)
{
    char f[PATH_LEN];
    const char *name = meta_str(p, "name");
    json_t *v;

    snprintf(f, sizeof(f), "spec.ports[%zu].name", i);
    if (nports > 1 && (!name || !*name))
        meta_required(err, f, NULL);
    if (name && *name) {
        meta_check_dns1123_label(f, name, err);
        if (json_object_get(names, name))
            meta_duplicate(err, f, json_object_get(p, "name"));
        json_object_set_new(names, name, json_true());
    }
    snprintf(f, sizeof(f), "spec.ports[%zu].port", i);
    v = json_object_get(p, "port");
    if (!v || (json_is_integer(v) && json_integer_value(v) == 0))
        meta_required(err, f, NULL);
    else if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535)
        meta_invalid(err, f, v, "must be between 1 and 65535, inclusive");
    snprintf(f, sizeof(f), "spec.ports[%zu].protocol", i);
    if ((v = json_object_get(p, "protocol")) && !in_set(json_string_value(v), svc_protocols))
        meta_not_supported(err, f, v, svc_protocols);
    snprintf(f, sizeof(f), "spec.ports[%zu].targetPort", i);
    v = json_object_get(p, "targetPort");
    if (json_is_integer(v) && (json_integer_value(v) < 1 || json_integer_value(v) > 65535))
        meta_invalid(err, f, v, "must be between 1 and 65535, inclusive");
    else if (v && !json_is_integer(v) && !json_is_string(v))
        meta_invalid(err, f, v, "must be an integer or a port name");
}

static int service_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec");
    const char *type = or_str(meta_str(spec, "type"), "ClusterIP");
    const char *cip = meta_str(spec, "clusterIP");
    size_t before = ty_error_ncauses(err), i, nports;
    json_t *p, *names = json_object(), *v;

    nports = json_array_size(json_object_get(spec, "ports"));
    if ((v = json_object_get(spec, "type")) && !in_set(type, svc_types))
        meta_not_supported(err, "spec.type", v, svc_types);
    if (strcmp(type, "ExternalName") == 0) {
        const char *en = meta_str(spec, "externalName");
        if (!en || !*en)
            meta_required(err, "spec.externalName", NULL);
        else
            meta_check_dns1123_subdomain("spec.externalName", en, err);
    } else if (nports == 0 && !(cip && strcmp(cip, "None") == 0)) {
        meta_required(err, "spec.ports", NULL);
    }
    if (cip && strcmp(cip, "None") == 0 && (strcmp(type, "NodePort") == 0 ||
                                            strcmp(type, "LoadBalancer") == 0))
        meta_invalid_str(err, "spec.clusterIPs[0]", cip,
                         "may not be set to 'None' for LoadBalancer services");
    if ((v = json_object_get(spec, "sessionAffinity")) && !in_set(json_string_value(v), svc_affinities))
        meta_not_supported(err, "spec.sessionAffinity", v, svc_affinities);
    json_array_foreach(json_object_get(spec, "ports"), i, p)
        service_port_checks(p, i, nports, names, err);
    meta_check_selector_map("spec.selector", json_object_get(spec, "selector"), err);
    /* The cluster IP, once assigned, stays (a headless service stays headless). */
    if (old) {
        const char *ocip = meta_str(json_object_get(old, "spec"), "clusterIP");
        if (ocip && *ocip && cip && *cip && strcmp(ocip, cip) != 0)
            meta_invalid_str(err, "spec.clusterIPs[0]", cip, "may not change once set");
    }
    json_decref(names);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void join_append(char *buf, size_t len, const char *s)
{
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, "%s%s", used ? "," : "", s);
}

static void service_external_ip(const json_t *spec, const json_t *status, char *buf, size_t len)
{
    const char *type = or_str(meta_str(spec, "type"), "ClusterIP");
    size_t i;
    json_t *v;

    buf[0] = '\0';
    json_array_foreach(json_object_get(spec, "externalIPs"), i, v)
        join_append(buf, len, or_str(json_string_value(v), ""));
    if (strcmp(type, "ExternalName") == 0) {
        snprintf(buf, len, "%s", or_str(meta_str(spec, "externalName"), "<none>"));
    } else if (strcmp(type, "LoadBalancer") == 0) {
        json_array_foreach(json_object_get(json_object_get(status, "loadBalancer"), "ingress"), i, v)
            join_append(buf, len, or_str(meta_str(v, "ip"), or_str(meta_str(v, "hostname"), "")));
        if (!buf[0])
            snprintf(buf, len, "<pending>");
    }
    if (!buf[0])
        snprintf(buf, len, "<none>");
}

static void service_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *spec = json_object_get(obj, "spec"), *sel = json_object_get(spec, "selector");
    char buf[512] = "", item[64];
    const char *key;
    size_t i;
    json_t *p;

    json_array_append_new(cells, json_string(or_str(meta_str(spec, "type"), "ClusterIP")));
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "clusterIP"), "<none>")));
    service_external_ip(spec, json_object_get(obj, "status"), buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
    buf[0] = '\0';
    json_array_foreach(json_object_get(spec, "ports"), i, p) {
        const char *proto = or_str(meta_str(p, "protocol"), "TCP");
        if (meta_int(p, "nodePort", 0))
            snprintf(item, sizeof(item), "%lld:%lld/%s", (long long)meta_int(p, "port", 0),
                     (long long)meta_int(p, "nodePort", 0), proto);
        else
            snprintf(item, sizeof(item), "%lld/%s", (long long)meta_int(p, "port", 0), proto);
        join_append(buf, sizeof(buf), item);
    }
    json_array_append_new(cells, json_string(buf[0] ? buf : "<none>"));
    age_cell(obj, now, cells);
    /* Selector keys sorted, as labels.Set.String() prints them. */
    const char *keys[64];
    size_t n = 0;
    json_object_foreach((json_t *)sel, key, p)
        if (n < 64)
            keys[n++] = key;
    qsort(keys, n, sizeof(keys[0]), cmp_str);
    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        char kv[256];
        snprintf(kv, sizeof(kv), "%s=%s", keys[i], or_str(meta_str(sel, keys[i]), ""));
        join_append(buf, sizeof(buf), kv);
    }
    json_array_append_new(cells, json_string(buf[0] ? buf : "<none>"));
}

static const api_column service_columns[] = {
    {"Type", "string", "", "type determines how the Service is exposed.", 0},
    {"Cluster-IP", "string", "", "clusterIP is the IP address of the service.", 0},
    {"External-IP", "string", "", "externalIPs is a list of IP addresses for which nodes in "
     "the cluster will also accept traffic for this service.", 0},
    {"Port(s)", "string", "", "The list of ports that are exposed by this service.", 0},
    AGE_COLUMN,
    {"Selector", "string", "", "Route service traffic to pods with label keys and values "
     "matching this selector.", 1},
};
static const api_field service_port_fields[] = {
    API_FIELD("name", API_T_STRING), API_FIELD("protocol", API_T_STRING),
    API_FIELD("appProtocol", API_T_STRING), API_FIELD("port", API_T_INT32),
    API_FIELD("targetPort", API_T_INT_OR_STRING), API_FIELD("nodePort", API_T_INT32),
};
static const api_schema service_port = {
    .fields = service_port_fields, .nfields = API_NFIELDS(service_port_fields),
    .go_name = "ServicePort",
};
static const api_field service_spec_fields[] = {
    {.name = "ports", .type = API_T_ARRAY, .item_type = API_T_OBJECT, .schema = &service_port,
     .merge_key = "port", .patch_strategy = "merge"},
    API_MAP("selector", API_T_STRING),
    API_FIELD("clusterIP", API_T_STRING), API_ARRAY("clusterIPs", API_T_STRING),
    API_FIELD("type", API_T_STRING), API_ARRAY("externalIPs", API_T_STRING),
    API_FIELD("sessionAffinity", API_T_STRING), API_FIELD("loadBalancerIP", API_T_STRING),
    API_ARRAY("loadBalancerSourceRanges", API_T_STRING),
    API_FIELD("externalName", API_T_STRING), API_FIELD("externalTrafficPolicy", API_T_STRING),
    API_FIELD("healthCheckNodePort", API_T_INT32),
    API_FIELD("publishNotReadyAddresses", API_T_BOOLEAN),
    API_FIELD("sessionAffinityConfig", API_T_OPEN), API_ARRAY("ipFamilies", API_T_STRING),
    API_FIELD("ipFamilyPolicy", API_T_STRING),
    API_FIELD("allocateLoadBalancerNodePorts", API_T_BOOLEAN),
    API_FIELD("loadBalancerClass", API_T_STRING),
    API_FIELD("internalTrafficPolicy", API_T_STRING),
    API_FIELD("trafficDistribution", API_T_STRING),
};
static const api_schema service_spec = {
    .fields = service_spec_fields, .nfields = API_NFIELDS(service_spec_fields),
    .go_name = "ServiceSpec",
};
static const api_field service_fields[] = {
    API_OBJECT("spec", &service_spec), API_OBJECT("status", &api_schema_condition_status),
};
static const api_schema service_schema = API_SCHEMA(service_fields);
static const char *const service_field_selectors[] = {"spec.clusterIP", "spec.type", NULL};

const api_resource api_service = {
    .group = "", .version = "v1", .kind = "Service", .list_kind = "ServiceList",
    .plural = "services", .singular = "service", .short_names = {"svc", NULL},
    .categories = {"all", NULL},
    .namespaced = true, .has_status = true, .builtin = true,
    .field_selectors = service_field_selectors,
    .apply_defaults = service_defaults, .validate = service_validate,
    .columns = service_columns, .ncolumns = NCOLS(service_columns),
    .row_cells = service_cells, .schema = &service_schema,
};

