/* rt_ident.h - who a container's processes are on the host: uid, gid,
 * supplementary groups, the capabilities they keep and no_new_privs.
 *
 * The agent reads them from the pod's securityContext (the container's own
 * fields over the pod's) into spec.json's per-container "user" object; the
 * supervisor, root, puts them on each container's process between fork and
 * exec, after the pod's mount and UTS namespaces are set up. A pod that
 * names no uid runs as nobody (65534), never as root; uid 0 only when the
 * spec asks for it. See docs/internals/runtime.md, "Identity and isolation". */
#ifndef TY_RUNTIME_LOCAL_RT_IDENT_H
#define TY_RUNTIME_LOCAL_RT_IDENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

#define RT_NOBODY 65534
/* Supplementary groups kept (pod supplementalGroups + fsGroup). */
#define RT_MAX_GROUPS 64
/* The largest id a securityContext may name (Kubernetes validates the same:
 * a non-negative int32); 2^32-1 is the kernel's "no id". */
#define RT_MAX_ID 2147483647LL

typedef struct rt_ident {
    uid_t uid;
    gid_t gid;
    size_t ngroups;
    gid_t groups[RT_MAX_GROUPS];
    bool no_new_privs;
    uint64_t caps; /* capabilities kept, bit n = capability n (uid 0 only) */
} rt_ident;

/* ---- agent side: from the Pod object ---- */

/* The identity container ct (borrowed, a member of pod's spec) runs as, as
 * spec.json's "user" object {uid, gid, groups, noNewPrivs, caps: [numbers]} (new
 * reference). NULL with err (TY_EINVALID; the message is the kubelet's for
 * runAsNonRoot) when the container must not start: runAsNonRoot with uid 0,
 * or an id out of range. */
json_t *rt_ident_json(const json_t *pod, const json_t *ct, ty_error *err);

/* The owner of the pod's files (its volumes): the pod's runAsUser, else the
 * first container's uid; group: fsGroup, else that uid's gid. *fs_group is
 * true when the group is the pod's fsGroup. */
void rt_ident_pod_owner(const json_t *pod, uid_t *uid, gid_t *gid, bool *fs_group);

/* ---- supervisor side ---- */

/* From spec.json's "user" object; NULL or malformed = nobody, with every
 * capability dropped and no_new_privs (a spec.json written before identities
 * existed never runs as root). */
void rt_ident_from_json(const json_t *user, rt_ident *id);

/* Makes the calling process id: bounding set and ambient capabilities
 * dropped (all but id->caps), groups, gid, uid, the kept capabilities,
 * no_new_privs. For a forked child before exec: async-signal-safe calls
 * only. When the caller is not root only no_new_privs is set (the pod runs
 * as the server's user). 0, or -1 with errno and *step the step that
 * failed (rt_ident_step_name: what to tell the user). */
int rt_ident_apply(const rt_ident *id, int *step);
const char *rt_ident_step_name(int step);

#endif
