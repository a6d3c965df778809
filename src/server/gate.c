/* gate.c - see gate.h. */
#include <string.h>

#include "server/authn.h"
#include "server/authz.h"
#include "server/gate.h"

/* What an anonymous request may reach: the health checks and the version, as
 * kube-apiserver's system:public-info-viewer role allows. */
static bool public_path(const char *path)
{
    static const char *const open[] = {"/healthz", "/livez", "/readyz", "/version"};
    for (size_t i = 0; i < sizeof(open) / sizeof(open[0]); i++) {
        size_t n = strlen(open[i]);
        if (strncmp(path, open[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
            return true;
    }
    return false;
}

bool gate_authenticate(http_req *r, enum MHD_Result *ret)
{
    ty_authn *authn = server_authn(r->srv);
    ty_error err;

    r->authenticated = true;
    if (!authn)
        return true; /* no authentication configured (in-process tests) */
    ty_error_init(&err);
    if (authn_request(authn, r->conn, &r->user, &err) < 0) {
        *ret = http_send_error(r, &err, NULL, NULL);
        ty_error_clear(&err);
        return false;
    }
    /* Without an authorizer every authenticated request passes; an
     * anonymous one (--anonymous-auth) gets no more than no user at all. */
    if (!r->user ||
        (!server_authz(r->srv) && !userinfo_in_group(r->user, USERINFO_AUTHENTICATED))) {
        if (public_path(r->url))
            return true;
        ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        *ret = http_send_error(r, &err, NULL, NULL);
        ty_error_clear(&err);
        return false;
    }
    return true;
}

bool gate_check(http_req *r, enum MHD_Result *ret)
{
    ty_error err;
    char reason[256];

    reqattr_parse(&r->attr, r->method, r->url, http_query(r, "watch"));
    if (!server_authn(r->srv))
        return true; /* no authentication configured (in-process tests) */
    /* server.c authenticates as soon as the headers are in; a caller that
     * did not gets it done here */
    if (!r->authenticated && !gate_authenticate(r, ret))
        return false;
    if (!r->user)
        return true; /* a public path, anonymous */
    ty_error_init(&err);
    if (!authz_check(server_authz(r->srv), r->user, &r->attr, reason, sizeof(reason))) {
        ty_seterr(&err, TY_EFORBIDDEN, "forbidden%s%s", reason[0] ? ": " : "", reason);
        *ret = http_send_error(r, &err, NULL, NULL);
        ty_error_clear(&err);
        return false;
    }
    return true;
}

void gate_done(http_req *r)
{
    userinfo_free(r->user);
    r->user = NULL;
}
