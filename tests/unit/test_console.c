/* test_console.c - the web console's files at /ui/ (src/server/console.c):
 * served without credentials from a server that asks for them everywhere
 * else, each with its type, an ETag that answers 304, and the security
 * headers; the guard still refuses a foreign Origin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/authn.h"
#include "server/console.h"
#include "server/server.h"
#include "store/store.h"
#include "tmpdir.h"

typedef struct fixture {
    char dir[64];
    char url[64];
    ty_store *store;
    ty_authn *authn;
    ty_server *srv;
} fixture;

typedef struct reply {
    long status;
    char headers[8192];
    size_t hlen;
    size_t body_len;
    char body[256]; /* the start of it */
} reply;

static size_t on_header(char *data, size_t size, size_t n, void *cls)
{
    reply *r = cls;
    size_t len = size * n;
    if (r->hlen + len < sizeof(r->headers)) {
        memcpy(r->headers + r->hlen, data, len);
        r->hlen += len;
        r->headers[r->hlen] = '\0';
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *cls)
{
    reply *r = cls;
    size_t len = size * n;
    if (r->body_len < sizeof(r->body) - 1) {
        size_t take = len < sizeof(r->body) - 1 - r->body_len ? len : sizeof(r->body) - 1 - r->body_len;
        memcpy(r->body + r->body_len, data, take);
        r->body[r->body_len + take] = '\0';
    }
    r->body_len += len;
    return len;
}

/* A request; extra is one more header or NULL. */
static void request(fixture *f, const char *method, const char *path, const char *extra,
                    reply *r)
{
    char url[256];
    struct curl_slist *h = extra ? curl_slist_append(NULL, extra) : NULL;
    CURL *c = curl_easy_init();

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "%s%s", f->url, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
}

/* The value of a response header, copied into out ("" when absent). */
static const char *header(const reply *r, const char *name, char *out, size_t len)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (const char *p = r->headers; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
        if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
            const char *v = p + n + 1;
            while (*v == ' ')
                v++;
            size_t vl = strcspn(v, "\r\n");
            snprintf(out, len, "%.*s", (int)vl, v);
            return out;
        }
    }
    return out;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;
    char tokens[128];
    FILE *fp;

    ty_error_init(&err);
    strcpy(f->dir, "/tmp/ty-test-console.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(tokens, sizeof(tokens), "%s/admin.csv", f->dir);
    assert_non_null(fp = fopen(tokens, "w"));
    fputs("secret,admin,admin,system:masters\n", fp);
    fclose(fp);
    authn_opts ao = {.admin_token_file = tokens, .reload_ms = -1};
    assert_non_null(f->authn = authn_new(&ao, &err));
    assert_non_null(f->store = store_open(f->dir, &err));
    server_opts so = {.address = "127.0.0.1", .data_dir = f->dir, .authn = f->authn};
    f->srv = server_start(f->store, &so, &err);
    if (!f->srv)
        fail_msg("server_start: %s", err.text);
    server_url(f->srv, f->url, sizeof(f->url));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    server_stop(f->srv);
    store_close(f->store);
    authn_free(f->authn);
    tmpdir_remove(f->dir);
    free(f);
    return 0;
}

static void assert_security_headers(const reply *r)
{
    char v[512];
    assert_non_null(strstr(header(r, "Content-Security-Policy", v, sizeof(v)),
                           "script-src 'self'"));
    assert_non_null(strstr(v, "default-src 'none'"));
    assert_non_null(strstr(v, "frame-ancestors 'none'"));
    assert_null(strstr(v, "unsafe-inline"));
    assert_string_equal(header(r, "X-Frame-Options", v, sizeof(v)), "DENY");
    assert_string_equal(header(r, "Referrer-Policy", v, sizeof(v)), "no-referrer");
    assert_string_equal(header(r, "X-Content-Type-Options", v, sizeof(v)), "nosniff");
}

/* Every file is served, without credentials, with its type and headers. */
static void test_files_and_headers(void **state)
{
    fixture *f = *state;
    char v[512], path[128];
    reply r;

    request(f, "GET", "/ui/", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(header(&r, "Content-Type", v, sizeof(v)), "text/html; charset=utf-8");
    assert_non_null(strstr(r.body, "<!doctype html>"));
    assert_security_headers(&r);
    assert_true(console_nassets >= 3);
    for (size_t i = 0; i < console_nassets; i++) {
        snprintf(path, sizeof(path), "/ui/%s", console_assets[i].name);
        request(f, "GET", path, NULL, &r);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.body_len, console_assets[i].len);
        assert_string_equal(header(&r, "Content-Type", v, sizeof(v)),
                            console_content_type(console_assets[i].name));
        assert_string_equal(header(&r, "ETag", v, sizeof(v)), console_assets[i].etag);
        assert_security_headers(&r);
    }
    assert_string_equal(console_content_type("app.js"), "text/javascript; charset=utf-8");
    assert_string_equal(console_content_type("style.css"), "text/css; charset=utf-8");
    assert_string_equal(console_content_type("icon.svg"), "image/svg+xml");
    /* the API itself still wants credentials */
    request(f, "GET", "/api/v1/namespaces", NULL, &r);
    assert_int_equal(r.status, 401);
}

static void test_redirect_etag_and_errors(void **state)
{
    fixture *f = *state;
    char v[512], inm[128];
    reply r;

    request(f, "GET", "/ui", NULL, &r);
    assert_int_equal(r.status, 301);
    assert_string_equal(header(&r, "Location", v, sizeof(v)), "/ui/");

    request(f, "HEAD", "/ui/app.js", NULL, &r);
    assert_int_equal(r.status, 200);
    snprintf(inm, sizeof(inm), "If-None-Match: W/\"x\", %s", header(&r, "ETag", v, sizeof(v)));
    request(f, "GET", "/ui/app.js", inm, &r);
    assert_int_equal(r.status, 304);
    assert_int_equal(r.body_len, 0);
    request(f, "GET", "/ui/app.js", "If-None-Match: \"stale\"", &r);
    assert_int_equal(r.status, 200);

    request(f, "GET", "/ui/missing.js", NULL, &r);
    assert_int_equal(r.status, 404);
    request(f, "GET", "/ui/../api/v1/namespaces", NULL, &r); /* curl squashes ..: /api... 401 */
    assert_true(r.status == 404 || r.status == 401);
    request(f, "GET", "/ui/x/index.html", NULL, &r);
    assert_int_equal(r.status, 404);
    request(f, "GET", "/uix", NULL, &r); /* not the console: the API's 401 */
    assert_int_equal(r.status, 401);
    request(f, "POST", "/ui/index.html", NULL, &r);
    assert_int_equal(r.status, 405);
    assert_string_equal(header(&r, "Allow", v, sizeof(v)), "GET, HEAD");
}

/* The page's own origin passes the guard; any other is still refused. */
static void test_origin(void **state)
{
    fixture *f = *state;
    char origin[128];
    reply r;

    snprintf(origin, sizeof(origin), "Origin: %s", f->url);
    request(f, "GET", "/ui/", origin, &r);
    assert_int_equal(r.status, 200);
    request(f, "GET", "/ui/", "Origin: http://attacker.example", &r);
    assert_int_equal(r.status, 403);
    request(f, "GET", "/ui/", "Host: attacker.example", &r);
    assert_int_equal(r.status, 403);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_files_and_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_redirect_etag_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_origin, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
