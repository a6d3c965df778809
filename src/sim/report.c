/* report.c - the simulator's metrics and how they are printed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simulate.h"

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sim_metrics(const sim_outcome *o, size_t n, int total_gpus, sim_result *r)
{
    double *jct = malloc((n ? n : 1) * sizeof(*jct));
    double sum_jct = 0, sum_wait = 0, gpu_s = 0;
    double first_submit = INFINITY, last_finish = -INFINITY;
    size_t done = 0;

    for (size_t i = 0; i < n; i++) {
        if (o[i].finish < 0)
            continue;
        double j = o[i].finish - o[i].submit;
        if (jct)
            jct[done] = j;
        done++;
        sum_jct += j;
        sum_wait += o[i].first_start - o[i].submit;
        gpu_s += o[i].gpu_seconds;
        if (o[i].submit < first_submit)
            first_submit = o[i].submit;
        if (o[i].finish > last_finish)
            last_finish = o[i].finish;
    }
    r->jobs = done;
    r->total_gpus = total_gpus;
    if (done == 0) {
        r->avg_jct = r->p99_jct = r->makespan = r->avg_queue_delay = r->gpu_utilization = 0;
        free(jct);
        return;
    }
    r->avg_jct = sum_jct / (double)done;
    r->avg_queue_delay = sum_wait / (double)done;
    r->makespan = last_finish - first_submit;
    r->gpu_utilization =
        r->makespan > 0 && total_gpus > 0 ? gpu_s / ((double)total_gpus * r->makespan) : 0;
    if (jct) {
        qsort(jct, done, sizeof(*jct), dbl_cmp);
        /* Nearest rank: the smallest value with at least 99% of jobs at or below it. */
        size_t rank = (size_t)ceil(0.99 * (double)done);
        r->p99_jct = jct[rank ? rank - 1 : 0];
    } else {
        r->p99_jct = NAN;
    }
    free(jct);
}

/* Rounded to fixed decimals, and never "-0.000". */
static double tidy(double v, double scale)
{
    double x = round(v * scale) / scale;
    return x == 0 ? 0 : x;
}

void sim_report_json(FILE *f, const sim_result *r, const sim_options *o)
{
    fprintf(f,
            "{\n"
            "  \"avg_jct\": %.3f,\n"
            "  \"p99_jct\": %.3f,\n"
            "  \"makespan\": %.3f,\n"
            "  \"avg_queue_delay\": %.3f,\n"
            "  \"gpu_utilization\": %.6f,\n"
            "  \"jobs\": %zu,\n"
            "  \"skipped\": %zu,\n"
            "  \"unfinished\": %zu,\n"
            "  \"preemptions\": %zu,\n"
            "  \"policy\": \"%s\",\n"
            "  \"nodes\": %d,\n"
            "  \"gpus_per_node\": %d\n"
            "}\n",
            tidy(r->avg_jct, 1e3), tidy(r->p99_jct, 1e3), tidy(r->makespan, 1e3),
            tidy(r->avg_queue_delay, 1e3), tidy(r->gpu_utilization, 1e6), r->jobs, r->skipped,
            r->unfinished, r->preemptions, sim_policy_name(o->policy), o->cluster.nodes,
            o->cluster.gpus_per_node);
}

void sim_report_table(FILE *f, const sim_result *r, const sim_options *o, const char *trace_name)
{
    fprintf(f, "%-18s %s\n", "TRACE", trace_name ? trace_name : "-");
    fprintf(f, "%-18s %s%s\n", "POLICY", sim_policy_name(o->policy),
            o->queues ? " (one queue per trace queue)" : "");
    fprintf(f, "%-18s %d nodes x %d GPUs (%d GPUs)\n", "CLUSTER", o->cluster.nodes,
            o->cluster.gpus_per_node, r->total_gpus);
    fprintf(f, "%-18s %zu finished", "JOBS", r->jobs);
    if (r->skipped)
        fprintf(f, ", %zu skipped (larger than the cluster)", r->skipped);
    if (r->unfinished)
        fprintf(f, ", %zu never finished", r->unfinished);
    fprintf(f, "\n");
    fprintf(f, "%-18s %.1f s\n", "AVG JCT", tidy(r->avg_jct, 10));
    fprintf(f, "%-18s %.1f s\n", "P99 JCT", tidy(r->p99_jct, 10));
    fprintf(f, "%-18s %.1f s\n", "MAKESPAN", tidy(r->makespan, 10));
    fprintf(f, "%-18s %.1f s\n", "AVG QUEUE DELAY", tidy(r->avg_queue_delay, 10));
    fprintf(f, "%-18s %.2f %%\n", "GPU UTILIZATION", tidy(r->gpu_utilization * 100, 100));
    fprintf(f, "%-18s %zu\n", "PREEMPTIONS", r->preemptions);
    fprintf(f, "%-18s %zu\n", "CYCLES", r->cycles);
    if (r->capped_instants)
        fprintf(f, "%-18s %zu instants stopped evicting after %d rounds\n", "WARNING",
                r->capped_instants, SIM_MAX_EVICTING_ROUNDS);
}
