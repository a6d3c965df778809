/* env.c - the environment each framework's trainer containers get
 * (tj_int.h), with the names upstream's Trainer injects (torch, jax,
 * xgboost, mpi) and, for the runtimes Trainer v2 dropped, the names the
 * Kubeflow v1 controllers inject (TF_CONFIG, PADDLE_*, MS_*: the plugins in
 * api/frameworks/ name hosts `<job>-<type>-<i>`, a TrainJob's are
 * `<job>-node-0-<i>.<job>`, so the values are made here with the same
 * helpers, api/framework.h's jf_env). Pure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/framework.h"
#include "api/mpi_agent.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "controller/trainer/tj_int.h"

static const char *pstr(const json_t *plan, const char *key)
{
    return json_string_value(json_object_get(plan, key)) ?: "";
}

/* "<job>-node-0-<i>.<subdomain>": node i's name as its peers resolve it. */
static void node_host(const json_t *plan, const char *job, long long i, char *buf, size_t len)
{
    char pod[300];

    tj_pod_name(job, "node", 0, i, pod, sizeof(pod));
    snprintf(buf, len, "%s.%s", pod, pstr(plan, "subdomain"));
}

bool tj_is_trainer_container(const json_t *plan, const json_t *rjob, const char *container)
{
    const char *ancestor = json_string_value(json_object_get(rjob, "ancestor")) ?: "";
    const char *rname = json_string_value(json_object_get(rjob, "name")) ?: "";
    json_t *t, *cn;
    size_t i, k;

    /* torch's envInjection (v2.3) names more containers to get PET_* */
    json_array_foreach(json_object_get(json_object_get(json_object_get(plan, "torch"),
                                                       "envInjection"), "targets"), i, t) {
        if (strcmp(json_string_value(json_object_get(t, "jobName")) ?: "", rname))
            continue;
        json_array_foreach(json_object_get(t, "containerNames"), k, cn)
            if (!strcmp(json_string_value(cn) ?: "", container))
                return true;
    }
    if (strcmp(ancestor, "trainer"))
        return false;
    if (!strcmp(pstr(plan, "policy"), "mpi"))
        return !strcmp(container, "launcher");
    return !strcmp(container, "node");
}

void tj_torch_procs(const char *procs, const json_t *container, char *buf, size_t len)
{
    const json_t *res = json_object_get(container, "resources");
    const char *which[] = {"limits", "requests"};
    double cpus = 0;

    if (strcmp(procs, "auto") != 0) {
        snprintf(buf, len, "%s", procs);
        return;
    }
    for (size_t k = 0; k < 2; k++) {
        const json_t *list = json_object_get(res, which[k]);
        const char *q = json_string_value(json_object_get(list, "cpu"));
        if (json_object_get(list, "nvidia.com/gpu")) {
            snprintf(buf, len, "auto"); /* torchrun counts the GPUs */
            return;
        }
        if (json_is_integer(json_object_get(list, "cpu")))
            q = NULL, cpus = (double)json_integer_value(json_object_get(list, "cpu"));
        if (q && *q) {
            size_t n = strlen(q);
            cpus = q[n - 1] == 'm' ? atof(q) / 1000.0 : atof(q);
        }
        if (cpus > 0)
            break;
    }
    snprintf(buf, len, "%lld", cpus >= 1 ? (long long)floor(cpus) : 1LL);
}

/* TF_CONFIG as the TFJob controller writes it, the nodes as workers. */
static void tf_config(const json_t *plan, const char *job, long long rank, json_t *env)
{
    long long n = json_integer_value(json_object_get(plan, "numNodes"));
    json_t *workers = json_array(), *config;
    ty_buf text = {0};
    char host[400];

    if (n <= 1) { /* one process is not a cluster: TF must not see one */
        json_decref(workers);
        return;
    }
    for (long long i = 0; i < n; i++) {
        node_host(plan, job, i, host, sizeof(host));
        json_array_append_new(workers, json_sprintf("%s:%d", host, TJ_TF_PORT));
    }
    config = json_pack("{s:{s:o}, s:{s:s, s:I}, s:s}", "cluster", "worker", workers, "task",
                       "type", "worker", "index", (json_int_t)rank, "environment", "cloud");
    if (ty_json_append(&text, config) == 0)
        jf_env(env, "TF_CONFIG", text.data);
    ty_buf_free(&text);
    json_decref(config);
}

static void mpi_env(const json_t *plan, json_t *env)
{
    const json_t *mpi = json_object_get(plan, "mpi");

    jf_env(env, "OMPI_MCA_orte_default_hostfile", TJ_MPI_DIR "/hostfile");
    jf_env(env, "OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10");
    jf_env(env, "OMPI_MCA_orte_keep_fqdn_hostnames", "true");
    jf_envf(env, "OMPI_MCA_orte_set_default_slots", "%lld",
            (long long)json_integer_value(json_object_get(mpi, "numProcPerNode")));
    /* Trainyard's: mpirun reaches the nodes through the runtime's rsh agent
     * (api/mpi_agent.h), as the MPIJob controller's launchers do. */
    jf_env(env, "OMPI_MCA_plm_rsh_agent", MPI_AGENT_PATH);
    jf_env(env, "I_MPI_HYDRA_BOOTSTRAP", "rsh");
    jf_env(env, "I_MPI_HYDRA_BOOTSTRAP_EXEC", MPI_AGENT_PATH);
}

/* PET_RDZV_CONF: the container's own (torchrun's rendezvous options, as
 * last_call_timeout) and is_host, which says who serves the c10d store:
 * torchrun guesses it by matching the endpoint to its host name, which
 * `<pod>.<subdomain>` never matches (nor a Kubernetes pod's FQDN). */
static void rdzv_conf(const json_t *container, bool host, json_t *env)
{
    const char *have = NULL;
    json_t *e;
    size_t i;

    json_array_foreach(json_object_get(container, "env"), i, e)
        if (!strcmp(json_string_value(json_object_get(e, "name")) ?: "", "PET_RDZV_CONF"))
            have = json_string_value(json_object_get(e, "value"));
    jf_envf(env, "PET_RDZV_CONF", "%s%sis_host=%d", have && *have ? have : "",
            have && *have ? "," : "", host ? 1 : 0);
}

void tj_env(const json_t *plan, const char *job, const char *ns, const json_t *rjob,
            const json_t *container, long long job_index, long long pod_index, json_t *env)
{
    const char *fw = pstr(plan, "framework"), *policy = pstr(plan, "policy");
    const char *cname = json_string_value(json_object_get(container, "name")) ?: "";
    const json_t *elastic = json_object_get(plan, "elastic");
    long long n = json_integer_value(json_object_get(plan, "numNodes"));
    long long rank = job_index * json_integer_value(json_object_get(rjob, "pods")) + pod_index;
    char host0[400], self[400], procs[32];

    (void)ns;
    if (!tj_is_trainer_container(plan, rjob, cname))
        return;
    node_host(plan, job, 0, host0, sizeof(host0));
    node_host(plan, job, rank, self, sizeof(self));
    if (!strcmp(policy, "torch") && elastic) {
        /* torchrun's dynamic rendezvous: the nodes, however many of
         * MIN..MAX run, agree through the c10d store node 0's agent serves,
         * and ranks come from the rendezvous (PET_NODE_RANK is the
         * completion index, for the script's own use) */
        tj_torch_procs(pstr(plan, "procs"), container, procs, sizeof(procs));
        jf_envf(env, "PET_NNODES", "%lld:%lld",
                (long long)json_integer_value(json_object_get(elastic, "minNodes")),
                (long long)json_integer_value(json_object_get(elastic, "maxNodes")));
        jf_env(env, "PET_NPROC_PER_NODE", procs);
        jf_envf(env, "PET_NODE_RANK", "%lld", rank);
        jf_env(env, "PET_RDZV_BACKEND", "c10d");
        jf_envf(env, "PET_RDZV_ENDPOINT", "%s:%d", host0, TJ_RDZV_PORT);
        jf_env(env, "PET_RDZV_ID", job);
        rdzv_conf(container, rank == 0, env);
        jf_envf(env, "PET_MAX_RESTARTS", "%lld",
                (long long)json_integer_value(json_object_get(elastic, "maxRestarts")));
    } else if (!strcmp(policy, "torch")) {
        tj_torch_procs(pstr(plan, "procs"), container, procs, sizeof(procs));
        jf_envf(env, "PET_NNODES", "%lld", n);
        jf_env(env, "PET_NPROC_PER_NODE", procs);
        jf_envf(env, "PET_NODE_RANK", "%lld", rank);
        jf_env(env, "PET_MASTER_ADDR", host0);
        jf_envf(env, "PET_MASTER_PORT", "%d", TJ_TRAINER_PORT);
    } else if (!strcmp(policy, "jax")) {
        jf_envf(env, "JAX_NUM_PROCESSES", "%lld", n);
        jf_envf(env, "JAX_PROCESS_ID", "%lld", rank);
        jf_envf(env, "JAX_COORDINATOR_ADDRESS", "%s:%d", host0, TJ_TRAINER_PORT);
    } else if (!strcmp(policy, "xgboost")) {
        jf_env(env, "DMLC_TRACKER_URI", host0);
        jf_envf(env, "DMLC_TRACKER_PORT", "%d", TJ_TRAINER_PORT);
        jf_envf(env, "DMLC_TASK_ID", "%lld", rank);
        jf_envf(env, "DMLC_NUM_WORKER", "%lld", n);
    } else if (!strcmp(policy, "mpi")) {
        mpi_env(plan, env);
    } else if (!strcmp(fw, "tensorflow")) {
        tf_config(plan, job, rank, env);
    } else if (!strcmp(fw, "paddle")) {
        jf_env(env, "PYTHONUNBUFFERED", "1");
        jf_env(env, "PADDLE_JOB_ID", job);
        jf_envf(env, "PADDLE_NNODES", "%lld", n);
        jf_envf(env, "PADDLE_MASTER", "%s:%d", host0, TJ_PADDLE_PORT);
    } else if (!strcmp(fw, "mindspore")) {
        /* the runtime has no scheduler replicated job: node 0 hosts it */
        jf_env(env, "MS_SCHED_HOST", host0);
        jf_envf(env, "MS_SCHED_PORT", "%d", TJ_MS_PORT);
        jf_env(env, "MS_ROLE", "MS_WORKER");
        jf_env(env, "MS_NODE_ID", self);
        jf_envf(env, "MS_WORKER_NUM", "%lld", n);
        jf_env(env, "MS_SERVER_NUM", "0");
    }
}

char *tj_mpi_hostfile(const json_t *plan, const char *job)
{
    const json_t *mpi = json_object_get(plan, "mpi");
    const json_t *node = tj_plan_rjob(plan, "node");
    long long slots = json_integer_value(json_object_get(mpi, "numProcPerNode"));
    long long pods = json_integer_value(json_object_get(node, "pods"));
    ty_buf b = {0};
    char host[400];

    if (json_is_true(json_object_get(mpi, "runLauncherAsNode"))) {
        char pod[300];
        tj_pod_name(job, "launcher", 0, 0, pod, sizeof(pod));
        ty_buf_printf(&b, "%s.%s slots=%lld\n", pod, pstr(plan, "subdomain"), slots);
    }
    for (long long i = 0; i < pods; i++) {
        node_host(plan, job, i, host, sizeof(host));
        ty_buf_printf(&b, "%s slots=%lld\n", host, slots);
    }
    return ty_buf_steal(&b, NULL);
}
