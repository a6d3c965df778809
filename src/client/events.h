/* events.h - core/v1 Events about an object, as controllers record them.
 *
 * Repeats of the same (object, type, reason, message) within the same
 * component fold into one Event whose count and lastTimestamp go up, as
 * Kubernetes' event recorder does. */
#ifndef TY_CLIENT_EVENTS_H
#define TY_CLIENT_EVENTS_H

#include <jansson.h>
#include <stdbool.h>

#include "client/kc.h"

/* involved: the object the event is about (borrowed; its apiVersion, kind,
 * metadata.namespace/name/uid/resourceVersion are copied into involvedObject).
 * type: "Normal" or "Warning". component: the source, e.g. "pytorchjob-controller",
 * "kubelet", "trainyard-scheduler". Never fails loudly: an event that cannot be
 * written is logged and dropped. Asynchronous: when another writer is
 * committing, the Event is written with its next batch, after this returns
 * but before anything the calling thread writes afterwards. */
void ty_event(ty_kc *s, const json_t *involved, const char *type, const char *reason,
              const char *component, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ty_event as an op for kc_write_all instead of a write of its own, so
 * that a controller writes a burst of Events in one go. involved must stay
 * valid until the op is written (the op borrows its namespace). false (op
 * untouched) when the Event has no name to be about or memory ran out. */
bool ty_event_op(kc_op *op, const json_t *involved, const char *type, const char *reason,
                 const char *component, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The function that bumps an Event's count and lastTimestamp when a repeat
 * finds it there (its argument is unused). */
int ty_event_bump(json_t *ev, void *arg, ty_error *err);

#endif
