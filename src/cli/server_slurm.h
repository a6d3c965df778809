/* server_slurm.h - `trainyard server --runtime slurm` and its flags: which
 * runtime backend runs pods, and the Slurm backend's options
 * (runtime/slurm/slurm.h). Kept out of cmd_server.c's flag parser the way
 * the security flags are. */
#ifndef TY_CLI_SERVER_SLURM_H
#define TY_CLI_SERVER_SLURM_H

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>

#include "runtime/slurm/slurm.h"

typedef struct runtime_flags {
    bool slurm;              /* --runtime slurm */
    rt_slurm_opts so;
    char shared[PATH_MAX];   /* --slurm-shared-dir, made absolute */
} runtime_flags;

#define RUNTIME_FLAG_BASE 1100
#define RUNTIME_LONGOPTS                                                              \
    {"runtime", required_argument, NULL, RUNTIME_FLAG_BASE},                          \
        {"slurm-partition", required_argument, NULL, RUNTIME_FLAG_BASE + 1},          \
        {"slurm-account", required_argument, NULL, RUNTIME_FLAG_BASE + 2},            \
        {"slurm-qos", required_argument, NULL, RUNTIME_FLAG_BASE + 3},                \
        {"slurm-shared-dir", required_argument, NULL, RUNTIME_FLAG_BASE + 4},         \
        {"slurm-port-range", required_argument, NULL, RUNTIME_FLAG_BASE + 5}

#define RUNTIME_USAGE                                                                      \
    "  --runtime local|slurm  what runs pods (default local: this machine's processes;\n" \
    "               slurm: the Slurm cluster the Slurm commands on PATH reach, SLURM_CONF\n" \
    "               honoured; Slurm places admitted gangs, see docs/slurm.md)\n"        \
    "  --slurm-partition P[,P]  the partitions whose nodes run pods (default: the\n"      \
    "               cluster's default)\n"                                                 \
    "  --slurm-account A, --slurm-qos Q  given to every Slurm job\n"                      \
    "  --slurm-shared-dir DIR  a directory every Slurm node sees at the same path:\n"     \
    "               pod specs, state and logs (default DATA_DIR/slurm-shared)\n"          \
    "  --slurm-port-range MIN-MAX  where a pod's port moves when another pod on its\n"    \
    "               node has it (default 20000-32767)\n"

static inline bool runtime_is_flag(int c)
{
    return c >= RUNTIME_FLAG_BASE && c <= RUNTIME_FLAG_BASE + 5;
}

/* One flag into rf; -1 after printing why. */
int runtime_flag(int c, const char *v, runtime_flags *rf);
/* After parsing: defaults that need the data directory; -1 after printing why. */
int runtime_flags_finish(runtime_flags *rf, const char *data_dir);

#endif
