/* cmd_submit.c - `trainyard submit KIND [flags] COMMAND`: a training job
 * without YAML, with Kubeflow Arena's flags and meanings (`arena submit
 * pytorch --name x --workers 3 --gpus 1 "python train.py"`).
 *
 * The flags become a submit_opts, submit_build.c turns them into the
 * manifest of the kind's upstream API, and that is created with one POST
 * (or printed, with --dry-run). The command is Arena's one string, run by
 * `sh -c`, or the words after `--`, run as they are. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/submit_build.h"
#include "model/yaml.h"

static void submit_usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard submit KIND --name NAME [flags] \"COMMAND\"\n"
            "       trainyard submit KIND --name NAME [flags] -- COMMAND [ARG...]\n"
            "\n"
            "KIND: %s\n"
            "\n"
            "  --name NAME            the job's name (required)\n"
            "  --workers N            replicas doing the work (default 1); pytorch and\n"
            "                         xgboost count the rank-0 Master: 3 = Master + 2 Workers\n"
            "  --gpus N               nvidia.com/gpu per replica\n"
            "  --cpu Q, --memory Q    per replica (requests = limits): --cpu 2 --memory 4Gi\n"
            "  --image IMAGE          the container image (default: the kind's)\n"
            "  -e, --env K=V          an environment variable (repeatable)\n"
            "  --working-dir DIR      the directory the command starts in\n"
            "  -d, --data SRC:PATH    mount a claim (NAME:PATH) or host directory (/DIR:PATH)\n"
            "  --data-dir DIR[:PATH]  mount a host directory\n"
            "  -l, --label K=V        a label on the job and its pods (repeatable)\n"
            "  -a, --annotation K=V   an annotation on the job and its pods (repeatable)\n"
            "  --queue QUEUE          the Volcano queue the job goes to\n"
            "  -p, --priority CLASS   the PriorityClass of its pods\n"
            "  --retry N              restarts allowed (backoffLimit; Volcano's maxRetry)\n"
            "  --ttl-after-finished D delete the job D after it ends (1h, 90s, 600)\n"
            "  --running-timeout D    fail the job after running D (activeDeadlineSeconds)\n"
            "  --clean-task-policy P  None, Running or All (cleanPodPolicy)\n"
            "  pytorch: --nproc-per-node N|auto|cpu|gpu\n"
            "  tf:      --ps N, --chief, --evaluator\n"
            "  mx, ms, volcano: --ps N (MXNet servers, MindSpore PS, a Volcano ps task)\n"
            "  mpi:     --slots N (slotsPerWorker; default --gpus, else 1),\n"
            "           --launcher-cpu Q, --launcher-memory Q\n"
            "  --dry-run[=client|server]  print the manifest (-o yaml|json), create nothing\n"
            "  -o yaml|json|name      print the created object instead of the summary\n"
            "  -n NAMESPACE, --server URL, --kubeconfig FILE, --context NAME\n",
            submit_kinds());
}

enum {
    OPT_NAME = 1000,
    OPT_WORKERS,
    OPT_GPUS,
    OPT_CPU,
    OPT_MEMORY,
    OPT_IMAGE,
    OPT_WORKDIR,
    OPT_DATA_DIR,
    OPT_QUEUE,
    OPT_RETRY,
    OPT_TTL,
    OPT_TIMEOUT,
    OPT_CLEAN,
    OPT_NPROC,
    OPT_PS,
    OPT_CHIEF,
    OPT_EVALUATOR,
    OPT_SLOTS,
    OPT_LCPU,
    OPT_LMEM,
    OPT_DRY_RUN,
};

/* Arena's names for the kinds, and the kinds' own plurals' stems. */
static const char *kind_alias(const char *k)
{
    static const char *const aliases[][2] = {
        {"pytorchjob", "pytorch"}, {"tfjob", "tf"},         {"tensorflow", "tf"},
        {"mpijob", "mpi"},         {"xgboostjob", "xgboost"}, {"paddlejob", "paddle"},
        {"jaxjob", "jax"},         {"mxjob", "mx"},         {"mxnet", "mx"},
        {"msjob", "ms"},           {"mindspore", "ms"},     {"volcanojob", "volcano"},
        {"vcjob", "volcano"},      {"vj", "volcano"},
    };
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(k, aliases[i][0]) == 0)
            return aliases[i][1];
    return k;
}

/* A count flag's value in [min, max]; -1 after printing the usage error. */
static int parse_count(const char *v, const char *flag, int min, int max, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);

    if (!*v || *end || n < min || n > max) {
        fprintf(stderr, "error: %s \"%s\": expected a whole number from %d to %d\n", flag, v,
                min, max);
        return -1;
    }
    *out = (int)n;
    return 0;
}

static int parse_seconds(const char *v, const char *flag, int64_t *out)
{
    if (submit_parse_seconds(v, out) < 0) {
        fprintf(stderr, "error: %s \"%s\": expected a duration like 90s, 30m, 1h30m or a "
                        "number of seconds\n",
                flag, v);
        return -1;
    }
    return 0;
}

static int push(const char **list, size_t *n, const char *v, const char *flag)
{
    if (*n >= SUBMIT_MAX_LIST) {
        fprintf(stderr, "error: at most %d %s flags\n", SUBMIT_MAX_LIST, flag);
        return -1;
    }
    list[(*n)++] = v;
    return 0;
}

/* One of the command's own flags into o; 0, 1 for --help, -1 after a
 * usage error was printed. */
static int take_flag(int c, submit_opts *o, const char **dry_run)
{
    switch (c) {
    case OPT_NAME: o->name = optarg; return 0;
    case OPT_WORKERS: return parse_count(optarg, "--workers", 0, 100000, &o->workers);
    case OPT_GPUS: return parse_count(optarg, "--gpus", 0, 100000, &o->gpus);
    case OPT_PS: return parse_count(optarg, "--ps", 0, 100000, &o->ps);
    case OPT_SLOTS: return parse_count(optarg, "--slots", 1, 100000, &o->slots);
    case OPT_RETRY: return parse_count(optarg, "--retry", 0, 1000000, &o->retry);
    case OPT_TTL: return parse_seconds(optarg, "--ttl-after-finished", &o->ttl);
    case OPT_TIMEOUT: return parse_seconds(optarg, "--running-timeout", &o->running_timeout);
    case OPT_CPU: o->cpu = optarg; return 0;
    case OPT_MEMORY: o->memory = optarg; return 0;
    case OPT_LCPU: o->launcher_cpu = optarg; return 0;
    case OPT_LMEM: o->launcher_memory = optarg; return 0;
    case OPT_IMAGE: o->image = optarg; return 0;
    case OPT_WORKDIR: o->working_dir = optarg; return 0;
    case OPT_QUEUE: o->queue = optarg; return 0;
    case 'p': o->priority = optarg; return 0;
    case OPT_CLEAN: o->clean_policy = optarg; return 0;
    case OPT_NPROC: o->nproc_per_node = optarg; return 0;
    case OPT_CHIEF: o->chief = true; return 0;
    case OPT_EVALUATOR: o->evaluator = true; return 0;
    case 'e': return push(o->env, &o->nenv, optarg, "--env");
    case 'l': return push(o->labels, &o->nlabels, optarg, "--label");
    case 'a': return push(o->annotations, &o->nannotations, optarg, "--annotation");
    case 'd': return push(o->data, &o->ndata, optarg, "--data");
    case OPT_DATA_DIR: return push(o->data_dir, &o->ndata_dir, optarg, "--data-dir");
    case OPT_DRY_RUN: *dry_run = optarg ? optarg : "client"; return 0;
    case 'h': return 1;
    default: return -1;
    }
}

static void print_object(const json_t *v, const char *out)
{
    char *s;

    if (strcmp(out, "json") == 0) {
        s = json_dumps(v, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
        printf("%s\n", s ? s : "");
    } else {
        s = yaml_dump(v);
        fputs(s ? s : "", stdout);
    }
    free(s);
}

/* Arena looks up the PriorityClass before it submits: a job naming one that
 * does not exist would be made and its pods never run as meant. The queue
 * likewise (a Kubeflow job in a missing queue waits for ever). Only a
 * NotFound stops the submit: a user who may not read the cluster-scoped
 * kinds (a tenant) is not held back. -1 after printing why. */
static int check_exists(ty_client *cl, const char *what, const char *name, const char *list)
{
    const api_resource *res = client_resolve(what);
    char path[1024];
    ty_error err;
    json_t *got;

    if (!name || !res)
        return 0;
    ty_error_init(&err);
    client_resource_path(res, NULL, name, path, sizeof(path));
    got = client_call_json(cl, "GET", path, NULL, NULL, &err);
    json_decref(got);
    if (!got && err.code == TY_ENOTFOUND) {
        fprintf(stderr, "error: %s \"%s\" not found: see `kubectl get %s`\n", res->singular,
                name, list);
        ty_error_clear(&err);
        return -1;
    }
    ty_error_clear(&err);
    return 0;
}

/* POSTs the manifest (dry: ?dryRun=All, the server's checks and defaults
 * without storing). 0 after printing what came of it, 1 on an error. */
static int create(const cli_ctx *ctx, const submit_opts *o, json_t *obj, bool dry)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    const api_resource *res = api_find_kind(av, kind);
    char path[2048], kn[160], what[256];
    ty_error err;
    json_t *got;
    ty_client *cl;

    if (!res) {
        fprintf(stderr, "error: resource mapping not found for kind \"%s\" in version \"%s\"\n",
                kind, av);
        return 1;
    }
    if (!(cl = cli_connect(ctx)))
        return 1;
    if (check_exists(cl, "priorityclasses.scheduling.k8s.io", o->priority, "priorityclasses") < 0 ||
        check_exists(cl, "queues.scheduling.volcano.sh", o->queue, "queues") < 0) {
        client_free(cl);
        return 1;
    }
    ty_error_init(&err);
    client_resource_path(res, ctx->ns, NULL, path, sizeof(path));
    strncat(path, dry ? "?fieldValidation=Strict&dryRun=All" : "?fieldValidation=Strict",
            sizeof(path) - strlen(path) - 1);
    got = client_call_json(cl, "POST", path, "application/json", obj, &err);
    client_free(cl);
    if (!got) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return 1;
    }
    ty_error_clear(&err);
    if (dry || *ctx->output) {
        if (*ctx->output && strcmp(ctx->output, "name") == 0) {
            cli_kind_name(res, kn, sizeof(kn));
            printf("%s/%s\n", kn, name);
        } else {
            print_object(got, *ctx->output ? ctx->output : "yaml");
        }
        json_decref(got);
        return 0;
    }
    json_decref(got);
    cli_kind_name(res, kn, sizeof(kn));
    submit_describe(obj, what, sizeof(what));
    printf("%s/%s created (%s in namespace %s)\n", kn, name, what, ctx->ns);
    char get[512], logs[512];
    const bool other_ns = strcmp(ctx->ns, "default") != 0;
    snprintf(get, sizeof(get), "trainyard get %s%s%s", name, other_ns ? " -n " : "",
             other_ns ? ctx->ns : "");
    snprintf(logs, sizeof(logs), "trainyard logs %s%s%s", name, other_ns ? " -n " : "",
             other_ns ? ctx->ns : "");
    int w = (int)strlen(logs) + 2;
    printf("\nFollow it with:\n  %-*s# its status and pods\n  %-*s# the first replica's output\n",
           w, get, w, logs);
    return 0;
}

static const struct option submit_longopts[] = {
    {"name", required_argument, NULL, OPT_NAME},
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"image", required_argument, NULL, OPT_IMAGE},
    {"env", required_argument, NULL, 'e'},
    {"working-dir", required_argument, NULL, OPT_WORKDIR},
    {"data", required_argument, NULL, 'd'},
    {"data-dir", required_argument, NULL, OPT_DATA_DIR},
    {"label", required_argument, NULL, 'l'},
    {"annotation", required_argument, NULL, 'a'},
    {"queue", required_argument, NULL, OPT_QUEUE},
    {"priority", required_argument, NULL, 'p'},
    {"retry", required_argument, NULL, OPT_RETRY},
    {"ttl-after-finished", required_argument, NULL, OPT_TTL},
    {"running-timeout", required_argument, NULL, OPT_TIMEOUT},
    {"clean-task-policy", required_argument, NULL, OPT_CLEAN},
    {"nproc-per-node", required_argument, NULL, OPT_NPROC},
    {"ps", required_argument, NULL, OPT_PS},
    {"chief", no_argument, NULL, OPT_CHIEF},
    {"evaluator", no_argument, NULL, OPT_EVALUATOR},
    {"slots", required_argument, NULL, OPT_SLOTS},
    {"launcher-cpu", required_argument, NULL, OPT_LCPU},
    {"launcher-memory", required_argument, NULL, OPT_LMEM},
    {"dry-run", optional_argument, NULL, OPT_DRY_RUN},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* The flags into *ctx and *o; -1 to go on, else the exit status (0 after
 * --help, 2 after a usage error was printed). */
static int parse_args(int argc, char **argv, cli_ctx *ctx, submit_opts *o,
                      const char **dry_run)
{
    cli_parser p;
    int head = argc, c, rc;

    /* The words after the first -- are the command's argv; the flags, the
     * kind and Arena's one-string command come before it. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            head = i;
            o->argv = argv + i + 1;
            o->argc = (size_t)(argc - i - 1);
            break;
        }
    cli_parser_init(&p, ctx, CLI_F_CONNECT | CLI_F_OUTPUT, "e:d:l:a:p:h", submit_longopts);
    while ((c = cli_getopt(&p, head, argv)) != -1) {
        rc = take_flag(c, o, dry_run);
        if (rc == 1) {
            submit_usage(stdout);
            return 0;
        }
        if (rc < 0) {
            if (c == '?')
                submit_usage(stderr);
            return 2;
        }
    }
    if (cli_check_output(ctx, "json,name,yaml") < 0)
        return 2;
    if (*dry_run && strcmp(*dry_run, "client") != 0 && strcmp(*dry_run, "server") != 0 &&
        strcmp(*dry_run, "none") != 0) {
        fprintf(stderr, "error: Invalid dry-run value (%s). Must be \"none\", \"server\", or "
                        "\"client\".\n",
                *dry_run);
        return 2;
    }
    if (*dry_run && strcmp(*dry_run, "none") == 0)
        *dry_run = NULL;
    /* what is left: KIND ["COMMAND"] */
    if (optind >= head) {
        fprintf(stderr, "error: which kind of job? trainyard submit KIND ...: %s\n",
                submit_kinds());
        return 2;
    }
    if (head - optind > 2) {
        fprintf(stderr, "error: the command is one argument: quote it (\"python train.py "
                        "--lr 0.1\") or give its words after --\n");
        return 2;
    }
    if (head - optind == 2 && o->argc > 0) {
        fprintf(stderr, "error: a command both as a string and after --: give one\n");
        return 2;
    }
    if (head - optind == 2)
        o->shell = argv[optind + 1];
    o->kind = kind_alias(argv[optind]);
    /* (a manifest for `kubectl apply` names a namespace only when -n did) */
    o->ns = strcmp(ctx->ns, "default") != 0 ? ctx->ns : NULL;
    return -1;
}

/* --dry-run (client): the manifest as it would be sent. */
static void print_manifest(const json_t *obj, const char *out)
{
    if (strcmp(out, "name") == 0) {
        const api_resource *res =
            api_find_kind(json_string_value(json_object_get(obj, "apiVersion")),
                          json_string_value(json_object_get(obj, "kind")));
        char kn[160] = "";
        if (res)
            cli_kind_name(res, kn, sizeof(kn));
        printf("%s/%s\n", kn,
               json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")));
    } else {
        print_object(obj, *out ? out : "yaml");
    }
}

int cmd_submit(int argc, char **argv)
{
    cli_ctx ctx = {0};
    submit_opts o;
    const char *dry_run = NULL;
    ty_error err;
    json_t *obj;
    int rc;

    submit_opts_init(&o);
    if ((rc = parse_args(argc, argv, &ctx, &o, &dry_run)) >= 0)
        return rc;
    ty_error_init(&err);
    obj = submit_build(&o, &err);
    if (!obj) {
        fprintf(stderr, "error: %s\n", err.text);
        fprintf(stderr, "See 'trainyard submit --help' for the flags.\n");
        ty_error_clear(&err);
        return 2;
    }
    ty_error_clear(&err);
    if (dry_run && strcmp(dry_run, "client") == 0) {
        print_manifest(obj, ctx.output);
        rc = 0;
    } else {
        rc = create(&ctx, &o, obj, dry_run != NULL);
    }
    json_decref(obj);
    return rc;
}
