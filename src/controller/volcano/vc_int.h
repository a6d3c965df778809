/* vc_int.h - the Volcano Job controller's parts, shared with its tests.
 *
 * policy.c   pure: which action a pod event calls for, and the phase state
 *            machine (what an action or a plain sync does in each phase).
 * plugins.c  pure: the plugins' env, pod edits, the svc and mpi ConfigMaps.
 * plugins_ray.c  pure: the ray and hcclrank plugins (Volcano 1.13).
 * ssh.c      the ssh plugin's key pair (ssh-keygen) and Secret data.
 * reconcile.c  one pass over one job: observe pods, decide, act, write.
 * engine.c   the thread: watch, work queue, retry timers.
 */
#ifndef TY_CONTROLLER_VOLCANO_VC_INT_H
#define TY_CONTROLLER_VOLCANO_VC_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "client/kc.h"

#define VC_ANN_TASK_INDEX "volcano.sh/task-index"
#define VC_ANN_TASK_SPEC "volcano.sh/task-spec"
#define VC_ANN_JOB_NAME "volcano.sh/job-name"
#define VC_ANN_QUEUE "volcano.sh/queue-name"
#define VC_ANN_JOB_VERSION "volcano.sh/job-version"
#define VC_ANN_GROUP "scheduling.k8s.io/group-name"
#define VC_LABEL_JOB_NAMESPACE "volcano.sh/job-namespace"
/* Trainyard's: a user action on the job (AbortJob, ResumeJob, ...), consumed
 * (removed) by the controller in the pass that applies it. vcctl's
 * suspend/resume create a Command object upstream; this is our equivalent. */
#define VC_ANN_ACTION "trainyard.io/action"
#define VC_COMPONENT "vc-controller-manager"

typedef enum {
    VC_PENDING, VC_RUNNING, VC_RESTARTING, VC_ABORTING, VC_ABORTED, VC_COMPLETING,
    VC_COMPLETED, VC_TERMINATING, VC_TERMINATED, VC_FAILED, VC_NPHASES
} vc_phase;

typedef enum {
    VC_SYNC, VC_ABORT_JOB, VC_RESTART_JOB, VC_RESTART_TASK, VC_RESTART_POD, VC_TERMINATE_JOB,
    VC_COMPLETE_JOB, VC_RESUME_JOB, VC_NACTIONS
} vc_action;

const char *vc_phase_name(vc_phase p);
vc_phase vc_phase_parse(const char *s);      /* "" / unknown: Pending */
const char *vc_action_name(vc_action a);
vc_action vc_action_parse(const char *s);    /* unknown: VC_SYNC */

/* The action the first matching policy names: the task's policies (array,
 * may be NULL) before the job's. A policy matches by event/events (`*`
 * matches every event) or, for PodFailed, by a non-zero exitCode equal to
 * exit_code. PodPending matches only policies with a timeout. A policy with
 * a timeout acts only once the condition has lasted that long (elapsed_ms):
 * before that the result is VC_SYNC and *wait_ms (when not NULL) is set to
 * what is left, so a condition that goes away cancels the action. VC_SYNC
 * when nothing matches. */
vc_action vc_policy_match(const json_t *task_policies, const json_t *job_policies,
                          const char *event, int exit_code, long long elapsed_ms,
                          long long *wait_ms);

/* A Go duration ("90s", "1m30s", "500ms", "2h") in milliseconds; -1 when
 * malformed. */
long long vc_duration_ms(const char *s);

/* What the controller observed of the job's pods. */
typedef struct vc_obs {
    long long pending, running, succeeded, failed, terminating, unknown;
    long long replicas;        /* Σ task replicas */
    long long min_available;   /* the job's */
    long long min_success;     /* 0 = unset */
    bool task_below_min;       /* some task has fewer succeeded than its minAvailable */
    long long retry_count, max_retry;
    bool task_unreachable;     /* some task has more failed pods than replicas - minAvailable */
} vc_obs;

/* Which pods an action kills. */
typedef enum { VC_KILL_NONE, VC_KILL_ALL, VC_KILL_LIVE, VC_KILL_TASK, VC_KILL_POD } vc_kill;

typedef struct vc_step {
    vc_phase next;
    vc_kill kill;
    bool retry;        /* retryCount++ */
    bool new_version;  /* status.version++ (pods of the old version are gone) */
    bool create;       /* create the pods that are missing */
} vc_step;

/* The state machine: what action a does in phase cur given o (see
 * docs/internals/volcano.md for the table). Pure. */
vc_step vc_transition(vc_phase cur, vc_action a, const vc_obs *o);

/* Trainyard's: `Succeeded` makes dependsOn wait for the dependencies to have
 * succeeded (minAvailable pods each) instead of running (upstream). */
#define VC_ANN_DEPENDS_ON "trainyard.io/depends-on"

/* Whether task's dependsOn (if any) lets its pods be created, given the
 * taskStatusCount tsc and the job's tasks. A dependency is ready when at
 * least its minAvailable pods are Running or Succeeded (want_succeeded:
 * Succeeded only); iteration "any" needs one ready dependency, otherwise
 * all. */
bool vc_depends_ready(const json_t *task, const json_t *tasks, const json_t *tsc,
                      bool want_succeeded);

/* Whether a restart caused by event counts toward maxRetry: an eviction is
 * not the job's fault, so it does not (upstream counts it; users object). */
bool vc_counts_as_retry(const char *event);

/* JobUpdated: whether the job's spec changed since the controller last
 * looked. The store bumps metadata.generation on every change outside
 * metadata and status; the controller records what it saw in
 * status.observedGeneration (Trainyard's field). A job never observed has
 * not been updated. */
bool vc_spec_updated(const json_t *job, const json_t *status);

/* Whether a phase is final: nothing but ResumeJob (Aborted) changes it. */
bool vc_phase_final(vc_phase p);

/* ---- plugins.c ---- */

/* "ps-0"-style task name to env name: upper case, '-' -> '_'. */
void vc_env_name(const char *task, char *buf, size_t len);
/* The name pod index of task answers to, as upstream's plugins name it: the
 * task template's hostname (else the pod's name, `<job>-<task>-<index>`)
 * "." its subdomain (else the job's name); the svc plugin leaves both on
 * the pods. */
void vc_pod_host(const json_t *job, const char *task, long long index, char *buf, size_t len);
/* Appends the plugins' env for (task, index) of job to env. */
void vc_plugins_env(const json_t *job, const char *task, int index, json_t *env);
/* Last edits to a built pod (svc: hostname, subdomain, /etc/volcano mount). */
void vc_plugins_decorate(const json_t *job, json_t *pod);
/* The job's spec.volumes as pod volumes mounted at their mountPath in every
 * container: a persistentVolumeClaim named volumeClaimName, else
 * `<job>-volume-<i>`. The local runtime gives such a volume an empty
 * directory per pod (there are no PersistentVolumes on one machine). */
/* The claim volume i of job (vol) mounts, in name: its volumeClaimName, or
 * "<job>-volume-<i>" for the claim the controller makes from its
 * volumeClaim. False (name: the volume's name) for a volume with neither: a
 * scratch directory per pod. */
bool vc_volume_claim(const json_t *job, const json_t *vol, size_t i, char *name, size_t len);
void vc_job_volumes(const json_t *job, json_t *pod);
/* A plugin argument in Go's flag forms ("--name=v", "-name=v", or "--name"
 * then "v"), else def (borrowed from job). */
const char *vc_plugin_arg(const json_t *job, const char *plugin, const char *name,
                          const char *def);
/* Whether plugin name is enabled in the job's spec.plugins. */
bool vc_plugin_on(const json_t *job, const char *name);
/* The svc plugin's ConfigMap `<job>-svc` (data only; caller owns). */
json_t *vc_svc_configmap_data(const json_t *job);
/* The mpi plugin's ConfigMap `<job>-mpi` (data only; caller owns): the rsh
 * agent kubexec.sh mpirun reaches the other pods through, mounted at
 * /etc/mpi and named in OMPI_MCA_plm_rsh_agent. */
json_t *vc_mpi_configmap_data(const json_t *job);
/* The ssh plugin's mount path: --ssh-key-file-path, default /root/.ssh
 * (borrowed from job). */
const char *vc_ssh_path(const json_t *job);

/* ---- plugins_ray.c ---- */

/* The ray plugin's arguments (Go flag forms), defaults as upstream's. */
typedef struct vc_ray_args {
    const char *head, *head_container;     /* "head", "head" */
    const char *worker, *worker_container; /* "worker", "worker" */
    int port, dashboard_port, client_port; /* 6379, 8265, 10001 */
} vc_ray_args;
void vc_ray_args_of(const json_t *job, vc_ray_args *a);
/* Whether the job has the ray plugin's head task; pods are not made without
 * it (upstream fails each pod's creation: "job J doesn't have head task H"). */
bool vc_ray_has_head(const json_t *job);
/* The ray plugin's pod edits: the head task's head container runs `ray start
 * --head --block ...` and gets the gcs, dashboard and client-server ports;
 * the worker task's worker container runs `ray start --block
 * --address=<head host>.<subdomain>:<port>`. */
void vc_ray_decorate(const json_t *job, json_t *pod);
/* The Service `<job>-head-svc` selecting the head task's pods, with the
 * three ports by name (a new object without owner; caller owns). */
json_t *vc_ray_service(const json_t *job, const char *ns);
/* The hcclrank plugin: the pod annotation hccl/rankIndex, unless the pod has
 * it: the value of a container's RANK env var, else the master task's index
 * or the masters' replicas plus the worker task's index (--master, --worker;
 * other tasks get none). */
void vc_hcclrank_decorate(const json_t *job, json_t *pod);
#define VC_ANN_HCCL_RANK "hccl/rankIndex"

/* ---- ssh.c ---- */

/* A new RSA key pair from ssh-keygen (OpenSSH), comment as its comment:
 * *private_key and *public_key (caller frees) on 0; -1 with err when
 * ssh-keygen is missing or fails. */
int vc_ssh_keygen(const char *comment, char **private_key, char **public_key, ty_error *err);
/* The ssh config every pod gets: no host key checks (pods come back with new
 * ones), and `Host <pod>` / `HostName <pod>.<job>` for every pod of the job
 * (the names of vc_pod_host: a template hostname once, as upstream's).
 * Caller frees. */
char *vc_ssh_config(const json_t *job);
/* The Secret `<job>-ssh`'s stringData: id_rsa, id_rsa.pub, authorized_keys
 * (= the public key) and config. Caller owns. */
json_t *vc_ssh_secret_data(const json_t *job, const char *private_key, const char *public_key);

/* ---- reconcile.c ---- */

/* One pass; 0, or -1 to be retried later. *wake_at (wall-clock seconds) is
 * set when the job wants another look then (ttlSecondsAfterFinished). */
int vc_reconcile(ty_kc *s, const char *ns, const char *name, time_t *wake_at);

/* vc_podgroup.c: the PodGroup's minResources (a new resource list): the
 * requests of the first min_member pods of tasks, taken by their
 * template's priority, highest first; tasks with dependsOn left out when
 * staged (they are made later). */
json_t *vc_min_resources(ty_kc *s, const json_t *tasks, json_int_t min_member, bool staged);

#endif
