/* quota.h - the ResourceQuota controller: keeps each quota's status.hard
 * (its spec.hard) and status.used (what the namespace's objects use now,
 * model/quota.h) true, as kube-controller-manager's resourcequota
 * controller does; `kubectl describe quota` and the scheduler's quota gate
 * read them.
 *
 * One key per namespace: a pass lists the namespace's quotas and the
 * objects of each resource they count (pods for the compute names,
 * services, count/<resource>...) and writes the statuses that changed,
 * through /status. A pass runs when a quota changes and when any object of
 * a namespace with a quota changes (Events aside). Admission does not wait
 * for it (api/quota_admit.h recounts for itself). */
#ifndef TY_CONTROLLER_QUOTA_H
#define TY_CONTROLLER_QUOTA_H

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_quotactl ty_quotactl;

/* Starts the controller on s. NULL with err when it cannot start. */
ty_quotactl *quotactl_start(ty_kc *s, ty_error *err);
/* NULL is fine. */
void quotactl_stop(ty_quotactl *c);

/* One pass over namespace ns without the threads (synchronous tests):
 * every quota of ns gets its status. 0, or -1 when it should be retried. */
int quotactl_reconcile(ty_kc *s, const char *ns);

#endif
