/* vcjob.h - the Volcano Job controller (batch.volcano.sh/v1alpha1 Job).
 *
 * A watch on the store's hub queues every Volcano Job whose object or pods
 * changed, and workers reconcile each (controller/workqueue.c): a pass
 * creates the job's PodGroup, its task pods `<job>-<task>-<i>` (with the
 * env/svc/pytorch plugins' additions), applies the lifecycle policies and
 * walks the phase state machine, and writes the job's status and Events.
 * See docs/internals/volcano.md.
 */
#ifndef TY_CONTROLLER_VOLCANO_VCJOB_H
#define TY_CONTROLLER_VOLCANO_VCJOB_H

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_vcjobs ty_vcjobs;

/* Starts the controller's threads on s, which must outlive them. NULL with
 * err filled when they cannot start. */
ty_vcjobs *vcjobs_start(ty_kc *s, ty_error *err);

/* Stops the threads, waits for them and frees everything. NULL is fine. */
void vcjobs_stop(ty_vcjobs *v);

#endif
