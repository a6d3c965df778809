/* jobs_int.h - the job engine's parts, shared by its files and its tests.
 *
 * pods.c    the replicas' pods and Services (naming, labels, the framework
 *           plugin's parts) and what a job controls; the generic machinery
 *           under them (ownerReferences, create/delete with Events, the
 *           owner index, views) is the controller kit's (controller/kit.h).
 * status.c  upstream's condition rules, exit-code classification, back-off
 *           arithmetic.
 * reconcile.c  reconcile(job): observe pods, decide, write.
 * engine.c  the controller thread: watch, work queue, timers.
 */
#ifndef TY_CONTROLLER_JOBS_INT_H
#define TY_CONTROLLER_JOBS_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "api/registry.h"
#include "api/framework.h"
#include "client/kc.h"
#include "controller/kit.h"

/* Label keys (upstream's). */
#define JOBS_LABEL_OPERATOR "training.kubeflow.org/operator-name"
#define JOBS_LABEL_JOB_NAME "training.kubeflow.org/job-name"
#define JOBS_LABEL_TYPE "training.kubeflow.org/replica-type"
#define JOBS_LABEL_INDEX "training.kubeflow.org/replica-index"
#define JOBS_LABEL_ROLE "training.kubeflow.org/job-role"
/* Trainyard's own annotations on the job (see docs/internals/jobs.md). */
#define JOBS_ANN_RESTARTS "trainyard.io/restarts"         /* recreations so far */
#define JOBS_ANN_RESTART_POLICY "trainyard.io/restart-policy" /* "gang" */

/* ---- the controller kit (controller/kit.h), by this engine's names ----
 * (its files and tests use them; the Volcano controllers use the kit's) */

typedef kit_pod_params jobs_pod_params;
typedef kit_batch jobs_batch;
#define jobs_owned kit_owned

static inline json_t *jobs_pod_new(const jobs_pod_params *p) { return kit_pod_new(p); }
static inline json_t *jobs_owner_ref(const json_t *owner) { return kit_owner_ref(owner); }
static inline json_t *jobs_service_new(const json_t *owner, const char *name,
                                       const json_t *labels, const json_t *selector,
                                       const json_t *container, bool headless)
{
    return kit_service_new(owner, name, labels, selector, container, headless);
}
static inline int jobs_create(ty_kc *s, const api_resource *res, json_t *obj, const json_t *job,
                              const char *component, ty_error *err)
{
    return kit_create(s, res, obj, job, component, err);
}
static inline int jobs_batch_add(jobs_batch *b, const api_resource *res, json_t *obj,
                                 const json_t *job, const char *component, ty_kc *s,
                                 ty_error *err)
{
    return kit_batch_add(b, res, obj, job, component, s, err);
}
static inline size_t jobs_batch_commit(jobs_batch *b, ty_kc *s, const json_t *job,
                                       const char *component)
{
    return kit_batch_commit(b, s, job, component);
}
static inline void jobs_batch_free(jobs_batch *b) { kit_batch_free(b); }
static inline int jobs_delete(ty_kc *s, const char *resource, const json_t *obj,
                              const json_t *job, const char *component)
{
    return kit_delete(s, resource, obj, job, component);
}
static inline void jobs_list_owned_objects(ty_kc *s, const char *resource, const char *ns,
                                           const char *owner_uid, kc_list *out)
{
    kit_list_owned_objects(s, resource, ns, owner_uid, out);
}
static inline int jobs_pod_exit_code(const json_t *pod, const char *name)
{
    return kit_pod_exit_code(pod, name);
}
static inline long long jobs_pod_restarts(const json_t *pod) { return kit_pod_restarts(pod); }
static inline const char *jobs_pod_phase(const json_t *pod) { return kit_pod_phase(pod); }
static inline bool jobs_is_terminating(const json_t *obj) { return kit_is_terminating(obj); }
static inline bool jobs_cond_true(const json_t *status, const char *type)
{
    return kit_cond_true(status, type);
}

/* ---- pods.c: what a job controls ---- */

/* o's view (jobs_owned) when it carries the label job-name=job_name, else
 * NULL; caller owns it. */
json_t *jobs_owned_view(const ty_obj *o, const char *job_name);
/* Objects of resource in ns labelled job-name=job_name and controlled by
 * owner_uid, as a JSON array of their views (jobs_owned_view; caller owns
 * the array). */
json_t *jobs_list_owned(ty_kc *s, const char *resource, const char *ns,
                        const char *job_name, const char *owner_uid);

/* ---- pods.c: Kubeflow replica pods ---- */

/* The pod's name for (rtype, index): the plugin's, else {job}-{type}-{index}. */
void jobs_pod_name(const jobs_framework *fw, const job_ctx *c, const char *rtype, int index,
                   char *buf, size_t len);
/* The labels of that pod (caller owns). */
json_t *jobs_pod_labels(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                        int index);
/* The whole pod of a replica, env injected and plugin-decorated; gang: the
 * engine restarts pods itself, so the pod's restartPolicy is Never. */
json_t *jobs_build_pod(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                       int index, bool gang);
/* The Service of that pod, or NULL when the plugin wants none. */
json_t *jobs_build_service(const jobs_framework *fw, const job_ctx *c, const char *rtype,
                           int index);

/* ---- status.c ---- */

/* kit_cond_set with upstream's exclusions: Running and Restarting exclude
 * each other (the other is set False); Succeeded and Failed set Running
 * (and Restarting) False. Returns true when something changed. */
bool jobs_cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                   const char *message, const char *now);
/* Finished = Succeeded or Failed is True. */
bool jobs_finished(const json_t *status);

typedef enum { JOBS_EXIT_RETRY, JOBS_EXIT_PERMANENT } jobs_exit_class;
/* A failed pod under the replica's restartPolicy: ExitCode retries exit codes
 * >= 128 (signals: 137 OOM/kill, 143 TERM) and fails on 1-127; Never fails;
 * OnFailure and Always retry (the pod only reaches Failed when the node agent
 * gave up on it, or in gang mode where the engine restarts pods itself). */
jobs_exit_class jobs_classify_exit(const char *restart_policy, int exit_code);
/* Upstream's rule: limit 0 fails on the first restart, else restarts >= limit.
 * limit < 0 means no limit. */
bool jobs_backoff_exceeded(long long limit, long long restarts);

/* ---- podgroup.c ---- */

/* Makes the job's PodGroup (named after the job, as the training operator
 * names it: minMember = schedulingPolicy.minAvailable or every replica the
 * framework creates now, queue, priorityClassName, minResources) or brings
 * its spec in line, and says whether the gang scheduler has admitted it:
 * 1 (phase past Pending: pods may be created), 0 (not yet), -1 (it could
 * not be read or written: the pass fails and is retried). */
int jobs_podgroup_gate(ty_kc *s, const jobs_framework *fw, const job_ctx *c,
                       const json_t *job, const jf_counts *counts, size_t ntypes);
/* ---- reconcile.c ---- */

/* Brings one job's world in line with its spec. Returns 0 or -1 (retry
 * later). *wake_at (wall-clock seconds) is set to when the job wants another
 * look (deadline, TTL), or left alone; *wrote_rv to the resourceVersion of
 * the job's status when the pass wrote it (TY_RV_MAX bytes; else left alone). */
int jobs_reconcile(ty_kc *s, const kf_kind *k, const char *ns, const char *name,
                   time_t *wake_at, char *wrote_rv);

/* Metrics, declared once by jobs_start. */
void jobs_metrics_declare(void);
void jobs_metric_bump(const char *metric, const char *ns, const kf_kind *k);

#endif
