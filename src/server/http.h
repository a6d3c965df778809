/* http.h - internal to src/server: one request as the handlers see it, and
 * the ways to answer it. */
#ifndef TY_SERVER_HTTP_H
#define TY_SERVER_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/registry.h"
#include "base/error.h"
#include "api/userinfo.h"
#include "server/logsrc.h"
#include "server/reqattr.h"
#include "store/store.h"

#define HTTP_MAX_BODY (3u * 1024 * 1024) /* kube-apiserver's request size limit */
/* A body declared larger than HTTP_MAX_BODY but not than this is read and
 * dropped before the 413 goes (server.c: admit); a larger one is refused at
 * once. */
#define HTTP_DRAIN_MAX (16u * 1024 * 1024)
#define HTTP_MAX_SEGMENTS 10

typedef struct ty_server ty_server;

typedef struct http_req {
    ty_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    const char *url;            /* path only, no query */
    char *segs[HTTP_MAX_SEGMENTS];
    int nsegs;
    char *body;                 /* NUL-terminated; NULL when empty */
    size_t body_len;
    bool body_too_large;
    const char *content_type;   /* borrowed header, may be NULL */
    const char *accept;         /* borrowed header, may be NULL */
    const char *cors_origin;    /* an allowed other Origin to answer with CORS headers */
    char *warnings[16];         /* Warning headers to send, malloc'd */
    int nwarnings;
    ty_user *user;              /* who asks (gate.c); NULL = anonymous or no
                                   authentication configured */
    ty_user *impersonator;      /* who authenticated, when user is someone they
                                   impersonate (Impersonate-User; audit's user,
                                   user its impersonatedUser); else NULL */
    bool authenticated;         /* gate_authenticate ran */
    reqattr attr;               /* what it asks, as authorization sees it */
    unsigned status;            /* the HTTP status answered (http_queue) */
    struct audit_rec *audit;    /* the request's audit record (audit_http.h); NULL
                                   when nothing is audited */
} http_req;

/* A parsed resource path: /api/v1/... or /apis/<g>/<v>/... */
typedef struct res_path {
    const api_resource *res;
    const char *ns;             /* NULL when not namespace-scoped in the path */
    const char *name;           /* NULL for collection paths */
    const char *sub;            /* "status", "log", "binding" or NULL */
} res_path;

/* The store the server serves. */
ty_store *server_store(ty_server *srv);
const char *server_data_dir(ty_server *srv);
const logsrc *server_logsrc(ty_server *srv); /* NULL = none */
struct ty_authn *server_authn(ty_server *srv); /* NULL = none configured */
struct ty_authz *server_authz(ty_server *srv); /* NULL = allow all */
struct ty_audit *server_audit(ty_server *srv); /* NULL = no audit log */
/* True while the server is shutting down (watches end). */
bool server_stopping(ty_server *srv);

/* Query parameter or NULL. */
const char *http_query(http_req *r, const char *key);
/* "true"/"1" -> true. */
bool http_query_bool(http_req *r, const char *key);
/* Adds a Warning header ("299 - \"text\""). */
void http_add_warning(http_req *r, const char *text);

/* Answers with a JSON value (steals the reference). */
enum MHD_Result http_send_json(http_req *r, unsigned status, json_t *value);
/* Answers with ready text (copied). text NULL (memory ran out getting it)
 * closes the connection, as any allocation failure does. */
enum MHD_Result http_send_text(http_req *r, unsigned status, const char *ctype,
                               const char *text, size_t len);
/* Answers with a malloc'd buffer (ownership taken). */
enum MHD_Result http_send_buffer(http_req *r, unsigned status, const char *ctype, char *buf,
                                 size_t len);
/* Answers with a Kubernetes Status built from err (see status.c). */
enum MHD_Result http_send_error(http_req *r, const ty_error *err, const api_resource *res,
                                const char *name);
/* Queues a prepared response with the standard headers. */
enum MHD_Result http_queue(http_req *r, unsigned status, struct MHD_Response *resp);

/* status.c */
/* A metav1.Status for err. res/name fill details (may be NULL). Caller owns. */
json_t *status_from_error(const ty_error *err, const api_resource *res, const char *name);
json_t *status_success(const api_resource *res, const char *name, const char *uid);

/* discovery.c: /version /api /apis /openapi... Returns MHD_NO if the path is not
 * one of these (so the caller tries other routes); *handled tells. */
enum MHD_Result discovery_handle(http_req *r, bool *handled);

/* resource.c: every /api/v1/... and /apis/<g>/<v>/... resource path. */
enum MHD_Result resource_handle(http_req *r);
int resource_parse_path(http_req *r, res_path *p, ty_error *err);

/* watch.c: streams a watch for a collection path. */
enum MHD_Result watch_handle(http_req *r, const res_path *p);

/* podlog.c: GET pods/{name}/log. */
enum MHD_Result podlog_handle(http_req *r, const res_path *p);

/* Table output: true when the Accept header asks for meta.k8s.io Table. */
bool http_wants_table(http_req *r);

#endif
