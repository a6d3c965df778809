/* sched.h - the scheduler component: binds pods to nodes through the
 * pods/binding semantics (spec.nodeName + PodScheduled condition).
 *
 * Today's implementation (firstfit.c) places each pod on the first Ready,
 * schedulable node with room for its requests (cpu, memory, nvidia.com/gpu and
 * other extended resources). The gang scheduler replaces it behind this same
 * interface; nothing else calls a placement function directly. */
#ifndef TY_SCHEDULER_SCHED_H
#define TY_SCHEDULER_SCHED_H

#include "base/error.h"
#include "store/store.h"

typedef struct ty_sched ty_sched;

/* Starts the scheduling thread. Pods whose spec.schedulerName is one of
 * "default-scheduler", "trainyard", "volcano" (or empty) are scheduled. */
ty_sched *sched_start(ty_store *s, ty_error *err);
void sched_stop(ty_sched *sc);

#endif
