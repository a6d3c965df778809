/* slurm_jobs.h - what squeue, scancel and sacct read of the jobs `trainyard
 * sbatch` made: the namespace's numbered Volcano Jobs and their batch pods,
 * as the Slurm views print them (docs/internals/sbatch.md). */
#ifndef TY_CLI_SLURM_JOBS_H
#define TY_CLI_SLURM_JOBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "client/client.h"

/* One job as Slurm shows it; the strings are borrowed from the listing. */
typedef struct sjob {
    long id;
    const char *name, *partition, *user, *account, *state, *nodelist;
    long nodes, ntasks, cpus, limit_s;
    long elapsed; /* since it started running, or how long its script ran when it
                     ended (its pod's container); -1 when not known */
    char exit_code[32];
} sjob;

/* The namespace's (every namespace's: ns NULL) batch jobs into *jobs, and
 * their pods into *pods when with_pods (else NULL). New references. 0, or
 * -1 after printing why. */
int sj_list(ty_client *cl, const char *ns, bool with_pods, json_t **jobs, json_t **pods);
/* The jobs of a listing (pods may be NULL: no exit codes), sorted by
 * number; *n of them. Caller frees; they borrow from jobs. */
sjob *sj_views(const json_t *jobs, const json_t *pods, size_t *n);
/* Whether item is in the comma-separated list (NULL: no list, everything). */
bool sj_in_list(const char *list, const char *item, bool nocase);
bool sj_id_in_list(const char *list, long id);
/* Who the server says we are (a SelfSubjectReview); NULL after printing
 * why. Caller frees. */
char *sj_whoami(ty_client *cl);

#endif
