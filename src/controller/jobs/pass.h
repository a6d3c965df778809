/* pass.h - internal to src/controller/jobs: one reconcile pass's state,
 * shared by reconcile.c (observe, decide, create) and reconcile_status.c
 * (the status it builds and the write that ends the pass). */
#ifndef TY_CONTROLLER_JOBS_PASS_H
#define TY_CONTROLLER_JOBS_PASS_H

#include <stdbool.h>
#include <time.h>

#include "controller/jobs/jobs_int.h"

typedef struct pass {
    ty_kc *s;
    const jobs_framework *fw;
    job_ctx c;
    json_t *job;           /* working copy (owned) */
    json_t *status;        /* the status being built (owned) */
    json_t *pods;          /* the pods the job controls now (views, jobs_list_owned) */
    kc_list svcs;       /* the Services it controls (a view made only to delete one) */
    json_t *present;       /* names of pods that exist, terminating included */
    json_t *retry;         /* failed pods to recreate (borrowed from pods) */
    json_t *failed;        /* permanently failed pods (borrowed from pods) */
    jf_counts counts[KF_MAX_REPLICA_TYPES];
    size_t ntypes;
    long long restarts;    /* recreations recorded on the job */
    long long live_restarts; /* in-place restarts of current pods */
    long long added;       /* recreations made by this pass */
    bool gang;
    time_t now;
    char nows[40];
    time_t *wake_at;
    char *wrote_rv;         /* the job's status write's rv, if any (TY_RV_MAX bytes) */
    int rc;
    /* The Events about the job this pass records, written by pass_commit
     * after its status: a reader that fetches the job when its Event comes
     * finds the status the Event speaks of. Beyond PASS_EVENTS, at once. */
#define PASS_EVENTS 16
    kc_op events[PASS_EVENTS];
    size_t nevents;
} pass;

/* A label's value, or NULL. */
static inline const char *pass_label(const json_t *obj, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

/* replicaStatuses into p->status; succeeded_now counts the active pods as
 * succeeded (the pass that finds the job done). */
void pass_replica_statuses(pass *p, bool succeeded_now);
/* Writes what the pass changed: the restart count (a metadata write) and the
 * status (through /status), then the Events it recorded, in one batch.
 * Nothing but the Events when nothing changed. */
void pass_commit(pass *p);

#endif
