/* kind_trainjob.c - Kubeflow Trainer v2's TrainJob
 * (trainer.kubeflow.org/v1alpha1): a training run that names a
 * TrainingRuntime or ClusterTrainingRuntime and overrides the trainer's
 * image, command, nodes and resources, the initializers' sources and, through
 * runtimePatches, the pod templates.
 *
 * Defaults and checks are upstream's CRD and webhook rules that need only
 * the object; the ones that need the runtime (it exists; the names the job
 * makes fit) are trainer_admit_trainjob's (trainer_admit.c). The controller
 * that runs a TrainJob is controller/trainer/. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "api/trainer.h"

#define PATH_LEN 256
#define STORAGE_URI_MAX 2048
#define INITIALIZER_ENV_MAX 128
/* upstream's Trainer: env, command and args MaxItems 128, an item of
 * command or args MaxLength 65536, image MaxLength 500 (bytes here) */
#define TRAINER_LIST_MAX 128
#define TRAINER_ARG_MAX 65536
#define TRAINER_IMAGE_MAX 500
#define RUNTIME_PATCHES_MAX 16
#define NAME_MAX_LEN 63

static const char *const runtime_kinds[] = {"ClusterTrainingRuntime", "TrainingRuntime", NULL};
static const char *const runtime_groups[] = {TRAINER_GROUP, NULL};
static const char *const managers[] = {TRAINER_MANAGED_BY_DEFAULT,
                                       TRAINER_MANAGED_BY_MULTIKUEUE, NULL};

/* ---- defaults ------------------------------------------------------------ */

static void trainjob_defaults(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *ref;

    if (!json_is_object(spec))
        return;
    ref = json_object_get(spec, "runtimeRef");
    if (json_is_object(ref)) {
        meta_default(ref, "apiGroup", json_string(TRAINER_GROUP));
        meta_default(ref, "kind", json_string("ClusterTrainingRuntime"));
    }
    meta_default(spec, "suspend", json_false());
    meta_default(spec, "managedBy", json_string(TRAINER_MANAGED_BY_DEFAULT));
}

/* ---- validation ---------------------------------------------------------- */

/* metadata.name: the CRD's two rules, in its words; the name becomes the
 * JobSet's, its Jobs' and its pods' host names. */
static void check_name(const json_t *obj, ty_error *err)
{
    const char *name = meta_str(json_object_get(obj, "metadata"), "name");
    size_t n;
    bool ok;

    if (!name || !*name)
        return; /* generateName: api_prepare's checks */
    n = strlen(name);
    ok = islower((unsigned char)name[0]) && name[n - 1] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = islower((unsigned char)name[i]) || isdigit((unsigned char)name[i]) ||
             name[i] == '-';
    if (!ok)
        meta_invalid_str(err, "metadata.name", name,
                         "metadata.name must match RFC 1035 DNS label format");
    if (n > NAME_MAX_LEN)
        meta_invalid_str(err, "metadata.name", name,
                         "metadata.name must be no more than 63 characters");
}

static void check_enum(const json_t *obj, const char *key, const char *const *allowed,
                       const char *field, ty_error *err)
{
    const json_t *v = json_object_get(obj, key);
    const char *s = json_string_value(v);

    if (!s)
        return;
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0)
            return;
    meta_not_supported(err, field, v, allowed);
}

static void check_runtime_ref(const json_t *ref, ty_error *err)
{
    const char *name = meta_str(ref, "name");

    if (!json_is_object(ref)) {
        meta_required(err, "spec.runtimeRef", NULL);
        return;
    }
    if (!name || !*name)
        meta_required(err, "spec.runtimeRef.name", NULL);
    else
        meta_check_dns1123_subdomain("spec.runtimeRef.name", name, err);
    check_enum(ref, "apiGroup", runtime_groups, "spec.runtimeRef.apiGroup", err);
    check_enum(ref, "kind", runtime_kinds, "spec.runtimeRef.kind", err);
}

/* ^[A-Za-z][A-Za-z0-9+.-]*://.+$ */
static bool is_storage_uri(const char *s)
{
    const char *sep = strstr(s, "://");

    if (!sep || sep == s || !isalpha((unsigned char)s[0]) || !sep[3])
        return false;
    for (const char *p = s; p < sep; p++)
        if (!isalnum((unsigned char)*p) && *p != '+' && *p != '.' && *p != '-')
            return false;
    return true;
}

/* env as upstream's listType=map keyed by name: each named, validly, and
 * once. */
static void check_env_names(const json_t *env, const char *path, ty_error *err)
{
    const json_t *e;
    json_t *seen = json_object();
    char f[PATH_LEN];
    size_t i;

    json_array_foreach(env, i, e) {
        const char *name = meta_str(e, "name");
        snprintf(f, sizeof(f), "%s[%zu].name", path, i);
        if (!name || !*name) {
            meta_required(err, f, NULL);
        } else if (json_object_get(seen, name)) {
            snprintf(f, sizeof(f), "%s[%zu]", path, i);
            ty_error_add_cause(err, "FieldValueDuplicate", f, "Duplicate value: {\"name\":\"%s\"}",
                               name);
        } else {
            meta_check_env_var_name(f, name, err);
            json_object_set_new(seen, name, json_true());
        }
    }
    json_decref(seen);
}

/* upstream's MaxItems on a list of strings, and MaxLength on each */
static void check_strings(const json_t *list, const char *path, size_t max_items,
                          size_t max_len, ty_error *err)
{
    const json_t *v;
    char f[PATH_LEN];
    size_t i;

    if (json_array_size(list) > max_items) {
        meta_too_many(err, path, json_array_size(list), (long long)max_items);
        return;
    }
    json_array_foreach(list, i, v) {
        snprintf(f, sizeof(f), "%s[%zu]", path, i);
        if (json_is_string(v) && json_string_length(v) > max_len)
            meta_too_long(err, f, (long long)max_len);
    }
}

static void check_initializer(const json_t *init, const char *which, ty_error *err)
{
    const json_t *src = json_object_get(init, which), *uri, *env;
    char path[64], f[PATH_LEN];

    if (!json_is_object(src))
        return;
    snprintf(path, sizeof(path), "spec.initializer.%s", which);
    uri = json_object_get(src, "storageUri");
    snprintf(f, sizeof(f), "%s.storageUri", path);
    if (json_is_string(uri) && json_string_length(uri) > STORAGE_URI_MAX)
        ty_error_add_cause(err, "FieldValueTooLong", f,
                           "Too long: may not be longer than %d", STORAGE_URI_MAX);
    else if (json_is_string(uri) && !is_storage_uri(json_string_value(uri)))
        meta_invalid(err, f, uri, "%s in body should match '^[A-Za-z][A-Za-z0-9+.-]*://.+$'",
                     f);
    env = json_object_get(src, "env");
    snprintf(f, sizeof(f), "%s.env", path);
    if (json_array_size(env) > INITIALIZER_ENV_MAX)
        ty_error_add_cause(err, "FieldValueTooMany", f, "Too many: %zu: must have at most %d "
                           "items", json_array_size(env), INITIALIZER_ENV_MAX);
    else
        check_env_names(env, f, err);
    snprintf(f, sizeof(f), "%s.secretRef.name", path);
    if (json_object_get(src, "secretRef") && !meta_str(json_object_get(src, "secretRef"), "name"))
        meta_required(err, f, NULL);
}

static void check_trainer(const json_t *tr, ty_error *err)
{
    const json_t *v;

    if (!json_is_object(tr))
        return;
    v = json_object_get(tr, "numNodes");
    if (json_is_integer(v) && json_integer_value(v) < 0)
        meta_invalid(err, "spec.trainer.numNodes", v,
                     "spec.trainer.numNodes in body should be greater than or equal to 0");
    v = json_object_get(tr, "numProcPerNode");
    if (json_is_integer(v) && json_integer_value(v) < 1)
        meta_invalid(err, "spec.trainer.numProcPerNode", v,
                     "spec.trainer.numProcPerNode in body should be greater than or equal to 1");
    if (json_is_integer(json_object_get(tr, "numNodes")) &&
        json_integer_value(json_object_get(tr, "numNodes")) > INT32_MAX)
        meta_invalid(err, "spec.trainer.numNodes", json_object_get(tr, "numNodes"),
                     "spec.trainer.numNodes in body should be less than or equal to %d",
                     INT32_MAX);
    v = json_object_get(tr, "image");
    if (json_is_string(v) && json_string_length(v) > TRAINER_IMAGE_MAX)
        meta_too_long(err, "spec.trainer.image", TRAINER_IMAGE_MAX);
    check_strings(json_object_get(tr, "command"), "spec.trainer.command", TRAINER_LIST_MAX,
                  TRAINER_ARG_MAX, err);
    check_strings(json_object_get(tr, "args"), "spec.trainer.args", TRAINER_LIST_MAX,
                  TRAINER_ARG_MAX, err);
    v = json_object_get(tr, "env");
    if (json_array_size(v) > TRAINER_LIST_MAX)
        meta_too_many(err, "spec.trainer.env", json_array_size(v), TRAINER_LIST_MAX);
    else
        check_env_names(v, "spec.trainer.env", err);
}

static void check_runtime_patches(const json_t *patches, ty_error *err)
{
    const json_t *p;
    json_t *seen;
    char f[PATH_LEN];
    size_t i;

    if (json_array_size(patches) > RUNTIME_PATCHES_MAX) {
        ty_error_add_cause(err, "FieldValueTooMany", "spec.runtimePatches",
                           "Too many: %zu: must have at most %d items",
                           json_array_size(patches), RUNTIME_PATCHES_MAX);
        return;
    }
    seen = json_object();
    json_array_foreach(patches, i, p) {
        const char *m = meta_str(p, "manager");
        snprintf(f, sizeof(f), "spec.runtimePatches[%zu].manager", i);
        if (!m || !*m)
            meta_required(err, f, NULL);
        else if (json_object_get(seen, m))
            meta_duplicate(err, f, json_object_get(p, "manager"));
        else
            json_object_set_new(seen, m, json_true());
    }
    json_decref(seen);
}

/* spec fields that may not change once set (upstream's CEL self == oldSelf). */
static void check_immutable(const json_t *spec, const json_t *old_spec, ty_error *err)
{
    static const char *const fixed[] = {"runtimeRef", "initializer", "trainer",
                                        "activeDeadlineSeconds", "managedBy", NULL};
    char f[PATH_LEN];

    for (size_t i = 0; fixed[i]; i++) {
        const json_t *now = json_object_get(spec, fixed[i]);
        const json_t *was = json_object_get(old_spec, fixed[i]);
        if ((now || was) && !(now && was && json_equal(now, was))) {
            snprintf(f, sizeof(f), "spec.%s", fixed[i]);
            meta_invalid(err, f, now, "field is immutable");
        }
    }
}

static int trainjob_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *v;
    size_t before = ty_error_ncauses(err);

    check_name(obj, err);
    if (!json_is_object(spec)) {
        meta_required(err, "spec", NULL);
        return -1;
    }
    check_runtime_ref(json_object_get(spec, "runtimeRef"), err);
    check_initializer(json_object_get(spec, "initializer"), "dataset", err);
    check_initializer(json_object_get(spec, "initializer"), "model", err);
    check_trainer(json_object_get(spec, "trainer"), err);
    check_runtime_patches(json_object_get(spec, "runtimePatches"), err);
    if (json_object_get(spec, "labels"))
        meta_check_labels("spec.labels", json_object_get(spec, "labels"), err);
    if (json_object_get(spec, "annotations"))
        meta_check_annotations("spec.annotations", json_object_get(spec, "annotations"), err);
    v = json_object_get(spec, "activeDeadlineSeconds");
    if (json_is_integer(v) && json_integer_value(v) < 1)
        meta_invalid(err, "spec.activeDeadlineSeconds", v,
                     "spec.activeDeadlineSeconds in body should be greater than or equal to 1");
    check_enum(spec, "managedBy", managers, "spec.managedBy", err);
    trainer_check_annotations(obj, err);
    if (old)
        check_immutable(spec, json_object_get(old, "spec"), err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* ---- columns -------------------------------------------------------------- */

/* State: the last condition's type, as upstream's column
 * (.status.conditions[-1:].type); empty while there is none. */
static void trainjob_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    const char *state = NULL;
    char age[32];

    if (json_array_size(conds))
        state = meta_str(json_array_get(conds, json_array_size(conds) - 1), "type");
    json_array_append_new(cells, state ? json_string(state) : json_null());
    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}

static const api_column trainjob_columns[] = {
    {"State", "string", "", "", 0},
    {"Age", "date", "", "", 0},
};
static const api_column_path trainjob_column_paths[] = {
    {"State", ".status.conditions[-1:].type"},
    {"Age", ".metadata.creationTimestamp"},
    {NULL, NULL},
};

/* ---- schema --------------------------------------------------------------- */

static const api_field env_var_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("value", API_T_STRING),
    API_FIELD("valueFrom", API_T_OPEN),
};
const api_schema trainer_env_var_schema = {
    .fields = env_var_fields, .nfields = API_NFIELDS(env_var_fields), .go_name = "EnvVar",
};

static const api_field runtime_ref_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("apiGroup", API_T_STRING),
    API_FIELD("kind", API_T_STRING),
};
static const api_schema runtime_ref = API_SCHEMA(runtime_ref_fields);

static const api_field secret_ref_fields[] = {API_FIELD("name", API_T_STRING)};
static const api_schema secret_ref = API_SCHEMA(secret_ref_fields);
static const api_field initializer_source_fields[] = {
    API_FIELD("storageUri", API_T_STRING),
    API_MERGE_LIST("env", &trainer_env_var_schema, "name"),
    API_OBJECT("secretRef", &secret_ref),
};
static const api_schema initializer_source = API_SCHEMA(initializer_source_fields);
static const api_field initializer_fields[] = {
    API_OBJECT("dataset", &initializer_source),
    API_OBJECT("model", &initializer_source),
};
static const api_schema initializer = API_SCHEMA(initializer_fields);

static const api_field trainer_fields[] = {
    API_FIELD("image", API_T_STRING),
    API_ARRAY("command", API_T_STRING),
    API_ARRAY("args", API_T_STRING),
    API_MERGE_LIST("env", &trainer_env_var_schema, "name"),
    API_FIELD("numNodes", API_T_INT32),
    API_OBJECT("resourcesPerNode", &api_schema_resource_requirements),
    API_FIELD("numProcPerNode", API_T_INT32),
};
static const api_schema trainer = API_SCHEMA(trainer_fields);

/* runtimePatches[].trainingRuntimeSpec.template: labels and annotations of
 * the JobSet and, per replicated job, of its Job and pods, and a PodSpec
 * patch of the fields upstream lets a patch touch. */
static const api_field patch_container_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_MERGE_LIST("env", &trainer_env_var_schema, "name"),
    API_ARRAY("volumeMounts", API_T_OPEN),
    API_FIELD("securityContext", API_T_OPEN),
};
static const api_schema patch_container = API_SCHEMA(patch_container_fields);
static const api_field pod_spec_patch_fields[] = {
    API_FIELD("serviceAccountName", API_T_STRING),
    API_ARRAY_OF("volumes", &api_schema_volume),
    API_MERGE_LIST("initContainers", &patch_container, "name"),
    API_MERGE_LIST("containers", &patch_container, "name"),
    API_ARRAY("imagePullSecrets", API_T_OPEN),
    API_FIELD("securityContext", API_T_OPEN),
    API_MAP("nodeSelector", API_T_STRING),
    API_OBJECT("affinity", &api_schema_affinity),
    API_ARRAY_OF("tolerations", &api_schema_toleration),
    API_ARRAY("schedulingGates", API_T_OPEN),
    API_FIELD("terminationGracePeriodSeconds", API_T_INTEGER),
};
static const api_schema pod_spec_patch = API_SCHEMA(pod_spec_patch_fields);
static const api_field meta_patch_fields[] = {
    API_MAP("labels", API_T_STRING),
    API_MAP("annotations", API_T_STRING),
};
static const api_schema meta_patch = API_SCHEMA(meta_patch_fields);
static const api_field pod_template_patch_fields[] = {
    API_OBJECT("metadata", &meta_patch),
    API_OBJECT("spec", &pod_spec_patch),
};
static const api_schema pod_template_patch = API_SCHEMA(pod_template_patch_fields);
static const api_field job_spec_patch_fields[] = {
    API_OBJECT("template", &pod_template_patch),
};
static const api_schema job_spec_patch = API_SCHEMA(job_spec_patch_fields);
static const api_field job_template_patch_fields[] = {
    API_OBJECT("metadata", &meta_patch),
    API_OBJECT("spec", &job_spec_patch),
};
static const api_schema job_template_patch = API_SCHEMA(job_template_patch_fields);
static const api_field replicated_job_patch_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_OBJECT("template", &job_template_patch),
};
static const api_schema replicated_job_patch = API_SCHEMA(replicated_job_patch_fields);
static const api_field jobset_spec_patch_fields[] = {
    API_MERGE_LIST("replicatedJobs", &replicated_job_patch, "name"),
};
static const api_schema jobset_spec_patch = API_SCHEMA(jobset_spec_patch_fields);
static const api_field jobset_template_patch_fields[] = {
    API_OBJECT("metadata", &meta_patch),
    API_OBJECT("spec", &jobset_spec_patch),
};
static const api_schema jobset_template_patch = API_SCHEMA(jobset_template_patch_fields);
static const api_field runtime_spec_patch_fields[] = {
    API_OBJECT("template", &jobset_template_patch),
};
static const api_schema runtime_spec_patch = API_SCHEMA(runtime_spec_patch_fields);
static const api_field runtime_patch_fields[] = {
    API_FIELD("manager", API_T_STRING),
    API_FIELD("time", API_T_STRING),
    API_OBJECT("trainingRuntimeSpec", &runtime_spec_patch),
};
static const api_schema runtime_patch = API_SCHEMA(runtime_patch_fields);

static const api_field trainjob_spec_fields[] = {
    {.name = "runtimeRef", .type = API_T_OBJECT, .schema = &runtime_ref,
     .description = "The TrainingRuntime (in the job's namespace) or ClusterTrainingRuntime "
                    "the job is built from. Required and immutable; kind defaults to "
                    "ClusterTrainingRuntime, apiGroup to trainer.kubeflow.org."},
    {.name = "initializer", .type = API_T_OBJECT, .schema = &initializer,
     .description = "Where the dataset and the model come from (storageUri, env, secretRef); "
                    "overrides the runtime's dataset-initializer and model-initializer steps. "
                    "Immutable."},
    {.name = "trainer", .type = API_T_OBJECT, .schema = &trainer,
     .description = "Overrides of the runtime's trainer step: image, command, args, env, "
                    "numNodes, resourcesPerNode, numProcPerNode. Immutable."},
    API_MAP("labels", API_T_STRING),
    API_MAP("annotations", API_T_STRING),
    {.name = "runtimePatches", .type = API_T_ARRAY, .item_type = API_T_OBJECT,
     .schema = &runtime_patch, .merge_key = "manager", .patch_strategy = "merge",
     .description = "Changes to the runtime's template for this job (labels, annotations, "
                    "pod spec fields per replicated job), one entry per manager; at most 16."},
    /* what v2.0 and v2.1-v2.2 called runtimePatches' pod part: kept so that
     * manifests written for them apply; stored, not checked inside */
    API_ARRAY("podSpecOverrides", API_T_OPEN),
    API_ARRAY("podTemplateOverrides", API_T_OPEN),
    {.name = "suspend", .type = API_T_BOOLEAN,
     .description = "Whether the job is suspended (no pods run). Defaults to false."},
    {.name = "activeDeadlineSeconds", .type = API_T_INTEGER,
     .description = "Seconds the job may run from its start (reset on resume) before it "
                    "fails with reason DeadlineExceeded. At least 1; immutable."},
    {.name = "managedBy", .type = API_T_STRING,
     .description = "The controller that reconciles the job: "
                    "trainer.kubeflow.org/trainjob-controller (default) or "
                    "kueue.x-k8s.io/multikueue. Immutable."},
};
static const api_schema trainjob_spec = API_SCHEMA(trainjob_spec_fields);

/* Status is never checked; described for its merge keys and /openapi/v3. */
static const api_field trainjob_status_fields[] = {
    {.name = "conditions", .type = API_T_ARRAY, .item_type = API_T_OPEN, .merge_key = "type",
     .patch_strategy = "merge"},
    {.name = "jobsStatus", .type = API_T_ARRAY, .item_type = API_T_OPEN, .merge_key = "name",
     .patch_strategy = "merge"},
    API_FIELD("trainerStatus", API_T_OPEN),
};
static const api_schema trainjob_status = {
    .fields = trainjob_status_fields, .nfields = API_NFIELDS(trainjob_status_fields),
    .preserve_unknown = true,
};

static const api_field trainjob_fields[] = {
    API_OBJECT("spec", &trainjob_spec),
    API_OBJECT("status", &trainjob_status),
};
static const api_schema trainjob_schema = {
    .fields = trainjob_fields, .nfields = API_NFIELDS(trainjob_fields),
    .description = "TrainJob represents configuration of a training job.",
};

const api_resource api_trainjob = {
    .group = TRAINER_GROUP, .version = "v1alpha1", .kind = "TrainJob",
    .list_kind = "TrainJobList", .plural = "trainjobs", .singular = "trainjob",
    .namespaced = true, .has_status = true,
    .apply_defaults = trainjob_defaults, .validate = trainjob_validate,
    .columns = trainjob_columns, .ncolumns = API_NFIELDS(trainjob_columns),
    .row_cells = trainjob_cells, .column_paths = trainjob_column_paths,
    .schema = &trainjob_schema,
};
