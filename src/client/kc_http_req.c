/* kc_http_req.c - the HTTP client's requests: a pool of libcurl handles
 * (one kept-alive connection each), the rate limiter, authentication and
 * TLS, retries, and errors made from the Status the server answers with. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "client/client.h"
#include "client/kc_http_int.h"

/* Retries of one request: a read after a failed connection, a 429 or a
 * 5xx; any request after a 429 (kube-apiserver's priority and fairness
 * refuses before doing anything) or a connection that was never made. */
#define KH_RETRIES 5
#define KH_BACKOFF_MS 100
#define KH_BACKOFF_MAX_MS 5000
/* A Retry-After above this is not waited for in full. */
#define KH_RETRY_AFTER_MAX_S 30
/* A service account token is read again this often (kubelet rotates it). */
#define KH_TOKEN_REREAD_MS 60000
#define KH_TOKEN_MAX 16384

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};

    while (ns > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* A token bucket: qps tokens a second up to burst. A request takes one
 * now, and when none is left takes one on credit and waits for it: the
 * waiters are served in the order they came, each qps-th of a second
 * apart. */
void kh_rate_wait(kh_client *c)
{
    int64_t now, wait_ns = 0;

    if (c->qps <= 0)
        return;
    pthread_mutex_lock(&c->mu);
    now = mono_ns();
    if (c->refill_ns) /* else the bucket is as made: full */
        c->tokens += (double)(now - c->refill_ns) / 1e9 * c->qps;
    if (c->tokens > c->burst)
        c->tokens = c->burst;
    c->refill_ns = now;
    c->tokens -= 1;
    if (c->tokens < 0)
        wait_ns = (int64_t)(-c->tokens / c->qps * 1e9);
    pthread_mutex_unlock(&c->mu);
    sleep_ns(wait_ns);
}

void kc_http_set_rate_limit(ty_kc *kc, double qps, int burst)
{
    kh_client *c = (kh_client *)kc;

    pthread_mutex_lock(&c->mu);
    c->qps = qps ? qps : KC_HTTP_DEFAULT_QPS;
    c->burst = burst > 0 ? burst : KC_HTTP_DEFAULT_BURST;
    c->tokens = c->burst;
    c->refill_ns = 0;
    pthread_mutex_unlock(&c->mu);
}

/* The token of token_file, read again once a minute; NULL when unreadable
 * (the request then goes without, and the server says 401). Caller frees. */
static char *file_token(kh_client *c)
{
    char *tok = NULL;

    pthread_mutex_lock(&c->mu);
    if (!c->file_token || ty_now_ms() - c->file_token_ms >= KH_TOKEN_REREAD_MS) {
        FILE *f = fopen(c->token_file, "re");
        char buf[KH_TOKEN_MAX];
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

        if (f)
            fclose(f);
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
            n--;
        buf[n] = '\0';
        if (n) {
            free(c->file_token);
            c->file_token = strdup(buf);
            c->file_token_ms = ty_now_ms();
        }
    }
    if (c->file_token)
        tok = strdup(c->file_token);
    pthread_mutex_unlock(&c->mu);
    return tok;
}

void kc_http_setup_handle(ty_kc *kc, void *curl, struct curl_slist **hdrs)
{
    kh_client *c = (kh_client *)kc;
    CURL *h = curl;
    char *ftok = NULL;
    const char *tok = c->token;

    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    if (c->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (c->ca.data)
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &c->ca);
    if (c->cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
    if (c->cert.data)
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &c->cert);
    if (c->key_file)
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
    if (c->key.data)
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &c->key);
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (!tok && c->token_file)
        tok = ftok = file_token(c);
    if (tok) {
        ty_buf b = {0};

        if (ty_buf_printf(&b, "Authorization: Bearer %s", tok) == 0)
            *hdrs = curl_slist_append(*hdrs, b.data);
        ty_buf_free(&b);
    } else if (c->userpwd) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERPWD, c->userpwd);
    }
    free(ftok);
}

const char *kc_http_server(const ty_kc *kc)
{
    return ((const kh_client *)kc)->server;
}

void kh_setup(kh_client *c, CURL *h, struct curl_slist **hdrs)
{
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)c->stall_s);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);
    kc_http_setup_handle(&c->base, h, hdrs);
    *hdrs = curl_slist_append(*hdrs, "Accept: application/json");
    *hdrs = curl_slist_append(*hdrs, "Expect:");
}

/* ---- paths ---- */

static int put_escaped(ty_buf *b, const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    int rc = e ? ty_buf_puts(b, e) : -1;

    curl_free(e);
    return rc;
}

int kh_path(ty_buf *b, const api_resource *res, const char *ns, const char *name,
            const char *sub)
{
    int rc = *res->group ? ty_buf_printf(b, "/apis/%s/%s", res->group, res->version)
                         : ty_buf_printf(b, "/api/%s", res->version);

    if (rc == 0 && res->namespaced && ns && *ns)
        rc = ty_buf_puts(b, "/namespaces/") || put_escaped(b, ns);
    if (rc == 0)
        rc = ty_buf_printf(b, "/%s", res->plural);
    if (rc == 0 && name)
        rc = ty_buf_puts(b, "/") || put_escaped(b, name);
    if (rc == 0 && sub)
        rc = ty_buf_printf(b, "/%s", sub);
    return rc ? -1 : 0;
}

int kh_query(ty_buf *b, const char *key, const char *value)
{
    if (!value)
        return 0;
    if (ty_buf_printf(b, "%c%s=", b->data && strchr(b->data, '?') ? '&' : '?', key) < 0)
        return -1;
    return put_escaped(b, value);
}

/* ---- one request ---- */

typedef struct sink {
    ty_buf *b;
    size_t max;
    bool over;
} sink;

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    sink *s = arg;
    size_t total = size * n;

    if (s->b->len + total > s->max) { /* a runaway answer is cut off */
        s->over = true;
        return 0;
    }
    return ty_buf_append(s->b, data, total) == 0 ? total : 0;
}

static CURL *take_handle(kh_client *c)
{
    CURL *h = NULL;

    pthread_mutex_lock(&c->mu);
    if (c->npool)
        h = c->pool[--c->npool];
    pthread_mutex_unlock(&c->mu);
    if (h)
        curl_easy_reset(h); /* keeps its connection */
    return h ? h : curl_easy_init();
}

static void give_handle(kh_client *c, CURL *h)
{
    pthread_mutex_lock(&c->mu);
    if (c->npool < KH_POOL_MAX) {
        c->pool[c->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    curl_easy_cleanup(h);
}

/* One try: CURLE_OK with resp->status set when an answer came. */
static CURLcode perform(kh_client *c, const char *method, const char *url, const char *ctype,
                        const char *body, size_t len, kh_resp *resp, int64_t *retry_after_s,
                        bool *too_large)
{
    struct curl_slist *hdrs = NULL;
    sink s = {.b = &resp->body, .max = c->max_body};
    curl_off_t ra = 0;
    CURL *h = take_handle(c);
    CURLcode cc;

    if (!h)
        return CURLE_OUT_OF_MEMORY;
    kh_setup(c, h, &hdrs);
    if (ctype) {
        ty_buf ct = {0};

        if (ty_buf_printf(&ct, "Content-Type: %s", ctype) == 0)
            hdrs = curl_slist_append(hdrs, ct.data);
        ty_buf_free(&ct);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    else
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    cc = curl_easy_perform(h);
    if (cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
        if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
            *retry_after_s = ra > KH_RETRY_AFTER_MAX_S ? KH_RETRY_AFTER_MAX_S : (int64_t)ra;
    }
    *too_large = s.over;
    curl_slist_free_all(hdrs);
    give_handle(c, h);
    return cc;
}

/* Whether a request may be sent again after a failure of this kind. */
static bool retryable(bool idempotent, CURLcode cc, long status)
{
    if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CERTPROBLEM ||
        cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_UNSUPPORTED_PROTOCOL ||
        cc == CURLE_URL_MALFORMAT)
        return false; /* it would fail the same way again */
    if (cc != CURLE_OK) /* a connection never made sent nothing */
        return idempotent || cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST;
    if (status == 429)
        return true;
    return idempotent && status >= 500 && status != 501;
}

int kh_request(kh_client *c, const char *method, const char *path, const char *ctype,
               const char *body, size_t len, kh_resp *resp, ty_error *err)
{
    bool idempotent = strcmp(method, "GET") == 0;
    ty_buf url = {0};
    int rc = -1;

    memset(resp, 0, sizeof(*resp));
    if (ty_buf_printf(&url, "%s%s", c->server, path) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    for (int attempt = 0;; attempt++) {
        int64_t retry_after_s = 0, backoff_ms;
        bool too_large = false;
        CURLcode cc;

        kh_rate_wait(c);
        ty_buf_free(&resp->body);
        resp->status = 0;
        cc = perform(c, method, url.data, ctype, body, len, resp, &retry_after_s, &too_large);
        if (too_large) {
            ty_seterr(err, TY_ETOOLARGE, "the answer to %s %s exceeds %zu bytes", method, path,
                      c->max_body);
            break;
        }
        if (attempt >= KH_RETRIES || !retryable(idempotent, cc, resp->status)) {
            if (cc == CURLE_OK)
                rc = 0;
            else
                ty_seterr(err, TY_EUNAVAILABLE, "cannot reach the server at %s: %s", c->server,
                          curl_easy_strerror(cc));
            break;
        }
        backoff_ms = (int64_t)KH_BACKOFF_MS << attempt;
        if (backoff_ms > KH_BACKOFF_MAX_MS)
            backoff_ms = KH_BACKOFF_MAX_MS;
        backoff_ms += rand() % (backoff_ms / 4 + 1); /* apart from the others */
        if (retry_after_s * 1000 > backoff_ms)
            backoff_ms = retry_after_s * 1000;
        sleep_ns(backoff_ms * 1000000);
    }
    if (rc < 0) {
        ty_buf_free(&resp->body);
        resp->status = 0;
    }
    ty_buf_free(&url);
    return rc;
}

void kh_error_from_answer(long status, const char *body, size_t len, ty_error *err)
{
    json_t *v = len ? json_loadb(body, len, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(v, "message"));
    const char *reason = json_string_value(json_object_get(v, "reason"));
    json_t *causes = json_object_get(json_object_get(v, "details"), "causes");
    ty_errcode code = client_errcode(status);

    /* 409 is two things; the Status reason says which */
    if (status == 409 && reason && strcmp(reason, "AlreadyExists") == 0)
        code = TY_EEXISTS;
    if (msg)
        ty_seterr(err, code, "%s", msg);
    else if (len)
        ty_seterr(err, code, "the server answered %ld: %.*s", status, len > 200 ? 200 : (int)len,
                  body);
    else
        ty_seterr(err, code, "the server answered %ld", status);
    if (err && json_is_array(causes)) {
        json_decref(err->causes);
        err->causes = json_deep_copy(causes);
    }
    json_decref(v);
}

json_t *kh_call(kh_client *c, const char *method, const char *path, const char *ctype,
                const json_t *body, long *status, ty_error *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    kh_resp resp;
    json_t *v = NULL;

    if (body && !text) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (kh_request(c, method, path, body ? (ctype ? ctype : "application/json") : NULL, text,
                   text ? strlen(text) : 0, &resp, err) < 0) {
        free(text);
        return NULL;
    }
    free(text);
    if (status)
        *status = resp.status;
    if (resp.status >= 200 && resp.status < 300) {
        json_error_t jerr;

        v = resp.body.len ? json_loadb(resp.body.data, resp.body.len, 0, &jerr) : json_object();
        if (!v)
            ty_seterr(err, TY_EINTERNAL, "%s %s: the answer is not JSON: %s", method, path,
                      jerr.text);
    } else {
        kh_error_from_answer(resp.status, resp.body.data, resp.body.len, err);
    }
    ty_buf_free(&resp.body);
    return v;
}
