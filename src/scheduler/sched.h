/* sched.h - the scheduler component: keeps the gang scheduler's cluster
 * model (core.h) from store watches and binds pods through the pods/binding
 * semantics (spec.nodeName + PodScheduled condition), admits PodGroups
 * (Pending -> Inqueue), evicts preemption victims and says why pods wait. */
#ifndef TY_SCHEDULER_SCHED_H
#define TY_SCHEDULER_SCHED_H

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_sched ty_sched;

/* Starts the scheduling thread with Volcano's default configuration, or
 * with the volcano-scheduler.conf-shaped file at conf_path. Pods whose
 * spec.schedulerName is one of "default-scheduler", "trainyard", "volcano"
 * (or empty) are scheduled. NULL + err on a bad configuration. */
ty_sched *sched_start(ty_kc *s, ty_error *err);
ty_sched *sched_start_with(ty_kc *s, const char *conf_path, ty_error *err);
void sched_stop(ty_sched *sc);

#endif
