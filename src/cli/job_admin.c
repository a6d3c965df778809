/* job_admin.c - what changes a training job of any kind: `trainyard delete
 * JOB`, `trainyard suspend JOB`, `trainyard resume JOB` (docs/cli/delete.md,
 * docs/cli/suspend.md).
 *
 * Suspending: the Kubeflow kinds (MSJob and MPIJob v2beta1 included) have
 * spec.runPolicy.suspend, which the job engine honours by deleting the
 * job's pods and setting the Suspended condition, and undoes on false
 * (controller/jobs/reconcile.c). A Volcano Job has no such field: vcctl's
 * suspend/resume are bus Commands (AbortJob / ResumeJob), which Trainyard
 * carries in the annotation trainyard.io/action (cmd_job.c,
 * docs/internals/volcano.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "cli/cli.h"
#include "cli/job_cmds.h"
#include "cli/jobs.h"

#define JOB_ACTION_ANNOTATION "trainyard.io/action"

void job_not_found_either(const char *what, const cli_ctx *ctx)
{
    fprintf(stderr,
            "error: the server doesn't have a resource type \"%s\", and there is no training job "
            "%s in namespace %s; `trainyard list -A` lists the training jobs\n",
            what, what, ctx->ns);
}

/* cli_job_find's error said: NotFound of a plain name as both readings. */
static void find_error(const ty_error *err, const char *what, const cli_ctx *ctx,
                       bool either)
{
    if (either && err->code == TY_ENOTFOUND && !strchr(what, '/'))
        job_not_found_either(what, ctx);
    else
        cli_print_error(err, err->code != TY_EUNAVAILABLE && err->code != TY_ENOTFOUND &&
                                 err->code != TY_EINVALID);
}

int job_delete(const cli_ctx *ctx, const char *what, const char *policy, bool ignore_missing)
{
    ty_client *cl = cli_connect(ctx);
    ty_error err;
    json_t *job, *opts, *v;
    const api_resource *res;
    char path[2048], kn[160];
    int rc = 1;

    if (!cl)
        return 1;
    ty_error_init(&err);
    if (!(job = cli_job_find(cl, ctx->ns, what, &err))) {
        if (err.code == TY_ENOTFOUND && ignore_missing)
            rc = 0;
        else
            find_error(&err, what, ctx, true);
        goto out;
    }
    res = cli_job_resource_of(job);
    client_resource_path(res, ctx->ns, cli_obj_name(job), path, sizeof(path));
    opts = json_pack("{s:s, s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1",
                     "propagationPolicy", policy);
    v = client_call_json(cl, "DELETE", path, NULL, opts, &err);
    json_decref(opts);
    if (!v) {
        if (err.code == TY_ENOTFOUND && ignore_missing)
            rc = 0;
        else
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    } else {
        cli_kind_name(res, kn, sizeof(kn));
        printf("%s \"%s\" deleted\n", kn, cli_obj_name(job));
        rc = 0;
    }
    json_decref(v);
    json_decref(job);
out:
    ty_error_clear(&err);
    client_free(cl);
    return rc;
}

/* The merge patch that suspends or resumes job; NULL after printing why not. */
static json_t *suspend_patch(const json_t *job, bool suspend)
{
    const api_resource *res = cli_job_resource_of(job);
    const char *status = cli_job_status(job, NULL, NULL);

    if (strcmp(status, "Succeeded") == 0 || strcmp(status, "Failed") == 0) {
        fprintf(stderr,
                "error: %s %s has %s: there is nothing to %s (`trainyard delete %s` removes it)\n",
                cli_job_trainer(res), cli_obj_name(job), status, suspend ? "suspend" : "resume",
                cli_obj_name(job));
        return NULL;
    }
    if (res == &api_vcjob)
        return json_pack("{s:{s:{s:s}}}", "metadata", "annotations", JOB_ACTION_ANNOTATION,
                         suspend ? "AbortJob" : "ResumeJob");
    if (res == &api_trainjob) /* a TrainJob's own field, as Kueue sets it */
        return json_pack("{s:{s:b}}", "spec", "suspend", suspend);
    return json_pack("{s:{s:{s:b}}}", "spec", "runPolicy", "suspend", suspend);
}

static int suspend_resume(int argc, char **argv, bool suspend)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *verb = suspend ? "suspend" : "resume";
    cli_ctx ctx = {0};
    cli_parser p;
    int c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        if (c == 'h' || c == '?') {
            fprintf(c == 'h' ? stdout : stderr,
                    "usage: trainyard %s JOB... [-n NS]\n"
                    "  JOB is a training job's NAME (any kind) or KIND/NAME\n",
                    verb);
            return c == 'h' ? 0 : 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "error: trainyard %s needs a JOB (`trainyard list` lists them)\n", verb);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    for (int i = optind; i < argc; i++) {
        ty_error err;
        json_t *job, *patch, *v;
        char path[2048], kn[160];

        ty_error_init(&err);
        if (!(job = cli_job_find(cl, ctx.ns, argv[i], &err))) {
            find_error(&err, argv[i], &ctx, false);
            ty_error_clear(&err);
            rc = 1;
            continue;
        }
        const api_resource *res = cli_job_resource_of(job);
        if (!(patch = suspend_patch(job, suspend))) {
            json_decref(job);
            rc = 1;
            continue;
        }
        client_resource_path(res, ctx.ns, cli_obj_name(job), path, sizeof(path));
        v = client_call_json(cl, "PATCH", path, "application/merge-patch+json", patch, &err);
        json_decref(patch);
        if (!v) {
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
            rc = 1;
        } else {
            cli_kind_name(res, kn, sizeof(kn));
            printf("%s/%s %s\n", kn, cli_obj_name(job), suspend ? "suspended" : "resumed");
        }
        json_decref(v);
        json_decref(job);
        ty_error_clear(&err);
    }
    client_free(cl);
    return rc;
}

int cmd_suspend(int argc, char **argv)
{
    return suspend_resume(argc, argv, true);
}

int cmd_resume(int argc, char **argv)
{
    return suspend_resume(argc, argv, false);
}
