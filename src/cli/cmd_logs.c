/* cmd_logs.c - `trainyard logs POD`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void logs_usage(FILE *f)
{
    fprintf(f, "usage: trainyard logs POD [-c CONTAINER] [-f] [--tail N] [--timestamps]\n"
               "                      [-p|--previous] [--since-seconds N] [-n NS]\n");
}

int cmd_logs(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"container", required_argument, NULL, 'c'}, {"follow", no_argument, NULL, 'f'},
        {"tail", required_argument, NULL, 't'},      {"timestamps", no_argument, NULL, 'T'},
        {"previous", no_argument, NULL, 'p'},        {"since-seconds", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    char query[1024] = "";
    int c;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "c:fph", longopts);
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
        case 'h': logs_usage(stdout); return 0;
        default: logs_usage(stderr); return 2;
        }
    }
    if (argc - optind != 1) {
        logs_usage(stderr);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    char path[2048];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/log%s%s", ctx.ns, argv[optind],
             *query ? "?" : "", *query ? query + 1 : "");
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
    client_free(cl);
    return rc < 0 ? 1 : 0;
}
