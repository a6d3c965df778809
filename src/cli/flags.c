/* flags.c - the CLI's shared flag parser: the common flags (-n, -A,
 * --server, --kubeconfig, --context, -o) parsed in one place for every
 * command, the command's own passed back as getopt_long would. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "client/kc_http.h"

static const struct option common_opts[] = {
    {"namespace", required_argument, NULL, 'n'},
    {"all-namespaces", no_argument, NULL, 'A'},
    {"server", required_argument, NULL, 's'},
    {"kubeconfig", required_argument, NULL, CLI_OPT_KUBECONFIG},
    {"context", required_argument, NULL, CLI_OPT_CONTEXT},
    {"output", required_argument, NULL, 'o'},
};
/* Which CLI_F_* bit each common_opts entry belongs to. */
static const unsigned common_bits[] = {CLI_F_NS,         CLI_F_ALL,        CLI_F_SERVER,
                                       CLI_F_KUBECONFIG, CLI_F_KUBECONFIG, CLI_F_OUTPUT};

/* What ctx->ns is until -n or the command says otherwise: resolved from
 * the kubeconfig when the options are all read. */
static const char unset_ns[] = "default";

void cli_parser_init(cli_parser *p, cli_ctx *ctx, unsigned common, const char *shortopts,
                     const struct option *own)
{
    size_t n = 0, s = 0;

    memset(p->table, 0, sizeof(p->table));
    p->ctx = ctx;
    p->common = common;
    if (!ctx->ns)
        ctx->ns = unset_ns;
    if (!ctx->output)
        ctx->output = "";
    /* ':' first: a missing argument is reported as getopt does, but the
     * caller sees '?' either way. */
    p->shortopts[0] = '\0';
    for (size_t i = 0; i < sizeof(common_opts) / sizeof(common_opts[0]); i++) {
        if (!(common & common_bits[i]))
            continue;
        p->table[n++] = common_opts[i];
        if (common_opts[i].val < 128 && s + 3 < sizeof(p->shortopts)) {
            p->shortopts[s++] = (char)common_opts[i].val;
            if (common_opts[i].has_arg == required_argument)
                p->shortopts[s++] = ':';
        }
    }
    p->shortopts[s] = '\0';
    if (shortopts)
        snprintf(p->shortopts + s, sizeof(p->shortopts) - s, "%s", shortopts);
    for (; own && own->name && n < CLI_MAX_OPTS; own++)
        p->table[n++] = *own;
    p->opts = p->table;
    optind = 1;
    /* Shell completion (cmd_completion.c) asks a command its flags this
     * way: it prints them and stops before doing anything. */
    const char *complete = getenv("TRAINYARD_COMPLETE_FLAGS");
    if (complete && *complete) {
        for (size_t i = 0; i < n; i++)
            printf("--%s\n", p->table[i].name);
        fflush(stdout);
        exit(0);
    }
}

/* Whether p took the common flag whose value is c: a command that does not
 * take one may use its letter for its own (sbatch's -n is --ntasks). */
static bool taken(const cli_parser *p, int c)
{
    for (size_t i = 0; i < sizeof(common_opts) / sizeof(common_opts[0]); i++)
        if (common_opts[i].val == c && (p->common & common_bits[i]))
            return true;
    return false;
}

/* As kubectl: without -n, the namespace of the kubeconfig's context (a
 * colleague's kubeconfig from `trainyard user add` names theirs), else
 * "default". */
static void resolve_ns(cli_ctx *ctx)
{
    static char ns[256];
    ty_error err;
    char *got;

    if (ctx->ns != unset_ns)
        return;
    ty_error_init(&err);
    if ((got = kc_http_kubeconfig_namespace(ctx->kubeconfig, ctx->context, &err))) {
        if (strlen(got) < sizeof(ns)) {
            snprintf(ns, sizeof(ns), "%s", got);
            ctx->ns = ns;
        }
        free(got);
    }
    ty_error_clear(&err);
}

const char *cli_context_namespace(const cli_ctx *ctx)
{
    cli_ctx c = *ctx;

    c.ns = unset_ns;
    resolve_ns(&c);
    return c.ns;
}

int cli_getopt(cli_parser *p, int argc, char **argv)
{
    int c;

    while ((c = getopt_long(argc, argv, p->shortopts, p->opts, NULL)) != -1) {
        if (!taken(p, c))
            return c;
        switch (c) {
        case 'n': p->ctx->ns = optarg; break;
        case 'A': p->ctx->all_namespaces = true; break;
        case 's': p->ctx->server = optarg; break;
        case CLI_OPT_KUBECONFIG: p->ctx->kubeconfig = optarg; break;
        case CLI_OPT_CONTEXT: p->ctx->context = optarg; break;
        case 'o': p->ctx->output = optarg; break;
        default: return c;
        }
    }
    resolve_ns(p->ctx);
    return -1;
}

int cli_check_output(const cli_ctx *ctx, const char *formats)
{
    const char *o = ctx->output ? ctx->output : "", *f = formats;
    size_t len = strlen(o);

    if (!*o)
        return 0;
    while (*f) {
        size_t flen = strcspn(f, ",");
        if (flen == len && strncmp(f, o, len) == 0)
            return 0;
        f += flen + (f[flen] == ',');
    }
    fprintf(stderr,
            "error: unable to match a printer suitable for the output format \"%s\", "
            "allowed formats are: %s\n",
            o, formats);
    return -1;
}
