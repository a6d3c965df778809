/* vc_pass.h - internal to src/controller/volcano: one Volcano Job pass's
 * state, shared by reconcile.c (observe, choose, act) and
 * reconcile_status.c (the status it builds and the write that ends it). */
#ifndef TY_CONTROLLER_VOLCANO_VC_PASS_H
#define TY_CONTROLLER_VOLCANO_VC_PASS_H

#include <stdbool.h>
#include <time.h>

#include "base/timeutil.h"
#include "client/kc.h"
#include "controller/volcano/vc_int.h"

typedef struct target {
    vc_action action;
    const char *event;
    const json_t *task;  /* the task of the pod that raised the event */
    const json_t *pod;   /* that pod (NULL for task events) */
} target;

typedef struct pass {
    ty_kc *s;
    const char *ns, *name, *uid;
    json_t *job;     /* stored job (copy) */
    json_t *pods;    /* owned pods */
    json_t *status;  /* the status being built */
    vc_obs obs;
    const char *consume; /* the action annotation's value to remove (in job), or NULL */
    bool admitted;   /* the PodGroup left Pending */
    time_t *wake_at;
    char nows[32];
    int rc;
} pass;

static inline const char *vc_str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* An RFC 3339 time (base/timeutil.h), 0 when missing or unreadable. */
static inline time_t vc_parse_time(const char *s)
{
    time_t t;

    return s && ty_time_parse(s, &t) == 0 ? t : 0;
}

/* The counts (pending, running, ...) from the pass's observation. */
void vc_pass_set_counts(pass *p);
/* Adds one to an integer status field. */
void vc_pass_bump(json_t *st, const char *key);
/* status.state (and a condition, and an Event when the phase changes). */
void vc_pass_set_phase(pass *p, vc_phase from, vc_phase to, const target *t);
/* Writes what the pass changed: a consumed action (metadata) and the status
 * (through /status). Nothing when nothing changed. */
void vc_pass_commit(pass *p);

#endif
