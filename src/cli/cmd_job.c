/* cmd_job.c - `trainyard job suspend|resume NAME`: vcctl's job commands for
 * Volcano Jobs (batch.volcano.sh/v1alpha1).
 *
 * vcctl creates a bus.volcano.sh Command object naming the action; Trainyard
 * has no Command kind, so the action goes into the job's annotation
 * `trainyard.io/action`, which the Job controller applies in its next pass
 * and removes (docs/internals/volcano.md). One merge patch, so a job that does
 * not exist is a plain NotFound from the server. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "cli/cli.h"

#define JOB_ACTION_ANNOTATION "trainyard.io/action"

static const struct {
    const char *verb;
    const char *action; /* the Volcano action the controller applies */
    const char *done;   /* printed on success */
} job_verbs[] = {
    {"resume", "ResumeJob", "resumed"},
    {"suspend", "AbortJob", "suspended"},
};

static void job_usage(FILE *f)
{
    fprintf(f, "usage: trainyard job suspend NAME [-n NS]   abort the job's pods (AbortJob)\n"
               "       trainyard job resume NAME [-n NS]    restart an aborted job (ResumeJob)\n"
               "NAME may also be given as -N NAME (vcctl's form).\n");
}

static int issue(ty_client *cl, const char *ns, const char *name, const char *action,
                 const char *done)
{
    char path[2048], kn[160];
    json_t *patch, *v;
    ty_error err;

    ty_error_init(&err);
    client_resource_path(&api_vcjob, ns, name, path, sizeof(path));
    patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", JOB_ACTION_ANNOTATION, action);
    v = client_call_json(cl, "PATCH", path, "application/merge-patch+json", patch, &err);
    json_decref(patch);
    if (!v) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return 1;
    }
    json_decref(v);
    cli_kind_name(&api_vcjob, kn, sizeof(kn));
    printf("%s/%s %s\n", kn, name, done);
    return 0;
}

int cmd_job(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"name", required_argument, NULL, 'N'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    const char *name = NULL, *verb;
    size_t v;
    int c, rc;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        job_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    verb = argv[1];
    for (v = 0; v < sizeof(job_verbs) / sizeof(job_verbs[0]); v++)
        if (!strcmp(verb, job_verbs[v].verb))
            break;
    if (v == sizeof(job_verbs) / sizeof(job_verbs[0])) {
        fprintf(stderr, "error: unknown job command \"%s\": want suspend or resume\n", verb);
        job_usage(stderr);
        return 2;
    }
    argc--, argv++;
    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "N:h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'N': name = optarg; break;
        case 'h': job_usage(stdout); return 0;
        default: job_usage(stderr); return 2;
        }
    }
    if (!name && argc - optind == 1)
        name = argv[optind++];
    if (!name || !*name || optind != argc) {
        fprintf(stderr, "error: trainyard job %s needs exactly one job NAME\n", verb);
        job_usage(stderr);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    rc = issue(cl, ctx.ns, name, job_verbs[v].action, job_verbs[v].done);
    client_free(cl);
    return rc;
}
