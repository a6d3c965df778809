/* jobs_int.h - the job engine's parts, shared by its files and its tests.
 *
 * pods.c    the "replica set" machinery: naming, labels, ownerReferences,
 *           pod and service construction, create/delete through the store.
 *           Nothing in it is Kubeflow-specific beyond the label keys, so a
 *           Volcano Job controller can build its task pods with it too.
 * status.c  job conditions, exit-code classification, back-off arithmetic,
 *           pod observations (phase, exit code, restarts).
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
#include "controller/jobs/framework.h"
#include "client/kc.h"

/* Label keys (upstream's). */
#define JOBS_LABEL_OPERATOR "training.kubeflow.org/operator-name"
#define JOBS_LABEL_JOB_NAME "training.kubeflow.org/job-name"
#define JOBS_LABEL_TYPE "training.kubeflow.org/replica-type"
#define JOBS_LABEL_INDEX "training.kubeflow.org/replica-index"
#define JOBS_LABEL_ROLE "training.kubeflow.org/job-role"
/* Trainyard's own annotations on the job (see docs/internals/jobs.md). */
#define JOBS_ANN_RESTARTS "trainyard.io/restarts"         /* recreations so far */
#define JOBS_ANN_RESTART_POLICY "trainyard.io/restart-policy" /* "gang" */

/* ---- pods.c: generic pod/service machinery ---- */

/* What a pod is built from; everything borrowed. */
typedef struct jobs_pod_params {
    const json_t *owner;        /* the job: apiVersion, kind, metadata.name/uid/namespace */
    const char *name;           /* pod (and service) name */
    const json_t *template;     /* the pod template {metadata, spec} */
    const char *restart_policy; /* the pod's restartPolicy (Always/OnFailure/Never) */
    const json_t *labels;       /* added over the template's labels */
    const json_t *env;          /* appended to the env of the target containers: the
                                   pod's own, made for it, its entries taken by
                                   reference when one container takes them (the caller
                                   changes them no more) */
    const char *env_container;  /* only this container, or NULL for all */
} jobs_pod_params;

/* A new pod object (caller owns), not yet defaulted or validated. */
json_t *jobs_pod_new(const jobs_pod_params *p);
/* The controller ownerReference to owner (caller owns). */
json_t *jobs_owner_ref(const json_t *owner);
/* A Service named like the pod, selecting selector (borrowed), exposing the
 * named ports of container (borrowed; may be NULL). headless: clusterIP None. */
json_t *jobs_service_new(const json_t *owner, const char *name, const json_t *labels,
                         const json_t *selector, const json_t *container, bool headless);
/* Defaults, validates (api_prepare) and creates obj (stolen). An existing
 * object of that name counts as success. Records SuccessfulCreate<Kind> or
 * FailedCreate<Kind> on job. */
int jobs_create(ty_kc *s, const api_resource *res, json_t *obj, const json_t *job,
                const char *component, ty_error *err);
/* Creations gathered to be written together (kc_write_all): a pass that
 * creates a job's 8 pods and 8 services commits them in one go, and their
 * Events in another, instead of 32 writes one after the other. */
typedef struct jobs_batch {
    kc_op *ops;
    const api_resource **res; /* what each op creates */
    size_t n, cap;
} jobs_batch;

/* Defaults and validates obj (stolen) as jobs_create does, and queues its
 * creation. A manifest that does not validate is reported (FailedCreate<Kind>
 * on job) and not queued: -1 with *err. */
int jobs_batch_add(jobs_batch *b, const api_resource *res, json_t *obj, const json_t *job,
                   const char *component, ty_kc *s, ty_error *err);
/* Writes what was queued, then records SuccessfulCreate<Kind> or
 * FailedCreate<Kind> on job for each (a name taken counts as success, with
 * no Event), as jobs_create does; empties b for reuse. Returns how many
 * failed. */
size_t jobs_batch_commit(jobs_batch *b, ty_kc *s, const json_t *job, const char *component);
void jobs_batch_free(jobs_batch *b);

/* Deletes resource ns/name if it is still the object with uid (Background).
 * Gone already counts as success. Records SuccessfulDelete<Kind> on job when
 * job is not NULL. */
int jobs_delete(ty_kc *s, const char *resource, const json_t *obj, const json_t *job,
                const char *component);
/* The objects of resource in ns controlled by owner_uid (the store's owner
 * index; out is empty on failure; caller calls kc_list_free). */
void jobs_list_owned_objects(ty_kc *s, const char *resource, const char *ns,
                             const char *owner_uid, kc_list *out);
/* o's view (jobs_owned) when it carries the label job-name=job_name, else
 * NULL; caller owns it. */
json_t *jobs_owned_view(const ty_obj *o, const char *job_name);
/* Objects of resource in ns labelled job-name=job_name and controlled by
 * owner_uid, as a JSON array of their views (jobs_owned_view; caller owns
 * the array). */
json_t *jobs_list_owned(ty_kc *s, const char *resource, const char *ns,
                        const char *job_name, const char *owner_uid);
/* What the job engines see of a pod or a Service (ty_obj_view):
 * metadata name, namespace, uid, labels, annotations, creationTimestamp and
 * deletionTimestamp; status phase and reason; per
 * container status its name, restartCount, state and lastState. */
extern const ty_view jobs_owned;

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

/* Sets condition `type` (cstatus "True"/"False") the way upstream does: a
 * condition equal in status, reason and message is left alone (returns
 * false); otherwise it moves to the end with lastUpdateTime now and
 * lastTransitionTime kept if the status did not change. Running and
 * Restarting exclude each other (the other is set False); Succeeded and
 * Failed set Running False. Returns true when something changed. */
bool jobs_cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                   const char *message, const char *now);
/* Whether condition type is present with status True. */
bool jobs_cond_true(const json_t *status, const char *type);
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

/* The exit code of container `name` (else the first) of a terminated pod:
 * state.terminated, else lastState.terminated; -1 when unknown. */
int jobs_pod_exit_code(const json_t *pod, const char *name);
/* Sum of containerStatuses[].restartCount. */
long long jobs_pod_restarts(const json_t *pod);
/* status.phase, "" when absent. */
const char *jobs_pod_phase(const json_t *pod);
bool jobs_is_terminating(const json_t *obj);

/* RFC 3339 UTC of t. */
void jobs_time(time_t t, char *buf, size_t len);

/* ---- podgroup.c ---- */

/* Adds the effective requests of a pod of spec pod_spec (model/podres.h:
 * the scheduler's rule, init containers and overhead included), times
 * times, into sums: resource name -> milli-units as JSON integers. */
void jobs_add_requests(json_t *sums, const json_t *pod_spec, long long times);
/* Such sums as a resource list of quantity strings (a new object). */
json_t *jobs_quantities(const json_t *sums);

/* Makes the job's PodGroup (named after the job, as the training operator
 * names it: minMember = schedulingPolicy.minAvailable or every replica the
 * framework creates now, queue, priorityClassName, minResources) or brings
 * its spec in line, and says whether the gang scheduler has admitted it:
 * 1 (phase past Pending: pods may be created), 0 (not yet), -1 (it could
 * not be read or written: the pass fails and is retried). */
int jobs_podgroup_gate(ty_kc *s, const jobs_framework *fw, const job_ctx *c,
                       const json_t *job, const jf_counts *counts, size_t ntypes);
/* A store_mutate function that merges arg (the fields a PodGroup's spec
 * should hold) into the object's spec. */
int jobs_pg_follow(json_t *obj, void *arg, ty_error *err);

/* The PodGroup gate of both job controllers (Kubeflow's above, Volcano's
 * ensure_podgroup): pods are created only once the gang scheduler has
 * admitted their PodGroup. pg (taken) is the PodGroup the job wants, its
 * spec the fields it must hold: it is made when missing (an error of the
 * API's checks is logged and fails the pass), and an existing one's spec
 * is brought in line (labels, annotations and status are left alone). 1:
 * admitted (jobs_pg_admitted); 0: not yet, or made by somebody meanwhile;
 * -1: it could not be read or written (the pass fails and is retried). */
int jobs_pg_gate(ty_kc *s, const char *ns, json_t *pg);
/* Whether a PodGroup was admitted: its phase is past Pending (Inqueue,
 * Running, ...). A missing phase is Pending: a status sent with a create
 * is dropped by an API server that has the status subresource. */
bool jobs_pg_admitted(const json_t *pg);

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
