/* pods.c - one pod of a TrainJob's plan (tj_int.h), as JobSet's Indexed
 * Jobs would make it: named and reachable as
 * `<job>-<rjob>-<jobIndex>-<podIndex>.<subdomain>`, with JobSet's and the
 * Job's labels (what the Python SDK and Kueue select by), the gang's group,
 * the framework's env and, for MPI, the hostfile, rsh agent and ssh keys.
 * Pure. */
#include <stdio.h>
#include <string.h>

#include "api/mpi_agent.h"
#include "controller/kit.h"
#include "controller/trainer/tj_int.h"
#include "controller/trainer_progress.h"

/* MPI nodes need no sshd here: mpirun reaches them through the runtime's
 * rsh agent. A node whose command is sshd idles instead until the set is
 * done (TERM ends it with status 0), as the MPIJob controller's workers. */
static const char idle_script[] = "trap 'exit 0' TERM; while :; do sleep 3600 & wait; done";

/* The progress endpoint (KUBEFLOW_TRAINER_SERVER_URL, _CA_CERT, _TOKEN):
 * its env and the token's volume on every trainer pod, when the server
 * serves it (controller/trainer_progress.h; the Secret is made before the
 * pods, reconcile.c's ensure_progress). */
void tj_progress_hook(const json_t *trainjob, json_t *pod_spec)
{
    trainer_progress_cfg cfg;
    json_t *tpl;

    if (trainer_progress_current(&cfg) != 1)
        return;
    if ((tpl = json_pack("{s:O}", "spec", pod_spec))) {
        trainer_progress_inject(&cfg, trainjob, tpl);
        json_decref(tpl);
    }
    trainer_progress_cfg_clear(&cfg);
}

static void set_str(json_t *o, const char *k, const char *v)
{
    json_object_set_new(o, k, json_string(v));
}

static json_t *own(json_t *parent, const char *key, bool array)
{
    json_t *o = json_object_get(parent, key);

    if (array ? !json_is_array(o) : !json_is_object(o)) {
        o = array ? json_array() : json_object();
        json_object_set_new(parent, key, o);
    }
    return o;
}

static bool runs_sshd(const json_t *c)
{
    const char *cmd = json_string_value(json_array_get(json_object_get(c, "command"), 0));
    size_t n = cmd ? strlen(cmd) : 0;

    return n >= 4 && !strcmp(cmd + n - 4, "sshd");
}

static void mpi_decorate(const json_t *plan, const char *job, const json_t *rjob, json_t *pod)
{
    const char *rname = json_string_value(json_object_get(rjob, "name"));
    const char *ssh = json_string_value(
        json_object_get(json_object_get(plan, "mpi"), "sshAuthMountPath"));
    json_t *spec = json_object_get(pod, "spec"), *vols = own(spec, "volumes", true), *c;
    char cm[300], secret[300];
    bool launcher = !strcmp(rname, "launcher");
    size_t i;

    snprintf(cm, sizeof(cm), "%s-mpi-hostfile", job);
    snprintf(secret, sizeof(secret), "%s-mpi-ssh-auth", job);
    json_array_append_new(vols, json_pack("{s:s, s:{s:s, s:i}}", "name", "mpi-ssh-auth",
                                          "secret", "secretName", secret, "defaultMode", 0600));
    if (launcher)
        json_array_append_new(vols, json_pack(
            "{s:s, s:{s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}]}}", "name", "mpi-hostfile",
            "configMap", "name", cm, "items", "key", "hostfile", "path", "hostfile", "mode",
            0444, "key", MPI_AGENT_FILE, "path", MPI_AGENT_FILE, "mode", 0555));
    json_array_foreach(json_object_get(spec, "containers"), i, c) {
        json_t *mounts = own(c, "volumeMounts", true);
        json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", "mpi-ssh-auth",
                                                "mountPath", ssh ? ssh : "/root/.ssh"));
        if (launcher)
            json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", "mpi-hostfile",
                                                    "mountPath", TJ_MPI_DIR));
        if (!launcher && runs_sshd(c)) {
            json_object_set_new(c, "command", json_pack("[s, s, s]", "/bin/sh", "-c",
                                                        idle_script));
            json_object_del(c, "args");
            json_object_del(c, "readinessProbe");
        }
    }
}

/* torch, JAX and XGBoost: the trainer container exposes the port its
 * peers meet on, as upstream's plugins add it. */
static void trainer_port(const json_t *plan, json_t *c)
{
    const char *policy = json_string_value(json_object_get(plan, "policy"));
    json_t *ports, *pt;
    size_t i;

    if (strcmp(policy, "torch") && strcmp(policy, "jax") && strcmp(policy, "xgboost"))
        return;
    ports = own(c, "ports", true);
    json_array_foreach(ports, i, pt)
        if (json_integer_value(json_object_get(pt, "containerPort")) == TJ_TRAINER_PORT)
            return;
    json_array_append_new(ports, json_pack("{s:i, s:s}", "containerPort", TJ_TRAINER_PORT,
                                           "protocol", "TCP"));
}

json_t *tj_build_pod(const json_t *plan, const json_t *trainjob, const json_t *rjob,
                     long long job_index, long long pod_index)
{
    const json_t *meta = json_object_get(trainjob, "metadata");
    const char *job = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *rname = json_string_value(json_object_get(rjob, "name"));
    const json_t *tmpl = json_object_get(rjob, "template");
    const char *rp = json_string_value(
        json_object_get(json_object_get(tmpl, "spec"), "restartPolicy"));
    json_t *labels, *ann, *pod, *spec, *c;
    char name[300], jname[300], ji[24], pi[24], reps[24];
    bool coscheduling = json_is_object(
        json_object_get(json_object_get(plan, "podGroupPolicy"), "coscheduling"));
    size_t i;

    tj_pod_name(job, rname, job_index, pod_index, name, sizeof(name));
    snprintf(jname, sizeof(jname), "%s-%s-%lld", job, rname, job_index);
    snprintf(ji, sizeof(ji), "%lld", job_index);
    snprintf(pi, sizeof(pi), "%lld", pod_index);
    snprintf(reps, sizeof(reps), "%lld",
             (long long)json_integer_value(json_object_get(rjob, "replicas")));
    labels = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", TJ_LABEL_JOBSET, job,
                       TJ_LABEL_RJOB, rname, TJ_LABEL_RJOB_REPLICAS, reps, TJ_LABEL_JOB_INDEX,
                       ji, TJ_LABEL_COMPLETION, pi, TJ_LABEL_JOB_NAME, jname, "job-name", jname,
                       TJ_LABEL_TRAINJOB, job);
    if (coscheduling)
        set_str(labels, TJ_LABEL_POD_GROUP, job);
    /* JobSet's count of whole-set restarts, which made this pod */
    set_str(labels, TJ_LABEL_RESTART_ATTEMPT,
            json_string_value(json_object_get(json_object_get(meta, "annotations"),
                                              TJ_ANN_RESTARTS)) ?: "0");
    /* Job pods restart under their Job (OnFailure) or not at all (Never):
     * Never unless the template says OnFailure; whole-set restarts are the
     * failure policy's. */
    pod = kit_pod_new(&(kit_pod_params){.owner = trainjob, .name = name, .template = tmpl,
                                          .restart_policy = rp && !strcmp(rp, "OnFailure")
                                                                ? "OnFailure" : "Never",
                                          .labels = labels});
    json_decref(labels);
    ann = own(json_object_get(pod, "metadata"), "annotations", false);
    set_str(ann, TJ_LABEL_JOBSET, job);
    set_str(ann, TJ_LABEL_RJOB, rname);
    set_str(ann, TJ_LABEL_JOB_INDEX, ji);
    set_str(ann, TJ_LABEL_COMPLETION, pi);
    set_str(ann, TJ_ANN_GROUP, job);
    set_str(ann, "volcano.sh/task-spec", rname);
    spec = json_object_get(pod, "spec");
    set_str(spec, "hostname", name);
    set_str(spec, "subdomain", json_string_value(json_object_get(plan, "subdomain")));
    json_array_foreach(json_object_get(spec, "containers"), i, c) {
        json_t *env = json_array();
        tj_env(plan, job, ns, rjob, c, job_index, pod_index, env);
        if (json_array_size(env)) {
            json_array_extend(own(c, "env", true), env);
            trainer_port(plan, c);
        }
        json_decref(env);
    }
    if (!strcmp(json_string_value(json_object_get(plan, "policy")), "mpi"))
        mpi_decorate(plan, job, rjob, pod);
    if (!strcmp(json_string_value(json_object_get(rjob, "ancestor")), "trainer"))
        tj_progress_hook(trainjob, spec);
    return pod;
}
