/* kinds.h - the api_resource of every served kind, one definition per file. */
#ifndef TY_API_KINDS_H
#define TY_API_KINDS_H

#include "api/registry.h"

/* core/v1 (kind_core.c, kind_pod.c) */
extern const api_resource api_namespace;
extern const api_resource api_node;
extern const api_resource api_pod;
extern const api_resource api_service;
extern const api_resource api_configmap;
extern const api_resource api_secret;
extern const api_resource api_event;
/* core/v1 PersistentVolumeClaim, PersistentVolume; storage.k8s.io/v1 (kind_storage.c) */
extern const api_resource api_pvc;
extern const api_resource api_pv;
extern const api_resource api_storageclass;
/* scheduling.k8s.io/v1 */
extern const api_resource api_priorityclass;

/* kubeflow.org/v1 (kind_<name>.c, shared rules in kubeflow.c) */
extern const api_resource api_tfjob;
extern const api_resource api_pytorchjob;
extern const api_resource api_mpijob;
/* kubeflow.org/v2beta1: mpi-operator's MPIJob (kind_mpijob_v2.c) */
extern const api_resource api_mpijob_v2;
extern const api_resource api_xgboostjob;
extern const api_resource api_paddlejob;
extern const api_resource api_jaxjob;
extern const api_resource api_mxjob;
extern const api_resource api_msjob_v1; /* MSJob, ms-operator's first form (kind_msjob_v1.c) */
/* mindspore.gitee.com/v1 */
extern const api_resource api_msjob;

/* batch.volcano.sh/v1alpha1 and scheduling.volcano.sh/v1beta1 */
extern const api_resource api_vcjob;
extern const api_resource api_podgroup;
extern const api_resource api_queue;
/* batch.volcano.sh/v1alpha1 CronJob (kind_vccronjob.c); flow.volcano.sh/v1alpha1
 * JobFlow and JobTemplate (kind_jobflow.c). They embed a Volcano Job's spec,
 * whose schema kind_vcjob.c shares. */
extern const api_resource api_vccronjob;
extern const api_resource api_jobflow;
extern const api_resource api_jobtemplate;
extern const api_schema api_vcjob_spec_schema;

#endif
