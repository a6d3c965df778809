/* audit_http.c - see audit_http.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "server/audit_http.h"
#include "server/authn.h"

#define AUDIT_HEADER_MAX 4096 /* a User-Agent longer than this is cut */

audit_rec *audit_http_begin(ty_server *srv, struct MHD_Connection *conn)
{
    audit_rec *rec;
    const char *id;

    if (!server_audit(srv))
        return NULL;
    if (!(rec = audit_rec_new()))
        return NULL;
    /* A client may name its request (kube-apiserver's Audit-ID header);
     * only a sane one is taken. */
    id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Audit-ID");
    if (id && *id && strlen(id) <= AUDIT_ID_MAX) {
        bool ok = true;
        for (const char *p = id; *p && ok; p++)
            ok = *p > ' ' && *p < 0x7f && *p != '"' && *p != '\\';
        if (ok)
            snprintf(rec->id, sizeof(rec->id), "%s", id);
    }
    return rec;
}

void audit_http_header(http_req *r, struct MHD_Response *resp)
{
    if (r->audit)
        MHD_add_response_header(resp, "Audit-Id", r->audit->id);
}

void audit_http_authz(http_req *r, bool allowed, const char *reason)
{
    if (!r->audit)
        return;
    r->audit->authz = allowed ? 1 : -1;
    free(r->audit->authz_reason);
    r->audit->authz_reason = strdup(reason ? reason : "");
}

/* kube-apiserver's long-running requests: watches and the streaming
 * subresources. */
static bool long_running(const reqattr *a)
{
    static const char *const subs[] = {"attach", "exec", "proxy", "log", "portforward"};
    if (strcmp(a->verb, "watch") == 0 || strcmp(a->verb, "proxy") == 0)
        return true;
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (strcmp(a->subresource, subs[i]) == 0)
            return true;
    return false;
}

static ty_user *authenticate(http_req *r)
{
    struct ty_authn *an = server_authn(r->srv);
    ty_user *u = NULL;
    ty_error err;
    if (!an)
        return NULL;
    ty_error_init(&err);
    if (authn_request(an, r->conn, &u, &err) < 0)
        u = NULL;
    ty_error_clear(&err);
    return u;
}

/* kube-apiserver's name for a request without credentials. */
static ty_user *anonymous(void)
{
    ty_user *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    u->name = strdup("system:anonymous");
    u->groups = calloc(1, sizeof(char *));
    if (u->groups && (u->groups[0] = strdup("system:unauthenticated")))
        u->ngroups = 1;
    if (!u->name || !u->ngroups) {
        userinfo_free(u);
        return NULL;
    }
    return u;
}

/* Who asked, and whom they asked to be: when the gate let a request
 * impersonate someone (Impersonate-User, -Uid, -Group), r->user is that
 * someone and r->impersonator who authenticated; the event names the
 * authenticated user in "user" and the other in "impersonatedUser". */
static void who(http_req *r, audit_rec *rec)
{
    if (rec->code == 401 && !r->user) {
        rec->authn_failed = true;
        return; /* "user":{} */
    }
    if (r->impersonator) {
        rec->user = userinfo_dup(r->impersonator);
        rec->impersonated = userinfo_dup(r->user);
        return;
    }
    if (r->user)
        rec->user = userinfo_dup(r->user);
    else if (r->attr.verb[0] && server_authn(r->srv))
        rec->user = anonymous(); /* a public path, let through without credentials */
    else if (!r->attr.verb[0])
        rec->user = authenticate(r); /* refused before the gate: who it would have been */
}

typedef struct query_text {
    ty_buf b;
    bool any; /* a parameter is written: the next starts with '&' */
} query_text;

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    query_text *q = cls;
    (void)kind;
    ty_buf_puts(&q->b, q->any ? "&" : "?");
    q->any = true;
    /* as Go's url.QueryEscape, which kube-apiserver's requestURI shows */
    for (int part = 0; part < 2; part++) {
        const char *s = part ? value : key;
        if (part && !value)
            break;
        if (part)
            ty_buf_puts(&q->b, "=");
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
                ty_buf_append(&q->b, (const char *)p, 1);
            else if (*p == ' ')
                ty_buf_puts(&q->b, "+");
            else
                ty_buf_printf(&q->b, "%%%02X", *p);
        }
    }
    return MHD_YES;
}

static void fill_request(http_req *r, audit_rec *rec)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const char *ua = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "User-Agent");
    query_text uri = {.any = false};

    ty_buf_puts(&uri.b, r->url);
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_arg, &uri);
    rec->request_uri = ty_buf_steal(&uri.b, NULL);
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, rec->source_ip,
                      sizeof(rec->source_ip));
        else if (sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, rec->source_ip,
                      sizeof(rec->source_ip));
    }
    if (ua)
        rec->user_agent = strndup(ua, AUDIT_HEADER_MAX);
}

/* The request body, when the event needs it: for requestObject, and for a
 * create's or update's objectRef (the name a create gives). JSON and YAML
 * only; the writer thread parses it. */
static void keep_request_body(http_req *r, audit_rec *rec)
{
    const char *ct = r->content_type ? r->content_type : "";
    bool yaml = strstr(ct, "yaml") != NULL, json = strstr(ct, "json") != NULL;
    bool names = strcmp(rec->attr.verb, "create") == 0 || strcmp(rec->attr.verb, "update") == 0;

    if (!r->body || !r->body_len || (!yaml && !json))
        return;
    if (rec->d.level < AUDIT_LEVEL_REQUEST && !(names && rec->attr.resource_request))
        return;
    if (r->body_len > AUDIT_MAX_CAPTURE) {
        rec->truncated = true;
        return;
    }
    if ((rec->req_body = malloc(r->body_len + 1))) {
        memcpy(rec->req_body, r->body, r->body_len);
        rec->req_body[r->body_len] = '\0';
        rec->req_len = r->body_len;
        rec->req_yaml = yaml && !json;
    }
}

/* The policy's decision for r, once. The user it sees is the
 * authenticated one (kube-apiserver decides before impersonation). */
static void decide(http_req *r, audit_rec *rec)
{
    if (rec->decided)
        return;
    if (!r->attr.verb[0])
        reqattr_parse(&rec->attr, r->method, r->url, http_query(r, "watch"));
    else
        rec->attr = r->attr;
    rec->d = audit_decide(server_audit(r->srv), rec->user ? rec->user : r->user, &rec->attr);
    rec->decided = true;
}

void audit_http_response(http_req *r, unsigned status, const char *ctype, const char *buf,
                         size_t len)
{
    audit_rec *rec = r->audit;

    if (!rec || rec->resp_body || !ctype || strncmp(ctype, "application/json", 16) != 0)
        return;
    if (status < 400) {
        /* only at RequestResponse; the gate has run (nothing succeeds
         * before it), so the decision can be made now */
        if (!r->attr.verb[0])
            return;
        decide(r, rec);
        if (rec->d.level < AUDIT_LEVEL_REQUEST_RESPONSE)
            return;
    }
    if (len > AUDIT_MAX_CAPTURE) {
        rec->truncated = true;
        return;
    }
    if ((rec->resp_body = malloc(len + 1))) {
        memcpy(rec->resp_body, buf, len);
        rec->resp_body[len] = '\0';
        rec->resp_len = len;
    }
}

void audit_http_answered(http_req *r)
{
    audit_rec *rec = r->audit;
    ty_audit *a = server_audit(r->srv);

    if (!rec || !a || rec->answered || !r->status)
        return;
    rec->answered = true;
    rec->code = r->status;
    /* A CORS preflight is answered before kube-apiserver's audit sees it. */
    if (strcmp(r->method, "OPTIONS") == 0 && r->cors_origin && r->status == 204) {
        rec->d.level = AUDIT_LEVEL_NONE;
        rec->decided = true;
        return;
    }
    who(r, rec);
    rec->decided = false; /* decide again with the user who() settled on */
    decide(r, rec);
    if (rec->d.level == AUDIT_LEVEL_NONE)
        return;
    fill_request(r, rec);
    keep_request_body(r, rec);
    rec->long_running = long_running(&rec->attr);
    if (rec->authn_failed) {
        audit_emit(a, rec, AUDIT_STAGE_RESPONSE_STARTED);
    } else if (rec->long_running) {
        audit_emit(a, rec, AUDIT_STAGE_REQUEST_RECEIVED);
        audit_emit(a, rec, AUDIT_STAGE_RESPONSE_STARTED);
    }
}

void audit_http_complete(ty_server *srv, audit_rec *rec)
{
    ty_audit *a = server_audit(srv);

    if (!rec)
        return;
    if (a && rec->answered && !rec->authn_failed && rec->d.level != AUDIT_LEVEL_NONE) {
        if (!rec->long_running)
            audit_emit(a, rec, AUDIT_STAGE_REQUEST_RECEIVED);
        audit_emit(a, rec, AUDIT_STAGE_RESPONSE_COMPLETE);
    }
    audit_rec_unref(rec);
}
