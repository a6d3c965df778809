/* cmd_apply.c - `trainyard apply -f FILE|DIR|-`.
 *
 * Each manifest goes to the server as a server-side apply (create or merge),
 * and the answer is compared with what was there to say created, configured
 * or unchanged, as kubectl does. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void apply_usage(FILE *f)
{
    fprintf(f, "usage: trainyard apply -f FILE|DIR|- [-n NAMESPACE] [--server URL]\n");
}

/* The namespace an object goes to: its own, else -n, else default. */
const char *cli_object_ns(const api_resource *res, const json_t *obj, const cli_ctx *ctx)
{
    const char *ns = json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
    if (!res->namespaced)
        return NULL;
    return ns && *ns ? ns : ctx->ns;
}

static const char *rv_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static int apply_one(ty_client *cl, const cli_ctx *ctx, json_t *obj)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    const api_resource *res;
    char path[2048], kn[160];
    ty_error err;
    json_t *before, *after;
    const char *verb;

    if (!av || !kind) {
        fprintf(stderr, "error: a manifest is missing apiVersion or kind\n");
        return 1;
    }
    res = api_find_kind(av, kind);
    if (!res) {
        fprintf(stderr, "error: resource mapping not found for kind \"%s\" in version \"%s\"\n",
                kind, av);
        return 1;
    }
    if (!name || !*name) {
        fprintf(stderr, "error: a %s manifest has no metadata.name\n", kind);
        return 1;
    }
    ty_error_init(&err);
    client_resource_path(res, cli_object_ns(res, obj, ctx), name, path, sizeof(path));
    before = client_call_json(cl, "GET", path, NULL, NULL, &err);
    if (!before && err.code != TY_ENOTFOUND) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return 1;
    }
    ty_error_clear(&err);
    strncat(path, "?fieldManager=trainyard&force=true&fieldValidation=Strict",
            sizeof(path) - strlen(path) - 1);
    after = client_call_json(cl, "PATCH", path, "application/apply-patch+yaml", obj, &err);
    if (!after) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        json_decref(before);
        ty_error_clear(&err);
        return 1;
    }
    if (!before)
        verb = "created";
    else if (rv_of(before) && rv_of(after) && strcmp(rv_of(before), rv_of(after)) == 0)
        verb = "unchanged";
    else
        verb = "configured";
    cli_kind_name(res, kn, sizeof(kn));
    printf("%s/%s %s\n", kn, name, verb);
    json_decref(before);
    json_decref(after);
    return 0;
}

int cmd_apply(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"filename", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    const char *files[64];
    int nfiles = 0, c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "f:h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'f':
            if (nfiles < 64)
                files[nfiles++] = optarg;
            break;
        case 'h': apply_usage(stdout); return 0;
        default: apply_usage(stderr); return 2;
        }
    }
    if (nfiles == 0 || optind < argc) {
        fprintf(stderr, "error: must specify one of -f (and no other arguments)\n");
        apply_usage(stderr);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    for (int i = 0; i < nfiles; i++) {
        ty_error err;
        ty_error_init(&err);
        json_t *docs = cli_read_manifests(files[i], &err);
        if (!docs) {
            fprintf(stderr, "error: %s\n", err.text);
            ty_error_clear(&err);
            rc = 1;
            continue;
        }
        size_t k;
        json_t *d;
        json_array_foreach(docs, k, d)
            if (apply_one(cl, &ctx, d) != 0)
                rc = 1;
        json_decref(docs);
    }
    client_free(cl);
    return rc;
}
