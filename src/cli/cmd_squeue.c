/* cmd_squeue.c - `trainyard squeue`, `scancel` and `sacct`: Slurm's views of
 * the jobs `trainyard sbatch` made (the Volcano Jobs with the job-number
 * label, slurm_batch.h), in Slurm's layouts, with Slurm's letters (-n is
 * --name, -u --user, -j --jobs); the namespace is --namespace.
 *
 * The job's user is trainyard.io/created-by, which the server stamps on
 * every job and a client cannot forge (server/creator.h); `--me` asks the
 * server who we are (a SelfSubjectReview). scancel does not delete: it
 * asks the Job controller to terminate the job (TerminateJob through the
 * trainyard.io/action annotation, as `trainyard job suspend` does), so the
 * job stays for sacct as CANCELLED. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/kinds.h"
#include "cli/cli.h"
#include "cli/slurm_batch.h"

#define OPT_NAMESPACE 1100
#define OPT_ALL_NS 1101
#define OPT_ME 1102
/* --server in its long form only: -s is Slurm's (squeue --steps, scancel
 * --signal, sacct --state) */
#define OPT_SERVER 1103
#define CREATOR "trainyard.io/created-by"

/* What squeue and sacct show of one job. */
typedef struct sjob {
    long id;
    const char *name, *partition, *user, *account, *state, *nodelist;
    long nodes, ntasks, cpus, limit_s;
    long elapsed; /* since it started running, -1 when it has not */
    char exit_code[32];
} sjob;

static const char *ann(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
}

static long ann_long(const json_t *obj, const char *key, long dflt)
{
    const char *v = ann(obj, key);
    return v && isdigit((unsigned char)*v) ? strtol(v, NULL, 10) : dflt;
}

static time_t parse_rfc3339(const char *s)
{
    struct tm tm = {0};
    if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return (time_t)-1;
    return timegm(&tm);
}

/* "code:signal" of the batch script, from its pod (pods: the namespace's
 * batch pods, NULL when not listed). */
static void exit_code(const json_t *pods, long id, const char *state, char *buf, size_t len)
{
    char name[64];
    size_t i;
    json_t *pod;

    snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld-" SB_TASK "-0", id);
    snprintf(buf, len, "0:0");
    json_array_foreach(json_object_get(pods, "items"), i, pod) {
        const json_t *st, *term;
        const char *n = json_string_value(
            json_object_get(json_object_get(pod, "metadata"), "name"));
        if (!n || strcmp(n, name) != 0)
            continue;
        st = json_array_get(json_object_get(json_object_get(pod, "status"), "containerStatuses"),
                            0);
        term = json_object_get(json_object_get(st, "state"), "terminated");
        if (!term)
            term = json_object_get(json_object_get(st, "lastState"), "terminated");
        if (term) {
            long code = (long)json_integer_value(json_object_get(term, "exitCode"));
            long sig = (long)json_integer_value(json_object_get(term, "signal"));
            snprintf(buf, len, "%ld:%ld", sig ? 0 : code, sig);
            return;
        }
    }
    /* killed before its script ended, or its pod is gone */
    if (!strcmp(state, "CANCELLED"))
        snprintf(buf, len, "0:15");
    else if (!strcmp(state, "FAILED"))
        snprintf(buf, len, "1:0");
}

static void job_view(const json_t *job, const json_t *pods, time_t now, sjob *j)
{
    const json_t *spec = json_object_get(job, "spec"), *st = json_object_get(job, "status");
    const json_t *state = json_object_get(st, "state");
    const char *phase = json_string_value(json_object_get(state, "phase"));
    time_t since = parse_rfc3339(json_string_value(json_object_get(state, "lastTransitionTime")));

    memset(j, 0, sizeof(*j));
    j->id = sb_job_id(job);
    j->name = ann(job, SB_ANN_NAME) ? ann(job, SB_ANN_NAME) : "";
    j->partition = json_string_value(json_object_get(spec, "queue"));
    if (!j->partition)
        j->partition = "default";
    j->user = ann(job, CREATOR) ? ann(job, CREATOR) : "unknown";
    j->account = ann(job, SB_ANN_ACCOUNT);
    if (!j->account)
        j->account = json_string_value(
            json_object_get(json_object_get(job, "metadata"), "namespace"));
    j->state = sb_state(phase);
    j->nodelist = ann(job, SB_ANN_NODELIST) ? ann(job, SB_ANN_NODELIST) : "";
    j->nodes = (long)json_integer_value(json_object_get(spec, "minAvailable"));
    j->ntasks = ann_long(job, SB_ANN_NTASKS, j->nodes);
    j->cpus = ann_long(job, SB_ANN_CPUS, j->ntasks);
    j->limit_s = ann_long(job, SB_ANN_LIMIT, 0);
    j->elapsed = phase && !strcmp(phase, "Running") && since != (time_t)-1 ? (long)(now - since)
                                                                           : -1;
    exit_code(pods, j->id, j->state, j->exit_code, sizeof(j->exit_code));
}

/* The namespace's (or every namespace's: ns NULL) batch jobs, sorted by
 * number, and their pods when with_pods. 0, or -1 after printing why. */
static int list_jobs(ty_client *cl, const char *ns, bool with_pods, json_t **jobs,
                     json_t **pods)
{
    char path[1024];
    ty_error err;

    ty_error_init(&err);
    *pods = NULL;
    client_resource_path(&api_vcjob, ns, NULL, path, sizeof(path));
    strncat(path, "?labelSelector=" SB_LABEL_ID, sizeof(path) - strlen(path) - 1);
    if (!(*jobs = client_call_json(cl, "GET", path, NULL, NULL, &err)))
        goto fail;
    if (with_pods) {
        client_resource_path(&api_pod, ns, NULL, path, sizeof(path));
        strncat(path, "?labelSelector=" SB_LABEL_ID, sizeof(path) - strlen(path) - 1);
        if (!(*pods = client_call_json(cl, "GET", path, NULL, NULL, &err))) {
            json_decref(*jobs);
            goto fail;
        }
    }
    return 0;
fail:
    cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    ty_error_clear(&err);
    return -1;
}

static int by_id(const void *a, const void *b)
{
    const sjob *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The views of jobs' batch jobs, sorted; *n of them. Caller frees. */
static sjob *views(const json_t *jobs, const json_t *pods, size_t *n)
{
    const json_t *items = json_object_get(jobs, "items");
    sjob *v = calloc(json_array_size(items) + 1, sizeof(sjob));
    time_t now = time(NULL);
    size_t i;
    json_t *it;

    *n = 0;
    if (!v)
        return NULL;
    json_array_foreach(items, i, it)
        if (sb_job_id(it) > 0)
            job_view(it, pods, now, &v[(*n)++]);
    qsort(v, *n, sizeof(sjob), by_id);
    return v;
}

/* Whether item is in the comma-separated list (NULL: no list, everything). */
static bool in_list(const char *list, const char *item, bool nocase)
{
    size_t len = strlen(item);

    if (!list)
        return true;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && (nocase ? !strncasecmp(p, item, n) : !strncmp(p, item, n)))
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

static bool id_in_list(const char *list, long id)
{
    char s[32];
    snprintf(s, sizeof(s), "%ld", id);
    return in_list(list, s, false);
}

/* Who the server says we are; NULL after printing why. Caller frees. */
static char *whoami(ty_client *cl)
{
    ty_error err;
    json_t *req = json_pack("{s:s,s:s}", "apiVersion", "authentication.k8s.io/v1", "kind",
                            "SelfSubjectReview");
    json_t *r;
    char *name = NULL;

    ty_error_init(&err);
    r = client_call_json(cl, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         "application/json", req, &err);
    json_decref(req);
    if (!r) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return NULL;
    }
    const char *u = json_string_value(json_object_get(
        json_object_get(json_object_get(r, "status"), "userInfo"), "username"));
    name = strdup(u ? u : "");
    json_decref(r);
    return name;
}

/* ---- squeue ---- */

/* One cell of squeue's -o letters, into buf; its header in *head. false for
 * a letter we do not know. */
static bool squeue_cell(char letter, const sjob *j, char *buf, size_t len, const char **head)
{
    char t[64];

    switch (letter) {
    case 'i':
    case 'A': *head = "JOBID"; if (j) snprintf(buf, len, "%ld", j->id); break;
    case 'P': *head = "PARTITION"; if (j) snprintf(buf, len, "%s", j->partition); break;
    case 'j': *head = "NAME"; if (j) snprintf(buf, len, "%s", j->name); break;
    case 'u': *head = "USER"; if (j) snprintf(buf, len, "%s", j->user); break;
    case 'a': *head = "ACCOUNT"; if (j) snprintf(buf, len, "%s", j->account); break;
    case 't': *head = "ST"; if (j) snprintf(buf, len, "%s", sb_state_short(j->state)); break;
    case 'T': *head = "STATE"; if (j) snprintf(buf, len, "%s", j->state); break;
    case 'M':
        *head = "TIME";
        if (j) {
            sb_format_elapsed(j->elapsed < 0 ? 0 : j->elapsed, t, sizeof(t));
            snprintf(buf, len, "%s", t);
        }
        break;
    case 'l':
        *head = "TIME_LIMIT";
        if (j) {
            if (j->limit_s > 0)
                sb_format_elapsed(j->limit_s, t, sizeof(t));
            snprintf(buf, len, "%s", j->limit_s > 0 ? t : "UNLIMITED");
        }
        break;
    case 'D': *head = "NODES"; if (j) snprintf(buf, len, "%ld", j->nodes); break;
    case 'C': *head = "CPUS"; if (j) snprintf(buf, len, "%ld", j->cpus); break;
    case 'N':
        *head = "NODELIST";
        if (j) snprintf(buf, len, "%s", strcmp(j->state, "PENDING") ? j->nodelist : "");
        break;
    case 'r':
        *head = "REASON";
        if (j) snprintf(buf, len, "%s", strcmp(j->state, "PENDING") ? "None" : "Resources");
        break;
    case 'R':
        *head = "NODELIST(REASON)";
        if (j) snprintf(buf, len, "%s", strcmp(j->state, "PENDING") ? j->nodelist : "(Resources)");
        break;
    default: return false;
    }
    return true;
}

/* Prints one line of fmt for j (the header when j is NULL): Slurm's
 * %[.][width]letter, '.' right-justifies, a width also truncates. -1 on a
 * letter not supported. */
static int squeue_line(const char *fmt, const sjob *j)
{
    for (const char *p = fmt; *p; p++) {
        char cell[1024] = "";
        const char *head = "";
        bool right = false;
        long width = 0;

        if (*p != '%') {
            putchar(*p);
            continue;
        }
        if (p[1] == '%') {
            putchar('%');
            p++;
            continue;
        }
        if (p[1] == '.')
            right = true, p++;
        while (isdigit((unsigned char)p[1]) && width < 1000)
            width = width * 10 + (*++p - '0');
        if (!p[1] || !squeue_cell(p[1], j, cell, sizeof(cell), &head)) {
            fprintf(stderr, "squeue: error: format letter '%c' is not supported "
                            "(docs/cli/sbatch.md)\n", p[1] ? p[1] : ' ');
            return -1;
        }
        p++;
        if (!j)
            snprintf(cell, sizeof(cell), "%s", head);
        if (width > 0)
            printf(right ? "%*.*s" : "%-*.*s", (int)width, (int)width, cell);
        else
            fputs(cell, stdout);
    }
    putchar('\n');
    return 0;
}

static const char squeue_default_fmt[] = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

/* Whether state (short or long, any case) is in the -t list. */
static bool state_wanted(const char *list, const sjob *j, bool any)
{
    if (!list)
        return any || !strcmp(j->state, "PENDING") || !strcmp(j->state, "RUNNING") ||
               !strcmp(j->state, "COMPLETING");
    return in_list(list, "all", true) || in_list(list, j->state, true) ||
           in_list(list, sb_state_short(j->state), true);
}

int cmd_squeue(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"server", required_argument, NULL, OPT_SERVER},
        {"all-namespaces", no_argument, NULL, OPT_ALL_NS},
        {"user", required_argument, NULL, 'u'},
        {"me", no_argument, NULL, OPT_ME},
        {"jobs", required_argument, NULL, 'j'},
        {"name", required_argument, NULL, 'n'},
        {"partition", required_argument, NULL, 'p'},
        {"states", required_argument, NULL, 't'},
        {"noheader", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 1199},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    const char *ns = "default", *users = NULL, *ids = NULL, *names = NULL, *parts = NULL;
    const char *states = NULL, *fmt = squeue_default_fmt;
    bool header = true, me = false;
    char *myname = NULL;
    json_t *jobs, *pods;
    sjob *v;
    size_t n;
    int c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_KUBECONFIG, "u:j:n:p:t:ho:", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case OPT_NAMESPACE: ns = optarg; break;
        case OPT_SERVER: ctx.server = optarg; break;
        case OPT_ALL_NS: ns = NULL; break;
        case 'u': users = optarg; break;
        case OPT_ME: me = true; break;
        case 'j': ids = optarg; break;
        case 'n': names = optarg; break;
        case 'p': parts = optarg; break;
        case 't': states = optarg; break;
        case 'h': header = false; break;
        case 'o': fmt = optarg; break;
        case 1199:
            printf("usage: trainyard squeue [-u USER[,..] | --me] [-j ID[,..]] [-n NAME[,..]]\n"
                   "         [-p PARTITION] [-t STATES|all] [-h] [-o FORMAT]\n"
                   "         [--namespace NS | --all-namespaces]\n");
            return 0;
        default: return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "squeue: error: unrecognized argument '%s'\n", argv[optind]);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if (me && !(myname = whoami(cl))) {
        client_free(cl);
        return 1;
    }
    if (list_jobs(cl, ns, false, &jobs, &pods) < 0) {
        free(myname);
        client_free(cl);
        return 1;
    }
    v = views(jobs, NULL, &n);
    if (header && squeue_line(fmt, NULL) < 0)
        rc = 2;
    for (size_t i = 0; v && i < n && rc == 0; i++) {
        if (!state_wanted(states, &v[i], ids != NULL) || !id_in_list(ids, v[i].id) ||
            !in_list(users, v[i].user, false) || !in_list(names, v[i].name, false) ||
            !in_list(parts, v[i].partition, false) || (myname && strcmp(v[i].user, myname)))
            continue;
        if (squeue_line(fmt, &v[i]) < 0)
            rc = 2;
    }
    free(v);
    json_decref(jobs);
    free(myname);
    client_free(cl);
    return rc;
}

/* ---- scancel ---- */

int cmd_scancel(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"server", required_argument, NULL, OPT_SERVER},
        {"user", required_argument, NULL, 'u'},
        {"me", no_argument, NULL, OPT_ME},
        {"name", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    const char *ns = "default", *users = NULL, *names = NULL;
    bool me = false;
    char *myname = NULL;
    json_t *jobs, *pods;
    sjob *v;
    size_t n;
    int c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_KUBECONFIG, "u:n:h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case OPT_NAMESPACE: ns = optarg; break;
        case OPT_SERVER: ctx.server = optarg; break;
        case 'u': users = optarg; break;
        case OPT_ME: me = true; break;
        case 'n': names = optarg; break;
        case 'h':
            printf("usage: trainyard scancel [JOBID...] [-u USER | --me] [-n NAME] "
                   "[--namespace NS]\n");
            return 0;
        default: return 2;
        }
    }
    for (int i = optind; i < argc; i++) {
        char *end;
        long id = strtol(argv[i], &end, 10);
        if (id <= 0 || *end) {
            fprintf(stderr, "scancel: error: Invalid job id %s\n", argv[i]);
            return 2;
        }
    }
    if (optind == argc && !users && !names && !me) {
        fprintf(stderr, "scancel: error: No job identification provided\n");
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if ((me && !(myname = whoami(cl))) || list_jobs(cl, ns, false, &jobs, &pods) < 0) {
        free(myname);
        client_free(cl);
        return 1;
    }
    v = views(jobs, NULL, &n);
    /* each number named must be a job here, as Slurm says of one it does not know */
    for (int a = optind; a < argc; a++) {
        long id = strtol(argv[a], NULL, 10);
        size_t i;
        for (i = 0; v && i < n && v[i].id != id; i++)
            ;
        if (!v || i == n) {
            fprintf(stderr, "scancel: error: Kill job error on job id %ld: Invalid job id "
                            "specified\n", id);
            rc = 1;
        }
    }
    for (size_t i = 0; v && i < n; i++) {
        bool named = false;
        char path[1024], name[64];
        ty_error err;
        json_t *patch, *r;

        for (int a = optind; a < argc; a++)
            named |= strtol(argv[a], NULL, 10) == v[i].id;
        if ((optind < argc && !named) || !in_list(users, v[i].user, false) ||
            !in_list(names, v[i].name, false) || (myname && strcmp(v[i].user, myname)))
            continue;
        /* a finished job is left as it is (Slurm: "Job/step already completing or completed") */
        if (strcmp(v[i].state, "PENDING") && strcmp(v[i].state, "RUNNING")) {
            if (named)
                fprintf(stderr, "scancel: error: Kill job error on job id %ld: Job/step "
                                "already completing or completed\n", v[i].id);
            continue;
        }
        ty_error_init(&err);
        snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld", v[i].id);
        client_resource_path(&api_vcjob, ns, name, path, sizeof(path));
        patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "trainyard.io/action",
                          "TerminateJob");
        r = client_call_json(cl, "PATCH", path, "application/merge-patch+json", patch, &err);
        json_decref(patch);
        if (!r) {
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
            ty_error_clear(&err);
            rc = 1;
        }
        json_decref(r);
    }
    free(v);
    json_decref(jobs);
    free(myname);
    client_free(cl);
    return rc;
}

/* ---- sacct ---- */

typedef struct sacct_field {
    const char *name;
    int width;
    bool left;
} sacct_field;

static const sacct_field sacct_fields[] = {
    {"JobID", 12, true},      {"JobName", 10, false}, {"Partition", 10, false},
    {"Account", 10, false},   {"AllocCPUS", 10, false}, {"State", 10, false},
    {"ExitCode", 8, false},   {"User", 9, false},     {"NNodes", 8, false},
    {"NTasks", 8, false},     {"NodeList", 15, false}, {"Timelimit", 10, false},
    {"Elapsed", 10, false},
};

static void sacct_cell(const char *name, const sjob *j, bool step, char *buf, size_t len)
{
    if (!strcasecmp(name, "JobID"))
        snprintf(buf, len, step ? "%ld.batch" : "%ld", j->id);
    else if (!strcasecmp(name, "JobName"))
        snprintf(buf, len, "%s", step ? "batch" : j->name);
    else if (!strcasecmp(name, "Partition"))
        snprintf(buf, len, "%s", step ? "" : j->partition);
    else if (!strcasecmp(name, "Account"))
        snprintf(buf, len, "%s", j->account ? j->account : "");
    else if (!strcasecmp(name, "AllocCPUS"))
        snprintf(buf, len, "%ld", j->cpus);
    else if (!strcasecmp(name, "State"))
        snprintf(buf, len, "%s", j->state);
    else if (!strcasecmp(name, "ExitCode"))
        snprintf(buf, len, "%s", j->exit_code);
    else if (!strcasecmp(name, "User"))
        snprintf(buf, len, "%s", step ? "" : j->user);
    else if (!strcasecmp(name, "NNodes"))
        snprintf(buf, len, "%ld", step ? 1 : j->nodes);
    else if (!strcasecmp(name, "NTasks"))
        snprintf(buf, len, "%s", step ? "1" : "");
    else if (!strcasecmp(name, "NodeList"))
        snprintf(buf, len, "%s", j->nodelist);
    else if (!strcasecmp(name, "Timelimit")) {
        if (j->limit_s > 0 && !step)
            sb_format_elapsed(j->limit_s, buf, len);
        else
            snprintf(buf, len, "%s", step ? "" : "UNLIMITED");
    } else if (!strcasecmp(name, "Elapsed"))
        sb_format_elapsed(j->elapsed < 0 ? 0 : j->elapsed, buf, len);
}

/* --format's list ("jobid,state%20") into cols; -1 after printing why. */
static int sacct_format(const char *spec, sacct_field *cols, size_t max, size_t *n)
{
    *n = 0;
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, ","), nl = strcspn(p, ",%");
        size_t f;
        for (f = 0; f < sizeof(sacct_fields) / sizeof(sacct_fields[0]); f++)
            if (strlen(sacct_fields[f].name) == nl && !strncasecmp(p, sacct_fields[f].name, nl))
                break;
        if (f == sizeof(sacct_fields) / sizeof(sacct_fields[0]) || *n == max) {
            fprintf(stderr, "sacct: error: Invalid field requested: \"%.*s\" (docs/cli/sbatch.md)\n",
                    (int)nl, p);
            return -1;
        }
        cols[*n] = sacct_fields[f];
        if (nl < len) {
            long w = strtol(p + nl + 1, NULL, 10);
            if (w > 0 && w < 1000)
                cols[*n].width = (int)w;
        }
        (*n)++;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* A cell in its column: cut to the width with '+' at the end, as sacct does. */
static void sacct_put(const sacct_field *col, const char *cell)
{
    int w = col->width;
    if ((int)strlen(cell) > w)
        printf("%.*s+ ", w - 1, cell);
    else
        printf(col->left ? "%-*s " : "%*s ", w, cell);
}

int cmd_sacct(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"server", required_argument, NULL, OPT_SERVER},
        {"all-namespaces", no_argument, NULL, OPT_ALL_NS},
        {"jobs", required_argument, NULL, 'j'},
        {"allocations", no_argument, NULL, 'X'},
        {"format", required_argument, NULL, 'o'},
        {"user", required_argument, NULL, 'u'},
        {"state", required_argument, NULL, 's'},
        {"noheader", no_argument, NULL, 'n'},
        {"parsable2", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    sacct_field cols[32];
    size_t ncols = 7, n;
    cli_ctx ctx = {0};
    cli_parser p;
    const char *ns = "default", *ids = NULL, *users = NULL, *states = NULL;
    bool alloc_only = false, header = true, parsable = false;
    json_t *jobs, *pods;
    sjob *v;
    int c;

    memcpy(cols, sacct_fields, 7 * sizeof(sacct_field));
    cli_parser_init(&p, &ctx, CLI_F_KUBECONFIG, "j:Xo:u:s:nPh", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case OPT_NAMESPACE: ns = optarg; break;
        case OPT_SERVER: ctx.server = optarg; break;
        case OPT_ALL_NS: ns = NULL; break;
        case 'j': ids = optarg; break;
        case 'X': alloc_only = true; break;
        case 'o':
            if (sacct_format(optarg, cols, 32, &ncols) < 0)
                return 2;
            break;
        case 'u': users = optarg; break;
        case 's': states = optarg; break;
        case 'n': header = false; break;
        case 'P': parsable = true; break;
        case 'h':
            printf("usage: trainyard sacct [-j ID[,..]] [-X] [-o|--format FIELD[%%W],...] "
                   "[-u USER] [-s STATE]\n"
                   "         [-n] [-P] [--namespace NS | --all-namespaces]\n");
            return 0;
        default: return 2;
        }
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if (list_jobs(cl, ns, true, &jobs, &pods) < 0) {
        client_free(cl);
        return 1;
    }
    v = views(jobs, pods, &n);
    if (header) {
        for (size_t k = 0; k < ncols; k++) {
            if (parsable)
                printf("%s%s", cols[k].name, k + 1 < ncols ? "|" : "\n");
            else
                sacct_put(&cols[k], cols[k].name);
        }
        if (!parsable) {
            printf("\n");
            for (size_t k = 0; k < ncols; k++)
                printf("%.*s ", cols[k].width,
                       "----------------------------------------------------------------------"
                       "----------------------------------------------------------------------");
            printf("\n");
        }
    }
    for (size_t i = 0; v && i < n; i++) {
        if (!id_in_list(ids, v[i].id) || !in_list(users, v[i].user, false) ||
            (states && !in_list(states, v[i].state, true) &&
             !in_list(states, sb_state_short(v[i].state), true)))
            continue;
        for (int step = 0; step <= (alloc_only ? 0 : 1); step++) {
            /* the batch step exists once its pod started */
            if (step && !strcmp(v[i].state, "PENDING"))
                break;
            for (size_t k = 0; k < ncols; k++) {
                char cell[512] = "";
                sacct_cell(cols[k].name, &v[i], step, cell, sizeof(cell));
                if (parsable)
                    printf("%s%s", cell, k + 1 < ncols ? "|" : "");
                else
                    sacct_put(&cols[k], cell);
            }
            printf("\n");
        }
    }
    free(v);
    json_decref(jobs);
    json_decref(pods);
    client_free(cl);
    return 0;
}
