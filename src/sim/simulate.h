/* simulate.h - the trace-driven simulator: replays a job trace through the
 * gang scheduler's core (scheduler/core.h) on simulated nodes and a virtual
 * clock, and summarises what happened. Design: docs/internals/simulator.md. */
#ifndef TY_SIM_SIMULATE_H
#define TY_SIM_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "sim/trace.h"

typedef enum {
    SIM_FIFO, /* non-preemptive, strict head of line per queue (YARN-CS like) */
    SIM_SJF,  /* non-preemptive, shortest known duration first, skipping jobs that do not fit */
    SIM_LAS,  /* Tiresias' discretised LAS on attained GPU-seconds, preempting whole gangs */
} sim_policy;

#define SIM_MAX_LAS_LEVELS 8

typedef struct sim_options {
    sim_policy policy;
    sim_cluster_spec cluster;
    /* One Volcano queue (equal weights) per queue of the trace, instead of
     * every job in "default". */
    bool queues;
    /* GPUs per pod: a job of G GPUs is ceil(G / pod_gpus) pods. 0 = the
     * node's GPU count (one pod per node, as distributed training runs). */
    int pod_gpus;
    /* LAS: queue thresholds in GPU-seconds, ascending; a job whose attained
     * service reaches thresholds[k] moves from queue k to k+1. */
    double las_thresholds[SIM_MAX_LAS_LEVELS - 1];
    int nlas_thresholds; /* 0 = the default (one threshold, SIM_LAS_DEFAULT_THRESHOLD) */
} sim_options;

#define SIM_LAS_DEFAULT_THRESHOLD 3600.0
/* Cycles with evictions at one instant before the clock moves on anyway. */
#define SIM_MAX_EVICTING_ROUNDS 64

/* What happened to one job. */
typedef struct sim_outcome {
    double submit, first_start, finish; /* finish < 0: never finished */
    double gpu_seconds;                 /* GPUs held x time held */
} sim_outcome;

typedef struct sim_result {
    size_t jobs;        /* jobs that finished */
    size_t skipped;     /* jobs larger than the whole cluster, never submitted */
    size_t unfinished;  /* jobs still waiting when no event was left (a stall) */
    size_t preemptions; /* gangs evicted (LAS) */
    size_t cycles;      /* scheduling cycles run */
    size_t capped_instants; /* instants where evictions went on past the cap */
    int total_gpus;
    double avg_jct, p99_jct, makespan, avg_queue_delay, gpu_utilization;
} sim_result;

/* "fifo", "sjf", "las" -> 0, or -1 for an unknown name. */
int sim_policy_parse(const char *name, sim_policy *out);
const char *sim_policy_name(sim_policy p);

/* Runs the whole trace. 0, or -1 + err (a bad option, out of memory). A
 * trace that stalls is not an error: see result->unfinished. */
int sim_run(const sim_trace *trace, const sim_options *opts, sim_result *result, ty_error *err);

/* The metrics over outcomes (report.c): JCT = finish - submit, queueing
 * delay = first start - submit, makespan = last finish - first submit, GPU
 * utilisation = sum of GPU-seconds / (total_gpus x makespan); p99 by nearest
 * rank. Jobs that never finished count in none of them. Fills the metric
 * fields and jobs; leaves the rest of r alone. */
void sim_metrics(const sim_outcome *o, size_t n, int total_gpus, sim_result *r);

/* JSON (keys avg_jct, p99_jct, makespan, avg_queue_delay, gpu_utilization,
 * then counts), fixed decimals so that equal runs print equal bytes. */
void sim_report_json(FILE *f, const sim_result *r, const sim_options *opts);
/* A readable table. */
void sim_report_table(FILE *f, const sim_result *r, const sim_options *opts,
                      const char *trace_name);

#endif
