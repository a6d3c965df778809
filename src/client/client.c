/* client.c - libcurl-based HTTP client. */
#include "client/client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ty_client {
    CURL *curl;
    char *base;
    ty_kc *kc;          /* the TLS settings and credentials (owned); NULL = none */
    char *auth_header;  /* "Authorization: Bearer ..." or NULL */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

ty_client *client_new(const char *base_url, ty_error *err)
{
    ty_client *c;

    pthread_once(&curl_once, curl_init_once);
    c = calloc(1, sizeof(*c));
    if (!c || !(c->curl = curl_easy_init())) {
        free(c);
        ty_seterr(err, TY_EINTERNAL, "cannot initialise libcurl");
        return NULL;
    }
    c->base = strdup(base_url);
    /* Trailing slashes would double up with the paths we append. */
    for (size_t n = strlen(c->base); n > 0 && c->base[n - 1] == '/'; n--)
        c->base[n - 1] = '\0';
    return c;
}

/* Takes kc (kc_http_*): its server becomes the base URL, its TLS settings
 * go on the handle once, its bearer token into every request's headers. */
static ty_client *client_with_kc(ty_kc *kc, ty_error *err)
{
    ty_client *c = kc ? client_new(kc_http_server(kc), err) : NULL;
    struct curl_slist *hdrs = NULL;

    if (!c) {
        kc_free(kc);
        return NULL;
    }
    c->kc = kc;
    kc_http_setup_handle(kc, c->curl, &hdrs);
    for (struct curl_slist *h = hdrs; h; h = h->next)
        if (strncasecmp(h->data, "Authorization:", 14) == 0 && !c->auth_header)
            c->auth_header = strdup(h->data);
    for (struct curl_slist *h = hdrs; h; h = h->next)
        explicit_bzero(h->data, strlen(h->data));
    curl_slist_free_all(hdrs);
    return c;
}

ty_client *client_new_opts(const kc_http_opts *o, ty_error *err)
{
    return client_with_kc(kc_http_new(o, err), err);
}

ty_client *client_from_kubeconfig(const char *path, const char *context, const char *server,
                                  ty_error *err)
{
    return client_with_kc(kc_http_from_kubeconfig_at(path, context, server, err), err);
}

void client_free(ty_client *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->curl);
    kc_free(c->kc);
    if (c->auth_header)
        explicit_bzero(c->auth_header, strlen(c->auth_header));
    free(c->auth_header);
    free(c->base);
    free(c);
}

const char *client_base_url(const ty_client *c)
{
    return c->base;
}

void client_resp_free(client_resp *resp)
{
    ty_buf_free(&resp->body);
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    ty_buf *b = arg;
    /* Responses are capped so a runaway server cannot exhaust memory. */
    if (b->len + size * n > (size_t)512 * 1024 * 1024)
        return 0;
    return ty_buf_append(b, data, size * n) == 0 ? size * n : 0;
}

/* A request path with a "." or ".." segment is refused, never sent: URL
 * rules make `trainyard delete pods ..` a DELETE of the namespace itself
 * (and `../..` of every namespace). client-go refuses such names too. */
static int check_path(const char *path, ty_error *err)
{
    const char *seg = path, *end = path + strcspn(path, "?");

    while (seg < end) {
        const char *next = memchr(seg, '/', (size_t)(end - seg));
        size_t n = (size_t)((next ? next : end) - seg);
        if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return ty_seterr(err, TY_EBADREQUEST, "invalid request path %.*s: a name may not "
                             "be \".\" or \"..\"", (int)(end - path), path);
        seg = next ? next + 1 : end;
    }
    return 0;
}

static int perform(ty_client *c, const char *method, const char *path, struct curl_slist *hdrs,
                   const char *body, size_t len, long *status, ty_error *err)
{
    char url[8192];
    CURLcode rc;

    if (check_path(path, err) < 0) {
        *status = 0;
        return -1;
    }
    snprintf(url, sizeof(url), "%s%s", c->base, path);
    if (c->auth_header)
        hdrs = curl_slist_append(hdrs, c->auth_header);
    curl_easy_setopt(c->curl, CURLOPT_URL, url);
    curl_easy_setopt(c->curl, CURLOPT_PATH_AS_IS, 1L); /* the path as built, never squashed */
    curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    }
    rc = curl_easy_perform(c->curl);
    if (rc != CURLE_OK) {
        *status = 0;
        return ty_seterr(err, TY_EUNAVAILABLE, "cannot reach the server at %s: %s", c->base,
                         curl_easy_strerror(rc));
    }
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

int client_request(ty_client *c, const char *method, const char *path, const char *ctype,
                   const char *body, size_t len, const char *accept, client_resp *resp,
                   ty_error *err)
{
    struct curl_slist *hdrs = NULL;
    char h[512];
    int rc;

    memset(resp, 0, sizeof(*resp));
    snprintf(h, sizeof(h), "Accept: %s", accept ? accept : "application/json");
    hdrs = curl_slist_append(hdrs, h);
    if (ctype) {
        snprintf(h, sizeof(h), "Content-Type: %s", ctype);
        hdrs = curl_slist_append(hdrs, h);
    }
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &resp->body);
    rc = perform(c, method, path, hdrs, body, len, &resp->status, err);
    curl_slist_free_all(hdrs);
    return rc;
}

typedef struct stream_ctx {
    CURL *curl;
    FILE *out;
    ty_buf *errbody;
} stream_ctx;

static size_t on_stream(char *data, size_t size, size_t n, void *arg)
{
    stream_ctx *sc = arg;
    long status = 0;
    curl_easy_getinfo(sc->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300)
        return on_body(data, size, n, sc->errbody);
    size_t w = fwrite(data, size, n, sc->out);
    fflush(sc->out);
    return w * size;
}

int client_stream(ty_client *c, const char *path, FILE *out, long *status, ty_buf *errbody,
                  ty_error *err)
{
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: */*");
    stream_ctx sc = {.curl = c->curl, .out = out, .errbody = errbody};
    int rc;
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &sc);
    rc = perform(c, "GET", path, hdrs, NULL, 0, status, err);
    curl_slist_free_all(hdrs);
    return rc;
}

ty_errcode client_errcode(long status)
{
    switch (status) {
    case 400: return TY_EBADREQUEST;
    case 401: return TY_EUNAUTH;
    case 403: return TY_EFORBIDDEN;
    case 404: return TY_ENOTFOUND;
    case 405: return TY_EMETHOD;
    case 406: return TY_ENOTACCEPT;
    case 409: return TY_ECONFLICT;
    case 410: return TY_EGONE;
    case 413: return TY_ETOOLARGE;
    case 415: return TY_EMEDIATYPE;
    case 422: return TY_EINVALID;
    case 429: return TY_ETOOMANY;
    case 503: return TY_EUNAVAILABLE;
    case 504: return TY_ETIMEOUT;
    default: return TY_EINTERNAL;
    }
}

json_t *client_call_json(ty_client *c, const char *method, const char *path, const char *ctype,
                         const json_t *body, ty_error *err)
{
    client_resp resp;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_t *v = NULL;
    int rc;

    rc = client_request(c, method, path, body ? (ctype ? ctype : "application/json") : NULL,
                        text, text ? strlen(text) : 0, "application/json", &resp, err);
    free(text);
    if (rc < 0)
        return NULL;
    if (resp.body.len)
        v = json_loadb(resp.body.data, resp.body.len, 0, NULL);
    if (resp.status >= 200 && resp.status < 300) {
        client_resp_free(&resp);
        if (!v)
            v = json_object();
        return v;
    }
    const char *msg = json_string_value(json_object_get(v, "message"));
    const char *reason = json_string_value(json_object_get(v, "reason"));
    ty_errcode code = client_errcode(resp.status);
    /* 409 means two things; the Status reason tells which. */
    if (resp.status == 409 && reason && strcmp(reason, "AlreadyExists") == 0)
        code = TY_EEXISTS;
    ty_seterr(err, code, "%s",
              msg ? msg : (resp.body.data ? resp.body.data : "the server sent no message"));
    json_t *causes = json_object_get(json_object_get(v, "details"), "causes");
    if (err && json_is_array(causes)) {
        json_decref(err->causes);
        err->causes = json_deep_copy(causes);
    }
    json_decref(v);
    client_resp_free(&resp);
    return NULL;
}

/* "/name" into buf, with '/' and '%' escaped: a name is one segment of the
 * path (`get pods a/b` asks for the pod "a/b", not a's subresource b). */
static void segment(char *buf, size_t len, const char *name)
{
    size_t o = 0;

    if (len < 2) {
        if (len)
            buf[0] = '\0';
        return;
    }
    buf[o++] = '/';
    for (const char *c = name; *c && o + 4 < len; c++) {
        if (*c == '/' || *c == '%')
            o += (size_t)snprintf(buf + o, len - o, "%%%02X", (unsigned char)*c);
        else
            buf[o++] = *c;
    }
    buf[o] = '\0';
}

void client_resource_path(const api_resource *res, const char *ns, const char *name,
                          char *buf, size_t len)
{
    int n;
    if (*res->group)
        n = snprintf(buf, len, "/apis/%s/%s", res->group, res->version);
    else
        n = snprintf(buf, len, "/api/%s", res->version);
    if (res->namespaced && ns)
        n += snprintf(buf + n, len - (size_t)n, "/namespaces/%s", ns);
    n += snprintf(buf + n, len - (size_t)n, "/%s", res->plural);
    if (name)
        segment(buf + n, len - (size_t)n, name);
}

const api_resource *client_resolve(const char *what)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    char name[128];
    const char *group = NULL;
    const char *dot;

    snprintf(name, sizeof(name), "%s", what);
    dot = strchr(name, '.');
    if (dot) {
        name[dot - name] = '\0';
        group = what + (dot - name) + 1;
    }
    for (size_t i = 0; i < n; i++) {
        const api_resource *r = all[i];
        bool hit = strcasecmp(name, r->plural) == 0 || strcasecmp(name, r->singular) == 0 ||
                   strcasecmp(name, r->kind) == 0;
        for (int j = 0; j < 4 && r->short_names[j] && !hit; j++)
            hit = strcasecmp(name, r->short_names[j]) == 0;
        if (!hit)
            continue;
        if (group && strcasecmp(group, r->group) != 0)
            continue;
        /* Without a group, a core kind wins over a same-named CRD (kubectl's rule),
         * and "jobs" alone means Volcano's Job here since batch/v1 is not served. */
        return r;
    }
    return NULL;
}

char *client_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    char *copy = strdup(e ? e : "");
    curl_free(e);
    return copy;
}
