/* podcond.h - the condition lists of pod-like status objects (pods,
 * PodGroups): one setter with Kubernetes' rules, and a pod's QoS class. */
#ifndef TY_MODEL_PODCOND_H
#define TY_MODEL_PODCOND_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/* Sets condition `type` in status.conditions (created when missing) to value
 * ("True"/"False"): lastTransitionTime = now when the value changes or the
 * condition is new; reason set (NULL removes it); message set when non-NULL
 * (an empty one removes it), else left as it is; with probe, lastProbeTime
 * is null as pods carry it. status is borrowed and changed in place; the
 * conditions list and the condition it changes are made its own first
 * (ty_json_own), so what status shares with another tree stays as it is. */
void podcond_set(json_t *status, const char *type, const char *value, const char *reason,
                 const char *message, const char *now, bool probe);

/* A pods/binding applied to pod: spec.nodeName = node and PodScheduled
 * True. TY_ECONFLICT in kube-apiserver's words when the pod is being
 * deleted, is bound already, or uid (unless NULL or "") is not its uid.
 * Changes only spec.nodeName and the top of status, so it suits a write that
 * shares the rest with the current version (store_op.spec_top). The one
 * binding rule: the server's endpoint and the clients' kc_bind use it. */
int podcond_bind(json_t *pod, const char *node, const char *uid, ty_error *err);

/* status of obj, made an empty object when missing (borrowed). */
json_t *podcond_status(json_t *obj);

/* "Burstable" when any container names requests or limits, else
 * "BestEffort" (Guaranteed is not told apart). */
const char *podcond_qos_class(const json_t *pod);

#endif
