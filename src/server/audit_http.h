/* audit_http.h - internal to src/server: where requests meet the audit log
 * (audit.h). server.c calls these at fixed points of a request's life:
 *   admit        audit_http_begin (the request's headers are in)
 *   http_queue   audit_http_header (the Audit-Id response header)
 *   http_send_*  audit_http_response (a failure's Status, or the body at
 *                level RequestResponse)
 *   gate.c       audit_http_authz (authorization's verdict)
 *   answered     audit_http_answered (before the gate's user is freed;
 *                streams log ResponseStarted here)
 *   completed    audit_http_complete (ResponseComplete; the record is freed)
 * Each is a no-op when the server has no audit log (r->audit NULL). */
#ifndef TY_SERVER_AUDIT_HTTP_H
#define TY_SERVER_AUDIT_HTTP_H

#include <stdbool.h>

#include "server/audit.h"
#include "server/http.h"

/* A record for a request just arrived, or NULL when nothing is audited. */
audit_rec *audit_http_begin(ty_server *srv, struct MHD_Connection *conn);
void audit_http_header(http_req *r, struct MHD_Response *resp);
void audit_http_response(http_req *r, unsigned status, const char *ctype, const char *buf,
                         size_t len);
void audit_http_authz(http_req *r, bool allowed, const char *reason);
/* After the answer is queued; r->user and r->attr as the gate left them
 * (attr empty: the gate never ran, the request was refused before it). */
void audit_http_answered(http_req *r);
/* The response is sent (or the connection is gone): the last event; drops
 * the record. */
void audit_http_complete(ty_server *srv, audit_rec *rec);

#endif
