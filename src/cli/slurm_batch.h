/* slurm_batch.h - the pure half of `trainyard sbatch|squeue|sacct`: sbatch's
 * options (the #SBATCH directives and the command line share one table),
 * Slurm's time, memory and GPU forms, the Volcano Job a batch script
 * becomes, and the Slurm words squeue and sacct print for a job.
 * No I/O: cmd_sbatch.c and cmd_squeue.c talk to the server.
 * docs/cli/sbatch.md is the user's view, docs/internals/cli.md the design. */
#ifndef TY_CLI_SLURM_BATCH_H
#define TY_CLI_SLURM_BATCH_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* The labels and annotations a batch job carries. */
#define SB_LABEL_ID "trainyard.io/slurm-job-id"
#define SB_ANN_NAME "trainyard.io/slurm-job-name"
#define SB_ANN_NTASKS "trainyard.io/slurm-ntasks"
#define SB_ANN_CPUS "trainyard.io/slurm-alloc-cpus"
#define SB_ANN_ACCOUNT "trainyard.io/slurm-account"
#define SB_ANN_LIMIT "trainyard.io/slurm-time-limit"
#define SB_ANN_NODELIST "trainyard.io/slurm-nodelist"
#define SB_TASK "node"
/* The Volcano Job's name for job number id: "slurm-<id>". */
#define SB_JOB_PREFIX "slurm-"

#define SB_MAX_NODES 1024
#define SB_MAX_TASKS 65536
/* An environment variable carries the script: Linux caps one at 128 KiB. */
#define SB_MAX_SCRIPT (100u << 10)

/* sbatch's options; numbers are -1 when not given. */
typedef struct sb_opts {
    char job_name[256];
    char partition[256];
    char account[256];
    char output[1024]; /* --output pattern, "" = slurm-%j.out */
    char error[1024];  /* --error pattern, "" = with the output */
    char chdir[1024];  /* --chdir, "" = the submit directory */
    char mem[64];      /* a Kubernetes quantity ("4Gi"), "" = none */
    long nodes, ntasks, ntasks_per_node, cpus_per_task;
    long gpus, gpus_per_node; /* --gpus (whole job), --gpus-per-node / --gres */
    long time_s;              /* --time in seconds, 0 = no limit */
    bool wait;                /* --wait: until the job ends, its exit status */
    bool parsable;            /* --parsable: print only the number */
} sb_opts;

/* getopt_long's values for the long-only options. */
enum {
    SB_OPT_NTASKS_PER_NODE = 1000,
    SB_OPT_GPUS_PER_NODE,
    SB_OPT_GRES,
    SB_OPT_MEM,
    SB_OPT_PARSABLE,
    SB_OPT_EXPORT,
};

/* The Slurm options both the command line and #SBATCH take
 * (NULL-terminated), and their short letters for getopt ("J:N:n:..."). */
extern const struct option sb_options[];
extern const char sb_shortopts[];

void sb_opts_init(sb_opts *o);
/* One option (its getopt value, its argument or NULL) into o. -1 with err
 * (TY_EINVALID, Slurm's wording) when the value is bad or not supported. */
int sb_apply(sb_opts *o, int opt, const char *arg, ty_error *err);
/* The #SBATCH lines at the top of script (up to its first line that is
 * neither a comment nor blank) into o, each line's options in order. Options
 * already set are overwritten: read the script before the command line. */
int sb_parse_directives(const char *script, sb_opts *o, ty_error *err);

/* Slurm's --time forms ("30", "1:30:00", "2-12", "UNLIMITED") as seconds
 * (0 = no limit); -1 when unreadable. */
long sb_parse_time(const char *s);
/* Slurm's --mem ("4G", "512", "100M": megabytes by default) as a Kubernetes
 * quantity; -1 when unreadable. "0" (Slurm: the whole node) gives "". */
int sb_parse_mem(const char *s, char *out, size_t len);

/* Fills the counts left unset (nodes 1, ntasks from the nodes) and checks
 * them together. -1 with err. */
int sb_resolve(sb_opts *o, ty_error *err);
/* How many of the job's tasks node i runs (o resolved): the tasks are laid
 * out in blocks, ntasks-per-node on each node when given, else evenly. */
long sb_tasks_on(const sb_opts *o, long i);

/* Slurm's compressed host list of the job's nodes ("slurm-7-node-[0-3]"). */
void sb_nodelist(long id, long nodes, char *buf, size_t len);
/* %j %x %u %N %% in a --output/--error pattern. */
void sb_expand_pattern(const char *pat, long id, const char *name, const char *user,
                       char *buf, size_t len);

/* What the job is submitted with. */
typedef struct sb_submit {
    long id;
    const char *script;     /* the batch script's text */
    char *const *args;      /* its arguments */
    int nargs;
    const char *user;       /* for %u */
    const char *submit_dir; /* sbatch's working directory */
    const char *submit_host;
} sb_submit;

/* The Volcano Job for the resolved options o (new reference), or NULL with
 * err. */
json_t *sb_manifest(const sb_opts *o, const sb_submit *s, ty_error *err);

/* ---- what squeue and sacct print ---- */
/* The job's number (its label), -1 when it is not a batch job. */
long sb_job_id(const json_t *job);
/* Slurm's state for a Volcano Job phase: "PENDING", "RUNNING",
 * "COMPLETING", "COMPLETED", "FAILED", "CANCELLED". */
const char *sb_state(const char *phase);
/* Its short form (PD R CG CD F CA). */
const char *sb_state_short(const char *state);
/* Slurm's elapsed time: "M:SS", "H:MM:SS", "D-HH:MM:SS". */
void sb_format_elapsed(long secs, char *buf, size_t len);

/* The shell texts the pods run (slurm_shim.c). */
extern const char sb_wrapper_sh[];
extern const char sb_srun_sh[];
extern const char sb_scontrol_sh[];

#endif
