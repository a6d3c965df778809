/* kind_core.c - the core/v1 kinds other than Pod and Service (Namespace, Node,
 * ConfigMap, Secret, Event) and scheduling.k8s.io/v1 PriorityClass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/podsecurity.h"
#include "api/schema.h"
#include "api/kind_core_int.h"
#include "base/timeutil.h"

/* ---- Namespace ---------------------------------------------------------- */

static void namespace_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec");
    meta_default(spec, "finalizers", json_pack("[s]", "kubernetes"));
    meta_default(meta_child(obj, "status"), "phase", json_string("Active"));
}

/* Pod Security's labels and the id block (api/podsecurity.h). */
static int namespace_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    return psa_namespace_validate(obj, old, err) ? -1 : 0;
}

static void namespace_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *phase = meta_str(json_object_get(obj, "status"), "phase");
    json_array_append_new(cells, json_string(or_str(phase, "")));
    age_cell(obj, now, cells);
}

static const api_column namespace_columns[] = {
    {"Status", "string", "", "The status of the namespace", 0},
    AGE_COLUMN,
};
static const api_field namespace_spec_fields[] = {API_ARRAY("finalizers", API_T_STRING)};
static const api_schema namespace_spec = {
    .fields = namespace_spec_fields, .nfields = API_NFIELDS(namespace_spec_fields),
    .go_name = "NamespaceSpec",
};
static const api_field namespace_fields[] = {
    API_OBJECT("spec", &namespace_spec), API_OBJECT("status", &api_schema_condition_status),
};
static const api_schema namespace_schema = API_SCHEMA(namespace_fields);
static const char *const namespace_field_selectors[] = {"status.phase", NULL};

const api_resource api_namespace = {
    .group = "", .version = "v1", .kind = "Namespace", .list_kind = "NamespaceList",
    .plural = "namespaces", .singular = "namespace", .short_names = {"ns", NULL},
    .namespaced = false, .has_status = true, .builtin = true,
    .field_selectors = namespace_field_selectors,
    .apply_defaults = namespace_defaults,
    .validate = namespace_validate,
    .columns = namespace_columns, .ncolumns = NCOLS(namespace_columns),
    .row_cells = namespace_cells, .schema = &namespace_schema,
};

/* ---- Node --------------------------------------------------------------- */

static const char *const taint_effects[] = {"NoExecute", "NoSchedule", "PreferNoSchedule", NULL};

static int node_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err), i;
    json_t *t;
    char f[PATH_LEN];

    (void)old;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "taints"), i, t) {
        json_t *effect = json_object_get(t, "effect");
        snprintf(f, sizeof(f), "spec.taints[%zu].key", i);
        if (!meta_str(t, "key") || !*meta_str(t, "key"))
            meta_required(err, f, NULL);
        else
            meta_check_qualified_name(f, meta_str(t, "key"), err);
        snprintf(f, sizeof(f), "spec.taints[%zu].effect", i);
        if (!effect)
            meta_required(err, f, NULL);
        else if (!in_set(json_string_value(effect), taint_effects))
            meta_not_supported(err, f, effect, taint_effects);
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void node_status_text(const json_t *obj, char *buf, size_t len)
{
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    const char *ready = NULL;
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c)
        if (meta_str(c, "type") && strcmp(meta_str(c, "type"), "Ready") == 0)
            ready = meta_str(c, "status");
    if (!ready)
        snprintf(buf, len, "Unknown");
    else
        snprintf(buf, len, "%s", strcmp(ready, "True") == 0 ? "Ready" : "NotReady");
    if (json_is_true(json_object_get(json_object_get(obj, "spec"), "unschedulable")))
        snprintf(buf + strlen(buf), len - strlen(buf), ",SchedulingDisabled");
}

/* Roles from node-role.kubernetes.io/<role> labels and kubernetes.io/role. */
static void node_roles(const json_t *obj, char *buf, size_t len)
{
    static const char prefix[] = "node-role.kubernetes.io/";
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *roles[32], *key;
    size_t n = 0, used = 0;
    json_t *v;

    json_object_foreach((json_t *)labels, key, v) {
        if (n < 32 && strncmp(key, prefix, sizeof(prefix) - 1) == 0 && key[sizeof(prefix) - 1])
            roles[n++] = key + sizeof(prefix) - 1;
        else if (n < 32 && strcmp(key, "kubernetes.io/role") == 0 && json_string_length(v))
            roles[n++] = json_string_value(v);
    }
    qsort(roles, n, sizeof(roles[0]), cmp_str);
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        if (i && strcmp(roles[i], roles[i - 1]) == 0)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", roles[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (!buf[0])
        snprintf(buf, len, "<none>");
}

static const char *node_address(const json_t *obj, const char *type)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "addresses"), i, a)
        if (meta_str(a, "type") && strcmp(meta_str(a, "type"), type) == 0)
            return meta_str(a, "address");
    return NULL;
}

static void node_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *info = json_object_get(json_object_get(obj, "status"), "nodeInfo");
    char buf[256];

    node_status_text(obj, buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
    node_roles(obj, buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
    age_cell(obj, now, cells);
    json_array_append_new(cells, json_string(or_str(meta_str(info, "kubeletVersion"), "")));
    json_array_append_new(cells, json_string(or_str(node_address(obj, "InternalIP"), "<none>")));
    json_array_append_new(cells, json_string(or_str(node_address(obj, "ExternalIP"), "<none>")));
    json_array_append_new(cells, json_string(or_str(meta_str(info, "osImage"), "<unknown>")));
    json_array_append_new(cells, json_string(or_str(meta_str(info, "kernelVersion"), "<unknown>")));
    json_array_append_new(cells, json_string(or_str(meta_str(info, "containerRuntimeVersion"),
                                                    "<unknown>")));
}

static const api_column node_columns[] = {
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    AGE_COLUMN,
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "", "List of addresses reachable to the node.", 1},
    {"External-IP", "string", "", "List of addresses reachable to the node.", 1},
    {"OS-Image", "string", "", "OS Image reported by the node from /etc/os-release.", 1},
    {"Kernel-Version", "string", "", "Kernel Version reported by the node.", 1},
    {"Container-Runtime", "string", "", "Container Runtime Version reported by the node.", 1},
};
static const api_field node_spec_fields[] = {
    API_FIELD("podCIDR", API_T_STRING),
    {.name = "podCIDRs", .type = API_T_ARRAY, .item_type = API_T_STRING,
     .patch_strategy = "merge"},
    API_FIELD("providerID", API_T_STRING), API_FIELD("unschedulable", API_T_BOOLEAN),
    API_ARRAY("taints", API_T_OPEN), API_FIELD("configSource", API_T_OPEN),
    API_FIELD("externalID", API_T_STRING),
};
static const api_schema node_spec = {
    .fields = node_spec_fields, .nfields = API_NFIELDS(node_spec_fields), .go_name = "NodeSpec",
};
static const api_field node_status_fields[] = {
    {.name = "conditions", .type = API_T_ARRAY, .item_type = API_T_OPEN, .merge_key = "type",
     .patch_strategy = "merge"},
    {.name = "addresses", .type = API_T_ARRAY, .item_type = API_T_OPEN, .merge_key = "type",
     .patch_strategy = "merge"},
};
static const api_schema node_status = {
    .fields = node_status_fields, .nfields = API_NFIELDS(node_status_fields),
    .preserve_unknown = true, .go_name = "NodeStatus",
};
static const api_field node_fields[] = {
    API_OBJECT("spec", &node_spec), API_OBJECT("status", &node_status),
};
static const api_schema node_schema = API_SCHEMA(node_fields);
static const char *const node_field_selectors[] = {"spec.unschedulable", NULL};

const api_resource api_node = {
    .group = "", .version = "v1", .kind = "Node", .list_kind = "NodeList",
    .plural = "nodes", .singular = "node", .short_names = {"no", NULL},
    .namespaced = false, .has_status = true, .builtin = true,
    .field_selectors = node_field_selectors,
    .validate = node_validate,
    .columns = node_columns, .ncolumns = NCOLS(node_columns),
    .row_cells = node_cells, .schema = &node_schema,
};

/* ---- ConfigMap and Secret ----------------------------------------------- */

#define DATA_MAX (1024 * 1024)

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Standard, padded base64. Returns the decoded length or -1. */
static long b64_decoded_len(const char *s)
{
    size_t n = strlen(s), pad = 0;

    if (n % 4)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '=' && i >= n - 2) {
            pad++;
            continue;
        }
        if (pad || b64val(s[i]) < 0)
            return -1;
    }
    return (long)(n / 4 * 3 - pad);
}

static char *b64_encode(const char *in, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)in[i] << 16;
        if (i + 1 < n) v |= (unsigned char)in[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)in[i + 2];
        *o++ = tab[(v >> 18) & 63];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* Keys of data (and binaryData) are config keys; no key in both. Returns
 * the total size of the values. */
static size_t check_data_keys(const json_t *obj, const char *other, ty_error *err)
{
    const json_t *data = json_object_get(obj, "data"), *bin = json_object_get(obj, other);
    char f[PATH_LEN];
    const char *key;
    json_t *v;
    size_t total = 0;

    json_object_foreach((json_t *)data, key, v) {
        snprintf(f, sizeof(f), "data[%s]", key);
        meta_check_config_key(f, key, err);
        total += json_string_length(v);
    }
    json_object_foreach((json_t *)bin, key, v) {
        snprintf(f, sizeof(f), "%s[%s]", other, key);
        meta_check_config_key(f, key, err);
        if (json_object_get(data, key))
            meta_invalid_str(err, f, key, "duplicate of key present in data");
        total += json_string_length(v);
    }
    return total;
}

static void check_immutable_data(const json_t *obj, const json_t *old, const char *other,
                                 ty_error *err)
{
    if (!old || !json_is_true(json_object_get(old, "immutable")))
        return;
    if (!json_equal(json_object_get(obj, "data"), json_object_get(old, "data")))
        meta_forbidden(err, "data", "field is immutable when `immutable` is set");
    if (!json_equal(json_object_get(obj, other), json_object_get(old, other)))
        meta_forbidden(err, other, "field is immutable when `immutable` is set");
    if (!json_is_true(json_object_get(obj, "immutable")))
        meta_forbidden(err, "immutable", "field is immutable when `immutable` is set");
}

static int configmap_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);

    if (check_data_keys(obj, "binaryData", err) > DATA_MAX)
        meta_too_long(err, "", DATA_MAX);
    check_immutable_data(obj, old, "binaryData", err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void count_cell(const json_t *obj, const char *other, json_t *cells)
{
    json_array_append_new(cells, json_integer((json_int_t)(
        json_object_size(json_object_get(obj, "data")) +
        json_object_size(json_object_get(obj, other)))));
}

static void configmap_cells(const json_t *obj, time_t now, json_t *cells)
{
    count_cell(obj, "binaryData", cells);
    age_cell(obj, now, cells);
}

static const api_column configmap_columns[] = {
    {"Data", "integer", "", "Data contains the configuration data.", 0},
    AGE_COLUMN,
};
static const api_field configmap_fields[] = {
    API_MAP("data", API_T_STRING), API_MAP("binaryData", API_T_STRING),
    API_FIELD("immutable", API_T_BOOLEAN),
};
static const api_schema configmap_schema = API_SCHEMA(configmap_fields);

const api_resource api_configmap = {
    .group = "", .version = "v1", .kind = "ConfigMap", .list_kind = "ConfigMapList",
    .plural = "configmaps", .singular = "configmap", .short_names = {"cm", NULL},
    .namespaced = true, .builtin = true,
    .validate = configmap_validate,
    .columns = configmap_columns, .ncolumns = NCOLS(configmap_columns),
    .row_cells = configmap_cells, .schema = &configmap_schema,
};

/* stringData is write-only: it is folded into data (base64) and dropped. */
static void secret_defaults(json_t *obj)
{
    json_t *sd = json_object_get(obj, "stringData"), *v;
    const char *key;

    meta_default(obj, "type", json_string("Opaque"));
    if (!json_is_object(sd))
        return;
    json_object_foreach(sd, key, v) {
        char *enc;
        if (!json_is_string(v))
            continue;
        enc = b64_encode(json_string_value(v), json_string_length(v));
        if (enc)
            json_object_set_new(meta_child(obj, "data"), key, json_string(enc));
        free(enc);
    }
    json_object_del(obj, "stringData");
}

static void secret_required_key(const json_t *obj, const char *type, const char *want,
                                const char *key, ty_error *err)
{
    char f[PATH_LEN];
    if (strcmp(type, want) != 0 || json_object_get(json_object_get(obj, "data"), key))
        return;
    snprintf(f, sizeof(f), "data[%s]", key);
    meta_required(err, f, NULL);
}

static int secret_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err), total = 0;
    const char *type = or_str(meta_str(obj, "type"), "Opaque"), *key;
    char f[PATH_LEN];
    json_t *v;

    check_data_keys(obj, "stringData", err);
    json_object_foreach(json_object_get(obj, "data"), key, v) {
        long n = json_is_string(v) ? b64_decoded_len(json_string_value(v)) : -1;
        snprintf(f, sizeof(f), "data[%s]", key);
        if (n < 0)
            meta_invalid_str(err, f, "<secret contents redacted>",
                             "illegal base64 data: values must be base64-encoded");
        else
            total += (size_t)n;
    }
    if (total > DATA_MAX)
        meta_too_long(err, "data", DATA_MAX);
    secret_required_key(obj, type, "kubernetes.io/tls", "tls.crt", err);
    secret_required_key(obj, type, "kubernetes.io/tls", "tls.key", err);
    secret_required_key(obj, type, "kubernetes.io/dockerconfigjson", ".dockerconfigjson", err);
    secret_required_key(obj, type, "kubernetes.io/dockercfg", ".dockercfg", err);
    secret_required_key(obj, type, "kubernetes.io/ssh-auth", "ssh-privatekey", err);
    if (old && strcmp(type, or_str(meta_str(old, "type"), "Opaque")) != 0)
        meta_invalid_str(err, "type", type, "field is immutable");
    check_immutable_data(obj, old, "stringData", err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void secret_cells(const json_t *obj, time_t now, json_t *cells)
{
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "type"), "Opaque")));
    count_cell(obj, "stringData", cells);
    age_cell(obj, now, cells);
}

static const api_column secret_columns[] = {
    {"Type", "string", "", "The type of the secret", 0},
    {"Data", "integer", "", "The number of entries in the secret", 0},
    AGE_COLUMN,
};
static const api_field secret_fields[] = {
    API_MAP("data", API_T_STRING), API_MAP("stringData", API_T_STRING),
    API_FIELD("type", API_T_STRING), API_FIELD("immutable", API_T_BOOLEAN),
};
static const api_schema secret_schema = API_SCHEMA(secret_fields);
static const char *const secret_field_selectors[] = {"type", NULL};

const api_resource api_secret = {
    .group = "", .version = "v1", .kind = "Secret", .list_kind = "SecretList",
    .plural = "secrets", .singular = "secret",
    .namespaced = true, .builtin = true,
    .field_selectors = secret_field_selectors,
    .apply_defaults = secret_defaults, .validate = secret_validate,
    .columns = secret_columns, .ncolumns = NCOLS(secret_columns),
    .row_cells = secret_cells, .schema = &secret_schema,
};

/* ---- Event -------------------------------------------------------------- */

static void time_since(const char *ts, time_t now, char *buf, size_t len)
{
    time_t t;
    if (!ts || ty_time_parse(ts, &t) != 0) {
        snprintf(buf, len, "<unknown>");
        return;
    }
    ty_duration_human((int64_t)(now - t), buf, len);
}

static int event_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const json_t *io = json_object_get(obj, "involvedObject");
    const char *ns = meta_str(json_object_get(obj, "metadata"), "namespace");
    const char *ions = meta_str(io, "namespace");

    (void)old;
    if (ns && *ns && ions && *ions && strcmp(ns, ions) != 0)
        meta_invalid_str(err, "involvedObject.namespace", ions,
                         "does not match event.namespace");
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* Upstream's event table has no leading Name column (Name is a wide column at
 * the end); registry.c leaves it out for this kind. */
static void event_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *io = json_object_get(obj, "involvedObject"), *src = json_object_get(obj, "source");
    const char *first_ts = or_str(meta_str(obj, "firstTimestamp"), meta_str(obj, "eventTime"));
    const char *last_ts = or_str(meta_str(obj, "lastTimestamp"), first_ts);
    const json_t *series = json_object_get(obj, "series");
    char first[32], last[32], target[320], source[256], kind[64];
    json_int_t count = meta_int(obj, "count", 0);
    const char *msg = or_str(meta_str(obj, "message"), "");
    size_t i;

    if (json_is_object(series)) {
        last_ts = meta_str(series, "lastObservedTime");
        count = meta_int(series, "count", count);
    }
    if (count == 0)
        count = 1;
    time_since(first_ts, now, first, sizeof(first));
    time_since(last_ts, now, last, sizeof(last));
    snprintf(kind, sizeof(kind), "%s", or_str(meta_str(io, "kind"), ""));
    for (i = 0; kind[i]; i++)
        kind[i] = (char)((kind[i] >= 'A' && kind[i] <= 'Z') ? kind[i] - 'A' + 'a' : kind[i]);
    if (meta_str(io, "name") && *meta_str(io, "name"))
        snprintf(target, sizeof(target), "%s/%s", kind, meta_str(io, "name"));
    else
        snprintf(target, sizeof(target), "%s", kind);
    if (meta_str(src, "component") && *meta_str(src, "component"))
        snprintf(source, sizeof(source), "%s%s%s", meta_str(src, "component"),
                 meta_str(src, "host") && *meta_str(src, "host") ? ", " : "",
                 or_str(meta_str(src, "host"), ""));
    else
        snprintf(source, sizeof(source), "%s%s%s", or_str(meta_str(obj, "reportingComponent"), ""),
                 meta_str(obj, "reportingInstance") && *meta_str(obj, "reportingInstance") ? ", " : "",
                 or_str(meta_str(obj, "reportingInstance"), ""));
    json_array_append_new(cells, json_string(last));
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "type"), "")));
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "reason"), "")));
    json_array_append_new(cells, json_string(target));
    json_array_append_new(cells, json_string(or_str(meta_str(io, "fieldPath"), "")));
    json_array_append_new(cells, json_string(source));
    json_array_append_new(cells, json_string(msg));
    json_array_append_new(cells, json_string(first));
    json_array_append_new(cells, json_integer(count));
    json_array_append_new(cells, json_string(or_str(meta_str(json_object_get(obj, "metadata"),
                                                             "name"), "")));
}

static const api_column event_columns[] = {
    {"Last Seen", "string", "", "The last time the event was seen.", 0},
    {"Type", "string", "", "Type of this event (Normal, Warning).", 0},
    {"Reason", "string", "", "A short, machine understandable string that gives the reason "
     "for this event.", 0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "", "The field path of the object this event is about.", 1},
    {"Source", "string", "", "The component reporting this event.", 1},
    {"Message", "string", "", "A human-readable description of the status of this "
     "operation.", 0},
    {"First Seen", "string", "", "The time at which the event was first recorded.", 1},
    {"Count", "integer", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", "Name of the event.", 1},
};
static const api_field event_fields[] = {
    API_FIELD("involvedObject", API_T_OPEN), API_FIELD("reason", API_T_STRING),
    API_FIELD("message", API_T_STRING), API_FIELD("source", API_T_OPEN),
    API_FIELD("firstTimestamp", API_T_STRING), API_FIELD("lastTimestamp", API_T_STRING),
    API_FIELD("count", API_T_INT32), API_FIELD("type", API_T_STRING),
    API_FIELD("eventTime", API_T_STRING), API_FIELD("series", API_T_OPEN),
    API_FIELD("action", API_T_STRING), API_FIELD("related", API_T_OPEN),
    API_FIELD("reportingComponent", API_T_STRING), API_FIELD("reportingInstance", API_T_STRING),
};
static const api_schema event_schema = API_SCHEMA(event_fields);
static const char *const event_field_selectors[] = {
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
    "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type", NULL,
};

const api_resource api_event = {
    .group = "", .version = "v1", .kind = "Event", .list_kind = "EventList",
    .plural = "events", .singular = "event", .short_names = {"ev", NULL},
    .namespaced = true, .builtin = true,
    .field_selectors = event_field_selectors,
    .validate = event_validate,
    .columns = event_columns, .ncolumns = NCOLS(event_columns),
    .row_cells = event_cells, .schema = &event_schema,
};

/* ---- PriorityClass ------------------------------------------------------ */

#define HIGHEST_USER_PRIORITY 1000000000LL
static const char *const preemption_policies[] = {"Never", "PreemptLowerPriority", NULL};

static void priorityclass_defaults(json_t *obj)
{
    meta_default(obj, "preemptionPolicy", json_string("PreemptLowerPriority"));
}

static int priorityclass_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const char *name = or_str(meta_str(json_object_get(obj, "metadata"), "name"), "");
    json_t *v = json_object_get(obj, "value"), *p;
    bool system = strcmp(name, "system-cluster-critical") == 0 ||
                  strcmp(name, "system-node-critical") == 0;

    if (!v)
        meta_required(err, "value", NULL);
    else if (!json_is_integer(v) || json_integer_value(v) < -2147483648LL ||
             json_integer_value(v) > 2147483647LL)
        meta_invalid(err, "value", v, "must be a 32-bit integer");
    else if (!system && json_integer_value(v) > HIGHEST_USER_PRIORITY)
        meta_forbidden(err, "value", "maximum allowed value of a user defined priority is %lld",
                       HIGHEST_USER_PRIORITY);
    if (!system && strncmp(name, "system-", 7) == 0)
        meta_invalid_str(err, "metadata.name", name,
                         "priority class names with 'system-' prefix are reserved");
    if ((p = json_object_get(obj, "globalDefault")) && !json_is_boolean(p))
        meta_invalid(err, "globalDefault", p, "must be a boolean");
    if ((p = json_object_get(obj, "preemptionPolicy")) &&
        !in_set(json_string_value(p), preemption_policies))
        meta_not_supported(err, "preemptionPolicy", p, preemption_policies);
    if (old) {
        if (!json_equal(v, json_object_get(old, "value")))
            meta_forbidden(err, "value", "may not be changed in an update.");
        if (!json_equal(json_object_get(obj, "preemptionPolicy"),
                        json_object_get(old, "preemptionPolicy")))
            meta_invalid(err, "preemptionPolicy", json_object_get(obj, "preemptionPolicy"),
                         "field is immutable");
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void priorityclass_cells(const json_t *obj, time_t now, json_t *cells)
{
    json_array_append_new(cells, json_integer(meta_int(obj, "value", 0)));
    json_array_append_new(cells, json_boolean(json_is_true(json_object_get(obj, "globalDefault"))));
    age_cell(obj, now, cells);
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "preemptionPolicy"),
                                                    "PreemptLowerPriority")));
}

static const api_column priorityclass_columns[] = {
    {"Value", "integer", "", "value represents the integer value of this priority class.", 0},
    {"Global-Default", "boolean", "", "globalDefault specifies whether this PriorityClass "
     "should be considered as the default priority for pods that do not have any priority "
     "class.", 0},
    AGE_COLUMN,
    {"PreemptionPolicy", "string", "", "preemptionPolicy is the Policy for preempting pods "
     "with lower priority.", 0},
};
static const api_field priorityclass_fields[] = {
    API_FIELD("value", API_T_INT32), API_FIELD("globalDefault", API_T_BOOLEAN),
    API_FIELD("description", API_T_STRING), API_FIELD("preemptionPolicy", API_T_STRING),
};
static const api_schema priorityclass_schema = API_SCHEMA(priorityclass_fields);

const api_resource api_priorityclass = {
    .group = "scheduling.k8s.io", .version = "v1", .kind = "PriorityClass",
    .list_kind = "PriorityClassList", .plural = "priorityclasses", .singular = "priorityclass",
    .short_names = {"pc", NULL},
    .namespaced = false, .builtin = true,
    .apply_defaults = priorityclass_defaults, .validate = priorityclass_validate,
    .columns = priorityclass_columns, .ncolumns = NCOLS(priorityclass_columns),
    .row_cells = priorityclass_cells, .schema = &priorityclass_schema,
};
