/* cli_top.h - the pure parts of `trainyard logs JOB`, `top` and `queue`
 * (cli_top.c): what they decide and format, apart from the requests, so
 * that unit tests reach them (tests/unit/test_cli_top.c). */
#ifndef TY_CLI_CLI_TOP_H
#define TY_CLI_CLI_TOP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The annotation the node agent keeps its GPU readings in, on Nodes, Pods
 * and training jobs (runtime/local/gpu.h's RT_GPU_REPORT_ANNOTATION). */
#define CLI_GPU_ANNOTATION "trainyard.io/gpu-utilization"
#define CLI_GPU_MAX 64

/* A duration as kubectl's --since takes it: a sequence of numbers with
 * units h, m, s ("5s", "2m", "1h30m"). 0 and the seconds in *secs, or -1
 * (empty, no unit, unknown unit, overflow past a year). */
int cli_duration_seconds(const char *s, long *secs);

/* Which of pods (an array of Pod objects, borrowed) is the job's default
 * replica for logs: TensorFlow's chief, else the master, else the MPI
 * launcher, else worker 0 (Kubeflow's replica-type/replica-index labels);
 * for a Volcano Job, the pod of task first_task (may be NULL: any task)
 * with the lowest index; for a TrainJob (JobSet's labels) the launcher,
 * else node's completion index 0. Ties go to the lowest index, then the name. -1
 * when pods is empty. */
long cli_default_replica(const json_t *pods, const char *first_task);

/* One node's, pod's or job's GPU readings, from the annotation's text. */
typedef struct cli_gpu_reading {
    int index;
    int util;                  /* %, -1 = no reading */
    long long mem_used, mem_total; /* MiB, -1 = no reading */
} cli_gpu_reading;
typedef struct cli_gpu_report {
    bool fake;
    size_t n;
    cli_gpu_reading g[CLI_GPU_MAX];
} cli_gpu_report;
/* Parses a Node's or Pod's annotation (text may be NULL). 0, or -1 when
 * there is none or it is not the agent's form (out then empty). */
int cli_gpu_report_parse(const char *text, cli_gpu_report *out);
/* The utilisation of busy GPUs: how many read above 0 %, and the mean
 * utilisation over those with a reading (-1 when none has). */
void cli_gpu_report_sum(const cli_gpu_report *r, int *busy, int *mean_util,
                        long long *mem_used, long long *mem_total);

/* Sorts an array of PodGroups (in place) as the scheduler takes them from
 * a queue: higher priority first (the value of spec.priorityClassName in
 * classes, an object name -> value; unknown/none = 0), then older
 * (creationTimestamp), then namespace/name. */
void cli_sort_waiting(json_t *groups, const json_t *classes);

/* "40Gi", "512Mi", "-" (mib < 0): a size in MiB the way kubectl top
 * writes memory. */
void cli_mib(long long mib, char *buf, size_t len);

/* Prints text (NULL: word) to out, in status word's colour when out is a
 * terminal (and NO_COLOR is not set); the colour's escapes pass a safe
 * stream (termsafe.h) as they are. */
void cli_print_colored(FILE *out, const char *word, const char *text);

#endif
