/* trainer_inuse.h - Kubeflow Trainer's runtime-in-use protection: a
 * TrainingRuntime or ClusterTrainingRuntime that TrainJobs reference carries
 * the finalizer trainer.kubeflow.org/resource-in-use, so that deleting it
 * only marks it (deletionTimestamp) until the last TrainJob naming it is
 * gone; then the finalizer goes and the runtime with it. Upstream's
 * runtime controllers did the same in v2.0-v2.2; v2.3 dropped the finalizer
 * for a runtime snapshot per job (kubeflow/trainer#3716). Trainyard keeps
 * it: a job here snapshots its runtime only when it starts, so a suspended
 * or queued job would otherwise lose the runtime it names
 * (docs/compatibility.md).
 *
 * One key per runtime ("C/<name>" for a ClusterTrainingRuntime,
 * "T/<namespace>/<name>" for a TrainingRuntime): a pass counts the
 * TrainJobs whose spec.runtimeRef names it (kind and name; a
 * TrainingRuntime in its own namespace only) and adds the finalizer when
 * there are some and the runtime is not being deleted, removes it when
 * there are none. A TrainJob's events queue the runtime it names, a
 * runtime's its own key. Runs beside the job controllers (not with
 * --api-only). */
#ifndef TY_CONTROLLER_TRAINER_INUSE_H
#define TY_CONTROLLER_TRAINER_INUSE_H

#include "base/error.h"
#include "client/kc.h"

#define TRAINER_INUSE_FINALIZER "trainer.kubeflow.org/resource-in-use"

typedef struct ty_trainer_inuse ty_trainer_inuse;

/* Starts the controller on s. NULL with err when it cannot start. */
ty_trainer_inuse *trainer_inuse_start(ty_kc *s, ty_error *err);
/* NULL is fine. */
void trainer_inuse_stop(ty_trainer_inuse *c);

/* One pass over key (as above) without the threads (synchronous tests).
 * 0, or -1 when it should be retried. */
int trainer_inuse_reconcile(ty_kc *s, const char *key);

#endif
