/* sched_int.h - the scheduler component's insides, shared by sched.c (the
 * loop and the decisions written to the store) and sched_feed.c (store
 * objects into the core's model). */
#ifndef TY_SCHEDULER_SCHED_INT_H
#define TY_SCHEDULER_SCHED_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/strmap.h"
#include "scheduler/core.h"
#include "scheduler/sched.h"

#define BATCH_MS 1          /* quiet time to gather a burst of events */
#define MAX_BATCH_MS 50     /* ...but never wait longer than this */
#define COMPONENT "volcano"
#define GROUP_ANN "scheduling.k8s.io/group-name"
#define MAX_KV 64

struct ty_sched {
    ty_kc *store;
    pthread_t thread;
    atomic_bool stop;
    struct ty_informer *inf; /* the watch and the lists (sched.c) */
    /* the informer's thread's: a change not yet looked at by a cycle */
    bool dirty;
    int64_t first_dirty, last_change;
    /* A node brought a resource name the model had no slot for: pods not
     * yet bound that ask for it were counted as asking for something no
     * node offers (SC_UNOFFERED), and are read again before the next cycle. */
    bool refeed_unbound;
    sc_cluster *cluster;
    sc_conf *conf;
    json_t *pcs;        /* PriorityClass name -> value */
    int32_t default_pc; /* the globalDefault class's value */
    strmap told;        /* pod key -> the PodScheduled message last written (owned) */
    strmap told_jobs;   /* job key -> told_job (owned) */
#define DUE_MAX 65536
    struct told_job *due[DUE_MAX];
    size_t ndue;
    const char *k_podgroups, *k_queues, *k_pcs, *k_quotas;
    const char *watched[7]; /* what sched_interesting names, for the watch */
    const char *listed[7];  /* the same, in the order the model loads them */
    char *names[SCHED_MAX_NAMES + 1]; /* schedulerNames served (owned, NULL-terminated) */
    struct sched_write *writes; /* decisions not yet written (sched.c) */
    size_t nwrites, capwrites;
    /* sched_metrics.c: the queue gauges' text as of the last second,
     * which the metrics collector copies under metrics_mu */
    pthread_mutex_t metrics_mu;
    ty_buf metrics_text;
    bool metrics_on;
};

/* sched_feed.c: one store object (event or listing) into the model. */
void sched_apply(ty_sched *sc, const char *resource, const json_t *obj, bool deleted);
/* As sched_apply, of a stored version (a pod's is read light when it can be). */
void sched_apply_obj(ty_sched *sc, const char *resource, const ty_obj *o, bool deleted);
/* Copies the schedulerNames it serves into sc (NULL or empty: the
 * embedded default); -1 with err when there are too many or one is empty. */
int sched_names_set(ty_sched *sc, const char *const *names, ty_error *err);
void sched_names_free(ty_sched *sc);
/* Does the scheduler follow this resource? */
bool sched_interesting(const ty_sched *sc, const char *resource);
/* sched_metrics.c: Volcano's metric names (declared, and the collector
 * registered, at start); each cycle's figures; the queue gauges' snapshot
 * (counts: each queue's PodGroups by sc_job_phase, in sc_queue_at order). */
void sched_metrics_start(ty_sched *sc);
void sched_metrics_stop(ty_sched *sc);
void sched_metrics_cycle(ty_sched *sc, double ms, const sc_cycle_stats *st);
void sched_metrics_queues(ty_sched *sc, const int (*counts)[4]);
/* sched.c: a PodGroup went; what was last written for it goes too. */
void sched_forget_job(ty_sched *sc, const char *key);

#endif
