/* test_progress_http.c - the TrainJob progress endpoint (server/progress.h)
 * in process, through HTTP: a job's token writes that job's
 * status.trainerStatus and no other's, whatever the Content-Type; neither
 * a user's token nor a Secret the job does not control opens it; a second
 * update within 5 s is 429 with Retry-After; and only system:masters may
 * write a Secret controlled by a TrainJob through the API. The same as
 * tests/e2e/t1450-trainjob-progress.sh, small, so that the sanitizers see
 * the handler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/kinds.h"
#include "base/timeutil.h"
#include "server/authn.h"
#include "server/server.h"
#include "store/store.h"
#include "tmpdir.h"

#define TJ_PATH "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/"

typedef struct fixture {
    char dir[64];
    char url[64];
    ty_store *store;
    ty_authn *authn;
    ty_server *srv;
    char uid_a[64], uid_b[64];
} fixture;

typedef struct reply {
    long status;
    char headers[4096];
    size_t hlen;
    char body[4096];
    size_t blen;
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
    if (r->blen + len < sizeof(r->body)) {
        memcpy(r->body + r->blen, data, len);
        r->blen += len;
        r->body[r->blen] = '\0';
    }
    return len;
}

/* POST body to path with bearer token (NULL: none) and Content-Type ctype
 * (NULL: none). */
static void post(fixture *f, const char *path, const char *token, const char *ctype,
                 const char *body, reply *r)
{
    char url[256], auth[256], ct[128];
    struct curl_slist *h = NULL;
    CURL *c = curl_easy_init();

    memset(r, 0, sizeof(*r));
    snprintf(url, sizeof(url), "%s%s", f->url, path);
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    snprintf(ct, sizeof(ct), "Content-Type:%s%s", ctype ? " " : "", ctype ? ctype : "");
    h = curl_slist_append(h, ct);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
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

static void put_job(fixture *f, const char *name, char *uid, size_t len)
{
    ty_error err;
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}, s:b}}", "apiVersion",
                            "trainer.kubeflow.org/v1alpha1", "kind", "TrainJob", "metadata",
                            "name", name, "namespace", "default", "spec", "runtimeRef", "name",
                            "torch-distributed", "suspend", 1);
    store_obj *o;

    ty_error_init(&err);
    o = store_create(f->store, api_store_key(&api_trainjob), "default", obj, &err);
    if (!o)
        fail_msg("create %s: %s", name, err.text);
    snprintf(uid, len, "%s", json_string_value(json_object_get(
                                 json_object_get(store_obj_json(o), "metadata"), "uid")));
    store_obj_unref(o);
    json_decref(obj);
}

/* The token Secret of job name, controlled by uid, token base64 tok64. */
static void put_secret(fixture *f, const char *name, const char *uid, const char *tok64)
{
    char sname[128];
    ty_error err;
    json_t *obj;
    store_obj *o;

    snprintf(sname, sizeof(sname), "%s-progress-token", name);
    obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, s:{s:s}}",
                    "apiVersion", "v1", "kind", "Secret", "metadata", "name", sname,
                    "namespace", "default", "ownerReferences", "apiVersion",
                    "trainer.kubeflow.org/v1alpha1", "kind", "TrainJob", "name", name, "uid",
                    uid, "controller", 1, "data", "token", tok64);
    ty_error_init(&err);
    o = store_create(f->store, "secrets", "default", obj, &err);
    if (!o)
        fail_msg("create %s: %s", sname, err.text);
    store_obj_unref(o);
    json_decref(obj);
}

static json_t *trainer_status(fixture *f, const char *name)
{
    store_obj *o = store_get(f->store, api_store_key(&api_trainjob), "default", name, NULL);
    json_t *ts;

    assert_non_null(o);
    ts = json_incref(json_object_get(json_object_get(store_obj_json(o), "status"),
                                     "trainerStatus"));
    store_obj_unref(o);
    return ts;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;
    char tokens[128];
    FILE *fp;

    ty_error_init(&err);
    strcpy(f->dir, "/tmp/ty-test-progress.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(tokens, sizeof(tokens), "%s/tokens.csv", f->dir);
    assert_non_null(fp = fopen(tokens, "w"));
    fputs("admintok,admin,admin,system:masters\nalicetok,alice,alice\n", fp);
    fclose(fp);
    authn_opts ao = {.admin_token_file = tokens, .reload_ms = -1};
    assert_non_null(f->authn = authn_new(&ao, &err));
    assert_non_null(f->store = store_open(f->dir, &err));
    server_opts so = {.address = "127.0.0.1", .data_dir = f->dir, .authn = f->authn};
    f->srv = server_start(f->store, &so, &err);
    if (!f->srv)
        fail_msg("server_start: %s", err.text);
    server_url(f->srv, f->url, sizeof(f->url));
    put_job(f, "a", f->uid_a, sizeof(f->uid_a));
    put_job(f, "b", f->uid_b, sizeof(f->uid_b));
    put_secret(f, "a", f->uid_a, "dG9rYQ=="); /* "toka" */
    put_secret(f, "b", f->uid_a, "dG9rYg=="); /* "tokb", but controlled by a's uid */
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

static void test_write_and_refusals(void **state)
{
    fixture *f = *state;
    json_t *ts;
    reply r;

    /* a form-encoded body (urllib's default) is read as JSON all the same;
     * a second update at once is 429 with Retry-After, and not written
     * (unless the machine took the 5 s between the two: nothing to check) */
    int64_t t0 = ty_now_ms();
    reply r2;
    post(f, TJ_PATH "a/status", "toka", "application/x-www-form-urlencoded",
         "{\"trainerStatus\": {\"progressPercentage\": 10, \"metrics\": "
         "[{\"name\": \"loss\", \"value\": \"1.5\"}]}}", &r);
    post(f, TJ_PATH "a/status", "toka", "application/json",
         "{\"trainerStatus\": {\"progressPercentage\": 11}}", &r2);
    assert_int_equal(r.status, 200);
    ts = trainer_status(f, "a");
    if (r2.status == 200 && ty_now_ms() - t0 >= 5000) {
        assert_int_equal(json_integer_value(json_object_get(ts, "progressPercentage")), 11);
    } else {
        assert_int_equal(r2.status, 429);
        assert_non_null(strstr(r2.headers, "Retry-After: "));
        assert_non_null(strstr(r2.body, "\"reason\":\"TooManyRequests\""));
        assert_int_equal(json_integer_value(json_object_get(ts, "progressPercentage")), 10);
        assert_non_null(json_object_get(ts, "lastUpdatedTime"));
    }
    json_decref(ts);

    /* a bad body: 422 with the field, before the rate limit */
    post(f, TJ_PATH "a/status", "toka", NULL, "{\"trainerStatus\": {\"progressPercentage\": 101}}",
         &r);
    assert_int_equal(r.status, 422);
    assert_non_null(strstr(r.body, "\"field\":\"trainerStatus.progressPercentage\""));

    /* b's Secret is controlled by a's uid: b's token is no good; a's token
     * is not b's; no token, a user's token: 401 */
    post(f, TJ_PATH "b/status", "tokb", NULL, "{\"trainerStatus\": {}}", &r);
    assert_int_equal(r.status, 401);
    post(f, TJ_PATH "b/status", "toka", NULL, "{\"trainerStatus\": {}}", &r);
    assert_int_equal(r.status, 401);
    assert_non_null(strstr(r.body, "\"reason\":\"Unauthorized\""));
    post(f, TJ_PATH "b/status", NULL, NULL, "{\"trainerStatus\": {}}", &r);
    assert_int_equal(r.status, 401);
    post(f, TJ_PATH "b/status", "admintok", NULL, "{\"trainerStatus\": {}}", &r);
    assert_int_equal(r.status, 401);
    post(f, TJ_PATH "nope/status", "toka", NULL, "{\"trainerStatus\": {}}", &r);
    assert_int_equal(r.status, 401);
    ts = trainer_status(f, "b");
    assert_null(ts);

    /* the job's token is no user of the API */
    post(f, "/api/v1/namespaces/default/configmaps", "toka", NULL, "{}", &r);
    assert_int_equal(r.status, 401);
}

static void test_token_secret_admission(void **state)
{
    fixture *f = *state;
    char body[1024];
    reply r;

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"c-progress-token\","
             "\"ownerReferences\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
             "\"TrainJob\",\"name\":\"a\",\"uid\":\"%s\",\"controller\":true}]},"
             "\"data\":{\"token\":\"eA==\"}}", f->uid_a);
    post(f, "/api/v1/namespaces/default/secrets", "alicetok", "application/json", body, &r);
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(r.body, "made by the trainer controller"));
    post(f, "/api/v1/namespaces/default/secrets", "admintok", "application/json", body, &r);
    assert_int_equal(r.status, 201);
    /* a Secret of her own, as ever */
    post(f, "/api/v1/namespaces/default/secrets", "alicetok", "application/json",
         "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"mine\"},"
         "\"data\":{\"k\":\"dg==\"}}", &r);
    assert_int_equal(r.status, 201);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_and_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_secret_admission, setup, teardown),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
