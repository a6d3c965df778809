/* authn.h - authentication: who a request comes from.
 *
 * Kubernetes' authenticators, in kube-apiserver's order: a TLS client
 * certificate (--client-ca-file: CN = user, O = groups; the TLS layer
 * holds the CA, this module asks it to verify), then a bearer token from
 * the token files (kube-apiserver's --token-auth-file CSV:
 * token,user,uid,"group1,group2"; here also the data directory's
 * tokens.csv, which holds the admin credential). A request with no
 * credentials is anonymous: system:anonymous (group
 * system:unauthenticated) with --anonymous-auth, else no user at all (the
 * gate answers 401 except on public paths). Credentials that name nobody
 * are refused (401) even where an anonymous request would pass.
 *
 * Tokens live in a hash table (keyed by their SHA-256): a lookup costs the
 * same with ten users or ten thousand. The token files are looked at once
 * a second by a thread of their own and read again when they change (a
 * file that no longer parses is logged and the previous table kept), so
 * that no request ever waits on the disk. */
#ifndef TY_SERVER_AUTHN_H
#define TY_SERVER_AUTHN_H

#include <microhttpd.h>
#include <stdbool.h>

#include "api/userinfo.h"
#include "base/error.h"

typedef struct ty_authn ty_authn;

#define AUTHN_ANONYMOUS_USER "system:anonymous"
#define AUTHN_UNAUTHENTICATED "system:unauthenticated"

typedef struct authn_opts {
    const char *token_auth_file;  /* --token-auth-file; NULL = none */
    const char *admin_token_file; /* <data-dir>/tokens.csv; NULL = none */
    bool client_certs;            /* --client-ca-file given (the TLS layer has it) */
    bool anonymous;               /* --anonymous-auth */
    int reload_ms;                /* how often the token files are looked at:
                                     0 = every second, < 0 = never */
} authn_opts;

/* Reads the configuration; a malformed token file fails with its line
 * named (file:line: why). */
ty_authn *authn_new(const authn_opts *opts, ty_error *err);
void authn_free(ty_authn *a);

/* The user the request's credentials name. 0 with *user set (caller
 * frees), or *user NULL when the request carries no credentials and
 * anonymous requests are not allowed; -1 with TY_EUNAUTH when it carries
 * credentials that name nobody. */
int authn_request(ty_authn *a, struct MHD_Connection *conn, ty_user **user, ty_error *err);

/* The user a bearer token names: 0 with *user set (caller frees), -1 with
 * TY_EUNAUTH when it names nobody. */
int authn_token(ty_authn *a, const char *token, ty_user **user, ty_error *err);

/* Reads the token files again now (what the reload thread does when they
 * change). -1 with err when one does not parse; the table is then kept. */
int authn_reload(ty_authn *a, ty_error *err);

/* The user a client certificate (DER) names: CN = name, each O = a group.
 * -1 with TY_EUNAUTH when it has no CN or does not parse. Does not verify
 * the certificate: the TLS layer does (authn_request). */
int authn_cert_user(const void *der, size_t len, ty_user **user, ty_error *err);

/* What one connection's client certificate came to, worked out at its
 * first request and kept for the rest (a TLS connection's peer cannot
 * change). The server makes one per TLS connection when client
 * certificates are on (its socket context) and frees it at the close. */
typedef struct authn_conn authn_conn;
authn_conn *authn_conn_new(void);
void authn_conn_free(authn_conn *ac);

#endif
