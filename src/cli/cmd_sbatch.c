/* cmd_sbatch.c - `trainyard sbatch [OPTIONS] SCRIPT [ARGS]`: a Slurm batch
 * script as a gang of pods (a Volcano Job, slurm_batch.c builds it).
 *
 * The options are Slurm's, letters included (-n is --ntasks, -N --nodes,
 * -o --output, -p --partition): the common CLI flags are taken only in
 * their long forms (--namespace, --server, --kubeconfig; -s is Slurm's
 * --oversubscribe). The #SBATCH lines
 * are read first and the command line's options applied after them, so the
 * command line wins, as with Slurm. The job's number is one past the
 * highest number among the namespace's batch jobs (their label); two
 * sbatch racing for a number meet at the create (AlreadyExists), and the
 * loser takes the next. */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/kinds.h"
#include "cli/cli.h"
#include "cli/slurm_batch.h"

#define SB_OPT_NAMESPACE 1100
#define SB_OPT_WRAP 1101
#define SB_OPT_SERVER 1102
#define MAX_CL_OPTS 128

static void sbatch_usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard sbatch [OPTIONS] SCRIPT [ARGS...]\n"
            "       trainyard sbatch [OPTIONS] --wrap=COMMAND\n"
            "Runs a Slurm batch script as a gang job; #SBATCH lines at its top take the\n"
            "same options (the command line wins). Options (Slurm's):\n"
            "  -J, --job-name=NAME      -N, --nodes=N          -n, --ntasks=N\n"
            "      --ntasks-per-node=N  -c, --cpus-per-task=N      --mem=SIZE[K|M|G|T]\n"
            "  -G, --gpus=[TYPE:]N          --gpus-per-node=N      --gres=gpu[:TYPE][:N]\n"
            "  -t, --time=TIME          -o, --output=PATTERN   -e, --error=PATTERN\n"
            "  -p, --partition=QUEUE    -A, --account=NAME     -D, --chdir=DIR\n"
            "  -W, --wait                   --parsable             --export=ALL|NONE\n"
            "Trainyard's: --namespace=NS --server=URL --kubeconfig=FILE --context=NAME\n"
            "See docs/cli/sbatch.md.\n");
}

/* The whole of path (or stdin for "-"), at most SB_MAX_SCRIPT bytes. Caller
 * frees; NULL after printing why. */
static char *read_script(const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    size_t cap = SB_MAX_SCRIPT + 2, len;
    char *buf;

    if (!f) {
        fprintf(stderr, "sbatch: error: Unable to open file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    buf = malloc(cap);
    len = buf ? fread(buf, 1, cap - 1, f) : 0;
    if (f != stdin)
        fclose(f);
    if (!buf)
        return NULL;
    buf[len] = '\0';
    if (len > SB_MAX_SCRIPT || strlen(buf) != len) {
        fprintf(stderr, "sbatch: error: %s: %s\n", path,
                len > SB_MAX_SCRIPT ? "the script is larger than 100 KiB"
                                    : "the script contains a NUL byte");
        free(buf);
        return NULL;
    }
    return buf;
}

/* The highest job number among ns's batch jobs; -1 after printing why. */
static long highest_id(ty_client *cl, const char *ns)
{
    char path[1024];
    ty_error err;
    json_t *list, *it;
    long max = 0;
    size_t i;

    ty_error_init(&err);
    client_resource_path(&api_vcjob, ns, NULL, path, sizeof(path));
    strncat(path, "?labelSelector=" SB_LABEL_ID, sizeof(path) - strlen(path) - 1);
    if (!(list = client_call_json(cl, "GET", path, NULL, NULL, &err))) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return -1;
    }
    json_array_foreach(json_object_get(list, "items"), i, it) {
        long id = sb_job_id(it);
        if (id > max)
            max = id;
    }
    json_decref(list);
    return max;
}

/* Creates the job under the first free number; that number, or -1 after
 * printing why. */
static long submit(ty_client *cl, const char *ns, const sb_opts *o, sb_submit *s)
{
    long id = highest_id(cl, ns);
    char path[1024];

    if (id < 0)
        return -1;
    client_resource_path(&api_vcjob, ns, NULL, path, sizeof(path));
    for (int tries = 0; tries < 32; tries++) {
        ty_error err;
        json_t *job, *made;

        ty_error_init(&err);
        s->id = ++id;
        if (!(job = sb_manifest(o, s, &err))) {
            fprintf(stderr, "%s\n", err.text);
            ty_error_clear(&err);
            return -1;
        }
        made = client_call_json(cl, "POST", path, "application/json", job, &err);
        json_decref(job);
        if (made) {
            json_decref(made);
            return id;
        }
        if (err.code != TY_EEXISTS) {
            fprintf(stderr, "sbatch: error: Batch job submission failed: ");
            fflush(stderr);
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
            ty_error_clear(&err);
            return -1;
        }
        ty_error_clear(&err);
    }
    fprintf(stderr, "sbatch: error: Batch job submission failed: no free job number\n");
    return -1;
}

/* --wait: until the job ends; its batch script's exit status. */
static int wait_job(ty_client *cl, const char *ns, long id)
{
    char path[1024], name[64];

    snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld", id);
    for (;;) {
        ty_error err;
        json_t *job;
        const char *state;

        ty_error_init(&err);
        client_resource_path(&api_vcjob, ns, name, path, sizeof(path));
        if (!(job = client_call_json(cl, "GET", path, NULL, NULL, &err))) {
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
            ty_error_clear(&err);
            return 1;
        }
        state = sb_state(json_string_value(json_object_get(
            json_object_get(json_object_get(job, "status"), "state"), "phase")));
        json_decref(job);
        if (!strcmp(state, "COMPLETED"))
            return 0;
        if (!strcmp(state, "FAILED") || !strcmp(state, "CANCELLED")) {
            json_t *pod;
            long code = 1;
            snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld-" SB_TASK "-0", id);
            client_resource_path(&api_pod, ns, name, path, sizeof(path));
            if ((pod = client_call_json(cl, "GET", path, NULL, NULL, &err))) {
                json_t *st = json_array_get(
                    json_object_get(json_object_get(pod, "status"), "containerStatuses"), 0);
                json_t *term = json_object_get(json_object_get(st, "state"), "terminated");
                if (json_integer_value(json_object_get(term, "exitCode")) > 0)
                    code = (long)json_integer_value(json_object_get(term, "exitCode"));
                json_decref(pod);
            }
            ty_error_clear(&err);
            fprintf(stderr, "sbatch: error: job %ld ended %s\n", id, state);
            return code > 255 ? 255 : (int)code;
        }
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
}

/* The command line: the common flags, sbatch's own, and the Slurm options
 * to apply after the script's #SBATCH lines. */
typedef struct sbatch_args {
    cli_ctx ctx;
    const char *ns, *wrap;
    struct {
        int opt;
        const char *arg;
    } given[MAX_CL_OPTS];
    size_t ngiven;
} sbatch_args;

/* -1 to go on, else the exit status (help, or a usage error printed). */
static int parse_args(sbatch_args *a, int argc, char **argv)
{
    struct option own[40];
    size_t nown = 0;
    cli_parser p;
    int c;

    for (const struct option *op = sb_options; op->name && nown < 35; op++)
        own[nown++] = *op;
    own[nown++] = (struct option){"namespace", required_argument, NULL, SB_OPT_NAMESPACE};
    own[nown++] = (struct option){"wrap", required_argument, NULL, SB_OPT_WRAP};
    own[nown++] = (struct option){"server", required_argument, NULL, SB_OPT_SERVER};
    own[nown++] = (struct option){"help", no_argument, NULL, 'h'};
    own[nown] = (struct option){NULL, 0, NULL, 0};
    cli_parser_init(&p, &a->ctx, CLI_F_KUBECONFIG, sb_shortopts, own);
    /* '+': the options end at the script; what follows is its arguments */
    {
        char with[sizeof(p.shortopts) + 2];
        snprintf(with, sizeof(with), "+h%s", p.shortopts);
        memcpy(p.shortopts, with, sizeof(p.shortopts) - 1);
        p.shortopts[sizeof(p.shortopts) - 1] = '\0';
    }
    a->ns = NULL; /* the kubeconfig context's, else default */
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'h': sbatch_usage(stdout); return 0;
        case SB_OPT_NAMESPACE: a->ns = optarg; break;
        case SB_OPT_WRAP: a->wrap = optarg; break;
        case SB_OPT_SERVER: a->ctx.server = optarg; break;
        case '?': sbatch_usage(stderr); return 2;
        default:
            if (a->ngiven == MAX_CL_OPTS) {
                fprintf(stderr, "sbatch: error: too many options\n");
                return 2;
            }
            a->given[a->ngiven].opt = c;
            a->given[a->ngiven++].arg = optarg;
        }
    }
    if (a->wrap && optind != argc) {
        fprintf(stderr, "sbatch: error: a script and --wrap together\n");
        return 2;
    }
    if (!a->ns)
        a->ns = cli_context_namespace(&a->ctx);
    return -1;
}

/* The script (the file at argv[optind], stdin, or --wrap's), with o set
 * from its #SBATCH lines, then the command line, then resolved; optind
 * moves past the script. Caller frees; NULL after printing why. */
static char *load(const sbatch_args *a, int argc, char **argv, sb_opts *o)
{
    const char *path = "wrap", *base;
    char *script;
    ty_error err;

    ty_error_init(&err);
    sb_opts_init(o);
    if (a->wrap) {
        size_t len = strlen(a->wrap) + 32;
        if (!(script = malloc(len)))
            return NULL;
        snprintf(script, len, "#!/bin/sh\n%s\n", a->wrap);
    } else {
        path = optind < argc ? argv[optind++] : "-";
        if (!(script = read_script(path)))
            return NULL;
        if (strncmp(script, "#!", 2) != 0) {
            fprintf(stderr, "sbatch: error: This does not look like a batch script.  The first "
                            "line must start with #! followed by the path to an interpreter.\n"
                            "sbatch: error: For instance: #!/bin/sh\n");
            free(script);
            return NULL;
        }
        if (sb_parse_directives(script, o, &err) < 0)
            goto bad;
    }
    for (size_t i = 0; i < a->ngiven; i++)
        if (sb_apply(o, a->given[i].opt, a->given[i].arg, &err) < 0)
            goto bad;
    if (!o->job_name[0]) {
        base = strrchr(path, '/');
        snprintf(o->job_name, sizeof(o->job_name), "%s",
                 !strcmp(path, "-") ? "sbatch" : base ? base + 1 : path);
    }
    if (sb_resolve(o, &err) < 0)
        goto bad;
    return script;
bad:
    fprintf(stderr, "%s\n", err.text);
    ty_error_clear(&err);
    free(script);
    return NULL;
}

int cmd_sbatch(int argc, char **argv)
{
    sbatch_args a = {0};
    sb_opts o;
    sb_submit s = {0};
    char *script, cwd[PATH_MAX], host[256] = "";
    struct passwd *pw;
    ty_client *cl;
    int rc;
    long id;

    if ((rc = parse_args(&a, argc, argv)) >= 0)
        return rc;
    if (!(script = load(&a, argc, argv, &o)))
        return 1;
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/");
    gethostname(host, sizeof(host) - 1);
    pw = getpwuid(getuid());
    s.script = script;
    s.args = argv + optind;
    s.nargs = argc - optind;
    s.user = pw ? pw->pw_name : "nobody";
    s.submit_dir = cwd;
    s.submit_host = host;
    rc = 1;
    if ((cl = cli_connect(&a.ctx))) {
        if ((id = submit(cl, a.ns, &o, &s)) >= 0) {
            printf(o.parsable ? "%ld\n" : "Submitted batch job %ld\n", id);
            fflush(stdout);
            rc = o.wait ? wait_job(cl, a.ns, id) : 0;
        }
        client_free(cl);
    }
    free(script);
    return rc;
}
