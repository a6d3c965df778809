/* trace.h - job traces and cluster shapes for the simulator.
 *
 * Two trace formats, told apart by their header line (column order does not
 * matter, unknown columns are ignored):
 *   Tiresias: job_id,num_gpu,submit_time,iterations,model_name,duration,interval
 *             (submit_time and duration in seconds)
 *   Philly:   timestamp,duration,num_gpus,gpu_time,cluster
 *             (timestamp "YYYY-MM-DD HH:MM:SS", read as UTC; cluster = the
 *             virtual cluster, kept as the job's queue)
 * Pollux's workload-N.csv is recognised and refused: it has no durations.
 *
 * Cluster shapes: "NxG" (N nodes of G GPUs) or the path of a Tiresias cluster
 * CSV (num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node). */
#ifndef TY_SIM_TRACE_H
#define TY_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Hard caps on what a trace may hold. */
#define SIM_TRACE_MAX_BYTES (256u << 20)
#define SIM_TRACE_MAX_JOBS 5000000
#define SIM_TRACE_MAX_QUEUES 1024
#define SIM_MAX_NODES 100000
#define SIM_MAX_GPUS_PER_NODE 64

typedef struct sim_job {
    double submit;   /* seconds after the trace's first submission */
    double duration; /* run time once it holds all its GPUs */
    int gpus;        /* >= 1 */
    int queue;       /* index into sim_trace.queues (0 = "default") */
    long line;       /* line in the file, for messages */
} sim_job;

typedef struct sim_trace {
    sim_job *jobs;  /* sorted by submit time, ties in file order */
    size_t njobs;
    char **queues;  /* queues[0] is "default"; others in order of first sight */
    size_t nqueues;
    const char *format; /* "tiresias" or "philly"; static */
} sim_trace;

/* Parses a trace held in memory. NULL + err (TY_EINVALID, naming the line)
 * on a bad trace. Caller frees with sim_trace_free. */
sim_trace *sim_trace_parse(const char *text, size_t len, ty_error *err);
/* Reads and parses a file (TY_ENOTFOUND when it cannot be read). */
sim_trace *sim_trace_load(const char *path, ty_error *err);
void sim_trace_free(sim_trace *t);

typedef struct sim_cluster_spec {
    int nodes;
    int gpus_per_node;
    int cpus_per_node;
    int mem_gib_per_node;
} sim_cluster_spec;

/* "32x4" or a cluster CSV path. 0, or -1 + err (out untouched). */
int sim_cluster_spec_parse(const char *spec, sim_cluster_spec *out, ty_error *err);
/* The same from a cluster CSV's text. */
int sim_cluster_spec_parse_csv(const char *text, size_t len, sim_cluster_spec *out,
                               ty_error *err);

#endif
