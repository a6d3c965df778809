/* podsecurity.h - Pod Security admission: Kubernetes' Pod Security Standards
 * (levels privileged, baseline, restricted), chosen per namespace by its
 * pod-security.kubernetes.io/{enforce,warn,audit}[-version] labels.
 *
 * The checks and their messages are pod-security-admission's: a pod refused
 * reads `pods "x" is forbidden: violates PodSecurity "baseline:latest":
 * hostPath volumes (volume "data")`. Trainyard's one deviation: a namespace
 * without an enforce label is baseline (Kubernetes': privileged), and an
 * absent warn or audit label follows the enforce level. */
#ifndef TY_API_PODSECURITY_H
#define TY_API_PODSECURITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/admission.h"
#include "base/error.h"

#define PSA_LABEL_ENFORCE "pod-security.kubernetes.io/enforce"
#define PSA_LABEL_ENFORCE_VERSION "pod-security.kubernetes.io/enforce-version"
#define PSA_LABEL_WARN "pod-security.kubernetes.io/warn"
#define PSA_LABEL_WARN_VERSION "pod-security.kubernetes.io/warn-version"
#define PSA_LABEL_AUDIT "pod-security.kubernetes.io/audit"
#define PSA_LABEL_AUDIT_VERSION "pod-security.kubernetes.io/audit-version"
/* The audit annotation a violation of the audit level leaves on the request. */
#define PSA_AUDIT_ANNOTATION "pod-security.kubernetes.io/audit-violations"

typedef enum { PSA_PRIVILEGED, PSA_BASELINE, PSA_RESTRICTED } psa_level;

/* A level at a policy version: v1.<minor>, or latest (minor PSA_LATEST). */
#define PSA_LATEST (-1)
typedef struct psa_lv {
    psa_level level;
    int minor;
} psa_lv;

typedef struct psa_policy {
    psa_lv enforce, warn, audit;
} psa_policy;

/* The policy a namespace's labels (an object, or NULL) give. A label with a
 * bad value adds a cause to err (may be NULL; field
 * metadata.labels[<label>], kube's messages) and counts in the result; its
 * level then reads restricted for enforce and privileged for warn and audit,
 * its version latest, as upstream fails closed and open. Returns how many
 * labels were bad. */
int psa_policy_of(const json_t *labels, psa_policy *p, ty_error *err);

/* "baseline:latest", "restricted:v1.29". */
void psa_lv_text(psa_lv lv, char *buf, size_t len);

/* Evaluates a pod's metadata and spec (either may be NULL) at lv. true when
 * allowed; otherwise buf holds the violations as upstream writes them,
 * `host namespaces (hostNetwork=true), hostPath volumes (volume "data")`
 * (truncated to len). Borrowed arguments. */
bool psa_check(psa_lv lv, const json_t *meta, const json_t *spec, char *buf, size_t len);
/* As psa_check; details false leaves the parenthesised details out
 * (`host namespaces, hostPath volumes`), as upstream's ForbiddenReason. */
bool psa_check_ex(psa_lv lv, const json_t *meta, const json_t *spec, bool details, char *buf,
                  size_t len);

/* The mutating rules (podsecurity_admit.c): a new namespace gets its id
 * block, a new pod the ids its namespace's block gives (nsrange.h). */
int psa_admit_mutate(const api_lookup *lk, api_admit_op op, const api_resource *res,
                     json_t *obj, ty_error *err);

/* The validating rules: a pod's create meets its namespace's levels and id
 * block (403 with upstream's message); a job kind's pod templates are
 * warned about (lk->warn), and so are a namespace's existing pods when an
 * update makes its enforce level stricter. 0, or -1 with err. */
int psa_admit(const api_lookup *lk, api_admit_op op, const api_resource *res,
              const json_t *obj, const char *name, ty_error *err);

/* A Namespace's own rules (its kind's validation): the Pod Security labels
 * parse (unless an update leaves bad ones as they were) and an update keeps
 * the id block (nsrange_check_update). Adds a cause per problem (field
 * metadata.labels[...] / metadata.annotations[...]); returns how many. */
int psa_namespace_validate(const json_t *obj, const json_t *old, ty_error *err);

#endif
