/* framework.h - what a training framework plugin tells the job engine.
 *
 * The engine (engine.c) does everything a distributed job needs in common:
 * pods, services, restarts, back-off, deadline, TTL, clean-up, suspend and
 * status. A framework plugin (pytorch.c, tensorflow.c, ...) only declares the
 * facts that differ: the kf_kind descriptor (replica types, default container
 * and port, restart policy, operator name), the environment it injects, which
 * pod plays the master role, when the job has succeeded, how its services
 * look, and optional hooks (MPI's ConfigMap).
 *
 * Plugins are pure: they read the job through job_ctx and append to JSON they
 * are handed. They never touch the store, so they are unit-tested alone.
 */
#ifndef TY_API_FRAMEWORK_H
#define TY_API_FRAMEWORK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/kubeflow.h"

/* The job as a plugin sees it. */
typedef struct job_ctx {
    const kf_kind *kind;
    const json_t *job;   /* working copy: stored job + kf_default_ports (borrowed) */
    const char *name;    /* metadata.name */
    const char *ns;      /* metadata.namespace */
} job_ctx;

/* Replica counts of one type as the engine observed them. */
typedef struct jf_counts {
    const char *type;      /* canonical ("Worker") */
    long long replicas;    /* expected */
    long long active;      /* pods Pending or Running */
    long long running;     /* pods Running */
    long long succeeded;
    long long failed;      /* permanently failed (not being restarted) */
    bool first_succeeded;  /* index 0 exited 0 */
} jf_counts;

typedef enum { JF_SVC_NONE, JF_SVC_HEADLESS, JF_SVC_CLUSTERIP } jf_service_mode;

typedef struct jobs_framework {
    const kf_kind *kind;
    /* true: env goes into every container (PyTorch, XGBoost, ...); false: only
     * into the kind's default container (TF's "tensorflow", MS's "mindspore"). */
    bool env_all_containers;
    /* Appends {name, value} (or {name, valueFrom}) objects to env for the pod
     * of rtype (canonical) and index. May append nothing. */
    void (*env)(const job_ctx *c, const char *rtype, int index, json_t *env);
    /* Whether (rtype, index) carries training.kubeflow.org/job-role=master. */
    bool (*is_master)(const job_ctx *c, const char *rtype, int index);
    /* Whether the job has succeeded, from the per-type counts (ntypes
     * entries, one per replica type present in the job). */
    bool (*succeeded)(const job_ctx *c, const jf_counts *counts, size_t ntypes);
    /* The Service shape for a replica type; NULL = headless for every type. */
    jf_service_mode (*service)(const job_ctx *c, const char *rtype);
    /* Optional: the pod's name when not {job}-{type}-{index} (MPI launcher). */
    void (*pod_name)(const job_ctx *c, const char *rtype, int index, char *buf, size_t len);
    /* Optional: last changes to a built pod (MPI: config volume, idle workers). */
    void (*decorate)(const job_ctx *c, const char *rtype, int index, json_t *pod);
    /* Optional: a ConfigMap the job needs before its pods (MPI), built from the
     * job and its current pods (array, borrowed). Caller owns the result. */
    json_t *(*configmap)(const job_ctx *c, const json_t *pods);
    /* Optional: whether pods of rtype may be created yet, given per-type counts.
     * Types held back are left out of the PodGroup's minMember and
     * minResources until then. MPIJob v2beta1's launcher waits so with
     * launcherCreationPolicy WaitForWorkersReady; v1's is created with its
     * workers, as upstream. */
    bool (*may_create)(const job_ctx *c, const char *rtype, const jf_counts *counts,
                       size_t ntypes);
    /* Optional: other objects the job needs (MPIJob v2beta1's Service and
     * Secret), an array the caller owns; each is created when absent (with
     * the job's controller reference) and never updated. A Secret of type
     * kubernetes.io/ssh-auth without data gets a new key pair. */
    json_t *(*extras)(const job_ctx *c);
} jobs_framework;

/* The plugins, one per framework file (api/frameworks.def). */
#define TY_FRAMEWORK(kind, plugin) extern const jobs_framework jf_##plugin;
#include "api/frameworks.def"
#undef TY_FRAMEWORK

/* MPIJob v2beta1's launcher env (mpi_v2.c): K_MPI_JOB_ROLE, the hostfile and
 * ssh-argument variables of spec.mpiImplementation, the slots, the rsh agent
 * and, unless the launcher runs ranks, NVIDIA_* emptied. */
void jf_mpi2_launcher_env(const job_ctx *c, json_t *env);
/* What MPIJob v1 and v2beta1 share (mpi.c): the Launcher is the master and
 * its success the job's; no Service per pod; pods `<job>-launcher` and
 * `<job>-worker-<i>`. */
bool jf_mpi_is_master(const job_ctx *c, const char *rtype, int index);
bool jf_mpi_succeeded(const job_ctx *c, const jf_counts *counts, size_t n);
jf_service_mode jf_mpi_service(const job_ctx *c, const char *rtype);
void jf_mpi_pod_name(const job_ctx *c, const char *rtype, int index, char *buf, size_t len);

/* The plugin for a job kind; NULL when none. */
const jobs_framework *jobs_framework_for(const kf_kind *k);

/* ---- helpers for plugins (framework.c) ---- */

/* Appends {name, value}. */
void jf_env(json_t *env, const char *name, const char *value);
void jf_envf(json_t *env, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends {name, valueFrom: {fieldRef: {fieldPath}}}. */
void jf_env_field(json_t *env, const char *name, const char *field_path);
/* Replicas of one type (0 when absent) and of the whole job. */
long long jf_replicas(const job_ctx *c, const char *rtype);
long long jf_total(const job_ctx *c);
/* Whether the job has a replica type. */
bool jf_has(const job_ctx *c, const char *rtype);
/* The containerPort named kind->port_name in rtype's default container (else
 * its first container), else the kind's default port. */
int jf_port(const job_ctx *c, const char *rtype);
/* "{job}-{lowercase rtype}-{index}": the pod, service and host name. */
void jf_host(const job_ctx *c, const char *rtype, int index, char *buf, size_t len);
/* Lowercase copy of s into buf. */
void jf_lower(const char *s, char *buf, size_t len);
/* The counts entry of rtype, or NULL. */
const jf_counts *jf_find(const jf_counts *counts, size_t n, const char *rtype);
/* Common rule pieces. */
bool jf_all_succeeded(const jf_counts *c);       /* replicas > 0 && succeeded == replicas */
bool jf_master_is(const char *rtype, int index, const char *want); /* rtype == want */

#endif
