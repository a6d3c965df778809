/* progress.h - internal to src/server: the TrainJob progress endpoint of
 * Kubeflow Trainer (KEP-2779), served by the API server itself.
 *
 * A training script POSTs {"trainerStatus": {...}} to
 *   /apis/trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/NAME/status
 * (upstream's path; a POST there is no Kubernetes verb, so it takes nothing
 * from the API) with the bearer token of that job: the random token the
 * trainer controller put in the Secret `NAME-progress-token` (data key
 * `token`), which the job's pods mount (controller/trainer_progress.h). The
 * token is no user: the authenticator never sees it, the endpoint compares
 * it, in constant time, with the Secret of the TrainJob the URL names, a
 * Secret that must be controlled by that TrainJob (its uid). So a job's
 * token writes that job's status.trainerStatus and nothing else.
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

/* The checks of a body (borrowed), apart from HTTP: 0 with *out (caller
 * owns) the trainerStatus to store (lastUpdatedTime now when absent), or -1
 * with err TY_EINVALID, a cause per bad field (its path). For unit tests. */
int progress_parse_body(const char *body, size_t len, json_t **out, ty_error *err);

/* The admission rule above for a Secret being written over the API by u
 * (NULL: no authentication configured) : obj the result, old the stored
 * object (NULL on create). 0, or -1 with err TY_EFORBIDDEN. Any other
 * resource: 0. */
int progress_admit_secret(const ty_user *u, const api_resource *res, const json_t *obj,
                          const json_t *old, ty_error *err);

#endif
