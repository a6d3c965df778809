/* test_progress.c - the progress endpoint's checks apart from HTTP
 * (server/progress.h): a trainerStatus body taken or refused with a cause
 * per bad field, and who may write a Secret controlled by a TrainJob. The
 * whole path (tokens, the 5 s limit, curl and Python) is
 * tests/e2e/t1450-trainjob-progress.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "server/progress.h"

static json_t *parse_ok(const char *body)
{
    json_t *out = NULL;
    ty_error err;

    ty_error_init(&err);
    if (progress_parse_body(body, strlen(body), &out, &err) != 0)
        fail_msg("refused: %s", err.text);
    ty_error_clear(&err);
    return out;
}

/* The fields of the causes, comma-separated (static buffer). */
static const char *parse_bad(const char *body)
{
    static char fields[1024];
    json_t *out = NULL, *c;
    ty_error err;
    size_t i, len = 0;

    ty_error_init(&err);
    assert_int_equal(progress_parse_body(body, strlen(body), &out, &err), -1);
    assert_null(out);
    assert_int_equal(err.code, TY_EINVALID);
    fields[0] = '\0';
    json_array_foreach(err.causes, i, c)
        len += (size_t)snprintf(fields + len, sizeof(fields) - len, "%s%s", len ? "," : "",
                                json_string_value(json_object_get(c, "field")));
    ty_error_clear(&err);
    return fields;
}

static void test_body_taken(void **state)
{
    json_t *ts;
    (void)state;

    ts = parse_ok("{\"trainerStatus\": {\"progressPercentage\": 100, "
                  "\"estimatedRemainingSeconds\": 0, \"metrics\": [{\"name\": \"loss\", "
                  "\"value\": \"0.1\"}], \"lastUpdatedTime\": \"2026-01-23T10:30:45Z\"}}");
    assert_int_equal(json_integer_value(json_object_get(ts, "progressPercentage")), 100);
    assert_string_equal(json_string_value(json_object_get(ts, "lastUpdatedTime")),
                        "2026-01-23T10:30:45Z");
    assert_int_equal(json_array_size(json_object_get(ts, "metrics")), 1);
    json_decref(ts);
    /* everything optional; the time filled when absent; nulls as absent */
    ts = parse_ok("{\"trainerStatus\": {\"progressPercentage\": null, \"metrics\": null}}");
    assert_null(json_object_get(ts, "progressPercentage"));
    assert_null(json_object_get(ts, "metrics"));
    assert_non_null(json_string_value(json_object_get(ts, "lastUpdatedTime")));
    json_decref(ts);
}

static void test_body_refused(void **state)
{
    char body[40000], name[80];
    size_t len;
    (void)state;

    assert_string_equal(parse_bad("{\"trainerStatus\": {\"progressPercentage\": 101}}"),
                        "trainerStatus.progressPercentage");
    assert_string_equal(parse_bad("{\"trainerStatus\": {\"progressPercentage\": 1.5, "
                                  "\"estimatedRemainingSeconds\": 3000000000}}"),
                        "trainerStatus.progressPercentage,"
                        "trainerStatus.estimatedRemainingSeconds");
    memset(name, 'n', 65);
    name[65] = '\0';
    snprintf(body, sizeof(body), "{\"trainerStatus\": {\"metrics\": [{\"name\": \"%s\", "
             "\"value\": \"\"}, 7]}}", name);
    assert_string_equal(parse_bad(body), "trainerStatus.metrics[0].name,"
                                         "trainerStatus.metrics[0].value,"
                                         "trainerStatus.metrics[1]");
    len = (size_t)snprintf(body, sizeof(body), "{\"trainerStatus\": {\"metrics\": [");
    for (int i = 0; i < 257; i++)
        len += (size_t)snprintf(body + len, sizeof(body) - len, "%s{\"name\": \"m%d\", "
                                "\"value\": \"1\"}", i ? "," : "", i);
    snprintf(body + len, sizeof(body) - len, "]}}");
    assert_string_equal(parse_bad(body), "trainerStatus.metrics");
    assert_string_equal(parse_bad("{\"trainerStatus\": {\"eta\": 1}, \"other\": {}}"),
                        "other,trainerStatus.eta");
    assert_string_equal(parse_bad("{\"trainerStatus\": 5}"), "trainerStatus");
    assert_string_equal(parse_bad("{}"), "trainerStatus");
    assert_string_equal(parse_bad("{\"trainerStatus\": {\"lastUpdatedTime\": \"soon\"}}"),
                        "trainerStatus.lastUpdatedTime");
    /* not JSON, or not an object: Invalid without causes, as upstream */
    assert_string_equal(parse_bad("[1]"), "");
    assert_string_equal(parse_bad("{\"trainerStatus\": {}, \"trainerStatus\": {}}"), "");
}

static void test_admit_secret(void **state)
{
    const char *const masters[] = {"system:masters"};
    ty_user *alice = userinfo_new("alice", "", NULL, 0);
    ty_user *admin = userinfo_new("admin", "", masters, 1);
    json_t *owned = json_pack("{s:{s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, s:{s:s}}", "metadata",
                              "name", "j-progress-token", "ownerReferences", "apiVersion",
                              "trainer.kubeflow.org/v1alpha1", "kind", "TrainJob", "name", "j",
                              "uid", "u1", "controller", 1, "data", "token", "YQ==");
    json_t *plain = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "mine", "data", "k",
                              "dg==");
    json_t *labelled = json_deep_copy(owned), *changed = json_deep_copy(owned);
    ty_error err;
    (void)state;

    json_object_set_new(json_object_get(labelled, "metadata"), "labels",
                        json_pack("{s:s}", "seen", "yes"));
    json_object_set_new(json_object_get(changed, "data"), "token", json_string("Yg=="));
    ty_error_init(&err);
    assert_int_equal(progress_admit_secret(alice, &api_secret, owned, NULL, &err), -1);
    assert_int_equal(err.code, TY_EFORBIDDEN);
    ty_error_clear(&err);
    assert_int_equal(progress_admit_secret(alice, &api_secret, changed, owned, &err), -1);
    ty_error_clear(&err);
    assert_int_equal(progress_admit_secret(alice, &api_secret, owned, plain, &err), -1);
    ty_error_clear(&err);
    /* nor unmade: its owner reference removed, its token would be orphaned */
    json_object_del(json_object_get(changed, "metadata"), "ownerReferences");
    assert_int_equal(progress_admit_secret(alice, &api_secret, changed, owned, &err), -1);
    ty_error_clear(&err);
    assert_int_equal(progress_admit_secret(alice, &api_secret, labelled, owned, &err), 0);
    assert_int_equal(progress_admit_secret(alice, &api_secret, plain, NULL, &err), 0);
    assert_int_equal(progress_admit_secret(alice, &api_configmap, owned, NULL, &err), 0);
    assert_int_equal(progress_admit_secret(admin, &api_secret, owned, NULL, &err), 0);
    assert_int_equal(progress_admit_secret(NULL, &api_secret, owned, NULL, &err), 0);
    json_decref(owned);
    json_decref(plain);
    json_decref(labelled);
    json_decref(changed);
    userinfo_free(alice);
    userinfo_free(admin);
}

static void test_paths(void **state)
{
    (void)state;
    assert_true(progress_path("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/"
                                      "trainjobs/j/status"));
    assert_false(progress_path("PUT", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/"
                                      "trainjobs/j/status"));
    assert_false(progress_path("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/"
                                       "trainjobs/j"));
    assert_false(progress_path("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/"
                                       "trainjobs/j/status/x"));
    assert_false(progress_path("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/"
                                       "trainjobs"));
    assert_false(progress_path("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces//"
                                       "trainjobs/j/status"));
    assert_false(progress_path("POST", "/api/v1/namespaces/ns/pods/p/status"));
}

/* Operator mode's tokens: HMAC-SHA256 of ns/name/uid, so each differs by
 * key, namespace, name and uid; the header and the comparison. */
static void test_derived_tokens(void **state)
{
    static const unsigned char k1[32] = {1}, k2[32] = {2};
    char a[65], b[65], small[64], tok[80];
    (void)state;

    assert_int_equal(progress_derive_token(k1, sizeof(k1), "ns", "j", "u1", a, sizeof(a)), 0);
    assert_int_equal(strlen(a), 64);
    assert_int_equal(progress_derive_token(k1, sizeof(k1), "ns", "j", "u1", b, sizeof(b)), 0);
    assert_string_equal(a, b);
    assert_true(progress_token_equal(a, b));
    assert_int_equal(progress_derive_token(k1, sizeof(k1), "ns", "j", "u2", b, sizeof(b)), 0);
    assert_false(progress_token_equal(a, b));
    assert_int_equal(progress_derive_token(k2, sizeof(k2), "ns", "j", "u1", b, sizeof(b)), 0);
    assert_false(progress_token_equal(a, b));
    assert_int_equal(progress_derive_token(k1, sizeof(k1), "ns2", "j", "u1", b, sizeof(b)), 0);
    assert_false(progress_token_equal(a, b));
    /* a buffer with no room for 64 hex digits and the NUL */
    assert_int_equal(progress_derive_token(k1, sizeof(k1), "ns", "j", "u1", small, sizeof(small)),
                     -1);
    assert_false(progress_token_equal(a, "short"));

    assert_true(progress_bearer("Bearer abc", tok, sizeof(tok)));
    assert_string_equal(tok, "abc");
    assert_true(progress_bearer("bearer   abc", tok, sizeof(tok)));
    assert_false(progress_bearer(NULL, tok, sizeof(tok)));
    assert_false(progress_bearer("Basic abc", tok, sizeof(tok)));
    assert_false(progress_bearer("Bearer ", tok, sizeof(tok)));
    assert_false(progress_bearer("Bearer a b", tok, sizeof(tok)));
    assert_false(progress_bearer("Bearer abc", tok, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_derived_tokens),
        cmocka_unit_test(test_body_taken),
        cmocka_unit_test(test_body_refused),
        cmocka_unit_test(test_admit_secret),
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
