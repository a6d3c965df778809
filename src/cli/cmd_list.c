/* cmd_list.c - `trainyard list`: the training jobs of every kind, one line
 * each, as Arena's `arena list` shows them (docs/cli/list.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "cli/cli.h"
#include "cli/jobs.h"
#include "cli/table.h"
#include "model/yaml.h"

static void list_usage(FILE *f)
{
    fprintf(f, "usage: trainyard list [-n NS | -A] [-o wide|json|yaml] [--no-headers]\n"
               "  every training job (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob,\n"
               "  MXJob, MSJob, Volcano Job, TrainJob) with its status, GPUs, nodes, queue and\n"
               "  user, and a PROGRESS column when a TrainJob reported its progress\n");
}

static json_t *summary_json(const cli_job_summary *s)
{
    char dur[32];
    json_t *j;

    cli_duration_text(s->duration, dur, sizeof(dur));
    j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:I}",
                     "name", s->name, "namespace", s->ns, "status", s->status, "trainer",
                     s->trainer, "duration", dur, "durationSeconds", (json_int_t)s->duration,
                     "gpuRequested", (json_int_t)s->gpus_requested, "gpuAllocated",
                     (json_int_t)s->gpus_allocated, "nodes", s->nodes, "queue", s->queue,
                     "priorityClass", s->priority_class, "user", s->user, "pods",
                     (json_int_t)s->npods, "runningPods", (json_int_t)s->nrunning);
    if (j && s->progress[0])
        json_object_set_new(j, "progress", json_string(s->progress));
    return j;
}

static void add_row(cli_table *t, const cli_job_summary *s, bool with_ns, bool wide,
                    bool progress)
{
    char dur[32];

    cli_duration_text(s->duration, dur, sizeof(dur));
    if (with_ns)
        cli_table_cellf(t, "%s", s->ns);
    cli_table_cellf(t, "%s", s->name);
    cli_table_cellf(t, "%s", s->status);
    cli_table_cellf(t, "%s", s->trainer);
    cli_table_cellf(t, "%s", dur);
    cli_table_cellf(t, "%lld", (long long)s->gpus_requested);
    cli_table_cellf(t, "%lld", (long long)s->gpus_allocated);
    cli_table_cellf(t, "%s", s->nodes);
    cli_table_cellf(t, "%s", s->queue);
    cli_table_cellf(t, "%s", s->user);
    if (progress)
        cli_table_cellf(t, "%s", s->progress[0] ? s->progress : "-");
    if (wide) {
        cli_table_cellf(t, "%s", *s->priority_class ? s->priority_class : "<none>");
        cli_table_cellf(t, "%zu/%zu", s->nrunning, s->npods);
    }
}

/* Whether a TrainJob among jobs has reported its progress. */
static bool any_progress(const json_t *jobs)
{
    const json_t *job;
    size_t i;

    json_array_foreach(jobs, i, job)
        if (cli_is_trainjob(job) &&
            json_is_object(json_object_get(json_object_get(job, "status"), "trainerStatus")))
            return true;
    return false;
}

/* Prints the jobs (every one summarised against pods and pgs). */
static void print_jobs(const cli_ctx *ctx, const json_t *jobs, const json_t *pods,
                       const json_t *pgs, bool headers)
{
    static const char *const cols[] = {"NAMESPACE",      "NAME",  "STATUS", "TRAINER",
                                       "DURATION",       "GPU(Requested)",  "GPU(Allocated)",
                                       "NODE",           "QUEUE", "USER",   "PROGRESS",
                                       "PRIORITY",       "PODS"};
    bool wide = strcmp(ctx->output, "wide") == 0, structured = *ctx->output && !wide;
    bool with_ns = ctx->all_namespaces, progress = any_progress(jobs);
    size_t first = with_ns ? 0 : 1, i, ncols = 0;
    const char *head[13];
    cli_table *t;
    json_t *out = json_array(), *job;
    json_t *pod_ix = cli_owned_index(pods), *pg_ix = cli_owned_index(pgs);
    time_t now = time(NULL);

    /* PROGRESS only when some TrainJob reported one: the other kinds have
     * none, and scripts that read the columns by place keep them */
    for (i = first; i < 13; i++)
        if ((i != 10 || progress) && (i < 11 || wide))
            head[ncols++] = cols[i];
    t = structured ? NULL : cli_table_new(ncols);
    if (t && headers)
        cli_table_row(t, head);
    json_array_foreach(jobs, i, job) {
        cli_job_summary s;
        json_t *own_pods = cli_owned_by(pod_ix, job), *own_pgs = cli_owned_by(pg_ix, job);
        cli_job_summarise(job, own_pods, json_array_get(own_pgs, 0), now, &s);
        if (t)
            add_row(t, &s, with_ns, wide, progress);
        else
            json_array_append_new(out, summary_json(&s));
        json_decref(own_pods);
        json_decref(own_pgs);
    }
    json_decref(pod_ix);
    json_decref(pg_ix);
    if (t) {
        cli_table_print(t, stdout, "");
        cli_table_free(t);
    } else if (strcmp(ctx->output, "json") == 0) {
        char *txt = json_dumps(out, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
        printf("%s\n", txt ? txt : "[]");
        free(txt);
    } else {
        char *txt = yaml_dump(out);
        fputs(txt ? txt : "[]\n", stdout);
        free(txt);
    }
    json_decref(out);
}

int cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {{"no-headers", no_argument, NULL, 'H'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    bool headers = true;
    int c, rc = 1;
    json_t *jobs = NULL, *pods = NULL, *pgs = NULL;
    ty_error err;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT | CLI_F_ALL | CLI_F_OUTPUT, "h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'H': headers = false; break;
        case 'h': list_usage(stdout); return 0;
        default: list_usage(stderr); return 2;
        }
    }
    if (cli_check_output(&ctx, "json,wide,yaml") < 0)
        return 2;
    if (optind != argc) {
        fprintf(stderr, "error: trainyard list takes no arguments (to see one job: trainyard get %s)\n",
                argv[optind]);
        list_usage(stderr);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    ty_error_init(&err);
    const char *ns = ctx.all_namespaces ? NULL : ctx.ns;
    if (!(jobs = cli_jobs_list(cl, ns, &err)))
        goto out;
    if (json_array_size(jobs) == 0) {
        if (*ctx.output && strcmp(ctx.output, "wide") != 0) {
            print_jobs(&ctx, jobs, NULL, NULL, headers);
        } else if (ns) {
            fprintf(stderr, "No training jobs found in %s namespace.\n", ns);
        } else {
            fprintf(stderr, "No training jobs found.\n");
        }
        rc = 0;
        goto out;
    }
    if (!(pods = cli_pods_list(cl, ns, NULL, &err)))
        goto out;
    /* PodGroups say whether a job that has not started waits (Pending) */
    char path[1024];
    client_resource_path(&api_podgroup, ns, NULL, path, sizeof(path));
    /* (not served, or not readable: no job is then called Pending for its
     * PodGroup alone) */
    json_t *pgl = client_call_json(cl, "GET", path, NULL, NULL, &err);
    ty_error_clear(&err);
    pgs = pgl ? json_incref(json_object_get(pgl, "items")) : NULL;
    json_decref(pgl);
    print_jobs(&ctx, jobs, pods, pgs, headers);
    rc = 0;
out:
    if (rc)
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    ty_error_clear(&err);
    json_decref(jobs);
    json_decref(pods);
    json_decref(pgs);
    client_free(cl);
    return rc;
}
