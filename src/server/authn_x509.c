/* authn_x509.c - client certificates: kube-apiserver's x509 authenticator
 * (CN = the user name, each O = a group), verified by GnuTLS against the
 * CA libmicrohttpd was given (--client-ca-file). */
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "server/authn_int.h"

#define DN_FIELD_MAX 1024

struct authn_conn {
    int state;    /* AUTHN_CERT_*, or -1 before the connection's first request */
    ty_user *user; /* when AUTHN_CERT_OK */
};

authn_conn *authn_conn_new(void)
{
    authn_conn *ac = calloc(1, sizeof(*ac));
    if (ac)
        ac->state = -1;
    return ac;
}

void authn_conn_free(authn_conn *ac)
{
    if (!ac)
        return;
    userinfo_free(ac->user);
    free(ac);
}

int authn_cert_user(const void *der, size_t len, ty_user **user, ty_error *err)
{
    gnutls_x509_crt_t crt;
    gnutls_datum_t d = {.data = (unsigned char *)der, .size = (unsigned)len};
    char cn[DN_FIELD_MAX];
    char *groups[USERINFO_MAX_GROUPS];
    size_t ngroups = 0, n = sizeof(cn);
    int rc = -1;

    *user = NULL;
    if (gnutls_x509_crt_init(&crt) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_DER) < 0) {
        ty_seterr(err, TY_EUNAUTH, "the client certificate does not parse");
        goto out;
    }
    if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &n) < 0 ||
        !cn[0]) {
        ty_seterr(err, TY_EUNAUTH, "the client certificate has no common name (the user)");
        goto out;
    }
    for (unsigned i = 0; ngroups < USERINFO_MAX_GROUPS; i++) {
        char o[DN_FIELD_MAX];
        size_t olen = sizeof(o);
        if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, 0, o,
                                          &olen) < 0)
            break;
        if (o[0] && !(groups[ngroups++] = strdup(o))) {
            ngroups--;
            ty_seterr(err, TY_EINTERNAL, "out of memory");
            goto out;
        }
    }
    if (!(*user = userinfo_new(cn, NULL, (const char *const *)groups, ngroups))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    rc = 0;
out:
    for (size_t i = 0; i < ngroups; i++)
        free(groups[i]);
    gnutls_x509_crt_deinit(crt);
    return rc;
}

/* The connection's certificate, verified: AUTHN_CERT_*. */
static int verify_peer(struct MHD_Connection *conn, ty_user **user)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t s = ci ? (gnutls_session_t)ci->tls_session : NULL;
    const gnutls_datum_t *certs;
    unsigned n = 0, status = 0;
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    ty_error err;
    int rc;

    if (!s || !(certs = gnutls_certificate_get_peers(s, &n)) || n == 0)
        return AUTHN_CERT_NONE;
    rc = gnutls_certificate_verify_peers(s, &purpose, 1, &status);
    if (rc < 0 || status != 0) {
        gnutls_datum_t why = {0};
        if (rc >= 0 && gnutls_certificate_verification_status_print(
                           status, GNUTLS_CRT_X509, &why, 0) == 0) {
            ty_debug("authn: a client certificate refused: %s", why.data);
            gnutls_free(why.data);
        }
        return AUTHN_CERT_BAD;
    }
    ty_error_init(&err);
    rc = authn_cert_user(certs[0].data, certs[0].size, user, &err);
    if (rc < 0)
        ty_debug("authn: a client certificate refused: %s", err.text);
    rc = rc == 0 ? AUTHN_CERT_OK : err.code == TY_EINTERNAL ? AUTHN_CERT_OOM : AUTHN_CERT_BAD;
    ty_error_clear(&err);
    return rc;
}

int authn_conn_cert(struct MHD_Connection *conn, ty_user **user)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    authn_conn *ac = ci ? ci->socket_context : NULL;
    int state;

    *user = NULL;
    if (!ac)
        return verify_peer(conn, user);
    if (ac->state < 0) {
        state = verify_peer(conn, &ac->user);
        if (state == AUTHN_CERT_OOM)
            return state; /* not kept: the next request tries again */
        ac->state = state;
    }
    if (ac->state == AUTHN_CERT_OK && !(*user = userinfo_dup(ac->user)))
        return AUTHN_CERT_OOM;
    return ac->state;
}
