/* kit.h - the controller kit: what every job controller does to the objects
 * it owns, whatever its kind. The Kubeflow engine (controller/jobs) and the
 * Volcano controllers (controller/volcano) both build on it; neither reaches
 * into the other's private header.
 *
 * kit.c         pods and Services built for an owner, created (alone or in
 *               a batch written together) and deleted with their Events on
 *               the owner (SuccessfulCreatePod, FailedCreateService, ...),
 *               listed through the client's owner index, read as a small
 *               view; env entries.
 * kit_status.c  conditions, a pod's observations (phase, exit code,
 *               restarts, deletion mark), times, ttlSecondsAfterFinished,
 *               a PodGroup's resource sums and the PodGroup gate.
 *
 * The loop around a controller (watch, work queue, retries a second later,
 * wake-ups at a time) is controller/workqueue.h, on client/informer.h.
 * Expectations are not kept in memory: a pass lists what the owner controls
 * now (kit_list_owned_views; in operator mode from the watch's cache, the
 * pass's own writes read back until the cache has them: client/kc_cache.h),
 * and names are fixed, so a create that raced an earlier one finds the name
 * taken, which counts as success. */
#ifndef TY_CONTROLLER_KIT_H
#define TY_CONTROLLER_KIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "api/registry.h"
#include "client/kc.h"

/* ---- kit.c: what an owner controls ---- */

/* The controller ownerReference to owner (caller owns): apiVersion, kind,
 * name, uid, controller and blockOwnerDeletion true. */
json_t *kit_owner_ref(const json_t *owner);

/* What a pod is built from; everything borrowed. */
typedef struct kit_pod_params {
    const json_t *owner;        /* apiVersion, kind, metadata.name/uid/namespace */
    const char *name;           /* pod (and service) name */
    const json_t *template;     /* the pod template {metadata, spec} */
    const char *restart_policy; /* the pod's restartPolicy (Always/OnFailure/Never) */
    const json_t *labels;       /* added over the template's labels */
    const json_t *env;          /* appended to the env of the target containers: the
                                   pod's own, made for it, its entries taken by
                                   reference when one container takes them (the caller
                                   changes them no more) */
    const char *env_container;  /* only this container, or NULL for all */
} kit_pod_params;

/* A new pod object (caller owns), not yet defaulted or validated. */
json_t *kit_pod_new(const kit_pod_params *p);
/* A Service named like the pod, selecting selector (borrowed), exposing the
 * named ports of container (borrowed; may be NULL). headless: clusterIP None. */
json_t *kit_service_new(const json_t *owner, const char *name, const json_t *labels,
                        const json_t *selector, const json_t *container, bool headless);

/* Defaults, validates (api_prepare) and creates obj (stolen). An existing
 * object of that name counts as success. Records SuccessfulCreate<Kind> or
 * FailedCreate<Kind> on owner, from component. */
int kit_create(ty_kc *s, const api_resource *res, json_t *obj, const json_t *owner,
               const char *component, ty_error *err);

/* Creations gathered to be written together (kc_write_all): a pass that
 * creates a job's 8 pods and 8 services commits them in one go, and their
 * Events in another, instead of 32 writes one after the other. */
typedef struct kit_batch {
    kc_op *ops;
    const api_resource **res; /* what each op creates */
    size_t n, cap;
} kit_batch;

/* Defaults and validates obj (stolen) as kit_create does, and queues its
 * creation. A manifest that does not validate is reported (FailedCreate<Kind>
 * on owner) and not queued: -1 with *err. */
int kit_batch_add(kit_batch *b, const api_resource *res, json_t *obj, const json_t *owner,
                  const char *component, ty_kc *s, ty_error *err);
/* Writes what was queued, then records SuccessfulCreate<Kind> or
 * FailedCreate<Kind> on owner for each (a name taken counts as success, with
 * no Event), as kit_create does; empties b for reuse. Returns how many
 * failed. */
size_t kit_batch_commit(kit_batch *b, ty_kc *s, const json_t *owner, const char *component);
void kit_batch_free(kit_batch *b);

/* Deletes resource obj (its namespace and name) if it is still the object
 * with its uid (Background), unless it is being deleted already. Gone
 * already counts as success. Records SuccessfulDeletePod/Service on owner
 * when owner is not NULL. */
int kit_delete(ty_kc *s, const char *resource, const json_t *obj, const json_t *owner,
               const char *component);

/* The objects of resource in ns controlled by owner_uid (the client's owner
 * index: O(what it controls), not O(the namespace); out is empty on failure;
 * caller calls kc_list_free). */
void kit_list_owned_objects(ty_kc *s, const char *resource, const char *ns,
                            const char *owner_uid, kc_list *out);

/* What the job controllers see of a pod or a Service (ty_obj_view):
 * metadata name, namespace, uid, labels, annotations, creationTimestamp and
 * deletionTimestamp; status phase and reason; per container status its name,
 * restartCount, state and lastState. Whatever a controller comes to read of
 * these objects must be kept here. */
extern const ty_view kit_owned;
/* o's view (kit_owned), or NULL when label is not NULL and o does not carry
 * label=value; caller owns it. */
json_t *kit_owned_view(const ty_obj *o, const char *label, const char *value);
/* The objects of resource in ns controlled by owner_uid (and labelled
 * label=value when label is not NULL), as a JSON array of their views in
 * *out (caller owns; empty on failure). -1 when they could not be listed. */
int kit_list_owned_views(ty_kc *s, const char *resource, const char *ns, const char *owner_uid,
                         const char *label, const char *value, json_t **out);

/* ---- kit_status.c ---- */

/* Sets condition `type` (cstatus "True"/"False") in status.conditions the
 * way upstream's job controllers do: a condition equal in status, reason and
 * message is left alone (returns false); otherwise it moves to the end with
 * lastUpdateTime now and lastTransitionTime kept if the status did not
 * change. When it is set True, the conditions named in clears
 * (NULL-terminated, may be NULL) that are True turn False. Returns true when
 * something changed. */
bool kit_cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                  const char *message, const char *now, const char *const *clears);
/* Whether condition type is present with status True. */
bool kit_cond_true(const json_t *status, const char *type);

/* The exit code of container `name` (else the first) of a terminated pod:
 * state.terminated, else lastState.terminated; -1 when unknown. */
int kit_pod_exit_code(const json_t *pod, const char *name);
/* Sum of containerStatuses[].restartCount. */
long long kit_pod_restarts(const json_t *pod);
/* status.phase, "" when absent. */
const char *kit_pod_phase(const json_t *pod);
/* Whether obj carries a deletionTimestamp. */
bool kit_is_terminating(const json_t *obj);

/* ttlSecondsAfterFinished of obj (resource), which finished at done (0: not
 * finished; ttl < 0: no TTL): once ttl seconds have passed by now, deletes it
 * (kit_delete: Background, the garbage collector takes its dependents) and
 * returns what that did (0 or -1); before, sets *due to when and returns 1;
 * with nothing to do, returns 0. */
int kit_ttl_expire(ty_kc *s, const char *resource, const json_t *obj, time_t done,
                   long long ttl, time_t now, time_t *due);

/* Adds the effective requests of a pod of spec pod_spec (model/podres.h:
 * the scheduler's own rule, init containers, sidecars and overhead
 * included), times times, into sums: resource name -> milli-units as JSON
 * integers. */
void kit_add_requests(json_t *sums, const json_t *pod_spec, long long times);
/* Such sums as a resource list of quantity strings (a new object). */
json_t *kit_quantities(const json_t *sums);
/* A kc_mutate function that merges arg (the fields a PodGroup's spec
 * should hold) into the object's spec. */
int kit_pg_follow(json_t *obj, void *arg, ty_error *err);
/* The PodGroup gate of every job controller (the Kubeflow engine's and the
 * Volcano Job controller's): pods are created only once the gang scheduler
 * has admitted their PodGroup. pg (taken) is the PodGroup the job wants,
 * its spec the fields it must hold: it is made when missing (an error of
 * the API's checks is logged and fails the pass), and an existing one's
 * spec is brought in line (labels, annotations and status are left alone).
 * 1: admitted (kit_pg_admitted); 0: not yet, or made by somebody meanwhile;
 * -1: it could not be read or written (the pass fails and is retried). */
int kit_pg_gate(ty_kc *s, const char *ns, json_t *pg);
/* Whether a PodGroup was admitted: its phase is past Pending (Inqueue,
 * Running, ...). A missing phase is Pending: a status sent with a create
 * is dropped by an API server that has the status subresource. */
bool kit_pg_admitted(const json_t *pg);

#endif
