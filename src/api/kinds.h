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
/* core/v1 ResourceQuota (kind_quota.c) */
extern const api_resource api_resourcequota;
/* core/v1 PersistentVolumeClaim, PersistentVolume; storage.k8s.io/v1 (kind_storage.c) */
extern const api_resource api_pvc;
extern const api_resource api_pv;
extern const api_resource api_storageclass;
/* rbac.authorization.k8s.io/v1 (kind_rbac.c; what they grant: server/authz) */
extern const api_resource api_role;
extern const api_resource api_clusterrole;
extern const api_resource api_rolebinding;
extern const api_resource api_clusterrolebinding;
/* scheduling.k8s.io/v1 */
extern const api_resource api_priorityclass;
/* coordination.k8s.io/v1 Lease (kind_lease.c): leader election's */
extern const api_resource api_lease;
/* apiextensions.k8s.io/v1 CustomResourceDefinition (kind_crd.c): stored and
 * validated; Established only for the kinds Trainyard serves */
extern const api_resource api_crd;

/* The training frameworks' resources (api/frameworks.def; shared rules in
 * kubeflow.c) */
#define TY_FRAMEWORK(kind, plugin) extern const api_resource api_##kind;
#include "api/frameworks.def"
#undef TY_FRAMEWORK

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
/* trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2 (kind_trainjob.c,
 * kind_trainingruntime.c; shared rules in api/trainer.h) */
extern const api_resource api_trainjob;
/* Trainyard's record of a deleted job (kind_jobrecord.c). */
extern const api_resource api_jobrecord;
#define JOBRECORD_PODS_MAX 1000
extern const api_resource api_trainingruntime;
extern const api_resource api_clustertrainingruntime;

#endif
