/* events.h - core/v1 Events about an object, as controllers record them.
 *
 * Repeats of the same (object, type, reason, message) within the same
 * component fold into one Event whose count and lastTimestamp go up, as
 * Kubernetes' event recorder does. */
#ifndef TY_CONTROLLER_EVENTS_H
#define TY_CONTROLLER_EVENTS_H

#include <jansson.h>

#include "store/store.h"

/* involved: the object the event is about (borrowed; its apiVersion, kind,
 * metadata.namespace/name/uid/resourceVersion are copied into involvedObject).
 * type: "Normal" or "Warning". component: the source, e.g. "pytorchjob-controller",
 * "kubelet", "trainyard-scheduler". Never fails loudly: an event that cannot be
 * written is logged and dropped. Asynchronous: when another writer is
 * committing, the Event is written with its next batch, after this returns
 * but before anything the calling thread writes afterwards. */
void ty_event(ty_store *s, const json_t *involved, const char *type, const char *reason,
              const char *component, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
