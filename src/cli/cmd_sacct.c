/* cmd_sacct.c - `trainyard sacct`: the sbatch jobs, finished ones
 * included, in sacct's columns (JobID left-justified, the others right,
 * each cut to its width with a '+'), with a JOB.batch line per started job
 * unless -X. Slurm's letters (-n is --noheader, -s --state); the namespace
 * is --namespace, the server --server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/slurm_batch.h"
#include "cli/slurm_jobs.h"

#define OPT_NAMESPACE 1100
#define OPT_ALL_NS 1101
#define OPT_SERVER 1103

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
    else if (!strcasecmp(name, "Elapsed")) {
        /* sacct's form: [D-]HH:MM:SS (squeue's TIME drops the hours) */
        long t = j->elapsed > 0 ? j->elapsed : 0;
        if (t >= 86400)
            snprintf(buf, len, "%ld-%02ld:%02ld:%02ld", t / 86400, t % 86400 / 3600,
                     t % 3600 / 60, t % 60);
        else
            snprintf(buf, len, "%02ld:%02ld:%02ld", t / 3600, t % 3600 / 60, t % 60);
    } else if (!strcasecmp(name, "Timelimit")) {
        if (j->limit_s > 0 && !step)
            sb_format_elapsed(j->limit_s, buf, len);
        else
            snprintf(buf, len, "%s", step ? "" : "UNLIMITED");
    }
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

static void sacct_header(const sacct_field *cols, size_t ncols, bool parsable)
{
    for (size_t k = 0; k < ncols; k++) {
        if (parsable)
            printf("%s%s", cols[k].name, k + 1 < ncols ? "|" : "\n");
        else
            sacct_put(&cols[k], cols[k].name);
    }
    if (parsable)
        return;
    printf("\n");
    for (size_t k = 0; k < ncols; k++) {
        for (int w = 0; w < cols[k].width; w++)
            putchar('-');
        putchar(' ');
    }
    printf("\n");
}

/* One line: the job's, or its batch step's. */
static void sacct_line(const sacct_field *cols, size_t ncols, bool parsable, const sjob *j,
                       bool step)
{
    for (size_t k = 0; k < ncols; k++) {
        char cell[512] = "";
        sacct_cell(cols[k].name, j, step, cell, sizeof(cell));
        if (parsable)
            printf("%s%s", cell, k + 1 < ncols ? "|" : "");
        else
            sacct_put(&cols[k], cell);
    }
    printf("\n");
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
    const char *ns = NULL, *ids = NULL, *users = NULL, *states = NULL;
    bool ns_set = false;
    bool alloc_only = false, header = true, parsable = false;
    json_t *jobs, *pods;
    sjob *v;
    int c;

    memcpy(cols, sacct_fields, 7 * sizeof(sacct_field));
    cli_parser_init(&p, &ctx, CLI_F_KUBECONFIG, "j:Xo:u:s:nPh", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case OPT_NAMESPACE: ns = optarg, ns_set = true; break;
        case OPT_SERVER: ctx.server = optarg; break;
        case OPT_ALL_NS: ns = NULL, ns_set = true; break;
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
    if (!ns_set)
        ns = cli_context_namespace(&ctx);
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if (sj_list(cl, ns, true, &jobs, &pods) < 0) {
        client_free(cl);
        return 1;
    }
    v = sj_views(jobs, pods, &n);
    if (header)
        sacct_header(cols, ncols, parsable);
    for (size_t i = 0; v && i < n; i++) {
        if (!sj_id_in_list(ids, v[i].id) || !sj_in_list(users, v[i].user, false) ||
            (states && !sj_in_list(states, v[i].state, true) &&
             !sj_in_list(states, sb_state_short(v[i].state), true)))
            continue;
        sacct_line(cols, ncols, parsable, &v[i], false);
        /* the batch step exists once its pod started */
        if (!alloc_only && strcmp(v[i].state, "PENDING"))
            sacct_line(cols, ncols, parsable, &v[i], true);
    }
    free(v);
    json_decref(jobs);
    json_decref(pods);
    client_free(cl);
    return 0;
}

