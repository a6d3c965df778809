/* quota_limited.h - ResourceQuota admission's limited resources
 * (kube-apiserver's ResourceQuotaConfiguration.limitedResources): a create
 * of a limited resource that matches one of its matchScopes, or uses a
 * resource name containing one of its matchContains, is admitted only in a
 * namespace whose quotas cover it, refused (403) otherwise with
 * kube-apiserver's words:
 *   pods "p" is forbidden: insufficient quota to match these scopes:
 *     [{PriorityClass In [system-node-critical system-cluster-critical]}]
 *   pods "p" is forbidden: insufficient quota to consume: requests.nvidia.com/gpu
 * A scope is covered by a quota of the namespace with a scope of the same
 * name (spec.scopeSelector, or spec.scopes) that matches the object; a
 * resource name by a quota that matches the object and limits that name.
 *
 * The default, without --admission-control-config-file, limits pods of the
 * two system priority classes (GKE's setting; kube-apiserver's own default
 * limits nothing): a tenant who names system-cluster-critical would
 * otherwise preempt everyone's pods and be preempted by none. The store
 * seeds kube-system with a quota that covers them (store/open.c), and an
 * admin allows another namespace by making one there (tenants cannot write
 * quotas). A configuration file replaces the default, an empty list
 * included (kube-apiserver's behaviour; cli/admission_config.h). */
#ifndef TY_API_QUOTA_LIMITED_H
#define TY_API_QUOTA_LIMITED_H

#include <jansson.h>
#include <stddef.h>

#include "api/admission.h"
#include "base/error.h"

/* Bounds on a configuration: entries, and scopes, names or values in each. */
#define QUOTA_LIMITED_MAX 64

/* Sets the limited resources to limited (a limitedResources array, checked
 * and copied; NULL: the default). -1 with err naming the field
 * (limitedResources[0].matchScopes[1].operator: ...); nothing changes then. */
int quota_limited_set(const json_t *limited, ty_error *err);

/* Checks a create of obj (res) against the limited resources, given its
 * namespace's quotas q[0..n). 0, or -1 with err (TY_EFORBIDDEN). */
int quota_limited_check(const api_resource *res, const json_t *obj, json_t *const *q, size_t n,
                        ty_error *err);

#endif
