/* test_openapi.c - the /openapi/v3 documents and index kubectl 1.32 relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"

static bool has_query_param(const json_t *op, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(op, "parameters"), i, p)
        if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0 &&
            strcmp(json_string_value(json_object_get(p, "in")), "query") == 0)
            return true;
    return false;
}

static void assert_gvk(const json_t *g, const char *group, const char *version, const char *kind)
{
    assert_non_null(g);
    assert_string_equal(json_string_value(json_object_get(g, "group")), group);
    assert_string_equal(json_string_value(json_object_get(g, "version")), version);
    assert_string_equal(json_string_value(json_object_get(g, "kind")), kind);
}

static void test_core_document(void **state)
{
    json_t *doc = api_openapi_v3("", "v1"), *paths, *item, *coll, *schemas, *pod;
    (void)state;

    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "openapi")), "3.0.0");
    paths = json_object_get(doc, "paths");
    coll = json_object_get(paths, "/api/v1/namespaces/{namespace}/pods");
    item = json_object_get(paths, "/api/v1/namespaces/{namespace}/pods/{name}");
    assert_non_null(coll);
    assert_non_null(item);
    assert_non_null(json_object_get(coll, "get"));
    assert_true(has_query_param(json_object_get(coll, "post"), "fieldValidation"));
    assert_true(has_query_param(json_object_get(item, "put"), "fieldValidation"));
    assert_true(has_query_param(json_object_get(item, "patch"), "fieldValidation"));
    assert_non_null(json_object_get(item, "get"));
    assert_non_null(json_object_get(item, "delete"));
    assert_gvk(json_object_get(json_object_get(item, "patch"), "x-kubernetes-group-version-kind"),
               "", "v1", "Pod");
    assert_gvk(json_object_get(json_object_get(coll, "post"), "x-kubernetes-group-version-kind"),
               "", "v1", "Pod");
    /* Built-in kinds accept strategic merge patch. */
    assert_non_null(json_object_get(json_object_get(json_object_get(json_object_get(
        item, "patch"), "requestBody"), "content"), "application/strategic-merge-patch+json"));
    /* Cluster-scoped kinds have no namespace segment. */
    assert_non_null(json_object_get(paths, "/api/v1/nodes/{name}"));
    assert_non_null(json_object_get(paths, "/api/v1/namespaces/{name}"));
    assert_null(json_object_get(paths, "/api/v1/namespaces/{namespace}/nodes"));
    /* Only this group-version. */
    assert_null(json_object_get(paths, "/apis/kubeflow.org/v1/namespaces/{namespace}/tfjobs"));

    schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    pod = json_object_get(schemas, "io.k8s.api.core.v1.Pod");
    assert_non_null(pod);
    assert_gvk(json_array_get(json_object_get(pod, "x-kubernetes-group-version-kind"), 0),
               "", "v1", "Pod");
    assert_non_null(json_object_get(schemas, "io.k8s.api.core.v1.PodList"));
    assert_non_null(json_object_get(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
    json_t *containers = json_object_get(json_object_get(json_object_get(json_object_get(
        json_object_get(pod, "properties"), "spec"), "properties"), "containers"), "items");
    assert_non_null(containers);
    json_t *cfield = json_object_get(json_object_get(json_object_get(json_object_get(
        pod, "properties"), "spec"), "properties"), "containers");
    assert_string_equal(json_string_value(json_object_get(cfield, "x-kubernetes-patch-merge-key")),
                        "name");
    assert_string_equal(json_string_value(json_object_get(cfield, "x-kubernetes-patch-strategy")),
                        "merge");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
        containers, "properties"), "image"), "type")), "string");
    json_decref(doc);
}

static void test_crd_documents(void **state)
{
    json_t *doc = api_openapi_v3("batch.volcano.sh", "v1alpha1"), *paths, *item, *schemas, *s;
    (void)state;

    assert_non_null(doc);
    paths = json_object_get(doc, "paths");
    item = json_object_get(paths, "/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{name}");
    assert_non_null(item);
    assert_true(has_query_param(json_object_get(item, "patch"), "fieldValidation"));
    assert_gvk(json_object_get(json_object_get(item, "patch"), "x-kubernetes-group-version-kind"),
               "batch.volcano.sh", "v1alpha1", "Job");
    /* Custom resources take merge patches only. */
    assert_null(json_object_get(json_object_get(json_object_get(json_object_get(
        item, "patch"), "requestBody"), "content"), "application/strategic-merge-patch+json"));
    schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    s = json_object_get(schemas, "sh.volcano.batch.v1alpha1.Job");
    assert_non_null(s);
    assert_gvk(json_array_get(json_object_get(s, "x-kubernetes-group-version-kind"), 0),
               "batch.volcano.sh", "v1alpha1", "Job");
    /* Open objects preserve unknown fields. */
    assert_true(json_is_true(json_object_get(json_object_get(json_object_get(s, "properties"),
                "status"), "x-kubernetes-preserve-unknown-fields")));
    json_decref(doc);

    doc = api_openapi_v3("kubeflow.org", "v1");
    assert_non_null(doc);
    schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    assert_non_null(json_object_get(schemas, "org.kubeflow.v1.PyTorchJob"));
    assert_non_null(json_object_get(schemas, "org.kubeflow.v1.TFJob"));
    assert_non_null(json_object_get(json_object_get(doc, "paths"),
                    "/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"));
    json_decref(doc);

    doc = api_openapi_v3("scheduling.volcano.sh", "v1beta1");
    paths = json_object_get(doc, "paths");
    assert_non_null(json_object_get(paths, "/apis/scheduling.volcano.sh/v1beta1/queues/{name}"));
    assert_non_null(json_object_get(json_object_get(json_object_get(doc, "components"),
                    "schemas"), "sh.volcano.scheduling.v1beta1.Queue"));
    json_decref(doc);

    doc = api_openapi_v3("scheduling.k8s.io", "v1");
    assert_non_null(json_object_get(json_object_get(json_object_get(doc, "components"),
                    "schemas"), "io.k8s.api.scheduling.v1.PriorityClass"));
    json_decref(doc);

    assert_null(api_openapi_v3("apps", "v1"));
    assert_null(api_openapi_v3("kubeflow.org", "v2"));
}

static void test_every_kind_has_patch_path(void **state)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    (void)state;

    for (size_t i = 0; i < n; i++) {
        json_t *doc = api_openapi_v3(all[i]->group, all[i]->version);
        const char *path;
        json_t *item;
        bool found = false;
        assert_non_null(doc);
        json_object_foreach(json_object_get(doc, "paths"), path, item) {
            json_t *patch = json_object_get(item, "patch");
            json_t *g = json_object_get(patch, "x-kubernetes-group-version-kind");
            if (!g || strcmp(json_string_value(json_object_get(g, "kind")), all[i]->kind) != 0)
                continue;
            /* kubectl stops at the first PATCH for a kind: every one must qualify. */
            assert_true(has_query_param(patch, "fieldValidation"));
            found = true;
        }
        assert_true(found);
        json_decref(doc);
    }
}

static void test_index(void **state)
{
    json_t *a = api_openapi_v3_index(), *b = api_openapi_v3_index(), *paths;
    const char *url;
    (void)state;

    assert_true(json_equal(a, b));
    paths = json_object_get(a, "paths");
    assert_int_equal(json_object_size(paths), 14); /* with rbac.authorization.k8s.io/v1,
                                                    coordination.k8s.io/v1, apiextensions,
                                                    trainer.kubeflow.org/v1alpha1,
                                                    trainyard.io/v1 */
    url = json_string_value(json_object_get(json_object_get(paths, "api/v1"), "serverRelativeURL"));
    assert_non_null(url);
    assert_int_equal(strncmp(url, "/openapi/v3/api/v1?hash=", 24), 0);
    assert_true(strlen(url + 24) >= 16);
    url = json_string_value(json_object_get(json_object_get(paths, "apis/kubeflow.org/v1"),
                                            "serverRelativeURL"));
    assert_int_equal(strncmp(url, "/openapi/v3/apis/kubeflow.org/v1?hash=", 38), 0);
    assert_non_null(json_object_get(paths, "apis/batch.volcano.sh/v1alpha1"));
    assert_non_null(json_object_get(paths, "apis/scheduling.volcano.sh/v1beta1"));
    assert_non_null(json_object_get(paths, "apis/mindspore.gitee.com/v1"));
    assert_non_null(json_object_get(paths, "apis/coordination.k8s.io/v1"));
    assert_non_null(json_object_get(paths, "apis/kubeflow.org/v2beta1"));
    assert_non_null(json_object_get(paths, "apis/flow.volcano.sh/v1alpha1"));
    assert_non_null(json_object_get(paths, "apis/scheduling.k8s.io/v1"));
    assert_non_null(json_object_get(paths, "apis/storage.k8s.io/v1"));
    assert_non_null(json_object_get(paths, "apis/apiextensions.k8s.io/v1"));
    /* Different documents hash differently. */
    assert_string_not_equal(
        strchr(json_string_value(json_object_get(json_object_get(paths, "api/v1"),
                                                 "serverRelativeURL")), '='),
        strchr(url, '='));
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_document),
        cmocka_unit_test(test_crd_documents),
        cmocka_unit_test(test_every_kind_has_patch_path),
        cmocka_unit_test(test_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
