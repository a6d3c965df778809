/* trainer_progress.c - a TrainJob's progress token Secret and what its pods
 * get to use it (trainer_progress.h). */
#include "controller/trainer_progress.h"

#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/log.h"
#include "controller/kit.h"

#define TOKEN_BYTES 32
#define URL_MAX 1024
#define CA_PEM_MAX (64 * 1024)

static const char *sval(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Standard base64 with padding (a Secret's data), malloc'd; NULL when out
 * of memory. */
static char *base64(const char *in, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)in;
    char *out = malloc((n + 2) / 3 * 4 + 1);
    size_t i, o = 0;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = tab[v >> 6 & 63];
        out[o++] = tab[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

static bool enabled(const trainer_progress_cfg *cfg)
{
    return cfg && cfg->server_url && *cfg->server_url;
}

/* The CA's data value as the Secret holds it (base64; caller frees), or
 * NULL without TLS. */
static char *ca_data(const trainer_progress_cfg *cfg)
{
    if (!cfg->ca_pem || !*cfg->ca_pem || strlen(cfg->ca_pem) > CA_PEM_MAX)
        return NULL;
    return base64(cfg->ca_pem, strlen(cfg->ca_pem));
}

/* The controller reference of obj, or NULL. */
static const json_t *controller_ref(const json_t *obj)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    const json_t *ref;
    size_t i;

    json_array_foreach(refs, i, ref)
        if (json_is_true(json_object_get(ref, "controller")))
            return ref;
    return NULL;
}

/* The job's token into buf (2 * TOKEN_BYTES + 1): cfg's token_for, else
 * random. 0, or -1 with err. */
static int job_token(const trainer_progress_cfg *cfg, const json_t *meta, char *buf,
                     size_t len, ty_error *err)
{
    unsigned char rnd[TOKEN_BYTES];

    if (cfg->token_for) {
        if (cfg->token_for(sval(meta, "namespace") ?: "", sval(meta, "name") ?: "",
                           sval(meta, "uid") ?: "", buf, len) < 0)
            return ty_seterr(err, TY_EINTERNAL, "the progress token cannot be derived");
        return 0;
    }
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return ty_seterr(err, TY_EINTERNAL, "no random bytes for the progress token");
    for (size_t i = 0; i < sizeof(rnd) && 2 * i + 2 < len; i++)
        snprintf(buf + 2 * i, 3, "%02x", rnd[i]);
    return 0;
}

static json_t *new_secret(const trainer_progress_cfg *cfg, const json_t *job,
                          const char *name, ty_error *err)
{
    const json_t *meta = json_object_get(job, "metadata");
    char token[2 * TOKEN_BYTES + 1], *tok64, *ca64;
    json_t *secret, *data;

    if (job_token(cfg, meta, token, sizeof(token), err) < 0)
        return NULL;
    tok64 = base64(token, strlen(token));
    ca64 = ca_data(cfg);
    data = json_pack("{s:s}", "token", tok64 ? tok64 : "");
    if (ca64)
        json_object_set_new(data, "ca.crt", json_string(ca64));
    free(tok64);
    free(ca64);
    secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:[o]}, s:s, s:o}", "apiVersion", "v1",
                       "kind", "Secret", "metadata", "name", name, "namespace",
                       sval(meta, "namespace") ? sval(meta, "namespace") : "", "labels",
                       TRAINER_JOB_NAME_LABEL, sval(meta, "name"), "ownerReferences",
                       kit_owner_ref(job), "type", "Opaque", "data", data);
    if (!secret)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    return secret;
}

int trainer_progress_pod_url(const char *url, char *buf, size_t len)
{
    const char *sep = url ? strstr(url, "://") : NULL, *host, *colon;
    char h[256];
    int n;

    if (!sep || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return -1;
    host = sep + 3;
    colon = strrchr(host, ':');
    if (!colon || colon == host || !colon[1] || strspn(colon + 1, "0123456789") !=
                                                    strlen(colon + 1))
        return -1;
    snprintf(h, sizeof(h), "%.*s", (int)(colon - host), host);
    if (h[0] == '[') { /* already bracketed: the inside */
        size_t hl = strlen(h);
        if (hl < 3 || h[hl - 1] != ']')
            return -1;
        memmove(h, h + 1, hl - 2);
        h[hl - 2] = '\0';
    }
    if (!strcmp(h, "0.0.0.0") || !*h)
        snprintf(h, sizeof(h), "127.0.0.1");
    else if (!strcmp(h, "::"))
        snprintf(h, sizeof(h), "::1");
    n = snprintf(buf, len, "%.*s%s%s%s%s", (int)(host - url), url, strchr(h, ':') ? "[" : "", h,
                 strchr(h, ':') ? "]" : "", colon);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The Secret's data made what cfg says: ca.crt (base64, or NULL to have
 * none) and, when set, the token (base64). */
typedef struct secret_data {
    const char *ca64, *token64;
} secret_data;

static int set_data(json_t *obj, void *arg, ty_error *err)
{
    const secret_data *d = arg;
    json_t *data = json_object_get(obj, "data");
    (void)err;

    if (!json_is_object(data)) {
        data = json_object();
        json_object_set_new(obj, "data", data);
    }
    if (d->ca64)
        json_object_set_new(data, "ca.crt", json_string(d->ca64));
    else
        json_object_del(data, "ca.crt");
    if (d->token64)
        json_object_set_new(data, "token", json_string(d->token64));
    return 0;
}

static bool data_is(const json_t *secret, const char *key, const char *want)
{
    const json_t *have = json_object_get(json_object_get(secret, "data"), key);

    return want ? json_is_string(have) && strcmp(json_string_value(have), want) == 0 : !have;
}

int trainer_progress_ensure_secret(ty_kc *c, const trainer_progress_cfg *cfg,
                                   const json_t *job, ty_error *err)
{
    const json_t *meta = json_object_get(job, "metadata"), *sj, *ref;
    const char *jname = sval(meta, "name"), *ns = sval(meta, "namespace"),
               *uid = sval(meta, "uid");
    char name[320];
    ty_obj *s;
    char *ca64;
    int rc = 0;

    if (!enabled(cfg))
        return 0;
    if (!jname || !uid)
        return ty_seterr(err, TY_EINVALID, "a TrainJob without name or uid");
    ns = ns ? ns : "";
    snprintf(name, sizeof(name), "%s" TRAINER_PROGRESS_SUFFIX, jname);
    for (int attempt = 0; attempt < 2; attempt++) {
        ty_error e;
        ty_error_init(&e);
        s = kc_get(c, "secrets", ns, name, &e);
        if (!s && e.code != TY_ENOTFOUND) {
            ty_seterr(err, e.code, "%s", e.text);
            ty_error_clear(&e);
            return -1;
        }
        ty_error_clear(&e);
        if (!s) {
            json_t *obj = new_secret(cfg, job, name, err);
            if (!obj)
                return -1;
            s = kc_create(c, "secrets", ns, obj, err);
            if (!s && err->code != TY_EEXISTS)
                return -1;
            if (!s) { /* made meanwhile: look at it again */
                ty_error_clear(err);
                continue;
            }
            ty_info("trainjob %s/%s: made its progress token Secret %s", ns, jname, name);
        }
        sj = ty_obj_json(s);
        ref = controller_ref(sj);
        if (ref && sval(ref, "kind") && strcmp(sval(ref, "kind"), "TrainJob") == 0 &&
            sval(ref, "name") && strcmp(sval(ref, "name"), jname) == 0 && sval(ref, "uid") &&
            strcmp(sval(ref, "uid"), uid) != 0 && attempt == 0) {
            /* an earlier TrainJob of this name, gone: its Secret goes too
             * (the garbage collector would take it; the new job cannot wait) */
            kit_delete(c, "secrets", sj, NULL, "trainjob-controller");
            ty_obj_unref(s);
            continue;
        }
        break;
    }
    if (!s)
        return ty_seterr(err, TY_ECONFLICT, "secret \"%s\" changed while being made; will "
                         "retry", name);
    sj = ty_obj_json(s);
    ref = controller_ref(sj);
    if (!ref || !sval(ref, "uid") || strcmp(sval(ref, "uid"), uid) != 0) {
        ty_obj_unref(s);
        return ty_seterr(err, TY_EEXISTS, "secret \"%s\" exists and is not controlled by "
                         "TrainJob \"%s\": the progress token cannot be made", name, jname);
    }
    ca64 = ca_data(cfg);
    {
        secret_data d = {.ca64 = ca64};
        char token[2 * TOKEN_BYTES + 1];
        char *tok64 = NULL;
        if (cfg->token_for && job_token(cfg, meta, token, sizeof(token), err) == 0)
            tok64 = base64(token, strlen(token));
        else if (cfg->token_for)
            rc = -1;
        if (tok64 && !data_is(sj, "token", tok64))
            d.token64 = tok64;
        if (rc == 0 && (!data_is(sj, "ca.crt", ca64) || d.token64)) {
            ty_obj *w = kc_mutate(c, "secrets", ns, name, set_data, &d, 0, err);
            if (!w)
                rc = -1;
            ty_obj_unref(w);
        }
        free(tok64);
    }
    free(ca64);
    ty_obj_unref(s);
    return rc;
}

/* ---- the pod template ------------------------------------------------------ */

/* Removes from array list (of objects) the entries whose key is value. */
static void drop_named(json_t *list, const char *key, const char *value)
{
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *v = sval(json_array_get(list, i), key);
        if (v && strcmp(v, value) == 0)
            json_array_remove(list, i);
    }
}

static json_t *array_member(json_t *obj, const char *key)
{
    json_t *a = json_object_get(obj, key);
    if (!json_is_array(a)) {
        a = json_array();
        json_object_set_new(obj, key, a);
    }
    return a;
}

static void inject_container(json_t *ctr, const json_t *env)
{
    json_t *mounts = array_member(ctr, "volumeMounts"), *list = array_member(ctr, "env");
    const json_t *e;
    size_t i;

    drop_named(mounts, "name", TRAINER_PROGRESS_VOLUME);
    drop_named(mounts, "mountPath", TRAINER_PROGRESS_DIR);
    json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name", TRAINER_PROGRESS_VOLUME,
                                            "mountPath", TRAINER_PROGRESS_DIR, "readOnly", 1));
    json_array_foreach(env, i, e) {
        drop_named(list, "name", sval(e, "name"));
        json_array_append_new(list, json_deep_copy(e));
    }
    /* the three names go whether or not TLS is on: a CA path left from a
     * template written for TLS would name no file */
    if (json_array_size(env) == 2)
        drop_named(list, "name", "KUBEFLOW_TRAINER_SERVER_CA_CERT");
}

void trainer_progress_inject(const trainer_progress_cfg *cfg, const json_t *job,
                             json_t *template)
{
    const json_t *meta = json_object_get(job, "metadata");
    json_t *spec, *vols, *env, *items, *c;
    char url[URL_MAX];
    bool tls;
    size_t i;

    if (!enabled(cfg) || !json_is_object(template))
        return;
    spec = json_object_get(template, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(template, "spec", spec);
    }
    tls = cfg->ca_pem && *cfg->ca_pem;
    snprintf(url, sizeof(url), "%s/apis/trainer.kubeflow.org/v1alpha1/namespaces/%s/trainjobs/"
             "%s/status", cfg->server_url, sval(meta, "namespace") ? sval(meta, "namespace")
                                                                   : "default",
             sval(meta, "name") ? sval(meta, "name") : "");
    env = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "KUBEFLOW_TRAINER_SERVER_URL", "value",
                    url, "name", "KUBEFLOW_TRAINER_SERVER_TOKEN", "value",
                    TRAINER_PROGRESS_DIR "/token");
    items = json_pack("[{s:s, s:s}]", "key", "token", "path", "token");
    if (tls) {
        json_array_append_new(env, json_pack("{s:s, s:s}", "name",
                                             "KUBEFLOW_TRAINER_SERVER_CA_CERT", "value",
                                             TRAINER_PROGRESS_DIR "/ca.crt"));
        json_array_append_new(items, json_pack("{s:s, s:s}", "key", "ca.crt", "path", "ca.crt"));
    }
    vols = array_member(spec, "volumes");
    drop_named(vols, "name", TRAINER_PROGRESS_VOLUME);
    {
        char secret[320];
        snprintf(secret, sizeof(secret), "%s" TRAINER_PROGRESS_SUFFIX,
                 sval(meta, "name") ? sval(meta, "name") : "");
        json_array_append_new(vols, json_pack("{s:s, s:{s:s, s:o}}", "name",
                                              TRAINER_PROGRESS_VOLUME, "secret", "secretName",
                                              secret, "items", items));
    }
    json_array_foreach(array_member(spec, "containers"), i, c)
        inject_container(c, env);
    if (json_array_size(json_object_get(spec, "initContainers")))
        json_array_foreach(json_object_get(spec, "initContainers"), i, c)
            inject_container(c, env);
    json_decref(env);
}

int trainer_progress_prepare(ty_kc *c, const trainer_progress_cfg *cfg, const json_t *job,
                             json_t *template, ty_error *err)
{
    if (trainer_progress_ensure_secret(c, cfg, job, err) < 0)
        return -1;
    trainer_progress_inject(cfg, job, template);
    return 0;
}

/* ---- the process's setting ---- */

static pthread_mutex_t setting_mu = PTHREAD_MUTEX_INITIALIZER;
static int setting_state; /* 0 off, -1 pending, 1 on */
static char *setting_url, *setting_ca;
static int (*setting_token_for)(const char *, const char *, const char *, char *, size_t);

void trainer_progress_expect(void)
{
    pthread_mutex_lock(&setting_mu);
    if (setting_state == 0)
        setting_state = -1;
    pthread_mutex_unlock(&setting_mu);
}

void trainer_progress_configure_derived(const char *server_url, const char *ca_pem,
                                        int (*token_for)(const char *, const char *,
                                                         const char *, char *, size_t))
{
    trainer_progress_configure(server_url, ca_pem);
    pthread_mutex_lock(&setting_mu);
    setting_token_for = token_for;
    pthread_mutex_unlock(&setting_mu);
}

void trainer_progress_configure(const char *server_url, const char *ca_pem)
{
    char *u = server_url ? strdup(server_url) : NULL;
    char *c = ca_pem && *ca_pem ? strdup(ca_pem) : NULL;

    pthread_mutex_lock(&setting_mu);
    free(setting_url);
    free(setting_ca);
    setting_url = u;
    setting_ca = c;
    setting_token_for = NULL;
    setting_state = u ? 1 : 0;
    pthread_mutex_unlock(&setting_mu);
}

int trainer_progress_current(trainer_progress_cfg *out)
{
    int st;

    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&setting_mu);
    st = setting_state;
    if (st == 1) {
        out->server_url = strdup(setting_url);
        out->ca_pem = setting_ca ? strdup(setting_ca) : NULL;
        out->token_for = setting_token_for;
        if (!out->server_url || (setting_ca && !out->ca_pem)) {
            trainer_progress_cfg_clear(out);
            st = -1; /* out of memory: as if not known yet, retried */
        }
    }
    pthread_mutex_unlock(&setting_mu);
    return st;
}

void trainer_progress_cfg_clear(trainer_progress_cfg *cfg)
{
    free((char *)cfg->server_url);
    free((char *)cfg->ca_pem);
    memset(cfg, 0, sizeof(*cfg));
}
