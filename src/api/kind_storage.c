/* kind_storage.c - storage: core/v1 PersistentVolumeClaim and PersistentVolume,
 * storage.k8s.io/v1 StorageClass. Defaults, validation (kube-apiserver's
 * field errors) and kubectl's columns; binding and provisioning are the
 * volume controller's (controller/volumes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/kind_core_int.h"
#include "api/meta.h"
#include "api/schema.h"
#include "model/quantity.h"

static const char *const access_modes[] = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                           "ReadWriteOncePod", NULL};
/* Block volumes need a device; the local runtime mounts directories only. */
static const char *const volume_modes[] = {"Filesystem", NULL};
static const char *const reclaim_policies[] = {"Delete", "Retain", NULL};
static const char *const binding_modes[] = {"Immediate", "WaitForFirstConsumer", NULL};

/* "RWO,ROX": kubectl's short form of access modes. */
static void access_cell(const json_t *modes, json_t *cells)
{
    char buf[64] = "";
    size_t i, used = 0;
    json_t *m;

    json_array_foreach(modes, i, m) {
        const char *s = or_str(json_string_value(m), ""), *abbr = s;
        if (!strcmp(s, "ReadWriteOnce"))
            abbr = "RWO";
        else if (!strcmp(s, "ReadOnlyMany"))
            abbr = "ROX";
        else if (!strcmp(s, "ReadWriteMany"))
            abbr = "RWX";
        else if (!strcmp(s, "ReadWriteOncePod"))
            abbr = "RWOP";
        if (used < sizeof(buf))
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? "," : "",
                                     abbr);
    }
    json_array_append_new(cells, json_string(buf));
}

static void check_access_modes(const json_t *modes, const char *path, ty_error *err)
{
    char f[PATH_LEN];
    bool once_pod = false;
    size_t i;
    json_t *m;

    if (!json_array_size(modes)) {
        meta_required(err, path, "at least 1 access mode is required");
        return;
    }
    json_array_foreach(modes, i, m) {
        snprintf(f, sizeof(f), "%s", path);
        if (!in_set(json_string_value(m), access_modes))
            meta_not_supported(err, f, m, access_modes);
        else if (!strcmp(json_string_value(m), "ReadWriteOncePod"))
            once_pod = true;
    }
    if (once_pod && json_array_size(modes) > 1)
        meta_forbidden(err, path, "may not use ReadWriteOncePod with other access modes");
}

/* A storage quantity at field, which must be there and above zero. */
static void check_storage(const json_t *v, const char *field, ty_error *err)
{
    int64_t milli = 0;
    ty_error qe;

    if (!v) {
        meta_required(err, field, NULL);
        return;
    }
    ty_error_init(&qe);
    if (!json_is_string(v) || quantity_parse(json_string_value(v), &milli, &qe) < 0)
        meta_invalid(err, field, v, "must be a quantity");
    else if (milli <= 0)
        meta_invalid(err, field, v, "must be greater than zero");
    ty_error_clear(&qe);
}

/* ---- PersistentVolumeClaim ---------------------------------------------- */

static void pvc_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec");

    meta_default(spec, "volumeMode", json_string("Filesystem"));
    meta_default(meta_child(obj, "status"), "phase", json_string("Pending"));
}

/* spec with what may change once: volumeName and storageClassName set where
 * they were not (the binder and the default class do that). */
static json_t *pvc_spec_fixed(const json_t *spec, const json_t *old_spec)
{
    json_t *s = json_deep_copy(spec);

    if (!json_is_object(s))
        return s;
    if (!meta_str(old_spec, "volumeName") || !*meta_str(old_spec, "volumeName"))
        json_object_del(s, "volumeName");
    if (!json_object_get(old_spec, "storageClassName"))
        json_object_del(s, "storageClassName");
    return s;
}

static int pvc_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *v;
    size_t before = ty_error_ncauses(err);

    check_access_modes(json_object_get(spec, "accessModes"), "spec.accessModes", err);
    check_storage(json_object_get(json_object_get(json_object_get(spec, "resources"), "requests"),
                                  "storage"),
                  "spec.resources[storage]", err);
    if ((v = json_object_get(spec, "volumeMode")) && !in_set(json_string_value(v), volume_modes))
        meta_not_supported(err, "spec.volumeMode", v, volume_modes);
    if ((v = json_object_get(spec, "storageClassName")) && json_string_length(v))
        meta_check_dns1123_subdomain("spec.storageClassName", json_string_value(v), err);
    if (old) {
        const json_t *ospec = json_object_get(old, "spec");
        json_t *a = pvc_spec_fixed(spec, ospec), *b = pvc_spec_fixed(ospec, ospec);
        if (!json_equal(a, b))
            meta_forbidden(err, "spec",
                           "spec is immutable after creation except resources.requests and "
                           "volumeAttributesClassName for bound claims");
        json_decref(a);
        json_decref(b);
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void pvc_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status");
    const char *vol = meta_str(spec, "volumeName");
    const char *cap = meta_str(json_object_get(status, "capacity"), "storage");
    bool bound = !strcmp(or_str(meta_str(status, "phase"), ""), "Bound");

    json_array_append_new(cells, json_string(or_str(meta_str(status, "phase"), "")));
    json_array_append_new(cells, json_string(or_str(vol, "")));
    json_array_append_new(cells, json_string(bound ? or_str(cap, "") : ""));
    if (bound)
        access_cell(json_object_get(status, "accessModes"), cells);
    else
        json_array_append_new(cells, json_string(""));
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "storageClassName"), "")));
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "volumeAttributesClassName"),
                                                    "<unset>")));
    age_cell(obj, now, cells);
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "volumeMode"), "")));
}

static const api_column pvc_columns[] = {
    {"Status", "string", "", "Phase of the claim", 0},
    {"Volume", "string", "", "The volume bound to this claim", 0},
    {"Capacity", "string", "", "The capacity of the bound volume", 0},
    {"Access Modes", "string", "", "The access modes of the bound volume", 0},
    {"StorageClass", "string", "", "The storage class of the claim", 0},
    {"VolumeAttributesClass", "string", "", "The volume attributes class of the claim", 0},
    AGE_COLUMN,
    {"VolumeMode", "string", "", "The volume mode of the claim", 1},
};
static const api_field pvc_resources_fields[] = {
    API_MAP("requests", API_T_QUANTITY), API_MAP("limits", API_T_QUANTITY),
};
static const api_schema pvc_resources = API_SCHEMA(pvc_resources_fields);
static const api_field pvc_spec_fields[] = {
    API_ARRAY("accessModes", API_T_STRING), API_OBJECT("resources", &pvc_resources),
    API_FIELD("storageClassName", API_T_STRING), API_FIELD("volumeName", API_T_STRING),
    API_FIELD("volumeMode", API_T_STRING), API_FIELD("selector", API_T_OPEN),
    API_FIELD("dataSource", API_T_OPEN), API_FIELD("dataSourceRef", API_T_OPEN),
    API_FIELD("volumeAttributesClassName", API_T_STRING),
};
static const api_schema pvc_spec = {
    .fields = pvc_spec_fields, .nfields = API_NFIELDS(pvc_spec_fields),
    .go_name = "PersistentVolumeClaimSpec",
};
static const api_field pvc_fields[] = {
    API_OBJECT("spec", &pvc_spec), API_OBJECT("status", &api_schema_condition_status),
};
static const api_schema pvc_schema = API_SCHEMA(pvc_fields);

const api_resource api_pvc = {
    .group = "", .version = "v1", .kind = "PersistentVolumeClaim",
    .list_kind = "PersistentVolumeClaimList", .plural = "persistentvolumeclaims",
    .singular = "persistentvolumeclaim", .short_names = {"pvc", NULL},
    .namespaced = true, .has_status = true, .builtin = true,
    .apply_defaults = pvc_defaults, .validate = pvc_validate,
    .columns = pvc_columns, .ncolumns = NCOLS(pvc_columns),
    .row_cells = pvc_cells, .schema = &pvc_schema,
};

/* ---- PersistentVolume --------------------------------------------------- */

static const char *const pv_sources[] = {"hostPath", "local", "nfs", "csi", "iscsi", "fc",
                                         "cephfs", "rbd", "glusterfs", NULL};

static void pv_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec");

    meta_default(spec, "persistentVolumeReclaimPolicy", json_string("Retain"));
    meta_default(spec, "volumeMode", json_string("Filesystem"));
    meta_default(meta_child(obj, "status"), "phase", json_string("Pending"));
}

static int pv_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *v;
    size_t before = ty_error_ncauses(err), nsrc = 0;

    check_access_modes(json_object_get(spec, "accessModes"), "spec.accessModes", err);
    if (!json_object_size(json_object_get(spec, "capacity")))
        meta_required(err, "spec.capacity", NULL);
    else
        check_storage(json_object_get(json_object_get(spec, "capacity"), "storage"),
                      "spec.capacity[storage]", err);
    for (size_t i = 0; pv_sources[i]; i++)
        nsrc += json_object_get(spec, pv_sources[i]) != NULL;
    if (nsrc == 0)
        meta_required(err, "spec", "must specify a volume type");
    else if (nsrc > 1)
        meta_forbidden(err, "spec", "may not specify more than 1 volume type");
    if ((v = json_object_get(spec, "hostPath")) &&
        (!meta_str(v, "path") || !*meta_str(v, "path")))
        meta_required(err, "spec.hostPath.path", NULL);
    if ((v = json_object_get(spec, "local"))) {
        if (!meta_str(v, "path") || !*meta_str(v, "path"))
            meta_required(err, "spec.local.path", NULL);
        if (!json_object_get(spec, "nodeAffinity"))
            meta_required(err, "spec.nodeAffinity", "Local volume requires node affinity");
    }
    if ((v = json_object_get(spec, "persistentVolumeReclaimPolicy")) &&
        !in_set(json_string_value(v), reclaim_policies))
        meta_not_supported(err, "spec.persistentVolumeReclaimPolicy", v, reclaim_policies);
    if ((v = json_object_get(spec, "volumeMode")) && !in_set(json_string_value(v), volume_modes))
        meta_not_supported(err, "spec.volumeMode", v, volume_modes);
    if ((v = json_object_get(spec, "storageClassName")) && json_string_length(v))
        meta_check_dns1123_subdomain("spec.storageClassName", json_string_value(v), err);
    if (old) {
        const json_t *ospec = json_object_get(old, "spec");
        for (size_t i = 0; pv_sources[i]; i++)
            if (!json_equal(json_object_get(spec, pv_sources[i]),
                            json_object_get(ospec, pv_sources[i]))) {
                char f[PATH_LEN];
                snprintf(f, sizeof(f), "spec.persistentvolumesource");
                meta_forbidden(err, f, "spec.persistentvolumesource is immutable after creation");
                break;
            }
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void pv_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status");
    const json_t *claim = json_object_get(spec, "claimRef");
    char ref[600] = "";

    if (claim)
        snprintf(ref, sizeof(ref), "%s/%s", or_str(meta_str(claim, "namespace"), ""),
                 or_str(meta_str(claim, "name"), ""));
    json_array_append_new(cells, json_string(
                                     or_str(meta_str(json_object_get(spec, "capacity"), "storage"),
                                            "")));
    access_cell(json_object_get(spec, "accessModes"), cells);
    json_array_append_new(cells,
                          json_string(or_str(meta_str(spec, "persistentVolumeReclaimPolicy"), "")));
    json_array_append_new(cells, json_string(or_str(meta_str(status, "phase"), "")));
    json_array_append_new(cells, json_string(ref));
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "storageClassName"), "")));
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "volumeAttributesClassName"),
                                                    "<unset>")));
    json_array_append_new(cells, json_string(or_str(meta_str(status, "reason"), "")));
    age_cell(obj, now, cells);
    json_array_append_new(cells, json_string(or_str(meta_str(spec, "volumeMode"), "")));
}

static const api_column pv_columns[] = {
    {"Capacity", "string", "", "The capacity of the volume", 0},
    {"Access Modes", "string", "", "The access modes of the volume", 0},
    {"Reclaim Policy", "string", "", "What happens to the volume when its claim goes", 0},
    {"Status", "string", "", "Phase of the volume", 0},
    {"Claim", "string", "", "The claim bound to the volume", 0},
    {"StorageClass", "string", "", "The storage class of the volume", 0},
    {"VolumeAttributesClass", "string", "", "The volume attributes class of the volume", 0},
    {"Reason", "string", "", "Why the volume is in its phase", 0},
    AGE_COLUMN,
    {"VolumeMode", "string", "", "The volume mode of the volume", 1},
};
static const api_field pv_fields[] = {
    API_FIELD("spec", API_T_OPEN), API_FIELD("status", API_T_OPEN),
};
static const api_schema pv_schema = API_SCHEMA(pv_fields);

const api_resource api_pv = {
    .group = "", .version = "v1", .kind = "PersistentVolume",
    .list_kind = "PersistentVolumeList", .plural = "persistentvolumes",
    .singular = "persistentvolume", .short_names = {"pv", NULL},
    .namespaced = false, .has_status = true, .builtin = true,
    .apply_defaults = pv_defaults, .validate = pv_validate,
    .columns = pv_columns, .ncolumns = NCOLS(pv_columns),
    .row_cells = pv_cells, .schema = &pv_schema,
};

/* ---- StorageClass ------------------------------------------------------- */

static void sc_defaults(json_t *obj)
{
    meta_default(obj, "reclaimPolicy", json_string("Delete"));
    meta_default(obj, "volumeBindingMode", json_string("Immediate"));
}

static int sc_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const char *prov = meta_str(obj, "provisioner");
    const json_t *v;

    if (!prov || !*prov)
        meta_required(err, "provisioner", NULL);
    else
        meta_check_qualified_name("provisioner", prov, err);
    if ((v = json_object_get(obj, "reclaimPolicy")) &&
        !in_set(json_string_value(v), reclaim_policies))
        meta_not_supported(err, "reclaimPolicy", v, reclaim_policies);
    if ((v = json_object_get(obj, "volumeBindingMode")) &&
        !in_set(json_string_value(v), binding_modes))
        meta_not_supported(err, "volumeBindingMode", v, binding_modes);
    if (old) {
        if (!json_equal(json_object_get(obj, "provisioner"), json_object_get(old, "provisioner")))
            meta_forbidden(err, "provisioner", "updates to provisioner are forbidden.");
        if (!json_equal(json_object_get(obj, "parameters"), json_object_get(old, "parameters")))
            meta_forbidden(err, "parameters", "updates to parameters are forbidden.");
        if (!json_equal(json_object_get(obj, "reclaimPolicy"),
                        json_object_get(old, "reclaimPolicy")))
            meta_forbidden(err, "reclaimPolicy", "updates to reclaimPolicy are forbidden.");
        if (!json_equal(json_object_get(obj, "volumeBindingMode"),
                        json_object_get(old, "volumeBindingMode")))
            meta_invalid(err, "volumeBindingMode", json_object_get(obj, "volumeBindingMode"),
                         "field is immutable");
    }
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static void sc_cells(const json_t *obj, time_t now, json_t *cells)
{
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "provisioner"), "")));
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "reclaimPolicy"), "")));
    json_array_append_new(cells, json_string(or_str(meta_str(obj, "volumeBindingMode"), "")));
    json_array_append_new(cells, json_boolean(json_is_true(json_object_get(obj,
                                                                           "allowVolumeExpansion"))));
    age_cell(obj, now, cells);
}

static const api_column sc_columns[] = {
    {"Provisioner", "string", "", "Who makes volumes of the class", 0},
    {"ReclaimPolicy", "string", "", "What happens to a volume when its claim goes", 0},
    {"VolumeBindingMode", "string", "", "When a claim is bound", 0},
    {"AllowVolumeExpansion", "string", "", "Whether claims may grow", 0},
    AGE_COLUMN,
};
static const api_field sc_fields[] = {
    API_FIELD("provisioner", API_T_STRING), API_MAP("parameters", API_T_STRING),
    API_FIELD("reclaimPolicy", API_T_STRING), API_FIELD("volumeBindingMode", API_T_STRING),
    API_FIELD("allowVolumeExpansion", API_T_BOOLEAN), API_ARRAY("mountOptions", API_T_STRING),
    API_FIELD("allowedTopologies", API_T_ANY),
};
static const api_schema sc_schema = API_SCHEMA(sc_fields);

const api_resource api_storageclass = {
    .group = "storage.k8s.io", .version = "v1", .kind = "StorageClass",
    .list_kind = "StorageClassList", .plural = "storageclasses", .singular = "storageclass",
    .short_names = {"sc", NULL}, .namespaced = false, .builtin = true,
    .apply_defaults = sc_defaults, .validate = sc_validate,
    .columns = sc_columns, .ncolumns = NCOLS(sc_columns),
    .row_cells = sc_cells, .schema = &sc_schema,
};
