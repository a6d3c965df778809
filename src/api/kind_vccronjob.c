/* kind_vccronjob.c - Volcano's CronJob (batch.volcano.sh/v1alpha1, Volcano
 * 1.13): its CRD's defaults and bounds and its admission webhook's rules.
 *
 * The webhook checks the schedule, the time zone and the name (which must
 * leave room for the jobs' "-<minutes>" suffix); the job template itself is
 * checked when a Job is made from it, as upstream (the Job's own webhook). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "base/cron.h"
#include "base/tzfile.h"

/* The longest name whose jobs' names ("<name>-<minutes since the epoch>",
 * an 11-byte suffix) stay within 63 bytes. */
#define MAX_BASE_NAME 52

static const char *const concurrency_policies[] = {"Allow", "Forbid", "Replace", NULL};

/* The defaults of the CRD, which also defaults the embedded job spec. */
static void cronjob_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec"), *tmpl, *jspec;

    meta_default(spec, "concurrencyPolicy", json_string("Allow"));
    meta_default(spec, "suspend", json_false());
    meta_default(spec, "successfulJobsHistoryLimit", json_integer(3));
    meta_default(spec, "failedJobsHistoryLimit", json_integer(1));
    tmpl = json_object_get(spec, "jobTemplate");
    jspec = json_object_get(tmpl, "spec");
    if (json_is_object(jspec)) {
        meta_default(jspec, "maxRetry", json_integer(3));
        meta_default(jspec, "queue", json_string("default"));
    }
}

static void check_nonneg(const json_t *spec, const char *key, ty_error *err)
{
    json_t *v = json_object_get(spec, key);
    char f[64];

    snprintf(f, sizeof(f), "spec.%s", key);
    if (json_is_integer(v) && json_integer_value(v) < 0)
        meta_invalid(err, f, v, "should be greater than or equal to 0");
}

/* A part of a zone name as the webhook allows it: 1-14 of [A-Za-z.-_0-9+],
 * not "." or "..", not starting with "-". */
static bool zone_part_ok(const char *s, size_t n)
{
    if (n == 0 || n > 14 || s[0] == '-' || (n == 1 && s[0] == '.') ||
        (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.-_0123456789+", s[i]))
            return false;
    return true;
}

static void check_time_zone(const json_t *v, ty_error *err)
{
    const char *tz = json_string_value(v), *p;
    tz_zone *z;

    if (!json_is_string(v))
        return; /* a type error, reported by the schema check */
    if (!*tz) {
        meta_invalid(err, "spec.timeZone", v, "timeZone must be nil or non-empty string");
        return;
    }
    for (p = tz;;) {
        size_t n = strcspn(p, "/");
        if (!zone_part_ok(p, n)) {
            meta_invalid(err, "spec.timeZone", v, "unknown timeZone");
            return;
        }
        if (!p[n])
            break;
        p += n + 1;
    }
    if (strcasecmp(tz, "Local") == 0) {
        meta_invalid(err, "spec.timeZone", v, "timeZone can't be Local, and must be defined "
                     "in https://www.iana.org/time-zones");
        return;
    }
    if (!(z = tz_load(NULL, tz, NULL))) {
        meta_invalid(err, "spec.timeZone", v, "invalid timeZone");
        return;
    }
    tz_free(z);
}

static int cronjob_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    const json_t *spec = json_object_get(obj, "spec"), *v;
    const char *name = meta_str(json_object_get(obj, "metadata"), "name");
    const char *sched = meta_str(spec, "schedule");
    size_t before = ty_error_ncauses(err);
    cron_spec cs;
    ty_error ce;

    (void)old;
    if (!sched || !*sched) {
        meta_required(err, "spec.schedule", "schedule is required, but got empty");
    } else if (strstr(sched, "TZ")) {
        meta_invalid_str(err, "spec.schedule", sched, "schedule should not contain TZ or "
                         "CRON_TZ, TZ should only be set in the timeZone field");
    } else {
        ty_error_init(&ce);
        if (cron_parse(sched, &cs, &ce) < 0)
            meta_invalid_str(err, "spec.schedule", sched,
                             "schedule is not a valid cron expression: %s", ce.text);
        ty_error_clear(&ce);
    }
    if ((v = json_object_get(spec, "timeZone")) && !json_is_null(v))
        check_time_zone(v, err);
    if ((v = json_object_get(spec, "concurrencyPolicy")) && json_is_string(v)) {
        bool ok = false;
        for (size_t i = 0; concurrency_policies[i]; i++)
            ok |= strcmp(json_string_value(v), concurrency_policies[i]) == 0;
        if (!ok)
            meta_not_supported(err, "spec.concurrencyPolicy", v, concurrency_policies);
    }
    check_nonneg(spec, "startingDeadlineSeconds", err);
    check_nonneg(spec, "successfulJobsHistoryLimit", err);
    check_nonneg(spec, "failedJobsHistoryLimit", err);
    if (!json_is_object(json_object_get(spec, "jobTemplate")))
        meta_required(err, "spec.jobTemplate", NULL);
    if (name && strlen(name) > MAX_BASE_NAME)
        meta_invalid_str(err, "metadata.name", name, "cronJob name must be no more than %d "
                         "characters to accommodate job name suffix (max 63 total)",
                         MAX_BASE_NAME);
    else if (name && *name)
        meta_check_qualified_name("metadata.name", name, err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

static const api_column cronjob_columns[] = {
    {"Age", "date", "", "", 0},
};
static const api_column_path cronjob_columns_paths[] = {
    {"Age", ".metadata.creationTimestamp"},
    {NULL, NULL},
};

static void cronjob_cells(const json_t *obj, time_t now, json_t *cells)
{
    char age[32];

    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
}

static const api_field job_template_fields[] = {
    API_OBJECT("metadata", &api_schema_object_meta),
    API_OBJECT("spec", &api_vcjob_spec_schema),
};
static const api_schema job_template = API_SCHEMA(job_template_fields);

static const api_field cronjob_spec_fields[] = {
    API_FIELD("schedule", API_T_STRING),
    API_FIELD("timeZone", API_T_STRING),
    API_FIELD("startingDeadlineSeconds", API_T_INTEGER),
    API_FIELD("concurrencyPolicy", API_T_STRING),
    API_FIELD("suspend", API_T_BOOLEAN),
    API_OBJECT("jobTemplate", &job_template),
    API_FIELD("successfulJobsHistoryLimit", API_T_INT32),
    API_FIELD("failedJobsHistoryLimit", API_T_INT32),
};
static const api_schema cronjob_spec = API_SCHEMA(cronjob_spec_fields);

static const api_field cronjob_fields[] = {
    API_OBJECT("spec", &cronjob_spec),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema cronjob_schema = {
    .fields = cronjob_fields, .nfields = API_NFIELDS(cronjob_fields),
    .description = "CronJob is the Schema for the cronjobs API",
};

const api_resource api_vccronjob = {
    .group = "batch.volcano.sh", .version = "v1alpha1", .kind = "CronJob",
    .list_kind = "CronJobList", .plural = "cronjobs", .singular = "cronjob",
    .short_names = {"cronvcjob", "cronvj", NULL},
    .namespaced = true, .has_status = true,
    .apply_defaults = cronjob_defaults, .validate = cronjob_validate,
    .columns = cronjob_columns, .ncolumns = sizeof(cronjob_columns) / sizeof(cronjob_columns[0]),
    .row_cells = cronjob_cells, .schema = &cronjob_schema,
    .column_paths = cronjob_columns_paths,
};
