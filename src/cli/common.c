/* common.c - helpers shared by the CLI commands. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "cli/cli.h"
#include "model/yaml.h"

const char *cli_default_server(void)
{
    const char *s = getenv("TRAINYARD_SERVER");
    return s && *s ? s : "http://127.0.0.1:8080";
}

ty_client *cli_connect(const cli_ctx *ctx)
{
    ty_error err;
    ty_client *c;
    ty_error_init(&err);
    c = client_new(ctx->server ? ctx->server : cli_default_server(), &err);
    if (!c)
        cli_print_error(&err, false);
    ty_error_clear(&err);
    return c;
}

void cli_print_error(const ty_error *err, bool from_server)
{
    if (from_server && err->code != TY_EUNAVAILABLE)
        fprintf(stderr, "Error from server (%s): %s\n", ty_errcode_reason(err->code), err->text);
    else
        fprintf(stderr, "error: %s\n", err->text);
}

const api_resource *cli_resource(const char *what)
{
    const api_resource *res = client_resolve(what);
    if (!res)
        fprintf(stderr, "error: the server doesn't have a resource type \"%s\"\n", what);
    return res;
}

void cli_kind_name(const api_resource *res, char *buf, size_t len)
{
    if (*res->group)
        snprintf(buf, len, "%s.%s", res->singular, res->group);
    else
        snprintf(buf, len, "%s", res->singular);
}

static int read_stream(FILE *f, ty_buf *b)
{
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (ty_buf_append(b, chunk, n) < 0)
            return -1;
    return ferror(f) ? -1 : 0;
}

static int load_file(const char *path, json_t *out, ty_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    ty_buf b = {0};
    json_t *docs;
    size_t i;
    json_t *d;

    if (!f)
        return ty_seterr(err, TY_ENOTFOUND, "the path \"%s\" does not exist", path);
    if (read_stream(f, &b) < 0) {
        if (f != stdin)
            fclose(f);
        ty_buf_free(&b);
        return ty_seterr(err, TY_EINTERNAL, "cannot read %s", path);
    }
    if (f != stdin)
        fclose(f);
    docs = yaml_load_all(b.data ? b.data : "", b.len, err);
    ty_buf_free(&b);
    if (!docs) {
        char why[sizeof(err->text)];
        memcpy(why, err->text, sizeof(why));
        return ty_seterr(err, err->code, "error parsing %.200s: %.700s", path, why);
    }
    json_array_foreach(docs, i, d)
    {
        const char *kind = json_string_value(json_object_get(d, "kind"));
        if (kind && strcmp(kind, "List") == 0 && json_is_array(json_object_get(d, "items")))
            json_array_extend(out, json_object_get(d, "items"));
        else
            json_array_append(out, d);
    }
    json_decref(docs);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool manifest_name(const char *n)
{
    size_t len = strlen(n);
    return (len > 5 && strcmp(n + len - 5, ".yaml") == 0) ||
           (len > 4 && strcmp(n + len - 4, ".yml") == 0) ||
           (len > 5 && strcmp(n + len - 5, ".json") == 0);
}

json_t *cli_read_manifests(const char *path, ty_error *err)
{
    json_t *out = json_array();
    struct stat st;

    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char *names[1024];
        size_t n = 0;
        if (!d) {
            json_decref(out);
            ty_seterr(err, TY_ENOTFOUND, "cannot open directory %s", path);
            return NULL;
        }
        while ((e = readdir(d)) && n < 1024)
            if (manifest_name(e->d_name))
                names[n++] = strdup(e->d_name);
        closedir(d);
        qsort(names, n, sizeof(names[0]), cmp_str);
        int rc = 0;
        for (size_t i = 0; i < n; i++) {
            char full[4096];
            snprintf(full, sizeof(full), "%s/%s", path, names[i]);
            if (rc == 0)
                rc = load_file(full, out, err);
            free(names[i]);
        }
        if (rc < 0) {
            json_decref(out);
            return NULL;
        }
        return out;
    }
    if (load_file(path, out, err) < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}
