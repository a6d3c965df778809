/* crd.h - the CustomResourceDefinitions of the kinds Trainyard serves.
 *
 * On a Kubernetes cluster the job kinds exist only as CRDs; `trainyard crds`
 * prints them and deploy/crds holds them. They are made from the registry
 * (names, scope, versions, columns) and from the /openapi/v3 component
 * schema the embedded server serves for each kind, turned into the
 * structural schema a CRD needs: so a field the server knows is a field the
 * cluster keeps, and the two cannot drift apart.
 *
 * Names, group, versions and scope are upstream's (training-operator,
 * mpi-operator, ms-operator, Volcano), so that a cluster's existing CRDs
 * can be replaced in place.
 */
#ifndef TY_API_CRD_H
#define TY_API_CRD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/registry.h"

/* A custom resource: one a cluster has only as a CRD (a non-core group
 * that is not one of Kubernetes' own). */
bool crd_is_custom(const api_resource *res);

/* The structural openAPIV3Schema of res: its /openapi/v3 component schema
 * (api_openapi_v3) with metadata as {type: object} (a CRD may say no more
 * at the root), no x-kubernetes-group-version-kind and no strategic merge
 * patch keys (a CRD cannot declare them; custom resources take no strategic
 * merge patch). NULL when res is not custom. Caller owns. */
json_t *crd_schema(const api_resource *res);

/* The same change applied to a component schema from api_openapi_v3: what
 * crd_schema does after finding res's component. Returns a new value;
 * component is borrowed. */
json_t *crd_schema_from_openapi(const json_t *component);

/* The CRD of res's group and plural, with every version the registry
 * serves of it (the first in the registry's order is the storage version).
 * NULL when res is not custom. Caller owns. */
json_t *crd_for(const api_resource *res);

/* Every CRD, one per custom group and plural, in the registry's order, as
 * a JSON array. Caller owns. */
json_t *crd_all(void);

/* The JSONPath of res's column named column (api_resource.column_paths),
 * or NULL when it has none. */
const char *crd_column_path(const api_resource *res, const char *column);

/* "<group>_<plural>.yaml", the file deploy/crds keeps crd in. */
void crd_file_name(const json_t *crd, char *buf, size_t len);

/* crd as the YAML file deploy/crds holds: a "generated" comment line, then
 * the document. malloc'd; caller frees. NULL when memory ran out. */
char *crd_file_text(const json_t *crd);

/* The file name of a kustomization, CRD_KUSTOMIZATION: kustomize reads a
 * file named "Kustomization", and `kubectl apply -f DIR`, which reads only
 * *.yaml, *.yml and *.json, passes it by (a kustomization.yaml it would try
 * to apply as an object, and fail). */
#define CRD_KUSTOMIZATION "Kustomization"

/* deploy/crds/Kustomization for crds (crd_all's array): the files in
 * order. malloc'd; caller frees. */
char *crd_kustomization_text(const json_t *crds);

/* Rules a structural schema keeps (what kube-apiserver checks of a CRD's
 * openAPIV3Schema): no $ref; a type on every node except one with
 * x-kubernetes-preserve-unknown-fields or x-kubernetes-int-or-string;
 * type object at the root. Returns 0, or -1 with the first broken rule's
 * path and reason in buf ("spec.x.type: Required value: must not be empty
 * for specified object fields"). path is the prefix ("" at the root). */
int crd_check_structural(const json_t *schema, const char *path, char *buf, size_t len);

#endif
