/* gate.c - see gate.h. */
#include <string.h>

#include "server/audit_http.h"
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

bool gate_check(http_req *r, enum MHD_Result *ret)
{
    ty_authn *authn = server_authn(r->srv);
    ty_error err;
    char reason[256];

    reqattr_parse(&r->attr, r->method, r->url, http_query(r, "watch"));
    if (!authn)
        return true; /* no authentication configured (in-process tests) */
    ty_error_init(&err);
    if (authn_request(authn, r->conn, &r->user, &err) < 0) {
        *ret = http_send_error(r, &err, NULL, NULL);
        ty_error_clear(&err);
        return false;
    }
    if (!r->user) {
        if (public_path(r->attr.path))
            return true;
        ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        *ret = http_send_error(r, &err, NULL, NULL);
        ty_error_clear(&err);
        return false;
    }
    bool allowed = authz_check(server_authz(r->srv), r->user, &r->attr, reason, sizeof(reason));
    audit_http_authz(r, allowed, reason);
    if (!allowed) {
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
