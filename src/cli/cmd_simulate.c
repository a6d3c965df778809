/* cmd_simulate.c - `trainyard simulate`: replays a job trace through the gang
 * scheduler on simulated nodes and a virtual clock (src/sim). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/simulate.h"

static void simulate_usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard simulate --trace FILE --cluster NODESxGPUS|CLUSTER.csv\n"
            "                          [--policy fifo|sjf|las] [--output table|json] [--queues]\n"
            "                          [--pod-gpus N] [--las-thresholds GPUSEC[,GPUSEC...]]\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    simulate_usage(stderr);
    return 2;
}

static int parse_thresholds(const char *s, sim_options *o)
{
    char buf[512];
    if (strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    o->nlas_thresholds = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        double v = strtod(tok, &end);
        if (end == tok || *end || errno || !isfinite(v) || v <= 0 ||
            o->nlas_thresholds == SIM_MAX_LAS_LEVELS - 1 ||
            (o->nlas_thresholds && v <= o->las_thresholds[o->nlas_thresholds - 1]))
            return -1;
        o->las_thresholds[o->nlas_thresholds++] = v;
    }
    return o->nlas_thresholds ? 0 : -1;
}

int cmd_simulate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"trace", required_argument, NULL, 't'},   {"cluster", required_argument, NULL, 'c'},
        {"policy", required_argument, NULL, 'p'},  {"output", required_argument, NULL, 'o'},
        {"queues", no_argument, NULL, 'q'},        {"pod-gpus", required_argument, NULL, 'g'},
        {"las-thresholds", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    sim_options opts = {.policy = SIM_FIFO};
    const char *trace_path = NULL, *cluster = NULL;
    bool json = false;
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': trace_path = optarg; break;
        case 'c': cluster = optarg; break;
        case 'p':
            if (sim_policy_parse(optarg, &opts.policy) < 0)
                return usage_error("unknown policy '%s': want fifo, sjf or las", optarg);
            break;
        case 'o':
            if (strcmp(optarg, "json") == 0)
                json = true;
            else if (strcmp(optarg, "table") == 0)
                json = false;
            else
                return usage_error("unknown output '%s': want table or json", optarg);
            break;
        case 'q': opts.queues = true; break;
        case 'g': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > SIM_MAX_GPUS_PER_NODE)
                return usage_error("invalid --pod-gpus '%s': want a GPU count", optarg);
            opts.pod_gpus = (int)v;
            break;
        }
        case 'l':
            if (parse_thresholds(optarg, &opts) < 0)
                return usage_error("invalid --las-thresholds '%s': want ascending positive "
                                   "GPU-seconds, comma separated",
                                   optarg);
            break;
        case 'h': simulate_usage(stdout); return 0;
        default: simulate_usage(stderr); return 2;
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!trace_path)
        return usage_error("%s", "missing --trace FILE");
    if (!cluster)
        return usage_error("%s", "missing --cluster NODESxGPUS|CLUSTER.csv");

    ty_error err;
    ty_error_init(&err);
    if (sim_cluster_spec_parse(cluster, &opts.cluster, &err) < 0)
        return usage_error("%s", err.text);
    sim_trace *trace = sim_trace_load(trace_path, &err);
    if (!trace)
        return usage_error("%s", err.text);

    sim_result res;
    int rc = sim_run(trace, &opts, &res, &err);
    if (rc < 0) {
        fprintf(stderr, "error: %s\n", err.text);
        sim_trace_free(trace);
        return 1;
    }
    if (json)
        sim_report_json(stdout, &res, &opts);
    else
        sim_report_table(stdout, &res, &opts, trace_path);
    sim_trace_free(trace);
    if (res.unfinished) {
        fprintf(stderr, "error: %zu jobs never finished: the scheduler left them waiting\n",
                res.unfinished);
        return 1;
    }
    return 0;
}
