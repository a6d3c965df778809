/* trainer.h - Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): what the
 * TrainJob, TrainingRuntime and ClusterTrainingRuntime kinds share, the
 * built-in ClusterTrainingRuntimes and the admission rule that looks up the
 * runtime a TrainJob names.
 *
 * The kinds themselves are kind_trainjob.c and kind_trainingruntime.c; the
 * built-in runtimes trainer_runtimes.c (docs/trainer.md lists them). The
 * controller that runs TrainJobs is controller/trainer/ (trainjob_ctl.h).
 */
#ifndef TY_API_TRAINER_H
#define TY_API_TRAINER_H

#include <jansson.h>

#include "api/admission.h"
#include "api/registry.h"
#include "base/error.h"

#define TRAINER_GROUP "trainer.kubeflow.org"
#define TRAINER_FRAMEWORK_LABEL "trainer.kubeflow.org/framework"
#define TRAINER_ANCESTOR_LABEL "trainer.kubeflow.org/trainjob-ancestor-step"
#define TRAINER_MANAGED_BY_DEFAULT "trainer.kubeflow.org/trainjob-controller"
#define TRAINER_MANAGED_BY_MULTIKUEUE "kueue.x-k8s.io/multikueue"
/* A Trainyard extension (Trainer v2 dropped elastic training): a TrainJob
 * on a torch runtime annotated "MIN:MAX" runs between MIN and MAX nodes,
 * torchrun rendezvousing through c10d (docs/trainer.md, "Elastic"). */
#define TRAINER_ANN_ELASTIC "trainyard.io/elastic-nodes"
#define TRAINER_ELASTIC_MAX_NODES 10000

/* A core/v1 EnvVar ({name, value, valueFrom}), for the env lists of the
 * TrainJob's trainer and initializers. */
extern const api_schema trainer_env_var_schema;

/* The built-in ClusterTrainingRuntimes, each a whole object (apiVersion,
 * kind, metadata with the trainer.kubeflow.org/framework label, spec), not
 * yet defaulted. Caller owns the array. */
json_t *trainer_builtin_runtimes(void);

/* Admission of a TrainJob being created: the runtime spec.runtimeRef names
 * must exist (a ClusterTrainingRuntime, or a TrainingRuntime in the job's
 * namespace), as upstream's webhook refuses a job whose runtime is missing.
 * 0, or -1 with err TY_EINVALID and a cause at spec.runtimeRef. Any other
 * resource: 0. */
int trainer_admit_trainjob(const api_lookup *lk, const api_resource *res, const json_t *obj,
                           ty_error *err);

/* TRAINER_ANN_ELASTIC's value "MIN:MAX", whole numbers 1 <= MIN <= MAX <=
 * TRAINER_ELASTIC_MAX_NODES: 0 with both set, else -1. */
int trainer_elastic_bounds(const char *text, long long *min, long long *max);

/* A TrainJob's Trainyard annotations, on every write (create and update):
 * trainyard.io/ttl-seconds-after-finished a whole number, TRAINER_ANN_ELASTIC
 * "MIN:MAX" with numNodes (when given) within. Causes appended to err. */
void trainer_check_annotations(const json_t *job, ty_error *err);

#endif
