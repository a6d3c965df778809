/* gate.c - see gate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* ---- impersonation (kube-apiserver's Impersonate-* headers) -------------- */

#define SA_PREFIX "system:serviceaccount:"

typedef struct imp_headers {
    const char *user, *uid;
    const char *groups[USERINFO_MAX_GROUPS];
    size_t ngroups;
    bool too_many, extra;
} imp_headers;

static enum MHD_Result imp_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    imp_headers *h = cls;

    (void)kind;
    if (!value)
        return MHD_YES;
    if (strcasecmp(key, "Impersonate-User") == 0) {
        h->user = value;
    } else if (strcasecmp(key, "Impersonate-Uid") == 0) {
        h->uid = value;
    } else if (strcasecmp(key, "Impersonate-Group") == 0) {
        if (h->ngroups < USERINFO_MAX_GROUPS)
            h->groups[h->ngroups++] = value;
        else
            h->too_many = true;
    } else if (strncasecmp(key, "Impersonate-Extra-", 18) == 0) {
        h->extra = true;
    }
    return MHD_YES;
}

static void set_field(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", strlen(src) < cap ? src : "");
}

/* The attributes of "may r->user impersonate this?": verb impersonate on
 * users / groups / uids (authentication.k8s.io) / serviceaccounts (in their
 * namespace), named by the impersonated value. */
static void imp_attr(reqattr *a, const char *resource, const char *group, const char *ns,
                     const char *name)
{
    memset(a, 0, sizeof(*a));
    a->resource_request = true;
    set_field(a->verb, sizeof(a->verb), "impersonate");
    set_field(a->resource, sizeof(a->resource), resource);
    set_field(a->api_group, sizeof(a->api_group), group);
    set_field(a->ns, sizeof(a->ns), ns);
    set_field(a->name, sizeof(a->name), name);
}

static bool imp_denied(http_req *r, const reqattr *a, enum MHD_Result *ret)
{
    char reason[256];

    if (authz_check(server_authz(r->srv), r->user, a, NULL, 0) ||
        authz_check(server_authz(r->srv), r->user, a, reason, sizeof(reason)))
        return false;
    *ret = http_send_json(r, 403, authz_forbidden_status(r->user->name, a, reason));
    return true;
}

static bool imp_error(http_req *r, ty_errcode code, const char *msg, enum MHD_Result *ret)
{
    ty_error err;

    ty_error_init(&err);
    ty_seterr(&err, code, "%s", msg);
    *ret = http_send_error(r, &err, NULL, NULL);
    ty_error_clear(&err);
    return false;
}

/* Replaces r->user by the impersonated user when the headers ask for one and
 * the real user may; true to go on, false when answered (*ret). */
static bool impersonate(http_req *r, enum MHD_Result *ret)
{
    imp_headers h = {0};
    reqattr a;
    char ns[256] = "";
    const char *groups[USERINFO_MAX_GROUPS + 2];
    size_t ng = 0;
    ty_user *nu;

    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, imp_header, &h);
    if (!h.user && !h.ngroups && !h.uid && !h.extra)
        return true;
    if (h.too_many)
        return imp_error(r, TY_EBADREQUEST, "too many Impersonate-Group headers", ret);
    if (!h.user || !*h.user)
        return imp_error(r, TY_EINTERNAL, "Internal error occurred: requested impersonation "
                         "of groups, a uid or extras without impersonating a user", ret);
    if (strncmp(h.user, SA_PREFIX, sizeof(SA_PREFIX) - 1) == 0) {
        /* system:serviceaccount:<ns>:<name> */
        const char *rest = h.user + sizeof(SA_PREFIX) - 1, *colon = strchr(rest, ':');
        if (!colon || colon == rest || !colon[1] || (size_t)(colon - rest) >= sizeof(ns))
            return imp_error(r, TY_EBADREQUEST, "invalid service account name", ret);
        snprintf(ns, sizeof(ns), "%.*s", (int)(colon - rest), rest);
        imp_attr(&a, "serviceaccounts", "", ns, colon + 1);
    } else {
        imp_attr(&a, "users", "", "", h.user);
    }
    if (imp_denied(r, &a, ret))
        return false;
    for (size_t i = 0; i < h.ngroups; i++) {
        imp_attr(&a, "groups", "", "", h.groups[i]);
        if (imp_denied(r, &a, ret))
            return false;
        groups[ng++] = h.groups[i];
    }
    if (h.extra)
        return imp_error(r, TY_EBADREQUEST, "Impersonate-Extra-* headers are not supported",
                         ret);
    if (h.uid) {
        imp_attr(&a, "uids", "authentication.k8s.io", "", h.uid);
        if (imp_denied(r, &a, ret))
            return false;
    }
    char sa_ns_group[300];
    if (ns[0]) {
        snprintf(sa_ns_group, sizeof(sa_ns_group), "system:serviceaccounts:%s", ns);
        groups[ng++] = "system:serviceaccounts";
        groups[ng++] = sa_ns_group;
    }
    if (!(nu = userinfo_new(h.user, h.uid, groups, ng)))
        return imp_error(r, TY_EINTERNAL, "out of memory", ret);
    r->impersonator = r->user;
    r->user = nu;
    return true;
}

/* ---- the gate ------------------------------------------------------------ */

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
    if (!impersonate(r, ret))
        return false;
    /* the reason is only wanted for a refusal: asked again then (an allow's
     * would cost a formatted string on every request) */
    if (!authz_check(server_authz(r->srv), r->user, &r->attr, NULL, 0) &&
        !authz_check(server_authz(r->srv), r->user, &r->attr, reason, sizeof(reason))) {
        audit_http_authz(r, false, reason);
        *ret = http_send_json(r, 403, authz_forbidden_status(r->user->name, &r->attr, reason));
        return false;
    }
    audit_http_authz(r, true, "");
    return true;
}

/* A write of a role or binding that succeeded is seen by the writer's next
 * request: the snapshot is rebuilt before the answer leaves (the watch
 * would get there too, a moment later). */
static void refresh_after_rbac_write(http_req *r)
{
    const char *v = r->attr.verb;

    if (!r->attr.resource_request || r->status < 200 || r->status >= 300 ||
        strcmp(r->attr.api_group, "rbac.authorization.k8s.io") != 0)
        return;
    if (strcmp(v, "create") == 0 || strcmp(v, "update") == 0 || strcmp(v, "patch") == 0 ||
        strcmp(v, "delete") == 0 || strcmp(v, "deletecollection") == 0)
        authz_refresh(server_authz(r->srv));
}

void gate_done(http_req *r)
{
    refresh_after_rbac_write(r);
    userinfo_free(r->user);
    userinfo_free(r->impersonator);
    r->user = NULL;
    r->impersonator = NULL;
}
