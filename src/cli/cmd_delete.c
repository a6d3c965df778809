/* cmd_delete.c - `trainyard delete RESOURCE NAME... | -f FILE`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job_cmds.h"

static void delete_usage(FILE *f)
{
    fprintf(f, "usage: trainyard delete RESOURCE NAME... [-n NS] [--cascade background|foreground|orphan]\n"
               "       trainyard delete -f FILE|DIR|- [--cascade ...]\n"
               "       trainyard delete JOB [-n NS] [--cascade ...]\n"
               "  JOB: a training job's NAME (any kind; a lone argument that is not a resource\n"
               "  type) or KIND/NAME (docs/cli/delete.md)\n");
}

static int delete_one(ty_client *cl, const api_resource *res, const char *ns, const char *name,
                      const char *policy, bool ignore_missing)
{
    char path[2048], kn[160];
    ty_error err;
    json_t *opts = json_pack("{s:s, s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1",
                             "propagationPolicy", policy);
    json_t *v;

    ty_error_init(&err);
    client_resource_path(res, ns, name, path, sizeof(path));
    v = client_call_json(cl, "DELETE", path, NULL, opts, &err);
    json_decref(opts);
    cli_kind_name(res, kn, sizeof(kn));
    if (!v) {
        int rc = 1;
        if (err.code == TY_ENOTFOUND && ignore_missing)
            rc = 0;
        else
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return rc;
    }
    printf("%s \"%s\" deleted\n", kn, name);
    json_decref(v);
    return 0;
}

int cmd_delete(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"filename", required_argument, NULL, 'f'},
        {"cascade", required_argument, NULL, 'c'},
        {"ignore-not-found", no_argument, NULL, 'i'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    const char *file = NULL, *policy = "Background";
    bool ignore_missing = false;
    int c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "f:h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'f': file = optarg; break;
        case 'i': ignore_missing = true; break;
        case 'c':
            if (strcmp(optarg, "background") == 0 || strcmp(optarg, "true") == 0)
                policy = "Background";
            else if (strcmp(optarg, "foreground") == 0)
                policy = "Foreground";
            else if (strcmp(optarg, "orphan") == 0 || strcmp(optarg, "false") == 0)
                policy = "Orphan";
            else {
                fprintf(stderr, "error: invalid --cascade %s: want background, foreground or orphan\n",
                        optarg);
                return 2;
            }
            break;
        case 'h': delete_usage(stdout); return 0;
        default: delete_usage(stderr); return 2;
        }
    }
    /* one argument that is no resource type: a training job (job_admin.c) */
    if (!file && argc - optind == 1 && !client_resolve(argv[optind]))
        return job_delete(&ctx, argv[optind], policy, ignore_missing);
    if ((!file && argc - optind < 2) || (file && optind < argc)) {
        fprintf(stderr, "error: give RESOURCE and NAME..., or -f FILE\n");
        delete_usage(stderr);
        return 2;
    }
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    if (file) {
        ty_error err;
        ty_error_init(&err);
        json_t *docs = cli_read_manifests(file, &err);
        if (!docs) {
            fprintf(stderr, "error: %s\n", err.text);
            ty_error_clear(&err);
            client_free(cl);
            return 1;
        }
        size_t k;
        json_t *d;
        json_array_foreach(docs, k, d)
        {
            const api_resource *res = api_find_kind(json_string_value(json_object_get(d, "apiVersion")),
                                                    json_string_value(json_object_get(d, "kind")));
            const char *name = json_string_value(json_object_get(json_object_get(d, "metadata"), "name"));
            if (!res || !name) {
                fprintf(stderr, "error: cannot tell what to delete from a manifest in %s\n", file);
                rc = 1;
                continue;
            }
            if (delete_one(cl, res, cli_object_ns(res, d, &ctx), name, policy, ignore_missing))
                rc = 1;
        }
        json_decref(docs);
    } else {
        const api_resource *res = cli_resource(argv[optind]);
        if (!res) {
            client_free(cl);
            return 1;
        }
        for (int i = optind + 1; i < argc; i++)
            if (delete_one(cl, res, ctx.ns, argv[i], policy, ignore_missing))
                rc = 1;
    }
    client_free(cl);
    return rc;
}
