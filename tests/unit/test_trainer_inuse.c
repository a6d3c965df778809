/* test_trainer_inuse.c - the runtime-in-use finalizer
 * (controller/trainer_inuse.h) over the fake client: added while TrainJobs
 * name a runtime, removed when none do, never added to a runtime being
 * deleted, a TrainingRuntime counted in its own namespace only. */
#include "ctl_fixture.h"

#include "controller/trainer_inuse.h"

#define CTR "clustertrainingruntimes.trainer.kubeflow.org"
#define TR "trainingruntimes.trainer.kubeflow.org"
#define TJ "trainjobs.trainer.kubeflow.org"

static void runtime(ty_kc *c, const char *kind, const char *name, const char *ns)
{
    ctl_put_yaml(c, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: %s\n"
                    "metadata: {name: %s%s%s}\nspec: {mlPolicy: {numNodes: 1}}\n",
                 kind, name, ns ? ", namespace: " : "", ns ? ns : "");
}

static void job(ty_kc *c, const char *name, const char *ns, const char *kind, const char *rt)
{
    ctl_put_yaml(c, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                    "metadata: {name: %s, namespace: %s}\n"
                    "spec: {runtimeRef: {name: %s, kind: %s}}\n",
                 name, ns, rt, kind);
}

static bool has_fin(ty_kc *c, const char *res, const char *ns, const char *name)
{
    json_t *o = ctl_get_in(c, res, ns, name);
    const json_t *f = o ? ctl_at(o, "metadata.finalizers") : NULL;
    bool yes = false;

    for (size_t i = 0; i < json_array_size(f); i++)
        yes |= !strcmp(json_string_value(json_array_get(f, i)), TRAINER_INUSE_FINALIZER);
    json_decref(o);
    return yes;
}

static void test_cluster_runtime(void **state)
{
    ty_kc *c = kc_fake_new();
    (void)state;

    runtime(c, "ClusterTrainingRuntime", "mine", NULL);
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    assert_false(has_fin(c, CTR, "", "mine"));
    job(c, "a", "team", "ClusterTrainingRuntime", "mine");
    job(c, "b", "team", "ClusterTrainingRuntime", "other");
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    assert_true(has_fin(c, CTR, "", "mine"));
    kc_fake_clear_actions(c);
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0); /* level-triggered: nothing to do */
    ty_obj_unref(kc_delete(c, TJ, "team", "a", NULL, NULL, NULL));
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    assert_false(has_fin(c, CTR, "", "mine"));
    /* a runtime gone, a key that is no runtime's: nothing, no error */
    assert_int_equal(trainer_inuse_reconcile(c, "C/nope"), 0);
    assert_int_equal(trainer_inuse_reconcile(c, "X"), 0);
    kc_free(c);
}

/* Deleting a runtime in use leaves it marked until its jobs go; one being
 * deleted without the finalizer never gains it. */
static void test_delete_waits(void **state)
{
    ty_kc *c = kc_fake_new();
    bool deleted = true;
    (void)state;

    runtime(c, "ClusterTrainingRuntime", "mine", NULL);
    job(c, "a", "team", "ClusterTrainingRuntime", "mine");
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    ty_obj_unref(kc_delete(c, CTR, "", "mine", NULL, &deleted, NULL));
    assert_false(deleted);
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    assert_true(has_fin(c, CTR, "", "mine"));
    ty_obj_unref(kc_delete(c, TJ, "team", "a", NULL, NULL, NULL));
    assert_int_equal(trainer_inuse_reconcile(c, "C/mine"), 0);
    assert_null(ctl_get_in(c, CTR, "", "mine"));
    kc_free(c);
}

static void test_namespaced_runtime(void **state)
{
    ty_kc *c = kc_fake_new();
    (void)state;

    runtime(c, "TrainingRuntime", "local", "team");
    runtime(c, "TrainingRuntime", "local", "other");
    runtime(c, "ClusterTrainingRuntime", "local", NULL);
    job(c, "a", "team", "TrainingRuntime", "local");
    assert_int_equal(trainer_inuse_reconcile(c, "T/team/local"), 0);
    assert_int_equal(trainer_inuse_reconcile(c, "T/other/local"), 0);
    assert_int_equal(trainer_inuse_reconcile(c, "C/local"), 0);
    assert_true(has_fin(c, TR, "team", "local"));
    assert_false(has_fin(c, TR, "other", "local"));
    assert_false(has_fin(c, CTR, "", "local"));
    kc_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_runtime),
        cmocka_unit_test(test_delete_waits),
        cmocka_unit_test(test_namespaced_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
