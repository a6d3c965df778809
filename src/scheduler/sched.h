/* sched.h - the scheduler component: keeps the gang scheduler's cluster
 * model (core.h) from store watches and binds pods through the pods/binding
 * semantics (spec.nodeName + PodScheduled condition), admits PodGroups
 * (Pending -> Inqueue), evicts preemption victims and says why pods wait. */
#ifndef TY_SCHEDULER_SCHED_H
#define TY_SCHEDULER_SCHED_H

#include <stdbool.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_sched ty_sched;

/* The scheduler names served when none are given: on one machine or on
 * simulated nodes there is no kube-scheduler, so the embedded scheduler
 * serves Volcano's pods and the default scheduler's too (a pod with no
 * schedulerName has default-scheduler's). Against a cluster's API server
 * (operator mode) name only "volcano": kube-scheduler has the rest. */
#define SCHED_NAMES_EMBEDDED {"volcano", "default-scheduler", NULL}
#define SCHED_MAX_NAMES 16

typedef struct sched_opts {
    const char *conf_path;    /* volcano-scheduler.conf-shaped; NULL: Volcano's default */
    const char *const *names; /* spec.schedulerName values it serves, NULL-terminated
                                 (copied); NULL or empty: SCHED_NAMES_EMBEDDED */
    bool admit_only;          /* the runtime places pods (Slurm): enqueue, and the
                                 configuration's preempt and reclaim evicting whole
                                 gangs; allocate and backfill are dropped */
} sched_opts;

/* Starts the scheduling thread (opts may be NULL: the defaults). Only pods
 * naming one of its names are bound, admitted or told why they wait; a pod
 * bound by another scheduler still holds its resources on its node. NULL +
 * err on a bad configuration or too many names. */
ty_sched *sched_start_opts(ty_kc *s, const sched_opts *opts, ty_error *err);
/* The same with the default names (and conf_path, NULL: the default). */
ty_sched *sched_start(ty_kc *s, ty_error *err);
ty_sched *sched_start_with(ty_kc *s, const char *conf_path, ty_error *err);
void sched_stop(ty_sched *sc);

#endif
