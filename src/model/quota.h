/* quota.h - ResourceQuota's rules, shared by its three readers: admission
 * (api/quota_admit.c: a create that would exceed a quota is refused), the
 * quota controller (controller/quota.c: status.used kept true) and the
 * scheduler (a gang waits whole while its namespace's quota cannot hold it).
 * One reading of what an object uses, so that the three never disagree.
 *
 * Usage is a JSON object of quota resource name -> milli-units as JSON
 * integers (one pod = 1000, one CPU = 1000, one byte = 1000), the scale of
 * model/quantity.h. An object uses (Kubernetes' evaluators):
 *   pods        pods, count/pods; requests.cpu and cpu, requests.memory and
 *               memory, limits.cpu, limits.memory; requests.<r> and <r> for
 *               every other resource it requests (requests.nvidia.com/gpu,
 *               nvidia.com/gpu) - requests by the one rule (model/podres.h),
 *               limits by the same rule over the limits. A pod that is
 *               Succeeded or Failed uses nothing.
 *   services    services, count/services, services.nodeports (NodePort and
 *               LoadBalancer), services.loadbalancers.
 *   persistentvolumeclaims: persistentvolumeclaims, count/..., requests.storage,
 *               <class>.storageclass.storage.k8s.io/requests.storage and
 *               /persistentvolumeclaims.
 *   configmaps, secrets and any other resource: its own name (core kinds)
 *               and count/<plural>[.<group>].
 *
 * Scopes (spec.scopes, spec.scopeSelector) narrow a quota to the pods they
 * match: Terminating / NotTerminating (activeDeadlineSeconds set or not),
 * BestEffort / NotBestEffort (no cpu or memory request or limit anywhere),
 * PriorityClass (In, NotIn, Exists, DoesNotExist on priorityClassName). A
 * scoped quota tracks pods only. CrossNamespacePodAffinity and
 * VolumeAttributesClass are accepted and match nothing (docs/compatibility.md). */
#ifndef TY_MODEL_QUOTA_H
#define TY_MODEL_QUOTA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Adds what obj, an object of resource plural in group ("" = core),
 * uses to usage (borrowed; names -> milli JSON integers). */
void quota_usage_add(json_t *usage, const char *group, const char *plural, const json_t *obj);

/* Whether quota's scopes (spec.scopes and spec.scopeSelector) take in obj,
 * an object of resource plural in group: an unscoped quota takes every
 * object, a scoped one only the pods it matches. */
bool quota_matches(const json_t *quota, const char *group, const char *plural,
                   const json_t *obj);

/* The resource whose objects make up hard name key: "pods" for the compute
 * names, "services" for services.nodeports, "apps"/"deployments" for
 * count/deployments.apps. 0, or -1 for a name nothing counts. */
int quota_key_resource(const char *key, char *group, size_t glen, char *plural, size_t plen);

/* Why a pod cannot be admitted against quota at all: the compute names the
 * quota limits (requests.cpu, cpu, requests.memory, memory, limits.cpu,
 * limits.memory) that some container of the pod leaves unspecified, as
 * kube-apiserver words it: "must specify limits.cpu for: main; requests.cpu
 * for: main,side". 0 when none (out ""). */
int quota_pod_missing(const json_t *quota, const json_t *pod, char *out, size_t len);

/* The hard name's value in milli-units from a quantity string or number;
 * -1 with err when it is not one. */
int quota_parse(const json_t *v, int64_t *milli, ty_error *err);

/* The text of milli-units of hard name key as kube-apiserver would write a
 * sum of them: memory and storage in the largest binary unit that divides
 * them ("100Mi"), the rest canonical (model/quantity.h: "500m", "4"). */
void quota_format(const char *key, int64_t milli, char *buf, size_t len);

/* The resource name a scheduler compares for hard name key (a pod's
 * request name: "cpu" for requests.cpu and cpu, "nvidia.com/gpu" for
 * requests.nvidia.com/gpu and nvidia.com/gpu, "pods" for pods and
 * count/pods), or NULL for names a gang's minResources do not carry
 * (limits.*, object counts, storage). Borrowed from key or static. */
const char *quota_key_request(const char *key);

/* Whether key is a name a quota may limit: a standard one (pods, services,
 * requests.cpu, limits.memory, ...), count/<resource>, requests.<name> or a
 * fully qualified extended name. */
bool quota_key_valid(const char *key);

/* Whether scope is one of the scopes the API takes, and whether it is one
 * that applies to pods' compute names (every one but BestEffort, which
 * takes only pods). */
bool quota_scope_known(const char *scope);
bool quota_scope_allows(const char *scope, const char *key);

/* Whether one scope selector requirement ({scopeName, operator, values},
 * as in spec.scopeSelector.matchExpressions) takes in pod, and whether a
 * scope of spec.scopes does (the scope with Exists). */
bool quota_scope_expr_matches(const json_t *expr, const json_t *pod);
bool quota_scope_matches(const char *scope, const json_t *pod);

#endif
