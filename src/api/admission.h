/* admission.h - the admission rules that look at other objects than the
 * one being written (Volcano's queue rules; Pod Security and the namespaces'
 * uid blocks, api/podsecurity.h), apart from the HTTP path.
 *
 * A kind's own defaulting and validation (api_prepare) see only the object;
 * these rules also read what else exists (the queue a job names, a queue's
 * children and parents), through lookups their caller gives: the embedded
 * server over its store, a webhook in operator mode over its client. The
 * queue rules' messages are Volcano's admission webhook's. */
#ifndef TY_API_ADMISSION_H
#define TY_API_ADMISSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/registry.h"
#include "base/error.h"

/* What an admission rule may read. */
typedef struct api_lookup {
    /* The object's JSON (a new reference the caller decrefs; never change
     * it), or NULL when it does not exist. */
    json_t *(*get)(void *ctx, const api_resource *res, const char *ns, const char *name);
    /* How many objects of res (every namespace) filter accepts; 0 when that
     * cannot be told. filter must be quick and call nothing back. */
    size_t (*count)(void *ctx, const api_resource *res, bool (*filter)(const json_t *obj,
                                                                       void *arg),
                    void *arg);
    void *ctx;
    /* Optional (NULL: dropped): a warning for the client, which the HTTP API
     * sends as a Warning header; an annotation for the request's audit
     * event (Pod Security's audit mode). */
    void (*warn)(void *hook_ctx, const char *text);
    void (*annotate)(void *hook_ctx, const char *key, const char *value);
    void *hook_ctx;
} api_lookup;

typedef enum { API_ADMIT_CREATE, API_ADMIT_UPDATE, API_ADMIT_DELETE } api_admit_op;

/* The mutating rules for op on res, which fill what obj leaves out from what
 * else exists (e.g. a pod's user ids from its namespace). They run before
 * api_admit, on the object after defaulting and validation. 0, or -1 with
 * err. */
int api_admit_mutate(const api_lookup *lk, api_admit_op op, const api_resource *res,
                     json_t *obj, ty_error *err);

/* kube-apiserver's Priority admission of a pod being created
 * (priority_admit.c): spec.priority and preemptionPolicy from the
 * PriorityClass it names or the globalDefault one; Forbidden for a class
 * that does not exist or a priority that differs from the class's. Part
 * of api_admit_mutate. */
int priority_admit_pod(const api_lookup *lk, json_t *pod, ty_error *err);

/* Runs the rules for op on res: obj is the object after defaulting (create,
 * update: the result of the update) or the stored one (delete; NULL when it
 * is not there, which the delete itself answers). 0, or -1 with err (Forbidden
 * or Invalid, as Volcano answers). */
int api_admit(const api_lookup *lk, api_admit_op op, const api_resource *res,
              const json_t *obj, const char *name, ty_error *err);

/* Volcano's queue rules alone, the part of api_admit a webhook in front of
 * a cluster's API server runs (server/webhook.h: the cluster does Pod
 * Security and ResourceQuota itself). Arguments and answers as api_admit's;
 * lk needs get and count only, for Queues. */
int api_admit_queue(const api_lookup *lk, api_admit_op op, const api_resource *res,
                    const json_t *obj, const char *name, ty_error *err);

#endif
