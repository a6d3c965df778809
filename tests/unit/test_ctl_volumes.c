/* test_ctl_volumes.c - the volume controller's passes (volumes_reconcile)
 * over one claim or volume against the fake client: binding to the
 * smallest volume that fits, provisioning for the built-in class, and the
 * volume going with its claim. No store, no threads, no sleeps. */
#include "ctl_fixture.h"

#include <sys/stat.h>
#include <unistd.h>

#include "controller/volumes.h"
#include "tmpdir.h"

#define PVCS "persistentvolumeclaims"
#define PVS "persistentvolumes"

typedef struct fixture {
    ty_kc *c;
    char dir[64];
} fixture;

/* The controller writes a volume's and a claim's status with the object
 * itself (volumes.c: pv_claim, claim_bind, provision's create): kept by the
 * embedded client's store, dropped by an API server. These tests take the
 * store's rule (lax) to test the decisions; test_bound_under_api_server
 * takes the API server's. */
static int setup_strict(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->c = kc_fake_new();
    assert_non_null(f->c);
    snprintf(f->dir, sizeof(f->dir), "/tmp/ty-ctl-volumes-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    *state = f;
    return 0;
}

static int setup(void **state)
{
    setup_strict(state);
    kc_fake_set_lax_status(((fixture *)*state)->c, true);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    kc_free(f->c);
    tmpdir_remove(f->dir);
    free(f);
    return 0;
}

static int pass(fixture *f, const char *key)
{
    return volumes_reconcile(f->c, f->dir, key);
}

#define PV(name, size, phase)                                                                 \
    "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " name "}\n"                   \
    "spec: {capacity: {storage: " size "}, accessModes: [ReadWriteOnce],\n"                  \
    "  storageClassName: manual, hostPath: {path: /srv/" name "}}\n"                          \
    "status: {phase: " phase "}\n"

#define CLAIM(name, cls, size)                                                                \
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name "}\n"              \
    "spec: {" cls "accessModes: [ReadWriteOnce], resources: {requests: {storage: " size     \
    "}}}\n"

/* The claim first gets its protection finalizer, and the pass ends there
 * (the write's event brings the next); then it binds to the smallest
 * volume of its class that holds it, the volume first. */
static void test_binds_smallest_fitting_volume(void **state)
{
    fixture *f = *state;
    const kc_fake_action *a;
    size_t n;
    json_t *pv, *claim;
    char uid[64];

    ctl_put_yaml(f->c, PV("pv-big", "20Gi", "Available"));
    ctl_put_yaml(f->c, PV("pv-small", "5Gi", "Available"));
    ctl_put_yaml(f->c, PV("pv-tiny", "1Gi", "Available"));
    snprintf(uid, sizeof(uid), "%s",
             ctl_put_yaml(f->c, CLAIM("data", "storageClassName: manual, ", "4Gi")));

    assert_int_equal(pass(f, "c/default/data"), 0);
    assert_string_equal(ctl_names(f->c, "update", PVCS), "data");
    assert_int_equal(kc_fake_count(f->c, "update", PVS), 0);
    claim = ctl_get(f->c, PVCS, "data");
    assert_string_equal(json_string_value(json_array_get(ctl_at(claim, "metadata.finalizers"), 0)),
                        "kubernetes.io/pvc-protection");
    json_decref(claim);

    kc_fake_clear_actions(f->c);
    assert_int_equal(pass(f, "c/default/data"), 0);
    a = kc_fake_actions(f->c, &n);
    /* the volume first, then the claim; each its spec, then its status
     * through /status (where an API server takes a phase) */
    assert_int_equal(n, 4);
    assert_string_equal(a[0].resource, PVS);
    assert_string_equal(a[0].name, "pv-small");
    assert_string_equal(a[0].subresource, "");
    assert_string_equal(a[1].resource, PVS);
    assert_string_equal(a[1].subresource, "status");
    assert_string_equal(a[2].resource, PVCS);
    assert_string_equal(a[2].name, "data");
    assert_string_equal(a[2].subresource, "");
    assert_string_equal(a[3].resource, PVCS);
    assert_string_equal(a[3].subresource, "status");
    pv = ctl_get_in(f->c, PVS, "", "pv-small");
    assert_string_equal(ctl_str(pv, "spec.claimRef.name"), "data");
    assert_string_equal(ctl_str(pv, "spec.claimRef.uid"), uid);
    assert_string_equal(ctl_str(pv, "status.phase"), "Bound");
    json_decref(pv);
    claim = ctl_get(f->c, PVCS, "data");
    assert_string_equal(ctl_str(claim, "spec.volumeName"), "pv-small");
    assert_string_equal(ctl_str(claim, "status.phase"), "Bound");
    assert_string_equal(ctl_str(claim, "status.capacity.storage"), "5Gi");
    json_decref(claim);

    /* Bound: the next pass writes nothing. */
    kc_fake_clear_actions(f->c);
    assert_int_equal(pass(f, "c/default/data"), 0);
    assert_int_equal(kc_fake_count(f->c, NULL, NULL), 0);
}

/* A claim without a class gets the default class; the built-in class
 * provisions a directory and a volume bound to the claim; the claim
 * deleted, the volume and its directory go (reclaim policy Delete). */
static void test_provision_and_reclaim(void **state)
{
    fixture *f = *state;
    char uid[64], pvname[128], path[256];
    json_t *claim, *pv;
    struct stat st;

    ctl_put_yaml(f->c, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\n"
                       "metadata: {name: local-path, annotations: "
                       "{storageclass.kubernetes.io/is-default-class: \"true\"}}\n"
                       "provisioner: trainyard.io/local-path\nreclaimPolicy: Delete\n"
                       "volumeBindingMode: Immediate\n");
    snprintf(uid, sizeof(uid), "%s", ctl_put_yaml(f->c, CLAIM("scratch", "", "1Gi")));
    snprintf(pvname, sizeof(pvname), "pvc-%s", uid);

    assert_int_equal(pass(f, "c/default/scratch"), 0); /* the finalizer */
    assert_int_equal(pass(f, "c/default/scratch"), 0); /* the default class */
    claim = ctl_get(f->c, PVCS, "scratch");
    assert_string_equal(ctl_str(claim, "spec.storageClassName"), "local-path");
    json_decref(claim);

    kc_fake_clear_actions(f->c);
    assert_int_equal(pass(f, "c/default/scratch"), 0);
    assert_string_equal(ctl_names(f->c, "create", PVS), pvname);
    assert_int_equal(ctl_events(f->c, "ProvisioningSucceeded"), 1);
    pv = ctl_get_in(f->c, PVS, "", pvname);
    snprintf(path, sizeof(path), "%s/volumes/%s", f->dir, pvname);
    assert_string_equal(ctl_str(pv, "spec.hostPath.path"), path);
    assert_string_equal(ctl_str(pv, "spec.claimRef.uid"), uid);
    json_decref(pv);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    claim = ctl_get(f->c, PVCS, "scratch");
    assert_string_equal(ctl_str(claim, "status.phase"), "Bound");
    assert_string_equal(ctl_str(claim, "spec.volumeName"), pvname);
    json_decref(claim);

    /* The claim deleted: its protection holds it until a pass finds no
     * pod using it, then it goes; the volume's pass deletes the volume
     * and its directory. */
    ty_obj_unref(kc_delete(f->c, PVCS, "default", "scratch", NULL, NULL, NULL));
    assert_true(ctl_exists(f->c, PVCS, "scratch"));
    kc_fake_clear_actions(f->c);
    assert_int_equal(pass(f, "c/default/scratch"), 0);
    assert_false(ctl_exists(f->c, PVCS, "scratch"));
    {
        char key[160];
        snprintf(key, sizeof(key), "v//%s", pvname);
        assert_int_equal(pass(f, key), 0);
    }
    assert_string_equal(ctl_names(f->c, "delete", PVS), pvname);
    assert_null(ctl_get_in(f->c, PVS, "", pvname));
    assert_int_equal(stat(path, &st), -1);
}

/* A claim in use by a pod keeps its protection while being deleted. */
static void test_protection_while_used(void **state)
{
    fixture *f = *state;

    ctl_put_yaml(f->c, PV("pv-small", "5Gi", "Available"));
    ctl_put_yaml(f->c, CLAIM("data", "storageClassName: manual, ", "4Gi"));
    assert_int_equal(pass(f, "c/default/data"), 0);
    assert_int_equal(pass(f, "c/default/data"), 0);
    ctl_put_yaml(f->c, "apiVersion: v1\nkind: Pod\nmetadata: {name: user}\n"
                       "spec: {nodeName: node-0, containers: [{name: c, image: busybox}],\n"
                       "  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}\n"
                       "status: {phase: Running}\n");
    ty_obj_unref(kc_delete(f->c, PVCS, "default", "data", NULL, NULL, NULL));
    kc_fake_clear_actions(f->c);
    assert_int_equal(pass(f, "c/default/data"), 0);
    assert_true(ctl_exists(f->c, PVCS, "data"));
    assert_int_equal(kc_fake_count(f->c, "update", PVCS), 0);
}

/* Under the API server's rule a bound claim says Bound: the binding writes
 * the phases through /status (they were written with the objects, and an
 * API server dropped them). */
static void test_bound_under_api_server(void **state)
{
    fixture *f = *state;
    json_t *claim, *pv;

    ctl_put_yaml(f->c, PV("pv-small", "5Gi", "Available"));
    ctl_put_yaml(f->c, CLAIM("data", "storageClassName: manual, ", "4Gi"));
    assert_int_equal(pass(f, "c/default/data"), 0);
    assert_int_equal(pass(f, "c/default/data"), 0);
    claim = ctl_get(f->c, PVCS, "data");
    assert_string_equal(ctl_str(claim, "spec.volumeName"), "pv-small");
    assert_string_equal(ctl_str(claim, "status.phase"), "Bound");
    json_decref(claim);
    pv = ctl_get_in(f->c, PVS, "", "pv-small");
    assert_string_equal(ctl_str(pv, "status.phase"), "Bound");
    json_decref(pv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_binds_smallest_fitting_volume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_provision_and_reclaim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protection_while_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound_under_api_server, setup_strict, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
