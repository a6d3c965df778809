/* server_slurm.c - the --runtime and --slurm-* flags of `trainyard server`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/server_slurm.h"

static int port_range(const char *v, runtime_flags *rf)
{
    char *end;
    long lo = strtol(v, &end, 10), hi;

    if (*end != '-' || (hi = strtol(end + 1, &end, 10), *end) || lo < 1024 || hi > 65535 ||
        hi < lo) {
        fprintf(stderr, "error: invalid --slurm-port-range %s: want MIN-MAX within 1024-65535\n", v);
        return -1;
    }
    rf->so.port_min = (int)lo;
    rf->so.port_max = (int)hi;
    return 0;
}

int runtime_flag(int c, const char *v, runtime_flags *rf)
{
    switch (c - RUNTIME_FLAG_BASE) {
    case 0:
        if (!strcmp(v, "slurm")) {
            rf->slurm = true;
        } else if (!strcmp(v, "local")) {
            rf->slurm = false;
        } else {
            fprintf(stderr, "error: invalid --runtime %s: want local or slurm\n", v);
            return -1;
        }
        return 0;
    case 4:
        if (!*v) {
            fprintf(stderr, "error: --slurm-shared-dir wants a directory\n");
            return -1;
        }
        snprintf(rf->shared, sizeof(rf->shared), "%s", v);
        return 0;
    case 5:
        return port_range(v, rf);
    }
    if (!*v || strpbrk(v, " \t\n'\"\\$`")) {
        fprintf(stderr, "error: invalid Slurm name '%s': no spaces, quotes or shell characters\n",
                v);
        return -1;
    }
    if (c == RUNTIME_FLAG_BASE + 1)
        rf->so.partitions = v;
    else if (c == RUNTIME_FLAG_BASE + 2)
        rf->so.account = v;
    else
        rf->so.qos = v;
    return 0;
}

int runtime_flags_finish(runtime_flags *rf, const char *data_dir)
{
    char cwd[PATH_MAX];

    if (!rf->slurm) {
        if (*rf->shared || rf->so.partitions || rf->so.account || rf->so.qos || rf->so.port_min) {
            fprintf(stderr, "error: --slurm-* flags need --runtime slurm\n");
            return -1;
        }
        return 0;
    }
    if (!*rf->shared)
        snprintf(rf->shared, sizeof(rf->shared), "%s/slurm-shared", data_dir);
    if (rf->shared[0] != '/') {
        char rel[PATH_MAX];
        snprintf(rel, sizeof(rel), "%s", rf->shared);
        if (!getcwd(cwd, sizeof(cwd)) ||
            (size_t)snprintf(rf->shared, sizeof(rf->shared), "%s/%s", cwd, rel) >=
                sizeof(rf->shared)) {
            fprintf(stderr, "error: --slurm-shared-dir %s: path too long\n", rel);
            return -1;
        }
    }
    rf->so.shared_dir = rf->shared;
    rf->so.data_dir = data_dir;
    return 0;
}
