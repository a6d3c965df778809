/* authz_int.h - internal to src/server: RBAC's compiled snapshot
 * (authz_rules.c), the default roles (authz_defaults.c) and the pieces the
 * review APIs share with the authorizer. authz.h is the public face. */
#ifndef TY_SERVER_AUTHZ_INT_H
#define TY_SERVER_AUTHZ_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/userinfo.h"
#include "base/error.h"
#include "server/reqattr.h"
#include "store/store.h"

#define AZ_RBAC_GROUP "rbac.authorization.k8s.io"
#define AZ_AUTOUPDATE "rbac.authorization.kubernetes.io/autoupdate"

/* An immutable, compiled view of every Role, ClusterRole and binding: what
 * authz_check reads on each request without touching the store. */
typedef struct az_snapshot az_snapshot;

/* The four lists (JSON arrays of the objects; borrowed) compiled. The
 * ClusterRoles' aggregated rules are computed here (az_aggregate), not
 * read from their .rules. NULL when memory ran out. */
az_snapshot *az_snapshot_build(const json_t *roles, const json_t *clusterroles,
                               const json_t *rolebindings, const json_t *clusterrolebindings);
void az_snapshot_free(az_snapshot *s);

/* 1 when the snapshot's rules let u do a, 0 when not; reason (may be NULL)
 * gets RBAC's reason text: on an allow the binding that allowed it (`RBAC:
 * allowed by RoleBinding "b/ns" of ClusterRole "edit" to User "alice"`),
 * on a denial "" or `RBAC: clusterrole.rbac.authorization.k8s.io "x" not
 * found`. system:masters is allowed everything, with no reason, as kube's
 * privileged-group authorizer answers before RBAC. */
int az_snapshot_allows(const az_snapshot *s, const ty_user *u, const reqattr *a, char *reason,
                       size_t cap);

/* What u may do in namespace ns ("" = cluster-wide only), as
 * SelfSubjectRulesReview's status: {resourceRules: [...], nonResourceRules:
 * [...], incomplete: false}. New reference; NULL when memory ran out. */
json_t *az_snapshot_rules(const az_snapshot *s, const ty_user *u, const char *ns);

/* A copy of the rules of ClusterRole name (cluster) or Role ns/name, as the
 * snapshot has them (aggregated ones computed); NULL when there is none. */
json_t *az_snapshot_role_rules(const az_snapshot *s, bool cluster, const char *ns,
                               const char *name);

struct ty_authz;
/* az_snapshot_role_rules on z's current snapshot. */
json_t *authz_role_rules(struct ty_authz *z, bool cluster, const char *ns, const char *name);

/* The rules each aggregated ClusterRole (one with aggregationRule) has when
 * its selectors are applied to the others, repeatedly until nothing changes
 * (an aggregated role may select another): {name: [rules]}. New reference;
 * clusterroles borrowed. */
json_t *az_aggregate(const json_t *clusterroles);

/* Whether one rule (a PolicyRule's JSON) allows a. */
bool az_rule_allows(const json_t *rule, const reqattr *a);

/* The default roles and bindings kube-apiserver bootstraps (cluster-admin,
 * admin, edit, view, system:basic-user, system:discovery,
 * system:public-info-viewer, the system:aggregate-to-* roles), their rules
 * generated from the registry: an array of objects, each with apiVersion
 * and kind. New reference. */
json_t *az_default_objects(void);

/* Creates the defaults that are missing from s; one that exists and carries
 * rbac.authorization.kubernetes.io/autoupdate: "true" gets back the rules,
 * subjects, labels and annotations the default has and it lacks. 0, or -1
 * with err when a write failed. */
int az_bootstrap(ty_store *s, ty_error *err);

/* kube-apiserver's 403 message for u being refused a: `pods is forbidden:
 * User "alice" cannot list resource "pods" in API group "" in the namespace
 * "team-b"`, `forbidden: User "x" cannot get path "/metrics"`, with ": " and
 * reason appended when reason is not empty. */
void az_forbidden_message(const char *user, const reqattr *a, const char *reason, char *buf,
                          size_t len);

#endif
