/* kc_status.h - the status subresource's rule (client/kc.h, KC_STATUS) for
 * client implementations that apply writes themselves: what a status write
 * may change, and a mutate function wrapper that drops the rest.
 *
 * A status write takes .status and the resourceVersion (its precondition);
 * for a pod also its labels, annotations and finalizers, which
 * kube-apiserver's pods/status takes (its strategy keeps the new metadata
 * but for ownerReferences and the deletion; the spec stays the old one).
 * A custom resource's /status takes the status alone. Trainyard's server
 * applies the same rule (server/resource_write.c). */
#ifndef TY_CLIENT_KC_STATUS_H
#define TY_CLIENT_KC_STATUS_H

#include <jansson.h>
#include <stdbool.h>

#include "client/kc.h"

/* Whether a status write may change metadata member key (of a pod when
 * pod). */
bool kc_status_may_change(bool pod, const char *key);

/* meta (the metadata as it was, changed in place) given the members a
 * status write may change from now (the metadata it was sent). */
void kc_status_take_meta(bool pod, json_t *meta, const json_t *now);

/* A KC_STATUS write's function and its argument. */
typedef struct kc_status_call {
    kc_mutate_fn fn;
    void *arg;
    bool pod; /* the resource is "pods" */
} kc_status_call;

/* A kc_mutate_fn (arg: a kc_status_call, borrowed) that runs the call's fn
 * and then drops what it changed beyond the rule, with a warning: the
 * caller relied on something an API server ignores. fn's result is
 * returned as it is (KC_FN_NEEDS_SPEC included). */
int kc_status_only_fn(json_t *obj, void *arg, ty_error *err);

#endif
