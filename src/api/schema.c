/* schema.c - the shared core/v1 and meta/v1 schemas, the unknown-field walk
 * and the OpenAPI rendering of a schema.
 *
 * The pod schemas list every field of Kubernetes 1.32's PodSpec and Container
 * so that real manifests pass strict validation; deep and rarely mistyped
 * structures (probes, security contexts, volume sources) are open objects.
 */
#include "api/schema.h"

#include <stdio.h>
#include <string.h>

/* ---- meta/v1 ---------------------------------------------------------- */

static const api_field owner_ref_fields[] = {
    API_FIELD("apiVersion", API_T_STRING), API_FIELD("kind", API_T_STRING),
    API_FIELD("name", API_T_STRING), API_FIELD("uid", API_T_STRING),
    API_FIELD("controller", API_T_BOOLEAN), API_FIELD("blockOwnerDeletion", API_T_BOOLEAN),
};
static const api_schema owner_ref = {
    .fields = owner_ref_fields, .nfields = API_NFIELDS(owner_ref_fields),
    .go_name = "OwnerReference",
};

static const api_field object_meta_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("generateName", API_T_STRING),
    API_FIELD("namespace", API_T_STRING),
    API_FIELD("selfLink", API_T_STRING),
    API_FIELD("uid", API_T_STRING),
    API_FIELD("resourceVersion", API_T_STRING),
    API_FIELD("generation", API_T_INTEGER),
    API_FIELD("creationTimestamp", API_T_STRING),
    API_FIELD("deletionTimestamp", API_T_STRING),
    API_FIELD("deletionGracePeriodSeconds", API_T_INTEGER),
    API_MAP("labels", API_T_STRING),
    API_MAP("annotations", API_T_STRING),
    API_MERGE_LIST("ownerReferences", &owner_ref, "uid"),
    {.name = "finalizers", .type = API_T_ARRAY, .item_type = API_T_STRING,
     .patch_strategy = "merge"},
    API_ARRAY("managedFields", API_T_OPEN),
};
const api_schema api_schema_object_meta = {
    .fields = object_meta_fields, .nfields = API_NFIELDS(object_meta_fields),
    .description = "Standard object's metadata.",
    .go_name = "ObjectMeta",
};

static const api_field label_selector_fields[] = {
    API_MAP("matchLabels", API_T_STRING),
    API_ARRAY("matchExpressions", API_T_OPEN),
};
const api_schema api_schema_label_selector = {
    .fields = label_selector_fields, .nfields = API_NFIELDS(label_selector_fields),
    .go_name = "LabelSelector",
};

/* ---- core/v1 pod pieces ------------------------------------------------ */

static const api_field resource_fields[] = {
    API_MAP("limits", API_T_QUANTITY),
    API_MAP("requests", API_T_QUANTITY),
    API_ARRAY("claims", API_T_OPEN),
};
const api_schema api_schema_resource_requirements = {
    .fields = resource_fields, .nfields = API_NFIELDS(resource_fields),
    .go_name = "ResourceRequirements",
};

static const api_field port_fields[] = {
    API_FIELD("name", API_T_STRING), API_FIELD("hostPort", API_T_INT32),
    API_FIELD("containerPort", API_T_INT32), API_FIELD("protocol", API_T_STRING),
    API_FIELD("hostIP", API_T_STRING),
};
static const api_schema container_port = {
    .fields = port_fields, .nfields = API_NFIELDS(port_fields), .go_name = "ContainerPort",
};

static const api_field env_fields[] = {
    API_FIELD("name", API_T_STRING), API_FIELD("value", API_T_STRING),
    API_FIELD("valueFrom", API_T_OPEN),
};
static const api_schema env_var = {
    .fields = env_fields, .nfields = API_NFIELDS(env_fields), .go_name = "EnvVar",
};

static const api_field mount_fields[] = {
    API_FIELD("name", API_T_STRING), API_FIELD("readOnly", API_T_BOOLEAN),
    API_FIELD("recursiveReadOnly", API_T_STRING), API_FIELD("mountPath", API_T_STRING),
    API_FIELD("subPath", API_T_STRING), API_FIELD("mountPropagation", API_T_STRING),
    API_FIELD("subPathExpr", API_T_STRING),
};
static const api_schema volume_mount = {
    .fields = mount_fields, .nfields = API_NFIELDS(mount_fields), .go_name = "VolumeMount",
};

static const api_field container_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("image", API_T_STRING),
    API_ARRAY("command", API_T_STRING),
    API_ARRAY("args", API_T_STRING),
    API_FIELD("workingDir", API_T_STRING),
    {.name = "ports", .type = API_T_ARRAY, .item_type = API_T_OBJECT, .schema = &container_port,
     .merge_key = "containerPort", .patch_strategy = "merge"},
    API_ARRAY("envFrom", API_T_OPEN),
    API_MERGE_LIST("env", &env_var, "name"),
    API_OBJECT("resources", &api_schema_resource_requirements),
    API_ARRAY("resizePolicy", API_T_OPEN),
    API_FIELD("restartPolicy", API_T_STRING),
    API_MERGE_LIST("volumeMounts", &volume_mount, "mountPath"),
    {.name = "volumeDevices", .type = API_T_ARRAY, .item_type = API_T_OPEN,
     .merge_key = "devicePath", .patch_strategy = "merge"},
    API_FIELD("livenessProbe", API_T_OPEN),
    API_FIELD("readinessProbe", API_T_OPEN),
    API_FIELD("startupProbe", API_T_OPEN),
    API_FIELD("lifecycle", API_T_OPEN),
    API_FIELD("terminationMessagePath", API_T_STRING),
    API_FIELD("terminationMessagePolicy", API_T_STRING),
    API_FIELD("imagePullPolicy", API_T_STRING),
    API_FIELD("securityContext", API_T_OPEN),
    API_FIELD("stdin", API_T_BOOLEAN),
    API_FIELD("stdinOnce", API_T_BOOLEAN),
    API_FIELD("tty", API_T_BOOLEAN),
    /* ephemeral containers only */
    API_FIELD("targetContainerName", API_T_STRING),
};
const api_schema api_schema_container = {
    .fields = container_fields, .nfields = API_NFIELDS(container_fields),
    .description = "A single application container that you want to run within a pod.",
    .go_name = "Container",
};

static const api_field toleration_fields[] = {
    API_FIELD("key", API_T_STRING), API_FIELD("operator", API_T_STRING),
    API_FIELD("value", API_T_STRING), API_FIELD("effect", API_T_STRING),
    API_FIELD("tolerationSeconds", API_T_INTEGER),
};
const api_schema api_schema_toleration = {
    .fields = toleration_fields, .nfields = API_NFIELDS(toleration_fields),
    .go_name = "Toleration",
};

static const api_field volume_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("hostPath", API_T_OPEN), API_FIELD("emptyDir", API_T_OPEN),
    API_FIELD("gcePersistentDisk", API_T_OPEN), API_FIELD("awsElasticBlockStore", API_T_OPEN),
    API_FIELD("gitRepo", API_T_OPEN), API_FIELD("secret", API_T_OPEN),
    API_FIELD("nfs", API_T_OPEN), API_FIELD("iscsi", API_T_OPEN),
    API_FIELD("glusterfs", API_T_OPEN), API_FIELD("persistentVolumeClaim", API_T_OPEN),
    API_FIELD("rbd", API_T_OPEN), API_FIELD("flexVolume", API_T_OPEN),
    API_FIELD("cinder", API_T_OPEN), API_FIELD("cephfs", API_T_OPEN),
    API_FIELD("flocker", API_T_OPEN), API_FIELD("downwardAPI", API_T_OPEN),
    API_FIELD("fc", API_T_OPEN), API_FIELD("azureFile", API_T_OPEN),
    API_FIELD("configMap", API_T_OPEN), API_FIELD("vsphereVolume", API_T_OPEN),
    API_FIELD("quobyte", API_T_OPEN), API_FIELD("azureDisk", API_T_OPEN),
    API_FIELD("photonPersistentDisk", API_T_OPEN), API_FIELD("projected", API_T_OPEN),
    API_FIELD("portworxVolume", API_T_OPEN), API_FIELD("scaleIO", API_T_OPEN),
    API_FIELD("storageos", API_T_OPEN), API_FIELD("csi", API_T_OPEN),
    API_FIELD("ephemeral", API_T_OPEN), API_FIELD("image", API_T_OPEN),
};
const api_schema api_schema_volume = {
    .fields = volume_fields, .nfields = API_NFIELDS(volume_fields), .go_name = "Volume",
};

static const api_field affinity_fields[] = {
    API_FIELD("nodeAffinity", API_T_OPEN),
    API_FIELD("podAffinity", API_T_OPEN),
    API_FIELD("podAntiAffinity", API_T_OPEN),
};
const api_schema api_schema_affinity = {
    .fields = affinity_fields, .nfields = API_NFIELDS(affinity_fields), .go_name = "Affinity",
};

static const api_field local_ref_fields[] = {API_FIELD("name", API_T_STRING)};
static const api_schema local_ref = {
    .fields = local_ref_fields, .nfields = API_NFIELDS(local_ref_fields),
    .go_name = "LocalObjectReference",
};

static const api_field host_alias_fields[] = {
    API_FIELD("ip", API_T_STRING), API_ARRAY("hostnames", API_T_STRING),
};
static const api_schema host_alias = {
    .fields = host_alias_fields, .nfields = API_NFIELDS(host_alias_fields),
    .go_name = "HostAlias",
};

static const api_field pod_spec_fields[] = {
    {.name = "volumes", .type = API_T_ARRAY, .item_type = API_T_OBJECT,
     .schema = &api_schema_volume, .merge_key = "name", .patch_strategy = "merge,retainKeys"},
    API_MERGE_LIST("initContainers", &api_schema_container, "name"),
    API_MERGE_LIST("containers", &api_schema_container, "name"),
    API_MERGE_LIST("ephemeralContainers", &api_schema_container, "name"),
    API_FIELD("restartPolicy", API_T_STRING),
    API_FIELD("terminationGracePeriodSeconds", API_T_INTEGER),
    API_FIELD("activeDeadlineSeconds", API_T_INTEGER),
    API_FIELD("dnsPolicy", API_T_STRING),
    API_MAP("nodeSelector", API_T_STRING),
    API_FIELD("serviceAccountName", API_T_STRING),
    API_FIELD("serviceAccount", API_T_STRING),
    API_FIELD("automountServiceAccountToken", API_T_BOOLEAN),
    API_FIELD("nodeName", API_T_STRING),
    API_FIELD("hostNetwork", API_T_BOOLEAN),
    API_FIELD("hostPID", API_T_BOOLEAN),
    API_FIELD("hostIPC", API_T_BOOLEAN),
    API_FIELD("shareProcessNamespace", API_T_BOOLEAN),
    API_FIELD("securityContext", API_T_OPEN),
    API_MERGE_LIST("imagePullSecrets", &local_ref, "name"),
    API_FIELD("hostname", API_T_STRING),
    API_FIELD("subdomain", API_T_STRING),
    API_OBJECT("affinity", &api_schema_affinity),
    API_FIELD("schedulerName", API_T_STRING),
    API_ARRAY_OF("tolerations", &api_schema_toleration),
    API_MERGE_LIST("hostAliases", &host_alias, "ip"),
    API_FIELD("priorityClassName", API_T_STRING),
    API_FIELD("priority", API_T_INT32),
    API_FIELD("dnsConfig", API_T_OPEN),
    API_ARRAY("readinessGates", API_T_OPEN),
    API_FIELD("runtimeClassName", API_T_STRING),
    API_FIELD("enableServiceLinks", API_T_BOOLEAN),
    API_FIELD("preemptionPolicy", API_T_STRING),
    API_MAP("overhead", API_T_QUANTITY),
    {.name = "topologySpreadConstraints", .type = API_T_ARRAY, .item_type = API_T_OPEN,
     .merge_key = "topologyKey", .patch_strategy = "merge"},
    API_FIELD("setHostnameAsFQDN", API_T_BOOLEAN),
    API_FIELD("os", API_T_OPEN),
    API_FIELD("hostUsers", API_T_BOOLEAN),
    {.name = "schedulingGates", .type = API_T_ARRAY, .item_type = API_T_OPEN,
     .merge_key = "name", .patch_strategy = "merge"},
    {.name = "resourceClaims", .type = API_T_ARRAY, .item_type = API_T_OPEN,
     .merge_key = "name", .patch_strategy = "merge,retainKeys"},
    API_OBJECT("resources", &api_schema_resource_requirements),
};
const api_schema api_schema_pod_spec = {
    .fields = pod_spec_fields, .nfields = API_NFIELDS(pod_spec_fields),
    .description = "PodSpec is a description of a pod.",
    .go_name = "PodSpec",
};

static const api_field pod_template_fields[] = {
    API_OBJECT("metadata", &api_schema_object_meta),
    API_OBJECT("spec", &api_schema_pod_spec),
};
const api_schema api_schema_pod_template_spec = {
    .fields = pod_template_fields, .nfields = API_NFIELDS(pod_template_fields),
    .description = "Describes the data a pod should have when created from a template.",
    .go_name = "PodTemplateSpec",
};

/* ---- status objects ----------------------------------------------------
 * Status is never checked for unknown fields or types; these describe the
 * lists that strategic merge patch merges (and /openapi/v3 shows). */

static const api_field condition_status_fields[] = {
    {.name = "conditions", .type = API_T_ARRAY, .item_type = API_T_OPEN, .merge_key = "type",
     .patch_strategy = "merge"},
};
const api_schema api_schema_condition_status = {
    .fields = condition_status_fields, .nfields = API_NFIELDS(condition_status_fields),
    .preserve_unknown = true,
};

static const api_field ip_fields[] = {API_FIELD("ip", API_T_STRING)};
static const api_schema pod_ip = {
    .fields = ip_fields, .nfields = API_NFIELDS(ip_fields), .go_name = "PodIP",
};
static const api_schema host_ip = {
    .fields = ip_fields, .nfields = API_NFIELDS(ip_fields), .go_name = "HostIP",
};

static const api_field pod_status_fields[] = {
    {.name = "conditions", .type = API_T_ARRAY, .item_type = API_T_OPEN, .merge_key = "type",
     .patch_strategy = "merge"},
    API_MERGE_LIST("podIPs", &pod_ip, "ip"),
    API_MERGE_LIST("hostIPs", &host_ip, "ip"),
    {.name = "resourceClaimStatuses", .type = API_T_ARRAY, .item_type = API_T_OPEN,
     .merge_key = "name", .patch_strategy = "merge,retainKeys"},
};
const api_schema api_schema_pod_status = {
    .fields = pod_status_fields, .nfields = API_NFIELDS(pod_status_fields),
    .preserve_unknown = true, .go_name = "PodStatus",
};

/* ---- lookup and the unknown-field walk --------------------------------- */

const api_field *api_schema_field(const api_schema *s, const char *name)
{
    for (size_t i = 0; s && i < s->nfields; i++)
        if (strcmp(s->fields[i].name, name) == 0)
            return &s->fields[i];
    return NULL;
}

#define PATH_MAX_LEN 512

/* The path to a value, kept as a chain of stack frames and only formatted
 * when a field is reported: validating a clean object formats nothing. */
typedef struct path_seg {
    const struct path_seg *parent;
    const char *key;   /* NULL for an array element */
    size_t index;
} path_seg;

/* Paths longer than PATH_MAX_LEN are cut; they only name fields in messages. */
static size_t path_format(const path_seg *p, const char *base, char *out, size_t len)
{
    size_t n;
    int w;

    if (!p) {
        w = snprintf(out, len, "%s", base);
        return w < 0 ? 0 : ((size_t)w < len ? (size_t)w : len - 1);
    }
    n = path_format(p->parent, base, out, len);
    if (p->key)
        w = snprintf(out + n, len - n, "%s%s", n ? "." : "", p->key);
    else
        w = snprintf(out + n, len - n, "[%zu]", p->index);
    if (w < 0)
        return n;
    return n + (size_t)w < len ? n + (size_t)w : len - 1;
}

typedef struct check_ctx {
    const char *base;
    ty_error *err;
} check_ctx;

static int check_value(check_ctx *c, api_type type, const api_schema *s, const json_t *val,
                       const path_seg *path, int depth);

static int check_elements(check_ctx *c, const api_field *f, const json_t *val,
                          const path_seg *path, int depth)
{
    int n = 0;

    if (f->type == API_T_ARRAY && json_is_array(val)) {
        size_t i;
        json_t *el;
        json_array_foreach(val, i, el) {
            path_seg sub = {path, NULL, i};
            n += check_value(c, f->item_type, f->schema, el, &sub, depth + 1);
        }
    } else if (f->type == API_T_MAP && json_is_object(val)) {
        const char *key;
        json_t *el;
        json_object_foreach((json_t *)val, key, el) {
            path_seg sub = {path, key, 0};
            n += check_value(c, f->item_type, f->schema, el, &sub, depth + 1);
        }
    }
    return n;
}

static int check_object(check_ctx *c, const api_schema *s, const json_t *val,
                        const path_seg *path, int depth)
{
    const char *key;
    json_t *child;
    int n = 0;

    if (!s || !json_is_object(val) || depth > 64)
        return 0;
    json_object_foreach((json_t *)val, key, child) {
        const api_field *f = api_schema_field(s, key);
        path_seg sub = {path, key, 0};
        if (!f) {
            if (!s->preserve_unknown) {
                char text[PATH_MAX_LEN];
                path_format(&sub, c->base, text, sizeof(text));
                ty_error_add_cause(c->err, "FieldValueInvalid", text, "unknown field \"%s\"",
                                   text);
                n++;
            }
            continue;
        }
        if (f->type == API_T_ARRAY || f->type == API_T_MAP)
            n += check_elements(c, f, child, &sub, depth + 1);
        else
            n += check_value(c, f->type, f->schema, child, &sub, depth + 1);
    }
    return n;
}

static int check_value(check_ctx *c, api_type type, const api_schema *s, const json_t *val,
                       const path_seg *path, int depth)
{
    if (type != API_T_OBJECT)
        return 0;
    return check_object(c, s, val, path, depth);
}

int api_schema_check(const api_schema *s, const json_t *val, const char *path,
                     ty_error *err)
{
    check_ctx c = {path ? path : "", err};
    return check_object(&c, s, val, NULL, 0);
}

/* ---- OpenAPI ------------------------------------------------------------ */

static json_t *openapi_type(api_type type, const api_schema *s);

static json_t *openapi_field(const api_field *f)
{
    json_t *o;

    if (f->type == API_T_ARRAY) {
        o = json_pack("{s:s, s:o}", "type", "array", "items",
                      openapi_type(f->item_type, f->schema));
    } else if (f->type == API_T_MAP) {
        o = json_pack("{s:s, s:o}", "type", "object", "additionalProperties",
                      openapi_type(f->item_type, f->schema));
    } else {
        o = openapi_type(f->type, f->schema);
    }
    if (f->merge_key)
        json_object_set_new(o, "x-kubernetes-patch-merge-key", json_string(f->merge_key));
    if (f->patch_strategy)
        json_object_set_new(o, "x-kubernetes-patch-strategy", json_string(f->patch_strategy));
    if (f->description)
        json_object_set_new(o, "description", json_string(f->description));
    return o;
}

static json_t *openapi_type(api_type type, const api_schema *s)
{
    switch (type) {
    case API_T_OBJECT:
        return api_schema_openapi(s);
    case API_T_STRING:
        return json_pack("{s:s}", "type", "string");
    case API_T_INTEGER:
        return json_pack("{s:s, s:s}", "type", "integer", "format", "int64");
    case API_T_INT32:
        return json_pack("{s:s, s:s}", "type", "integer", "format", "int32");
    case API_T_NUMBER:
        return json_pack("{s:s, s:s}", "type", "number", "format", "double");
    case API_T_BOOLEAN:
        return json_pack("{s:s}", "type", "boolean");
    case API_T_INT_OR_STRING:
    case API_T_QUANTITY:
        return json_pack("{s:[{s:s},{s:s}], s:b}", "anyOf", "type", "integer", "type", "string",
                         "x-kubernetes-int-or-string", 1);
    case API_T_OPEN:
        return json_pack("{s:s, s:b}", "type", "object",
                         "x-kubernetes-preserve-unknown-fields", 1);
    case API_T_ARRAY:
        return json_pack("{s:s, s:{s:b}}", "type", "array", "items",
                         "x-kubernetes-preserve-unknown-fields", 1);
    case API_T_MAP:
        return json_pack("{s:s, s:{s:b}}", "type", "object", "additionalProperties",
                         "x-kubernetes-preserve-unknown-fields", 1);
    case API_T_ANY:
    default:
        return json_pack("{s:b}", "x-kubernetes-preserve-unknown-fields", 1);
    }
}

json_t *api_schema_openapi(const api_schema *s)
{
    json_t *o = json_pack("{s:s}", "type", "object");
    json_t *props;

    if (!s) {
        json_object_set_new(o, "x-kubernetes-preserve-unknown-fields", json_true());
        return o;
    }
    if (s->description)
        json_object_set_new(o, "description", json_string(s->description));
    props = json_object();
    for (size_t i = 0; i < s->nfields; i++)
        json_object_set_new(props, s->fields[i].name, openapi_field(&s->fields[i]));
    json_object_set_new(o, "properties", props);
    if (s->preserve_unknown)
        json_object_set_new(o, "x-kubernetes-preserve-unknown-fields", json_true());
    return o;
}
