/* cmd_squeue.c - `trainyard squeue` and `scancel`: Slurm's views of the
 * jobs `trainyard sbatch` made (slurm_jobs.h reads them), in Slurm's layout,
 * with Slurm's letters (-n is --name, -u --user, -j --jobs); the namespace
 * is --namespace. `--me` asks the server who we are. scancel does not delete: it
 * asks the Job controller to terminate the job (TerminateJob through the
 * trainyard.io/action annotation, as `trainyard job suspend` does), so the
 * job stays for sacct as CANCELLED. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/kinds.h"
#include "cli/cli.h"
#include "cli/slurm_batch.h"
#include "cli/slurm_jobs.h"

#define OPT_NAMESPACE 1100
#define OPT_ALL_NS 1101
#define OPT_ME 1102
/* --server in its long form only: -s is Slurm's (squeue --steps, scancel
 * --signal, sacct --state) */
#define OPT_SERVER 1103

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
    return sj_in_list(list, "all", true) || sj_in_list(list, j->state, true) ||
           sj_in_list(list, sb_state_short(j->state), true);
}

static void squeue_usage(void)
{
    printf("usage: trainyard squeue [-u USER[,..] | --me] [-j ID[,..]] [-n NAME[,..]]\n"
           "         [-p PARTITION] [-t STATES|all] [-h] [-o FORMAT]\n"
           "         [--namespace NS | --all-namespaces] [--server URL]\n");
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
    const char *ns = NULL, *users = NULL, *ids = NULL, *names = NULL, *parts = NULL;
    bool ns_set = false;
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
        case OPT_NAMESPACE: ns = optarg, ns_set = true; break;
        case OPT_SERVER: ctx.server = optarg; break;
        case OPT_ALL_NS: ns = NULL, ns_set = true; break;
        case 'u': users = optarg; break;
        case OPT_ME: me = true; break;
        case 'j': ids = optarg; break;
        case 'n': names = optarg; break;
        case 'p': parts = optarg; break;
        case 't': states = optarg; break;
        case 'h': header = false; break;
        case 'o': fmt = optarg; break;
        case 1199: squeue_usage(); return 0;
        default: return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "squeue: error: unrecognized argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!ns_set)
        ns = cli_context_namespace(&ctx);
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if (me && !(myname = sj_whoami(cl))) {
        client_free(cl);
        return 1;
    }
    if (sj_list(cl, ns, false, &jobs, &pods) < 0) {
        free(myname);
        client_free(cl);
        return 1;
    }
    v = sj_views(jobs, NULL, &n);
    if (header && squeue_line(fmt, NULL) < 0)
        rc = 2;
    for (size_t i = 0; v && i < n && rc == 0; i++) {
        if (!state_wanted(states, &v[i], ids != NULL) || !sj_id_in_list(ids, v[i].id) ||
            !sj_in_list(users, v[i].user, false) || !sj_in_list(names, v[i].name, false) ||
            !sj_in_list(parts, v[i].partition, false) || (myname && strcmp(v[i].user, myname)))
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

/* Asks the Job controller to terminate job id (the TerminateJob action). 0,
 * or -1 after printing why. */
static int terminate(ty_client *cl, const char *ns, long id)
{
    char path[1024], name[64];
    ty_error err;
    json_t *patch, *r;

    ty_error_init(&err);
    snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld", id);
    client_resource_path(&api_vcjob, ns, name, path, sizeof(path));
    patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "trainyard.io/action",
                      "TerminateJob");
    r = client_call_json(cl, "PATCH", path, "application/merge-patch+json", patch, &err);
    json_decref(patch);
    if (!r) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return -1;
    }
    json_decref(r);
    return 0;
}

/* What scancel was told to cancel: numbers, and filters on them. */
typedef struct cancel_sel {
    char **ids; /* the numbers given (checked), nids of them; none: every job */
    int nids;
    const char *users, *names, *me;
} cancel_sel;

static bool named(const cancel_sel *s, long id)
{
    for (int a = 0; a < s->nids; a++)
        if (strtol(s->ids[a], NULL, 10) == id)
            return true;
    return false;
}

/* Cancels what s selects among v (n jobs). 0, or 1 when a number named no
 * job or a request failed. */
static int cancel(ty_client *cl, const char *ns, const cancel_sel *s, const sjob *v, size_t n)
{
    int rc = 0;

    /* a number that is no job here is said so, as Slurm does */
    for (int a = 0; a < s->nids; a++) {
        long id = strtol(s->ids[a], NULL, 10);
        size_t i;
        for (i = 0; i < n && v[i].id != id; i++)
            ;
        if (i == n) {
            fprintf(stderr, "scancel: error: Kill job error on job id %ld: Invalid job id "
                            "specified\n", id);
            rc = 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((s->nids && !named(s, v[i].id)) || !sj_in_list(s->users, v[i].user, false) ||
            !sj_in_list(s->names, v[i].name, false) || (s->me && strcmp(v[i].user, s->me)))
            continue;
        /* a finished (or finishing) job is left as it is */
        if (strcmp(v[i].state, "PENDING") && strcmp(v[i].state, "RUNNING")) {
            if (s->nids)
                fprintf(stderr, "scancel: error: Kill job error on job id %ld: Job/step "
                                "already completing or completed\n", v[i].id);
            continue;
        }
        if (terminate(cl, ns, v[i].id) < 0)
            rc = 1;
    }
    return rc;
}

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
    cancel_sel sel = {0};
    const char *ns = NULL;
    bool me = false;
    char *myname = NULL;
    json_t *jobs, *pods;
    sjob *v;
    size_t n;
    int c, rc = 1;

    cli_parser_init(&p, &ctx, CLI_F_KUBECONFIG, "u:n:h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case OPT_NAMESPACE: ns = optarg; break;
        case OPT_SERVER: ctx.server = optarg; break;
        case 'u': sel.users = optarg; break;
        case OPT_ME: me = true; break;
        case 'n': sel.names = optarg; break;
        case 'h':
            printf("usage: trainyard scancel [JOBID...] [-u USER | --me] [-n NAME] "
                   "[--namespace NS]\n");
            return 0;
        default: return 2;
        }
    }
    sel.ids = argv + optind;
    sel.nids = argc - optind;
    for (int i = 0; i < sel.nids; i++) {
        char *end;
        if (strtol(sel.ids[i], &end, 10) <= 0 || *end) {
            fprintf(stderr, "scancel: error: Invalid job id %s\n", sel.ids[i]);
            return 2;
        }
    }
    if (!sel.nids && !sel.users && !sel.names && !me) {
        fprintf(stderr, "scancel: error: No job identification provided\n");
        return 2;
    }
    if (!ns)
        ns = cli_context_namespace(&ctx);
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if ((!me || (myname = sj_whoami(cl))) && sj_list(cl, ns, false, &jobs, &pods) == 0) {
        sel.me = myname;
        if ((v = sj_views(jobs, NULL, &n)))
            rc = cancel(cl, ns, &sel, v, n);
        free(v);
        json_decref(jobs);
    }
    free(myname);
    client_free(cl);
    return rc;
}
