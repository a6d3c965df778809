/* jobs.h - training jobs of every kind as the researcher's commands see them
 * (`trainyard list`, `get JOB`, `delete JOB`, `suspend`/`resume`, and for
 * reuse `logs JOB` and `top job`): Arena's view of a cluster, over the API.
 *
 * A training job is an object of any Kubeflow kind (kf_kinds: TFJob,
 * PyTorchJob, MPIJob v1 and v2beta1, XGBoostJob, PaddleJob, JAXJob, MXJob,
 * MSJob of kubeflow.org and of mindspore.gitee.com), a Volcano Job
 * (batch.volcano.sh/v1alpha1) or a Kubeflow Trainer v2 TrainJob
 * (trainer.kubeflow.org/v1alpha1; its particulars are jobs_trainer.c's).
 *
 * Two halves:
 *  - fetching, over a client: cli_jobs_list (every kind, one namespace or
 *    all), cli_job_find (a name across kinds, or KIND/NAME), cli_job_pods,
 *    cli_job_podgroup, cli_pods_list;
 *  - pure functions of JSON objects, testable without a server:
 *    cli_job_status, cli_job_replicas, cli_job_summarise, cli_job_owns,
 *    cli_pod_gpus, ...
 *
 * JSON follows jansson's rules: "borrowed" arguments are only read; a
 * returned json_t * is a new reference the caller decrefs. */
#ifndef TY_CLI_JOBS_H
#define TY_CLI_JOBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "api/registry.h"
#include "base/error.h"
#include "client/client.h"

/* ---- the kinds ---- */

/* Every training job resource, in a stable order: the Kubeflow kinds in
 * kf_kinds' order, then Volcano's Job. Static; *n set. */
const api_resource *const *cli_job_resources(size_t *n);
/* Whether res is one of them. */
bool cli_job_resource_is(const api_resource *res);
/* The resource a job object is of, from its apiVersion and kind; NULL when
 * it is not a training job. */
const api_resource *cli_job_resource_of(const json_t *job);
/* "PyTorchJob", "MPIJob", "VolcanoJob" (Volcano's kind "Job" named so that
 * it says what it is): the TRAINER column. Static. */
const char *cli_job_trainer(const api_resource *res);

/* ---- fetching ---- */

/* The training jobs of every kind in ns (NULL: every namespace), as one new
 * array of job objects (apiVersion and kind set on each), sorted by
 * namespace, then name, then kind. A kind the server does not serve (404:
 * an operator's cluster without Volcano's CRDs) is skipped. NULL with err
 * when a request fails otherwise. */
json_t *cli_jobs_list(ty_client *cl, const char *ns, ty_error *err);

/* The job `what` names in ns: NAME, looked up in every kind, or KIND/NAME
 * (KIND as `trainyard get` takes it: pytorchjob, tfjobs,
 * mpijobs.v2beta1.kubeflow.org, vcjob, ...). New reference, apiVersion and
 * kind set. NULL with err:
 *   TY_ENOTFOUND  "no training job NAME in namespace NS; `trainyard list -A`
 *                 lists them" (or "no PyTorchJob NAME ..." for KIND/NAME);
 *   TY_EINVALID   a name held by jobs of two kinds ("... is both a
 *                 PyTorchJob and a TFJob: name one, as pytorchjob/NAME or
 *                 tfjob/NAME"), or a KIND that is not a training job kind;
 *   others        as the request failed. */
json_t *cli_job_find(ty_client *cl, const char *ns, const char *what, ty_error *err);

/* The pods in ns (NULL: every namespace) whose labels match selector (NULL:
 * all), as a new array of pod objects. NULL with err. */
json_t *cli_pods_list(ty_client *cl, const char *ns, const char *selector, ty_error *err);

/* The job's pods (cli_job_owns), sorted by name. New array; NULL with err. */
json_t *cli_job_pods(ty_client *cl, const json_t *job, ty_error *err);

/* The job's PodGroup (cli_job_owns), a new reference; NULL without an error
 * (err->code TY_OK) when it has none, NULL with err when a request fails. */
json_t *cli_job_podgroup(ty_client *cl, const json_t *job, ty_error *err);
/* The JobRecords (trainyard.io/v1) of jobs that were named name in ns, the
 * newest last; an empty array when none (or the kind is not served). */
json_t *cli_job_records(ty_client *cl, const char *ns, const char *name);

/* ---- pure ---- */

/* The label selector that picks the job's pods ("training.kubeflow.org/
 * job-name=NAME" or "volcano.sh/job-name=NAME") into buf. */
void cli_job_pod_selector(const json_t *job, char *buf, size_t len);

/* Objects (pods, PodGroups) indexed by what may own them, so that many
 * jobs find theirs without a scan of every object per job (10,000 jobs
 * against 10,000 PodGroups was 10^8 comparisons). cli_owned_by gives
 * exactly what cli_job_owns would accept: a new array of the objects
 * (borrowed from objs, which must outlive it). */
json_t *cli_owned_index(const json_t *objs);
json_t *cli_owned_by(const json_t *index, const json_t *job);
/* Whether obj (a pod, a PodGroup) belongs to job: an ownerReference with the
 * job's uid; without uids (an object written by hand) the same namespace and
 * the job-name label. */
bool cli_job_owns(const json_t *job, const json_t *obj);

/* GPUs asked for by a pod spec (a Pod's or a template's), whole devices:
 * the effective requests (model/podres.h) of nvidia.com/gpu and every other
 * resource named "<vendor>/gpu". */
int64_t cli_spec_gpus(const json_t *pod_spec);
/* Those of a pod: cli_spec_gpus of its spec. */
int64_t cli_pod_gpus(const json_t *pod);
/* Whether resource name counts as a GPU. */
bool cli_resource_is_gpu(const char *name);
/* Whether a pod holds its node's resources: bound (spec.nodeName) and
 * neither Succeeded nor Failed. */
bool cli_pod_active(const json_t *pod);

/* One replica type (Kubeflow) or task (Volcano) of a job. */
typedef struct cli_job_replica {
    char role[64];            /* "Master", "Worker", a Volcano task's name */
    long long replicas;       /* as defaulted: an absent count is the kind's default */
    const json_t *pod_spec;   /* the template's spec, borrowed from the job; NULL if none */
    int64_t gpus;             /* cli_spec_gpus(pod_spec): per pod */
} cli_job_replica;
#define CLI_JOB_MAX_REPLICAS 16
/* The job's replica types in the kind's order (Volcano: spec.tasks' order),
 * at most max; the number found (more than max when more exist). */
size_t cli_job_replicas(const json_t *job, cli_job_replica *out, size_t max);

/* The job's status as Arena shows it: one of "Created", "Pending",
 * "Running", "Succeeded", "Failed", "Suspended", "Restarting".
 * Kubeflow kinds from their conditions (the finished ones first, then
 * Suspended, or spec.runPolicy.suspend before the engine has acted on it,
 * then the latest of Restarting / Running / Created); Volcano
 * Jobs from status.state.phase (Completed: Succeeded; Aborting/Aborted:
 * Suspended; Terminating/Terminated: Failed). A job that is neither running
 * nor finished is "Pending" when it has a PodGroup that is not Running or a
 * pod not yet running, else "Created". pods (array) and pg may be NULL.
 * Static. */
const char *cli_job_status(const json_t *job, const json_t *pods, const json_t *pg);

/* When the job started and ended (0 when not yet): status.startTime (else
 * the Running condition's time, else creation) and status.completionTime
 * (else the finishing condition's time). */
void cli_job_times(const json_t *job, time_t *created, time_t *started, time_t *ended);

/* Arena's DURATION: how long the job has run (ended or now, less started),
 * or waited since it was created when it has not started. */
int64_t cli_job_duration(const json_t *job, time_t now);

/* The priority class a job names (spec.runPolicy.schedulingPolicy.
 * priorityClass; a Volcano Job's spec.priorityClassName), "" when none.
 * Borrowed. */
const char *cli_job_priority_class(const json_t *job);
/* The queue a job names: schedulingPolicy.queue / spec.queue, else
 * "default". Borrowed or static. */
const char *cli_job_queue(const json_t *job);
/* Who created the job: the server's annotation trainyard.io/created-by
 * (server/creator.h), NULL when absent (no authentication). Borrowed. */
const char *cli_job_user(const json_t *job);

/* What `trainyard list` shows of one job. */
typedef struct cli_job_summary {
    char name[254];
    char ns[64];
    const api_resource *res;
    const char *trainer;   /* cli_job_trainer: static */
    const char *status;    /* cli_job_status: static */
    int64_t duration;      /* seconds, cli_job_duration */
    int64_t gpus_requested; /* every replica's template, times replicas */
    int64_t gpus_allocated; /* the job's active pods (cli_pod_active) */
    char nodes[256];       /* the active pods' nodes, "," between, "N/A" when none */
    char queue[254];
    char priority_class[254];
    char user[256];        /* "N/A" when unknown */
    size_t npods, nrunning;
    char progress[48];     /* a TrainJob's reported progress (cli_trainjob_progress),
                              "" when none */
} cli_job_summary;

/* Summarises job from its pods (an array of pods that may hold other jobs'
 * too: only the job's are read; NULL: none) and its PodGroup (NULL: none)
 * at time now. */
void cli_job_summarise(const json_t *job, const json_t *pods, const json_t *pg, time_t now,
                       cli_job_summary *out);

/* ---- TrainJob (jobs_trainer.c) ---- */

/* Whether job is a TrainJob. */
bool cli_is_trainjob(const json_t *job);
/* Its status (as cli_job_status's words): Complete -> Succeeded, Failed,
 * Suspended (the condition, or spec.suspend); else Running when every pod
 * of replicated job `node` runs or has finished (the Python SDK's rule),
 * Pending while a pod of it waits, else Created. pods may be NULL. Static. */
const char *cli_trainjob_status(const json_t *job, const json_t *pods);
/* Its replicas: from its pods (pods may be NULL), one per replicated job
 * (label jobset.sigs.k8s.io/replicatedjob-name) with its pod count; with
 * no pod yet, "node" x spec.trainer.numNodes (1 when unset: the runtime,
 * not read here, says). The number found, as cli_job_replicas. */
size_t cli_trainjob_replicas(const json_t *job, const json_t *pods, cli_job_replica *out,
                             size_t max);
/* Its queue: the Kueue label kueue.x-k8s.io/queue-name, else the Volcano
 * annotation scheduling.volcano.sh/queue-name, else "default". */
const char *cli_trainjob_queue(const json_t *job);
/* status.trainerStatus as a short text into buf ("45% (2m left)", "45%",
 * "2m left", "reported"): true, or false and "" when there is none. */
bool cli_trainjob_progress(const json_t *job, char *buf, size_t len);
/* Its metrics as "loss=0.25, accuracy=0.9" into buf ("" when none; cut
 * with "..." when longer than buf). */
void cli_trainjob_metrics(const json_t *job, char *buf, size_t len);

/* Seconds as Arena writes a duration: "45s", "3m", "2h5m", "3d4h". */
void cli_duration_text(int64_t seconds, char *buf, size_t len);

/* A pod's metadata.name etc. (borrowed, "" when absent). */
const char *cli_obj_name(const json_t *obj);
const char *cli_obj_ns(const json_t *obj);

#endif
