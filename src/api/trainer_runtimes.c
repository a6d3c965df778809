/* trainer_runtimes.c - the ClusterTrainingRuntimes a fresh server has
 * (trainer.h; docs/trainer.md lists them).
 *
 * Upstream's five (torch, deepspeed, mlx, jax, xgboost) with upstream's
 * shape: a replicated job `node` whose container `node` the TrainJob's
 * trainer overrides (labelled trainjob-ancestor-step: trainer), and for the
 * MPI ones a `launcher` that waits for the nodes' sshd to be Ready and whose
 * completion is the job's success. Trainyard adds runtimes for the
 * frameworks Trainer v2 dropped (TensorFlow, Paddle, MindSpore) and plain
 * MPI; their framework label says which environment the pods get, as their
 * ML policy has no source of that name upstream. */
#include <stdarg.h>

#include "api/trainer.h"

#define RUNTIME_API_VERSION TRAINER_GROUP "/v1alpha1"

/* {name, image[, command][, args]} of a container; NULL-terminated argv
 * lists, either may be NULL. */
static json_t *container(const char *name, const char *image, const char *const *command,
                         const char *const *args)
{
    json_t *c = json_pack("{s:s, s:s}", "name", name, "image", image), *list;

    if (command) {
        list = json_array();
        for (size_t i = 0; command[i]; i++)
            json_array_append_new(list, json_string(command[i]));
        json_object_set_new(c, "command", list);
    }
    if (args) {
        list = json_array();
        for (size_t i = 0; args[i]; i++)
            json_array_append_new(list, json_string(args[i]));
        json_object_set_new(c, "args", list);
    }
    return c;
}

/* A replicated job running one container (stolen); trainer: labelled as
 * the one the TrainJob's trainer overrides. */
static json_t *replicated_job(const char *name, json_t *c, bool trainer)
{
    json_t *tmpl = json_pack("{s:{s:{s:{s:[o]}}}}", "spec", "template", "spec", "containers", c);

    if (trainer)
        json_object_set_new(tmpl, "metadata",
                            json_pack("{s:{s:s}}", "labels", TRAINER_ANCESTOR_LABEL, "trainer"));
    return json_pack("{s:s, s:o}", "name", name, "template", tmpl);
}

/* A ClusterTrainingRuntime; ml_policy and jobset_spec are stolen. */
static json_t *runtime(const char *name, const char *framework, json_t *ml_policy,
                       json_t *jobset_spec)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:o, s:{s:o}}}", "apiVersion",
                     RUNTIME_API_VERSION, "kind", "ClusterTrainingRuntime", "metadata", "name",
                     name, "labels", TRAINER_FRAMEWORK_LABEL, framework, "spec", "mlPolicy",
                     ml_policy, "template", "spec", jobset_spec);
}

/* One replicated job `node`, container `node`. */
static json_t *single_node_runtime(const char *name, const char *framework, json_t *ml_policy,
                                   const char *image)
{
    json_t *job = replicated_job("node", container("node", image, NULL, NULL), true);
    return runtime(name, framework, ml_policy, json_pack("{s:[o]}", "replicatedJobs", job));
}

/* An MPI runtime: `node` runs sshd (port 2222, Ready once it listens),
 * `launcher` starts when every node is Ready and the set succeeds when it
 * completes. uid < 0: the image's user. */
static json_t *mpi_runtime(const char *name, const char *framework, const char *image,
                           const char *ssh_path, bool launcher_as_node,
                           const char *const *sshd, json_int_t uid)
{
    json_t *node_c = container("node", image, sshd, NULL);
    json_t *launcher_c = container("launcher", image, NULL, NULL);
    json_t *node, *launcher, *ml;

    json_object_set_new(node_c, "readinessProbe",
                        json_pack("{s:{s:i}, s:i}", "tcpSocket", "port", 2222,
                                  "initialDelaySeconds", 5));
    if (uid >= 0) {
        json_object_set_new(node_c, "securityContext", json_pack("{s:I}", "runAsUser", uid));
        json_object_set_new(launcher_c, "securityContext",
                            json_pack("{s:I}", "runAsUser", uid));
    }
    node = replicated_job("node", node_c, true);
    launcher = replicated_job("launcher", launcher_c, true);
    json_object_set_new(launcher, "dependsOn",
                        json_pack("[{s:s, s:s}]", "name", "node", "status", "Ready"));
    ml = json_pack("{s:i, s:{s:i, s:s, s:s, s:b}}", "numNodes", 1, "mpi", "numProcPerNode", 1,
                   "mpiImplementation", "OpenMPI", "sshAuthMountPath", ssh_path,
                   "runLauncherAsNode", launcher_as_node);
    return runtime(name, framework, ml,
                   json_pack("{s:{s:b}, s:{s:s, s:[s]}, s:[o, o]}", "network",
                             "publishNotReadyAddresses", 1, "successPolicy", "operator", "All",
                             "targetReplicatedJobs", "launcher", "replicatedJobs", node,
                             launcher));
}

json_t *trainer_builtin_runtimes(void)
{
    static const char *const user_sshd[] = {"/usr/sbin/sshd", "-De", "-f",
                                            "/home/mpiuser/.sshd_config", NULL};
    static const char *const root_sshd[] = {"/usr/sbin/sshd", "-De", NULL};
    json_t *all = json_array();

    /* upstream's */
    json_array_append_new(all, single_node_runtime(
        "torch-distributed", "torch", json_pack("{s:i, s:{}}", "numNodes", 1, "torch"),
        "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"));
    json_array_append_new(all, mpi_runtime("deepspeed-distributed", "deepspeed",
                                           "ghcr.io/kubeflow/trainer/deepspeed-runtime",
                                           "/home/mpiuser/.ssh", true, user_sshd, 1000));
    json_array_append_new(all, mpi_runtime("mlx-distributed", "mlx",
                                           "ghcr.io/kubeflow/trainer/mlx-runtime",
                                           "/home/mpiuser/.ssh", true, user_sshd, 1000));
    json_array_append_new(all, single_node_runtime(
        "jax-distributed", "jax", json_pack("{s:i, s:{}}", "numNodes", 1, "jax"),
        "nvcr.io/nvidia/jax:25.04-py3"));
    json_array_append_new(all, single_node_runtime(
        "xgboost-distributed", "xgboost", json_pack("{s:i, s:{}}", "numNodes", 1, "xgboost"),
        "ghcr.io/kubeflow/trainer/xgboost-runtime"));
    /* Trainyard's */
    json_array_append_new(all, single_node_runtime(
        "tensorflow-distributed", "tensorflow", json_pack("{s:i}", "numNodes", 1),
        "tensorflow/tensorflow:2.15.0"));
    json_array_append_new(all, single_node_runtime(
        "paddle-distributed", "paddle", json_pack("{s:i}", "numNodes", 1),
        "paddlepaddle/paddle:2.6.1"));
    json_array_append_new(all, single_node_runtime(
        "mindspore-distributed", "mindspore", json_pack("{s:i}", "numNodes", 1),
        "mindspore/mindspore:2.2.0"));
    json_array_append_new(all, mpi_runtime("mpi-distributed", "mpi",
                                           "mpioperator/mpi-pi:openmpi", "/root/.ssh", false,
                                           root_sshd, -1));
    return all;
}
