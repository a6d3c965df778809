/* gate.h - internal to src/server: the security filters every request passes
 * before a handler sees it, in kube-apiserver's order: authentication (401),
 * [impersonation], authorization (403). Audit records the outcome. */
#ifndef TY_SERVER_GATE_H
#define TY_SERVER_GATE_H

#include <stdbool.h>

#include "server/http.h"

/* Authentication alone, which needs only the headers (server.c runs it
 * before a byte of the body is read, as kube-apiserver authenticates before
 * its in-flight limit: a client without credentials holds nothing): true
 * with r->user set (NULL: anonymous on a public path) and r->authenticated;
 * false when it has answered 401 (*ret). */
bool gate_authenticate(http_req *r, enum MHD_Result *ret);
/* True when r may go on to its handler (r->user and r->attr are set); false
 * when the gate has answered it (*ret is the answer's result). Runs
 * gate_authenticate first unless r->authenticated. */
bool gate_check(http_req *r, enum MHD_Result *ret);
/* Frees what gate_check set on r. */
void gate_done(http_req *r);

#endif
