/* failures.c - what a TrainJob's pass does with failed pods and jobs
 * (tpass.h): an elastic job's nodes replaced, a Job template's
 * backoffLimit retries, and the JobSet failurePolicy (a whole-set restart
 * or the end). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "controller/kit.h"
#include "controller/trainer/tj_int.h"
#include "controller/trainer/tpass.h"

/* Whether rj is an elastic job's trainer nodes (tj_plan's "elastic"). */
bool tp_elastic_rjob(const tpass *p, const json_t *rj)
{
    return json_object_get(p->plan, "elastic") &&
           !strcmp(json_string_value(json_object_get(rj, "name")) ?: "", "node") &&
           !strcmp(json_string_value(json_object_get(rj, "ancestor")) ?: "", "trainer");
}

/* Whether a node pod of the job has succeeded (torchrun ended them all). */
bool tp_elastic_node_succeeded(const tpass *p)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod)
        if (!strcmp(tp_str_at(json_object_get(pod, "metadata"), "labels", TJ_LABEL_RJOB) ?: "",
                    "node") && !strcmp(kit_pod_phase(pod), "Succeeded"))
            return true;
    return false;
}

long long tp_elastic_min(const tpass *p)
{
    return json_integer_value(json_object_get(json_object_get(p->plan, "elastic"), "minNodes"));
}

/* Pod k of an elastic job's nodes may be made now: the first MIN (the
 * gang, node 0 among them: its agent serves the rendezvous) at once, the
 * rest once node 0 runs, to join as room comes; none once a node has
 * succeeded. */
bool tp_elastic_may_make(const tpass *p, long long k)
{
    const json_t *node0;
    char name[300];

    if (tp_elastic_node_succeeded(p)) /* the training is over: nothing joins */
        return false;
    if (k < tp_elastic_min(p))
        return true;
    tj_pod_name(p->name, "node", 0, 0, name, sizeof(name));
    node0 = tp_pod_named(p, name);
    return node0 && !kit_is_terminating(node0) && !strcmp(kit_pod_phase(node0), "Running");
}

/* Elastic, once a node has succeeded: the training is over, and a node
 * still waiting for room would find the rendezvous closed; it goes. */
static void elastic_drop_waiting(tpass *p)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod)
        if (!strcmp(tp_str_at(json_object_get(pod, "metadata"), "labels", TJ_LABEL_RJOB) ?: "",
                    "node") && !strcmp(kit_pod_phase(pod), "Pending") &&
            !kit_is_terminating(pod) &&
            kit_delete(p->s, api_store_key(&api_pod), pod, p->job, TJ_COMPONENT) < 0)
            p->rc = -1;
}

/* Elastic: a failed node pod other than node 0 (whose agent serves the
 * rendezvous: its loss ends every node, and the failurePolicy decides) is
 * deleted, to be made again by the next pass and join the survivors, whose
 * torchrun restarts their workers with the nodes left; at most maxRestarts
 * replacements over the job's life, none once a node has succeeded. */
void tp_elastic_replace(tpass *p)
{
    const json_t *node = tj_plan_rjob(p->plan, "node");
    long long max = json_integer_value(json_object_get(json_object_get(p->plan, "elastic"),
                                                       "maxRestarts"));
    json_t *pod;
    char node0[300];
    size_t i;

    if (!node || !tp_elastic_rjob(p, node))
        return;
    tj_pod_name(p->name, "node", 0, 0, node0, sizeof(node0));
    p->replacements = atoll(tp_str_at(json_object_get(p->job, "metadata"), "annotations",
                                   TJ_ANN_REPLACED) ?: "0");
    if (tp_elastic_node_succeeded(p)) {
        elastic_drop_waiting(p);
        return;
    }
    json_array_foreach(p->pods, i, pod) {
        const char *pname = tp_str_at(pod, "metadata", "name") ?: "";
        long long done = p->replacements + (long long)json_object_size(p->replaced);
        if (strcmp(tp_str_at(json_object_get(pod, "metadata"), "labels", TJ_LABEL_RJOB) ?: "",
                   "node") || !strcmp(pname, node0) || kit_is_terminating(pod) ||
            strcmp(kit_pod_phase(pod), "Failed"))
            continue;
        if (done >= max) {
            tp_event(p, "Warning", "ElasticRestartsExhausted",
                  "node pod %s failed and %lld of %lld replacements are spent", pname, done, max);
            return;
        }
        if (kit_delete(p->s, api_store_key(&api_pod), pod, p->job, TJ_COMPONENT) < 0) {
            p->rc = -1;
            continue;
        }
        json_object_set_new(p->replaced, pname, json_true());
        tp_event(p, "Normal", "NodeReplaced",
              "node pod %s failed: replacing it (%lld of %lld); the other nodes go on and "
              "re-rendezvous", pname, done + 1, max);
    }
}

/* batch/v1 Job's backoffLimit: a failed pod of a job whose template allows
 * retries is deleted, to be made again by the next pass, at most
 * backoffLimit times per job (counted per "<rjob>-<job index>" in
 * TJ_ANN_RETRIES, cleared by a whole-set restart, which makes new Jobs);
 * past that the job has failed and the failurePolicy decides. */
void tp_job_retry(tpass *p)
{
    const char *text = tp_str_at(json_object_get(p->job, "metadata"), "annotations",
                              TJ_ANN_RETRIES);
    json_t *pod;
    size_t i;

    p->retries = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(p->retries)) {
        json_decref(p->retries);
        p->retries = json_object();
    }
    json_array_foreach(p->pods, i, pod) {
        const json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
        const char *pname = tp_str_at(pod, "metadata", "name") ?: "";
        const char *rname = json_string_value(json_object_get(labels, TJ_LABEL_RJOB));
        const char *ji = json_string_value(json_object_get(labels, TJ_LABEL_JOB_INDEX));
        const json_t *rj = tj_plan_rjob(p->plan, rname);
        long long limit = json_integer_value(json_object_get(rj, "backoffLimit")), used;
        char key[300];
        if (!rj || !ji || limit <= 0 || tp_elastic_rjob(p, rj) || kit_is_terminating(pod) ||
            strcmp(kit_pod_phase(pod), "Failed") || json_object_get(p->replaced, pname))
            continue;
        snprintf(key, sizeof(key), "%s-%s", rname, ji);
        used = json_integer_value(json_object_get(p->retries, key));
        if (used >= limit)
            continue;
        if (kit_delete(p->s, api_store_key(&api_pod), pod, p->job, TJ_COMPONENT) < 0) {
            p->rc = -1;
            continue;
        }
        json_object_set_new(p->retries, key, json_integer(used + 1));
        json_object_set_new(p->retried, pname, json_true());
        tp_event(p, "Normal", "RetryingPod",
              "pod %s failed: making it again (%lld of the Job's backoffLimit %lld)", pname,
              used + 1, limit);
    }
}

/* A job of replicated job bad failed: the failurePolicy restarts the whole
 * set (every pod deleted; the next passes make them anew) or fails it. */
void tp_on_failure(tpass *p, const char *bad)
{
    const json_t *fp = json_object_get(p->plan, "failurePolicy");
    long long max = json_integer_value(json_object_get(fp, "maxRestarts"));
    const char *rule;
    tj_fail_action a = tj_failure_action(p->plan, bad, TJ_JOB_FAILURE_REASON, &rule);

    if (a == TJ_FAIL_RESTART_UNCOUNTED || (a == TJ_FAIL_RESTART && p->restarts < max)) {
        tp_kill_pods(p, false);
        p->bump_restart = true;
        if (a == TJ_FAIL_RESTART_UNCOUNTED)
            tp_event(p, "Normal", "Restarting",
                  "replicated job %s failed: restarting every job (rule %s, not counted)", bad,
                  rule ? rule : "");
        else
            tp_event(p, "Normal", "Restarting",
                  "replicated job %s failed: restarting every job (%lld of %lld)", bad,
                  p->restarts + 1, max);
        return;
    }
    tp_kill_pods(p, true);
    tp_event(p, "Warning", "ReplicatedJobFailed",
          "replicated job %s failed: see its pods' logs (kubectl logs -l "
          TJ_LABEL_JOBSET "=%s," TJ_LABEL_RJOB "=%s)", bad, p->name, bad);
    if (a == TJ_FAIL_SET)
        tp_set_cond(p, "Failed", "True", "FailedJobs",
                 "jobset failed due to one or more job failures (failure policy rule FailJobSet)");
    else if (max > 0)
        tp_set_cond(p, "Failed", "True", "ReachedMaxRestarts",
                 "jobset failed due to reaching max number of restarts");
    else
        tp_set_cond(p, "Failed", "True", "FailedJobs",
                 "jobset failed due to one or more job failures");
}
