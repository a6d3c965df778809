/* cmd_logs.c - `trainyard logs POD|JOB` and `trainyard logs --deleted`.
 *
 * A name that is no pod's is a training job's (Kubeflow's job-name label,
 * Volcano's): the log is its default replica's (cli_default_replica: TF's
 * chief, else master, else the MPI launcher, else worker 0; a Volcano Job's
 * first task's pod 0; a TrainJob's launcher, else node 0), or the one -i
 * names. A deleted job's pods are gone,
 * but the server keeps their logs for --pod-log-retention and lists them
 * (GET pods/-/log, with each pod's labels): the job's replica is found
 * among those. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "cli/cli.h"
#include "cli/cli_top.h"
#include "cli/jobs.h"

#define OPT_SINCE 1001
#define OPT_DELETED 1002

static void logs_usage(FILE *f)
{
    fprintf(f, "usage: trainyard logs POD|JOB [-c CONTAINER] [-i|--instance POD] [-f]\n"
               "                      [--tail N] [--since DURATION] [--timestamps]\n"
               "                      [-p|--previous] [--since-seconds N] [-n NS]\n"
               "       trainyard logs --deleted [-n NS]\n");
}

/* The label naming a pod's job, by kind: Kubeflow v1, Volcano, TrainJob. */
static const char *const job_labels[] = {"training.kubeflow.org/job-name", "volcano.sh/job-name",
                                         "trainer.kubeflow.org/trainjob-name"};
#define N_JOB_LABELS (sizeof(job_labels) / sizeof(job_labels[0]))

static json_t *get_quiet(ty_client *cl, const char *path, ty_error *err)
{
    return client_call_json(cl, "GET", path, NULL, NULL, err);
}

/* The retained logs of ns's deleted pods (new reference), or NULL after
 * printing why. */
static json_t *retained(ty_client *cl, const char *ns)
{
    char path[600];
    ty_error err;
    json_t *v;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/-/log", ns);
    ty_error_init(&err);
    if (!(v = get_quiet(cl, path, &err)))
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    ty_error_clear(&err);
    return v;
}

static const char *entry_label(const json_t *e, const char *key)
{
    return json_string_value(json_object_get(json_object_get(e, "labels"), key));
}

static const char *entry_job(const json_t *e)
{
    for (size_t i = 0; i < N_JOB_LABELS; i++)
        if (entry_label(e, job_labels[i]))
            return entry_label(e, job_labels[i]);
    return NULL;
}

/* "<type>-<index>": a Kubeflow replica, a TrainJob's replicated job and
 * job index; "-" for others. */
static void entry_replica(const json_t *e, char *buf, size_t len)
{
    const char *type = entry_label(e, "training.kubeflow.org/replica-type");
    const char *idx = entry_label(e, "training.kubeflow.org/replica-index");

    if (!type) {
        type = entry_label(e, "jobset.sigs.k8s.io/replicatedjob-name");
        idx = entry_label(e, "jobset.sigs.k8s.io/job-index");
    }
    if (type)
        snprintf(buf, len, "%s-%s", type, idx ? idx : "0");
    else
        snprintf(buf, len, "-");
}

static int list_deleted(ty_client *cl, const char *ns)
{
    json_t *l = retained(cl, ns), *e;
    const json_t *items = json_object_get(l, "items");
    size_t i;
    int w = 3, wj = 3;

    if (!l)
        return 1;
    if (json_array_size(items) == 0) {
        fprintf(stderr, "No retained logs of deleted pods in %s namespace.\n", ns);
        json_decref(l);
        return 0;
    }
    json_array_foreach(items, i, e) {
        const char *pod = json_string_value(json_object_get(e, "pod"));
        const char *job = entry_job(e);
        if (pod && (int)strlen(pod) > w)
            w = (int)strlen(pod);
        if (job && (int)strlen(job) > wj)
            wj = (int)strlen(job);
    }
    printf("%-*s   %-*s   %-10s   %-20s   %s\n", w, "POD", wj, "JOB", "REPLICA", "DELETED",
           "CONTAINERS");
    json_array_foreach(items, i, e) {
        const char *job = entry_job(e);
        char replica[128], containers[512] = "";
        size_t k, o = 0;
        json_t *c;

        entry_replica(e, replica, sizeof(replica));
        json_array_foreach(json_object_get(e, "containers"), k, c)
            if (o < sizeof(containers))
                o += (size_t)snprintf(containers + o, sizeof(containers) - o, "%s%s",
                                      k ? "," : "", json_string_value(c) ?: "");
        printf("%-*s   %-*s   %-10s   %-20s   %s\n", w,
               json_string_value(json_object_get(e, "pod")) ?: "", wj, job ? job : "-", replica,
               json_string_value(json_object_get(e, "goneTime")) ?: "", containers);
    }
    json_decref(l);
    return 0;
}

/* The retained logs' entries of the deleted job in ns, turned into
 * {metadata: {name, labels}} for cli_default_replica (new reference). */
static json_t *deleted_replicas(ty_client *cl, const char *ns, const char *job)
{
    json_t *out = json_array(), *l, *e;
    char path[600];
    size_t i;
    ty_error err;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/-/log", ns);
    ty_error_init(&err);
    l = get_quiet(cl, path, &err);
    ty_error_clear(&err);
    json_array_foreach(json_object_get(l, "items"), i, e) {
        const char *j = entry_job(e);
        if (j && strcmp(j, job) == 0)
            json_array_append_new(
                out, json_pack("{s:{s:O, s:O, s:O}}", "metadata", "name",
                               json_object_get(e, "pod"), "labels", json_object_get(e, "labels"),
                               "annotations", json_object_get(e, "labels")));
    }
    json_decref(l);
    return out;
}

/* The job's replicas (new reference): its pods when the job exists (jobs.c:
 * NAME across kinds, or KIND/NAME), else the retained logs of its deleted
 * pods (*deleted set). *first_task: a Volcano Job's first task (caller
 * frees; NULL for others). NULL after printing why (a name two kinds hold,
 * a failed request). */
static json_t *job_replicas(ty_client *cl, const char *ns, const char *name, bool *deleted,
                            bool *is_job, char **first_task)
{
    ty_error err;
    json_t *job, *pods;
    const char *task;

    *deleted = *is_job = false;
    *first_task = NULL;
    ty_error_init(&err);
    if (!(job = cli_job_find(cl, ns, name, &err))) {
        if (err.code == TY_ENOTFOUND) {
            const char *slash = strchr(name, '/');
            ty_error_clear(&err);
            pods = deleted_replicas(cl, ns, slash ? slash + 1 : name);
            *deleted = json_array_size(pods) > 0;
            return pods;
        }
        cli_print_error(&err, err.code != TY_EUNAVAILABLE && err.code != TY_EINVALID);
        ty_error_clear(&err);
        return NULL;
    }
    *is_job = true;
    task = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(job, "spec"), "tasks"), 0), "name"));
    if (task && strcmp(json_string_value(json_object_get(job, "kind")) ?: "", "Job") == 0)
        *first_task = strdup(task);
    if (!(pods = cli_job_pods(cl, job, &err))) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
    }
    json_decref(job);
    return pods;
}

static bool pod_exists(ty_client *cl, const char *ns, const char *name, ty_error *err)
{
    char path[1024];
    json_t *v;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
    v = get_quiet(cl, path, err);
    json_decref(v);
    return v != NULL;
}

/* Picks the pod to read for name: itself when it is a pod, else the job's
 * replica (instance, or the default) into pod. -1 after printing why. */
static int resolve_pod(ty_client *cl, const char *ns, const char *name, const char *instance,
                       char *pod, size_t len)
{
    ty_error err;
    json_t *pods;
    bool deleted, is_job;
    char *task = NULL;
    long pick = -1;
    size_t i;
    json_t *p;

    ty_error_init(&err);
    if (!instance && !strchr(name, '/') && pod_exists(cl, ns, name, &err)) {
        snprintf(pod, len, "%s", name);
        ty_error_clear(&err);
        return 0;
    }
    if (!instance && !strchr(name, '/') && err.code != TY_ENOTFOUND) {
        /* not allowed to read the pod (only its log, say), unreachable:
         * the log request answers as `kubectl logs` would */
        snprintf(pod, len, "%s", name);
        ty_error_clear(&err);
        return 0;
    }
    ty_error_clear(&err);
    if (!(pods = job_replicas(cl, ns, name, &deleted, &is_job, &task)))
        return -1;
    if (instance) {
        json_array_foreach(pods, i, p) {
            const char *n =
                json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
            if (n && strcmp(n, instance) == 0)
                pick = (long)i;
        }
    } else if (json_array_size(pods)) {
        pick = cli_default_replica(pods, task);
    }
    free(task);
    if (pick < 0 && !instance && !is_job && !strchr(name, '/')) {
        /* no job either: the pod's log as the server has it (a deleted
         * pod's retained one, or its kubectl answer: not found) */
        snprintf(pod, len, "%s", name);
        json_decref(pods);
        return 0;
    }
    if (pick < 0) {
        if (instance && json_array_size(pods))
            ty_seterr(&err, TY_ENOTFOUND, "pod \"%s\" is not a replica of job \"%s\"", instance,
                      name);
        else if (is_job)
            ty_seterr(&err, TY_ENOTFOUND, "job \"%s\" has no pods (yet): `trainyard get %s` "
                      "says why", name, name);
        else
            ty_seterr(&err, TY_ENOTFOUND, "no pods of a training job \"%s\"", name);
        cli_print_error(&err, true);
        ty_error_clear(&err);
        json_decref(pods);
        return -1;
    }
    snprintf(pod, len, "%s",
             json_string_value(json_object_get(
                 json_object_get(json_array_get(pods, (size_t)pick), "metadata"), "name")));
    if (deleted)
        fprintf(stderr, "(job %s was deleted: the log of its pod %s, kept by the server)\n",
                name, pod);
    json_decref(pods);
    return 0;
}

static int stream_log(ty_client *cl, const char *path)
{
    /* Stream straight to stdout; an error answer is a Status, shown kubectl-style. */
    long status = 0;
    ty_buf errbody = {0};
    ty_error err;
    ty_error_init(&err);
    int rc = client_stream(cl, path, stdout, &status, &errbody, &err);
    if (rc < 0) {
        cli_print_error(&err, false);
    } else if (status != 200) {
        json_t *st = json_loadb(errbody.data ? errbody.data : "", errbody.len, 0, NULL);
        ty_seterr(&err, client_errcode(status), "%s",
                  json_string_value(json_object_get(st, "message")) ?: "unexpected answer");
        cli_print_error(&err, true);
        json_decref(st);
        rc = -1;
    }
    ty_buf_free(&errbody);
    ty_error_clear(&err);
    return rc;
}

int cmd_logs(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"container", required_argument, NULL, 'c'}, {"follow", no_argument, NULL, 'f'},
        {"tail", required_argument, NULL, 't'},      {"timestamps", no_argument, NULL, 'T'},
        {"previous", no_argument, NULL, 'p'},        {"since-seconds", required_argument, NULL, 'S'},
        {"since", required_argument, NULL, OPT_SINCE}, {"instance", required_argument, NULL, 'i'},
        {"deleted", no_argument, NULL, OPT_DELETED}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    char query[1024] = "", pod[256];
    const char *instance = NULL;
    bool deleted = false;
    int c, rc;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "c:fphi:", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        size_t q = strlen(query);
        switch (c) {
        case 'c': snprintf(query + q, sizeof(query) - q, "&container=%s", optarg); break;
        case 'f': snprintf(query + q, sizeof(query) - q, "&follow=true"); break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end) {
                fprintf(stderr, "error: invalid --tail %s: want a number\n", optarg);
                return 2;
            }
            if (v >= 0)
                snprintf(query + q, sizeof(query) - q, "&tailLines=%ld", v);
            break;
        }
        case 'T': snprintf(query + q, sizeof(query) - q, "&timestamps=true"); break;
        case 'p': snprintf(query + q, sizeof(query) - q, "&previous=true"); break;
        case 'S': snprintf(query + q, sizeof(query) - q, "&sinceSeconds=%ld", strtol(optarg, NULL, 10)); break;
        case OPT_SINCE: {
            long secs;
            if (cli_duration_seconds(optarg, &secs) < 0 || secs <= 0) {
                fprintf(stderr, "error: invalid argument \"%s\" for \"--since\" flag: want a "
                                "duration such as 5s, 2m or 1h\n", optarg);
                return 2;
            }
            snprintf(query + q, sizeof(query) - q, "&sinceSeconds=%ld", secs);
            break;
        }
        case 'i': instance = optarg; break;
        case OPT_DELETED: deleted = true; break;
        case 'h': logs_usage(stdout); return 0;
        default: logs_usage(stderr); return 2;
        }
    }
    if (argc - optind != (deleted ? 0 : 1)) {
        logs_usage(stderr);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if (deleted) {
        rc = list_deleted(cl, ctx.ns);
        client_free(cl);
        return rc;
    }
    if (resolve_pod(cl, ctx.ns, argv[optind], instance, pod, sizeof(pod)) < 0) {
        client_free(cl);
        return 1;
    }
    char path[2048];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/log%s%s", ctx.ns, pod,
             *query ? "?" : "", *query ? query + 1 : "");
    rc = stream_log(cl, path);
    client_free(cl);
    return rc < 0 ? 1 : 0;
}
