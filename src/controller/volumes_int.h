/* volumes_int.h - what the volume controller's files share (volumes.c:
 * the controller and the binding; volumes_provision.c: the provisioner). */
#ifndef TY_CONTROLLER_VOLUMES_INT_H
#define TY_CONTROLLER_VOLUMES_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "controller/volumes.h"
#include "controller/workqueue.h"

#define PVCS "persistentvolumeclaims"
#define PVS "persistentvolumes"
#define SCS "storageclasses.storage.k8s.io"
#define COMPONENT "persistentvolume-controller"
#define PROTECTION "kubernetes.io/pvc-protection"
#define ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"
#define ANN_DEFAULT_CLASS "storageclass.kubernetes.io/is-default-class"

struct ty_volumes {
    ty_kc *s;
    char dir[PATH_MAX - 64]; /* <data>/volumes */
    ty_workqueue *q;
};

/* o[k1][k2] as a string, "" when missing. */
const char *vol_str2(const json_t *o, const char *k1, const char *k2);
/* quantities.storage in milli-units, 0 when missing or unreadable. */
int64_t vol_storage_of(const json_t *quantities);

/* ---- volumes_provision.c ---- */

/* The default StorageClass (the newest one annotated as default), or NULL. */
ty_obj *vol_default_class(ty_kc *s);
/* kc_mutate function: sets the claim's spec.storageClassName to arg. */
int vol_set_class(json_t *claim, void *arg, ty_error *err);
/* A new PersistentVolume for claim from class sc (a directory made under
 * <data>/volumes), created; NULL (an Event says why) when it cannot be. */
ty_obj *vol_provision(ty_volumes *v, const json_t *claim, const json_t *sc);
/* Removes a reclaimed volume's directory (only one this provisioner made for
 * the claim its marker names) and then the volume. 0, or -1 to retry. */
int vol_delete_volume(ty_volumes *v, const json_t *pv);
/* Makes the built-in StorageClass on a first start. */
void vol_ensure_class(ty_kc *s);

#endif
