/* authn_int.h - what authn.c and authn_x509.c share. Not for callers. */
#ifndef TY_SERVER_AUTHN_INT_H
#define TY_SERVER_AUTHN_INT_H

#include "server/authn.h"

enum {
    AUTHN_CERT_NONE, /* no client certificate (or not a TLS connection) */
    AUTHN_CERT_OK,   /* verified: *user set */
    AUTHN_CERT_BAD,  /* one that does not verify or names nobody: 401 */
    AUTHN_CERT_OOM,
};

/* The user the connection's client certificate names, verified against
 * the TLS layer's trust list (--client-ca-file) for client use; worked out
 * once per connection (its socket context, when the server made one). */
int authn_conn_cert(struct MHD_Connection *conn, ty_user **user);

#endif
