/* authz.h - authorization: may this user do what this request asks?
 * RBAC: rbac.authorization.k8s.io/v1 roles and bindings (kinds in
 * api/kind_rbac.c), kube-apiserver's semantics (docs/internals/authz.md).
 *
 * Requests never read the store: they read a compiled snapshot of every
 * role and binding, rebuilt when one changes (a watch of the four
 * resources, and at once after a write of one through the API, so a
 * client that creates a binding is allowed by it on its next request).
 * Readers share a read lock; a rebuild swaps the snapshot under the write
 * lock for a moment. */
#ifndef TY_SERVER_AUTHZ_H
#define TY_SERVER_AUTHZ_H

#include <jansson.h>
#include <stddef.h>

#include "api/registry.h"
#include "api/userinfo.h"
#include "base/error.h"
#include "server/reqattr.h"
#include "store/store.h"

typedef struct ty_authz ty_authz;

/* RBAC over store s (borrowed; must outlive the authorizer): bootstraps the
 * default roles and bindings (created when missing, reconciled when they
 * carry the autoupdate annotation), compiles the snapshot, starts the
 * watch that keeps it current and keeps the aggregated ClusterRoles'
 * rules written. NULL with err when the store refused a write or memory
 * ran out. */
ty_authz *authz_new(ty_store *s, ty_error *err);
void authz_free(ty_authz *z);

/* 1 when u may do a, 0 when not (reason, when not NULL, gets RBAC's
 * reason text for either answer, or ""; az_snapshot_allows in authz_int.h
 * says which). z NULL allows everything; u NULL (anonymous) is allowed
 * nothing. */
int authz_check(ty_authz *z, const ty_user *u, const reqattr *a, char *reason, size_t cap);

/* Rebuilds the snapshot from the store now (after a write of an RBAC
 * object through the API). */
void authz_refresh(ty_authz *z);
/* authz_refresh, then writes the aggregated ClusterRoles' computed rules
 * where the stored ones differ (the watch does this on every change). */
void authz_sync(ty_authz *z);

/* SelfSubjectRulesReview's status for u in namespace ns: {resourceRules,
 * nonResourceRules, incomplete}. New reference; NULL when memory ran out
 * or z is NULL. */
json_t *authz_rules(ty_authz *z, const ty_user *u, const char *ns);

/* kube's privilege-escalation prevention, for a create or update of an
 * RBAC object obj (res: one of the four kinds; defaulted and valid) by u:
 * a Role or ClusterRole may grant only what u holds already (in its
 * namespace; cluster-wide for a ClusterRole) unless u may `escalate` it,
 * and an aggregationRule needs u to hold everything; a binding may name
 * only a role whose rules u holds where it binds, unless u may `bind`
 * that role. 0, or -1 with err (Forbidden, kube's wording). z NULL, u NULL
 * (no authentication) and other kinds: 0. */
int authz_admit_write(ty_authz *z, const ty_user *u, const api_resource *res,
                      const json_t *obj, ty_error *err);

/* kube-apiserver's 403 Status for u (name; NULL = system:anonymous) being
 * refused a, with RBAC's reason appended when not empty: message, reason
 * Forbidden, details {group, kind: the resource, name}. New reference. */
json_t *authz_forbidden_status(const char *user, const reqattr *a, const char *reason);

#endif
