/* test_vc_plugins_ray.c - Volcano's ray and hcclrank job plugins
 * (controller/volcano/plugins_ray.c) and their admission (kind_vcjob.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "controller/volcano/vc_int.h"

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o)
        fail_msg("bad test JSON: %s (%s)", je.text, text);
    return o;
}

/* A job "r" with tasks head (1) and worker (2), or as given, and plugins. */
static json_t *job_with(const char *plugins, const char *tasks)
{
    char buf[4096];

    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",\"metadata\":"
             "{\"name\":\"r\",\"namespace\":\"default\",\"uid\":\"u1\"},\"spec\":{\"plugins\":%s,"
             "\"tasks\":%s}}",
             plugins,
             tasks ? tasks
                   : "[{\"name\":\"head\",\"replicas\":1,\"template\":{\"spec\":{\"containers\":"
                     "[{\"name\":\"head\",\"image\":\"rayproject/ray\"}]}}},"
                     "{\"name\":\"worker\",\"replicas\":2,\"template\":{\"spec\":{\"containers\":"
                     "[{\"name\":\"worker\",\"image\":\"rayproject/ray\"}]}}}]");
    return parse(buf);
}

/* A built pod of task/index with the given containers (JSON list). */
static json_t *pod_of(const char *task, int index, const char *containers)
{
    char buf[2048];

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"r-%s-%d\",\"annotations\":{\"volcano.sh/task-spec\":"
             "\"%s\",\"volcano.sh/task-index\":\"%d\"}},\"spec\":{\"containers\":%s}}",
             task, index, task, index, containers);
    return parse(buf);
}

static const json_t *container(const json_t *pod, const char *name)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c)
        if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
            return c;
    fail_msg("no container %s", name);
    return NULL;
}

/* "sh -c <script>": the script, failing on any other command. */
static const char *script_of(const json_t *c)
{
    const json_t *cmd = json_object_get(c, "command");

    assert_int_equal(json_array_size(cmd), 3);
    assert_string_equal(json_string_value(json_array_get(cmd, 0)), "sh");
    assert_string_equal(json_string_value(json_array_get(cmd, 1)), "-c");
    return json_string_value(json_array_get(cmd, 2));
}

/* "name=port,..." of a container's ports, in order. */
static void ports_text(const json_t *c, char *buf, size_t len)
{
    json_t *p;
    size_t i, n = 0;

    buf[0] = '\0';
    json_array_foreach(json_object_get(c, "ports"), i, p)
        n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", i ? "," : "",
                              json_string_value(json_object_get(p, "name")),
                              (long long)json_integer_value(json_object_get(p, "containerPort")));
}

static void test_ray_defaults(void **state)
{
    json_t *job = job_with("{\"ray\":[],\"svc\":[]}", NULL);
    json_t *head = pod_of("head", 0,
                          "[{\"name\":\"head\",\"args\":[\"x\"],\"ports\":[{\"name\":\"mine\","
                          "\"containerPort\":6379}]},{\"name\":\"side\",\"command\":[\"s\"]}]");
    json_t *worker = pod_of("worker", 1, "[{\"name\":\"worker\",\"command\":[\"python\"]}]");
    char ports[256];

    (void)state;
    assert_true(vc_ray_has_head(job));
    vc_ray_decorate(job, head);
    assert_string_equal(script_of(container(head, "head")),
                        "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 "
                        "--dashboard-port=8265 --ray-client-server-port=10001");
    /* a port of the GCS's number is kept as the user named it */
    ports_text(container(head, "head"), ports, sizeof(ports));
    assert_string_equal(ports, "mine=6379,dashboard=8265,client-server=10001");
    /* args are left as they were (upstream replaces the command only) */
    assert_non_null(json_object_get(container(head, "head"), "args"));
    /* other containers are not the head's */
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(container(head, "side"), "command"), 0)), "s");
    vc_ray_decorate(job, worker);
    assert_string_equal(script_of(container(worker, "worker")),
                        "ray start --block --address=r-head-0.r:6379");
    assert_null(json_object_get(container(worker, "worker"), "ports"));
    json_decref(head);
    json_decref(worker);
    json_decref(job);
}

static void test_ray_args(void **state)
{
    json_t *job = job_with(
        "{\"ray\":[\"--head=boss\",\"--headContainer=ray-head\",\"-worker\",\"crew\","
        "\"--workerContainer=ray-worker\",\"--port=7000\",\"--dashboardPort=7001\","
        "\"--clientPort=70000\"]}",
        "[{\"name\":\"boss\",\"replicas\":1,\"template\":{\"spec\":{\"hostname\":\"rayhead\","
        "\"subdomain\":\"net\",\"containers\":[{\"name\":\"ray-head\"}]}}},"
        "{\"name\":\"crew\",\"replicas\":1,\"template\":{\"spec\":{\"containers\":"
        "[{\"name\":\"ray-worker\"}]}}}]");
    json_t *head = pod_of("boss", 0, "[{\"name\":\"ray-head\"},{\"name\":\"head\"}]");
    json_t *worker = pod_of("crew", 0, "[{\"name\":\"ray-worker\"}]");
    json_t *svc;
    char ports[256], *text;

    (void)state;
    vc_ray_decorate(job, head);
    /* an out-of-range port keeps its default */
    assert_string_equal(script_of(container(head, "ray-head")),
                        "ray start --head --block --dashboard-host=0.0.0.0 --port=7000 "
                        "--dashboard-port=7001 --ray-client-server-port=10001");
    ports_text(container(head, "ray-head"), ports, sizeof(ports));
    assert_string_equal(ports, "gcs=7000,dashboard=7001,client-server=10001");
    assert_null(json_object_get(container(head, "head"), "command"));
    /* the head task template's hostname and subdomain name the head */
    vc_ray_decorate(job, worker);
    assert_string_equal(script_of(container(worker, "ray-worker")),
                        "ray start --block --address=rayhead.net:7000");
    svc = vc_ray_service(job, "ns1");
    text = json_dumps(svc, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(
        text,
        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"r-head-svc\","
        "\"namespace\":\"ns1\"},\"spec\":{\"ports\":[{\"name\":\"gcs\",\"port\":7000,"
        "\"protocol\":\"TCP\",\"targetPort\":\"gcs\"},{\"name\":\"dashboard\",\"port\":7001,"
        "\"protocol\":\"TCP\",\"targetPort\":\"dashboard\"},{\"name\":\"client-server\","
        "\"port\":10001,\"protocol\":\"TCP\",\"targetPort\":\"client-server\"}],\"selector\":"
        "{\"volcano.sh/job-name\":\"r\",\"volcano.sh/job-namespace\":\"ns1\","
        "\"volcano.sh/task-spec\":\"boss\"}}}");
    free(text);
    json_decref(svc);
    json_decref(head);
    json_decref(worker);
    json_decref(job);
}

static void test_ray_without_head(void **state)
{
    json_t *job = job_with("{\"ray\":[]}", "[{\"name\":\"worker\",\"replicas\":1,\"template\":"
                                           "{\"spec\":{\"containers\":[{\"name\":\"worker\"}]}}}]");
    json_t *worker = pod_of("worker", 0, "[{\"name\":\"worker\"}]");

    (void)state;
    assert_false(vc_ray_has_head(job));
    vc_ray_decorate(job, worker);
    assert_null(json_object_get(container(worker, "worker"), "command"));
    json_decref(worker);
    json_decref(job);
}

static const char *rank_of(const json_t *pod)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "annotations"), VC_ANN_HCCL_RANK));
}

static void test_hcclrank(void **state)
{
    json_t *job = job_with("{\"hcclrank\":[]}",
                           "[{\"name\":\"master\",\"replicas\":2},{\"name\":\"worker\","
                           "\"replicas\":3},{\"name\":\"ps\",\"replicas\":1}]");
    json_t *m1 = pod_of("master", 1, "[{\"name\":\"c\"}]");
    json_t *w2 = pod_of("worker", 2, "[{\"name\":\"c\"}]");
    json_t *ps = pod_of("ps", 0, "[{\"name\":\"c\"}]");
    json_t *env = pod_of("worker", 0,
                         "[{\"name\":\"a\"},{\"name\":\"c\",\"env\":[{\"name\":\"RANK\","
                         "\"value\":\"7\"}]}]");
    json_t *ref = pod_of("worker", 1,
                         "[{\"name\":\"c\",\"env\":[{\"name\":\"RANK\",\"valueFrom\":{}}]}]");
    json_t *had = pod_of("master", 0, "[{\"name\":\"c\"}]");

    (void)state;
    json_object_set_new(json_object_get(json_object_get(had, "metadata"), "annotations"),
                        VC_ANN_HCCL_RANK, json_string("42"));
    vc_hcclrank_decorate(job, m1);
    vc_hcclrank_decorate(job, w2);
    vc_hcclrank_decorate(job, ps);
    vc_hcclrank_decorate(job, env);
    vc_hcclrank_decorate(job, ref);
    vc_hcclrank_decorate(job, had);
    assert_string_equal(rank_of(m1), "1");
    assert_string_equal(rank_of(w2), "4"); /* 2 masters + index 2 */
    assert_null(rank_of(ps));
    assert_string_equal(rank_of(env), "7"); /* RANK (the pytorch plugin's, or the user's) */
    assert_string_equal(rank_of(ref), "3"); /* a RANK without a value: computed */
    assert_string_equal(rank_of(had), "42");
    json_decref(m1);
    json_decref(w2);
    json_decref(ps);
    json_decref(env);
    json_decref(ref);
    json_decref(had);
    json_decref(job);

    /* --master / --worker name the tasks (through the pod decoration) */
    job = job_with("{\"hcclrank\":[\"--master=lead\",\"--worker=crew\"],\"pytorch\":"
                   "[\"--master=lead\",\"--worker=crew\"]}",
                   "[{\"name\":\"lead\",\"replicas\":1},{\"name\":\"crew\",\"replicas\":2}]");
    w2 = pod_of("crew", 1, "[{\"name\":\"c\"}]");
    vc_plugins_decorate(job, w2);
    assert_string_equal(rank_of(w2), "2");
    json_decref(w2);
    json_decref(job);
}

/* Through the pod decoration and the admission, as a job gets them. */
static void test_admission(void **state)
{
    json_t *job = job_with("{\"ray\":[]}", NULL);
    json_t *plugins;
    ty_error err;

    (void)state;
    ty_error_init(&err);
    if (api_prepare(&api_vcjob, job, NULL, &err) != 0)
        fail_msg("ray job refused: %s", err.text);
    plugins = json_object_get(json_object_get(job, "spec"), "plugins");
    assert_non_null(json_object_get(plugins, "svc")); /* as Volcano's webhook adds it */
    assert_null(json_object_get(plugins, "ssh"));
    json_decref(job);

    job = job_with("{\"hcclrank\":[\"--master=m\"]}",
                   "[{\"name\":\"m\",\"replicas\":1,\"template\":{\"spec\":{\"containers\":"
                   "[{\"name\":\"c\",\"image\":\"i\"}]}}}]");
    if (api_prepare(&api_vcjob, job, NULL, &err) != 0)
        fail_msg("hcclrank job refused: %s", err.text);
    plugins = json_object_get(json_object_get(job, "spec"), "plugins");
    assert_int_equal(json_object_size(plugins), 1);
    json_decref(job);

    job = job_with("{\"rayy\":[]}", NULL);
    assert_int_equal(api_prepare(&api_vcjob, job, NULL, &err), -1);
    assert_non_null(strstr(err.text, "\"ray\", \"hcclrank\""));
    ty_error_clear(&err);
    json_decref(job);
}

/* The svc plugin leaves a template's hostname and subdomain (upstream's
 * sets them only when empty): the ray workers dial the head by them. */
static void test_svc_keeps_hostname(void **state)
{
    json_t *job = job_with("{\"svc\":[]}", NULL);
    json_t *pod = pod_of("head", 0, "[{\"name\":\"head\"}]"), *spec;

    (void)state;
    spec = json_object_get(pod, "spec");
    json_object_set_new(spec, "hostname", json_string("rayhead"));
    vc_plugins_decorate(job, pod);
    assert_string_equal(json_string_value(json_object_get(spec, "hostname")), "rayhead");
    assert_string_equal(json_string_value(json_object_get(spec, "subdomain")), "r");
    json_decref(pod);
    json_decref(job);
}

static const char *env_value(const json_t *env, const char *name)
{
    json_t *e;
    size_t i;

    json_array_foreach(env, i, e)
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            return json_string_value(json_object_get(e, "value"));
    return NULL;
}

/* ... and the names the plugins hand out are those names, as upstream's:
 * a template hostname is listed once, a template subdomain replaces the job's. */
static void test_hosts_follow_template(void **state)
{
    json_t *job = job_with("{\"svc\":[],\"pytorch\":[\"--master=head\"]}",
                           "[{\"name\":\"head\",\"replicas\":2,\"template\":{\"spec\":"
                           "{\"hostname\":\"rayhead\"}}},{\"name\":\"worker\",\"replicas\":2,"
                           "\"template\":{\"spec\":{\"subdomain\":\"net\"}}}]");
    json_t *env = json_array(), *data;
    char *config;

    (void)state;
    vc_plugins_env(job, "worker", 0, env);
    assert_string_equal(env_value(env, "VC_HEAD_HOSTS"), "rayhead.r");
    assert_string_equal(env_value(env, "VC_WORKER_HOSTS"), "r-worker-0.net,r-worker-1.net");
    assert_string_equal(env_value(env, "MASTER_ADDR"), "rayhead.r");
    data = vc_svc_configmap_data(job);
    assert_string_equal(json_string_value(json_object_get(data, "worker.host")),
                        "r-worker-0.net\nr-worker-1.net");
    json_decref(data);
    config = vc_ssh_config(job);
    assert_non_null(strstr(config, "\nHost rayhead\n  HostName rayhead.r\nHost r-worker-0\n"
                                   "  HostName r-worker-0.net\nHost r-worker-1\n"));
    free(config);
    json_decref(env);
    json_decref(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ray_defaults),     cmocka_unit_test(test_ray_args),
        cmocka_unit_test(test_ray_without_head), cmocka_unit_test(test_hcclrank),
        cmocka_unit_test(test_admission),        cmocka_unit_test(test_svc_keeps_hostname),
        cmocka_unit_test(test_hosts_follow_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
