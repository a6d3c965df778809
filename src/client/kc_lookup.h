/* kc_lookup.h - admission's lookups (api/admission.h: api_lookup) through
 * the client interface: how a webhook in operator mode (server/webhook.h)
 * reads the Queues a job names over the operator's client, as the embedded
 * server reads its store (store/admit.h). */
#ifndef TY_CLIENT_KC_LOOKUP_H
#define TY_CLIENT_KC_LOOKUP_H

#include "api/admission.h"
#include "client/kc.h"

/* Fills *lk with get and count reading c (borrowed: it must outlive every
 * use of lk); no warn or annotate hooks. A read that fails for another
 * reason than NotFound counts as "not there" for get and as 0 for count,
 * and is logged: the rules then answer as for a missing queue. */
void kc_admit_lookup(ty_kc *c, api_lookup *lk);

#endif
