/* bench_sched_core.c - the gang scheduler core alone: no server, no JSON, no
 * store; the cluster model is fed directly and sc_cycle runs with Volcano's
 * default configuration (enqueue, allocate, backfill).
 *
 *   bench_sched_core [--nodes N] [--gpus G] [--pods P] [--gang K]
 *                    [--gpu-milli M] [--steady S] [--conf FILE]
 *                    [--min-resources] [--remove-nodes]
 *
 * N nodes of G GPUs (cpu 64, memory 512Gi, pods 110); P pending pods in
 * gangs of K (minMember K; each pod M thousandths of a GPU, 1 cpu, 4Gi),
 * all present from the start, groups without minResources (enqueue admits
 * every one in the first cycle). With --min-resources each group asks for
 * its gang's resources as minResources: admission stops at the overcommit
 * budget (1.2 x the cluster) and the rest wait to be admitted, a backlog
 * every cycle has in front of it.
 *   - build: how fast the model takes nodes and pods (upserts per second);
 *   - placement: cycles until one binds nothing; pods placed per second over
 *     the cycles' own time (the runtime's confirmation of each bind, BINDING
 *     to RUNNING, is done between cycles and not counted);
 *   - steady state (--steady S): the cluster full, one gang finishes (its
 *     pods succeed and are removed), one cycle places the next: S times,
 *     latency of that cycle;
 *   - node removal (--remove-nodes): every node removed, one at a time, with
 *     the pods still bound to them (a cluster shrinking, or a restart with
 *     fewer simulated nodes): seconds in all and per node;
 *   - memory: VmRSS after the build and VmHWM at the end.
 * Not a test: it measures. Exits 1 if a cycle bound a partial gang. */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "scheduler/core.h"

typedef struct binds {
    sc_task **t;
    size_t n, cap;
} binds;

static void on_bind(void *ctx, sc_task *t, sc_node *n)
{
    binds *b = ctx;
    (void)n;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 1024;
        b->t = realloc(b->t, b->cap * sizeof(*b->t));
        if (!b->t) {
            perror("realloc");
            exit(2);
        }
    }
    b->t[b->n++] = t;
}

/* kB of a /proc/self/status field ("VmRSS", "VmHWM") */
static long status_kb(const char *field)
{
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0 && line[n] == ':')
            kb = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return kb;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_sched_core [--nodes N] [--gpus G] [--pods P] [--gang K] "
                    "[--gpu-milli M] [--steady S] [--conf FILE] [--min-resources] "
                    "[--remove-nodes]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t nodes = 5000, pods = 100000, gang = 8, steady = 0;
    bool remove_nodes = false, min_resources = false;
    long gpus = 8, gpu_milli = 1000;
    const char *conf_path = NULL;
    static const struct option lopts[] = {
        {"nodes", 1, 0, 'n'}, {"gpus", 1, 0, 'g'},  {"pods", 1, 0, 'p'}, {"gang", 1, 0, 'k'},
        {"gpu-milli", 1, 0, 'm'}, {"steady", 1, 0, 's'}, {"conf", 1, 0, 'c'},
        {"remove-nodes", 0, 0, 'r'}, {"min-resources", 0, 0, 'R'}, {0, 0, 0, 0},
    };
    int o;

    while ((o = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        switch (o) {
        case 'n': nodes = strtoul(optarg, NULL, 10); break;
        case 'g': gpus = strtol(optarg, NULL, 10); break;
        case 'p': pods = strtoul(optarg, NULL, 10); break;
        case 'k': gang = strtoul(optarg, NULL, 10); break;
        case 'm': gpu_milli = strtol(optarg, NULL, 10); break;
        case 's': steady = strtoul(optarg, NULL, 10); break;
        case 'c': conf_path = optarg; break;
        case 'r': remove_nodes = true; break;
        case 'R': min_resources = true; break;
        default: usage();
        }
    }
    if (!nodes || !pods || !gang || gpus < 0 || gpu_milli < 0)
        usage();

    ty_error err;
    ty_error_init(&err);
    sc_conf *conf = conf_path ? sc_conf_load(conf_path, &err) : sc_conf_default();
    if (!conf) {
        fprintf(stderr, "bench_sched_core: %s\n", err.text);
        return 2;
    }
    sc_cluster *c = sc_cluster_new();
    size_t njobs = (pods + gang - 1) / gang;
    char name[96];
    int64_t t0, t1;

    printf("== bench_sched_core: %zu nodes x %ld GPUs (cpu 64, memory 512Gi, pods 110); "
           "%zu pods in gangs of %zu (%ld mGPU, 1 cpu, 4Gi each)%s; actions %s\n",
           nodes, gpus, pods, gang, gpu_milli,
           min_resources ? ", minResources the gang's" : "", sc_conf_actions(conf));
    /* ---- build ---- */
    t0 = mono_ns();
    for (size_t i = 0; i < nodes; i++) {
        sc_node_spec s = {.name = name, .ready = true};
        snprintf(name, sizeof(name), "node-%05zu", i);
        s.allocatable.v[SC_CPU] = 64 * 1000;
        s.allocatable.v[SC_MEM] = ((int64_t)512 << 30) * 1000;
        s.allocatable.v[SC_PODS] = 110 * 1000;
        s.allocatable.v[SC_GPU] = gpus * 1000;
        if (!sc_node_upsert(c, &s)) {
            fprintf(stderr, "bench_sched_core: node upsert failed\n");
            return 2;
        }
    }
    t1 = mono_ns();
    double node_s = (double)(t1 - t0) / 1e9;
    t0 = mono_ns();
    for (size_t j = 0, p = 0; j < njobs; j++) {
        char jk[64];
        snprintf(jk, sizeof(jk), "bench/job-%06zu", j);
        sc_job_spec js = {.key = jk, .min_member = (int)gang, .created = (double)j,
                          .preemptable = true};
        if (min_resources) {
            js.min_resources.v[SC_CPU] = (int64_t)gang * 1000;
            js.min_resources.v[SC_MEM] = (int64_t)gang * ((int64_t)4 << 30) * 1000;
            js.min_resources.v[SC_PODS] = (int64_t)gang * 1000;
            js.min_resources.v[SC_GPU] = (int64_t)gang * gpu_milli;
        }
        if (!sc_job_upsert(c, &js)) {
            fprintf(stderr, "bench_sched_core: job upsert failed\n");
            return 2;
        }
        for (size_t k = 0; k < gang && p < pods; k++, p++) {
            snprintf(name, sizeof(name), "bench/job-%06zu-worker-%zu", j, k);
            sc_task_spec ts = {.key = name, .job = jk, .task_name = "worker",
                               .status = SC_TASK_PENDING};
            ts.request.v[SC_CPU] = 1000;
            ts.request.v[SC_MEM] = ((int64_t)4 << 30) * 1000;
            ts.request.v[SC_PODS] = 1000;
            ts.request.v[SC_GPU] = gpu_milli;
            if (!sc_task_upsert(c, &ts)) {
                fprintf(stderr, "bench_sched_core: task upsert failed\n");
                return 2;
            }
        }
    }
    t1 = mono_ns();
    double pod_s = (double)(t1 - t0) / 1e9;
    long rss_built = status_kb("VmRSS");
    printf("build:      %zu nodes in %.3f s (%.0f/s), %zu pods in %.3f s (%.0f/s)\n", nodes,
           node_s, (double)nodes / node_s, pods, pod_s, (double)pods / pod_s);
    printf("memory:     VmRSS %.1f MiB after the build\n", (double)rss_built / 1024);

    /* ---- placement ---- */
    binds b = {0};
    sc_hooks h = {.ctx = &b, .bind = on_bind};
    size_t total = 0, cycles = 0;
    double cyc_s = 0, first_s = 0;
    for (;;) {
        sc_cycle_stats st;
        b.n = 0;
        t0 = mono_ns();
        sc_cycle(c, conf, &h, &st);
        t1 = mono_ns();
        cycles++;
        cyc_s += (double)(t1 - t0) / 1e9;
        if (cycles == 1)
            first_s = (double)(t1 - t0) / 1e9;
        printf("cycle %zu:    %.3f s, bound %zu, admitted %zu, jobs tried %zu, unschedulable %zu\n",
               cycles, (double)(t1 - t0) / 1e9, st.bound, st.admitted, st.jobs_considered,
               st.jobs_unschedulable);
        if (b.n % gang && pods % gang == 0) {
            fprintf(stderr, "bench_sched_core: a cycle bound %zu pods: not whole gangs\n", b.n);
            return 1;
        }
        for (size_t i = 0; i < b.n; i++)
            sc_task_set_status(c, b.t[i], SC_TASK_RUNNING);
        total += b.n;
        if (b.n == 0 || total == pods)
            break;
    }
    printf("placement:  %zu pods bound in %zu cycle(s), %.3f s of cycle time (first cycle "
           "%.3f s): %.0f pods/s\n", total, cycles, cyc_s, first_s, (double)total / cyc_s);

    /* ---- steady state ---- */
    if (steady && total < pods) {
        int64_t *lat = calloc(steady, sizeof(*lat));
        size_t done = 0, next = 0, bound_ok = 0;
        sc_cycle_stats st = {0};
        for (size_t it = 0; it < steady && lat; it++) {
            /* the oldest running gang finishes */
            sc_job *j = NULL;
            for (; next < njobs && !j; next++) {
                char jk[64];
                snprintf(jk, sizeof(jk), "bench/job-%06zu", next);
                sc_job *cand = sc_job_find(c, jk);
                if (cand && sc_job_running_tasks(cand) > 0)
                    j = cand;
            }
            if (!j)
                break;
            while (sc_job_ntasks(j)) {
                sc_task *t = sc_job_task(j, 0);
                sc_task_set_status(c, t, SC_TASK_SUCCEEDED);
                sc_task_remove(c, sc_task_key(t));
            }
            sc_job_remove(c, sc_job_key(j));
            b.n = 0;
            t0 = mono_ns();
            sc_cycle(c, conf, &h, &st);
            t1 = mono_ns();
            lat[done++] = t1 - t0;
            bound_ok += b.n == gang;
            for (size_t i = 0; i < b.n; i++)
                sc_task_set_status(c, b.t[i], SC_TASK_RUNNING);
        }
        lat_summary ls;
        lat_summarize(lat, done, &ls);
        printf("steady:     %zu cycles after one gang finished (%zu bound exactly one gang): "
               "mean %.3f ms, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f ms\n", done, bound_ok,
               ls.mean_ms, ls.p50_ms, ls.p90_ms, ls.p99_ms, ls.max_ms);
        /* and a cycle with nothing to do */
        t0 = mono_ns();
        sc_cycle(c, conf, &h, &st);
        t1 = mono_ns();
        printf("idle:       a cycle with nothing changed: %.3f ms (bound %zu)\n",
               (double)(t1 - t0) / NS_PER_MS, st.bound);
        free(lat);
    }
    if (remove_nodes) {
        t0 = mono_ns();
        for (size_t i = 0; i < nodes; i++) {
            snprintf(name, sizeof(name), "node-%05zu", i);
            sc_node_remove(c, name);
        }
        t1 = mono_ns();
        printf("removal:    %zu nodes removed with %zu pods bound: %.3f s, %.1f us per node\n",
               nodes, total, (double)(t1 - t0) / 1e9, (double)(t1 - t0) / 1e3 / (double)nodes);
    }
    printf("memory:     VmHWM %.1f MiB, VmRSS %.1f MiB at the end\n",
           (double)status_kb("VmHWM") / 1024, (double)status_kb("VmRSS") / 1024);
    free(b.t);
    sc_cluster_free(c);
    sc_conf_free(conf);
    return 0;
}
