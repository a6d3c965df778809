/* admit.h - admission (api/admission.h) with lookups into the store: the
 * one place both write paths of the embedded control plane pass — the HTTP
 * API (src/server) and the embedded client (controllers' creates) — so that
 * wrapping a pod in a job does not skip a rule a pod would meet. */
#ifndef TY_STORE_ADMIT_H
#define TY_STORE_ADMIT_H

#include "api/admission.h"
#include "store/store.h"

/* Lookups reading s. */
void store_admit_lookup(ty_store *s, api_lookup *lk);

/* The admission chain for op on res: on a create, the mutating rules
 * (api_admit_mutate: they may change obj) then the validating ones
 * (api_admit); on an update or delete the validating ones. obj as api_admit
 * says. 0, or -1 with err. */
int store_admit(ty_store *s, api_admit_op op, const api_resource *res, json_t *obj,
                const char *name, ty_error *err);

#endif
