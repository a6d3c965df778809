/* trainjob_ctl.h - the TrainJob controller (Kubeflow Trainer v2,
 * trainer.kubeflow.org/v1alpha1).
 *
 * A watch queues every TrainJob whose object or owned objects changed, and
 * workers reconcile each: a pass snapshots the runtime the job names into
 * the job, works out the JobSet the runtime and the job's overrides make
 * (replicated jobs of indexed pods `<job>-<rjob>-<jobIndex>-<podIndex>`),
 * makes the job's PodGroup, headless Service, MPI ConfigMap and ssh Secret
 * and its pods in dependsOn order, and writes conditions and jobsStatus.
 * See docs/trainer.md and docs/internals/trainer.md.
 */
#ifndef TY_CONTROLLER_TRAINER_TRAINJOB_CTL_H
#define TY_CONTROLLER_TRAINER_TRAINJOB_CTL_H

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_trainjobs ty_trainjobs;

/* Starts the controller's threads on s, which must outlive them. NULL with
 * err filled when they cannot start. */
ty_trainjobs *trainjobs_start(ty_kc *s, ty_error *err);

/* Stops the threads, waits for them and frees everything. NULL is fine. */
void trainjobs_stop(ty_trainjobs *t);

/* How long the JobRecord of a deleted TrainJob is kept (seconds; default
 * a week); 0: no records are written (and no TrainJob is held for one).
 * Set before trainjobs_start. */
void trainjobs_set_record_retention(long long seconds);

#endif
