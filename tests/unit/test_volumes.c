/* test_volumes.c - the volume controller (controller/volumes.c) on a real
 * store: the default class, provisioning and binding, the smallest volume
 * that fits, WaitForFirstConsumer, protection of a claim in use, and what
 * happens to a volume when its claim goes (Delete: it and its directory;
 * Retain: Released). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/timeutil.h"
#include "controller/volumes.h"
#include "store_fixture.h"
#include "kc_fixture.h"
#include "strict_kc.h"

#define WAIT_MS 60000

typedef struct {
    store_fixture sf;
    ty_volumes *v;
    ty_kc *strict; /* setup_strict's client, or NULL */
} fixture;

static int setup_on(void **state, bool strict)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    assert_non_null(f);
    f->sf.s = store_fixture_open(f->sf.dir, NULL);
    ty_error_init(&err);
    if (strict)
        f->strict = strict_new(KC(f->sf.s));
    f->v = volumes_start(strict ? f->strict : KC(f->sf.s), f->sf.dir, &err);
    if (!f->v)
        fail_msg("volumes_start: %s", err.text);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_on(state, false);
}

/* The controller over a client that keeps writes as an API server does
 * (strict_kc.h): a claim and its volume were bound by plain writes whose
 * status (phase Bound) such a server ignores. */
static int setup_strict(void **state)
{
    return setup_on(state, true);
}

static int teardown(void **state)
{
    fixture *f = *state;

    volumes_stop(f->v);
    if (f->strict)
        kc_free(f->strict);
    store_fixture_close(f->sf.dir, f->sf.s);
    free(f);
    return 0;
}

/* Creates an object of res from JSON (` for "), defaulted as the API does. */
static void make(fixture *f, const api_resource *res, const char *ns, const char *text)
{
    char buf[2048];
    json_error_t je;
    json_t *obj;
    ty_error err;

    snprintf(buf, sizeof(buf), "%s", text);
    for (char *p = buf; *p; p++)
        if (*p == '`')
            *p = '"';
    if (!(obj = json_loads(buf, 0, &je)))
        fail_msg("bad test JSON: %s: %s", je.text, buf);
    ty_error_init(&err);
    if (ns)
        json_object_set_new(json_object_get(obj, "metadata"), "namespace", json_string(ns));
    if (api_prepare(res, obj, NULL, &err) < 0)
        fail_msg("invalid: %s", err.text);
    store_obj_unref(store_create_take(f->sf.s, api_store_key(res), ns ? ns : "", obj, &err));
    if (err.code)
        fail_msg("create: %s", err.text);
}

/* The value at a.b of the object, "" when absent or the object is gone. */
static char *field(fixture *f, const char *res, const char *ns, const char *name, const char *a,
                   const char *b)
{
    store_obj *o = store_get(f->sf.s, res, ns, name, NULL);
    const char *v = NULL;
    char *out;

    if (o)
        v = json_string_value(json_object_get(json_object_get(store_obj_json(o), a), b));
    out = strdup(v ? v : "");
    store_obj_unref(o);
    return out;
}

static bool wait_field(fixture *f, const char *res, const char *ns, const char *name,
                       const char *a, const char *b, const char *want)
{
    int64_t end = ty_now_ms() + WAIT_MS;

    for (;;) {
        char *got = field(f, res, ns, name, a, b);
        bool ok = !strcmp(got, want);
        free(got);
        if (ok)
            return true;
        if (ty_now_ms() > end)
            return false;
        usleep(10 * 1000);
    }
}

static bool wait_gone(fixture *f, const char *res, const char *ns, const char *name)
{
    int64_t end = ty_now_ms() + WAIT_MS;

    for (;;) {
        store_obj *o = store_get(f->sf.s, res, ns, name, NULL);
        store_obj_unref(o);
        if (!o)
            return true;
        if (ty_now_ms() > end)
            return false;
        usleep(10 * 1000);
    }
}

static void delete(fixture *f, const char *res, const char *ns, const char *name)
{
    bool deleted;
    ty_error err;

    ty_error_init(&err);
    store_obj_unref(store_delete(f->sf.s, res, ns, name, NULL, &deleted, &err));
    ty_error_clear(&err);
}

#define CLAIM(name, extra) \
    "{`metadata`:{`name`:`" name "`},`spec`:{`accessModes`:[`ReadWriteOnce`]," \
    "`resources`:{`requests`:{`storage`:`3Gi`}}" extra "}}"

static void test_provisions_for_default_class(void **state)
{
    fixture *f = *state;
    char *uid, pvname[128], dir[256], *path;
    struct stat st;

    path = field(f, "storageclasses.storage.k8s.io", "", "local-path", "metadata", "name");
    assert_string_equal(path, "local-path");
    free(path);
    make(f, &api_pvc, "default", CLAIM("data", ""));
    assert_true(wait_field(f, "persistentvolumeclaims", "default", "data", "status", "phase",
                           "Bound"));
    uid = field(f, "persistentvolumeclaims", "default", "data", "metadata", "uid");
    snprintf(pvname, sizeof(pvname), "pvc-%s", uid);
    path = field(f, "persistentvolumeclaims", "default", "data", "spec", "volumeName");
    assert_string_equal(path, pvname);
    free(path);
    path = field(f, "persistentvolumeclaims", "default", "data", "spec", "storageClassName");
    assert_string_equal(path, "local-path");
    free(path);
    assert_true(wait_field(f, "persistentvolumes", "", pvname, "status", "phase", "Bound"));
    snprintf(dir, sizeof(dir), "%s/volumes/%s", f->sf.dir, pvname);
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    /* The claim goes: its volume and directory with it (reclaim Delete). */
    delete(f, "persistentvolumeclaims", "default", "data");
    assert_true(wait_gone(f, "persistentvolumeclaims", "default", "data"));
    assert_true(wait_gone(f, "persistentvolumes", "", pvname));
    assert_int_equal(stat(dir, &st), -1);
    free(uid);
}

#define PV(name, size, extra) \
    "{`metadata`:{`name`:`" name "`},`spec`:{`capacity`:{`storage`:`" size "`}," \
    "`accessModes`:[`ReadWriteOnce`],`storageClassName`:``,`hostPath`:{`path`:`/tmp`}" extra "}}"

static void test_smallest_fit_and_retain(void **state)
{
    fixture *f = *state;
    char *got;

    make(f, &api_pv, NULL, PV("big", "20Gi", ""));
    make(f, &api_pv, NULL, PV("small", "5Gi", ""));
    make(f, &api_pv, NULL, PV("tiny", "1Gi", ""));
    assert_true(wait_field(f, "persistentvolumes", "", "tiny", "status", "phase", "Available"));
    make(f, &api_pvc, "default", CLAIM("c", ",`storageClassName`:``"));
    assert_true(wait_field(f, "persistentvolumeclaims", "default", "c", "status", "phase",
                           "Bound"));
    got = field(f, "persistentvolumeclaims", "default", "c", "spec", "volumeName");
    assert_string_equal(got, "small");
    free(got);
    assert_true(wait_field(f, "persistentvolumes", "", "small", "status", "phase", "Bound"));
    delete(f, "persistentvolumeclaims", "default", "c");
    assert_true(wait_field(f, "persistentvolumes", "", "small", "status", "phase", "Released"));
    got = field(f, "persistentvolumes", "", "big", "status", "phase");
    assert_string_equal(got, "Available");
    free(got);
}

static int pod_done(json_t *pod, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Succeeded"));
    return 0;
}

static void test_first_consumer_and_protection(void **state)
{
    fixture *f = *state;

    make(f, &api_storageclass, NULL,
         "{`metadata`:{`name`:`later`},`provisioner`:`trainyard.io/local-path`,"
         "`volumeBindingMode`:`WaitForFirstConsumer`}");
    make(f, &api_pvc, "default", CLAIM("w", ",`storageClassName`:`later`"));
    /* Pending (with its protection finalizer) until a pod names it. */
    assert_true(wait_field(f, "persistentvolumeclaims", "default", "w", "status", "phase",
                           "Pending"));
    {
        int64_t end = ty_now_ms() + WAIT_MS;
        char *fin = NULL;
        do {
            store_obj *o = store_get(f->sf.s, "persistentvolumeclaims", "default", "w", NULL);
            free(fin);
            fin = strdup(o ? json_string_value(json_array_get(json_object_get(json_object_get(
                                                   store_obj_json(o), "metadata"),
                                                                   "finalizers"), 0)) ?: ""
                           : "");
            store_obj_unref(o);
        } while (strcmp(fin, "kubernetes.io/pvc-protection") && ty_now_ms() < end &&
                 usleep(10000) == 0);
        assert_string_equal(fin, "kubernetes.io/pvc-protection");
        free(fin);
    }
    make(f, &api_pod, "default",
         "{`metadata`:{`name`:`user`},`spec`:{`nodeName`:`n1`,"
         "`containers`:[{`name`:`c`,`image`:`x`}],"
         "`volumes`:[{`name`:`v`,`persistentVolumeClaim`:{`claimName`:`w`}}]}}");
    assert_true(wait_field(f, "persistentvolumeclaims", "default", "w", "status", "phase",
                           "Bound"));
    /* In use by a pod that has not finished: kept, marked. */
    delete(f, "persistentvolumeclaims", "default", "w");
    usleep(200 * 1000);
    {
        store_obj *o = store_get(f->sf.s, "persistentvolumeclaims", "default", "w", NULL);
        assert_non_null(o);
        assert_non_null(json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                        "deletionTimestamp"));
        store_obj_unref(o);
    }
    /* The pod ends: the claim goes. */
    store_obj_unref(store_mutate(f->sf.s, "pods", "default", "user", pod_done, NULL, NULL));
    assert_true(wait_gone(f, "persistentvolumeclaims", "default", "w"));
}

/* A PV made by hand to look like a provisioned one (the annotation, the path
 * under <data>/volumes, a claimRef to a claim that is gone, Delete): the PV
 * goes, the directory (whatever it holds) stays: only a directory made for
 * the claim the PV is bound to is ever deleted. */
static void test_forged_volume_deletes_no_directory(void **state)
{
    fixture *f = *state;
    char dir[256], file[300], text[1024];
    struct stat st;
    FILE *fp;

    snprintf(dir, sizeof(dir), "%s/volumes/pvc-forged", f->sf.dir);
    {
        char parent[256];
        snprintf(parent, sizeof(parent), "%s/volumes", f->sf.dir);
        assert_true(mkdir(parent, 0755) == 0 || errno == EEXIST);
        assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
    }
    snprintf(file, sizeof(file), "%s/kept", dir);
    assert_non_null(fp = fopen(file, "w"));
    fclose(fp);
    snprintf(text, sizeof(text),
             "{`metadata`:{`name`:`pvc-forged`,`annotations`:{"
             "`pv.kubernetes.io/provisioned-by`:`trainyard.io/local-path`}},`spec`:{"
             "`capacity`:{`storage`:`1Gi`},`accessModes`:[`ReadWriteOnce`],"
             "`persistentVolumeReclaimPolicy`:`Delete`,`hostPath`:{`path`:`%s`},"
             "`claimRef`:{`namespace`:`default`,`name`:`gone`,`uid`:`nope`}}}",
             dir);
    make(f, &api_pv, NULL, text);
    assert_true(wait_gone(f, "persistentvolumes", "", "pvc-forged"));
    assert_int_equal(stat(file, &st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_provisions_for_default_class, setup, teardown),
        cmocka_unit_test_setup_teardown(test_smallest_fit_and_retain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_smallest_fit_and_retain, setup_strict, teardown),
        cmocka_unit_test_setup_teardown(test_first_consumer_and_protection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_volume_deletes_no_directory, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
