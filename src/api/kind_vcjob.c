/* kind_vcjob.c - Volcano's Job (batch.volcano.sh/v1alpha1): the defaulting
 * and validation of Volcano's admission webhooks, and its CRD's columns.
 *
 * The queue's existence and state need the store and are checked by the
 * server; everything here looks only at the object (and the stored one).
 */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/meta.h"
#include "api/schema.h"

#define PATH_LEN 256
#define MAX_TASKS 256

static const char *const policy_events[] = {"*", "PodFailed", "PodEvicted", "PodPending",
    "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated", NULL};
static const char *const policy_actions[] = {"AbortJob", "RestartJob", "RestartTask",
    "RestartPod", "TerminateJob", "CompleteJob", "ResumeJob", NULL};
static const char *const known_plugins[] = {"env", "svc", "ssh", "pytorch", "tensorflow",
    "mpi", "ray", "hcclrank", NULL};
static const char *const iterations[] = {"any", "all", NULL};

static bool in_set(const char *s, const char *const *set)
{
    for (size_t i = 0; s && set[i]; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

/* ---- defaulting --------------------------------------------------------- */

static void default_plugins(json_t *spec)
{
    json_t *plugins = json_object_get(spec, "plugins");

    if (!json_is_object(plugins))
        return;
    /* The distributed-framework plugins need the headless service (and MPI
     * ssh); hcclrank does not (upstream's webhook adds none for it). */
    if (json_object_get(plugins, "tensorflow") || json_object_get(plugins, "pytorch") ||
        json_object_get(plugins, "mpi") || json_object_get(plugins, "ray"))
        meta_default(plugins, "svc", json_array());
    if (json_object_get(plugins, "mpi"))
        meta_default(plugins, "ssh", json_array());
}

static void vcjob_defaults(json_t *obj)
{
    json_t *spec = meta_child(obj, "spec"), *task;
    json_int_t sum = 0;
    size_t i;

    meta_default(spec, "schedulerName", json_string("volcano"));
    meta_default(spec, "queue", json_string("default"));
    meta_default(spec, "maxRetry", json_integer(3));
    json_array_foreach(json_object_get(spec, "tasks"), i, task) {
        json_t *pod_spec;
        char name[32];
        if (!json_is_object(task))
            continue;
        if (!meta_str(task, "name") || !*meta_str(task, "name")) {
            snprintf(name, sizeof(name), "default%zu", i);
            json_object_set_new(task, "name", json_string(name));
        }
        meta_default(task, "replicas", json_integer(0));
        meta_default(task, "minAvailable", json_integer(meta_int(task, "replicas", 0)));
        meta_default(task, "maxRetry", json_integer(3));
        pod_spec = json_object_get(json_object_get(task, "template"), "spec");
        if (json_is_true(json_object_get(pod_spec, "hostNetwork")))
            meta_default(pod_spec, "dnsPolicy", json_string("ClusterFirstWithHostNet"));
        sum += meta_int(task, "minAvailable", 0);
    }
    if (meta_int(spec, "minAvailable", 0) == 0 && json_is_array(json_object_get(spec, "tasks")))
        json_object_set_new(spec, "minAvailable", json_integer(sum));
    default_plugins(spec);
}

/* ---- validation --------------------------------------------------------- */

static void check_nonneg(const json_t *obj, const char *key, const char *field, ty_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
        meta_invalid(err, field, v, "must be greater than or equal to 0");
}

/* Exactly one of event/events/exitCode; known events and actions; no
 * duplicate event or exit code across the list; '*' stands alone. */
static void check_policies(const json_t *list, const char *path, ty_error *err)
{
    json_t *seen_events = json_object(), *seen_codes = json_object(), *p;
    char f[PATH_LEN];
    size_t i, j;
    bool star = false;

    json_array_foreach(list, i, p) {
        json_t *event = json_object_get(p, "event"), *events = json_object_get(p, "events");
        json_t *code = json_object_get(p, "exitCode"), *action = json_object_get(p, "action");
        json_t *all = json_array(), *e;
        bool has_event = (event && json_string_length(event)) || json_array_size(events);
        snprintf(f, sizeof(f), "%s[%zu]", path, i);
        if (!has_event && !code)
            meta_required(err, f, "either event(s) or exitCode must be specified");
        if (has_event && code)
            meta_invalid(err, f, p, "must not specify event(s) and exitCode simultaneously");
        if (event && json_string_length(event) && json_array_size(events))
            meta_invalid(err, f, p, "must not specify event and events simultaneously");
        if (event && json_string_length(event))
            json_array_append(all, event);
        json_array_extend(all, json_is_array(events) ? events : NULL);
        json_array_foreach(all, j, e) {
            const char *name = json_string_value(e);
            if (event && json_string_length(event) && j == 0)
                snprintf(f, sizeof(f), "%s[%zu].event", path, i);
            else
                snprintf(f, sizeof(f), "%s[%zu].events[%zu]", path, i,
                         j - (event && json_string_length(event) ? 1 : 0));
            if (!in_set(name, policy_events)) {
                meta_not_supported(err, f, e, policy_events);
                continue;
            }
            if (json_object_get(seen_events, name))
                meta_duplicate(err, f, e);
            json_object_set_new(seen_events, name, json_true());
            if (strcmp(name, "*") == 0)
                star = true;
        }
        json_decref(all);
        if (code) {
            char key[32];
            snprintf(f, sizeof(f), "%s[%zu].exitCode", path, i);
            snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(code));
            if (!json_is_integer(code) || json_integer_value(code) == 0)
                meta_invalid(err, f, code, "0 is not a valid error code");
            else if (json_object_get(seen_codes, key))
                meta_duplicate(err, f, code);
            json_object_set_new(seen_codes, key, json_true());
        }
        snprintf(f, sizeof(f), "%s[%zu].action", path, i);
        if (action && !in_set(json_string_value(action), policy_actions))
            meta_not_supported(err, f, action, policy_actions);
    }
    if (star && json_array_size(list) > 1)
        meta_invalid_str(err, path, "*", "if there's * here, no other policy should be here");
    json_decref(seen_events);
    json_decref(seen_codes);
}

static const json_t *task_deps(const json_t *task)
{
    return json_object_get(json_object_get(task, "dependsOn"), "name");
}

static void check_depends_on(const json_t *tasks, ty_error *err)
{
    unsigned char state[MAX_TASKS] = {0};
    char f[PATH_LEN];
    size_t i, k;
    json_t *t, *n;
    bool any = false;

    json_array_foreach(tasks, i, t) {
        json_t *dep = json_object_get(t, "dependsOn"), *it;
        if (!dep)
            continue;
        any = true;
        json_array_foreach(json_object_get(dep, "name"), k, n) {
            snprintf(f, sizeof(f), "spec.tasks[%zu].dependsOn.name[%zu]", i, k);
            if (meta_named_index(tasks, json_string_value(n)) < 0)
                ty_error_add_cause(err, "FieldValueNotFound", f, "Not found: \"%s\"",
                                   json_string_value(n) ? json_string_value(n) : "");
        }
        snprintf(f, sizeof(f), "spec.tasks[%zu].dependsOn.iteration", i);
        if ((it = json_object_get(dep, "iteration")) && !in_set(json_string_value(it), iterations))
            meta_not_supported(err, f, it, iterations);
    }
    if (!any || json_array_size(tasks) > MAX_TASKS)
        return;
    for (i = 0; i < json_array_size(tasks); i++)
        if (meta_depends_cycle(tasks, i, task_deps, state)) {
            snprintf(f, sizeof(f), "spec.tasks[%zu].dependsOn", i);
            meta_invalid_str(err, f, meta_str(json_array_get(tasks, i), "name"),
                             "job has dependencies between tasks, but doesn't form a "
                             "directed acyclic graph(DAG)");
            return;
        }
}

static json_int_t check_task(const json_t *t, size_t i, json_t *names, ty_error *err)
{
    char f[PATH_LEN];
    const char *name = meta_str(t, "name");
    json_int_t replicas = meta_int(t, "replicas", 0), min = meta_int(t, "minAvailable", replicas);

    snprintf(f, sizeof(f), "spec.tasks[%zu].name", i);
    if (!name || !*name) {
        meta_required(err, f, NULL);
    } else {
        meta_check_dns1123_label(f, name, err);
        if (json_object_get(names, name))
            meta_duplicate(err, f, json_object_get(t, "name"));
        json_object_set_new(names, name, json_true());
    }
    snprintf(f, sizeof(f), "spec.tasks[%zu].replicas", i);
    check_nonneg(t, "replicas", f, err);
    snprintf(f, sizeof(f), "spec.tasks[%zu].minAvailable", i);
    check_nonneg(t, "minAvailable", f, err);
    if (min > replicas)
        meta_invalid_int(err, f, (long long)min, "must be less than or equal to replicas (%lld)",
                         (long long)replicas);
    snprintf(f, sizeof(f), "spec.tasks[%zu].maxRetry", i);
    check_nonneg(t, "maxRetry", f, err);
    snprintf(f, sizeof(f), "spec.tasks[%zu].policies", i);
    check_policies(json_object_get(t, "policies"), f, err);
    snprintf(f, sizeof(f), "spec.tasks[%zu].template.spec", i);
    meta_pod_spec_validate(json_object_get(json_object_get(t, "template"), "spec"), f, NULL, err);
    return replicas > 0 ? replicas : 0;
}

static void check_plugins(const json_t *plugins, ty_error *err)
{
    const char *key;
    json_t *v;
    char f[PATH_LEN];

    json_object_foreach((json_t *)plugins, key, v) {
        json_t *name = json_string(key);
        snprintf(f, sizeof(f), "spec.plugins[%s]", key);
        if (!in_set(key, known_plugins))
            meta_not_supported(err, "spec.plugins", name, known_plugins);
        else if (!json_is_array(v) && !json_is_null(v))
            meta_invalid(err, f, v, "plugin arguments must be a list of strings");
        json_decref(name);
    }
}

/* Updates may change only minAvailable, tasks[*].replicas, tasks[*].minAvailable
 * and priorityClassName (as Volcano's webhook allows). */
static void check_update(const json_t *spec, const json_t *old_spec, ty_error *err)
{
    json_t *a, *b, *t;
    size_t i;

    if (json_array_size(json_object_get(spec, "tasks")) !=
        json_array_size(json_object_get(old_spec, "tasks"))) {
        meta_forbidden(err, "spec.tasks", "job updates may not add or remove tasks");
        return;
    }
    a = json_deep_copy(spec);
    b = json_deep_copy(old_spec);
    json_t *pair[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        if (!pair[k])
            continue;
        json_object_del(pair[k], "minAvailable");
        json_object_del(pair[k], "priorityClassName");
        json_array_foreach(json_object_get(pair[k], "tasks"), i, t) {
            json_object_del(t, "replicas");
            json_object_del(t, "minAvailable");
        }
    }
    if (!json_equal(a, b))
        meta_forbidden(err, "spec", "job updates may not change fields other than "
                       "`minAvailable`, `tasks[*].replicas under spec`");
    json_decref(a);
    json_decref(b);
}

static int vcjob_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err), i;
    const json_t *spec = json_object_get(obj, "spec"), *tasks = json_object_get(spec, "tasks");
    json_t *names = json_object(), *t;
    json_int_t total = 0, min = meta_int(spec, "minAvailable", 0);

    check_nonneg(spec, "minAvailable", "spec.minAvailable", err);
    check_nonneg(spec, "maxRetry", "spec.maxRetry", err);
    check_nonneg(spec, "ttlSecondsAfterFinished", "spec.ttlSecondsAfterFinished", err);
    check_nonneg(spec, "minSuccess", "spec.minSuccess", err);
    if (json_array_size(tasks) == 0)
        meta_required(err, "spec.tasks", "No task specified in job spec");
    json_array_foreach(tasks, i, t)
        total += check_task(t, i, names, err);
    json_decref(names);
    if (total > KF_MAX_JOB_PODS)
        meta_invalid_int(err, "spec.tasks", (long long)total,
                         "the tasks' replicas add up to more than %d pods", KF_MAX_JOB_PODS);
    if (json_array_size(tasks) && min > total)
        meta_invalid_int(err, "spec.minAvailable", (long long)min,
                         "must be less than or equal to the total replicas of tasks (%lld)",
                         (long long)total);
    if (json_object_get(spec, "minSuccess") && meta_int(spec, "minSuccess", 0) > total)
        meta_invalid_int(err, "spec.minSuccess", (long long)meta_int(spec, "minSuccess", 0),
                         "must be less than or equal to the total replicas of tasks (%lld)",
                         (long long)total);
    check_policies(json_object_get(spec, "policies"), "spec.policies", err);
    check_plugins(json_object_get(spec, "plugins"), err);
    check_depends_on(tasks, err);
    if (meta_str(spec, "queue") && *meta_str(spec, "queue"))
        meta_check_dns1123_subdomain("spec.queue", meta_str(spec, "queue"), err);
    if (old)
        check_update(spec, json_object_get(old, "spec"), err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* ---- columns and schema ------------------------------------------------- */

static json_t *int_or_null(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_incref(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static void vcjob_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *st = json_object_get(obj, "status");
    char age[32];

    json_array_append_new(cells, str_or_null(meta_str(json_object_get(st, "state"), "phase")));
    json_array_append_new(cells, int_or_null(st, "minAvailable"));
    json_array_append_new(cells, int_or_null(st, "running"));
    api_age(obj, now, age, sizeof(age));
    json_array_append_new(cells, json_string(age));
    json_array_append_new(cells, str_or_null(meta_str(json_object_get(obj, "spec"), "queue")));
}

static const api_column vcjob_columns[] = {
    {"STATUS", "string", "", "", 0},
    {"minAvailable", "integer", "", "", 0},
    {"RUNNINGS", "integer", "", "", 0},
    {"AGE", "date", "", "", 0},
    {"QUEUE", "string", "", "", 1},
};
static const api_column_path vcjob_columns_paths[] = {
    {"STATUS", ".status.state.phase"},
    {"minAvailable", ".status.minAvailable"},
    {"RUNNINGS", ".status.running"},
    {"AGE", ".metadata.creationTimestamp"},
    {"QUEUE", ".spec.queue"},
    {NULL, NULL},
};

static const api_field policy_fields[] = {
    API_FIELD("event", API_T_STRING), API_ARRAY("events", API_T_STRING),
    API_FIELD("action", API_T_STRING), API_FIELD("exitCode", API_T_INTEGER),
    API_FIELD("timeout", API_T_STRING),
};
static const api_schema policy = API_SCHEMA(policy_fields);

static const api_field depends_fields[] = {
    API_ARRAY("name", API_T_STRING), API_FIELD("iteration", API_T_STRING),
};
static const api_schema depends_on = API_SCHEMA(depends_fields);

static const api_field task_fields[] = {
    API_FIELD("name", API_T_STRING),
    API_FIELD("replicas", API_T_INTEGER),
    API_FIELD("minAvailable", API_T_INTEGER),
    API_OBJECT("template", &api_schema_pod_template_spec),
    API_ARRAY_OF("policies", &policy),
    API_FIELD("topologyPolicy", API_T_STRING),
    API_FIELD("maxRetry", API_T_INTEGER),
    API_OBJECT("dependsOn", &depends_on),
    API_FIELD("partitionPolicy", API_T_OPEN),
};
static const api_schema task_spec = API_SCHEMA(task_fields);

static const api_field volume_spec_fields[] = {
    API_FIELD("mountPath", API_T_STRING), API_FIELD("volumeClaimName", API_T_STRING),
    API_FIELD("volumeClaim", API_T_OPEN),
};
static const api_schema volume_spec = API_SCHEMA(volume_spec_fields);

static const api_field vcjob_spec_fields[] = {
    API_FIELD("schedulerName", API_T_STRING),
    API_FIELD("minAvailable", API_T_INTEGER),
    API_ARRAY_OF("volumes", &volume_spec),
    API_ARRAY_OF("tasks", &task_spec),
    API_ARRAY_OF("policies", &policy),
    {.name = "plugins", .type = API_T_MAP, .item_type = API_T_ARRAY},
    API_FIELD("runningEstimate", API_T_STRING),
    API_FIELD("queue", API_T_STRING),
    API_FIELD("maxRetry", API_T_INTEGER),
    API_FIELD("ttlSecondsAfterFinished", API_T_INTEGER),
    API_FIELD("priorityClassName", API_T_STRING),
    API_FIELD("minSuccess", API_T_INTEGER),
    API_FIELD("networkTopology", API_T_OPEN),
};
const api_schema api_vcjob_spec_schema = API_SCHEMA(vcjob_spec_fields);

static const api_field vcjob_fields[] = {
    API_OBJECT("spec", &api_vcjob_spec_schema),
    API_FIELD("status", API_T_OPEN),
};
static const api_schema vcjob_schema = {
    .fields = vcjob_fields, .nfields = API_NFIELDS(vcjob_fields),
    .description = "Job defines the volcano job.",
};

const api_resource api_vcjob = {
    .group = "batch.volcano.sh", .version = "v1alpha1", .kind = "Job", .list_kind = "JobList",
    .plural = "jobs", .singular = "job", .short_names = {"vcjob", "vj", NULL},
    .namespaced = true, .has_status = true,
    .apply_defaults = vcjob_defaults, .validate = vcjob_validate,
    .columns = vcjob_columns, .ncolumns = sizeof(vcjob_columns) / sizeof(vcjob_columns[0]),
    .row_cells = vcjob_cells, .schema = &vcjob_schema,
    .column_paths = vcjob_columns_paths,
};
