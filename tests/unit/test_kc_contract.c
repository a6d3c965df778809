/* test_kc_contract.c - the client interface's contract (client/kc.h), one
 * set of tests run against each implementation: the embedded one over a
 * store, and the HTTP one over Trainyard's server on a loopback port, in
 * process, on the same kind of store. Where the two legitimately differ
 * (docs/internals/client.md), a test asserts what the API does and says so.
 * A few tests are the HTTP client's alone: bookmarks, a stream resumed
 * after the server went away, kubeconfig. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_fixture.h"

#include "base/timeutil.h"
#include "client/kc_embedded.h"
#include "client/kc_http.h"
#include "server/server.h"

/* small, so that a test can outrun it: see test_watch_gone */
#define HISTORY 64
#define DEADLINE_MS 30000

typedef struct fx {
    char dir[64];
    ty_store *s;
    ty_server *srv;
    uint16_t port;
    ty_kc *kc;
    bool http;
} fx;

static ty_server *start_server(fx *f, uint16_t port)
{
    server_opts so = {.address = "127.0.0.1", .port = port, .data_dir = f->dir};
    ty_error err;
    ty_server *srv;

    ty_error_init(&err);
    srv = server_start(f->s, &so, &err);
    if (!srv)
        fail_msg("server_start: %s", err.text);
    return srv;
}

static int setup(void **state, bool http)
{
    fx *f = calloc(1, sizeof(*f));
    store_options so = {.history_events = HISTORY};
    ty_error err;

    ty_error_init(&err);
    assert_non_null(f);
    f->s = store_fixture_open(f->dir, &so);
    f->http = http;
    if (http) {
        char url[64];
        kc_http_opts o = {.server = url, .qps = -1};

        f->srv = start_server(f, 0);
        f->port = server_port(f->srv);
        snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)f->port);
        f->kc = kc_http_new(&o, &err);
    } else {
        f->kc = kc_embedded_new(f->s);
    }
    assert_non_null(f->kc);
    assert_string_equal(kc_kind(f->kc), http ? "http" : "embedded");
    *state = f;
    return 0;
}

static int setup_embedded(void **state)
{
    return setup(state, false);
}

static int setup_http(void **state)
{
    return setup(state, true);
}

static int teardown(void **state)
{
    fx *f = *state;

    kc_free(f->kc);
    server_stop(f->srv);
    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

/* ---- objects ---- */

static json_t *configmap(const char *name, const char *x)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "name", name, "namespace", "default", "data", "x",
                     x);
}

static json_t *pod(const char *ns, const char *name, const char *app)
{
    json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s, s:{}}, s:{s:[{s:s, s:s}]}}", "apiVersion",
                          "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns,
                          "labels", "spec", "containers", "name", "c", "image", "img");

    if (app)
        json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "app",
                            json_string(app));
    return p;
}

static const char *str_at(const json_t *obj, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(obj, a), b));
}

static const char *name_of(ty_obj *o)
{
    const char *ns, *name;

    ty_obj_key(o, &ns, &name);
    return name;
}

static ty_obj *must_create(fx *f, const char *res, const char *ns, json_t *obj)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_create(f->kc, res, ns, obj, &err);
    if (!o)
        fail_msg("create %s: %s", res, err.text);
    return o;
}

static void expect_err(ty_error *err, ty_errcode code)
{
    if (err->code != code)
        fail_msg("expected error %d, got %d: %s", code, err->code, err->text);
    ty_error_clear(err);
}

/* ---- reads and writes ---- */

static void test_create_get_update(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *a, *got, *b, *g;
    json_t *copy;
    char rv1[TY_RV_MAX], rv2[TY_RV_MAX], rv3[TY_RV_MAX];

    ty_error_init(&err);
    a = must_create(f, "configmaps", "default", configmap("a", "1"));
    ty_obj_rv(a, rv1, sizeof(rv1));
    assert_true(*rv1);
    assert_non_null(str_at(ty_obj_json(a), "metadata", "uid"));
    got = kc_get(f->kc, "configmaps", "default", "a", &err);
    assert_non_null(got);
    ty_obj_rv(got, rv2, sizeof(rv2));
    assert_string_equal(rv1, rv2);
    assert_string_equal(str_at(ty_obj_json(got), "data", "x"), "1");
    assert_string_equal(json_string_value(json_object_get(ty_obj_json(got), "kind")), "ConfigMap");

    /* an update with the current version lands; with a stale one conflicts */
    copy = ty_obj_json_copy(got);
    json_object_set_new(json_object_get(copy, "data"), "x", json_string("2"));
    b = kc_update(f->kc, "configmaps", "default", copy, &err);
    assert_non_null(b);
    ty_obj_rv(b, rv3, sizeof(rv3));
    assert_string_not_equal(rv1, rv3);
    json_object_set_new(json_object_get(copy, "data"), "x", json_string("3"));
    assert_null(kc_update(f->kc, "configmaps", "default", copy, &err));
    expect_err(&err, TY_ECONFLICT);
    /* without a resourceVersion there is no precondition */
    json_object_del(json_object_get(copy, "metadata"), "resourceVersion");
    g = kc_update(f->kc, "configmaps", "default", copy, &err);
    assert_non_null(g);
    assert_string_equal(str_at(ty_obj_json(g), "data", "x"), "3");
    json_decref(copy);

    assert_null(kc_create(f->kc, "configmaps", "default", configmap("a", "9"), &err));
    expect_err(&err, TY_EEXISTS);
    assert_null(kc_get(f->kc, "configmaps", "default", "nope", &err));
    expect_err(&err, TY_ENOTFOUND);

    /* generateName: the name is made */
    json_t *gen = configmap("", "1");
    json_object_del(json_object_get(gen, "metadata"), "name");
    json_object_set_new(json_object_get(gen, "metadata"), "generateName", json_string("gen-"));
    ty_obj *made = must_create(f, "configmaps", "default", gen);
    assert_int_equal(strncmp(name_of(made), "gen-", 4), 0);
    assert_true(strlen(name_of(made)) > 4);

    /* cluster-scoped: ns "" */
    ty_obj *ns = kc_get(f->kc, "namespaces", "", "default", &err);
    assert_non_null(ns);
    ty_obj_unref(ns);
    ty_obj_unref(made);
    ty_obj_unref(g);
    ty_obj_unref(b);
    ty_obj_unref(got);
    ty_obj_unref(a);
}

static int set_x(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(obj, "data"), "x", json_string(arg));
    return 0;
}

static int increment(json_t *obj, void *arg, ty_error *err)
{
    json_t *data = json_object_get(obj, "data");
    char n[32];

    (void)arg, (void)err;
    snprintf(n, sizeof(n), "%ld", strtol(json_string_value(json_object_get(data, "n")), NULL, 10) + 1);
    json_object_set_new(data, "n", json_string(n));
    return 0;
}

#define MUTATIONS 5

typedef struct mutator {
    ty_kc *kc;
    bool no_err; /* passes err NULL: conflicts are retried all the same */
    int failed;
} mutator;

static void *mutate_thread(void *arg)
{
    mutator *m = arg;

    for (int i = 0; i < MUTATIONS; i++) {
        ty_error err;
        ty_obj *o;

        ty_error_init(&err);
        o = kc_mutate(m->kc, "configmaps", "default", "counter", increment, NULL, 0,
                      m->no_err ? NULL : &err);
        if (!o)
            m->failed++;
        ty_obj_unref(o);
        ty_error_clear(&err);
    }
    return NULL;
}

static int stale_rv(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(arg));
    json_object_set_new(json_object_get(obj, "data"), "x", json_string("stale"));
    return 0;
}

static int refuse(json_t *obj, void *arg, ty_error *err)
{
    (void)obj, (void)arg;
    return ty_seterr(err, TY_EINVALID, "no");
}

static void test_mutate(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *a, *same, *o;
    char rv1[TY_RV_MAX], rv2[TY_RV_MAX];
    pthread_t t[2];
    mutator m[2] = {{f->kc, false, 0}, {f->kc, true, 0}};
    json_t *c = configmap("counter", "0");

    ty_error_init(&err);
    a = must_create(f, "configmaps", "default", configmap("a", "1"));
    ty_obj_rv(a, rv1, sizeof(rv1));
    /* unchanged: nothing written, the current object back */
    same = kc_mutate(f->kc, "configmaps", "default", "a", set_x, "1", 0, &err);
    assert_non_null(same);
    ty_obj_rv(same, rv2, sizeof(rv2));
    assert_string_equal(rv1, rv2);
    ty_obj_unref(same);
    o = kc_mutate(f->kc, "configmaps", "default", "a", set_x, "2", 0, &err);
    assert_non_null(o);
    assert_string_equal(str_at(ty_obj_json(o), "data", "x"), "2");
    ty_obj_unref(o);
    /* fn's own resourceVersion is the precondition, and not retried */
    assert_null(kc_mutate(f->kc, "configmaps", "default", "a", stale_rv, rv1, 0, &err));
    expect_err(&err, TY_ECONFLICT);
    /* fn's failure writes nothing */
    assert_null(kc_mutate(f->kc, "configmaps", "default", "a", refuse, NULL, 0, &err));
    expect_err(&err, TY_EINVALID);
    assert_null(kc_mutate(f->kc, "configmaps", "default", "nope", set_x, "1", 0, &err));
    expect_err(&err, TY_ENOTFOUND);

    /* two writers racing on one object: every write lands (conflicts retried) */
    json_object_set_new(json_object_get(c, "data"), "n", json_string("0"));
    ty_obj_unref(must_create(f, "configmaps", "default", c));
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, mutate_thread, &m[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(m[0].failed + m[1].failed, 0);
    o = kc_get(f->kc, "configmaps", "default", "counter", &err);
    assert_non_null(o);
    assert_int_equal(strtol(str_at(ty_obj_json(o), "data", "n"), NULL, 10), 2 * MUTATIONS);
    ty_obj_unref(o);
    ty_obj_unref(a);
}

static int set_running(json_t *obj, void *arg, ty_error *err)
{
    json_t *st = json_object_get(obj, "status");

    (void)err;
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    json_object_set_new(st, "phase", json_string("Running"));
    if (arg) /* a metadata change through the status subresource */
        json_object_set_new(obj, "metadata",
                            json_pack("{s:O, s:{s:s}}", "name",
                                      json_object_get(json_object_get(obj, "metadata"), "name"),
                                      "labels", "status", "wrote"));
    return 0;
}

static void test_status(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *p, *o;
    json_t *patch, *copy;

    ty_error_init(&err);
    p = must_create(f, "pods", "default", pod("default", "p", "a"));
    o = kc_mutate(f->kc, "pods", "default", "p", set_running, NULL, KC_STATUS | KC_LIGHT, &err);
    assert_non_null(o);
    assert_string_equal(str_at(ty_obj_json(o), "status", "phase"), "Running");
    assert_true(json_equal(json_object_get(ty_obj_json(o), "spec"),
                           json_object_get(ty_obj_json(p), "spec")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ty_obj_json(o), "metadata"),
                                                        "generation")),
                     json_integer_value(json_object_get(json_object_get(ty_obj_json(p), "metadata"),
                                                        "generation")));
    ty_obj_unref(o);
    /* pods/status takes a pod's labels (as kube-apiserver's does: labels,
     * annotations and finalizers) and nothing else of its metadata, with
     * both clients (client/kc_status.h) */
    o = kc_mutate(f->kc, "pods", "default", "p", set_running, "labels", KC_STATUS, &err);
    assert_non_null(o);
    assert_string_equal(str_at(json_object_get(ty_obj_json(o), "metadata"), "labels", "status"),
                        "wrote");
    assert_string_equal(str_at(ty_obj_json(o), "metadata", "uid"),
                        str_at(ty_obj_json(p), "metadata", "uid"));
    assert_string_equal(str_at(ty_obj_json(o), "metadata", "namespace"), "default");
    ty_obj_unref(o);
    if (f->http) {
        /* and a write of the object drops status changes (a kind with the
         * subresource; the embedded store writes what it is given) */
        o = kc_get(f->kc, "pods", "default", "p", &err);
        copy = ty_obj_json_copy(o);
        ty_obj_unref(o);
        json_object_set_new(json_object_get(copy, "status"), "phase", json_string("Failed"));
        o = kc_update(f->kc, "pods", "default", copy, &err);
        json_decref(copy);
        assert_non_null(o);
        assert_string_equal(str_at(ty_obj_json(o), "status", "phase"), "Running");
        ty_obj_unref(o);
    }
    /* a status patch takes the status alone */
    patch = json_pack("{s:{s:s}, s:{s:s}}", "status", "phase", "Succeeded", "spec", "nodeName",
                      "sneaky");
    o = kc_patch(f->kc, "pods", "default", "p", KC_PATCH_MERGE, patch, true, &err);
    json_decref(patch);
    assert_non_null(o);
    assert_string_equal(str_at(ty_obj_json(o), "status", "phase"), "Succeeded");
    assert_null(str_at(ty_obj_json(o), "spec", "nodeName"));
    ty_obj_unref(o);
    ty_obj_unref(p);
}

static void test_patch(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *o;
    json_t *patch;

    ty_error_init(&err);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("a", "1")));
    patch = json_pack("{s:{s:s}}", "data", "y", "2");
    o = kc_patch(f->kc, "configmaps", "default", "a", KC_PATCH_MERGE, patch, false, &err);
    json_decref(patch);
    assert_non_null(o);
    assert_string_equal(str_at(ty_obj_json(o), "data", "x"), "1");
    assert_string_equal(str_at(ty_obj_json(o), "data", "y"), "2");
    ty_obj_unref(o);
    patch = json_pack("[{s:s, s:s, s:s}]", "op", "replace", "path", "/data/x", "value", "3");
    o = kc_patch(f->kc, "configmaps", "default", "a", KC_PATCH_JSON, patch, false, &err);
    json_decref(patch);
    assert_non_null(o);
    assert_string_equal(str_at(ty_obj_json(o), "data", "x"), "3");
    ty_obj_unref(o);
    /* a failed test op writes nothing */
    patch = json_pack("[{s:s, s:s, s:s}]", "op", "test", "path", "/data/x", "value", "9");
    assert_null(kc_patch(f->kc, "configmaps", "default", "a", KC_PATCH_JSON, patch, false, &err));
    assert_int_not_equal(err.code, TY_OK);
    ty_error_clear(&err);
    json_decref(patch);
    /* strategic merge: a pod's containers merge by name */
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "p", "a")));
    patch = json_pack("{s:{s:{s:s}}, s:{s:[{s:s, s:s}]}}", "metadata", "labels", "b", "2", "spec",
                      "containers", "name", "c", "image", "img2");
    o = kc_patch(f->kc, "pods", "default", "p", KC_PATCH_STRATEGIC, patch, false, &err);
    json_decref(patch);
    if (!o)
        fail_msg("strategic: %s", err.text);
    assert_string_equal(str_at(json_object_get(ty_obj_json(o), "metadata"), "labels", "app"), "a");
    assert_string_equal(str_at(json_object_get(ty_obj_json(o), "metadata"), "labels", "b"), "2");
    assert_int_equal(json_array_size(json_object_get(json_object_get(ty_obj_json(o), "spec"),
                                                     "containers")),
                     1);
    ty_obj_unref(o);
    patch = json_pack("{s:{s:s}}", "data", "y", "2");
    assert_null(kc_patch(f->kc, "configmaps", "default", "nope", KC_PATCH_MERGE, patch, false,
                         &err));
    json_decref(patch);
    expect_err(&err, TY_ENOTFOUND);
}

static bool not_p3(const json_t *obj, void *arg)
{
    (void)arg;
    return strcmp(str_at(obj, "metadata", "name"), "p3") != 0;
}

/* The names in l, "ns/name,ns/name". */
static void names(const kc_list *l, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        const char *ns, *name;
        ty_obj_key(l->items[i], &ns, &name);
        n += (size_t)snprintf(buf + n, len - n, "%s%s/%s", i ? "," : "", ns, name);
    }
}

static void expect_list(fx *f, const char *res, const kc_list_opts *o, const char *want)
{
    kc_list l;
    ty_error err;
    char got[512];

    ty_error_init(&err);
    if (kc_list_objects(f->kc, res, o, &l, &err) < 0)
        fail_msg("list %s: %s", res, err.text);
    names(&l, got, sizeof(got));
    assert_string_equal(got, want);
    assert_true(*l.rv);
    kc_list_free(&l);
}

static void test_list(void **state)
{
    fx *f = *state;
    ty_error err;
    kc_list l;
    char got[256];

    ty_error_init(&err);
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "p2", "b")));
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "p1", "a")));
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "p3", "a")));
    ty_obj_unref(must_create(f, "pods", "kube-system", pod("kube-system", "p4", "a")));

    expect_list(f, "pods", NULL, "default/p1,default/p2,default/p3,kube-system/p4");
    expect_list(f, "pods", &(kc_list_opts){.ns = "default", .label_selector = "app=a"},
                "default/p1,default/p3");
    expect_list(f, "pods", &(kc_list_opts){.label_selector = "app in (a),app!=b"},
                "default/p1,default/p3,kube-system/p4");
    expect_list(f, "pods", &(kc_list_opts){.field_selector = "metadata.name=p2"}, "default/p2");
    expect_list(f, "pods", &(kc_list_opts){.field_selector = "metadata.namespace=kube-system"},
                "kube-system/p4");
    expect_list(f, "pods",
                &(kc_list_opts){.label_selector = "app=a", .filter = not_p3}, "default/p1,kube-system/p4");
    expect_list(f, "pods", &(kc_list_opts){.label_selector = "app=zzz"}, "");
    assert_int_equal(kc_list_objects(f->kc, "pods", &(kc_list_opts){.label_selector = "app in ("},
                                     &l, &err),
                     -1);
    kc_list_free(&l);
    assert_int_not_equal(err.code, TY_OK);
    ty_error_clear(&err);

    /* pages */
    assert_int_equal(kc_list_objects(f->kc, "pods", &(kc_list_opts){.limit = 3}, &l, &err), 0);
    names(&l, got, sizeof(got));
    assert_string_equal(got, "default/p1,default/p2,default/p3");
    assert_non_null(l.continue_token);
    assert_int_equal(l.remaining, 1);
    char *cont = strdup(l.continue_token);
    kc_list_free(&l);
    assert_int_equal(kc_list_objects(f->kc, "pods",
                                     &(kc_list_opts){.limit = 3, .continue_token = cont}, &l,
                                     &err),
                     0);
    free(cont);
    names(&l, got, sizeof(got));
    assert_string_equal(got, "kube-system/p4");
    assert_null(l.continue_token);
    kc_list_free(&l);

    /* a token older than the history kept: TY_EGONE, list from the start */
    assert_int_equal(kc_list_objects(f->kc, "pods", &(kc_list_opts){.limit = 1}, &l, &err), 0);
    cont = strdup(l.continue_token);
    kc_list_free(&l);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("churn", "0")));
    for (int i = 0; i < HISTORY + 8; i++) {
        char x[16];
        snprintf(x, sizeof(x), "%d", i);
        ty_obj_unref(kc_mutate(f->kc, "configmaps", "default", "churn", set_x, x, 0, &err));
    }
    assert_int_equal(kc_list_objects(f->kc, "pods",
                                     &(kc_list_opts){.limit = 1, .continue_token = cont}, &l,
                                     &err),
                     -1);
    free(cont);
    kc_list_free(&l);
    expect_err(&err, TY_EGONE);

    assert_int_equal(kc_count(f->kc, "pods"), 4);
    assert_int_equal(kc_count(f->kc, "services"), 0);
    json_t *res = kc_resources(f->kc);
    assert_non_null(res);
    bool pods = false;
    for (size_t i = 0; i < json_array_size(res); i++) {
        pods = pods || !strcmp(json_string_value(json_array_get(res, i)), "pods");
        if (i)
            assert_true(strcmp(json_string_value(json_array_get(res, i - 1)),
                               json_string_value(json_array_get(res, i))) < 0);
    }
    assert_true(pods);
    json_decref(res);
}

static json_t *owned_pod(const char *name, const char *uid, bool controller)
{
    json_t *p = pod("default", name, NULL);

    json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
                        json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1", "kind",
                                  "ConfigMap", "name", "owner", "uid", uid, "controller",
                                  controller));
    return p;
}

static void test_list_owned(void **state)
{
    fx *f = *state;
    ty_error err;
    kc_list l;
    char got[256];

    ty_error_init(&err);
    ty_obj_unref(must_create(f, "pods", "default", owned_pod("b", "u1", true)));
    ty_obj_unref(must_create(f, "pods", "default", owned_pod("a", "u1", true)));
    ty_obj_unref(must_create(f, "pods", "default", owned_pod("c", "u2", true)));
    ty_obj_unref(must_create(f, "pods", "default", owned_pod("d", "u1", false)));
    assert_int_equal(kc_list_owned(f->kc, "pods", "default", "u1", &l, &err), 0);
    names(&l, got, sizeof(got));
    assert_string_equal(got, "default/a,default/b");
    assert_null(l.continue_token);
    kc_list_free(&l);
    assert_int_equal(kc_list_owned(f->kc, "pods", NULL, "u2", &l, &err), 0);
    assert_int_equal(l.n, 1);
    kc_list_free(&l);
    assert_int_equal(kc_list_owned(f->kc, "pods", "default", "", &l, &err), 0);
    assert_int_equal(l.n, 0);
    kc_list_free(&l);

    /* narrowed by a label: the owned ones carrying it for sure, an owned one
     * without it perhaps (an owner index may ignore the selector), never
     * another owner's */
    json_t *e = owned_pod("e", "u1", true), *g = owned_pod("g", "u2", true);
    json_object_set_new(json_object_get(json_object_get(e, "metadata"), "labels"), "app",
                        json_string("x"));
    json_object_set_new(json_object_get(json_object_get(g, "metadata"), "labels"), "app",
                        json_string("x"));
    ty_obj_unref(must_create(f, "pods", "default", e));
    ty_obj_unref(must_create(f, "pods", "default", g));
    assert_int_equal(kc_list_owned_sel(f->kc, "pods", "default", "u1", "app=x", &l, &err), 0);
    names(&l, got, sizeof(got));
    assert_true(!strcmp(got, "default/e") || !strcmp(got, "default/a,default/b,default/e"));
    kc_list_free(&l);
    assert_int_equal(kc_list_owned_sel(f->kc, "pods", "default", "u1", "", &l, &err), 0);
    names(&l, got, sizeof(got));
    assert_string_equal(got, "default/a,default/b,default/e");
    kc_list_free(&l);
}

static void test_delete(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *a, *o;
    bool deleted = true;
    char rv[TY_RV_MAX], uid[80];
    json_t *b;

    ty_error_init(&err);
    a = must_create(f, "configmaps", "default", configmap("a", "1"));
    ty_obj_rv(a, rv, sizeof(rv));
    snprintf(uid, sizeof(uid), "%s", str_at(ty_obj_json(a), "metadata", "uid"));
    ty_obj_unref(kc_mutate(f->kc, "configmaps", "default", "a", set_x, "2", 0, &err));
    /* preconditions */
    assert_null(kc_delete(f->kc, "configmaps", "default", "a",
                          &(kc_delete_opts){.precondition_uid = "not-the-uid"}, &deleted, &err));
    expect_err(&err, TY_ECONFLICT);
    assert_null(kc_delete(f->kc, "configmaps", "default", "a",
                          &(kc_delete_opts){.precondition_rv = rv}, &deleted, &err));
    expect_err(&err, TY_ECONFLICT);
    o = kc_delete(f->kc, "configmaps", "default", "a",
                  &(kc_delete_opts){.precondition_uid = uid, .has_grace = true}, &deleted, &err);
    assert_int_equal(err.code, TY_OK);
    assert_true(deleted);
    /* the last state when the implementation learnt it (HTTP: a Status) */
    if (o)
        assert_string_equal(name_of(o), "a");
    ty_obj_unref(o);
    assert_null(kc_get(f->kc, "configmaps", "default", "a", &err));
    expect_err(&err, TY_ENOTFOUND);
    assert_null(kc_delete(f->kc, "configmaps", "default", "a", NULL, &deleted, &err));
    expect_err(&err, TY_ENOTFOUND);

    /* finalizers hold an object: marked, then gone with the last one */
    b = configmap("b", "1");
    json_object_set_new(json_object_get(b, "metadata"), "finalizers",
                        json_pack("[s]", "example.com/hold"));
    ty_obj_unref(must_create(f, "configmaps", "default", b));
    o = kc_delete(f->kc, "configmaps", "default", "b", NULL, &deleted, &err);
    assert_non_null(o);
    assert_false(deleted);
    assert_non_null(str_at(ty_obj_json(o), "metadata", "deletionTimestamp"));
    ty_obj_unref(o);
    o = kc_get(f->kc, "configmaps", "default", "b", &err);
    assert_non_null(o);
    ty_obj_unref(o);
    b = json_pack("{s:{s:[]}}", "metadata", "finalizers");
    o = kc_patch(f->kc, "configmaps", "default", "b", KC_PATCH_MERGE, b, false, &err);
    json_decref(b);
    ty_obj_unref(o);
    assert_null(kc_get(f->kc, "configmaps", "default", "b", &err));
    expect_err(&err, TY_ENOTFOUND);

    /* Orphan propagation is a finalizer the garbage collector removes */
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("c", "1")));
    o = kc_delete(f->kc, "configmaps", "default", "c",
                  &(kc_delete_opts){.propagation = KC_PROPAGATE_ORPHAN}, &deleted, &err);
    assert_non_null(o);
    assert_false(deleted);
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(ty_obj_json(o), "metadata"),
                                            "finalizers"),
                            0)),
                        "orphan");
    ty_obj_unref(o);
    ty_obj_unref(a);
}

/* kube-apiserver's NamespaceLifecycle, which a controller's create meets as
 * a user's does: no namespace, 404; one being deleted, 403 (a job's pods or
 * a TrainJob's record made there would hold its deletion). Updates go on. */
static json_t *configmap_in(const char *ns, const char *name)
{
    json_t *cm = configmap(name, "1");

    json_object_set_new(json_object_get(cm, "metadata"), "namespace", json_string(ns));
    return cm;
}

static void test_namespace_lifecycle(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *o;
    bool deleted = true;
    kc_op op;

    ty_error_init(&err);
    assert_null(kc_create(f->kc, "configmaps", "nowhere", configmap_in("nowhere", "a"), &err));
    expect_err(&err, TY_ENOTFOUND);
    ty_obj_unref(must_create(f, "namespaces", "",
                             json_pack("{s:s, s:s, s:{s:s}, s:{s:[s]}}", "apiVersion", "v1",
                                       "kind", "Namespace", "metadata", "name", "doomed",
                                       "spec", "finalizers", "kubernetes")));
    ty_obj_unref(must_create(f, "configmaps", "doomed", configmap_in("doomed", "a")));
    o = kc_delete(f->kc, "namespaces", "", "doomed", NULL, &deleted, &err);
    assert_int_equal(err.code, TY_OK);
    assert_false(deleted); /* held by its finalizer until emptied */
    ty_obj_unref(o);

    assert_null(kc_create(f->kc, "configmaps", "doomed", configmap_in("doomed", "b"), &err));
    assert_int_equal(err.code, TY_EFORBIDDEN);
    assert_string_equal(err.text, "configmaps \"b\" is forbidden: unable to create new content "
                                  "in namespace doomed because it is being terminated");
    ty_error_clear(&err);
    op = kc_op_create("configmaps", "doomed", configmap_in("doomed", "c"));
    assert_int_equal(kc_write_all(f->kc, &op, 1), 1);
    assert_int_equal(op.err.code, TY_EFORBIDDEN);
    kc_op_clear(&op);
    o = kc_mutate(f->kc, "configmaps", "doomed", "a", set_x, "2", 0, &err);
    if (!o)
        fail_msg("update in a namespace being deleted: %s", err.text);
    ty_obj_unref(o);
}

static void test_bind(void **state)
{
    fx *f = *state;
    ty_error err;
    ty_obj *p, *o;

    ty_error_init(&err);
    p = must_create(f, "pods", "default", pod("default", "p", NULL));
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "q", NULL)));
    assert_int_equal(kc_bind(f->kc, "default", "q", "not-its-uid", "n1", &err), -1);
    expect_err(&err, TY_ECONFLICT);
    if (kc_bind(f->kc, "default", "p", str_at(ty_obj_json(p), "metadata", "uid"), "n1", &err))
        fail_msg("bind: %s", err.text);
    o = kc_get(f->kc, "pods", "default", "p", &err);
    assert_string_equal(str_at(ty_obj_json(o), "spec", "nodeName"), "n1");
    ty_obj_unref(o);
    assert_int_equal(kc_bind(f->kc, "default", "p", NULL, "n2", &err), -1);
    expect_err(&err, TY_ECONFLICT);
    assert_int_equal(kc_bind(f->kc, "default", "nope", NULL, "n1", &err), -1);
    expect_err(&err, TY_ENOTFOUND);
    assert_int_equal(kc_bind(f->kc, "default", "q", NULL, "n3", &err), 0);
    ty_obj_unref(p);
}

static void test_write_all(void **state)
{
    fx *f = *state;
    ty_error err;
    kc_op ops[7];
    ty_obj *o;

    ty_error_init(&err);
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "p", NULL)));
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("gone", "1")));
    memset(ops, 0, sizeof(ops));
    ops[0] = (kc_op){.kind = KC_OP_CREATE, .resource = "configmaps", .ns = "default",
                     .obj = configmap("a", "1")};
    ops[1] = (kc_op){.kind = KC_OP_MUTATE, .resource = "configmaps", .ns = "default",
                     .name = "a", .fn = set_x, .arg = "2"};
    ops[2] = (kc_op){.kind = KC_OP_BIND, .ns = "default", .name = "p", .node = "n1"};
    ops[3] = (kc_op){.kind = KC_OP_DELETE, .resource = "configmaps", .ns = "default",
                     .name = "gone"};
    ops[4] = (kc_op){.kind = KC_OP_MUTATE, .resource = "configmaps", .ns = "default",
                     .name = "missing", .fn = set_x, .arg = "2"};
    /* records: one made, one whose name is taken changes the holder */
    ops[5] = (kc_op){.kind = KC_OP_RECORD, .resource = "configmaps", .ns = "default",
                     .obj = configmap("rec", "1")};
    ops[6] = (kc_op){.kind = KC_OP_RECORD, .resource = "configmaps", .ns = "default",
                     .obj = configmap("a", "9"), .fn = set_x, .arg = "again"};
    assert_int_equal(kc_write_all(f->kc, ops, 7), 1);
    assert_non_null(ops[0].result);
    assert_string_equal(str_at(ty_obj_json(ops[1].result), "data", "x"), "2");
    assert_int_equal(ops[2].err.code, TY_OK);
    assert_int_equal(ops[3].err.code, TY_OK);
    assert_int_equal(ops[4].err.code, TY_ENOTFOUND);
    for (int i = 0; i < 7; i++)
        kc_op_clear(&ops[i]);
    o = kc_get(f->kc, "configmaps", "default", "rec", &err);
    assert_non_null(o);
    ty_obj_unref(o);
    o = kc_get(f->kc, "configmaps", "default", "a", &err);
    assert_string_equal(str_at(ty_obj_json(o), "data", "x"), "again");
    ty_obj_unref(o);
    o = kc_get(f->kc, "pods", "default", "p", &err);
    assert_string_equal(str_at(ty_obj_json(o), "spec", "nodeName"), "n1");
    ty_obj_unref(o);
    assert_null(kc_get(f->kc, "configmaps", "default", "gone", &err));
    expect_err(&err, TY_ENOTFOUND);
}

/* ---- watches ---- */

/* The next event, waiting up to DEADLINE_MS, skipping bookmarks unless
 * asked for. */
static void next_event(kc_watch *w, kc_event *ev, bool bookmarks)
{
    int64_t until = ty_now_ms() + DEADLINE_MS;
    ty_error err;

    ty_error_init(&err);
    for (;;) {
        int rc = kc_watch_next(w, 1000, ev, &err);

        if (rc < 0)
            fail_msg("watch ended: %s", err.text);
        if (rc == 1 && (bookmarks || ev->type != KC_BOOKMARK))
            return;
        if (rc == 1)
            kc_event_release(ev);
        if (ty_now_ms() > until)
            fail_msg("no event within %d ms", DEADLINE_MS);
    }
}

static void expect_event(kc_watch *w, kc_event_type type, const char *res, const char *name)
{
    kc_event ev;

    next_event(w, &ev, false);
    if (ev.type != type || strcmp(ev.resource, res) || strcmp(name_of(ev.obj), name))
        fail_msg("expected event %d %s %s, got %d %s %s", type, res, name, ev.type, ev.resource,
                 name_of(ev.obj));
    kc_event_release(&ev);
}

static void test_watch_order(void **state)
{
    fx *f = *state;
    const char *only[] = {"configmaps", NULL}, *both[] = {"configmaps", "pods", NULL};
    ty_error err;
    kc_watch *w;
    kc_list l;
    kc_event ev;
    bool saw_cm = false, saw_pod = false;
    int rc;

    ty_error_init(&err);
    w = kc_watch_open(f->kc, only, NULL, &err);
    assert_non_null(w);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("a", "1")));
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "p", NULL))); /* not watched */
    ty_obj_unref(kc_mutate(f->kc, "configmaps", "default", "a", set_x, "2", 0, &err));
    ty_obj_unref(kc_delete(f->kc, "configmaps", "default", "a", NULL, NULL, &err));
    expect_event(w, KC_ADDED, "configmaps", "a");
    next_event(w, &ev, false);
    assert_int_equal(ev.type, KC_MODIFIED);
    assert_string_equal(str_at(ty_obj_json(ev.obj), "data", "x"), "2");
    kc_event_release(&ev);
    expect_event(w, KC_DELETED, "configmaps", "a");
    /* nothing more (a bookmark aside: a loaded machine may be slow enough) */
    while ((rc = kc_watch_next(w, 0, &ev, &err)) == 1 && ev.type == KC_BOOKMARK)
        kc_event_release(&ev);
    assert_int_equal(rc, 0);
    kc_watch_close(w);

    /* from a list's resourceVersion: what came after it */
    assert_int_equal(kc_list_objects(f->kc, "configmaps", NULL, &l, &err), 0);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("b", "1")));
    w = kc_watch_open(f->kc, only, l.rv, &err);
    kc_list_free(&l);
    assert_non_null(w);
    expect_event(w, KC_ADDED, "configmaps", "b");
    kc_watch_close(w);

    /* two resources in one watch */
    w = kc_watch_open(f->kc, both, NULL, &err);
    assert_non_null(w);
    ty_obj_unref(must_create(f, "pods", "default", pod("default", "q", NULL)));
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("c", "1")));
    for (int i = 0; i < 2; i++) {
        next_event(w, &ev, false);
        assert_int_equal(ev.type, KC_ADDED);
        saw_cm = saw_cm || !strcmp(ev.resource, "configmaps");
        saw_pod = saw_pod || !strcmp(ev.resource, "pods");
        kc_event_release(&ev);
    }
    assert_true(saw_cm && saw_pod);
    kc_watch_close(w);
}

/* What kc_watch_next gave (rc) on a watch from a version that is gone:
 * nothing, or a bookmark (the server's, before it went away) */
static void expect_no_change(kc_event *ev, int rc)
{
    if (rc == 1 && ev->type != KC_BOOKMARK)
        fail_msg("an event from a version that is gone");
    if (rc == 1)
        kc_event_release(ev);
}

static void test_watch_gone(void **state)
{
    fx *f = *state;
    const char *only[] = {"configmaps", NULL};
    ty_error err;
    kc_watch *w;
    kc_list l;
    kc_event ev;
    char rv[TY_RV_MAX];
    int rc = 0;

    ty_error_init(&err);
    assert_int_equal(kc_list_objects(f->kc, "configmaps", NULL, &l, &err), 0);
    snprintf(rv, sizeof(rv), "%s", l.rv);
    kc_list_free(&l);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("a", "0")));
    for (int i = 0; i < HISTORY + 8; i++) {
        char x[16];
        snprintf(x, sizeof(x), "%d", i + 1);
        ty_obj_unref(kc_mutate(f->kc, "configmaps", "default", "a", set_x, x, 0, &err));
    }
    /* an implementation may know at once, or say so at the first next */
    w = kc_watch_open(f->kc, only, rv, &err);
    if (w) {
        int64_t until = ty_now_ms() + DEADLINE_MS;
        while ((rc = kc_watch_next(w, 1000, &ev, &err)) >= 0 && ty_now_ms() < until)
            expect_no_change(&ev, rc);
        assert_int_equal(rc, -1);
        kc_watch_close(w);
    }
    expect_err(&err, TY_EGONE);

    /* the way back: list again, watch from the list */
    assert_int_equal(kc_list_objects(f->kc, "configmaps", NULL, &l, &err), 0);
    assert_int_equal(l.n, 1);
    w = kc_watch_open(f->kc, only, l.rv, &err);
    kc_list_free(&l);
    assert_non_null(w);
    ty_obj_unref(kc_mutate(f->kc, "configmaps", "default", "a", set_x, "last", 0, &err));
    expect_event(w, KC_MODIFIED, "configmaps", "a");
    kc_watch_close(w);
}

typedef struct blocked {
    kc_watch *w;
    int rc;
    ty_errcode code;
} blocked;

static void *block_next(void *arg)
{
    blocked *b = arg;
    kc_event ev;
    ty_error err;

    ty_error_init(&err);
    b->rc = kc_watch_next(b->w, -1, &ev, &err);
    b->code = err.code;
    if (b->rc == 1)
        kc_event_release(&ev);
    ty_error_clear(&err);
    return NULL;
}

static void test_watch_cancel(void **state)
{
    fx *f = *state;
    const char *only[] = {"configmaps", NULL};
    ty_error err;
    blocked b = {0};
    pthread_t t;
    kc_event ev;

    ty_error_init(&err);
    b.w = kc_watch_open(f->kc, only, NULL, &err);
    assert_non_null(b.w);
    assert_int_equal(pthread_create(&t, NULL, block_next, &b), 0);
    kc_watch_cancel(b.w);
    pthread_join(t, NULL);
    assert_int_equal(b.rc, -1);
    assert_int_equal(kc_watch_next(b.w, 0, &ev, &err), -1);
    ty_error_clear(&err);
    kc_watch_close(b.w);
    kc_watch_cancel(NULL);
    kc_watch_close(NULL);
}

/* ---- the HTTP client's own ---- */

/* Trainyard's server sends a bookmark on a quiet stream (every 10 s). */
static void test_http_bookmark(void **state)
{
    fx *f = *state;
    const char *only[] = {"configmaps", NULL};
    ty_error err;
    kc_watch *w;
    kc_event ev;
    kc_list l;
    char rv[TY_RV_MAX];

    ty_error_init(&err);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("a", "1")));
    assert_int_equal(kc_list_objects(f->kc, "configmaps", NULL, &l, &err), 0);
    w = kc_watch_open(f->kc, only, l.rv, &err);
    assert_non_null(w);
    next_event(w, &ev, true);
    assert_int_equal(ev.type, KC_BOOKMARK);
    ty_obj_rv(ev.obj, rv, sizeof(rv));
    assert_string_equal(rv, l.rv);
    kc_event_release(&ev);
    kc_list_free(&l);
    kc_watch_close(w);
}

/* The server goes away and comes back: the stream is opened again from the
 * last version it saw, and what was written meanwhile arrives. */
static void test_http_resume(void **state)
{
    fx *f = *state;
    const char *only[] = {"configmaps", NULL};
    ty_error err;
    kc_watch *w;
    store_obj *o;

    ty_error_init(&err);
    w = kc_watch_open(f->kc, only, NULL, &err);
    assert_non_null(w);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("a", "1")));
    expect_event(w, KC_ADDED, "configmaps", "a");
    server_stop(f->srv);
    f->srv = NULL;
    o = store_create_take(f->s, "configmaps", "default", configmap("b", "1"), &err);
    assert_non_null(o);
    store_obj_unref(o);
    f->srv = start_server(f, f->port);
    expect_event(w, KC_ADDED, "configmaps", "b");
    kc_watch_close(w);
}

/* ... and when it comes back after more changes than it keeps, the watch
 * ends with TY_EGONE: the caller lists again. */
static void test_http_resume_gone(void **state)
{
    fx *f = *state;
    const char *only[] = {"configmaps", NULL};
    ty_error err;
    kc_watch *w;
    kc_event ev;
    store_obj *o;
    int rc;
    int64_t until = ty_now_ms() + DEADLINE_MS;

    ty_error_init(&err);
    w = kc_watch_open(f->kc, only, NULL, &err);
    assert_non_null(w);
    ty_obj_unref(must_create(f, "configmaps", "default", configmap("a", "1")));
    expect_event(w, KC_ADDED, "configmaps", "a");
    server_stop(f->srv);
    f->srv = NULL;
    for (int i = 0; i < HISTORY + 8; i++) {
        char x[16];
        snprintf(x, sizeof(x), "%d", i);
        o = store_mutate(f->s, "configmaps", "default", "a", set_x, x, &err);
        assert_non_null(o);
        store_obj_unref(o);
    }
    f->srv = start_server(f, f->port);
    while ((rc = kc_watch_next(w, 1000, &ev, &err)) >= 0 && ty_now_ms() < until)
        expect_no_change(&ev, rc);
    assert_int_equal(rc, -1);
    expect_err(&err, TY_EGONE);
    kc_watch_close(w);
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_http_kubeconfig(void **state)
{
    fx *f = *state;
    char path[128], text[2048], buf[256];
    ty_error err;
    ty_kc *kc;
    ty_obj *o;
    char *ns = NULL;

    ty_error_init(&err);
    snprintf(path, sizeof(path), "%s/kubeconfig", f->dir);
    snprintf(text, sizeof(text),
             "apiVersion: v1\nkind: Config\ncurrent-context: here\n"
             "clusters:\n- name: local\n  cluster:\n    server: http://127.0.0.1:%u\n"
             "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
             "- name: broken\n  cluster:\n    server: https://x\n"
             "    certificate-authority-data: '!!notbase64'\n"
             "contexts:\n- name: here\n  context: {cluster: local, user: me, namespace: team}\n"
             "- name: plugin\n  context: {cluster: local, user: exec}\n"
             "- name: bad\n  context: {cluster: broken, user: me}\n"
             "users:\n- name: me\n  user:\n    token: abc\n"
             "- name: exec\n  user:\n    exec: {command: get-token}\n",
             (unsigned)f->port);
    write_text(path, text);
    kc = kc_http_from_kubeconfig(path, NULL, &err);
    if (!kc)
        fail_msg("kubeconfig: %s", err.text);
    ns = kc_http_kubeconfig_namespace(path, NULL, &err);
    assert_string_equal(ns, "team");
    free(ns);
    ns = kc_http_kubeconfig_namespace(path, "plugin", &err);
    assert_string_equal(ns, "default");
    free(ns);
    o = kc_get(kc, "namespaces", "", "default", &err);
    assert_non_null(o);
    ty_obj_unref(o);
    kc_free(kc);
    assert_null(kc_http_from_kubeconfig(path, "elsewhere", &err));
    expect_err(&err, TY_ENOTFOUND);
    assert_null(kc_http_from_kubeconfig(path, "plugin", &err));
    expect_err(&err, TY_EBADREQUEST);
    assert_null(kc_http_from_kubeconfig(path, "bad", &err));
    expect_err(&err, TY_EBADREQUEST);
    assert_null(kc_http_from_kubeconfig("/nonexistent/kubeconfig", NULL, &err));
    expect_err(&err, TY_ENOTFOUND);

    setenv("KUBECONFIG", "/a/one:/b/two", 1);
    assert_int_equal(kc_http_kubeconfig_path(buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/a/one");
    unsetenv("KUBECONFIG");
    setenv("HOME", "/home/x", 1);
    assert_int_equal(kc_http_kubeconfig_path(buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/home/x/.kube/config");

    /* in a pod: the service account's token and the service's address */
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_null(kc_http_in_cluster(f->dir, &err));
    expect_err(&err, TY_ENOTFOUND);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_null(kc_http_in_cluster(f->dir, &err)); /* no token there */
    expect_err(&err, TY_ENOTFOUND);
    snprintf(path, sizeof(path), "%s/token", f->dir);
    write_text(path, "tok\n");
    kc = kc_http_in_cluster(f->dir, &err);
    assert_non_null(kc);
    kc_free(kc);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");

    /* bad options */
    assert_null(kc_http_new(&(kc_http_opts){.server = "ftp://x"}, &err));
    expect_err(&err, TY_EBADREQUEST);
    assert_null(kc_http_new(&(kc_http_opts){.server = "https://x", .ca_file = "/nonexistent"},
                            &err));
    expect_err(&err, TY_EBADREQUEST);
}

/* A server that is not there: TY_EUNAVAILABLE, after the retries of a read. */
static void test_http_unreachable(void **state)
{
    fx *f = *state;
    char url[64];
    ty_error err;
    ty_kc *kc;

    ty_error_init(&err);
    server_stop(f->srv);
    f->srv = NULL;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)f->port);
    kc = kc_http_new(&(kc_http_opts){.server = url}, &err);
    assert_non_null(kc);
    assert_null(kc_get(kc, "pods", "default", "p", &err));
    expect_err(&err, TY_EUNAVAILABLE);
    assert_null(kc_get(kc, "nosuchresource", "default", "p", &err));
    expect_err(&err, TY_ENOTFOUND);
    kc_free(kc);
}

#define CONTRACT(setup_fn)                                                             \
    cmocka_unit_test_setup_teardown(test_create_get_update, setup_fn, teardown),       \
        cmocka_unit_test_setup_teardown(test_mutate, setup_fn, teardown),              \
        cmocka_unit_test_setup_teardown(test_status, setup_fn, teardown),              \
        cmocka_unit_test_setup_teardown(test_patch, setup_fn, teardown),               \
        cmocka_unit_test_setup_teardown(test_list, setup_fn, teardown),                \
        cmocka_unit_test_setup_teardown(test_list_owned, setup_fn, teardown),          \
        cmocka_unit_test_setup_teardown(test_delete, setup_fn, teardown),              \
        cmocka_unit_test_setup_teardown(test_namespace_lifecycle, setup_fn, teardown), \
        cmocka_unit_test_setup_teardown(test_bind, setup_fn, teardown),                \
        cmocka_unit_test_setup_teardown(test_write_all, setup_fn, teardown),           \
        cmocka_unit_test_setup_teardown(test_watch_order, setup_fn, teardown),         \
        cmocka_unit_test_setup_teardown(test_watch_gone, setup_fn, teardown),          \
        cmocka_unit_test_setup_teardown(test_watch_cancel, setup_fn, teardown)

int main(void)
{
    const struct CMUnitTest embedded[] = {CONTRACT(setup_embedded)};
    const struct CMUnitTest http[] = {
        CONTRACT(setup_http),
        cmocka_unit_test_setup_teardown(test_http_bookmark, setup_http, teardown),
        cmocka_unit_test_setup_teardown(test_http_resume, setup_http, teardown),
        cmocka_unit_test_setup_teardown(test_http_resume_gone, setup_http, teardown),
        cmocka_unit_test_setup_teardown(test_http_kubeconfig, setup_http, teardown),
        cmocka_unit_test_setup_teardown(test_http_unreachable, setup_http, teardown),
    };
    int failed = cmocka_run_group_tests_name("embedded", embedded, NULL, NULL);

    return failed + cmocka_run_group_tests_name("http", http, NULL, NULL);
}
