/* test_core_kinds.c - Pod, Node, Service, ConfigMap, Secret, Event and
 * PriorityClass: defaulting, validation, update rules and table cells. */
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
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o)
        fail_msg("bad test JSON: %s", je.text);
    return o;
}

static const char *sget(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(b ? json_object_get(o, a) : o, b ? b : a));
}

static const char *cell(const json_t *cells, size_t i)
{
    return json_string_value(json_array_get(cells, i));
}

#define POD_BASE "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":" \
    "{\"containers\":[{\"name\":\"main\",\"image\":\"python:3.11\"}," \
    "{\"name\":\"side\",\"image\":\"busybox\"}]}}"

static void test_pod_defaults(void **state)
{
    ty_error err;
    json_t *pod = parse(POD_BASE), *spec, *c0, *c1;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), 0);
    spec = json_object_get(pod, "spec");
    assert_string_equal(sget(spec, "restartPolicy", NULL), "Always");
    assert_string_equal(sget(spec, "dnsPolicy", NULL), "ClusterFirst");
    assert_string_equal(sget(spec, "schedulerName", NULL), "default-scheduler");
    assert_int_equal(json_integer_value(json_object_get(spec, "terminationGracePeriodSeconds")), 30);
    c0 = json_array_get(json_object_get(spec, "containers"), 0);
    c1 = json_array_get(json_object_get(spec, "containers"), 1);
    assert_string_equal(sget(c0, "imagePullPolicy", NULL), "IfNotPresent");
    assert_string_equal(sget(c1, "imagePullPolicy", NULL), "Always");
    assert_string_equal(sget(c0, "terminationMessagePath", NULL), "/dev/termination-log");
    assert_string_equal(sget(c0, "terminationMessagePolicy", NULL), "File");
    assert_string_equal(sget(pod, "status", "phase"), "Pending");
    json_decref(pod);

    assert_string_equal(meta_default_pull_policy("nginx:latest"), "Always");
    assert_string_equal(meta_default_pull_policy("localhost:5000/img"), "Always");
    assert_string_equal(meta_default_pull_policy("localhost:5000/img:v2"), "IfNotPresent");
    assert_string_equal(meta_default_pull_policy("img@sha256:abcd"), "IfNotPresent");

    /* An explicit policy is kept; requests default to limits. */
    pod = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"restartPolicy\":\"Never\","
                "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"imagePullPolicy\":\"Never\","
                "\"resources\":{\"limits\":{\"cpu\":\"2\",\"nvidia.com/gpu\":\"1\"}}}]}}");
    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), 0);
    c0 = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    assert_string_equal(sget(c0, "imagePullPolicy", NULL), "Never");
    assert_string_equal(sget(json_object_get(c0, "resources"), "requests", "nvidia.com/gpu"), "1");
    assert_string_equal(sget(pod, "spec", "restartPolicy"), "Never");
    json_decref(pod);
}

static void expect_invalid(const char *pod_json, const char *field, const char *needle)
{
    ty_error err;
    json_t *pod = parse(pod_json);
    const char *msg;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    msg = cause_msg(&err, field);
    if (!msg || !strstr(msg, needle))
        fail_msg("field %s: expected \"%s\", got \"%s\" (%s)", field, needle,
                 msg ? msg : "(none)", err.text);
    ty_error_clear(&err);
    json_decref(pod);
}

static void test_pod_validation(void **state)
{
    (void)state;
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[]}}",
                   "spec.containers", "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}", "spec.containers",
                   "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\"},{\"name\":\"a\",\"image\":\"y\"}]}}",
                   "spec.containers[1].name", "Duplicate value: \"a\"");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"Main\","
                   "\"image\":\"x\"}]}}", "spec.containers[0].name", "RFC 1123 label");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
                   "spec.containers[0].image", "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"ports\":[{\"containerPort\":70000}]}]}}",
                   "spec.containers[0].ports[0].containerPort",
                   "Invalid value: 70000: must be between 1 and 65535, inclusive");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"restartPolicy\":\"Sometimes\","
                   "\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}", "spec.restartPolicy",
                   "Unsupported value: \"Sometimes\": supported values: \"Always\", "
                   "\"OnFailure\", \"Never\"");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"resources\":{\"limits\":{\"cpu\":\"lots\"}}}]}}",
                   "spec.containers[0].resources.limits[cpu]",
                   "quantities must match the regular expression");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"resources\":{\"limits\":{\"memory\":\"1Gi\"},"
                   "\"requests\":{\"memory\":\"2Gi\"}}}]}}",
                   "spec.containers[0].resources.requests",
                   "Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi");
    /* a GPU is asked for exactly as limited (kube's non-overcommitable
     * resources): a request of 0 under a limit of 3 got no GPU */
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":3},"
                   "\"requests\":{\"nvidia.com/gpu\":0}}}]}}",
                   "spec.containers[0].resources.requests",
                   "Invalid value: \"0\": must be equal to nvidia.com/gpu limit of 3");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
                   "spec.containers[0].resources.limits",
                   "Limit must be set for non overcommitable resources");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/d\"}]}]}}",
                   "spec.containers[0].volumeMounts[0].name", "Not found: \"data\"");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"env\":[{\"name\":\"1BAD\"}]}]}}",
                   "spec.containers[0].env[0].name", "a valid environment variable name");
    /* every field path of a container's lists, each built only for its error */
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"ports\":[{\"containerPort\":80},{\"containerPort\":81,"
                   "\"hostPort\":-1}]}]}}",
                   "spec.containers[0].ports[1].hostPort",
                   "Invalid value: -1: must be between 1 and 65535, inclusive");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"ports\":[{\"containerPort\":80},{\"name\":\"b\"}]}]}}",
                   "spec.containers[0].ports[1].containerPort", "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"ports\":[{\"containerPort\":80,\"protocol\":\"ICMP\"}]}]}}",
                   "spec.containers[0].ports[0].protocol", "Unsupported value: \"ICMP\"");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"volumes\":[{\"name\":\"d\","
                   "\"emptyDir\":{}}],\"containers\":[{\"name\":\"a\",\"image\":\"x\","
                   "\"volumeMounts\":[{\"name\":\"d\",\"mountPath\":\"/d\"},{\"name\":\"d\"}]}]}}",
                   "spec.containers[0].volumeMounts[1].mountPath", "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"volumeMounts\":[{\"mountPath\":\"/d\"}]}]}}",
                   "spec.containers[0].volumeMounts[0].name", "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"env\":[{\"name\":\"A\"},{\"value\":\"1\"}]}]}}",
                   "spec.containers[0].env[1].name", "Required value");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"-1Gi\"}}}]}}",
                   "spec.containers[0].resources.requests[memory]",
                   "Invalid value: \"-1Gi\": must be greater than or equal to 0");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\","
                   "\"image\":\"x\",\"resources\":{\"limits\":{\"cpu\":true}}}]}}",
                   "spec.containers[0].resources.limits[cpu]",
                   "quantities must match the regular expression");
    expect_invalid("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":[{\"name\":"
                   "\"a\",\"image\":\"x\"}],\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}",
                   "spec.containers[0].name", "Duplicate value");

    /* A good pod with the usual trimmings passes. */
    ty_error err;
    json_t *ok = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"volumes\":[{\"name\":\"data\","
        "\"emptyDir\":{}}],\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":"
        "\"NoSchedule\"}],\"containers\":[{\"name\":\"a\",\"image\":\"x\",\"ports\":[{\"name\":"
        "\"http\",\"containerPort\":8080}],\"env\":[{\"name\":\"MY_VAR\",\"value\":\"1\"}],"
        "\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/d\"}],\"resources\":{\"limits\":"
        "{\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"250m\"}}}]}}");
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_pod, ok, NULL, &err), 0);
    json_decref(ok);
}

static void test_pod_update(void **state)
{
    ty_error err;
    json_t *old = parse(POD_BASE), *upd;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_pod, old, NULL, &err), 0);

    /* The image may change. */
    upd = json_deep_copy(old);
    json_object_set_new(json_array_get(json_object_get(json_object_get(upd, "spec"),
                        "containers"), 0), "image", json_string("python:3.12"));
    json_object_set_new(json_object_get(upd, "spec"), "activeDeadlineSeconds", json_integer(60));
    assert_int_equal(api_prepare(&api_pod, upd, old, &err), 0);
    json_decref(upd);

    /* A new toleration may be added... */
    upd = json_deep_copy(old);
    json_object_set_new(json_object_get(upd, "spec"), "tolerations",
                        parse("[{\"key\":\"k\",\"operator\":\"Exists\"}]"));
    assert_int_equal(api_prepare(&api_pod, upd, old, &err), 0);
    /* ...but not removed again. */
    json_t *later = json_deep_copy(old);
    assert_int_equal(api_prepare(&api_pod, later, upd, &err), -1);
    assert_non_null(cause_msg(&err, "spec.tolerations"));
    ty_error_clear(&err);
    json_decref(later);
    json_decref(upd);

    /* Anything else is forbidden. */
    upd = json_deep_copy(old);
    json_object_set_new(json_object_get(upd, "spec"), "restartPolicy", json_string("Never"));
    assert_int_equal(api_prepare(&api_pod, upd, old, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "spec"),
                           "Forbidden: pod updates may not change fields other than "
                           "`spec.containers[*].image`"));
    ty_error_clear(&err);
    json_decref(upd);

    upd = json_deep_copy(old);
    json_array_remove(json_object_get(json_object_get(upd, "spec"), "containers"), 1);
    assert_int_equal(api_prepare(&api_pod, upd, old, &err), -1);
    assert_non_null(cause_msg(&err, "spec"));
    ty_error_clear(&err);
    json_decref(upd);
    json_decref(old);
}

static json_t *pod_cells(const char *status_json, const char *extra_meta)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":"
             "\"2024-01-01T00:00:00Z\"%s},\"spec\":{\"nodeName\":\"node-1\",\"containers\":"
             "[{\"name\":\"a\"},{\"name\":\"b\"}]},\"status\":%s}",
             extra_meta ? extra_meta : "", status_json);
    json_t *pod = parse(buf);
    json_t *cells = api_table_cells(&api_pod, pod, 1704067200 + 600);
    json_decref(pod);
    return cells;
}

static void test_pod_cells(void **state)
{
    json_t *c;
    (void)state;

    c = pod_cells("{\"phase\":\"Running\",\"podIP\":\"10.0.0.5\",\"conditions\":[{\"type\":"
        "\"Ready\",\"status\":\"True\"}],\"containerStatuses\":[{\"name\":\"a\",\"ready\":true,"
        "\"restartCount\":2,\"state\":{\"running\":{}}},{\"name\":\"b\",\"ready\":true,"
        "\"restartCount\":1,\"state\":{\"running\":{}}}]}", NULL);
    assert_string_equal(cell(c, 0), "p");
    assert_string_equal(cell(c, 1), "2/2");
    assert_string_equal(cell(c, 2), "Running");
    assert_string_equal(cell(c, 3), "3");
    assert_string_equal(cell(c, 4), "10m");
    assert_string_equal(cell(c, 5), "10.0.0.5");
    assert_string_equal(cell(c, 6), "node-1");
    assert_string_equal(cell(c, 7), "<none>");
    assert_string_equal(cell(c, 8), "<none>");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"a\",\"ready\":"
        "false,\"restartCount\":5,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}},"
        "{\"name\":\"b\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{}}}]}", NULL);
    assert_string_equal(cell(c, 1), "1/2");
    assert_string_equal(cell(c, 2), "CrashLoopBackOff");
    assert_string_equal(cell(c, 3), "5");
    assert_string_equal(cell(c, 5), "<none>");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Succeeded\",\"containerStatuses\":[{\"name\":\"a\",\"state\":"
        "{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}},{\"name\":\"b\",\"state\":"
        "{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]}", NULL);
    assert_string_equal(cell(c, 1), "0/2");
    assert_string_equal(cell(c, 2), "Completed");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"a\",\"state\":"
        "{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}},{\"name\":\"b\",\"state\":"
        "{\"terminated\":{\"exitCode\":137}}}]}", NULL);
    assert_string_equal(cell(c, 2), "Error");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":\"a\",\"state\":"
        "{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]}", NULL);
    assert_string_equal(cell(c, 2), "ContainerCreating");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Pending\"}", NULL);
    assert_string_equal(cell(c, 1), "0/2");
    assert_string_equal(cell(c, 2), "Pending");
    assert_string_equal(cell(c, 3), "0");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"a\",\"ready\":"
        "true,\"state\":{\"running\":{}}}]}", ",\"deletionTimestamp\":\"2024-01-01T00:09:00Z\"");
    assert_string_equal(cell(c, 2), "Terminating");
    json_decref(c);

    c = pod_cells("{\"phase\":\"Failed\",\"reason\":\"Evicted\"}", NULL);
    assert_string_equal(cell(c, 2), "Evicted");
    json_decref(c);
}

static void test_pod_init_cells(void **state)
{
    json_t *pod = parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":"
        "[{\"name\":\"i1\"},{\"name\":\"i2\"}],\"containers\":[{\"name\":\"a\"}]},\"status\":"
        "{\"phase\":\"Pending\",\"initContainerStatuses\":[{\"name\":\"i1\",\"restartCount\":1,"
        "\"state\":{\"terminated\":{\"exitCode\":0}}},{\"name\":\"i2\",\"state\":{\"running\":{}}}]"
        ",\"containerStatuses\":[{\"name\":\"a\",\"state\":{\"waiting\":{\"reason\":"
        "\"PodInitializing\"}}}]}}");
    json_t *c = api_table_cells(&api_pod, pod, 0);
    (void)state;
    assert_string_equal(cell(c, 2), "Init:1/2");
    assert_string_equal(cell(c, 3), "1");
    json_decref(c);
    json_decref(pod);
}

static void test_node_cells(void **state)
{
    json_t *node = parse("{\"metadata\":{\"name\":\"gpu-1\",\"creationTimestamp\":"
        "\"2024-01-01T00:00:00Z\",\"labels\":{\"node-role.kubernetes.io/worker\":\"\","
        "\"node-role.kubernetes.io/control-plane\":\"\"}},\"spec\":{\"unschedulable\":true},"
        "\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},"
        "{\"type\":\"Ready\",\"status\":\"True\"}],\"addresses\":[{\"type\":\"Hostname\","
        "\"address\":\"gpu-1\"},{\"type\":\"InternalIP\",\"address\":\"10.1.2.3\"}],"
        "\"nodeInfo\":{\"kubeletVersion\":\"v1.32.0\",\"osImage\":\"Ubuntu 22.04\","
        "\"kernelVersion\":\"6.5.0\",\"containerRuntimeVersion\":\"trainyard://0.1\"}}}");
    json_t *c = api_table_cells(&api_node, node, 1704067200 + 7200);
    json_t *cols = api_table_columns(&api_node);
    (void)state;

    assert_int_equal(json_array_size(cols), 10);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 1), "name")),
                        "Status");
    assert_string_equal(cell(c, 0), "gpu-1");
    assert_string_equal(cell(c, 1), "Ready,SchedulingDisabled");
    assert_string_equal(cell(c, 2), "control-plane,worker");
    assert_string_equal(cell(c, 3), "120m");
    assert_string_equal(cell(c, 4), "v1.32.0");
    assert_string_equal(cell(c, 5), "10.1.2.3");
    assert_string_equal(cell(c, 6), "<none>");
    assert_string_equal(cell(c, 7), "Ubuntu 22.04");
    assert_string_equal(cell(c, 8), "6.5.0");
    assert_string_equal(cell(c, 9), "trainyard://0.1");
    json_decref(c);
    json_decref(cols);

    json_object_set_new(node, "spec", json_object());
    json_object_set_new(json_object_get(node, "status"), "conditions",
                        parse("[{\"type\":\"Ready\",\"status\":\"False\"}]"));
    json_object_del(json_object_get(node, "metadata"), "labels");
    c = api_table_cells(&api_node, node, 0);
    assert_string_equal(cell(c, 1), "NotReady");
    assert_string_equal(cell(c, 2), "<none>");
    json_decref(c);
    json_decref(node);
}

static void test_service(void **state)
{
    ty_error err;
    json_t *svc = parse("{\"metadata\":{\"name\":\"web\"},\"spec\":{\"selector\":{\"app\":"
        "\"web\",\"tier\":\"fe\"},\"ports\":[{\"name\":\"http\",\"port\":80},{\"name\":"
        "\"https\",\"port\":443,\"targetPort\":\"tls\"}]}}");
    json_t *c;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_service, svc, NULL, &err), 0);
    assert_string_equal(sget(svc, "spec", "type"), "ClusterIP");
    assert_null(json_object_get(json_object_get(svc, "spec"), "clusterIP"));
    json_t *p0 = json_array_get(json_object_get(json_object_get(svc, "spec"), "ports"), 0);
    assert_string_equal(sget(p0, "protocol", NULL), "TCP");
    assert_int_equal(json_integer_value(json_object_get(p0, "targetPort")), 80);
    json_object_set_new(json_object_get(svc, "spec"), "clusterIP", json_string("10.96.0.10"));
    c = api_table_cells(&api_service, svc, 0);
    assert_string_equal(cell(c, 1), "ClusterIP");
    assert_string_equal(cell(c, 2), "10.96.0.10");
    assert_string_equal(cell(c, 3), "<none>");
    assert_string_equal(cell(c, 4), "80/TCP,443/TCP");
    assert_string_equal(cell(c, 6), "app=web,tier=fe");
    json_decref(c);
    json_decref(svc);

    /* Headless with no ports is fine; duplicate names and bad ports are not. */
    svc = parse("{\"metadata\":{\"name\":\"job\"},\"spec\":{\"clusterIP\":\"None\"}}");
    assert_int_equal(api_prepare(&api_service, svc, NULL, &err), 0);
    c = api_table_cells(&api_service, svc, 0);
    assert_string_equal(cell(c, 2), "None");
    assert_string_equal(cell(c, 4), "<none>");
    json_decref(c);
    json_decref(svc);
    svc = parse("{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"Weird\",\"ports\":"
        "[{\"name\":\"a\",\"port\":0},{\"name\":\"a\",\"port\":80},{\"port\":81}]}}");
    assert_int_equal(api_prepare(&api_service, svc, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "spec.ports[0].port"), "Required value");
    assert_string_equal(cause_msg(&err, "spec.ports[1].name"), "Duplicate value: \"a\"");
    assert_string_equal(cause_msg(&err, "spec.ports[2].name"), "Required value");
    assert_non_null(strstr(cause_msg(&err, "spec.type"), "Unsupported value: \"Weird\""));
    ty_error_clear(&err);
    json_decref(svc);
}

static void test_configmap_secret(void **state)
{
    ty_error err;
    json_t *cm = parse("{\"metadata\":{\"name\":\"cfg\"},\"data\":{\"a.conf\":\"x\","
                       "\"bad key\":\"y\"},\"binaryData\":{\"a.conf\":\"eA==\"}}");
    json_t *c;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_configmap, cm, NULL, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "data[bad key]"), "a valid config key"));
    assert_non_null(strstr(cause_msg(&err, "binaryData[a.conf]"), "duplicate of key"));
    ty_error_clear(&err);
    json_object_del(json_object_get(cm, "data"), "bad key");
    json_object_del(cm, "binaryData");
    assert_int_equal(api_prepare(&api_configmap, cm, NULL, &err), 0);
    c = api_table_cells(&api_configmap, cm, 0);
    assert_int_equal(json_integer_value(json_array_get(c, 1)), 1);
    json_decref(c);
    json_decref(cm);

    json_t *sec = parse("{\"metadata\":{\"name\":\"s\"},\"data\":{\"user\":\"YWRtaW4=\"},"
                        "\"stringData\":{\"pass\":\"hunter2\"}}");
    assert_int_equal(api_prepare(&api_secret, sec, NULL, &err), 0);
    assert_string_equal(sget(sec, "type", NULL), "Opaque");
    assert_string_equal(sget(sec, "data", "pass"), "aHVudGVyMg==");
    assert_null(json_object_get(sec, "stringData"));
    c = api_table_cells(&api_secret, sec, 0);
    assert_string_equal(cell(c, 1), "Opaque");
    assert_int_equal(json_integer_value(json_array_get(c, 2)), 2);
    json_decref(c);
    json_object_set_new(json_object_get(sec, "data"), "bad", json_string("not base64!"));
    assert_int_equal(api_prepare(&api_secret, sec, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "data[bad]"));
    ty_error_clear(&err);
    json_decref(sec);

    sec = parse("{\"metadata\":{\"name\":\"s\"},\"type\":\"kubernetes.io/tls\",\"data\":{}}");
    assert_int_equal(api_prepare(&api_secret, sec, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "data[tls.crt]"), "Required value");
    ty_error_clear(&err);
    json_decref(sec);
}

static void test_priorityclass(void **state)
{
    ty_error err;
    json_t *pc = parse("{\"metadata\":{\"name\":\"high\"},\"value\":1000,"
                       "\"globalDefault\":false}");
    json_t *c, *upd;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_priorityclass, pc, NULL, &err), 0);
    assert_string_equal(sget(pc, "preemptionPolicy", NULL), "PreemptLowerPriority");
    c = api_table_cells(&api_priorityclass, pc, 0);
    assert_int_equal(json_integer_value(json_array_get(c, 1)), 1000);
    assert_true(json_is_false(json_array_get(c, 2)));
    json_decref(c);
    upd = json_deep_copy(pc);
    json_object_set_new(upd, "value", json_integer(5));
    assert_int_equal(api_prepare(&api_priorityclass, upd, pc, &err), -1);
    assert_string_equal(cause_msg(&err, "value"), "Forbidden: may not be changed in an update.");
    ty_error_clear(&err);
    json_decref(upd);
    json_decref(pc);

    pc = parse("{\"metadata\":{\"name\":\"huge\"},\"value\":2000000000,"
               "\"preemptionPolicy\":\"Sometimes\"}");
    assert_int_equal(api_prepare(&api_priorityclass, pc, NULL, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "value"), "maximum allowed value of a user defined "
                                                      "priority is 1000000000"));
    assert_non_null(cause_msg(&err, "preemptionPolicy"));
    ty_error_clear(&err);
    json_decref(pc);
    pc = parse("{\"metadata\":{\"name\":\"nov\"}}");
    assert_int_equal(api_prepare(&api_priorityclass, pc, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "value"), "Required value");
    ty_error_clear(&err);
    json_decref(pc);
}

static void test_namespace_event(void **state)
{
    ty_error err;
    json_t *ns = parse("{\"metadata\":{\"name\":\"team-a\"}}"), *c;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_namespace, ns, NULL, &err), 0);
    assert_string_equal(sget(ns, "status", "phase"), "Active");
    c = api_table_cells(&api_namespace, ns, 0);
    assert_string_equal(cell(c, 1), "Active");
    assert_string_equal(cell(c, 2), "<unknown>");
    json_decref(c);
    json_decref(ns);

    json_t *ev = parse("{\"metadata\":{\"name\":\"p.1\",\"namespace\":\"default\"},"
        "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"namespace\":\"default\"},"
        "\"reason\":\"Scheduled\",\"message\":\"Successfully assigned default/p to n1 \","
        "\"type\":\"Normal\",\"firstTimestamp\":\"2024-01-01T00:00:00Z\",\"lastTimestamp\":"
        "\"2024-01-01T00:01:00Z\",\"count\":3,\"source\":{\"component\":\"default-scheduler\"}}");
    c = api_table_cells(&api_event, ev, 1704067200 + 120);
    assert_int_equal(json_array_size(c), 10);
    assert_string_equal(cell(c, 0), "60s");
    assert_string_equal(cell(c, 1), "Normal");
    assert_string_equal(cell(c, 2), "Scheduled");
    assert_string_equal(cell(c, 3), "pod/p");
    assert_string_equal(cell(c, 5), "default-scheduler");
    assert_string_equal(cell(c, 6), "Successfully assigned default/p to n1 ");
    assert_string_equal(cell(c, 7), "2m");
    assert_int_equal(json_integer_value(json_array_get(c, 8)), 3);
    assert_string_equal(cell(c, 9), "p.1");
    json_decref(c);
    json_decref(ev);
}

/* PersistentVolumeClaim, PersistentVolume, StorageClass (kind_storage.c). */
static void test_storage(void **state)
{
    ty_error err;
    json_t *pvc, *old, *pv, *sc, *cells;
    (void)state;

    ty_error_init(&err);
    pvc = parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},\"spec\":"
                "{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
                "{\"storage\":\"1Gi\"}}}}");
    assert_int_equal(api_prepare(&api_pvc, pvc, NULL, &err), 0);
    assert_string_equal(sget(json_object_get(pvc, "spec"), "volumeMode", NULL), "Filesystem");
    assert_string_equal(sget(pvc, "status", "phase"), "Pending");
    /* The binder may set volumeName and the default class where unset... */
    old = json_deep_copy(pvc);
    json_object_set_new(json_object_get(pvc, "spec"), "volumeName", json_string("pv1"));
    json_object_set_new(json_object_get(pvc, "spec"), "storageClassName", json_string("x"));
    assert_int_equal(api_prepare(&api_pvc, pvc, old, &err), 0);
    /* ...but not change the rest. */
    json_decref(old);
    old = json_deep_copy(pvc);
    json_object_set_new(json_object_get(pvc, "spec"), "accessModes",
                        json_pack("[s]", "ReadWriteMany"));
    assert_int_equal(api_prepare(&api_pvc, pvc, old, &err), -1);
    assert_non_null(strstr(cause_msg(&err, "spec"), "spec is immutable after creation"));
    ty_error_clear(&err);
    json_decref(old);
    json_decref(pvc);

    pvc = parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},\"spec\":"
                "{\"accessModes\":[\"ReadWriteOncePod\",\"ReadOnlyMany\"],\"volumeMode\":"
                "\"Block\",\"resources\":{\"requests\":{\"storage\":\"0\"}}}}");
    assert_int_equal(api_prepare(&api_pvc, pvc, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "spec.accessModes"),
                        "Forbidden: may not use ReadWriteOncePod with other access modes");
    assert_string_equal(cause_msg(&err, "spec.resources[storage]"),
                        "Invalid value: \"0\": must be greater than zero");
    assert_non_null(strstr(cause_msg(&err, "spec.volumeMode"), "Unsupported value: \"Block\""));
    ty_error_clear(&err);
    json_decref(pvc);

    /* Cells: STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VAC AGE MODE. */
    pvc = parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},\"spec\":"
                "{\"volumeName\":\"pv1\",\"storageClassName\":\"local-path\",\"volumeMode\":"
                "\"Filesystem\"},\"status\":{\"phase\":\"Bound\",\"capacity\":{\"storage\":"
                "\"2Gi\"},\"accessModes\":[\"ReadWriteOnce\",\"ReadOnlyMany\"]}}");
    cells = json_array();
    api_pvc.row_cells(pvc, 0, cells);
    assert_int_equal(json_array_size(cells), api_pvc.ncolumns);
    assert_string_equal(cell(cells, 0), "Bound");
    assert_string_equal(cell(cells, 1), "pv1");
    assert_string_equal(cell(cells, 2), "2Gi");
    assert_string_equal(cell(cells, 3), "RWO,ROX");
    assert_string_equal(cell(cells, 4), "local-path");
    assert_string_equal(cell(cells, 5), "<unset>");
    json_decref(cells);
    json_decref(pvc);

    pv = parse("{\"metadata\":{\"name\":\"v\"},\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},"
               "\"accessModes\":[\"ReadWriteOnce\"]}}");
    assert_int_equal(api_prepare(&api_pv, pv, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "spec"), "Required value: must specify a volume type");
    ty_error_clear(&err);
    json_object_set_new(json_object_get(pv, "spec"), "local", json_pack("{s:s}", "path", "/x"));
    assert_int_equal(api_prepare(&api_pv, pv, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "spec.nodeAffinity"),
                        "Required value: Local volume requires node affinity");
    ty_error_clear(&err);
    json_object_del(json_object_get(pv, "spec"), "local");
    json_object_set_new(json_object_get(pv, "spec"), "hostPath", json_pack("{s:s}", "path", "/x"));
    assert_int_equal(api_prepare(&api_pv, pv, NULL, &err), 0);
    assert_string_equal(sget(json_object_get(pv, "spec"), "persistentVolumeReclaimPolicy", NULL),
                        "Retain");
    json_decref(pv);

    sc = parse("{\"metadata\":{\"name\":\"s\"}}");
    assert_int_equal(api_prepare(&api_storageclass, sc, NULL, &err), -1);
    assert_string_equal(cause_msg(&err, "provisioner"), "Required value");
    ty_error_clear(&err);
    json_object_set_new(sc, "provisioner", json_string("example.com/p"));
    assert_int_equal(api_prepare(&api_storageclass, sc, NULL, &err), 0);
    assert_string_equal(sget(sc, "reclaimPolicy", NULL), "Delete");
    assert_string_equal(sget(sc, "volumeBindingMode", NULL), "Immediate");
    old = json_deep_copy(sc);
    json_object_set_new(sc, "provisioner", json_string("example.com/q"));
    assert_int_equal(api_prepare(&api_storageclass, sc, old, &err), -1);
    assert_string_equal(cause_msg(&err, "provisioner"),
                        "Forbidden: updates to provisioner are forbidden.");
    ty_error_clear(&err);
    json_decref(old);
    json_decref(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_defaults),
        cmocka_unit_test(test_pod_validation),
        cmocka_unit_test(test_pod_update),
        cmocka_unit_test(test_pod_cells),
        cmocka_unit_test(test_pod_init_cells),
        cmocka_unit_test(test_node_cells),
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_configmap_secret),
        cmocka_unit_test(test_priorityclass),
        cmocka_unit_test(test_namespace_event),
        cmocka_unit_test(test_storage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
