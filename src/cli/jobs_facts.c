/* jobs_facts.c - what a fetched training job of any kind sums up to for the
 * researcher's commands (jobs.h): which objects it owns, its replicas, GPUs,
 * status, times, queue and user. Pure: reads the objects, asks nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kubeflow.h"
#include "cli/jobs_int.h"
#include "model/podres.h"

/* ---- pure ---- */

void cli_job_pod_selector(const json_t *job, char *buf, size_t len)
{
    if (cli_is_trainjob(job)) { /* JobSet's label, which the SDK selects by */
        snprintf(buf, len, "%s=%s", LABEL_JOBSET_NAME, cli_obj_name(job));
        return;
    }
    snprintf(buf, len, "%s=%s", is_vcjob(job) ? LABEL_VC_JOB_NAME : LABEL_KF_JOB_NAME,
             cli_obj_name(job));
}

bool cli_job_owns(const json_t *job, const json_t *obj)
{
    const char *uid = json_string_value(at(job, "metadata", "uid"));
    const json_t *refs = at(obj, "metadata", "ownerReferences"), *r;
    size_t i;

    if (strcmp(cli_obj_ns(job), cli_obj_ns(obj)) != 0)
        return false;
    if (uid && json_array_size(refs)) {
        json_array_foreach(refs, i, r)
            if (json_is_string(json_object_get(r, "uid")) &&
                strcmp(json_string_value(json_object_get(r, "uid")), uid) == 0)
                return true;
        return false;
    }
    /* Without owner references (written by hand): the job-name label, and
     * for a Volcano Job's PodGroup its name prefix is not enough to tell. */
    if (cli_is_trainjob(job)) {
        const char *js = label(obj, LABEL_JOBSET_NAME), *tj = label(obj, LABEL_TRAINJOB_NAME);
        return (js && !strcmp(js, cli_obj_name(job))) || (tj && !strcmp(tj, cli_obj_name(job)));
    }
    const char *name = label(obj, is_vcjob(job) ? LABEL_VC_JOB_NAME : LABEL_KF_JOB_NAME);
    return name && strcmp(name, cli_obj_name(job)) == 0;
}

/* The index's keys of obj: "U:<uid>" of each owner it names, else (no
 * owner references) "K:<ns>/<name>" and "V:<ns>/<name>" of its Kubeflow and
 * Volcano job-name labels, as cli_job_owns looks. */
static void index_add(json_t *ix, const char *key, json_t *obj)
{
    json_t *list = json_object_get(ix, key);

    if (!list) {
        list = json_array();
        json_object_set_new(ix, key, list);
    }
    json_array_append(list, obj);
}

json_t *cli_owned_index(const json_t *objs)
{
    json_t *ix = json_object(), *obj, *r;
    size_t i, k;
    char key[768];

    json_array_foreach(objs, i, obj) {
        const json_t *refs = at(obj, "metadata", "ownerReferences");
        const char *kf = label(obj, LABEL_KF_JOB_NAME), *vc = label(obj, LABEL_VC_JOB_NAME);
        const char *tj = label(obj, LABEL_TRAINJOB_NAME);
        if (json_array_size(refs)) {
            json_array_foreach(refs, k, r)
                if (json_is_string(json_object_get(r, "uid"))) {
                    snprintf(key, sizeof(key), "U:%s", json_string_value(json_object_get(r, "uid")));
                    index_add(ix, key, obj);
                }
            continue;
        }
        if (kf) {
            snprintf(key, sizeof(key), "K:%s/%s", cli_obj_ns(obj), kf);
            index_add(ix, key, obj);
        }
        if (vc) {
            snprintf(key, sizeof(key), "V:%s/%s", cli_obj_ns(obj), vc);
            index_add(ix, key, obj);
        }
        if ((tj = tj ? tj : label(obj, LABEL_JOBSET_NAME))) {
            snprintf(key, sizeof(key), "T:%s/%s", cli_obj_ns(obj), tj);
            index_add(ix, key, obj);
        }
    }
    return ix;
}

json_t *cli_owned_by(const json_t *index, const json_t *job)
{
    const char *uid = json_string_value(at(job, "metadata", "uid"));
    json_t *out = json_array(), *obj;
    const json_t *lists[2] = {NULL, NULL};
    char key[768];
    size_t i;

    if (uid) {
        snprintf(key, sizeof(key), "U:%s", uid);
        lists[0] = json_object_get(index, key);
    }
    snprintf(key, sizeof(key), "%c:%s/%s",
             is_vcjob(job) ? 'V' : cli_is_trainjob(job) ? 'T' : 'K', cli_obj_ns(job),
             cli_obj_name(job));
    lists[1] = json_object_get(index, key);
    for (int l = 0; l < 2; l++)
        json_array_foreach(lists[l], i, obj)
            if (cli_job_owns(job, obj))
                json_array_append(out, obj);
    return out;
}

bool cli_resource_is_gpu(const char *name)
{
    size_t len = name ? strlen(name) : 0;
    return len > 4 && strcmp(name + len - 4, "/gpu") == 0;
}

int64_t cli_spec_gpus(const json_t *pod_spec)
{
    podres r;
    int64_t milli = 0;

    if (!json_is_object(pod_spec))
        return 0;
    podres_of_spec(pod_spec, &r);
    for (size_t i = 0; i < r.n; i++)
        if (cli_resource_is_gpu(r.r[i].name))
            milli += r.r[i].milli;
    /* devices are whole: a fraction asks for the next one */
    return (milli + 999) / 1000;
}

int64_t cli_pod_gpus(const json_t *pod)
{
    return cli_spec_gpus(json_object_get(pod, "spec"));
}

bool cli_pod_active(const json_t *pod)
{
    const char *node = json_string_value(at(pod, "spec", "nodeName"));
    const char *phase = str_or(at(pod, "status", "phase"), "Pending");
    return node && *node && strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0;
}

static void add_replica(cli_job_replica *out, size_t max, size_t *n, const char *role,
                        long long replicas, const json_t *spec)
{
    if (*n < max) {
        cli_job_replica *r = &out[*n];
        snprintf(r->role, sizeof(r->role), "%s", role ? role : "");
        r->replicas = replicas < 0 ? 0 : replicas;
        r->pod_spec = json_is_object(spec) ? spec : NULL;
        r->gpus = cli_spec_gpus(r->pod_spec);
    }
    (*n)++;
}

static long long int_or(const json_t *v, long long dflt)
{
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

size_t cli_job_replicas(const json_t *job, cli_job_replica *out, size_t max)
{
    const api_resource *res = cli_job_resource_of(job);
    const kf_kind *k = kf_kind_for_resource(res);
    const json_t *spec = json_object_get(job, "spec"), *it;
    size_t n = 0, i;

    if (res == &api_trainjob)
        return cli_trainjob_replicas(job, NULL, out, max);
    if (res == &api_vcjob) {
        json_array_foreach(json_object_get(spec, "tasks"), i, it)
            add_replica(out, max, &n, str_or(json_object_get(it, "name"), ""),
                        int_or(json_object_get(it, "replicas"), 1), at(it, "template", "spec"));
        return n;
    }
    if (!k)
        return 0;
    const json_t *map = json_object_get(spec, k->replica_field);
    if (json_is_array(map)) { /* MSJob kubeflow.org/v1: a list of replica specs */
        json_array_foreach(map, i, it)
            add_replica(out, max, &n, str_or(json_object_get(it, "replicaType"), "MASTER"),
                        int_or(json_object_get(it, "replicas"), 1), at(it, "template", "spec"));
        return n;
    }
    for (const kf_replica_type *t = k->types; t->name; t++) {
        const json_t *rs = kf_replica_spec(k, job, t->name);
        if (rs)
            add_replica(out, max, &n, t->name, kf_replicas(k, job, t->name),
                        at(rs, "template", "spec"));
    }
    return n;
}

/* The condition of type in conds whose status is True, or NULL. */
static const json_t *true_cond(const json_t *conds, const char *type)
{
    const json_t *c;
    size_t i;

    json_array_foreach(conds, i, c)
        if (strcmp(str_or(json_object_get(c, "type"), ""), type) == 0 &&
            strcmp(str_or(json_object_get(c, "status"), ""), "True") == 0)
            return c;
    return NULL;
}

static const char *vc_status(const json_t *job)
{
    static const struct {
        const char *phase, *status;
    } map[] = {
        {"Running", "Running"},     {"Completing", "Running"},  {"Completed", "Succeeded"},
        {"Failed", "Failed"},       {"Terminating", "Failed"},  {"Terminated", "Failed"},
        {"Aborting", "Suspended"},  {"Aborted", "Suspended"},   {"Restarting", "Restarting"},
    };
    const char *phase = str_or(json_object_get(at(job, "status", "state"), "phase"), "");

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(phase, map[i].phase) == 0)
            return map[i].status;
    return NULL;
}

static const char *kf_status(const json_t *job)
{
    const json_t *conds = at(job, "status", "conditions"), *c, *latest = NULL;
    static const char *const finished[] = {"Succeeded", "Failed", "Suspended"};
    size_t i;

    for (i = 0; i < 3; i++)
        if (true_cond(conds, finished[i]))
            return finished[i];
    /* asked to be suspended, before the engine has said so */
    if (json_is_true(json_object_get(at(job, "spec", "runPolicy"), "suspend")))
        return "Suspended";
    /* the latest of the others that holds (the list is in the order they
     * came; a later one of the same time wins) */
    json_array_foreach(conds, i, c) {
        const char *type = str_or(json_object_get(c, "type"), "");
        if ((strcmp(type, "Running") == 0 || strcmp(type, "Restarting") == 0 ||
             strcmp(type, "Created") == 0) &&
            strcmp(str_or(json_object_get(c, "status"), ""), "True") == 0 &&
            (!latest || time_at(json_object_get(c, "lastTransitionTime")) >=
                            time_at(json_object_get(latest, "lastTransitionTime"))))
            latest = c;
    }
    if (!latest)
        return NULL;
    const char *type = json_string_value(json_object_get(latest, "type"));
    return strcmp(type, "Running") == 0 ? "Running" : strcmp(type, "Restarting") == 0 ? "Restarting"
                                                                                       : "Created";
}

const char *cli_job_status(const json_t *job, const json_t *pods, const json_t *pg)
{
    const char *s;
    const json_t *pod;
    size_t i;

    if (cli_is_trainjob(job))
        return cli_trainjob_status(job, pods);
    s = is_vcjob(job) ? vc_status(job) : kf_status(job);

    if (s && strcmp(s, "Created") != 0)
        return s;
    /* neither running nor finished: waiting, when something waits */
    if (pg && strcmp(str_or(at(pg, "status", "phase"), "Pending"), "Running") != 0)
        return "Pending";
    json_array_foreach(pods, i, pod)
        if (cli_job_owns(job, pod) &&
            strcmp(str_or(at(pod, "status", "phase"), "Pending"), "Pending") == 0)
            return "Pending";
    return is_vcjob(job) ? "Pending" : "Created";
}

void cli_job_times(const json_t *job, time_t *created, time_t *started, time_t *ended)
{
    const json_t *st = json_object_get(job, "status");
    const json_t *conds = json_object_get(st, "conditions");
    const json_t *c;

    *created = time_at(at(job, "metadata", "creationTimestamp"));
    *started = time_at(json_object_get(st, "startTime"));
    *ended = time_at(json_object_get(st, "completionTime"));
    if (is_vcjob(job)) {
        /* Volcano: a condition per phase it went through */
        const char *status = vc_status(job);
        size_t i;
        json_array_foreach(conds, i, c) {
            const char *ph = str_or(json_object_get(c, "status"), "");
            if (!*started && strcmp(ph, "Running") == 0)
                *started = time_at(json_object_get(c, "lastTransitionTime"));
        }
        if (!*ended && status && (strcmp(status, "Succeeded") == 0 || strcmp(status, "Failed") == 0))
            *ended = time_at(json_object_get(json_object_get(st, "state"), "lastTransitionTime"));
        return;
    }
    if (cli_is_trainjob(job)) {
        /* upstream keeps no start time: creation, or the last resume */
        if ((c = true_cond(conds, "Complete")) || (c = true_cond(conds, "Failed")))
            *ended = *ended ? *ended : time_at(json_object_get(c, "lastTransitionTime"));
        return;
    }
    if (!*started && (c = true_cond(conds, "Running")))
        *started = time_at(json_object_get(c, "lastTransitionTime"));
    if (!*ended) {
        if ((c = true_cond(conds, "Succeeded")) || (c = true_cond(conds, "Failed")))
            *ended = time_at(json_object_get(c, "lastTransitionTime"));
    }
}

int64_t cli_job_duration(const json_t *job, time_t now)
{
    time_t created, started, ended, from;

    cli_job_times(job, &created, &started, &ended);
    from = started ? started : created;
    if (!from)
        return 0;
    if (!ended || ended < from)
        ended = now;
    return ended > from ? (int64_t)(ended - from) : 0;
}

const char *cli_job_priority_class(const json_t *job)
{
    if (is_vcjob(job))
        return str_or(at(job, "spec", "priorityClassName"), "");
    return str_or(at(at(job, "spec", "runPolicy"), "schedulingPolicy", "priorityClass"), "");
}

const char *cli_job_queue(const json_t *job)
{
    if (cli_is_trainjob(job))
        return cli_trainjob_queue(job);
    const char *q = is_vcjob(job)
                        ? json_string_value(at(job, "spec", "queue"))
                        : json_string_value(
                              at(at(job, "spec", "runPolicy"), "schedulingPolicy", "queue"));
    return q && *q ? q : "default";
}

const char *cli_job_user(const json_t *job)
{
    return json_string_value(
        json_object_get(at(job, "metadata", "annotations"), "trainyard.io/created-by"));
}

void cli_job_summarise(const json_t *job, const json_t *pods, const json_t *pg, time_t now,
                       cli_job_summary *out)
{
    cli_job_replica reps[CLI_JOB_MAX_REPLICAS];
    size_t nrep, used = 0, i;
    const json_t *pod;
    const char *user = cli_job_user(job);

    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", cli_obj_name(job));
    snprintf(out->ns, sizeof(out->ns), "%s", cli_obj_ns(job));
    out->res = cli_job_resource_of(job);
    out->trainer = cli_job_trainer(out->res);
    out->status = cli_job_status(job, pods, pg);
    out->duration = cli_job_duration(job, now);
    nrep = cli_is_trainjob(job) ? cli_trainjob_replicas(job, pods, reps, CLI_JOB_MAX_REPLICAS)
                                : cli_job_replicas(job, reps, CLI_JOB_MAX_REPLICAS);
    for (i = 0; i < nrep && i < CLI_JOB_MAX_REPLICAS; i++)
        out->gpus_requested += reps[i].gpus * reps[i].replicas;
    json_array_foreach(pods, i, pod) {
        if (!cli_job_owns(job, pod))
            continue;
        out->npods++;
        if (strcmp(str_or(at(pod, "status", "phase"), ""), "Running") == 0)
            out->nrunning++;
        if (!cli_pod_active(pod))
            continue;
        out->gpus_allocated += cli_pod_gpus(pod);
        /* each node once, in the order first seen */
        const char *node = json_string_value(at(pod, "spec", "nodeName"));
        size_t nl = strlen(node);
        bool seen = false;
        for (const char *p = out->nodes; (p = strstr(p, node)) != NULL; p += nl)
            if ((p == out->nodes || p[-1] == ',') && (p[nl] == ',' || p[nl] == '\0'))
                seen = true;
        if (!seen && used + nl + 2 < sizeof(out->nodes))
            used += (size_t)snprintf(out->nodes + used, sizeof(out->nodes) - used, "%s%s",
                                     used ? "," : "", node);
    }
    if (!used)
        snprintf(out->nodes, sizeof(out->nodes), "N/A");
    snprintf(out->queue, sizeof(out->queue), "%s", cli_job_queue(job));
    snprintf(out->priority_class, sizeof(out->priority_class), "%s",
             cli_job_priority_class(job));
    snprintf(out->user, sizeof(out->user), "%s", user && *user ? user : "N/A");
    if (cli_is_trainjob(job))
        cli_trainjob_progress(job, out->progress, sizeof(out->progress));
}

void cli_duration_text(int64_t s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    if (s < 60)
        snprintf(buf, len, "%llds", (long long)s);
    else if (s < 3600)
        snprintf(buf, len, "%lldm", (long long)(s / 60));
    else if (s < 86400)
        snprintf(buf, len, "%lldh%lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
    else
        snprintf(buf, len, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
}
