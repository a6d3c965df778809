/* kubeflow.h - the rules every Kubeflow-style training job kind shares.
 *
 * TFJob, PyTorchJob, MPIJob, XGBoostJob, PaddleJob, JAXJob, MXJob and
 * MindSpore's MSJob differ only in a handful of facts: the name of the replica
 * map, the replica types, the default container, port and restart policy and a
 * few extra rules. Each framework's file (api/frameworks/pytorch.c, ...)
 * describes those facts in one kf_kind; this module does the defaulting, the
 * validation and the table cells from it, the way the upstream operators'
 * webhooks do.
 *
 * The job engine reads the same descriptors (kf_kinds) to name pods,
 * label them and inject the framework's environment.
 */
#ifndef TY_API_KUBEFLOW_H
#define TY_API_KUBEFLOW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "api/registry.h"
#include "base/error.h"

/* More distinct replica types than any kind has (MXJob has six). */
#define KF_MAX_REPLICA_TYPES 8
/* The most pods one job may ask for, all replica types together. Upstream
 * has no such number (an object's size in etcd bounds it); here a controller
 * would build every pod's peer list (TF_CONFIG, MS_CONFIG, hostfiles) of
 * 2^31 replicas in memory, so a bigger job is refused at admission. */
#define KF_MAX_JOB_PODS 10000

typedef struct kf_replica_type {
    const char *name;      /* canonical key: "Master", "PS", "TunerTracker" */
    int default_replicas;  /* replicas when unset: 1, MPIJob's Worker 0 */
    const char *default_restart_policy; /* NULL: the kind's (MPIJob v2beta1's Launcher differs) */
} kf_replica_type;

typedef struct kf_kind kf_kind;

struct kf_kind {
    const api_resource *resource;   /* the served resource (group, version, plural) */
    const char *kind;               /* "PyTorchJob" */
    const char *replica_field;      /* "pytorchReplicaSpecs": the map under spec */
    kf_replica_type types[KF_MAX_REPLICA_TYPES]; /* ended by a NULL name */
    const char *default_container;  /* "pytorch": receives the port and the env */
    /* MPIJob: no container need carry default_container's name; without one
     * the first container is the default (upstream's MPIJob has no webhook
     * rule, and its controller edits Containers[0]). */
    bool default_container_optional;
    const char *port_name;          /* "pytorchjob-port" */
    int port;                       /* 23456 */
    const char *default_restart_policy;   /* "OnFailure" */
    const char *default_clean_pod_policy; /* "None"; MSJob "Running" */
    const char *operator_name;      /* training.kubeflow.org/operator-name value */
    const char *framework;          /* metrics label: "pytorch", "tensorflow", ... */
    bool has_success_policy;        /* spec.successPolicy, defaulted to "" (TF, MS) */
    bool legacy_clean_pod_policy;   /* MPIJob v1: the deprecated spec.cleanPodPolicy */
    /* The values runPolicy.managedBy may take (NULL-terminated), this
     * kind's own controller first; NULL: the training operator's (MPIJob
     * v2beta1 has mpi-operator's, and the engine leaves its jobs managed
     * by another alone). */
    const char *const *managed_by;

    /* Kind-specific defaulting, run after the common defaults (keys are
     * already canonical, replicas set). May be NULL. */
    void (*defaults)(const kf_kind *k, json_t *obj);
    /* Kind-specific rules; add causes to err only (never set err->code).
     * spec is the object's spec (an object), old the stored object or NULL.
     * May be NULL. */
    void (*validate)(const kf_kind *k, const json_t *spec, const json_t *old, ty_error *err);
    /* A kind whose stored form is not a replica map (MSJob kubeflow.org/v1:
     * a list of replica specs) turns the job engine's working copy into one,
     * defaults applied, before the engine reads it; never written back.
     * NULL for every kind stored as a map. */
    void (*engine_form)(const kf_kind *k, json_t *job);
};

/* The descriptors, defined in the frameworks' files (api/frameworks.def). */
#define TY_FRAMEWORK(kind, plugin) extern const kf_kind kf_##kind;
#include "api/frameworks.def"
#undef TY_FRAMEWORK

/* Every job kind, in a stable order. */
const kf_kind *const *kf_kinds(size_t *n);
/* By kind name ("PyTorchJob"); NULL if not a job kind. A name served in two
 * groups (MSJob) gives the first in kf_kinds' order (kubeflow.org's, as kubectl
 * reads the plural); a
 * kind served in two versions (MPIJob) gives its first (kf_kind_for_version
 * tells them apart); look such a kind up by its resource (api_find_kind,
 * kf_kind_for_resource). */
const kf_kind *kf_kind_for(const char *kind);
/* By kind name and version ("MPIJob", "v2beta1"); NULL if none. */
const kf_kind *kf_kind_for_version(const char *kind, const char *version);
/* By served resource; NULL if res is not a job kind. */
const kf_kind *kf_kind_for_resource(const api_resource *res);

/* The replica type named exactly `name` (canonical spelling); NULL if the kind
 * has none. */
const kf_replica_type *kf_replica_type_find(const kf_kind *k, const char *name);
/* The canonical spelling of a replica type compared without case ("worker" ->
 * "Worker"); NULL if unknown. */
const char *kf_replica_type_canonical(const kf_kind *k, const char *name);

/* spec.<replica_field>.<type> of a job, or NULL. Borrowed. */
json_t *kf_replica_spec(const kf_kind *k, const json_t *job, const char *type);
/* The replicas of one type: its value, the type's default when unset, 0 when
 * the type is absent or malformed. */
long long kf_replicas(const kf_kind *k, const json_t *job, const char *type);

/* The job's state as kubectl's State column shows it: the type of the last
 * status condition, NULL when there is none. Borrowed. */
const char *kf_job_state(const json_t *job);

/* Common defaulting (upstream's SetDefaults_<Kind>), then k->defaults:
 * replica keys made canonical, replicas, restartPolicy, the default port on
 * the default container, runPolicy.cleanPodPolicy and runPolicy.suspend,
 * successPolicy. Idempotent; tolerates malformed objects (validation reports
 * them). */
void kf_apply_defaults(const kf_kind *k, json_t *obj);

/* Upstream's setDefaultPort on every replica: the default container (else the
 * first) gets {name: <port name>, containerPort: <port>} unless a port of that
 * name exists. Not part of kf_apply_defaults: the stored job keeps the lists
 * the user wrote (so `kubectl apply` of an unchanged manifest is "unchanged",
 * as upstream, whose controller defaults an in-memory copy); the job engine
 * calls this on its working copy before it builds pods. */
void kf_default_ports(const kf_kind *k, json_t *job);

/* Validates a defaulted job (upstream's validating webhook plus the CRD's
 * type and enum rules). old is NULL on create. Returns 0, or -1 with
 * err->code TY_EINVALID and one cause per bad field. */
int kf_validate(const kf_kind *k, const json_t *obj, const json_t *old, ty_error *err);

/* The webhook's name rule: metadata.name must be a DNS-1035 label. Adds the
 * cause upstream sends (`Invalid value: "x": should match: a DNS-1035 label
 * ...`) and returns 1, or returns 0. */
int kf_check_name(const char *name, ty_error *err);

/* Table columns of every job kind (the CRDs' additionalPrinterColumns):
 * State (.status.conditions[-1:].type) and Age. */
extern const api_column kf_columns[];
extern const api_column_path kf_column_paths[];
#define KF_NCOLUMNS 2
/* Appends the State cell (null when there is no condition, as the CRD table
 * converter does) and the Age cell. */
void kf_row_cells(const json_t *obj, time_t now, json_t *cells);

/* Helpers for kind hooks. `spec.<replica_field>.<type>[.<child>]` into buf. */
void kf_replica_path(const kf_kind *k, const char *type, const char *child, char *buf,
                     size_t len);
/* Reads an optional integer member: 1 and *out when present, 0 when absent or
 * null, -1 (with a cause at `path`) when it is not an integer. */
int kf_get_int(const json_t *obj, const char *key, const char *path, ty_error *err,
               long long *out);
/* Reads an optional string member, same convention. */
int kf_get_str(const json_t *obj, const char *key, const char *path, ty_error *err,
               const char **out);
/* An optional string member that must be one of `allowed` (NULL-terminated):
 * adds `Unsupported value` and returns -1 when it is not; else as kf_get_str. */
int kf_check_enum(const json_t *obj, const char *key, const char *path,
                  const char *const *allowed, ty_error *err);
/* An optional integer member within [min, max]: adds `Invalid value: N: must
 * be greater than or equal to <min>` (or less than or equal to <max>) and
 * returns -1 outside; else as kf_get_int (*out may be NULL). */
int kf_check_int(const json_t *obj, const char *key, const char *path, long long min,
                 long long max, ty_error *err, long long *out);
/* A CRD schema type error: `Invalid value: "string": <path> in body must be of
 * type integer: "string"`. */
void kf_type_error(ty_error *err, const char *path, const char *want, const json_t *value);

/* The runPolicy rules every kind shares (cleanPodPolicy, backoffLimit,
 * deadlines, suspend, managedBy, schedulingPolicy and its immutable queue);
 * old_spec NULL on create. Adds causes only. */
void kf_check_run_policy(const kf_kind *k, const json_t *spec, const json_t *old_spec,
                         ty_error *err);

/* Forbidden `spec.<map>.<type>.replicas: must be 1` when the type is present
 * with replicas other than 1 (Master, Chief, Launcher, Scheduler rules). */
void kf_check_single_replica(const kf_kind *k, const json_t *spec, const char *type,
                             ty_error *err);
/* Required `spec.<map>.<type>: must be present` when a non-empty replica map
 * lacks the type. */
void kf_require_replica(const kf_kind *k, const json_t *spec, const char *type, ty_error *err);

/* Schemas shared by the kinds' schema descriptions (see schema.h): a replica
 * spec {replicas, template, restartPolicy} and a runPolicy. */
extern const api_schema kf_schema_run_policy;
extern const api_schema kf_schema_replica_spec;

/* Defines `const api_resource api_<name>` for a job kind whose descriptor is
 * kf_<name>: version v1, namespaced, /status, State and Age columns, no short
 * names or categories (the upstream CRDs declare none). */
#define KF_RESOURCE(name_, group_, kind_, plural_, schema_)                          \
    static void name_##_apply_defaults(json_t *obj)                                  \
    {                                                                                \
        kf_apply_defaults(&kf_##name_, obj);                                         \
    }                                                                                \
    static int name_##_validate(const json_t *obj, const json_t *old, ty_error *err) \
    {                                                                                \
        return kf_validate(&kf_##name_, obj, old, err);                              \
    }                                                                                \
    const api_resource api_##name_ = {                                               \
        .group = (group_), .version = "v1", .kind = (kind_), .list_kind = kind_ "List", \
        .plural = (plural_), .singular = #name_, .namespaced = true,                 \
        .has_status = true, .builtin = false,                                        \
        .apply_defaults = name_##_apply_defaults, .validate = name_##_validate,      \
        .columns = kf_columns, .ncolumns = KF_NCOLUMNS, .row_cells = kf_row_cells,   \
        .column_paths = kf_column_paths, .schema = (schema_),                                                         \
    }

#endif
