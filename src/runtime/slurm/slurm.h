/* slurm.h - the Slurm runtime backend: pods run on a Slurm cluster, one
 * Slurm job per gang, through the cluster's command-line tools (sbatch,
 * squeue, scancel, sinfo) with fixed parsable formats (scli.h), never
 * libslurm. See docs/slurm.md and docs/internals/runtime.md, "Slurm".
 *
 * Trainyard's scheduler admits gangs (queues, quotas, fair share: its
 * enqueue action; preempt and reclaim of whole gangs); Slurm places them. An
 * admitted gang becomes one Slurm job, a heterogeneous one with a component
 * per shape of pod (CPUs, memory, GPUs) when they differ, each component one
 * step with a task per pod running `trainyard supervise` where Slurm chose.
 * When the job starts the backend binds each pod to its node, writes the
 * pods' specs and hosts files (names -> the nodes' NodeAddr, ports moved
 * where two pods of a node would collide) into the shared directory, and
 * the supervisors, which waited for them, run the containers as on one
 * machine: logs and state.json land in the shared directory, where the
 * server reads them. */
#ifndef TY_RUNTIME_SLURM_SLURM_H
#define TY_RUNTIME_SLURM_SLURM_H

#include "runtime/backend.h"

typedef struct rt_slurm_opts {
    const char *data_dir;    /* the server's: the instance id is kept there */
    const char *shared_dir;  /* required: a directory every node sees at this
                                path (pods/, logs/, slurm/ under it) */
    const char *partitions;  /* comma-separated; NULL: the cluster's default */
    const char *account;     /* sbatch --account, NULL: none */
    const char *qos;         /* sbatch --qos, NULL: none */
    const char *self_exe;    /* trainyard on the nodes; NULL: this binary's path */
    int port_min, port_max;  /* where moved ports come from; 0: 20000-32767 */
    const char *const *sched_names; /* schedulerName values served; NULL: the
                                       embedded defaults */
} rt_slurm_opts;

extern const rt_backend_ops rt_slurm_backend;

/* The label every Slurm Node carries, with the partition's name. */
#define SL_PARTITION_LABEL "trainyard.io/slurm-partition"
#define SL_FINALIZER "trainyard.io/slurm-runtime"

#endif
