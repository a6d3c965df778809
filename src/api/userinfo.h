/* userinfo.h - who made a request: Kubernetes' user.Info (name, uid, groups).
 *
 * Authentication (server/authn) makes one per request; authorization
 * (server/authz), audit and admission read it. A ty_user owns its strings. */
#ifndef TY_API_USERINFO_H
#define TY_API_USERINFO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define USERINFO_MAX_GROUPS 64

/* The group every authenticated user is in, and kube-apiserver's
 * all-powerful group. */
#define USERINFO_AUTHENTICATED "system:authenticated"
#define USERINFO_MASTERS "system:masters"
#define USERINFO_ANONYMOUS "system:anonymous"
#define USERINFO_UNAUTHENTICATED "system:unauthenticated"

typedef struct ty_user {
    char *name;
    char *uid;                /* may be NULL */
    char **groups;            /* ngroups entries */
    size_t ngroups;
} ty_user;

/* A new user (copies the strings; groups may be NULL). NULL when memory ran
 * out. system:authenticated is added when absent, except to
 * system:anonymous and to a user already in system:unauthenticated (as
 * kube-apiserver adds it). */
ty_user *userinfo_new(const char *name, const char *uid, const char *const *groups,
                      size_t ngroups);
ty_user *userinfo_dup(const ty_user *u);
void userinfo_free(ty_user *u);
bool userinfo_in_group(const ty_user *u, const char *group);
/* {"username":…, "uid":…, "groups":[…]} as authentication.k8s.io's UserInfo.
 * New reference; NULL when memory ran out. */
json_t *userinfo_to_json(const ty_user *u);

#endif
