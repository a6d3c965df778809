/* main.c - the trainyard command: a sorted table of subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/treearena.h"
#include "cli/cli.h"
#include "cli/termsafe.h"

#ifdef TY_JEMALLOC
#include <jemalloc/jemalloc.h>

/* jemalloc's options, read when it starts (MALLOC_CONF in the environment
 * still has the last word). Pages freed and not reused go back to the
 * kernel after 10 s (jemalloc's default, said here so that it is a choice).
 * Sooner takes little off the peak RSS now that cold texts are compressed
 * small, and costs throughput in the purging's madvise calls and the page
 * faults after them (docs/benchmarks.md, "Build and design choices"). */
const char *malloc_conf = "dirty_decay_ms:10000";
#endif

/* The allocator this binary runs on, asked of jemalloc itself: the call is
 * also what makes the link keep jemalloc. Its malloc was taken only because
 * jemalloc came before the C library on the link line, with no symbol of
 * its own named, and a link-time-optimised build dropped it without a word
 * (the server then ran on glibc's malloc, at a much higher CPU cost:
 * docs/benchmarks.md). */
const char *cli_allocator(void)
{
#ifdef TY_JEMALLOC
    static char name[64];
    const char *v = NULL;
    size_t len = sizeof(v);

    if (mallctl("version", (void *)&v, &len, NULL, 0) != 0 || !v)
        return "jemalloc";
    /* "5.3.0-0-g54ea...": the release */
    snprintf(name, sizeof(name), "jemalloc %.*s", (int)strcspn(v, "-"), v);
    return name;
#else
    return "libc malloc";
#endif
}

/* parsed: the command takes its flags through the shared parser (flags.c),
 * so shell completion may ask it for them (cmd_completion.c). */
static const struct {
    const char *name;
    cli_cmd_fn fn;
    bool parsed;
    const char *help;
} commands[] = {
    {"apply", cmd_apply, true, "Create or update objects from manifests (-f FILE|DIR|-)"},
    {"completion", cmd_completion, false, "Print a shell completion script (bash, zsh)"},
    {"crds", cmd_crds, false, "Print the CustomResourceDefinitions of the custom kinds (deploy/crds)"},
    {"delete", cmd_delete, true, "Delete objects by name or from manifests"},
    {"describe", cmd_describe, true, "Show an object in detail, with its events"},
    {"get", cmd_get, true, "List or show objects"},
    {"job", cmd_job, true, "Suspend or resume a Volcano Job (vcctl job suspend/resume)"},
    {"kubeconfig", cmd_kubeconfig, false, "Print a kubeconfig that points kubectl at the server"},
    {"list", cmd_list, true, "List the training jobs of every kind (Arena's arena list)"},
    {"logs", cmd_logs, true, "Print a pod's or a training job's log (deleted ones' too)"},
    {"operator", cmd_operator, false, "Run the job controllers and gang scheduler against a Kubernetes API"},
    {"queue", cmd_queue, true, "List Volcano queues, or show one with its waiting jobs in order"},
    {"resume", cmd_resume, true, "Resume a suspended training job of any kind"},
    {"sacct", cmd_sacct, true, "Slurm's sacct: the sbatch jobs' states and exit codes"},
    {"sbatch", cmd_sbatch, true, "Slurm's sbatch: run a batch script (#SBATCH, srun) as a gang job"},
    {"scancel", cmd_scancel, true, "Slurm's scancel: cancel sbatch jobs by number"},
    {"server", cmd_server, false, "Run the control plane (API server and store)"},
    {"simulate", cmd_simulate, false, "Replay a job trace through the scheduler on a virtual clock"},
    {"squeue", cmd_squeue, true, "Slurm's squeue: the sbatch jobs pending and running"},
    {"store", cmd_store, false, "Inspect a data directory (store quarantine: the rows set aside)"},
    {"submit", cmd_submit, true, "Submit a training job without YAML (Arena's flags: --workers, --gpus)"},
    {"supervise", cmd_supervise, false, "(internal) Keep one pod's processes; started by the server"},
    {"suspend", cmd_suspend, true, "Suspend a training job of any kind: its pods go, it stays"},
    {"top", cmd_top, true, "GPU allocation and utilisation of nodes or jobs"},
    {"user", cmd_user, false, "Add, list or remove a user: token, namespace, role binding, quota"},
    {"version", cmd_version, false, "Print the version"},
};

void cli_list_commands(FILE *f, bool parsed_only)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if ((!parsed_only || commands[i].parsed) && strcmp(commands[i].name, "supervise") != 0)
            fprintf(f, "%s\n", commands[i].name);
}

/* The commands whose output is not escaped for the terminal: pod logs (the
 * program's own bytes, as `kubectl logs` prints them) and the long-running
 * processes, which write logs, not answers. */
static bool raw_output(const char *name)
{
    static const char *const raw[] = {"logs", "operator", "server", "supervise"};

    for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
        if (!strcmp(name, raw[i]))
            return true;
    return false;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: trainyard <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nRun 'trainyard <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    /* before the first JSON value (treearena.h) */
    ty_tree_arena_init(false);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv + 1);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        /* What the server sends is printed for a person to read: nothing
         * in it may drive the terminal (termsafe.h). The servers log, and
         * logs print pods' own bytes. */
        if (!raw_output(commands[i].name) && cli_term_safe_stdio() < 0) {
            fprintf(stderr, "trainyard: out of memory\n");
            return 1;
        }
        return commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "trainyard: '%s' is not a command\n\n", argv[1]);
    usage(stderr);
    return 2;
}
