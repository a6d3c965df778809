/* authz.h - authorization: may this user do what this request asks?
 * (RBAC: rbac.authorization.k8s.io/v1 roles and bindings.) */
#ifndef TY_SERVER_AUTHZ_H
#define TY_SERVER_AUTHZ_H

#include <stddef.h>

#include "api/userinfo.h"
#include "server/reqattr.h"

typedef struct ty_authz ty_authz;

/* 1 when u may do a, 0 when not (reason, when not NULL, gets kube-apiserver's
 * reason text or ""). z NULL allows everything. */
int authz_check(ty_authz *z, const ty_user *u, const reqattr *a, char *reason, size_t cap);

#endif
