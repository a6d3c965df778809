/* kubeflow.c - defaulting, validation and table cells shared by the
 * Kubeflow-style job kinds (see kubeflow.h). The per-kind facts live in the
 * kind files; this file never names a kind except in the lookup table. */
#include "api/kubeflow.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/meta.h"
#include "api/schema.h"

#define PATH_MAX_LEN 512

static const kf_kind *const all_kinds[] = {
#define TY_FRAMEWORK(kind, plugin) &kf_##kind,
#include "api/frameworks.def"
#undef TY_FRAMEWORK
};
#define NKINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

static const char *const restart_policies[] = {"Always", "OnFailure", "Never", "ExitCode",
                                               NULL};
static const char *const clean_pod_policies[] = {"All", "Running", "None", NULL};
static const char *const success_policies[] = {"", "AllWorkers", NULL};
static const char *const managers[] = {"kubeflow.org/training-operator",
                                       "kueue.x-k8s.io/multikueue", NULL};

const api_column kf_columns[KF_NCOLUMNS] = {
    {.name = "State", .type = "string", .format = "", .description = "", .priority = 0},
    {.name = "Age", .type = "date", .format = "", .description = "", .priority = 0},
};
const api_column_path kf_column_paths[] = {
    {"State", ".status.conditions[-1:].type"}, {"Age", ".metadata.creationTimestamp"}, {NULL, NULL},
};

/* ---- schema (strict fields, OpenAPI) ---------------------------------- */

static const api_field scheduling_policy_fields[] = {
    API_FIELD("minAvailable", API_T_INTEGER),
    API_FIELD("queue", API_T_STRING),
    API_MAP("minResources", API_T_QUANTITY),
    API_FIELD("priorityClass", API_T_STRING),
    API_FIELD("scheduleTimeoutSeconds", API_T_INTEGER),
};
static const api_schema scheduling_policy = API_SCHEMA(scheduling_policy_fields);

static const api_field run_policy_fields[] = {
    API_FIELD("cleanPodPolicy", API_T_STRING),
    API_FIELD("ttlSecondsAfterFinished", API_T_INTEGER),
    API_FIELD("activeDeadlineSeconds", API_T_INTEGER),
    API_FIELD("backoffLimit", API_T_INTEGER),
    API_OBJECT("schedulingPolicy", &scheduling_policy),
    API_FIELD("suspend", API_T_BOOLEAN),
    API_FIELD("managedBy", API_T_STRING),
};
const api_schema kf_schema_run_policy = API_SCHEMA(run_policy_fields);

static const api_field replica_spec_fields[] = {
    API_FIELD("replicas", API_T_INTEGER),
    API_OBJECT("template", &api_schema_pod_template_spec),
    API_FIELD("restartPolicy", API_T_STRING),
};
const api_schema kf_schema_replica_spec = API_SCHEMA(replica_spec_fields);

/* ---- lookup ------------------------------------------------------------- */

const kf_kind *const *kf_kinds(size_t *n)
{
    if (n)
        *n = NKINDS;
    return all_kinds;
}

const kf_kind *kf_kind_for(const char *kind)
{
    for (size_t i = 0; kind && i < NKINDS; i++)
        if (strcmp(all_kinds[i]->kind, kind) == 0)
            return all_kinds[i];
    return NULL;
}

const kf_kind *kf_kind_for_version(const char *kind, const char *version)
{
    for (size_t i = 0; kind && version && i < NKINDS; i++)
        if (strcmp(all_kinds[i]->kind, kind) == 0 &&
            strcmp(all_kinds[i]->resource->version, version) == 0)
            return all_kinds[i];
    return NULL;
}

const kf_kind *kf_kind_for_resource(const api_resource *res)
{
    for (size_t i = 0; res && i < NKINDS; i++)
        if (all_kinds[i]->resource == res)
            return all_kinds[i];
    return NULL;
}

const kf_replica_type *kf_replica_type_find(const kf_kind *k, const char *name)
{
    for (size_t i = 0; name && i < KF_MAX_REPLICA_TYPES && k->types[i].name; i++)
        if (strcmp(k->types[i].name, name) == 0)
            return &k->types[i];
    return NULL;
}

const char *kf_replica_type_canonical(const kf_kind *k, const char *name)
{
    for (size_t i = 0; name && i < KF_MAX_REPLICA_TYPES && k->types[i].name; i++)
        if (strcasecmp(k->types[i].name, name) == 0)
            return k->types[i].name;
    return NULL;
}

static json_t *replica_map(const kf_kind *k, const json_t *job)
{
    return json_object_get(json_object_get(job, "spec"), k->replica_field);
}

json_t *kf_replica_spec(const kf_kind *k, const json_t *job, const char *type)
{
    json_t *spec = json_object_get(replica_map(k, job), type);
    return json_is_object(spec) ? spec : NULL;
}

long long kf_replicas(const kf_kind *k, const json_t *job, const char *type)
{
    const kf_replica_type *t = kf_replica_type_find(k, type);
    json_t *spec = kf_replica_spec(k, job, type);
    json_t *r;

    if (!spec)
        return 0;
    r = json_object_get(spec, "replicas");
    if (json_is_integer(r))
        return json_integer_value(r) < 0 ? 0 : json_integer_value(r);
    return t ? t->default_replicas : 1;
}

const char *kf_job_state(const json_t *job)
{
    json_t *conds = json_object_get(json_object_get(job, "status"), "conditions");
    size_t n = json_array_size(conds);

    if (n == 0)
        return NULL;
    return json_string_value(json_object_get(json_array_get(conds, n - 1), "type"));
}

/* ---- small helpers ------------------------------------------------------ */

void kf_replica_path(const kf_kind *k, const char *type, const char *child, char *buf,
                     size_t len)
{
    snprintf(buf, len, "spec.%s.%s%s%s", k->replica_field, type, child ? "." : "",
             child ? child : "");
}

void kf_type_error(ty_error *err, const char *path, const char *want, const json_t *value)
{
    const char *got = api_json_type_name(value);
    meta_invalid_str(err, path, got, "%s in body must be of type %s: \"%s\"", path, want, got);
}

int kf_get_int(const json_t *obj, const char *key, const char *path, ty_error *err,
               long long *out)
{
    json_t *v = json_object_get(obj, key);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v)) {
        kf_type_error(err, path, "integer", v);
        return -1;
    }
    *out = json_integer_value(v);
    return 1;
}

int kf_get_str(const json_t *obj, const char *key, const char *path, ty_error *err,
               const char **out)
{
    json_t *v = json_object_get(obj, key);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        kf_type_error(err, path, "string", v);
        return -1;
    }
    *out = json_string_value(v);
    return 1;
}

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

int kf_check_enum(const json_t *obj, const char *key, const char *path,
                  const char *const *allowed, ty_error *err)
{
    const char *s;
    int r = kf_get_str(obj, key, path, err, &s);

    if (r == 1 && !in_list(s, allowed)) {
        meta_not_supported(err, path, json_object_get(obj, key), allowed);
        return -1;
    }
    return r;
}

int kf_check_int(const json_t *obj, const char *key, const char *path, long long min,
                 long long max, ty_error *err, long long *out)
{
    long long v;
    int r = kf_get_int(obj, key, path, err, &v);

    if (r != 1)
        return r;
    if (v < min) {
        meta_invalid_int(err, path, v, "must be greater than or equal to %lld", min);
        return -1;
    }
    if (v > max) {
        meta_invalid_int(err, path, v, "must be less than or equal to %lld", max);
        return -1;
    }
    if (out)
        *out = v;
    return 1;
}

static void check_int_min(const json_t *obj, const char *key, const char *path,
                          long long min, ty_error *err)
{
    kf_check_int(obj, key, path, min, INT32_MAX, err, NULL);
}

static bool same_optional_str(const json_t *a, const json_t *b)
{
    const char *x = json_string_value(a), *y = json_string_value(b);
    if (x && y)
        return strcmp(x, y) == 0;
    return !x && !y;
}

/* ---- defaulting --------------------------------------------------------- */

/* Rebuilds the replica map with canonical keys, keeping the user's order.
 * A key that only differs in case from a replica type (`worker`) replaces
 * the canonical one when both are there, as upstream's defaulting does on
 * every write: `kubectl apply` of a manifest naming `worker` sends a patch
 * carrying `worker` over the stored, already canonical `Worker`, and the
 * second apply of the same file must work (it was refused with 422). */
static void canonicalise_keys(const kf_kind *k, json_t *spec)
{
    json_t *map = json_object_get(spec, k->replica_field);
    json_t *out, *val;
    const char *key;
    bool changed = false;

    if (!json_is_object(map))
        return;
    json_object_foreach(map, key, val) {
        const char *canon = kf_replica_type_canonical(k, key);
        if (canon && strcmp(canon, key) != 0)
            changed = true;
    }
    if (!changed)
        return;
    out = json_object();
    if (!out)
        return;
    json_object_foreach(map, key, val) {
        const char *canon = kf_replica_type_canonical(k, key);
        const char *other;
        json_t *v2;
        bool shadowed = false;

        if (!canon) {
            json_object_set(out, key, val);
            continue;
        }
        /* the canonical key gives way to a variant of it in another case */
        if (strcmp(canon, key) == 0)
            json_object_foreach(map, other, v2)
                if (strcmp(other, key) != 0 && strcasecmp(other, key) == 0)
                    shadowed = true;
        if (!shadowed)
            json_object_set(out, canon, val);
    }
    json_object_set_new(spec, k->replica_field, out);
}

/* Upstream's setDefaultPort: the default container (else the first) gets
 * {name: <port name>, containerPort: <port>} unless a port of that name exists. */
static void default_port(const kf_kind *k, json_t *replica)
{
    json_t *podspec = json_object_get(json_object_get(replica, "template"), "spec");
    json_t *containers = json_object_get(podspec, "containers");
    json_t *target = NULL, *ports, *c, *p;
    size_t i;

    if (!json_is_array(containers) || json_array_size(containers) == 0)
        return;
    json_array_foreach(containers, i, c) {
        const char *name = meta_str(c, "name");
        if (name && strcmp(name, k->default_container) == 0) {
            target = c;
            break;
        }
    }
    if (!target)
        target = json_array_get(containers, 0);
    if (!json_is_object(target))
        return;
    ports = json_object_get(target, "ports");
    if (!ports || json_is_null(ports)) {
        ports = json_array();
        json_object_set_new(target, "ports", ports);
    }
    if (!json_is_array(ports))
        return;
    json_array_foreach(ports, i, p) {
        const char *name = meta_str(p, "name");
        if (name && strcmp(name, k->port_name) == 0)
            return;
    }
    json_array_append_new(ports, json_pack("{s:s, s:i}", "name", k->port_name,
                                           "containerPort", k->port));
}

static void default_run_policy(const kf_kind *k, json_t *spec)
{
    json_t *rp = json_object_get(spec, "runPolicy");
    json_t *cpp;

    if (!rp || json_is_null(rp)) {
        rp = json_object();
        json_object_set_new(spec, "runPolicy", rp);
    }
    if (!json_is_object(rp))
        return;
    cpp = json_object_get(rp, "cleanPodPolicy");
    if (!cpp || json_is_null(cpp)) {
        json_t *legacy = k->legacy_clean_pod_policy ? json_object_get(spec, "cleanPodPolicy")
                                                    : NULL;
        if (json_is_string(legacy)) {
            json_object_set(rp, "cleanPodPolicy", legacy);
        } else {
            json_object_set_new(rp, "cleanPodPolicy",
                                json_string(k->default_clean_pod_policy));
            if (k->legacy_clean_pod_policy && !legacy)
                json_object_set_new(spec, "cleanPodPolicy",
                                    json_string(k->default_clean_pod_policy));
        }
    }
    /* The CRD schema defaults runPolicy.suspend to false. */
    meta_default(rp, "suspend", json_false());
}

void kf_apply_defaults(const kf_kind *k, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_t *map, *replica;
    const char *key;

    if (!json_is_object(spec))
        return;
    default_run_policy(k, spec);
    if (k->has_success_policy)
        meta_default(spec, "successPolicy", json_string(""));
    canonicalise_keys(k, spec);
    map = json_object_get(spec, k->replica_field);
    if (json_is_object(map)) {
        json_object_foreach(map, key, replica) {
            const kf_replica_type *t = kf_replica_type_find(k, key);
            if (!t || !json_is_object(replica))
                continue;
            meta_default(replica, "replicas", json_integer(t->default_replicas));
            json_t *rp = json_object_get(replica, "restartPolicy");
            if (!rp || json_is_null(rp) ||
                (json_is_string(rp) && json_string_value(rp)[0] == '\0'))
                json_object_set_new(replica, "restartPolicy",
                                    json_string(t->default_restart_policy
                                                    ? t->default_restart_policy
                                                    : k->default_restart_policy));
        }
    }
    if (k->defaults)
        k->defaults(k, obj);
}

void kf_default_ports(const kf_kind *k, json_t *job)
{
    json_t *map = json_object_get(json_object_get(job, "spec"), k->replica_field);
    json_t *replica;
    const char *key;

    if (!json_is_object(map))
        return;
    json_object_foreach(map, key, replica) {
        if (kf_replica_type_find(k, key) && json_is_object(replica))
            default_port(k, replica);
    }
}

/* ---- validation --------------------------------------------------------- */

#define DNS1035_MSG "a DNS-1035 label must consist of lower case alphanumeric " \
    "characters or '-', start with an alphabetic character, and end with an alphanumeric " \
    "character (e.g. 'my-name',  or 'abc-123', regex used for validation is " \
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"

int kf_check_name(const char *name, ty_error *err)
{
    size_t n;
    bool fmt_ok, len_ok;

    if (!name)
        return 0;
    n = strlen(name);
    len_ok = n <= META_DNS1123_LABEL_MAX;
    fmt_ok = n > 0 && name[0] >= 'a' && name[0] <= 'z';
    for (size_t i = 0; fmt_ok && i < n; i++) {
        char c = name[i];
        fmt_ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    }
    if (fmt_ok && name[n - 1] == '-')
        fmt_ok = false;
    if (fmt_ok && len_ok)
        return 0;
    /* The webhook joins apimachinery's messages with "," after "should match: ". */
    meta_invalid_str(err, "metadata.name", name, "should match: %s%s%s",
                     len_ok ? "" : "must be no more than 63 characters",
                     !len_ok && !fmt_ok ? "," : "", fmt_ok ? "" : DNS1035_MSG);
    return 1;
}

static void check_containers(const kf_kind *k, const char *type, const json_t *replica,
                             ty_error *err)
{
    char path[PATH_MAX_LEN], cpath[PATH_MAX_LEN + 32], msg[128];
    json_t *tmpl = json_object_get(replica, "template");
    json_t *podspec = json_object_get(tmpl, "spec");
    json_t *containers = json_object_get(podspec, "containers");
    json_t *c;
    bool has_default = false;
    size_t i;

    if (tmpl && !json_is_object(tmpl)) {
        kf_replica_path(k, type, "template", path, sizeof(path));
        kf_type_error(err, path, "object", tmpl);
        return;
    }
    if (podspec && !json_is_object(podspec)) {
        kf_replica_path(k, type, "template.spec", path, sizeof(path));
        kf_type_error(err, path, "object", podspec);
        return;
    }
    kf_replica_path(k, type, "template.spec.containers", path, sizeof(path));
    if (containers && !json_is_null(containers) && !json_is_array(containers)) {
        kf_type_error(err, path, "array", containers);
        return;
    }
    if (json_array_size(containers) == 0)
        meta_required(err, path, "must be specified");
    json_array_foreach(containers, i, c) {
        const char *image = NULL, *name;
        snprintf(cpath, sizeof(cpath), "%s[%zu]", path, i);
        if (!json_is_object(c)) {
            kf_type_error(err, cpath, "object", c);
            continue;
        }
        snprintf(cpath, sizeof(cpath), "%s[%zu].image", path, i);
        if (kf_get_str(c, "image", cpath, err, &image) >= 0 && (!image || !*image))
            meta_required(err, cpath, "must be required");
        name = meta_str(c, "name");
        if (name && strcmp(name, k->default_container) == 0)
            has_default = true;
    }
    if (!has_default && !k->default_container_optional) {
        snprintf(msg, sizeof(msg), "must have at least one container with name %s",
                 k->default_container);
        meta_required(err, path, msg);
    }
}

static void check_replica(const kf_kind *k, const char *type, const json_t *replica,
                          ty_error *err)
{
    char path[PATH_MAX_LEN];

    kf_replica_path(k, type, NULL, path, sizeof(path));
    if (!json_is_object(replica)) {
        if (!replica || json_is_null(replica)) {
            kf_replica_path(k, type, "template.spec.containers", path, sizeof(path));
            meta_required(err, path, "must be specified");
        } else {
            kf_type_error(err, path, "object", replica);
        }
        return;
    }
    kf_replica_path(k, type, "replicas", path, sizeof(path));
    check_int_min(replica, "replicas", path, 0, err);
    kf_replica_path(k, type, "restartPolicy", path, sizeof(path));
    kf_check_enum(replica, "restartPolicy", path, restart_policies, err);
    check_containers(k, type, replica, err);
}

static void check_replica_map(const kf_kind *k, const json_t *spec, ty_error *err)
{
    const char *supported[KF_MAX_REPLICA_TYPES + 1];
    char path[PATH_MAX_LEN];
    json_t *map = json_object_get(spec, k->replica_field);
    json_t *replica;
    const char *type;
    size_t n = 0;
    long long total = 0;

    snprintf(path, sizeof(path), "spec.%s", k->replica_field);
    if (map && !json_is_null(map) && !json_is_object(map)) {
        kf_type_error(err, path, "object", map);
        return;
    }
    if (json_object_size(map) == 0) {
        meta_required(err, path, "must be required");
        return;
    }
    /* Every valid map has at most one key per type; a bigger one is bounded
     * here instead of producing one cause per key. */
    if (json_object_size(map) > KF_MAX_REPLICA_TYPES) {
        ty_error_add_cause(err, "FieldValueTooMany", path,
                           "Too many: %zu: must have at most %d items",
                           json_object_size(map), KF_MAX_REPLICA_TYPES);
        return;
    }
    for (; n < KF_MAX_REPLICA_TYPES && k->types[n].name; n++)
        supported[n] = k->types[n].name;
    supported[n] = NULL;
    json_object_foreach(map, type, replica) {
        if (!kf_replica_type_find(k, type)) {
            json_t *v = json_string(type);
            kf_replica_path(k, type, NULL, path, sizeof(path));
            meta_not_supported(err, path, v ? v : json_null(), supported);
            json_decref(v);
            continue;
        }
        check_replica(k, type, replica, err);
        if (json_is_integer(json_object_get(replica, "replicas")) &&
            json_integer_value(json_object_get(replica, "replicas")) > 0)
            total += json_integer_value(json_object_get(replica, "replicas"));
    }
    if (total > KF_MAX_JOB_PODS) {
        snprintf(path, sizeof(path), "spec.%s", k->replica_field);
        meta_invalid_int(err, path, total, "the replicas add up to more than %d pods",
                         KF_MAX_JOB_PODS);
    }
}

void kf_check_single_replica(const kf_kind *k, const json_t *spec, const char *type,
                             ty_error *err)
{
    json_t *replica = json_object_get(json_object_get(spec, k->replica_field), type);
    json_t *n = json_object_get(replica, "replicas");
    char path[PATH_MAX_LEN];

    if (json_is_integer(n) && json_integer_value(n) != 1) {
        kf_replica_path(k, type, "replicas", path, sizeof(path));
        meta_forbidden(err, path, "must be 1");
    }
}

void kf_require_replica(const kf_kind *k, const json_t *spec, const char *type, ty_error *err)
{
    json_t *map = json_object_get(spec, k->replica_field);
    char path[PATH_MAX_LEN];

    /* An empty or missing map is already reported as a whole. */
    if (json_object_size(map) > 0 && !json_object_get(map, type)) {
        kf_replica_path(k, type, NULL, path, sizeof(path));
        meta_required(err, path, "must be present");
    }
}

static void check_scheduling_policy(const json_t *sp, const json_t *old_sp, ty_error *err)
{
    const char *path = "spec.runPolicy.schedulingPolicy";
    const char *queue = NULL, *priority_class;

    if (!sp || json_is_null(sp))
        return;
    if (!json_is_object(sp)) {
        kf_type_error(err, path, "object", sp);
        return;
    }
    check_int_min(sp, "minAvailable", "spec.runPolicy.schedulingPolicy.minAvailable", 0, err);
    check_int_min(sp, "scheduleTimeoutSeconds",
                  "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds", 0, err);
    kf_get_str(sp, "priorityClass", "spec.runPolicy.schedulingPolicy.priorityClass", err,
               &priority_class);
    if (kf_get_str(sp, "queue", "spec.runPolicy.schedulingPolicy.queue", err, &queue) < 0)
        return;
    /* Upstream compares only when both the old and the new job have a
     * schedulingPolicy; an absent queue counts as "". */
    if (json_is_object(old_sp)) {
        const char *old_queue = meta_str(old_sp, "queue");
        if (strcmp(queue ? queue : "", old_queue ? old_queue : "") != 0)
            meta_invalid_str(err, "spec.runPolicy.schedulingPolicy.queue", queue ? queue : "",
                             "field is immutable");
    }
}

void kf_check_run_policy(const kf_kind *k, const json_t *spec, const json_t *old_spec,
                         ty_error *err)
{
    json_t *rp = json_object_get(spec, "runPolicy");
    json_t *old_rp = json_object_get(old_spec, "runPolicy");
    json_t *v;

    if (k->legacy_clean_pod_policy)
        kf_check_enum(spec, "cleanPodPolicy", "spec.cleanPodPolicy", clean_pod_policies, err);
    if (!rp || json_is_null(rp))
        return;
    if (!json_is_object(rp)) {
        kf_type_error(err, "spec.runPolicy", "object", rp);
        return;
    }
    kf_check_enum(rp, "cleanPodPolicy", "spec.runPolicy.cleanPodPolicy", clean_pod_policies, err);
    check_int_min(rp, "backoffLimit", "spec.runPolicy.backoffLimit", 0, err);
    check_int_min(rp, "activeDeadlineSeconds", "spec.runPolicy.activeDeadlineSeconds", 0, err);
    check_int_min(rp, "ttlSecondsAfterFinished", "spec.runPolicy.ttlSecondsAfterFinished", 0,
                  err);
    v = json_object_get(rp, "suspend");
    if (v && !json_is_null(v) && !json_is_boolean(v))
        kf_type_error(err, "spec.runPolicy.suspend", "boolean", v);
    kf_check_enum(rp, "managedBy", "spec.runPolicy.managedBy",
                  k->managed_by ? k->managed_by : managers, err);
    if (old_spec && !same_optional_str(json_object_get(rp, "managedBy"),
                                       json_object_get(old_rp, "managedBy"))) {
        v = json_object_get(rp, "managedBy");
        if (json_is_string(v) || !v || json_is_null(v))
            meta_invalid(err, "spec.runPolicy.managedBy", v ? v : json_null(),
                         "field is immutable");
    }
    check_scheduling_policy(json_object_get(rp, "schedulingPolicy"),
                            json_object_get(old_rp, "schedulingPolicy"), err);
}

int kf_validate(const kf_kind *k, const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    json_t *spec = json_object_get(obj, "spec");
    json_t *old_spec = old ? json_object_get(old, "spec") : NULL;
    ty_error local;
    ty_error *e = err;

    /* Causes are counted even when the caller passes no error. */
    if (!e) {
        ty_error_init(&local);
        e = &local;
    }
    kf_check_name(meta_str(json_object_get(obj, "metadata"), "name"), e);
    if (!json_is_object(spec)) {
        if (!spec || json_is_null(spec))
            meta_required(e, "spec", NULL);
        else
            kf_type_error(e, "spec", "object", spec);
    } else {
        check_replica_map(k, spec, e);
        kf_check_run_policy(k, spec, json_is_object(old_spec) ? old_spec : NULL, e);
        if (k->has_success_policy)
            kf_check_enum(spec, "successPolicy", "spec.successPolicy", success_policies, e);
        if (k->validate)
            k->validate(k, spec, old, e);
    }
    if (ty_error_ncauses(e) == before)
        return 0;
    if (e == &local) {
        ty_error_clear(&local);
        return -1;
    }
    return ty_seterr(err, TY_EINVALID, "%s is invalid", k->kind);
}

/* ---- table -------------------------------------------------------------- */

void kf_row_cells(const json_t *obj, time_t now, json_t *cells)
{
    const char *state = kf_job_state(obj);
    char age[32];

    json_array_append_new(cells, state ? json_string(state) : json_null());
    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}
