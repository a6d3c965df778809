/* kc_http_config.c - where the HTTP client learns its server and
 * credentials: a kubeconfig file (kubectl's), or the service account a pod
 * runs as. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "client/kc_http.h"
#include "model/yaml.h"

/* A kubeconfig is a few kilobytes; one holding many clusters' CAs a few
 * hundred. */
#define KUBECONFIG_MAX ((size_t)16 * 1024 * 1024)
#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

int kc_http_kubeconfig_path(char *buf, size_t len)
{
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");

    if (env && *env) {
        const char *colon = strchr(env, ':');
        size_t n = colon ? (size_t)(colon - env) : strlen(env);

        snprintf(buf, len, "%.*s", (int)n, env);
        return n ? 0 : -1;
    }
    if (!home || !*home)
        return -1;
    snprintf(buf, len, "%s/.kube/config", home);
    return 0;
}

static int read_file(const char *path, ty_buf *out, ty_error *err)
{
    FILE *f = fopen(path, "re");
    char chunk[65536];
    size_t n;

    if (!f)
        return ty_seterr(err, TY_ENOTFOUND, "cannot open %s: %m", path);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (out->len + n > KUBECONFIG_MAX || ty_buf_append(out, chunk, n) < 0) {
            fclose(f);
            return ty_seterr(err, TY_ETOOLARGE, "%s is larger than %zu bytes", path,
                             KUBECONFIG_MAX);
        }
    }
    fclose(f);
    return 0;
}

static int b64_value(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+' || ch == '-')
        return 62;
    if (ch == '/' || ch == '_')
        return 63;
    return -1;
}

/* The bytes base64 text s stands for (whitespace skipped; padding
 * optional), into out. -1 on a character outside the alphabet. */
static int b64_decode(const char *s, ty_buf *out)
{
    unsigned acc = 0;
    int bits = 0;

    for (; *s && *s != '='; s++) {
        int v = b64_value((unsigned char)*s);
        char byte;

        if (v < 0) {
            if (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
                continue;
            return -1;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            byte = (char)((acc >> bits) & 0xff);
            if (ty_buf_append(out, &byte, 1) < 0)
                return -1;
        }
    }
    return 0;
}

/* The member "what" of the entry named name in list (kubeconfig's
 * clusters, contexts, users: [{name, <what>: {...}}]). */
static json_t *named(const json_t *cfg, const char *list, const char *name, const char *what)
{
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(cfg, list), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && name && strcmp(n, name) == 0)
            return json_object_get(e, what);
    }
    return NULL;
}

/* A file a kubeconfig names: relative to the kubeconfig's directory. */
static char *resolve(const char *cfgpath, const char *file)
{
    const char *slash = strrchr(cfgpath, '/');
    ty_buf b = {0};

    if (!file || !*file)
        return NULL;
    if (file[0] == '/' || !slash)
        return strdup(file);
    if (ty_buf_printf(&b, "%.*s/%s", (int)(slash - cfgpath), cfgpath, file) < 0)
        return NULL;
    return b.data;
}

/* A credential given as base64 data (member data) or as a file (member
 * file): *blob or *path filled. */
static int credential(const char *cfgpath, const json_t *m, const char *data, const char *file,
                      ty_buf *blob, char **path, ty_error *err)
{
    const char *d = json_string_value(json_object_get(m, data));
    const char *f = json_string_value(json_object_get(m, file));

    if (d && *d) {
        if (b64_decode(d, blob) < 0)
            return ty_seterr(err, TY_EBADREQUEST, "%s: %s is not valid base64", cfgpath, data);
        return 0;
    }
    if (f && *f && !(*path = resolve(cfgpath, f)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

/* A kubeconfig (path NULL: kc_http_kubeconfig_path) and the context
 * chosen in it (NULL: its current-context): *cfg (caller decrefs), *ctx
 * borrowed from it; *name the file's name, in def when it is the default. */
static int load_context(const char **path, char *def, size_t deflen, const char *context,
                        json_t **cfg, json_t **ctx, const char **ctxname, ty_error *err)
{
    ty_buf text = {0};

    *cfg = NULL;
    if (!*path || !**path) {
        if (kc_http_kubeconfig_path(def, deflen) < 0)
            return ty_seterr(err, TY_ENOTFOUND,
                             "no kubeconfig: neither KUBECONFIG nor HOME is set");
        *path = def;
    }
    if (read_file(*path, &text, err) < 0 ||
        !(*cfg = yaml_load_one(text.data ? text.data : "", text.len, err))) {
        ty_buf_free(&text);
        return -1;
    }
    ty_buf_free(&text);
    if (!context || !*context)
        context = json_string_value(json_object_get(*cfg, "current-context"));
    if (!context || !*context)
        ty_seterr(err, TY_EBADREQUEST, "%s: no context chosen and no current-context", *path);
    else if (!(*ctx = named(*cfg, "contexts", context, "context")))
        ty_seterr(err, TY_ENOTFOUND, "%s: context \"%s\" not found", *path, context);
    else {
        *ctxname = context;
        return 0;
    }
    json_decref(*cfg);
    *cfg = NULL;
    return -1;
}

char *kc_http_kubeconfig_namespace(const char *path, const char *context, ty_error *err)
{
    char def[4096];
    json_t *cfg, *ctx;
    const char *name, *ns;
    char *out;

    if (load_context(&path, def, sizeof(def), context, &cfg, &ctx, &name, err) < 0)
        return NULL;
    ns = json_string_value(json_object_get(ctx, "namespace"));
    if (!(out = strdup(ns && *ns ? ns : "default")))
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    json_decref(cfg);
    return out;
}

ty_kc *kc_http_from_kubeconfig(const char *path, const char *context, ty_error *err)
{
    return kc_http_from_kubeconfig_at(path, context, NULL, err);
}

ty_kc *kc_http_from_kubeconfig_at(const char *path, const char *context, const char *server,
                                  ty_error *err)
{
    char def[4096];
    ty_buf ca = {0}, cert = {0}, key = {0};
    char *ca_file = NULL, *cert_file = NULL, *key_file = NULL, *token_file = NULL;
    json_t *cfg, *ctx, *cluster, *user;
    kc_http_opts o = {0};
    ty_kc *kc = NULL;

    if (load_context(&path, def, sizeof(def), context, &cfg, &ctx, &context, err) < 0)
        return NULL;
    cluster = named(cfg, "clusters", json_string_value(json_object_get(ctx, "cluster")),
                    "cluster");
    user = named(cfg, "users", json_string_value(json_object_get(ctx, "user")), "user");
    if (!cluster) {
        ty_seterr(err, TY_ENOTFOUND, "%s: the cluster of context \"%s\" not found", path,
                  context);
        goto out;
    }
    if (json_object_get(user, "exec") || json_object_get(user, "auth-provider")) {
        ty_seterr(err, TY_EBADREQUEST,
                  "%s: the user of context \"%s\" uses a credential plugin (exec or "
                  "auth-provider), which Trainyard does not run: give a token, a token file "
                  "or a client certificate",
                  path, context);
        goto out;
    }
    if (credential(path, cluster, "certificate-authority-data", "certificate-authority", &ca,
                   &ca_file, err) < 0 ||
        credential(path, user, "client-certificate-data", "client-certificate", &cert,
                   &cert_file, err) < 0 ||
        credential(path, user, "client-key-data", "client-key", &key, &key_file, err) < 0)
        goto out;
    token_file = resolve(path, json_string_value(json_object_get(user, "tokenFile")));
    o.server = server && *server ? server
                                 : json_string_value(json_object_get(cluster, "server"));
    o.insecure_skip_verify = json_is_true(json_object_get(cluster, "insecure-skip-tls-verify"));
    o.token = json_string_value(json_object_get(user, "token"));
    o.token_file = token_file;
    o.username = json_string_value(json_object_get(user, "username"));
    o.password = json_string_value(json_object_get(user, "password"));
    o.ca_file = ca_file;
    o.ca_data = ca.data;
    o.ca_len = ca.len;
    o.cert_file = cert_file;
    o.cert_data = cert.data;
    o.cert_len = cert.len;
    o.key_file = key_file;
    o.key_data = key.data;
    o.key_len = key.len;
    kc = kc_http_new(&o, err);
out:
    json_decref(cfg);
    ty_buf_free(&ca);
    ty_buf_free(&cert);
    ty_buf_free(&key); /* the client keeps its own copies */
    free(ca_file);
    free(cert_file);
    free(key_file);
    free(token_file);
    return kc;
}

ty_kc *kc_http_in_cluster(const char *sa_dir, ty_error *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    ty_buf server = {0}, token = {0}, ca = {0};
    kc_http_opts o = {0};
    ty_kc *kc = NULL;

    if (!sa_dir)
        sa_dir = SA_DIR;
    if (!host || !*host || !port || !*port) {
        ty_seterr(err, TY_ENOTFOUND, "not in a cluster: KUBERNETES_SERVICE_HOST and "
                                     "KUBERNETES_SERVICE_PORT are not set");
        return NULL;
    }
    /* an IPv6 address goes in brackets */
    if (ty_buf_printf(&server, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
                      port) < 0 ||
        ty_buf_printf(&token, "%s/token", sa_dir) < 0 ||
        ty_buf_printf(&ca, "%s/ca.crt", sa_dir) < 0) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    if (access(token.data, R_OK) < 0) {
        ty_seterr(err, TY_ENOTFOUND, "not in a cluster: cannot read %s: %m", token.data);
        goto out;
    }
    o.server = server.data;
    o.token_file = token.data;
    o.ca_file = access(ca.data, R_OK) == 0 ? ca.data : NULL;
    kc = kc_http_new(&o, err);
out:
    ty_buf_free(&server);
    ty_buf_free(&token);
    ty_buf_free(&ca);
    return kc;
}
