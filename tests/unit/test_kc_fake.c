/* test_kc_fake.c - the fake client (client/kc_fake.h) keeps the API's
 * semantics that controller tests lean on: what create sets, update's
 * precondition and generation, the status subresource both ways, delete's
 * preconditions and finalizers, selectors and pages, bind, patch, the
 * watch, the action log and injected failures. */
#include "ctl_fixture.h"

static int setup(void **state)
{
    ty_kc *c = kc_fake_new();

    assert_non_null(c);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    kc_free(*state);
    return 0;
}

static json_t *pod(const char *name, const char *app)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1",
                     "kind", "Pod", "metadata", "name", name, "labels", "app", app, "spec",
                     "containers", "name", "c", "image", "busybox");
}

static ty_obj *create(ty_kc *c, json_t *obj)
{
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_create(c, "pods", "default", obj, &err);
    if (!o)
        fail_msg("create: %s", err.text);
    return o;
}

static void test_create(void **state)
{
    ty_kc *c = *state;
    json_t *gen = pod("", "a");
    ty_obj *o;
    ty_error err;
    char rv1[TY_RV_MAX], rv2[TY_RV_MAX];
    const json_t *j;

    assert_string_equal(kc_kind(c), "fake");
    o = create(c, pod("p1", "a"));
    j = ty_obj_json(o);
    assert_true(json_string_length(ctl_at(j, "metadata.uid")) > 0);
    assert_non_null(ctl_str(j, "metadata.creationTimestamp"));
    assert_int_equal(json_integer_value(ctl_at(j, "metadata.generation")), 1);
    assert_string_equal(ctl_str(j, "metadata.namespace"), "default");
    ty_obj_rv(o, rv1, sizeof(rv1));
    ty_obj_unref(o);

    json_object_del(json_object_get(gen, "metadata"), "name");
    json_object_set_new(json_object_get(gen, "metadata"), "generateName", json_string("w-"));
    o = create(c, gen);
    assert_int_equal(strncmp(ctl_str(ty_obj_json(o), "metadata.name"), "w-", 2), 0);
    assert_int_equal(strlen(ctl_str(ty_obj_json(o), "metadata.name")), 7);
    ty_obj_rv(o, rv2, sizeof(rv2));
    assert_string_not_equal(rv1, rv2);
    assert_non_null(kc_fake_find(c, "create", "pods", ctl_str(ty_obj_json(o), "metadata.name")));
    ty_obj_unref(o);

    ty_error_init(&err);
    assert_null(kc_create(c, "pods", "default", pod("p1", "b"), &err));
    assert_int_equal(err.code, TY_EEXISTS);
    assert_int_equal(kc_fake_find(c, "create", "pods", "p1")->code, TY_EEXISTS);
    ty_error_clear(&err);
    assert_int_equal(kc_fake_count(c, "create", "pods"), 3);
}

static int set_label(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"), "app",
                        json_string(arg));
    return 0;
}

static int set_image(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_array_get(ctl_at(obj, "spec.containers"), 0), "image",
                        json_string(arg));
    return 0;
}

static void test_update_and_generation(void **state)
{
    ty_kc *c = *state;
    ty_obj *o = create(c, pod("p1", "a")), *u;
    json_t *stale = ty_obj_json_copy(o);
    ty_error err;

    ty_error_init(&err);
    kc_fake_clear_actions(c);
    /* metadata only: generation stays */
    u = kc_mutate(c, "pods", "default", "p1", set_label, "b", 0, &err);
    assert_int_equal(json_integer_value(ctl_at(ty_obj_json(u), "metadata.generation")), 1);
    ty_obj_unref(u);
    /* the spec: generation goes up */
    u = kc_mutate(c, "pods", "default", "p1", set_image, "nginx", 0, &err);
    assert_int_equal(json_integer_value(ctl_at(ty_obj_json(u), "metadata.generation")), 2);
    ty_obj_unref(u);
    /* nothing changed: no write */
    u = kc_mutate(c, "pods", "default", "p1", set_image, "nginx", 0, &err);
    ty_obj_unref(u);
    assert_int_equal(kc_fake_count(c, "update", "pods"), 2);

    /* a stale resourceVersion is a conflict */
    assert_null(kc_update(c, "pods", "default", stale, &err));
    assert_int_equal(err.code, TY_ECONFLICT);
    ty_error_clear(&err);
    json_object_del(json_object_get(stale, "metadata"), "resourceVersion");
    u = kc_update(c, "pods", "default", stale, &err);
    assert_non_null(u);
    assert_string_equal(ctl_str(ty_obj_json(u), "metadata.labels.app"), "a");
    ty_obj_unref(u);
    json_decref(stale);
    ty_obj_unref(o);
}

static int write_all_over(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(obj, "status", json_pack("{s:s}", "phase", (const char *)arg));
    set_label(obj, "changed", err);
    set_image(obj, "changed", err);
    return 0;
}

/* KC_STATUS and status patches write .status alone (for a pod also its
 * labels, annotations and finalizers, as pods/status takes them); a write of
 * the object itself leaves .status alone (the API server's rule), unless
 * lax. */
static void test_status_subresource(void **state)
{
    ty_kc *c = *state;
    json_t *p = pod("p1", "a"), *patch;
    ty_obj *o;

    json_object_set_new(p, "status", json_pack("{s:s}", "phase", "Succeeded"));
    o = create(c, p);
    assert_null(ctl_at(ty_obj_json(o), "status")); /* dropped on create */
    ty_obj_unref(o);

    o = kc_mutate(c, "pods", "default", "p1", write_all_over, "Running", KC_STATUS, NULL);
    assert_string_equal(ctl_str(ty_obj_json(o), "status.phase"), "Running");
    /* pods/status takes the labels too (kube-apiserver's rule for pods) */
    assert_string_equal(ctl_str(ty_obj_json(o), "metadata.labels.app"), "changed");
    assert_string_equal(ctl_str(json_array_get(ctl_at(ty_obj_json(o), "spec.containers"), 0),
                                "image"), "busybox");
    ty_obj_unref(o);
    assert_int_equal(kc_fake_count(c, "update", "pods/status"), 1);
    assert_int_equal(kc_fake_count(c, "update", "pods"), 0);

    o = kc_mutate(c, "pods", "default", "p1", write_all_over, "Failed", 0, NULL);
    assert_string_equal(ctl_str(ty_obj_json(o), "status.phase"), "Running");
    assert_string_equal(ctl_str(ty_obj_json(o), "metadata.labels.app"), "changed");
    ty_obj_unref(o);

    patch = json_pack("{s:{s:s}, s:{s:{s:s}}, s:{s:s}}", "status", "phase", "Succeeded",
                      "metadata", "labels", "app", "patched", "spec", "nodeName", "n9");
    o = kc_patch(c, "pods", "default", "p1", KC_PATCH_MERGE, patch, true, NULL);
    assert_string_equal(ctl_str(ty_obj_json(o), "status.phase"), "Succeeded");
    assert_string_equal(ctl_str(ty_obj_json(o), "metadata.labels.app"), "patched");
    assert_null(ctl_at(ty_obj_json(o), "spec.nodeName"));
    ty_obj_unref(o);
    o = kc_patch(c, "pods", "default", "p1", KC_PATCH_MERGE, patch, false, NULL);
    assert_string_equal(ctl_str(ty_obj_json(o), "metadata.labels.app"), "patched");
    assert_string_equal(ctl_str(ty_obj_json(o), "spec.nodeName"), "n9");
    ty_obj_unref(o);
    json_decref(patch);
    assert_int_equal(kc_fake_count(c, "patch", "pods/status"), 1);
    assert_int_equal(kc_fake_count(c, "patch", "pods"), 1);

    kc_fake_set_lax_status(c, true);
    o = kc_mutate(c, "pods", "default", "p1", write_all_over, "Failed", 0, NULL);
    assert_string_equal(ctl_str(ty_obj_json(o), "status.phase"), "Failed");
    ty_obj_unref(o);
}

/* A resourceVersion in a patch is its precondition (a stale one is a 409),
 * through /status too, as kube-apiserver takes it. */
static void test_patch_precondition(void **state)
{
    ty_kc *c = *state;
    ty_obj *o = create(c, pod("p1", "a"));
    char rv[TY_RV_MAX];
    json_t *patch;
    ty_error err;

    ty_obj_rv(o, rv, sizeof(rv));
    ty_obj_unref(o);
    ty_error_init(&err);
    patch = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "resourceVersion", rv, "status",
                      "phase", "Running");
    o = kc_patch(c, "pods", "default", "p1", KC_PATCH_MERGE, patch, true, &err);
    assert_non_null(o); /* current: taken */
    ty_obj_unref(o);
    for (int status = 0; status < 2; status++) {
        o = kc_patch(c, "pods", "default", "p1", KC_PATCH_MERGE, patch, status, &err);
        assert_null(o); /* stale now */
        assert_int_equal(err.code, TY_ECONFLICT);
        ty_error_clear(&err);
    }
    json_decref(patch);
    assert_int_equal(kc_fake_count(c, "patch", "pods/status"), 2);
}

static int drop_finalizers(json_t *obj, void *arg, ty_error *err)
{
    (void)arg;
    (void)err;
    json_object_del(json_object_get(obj, "metadata"), "finalizers");
    return 0;
}

static void test_delete(void **state)
{
    ty_kc *c = *state;
    json_t *p = pod("held", "a");
    kc_delete_opts wrong = {.precondition_uid = "not-its-uid"};
    kc_delete_opts fg = {.propagation = KC_PROPAGATE_FOREGROUND};
    ty_error err;
    ty_obj *o;
    bool deleted = true;

    ty_error_init(&err);
    json_object_set_new(json_object_get(p, "metadata"), "finalizers",
                        json_pack("[s]", "example.com/hold"));
    ty_obj_unref(create(c, p));
    ty_obj_unref(create(c, pod("free", "a")));

    assert_null(kc_delete(c, "pods", "default", "free", &wrong, NULL, &err));
    assert_int_equal(err.code, TY_ECONFLICT);
    ty_error_clear(&err);
    assert_true(ctl_exists(c, "pods", "free"));
    o = kc_delete(c, "pods", "default", "free", NULL, &deleted, &err);
    assert_non_null(o);
    assert_true(deleted);
    ty_obj_unref(o);
    assert_false(ctl_exists(c, "pods", "free"));
    assert_null(kc_delete(c, "pods", "default", "free", NULL, NULL, &err));
    assert_int_equal(err.code, TY_ENOTFOUND);
    ty_error_clear(&err);

    /* finalizers hold it: marked, and gone when the last one goes */
    o = kc_delete(c, "pods", "default", "held", &fg, &deleted, &err);
    assert_false(deleted);
    assert_non_null(ctl_str(ty_obj_json(o), "metadata.deletionTimestamp"));
    assert_int_equal(json_integer_value(ctl_at(ty_obj_json(o),
                                               "metadata.deletionGracePeriodSeconds")), 30);
    assert_int_equal(json_array_size(ctl_at(ty_obj_json(o), "metadata.finalizers")), 2);
    ty_obj_unref(o);
    assert_true(ctl_exists(c, "pods", "held"));
    ty_obj_unref(kc_mutate(c, "pods", "default", "held", drop_finalizers, NULL, 0, NULL));
    assert_false(ctl_exists(c, "pods", "held"));
}

static bool only_b(const json_t *obj, void *arg)
{
    (void)arg;
    return !strcmp(ctl_str(obj, "metadata.name"), "b");
}

static void test_list(void **state)
{
    ty_kc *c = *state;
    const char *names[] = {"d", "b", "a", "c"};
    kc_list l;
    json_t *res;
    ty_error err;

    ty_error_init(&err);
    for (size_t i = 0; i < 4; i++)
        ty_obj_unref(create(c, pod(names[i], i % 2 ? "x" : "y")));
    ctl_put_yaml(c, "apiVersion: v1\nkind: Pod\nmetadata: {name: z, namespace: other, "
                    "labels: {app: x}}\nspec: {containers: [{name: c, image: busybox}]}\n");

    assert_int_equal(kc_list_objects(c, "pods", &(kc_list_opts){.ns = "default"}, &l, &err), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(ctl_str(ty_obj_json(l.items[0]), "metadata.name"), "a");
    assert_string_equal(ctl_str(ty_obj_json(l.items[3]), "metadata.name"), "d");
    kc_list_free(&l);

    assert_int_equal(kc_list_objects(c, "pods", &(kc_list_opts){.label_selector = "app=x"}, &l,
                                     &err), 0);
    assert_int_equal(l.n, 3); /* b and c in default, z in other */
    kc_list_free(&l);
    assert_int_equal(kc_list_objects(c, "pods",
                                     &(kc_list_opts){.field_selector = "metadata.name=c"}, &l,
                                     &err), 0);
    assert_int_equal(l.n, 1);
    kc_list_free(&l);
    assert_int_equal(kc_list_objects(c, "pods", &(kc_list_opts){.filter = only_b}, &l, &err),
                     0);
    assert_int_equal(l.n, 1);
    kc_list_free(&l);

    /* pages of three */
    assert_int_equal(kc_list_objects(c, "pods", &(kc_list_opts){.ns = "default", .limit = 3},
                                     &l, &err), 0);
    assert_int_equal(l.n, 3);
    assert_non_null(l.continue_token);
    assert_int_equal(l.remaining, 1);
    {
        kc_list next;
        char *tok = strdup(l.continue_token);
        assert_int_equal(kc_list_objects(c, "pods",
                                         &(kc_list_opts){.ns = "default", .limit = 3,
                                                         .continue_token = tok},
                                         &next, &err), 0);
        assert_int_equal(next.n, 1);
        assert_string_equal(ctl_str(ty_obj_json(next.items[0]), "metadata.name"), "d");
        assert_null(next.continue_token);
        kc_list_free(&next);
        free(tok);
    }
    kc_list_free(&l);

    assert_int_equal(kc_count(c, "pods"), 5);
    assert_int_equal(kc_count(c, "services"), 0);
    res = kc_resources(c);
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(json_string_value(json_array_get(res, 0)), "pods");
    json_decref(res);
}

static void test_list_owned(void **state)
{
    ty_kc *c = *state;
    json_t *p = pod("owned", "a");
    kc_list l;

    json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
                        json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "v1", "kind",
                                  "ConfigMap", "name", "cm", "uid", "owner-uid", "controller",
                                  1));
    ty_obj_unref(create(c, p));
    ty_obj_unref(create(c, pod("loose", "a")));
    assert_int_equal(kc_list_owned(c, "pods", "default", "owner-uid", &l, NULL), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(ctl_str(ty_obj_json(l.items[0]), "metadata.name"), "owned");
    kc_list_free(&l);
    assert_int_equal(kc_list_owned(c, "pods", NULL, "other", &l, NULL), 0);
    assert_int_equal(l.n, 0);
    kc_list_free(&l);
}

static void test_bind(void **state)
{
    ty_kc *c = *state;
    ty_obj *o = create(c, pod("p1", "a"));
    const kc_fake_action *a;
    ty_error err;
    json_t *j;

    ty_error_init(&err);
    assert_int_equal(kc_bind(c, "default", "p1", "wrong-uid", "node-1", &err), -1);
    assert_int_equal(err.code, TY_ECONFLICT);
    ty_error_clear(&err);
    assert_int_equal(kc_bind(c, "default", "p1", NULL, "node-1", &err), 0);
    j = ctl_get(c, "pods", "p1");
    assert_string_equal(ctl_str(j, "spec.nodeName"), "node-1");
    assert_string_equal(ctl_str(json_array_get(ctl_at(j, "status.conditions"), 0), "type"),
                        "PodScheduled");
    json_decref(j);
    a = kc_fake_find(c, "create", "pods/binding", "p1");
    assert_non_null(a);
    assert_int_equal(a->code, TY_OK);
    assert_int_equal(kc_fake_count(c, "create", "pods"), 1); /* the pod's own */
    assert_int_equal(kc_bind(c, "default", "p1", NULL, "node-2", &err), -1);
    assert_int_equal(err.code, TY_ECONFLICT);
    ty_error_clear(&err);
    ty_obj_unref(o);
}

static void test_watch(void **state)
{
    ty_kc *c = *state;
    const char *const only[] = {"pods", NULL};
    kc_watch *all, *pods, *replay;
    kc_event ev;
    kc_list l;
    ty_error err;
    char from[TY_RV_MAX];

    ty_error_init(&err);
    ty_obj_unref(create(c, pod("before", "a")));
    assert_int_equal(kc_list_objects(c, "pods", NULL, &l, &err), 0);
    snprintf(from, sizeof(from), "%s", l.rv);
    kc_list_free(&l);
    all = kc_watch_open(c, NULL, NULL, &err);
    pods = kc_watch_open(c, only, NULL, &err);
    assert_non_null(all);
    assert_non_null(pods);
    assert_int_equal(kc_watch_next(all, -1, &ev, &err), 0); /* never waits */

    ty_obj_unref(kc_create(c, "configmaps", "default",
                           json_pack("{s:{s:s}}", "metadata", "name", "cm"), NULL));
    ty_obj_unref(create(c, pod("after", "a")));
    ty_obj_unref(kc_mutate(c, "pods", "default", "after", set_label, "b", 0, NULL));
    ty_obj_unref(kc_delete(c, "pods", "default", "after", NULL, NULL, NULL));

    assert_int_equal(kc_watch_next(all, 0, &ev, &err), 1);
    assert_int_equal(ev.type, KC_ADDED);
    assert_string_equal(ev.resource, "configmaps");
    kc_event_release(&ev);
    static const kc_event_type want[] = {KC_ADDED, KC_MODIFIED, KC_DELETED};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(kc_watch_next(pods, 0, &ev, &err), 1);
        assert_int_equal(ev.type, want[i]);
        assert_string_equal(ev.resource, "pods");
        kc_event_release(&ev);
    }
    assert_int_equal(kc_watch_next(pods, 0, &ev, &err), 0);

    /* from the list's resourceVersion: everything after it, again */
    replay = kc_watch_open(c, only, from, &err);
    assert_non_null(replay);
    assert_int_equal(kc_watch_next(replay, 0, &ev, &err), 1);
    assert_int_equal(ev.type, KC_ADDED);
    assert_string_equal(ctl_str(ty_obj_json(ev.obj), "metadata.name"), "after");
    kc_event_release(&ev);
    assert_null(kc_watch_open(c, NULL, "x1", &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
    ty_error_clear(&err);

    kc_watch_cancel(all);
    assert_int_equal(kc_watch_next(all, 0, &ev, &err), -1);
    ty_error_clear(&err);
    kc_watch_close(all);
    kc_watch_close(pods);
    kc_watch_close(replay);
}

static void test_injected_failures(void **state)
{
    ty_kc *c = *state;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    kc_fake_fail_next(c, "create", "services", TY_EUNAVAILABLE);
    kc_fake_fail_next(c, "get", NULL, TY_EINTERNAL);
    o = create(c, pod("p1", "a")); /* not a service: untouched */
    ty_obj_unref(o);
    assert_null(kc_get(c, "pods", "default", "p1", &err));
    assert_int_equal(err.code, TY_EINTERNAL);
    ty_error_clear(&err);
    o = kc_get(c, "pods", "default", "p1", &err); /* once only */
    assert_non_null(o);
    ty_obj_unref(o);
    assert_null(kc_create(c, "services", "default",
                          json_pack("{s:{s:s}}", "metadata", "name", "s1"), &err));
    assert_int_equal(err.code, TY_EUNAVAILABLE);
    ty_error_clear(&err);
    assert_int_equal(kc_fake_find(c, "create", "services", "s1")->code, TY_EUNAVAILABLE);
    assert_false(ctl_exists(c, "services", "s1"));
}

/* kc_write_all runs the ops one by one here, each as if alone. */
static void test_write_all(void **state)
{
    ty_kc *c = *state;
    kc_op ops[3];

    ty_obj_unref(create(c, pod("p1", "a")));
    ops[0] = kc_op_create("pods", "default", pod("p2", "a"));
    ops[1] = kc_op_mutate("pods", "default", "p1", set_label, "z", 0);
    ops[2] = kc_op_delete("pods", "default", "nope", NULL);
    assert_int_equal(kc_write_all(c, ops, 3), 1);
    assert_non_null(ops[0].result);
    assert_string_equal(ctl_str(ty_obj_json(ops[1].result), "metadata.labels.app"), "z");
    assert_int_equal(ops[2].err.code, TY_ENOTFOUND);
    for (size_t i = 0; i < 3; i++)
        kc_op_clear(&ops[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_and_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_subresource, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch_precondition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_owned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_injected_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_all, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
