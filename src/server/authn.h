/* authn.h - authentication: who a request comes from.
 *
 * Kubernetes' authenticators: bearer tokens from a static token file
 * (kube-apiserver's --token-auth-file CSV: token,user,uid,"group1,group2"),
 * and (with TLS) client certificates. A request with no credentials is
 * anonymous; one with wrong credentials is refused (401) even where an
 * anonymous one would pass. */
#ifndef TY_SERVER_AUTHN_H
#define TY_SERVER_AUTHN_H

#include <microhttpd.h>

#include "api/userinfo.h"
#include "base/error.h"

typedef struct ty_authn ty_authn;

typedef struct authn_opts {
    const char *token_auth_file; /* NULL = no token file */
} authn_opts;

/* Reads the configuration; a malformed file fails with its line named. */
ty_authn *authn_new(const authn_opts *opts, ty_error *err);
void authn_free(ty_authn *a);

/* The user the request's credentials name. 0 with *user set (caller frees),
 * or *user NULL when the request carries no credentials; -1 with TY_EUNAUTH
 * when it carries credentials that name nobody. */
int authn_request(ty_authn *a, struct MHD_Connection *conn, ty_user **user, ty_error *err);

#endif
