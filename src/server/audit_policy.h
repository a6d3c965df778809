/* audit_policy.h - kube-apiserver's audit policy (audit.k8s.io/v1 Policy,
 * --audit-policy-file): which requests are audited, at which level, and
 * which stages are left out.
 *
 * Rules are tried in order and the first that matches decides; a request no
 * rule matches is not audited (level None), as kube-apiserver. Without a
 * policy file Trainyard audits everything at Metadata without the
 * RequestReceived stage (audit_policy_default): one line per request. */
#ifndef TY_SERVER_AUDIT_POLICY_H
#define TY_SERVER_AUDIT_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "api/userinfo.h"
#include "base/error.h"
#include "server/reqattr.h"

typedef enum {
    AUDIT_LEVEL_NONE,
    AUDIT_LEVEL_METADATA,        /* who, what, when, the outcome */
    AUDIT_LEVEL_REQUEST,         /* + the request body (requestObject) */
    AUDIT_LEVEL_REQUEST_RESPONSE /* + the response body (responseObject) */
} audit_level;

/* Stages as bits (omitStages). */
typedef enum {
    AUDIT_STAGE_REQUEST_RECEIVED = 1u << 0,
    AUDIT_STAGE_RESPONSE_STARTED = 1u << 1,
    AUDIT_STAGE_RESPONSE_COMPLETE = 1u << 2,
    AUDIT_STAGE_PANIC = 1u << 3,
} audit_stage;

#define AUDIT_POLICY_MAX_BYTES (1u << 20) /* a policy file larger than this is refused */

/* What the policy says about one request. */
typedef struct audit_decision {
    audit_level level;
    unsigned omit_stages;      /* audit_stage bits: the policy's and the rule's */
    bool omit_managed_fields;  /* strip metadata.managedFields from the bodies */
} audit_decision;

typedef struct audit_policy audit_policy;

/* Parses a Policy (YAML or JSON). source names it in errors. NULL with
 * TY_EBADREQUEST and "<source>: rules[2].level: Unsupported value: ..." on
 * any problem: the server must not start with a policy it misread. */
audit_policy *audit_policy_parse(const char *text, size_t len, const char *source,
                                 ty_error *err);
/* audit_policy_parse of a file's contents. */
audit_policy *audit_policy_load(const char *path, ty_error *err);
/* Metadata for every request, RequestReceived omitted. NULL when memory ran out. */
audit_policy *audit_policy_default(void);
void audit_policy_free(audit_policy *p);

/* The decision for a request by u (NULL: not authenticated, which only rules
 * without users/userGroups match) asking a. */
audit_decision audit_policy_eval(const audit_policy *p, const ty_user *u, const reqattr *a);

/* "None", "Metadata", "Request", "RequestResponse". */
const char *audit_level_name(audit_level l);
/* "RequestReceived", ... for one stage bit. */
const char *audit_stage_name(audit_stage s);

#endif
