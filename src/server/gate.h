/* gate.h - internal to src/server: the security filters every request passes
 * before a handler sees it, in kube-apiserver's order: authentication (401),
 * [impersonation], authorization (403). Audit records the outcome. */
#ifndef TY_SERVER_GATE_H
#define TY_SERVER_GATE_H

#include <stdbool.h>

#include "server/http.h"

/* True when r may go on to its handler (r->user and r->attr are set); false
 * when the gate has answered it (*ret is the answer's result). */
bool gate_check(http_req *r, enum MHD_Result *ret);
/* Frees what gate_check set on r. */
void gate_done(http_req *r);

#endif
