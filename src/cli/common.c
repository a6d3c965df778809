/* common.c - helpers shared by the CLI commands. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "cli/cli.h"
#include "controller/trainer/trainjob_ctl.h"
#include "model/yaml.h"

void cli_default_data_dir(char *buf, size_t len)
{
    const char *env = getenv("TRAINYARD_DATA_DIR");
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, len, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/trainyard", xdg);
    else
        snprintf(buf, len, "%s/.local/share/trainyard", home && *home ? home : ".");
}

/* The first line of a small file, without its newline; -1 when unreadable. */
static int first_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    bool ok = f && fgets(buf, (int)len, f);

    if (f)
        fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return buf[0] ? 0 : -1;
}

const char *cli_default_server(void)
{
    static char url[512];
    char dir[4096], path[4200];
    const char *s = getenv("TRAINYARD_SERVER");

    if (s && *s)
        return s;
    cli_default_data_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/server.url", dir);
    if (first_line(path, url, sizeof(url)) == 0)
        return url;
    return "https://127.0.0.1:8080";
}

int cli_admin_credential(const char *data_dir, cli_admin *out, ty_error *err)
{
    char path[4200], line[8192];
    FILE *f;
    bool found = false;

    memset(out, 0, sizeof(*out));
    snprintf(path, sizeof(path), "%s/tokens.csv", data_dir);
    if (!(f = fopen(path, "re")))
        return ty_seterr(err, TY_ENOTFOUND,
                         "cannot read the admin credential %s: %m (has the server started "
                         "once with --data-dir %s, and may you read it?)",
                         path, data_dir);
    /* The admin's line: the first of user "admin", else the first line. */
    while (fgets(line, sizeof(line), f)) {
        char *tok = line, *user, *end;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#' || !(end = strchr(line, ',')))
            continue;
        *end = '\0';
        user = end + 1;
        user[strcspn(user, ",")] = '\0';
        if ((found && strcmp(user, "admin") != 0) || strlen(tok) >= sizeof(out->token) ||
            strlen(user) >= sizeof(out->user))
            continue;
        memcpy(out->token, tok, strlen(tok) + 1);
        memcpy(out->user, user, strlen(user) + 1);
        found = true;
        if (strcmp(user, "admin") == 0)
            break;
    }
    explicit_bzero(line, sizeof(line));
    fclose(f);
    if (!found)
        return ty_seterr(err, TY_ENOTFOUND, "%s has no token line", path);
    snprintf(path, sizeof(path), "%s/server.url", data_dir);
    if (first_line(path, out->server, sizeof(out->server)) < 0)
        out->server[0] = '\0';
    snprintf(out->ca_file, sizeof(out->ca_file), "%s/pki/ca.crt", data_dir);
    if (access(out->ca_file, R_OK) < 0)
        out->ca_file[0] = '\0';
    return 0;
}

void cli_admin_clear(cli_admin *a)
{
    explicit_bzero(a->token, sizeof(a->token));
}

ty_client *cli_connect(const cli_ctx *ctx)
{
    const char *server = ctx->server;
    char defpath[4096];
    ty_error err;
    ty_client *c = NULL;

    ty_error_init(&err);
    if (!server && getenv("TRAINYARD_SERVER") && *getenv("TRAINYARD_SERVER"))
        server = getenv("TRAINYARD_SERVER");
    /* As kubectl: --kubeconfig, $KUBECONFIG, ~/.kube/config. */
    if (ctx->kubeconfig || (getenv("KUBECONFIG") && *getenv("KUBECONFIG")) ||
        (kc_http_kubeconfig_path(defpath, sizeof(defpath)) == 0 && access(defpath, F_OK) == 0)) {
        c = client_from_kubeconfig(ctx->kubeconfig, ctx->context, server, &err);
    } else {
        /* No kubeconfig at all: the admin credential of the data directory,
         * when this user may read it (the owner of a local server). */
        char dir[4096];
        cli_admin a;
        cli_default_data_dir(dir, sizeof(dir));
        if (cli_admin_credential(dir, &a, NULL) == 0) {
            kc_http_opts o = {.server = server ? server : a.server[0] ? a.server : NULL,
                              .token = a.token,
                              .ca_file = a.ca_file[0] ? a.ca_file : NULL};
            if (!o.server)
                o.server = cli_default_server();
            c = client_new_opts(&o, &err);
            cli_admin_clear(&a);
        } else {
            c = client_new(server ? server : cli_default_server(), &err);
        }
    }
    if (!c)
        cli_print_error(&err, false);
    ty_error_clear(&err);
    return c;
}

json_t *cli_get_json(ty_client *cl, const char *path)
{
    ty_error err;
    json_t *v;

    ty_error_init(&err);
    if (!(v = client_call_json(cl, "GET", path, NULL, NULL, &err)))
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    ty_error_clear(&err);
    return v;
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

int cli_sched_name_flag(const char *v, const char **names, size_t *n, size_t max)
{
    if (!*v || *n >= max) {
        fprintf(stderr, "error: invalid --scheduler-name %s: want a non-empty name, at most %zu "
                        "of them\n", v, max);
        return -1;
    }
    names[(*n)++] = v;
    return 0;
}

int cli_record_retention_flag(const char *v)
{
    int64_t ms;

    if (ty_duration_parse(v, &ms) < 0) {
        fprintf(stderr, "error: invalid --job-record-retention %s: want a duration such as "
                        "168h, 30m or 0\n", v);
        return -1;
    }
    trainjobs_set_record_retention(ms / 1000);
    return 0;
}

int cli_log_level_flag(const char *v)
{
    ty_log_level lvl;

    if (ty_log_parse_level(v, &lvl) < 0) {
        fprintf(stderr, "error: invalid --log-level %s: want debug, info, warn or error\n", v);
        return -1;
    }
    ty_log_set_level(lvl);
    return 0;
}
