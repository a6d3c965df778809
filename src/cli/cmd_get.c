/* cmd_get.c - `trainyard get`: tables like kubectl's, or JSON / YAML / names. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/job_cmds.h"
#include "model/yaml.h"

static void get_usage(FILE *f)
{
    fprintf(f, "usage: trainyard get RESOURCE [NAME...] [-n NS | -A] [-l SELECTOR]\n"
               "                     [-o wide|json|yaml|name] [--server URL]\n"
               "       trainyard get JOB [-n NS] [-e|--events] [-o json|yaml|name]\n"
               "  JOB: a training job's NAME (any kind; a lone argument that is not a resource\n"
               "  type) or KIND/NAME (pytorchjob/NAME, vcjob/NAME, ...): its status, instances,\n"
               "  why it waits; -e adds its events (docs/cli/get.md)\n");
}

static void cell_text(const json_t *cell, char *buf, size_t len)
{
    if (json_is_string(cell))
        snprintf(buf, len, "%s", json_string_value(cell));
    else if (json_is_integer(cell))
        snprintf(buf, len, "%lld", (long long)json_integer_value(cell));
    else if (json_is_real(cell))
        snprintf(buf, len, "%g", json_real_value(cell));
    else if (json_is_boolean(cell))
        snprintf(buf, len, "%s", json_is_true(cell) ? "true" : "false");
    else
        snprintf(buf, len, "<none>");
}

/* Prints a meta.k8s.io Table as aligned columns, three spaces apart. */
static void print_table(const json_t *table, bool wide, bool with_ns, bool headers)
{
    const json_t *cols = json_object_get(table, "columnDefinitions");
    const json_t *rows = json_object_get(table, "rows");
    size_t ncols = json_array_size(cols), nrows = json_array_size(rows);
    size_t nshow = 0, *show = calloc(ncols + 1, sizeof(size_t));
    size_t width[64] = {0};
    char ***text;

    for (size_t c = 0; c < ncols && nshow < 63; c++) {
        json_int_t prio = json_integer_value(json_object_get(json_array_get(cols, c), "priority"));
        if (prio == 0 || wide)
            show[nshow++] = c;
    }
    text = calloc(nrows + 1, sizeof(char **));
    for (size_t r = 0; r <= nrows; r++) {
        text[r] = calloc(nshow + 1, sizeof(char *));
        for (size_t k = 0; k <= nshow; k++) {
            char buf[1024];
            if (k == 0) {
                const json_t *row = json_array_get(rows, r - 1);
                const char *ns = json_string_value(json_object_get(
                    json_object_get(json_object_get(row, "object"), "metadata"), "namespace"));
                snprintf(buf, sizeof(buf), "%s", r == 0 ? "NAMESPACE" : (ns ? ns : ""));
            } else if (r == 0) {
                const char *name = json_string_value(
                    json_object_get(json_array_get(cols, show[k - 1]), "name"));
                size_t i;
                for (i = 0; name && name[i] && i < sizeof(buf) - 1; i++)
                    buf[i] = (char)toupper((unsigned char)name[i]);
                buf[i] = '\0';
            } else {
                const json_t *cells = json_object_get(json_array_get(rows, r - 1), "cells");
                cell_text(json_array_get(cells, show[k - 1]), buf, sizeof(buf));
            }
            text[r][k] = strdup(buf);
            if (strlen(buf) > width[k])
                width[k] = strlen(buf);
        }
    }
    for (size_t r = headers ? 0 : 1; r <= nrows; r++) {
        bool first = true;
        for (size_t k = with_ns ? 0 : 1; k <= nshow; k++) {
            bool last = k == nshow;
            printf("%s%-*s", first ? "" : "   ", last ? 0 : (int)width[k], text[r][k]);
            first = false;
        }
        printf("\n");
    }
    for (size_t r = 0; r <= nrows; r++) {
        for (size_t k = 0; k <= nshow; k++)
            free(text[r][k]);
        free(text[r]);
    }
    free(text);
    free(show);
}

static void print_names(const api_resource *res, const json_t *v)
{
    char kn[160];
    const json_t *items = json_object_get(v, "items");
    size_t i;
    json_t *it;

    cli_kind_name(res, kn, sizeof(kn));
    if (!items) {
        printf("%s/%s\n", kn, json_string_value(json_object_get(json_object_get(v, "metadata"), "name")));
        return;
    }
    json_array_foreach(items, i, it)
        printf("%s/%s\n", kn, json_string_value(json_object_get(json_object_get(it, "metadata"), "name")));
}

static int print_output(const api_resource *res, json_t *v, const char *out)
{
    if (strcmp(out, "json") == 0) {
        char *s = json_dumps(v, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
        printf("%s\n", s);
        free(s);
    } else if (strcmp(out, "yaml") == 0) {
        char *s = yaml_dump(v);
        fputs(s, stdout);
        free(s);
    } else {
        print_names(res, v);
    }
    return 0;
}

int cmd_get(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"selector", required_argument, NULL, 'l'}, {"no-headers", no_argument, NULL, 'H'},
        {"events", no_argument, NULL, 'e'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    const char *selector = NULL, *out;
    bool headers = true, events = false;
    int c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT | CLI_F_ALL | CLI_F_OUTPUT, "l:he", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'l': selector = optarg; break;
        case 'H': headers = false; break;
        case 'e': events = true; break;
        case 'h': get_usage(stdout); return 0;
        default: get_usage(stderr); return 2;
        }
    }
    if (cli_check_output(&ctx, "json,name,wide,yaml") < 0)
        return 2;
    out = ctx.output;
    if (optind >= argc) {
        fprintf(stderr, "error: you must specify the type of resource to get\n");
        get_usage(stderr);
        return 2;
    }
    /* one argument that is no resource type: a training job (job_get.c) */
    if (argc - optind == 1 && !client_resolve(argv[optind]) && !selector &&
        !ctx.all_namespaces)
        return job_get(&ctx, argv[optind], events);
    const api_resource *res = cli_resource(argv[optind]);
    if (!res)
        return 1;
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    bool table = !*out || strcmp(out, "wide") == 0;
    const char *ns = ctx.all_namespaces ? NULL : ctx.ns;
    int nnames = argc - optind - 1;
    for (int i = 0; i <= nnames && rc == 0; i++) {
        char path[2048];
        const char *name = nnames > 0 ? argv[optind + 1 + i] : NULL;
        if (nnames > 0 && i == nnames)
            break;
        client_resource_path(res, ns ? ns : (name ? "default" : NULL), name, path, sizeof(path));
        if (selector && !name) {
            char *esc = client_escape(selector);
            strncat(path, "?labelSelector=", sizeof(path) - strlen(path) - 1);
            strncat(path, esc, sizeof(path) - strlen(path) - 1);
            free(esc);
        }
        client_resp resp;
        ty_error err;
        ty_error_init(&err);
        if (client_request(cl, "GET", path, NULL, NULL, 0,
                           table ? "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
                                 : "application/json",
                           &resp, &err) < 0) {
            cli_print_error(&err, false);
            rc = 1;
            break;
        }
        json_t *v = json_loadb(resp.body.data ? resp.body.data : "", resp.body.len, 0, NULL);
        if (resp.status != 200) {
            const char *msg = json_string_value(json_object_get(v, "message"));
            ty_seterr(&err, client_errcode(resp.status), "%s", msg ? msg : "unexpected answer");
            cli_print_error(&err, true);
            rc = 1;
        } else if (table) {
            if (json_array_size(json_object_get(v, "rows")) == 0 && !name) {
                if (ns)
                    fprintf(stderr, "No resources found in %s namespace.\n", ns);
                else
                    fprintf(stderr, "No resources found\n");
            } else {
                print_table(v, strcmp(out, "wide") == 0, ctx.all_namespaces && res->namespaced,
                            headers && i == 0);
            }
        } else {
            print_output(res, v, out);
        }
        json_decref(v);
        client_resp_free(&resp);
        ty_error_clear(&err);
        if (nnames == 0)
            break;
    }
    client_free(cl);
    return rc;
}
