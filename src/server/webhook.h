/* webhook.h - Trainyard's admission as a Kubernetes admission webhook, for
 * operator mode (docs/internals/webhook.md).
 *
 * On a cluster the custom kinds (the Kubeflow jobs, MSJob, Volcano's Job,
 * Queue, PodGroup, ...) are CRDs, and kube-apiserver knows nothing of their
 * defaulting and validation. It sends each write of them, as an
 * admission.k8s.io/v1 AdmissionReview, to:
 *   /mutate   the kind's defaulting (api_resource.apply_defaults) and the
 *             job creator's annotation (server/creator.h), answered as an
 *             RFC 6902 patch from the object sent to the defaulted one;
 *   /validate the same validation as Trainyard's API server (api_prepare,
 *             with oldObject for the immutable fields on UPDATE) and
 *             Volcano's queue rules (api_admit_queue), refused with the
 *             Status that server answers: code 422 Invalid with the same
 *             message and causes, or 403 Forbidden with Volcano's words.
 * Built-in kinds, kinds not in the registry and subresources are allowed
 * untouched; so is every DELETE but a Queue's (Volcano's delete rules) and
 * every CONNECT. Nothing here writes anywhere: a dryRun request is answered
 * as any other.
 *
 * The answers are JSON the caller sends with the HTTP status given:
 *   200: an AdmissionReview whose apiVersion and kind are the request's
 *        (admission.k8s.io/v1 or v1beta1) and whose response echoes
 *        request.uid. A review that parses but is malformed (no kind, an
 *        object that is not an object, ...) is answered so, with allowed
 *        false and a Status of code 400, when its uid can be read;
 *   400: a metav1.Status, when the body is not JSON or has no uid;
 *   413: a metav1.Status, when the body is over WEBHOOK_MAX_BODY;
 *   404, 405: a metav1.Status (webhook_handle, the listener).
 * Every function may be called from any thread at once. */
#ifndef TY_SERVER_WEBHOOK_H
#define TY_SERVER_WEBHOOK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "api/admission.h"
#include "base/error.h"

/* The largest AdmissionReview read: kube-apiserver's request body limit. */
#define WEBHOOK_MAX_BODY (3u * 1024 * 1024)

/* /mutate: body[0..len) (need not be NUL-terminated) in, the answer out
 * (a new reference the caller decrefs) with its HTTP status in *status.
 * NULL only when memory ran out (*status 500). */
json_t *webhook_mutate(const char *body, size_t len, unsigned *status);

/* /validate, as webhook_mutate. lk reads the Queues a job names and a
 * Queue's parents and children (borrowed for the call; the operator's:
 * client/kc_lookup.h kc_admit_lookup). NULL: no object exists (a Volcano
 * Job naming a queue other than `default` is refused). */
json_t *webhook_validate(const char *body, size_t len, const api_lookup *lk,
                         unsigned *status);

/* The endpoint for an HTTP path: "/mutate" or "/validate" (a query string
 * after '?' is ignored), else a 404 Status. For any libmicrohttpd handler
 * that has read the whole POST body. */
json_t *webhook_handle(const char *path, const char *body, size_t len, const api_lookup *lk,
                       unsigned *status);

/* ---- a listener of its own (webhook_serve.c) ---- */

typedef struct webhook_server webhook_server;

typedef struct webhook_serve_opts {
    const char *address;       /* IPv4 address to bind; NULL or "" = "0.0.0.0" */
    uint16_t port;             /* 0 = a free port (webhook_serve_port) */
    /* PEM files of the serving certificate (chain) and its key, both or
     * neither: kube-apiserver calls webhooks over HTTPS only, so neither
     * (plain HTTP) is for tests. Read once, at start. */
    const char *tls_cert_file;
    const char *tls_key_file;
    /* What /validate reads (copied; what it points to is borrowed and must
     * outlive the listener). NULL as webhook_validate's. */
    const api_lookup *lookup;
    /* Another POST path served beside them (operator mode: the TrainJob
     * progress endpoint, cli/op_progress.c), or NULL: a request whose
     * method and URL match goes to handle (any thread), which answers the
     * body to send (caller owns), its HTTP status and, for a 429, the
     * seconds of Retry-After (else 0). authorization is the request's
     * header (NULL when none). Borrowed; must outlive the listener. */
    const struct webhook_extra *extra;
} webhook_serve_opts;

typedef struct webhook_extra {
    bool (*match)(const char *method, const char *url);
    json_t *(*handle)(void *ctx, const char *url, const char *authorization, const char *body,
                      size_t len, unsigned *status, long long *retry_after);
    void *ctx;
} webhook_extra;

/* Serves POST /mutate and /validate on its own threads until
 * webhook_serve_stop. NULL with err when the files do not load or the
 * address cannot be bound. */
webhook_server *webhook_serve_start(const webhook_serve_opts *opts, ty_error *err);
/* The port it listens on. */
uint16_t webhook_serve_port(const webhook_server *ws);
/* Stops listening, waits for the requests in flight, frees ws (NULL: none). */
void webhook_serve_stop(webhook_server *ws);

#endif
