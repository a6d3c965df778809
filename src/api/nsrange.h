/* nsrange.h - each namespace's block of user and group ids, as OpenShift
 * records it: annotations openshift.io/sa.scc.uid-range and
 * openshift.io/sa.scc.supplemental-groups, "<start>/<size>".
 *
 * The server assigns a block when a namespace is created (what a client puts
 * there is replaced) and never lets an update change it; a pod that names no
 * user gets the block's first id (its effective uid and gid, and fsGroup),
 * and outside a privileged namespace a pod's runAsUser, runAsGroup, fsGroup
 * and supplementalGroups must lie in the block. A block is not handed out
 * again while its namespace exists. */
#ifndef TY_API_NSRANGE_H
#define TY_API_NSRANGE_H

#include <jansson.h>
#include <stdbool.h>

#include "api/admission.h"
#include "base/error.h"

#define NSRANGE_UID_ANNOTATION "openshift.io/sa.scc.uid-range"
#define NSRANGE_GROUPS_ANNOTATION "openshift.io/sa.scc.supplemental-groups"

/* Blocks of NSRANGE_SIZE ids from NSRANGE_BASE, NSRANGE_BLOCKS of them
 * (OpenShift's default: 1000000000-1999999999 in blocks of 10000). */
#define NSRANGE_BASE 1000000000LL
#define NSRANGE_SIZE 10000LL
#define NSRANGE_BLOCKS 100000

typedef struct nsrange {
    long long start, size;
} nsrange;

/* "<start>/<size>" (OpenShift's form). 0, or -1 when text is not one. */
int nsrange_parse(const char *text, nsrange *r);

/* The namespace's uid and group blocks (either out may be NULL). 0, or -1
 * when the annotation is missing or malformed. */
int nsrange_of(const json_t *ns, nsrange *uids, nsrange *groups);

/* Gives a new namespace (obj, changed in place) a free block, replacing any
 * range annotations the client wrote. Free: no namespace lk sees holds it,
 * nor has this process handed it out lately (creates in flight); the search
 * starts past the highest block in use, so a deleted namespace's ids are
 * not the next one's. Thread-safe. 0, or -1 with err when every block is
 * taken. */
int nsrange_assign(const api_lookup *lk, json_t *obj, ty_error *err);

/* The update rule: the range annotations of old stay as they are in obj.
 * Adds a cause (metadata.annotations[<key>]) per change; returns how many. */
int nsrange_check_update(const json_t *obj, const json_t *old, ty_error *err);

/* The mutating rule for a pod created in ns: a pod-level runAsUser,
 * runAsGroup and fsGroup from the block where the pod gives none. */
void nsrange_default_pod(const json_t *ns, json_t *pod);

/* The validating rule: outside a privileged namespace (enforce_privileged
 * false) every runAsUser lies in the uid block and every runAsGroup,
 * fsGroup and supplementalGroups entry in the group block; everywhere, a
 * container whose runAsNonRoot is true does not run as uid 0. Adds a cause
 * per violation (`spec.containers[0].securityContext.runAsUser: Invalid
 * value: 0: must be in the ranges: [1000000000, 1000009999]`); returns how
 * many. */
int nsrange_check_pod(const json_t *ns, const json_t *pod, bool enforce_privileged,
                      ty_error *err);

#endif
