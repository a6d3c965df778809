/* agent_kit.h - what every node agent (runtime backend) shares: the watch
 * that feeds it, its Node objects, and the pod status it writes.
 *
 * A backend keeps only what is its own (how a pod runs, where its state
 * comes from, its logs); the kit holds what a kubelet does the same way
 * whatever runs the containers:
 *   - ak_watch: an informer (client/informer.h, the one list/watch/relist
 *     loop) on a thread of its own over the resources the agent cares
 *     about, which queues their events (bounded) and asks for a relist
 *     when the watch was (re)opened, fell behind (TY_EGONE) or the queue
 *     overflowed.
 *   - Nodes: the Ready condition, nodeInfo, register-or-fix, the heartbeat,
 *     a condition with its NoSchedule taint (DiskPressure).
 *   - Pod status: addresses, start time and QoS class, the Initialized /
 *     ContainersReady / Ready conditions, a terminated container state, the
 *     runtime's finalizer.
 * See docs/internals/runtime.md. */
#ifndef TY_RUNTIME_AGENT_KIT_H
#define TY_RUNTIME_AGENT_KIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "client/kc.h"

/* ---- the watch ---- */

typedef struct ak_watch ak_watch;

/* Starts the watch thread (an informer's, named thread_name, NULL:
 * "ty-agent-watch"; it keeps the default scheduling policy) over the 1 to 16
 * resources named in only (NULL-terminated, copied). Each time events are
 * queued onto an empty queue, or a relist is asked for, the thread writes 1
 * to wake_fd (an eventfd the caller owns and polls; -1 = none: the caller
 * polls ak_watch_take). The watch is opened
 * before this returns (when it can be: else the thread keeps trying, from
 * 100 ms to 5 s apart), so every change after it is seen; every open asks
 * for a relist, made after the watch opened so that nothing falls between.
 * At most queue_max events wait (0 = AK_QUEUE_MAX); beyond, they are dropped
 * and a relist is asked for. NULL with err on failure. */
#define AK_QUEUE_MAX 100000
ak_watch *ak_watch_start(ty_kc *kc, const char *const *only, int wake_fd, size_t queue_max,
                         const char *thread_name, ty_error *err);

/* Moves the queued events to the caller (release each with
 * kc_event_release, free the array); *relist is true when the caller must
 * list again (the watch was reopened or events were dropped). NULL with *n 0
 * when none. */
kc_event *ak_watch_take(ak_watch *w, size_t *n, bool *relist);

/* Stops the thread (cancelling its watch: at once) and joins it;
 * ak_watch_take still works (another thread may be taking), ak_watch_free
 * releases what is queued and frees. NULL is fine for both. */
void ak_watch_stop(ak_watch *w);
void ak_watch_free(ak_watch *w);

/* ---- Nodes ---- */

/* A Ready=True condition (KubeletReady) with message, both times now. */
json_t *ak_node_ready_condition(const char *message, const char *now);

/* status.nodeInfo: kernel, osImage, containerRuntimeVersion
 * ("trainyard-<runtime>://0.1"), kubelet version, architecture. */
json_t *ak_node_info(const char *runtime, const char *kernel, const char *os_image,
                     const char *arch);

/* Fixes the Node named name in two writes, as an API server takes them:
 * fix_meta(obj, arg) through the Node itself (labels, spec: its status
 * would be ignored), then fix_status(obj, arg) through its status
 * subresource (status only; the rest is shared with the stored version,
 * see kc.h's KC_STATUS) — each left equal writes nothing, and either may be
 * NULL; else creates the one make(arg) returns (a new reference; made only
 * then). *created (may be NULL) says which. 0, or -1 with err. */
int ak_node_ensure(ty_kc *kc, const char *name, kc_mutate_fn fix_meta, kc_mutate_fn fix_status,
                   json_t *(*make)(void *arg), void *arg, bool *created, ty_error *err);

/* The heartbeat: Ready back to True (KubeletReady) if it was not, and every
 * condition named in beat (NULL-terminated; Ready always) gets
 * lastHeartbeatTime now. One status write. */
int ak_node_heartbeat(ty_kc *kc, const char *name, const char *const *beat, ty_error *err);

/* A node condition as the node lifecycle controller pairs it with a taint:
 * condition type = on ? "True" : "False" (reason/message for each; the
 * lastTransitionTime moves only when the status does) and, while on, the
 * taint key:NoSchedule (taint_key NULL: none): a status write for the
 * condition, then a write of the Node for the taint. */
typedef struct ak_node_cond {
    const char *type, *taint_key;
    const char *reason_on, *message_on, *reason_off, *message_off;
} ak_node_cond;
int ak_node_set_condition(ty_kc *kc, const char *name, const ak_node_cond *c, bool on,
                          ty_error *err);

/* The inventory entry of the Node named name as it is now: {name, labels,
 * capacity, allocatable, conditions} (new reference), NULL when it does not
 * exist (or out of memory). For a backend's nodes op. */
json_t *ak_node_inventory(ty_kc *kc, const char *name);

/* ---- pod status ---- */

bool ak_pod_is_final(const json_t *status); /* phase Succeeded or Failed */

/* hostIP(s) and podIP(s). */
void ak_pod_set_addresses(json_t *status, const char *host_ip, const char *pod_ip);
/* startTime (start, else kept, else now) and qosClass (kept, else from pod). */
void ak_pod_set_start(json_t *status, const json_t *pod, const char *start, const char *now);

/* The kubelet's three conditions: Initialized (initialized; < 0 leaves it),
 * ContainersReady and Ready (ready; when not, reason PodCompleted for a final
 * pod, else ContainersNotReady). Each keeps its lastTransitionTime while its
 * value holds. PodScheduled is the scheduler's. */
void ak_pod_set_conditions(json_t *status, int initialized, bool ready, bool final,
                           const char *now);

/* {"terminated": {...}}'s inside: exitCode, reason (NULL: Completed for 0,
 * else Error), startedAt, finishedAt, containerID when not NULL or "". */
json_t *ak_terminated(int exit_code, const char *reason, const char *started,
                      const char *finished, const char *container_id);

/* ---- the status writer ---- */

typedef enum { AK_WAITING, AK_RUNNING, AK_TERMINATED } ak_run_state;

/* One container as the backend observed it. */
typedef struct ak_container {
    const char *name;
    ak_run_state state;
    const char *reason, *message; /* waiting; terminated (NULL: Completed / Error) */
    int exit_code;                /* terminated: 128 + signal when killed */
    const char *started_at, *finished_at;
    int restart_count;
    const char *container_id;     /* "<runtime>://<id>", or NULL */
} ak_container;

typedef struct ak_pod_state {
    const char *phase;            /* Pending, Running, Succeeded, Failed */
    const char *host_ip, *pod_ip; /* NULL: left as they are */
    const char *start_time;       /* NULL: kept, else now */
    const ak_container *containers; /* matched to spec.containers by name; a
                                       container not listed waits
                                       (ContainerCreating) */
    size_t n;
} ak_pod_state;

/* Writes what s says onto the pod's status (one status write, nothing when
 * it is the same): phase, addresses, start time, QoS class, the
 * containerStatuses with their exit codes, the three conditions. Only onto
 * the pod with this uid (TY_ENOTFOUND otherwise); an end once reported
 * (Succeeded, Failed) is never rewritten. 0, or -1 with err. */
int ak_pod_report(ty_kc *kc, const char *ns, const char *name, const char *uid,
                  const ak_pod_state *s, ty_error *err);

/* ---- the agent, for a backend without one of its own ---- */

struct rt_backend_ops;
typedef struct ak_agent ak_agent;

/* Runs the pods bound to ops' nodes through ops->pods_start / pod_stop /
 * pods_sync (runtime/backend.h): one thread, fed by ak_watch. A pod bound
 * to one of the backend's nodes (owns_node) that has not started and is not
 * final is started with the others of its gang that the same batch of
 * events (or listing) shows (the scheduler binds a gang at once), after the
 * backend's finalizer was added; a pod being deleted is stopped once, with
 * its grace period, and its finalizer removed; pods_sync runs every sync_ms
 * (0 = 2 s). Pods started are remembered by uid until deleted, so echoes of
 * the backend's own writes start nothing. NULL with err on failure. */
ak_agent *ak_agent_start(ty_kc *kc, const struct rt_backend_ops *ops, void *impl, int sync_ms,
                         ty_error *err);
/* Stops the thread; what the backend runs keeps running. NULL is fine. */
void ak_agent_stop(ak_agent *a);

#endif
