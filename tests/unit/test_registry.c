/* test_registry.c - the resource table, metadata validation, strict field
 * checks and table helpers of src/api/registry.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/registry.h"
#include "api/schema.h"

/* The message of the cause on field, or NULL. */
static const char *cause_msg(const ty_error *err, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach(err->causes, i, c)
        if (strcmp(json_string_value(json_object_get(c, "field")), field) == 0)
            return json_string_value(json_object_get(c, "message"));
    return NULL;
}

static json_t *parse(const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    assert_non_null(o);
    return o;
}

static void test_find_every_kind(void **state)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    (void)state;

    assert_int_equal(n, 38); /* with the four RBAC kinds, ResourceQuota, Lease, CRDs,
                                the three trainer.kubeflow.org kinds, JobRecord */
    for (size_t i = 0; i < n; i++) {
        char av[128];
        api_version_string(all[i], av, sizeof(av));
        assert_ptr_equal(api_find(all[i]->group, all[i]->version, all[i]->plural), all[i]);
        assert_ptr_equal(api_find_kind(av, all[i]->kind), all[i]);
        assert_non_null(all[i]->list_kind);
        assert_non_null(all[i]->singular);
    }
    assert_ptr_equal(api_find("", "v1", "pods"), &api_pod);
    assert_ptr_equal(api_find("kubeflow.org", "v1", "pytorchjobs"), &api_pytorchjob);
    assert_ptr_equal(api_find("batch.volcano.sh", "v1alpha1", "jobs"), &api_vcjob);
    assert_ptr_equal(api_find_kind("v1", "Pod"), &api_pod);
    assert_ptr_equal(api_find_kind("batch.volcano.sh/v1alpha1", "Job"), &api_vcjob);
    assert_ptr_equal(api_find_kind("scheduling.k8s.io/v1", "PriorityClass"), &api_priorityclass);
    assert_ptr_equal(api_find_kind("scheduling.volcano.sh/v1beta1", "Queue"), &api_queue);
    assert_ptr_equal(api_find("", "v1", "persistentvolumeclaims"), &api_pvc);
    assert_ptr_equal(api_find_kind("storage.k8s.io/v1", "StorageClass"), &api_storageclass);
    assert_ptr_equal(api_find_kind("coordination.k8s.io/v1", "Lease"), &api_lease);
    assert_null(api_find("", "v1", "jobs"));
    assert_null(api_find("batch.volcano.sh", "v1", "jobs"));
    assert_null(api_find_kind("v1", "Job"));
    assert_null(api_find_kind("batch/v1", "Job"));
    assert_null(api_find_kind("kubeflow.org/v1", "Pod"));
    assert_null(api_find(NULL, "v1", "pods"));
    /* MPIJob in two versions: two resources, filed apart, one name space */
    assert_ptr_equal(api_find("kubeflow.org", "v2beta1", "mpijobs"), &api_mpijob_v2);
    assert_ptr_equal(api_find_kind("kubeflow.org/v2beta1", "MPIJob"), &api_mpijob_v2);
    assert_ptr_equal(api_find_kind("kubeflow.org/v1", "MPIJob"), &api_mpijob);
    assert_ptr_equal(api_other_version(&api_mpijob), &api_mpijob_v2);
    assert_ptr_equal(api_other_version(&api_mpijob_v2), &api_mpijob);
    assert_null(api_other_version(&api_pytorchjob));
    assert_string_equal(api_store_key(&api_mpijob), "mpijobs.kubeflow.org");
    assert_string_equal(api_store_key(&api_mpijob_v2), "mpijobs.v2beta1.kubeflow.org");
    /* and back from the key, every kind */
    size_t nres;
    const api_resource *const *every = api_resources(&nres);
    for (size_t i = 0; i < nres; i++)
        assert_ptr_equal(api_find_store_key(api_store_key(every[i])), every[i]);
    assert_ptr_equal(api_find_store_key("mpijobs.v2beta1.kubeflow.org"), &api_mpijob_v2);
    assert_null(api_find_store_key("mpijobs"));
    assert_null(api_find_store_key(NULL));
}

static void test_names(void **state)
{
    char buf[128];
    (void)state;

    assert_string_equal(api_store_key(&api_pod), "pods");
    assert_string_equal(api_store_key(&api_pytorchjob), "pytorchjobs.kubeflow.org");
    assert_string_equal(api_store_key(&api_vcjob), "jobs.batch.volcano.sh");
    assert_string_equal(api_store_key(&api_priorityclass), "priorityclasses.scheduling.k8s.io");
    api_qualified_kind(&api_pytorchjob, buf, sizeof(buf));
    assert_string_equal(buf, "PyTorchJob.kubeflow.org");
    api_qualified_kind(&api_pod, buf, sizeof(buf));
    assert_string_equal(buf, "Pod");
    api_group_resource(&api_queue, buf, sizeof(buf));
    assert_string_equal(buf, "queues.scheduling.volcano.sh");
    api_group_resource(&api_service, buf, sizeof(buf));
    assert_string_equal(buf, "services");
    api_version_string(&api_msjob, buf, sizeof(buf));
    assert_string_equal(buf, "mindspore.gitee.com/v1");
    api_version_string(&api_node, buf, sizeof(buf));
    assert_string_equal(buf, "v1");
}

static void test_short_names_and_scope(void **state)
{
    (void)state;
    assert_string_equal(api_namespace.short_names[0], "ns");
    assert_string_equal(api_node.short_names[0], "no");
    assert_string_equal(api_pod.short_names[0], "po");
    assert_string_equal(api_service.short_names[0], "svc");
    assert_string_equal(api_configmap.short_names[0], "cm");
    assert_string_equal(api_event.short_names[0], "ev");
    assert_string_equal(api_priorityclass.short_names[0], "pc");
    assert_string_equal(api_vcjob.short_names[0], "vcjob");
    assert_string_equal(api_vcjob.short_names[1], "vj");
    assert_string_equal(api_podgroup.short_names[0], "pg");
    assert_string_equal(api_queue.short_names[0], "q");
    assert_string_equal(api_pod.categories[0], "all");
    assert_string_equal(api_service.categories[0], "all");
    assert_false(api_node.namespaced);
    assert_false(api_namespace.namespaced);
    assert_false(api_queue.namespaced);
    assert_false(api_priorityclass.namespaced);
    assert_true(api_pod.namespaced);
    assert_true(api_pod.builtin);
    assert_false(api_vcjob.builtin);
}

#define LABEL_MSG "Invalid value: \"Foo_1\": a lowercase RFC 1123 label must consist of " \
    "lower case alphanumeric characters or '-', and must start and end with an alphanumeric " \
    "character (e.g. 'my-name',  or '123-abc', regex used for validation is " \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

static void test_name_rules(void **state)
{
    ty_error err;
    json_t *ns = parse("{\"metadata\":{\"name\":\"Foo_1\"}}");
    json_t *pod = parse("{\"metadata\":{\"name\":\"Foo_1\"},\"spec\":{\"containers\":"
                        "[{\"name\":\"c\",\"image\":\"busybox\"}]}}");
    json_t *ok = parse("{\"metadata\":{\"name\":\"a.b-c\"},\"spec\":{\"containers\":"
                       "[{\"name\":\"c\",\"image\":\"busybox\"}]}}");
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_namespace, ns, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_string_equal(cause_msg(&err, "metadata.name"), LABEL_MSG);
    assert_string_equal(json_string_value(json_object_get(json_array_get(err.causes, 0),
                                                          "reason")), "FieldValueInvalid");
    assert_non_null(strstr(err.text, "Namespace \"Foo_1\" is invalid: metadata.name: Invalid value"));
    ty_error_clear(&err);

    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "metadata.name"),
                           "a lowercase RFC 1123 subdomain must consist of"));
    ty_error_clear(&err);

    /* Dots are fine in a subdomain (pods), not in a label (namespaces). */
    assert_int_equal(api_prepare(&api_pod, ok, NULL, &err), 0);
    assert_int_equal(err.code, TY_OK);
    json_object_set_new(json_object_get(ns, "metadata"), "name", json_string("a.b"));
    assert_int_equal(api_prepare(&api_namespace, ns, NULL, &err), -1);
    ty_error_clear(&err);

    /* Services are DNS-1035 labels: no leading digit. */
    json_t *svc = parse("{\"metadata\":{\"name\":\"1svc\"},\"spec\":{\"ports\":[{\"port\":80}]}}");
    assert_int_equal(api_prepare(&api_service, svc, NULL, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "metadata.name"), "a DNS-1035 label must consist"));
    ty_error_clear(&err);
    json_decref(svc);

    /* Too long: a label allows 63 characters. */
    char longname[80];
    memset(longname, 'a', 64);
    longname[64] = '\0';
    json_object_set_new(json_object_get(ns, "metadata"), "name", json_string(longname));
    assert_int_equal(api_prepare(&api_namespace, ns, NULL, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "metadata.name"), "must be no more than 63 characters"));
    ty_error_clear(&err);
    json_decref(ns);
    json_decref(pod);
    json_decref(ok);
}

static void test_metadata_rules(void **state)
{
    ty_error err;
    json_t *o;
    (void)state;
    ty_error_init(&err);

    /* generateName stands in for a missing name; the prefix may end in '-'. */
    o = parse("{\"metadata\":{\"generateName\":\"team-\"}}");
    assert_int_equal(api_prepare(&api_namespace, o, NULL, &err), 0);
    json_decref(o);

    o = parse("{\"metadata\":{}}");
    assert_int_equal(api_prepare(&api_namespace, o, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "metadata.name"),
                        "Required value: name or generateName is required");
    ty_error_clear(&err);
    json_decref(o);

    o = parse("{\"metadata\":{\"name\":\"n1\",\"namespace\":\"default\"}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "metadata.namespace"),
                        "Forbidden: not allowed on this type");
    ty_error_clear(&err);
    json_decref(o);

    o = parse("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"bad key\":\"v\",\"ok\":\"-bad\"}}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_int_equal(ty_error_ncauses(&err), 2);
    assert_non_null(strstr(cause_msg(&err, "metadata.labels"), "Invalid value: \"bad key\": name part"));
    ty_error_clear(&err);
    json_decref(o);

    o = parse("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"example.com/role\":\"gpu_node.1\"}}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), 0);
    json_decref(o);

    /* Annotations: 256 KiB in total. */
    o = parse("{\"metadata\":{\"name\":\"n1\",\"annotations\":{}}}");
    char *big = malloc(256 * 1024 + 1);
    memset(big, 'x', 256 * 1024);
    big[256 * 1024] = '\0';
    json_object_set_new(json_object_get(json_object_get(o, "metadata"), "annotations"), "a",
                        json_string(big));
    free(big);
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "metadata.annotations"),
                        "Too long: must have at most 262144 bytes");
    ty_error_clear(&err);
    /* ...of the user's: the TrainJob controller's runtime snapshot is not
     * counted (it took a job past the limit, refusing the user's updates) */
    {
        json_t *ann = json_object_get(json_object_get(o, "metadata"), "annotations");
        char *part = malloc(200 * 1024 + 1);
        memset(part, 'y', 200 * 1024);
        part[200 * 1024] = '\0';
        json_object_set_new(ann, "a", json_string(part));
        json_object_set_new(ann, META_ANN_RUNTIME_SNAPSHOT, json_string(part));
        free(part);
        assert_int_equal(api_prepare(&api_node, o, NULL, &err), 0);
    }
    json_decref(o);

    /* Finalizers: qualified names, and not both ways of deleting dependents. */
    o = parse("{\"metadata\":{\"name\":\"n1\",\"finalizers\":[\"kubernetes\","
              "\"example.com/hold\",\"bad finalizer!\"]}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "metadata.finalizers[2]"));
    assert_null(cause_msg(&err, "metadata.finalizers[0]"));
    assert_null(cause_msg(&err, "metadata.finalizers[1]"));
    ty_error_clear(&err);
    json_decref(o);
    o = parse("{\"metadata\":{\"name\":\"n1\",\"finalizers\":[\"orphan\","
              "\"foregroundDeletion\"]}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "metadata.finalizers"), "cannot be both set"));
    ty_error_clear(&err);
    json_decref(o);

    /* apiVersion/kind must name the resource; absent ones are filled in. */
    o = parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"n1\"}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "kind"));
    ty_error_clear(&err);
    json_decref(o);
    o = parse("{\"metadata\":{\"name\":\"n1\"}}");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), 0);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "Node");
    assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "v1");
    json_decref(o);
    o = parse("{\"apiVersion\":\"kubeflow.org/v2\",\"metadata\":{\"name\":\"n1\"}}");
    assert_int_equal(api_prepare(&api_priorityclass, o, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "apiVersion"));
    ty_error_clear(&err);
    json_decref(o);

    /* Not an object at all. */
    o = json_string("x");
    assert_int_equal(api_prepare(&api_node, o, NULL, &err), -1);
    assert_int_equal(err.code, TY_EBADREQUEST);
    ty_error_clear(&err);
    json_decref(o);
}

static void test_unknown_fields(void **state)
{
    ty_error err;
    json_t *pod = parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
        "\"labelz\":{}},\"spec\":{\"containerz\":[],\"containers\":[{\"name\":\"c\","
        "\"image\":\"x\",\"imagez\":1,\"resources\":{\"limits\":{\"cpu\":\"1\"}},"
        "\"env\":[{\"name\":\"A\",\"valuez\":\"1\"}]}]},\"status\":{\"anything\":1},"
        "\"extra\":true}");
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_check_unknown_fields(&api_pod, pod, &err), 5);
    assert_string_equal(cause_msg(&err, "spec.containerz"), "unknown field \"spec.containerz\"");
    assert_string_equal(cause_msg(&err, "spec.containers[0].imagez"),
                        "unknown field \"spec.containers[0].imagez\"");
    assert_non_null(cause_msg(&err, "spec.containers[0].env[0].valuez"));
    assert_non_null(cause_msg(&err, "metadata.labelz"));
    assert_non_null(cause_msg(&err, "extra"));
    assert_null(cause_msg(&err, "status.anything"));
    assert_int_equal(err.code, TY_OK);
    ty_error_clear(&err);
    json_decref(pod);

    json_t *job = parse("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"tasks\":[{\"replicas\":1,"
        "\"template\":{\"spec\":{\"containers\":[]}}},{\"replicaz\":2}],"
        "\"plugins\":{\"svc\":[]}}}");
    assert_int_equal(api_check_unknown_fields(&api_vcjob, job, &err), 1);
    assert_string_equal(cause_msg(&err, "spec.tasks[1].replicaz"),
                        "unknown field \"spec.tasks[1].replicaz\"");
    ty_error_clear(&err);
    json_decref(job);

    /* Open objects keep anything. */
    json_t *clean = parse("{\"spec\":{\"containers\":[{\"name\":\"c\",\"securityContext\":"
                          "{\"whatever\":{\"deep\":1}}}]}}");
    assert_int_equal(api_check_unknown_fields(&api_pod, clean, &err), 0);
    assert_int_equal(ty_error_ncauses(&err), 0);
    json_decref(clean);
}

/* Declared types are enforced: a ConfigMap whose data values were objects,
 * a container command given as an object, were stored with 201 and typed
 * clients could not read them. Built-in kinds answer as kube-apiserver's Go
 * decoding does (400, the first mismatch); custom resources as its OpenAPI
 * validation (422, a cause each). */
static void expect_go(const api_resource *res, const char *text, const char *want)
{
    ty_error err;
    json_t *obj = parse(text);

    ty_error_init(&err);
    assert_int_equal(api_check_types(res, obj, &err), -1);
    assert_int_equal(err.code, TY_EBADREQUEST);
    if (strcmp(err.text, want) != 0)
        fail_msg("have: %s\nwant: %s", err.text, want);
    ty_error_clear(&err);
    json_decref(obj);
}

static void expect_fits(const api_resource *res, const char *text)
{
    ty_error err;
    json_t *obj = parse(text);

    ty_error_init(&err);
    if (api_check_types(res, obj, &err) != 0)
        fail_msg("%s: %s", text, err.text);
    assert_int_equal(ty_error_ncauses(&err), 0);
    json_decref(obj);
}

static void test_declared_types(void **state)
{
    ty_error err;
    json_t *job;
    (void)state;

    expect_go(&api_configmap, "{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":{\"x\":1}}}",
              "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
              "unmarshal object into Go struct field ConfigMap.data of type string");
    expect_go(&api_configmap, "{\"data\":{\"k\":5}}",
              "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
              "unmarshal number into Go struct field ConfigMap.data of type string");
    expect_go(&api_configmap, "{\"data\":[\"a\"]}",
              "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
              "unmarshal array into Go struct field ConfigMap.data of type map[string]string");
    expect_go(&api_secret, "{\"data\":{\"k\":1}}",
              "Secret in version \"v1\" cannot be handled as a Secret: json: cannot "
              "unmarshal number into Go struct field Secret.data of type []uint8");
    expect_go(&api_configmap, "{\"metadata\":{\"labels\":{\"a\":true}}}",
              "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
              "unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string");
    expect_go(&api_pod,
              "{\"spec\":{\"containers\":[{\"name\":\"c\",\"command\":{\"a\":\"b\"}}]}}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal object "
              "into Go struct field Container.spec.containers.command of type []string");
    expect_go(&api_pod, "{\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"a\",2]}]}}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number "
              "into Go struct field Container.spec.containers.args of type string");
    expect_go(&api_pod,
              "{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":"
              "3000000000}]}]}}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number "
              "3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort "
              "of type int32");
    expect_go(&api_pod, "{\"spec\":{\"activeDeadlineSeconds\":1.5}}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number "
              "1.5 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64");
    expect_go(&api_pod, "{\"spec\":{\"containers\":\"x\"}}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal string "
              "into Go struct field PodSpec.spec.containers of type []v1.Container");
    expect_go(&api_pod, "{\"spec\":{\"hostNetwork\":\"true\"}}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal string "
              "into Go struct field PodSpec.spec.hostNetwork of type bool");
    expect_go(&api_pod, "{\"kind\":7}",
              "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number "
              "into Go struct field Pod.kind of type string");
    expect_go(&api_service, "{\"spec\":{\"ports\":[{\"port\":\"80\"}]}}",
              "Service in version \"v1\" cannot be handled as a Service: json: cannot unmarshal "
              "string into Go struct field ServicePort.spec.ports.port of type int32");
    /* what fits: null anywhere, int-or-string, quantities as numbers, open
     * objects, status (not described) */
    expect_fits(&api_pod,
                "{\"metadata\":{\"labels\":null},\"spec\":{\"containers\":[{\"name\":\"c\","
                "\"command\":null,\"resources\":{\"limits\":{\"cpu\":2,\"memory\":\"1Gi\"}},"
                "\"securityContext\":{\"x\":{\"y\":1}}}]},\"status\":{\"phase\":5}}");
    expect_fits(&api_service, "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":\"http\"},"
                              "{\"port\":81,\"targetPort\":8081}]}}");

    /* a custom resource: 422, every mismatch, OpenAPI's words */
    job = parse("{\"spec\":{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":\"1\","
                "\"template\":{\"spec\":{\"containers\":[{\"name\":\"pytorch\","
                "\"command\":{\"x\":1}}]}}}}}}");
    ty_error_init(&err);
    assert_int_equal(api_check_types(&api_pytorchjob, job, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_int_equal(ty_error_ncauses(&err), 2);
    assert_string_equal(cause_msg(&err, "spec.pytorchReplicaSpecs.Master.replicas"),
                        "Invalid value: \"string\": spec.pytorchReplicaSpecs.Master.replicas in "
                        "body must be of type integer: \"string\"");
    assert_string_equal(
        cause_msg(&err, "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command"),
        "Invalid value: \"object\": spec.pytorchReplicaSpecs.Master.template.spec."
        "containers[0].command in body must be of type array: \"object\"");
    ty_error_clear(&err);
    json_decref(job);
    /* api_prepare checks them after the defaults, as upstream's schema
     * validation follows its webhook: the replica key is canonical */
    job = parse("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"pytorchReplicaSpecs\":{"
                "\"master\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
                "\"pytorch\",\"image\":\"a\",\"command\":\"x\"}]}}}}}}");
    assert_int_equal(api_prepare(&api_pytorchjob, job, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_int_equal(ty_error_ncauses(&err), 1);
    assert_non_null(
        cause_msg(&err, "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command"));
    assert_non_null(strstr(err.text, "PyTorchJob.kubeflow.org \"j\" is invalid: "));
    ty_error_clear(&err);
    json_decref(job);
    job = parse("{\"spec\":{\"tasks\":[{\"replicas\":1.5,\"name\":[]}]}}");
    assert_int_equal(api_check_types(&api_vcjob, job, &err), -1);
    assert_int_equal(ty_error_ncauses(&err), 2);
    assert_non_null(cause_msg(&err, "spec.tasks[0].replicas"));
    assert_non_null(cause_msg(&err, "spec.tasks[0].name"));
    ty_error_clear(&err);
    json_decref(job);
}

static void test_table_helpers(void **state)
{
    json_t *cols = api_table_columns(&api_pod), *c0 = json_array_get(cols, 0);
    (void)state;

    assert_int_equal(json_array_size(cols), 9);
    assert_string_equal(json_string_value(json_object_get(c0, "name")), "Name");
    assert_string_equal(json_string_value(json_object_get(c0, "format")), "name");
    assert_int_equal(json_integer_value(json_object_get(c0, "priority")), 0);
    assert_non_null(json_object_get(c0, "description"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 1), "name")),
                        "Ready");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(cols, 5), "priority")), 1);
    json_decref(cols);

    /* Events start with Last Seen, as upstream prints them. */
    cols = api_table_columns(&api_event);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 0), "name")),
                        "Last Seen");
    json_decref(cols);

    /* Every row has as many cells as there are columns. */
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *empty = parse("{\"metadata\":{\"name\":\"x\"}}");
    for (size_t i = 0; i < n; i++) {
        json_t *cl = api_table_columns(all[i]), *cells = api_table_cells(all[i], empty, 0);
        assert_int_equal(json_array_size(cl), json_array_size(cells));
        json_decref(cl);
        json_decref(cells);
    }
    json_decref(empty);
}

static void test_age(void **state)
{
    char buf[32];
    json_t *o = parse("{\"metadata\":{\"creationTimestamp\":\"2024-01-01T00:00:00Z\"}}");
    json_t *none = parse("{\"metadata\":{}}");
    time_t t0 = 1704067200; /* 2024-01-01T00:00:00Z */
    (void)state;

    api_age(o, t0 + 300, buf, sizeof(buf));
    assert_string_equal(buf, "5m");
    api_age(o, t0 + 45, buf, sizeof(buf));
    assert_string_equal(buf, "45s");
    api_age(o, t0 + 3 * 86400, buf, sizeof(buf));
    assert_string_equal(buf, "3d");
    api_age(none, t0, buf, sizeof(buf));
    assert_string_equal(buf, "<unknown>");
    json_decref(o);
    json_decref(none);
}

static void test_format_invalid(void **state)
{
    ty_error err;
    char buf[512];
    (void)state;

    ty_error_init(&err);
    ty_error_add_cause(&err, "FieldValueRequired", "spec.tasks", "Required value");
    api_format_invalid(&api_vcjob, "j", &err, buf, sizeof(buf));
    assert_string_equal(buf, "Job.batch.volcano.sh \"j\" is invalid: spec.tasks: Required value");
    ty_error_add_cause(&err, "FieldValueInvalid", "spec.minAvailable", "Invalid value: -1: x");
    api_format_invalid(&api_vcjob, "j", &err, buf, sizeof(buf));
    assert_string_equal(buf, "Job.batch.volcano.sh \"j\" is invalid: [spec.tasks: Required "
                        "value, spec.minAvailable: Invalid value: -1: x]");
    ty_error_clear(&err);
}

static void test_meta_helpers(void **state)
{
    (void)state;
    assert_true(meta_is_dns1123_label("a-1"));
    assert_false(meta_is_dns1123_label("-a"));
    assert_false(meta_is_dns1123_label("a."));
    assert_true(meta_is_dns1123_subdomain("a.b.c"));
    assert_false(meta_is_dns1123_subdomain("a..b"));
    assert_false(meta_is_dns1123_subdomain(""));
    assert_true(meta_is_dns1035_label("abc-123"));
    assert_false(meta_is_dns1035_label("1abc"));
    ty_error err;
    ty_error_init(&err);
    assert_int_equal(meta_check_config_key("data[..x]", "..x", &err), 1);
    assert_int_equal(meta_check_config_key("data[a b]", "a b", &err), 1);
    assert_int_equal(meta_check_config_key("data[KEY_1.x-y]", "KEY_1.x-y", &err), 0);
    assert_int_equal(meta_check_qualified_name("f", "example.com/Name_1", &err), 0);
    assert_int_equal(meta_check_qualified_name("f", "/x", &err), 1);
    assert_int_equal(meta_check_qualified_name("f", "a/b/c", &err), 1);
    ty_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_every_kind),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_short_names_and_scope),
        cmocka_unit_test(test_name_rules),
        cmocka_unit_test(test_metadata_rules),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_declared_types),
        cmocka_unit_test(test_table_helpers),
        cmocka_unit_test(test_age),
        cmocka_unit_test(test_format_invalid),
        cmocka_unit_test(test_meta_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
