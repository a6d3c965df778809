/* tpass.h - one pass over one TrainJob, the state its parts share
 * (reconcile.c: the snapshot, observing, making pods, the pass itself;
 * failures.c: failed pods and jobs, elastic nodes; commit.c: status and
 * Trainyard's annotations written). Internal to controller/trainer. */
#ifndef TY_CONTROLLER_TRAINER_TPASS_H
#define TY_CONTROLLER_TRAINER_TPASS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "client/kc.h"

/* What a pass sees of one replicated job. */
typedef struct rj_obs {
    const json_t *rj;
    const char *name;
    long long replicas, pods;
    long long ready, succeeded, failed, active; /* jobs */
} rj_obs;

typedef struct tpass {
    ty_kc *s;
    const char *ns, *name, *uid;
    json_t *job;    /* stored TrainJob (copy) */
    json_t *status; /* the status being built */
    json_t *plan;
    json_t *pods;   /* owned pods (views) */
    rj_obs *obs;
    size_t nobs;
    long long restarts;
    bool bump_restart;
    json_t *replaced;       /* elastic: names of node pods replaced this pass */
    json_t *retried;        /* names of pods retried this pass (backoffLimit) */
    json_t *retries;        /* TJ_ANN_RETRIES as read, with this pass's added */
    long long replacements; /* elastic: failed nodes replaced before this pass */
    json_t *snapshot; /* a snapshot to write (taken), or NULL */
    json_t *stored;   /* the snapshot read from the job's annotation, or NULL */
    time_t *wake_at;
    char now[32];
    int rc;
} tpass;

/* ---- reconcile.c ---- */

const char *tp_str_at(const json_t *o, const char *a, const char *b);
/* An Event on the TrainJob. */
void tp_event(tpass *p, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A condition set in the status being built (an Event when it turns True). */
void tp_set_cond(tpass *p, const char *type, const char *cstatus, const char *reason,
                 const char *msg);
/* Deletes the job's pods: all, or only those not finished. */
void tp_kill_pods(tpass *p, bool only_active);
/* The job's pod of that name (a view in p->pods), or NULL. */
const json_t *tp_pod_named(const tpass *p, const char *name);

/* ---- failures.c ---- */

/* Whether rj is an elastic job's trainer nodes (tj_plan's "elastic"); its
 * MIN; whether a node pod has succeeded (torchrun ended them all). */
bool tp_elastic_rjob(const tpass *p, const json_t *rj);
long long tp_elastic_min(const tpass *p);
bool tp_elastic_node_succeeded(const tpass *p);

/* Pod k of an elastic job's nodes may be made now. */
bool tp_elastic_may_make(const tpass *p, long long k);
/* Before observing: failed elastic nodes replaced, failed pods of jobs
 * with a backoffLimit made again (each skipped by the count after). */
void tp_elastic_replace(tpass *p);
void tp_job_retry(tpass *p);
/* A job of replicated job bad failed: the failurePolicy decides. */
void tp_on_failure(tpass *p, const char *bad);

/* ---- commit.c ---- */

/* status.jobsStatus from the observation. */
void tp_jobs_status(tpass *p, bool suspended);
/* Writes what the pass changed: the status (keeping trainerStatus), and
 * the snapshot, restart, replacement and retry annotations. */
void tp_commit(tpass *p);

#endif
