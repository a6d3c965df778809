/* test_quota.c - ResourceQuota: what objects use (model/quota.h) by each
 * resource name, the scopes, the kind's validation and columns, admission
 * (api/quota_admit.h) over a real store with kube-apiserver's messages,
 * concurrent creates that never exceed a quota, and the controller's
 * status.used (controller/quota.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_fixture.h"

#include "api/kinds.h"
#include "base/jsonget.h"
#include "api/quota_admit.h"
#include "api/quota_limited.h"
#include "cli/admission_config.h"
#include "client/kc_embedded.h"
#include "controller/quota.h"
#include "model/quota.h"
#include "store/admit.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *o = json_loads(text, 0, &e);
    if (!o)
        fail_msg("bad JSON in test: %s: %s", e.text, text);
    return o;
}

static int64_t use_of(const json_t *usage, const char *name)
{
    return json_integer_value(json_object_get(usage, name));
}

/* ---- usage ---- */

static const char gpu_pod[] =
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
    "\"initContainers\":[{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"3\"},"
    "\"limits\":{\"cpu\":\"3\",\"memory\":\"1Gi\"}}}],"
    "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":"
    "\"256Mi\",\"nvidia.com/gpu\":\"2\"}}},{\"name\":\"b\",\"resources\":{\"requests\":"
    "{\"cpu\":\"500m\",\"memory\":\"128Mi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"512Mi\"}}}],"
    "\"overhead\":{\"cpu\":\"100m\"}}}";

static void test_pod_usage(void **state)
{
    json_t *pod = parse(gpu_pod), *u = json_object();
    (void)state;

    quota_usage_add(u, "", "pods", pod);
    assert_int_equal(use_of(u, "pods"), 1000);
    assert_int_equal(use_of(u, "count/pods"), 1000);
    /* requests: max(1 + 0.5, init 3) + 0.1 overhead */
    assert_int_equal(use_of(u, "requests.cpu"), 3100);
    assert_int_equal(use_of(u, "cpu"), 3100);
    /* max(256Mi + 128Mi, the init container's 1Gi limit as its request) */
    assert_int_equal(use_of(u, "requests.memory"), ((int64_t)1 << 30) * 1000);
    assert_int_equal(use_of(u, "memory"), ((int64_t)1 << 30) * 1000);
    /* limits: max(1 + 1, 3) + 0.1; memory max(768Mi, 1Gi) */
    assert_int_equal(use_of(u, "limits.cpu"), 3100);
    assert_int_equal(use_of(u, "limits.memory"), ((int64_t)1 << 30) * 1000);
    assert_int_equal(use_of(u, "requests.nvidia.com/gpu"), 2000);
    assert_int_equal(use_of(u, "nvidia.com/gpu"), 2000);
    /* a second one adds up */
    quota_usage_add(u, "", "pods", pod);
    assert_int_equal(use_of(u, "requests.nvidia.com/gpu"), 4000);
    assert_int_equal(use_of(u, "pods"), 2000);
    json_decref(u);

    /* terminal pods use nothing */
    u = json_object();
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Succeeded"));
    quota_usage_add(u, "", "pods", pod);
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Failed"));
    quota_usage_add(u, "", "pods", pod);
    assert_int_equal(json_object_size(u), 0);
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Running"));
    quota_usage_add(u, "", "pods", pod);
    assert_int_equal(use_of(u, "pods"), 1000);
    json_decref(u);
    json_decref(pod);
}

static void test_object_usage(void **state)
{
    json_t *u = json_object();
    json_t *svc = parse("{\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":1},{\"port\":2}]}}");
    json_t *lb = parse("{\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{\"port\":1}]}}");
    json_t *pvc = parse("{\"spec\":{\"storageClassName\":\"fast\",\"resources\":{\"requests\":"
                        "{\"storage\":\"2Gi\"}}}}");
    json_t *any = parse("{\"metadata\":{\"name\":\"x\"}}");
    (void)state;

    quota_usage_add(u, "", "services", svc);
    quota_usage_add(u, "", "services", lb);
    assert_int_equal(use_of(u, "services"), 2000);
    assert_int_equal(use_of(u, "count/services"), 2000);
    assert_int_equal(use_of(u, "services.nodeports"), 3000);
    assert_int_equal(use_of(u, "services.loadbalancers"), 1000);
    quota_usage_add(u, "", "persistentvolumeclaims", pvc);
    assert_int_equal(use_of(u, "persistentvolumeclaims"), 1000);
    assert_int_equal(use_of(u, "requests.storage"), ((int64_t)2 << 30) * 1000);
    assert_int_equal(use_of(u, "fast.storageclass.storage.k8s.io/requests.storage"),
                     ((int64_t)2 << 30) * 1000);
    assert_int_equal(use_of(u, "fast.storageclass.storage.k8s.io/persistentvolumeclaims"), 1000);
    quota_usage_add(u, "", "configmaps", any);
    quota_usage_add(u, "", "secrets", any);
    quota_usage_add(u, "kubeflow.org", "pytorchjobs", any);
    assert_int_equal(use_of(u, "configmaps"), 1000);
    assert_int_equal(use_of(u, "count/configmaps"), 1000);
    assert_int_equal(use_of(u, "secrets"), 1000);
    assert_int_equal(use_of(u, "count/pytorchjobs.kubeflow.org"), 1000);
    assert_null(json_object_get(u, "pytorchjobs"));
    json_decref(u);
    json_decref(svc);
    json_decref(lb);
    json_decref(pvc);
    json_decref(any);
}

static void test_names(void **state)
{
    char g[64], p[64];
    (void)state;

    assert_int_equal(quota_key_resource("count/pytorchjobs.kubeflow.org", g, 64, p, 64), 0);
    assert_string_equal(g, "kubeflow.org");
    assert_string_equal(p, "pytorchjobs");
    assert_int_equal(quota_key_resource("count/pods", g, 64, p, 64), 0);
    assert_string_equal(g, "");
    assert_string_equal(p, "pods");
    quota_key_resource("requests.nvidia.com/gpu", g, 64, p, 64);
    assert_string_equal(p, "pods");
    quota_key_resource("limits.memory", g, 64, p, 64);
    assert_string_equal(p, "pods");
    quota_key_resource("services.nodeports", g, 64, p, 64);
    assert_string_equal(p, "services");
    quota_key_resource("requests.storage", g, 64, p, 64);
    assert_string_equal(p, "persistentvolumeclaims");
    quota_key_resource("secrets", g, 64, p, 64);
    assert_string_equal(p, "secrets");
    assert_int_equal(quota_key_resource("count/", g, 64, p, 64), -1);

    assert_string_equal(quota_key_request("requests.nvidia.com/gpu"), "nvidia.com/gpu");
    assert_string_equal(quota_key_request("nvidia.com/gpu"), "nvidia.com/gpu");
    assert_string_equal(quota_key_request("requests.cpu"), "cpu");
    assert_string_equal(quota_key_request("memory"), "memory");
    assert_string_equal(quota_key_request("count/pods"), "pods");
    assert_null(quota_key_request("limits.cpu"));
    assert_null(quota_key_request("requests.storage"));
    assert_null(quota_key_request("count/configmaps"));
    assert_null(quota_key_request("services"));

    assert_true(quota_key_valid("requests.nvidia.com/gpu"));
    assert_true(quota_key_valid("count/pytorchjobs.kubeflow.org"));
    assert_true(quota_key_valid("limits.cpu"));
    assert_false(quota_key_valid("gpus"));
    assert_false(quota_key_valid("count/"));

    char buf[32];
    quota_format("limits.memory", ((int64_t)100 << 20) * 1000, buf, sizeof(buf));
    assert_string_equal(buf, "100Mi");
    quota_format("requests.cpu", 1500, buf, sizeof(buf));
    assert_string_equal(buf, "1500m");
    quota_format("requests.nvidia.com/gpu", 4000, buf, sizeof(buf));
    assert_string_equal(buf, "4");
}

/* ---- scopes ---- */

static bool matches(const char *quota, const char *pod)
{
    json_t *q = parse(quota), *p = parse(pod);
    bool m = quota_matches(q, "", "pods", p);
    json_decref(q);
    json_decref(p);
    return m;
}

static void test_scopes(void **state)
{
    static const char dl[] = "{\"spec\":{\"activeDeadlineSeconds\":10,\"containers\":[{}]}}";
    static const char be[] = "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}";
    static const char nbe[] =
        "{\"spec\":{\"priorityClassName\":\"high\",\"containers\":[{\"resources\":"
        "{\"requests\":{\"cpu\":\"1\"}}}]}}";
    json_t *q, *cm;
    (void)state;

    assert_true(matches("{\"spec\":{\"scopes\":[\"Terminating\"]}}", dl));
    assert_false(matches("{\"spec\":{\"scopes\":[\"Terminating\"]}}", be));
    assert_true(matches("{\"spec\":{\"scopes\":[\"NotTerminating\"]}}", be));
    assert_true(matches("{\"spec\":{\"scopes\":[\"BestEffort\"]}}", be));
    assert_false(matches("{\"spec\":{\"scopes\":[\"BestEffort\"]}}", nbe));
    assert_true(matches("{\"spec\":{\"scopes\":[\"NotBestEffort\",\"NotTerminating\"]}}", nbe));
    assert_false(matches("{\"spec\":{\"scopes\":[\"NotBestEffort\",\"Terminating\"]}}", nbe));
    assert_true(matches("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                        "\"PriorityClass\",\"operator\":\"In\",\"values\":[\"high\"]}]}}}", nbe));
    assert_false(matches("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                         "\"PriorityClass\",\"operator\":\"In\",\"values\":[\"high\"]}]}}}", be));
    assert_true(matches("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                        "\"PriorityClass\",\"operator\":\"NotIn\",\"values\":[\"low\"]}]}}}", nbe));
    assert_true(matches("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                        "\"PriorityClass\",\"operator\":\"DoesNotExist\"}]}}}", be));
    assert_true(matches("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                        "\"PriorityClass\",\"operator\":\"Exists\"}]}}}", nbe));
    assert_true(matches("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                        "\"BestEffort\",\"operator\":\"Exists\"}]}}}", be));
    assert_true(matches("{\"spec\":{\"hard\":{\"pods\":\"1\"}}}", be));
    /* a scoped quota tracks pods only */
    q = parse("{\"spec\":{\"scopes\":[\"NotTerminating\"]}}");
    cm = parse("{}");
    assert_false(quota_matches(q, "", "configmaps", cm));
    json_decref(q);
    q = parse("{\"spec\":{}}");
    assert_true(quota_matches(q, "", "configmaps", cm));
    json_decref(q);
    json_decref(cm);
}

/* ---- the kind ---- */

static const char *invalid(const char *quota)
{
    static char text[1024];
    json_t *o = parse(quota);
    ty_error err;

    ty_error_init(&err);
    if (api_prepare(&api_resourcequota, o, NULL, &err) == 0) {
        json_decref(o);
        return NULL;
    }
    snprintf(text, sizeof(text), "%s", err.text);
    ty_error_clear(&err);
    json_decref(o);
    return text;
}

#define QUOTA(spec) "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":" \
                    "\"q\",\"namespace\":\"ns\"},\"spec\":" spec "}"

static void test_validation(void **state)
{
    const char *t;
    json_t *o;
    ty_error err;
    (void)state;

    assert_null(invalid(QUOTA("{\"hard\":{\"requests.nvidia.com/gpu\":6,\"pods\":\"10\","
                              "\"count/pytorchjobs.kubeflow.org\":\"2\"}}")));
    t = invalid(QUOTA("{\"hard\":{\"gpus\":\"1\"}}"));
    assert_non_null(t);
    assert_non_null(strstr(t, "spec.hard[gpus]: Invalid value: \"gpus\": must be a standard "
                              "resource for quota"));
    t = invalid(QUOTA("{\"hard\":{\"pods\":\"-1\"}}"));
    assert_non_null(strstr(t, "spec.hard[pods]: Invalid value: \"-1\": must be greater than or "
                              "equal to 0"));
    t = invalid(QUOTA("{\"hard\":{\"pods\":\"lots\"}}"));
    assert_non_null(strstr(t, "quantities must match"));
    t = invalid(QUOTA("{\"scopes\":[\"Sometimes\"]}"));
    assert_non_null(strstr(t, "spec.scopes[0]: Unsupported value: \"Sometimes\""));
    t = invalid(QUOTA("{\"scopes\":[\"Terminating\",\"NotTerminating\"]}"));
    assert_non_null(strstr(t, "conflicting scopes"));
    t = invalid(QUOTA("{\"hard\":{\"requests.cpu\":\"1\"},\"scopes\":[\"BestEffort\"]}"));
    assert_non_null(strstr(t, "spec.hard[requests.cpu]: Invalid value: \"requests.cpu\": "
                              "unsupported scope applied to resource"));
    t = invalid(QUOTA("{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                      "\"PriorityClass\",\"operator\":\"In\"}]}}"));
    assert_non_null(strstr(t, "spec.scopeSelector.matchExpressions[0].values: Required value"));
    t = invalid(QUOTA("{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                      "\"PriorityClass\",\"operator\":\"Near\"}]}}"));
    assert_non_null(strstr(t, "matchExpressions[0].operator: Unsupported value: \"Near\""));

    /* numbers become quantity strings */
    o = parse(QUOTA("{\"hard\":{\"requests.nvidia.com/gpu\":6,\"limits.memory\":1073741824}}"));
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_resourcequota, o, NULL, &err), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(o, "spec"), "hard"),
                            "requests.nvidia.com/gpu")), "6");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(o, "spec"), "hard"),
                            "limits.memory")), "1Gi");
    json_decref(o);
}

static void test_columns(void **state)
{
    json_t *q = parse("{\"metadata\":{\"name\":\"q\"},\"status\":{\"hard\":{\"requests.cpu\":"
                      "\"4\",\"pods\":\"10\",\"limits.memory\":\"1Gi\"},\"used\":{\"requests.cpu\":"
                      "\"1\",\"pods\":\"2\",\"limits.memory\":\"100Mi\"}}}");
    json_t *cells = api_table_cells(&api_resourcequota, q, 0);
    (void)state;

    assert_int_equal(json_array_size(cells), 4); /* NAME, AGE, REQUEST, LIMIT */
    assert_string_equal(json_string_value(json_array_get(cells, 2)),
                        "pods: 2/10, requests.cpu: 1/4");
    assert_string_equal(json_string_value(json_array_get(cells, 3)), "limits.memory: 100Mi/1Gi");
    assert_string_equal(api_resourcequota.short_names[0], "quota");
    json_decref(cells);
    json_decref(q);
}

/* ---- admission over a store ---- */

static void put(ty_store *s, const char *resource, const char *text)
{
    json_t *o = parse(text);
    ty_error err;
    store_obj *so;
    char ns[64];

    snprintf(ns, sizeof(ns), "%s", ty_jmeta(o, "namespace")); /* o is taken */
    ty_error_init(&err);
    so = store_create_take(s, resource, ns, o, &err);
    if (!so)
        fail_msg("create: %s", err.text);
    store_obj_unref(so);
}

/* store_admit (the chain both write paths pass) on a create; the error's
 * text, NULL when admitted. The object is stored when admitted and store
 * is set. */
static const char *admit(ty_store *s, const api_resource *res, const char *text, bool store)
{
    static char out[1100];
    json_t *o = parse(text);
    ty_error err;

    ty_error_init(&err);
    if (store_admit(s, API_ADMIT_CREATE, res, o, NULL, &err) < 0) {
        snprintf(out, sizeof(out), "%d %s", err.code, err.text);
        ty_error_clear(&err);
        json_decref(o);
        return out;
    }
    if (store) {
        char ns[64];
        store_obj *so;
        snprintf(ns, sizeof(ns), "%s", ty_jmeta(o, "namespace")); /* o is taken */
        so = store_create_take(s, api_store_key(res), ns, o, &err);
        assert_non_null(so);
        store_obj_unref(so);
    } else {
        json_decref(o);
    }
    return NULL;
}

#define GPU_POD(name, gpus) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"team-a\"}," \
    "\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":" \
    "\"" gpus "\"}}}]}}"

static int admission_setup(void **state)
{
    store_fixture *f;
    json_t *ns;
    store_obj *so;
    ty_error err;

    quota_admit_reset();
    if (store_fixture_setup(state) != 0)
        return -1;
    /* the pods' namespace, made as the API makes one (its uid block: pod
     * security admission gives a pod its ids from it) */
    f = *state;
    ty_error_init(&err);
    for (const char *const *name = (const char *const[]){"team-a", "team-b", "race", "ns", NULL};
         *name; name++) {
        ns = json_pack("{s:{s:s}}", "metadata", "name", *name);
        if (store_admit(f->s, API_ADMIT_CREATE, &api_namespace, ns, NULL, &err) < 0 ||
            !(so = store_create_take(f->s, api_store_key(&api_namespace), "", ns, &err)))
            return -1;
        store_obj_unref(so);
    }
    return 0;
}

static void test_admission_messages(void **state)
{
    store_fixture *f = *state;

    /* no quota: anything goes */
    assert_null(admit(f->s, &api_pod, GPU_POD("free", "100"), false));
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"gpu-quota\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"requests.nvidia.com/gpu\":\"6\",\"count/configmaps\":\"1\"}}}");
    assert_null(admit(f->s, &api_pod, GPU_POD("a", "4"), true));
    assert_string_equal(admit(f->s, &api_pod, GPU_POD("b", "4"), true),
                        "3 pods \"b\" is forbidden: exceeded quota: gpu-quota, requested: "
                        "requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=4, limited: "
                        "requests.nvidia.com/gpu=6");
    /* the rest fits; a pod asking no GPU is not concerned */
    assert_null(admit(f->s, &api_pod, GPU_POD("c", "2"), true));
    assert_null(admit(f->s, &api_pod,
                      "{\"metadata\":{\"name\":\"cpu\",\"namespace\":\"team-a\"},\"spec\":"
                      "{\"containers\":[{\"name\":\"m\"}]}}", true));
    /* other namespaces are not concerned */
    assert_null(admit(f->s, &api_pod,
                      "{\"metadata\":{\"name\":\"b\",\"namespace\":\"team-b\"},\"spec\":"
                      "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
                      "{\"nvidia.com/gpu\":\"8\"}}}]}}", true));
    /* object counts */
    assert_null(admit(f->s, &api_configmap,
                      "{\"metadata\":{\"name\":\"c1\",\"namespace\":\"team-a\"}}", true));
    assert_string_equal(admit(f->s, &api_configmap,
                              "{\"metadata\":{\"name\":\"c2\",\"namespace\":\"team-a\"}}", true),
                        "3 configmaps \"c2\" is forbidden: exceeded quota: gpu-quota, requested: "
                        "count/configmaps=1, used: count/configmaps=1, limited: "
                        "count/configmaps=1");

    /* a quota on requests.cpu: every container must say */
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"cpu-quota\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"requests.cpu\":\"2\",\"limits.memory\":\"1Gi\"}}}");
    assert_string_equal(admit(f->s, &api_pod,
                              "{\"metadata\":{\"name\":\"bare\",\"namespace\":\"team-a\"},"
                              "\"spec\":{\"containers\":[{\"name\":\"main\"},{\"name\":\"side\","
                              "\"resources\":{\"limits\":{\"memory\":\"1Mi\"}}}],"
                              "\"initContainers\":[{\"name\":\"init\",\"resources\":"
                              "{\"limits\":{\"memory\":\"1Mi\"}}}]}}", false),
                        "3 pods \"bare\" is forbidden: failed quota: cpu-quota: must specify "
                        "limits.memory for: main; requests.cpu for: init,main,side");
    assert_string_equal(admit(f->s, &api_pod,
                              "{\"metadata\":{\"name\":\"big\",\"namespace\":\"team-a\"},"
                              "\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":"
                              "{\"limits\":{\"cpu\":\"3\",\"memory\":\"1Mi\"}}}]}}", false),
                        "3 pods \"big\" is forbidden: exceeded quota: cpu-quota, requested: "
                        "requests.cpu=3, used: requests.cpu=0, limited: requests.cpu=2");
}

/* Admission keeps a count per quota that is never below the truth (a
 * create that fits it goes without a recount): a deletion it did not see
 * is found by the recount made before a refusal; a pod that ended frees
 * its part the same way. */
static void test_freed_room_is_found(void **state)
{
    store_fixture *f = *state;
    store_delete_opts o = {0};
    bool deleted;
    ty_error err;

    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"q\",\"namespace\":\"team-a\"},\"spec\":"
        "{\"hard\":{\"requests.nvidia.com/gpu\":\"4\"}}}");
    assert_null(admit(f->s, &api_pod, GPU_POD("a", "2"), true));
    assert_null(admit(f->s, &api_pod, GPU_POD("b", "2"), true));
    assert_non_null(strstr(admit(f->s, &api_pod, GPU_POD("c", "2"), true), "exceeded quota"));
    ty_error_init(&err);
    store_obj_unref(store_delete(f->s, "pods", "team-a", "a", &o, &deleted, &err));
    assert_true(deleted);
    assert_null(admit(f->s, &api_pod, GPU_POD("c", "2"), true));
    assert_non_null(strstr(admit(f->s, &api_pod, GPU_POD("d", "1"), true),
                           "used: requests.nvidia.com/gpu=4"));
    /* b ends: its GPUs are free again */
    store_obj_unref(store_delete(f->s, "pods", "team-a", "b", &o, &deleted, &err));
    put(f->s, "pods",
        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"team-a\"},\"spec\":{\"containers\":"
        "[{\"name\":\"main\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]},"
        "\"status\":{\"phase\":\"Succeeded\"}}");
    assert_null(admit(f->s, &api_pod, GPU_POD("d", "2"), true));
    ty_error_clear(&err);
}

/* MPIJob v1 and v2beta1 are one resource in two schemas: count/mpijobs
 * counts both, in admission and in the controller. */
static void test_two_versions_one_count(void **state)
{
    store_fixture *f = *state;
    ty_kc *kc = kc_embedded_new(f->s);

    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"q\",\"namespace\":\"team-a\"},\"spec\":"
        "{\"hard\":{\"count/mpijobs.kubeflow.org\":\"2\"}}}");
    assert_null(admit(f->s, &api_mpijob, "{\"metadata\":{\"name\":\"v1\",\"namespace\":"
                                         "\"team-a\"}}", true));
    assert_null(admit(f->s, &api_mpijob_v2, "{\"metadata\":{\"name\":\"v2\",\"namespace\":"
                                            "\"team-a\"}}", true));
    assert_string_equal(admit(f->s, &api_mpijob_v2, "{\"metadata\":{\"name\":\"v3\","
                                                    "\"namespace\":\"team-a\"}}", true),
                        "3 mpijobs.kubeflow.org \"v3\" is forbidden: exceeded quota: q, "
                        "requested: count/mpijobs.kubeflow.org=1, used: "
                        "count/mpijobs.kubeflow.org=2, limited: count/mpijobs.kubeflow.org=2");
    assert_non_null(strstr(admit(f->s, &api_mpijob, "{\"metadata\":{\"name\":\"v4\","
                                                    "\"namespace\":\"team-a\"}}", true),
                           "exceeded quota"));
    assert_int_equal(quotactl_reconcile(kc, "team-a"), 0);
    {
        store_obj *o = store_get(f->s, "resourcequotas", "team-a", "q", NULL);
        assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                                store_obj_json(o), "status"), "used"),
                                "count/mpijobs.kubeflow.org")), "2");
        store_obj_unref(o);
    }
    kc_free(kc);
}

/* A generated name is settled in a namespace with a quota, so that the
 * reservation has a key; elsewhere the store names it. */
static void test_generated_name(void **state)
{
    store_fixture *f = *state;
    json_t *o = parse("{\"metadata\":{\"generateName\":\"w-\",\"namespace\":\"team-a\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"m\"}]}}");
    ty_error err;

    ty_error_init(&err);
    assert_int_equal(store_admit(f->s, API_ADMIT_CREATE, &api_pod, o, NULL, &err), 0);
    assert_string_equal(ty_jmeta(o, "name"), "");
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"q\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"pods\":\"1\"}}}");
    assert_int_equal(store_admit(f->s, API_ADMIT_CREATE, &api_pod, o, NULL, &err), 0);
    assert_int_equal(strncmp(ty_jmeta(o, "name"), "w-", 2), 0);
    assert_int_equal(strlen(ty_jmeta(o, "name")), 7);
    /* reserved: the next pod is past pods 1 before the first is stored */
    json_object_del(json_object_get(o, "metadata"), "name");
    assert_int_equal(store_admit(f->s, API_ADMIT_CREATE, &api_pod, o, NULL, &err), -1);
    assert_int_equal(err.code, TY_EFORBIDDEN);
    assert_non_null(strstr(err.text, "exceeded quota: q, requested: pods=1, used: pods=1, "
                                     "limited: pods=1"));
    ty_error_clear(&err);
    json_decref(o);
}

/* ---- concurrent creates ---- */

#define THREADS 8
#define PER_THREAD 12
#define HARD 20

typedef struct racer {
    ty_store *s;
    int id, created;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    char text[512];

    for (int i = 0; i < PER_THREAD; i++) {
        json_t *o;
        ty_error err;
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"p-%d-%d\",\"namespace\":\"race\"},\"spec\":"
                 "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"1\"}}}]}}", r->id, i);
        o = json_loads(text, 0, NULL);
        ty_error_init(&err);
        if (store_admit(r->s, API_ADMIT_CREATE, &api_pod, o, NULL, &err) == 0) {
            store_obj *so;
            sched_yield(); /* widen the window between admission and store */
            so = store_create_take(r->s, "pods", "race", o, &err);
            if (so)
                r->created++;
            store_obj_unref(so);
        } else {
            json_decref(o);
        }
        ty_error_clear(&err);
    }
    return NULL;
}

static void test_concurrent_creates_never_exceed(void **state)
{
    store_fixture *f = *state;
    pthread_t th[THREADS];
    racer r[THREADS];
    int total = 0;

    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"q\",\"namespace\":\"race\"},\"spec\":{\"hard\":"
        "{\"requests.nvidia.com/gpu\":\"20\"}}}");
    for (int i = 0; i < THREADS; i++) {
        r[i] = (racer){.s = f->s, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += r[i].created;
    }
    /* every create was tried against the quota: exactly hard got in */
    assert_int_equal(total, HARD);
    assert_int_equal(store_count(f->s, "pods"), HARD);
}

/* ---- the controller ---- */

static const char *used(ty_store *s, const char *name, const char *key)
{
    static char out[64];
    store_obj *o = store_get(s, "resourcequotas", "team-a", name, NULL);
    const json_t *st;

    assert_non_null(o);
    st = json_object_get(store_obj_json(o), "status");
    snprintf(out, sizeof(out), "%s",
             json_string_value(json_object_get(json_object_get(st, "used"), key)) ?: "(none)");
    store_obj_unref(o);
    return out;
}

static void test_controller_status(void **state)
{
    store_fixture *f = *state;
    ty_kc *kc = kc_embedded_new(f->s);

    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"q\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"requests.nvidia.com/gpu\":\"6\",\"pods\":\"10\",\"limits.memory\":\"1Gi\","
        "\"count/configmaps\":\"3\",\"count/pytorchjobs.kubeflow.org\":\"2\","
        "\"services\":\"1\"}}}");
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"be\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"pods\":\"10\"},\"scopes\":[\"BestEffort\"]}}");
    put(f->s, "pods", GPU_POD("a", "4"));
    put(f->s, "pods",
        "{\"metadata\":{\"name\":\"m\",\"namespace\":\"team-a\"},\"spec\":{\"containers\":"
        "[{\"name\":\"m\",\"resources\":{\"limits\":{\"memory\":\"100Mi\"}}}]}}");
    put(f->s, "pods",
        "{\"metadata\":{\"name\":\"done\",\"namespace\":\"team-a\"},\"spec\":{\"containers\":"
        "[{\"name\":\"m\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]},"
        "\"status\":{\"phase\":\"Succeeded\"}}");
    put(f->s, "pods", "{\"metadata\":{\"name\":\"x\",\"namespace\":\"team-b\"},\"spec\":"
                      "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
                      "{\"nvidia.com/gpu\":\"2\"}}}]}}");
    put(f->s, "configmaps", "{\"metadata\":{\"name\":\"c\",\"namespace\":\"team-a\"}}");
    put(f->s, "pytorchjobs.kubeflow.org",
        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"team-a\"}}");
    assert_int_equal(quotactl_reconcile(kc, "team-a"), 0);
    assert_string_equal(used(f->s, "q", "requests.nvidia.com/gpu"), "4");
    assert_string_equal(used(f->s, "q", "pods"), "2");
    assert_string_equal(used(f->s, "q", "limits.memory"), "100Mi");
    assert_string_equal(used(f->s, "q", "count/configmaps"), "1");
    assert_string_equal(used(f->s, "q", "count/pytorchjobs.kubeflow.org"), "1");
    assert_string_equal(used(f->s, "q", "services"), "0");
    /* the BestEffort one counts the pods with no cpu or memory request or
     * limit (QoS looks at those two only: the GPU pod is one) */
    assert_string_equal(used(f->s, "be", "pods"), "1");
    put(f->s, "pods", "{\"metadata\":{\"name\":\"be\",\"namespace\":\"team-a\"},\"spec\":"
                      "{\"containers\":[{\"name\":\"m\"}]}}");
    assert_int_equal(quotactl_reconcile(kc, "team-a"), 0);
    assert_string_equal(used(f->s, "be", "pods"), "2");
    assert_string_equal(used(f->s, "q", "pods"), "3");
    {
        store_obj *o = store_get(f->s, "resourcequotas", "team-a", "q", NULL);
        assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                                store_obj_json(o), "status"), "hard"), "pods")), "10");
        store_obj_unref(o);
    }
    kc_free(kc);
}

/* ---- limited resources (api/quota_limited.h) ---- */

#define PC_POD(name, ns, pc) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\"}," \
    "\"spec\":{\"priorityClassName\":\"" pc "\",\"containers\":[{\"name\":\"main\"}]}}"
#define CRITICAL_SCOPES "insufficient quota to match these scopes: [{PriorityClass In " \
    "[system-node-critical system-cluster-critical]}]"

/* By default a pod of a system priority class is made only where a quota
 * covers that class: a tenant's pods cannot take the priority that
 * preempts everyone's (they could before). kube-system has its quota. */
static void test_system_priority_needs_quota(void **state)
{
    store_fixture *f = *state;

    assert_string_equal(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-cluster-critical"),
                              false),
                        "3 pods \"crit\" is forbidden: " CRITICAL_SCOPES);
    assert_string_equal(admit(f->s, &api_pod, PC_POD("node", "team-a", "system-node-critical"),
                              false),
                        "3 pods \"node\" is forbidden: " CRITICAL_SCOPES);
    assert_null(admit(f->s, &api_pod,
                      "{\"metadata\":{\"name\":\"plain\",\"namespace\":\"team-a\"},\"spec\":"
                      "{\"containers\":[{\"name\":\"m\"}]}}", false));
    /* the seeded quota of kube-system covers both */
    assert_null(admit(f->s, &api_pod, PC_POD("dns", "kube-system", "system-cluster-critical"),
                      true));
    assert_null(admit(f->s, &api_pod, PC_POD("agent", "kube-system", "system-node-critical"),
                      true));
    /* an admin's quota for one class covers that one only; a quota that
     * does not match the pod covers nothing */
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"other\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"pods\":\"10\"},\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
        "\"PriorityClass\",\"operator\":\"In\",\"values\":[\"high\"]}]}}}");
    assert_non_null(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-cluster-critical"),
                          false));
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"crit\",\"namespace\":\"team-a\"},\"spec\":{\"hard\":"
        "{\"pods\":\"1\"},\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
        "\"PriorityClass\",\"operator\":\"In\",\"values\":[\"system-cluster-critical\"]}]}}}");
    assert_null(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-cluster-critical"), true));
    assert_string_equal(admit(f->s, &api_pod, PC_POD("node", "team-a", "system-node-critical"),
                              false),
                        "3 pods \"node\" is forbidden: " CRITICAL_SCOPES);
    /* and the quota still counts what it covers */
    assert_string_equal(admit(f->s, &api_pod, PC_POD("crit2", "team-a",
                                                     "system-cluster-critical"), false),
                        "3 pods \"crit2\" is forbidden: exceeded quota: crit, requested: "
                        "pods=1, used: pods=1, limited: pods=1");
    /* spec.scopes [PriorityClass] is the scope with Exists: it covers */
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"any-class\",\"namespace\":\"team-b\"},\"spec\":{\"hard\":"
        "{\"pods\":\"5\"},\"scopes\":[\"PriorityClass\"]}}");
    assert_null(admit(f->s, &api_pod, PC_POD("node", "team-b", "system-node-critical"), false));
}

static const char *set_limited(const char *text)
{
    static char out[1100];
    json_t *lr = text ? parse(text) : NULL;
    ty_error err;
    int rc;

    ty_error_init(&err);
    rc = quota_limited_set(lr, &err);
    json_decref(lr);
    if (rc == 0)
        return NULL;
    snprintf(out, sizeof(out), "%d %s", err.code, err.text);
    ty_error_clear(&err);
    return out;
}

/* A configured list replaces the default: matchContains (GPUs only where
 * a quota limits them), an empty list (kube-apiserver's default: nothing
 * limited); a bad list is refused with the field and changes nothing. */
static void test_limited_configured(void **state)
{
    store_fixture *f = *state;

    assert_string_equal(set_limited("[{\"resource\":\"pods\",\"matchScopes\":[{\"scopeName\":"
                                    "\"PriorityClass\",\"operator\":\"In\"}]}]"),
                        "1 limitedResources[0].matchScopes[0].values: must be at least one "
                        "value when `operator` is 'In' or 'NotIn'");
    assert_string_equal(set_limited("[{\"resource\":\"pods\",\"matchScopes\":[{\"scopeName\":"
                                    "\"Nope\",\"operator\":\"Exists\"}]}]"),
                        "1 limitedResources[0].matchScopes[0].scopeName: want Terminating, "
                        "NotTerminating, BestEffort, NotBestEffort or PriorityClass");
    assert_string_equal(set_limited("[{\"apiGroup\":\"\"}]"),
                        "1 limitedResources[0].resource: Required value");
    assert_string_equal(set_limited("[{\"resource\":\"pods\",\"matchContain\":[\"x\"]}]"),
                        "1 limitedResources[0].matchContain: unknown field");
    assert_string_equal(set_limited("{}"),
                        "1 limitedResources: want a list of at most 64 entries");
    /* nothing changed: the default still holds */
    assert_non_null(admit(f->s, &api_pod, PC_POD("crit", "ns", "system-cluster-critical"),
                          false));

    assert_null(set_limited("[{\"resource\":\"pods\",\"matchContains\":[\"nvidia.com/gpu\"]}]"));
    assert_string_equal(admit(f->s, &api_pod,
                              "{\"metadata\":{\"name\":\"g\",\"namespace\":\"ns\"},\"spec\":"
                              "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
                              "{\"nvidia.com/gpu\":\"1\"}}}]}}", false),
                        "3 pods \"g\" is forbidden: insufficient quota to consume: "
                        "requests.nvidia.com/gpu");
    assert_null(admit(f->s, &api_pod, PC_POD("crit", "ns", "system-cluster-critical"), false));
    put(f->s, "resourcequotas",
        "{\"metadata\":{\"name\":\"gpus\",\"namespace\":\"ns\"},\"spec\":{\"hard\":"
        "{\"requests.nvidia.com/gpu\":\"4\"}}}");
    assert_null(admit(f->s, &api_pod,
                      "{\"metadata\":{\"name\":\"g\",\"namespace\":\"ns\"},\"spec\":"
                      "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
                      "{\"nvidia.com/gpu\":\"1\"}}}]}}", false));

    /* two entries naming one thing: said once, sorted */
    assert_null(set_limited("[{\"resource\":\"pods\",\"matchContains\":[\"nvidia.com/gpu\","
                            "\"pods\"]},{\"resource\":\"pods\",\"matchContains\":[\"gpu\"]}]"));
    assert_string_equal(admit(f->s, &api_pod,
                              "{\"metadata\":{\"name\":\"g\",\"namespace\":\"team-b\"},\"spec\":"
                              "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
                              "{\"nvidia.com/gpu\":\"1\"}}}]}}", false),
                        "3 pods \"g\" is forbidden: insufficient quota to consume: "
                        "count/pods,pods,requests.nvidia.com/gpu");
    /* an entry's matchScopes limit pods whatever resource it names (as
     * kube-apiserver's); values: null is no values */
    assert_null(set_limited("[{\"resource\":\"services\",\"matchScopes\":[{\"scopeName\":"
                            "\"PriorityClass\",\"operator\":\"Exists\",\"values\":null}]}]"));
    assert_string_equal(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-node-critical"),
                              false),
                        "3 pods \"crit\" is forbidden: insufficient quota to match these "
                        "scopes: [{PriorityClass Exists []}]");

    assert_null(set_limited("[]"));
    assert_null(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-node-critical"), false));
    assert_null(set_limited(NULL));
    assert_non_null(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-node-critical"),
                          false));
}

/* write_file DIR NAME TEXT: DIR/NAME with TEXT; its path. */
static const char *write_file(const char *dir, const char *name, const char *text)
{
    static char path[512];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return path;
}

static const char *load_config(const char *path)
{
    static char out[1100];
    ty_error err;

    ty_error_init(&err);
    if (admission_config_load(path, &err) == 0)
        return NULL;
    snprintf(out, sizeof(out), "%s", err.text);
    ty_error_clear(&err);
    return out;
}

/* --admission-control-config-file: kube-apiserver's AdmissionConfiguration,
 * the ResourceQuota plugin's configuration inline or by path. */
#define ADMISSION_CONFIG                                                                     \
    "apiVersion: apiserver.config.k8s.io/v1\n"                                               \
    "kind: AdmissionConfiguration\n"                                                         \
    "plugins:\n"

static void test_admission_config_file(void **state)
{
    store_fixture *f = *state;
    char dir[] = "/tmp/ty-admcfg-XXXXXX", path[600];
    const char *e;

    assert_non_null(mkdtemp(dir));
    write_file(dir, "rq.yaml", "apiVersion: apiserver.config.k8s.io/v1\n"
                               "kind: ResourceQuotaConfiguration\n"
                               "limitedResources:\n"
                               "- resource: pods\n"
                               "  matchScopes:\n"
                               "  - {scopeName: PriorityClass, operator: In, values: [gold]}\n");
    assert_null(load_config(write_file(dir, "adm.yaml", ADMISSION_CONFIG
                                       "- name: ResourceQuota\n"
                                       "  path: rq.yaml\n")));
    /* the system classes are not limited by this configuration */
    assert_null(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-node-critical"), false));

    assert_null(load_config(write_file(dir, "inline.yaml", ADMISSION_CONFIG
                                       "- name: ResourceQuota\n"
                                       "  configuration:\n"
                                       "    apiVersion: apiserver.config.k8s.io/v1\n"
                                       "    kind: ResourceQuotaConfiguration\n"
                                       "    limitedResources:\n"
                                       "    - resource: pods\n"
                                       "      matchScopes:\n"
                                       "      - {scopeName: PriorityClass, operator: Exists}\n")));
    assert_string_equal(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-node-critical"),
                              false),
                        "3 pods \"crit\" is forbidden: insufficient quota to match these "
                        "scopes: [{PriorityClass Exists []}]");

    /* the older group's kind, Configuration */
    write_file(dir, "old.yaml", "apiVersion: resourcequota.admission.k8s.io/v1beta1\n"
                                "kind: Configuration\n"
                                "limitedResources: []\n");
    assert_null(load_config(write_file(dir, "adm-old.yaml", ADMISSION_CONFIG
                                       "- name: ResourceQuota\n"
                                       "  path: old.yaml\n")));
    assert_null(admit(f->s, &api_pod, PC_POD("crit", "team-a", "system-node-critical"), false));

    e = load_config(write_file(dir, "other.yaml", ADMISSION_CONFIG
                               "- name: EventRateLimit\n"
                               "  path: erl.yaml\n"));
    assert_non_null(e);
    assert_non_null(strstr(e, "plugins[0].name: Unsupported value: \"EventRateLimit\""));
    assert_non_null(strstr(load_config(write_file(dir, "bad.yaml", "kind: Nope\n")),
                           "want apiVersion apiserver.config.k8s.io/v1, kind "
                           "AdmissionConfiguration"));
    snprintf(path, sizeof(path), "%s/missing.yaml", dir);
    assert_non_null(strstr(load_config(path), "cannot read"));
    assert_null(set_limited(NULL));
    for (const char *const *n = (const char *const[]){"rq.yaml", "adm.yaml", "inline.yaml",
                                                       "old.yaml", "adm-old.yaml", "other.yaml",
                                                       "bad.yaml", NULL};
         *n; n++) {
        snprintf(path, sizeof(path), "%s/%s", dir, *n);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_usage),
        cmocka_unit_test(test_object_usage),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_columns),
        cmocka_unit_test_setup_teardown(test_admission_messages, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_freed_room_is_found, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_two_versions_one_count, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_generated_name, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_creates_never_exceed, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_controller_status, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_system_priority_needs_quota, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_limited_configured, admission_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_admission_config_file, admission_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
