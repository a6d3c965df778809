/* tj_int.h - the TrainJob controller's parts, shared with its tests.
 *
 * plan.c       pure: the runtime snapshot and the plan (the JobSet the
 *              runtime and the TrainJob's overrides make), names.
 * initializers.c  pure: Trainyard's dataset/model initializer steps.
 * env.c        pure: each framework's environment, the MPI hostfile.
 * pods.c       pure: one pod of the plan (labels, host names, env, gang).
 * reconcile.c  one pass over one TrainJob: snapshot, observe, create.
 * failures.c   its failed pods and jobs: elastic replacements, backoffLimit
 *              retries, the failurePolicy.
 * commit.c     what it writes: status and Trainyard's annotations.
 *              (tpass.h: the pass's state those three share.)
 * engine.c     the thread: watch, work queue, wake-ups.
 */
#ifndef TY_CONTROLLER_TRAINER_TJ_INT_H
#define TY_CONTROLLER_TRAINER_TJ_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/error.h"
#include "client/kc.h"

#define TJ_COMPONENT "trainjob-controller"
/* JobSet's and batch/v1 Job's labels (upstream's names). */
#define TJ_LABEL_JOBSET "jobset.sigs.k8s.io/jobset-name"
#define TJ_LABEL_RJOB "jobset.sigs.k8s.io/replicatedjob-name"
#define TJ_LABEL_RJOB_REPLICAS "jobset.sigs.k8s.io/replicatedjob-replicas"
#define TJ_LABEL_JOB_INDEX "jobset.sigs.k8s.io/job-index"
#define TJ_LABEL_COMPLETION "batch.kubernetes.io/job-completion-index"
#define TJ_LABEL_JOB_NAME "batch.kubernetes.io/job-name"
#define TJ_LABEL_TRAINJOB "trainer.kubeflow.org/trainjob-name"
#define TJ_LABEL_RESTART_ATTEMPT "jobset.sigs.k8s.io/restart-attempt"
#define TJ_LABEL_POD_GROUP "scheduling.x-k8s.io/pod-group"
#define TJ_ANN_GROUP "scheduling.k8s.io/group-name"
#define TJ_ANN_VOLCANO_QUEUE "scheduling.volcano.sh/queue-name"
#define TJ_LABEL_KUEUE_QUEUE "kueue.x-k8s.io/queue-name"
/* Trainyard's annotations on the TrainJob (docs/internals/trainer.md). */
#define TJ_ANN_SNAPSHOT "trainyard.io/runtime-snapshot" /* the runtime, as it started */
#define TJ_ANN_RESTARTS "trainyard.io/restarts"         /* whole-set restarts so far */
#define TJ_ANN_REPLACED "trainyard.io/node-replacements" /* elastic: failed nodes replaced */
#define TJ_ANN_RETRIES "trainyard.io/job-retries" /* {"<rjob>-<index>": pods retried} */
/* A Trainyard extension (TrainJob has no such field): seconds after Complete
 * or Failed when the job is deleted (api/trainer_admit.c checks it). */
#define TJ_ANN_TTL "trainyard.io/ttl-seconds-after-finished"

/* The job's record when it is deleted (record.c): the finalizer that holds
 * it until the record is written, the record's labels, the retention's
 * default (trainjobs_set_record_retention sets it; 0: no records). */
#define TJ_FINALIZER_RECORD "trainyard.io/job-record"
#define TJ_LABEL_RECORD_KIND "trainyard.io/job-kind"
#define TJ_LABEL_RECORD_JOB "trainyard.io/job-name"
#define TJ_RECORD_RETENTION_DEFAULT (7LL * 24 * 3600)

/* The torch master's, JAX coordinator's and XGBoost tracker's port, a
 * containerPort of the trainer container (upstream's ContainerTrainerPort). */
#define TJ_TRAINER_PORT 29500
/* An elastic job's c10d rendezvous port on node 0 (torchrun's default). */
#define TJ_RDZV_PORT 29400
/* An elastic job's failed nodes replaced, and torchrun's --max-restarts,
 * when its elasticPolicy gives no maxRestarts. */
#define TJ_ELASTIC_RESTARTS 3
#define TJ_TF_PORT 2222
#define TJ_PADDLE_PORT 36543
#define TJ_MS_PORT 2222
/* At most this many pods per TrainJob (replicas, completions and numNodes
 * are int32 upstream: a typo must not make a billion pods). */
#define TJ_MAX_PODS 10000
/* Where the MPI hostfile and the rsh agent are mounted (mpi_agent.h's dir). */
#define TJ_MPI_DIR "/etc/mpi"

/* ---- plan.c ---- */

/* The snapshot a TrainJob keeps of its runtime when it starts (caller
 * owns): {kind, name, framework, spec} from the runtime object (borrowed);
 * the controller adds "elastic" {minNodes, maxNodes} from the job's
 * trainyard.io/elastic-nodes, so the bounds too stay as the job started.
 * framework is the trainer.kubeflow.org/framework label, "" without it. */
json_t *tj_snapshot(const json_t *runtime);

/* The plan: what the snapshot and the TrainJob's trainer, initializer,
 * runtimePatches and podTemplateOverrides make (caller owns):
 *   {framework, policy ("torch", "mpi", "jax", "xgboost", "flux", "plain"),
 *    numNodes, procs ("auto" or a number as text), subdomain,
 *    mpi: the runtime's mlPolicy.mpi (defaults filled), or absent,
 *    elastic: {minNodes, maxNodes, maxRestarts} of an elastic torch job
 *    (the snapshot's "elastic", from the job's trainyard.io/elastic-nodes,
 *    over the runtime's v2.0 elasticPolicy; numNodes is then the job's
 *    within them, else maxNodes), or absent,
 *    rjobs: [{name, replicas (jobs), pods (completions per job), ancestor
 *             ("trainer", "dataset-initializer", ... or ""), dependsOn,
 *             template: the pod template {metadata, spec}, backoffLimit
 *             (the Job template's, else 0: failed pods each job retries)}],
 *    startupInOrder: true when the JobSet's startupPolicy is InOrder,
 *    claimPolicies: the JobSet's volumeClaimPolicies (their templates
 *    mounted by name already added as volumes, tj_claim_name), or absent,
 *    successPolicy, failurePolicy, podGroupPolicy: as the runtime has them
 *    (absent when it has none), queue (the JobSet template's
 *    scheduling.volcano.sh/queue-name: a runtime patch's over the
 *    runtime's; absent when neither), initializerClaim
 *    (tj_add_initializers)}.
 * NULL with err when the snapshot holds no replicated job (TY_EINVALID)
 * or the plan makes more than TJ_MAX_PODS pods (TY_EFORBIDDEN). */
json_t *tj_plan(const json_t *trainjob, const json_t *snapshot, ty_error *err);

/* initializers.c: for each initializer (dataset, model) of trainjob with
 * a storageUri and no step of that name in the runtime, a replicated job
 * `<step>` fetching it (file://, http(s)://) into the claim
 * `<job>-initializer` at /workspace/<dataset|model>, which the trainer's
 * replicated jobs then dependOn (Complete) and mount at /workspace; sets
 * plan.initializerClaim to the claim's name when it added any. */
void tj_add_initializers(json_t *plan, const json_t *trainjob);

/* "<claim>-<job>": the PVC a volumeClaimPolicies template makes. */
void tj_claim_name(const char *job, const char *claim, char *buf, size_t len);
/* "<job>-<rjob>-<jobIndex>-<podIndex>": a pod's name and host name. */
void tj_pod_name(const char *job, const char *rjob, long long job_index, long long pod_index,
                 char *buf, size_t len);
/* What failurePolicy does when a job of replicated job rjob fails with
 * reason (a batch/v1 Job failure reason: Trainyard's jobs fail with
 * BackoffLimitExceeded): the first rule whose targetReplicatedJobs (empty:
 * all) and onJobFailureReasons (empty: any) match decides; none matching
 * restarts the set within maxRestarts. *rule (may be NULL) is the matching
 * rule's name, borrowed from plan, or NULL. */
typedef enum { TJ_FAIL_RESTART, TJ_FAIL_RESTART_UNCOUNTED, TJ_FAIL_SET } tj_fail_action;
tj_fail_action tj_failure_action(const json_t *plan, const char *rjob, const char *reason,
                                 const char **rule);
#define TJ_JOB_FAILURE_REASON "BackoffLimitExceeded"

/* The pods the plan makes, all replicated jobs together. */
long long tj_plan_pods(const json_t *plan);
/* The rjob of plan named name, or NULL. */
const json_t *tj_plan_rjob(const json_t *plan, const char *name);

/* ---- env.c ---- */

/* The env of pod (job_index, pod_index) of rjob (a plan entry), for
 * container (borrowed), appended to env; nothing when the framework gives
 * that container none. job: the TrainJob's name; ns its namespace. */
void tj_env(const json_t *plan, const char *job, const char *ns, const json_t *rjob,
            const json_t *container, long long job_index, long long pod_index, json_t *env);
/* PET_NPROC_PER_NODE's value: numProcPerNode, or for "auto" without a GPU
 * request max(1, the container's CPU limit, else request, whole cores). */
void tj_torch_procs(const char *procs, const json_t *container, char *buf, size_t len);
/* The MPI hostfile: one line per node pod, "<host>.<subdomain> slots=N". */
char *tj_mpi_hostfile(const json_t *plan, const char *job);
/* Whether container of rjob is where the trainer's command runs (and so
 * where the framework env goes): `node` of the trainer ancestor, or for
 * MPI `launcher` (and `node` too when runLauncherAsNode). */
bool tj_is_trainer_container(const json_t *plan, const json_t *rjob, const char *container);

/* ---- record.c ---- */

long long tj_record_retention(void);
/* "<job>-<first 8 characters of its uid>": a job made again under its name
 * gets a record of its own. */
void tj_record_name(const char *job, const char *uid, char *buf, size_t len);
/* Writes job's record (job and pods, kit_owned views, borrowed); one
 * already there counts as written. 0, or -1 with err. */
int tj_record_write(ty_kc *s, const json_t *job, const json_t *pods, ty_error *err);
/* Deletes record ns/name once it is older than the retention, else sets
 * *wake_at to when it will be. 0, or -1 to be retried. */
int tj_record_sweep(ty_kc *s, const char *ns, const char *name, time_t *wake_at);
/* A job being deleted that TJ_FINALIZER_RECORD holds: its record (its pods
 * are still there: the garbage collector waits for the job), then the
 * finalizer off. 0, or -1 to be retried. */
int tj_record_finalize(ty_kc *s, const json_t *job);

/* ---- reconcile.c ---- */

/* One pass; 0, or -1 to be retried later. *wake_at (wall-clock seconds) is
 * set when the job wants another look then (activeDeadlineSeconds). */
int tj_reconcile(ty_kc *s, const char *ns, const char *name, time_t *wake_at);

/* ---- pods.c ---- */

/* The pod (job_index, pod_index) of rjob (caller owns; not yet defaulted):
 * name and host name from tj_pod_name, subdomain, JobSet labels and
 * annotations, the gang's group annotation and label, env, restartPolicy
 * (the template's, else Never), the MPI mounts. trainjob is borrowed. */
json_t *tj_build_pod(const json_t *plan, const json_t *trainjob, const json_t *rjob,
                     long long job_index, long long pod_index);

/* The hook the progress endpoint fills in: called on every trainer pod's
 * spec (json_t pod spec, borrowed, changed in place) before it is created.
 * Its one call is in tj_build_pod. */
void tj_progress_hook(const json_t *trainjob, json_t *pod_spec);

#endif
