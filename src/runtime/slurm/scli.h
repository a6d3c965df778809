/* scli.h - running Slurm's commands and reading their parsable output.
 *
 * The Slurm backend drives a cluster through sbatch, squeue, sinfo,
 * scontrol and scancel with fixed output formats (not libslurm: no ABI to
 * follow across Slurm releases). This module is that boundary: it runs a
 * command with bounded time and output, and parses what Slurm 22.05 prints.
 * Everything here is bounded because it comes from outside: line counts,
 * field lengths, hostlist expansions. Parse errors are TY_EINVALID with the
 * line number; running errors are TY_EUNAVAILABLE (could not start),
 * TY_ETIMEOUT (killed at the deadline) or TY_EINTERNAL (no pipes, memory).
 * Thread safe: no state of its own. docs/internals/slurm-cli.md. */
#ifndef TY_RUNTIME_SLURM_SCLI_H
#define TY_RUNTIME_SLURM_SCLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

/* The longest node name a hostlist or sinfo may hold (without the NUL). */
#define SCLI_NAME_MAX 63
/* The most lines a parser reads; more is an error (not a cut list). */
#define SCLI_MAX_LINES 100000

typedef struct scli_out {
    char *out;      /* stdout, NUL-terminated (it may hold NULs: see out_len) */
    size_t out_len;
    char *err;      /* stderr, NUL-terminated, plus a note when cut */
    int status;     /* exit code, or 128+signal */
    /* added: */
    size_t err_len;
    int sig;        /* the signal that ended it, 0 when it exited */
    bool truncated; /* stdout or stderr was longer than max_out */
} scli_out;

/* Runs argv (argv[0] looked up in PATH; environment inherited, so
 * SLURM_CONF is honoured) with stdin from `in` (NULL: /dev/null; else the
 * whole string, e.g. a batch script for `sbatch --parsable`), stdout and
 * stderr captured, each at most max_out bytes (more is read and dropped;
 * truncated is set and a line saying so is appended to err), the process
 * group killed with SIGKILL after timeout_ms. posix_spawn, no shell; every
 * descriptor is O_CLOEXEC; the child is always reaped. The child runs in a
 * process group of its own with default signal dispositions and an empty
 * mask, whatever the calling thread blocks.
 *
 * Once the child has exited, what it wrote is read and the pipes closed: a
 * grandchild still holding them (a daemon it left) is not waited for.
 *
 * 0 when it ran, whatever its exit status (look at o->status); o then owns
 * out and err (scli_out_free). -1 with err when it could not be started or
 * timed out (the text names the command and why); o is then empty (all
 * NULL/0), and scli_out_free on it is harmless. */
int scli_run(const char *const *argv, const char *in, int timeout_ms, size_t max_out,
             scli_out *o, ty_error *err);
/* Frees out and err and empties o; safe on an empty or zeroed o. */
void scli_out_free(scli_out *o);
/* A one-line summary of a failed run for messages:
 * "sbatch: exit 1: <first line of stderr>" ("killed by signal 9" for a
 * signal; stdout's first line when stderr is empty; nothing after the exit
 * when both are). Bounded (200 bytes of the line), control bytes shown as
 * '?'. argv[0]'s base name names the command. Caller frees; NULL only
 * without memory. */
char *scli_describe(const char *const *argv, const scli_out *o);

/* Slurm hostlist expressions: "n1", "n[1-3,5]", "gpu-[01-03]", a suffix
 * after the brackets ("n[1-2]-ib"), comma-separated lists "n[1-2],login1",
 * zero padding kept ("n[08-10]" -> n08 n09 n10: the width is the low
 * bound's). Only one bracket group per name ("a[1-2]b[3-4]" is an error).
 * At most max names (more is an error, checked before anything is
 * expanded, so "n[1-99999999]" costs nothing), each at most SCLI_NAME_MAX
 * bytes of [A-Za-z0-9._-]. Returns a JSON array of strings (new reference),
 * or NULL with err naming the problem. "" and "(null)" give an empty array. */
json_t *scli_hostlist(const char *expr, size_t max, ty_error *err);

/* The GPUs of a GRES string as sinfo %G and scontrol print it: "gpu:2",
 * "gpu:tesla:2", "gpu:tesla:2(S:0-1)", "gpu:2,mps:100", "gpu" (one),
 * "gpu:tesla" (one of that type), "(null)", "". The sum over the "gpu"
 * entries, 0 when none, -1 when malformed (also past INT_MAX). */
int scli_gres_gpus(const char *gres);

/* One node from `sinfo -h -N -p PARTS -o '%N|%o|%c|%m|%G|%T|%P'`. */
typedef struct scli_node {
    char name[64], addr[64], state[32], partition[64];
    int cpus;
    long long mem_mb;
    int gpus;
    bool drain, down, responding;
} scli_node;
/* Parses the whole output. A node listed once per partition appears once,
 * with its first partition ("*", the default partition's mark, stripped;
 * the name must be [A-Za-z0-9._-]).
 * state is the base state in lower case with the flag suffixes
 * (* ~ # ! % $ @ ^ - +) stripped: "idle", "mixed", "allocated", "drained";
 * flags joined with '+' ("idle+drain") are kept as printed, less the
 * suffixes. responding is false for '*'. drain is true when any part is
 * drain, drained or draining. down is true when any part is down, fail,
 * failing, unknown (the controller has not heard from it yet), inval (it
 * registered with less than configured) or future (not yet configured): a
 * node that cannot take work now. Powered-down nodes ('~', powered_down)
 * are not down: Slurm powers them up for a job. Fields are bounded by the
 * struct (longer is an error) and numbers must be numbers ("%m" may carry
 * a '+'). NULL with err naming the line on a malformed line, or when past
 * SCLI_MAX_LINES lines. *n out (0 for an empty text, which gives a
 * non-NULL array). Caller frees the array. */
scli_node *scli_parse_sinfo(const char *text, size_t *n, ty_error *err);

/* One job (or hetjob component) from
 * `squeue -h --states=all -o '%i|%T|%r|%N|%k|%j'`.
 * id is as printed: "123", "123+0" (component 0 of hetjob 123), "123_4" or
 * "123_[5-9]" (array tasks). leader is the number before '+' or '_' (the
 * hetjob leader, or the array's base job), component the number after '+',
 * -1 when not a hetjob. */
typedef struct scli_job {
    char id[32];
    long leader;
    int component; /* -1 when not a hetjob */
    char state[32], reason[128], nodes[256], comment[512], name[128];
    /* added: */
    bool cut; /* reason, nodes, comment or name was longer than its field */
} scli_job;
/* The comment may hold '|' and the name may not: the first four fields
 * are split from the left, the name from the right, and the comment is
 * what lies between. A line with fewer than six fields is an error. id and
 * state must be well formed ([0-9]+(+[0-9]+|_[0-9]+|_\[...\])?, [A-Z_]+);
 * reason, nodes, comment and name longer than their fields are cut (at a
 * UTF-8 boundary) and `cut` set, so one foreign job's long comment does
 * not fail the whole listing. "(null)" in nodes or comment becomes "".
 * A newline in a comment ends the line (squeue prints it raw): pass -u or
 * -j so that only Trainyard's own jobs, whose comments have none, are
 * listed. NULL with err naming the line; *n out. Caller frees. */
scli_job *scli_parse_squeue(const char *text, size_t *n, ty_error *err);

/* Slurm job states, as squeue %T (or sacct, "CANCELLED by 1000": the first
 * word counts; the compact codes PD, R, CG, ... too; case ignored):
 *   PENDING, REQUEUED, REQUEUE_HOLD, REQUEUE_FED, RESV_DEL_HOLD and
 *     CONFIGURING (nodes allocated but booting: nothing runs yet) -> PENDING
 *   RUNNING, RESIZING, SIGNALING -> RUNNING
 *   SUSPENDED, STOPPED -> SUSPENDED
 *   COMPLETING, STAGE_OUT (the job's processes ended; its outcome is not
 *     printed yet) -> COMPLETING
 *   COMPLETED -> DONE_OK
 *   FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE,
 *     OUT_OF_MEMORY, SPECIAL_EXIT, REVOKED -> DONE_FAILED
 *   anything else (NULL included) -> UNKNOWN */
typedef enum {
    SCLI_PENDING,
    SCLI_RUNNING,
    SCLI_SUSPENDED,
    SCLI_COMPLETING,
    SCLI_DONE_OK,
    SCLI_DONE_FAILED,
    SCLI_UNKNOWN
} scli_state;
scli_state scli_state_of(const char *state);
/* "pending", "running", ... for messages. */
const char *scli_state_name(scli_state s);

/* `scontrol show job -o ID` output: one line per job (per hetjob
 * component) of space-separated Key=Value pairs, into an array of JSON
 * objects {"Key": "value"} (new reference). A value runs until the next
 * " Key=" where Key matches [A-Za-z][A-Za-z0-9_:/]*, so values may hold
 * spaces and '=' ("Comment=a b", "TRES=cpu=1,mem=4G") but a value holding
 * " X=" is split there. Trailing blanks are dropped; bytes that are not
 * UTF-8 become '?'. A later duplicate key wins. NULL with err naming the
 * line when a line does not start with Key=, or past SCLI_MAX_LINES lines
 * or 1000 keys in a line. Blank lines are skipped. */
json_t *scli_parse_show_job(const char *text, ty_error *err);

/* The job id `sbatch --parsable` prints on its first line: "4242", or
 * "4242;cluster" on a multi-cluster setup (a hetjob's is its leader's).
 * Blank lines and blanks around it are skipped. The id (> 0), or -1 with
 * err (TY_EINVALID) quoting what came instead. */
long scli_parse_sbatch(const char *out, ty_error *err);

/* Mebibytes for a byte count, rounded up (a Kubernetes memory quantity as
 * Slurm's --mem wants it); 0 for 0 or less. */
long long scli_mem_mb_from_bytes(long long bytes);

#endif
