/* engine.h - the job engine: the controller of every Kubeflow-style training
 * job kind (TFJob, PyTorchJob, MPIJob, XGBoostJob, PaddleJob, JAXJob, MXJob)
 * and MindSpore's MSJob.
 *
 * A watch on the store's hub queues the key of every job whose object, pods,
 * services, config map or PodGroup changed, and workers reconcile each
 * (controller/workqueue.c; a job is never on two workers at once): creates
 * the pods and services the job needs (with the framework's environment),
 * restarts, fails or completes it by its run policy and its framework's rule,
 * cleans up, suspends and resumes, and writes the job's status, Events and
 * the training_operator_jobs_* counters. See docs/internals/jobs.md.
 * Uses only the public store API.
 */
#ifndef TY_CONTROLLER_JOBS_ENGINE_H
#define TY_CONTROLLER_JOBS_ENGINE_H

#include <stdint.h>

#include "base/error.h"
#include "client/kc.h"

typedef struct ty_jobs ty_jobs;

/* Starts the engine's threads on s, which must outlive them. NULL with err
 * filled when they cannot start. */
ty_jobs *jobs_start(ty_kc *s, ty_error *err);

/* The same for some kinds only: bit i of kinds_mask stands for kf_kinds()[i]
 * (api/kubeflow.h); jobs of the others are left alone (operator mode's
 * --enable-scheme, beside an operator that keeps them). */
ty_jobs *jobs_start_kinds(ty_kc *s, uint64_t kinds_mask, ty_error *err);

/* Stops the threads, waits for them and frees everything. NULL is fine. */
void jobs_stop(ty_jobs *j);

#endif
