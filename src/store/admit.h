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

/* store_admit with the request's hooks (api_lookup's warn and annotate,
 * either may be NULL, called with ctx): the HTTP API's Warning headers and
 * audit annotations. */
int store_admit_hooked(ty_store *s, api_admit_op op, const api_resource *res, json_t *obj,
                       const char *name, void (*warn)(void *ctx, const char *text),
                       void (*annotate)(void *ctx, const char *key, const char *value),
                       void *ctx, ty_error *err);

/* kube-apiserver's NamespaceLifecycle for a create of res in ns: a
 * namespaced object needs its namespace to exist (404) and not to be
 * deleted (403, cause NamespaceTerminating at metadata.namespace). 0 for a
 * cluster-scoped res. name: the object's, NULL or "" under generateName
 * (the message then names none). 0, or -1 with err. */
int store_admit_namespace(ty_store *s, const api_resource *res, const char *ns,
                          const char *name, ty_error *err);

/* Gives every namespace of s without an id block (nsrange.h) one: those
 * made before blocks existed, and the ones the store seeds. 0, or -1 with
 * err. */
int store_admit_bootstrap(ty_store *s, ty_error *err);

#endif
