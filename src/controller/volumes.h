/* volumes.h - the volume controller: PersistentVolumeClaims bound to
 * PersistentVolumes, and volumes made for claims of a class whose
 * provisioner is Trainyard's own (a directory under <data>/volumes).
 *
 * As Kubernetes' PV controller and a local-path provisioner do together: a
 * pending claim binds to the smallest available volume of its class that
 * holds its request and access modes (or the one it names), else its class's
 * provisioner makes one (at once, or when a pod first uses the claim under
 * WaitForFirstConsumer); a claim without a class gets the default class; a
 * claim in use by a pod that has not finished keeps its
 * kubernetes.io/pvc-protection finalizer; when a claim goes, its volume is
 * deleted with its directory (reclaim policy Delete) or Released (Retain). */
#ifndef TY_CONTROLLER_VOLUMES_H
#define TY_CONTROLLER_VOLUMES_H

#include "base/error.h"
#include "client/kc.h"

/* The provisioner of the built-in class, and the class's name. */
#define VOLUMES_PROVISIONER "trainyard.io/local-path"
#define VOLUMES_DEFAULT_CLASS "local-path"

typedef struct ty_volumes ty_volumes;

/* Starts the controller on s; volumes it makes live under data_dir/volumes.
 * Makes the default StorageClass when the store has no StorageClass at all.
 * NULL with err when it cannot start. */
ty_volumes *volumes_start(ty_kc *s, const char *data_dir, ty_error *err);
/* NULL is fine. */
void volumes_stop(ty_volumes *v);

/* One pass over one key of the controller's queue, without its threads
 * (synchronous tests, client/kc_fake.h): "c/<ns>/<name>" a claim,
 * "v//<name>" a volume, "*" every pending claim. Volumes it provisions live
 * under data_dir/volumes. Keys the pass would queue for another (a claim's
 * volumes once it went, the claims "*" lists) are dropped: the caller runs
 * those passes itself. 0, or -1 when the pass should be retried. */
int volumes_reconcile(ty_kc *s, const char *data_dir, const char *key);

#endif
