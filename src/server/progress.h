/* progress.h - internal to src/server: the TrainJob progress endpoint of
 * Kubeflow Trainer (KEP-2779), served by the API server itself.
 *
 * A training script POSTs {"trainerStatus": {...}} to
 *   /apis/trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/NAME/status
 * (upstream's path; a POST there is no Kubernetes verb, so it takes nothing
 * from the API) with the bearer token of that job: the token the trainer
 * controller put in the Secret `NAME-progress-token` (data key `token`),
 * which the job's pods mount (controller/trainer_progress.h), derived from
 * the job under the server's key (progress_set_key below). The token is
 * no user: the authenticator never sees it; the endpoint recomputes it, or
 * compares it with the Secret of the TrainJob the URL names, a Secret that
 * must be controlled by that TrainJob (its uid), in constant time. So a
 * job's token writes that job's status.trainerStatus and nothing else.
 *
 * A TrainJob's token Secret (named *-progress-token and controlled by a
 * TrainJob) is the controller's: writes through the API that would make one
 * (or change its data or owner) are refused for anyone but system:masters,
 * who may write any status anyway
 * (progress_admit_secret). Without that, a user allowed to create Secrets in
 * the namespace could plant a token of their own for a job they could not
 * otherwise touch.
 *
 * Answers: 200 with the TrainJob; 401 (a Status) for a missing or wrong
 * token, a job or Secret that is not there; 422 Invalid with field paths for
 * a body that is not a valid trainerStatus; 413 past 64 KiB; 429
 * TooManyRequests with Retry-After when the job had an update accepted less
 * than 5 s before. docs/trainer.md, "Progress". */
#ifndef TY_SERVER_PROGRESS_H
#define TY_SERVER_PROGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/registry.h"
#include "api/userinfo.h"
#include "base/error.h"
#include "server/http.h"

#define PROGRESS_SECRET_SUFFIX "-progress-token"
#define PROGRESS_TOKEN_KEY "token"
#define PROGRESS_BODY_MAX (64u * 1024)
#define PROGRESS_INTERVAL_MS 5000

/* Whether this request is one for the progress endpoint: the server skips
 * authentication for it (the endpoint does its own), not the guard. */
bool progress_path(const char *method, const char *url);
/* Answers it. */
enum MHD_Result progress_handle(http_req *r);

/* The parts a serving of the endpoint elsewhere uses (operator mode:
 * cli/op_progress.c, over the client interface, with derived tokens):
 * progress_parse_path: the namespace and name of a progress URL (each at
 *   most 253 characters); false when it is not one;
 * progress_bearer: the token of an Authorization header ("Bearer T"),
 *   copied; false when none or longer than len - 1;
 * progress_token_equal: in time that depends on the lengths only;
 * progress_derive_token: hex HMAC-SHA256 of "ns/name/uid" under key (0,
 *   or -1: out shorter than 65 bytes, the names too long);
 * progress_rate_take: 0, and the job's (uid's) clock restarted, or the
 *   milliseconds it must still wait (one update per PROGRESS_INTERVAL_MS,
 *   in this process); progress_rate_give_back: a write that failed gives
 *   the turn back;
 * progress_too_many: the 429 Status, details.retryAfterSeconds secs. */
bool progress_parse_path(const char *url, char *ns, size_t nslen, char *name, size_t namelen);
bool progress_bearer(const char *authorization, char *buf, size_t len);
bool progress_token_equal(const char *a, const char *b);
int progress_derive_token(const unsigned char *key, size_t keylen, const char *ns,
                          const char *name, const char *uid, char *out, size_t len);
int64_t progress_rate_take(const char *uid, int64_t now_ms);
void progress_rate_give_back(const char *uid);
json_t *progress_too_many(long long secs);
/* A mutate function (the store's, the client interface's) writing
 * status.trainerStatus of the TrainJob whose uid is arg's, TY_EUNAUTH for
 * any other object. */
typedef struct progress_write {
    const char *uid;
    const json_t *trainer_status;
} progress_write;
int progress_write_status(json_t *obj, void *arg, ty_error *err);

/* The checks of a body (borrowed), apart from HTTP: 0 with *out (caller
 * owns) the trainerStatus to store (lastUpdatedTime now when absent), or -1
 * with err TY_EINVALID, a cause per bad field (its path). For unit tests. */
int progress_parse_body(const char *body, size_t len, json_t **out, ty_error *err);

/* The embedded server's token key (DATA_DIR/progress.key, 32 random
 * bytes, mode 0600, made on the first start by cli/server_security.c and
 * set here before the server serves): with it a job's token is
 * progress_derive_token of the job under the key, which the trainer
 * controller writes into the Secret (progress_local_token is its
 * token_for: -1 without a key) and the endpoint recomputes, so that a
 * token Secret deleted while the job runs leaves its pods' tokens good and
 * is made again the same. A token compared with the Secret (one made
 * before the key, or by the admin) is still taken. */
#define PROGRESS_KEY_BYTES 32
void progress_set_key(const unsigned char *key);
int progress_local_token(const char *ns, const char *name, const char *uid, char *out,
                         size_t len);

/* The admission rule above for a Secret being written over the API by u
 * (NULL: no authentication configured) : obj the result, old the stored
 * object (NULL on create). 0, or -1 with err TY_EFORBIDDEN. Any other
 * resource: 0. */
int progress_admit_secret(const ty_user *u, const api_resource *res, const json_t *obj,
                          const json_t *old, ty_error *err);

#endif
