/* sim.h - simulated nodes: a runtime that registers N virtual Nodes of one
 * shape and "runs" the pods bound to them on the real clock.
 *
 * Each node is a Node object (labels trainyard.io/sim=true,
 * kubernetes.io/hostname=<name>; capacity = allocatable = the shape; Ready).
 * A pod bound to one of them (spec.nodeName) goes Running at once; with the
 * annotation trainyard.io/sim-duration (seconds, decimal) it ends that long
 * after it started: Succeeded, or Failed with trainyard.io/sim-exit-code when
 * that is non-zero. A deleted pod is marked terminated and removed. Nothing is
 * executed. Used by the end-to-end scheduling benchmark and by tests that need
 * more than one node. See docs/internals/simnodes.md.
 */
#ifndef TY_RUNTIME_SIM_SIM_H
#define TY_RUNTIME_SIM_SIM_H

#include "base/error.h"
#include "client/kc.h"

#define RT_SIM_FINALIZER "trainyard.io/sim-runtime"
#define RT_SIM_ANN_DURATION "trainyard.io/sim-duration"
#define RT_SIM_ANN_EXIT_CODE "trainyard.io/sim-exit-code"
#define RT_SIM_MAX_NODES 100000

typedef struct rt_sim rt_sim;

typedef struct rt_sim_opts {
    int count;          /* nodes, 1..RT_SIM_MAX_NODES */
    const char *prefix; /* node names are prefix + zero-padded index; NULL/"" = "sim-" */
    int gpus;           /* nvidia.com/gpu per node; 0 = none advertised */
    const char *cpu;    /* quantity; NULL = "64" */
    const char *memory; /* quantity; NULL = "512Gi" */
    int pods;           /* pods per node; 0 = 110 */
} rt_sim_opts;

/* Registers the nodes (creating those missing; existing ones keep their
 * labels, taints and spec, only status is brought to the shape), deletes sim
 * nodes of the same prefix beyond count, picks up pods already bound to the
 * nodes and starts the runtime's thread. s must outlive the runtime; strings
 * in o are copied. NULL with err filled on failure (nothing left running). */
rt_sim *rt_sim_start(ty_kc *s, const rt_sim_opts *o, ty_error *err);

/* Stops the thread and frees the runtime; the Node objects and pods stay as
 * they are. NULL is fine. */
void rt_sim_stop(rt_sim *rt);

/* The name of node i (0-based) into buf; buf is returned. */
const char *rt_sim_node_name(const rt_sim *rt, int i, char *buf, size_t len);

/* Parses a --sim-nodes SPEC: "N", "NxG", optionally ":cpu=Q,memory=Q,pods=P".
 * Sets o->count and o->gpus, and cpu, memory, pods when given (o->cpu and
 * o->memory then point at cpu_buf / mem_buf, each buf_len bytes, which must
 * outlive o). -1 with a message in err on a malformed spec. */
int rt_sim_parse_spec(const char *spec, rt_sim_opts *o, char *cpu_buf, char *mem_buf,
                      size_t buf_len, ty_error *err);

#endif
