/* job_pending.h - why a training job waits, in numbers, for `trainyard get
 * JOB` (docs/cli/get.md).
 *
 * A pure function of the objects the scheduler itself reads: the job, its
 * PodGroup (the scheduler's "N/M tasks in gang unschedulable: ..."
 * condition, scheduler/explain.c), its Queue (spec.capability, status.state,
 * status.allocated), the namespace's ResourceQuotas (spec.hard,
 * status.used), the Nodes (status.allocatable, spec.unschedulable) with the
 * pods bound to them, the other PodGroups (the same queue's waiting ones,
 * ordered as the scheduler's priority plugin and session order them:
 * PriorityClass value, then creation time, then namespace/name) and the
 * PriorityClasses. Nothing here talks to a server, so every case is a unit
 * test (tests/unit/test_cli_jobs.c).
 *
 * The reasons, each found independently (several may hold):
 *   JP_NEVER_FITS   a replica's pod asks for more than any node has in
 *                   allocatable, or the gang's pods together more than
 *                   the empty cluster holds: it will never run as written;
 *   JP_QUOTA        the namespace's ResourceQuota cannot hold the gang;
 *   JP_QUEUE        the queue is Closed, or its capability less what it has
 *                   allocated cannot hold the gang;
 *   JP_BEHIND       waiting PodGroups of its queue come first (position N);
 *   JP_GPUS         the gang's GPUs are not free now (needs X, Y free);
 *   JP_REFUSED      pods of it are missing and the job's controller's last
 *                   try to make one was refused (admission: Pod Security,
 *                   a quota, a priority class): the API server's words, from
 *                   the job's FailedCreate event. */
#ifndef TY_CLI_JOB_PENDING_H
#define TY_CLI_JOB_PENDING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JP_NEVER_FITS 0x1u
#define JP_QUOTA 0x2u
#define JP_QUEUE 0x4u
#define JP_BEHIND 0x8u
#define JP_GPUS 0x10u
#define JP_REFUSED 0x20u

/* Everything borrowed. An array may be NULL when it could not be read (a
 * user may not list Nodes or every namespace's pods): the reasons that
 * need it are then not judged (nodes: never fits and free GPUs; all_pods:
 * free GPUs; podgroups: the position). An empty array means none. */
typedef struct jp_input {
    const json_t *job;
    const json_t *pods;      /* the job's pods */
    const json_t *pg;        /* its PodGroup, or NULL */
    const json_t *queue;     /* its Queue, or NULL */
    const json_t *quotas;    /* ResourceQuotas of the job's namespace */
    const json_t *nodes;     /* every Node */
    const json_t *all_pods;  /* every pod (those bound use their node) */
    const json_t *podgroups; /* every PodGroup */
    const json_t *priority_classes;
    const json_t *events;    /* Events of the job (others are passed over) */
} jp_input;

#define JP_MAX_AHEAD 3
typedef struct jp_result {
    unsigned reasons;        /* JP_* bits */
    int64_t gpus_needed;     /* the gang's GPUs not yet allocated */
    int64_t gpus_free;       /* free on schedulable nodes now */
    int64_t gpus_total;      /* allocatable on schedulable nodes */
    size_t nnodes;           /* schedulable nodes */
    size_t position;         /* 1-based among its queue's waiting PodGroups; 0: unknown */
    size_t waiting;          /* how many wait in its queue, it included */
    int32_t priority;        /* its own PriorityClass value */
    char queue[254];
    char ahead[JP_MAX_AHEAD][254]; /* the first jobs before it: "ns/name (priority P)" */
    size_t nahead;
    char scheduler[512];     /* the PodGroup's Unschedulable message, "" when none */
    /* One line per reason, in the order above, each ending in '\n':
     * what waits and the numbers. */
    char text[3072];
} jp_result;

/* Fills out for in; out->reasons 0 and text "" when nothing is found to
 * say (the job is not waiting on anything these objects show). */
void jp_explain(const jp_input *in, jp_result *out);

/* When Event e happened, as its text says: lastTimestamp, else eventTime,
 * firstTimestamp, metadata.creationTimestamp; "" when none. */
const char *jp_event_time(const json_t *e);

/* The value of the PriorityClass named name among pcs (a globalDefault one
 * when name is "" or NULL; 0 when none matches). */
int32_t jp_priority_value(const json_t *pcs, const char *name);

#endif
