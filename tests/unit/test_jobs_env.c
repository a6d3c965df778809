/* test_jobs_env.c - the pods the job engine builds for every kind, from a
 * manifest as users write it: names, labels, ownerReferences, restart policy,
 * ports, services and the exact injected environment. */
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
#include "base/treearena.h"
#include "controller/jobs/jobs_int.h"
#include "model/yaml.h"

/* A defaulted job from YAML, as the API server stores it. */
static json_t *manifest(const char *yaml)
{
    ty_error err;
    json_t *obj, *meta;
    const api_resource *res;

    ty_error_init(&err);
    obj = yaml_load_one(yaml, strlen(yaml), &err);
    assert_non_null(obj);
    res = api_find_kind(json_string_value(json_object_get(obj, "apiVersion")),
                        json_string_value(json_object_get(obj, "kind")));
    assert_non_null(res);
    if (api_prepare(res, obj, NULL, &err) != 0)
        fail_msg("invalid manifest: %s", err.text);
    meta = json_object_get(obj, "metadata");
    if (!json_object_get(meta, "namespace"))
        json_object_set_new(meta, "namespace", json_string("default"));
    json_object_set_new(meta, "uid", json_string("0000-uid"));
    return obj;
}

typedef struct built {
    const kf_kind *k;
    const jobs_framework *fw;
    json_t *job; /* working copy */
    job_ctx c;
} built;

static void build_ctx(built *b, const json_t *job)
{
    const json_t *meta = json_object_get(job, "metadata");

    b->k = kf_kind_for_resource(api_find_kind(json_string_value(json_object_get(job, "apiVersion")),
                                              json_string_value(json_object_get(job, "kind"))));
    assert_non_null(b->k);
    b->fw = jobs_framework_for(b->k);
    assert_non_null(b->fw);
    b->job = json_deep_copy(job);
    kf_default_ports(b->k, b->job);
    b->c = (job_ctx){b->k, b->job, json_string_value(json_object_get(meta, "name")),
                     json_string_value(json_object_get(meta, "namespace"))};
}

static json_t *pod_of(const json_t *job, const char *rtype, int index)
{
    built b;
    json_t *pod;
    ty_error err;

    build_ctx(&b, job);
    /* built in a tree arena scope, as the engine builds it: whatever the
     * frameworks do meanwhile must be safe there (no json_dumps text) */
    ty_tree_arena_begin(TY_TREES_STORED);
    pod = jobs_build_pod(b.fw, &b.c, rtype, index, false);
    ty_tree_arena_end();
    json_decref(b.job);
    /* Whatever the engine builds must pass the API's own pod rules. */
    ty_error_init(&err);
    json_t *copy = json_deep_copy(pod);
    if (api_prepare(&api_pod, copy, NULL, &err) != 0)
        fail_msg("built pod invalid: %s", err.text);
    json_decref(copy);
    return pod;
}

static json_t *svc_of(const json_t *job, const char *rtype, int index)
{
    built b;
    json_t *svc;

    build_ctx(&b, job);
    svc = jobs_build_service(b.fw, &b.c, rtype, index);
    json_decref(b.job);
    return svc;
}

static const json_t *container(const json_t *pod, const char *name)
{
    const json_t *list = json_object_get(json_object_get(pod, "spec"), "containers");
    size_t i;
    json_t *c;

    json_array_foreach(list, i, c)
        if (!name || strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
            return c;
    return NULL;
}

/* The value of env var `name` in container cname (NULL = first); NULL when
 * absent. Fails when it appears twice. */
static const char *env_of(const json_t *pod, const char *cname, const char *name)
{
    const json_t *env = json_object_get(container(pod, cname), "env");
    const char *found = NULL;
    size_t i;
    json_t *e;

    json_array_foreach(env, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "name")), name) != 0)
            continue;
        assert_null(found);
        found = json_string_value(json_object_get(e, "value"));
        if (!found)
            found = "<valueFrom>";
    }
    return found;
}

static const char *lbl(const json_t *obj, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

static const char *pname(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
}

#define ENV_EQ(pod, c, name, want) assert_string_equal(env_of(pod, c, name), want)

/* ---- PyTorch ---- */

static const char pytorch_yaml[] =
    "apiVersion: kubeflow.org/v1\n"
    "kind: PyTorchJob\n"
    "metadata: {name: mnist, namespace: team}\n"
    "spec:\n"
    "  nprocPerNode: '2'\n"
    "  pytorchReplicaSpecs:\n"
    "    Master:\n"
    "      replicas: 1\n"
    "      template:\n"
    "        metadata: {labels: {app: mine}, annotations: {note: kept}}\n"
    "        spec:\n"
    "          restartPolicy: Always\n"
    "          containers:\n"
    "          - {name: pytorch, image: busybox, env: [{name: USER_VAR, value: x}]}\n"
    "          - {name: sidecar, image: busybox}\n"
    "    worker:\n"
    "      replicas: 2\n"
    "      restartPolicy: ExitCode\n"
    "      template:\n"
    "        spec:\n"
    "          containers: [{name: pytorch, image: busybox}]\n";

static void test_pytorch_master(void **state)
{
    json_t *job = manifest(pytorch_yaml), *pod = pod_of(job, "Master", 0);
    const json_t *meta = json_object_get(pod, "metadata");
    const json_t *ref = json_array_get(json_object_get(meta, "ownerReferences"), 0);

    (void)state;
    assert_string_equal(pname(pod), "mnist-master-0");
    assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "team");
    assert_string_equal(lbl(pod, "training.kubeflow.org/operator-name"), "pytorchjob-controller");
    assert_string_equal(lbl(pod, "training.kubeflow.org/job-name"), "mnist");
    assert_string_equal(lbl(pod, "training.kubeflow.org/replica-type"), "master");
    assert_string_equal(lbl(pod, "training.kubeflow.org/replica-index"), "0");
    assert_string_equal(lbl(pod, "training.kubeflow.org/job-role"), "master");
    assert_string_equal(lbl(pod, "app"), "mine");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(meta, "annotations"), "note")), "kept");
    assert_int_equal(json_array_size(json_object_get(meta, "ownerReferences")), 1);
    assert_string_equal(json_string_value(json_object_get(ref, "apiVersion")), "kubeflow.org/v1");
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "PyTorchJob");
    assert_string_equal(json_string_value(json_object_get(ref, "name")), "mnist");
    assert_string_equal(json_string_value(json_object_get(ref, "uid")), "0000-uid");
    assert_true(json_is_true(json_object_get(ref, "controller")));
    assert_true(json_is_true(json_object_get(ref, "blockOwnerDeletion")));
    /* The replica's policy (defaulted OnFailure) overrides the template's. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "spec"),
                                                          "restartPolicy")), "OnFailure");
    /* The default port on the default container. */
    const json_t *port = json_array_get(json_object_get(container(pod, "pytorch"), "ports"), 0);
    assert_string_equal(json_string_value(json_object_get(port, "name")), "pytorchjob-port");
    assert_int_equal(json_integer_value(json_object_get(port, "containerPort")), 23456);
    /* Env in every container, after the user's own. */
    for (int i = 0; i < 2; i++) {
        const char *c = i ? "sidecar" : "pytorch";
        ENV_EQ(pod, c, "PYTHONUNBUFFERED", "1");
        ENV_EQ(pod, c, "PET_NPROC_PER_NODE", "2");
        ENV_EQ(pod, c, "MASTER_ADDR", "mnist-master-0");
        ENV_EQ(pod, c, "PET_MASTER_ADDR", "mnist-master-0");
        ENV_EQ(pod, c, "MASTER_PORT", "23456");
        ENV_EQ(pod, c, "PET_MASTER_PORT", "23456");
        ENV_EQ(pod, c, "WORLD_SIZE", "6");
        ENV_EQ(pod, c, "RANK", "0");
        ENV_EQ(pod, c, "PET_NODE_RANK", "0");
        ENV_EQ(pod, c, "PET_NNODES", "3");
    }
    assert_string_equal(json_string_value(json_object_get(
        json_array_get(json_object_get(container(pod, "pytorch"), "env"), 0), "name")),
        "USER_VAR");
    json_decref(pod);
    json_decref(job);
}

static void test_pytorch_worker(void **state)
{
    json_t *job = manifest(pytorch_yaml), *pod = pod_of(job, "Worker", 1), *svc;

    (void)state;
    assert_string_equal(pname(pod), "mnist-worker-1");
    assert_string_equal(lbl(pod, "training.kubeflow.org/replica-type"), "worker");
    assert_string_equal(lbl(pod, "training.kubeflow.org/replica-index"), "1");
    assert_null(lbl(pod, "training.kubeflow.org/job-role"));
    /* ExitCode is the engine's to apply: the pod itself never restarts. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "spec"),
                                                          "restartPolicy")), "Never");
    ENV_EQ(pod, NULL, "RANK", "2");
    ENV_EQ(pod, NULL, "PET_NODE_RANK", "2");
    ENV_EQ(pod, NULL, "WORLD_SIZE", "6");
    ENV_EQ(pod, NULL, "MASTER_ADDR", "mnist-master-0");
    ENV_EQ(pod, NULL, "PET_NNODES", "3");
    assert_null(env_of(pod, NULL, "PET_RDZV_ENDPOINT"));

    svc = svc_of(job, "Worker", 1);
    assert_string_equal(pname(svc), "mnist-worker-1");
    const json_t *spec = json_object_get(svc, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "clusterIP")), "None");
    const json_t *sel = json_object_get(spec, "selector");
    assert_string_equal(json_string_value(json_object_get(sel, "training.kubeflow.org/job-name")),
                        "mnist");
    assert_string_equal(json_string_value(json_object_get(
                            sel, "training.kubeflow.org/replica-type")), "worker");
    assert_string_equal(json_string_value(json_object_get(
                            sel, "training.kubeflow.org/replica-index")), "1");
    const json_t *port = json_array_get(json_object_get(spec, "ports"), 0);
    assert_string_equal(json_string_value(json_object_get(port, "name")), "pytorchjob-port");
    assert_int_equal(json_integer_value(json_object_get(port, "port")), 23456);
    json_decref(svc);
    json_decref(pod);
    json_decref(job);
}

static void test_pytorch_elastic(void **state)
{
    json_t *job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: el}\n"
        "spec:\n"
        "  elasticPolicy: {minReplicas: 1, maxReplicas: 3, rdzvBackend: c10d, maxRestarts: 5,\n"
        "    rdzvId: abc, rdzvConf: [{key: timeout, value: '60'}, {key: x, value: y}],\n"
        "    standalone: true}\n"
        "  pytorchReplicaSpecs:\n"
        "    Worker:\n"
        "      replicas: 2\n"
        "      template: {spec: {containers: [{name: pytorch, image: busybox}]}}\n");
    json_t *pod = pod_of(job, "Worker", 1);

    (void)state;
    ENV_EQ(pod, NULL, "PET_RDZV_ENDPOINT", "el-worker-0:23456");
    ENV_EQ(pod, NULL, "PET_RDZV_BACKEND", "c10d");
    ENV_EQ(pod, NULL, "PET_NNODES", "1:3");
    ENV_EQ(pod, NULL, "PET_MAX_RESTARTS", "5");
    ENV_EQ(pod, NULL, "PET_RDZV_ID", "abc");
    ENV_EQ(pod, NULL, "PET_RDZV_CONF", "timeout=60,x=y");
    ENV_EQ(pod, NULL, "PET_STANDALONE", "1");
    ENV_EQ(pod, NULL, "PET_NPROC_PER_NODE", "auto");
    assert_null(env_of(pod, NULL, "MASTER_ADDR"));
    assert_null(env_of(pod, NULL, "RANK"));
    /* No Master: worker 0 plays the master role. */
    json_t *w0 = pod_of(job, "Worker", 0);
    assert_string_equal(lbl(w0, "training.kubeflow.org/job-role"), "master");
    json_decref(w0);
    json_decref(pod);
    json_decref(job);

    job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: el}\n"
        "spec:\n"
        "  elasticPolicy: {minReplicas: 2, maxReplicas: 4, rdzvHost: etcd-svc, rdzvPort: 2379,\n"
        "    rdzvBackend: etcd}\n"
        "  pytorchReplicaSpecs:\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: b}]}}}\n");
    pod = pod_of(job, "Worker", 0);
    ENV_EQ(pod, NULL, "PET_RDZV_ENDPOINT", "etcd-svc:2379");
    ENV_EQ(pod, NULL, "PET_RDZV_BACKEND", "etcd");
    ENV_EQ(pod, NULL, "PET_NNODES", "2:4");
    assert_null(env_of(pod, NULL, "PET_STANDALONE"));
    json_decref(pod);
    json_decref(job);
}

/* ---- TensorFlow ---- */

static const char tf_yaml[] =
    "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: dist}\n"
    "spec:\n"
    "  tfReplicaSpecs:\n"
    "    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: t},\n"
    "      {name: side, image: s}]}}}\n"
    "    PS: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: t}]}}}\n"
    "    Chief: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: t}]}}}\n";

static void test_tf_config(void **state)
{
    json_t *job = manifest(tf_yaml);
    json_t *w1 = pod_of(job, "Worker", 1), *chief = pod_of(job, "Chief", 0);
    json_t *ps0 = pod_of(job, "PS", 0);

    (void)state;
    ENV_EQ(w1, "tensorflow", "TF_CONFIG",
           "{\"cluster\":{\"chief\":[\"dist-chief-0.default.svc:2222\"],"
           "\"ps\":[\"dist-ps-0.default.svc:2222\",\"dist-ps-1.default.svc:2222\"],"
           "\"worker\":[\"dist-worker-0.default.svc:2222\",\"dist-worker-1.default.svc:2222\"]},"
           "\"task\":{\"type\":\"worker\",\"index\":1},\"environment\":\"cloud\"}");
    /* Only the tensorflow container gets it. */
    assert_null(env_of(w1, "side", "TF_CONFIG"));
    ENV_EQ(ps0, "tensorflow", "TF_CONFIG",
           "{\"cluster\":{\"chief\":[\"dist-chief-0.default.svc:2222\"],"
           "\"ps\":[\"dist-ps-0.default.svc:2222\",\"dist-ps-1.default.svc:2222\"],"
           "\"worker\":[\"dist-worker-0.default.svc:2222\",\"dist-worker-1.default.svc:2222\"]},"
           "\"task\":{\"type\":\"ps\",\"index\":0},\"environment\":\"cloud\"}");
    assert_string_equal(pname(chief), "dist-chief-0");
    assert_string_equal(lbl(chief, "training.kubeflow.org/job-role"), "master");
    assert_null(lbl(w1, "training.kubeflow.org/job-role"));
    assert_string_equal(lbl(ps0, "training.kubeflow.org/operator-name"), "tfjob-controller");
    assert_string_equal(json_string_value(json_object_get(json_object_get(w1, "spec"),
                                                          "restartPolicy")), "Never");
    json_decref(w1);
    json_decref(chief);
    json_decref(ps0);
    json_decref(job);
}

static void test_tf_single_and_dynamic(void **state)
{
    json_t *job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: one}\n"
        "spec:\n  tfReplicaSpecs:\n"
        "    Worker: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: t}]}}}\n");
    json_t *pod = pod_of(job, "Worker", 0);

    (void)state;
    assert_null(env_of(pod, NULL, "TF_CONFIG")); /* not distributed */
    assert_string_equal(lbl(pod, "training.kubeflow.org/job-role"), "master");
    json_decref(pod);
    json_decref(job);

    job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: dyn}\n"
        "spec:\n  enableDynamicWorker: true\n  tfReplicaSpecs:\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: t}]}}}\n"
        "    PS: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: t}]}}}\n");
    pod = pod_of(job, "Worker", 1);
    ENV_EQ(pod, NULL, "TF_CONFIG",
           "{\"cluster\":{\"worker\":{\"1\":\"dyn-worker-1.default.svc:2222\"},"
           "\"ps\":[\"dyn-ps-0.default.svc:2222\",\"dyn-ps-1.default.svc:2222\"]},"
           "\"task\":{\"type\":\"worker\",\"index\":1}}");
    json_decref(pod);
    pod = pod_of(job, "PS", 1);
    ENV_EQ(pod, NULL, "TF_CONFIG",
           "{\"cluster\":{\"worker\":{},\"ps\":[\"dyn-ps-1.default.svc:2222\"]},"
           "\"task\":{\"type\":\"ps\",\"index\":1}}");
    json_decref(pod);
    json_decref(job);
}

/* ---- MPI ---- */

static const char mpi_yaml[] =
    "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: pi}\n"
    "spec:\n  slotsPerWorker: 2\n  mpiReplicaSpecs:\n"
    "    Launcher: {replicas: 1, template: {spec: {containers: [{name: mpi, image: m,\n"
    "      command: [mpirun, -n, '4', /pi]}]}}}\n"
    "    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, image: m}]}}}\n";

/* training-operator 1.9's examples/mpi/tensorflow-mnist-elastic.yaml: no
 * container named mpi; the first one is the MPI container. */
static const char mpi_unnamed_yaml[] =
    "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: el}\n"
    "spec:\n  slotsPerWorker: 1\n  cleanPodPolicy: Running\n  mpiReplicaSpecs:\n"
    "    Launcher: {replicas: 1, template: {spec: {containers: [{name: mpi-launcher, image: h,\n"
    "      command: [horovodrun], args: [-np, '2', --host-discovery-script,\n"
    "      /etc/mpi/discover_hosts.sh, python, /x.py]}]}}}\n"
    "    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi-worker, image: h}]}}}\n";

static void test_mpi_first_container(void **state)
{
    json_t *job = manifest(mpi_unnamed_yaml);
    json_t *launcher = pod_of(job, "Launcher", 0), *w0 = pod_of(job, "Worker", 0);
    const json_t *mount, *ports;

    (void)state;
    ENV_EQ(launcher, "mpi-launcher", "OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh");
    ENV_EQ(launcher, "mpi-launcher", "OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile");
    ENV_EQ(launcher, "mpi-launcher", "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/etc/mpi/kubexec.sh");
    mount = json_array_get(json_object_get(container(launcher, "mpi-launcher"), "volumeMounts"),
                           0);
    assert_string_equal(json_string_value(json_object_get(mount, "mountPath")), "/etc/mpi");
    assert_string_equal(json_string_value(json_array_get(json_object_get(
                            container(launcher, "mpi-launcher"), "command"), 0)), "horovodrun");
    /* the worker's first container idles until mpirun's ranks are done */
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(container(w0, "mpi-worker"), "command"), 0)),
                        "/bin/sh");
    /* the default port goes to the first container too (upstream's setDefaultPort) */
    ports = json_object_get(container(w0, "mpi-worker"), "ports");
    assert_string_equal(json_string_value(json_object_get(json_array_get(ports, 0), "name")),
                        "mpi-port");
    json_decref(launcher);
    json_decref(w0);
    json_decref(job);
}

static void test_mpi(void **state)
{
    json_t *job = manifest(mpi_yaml);
    json_t *launcher = pod_of(job, "Launcher", 0), *w1 = pod_of(job, "Worker", 1), *cm;
    const json_t *vol, *mount, *data;
    built b;

    (void)state;
    assert_string_equal(pname(launcher), "pi-launcher");
    assert_string_equal(pname(w1), "pi-worker-1");
    assert_string_equal(lbl(launcher, "training.kubeflow.org/replica-type"), "launcher");
    assert_string_equal(lbl(launcher, "training.kubeflow.org/job-role"), "master");
    assert_string_equal(lbl(w1, "training.kubeflow.org/operator-name"), "mpijob-controller");
    ENV_EQ(launcher, NULL, "OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh");
    ENV_EQ(launcher, NULL, "OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile");
    ENV_EQ(launcher, NULL, "I_MPI_HYDRA_BOOTSTRAP", "rsh");
    ENV_EQ(launcher, NULL, "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/etc/mpi/kubexec.sh");
    assert_null(env_of(w1, NULL, "OMPI_MCA_plm_rsh_agent"));
    vol = json_array_get(json_object_get(json_object_get(launcher, "spec"), "volumes"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(vol, "configMap"),
                                                          "name")), "pi-config");
    mount = json_array_get(json_object_get(container(launcher, "mpi"), "volumeMounts"), 0);
    assert_string_equal(json_string_value(json_object_get(mount, "mountPath")), "/etc/mpi");
    /* Workers without a command idle; the launcher keeps its own. */
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(container(w1, "mpi"), "command"), 0)), "/bin/sh");
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(container(launcher, "mpi"), "command"), 0)),
                        "mpirun");
    assert_null(svc_of(job, "Worker", 0)); /* MPIJob has no services */

    build_ctx(&b, job);
    /* Before any pod exists, the launcher's volume already lists every
     * worker (it starts with them, and its volumes are written once). */
    json_t *pods = json_array();
    cm = b.fw->configmap(&b.c, pods);
    data = json_object_get(cm, "data");
    assert_string_equal(json_string_value(json_object_get(data, "hostfile")),
                        "pi-worker-0 slots=2\npi-worker-1 slots=2\n");
    assert_string_equal(json_string_value(json_object_get(data, "discover_hosts.sh")),
                        "#!/bin/sh\necho pi-worker-0:2\necho pi-worker-1:2\n");
    assert_non_null(strstr(json_string_value(json_object_get(data, "kubexec.sh")),
                           "exec /bin/sh -c \"$*\""));
    assert_string_equal(pname(cm), "pi-config");
    json_decref(cm);
    json_decref(pods);
    /* A worker that ended is no host to discover; the hostfile keeps it. */
    pods = json_pack("[{s:{s:s}, s:{s:s}}, {s:{s:s}, s:{s:s}}]", "metadata", "name",
                     "pi-worker-0", "status", "phase", "Failed", "metadata", "name",
                     "pi-worker-1", "status", "phase", "Running");
    cm = b.fw->configmap(&b.c, pods);
    data = json_object_get(cm, "data");
    assert_string_equal(json_string_value(json_object_get(data, "discover_hosts.sh")),
                        "#!/bin/sh\necho pi-worker-1:2\n");
    assert_string_equal(json_string_value(json_object_get(data, "hostfile")),
                        "pi-worker-0 slots=2\npi-worker-1 slots=2\n");
    /* The launcher is created with its workers, as the training operator
     * creates it (one gang: minMember counts it). */
    assert_null(b.fw->may_create);
    json_decref(pods);
    json_decref(cm);
    json_decref(b.job);
    json_decref(launcher);
    json_decref(w1);
    json_decref(job);
}

/* ---- the others ---- */

static void test_xgboost(void **state)
{
    json_t *job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: xg}\n"
        "spec:\n  xgbReplicaSpecs:\n"
        "    Master: {replicas: 1, template: {spec: {containers: [{name: xgboost, image: x}]}}}\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: xgboost, image: x}]}}}\n");
    json_t *w = pod_of(job, "Worker", 1), *m = pod_of(job, "Master", 0);

    (void)state;
    ENV_EQ(w, NULL, "MASTER_ADDR", "xg-master-0");
    ENV_EQ(w, NULL, "MASTER_PORT", "9999");
    ENV_EQ(w, NULL, "WORLD_SIZE", "3");
    ENV_EQ(w, NULL, "RANK", "2");
    ENV_EQ(w, NULL, "PYTHONUNBUFFERED", "1");
    ENV_EQ(w, NULL, "WORKER_PORT", "9999");
    ENV_EQ(w, NULL, "WORKER_ADDRS", "xg-worker-0,xg-worker-1");
    ENV_EQ(m, NULL, "RANK", "0");
    assert_string_equal(lbl(m, "training.kubeflow.org/job-role"), "master");
    json_decref(w);
    json_decref(m);
    json_decref(job);
}

static void test_paddle(void **state)
{
    json_t *job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: pd}\n"
        "spec:\n  paddleReplicaSpecs:\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: paddle, image: p}]}}}\n");
    json_t *w0 = pod_of(job, "Worker", 0), *w1 = pod_of(job, "Worker", 1);

    (void)state;
    ENV_EQ(w0, NULL, "PADDLE_JOB_ID", "pd");
    ENV_EQ(w0, NULL, "PADDLE_NNODES", "2");
    ENV_EQ(w0, NULL, "PYTHONUNBUFFERED", "1");
    ENV_EQ(w0, NULL, "POD_IP_DUMMY", "<valueFrom>");
    ENV_EQ(w0, NULL, "PADDLE_MASTER", "$(POD_IP_DUMMY):36543");
    ENV_EQ(w1, NULL, "PADDLE_MASTER", "pd-worker-0:36543");
    assert_null(env_of(w1, NULL, "POD_IP_DUMMY"));
    json_decref(w0);
    json_decref(w1);
    json_decref(job);

    job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: ps}\n"
        "spec:\n  paddleReplicaSpecs:\n"
        "    Master: {replicas: 1, template: {spec: {containers: [{name: paddle, image: p}]}}}\n"
        "    Worker: {replicas: 1, template: {spec: {containers: [{name: paddle, image: p}]}}}\n");
    json_t *m = pod_of(job, "Master", 0), *w = pod_of(job, "Worker", 0);
    ENV_EQ(m, NULL, "PADDLE_MASTER", "$(POD_IP_DUMMY):36543");
    ENV_EQ(m, NULL, "PADDLE_SERVER_NUM", "1");
    ENV_EQ(w, NULL, "PADDLE_MASTER", "ps-master-0:36543");
    ENV_EQ(w, NULL, "PADDLE_TRAINER_NUM", "1");
    assert_string_equal(lbl(m, "training.kubeflow.org/job-role"), "master");
    json_decref(m);
    json_decref(w);
    json_decref(job);
}

static void test_jax(void **state)
{
    json_t *job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: JAXJob\nmetadata: {name: jx}\n"
        "spec:\n  jaxReplicaSpecs:\n"
        "    Worker: {replicas: 3, template: {spec: {containers: [{name: jax, image: j}]}}}\n");
    json_t *w = pod_of(job, "Worker", 2), *w0 = pod_of(job, "Worker", 0);

    (void)state;
    ENV_EQ(w, NULL, "COORDINATOR_ADDRESS", "jx-worker-0");
    ENV_EQ(w, NULL, "COORDINATOR_PORT", "6666");
    ENV_EQ(w, NULL, "NUM_PROCESSES", "3");
    ENV_EQ(w, NULL, "PROCESS_ID", "2");
    ENV_EQ(w, NULL, "PYTHONUNBUFFERED", "1");
    assert_string_equal(lbl(w0, "training.kubeflow.org/job-role"), "master");
    assert_null(lbl(w, "training.kubeflow.org/job-role"));
    json_decref(w);
    json_decref(w0);
    json_decref(job);
}

static void test_mxnet(void **state)
{
    json_t *job = manifest(
        "apiVersion: kubeflow.org/v1\nkind: MXJob\nmetadata: {name: mx}\n"
        "spec:\n  jobMode: MXTrain\n  mxReplicaSpecs:\n"
        "    Scheduler: {replicas: 1, template: {spec: {containers: [{name: mxnet, image: m}]}}}\n"
        "    Server: {replicas: 1, template: {spec: {containers: [{name: mxnet, image: m}]}}}\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: mxnet, image: m}]}}}\n");
    json_t *w = pod_of(job, "Worker", 1);

    (void)state;
    ENV_EQ(w, NULL, "MX_CONFIG",
           "{\"cluster\":{\"scheduler\":[{\"url\":\"mx-scheduler-0\",\"port\":9091}],"
           "\"server\":[{\"url\":\"mx-server-0\",\"port\":9091}],"
           "\"worker\":[{\"url\":\"mx-worker-0\",\"port\":9091},{\"url\":\"mx-worker-1\","
           "\"port\":9091}]},\"labels\":{\"scheduler\":\"\",\"server\":\"\",\"worker\":\"\"},"
           "\"task\":{\"type\":\"worker\",\"index\":1}}");
    ENV_EQ(w, NULL, "DMLC_PS_ROOT_URI", "mx-scheduler-0");
    ENV_EQ(w, NULL, "DMLC_PS_ROOT_PORT", "9091");
    ENV_EQ(w, NULL, "DMLC_NUM_SERVER", "1");
    ENV_EQ(w, NULL, "DMLC_NUM_WORKER", "2");
    ENV_EQ(w, NULL, "DMLC_ROLE", "worker");
    ENV_EQ(w, NULL, "DMLC_USE_KUBERNETES", "1");
    json_decref(w);
    json_decref(job);
}

static void test_mindspore(void **state)
{
    json_t *job = manifest(
        "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: {name: ms}\n"
        "spec:\n  msReplicaSpecs:\n"
        "    Scheduler: {replicas: 1, template: {spec: {containers: [{name: mindspore, image: m}]}}}\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: mindspore, image: m},\n"
        "      {name: side, image: s}]}}}\n");
    json_t *s = pod_of(job, "Scheduler", 0), *w = pod_of(job, "Worker", 1), *svc;

    (void)state;
    ENV_EQ(s, NULL, "MS_ROLE", "MS_SCHED");
    ENV_EQ(s, NULL, "MS_SCHED_HOST", "<valueFrom>");
    ENV_EQ(w, "mindspore", "MS_ROLE", "MS_WORKER");
    ENV_EQ(w, "mindspore", "MS_SCHED_HOST", "ms-scheduler-0");
    ENV_EQ(w, "mindspore", "MS_SCHED_PORT", "2222");
    ENV_EQ(w, "mindspore", "MS_NODE_ID", "ms-worker-1");
    ENV_EQ(w, "mindspore", "MS_WORKER_NUM", "2");
    ENV_EQ(w, "mindspore", "MS_SERVER_NUM", "0");
    assert_null(env_of(w, "side", "MS_ROLE"));
    assert_string_equal(lbl(w, "training.kubeflow.org/operator-name"), "msjob-controller");
    svc = svc_of(job, "Scheduler", 0);
    assert_non_null(svc);
    assert_null(json_object_get(json_object_get(svc, "spec"), "clusterIP"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(svc, "spec"), "type")),
                        "ClusterIP");
    assert_null(svc_of(job, "Worker", 0));
    json_decref(svc);
    json_decref(s);
    json_decref(w);
    json_decref(job);
}

/* The env goes to the target containers: shared with the caller's array
 * (made for this pod) when one container takes it, copied into each when
 * several do, so that no two containers hold one entry (defaulting changes
 * entries in place). */
static void test_pod_env_targets(void **state)
{
    json_t *owner = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "kubeflow.org/v1",
                              "kind", "PyTorchJob", "metadata", "name", "j", "namespace", "ns",
                              "uid", "u1");
    json_t *tmpl = json_pack("{s:{s:[{s:s, s:s, s:[{s:s, s:s}]}, {s:s, s:s}]}}", "spec",
                             "containers", "name", "main", "image", "x", "env", "name", "OWN",
                             "value", "1", "name", "side", "image", "y");
    json_t *env = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "RANK", "value", "0", "name",
                            "WORLD_SIZE", "value", "2");
    json_t *labels = json_object();
    jobs_pod_params p = {.owner = owner, .name = "j-worker-0", .template = tmpl,
                         .restart_policy = "Never", .labels = labels, .env = env,
                         .env_container = "main"};
    json_t *pod = jobs_pod_new(&p), *a, *b;
    (void)state;

    /* one taker: the template's own entry first, then the pod's, shared */
    a = json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"),
                                                       "containers"), 0), "env");
    assert_int_equal(json_array_size(a), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "name")), "OWN");
    assert_ptr_equal(json_array_get(a, 1), json_array_get(env, 0));
    assert_ptr_equal(json_array_get(a, 2), json_array_get(env, 1));
    assert_null(json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"),
                                                               "containers"), 1), "env"));
    /* the template is untouched */
    assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(
                         json_object_get(tmpl, "spec"), "containers"), 0), "env")), 1);
    json_decref(pod);

    /* every container: equal entries, none shared */
    p.env_container = NULL;
    pod = jobs_pod_new(&p);
    a = json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"),
                                                       "containers"), 0), "env");
    b = json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"),
                                                       "containers"), 1), "env");
    assert_int_equal(json_array_size(a), 3);
    assert_int_equal(json_array_size(b), 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(json_equal(json_array_get(a, i + 1), json_array_get(env, i)));
        assert_true(json_equal(json_array_get(b, i), json_array_get(env, i)));
        assert_ptr_not_equal(json_array_get(a, i + 1), json_array_get(b, i));
        assert_ptr_not_equal(json_array_get(b, i), json_array_get(env, i));
    }
    json_decref(pod);
    json_decref(env);
    json_decref(labels);
    json_decref(tmpl);
    json_decref(owner);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pytorch_master), cmocka_unit_test(test_pytorch_worker),
        cmocka_unit_test(test_pytorch_elastic), cmocka_unit_test(test_tf_config),
        cmocka_unit_test(test_tf_single_and_dynamic), cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_mpi_first_container),
        cmocka_unit_test(test_xgboost), cmocka_unit_test(test_paddle),
        cmocka_unit_test(test_jax), cmocka_unit_test(test_mxnet),
        cmocka_unit_test(test_mindspore),
        cmocka_unit_test(test_pod_env_targets),
    };

    /* forced: sanitizer builds check the scopes too (treearena.h) */
    if (!ty_tree_arena_init(true))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
