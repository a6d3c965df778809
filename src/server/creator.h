/* creator.h - internal to src/server: who created a job, recorded by the
 * server where a user cannot forge it (docs/internals/authz.md).
 *
 * Every job kind (the Kubeflow kinds, MSJob, Volcano's Job, TrainJob) created through
 * the API gets the annotation trainyard.io/created-by = the requesting
 * user's name; a value the client sent is overwritten. An update or patch
 * cannot change or remove it: the stored value is put back, silently (as
 * kube-apiserver resets fields a client may not set). Controllers write
 * through the embedded client and never pass here. */
#ifndef TY_SERVER_CREATOR_H
#define TY_SERVER_CREATOR_H

#include <jansson.h>
#include <stdbool.h>

#include "api/registry.h"
#include "api/userinfo.h"

#define CREATOR_ANNOTATION "trainyard.io/created-by"

/* Whether res is a job kind (one that records its creator). */
bool creator_is_job_kind(const api_resource *res);
/* On create: obj's annotation set to u's name (u NULL: no authentication,
 * removed). Nothing for other kinds. */
void creator_stamp(const api_resource *res, json_t *obj, const ty_user *u);
/* On update: nw's annotation made what old's was (absent when absent). */
void creator_keep(const api_resource *res, json_t *nw, const json_t *old);

/* The annotations a job's controller keeps its state in: restarts so far
 * (trainyard.io/restarts, against backoffLimit or maxRestarts), a
 * TrainJob's runtime snapshot, node replacements and per-job retries. A
 * user who could write them could run a failing gang for ever or swap the
 * runtime a job follows; kube keeps such counts in status, which edit
 * cannot write. So a user outside system:masters (the operator writes them
 * over HTTP, as a master) sets none on create, and an update of theirs
 * leaves them as stored, silently, as creator_keep. u NULL (no
 * authentication): nobody to tell apart, nothing done. */
void creator_guard_state(const api_resource *res, json_t *nw, const json_t *old,
                         const ty_user *u);

#endif
