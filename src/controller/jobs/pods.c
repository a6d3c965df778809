/* pods.c - the Kubeflow replicas' pods and Services: how a replica (type,
 * index) is named, labelled and built through the framework plugin, and
 * what a job controls as upstream selects it (the job-name label). The
 * generic machinery underneath (ownerReferences, create/delete with Events,
 * the owner index, the view) is the controller kit's (controller/kit.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "controller/jobs/jobs_int.h"

/* ---- what a job controls ---- */

json_t *jobs_owned_view(const ty_obj *o, const char *job_name)
{
    return kit_owned_view(o, JOBS_LABEL_JOB_NAME, job_name);
}

/* What the job controls, as upstream selects it: the objects it controls
 * that carry its job-name label, each as its view. */
json_t *jobs_list_owned(ty_kc *s, const char *resource, const char *ns,
                        const char *job_name, const char *owner_uid)
{
    json_t *out;

    kit_list_owned_views(s, resource, ns, owner_uid, JOBS_LABEL_JOB_NAME, job_name, &out);
    return out;
}

/* ---- Kubeflow replicas ---- */

void jobs_pod_name(const jobs_framework *fw, const job_ctx *c, const char *rtype, int index,
                   char *buf, size_t len)
{
    if (fw->pod_name)
        fw->pod_name(c, rtype, index, buf, len);
    else
        jf_host(c, rtype, index, buf, len);
}

/* The labels every object of a replica carries (upstream's GenLabels plus
 * type and index); the selector of its Service. */
static json_t *replica_selector(const job_ctx *c, const char *rtype, int index)
{
    char lower[32], idx[16];

    jf_lower(rtype, lower, sizeof(lower));
    snprintf(idx, sizeof(idx), "%d", index);
    return json_pack("{s:s, s:s, s:s, s:s}", JOBS_LABEL_OPERATOR, c->kind->operator_name,
                     JOBS_LABEL_JOB_NAME, c->name, JOBS_LABEL_TYPE, lower, JOBS_LABEL_INDEX, idx);
}

json_t *jobs_pod_labels(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                        int index)
{
    json_t *labels = replica_selector(c, rtype, index);

    if (fw->is_master && fw->is_master(c, rtype, index))
        json_object_set_new(labels, JOBS_LABEL_ROLE, json_string("master"));
    return labels;
}

static bool gang_mode(const json_t *job)
{
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(job, "metadata"), "annotations"), JOBS_ANN_RESTART_POLICY));
    return v && strcmp(v, "gang") == 0;
}

json_t *jobs_build_pod(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                       int index, bool gang)
{
    const json_t *replica = kf_replica_spec(c->kind, c->job, rtype);
    const char *rp = json_string_value(json_object_get(replica, "restartPolicy"));
    char name[300];
    json_t *labels, *env, *pod;

    if (!rp || !*rp)
        rp = c->kind->default_restart_policy;
    /* ExitCode is the engine's policy, not the node agent's: the pod stops
     * and the engine decides from its exit code. Gang mode likewise. */
    if (strcmp(rp, "ExitCode") == 0 || gang || gang_mode(c->job))
        rp = "Never";
    jobs_pod_name(fw, c, rtype, index, name, sizeof(name));
    labels = jobs_pod_labels(fw, c, rtype, index);
    env = json_array();
    if (fw->env)
        fw->env(c, rtype, index, env);
    jobs_pod_params p = {
        .owner = c->job, .name = name, .template = json_object_get(replica, "template"),
        .restart_policy = rp, .labels = labels, .env = env,
        .env_container = fw->env_all_containers ? NULL : c->kind->default_container,
    };
    pod = jobs_pod_new(&p);
    json_decref(labels);
    json_decref(env);
    if (fw->decorate)
        fw->decorate(c, rtype, index, pod);
    return pod;
}

static const json_t *replica_default_container(const job_ctx *c, const char *rtype)
{
    const json_t *spec = kf_replica_spec(c->kind, c->job, rtype);
    const json_t *list = json_object_get(
        json_object_get(json_object_get(spec, "template"), "spec"), "containers");
    size_t i;
    json_t *ct;

    json_array_foreach(list, i, ct) {
        const char *n = json_string_value(json_object_get(ct, "name"));
        if (n && strcmp(n, c->kind->default_container) == 0)
            return ct;
    }
    return json_array_get(list, 0);
}

json_t *jobs_build_service(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                           int index)
{
    jf_service_mode mode = fw->service ? fw->service(c, rtype) : JF_SVC_HEADLESS;
    char name[300];
    json_t *sel, *svc;

    if (mode == JF_SVC_NONE)
        return NULL;
    jobs_pod_name(fw, c, rtype, index, name, sizeof(name));
    sel = replica_selector(c, rtype, index);
    svc = jobs_service_new(c->job, name, sel, sel, replica_default_container(c, rtype),
                           mode == JF_SVC_HEADLESS);
    json_decref(sel);
    return svc;
}
