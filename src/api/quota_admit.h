/* quota_admit.h - ResourceQuota admission: a create that would take a
 * namespace past one of its quotas' hard limits is refused (403) with
 * kube-apiserver's words:
 *   pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=2,
 *     used: requests.cpu=3, limited: requests.cpu=4
 *   pods "p" is forbidden: failed quota: q: must specify requests.cpu for: main
 *
 * Race-free against concurrent creates without a resourceVersion on the
 * quota (kube-apiserver charges the quota's status under its
 * resourceVersion): everything below happens under one lock. Each quota
 * has a count, its namespace's use at its last recount plus what was
 * admitted against it since, never below the truth while every create is
 * admitted (deletions only lower the truth): a create that fits it is
 * admitted at once. One that does not is recounted before it is refused:
 * what the store holds plus what was admitted and may not be stored yet
 * (an in-memory reservation per admitted object). A reservation ends when
 * a later recount finds its object stored (its usage is then in the
 * store's count; it is looked for before the recount lists, so that
 * nothing is missed in between), or after QUOTA_RESERVE_MS (an admitted
 * create that failed afterwards, a dry run). Only namespaces with a quota
 * pay: a recount lists the kind's objects, O(objects of that kind).
 *
 * So that every reservation has a key, an object with only generateName
 * in a namespace with a quota gets its name here (the mutating step), as
 * the store would give it. */
#ifndef TY_API_QUOTA_ADMIT_H
#define TY_API_QUOTA_ADMIT_H

#include "api/admission.h"

/* How long a reservation waits for its object to be stored. */
#define QUOTA_RESERVE_MS 15000

/* The mutating step for a create: names obj from its generateName when its
 * namespace has a quota. 0, or -1 with err (no random bytes). */
int quota_admit_mutate(const api_lookup *lk, const api_resource *res, json_t *obj,
                       ty_error *err);

/* The validating step for a create of obj (defaulted, named): 0 and the
 * object's usage reserved, or -1 with err (TY_EFORBIDDEN). */
int quota_admit(const api_lookup *lk, const api_resource *res, const json_t *obj,
                ty_error *err);

/* Drops every reservation (tests; a store opened again). */
void quota_admit_reset(void);

#endif
