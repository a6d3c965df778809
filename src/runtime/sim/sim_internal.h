/* sim_internal.h - shared by the files of the simulated-node runtime (not public). */
#ifndef TY_RUNTIME_SIM_SIM_INTERNAL_H
#define TY_RUNTIME_SIM_SIM_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/agent_kit.h"
#include "runtime/sim/sim.h"

/* One pod bound to a sim node that this runtime has started. It stays in the
 * table (state DONE after it ended) until the pod is deleted, so that the
 * echoes of our own writes are recognised without reading the store. */
typedef enum { SIM_RUNNING, SIM_DONE } sim_state;

typedef struct sim_pod {
    struct sim_pod *next; /* hash chain */
    int64_t end_ms;       /* monotonic ms at which it ends; -1 = runs until deleted */
    int exit_code;
    sim_state state;
    bool in_heap;         /* a timer refers to it */
    bool dead;            /* dropped from the table while in the heap or a write is
                             pending: freed when popped or written */
    bool pending;         /* a start or an end waits in rt->pend */
    const char *ns, *name;
    char uid[];           /* uid\0ns\0name\0 */
} sim_pod;

struct rt_sim {
    ty_kc *s;
    char *prefix;
    size_t prefix_len;
    int width; /* digits of the zero-padded index */
    int count, gpus, pods;
    char *cpu, *memory;

    pthread_t thread;
    pthread_mutex_t mu; /* guards stop */
    bool stop;
    int evfd;           /* written by the watch thread and by rt_sim_stop */
    ak_watch *aw;       /* the agent kit's watch thread */

    sim_pod **tab; /* uid -> pod, chained */
    size_t tab_cap, tab_n;
    sim_pod **heap; /* min-heap on end_ms */
    size_t heap_n, heap_cap;
    uint32_t next_ip;
    int64_t next_resync_ms;
    struct sim_write *pend; /* starts and ends to write together (sim.c) */
    size_t pend_n, pend_cap;
};

/* ---- sim_node.c ---- */

/* The index of the node called name, or -1 when it is not one of ours. */
int sim_node_index(const rt_sim *rt, const char *name);
/* "10.a.b.c" for node i (buf >= 16). */
void sim_node_ip(int i, char *buf, size_t len);
/* Creates the missing nodes, brings the status of the others to the shape and
 * deletes sim nodes of this prefix that are not ours. */
int sim_nodes_register(rt_sim *rt, ty_error *err);
/* Creates node i again (after someone deleted it). */
int sim_node_ensure(rt_sim *rt, int i, ty_error *err);

/* ---- sim_pod.c: the status writes ---- */

/* What a start or an end writes, kept by the caller until the write is done
 * (a kc_write_all op borrows it). */
typedef struct sim_pod_args {
    const char *uid;
    char node_ip[16], pod_ip[16]; /* start */
    int exit_code;                /* end */
    bool release;                 /* end: being deleted, drop the finalizer too */
} sim_pod_args;

/* The op that marks p Running on the node at node_ip (containers running,
 * Ready, podIP) and adds the finalizer; fills a (uid borrowed from p).
 * Nothing is written when the pod is gone, replaced (another uid) or being
 * deleted (TY_ENOTFOUND when gone). */
kc_op sim_pod_start_op(rt_sim *rt, sim_pod_args *a, const sim_pod *p, const char *node_ip);
/* sim_pod_finish as an op. */
kc_op sim_pod_finish_op(sim_pod_args *a, const sim_pod *p, int exit_code);

/* Ends the pod: Succeeded (exit_code 0) or Failed, containers terminated. */
int sim_pod_finish(rt_sim *rt, const char *ns, const char *name, const char *uid,
                   int exit_code, ty_error *err);
/* A pod being deleted: containers terminated (unless ended already) and the
 * finalizer removed, so that the store removes it. */
int sim_pod_release(rt_sim *rt, const char *ns, const char *name, const char *uid,
                    ty_error *err);
bool sim_pod_has_finalizer(const json_t *pod);
/* The annotations' run: *end_ms relative to start (-1 = forever) and the exit code. */
void sim_pod_plan(const json_t *pod, int64_t *duration_ms, int *exit_code);

#endif
