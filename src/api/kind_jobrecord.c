/* kind_jobrecord.c - Trainyard's JobRecord (trainyard.io/v1): what a job
 * was when it was deleted, kept for a while after it (a Trainyard
 * extension; Kubeflow Trainer keeps nothing of a deleted TrainJob). The
 * TrainJob controller writes one when a TrainJob goes
 * (controller/trainer/record.c) and deletes it after the record retention;
 * `kubectl get jobrecords` lists them.
 *
 *   spec.job       the job as it was: apiVersion, kind, metadata (name,
 *                  namespace, uid, labels, annotations, creationTimestamp),
 *                  spec and status;
 *   spec.deletedAt when its deletion was asked (RFC 3339);
 *   spec.pods      its pods then: [{name, phase, exitCode, reason,
 *                  finishedAt, restarts}] (exitCode, finishedAt: the first
 *                  container's when it ended), at most
 *                  JOBRECORD_PODS_MAX, with spec.podsOmitted the rest. */
#include <string.h>

#include "api/kind_core_int.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"

static void record_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *job = json_object_get(json_object_get(obj, "spec"), "job");
    const json_t *conds = json_object_get(json_object_get(job, "status"), "conditions");
    const char *state = NULL;

    if (json_array_size(conds))
        state = meta_str(json_array_get(conds, json_array_size(conds) - 1), "type");
    json_array_append_new(cells, json_string(or_str(meta_str(job, "kind"), "")));
    json_array_append_new(cells, json_string(
        or_str(meta_str(json_object_get(job, "metadata"), "name"), "")));
    json_array_append_new(cells, state ? json_string(state) : json_null());
    json_array_append_new(cells, json_string(
        or_str(meta_str(json_object_get(obj, "spec"), "deletedAt"), "")));
    age_cell(obj, now, cells);
}

static const api_column record_columns[] = {
    {"Kind", "string", "", "The kind of the job recorded.", 0},
    {"Job", "string", "", "The name the job had.", 0},
    {"State", "string", "", "The job's last condition when it was deleted.", 0},
    {"Deleted", "string", "", "When its deletion was asked.", 0},
    AGE_COLUMN,
};
static const api_column_path record_column_paths[] = {
    {"Kind", ".spec.job.kind"},
    {"Job", ".spec.job.metadata.name"},
    {"State", ".spec.job.status.conditions[-1:].type"},
    {"Deleted", ".spec.deletedAt"},
    {"Age", ".metadata.creationTimestamp"},
    {NULL, NULL},
};

static const api_field pod_fields[] = {
    API_FIELD("name", API_T_STRING),       API_FIELD("phase", API_T_STRING),
    API_FIELD("exitCode", API_T_INT32),    API_FIELD("reason", API_T_STRING),
    API_FIELD("finishedAt", API_T_STRING), API_FIELD("restarts", API_T_INT32),
};
static const api_schema pod_schema = API_SCHEMA(pod_fields);
static const api_field spec_fields[] = {
    API_FIELD("job", API_T_OPEN),
    API_FIELD("deletedAt", API_T_STRING),
    API_ARRAY_OF("pods", &pod_schema),
    API_FIELD("podsOmitted", API_T_INT32),
};
static const api_schema spec_schema = API_SCHEMA(spec_fields);
static const api_field record_fields[] = {
    API_OBJECT("spec", &spec_schema),
};
static const api_schema record_schema = {
    .fields = record_fields, .nfields = API_NFIELDS(record_fields),
    .description = "JobRecord is what a job was when it was deleted (Trainyard).",
};

const api_resource api_jobrecord = {
    .group = "trainyard.io", .version = "v1", .kind = "JobRecord",
    .list_kind = "JobRecordList", .plural = "jobrecords", .singular = "jobrecord",
    .namespaced = true,
    .columns = record_columns, .ncolumns = NCOLS(record_columns),
    .row_cells = record_cells, .column_paths = record_column_paths,
    .schema = &record_schema,
};
