/* test_webhook.c - the admission webhook (server/webhook.h): each answer
 * compared with what Trainyard's own API server does with the same object
 * (api_prepare, the creator's annotation, the Status its fail() sends).
 * The RFC 6902 diff it answers with: test_patch_diff.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "api/kinds.h"
#include "client/kc_fake.h"
#include "client/kc_lookup.h"
#include "model/patch.h"
#include "server/creator.h"
#include "server/decode.h"
#include "server/http.h"
#include "server/tls.h"
#include "server/webhook.h"

/* ---- helpers ------------------------------------------------------------ */

/* JSON written with single quotes for readability. */
static json_t *J(const char *text)
{
    char *s = strdup(text);
    json_error_t jerr;
    json_t *v;

    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    v = json_loads(s, 0, &jerr);
    if (!v)
        print_error("bad test JSON (%s): %s\n", jerr.text, s);
    free(s);
    assert_non_null(v);
    return v;
}

static json_t *at(const json_t *root, const char *path)
{
    char buf[256], *save = NULL, *tok;
    const json_t *v = root;

    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save)) {
        if (json_is_array(v))
            v = json_array_get(v, (size_t)atoi(tok));
        else
            v = json_object_get(v, tok);
    }
    return (json_t *)v;
}

static const char *str_at(const json_t *root, const char *path)
{
    return json_string_value(at(root, path));
}

/* An AdmissionReview request for op on group/version/resource (obj and old
 * stolen, either may be NULL). */
static json_t *review(const char *op, const char *group, const char *version,
                      const char *resource, json_t *obj, json_t *old)
{
    json_t *r = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s},"
                          " s:s, s:s, s:s, s:{s:s, s:[s]}, s:b}}",
                          "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
                          "request", "uid", "705ab4f5-6393-11e8-b7cc-42010a800002",
                          "kind", "group", group, "version", version, "kind", "Whatever",
                          "resource", "group", group, "version", version, "resource", resource,
                          "operation", op, "namespace", "default", "name",
                          str_at(obj ? obj : old, "metadata.name") ?: "",
                          "userInfo", "username", "alice", "groups", "system:authenticated",
                          "dryRun", 0);
    json_t *req = json_object_get(r, "request");

    assert_non_null(r);
    json_object_set_new(req, "object", obj ? obj : json_null());
    json_object_set_new(req, "oldObject", old ? old : json_null());
    return r;
}

/* Runs an endpoint ("/mutate", "/validate") on a review (stolen); returns
 * the answer, its HTTP status in *status. */
static const api_lookup *lookup;

static json_t *call(const char *path, json_t *rv, unsigned *status)
{
    char *text = json_dumps(rv, JSON_COMPACT);
    json_t *out;

    json_decref(rv);
    assert_non_null(text);
    out = webhook_handle(path, text, strlen(text), lookup, status);
    free(text);
    assert_non_null(out);
    return out;
}

/* The response of a 200 answer, its envelope checked. */
static json_t *response_of(json_t *out, unsigned status)
{
    assert_int_equal(status, 200);
    assert_string_equal(str_at(out, "apiVersion"), "admission.k8s.io/v1");
    assert_string_equal(str_at(out, "kind"), "AdmissionReview");
    assert_string_equal(str_at(out, "response.uid"), "705ab4f5-6393-11e8-b7cc-42010a800002");
    return at(out, "response");
}

static void assert_allowed_untouched(json_t *out, unsigned status)
{
    json_t *resp = response_of(out, status);
    assert_true(json_is_true(json_object_get(resp, "allowed")));
    assert_null(json_object_get(resp, "patch"));
    assert_null(json_object_get(resp, "patchType"));
    assert_null(json_object_get(resp, "status"));
}

static int b64val(char c)
{
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(tab, c);
    return c && p ? (int)(p - tab) : -1;
}

/* The JSON patch of a mutate answer, decoded from base64. */
static json_t *patch_of(const json_t *resp)
{
    const char *b = json_string_value(json_object_get(resp, "patch"));
    size_t n, o = 0;
    char *raw;
    json_t *ops;

    assert_non_null(b);
    assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
    n = strlen(b);
    assert_int_equal(n % 4, 0);
    raw = malloc(n / 4 * 3 + 1);
    assert_non_null(raw);
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            v[k] = b[i + k] == '=' ? 0 : b64val(b[i + k]);
            assert_true(v[k] >= 0);
        }
        unsigned bits = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
                        (unsigned)v[3];
        raw[o++] = (char)(bits >> 16);
        if (b[i + 2] != '=')
            raw[o++] = (char)(bits >> 8);
        if (b[i + 3] != '=')
            raw[o++] = (char)bits;
    }
    ops = json_loadb(raw, o, 0, NULL);
    free(raw);
    assert_true(json_is_array(ops));
    return ops;
}

/* What Trainyard's server stores for a create of obj by alice (borrowed):
 * defaults and the creator's annotation. */
static json_t *server_created(const api_resource *res, const json_t *obj)
{
    json_t *c = json_deep_copy(obj);
    ty_user alice = {.name = "alice"};
    ty_error err;

    ty_error_init(&err);
    creator_stamp(res, c, &alice);
    if (api_prepare(res, c, NULL, &err) < 0)
        fail_msg("the server refuses it: %s", err.text);
    ty_error_clear(&err);
    return c;
}

/* The Status the server's fail() sends for a refused create (obj borrowed)
 * or update (old not NULL). */
static json_t *server_refusal(const api_resource *res, const json_t *obj, const json_t *old)
{
    json_t *c = json_deep_copy(obj);
    ty_error err;
    char name[256];
    json_t *st;

    ty_error_init(&err);
    assert_int_equal(api_prepare(res, c, old, &err), -1);
    snprintf(name, sizeof(name), "%s",
             str_at(c, "metadata.name") ?: str_at(c, "metadata.generateName") ?: "");
    decode_invalid_message(&err, res, name);
    st = status_from_error(&err, res, name);
    ty_error_clear(&err);
    json_decref(c);
    return st;
}

static const char *pytorchjob =
    "{'apiVersion': 'kubeflow.org/v1', 'kind': 'PyTorchJob',"
    " 'metadata': {'name': 'mnist', 'namespace': 'default'},"
    " 'spec': {'pytorchReplicaSpecs': {"
    "   'master': {'replicas': 1, 'template': {'spec': {'containers':"
    "     [{'name': 'pytorch', 'image': 'img:1'}]}}},"
    "   'worker': {'replicas': 3, 'template': {'spec': {'containers':"
    "     [{'name': 'pytorch', 'image': 'img:1'}]}}}}}}";

/* ---- /mutate ------------------------------------------------------------ */

static void test_mutate_pytorchjob(void **state)
{
    json_t *obj = J(pytorchjob), *out, *resp, *ops, *patched, *want;
    unsigned status;
    ty_error err;

    (void)state;
    out = call("/mutate", review("CREATE", "kubeflow.org", "v1", "pytorchjobs",
                                 json_deep_copy(obj), NULL),
               &status);
    resp = response_of(out, status);
    assert_true(json_is_true(json_object_get(resp, "allowed")));
    ops = patch_of(resp);
    ty_error_init(&err);
    patched = patch_json(obj, ops, &err);
    assert_non_null(patched);
    want = server_created(&api_pytorchjob, obj);
    if (!json_equal(patched, want)) {
        char *a = json_dumps(patched, JSON_SORT_KEYS), *b = json_dumps(want, JSON_SORT_KEYS);
        fail_msg("patched:\n%s\nserver:\n%s", a, b);
    }
    /* the replica types are renamed, defaults filled, the creator recorded */
    assert_null(at(patched, "spec.pytorchReplicaSpecs.worker"));
    assert_int_equal(json_integer_value(at(patched, "spec.pytorchReplicaSpecs.Worker.replicas")),
                     3);
    assert_non_null(at(patched, "spec.pytorchReplicaSpecs.Master"));
    assert_string_equal(json_string_value(json_object_get(
                            at(patched, "metadata.annotations"), CREATOR_ANNOTATION)),
                        "alice");
    json_decref(out);

    /* The server's object, sent again, needs nothing more. */
    out = call("/mutate", review("CREATE", "kubeflow.org", "v1", "pytorchjobs",
                                 json_deep_copy(want), NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);

    /* An update keeps the stored creator, whatever the client sent. */
    json_t *nw = json_deep_copy(want);
    json_object_set_new(at(nw, "metadata.annotations"), CREATOR_ANNOTATION,
                        json_string("mallory"));
    out = call("/mutate", review("UPDATE", "kubeflow.org", "v1", "pytorchjobs",
                                 json_deep_copy(nw), json_deep_copy(want)),
               &status);
    resp = response_of(out, status);
    json_decref(ops);
    json_decref(patched);
    ops = patch_of(resp);
    patched = patch_json(nw, ops, &err);
    assert_true(json_equal(patched, want));
    assert_int_equal(json_array_size(ops), 1); /* just the annotation */
    json_decref(out);
    json_decref(nw);
    json_decref(ops);
    json_decref(patched);
    json_decref(want);
    json_decref(obj);
}

static void test_mutate_vcjob(void **state)
{
    json_t *obj = J("{'apiVersion': 'batch.volcano.sh/v1alpha1', 'kind': 'Job',"
                    " 'metadata': {'name': 'vc', 'namespace': 'default'},"
                    " 'spec': {'plugins': {'pytorch': []}, 'tasks': ["
                    "  {'replicas': 2, 'template': {'spec': {'containers':"
                    "    [{'name': 'c', 'image': 'img:1'}]}}},"
                    "  {'name': 'w', 'replicas': 3, 'template': {'spec': {'containers':"
                    "    [{'name': 'c', 'image': 'img:1'}]}}}]}}");
    json_t *out, *resp, *ops, *patched, *want;
    unsigned status;
    ty_error err;

    (void)state;
    out = call("/mutate", review("CREATE", "batch.volcano.sh", "v1alpha1", "jobs",
                                 json_deep_copy(obj), NULL),
               &status);
    resp = response_of(out, status);
    ops = patch_of(resp);
    ty_error_init(&err);
    patched = patch_json(obj, ops, &err);
    want = server_created(&api_vcjob, obj);
    assert_non_null(patched);
    assert_true(json_equal(patched, want));
    assert_string_equal(str_at(patched, "spec.queue"), "default");
    assert_string_equal(str_at(patched, "spec.tasks.0.name"), "default0");
    assert_int_equal(json_integer_value(at(patched, "spec.minAvailable")), 5);
    /* the tasks are patched item by item, not replaced */
    for (size_t i = 0; i < json_array_size(ops); i++)
        assert_string_not_equal(str_at(json_array_get(ops, i), "path"), "/spec/tasks");
    json_decref(out);
    json_decref(ops);
    json_decref(patched);
    json_decref(want);
    json_decref(obj);
}

static void test_mutate_leaves_others(void **state)
{
    json_t *out;
    unsigned status;

    (void)state;
    /* a kind Trainyard does not know */
    out = call("/mutate", review("CREATE", "example.com", "v1", "widgets",
                                 J("{'metadata': {'name': 'w'}}"), NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    /* a built-in kind: the cluster's own */
    out = call("/mutate", review("CREATE", "", "v1", "pods",
                                 J("{'metadata': {'name': 'p'}, 'spec': {}}"), NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    /* a delete */
    out = call("/mutate", review("DELETE", "kubeflow.org", "v1", "pytorchjobs", NULL,
                                 J(pytorchjob)),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    /* a subresource */
    json_t *rv = review("UPDATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob),
                        J(pytorchjob));
    json_object_set_new(json_object_get(rv, "request"), "subResource", json_string("status"));
    out = call("/mutate", rv, &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
}

/* ---- /validate ---------------------------------------------------------- */

static void test_validate_invalid_like_server(void **state)
{
    json_t *obj = J(pytorchjob), *out, *resp, *want;
    unsigned status;

    (void)state;
    /* two masters, a name that is no DNS-1035 label, a negative backoff */
    json_object_set_new(at(obj, "spec.pytorchReplicaSpecs.master"), "replicas",
                        json_integer(2));
    json_object_set_new(at(obj, "metadata"), "name", json_string("1mnist"));
    json_object_set_new(at(obj, "spec"), "runPolicy", J("{'backoffLimit': -1}"));
    out = call("/validate", review("CREATE", "kubeflow.org", "v1", "pytorchjobs",
                                   json_deep_copy(obj), NULL),
               &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    want = server_refusal(&api_pytorchjob, obj, NULL);
    if (!json_equal(json_object_get(resp, "status"), want)) {
        char *a = json_dumps(json_object_get(resp, "status"), JSON_SORT_KEYS),
             *b = json_dumps(want, JSON_SORT_KEYS);
        fail_msg("webhook:\n%s\nserver:\n%s", a, b);
    }
    assert_int_equal(json_integer_value(at(resp, "status.code")), 422);
    assert_string_equal(str_at(resp, "status.reason"), "Invalid");
    assert_true(json_array_size(at(resp, "status.details.causes")) >= 3);
    assert_non_null(strstr(str_at(resp, "status.message"),
                           "PyTorchJob.kubeflow.org \"1mnist\" is invalid: ["));
    assert_non_null(strstr(str_at(resp, "status.message"),
                           "spec.pytorchReplicaSpecs.Master.replicas"));
    json_decref(want);
    json_decref(out);

    /* the valid job passes */
    json_decref(obj);
    obj = J(pytorchjob);
    out = call("/validate", review("CREATE", "kubeflow.org", "v1", "pytorchjobs", obj, NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
}

static void test_validate_update_immutable(void **state)
{
    json_t *sent = J(pytorchjob), *old, *nw, *out, *resp, *want;
    unsigned status;

    (void)state;
    json_object_set_new(at(sent, "spec"), "runPolicy",
                        J("{'schedulingPolicy': {'queue': 'team-a'}}"));
    old = server_created(&api_pytorchjob, sent);
    json_decref(sent);
    nw = json_deep_copy(old);
    json_object_set_new(at(nw, "spec.runPolicy.schedulingPolicy"), "queue",
                        json_string("team-b"));
    out = call("/validate", review("UPDATE", "kubeflow.org", "v1", "pytorchjobs",
                                   json_deep_copy(nw), json_deep_copy(old)),
               &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    want = server_refusal(&api_pytorchjob, nw, old);
    assert_true(json_equal(json_object_get(resp, "status"), want));
    assert_string_equal(str_at(resp, "status.details.causes.0.field"),
                        "spec.runPolicy.schedulingPolicy.queue");
    assert_string_equal(str_at(resp, "status.details.causes.0.message"),
                        "Invalid value: \"team-b\": field is immutable");
    assert_string_equal(str_at(resp, "status.message"),
                        "PyTorchJob.kubeflow.org \"mnist\" is invalid: "
                        "spec.runPolicy.schedulingPolicy.queue: Invalid value: \"team-b\": "
                        "field is immutable");
    json_decref(want);
    json_decref(out);

    /* without oldObject an UPDATE cannot be checked: refused as malformed */
    out = call("/validate", review("UPDATE", "kubeflow.org", "v1", "pytorchjobs",
                                   json_deep_copy(nw), NULL),
               &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_int_equal(json_integer_value(at(resp, "status.code")), 400);
    json_decref(out);
    json_decref(nw);
    json_decref(old);
}

/* A Volcano Job stored before the operator came (no Trainyard defaults in
 * oldObject) may still be scaled: the stored object is compared defaulted,
 * as the server's always is. */
static void test_validate_update_undefaulted_old(void **state)
{
    json_t *old = J("{'apiVersion': 'batch.volcano.sh/v1alpha1', 'kind': 'Job',"
                    " 'metadata': {'name': 'vc', 'namespace': 'default'},"
                    " 'spec': {'tasks': [{'name': 't', 'replicas': 1, 'template': {'spec':"
                    "   {'containers': [{'name': 'c', 'image': 'img:1'}]}}}]}}");
    json_t *nw = server_created(&api_vcjob, old), *out, *resp;
    unsigned status;

    (void)state;
    json_object_set_new(at(nw, "spec.tasks.0"), "replicas", json_integer(2));
    out = call("/validate", review("UPDATE", "batch.volcano.sh", "v1alpha1", "jobs",
                                   json_deep_copy(nw), json_deep_copy(old)),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);

    /* a change beyond replicas is still refused, as on one machine */
    json_object_set_new(at(nw, "spec"), "queue", json_string("other"));
    out = call("/validate", review("UPDATE", "batch.volcano.sh", "v1alpha1", "jobs",
                                   json_deep_copy(nw), json_deep_copy(old)),
               &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_string_equal(str_at(resp, "status.details.causes.0.field"), "spec");
    json_decref(out);
    json_decref(nw);
    json_decref(old);
}

/* Queues the rules see. */
static json_t *queues;

static json_t *q_get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    (void)ctx, (void)ns;
    assert_ptr_equal(res, &api_queue);
    return json_incref(json_object_get(queues, name));
}

static size_t q_count(void *ctx, const api_resource *res,
                      bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    const char *k;
    json_t *q;
    size_t n = 0;

    (void)ctx;
    assert_ptr_equal(res, &api_queue);
    json_object_foreach(queues, k, q)
        n += filter(q, arg);
    return n;
}

static const api_lookup queue_lookup = {.get = q_get, .count = q_count};

static void put_queue(const char *name, const char *state)
{
    json_object_set_new(queues, name,
                        json_pack("{s:s, s:s, s:{s:s}, s:{}, s:{s:s}}", "apiVersion",
                                  "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata",
                                  "name", name, "spec", "status", "state", state));
}

static json_t *vcjob(const char *queue)
{
    json_t *j = J("{'apiVersion': 'batch.volcano.sh/v1alpha1', 'kind': 'Job',"
                  " 'metadata': {'name': 'vc', 'namespace': 'default'},"
                  " 'spec': {'tasks': [{'name': 't', 'replicas': 1, 'template': {'spec':"
                  "   {'containers': [{'name': 'c', 'image': 'img:1'}]}}}]}}");
    json_object_set_new(at(j, "spec"), "queue", json_string(queue));
    return j;
}

static json_t *validate_vcjob(const char *queue, unsigned *status)
{
    return call("/validate",
                review("CREATE", "batch.volcano.sh", "v1alpha1", "jobs", vcjob(queue), NULL),
                status);
}

static void test_validate_vcjob_queue(void **state)
{
    json_t *out, *resp;
    unsigned status;

    (void)state;
    queues = json_object();
    put_queue("default", "Open");
    put_queue("closed", "Closed");
    lookup = &queue_lookup;

    out = validate_vcjob("closed", &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_int_equal(json_integer_value(at(resp, "status.code")), 403);
    assert_string_equal(str_at(resp, "status.reason"), "Forbidden");
    assert_string_equal(str_at(resp, "status.message"),
                        "can only submit job to queue with state `Open`, queue `closed` status "
                        "is `Closed`");
    json_decref(out);

    out = validate_vcjob("nope", &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_string_equal(str_at(resp, "status.message"),
                        "unable to find job queue: queues.scheduling.volcano.sh \"nope\" not "
                        "found");
    json_decref(out);

    out = validate_vcjob("default", &status);
    assert_allowed_untouched(out, status);
    json_decref(out);

    /* Volcano's delete rules: `default` never goes, an Open queue not yet */
    out = call("/validate", review("DELETE", "scheduling.volcano.sh", "v1beta1", "queues", NULL,
                                   json_incref(json_object_get(queues, "default"))),
               &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_string_equal(str_at(resp, "status.message"), "`default` queue can not be deleted");
    json_decref(out);
    out = call("/validate", review("DELETE", "scheduling.volcano.sh", "v1beta1", "queues", NULL,
                                   json_incref(json_object_get(queues, "closed"))),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);

    /* without a lookup nothing exists: the missing queue refuses */
    lookup = NULL;
    out = validate_vcjob("closed", &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_non_null(strstr(str_at(resp, "status.message"), "unable to find job queue"));
    json_decref(out);
    json_decref(queues);
}

/* The operator's lookup: Queues read over its client (kc_admit_lookup). */
static void test_validate_over_client(void **state)
{
    ty_kc *c = kc_fake_new();
    api_lookup lk;
    ty_error err;
    json_t *out, *resp;
    unsigned status;
    static const char *const names[] = {"default", "closed", "team", "team-a"};
    static const char *const parents[] = {NULL, NULL, NULL, "team"};
    static const char *const states[] = {"Open", "Closed", "Open", "Open"};

    (void)state;
    assert_non_null(c);
    ty_error_init(&err);
    for (size_t i = 0; i < 4; i++) {
        json_t *q = json_pack("{s:s, s:s, s:{s:s}, s:{s:s?}, s:{s:s}}", "apiVersion",
                              "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata",
                              "name", names[i], "spec", "parent", parents[i], "status", "state",
                              states[i]);
        kc_fake_set_lax_status(c, true); /* seeded as stored, status and all */
        ty_obj_unref(kc_fake_put(c, api_store_key(&api_queue), q, &err));
    }
    kc_admit_lookup(c, &lk);
    lookup = &lk;

    out = validate_vcjob("closed", &status);
    resp = response_of(out, status);
    assert_string_equal(str_at(resp, "status.message"),
                        "can only submit job to queue with state `Open`, queue `closed` status "
                        "is `Closed`");
    json_decref(out);
    /* a queue with a child is no leaf (the count goes over the client) */
    out = validate_vcjob("team", &status);
    resp = response_of(out, status);
    assert_string_equal(str_at(resp, "status.message"),
                        "can only submit job to leaf queue, queue `team` has 1 child queues");
    json_decref(out);
    out = validate_vcjob("team-a", &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    out = validate_vcjob("gone", &status);
    assert_true(json_is_false(at(response_of(out, status), "allowed")));
    json_decref(out);

    lookup = NULL;
    kc_free(c);
}

static void test_validate_leaves_others(void **state)
{
    json_t *out;
    unsigned status;

    (void)state;
    out = call("/validate", review("CREATE", "example.com", "v1", "widgets",
                                   J("{'metadata': {'name': 'w'}, 'spec': 7}"), NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    /* a pod the cluster validates itself, however bad */
    out = call("/validate", review("CREATE", "", "v1", "pods",
                                   J("{'metadata': {'name': 'BAD'}, 'spec': {}}"), NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    out = call("/validate", review("DELETE", "kubeflow.org", "v1", "pytorchjobs", NULL,
                                   J(pytorchjob)),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    out = call("/validate", review("CONNECT", "kubeflow.org", "v1", "pytorchjobs", NULL, NULL),
               &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
    /* kind alone, no resource: found through the kind */
    json_t *rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    json_object_del(json_object_get(rv, "request"), "resource");
    json_object_set_new(at(rv, "request.kind"), "kind", json_string("PyTorchJob"));
    json_object_set_new(at(rv, "request.object.spec.pytorchReplicaSpecs.master"), "replicas",
                        json_integer(2));
    out = call("/validate", rv, &status);
    assert_true(json_is_false(at(response_of(out, status), "allowed")));
    json_decref(out);
}

/* ---- malformed input, limits, the envelope ------------------------------ */

static void test_malformed(void **state)
{
    unsigned status;
    json_t *out, *resp, *rv;

    (void)state;
    /* not JSON: an HTTP 400 with a Status */
    out = webhook_validate("{\"request\":", 11, NULL, &status);
    assert_int_equal(status, 400);
    assert_string_equal(str_at(out, "kind"), "Status");
    assert_int_equal(json_integer_value(at(out, "code")), 400);
    assert_string_equal(str_at(out, "reason"), "BadRequest");
    assert_non_null(strstr(str_at(out, "message"), "not a JSON AdmissionReview"));
    json_decref(out);
    out = webhook_mutate(NULL, 0, &status);
    assert_int_equal(status, 400);
    json_decref(out);

    /* JSON without a uid: the same */
    out = webhook_mutate("{\"request\":{}}", 14, &status);
    assert_int_equal(status, 400);
    assert_non_null(strstr(str_at(out, "message"), "request.uid"));
    json_decref(out);

    /* with a uid: answered as a review, refused with code 400 */
    rv = review("EXPLODE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    out = call("/mutate", rv, &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_int_equal(json_integer_value(at(resp, "status.code")), 400);
    assert_string_equal(str_at(resp, "status.reason"), "BadRequest");
    assert_non_null(strstr(str_at(resp, "status.message"), "request.operation"));
    json_decref(out);

    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", NULL, NULL);
    json_object_set_new(json_object_get(rv, "request"), "object", json_string("job"));
    out = call("/validate", rv, &status);
    resp = response_of(out, status);
    assert_int_equal(json_integer_value(at(resp, "status.code")), 400);
    assert_non_null(strstr(str_at(resp, "status.message"), "request.object"));
    json_decref(out);

    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    json_object_set_new(rv, "kind", json_string("ConfigMap"));
    out = call("/validate", rv, &status);
    resp = response_of(out, status);
    assert_int_equal(json_integer_value(at(resp, "status.code")), 400);
    json_decref(out);

    /* a metadata that is no object: the server's 400, as a refusal */
    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    json_object_set_new(at(rv, "request.object"), "metadata", json_integer(3));
    out = call("/validate", rv, &status);
    resp = response_of(out, status);
    assert_true(json_is_false(json_object_get(resp, "allowed")));
    assert_int_equal(json_integer_value(at(resp, "status.code")), 400);
    json_decref(out);
    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    json_object_set_new(at(rv, "request.object"), "metadata", json_integer(3));
    out = call("/mutate", rv, &status);
    assert_allowed_untouched(out, status);
    json_decref(out);
}

static void test_too_large(void **state)
{
    size_t n = WEBHOOK_MAX_BODY + 1;
    char *big = malloc(n);
    unsigned status;
    json_t *out;

    (void)state;
    assert_non_null(big);
    memset(big, ' ', n);
    out = webhook_validate(big, n, NULL, &status);
    assert_int_equal(status, 413);
    assert_string_equal(str_at(out, "reason"), "RequestEntityTooLarge");
    assert_non_null(strstr(str_at(out, "message"), "3145728"));
    json_decref(out);
    free(big);
}

static void test_envelope(void **state)
{
    json_t *rv, *out;
    unsigned status;

    (void)state;
    rv = review("CREATE", "example.com", "v1", "widgets", J("{}"), NULL);
    json_object_set_new(rv, "apiVersion", json_string("admission.k8s.io/v1beta1"));
    json_object_set_new(json_object_get(rv, "request"), "uid", json_string("u-2"));
    out = call("/validate", rv, &status);
    assert_int_equal(status, 200);
    assert_string_equal(str_at(out, "apiVersion"), "admission.k8s.io/v1beta1");
    assert_string_equal(str_at(out, "response.uid"), "u-2");
    json_decref(out);

    /* dryRun changes nothing in the answer */
    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    json_object_set_new(json_object_get(rv, "request"), "dryRun", json_true());
    out = call("/mutate", rv, &status);
    assert_non_null(json_object_get(response_of(out, status), "patch"));
    json_decref(out);

    /* paths */
    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    out = call("/mutate?timeout=10s", rv, &status);
    assert_non_null(json_object_get(response_of(out, status), "patch"));
    json_decref(out);
    out = webhook_handle("/nowhere", "{}", 2, NULL, &status);
    assert_int_equal(status, 404);
    assert_string_equal(str_at(out, "reason"), "NotFound");
    json_decref(out);
}

/* ---- the listener ------------------------------------------------------- */

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
    char **buf = arg;
    size_t old = *buf ? strlen(*buf) : 0;
    char *nb = realloc(*buf, old + size * n + 1);
    assert_non_null(nb);
    memcpy(nb + old, p, size * n);
    nb[old + size * n] = '\0';
    *buf = nb;
    return size * n;
}

/* POSTs body to url (ca: the CA file to trust, or NULL); returns the
 * answer's JSON and its status. */
static json_t *post(const char *url, const char *ca, const char *method, const char *body,
                    long *code)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    char *buf = NULL;
    json_t *out;

    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &buf);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    if (ca)
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    out = json_loads(buf ? buf : "", 0, NULL);
    free(buf);
    assert_non_null(out);
    return out;
}

static void test_listener(void **state)
{
    char dir[] = "/tmp/test_webhook.XXXXXX", cert[256], key[256], ca[256], url[128];
    tls_pem pem = {0};
    ty_error err;
    webhook_server *ws;
    json_t *out, *rv;
    char *body;
    long code;

    (void)state;
    assert_non_null(mkdtemp(dir));
    ty_error_init(&err);
    assert_int_equal(tls_ensure_pki(dir, &pem, NULL, &err), 0);
    tls_pem_free(&pem);
    snprintf(cert, sizeof(cert), "%s/pki/" TLS_SERVING_CERT, dir);
    snprintf(key, sizeof(key), "%s/pki/" TLS_SERVING_KEY, dir);
    snprintf(ca, sizeof(ca), "%s/pki/" TLS_CA_CERT, dir);

    /* a key without its certificate is refused */
    ws = webhook_serve_start(&(webhook_serve_opts){.address = "127.0.0.1",
                                                   .tls_key_file = key},
                             &err);
    assert_null(ws);
    ty_error_clear(&err);

    ws = webhook_serve_start(&(webhook_serve_opts){.address = "127.0.0.1",
                                                   .tls_cert_file = cert,
                                                   .tls_key_file = key},
                             &err);
    if (!ws)
        fail_msg("webhook_serve_start: %s", err.text);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/mutate", webhook_serve_port(ws));

    rv = review("CREATE", "kubeflow.org", "v1", "pytorchjobs", J(pytorchjob), NULL);
    body = json_dumps(rv, JSON_COMPACT);
    json_decref(rv);
    out = post(url, ca, "POST", body, &code);
    assert_int_equal(code, 200);
    assert_non_null(json_object_get(response_of(out, 200), "patch"));
    json_decref(out);

    out = post(url, ca, "GET", NULL, &code);
    assert_int_equal(code, 405);
    json_decref(out);

    snprintf(url, sizeof(url), "https://127.0.0.1:%u/elsewhere", webhook_serve_port(ws));
    out = post(url, ca, "POST", body, &code);
    assert_int_equal(code, 404);
    json_decref(out);
    free(body);

    /* a body past the limit: a clean 413 */
    body = malloc(WEBHOOK_MAX_BODY + 2);
    assert_non_null(body);
    memset(body, ' ', WEBHOOK_MAX_BODY + 1);
    body[WEBHOOK_MAX_BODY + 1] = '\0';
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/validate", webhook_serve_port(ws));
    out = post(url, ca, "POST", body, &code);
    assert_int_equal(code, 413);
    json_decref(out);
    free(body);

    webhook_serve_stop(ws);
    {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutate_pytorchjob),
        cmocka_unit_test(test_mutate_vcjob),
        cmocka_unit_test(test_mutate_leaves_others),
        cmocka_unit_test(test_validate_invalid_like_server),
        cmocka_unit_test(test_validate_update_immutable),
        cmocka_unit_test(test_validate_update_undefaulted_old),
        cmocka_unit_test(test_validate_vcjob_queue),
        cmocka_unit_test(test_validate_over_client),
        cmocka_unit_test(test_validate_leaves_others),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_listener),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
