/* test_mpijob_v2.c - MPIJob kubeflow.org/v2beta1: what the API stores
 * (mpi-operator's defaults), what it refuses (mpi-operator's validation) and
 * what the job engine builds from it (pods, env per MPI implementation,
 * hostfile, discover_hosts.sh, launcher creation policy, Service, Secret). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "controller/jobs/jobs_int.h"
#include "model/yaml.h"

#define JOB_HEAD                                                                  \
    "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: pi\n"     \
    "  namespace: default\n  uid: u1\n"
#define REPLICAS                                                                  \
    "  mpiReplicaSpecs:\n"                                                        \
    "    Launcher:\n      template:\n        spec:\n          containers:\n"      \
    "          - {name: l, image: img, command: [mpirun]}\n"                      \
    "          - {name: side, image: img}\n"                                      \
    "    Worker:\n      replicas: 2\n      template:\n        spec:\n"            \
    "          containers:\n          - {name: w, image: img}\n"

static json_t *load(const char *yaml)
{
    ty_error err;
    json_t *obj;

    ty_error_init(&err);
    obj = yaml_load_one(yaml, strlen(yaml), &err);
    if (!obj)
        fail_msg("yaml: %s", err.text);
    return obj;
}

/* The stored (defaulted) job; fails the test when it does not validate. */
static json_t *stored(const char *yaml)
{
    json_t *obj = load(yaml);
    ty_error err;

    ty_error_init(&err);
    if (api_prepare(&api_mpijob_v2, obj, NULL, &err) != 0)
        fail_msg("invalid: %s", err.text);
    return obj;
}

/* The message of a refused job (caller frees). */
static char *refusal(const char *yaml)
{
    json_t *obj = load(yaml);
    ty_error err;
    char *text;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_mpijob_v2, obj, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    text = strdup(err.text);
    ty_error_clear(&err);
    json_decref(obj);
    return text;
}

static void expect_refused(const char *yaml, const char *want)
{
    char *text = refusal(yaml);
    if (!strstr(text, want))
        fail_msg("want \"%s\" in \"%s\"", want, text);
    free(text);
}

static const char *str(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

static void test_defaults(void **state)
{
    json_t *job = stored(JOB_HEAD "spec:\n" REPLICAS);
    json_t *spec = json_object_get(job, "spec");
    json_t *map = json_object_get(spec, "mpiReplicaSpecs");

    (void)state;
    assert_string_equal(str(job, "apiVersion", NULL), "kubeflow.org/v2beta1");
    assert_int_equal(json_integer_value(json_object_get(spec, "slotsPerWorker")), 1);
    assert_string_equal(str(spec, "sshAuthMountPath", NULL), "/root/.ssh");
    assert_string_equal(str(spec, "mpiImplementation", NULL), "OpenMPI");
    assert_string_equal(str(spec, "launcherCreationPolicy", NULL), "AtStartup");
    assert_true(json_is_false(json_object_get(spec, "runLauncherAsWorker")));
    assert_string_equal(str(spec, "runPolicy", "cleanPodPolicy"), "None");
    assert_true(json_is_false(json_object_get(json_object_get(spec, "runPolicy"), "suspend")));
    /* mpi-operator: the launcher OnFailure, workers Never */
    assert_string_equal(str(json_object_get(map, "Launcher"), "restartPolicy", NULL), "OnFailure");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(map, "Launcher"),
                                                        "replicas")), 1);
    assert_string_equal(str(json_object_get(map, "Worker"), "restartPolicy", NULL), "Never");
    json_decref(job);

    /* empty strings count as unset, as the controller defaults them */
    job = stored(JOB_HEAD "spec:\n  sshAuthMountPath: \"\"\n  mpiImplementation: \"\"\n" REPLICAS);
    assert_string_equal(str(json_object_get(job, "spec"), "sshAuthMountPath", NULL), "/root/.ssh");
    assert_string_equal(str(json_object_get(job, "spec"), "mpiImplementation", NULL), "OpenMPI");
    json_decref(job);

    /* mpi-operator's own managedBy value is accepted */
    job = stored(JOB_HEAD "spec:\n  runPolicy:\n    managedBy: kubeflow.org/mpi-operator\n"
                 REPLICAS);
    json_decref(job);
}

static void test_validation(void **state)
{
    (void)state;
    expect_refused(JOB_HEAD "spec:\n  slotsPerWorker: -1\n" REPLICAS,
                   "spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0");
    expect_refused(JOB_HEAD "spec:\n  mpiImplementation: LAM\n" REPLICAS,
                   "spec.mpiImplementation: Unsupported value: \"LAM\": supported values: "
                   "\"Intel\", \"MPICH\", \"OpenMPI\"");
    expect_refused(JOB_HEAD "spec:\n  runPolicy:\n    managedBy: kubeflow.org/training-operator\n"
                   REPLICAS, "spec.runPolicy.managedBy: Unsupported value");
    expect_refused(JOB_HEAD "spec:\n  mpiReplicaSpecs:\n    Worker:\n      replicas: 1\n"
                   "      template: {spec: {containers: [{name: w, image: i}]}}\n",
                   "spec.mpiReplicaSpecs[Launcher]: Required value: must have Launcher "
                   "replica spec");
    expect_refused(JOB_HEAD "spec:\n  mpiReplicaSpecs:\n    Launcher:\n      replicas: 2\n"
                   "      template: {spec: {containers: [{name: l, image: i}]}}\n",
                   "spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1");
    expect_refused(JOB_HEAD "spec:\n  mpiReplicaSpecs:\n    Launcher:\n"
                   "      template: {spec: {containers: [{name: l, image: i}]}}\n"
                   "    Worker:\n      template: {spec: {containers: [{name: w, image: i}]}}\n",
                   "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: 0: must be greater "
                   "than or equal to 1");
    expect_refused(JOB_HEAD "spec:\n  mpiReplicaSpecs:\n    Launcher:\n"
                   "      restartPolicy: Always\n"
                   "      template: {spec: {containers: [{name: l, image: i}]}}\n",
                   "spec.mpiReplicaSpecs[Launcher].restartPolicy: Unsupported value: "
                   "\"Always\": supported values: \"Never\", \"OnFailure\"");
    expect_refused(JOB_HEAD "spec:\n  mpiImplementation: 3\n" REPLICAS,
                   "spec.mpiImplementation");
    /* the last worker's hostname must be a DNS-1035 label: 55 + "-worker-1" */
    expect_refused("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: "
                   "a234567890123456789012345678901234567890123456789012345\n"
                   "spec:\n" REPLICAS,
                   "will not able to create pod and service with invalid DNS label");
}

typedef struct ctx {
    json_t *job;
    job_ctx c;
} ctx;

static void open_ctx(ctx *x, const char *spec_yaml)
{
    char yaml[4096];

    snprintf(yaml, sizeof(yaml), JOB_HEAD "spec:\n%s" REPLICAS, spec_yaml);
    x->job = stored(yaml);
    kf_default_ports(&kf_mpijob_v2, x->job);
    x->c = (job_ctx){&kf_mpijob_v2, x->job, "pi", "default"};
}

static json_t *pod(ctx *x, const char *rtype, int index)
{
    return jobs_build_pod(&jf_mpi_v2, &x->c, rtype, index, false);
}

/* container 0's env value of name, NULL when absent */
static const char *env_of(const json_t *pod, const char *name)
{
    json_t *ct = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(ct, "env"), i, e)
        if (strcmp(str(e, "name", NULL), name) == 0)
            return str(e, "value", NULL);
    return NULL;
}

static void test_launcher_env(void **state)
{
    ctx x;
    json_t *p;

    (void)state;
    open_ctx(&x, "  slotsPerWorker: 2\n");
    p = pod(&x, "Launcher", 0);
    assert_string_equal(str(json_object_get(p, "metadata"), "name", NULL), "pi-launcher");
    assert_string_equal(env_of(p, "K_MPI_JOB_ROLE"), "launcher");
    assert_string_equal(env_of(p, "OMPI_MCA_orte_keep_fqdn_hostnames"), "true");
    assert_string_equal(env_of(p, "OMPI_MCA_orte_default_hostfile"), "/etc/mpi/hostfile");
    assert_string_equal(env_of(p, "OMPI_MCA_plm_rsh_args"), "-o ConnectionAttempts=10");
    assert_string_equal(env_of(p, "OMPI_MCA_orte_set_default_slots"), "2");
    assert_string_equal(env_of(p, "OMPI_MCA_plm_rsh_agent"), "/etc/mpi/kubexec.sh");
    assert_string_equal(env_of(p, "NVIDIA_VISIBLE_DEVICES"), "");
    assert_null(env_of(p, "I_MPI_HYDRA_HOST_FILE"));
    assert_string_equal(str(json_object_get(p, "spec"), "hostname", NULL), "pi-launcher");
    assert_string_equal(str(json_object_get(p, "spec"), "subdomain", NULL), "pi");
    assert_string_equal(str(json_object_get(p, "spec"), "restartPolicy", NULL), "OnFailure");
    assert_string_equal(str(json_object_get(json_object_get(p, "metadata"), "labels"),
                            "training.kubeflow.org/operator-name", NULL), "mpi-operator");
    /* upstream edits the first container only */
    {
        json_t *side = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 1);
        assert_null(json_object_get(side, "env"));
        assert_null(json_object_get(side, "volumeMounts"));
    }
    json_decref(p);
    json_decref(x.job);

    open_ctx(&x, "  mpiImplementation: Intel\n  slotsPerWorker: 3\n  runLauncherAsWorker: true\n");
    p = pod(&x, "Launcher", 0);
    assert_string_equal(env_of(p, "I_MPI_HYDRA_HOST_FILE"), "/etc/mpi/hostfile");
    assert_string_equal(env_of(p, "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"),
                        "-o ConnectionAttempts=10");
    assert_string_equal(env_of(p, "I_MPI_PERHOST"), "3");
    assert_string_equal(env_of(p, "I_MPI_HYDRA_BOOTSTRAP_EXEC"), "/etc/mpi/kubexec.sh");
    assert_null(env_of(p, "OMPI_MCA_orte_default_hostfile"));
    assert_null(env_of(p, "NVIDIA_VISIBLE_DEVICES")); /* the launcher runs ranks */
    json_decref(p);
    json_decref(x.job);

    open_ctx(&x, "  mpiImplementation: MPICH\n");
    p = pod(&x, "Launcher", 0);
    assert_string_equal(env_of(p, "HYDRA_HOST_FILE"), "/etc/mpi/hostfile");
    assert_string_equal(env_of(p, "HYDRA_LAUNCH_EXTRA_ARGS"), "-o ConnectionAttempts=10");
    assert_string_equal(env_of(p, "HYDRA_LAUNCHER_EXEC"), "/etc/mpi/kubexec.sh");
    json_decref(p);
    json_decref(x.job);
}

static void test_worker_pod(void **state)
{
    ctx x;
    json_t *p, *spec, *ct, *vols;

    (void)state;
    open_ctx(&x, "  sshAuthMountPath: /home/mpiuser/.ssh\n");
    p = pod(&x, "Worker", 1);
    spec = json_object_get(p, "spec");
    ct = json_array_get(json_object_get(spec, "containers"), 0);
    assert_string_equal(str(json_object_get(p, "metadata"), "name", NULL), "pi-worker-1");
    assert_string_equal(str(spec, "hostname", NULL), "pi-worker-1");
    assert_string_equal(str(spec, "subdomain", NULL), "pi");
    assert_string_equal(str(spec, "restartPolicy", NULL), "Never");
    assert_string_equal(env_of(p, "K_MPI_JOB_ROLE"), "worker");
    assert_null(env_of(p, "OMPI_MCA_orte_default_hostfile"));
    /* neither command nor args: an idle loop in place of sshd */
    assert_string_equal(json_string_value(json_array_get(json_object_get(ct, "command"), 0)),
                        "/bin/sh");
    assert_string_equal(str(json_object_get(json_object_get(p, "metadata"), "labels"),
                            "training.kubeflow.org/job-role", NULL), "worker");
    /* the ssh Secret at sshAuthMountPath, no 0600 outside /root/.ssh; no /etc/mpi */
    vols = json_object_get(spec, "volumes");
    assert_int_equal(json_array_size(vols), 1);
    assert_string_equal(str(json_array_get(vols, 0), "secret", "secretName"), "pi-ssh");
    assert_null(json_object_get(json_object_get(json_array_get(vols, 0), "secret"),
                                "defaultMode"));
    assert_string_equal(str(json_array_get(json_object_get(ct, "volumeMounts"), 0), "mountPath",
                            NULL), "/home/mpiuser/.ssh");
    json_decref(p);
    json_decref(x.job);
}

static const char *data(const json_t *cm, const char *key)
{
    return str(json_object_get(cm, "data"), key, NULL);
}

static void test_hostfile(void **state)
{
    ctx x;
    json_t *cm, *pods;

    (void)state;
    open_ctx(&x, "  slotsPerWorker: 2\n");
    pods = json_pack("[{s:{s:s}, s:{s:s}}]", "metadata", "name", "pi-worker-0", "status",
                     "phase", "Failed");
    cm = jf_mpi_v2.configmap(&x.c, pods);
    assert_string_equal(str(json_object_get(cm, "metadata"), "name", NULL), "pi-config");
    assert_string_equal(data(cm, "hostfile"), "pi-worker-0.pi.default.svc slots=2\n"
                                              "pi-worker-1.pi.default.svc slots=2\n");
    /* an ended worker is left out of discover_hosts.sh */
    assert_string_equal(data(cm, "discover_hosts.sh"),
                        "#!/bin/sh\necho pi-worker-1.pi.default.svc\n");
    assert_non_null(strstr(data(cm, "kubexec.sh"), "POD_NAME=${1%%.*}"));
    json_decref(cm);
    json_decref(x.job);

    open_ctx(&x, "  mpiImplementation: Intel\n  runLauncherAsWorker: true\n");
    cm = jf_mpi_v2.configmap(&x.c, pods);
    assert_string_equal(data(cm, "hostfile"), "pi-launcher.pi.default.svc:1\n"
                                              "pi-worker-0.pi.default.svc:1\n"
                                              "pi-worker-1.pi.default.svc:1\n");
    json_decref(cm);
    json_decref(x.job);
    json_decref(pods);
}

static void test_launcher_creation_policy(void **state)
{
    jf_counts counts[2] = {{.type = "Launcher", .replicas = 1},
                           {.type = "Worker", .replicas = 2, .running = 1}};
    ctx x;

    (void)state;
    open_ctx(&x, "");
    assert_true(jf_mpi_v2.may_create(&x.c, "Launcher", counts, 2));
    json_decref(x.job);
    open_ctx(&x, "  launcherCreationPolicy: WaitForWorkersReady\n");
    assert_true(jf_mpi_v2.may_create(&x.c, "Worker", counts, 2));
    assert_false(jf_mpi_v2.may_create(&x.c, "Launcher", counts, 2));
    counts[1].running = 2;
    assert_true(jf_mpi_v2.may_create(&x.c, "Launcher", counts, 2));
    json_decref(x.job);
}

static void test_extras(void **state)
{
    ctx x;
    json_t *objs, *svc, *secret;

    (void)state;
    open_ctx(&x, "");
    objs = jf_mpi_v2.extras(&x.c);
    assert_int_equal(json_array_size(objs), 2);
    svc = json_array_get(objs, 0);
    secret = json_array_get(objs, 1);
    assert_string_equal(str(svc, "kind", NULL), "Service");
    assert_string_equal(str(json_object_get(svc, "metadata"), "name", NULL), "pi");
    assert_string_equal(str(json_object_get(svc, "spec"), "clusterIP", NULL), "None");
    assert_string_equal(str(json_object_get(json_object_get(svc, "spec"), "selector"),
                            "training.kubeflow.org/job-name", NULL), "pi");
    assert_true(json_is_false(json_object_get(json_object_get(svc, "spec"),
                                              "publishNotReadyAddresses")));
    assert_string_equal(str(secret, "kind", NULL), "Secret");
    assert_string_equal(str(json_object_get(secret, "metadata"), "name", NULL), "pi-ssh");
    assert_string_equal(str(secret, "type", NULL), "kubernetes.io/ssh-auth");
    assert_null(json_object_get(secret, "data")); /* the engine makes the key pair */
    json_decref(objs);
    json_decref(x.job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_launcher_env),
        cmocka_unit_test(test_worker_pod),
        cmocka_unit_test(test_hostfile),
        cmocka_unit_test(test_launcher_creation_policy),
        cmocka_unit_test(test_extras),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
