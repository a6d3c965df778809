/* cmd_top.c - `trainyard top node` and `trainyard top job [JOB]`: GPU
 * allocation from the pods' requests, readings from the node agent's
 * trainyard.io/gpu-utilization annotations (on Nodes, Pods and jobs; the
 * Metrics API is absent, /metrics is the operator's). Fake GPUs' readings
 * are made up, and the output says so. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/registry.h"
#include "cli/cli.h"
#include "cli/cli_top.h"
#include "cli/jobs.h"

static void top_usage(FILE *f)
{
    fprintf(f, "usage: trainyard top node [NODE] [--server URL]\n"
               "       trainyard top job [JOB] [-n NS | -A] [--server URL]\n");
}

static const char *meta_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, "metadata"), key));
    return s ? s : "";
}

static const char *annotation(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(o, "metadata"),
                                                             "annotations"),
                                             CLI_GPU_ANNOTATION));
}

static bool pod_active(const json_t *pod)
{
    const char *ph = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return !ph || (strcmp(ph, "Succeeded") != 0 && strcmp(ph, "Failed") != 0);
}

static bool pod_running(const json_t *pod)
{
    const char *ph = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return ph && strcmp(ph, "Running") == 0;
}

static void pct(int v, char *buf, size_t len)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%d%%", v);
}

static void print_fake(bool fake)
{
    if (fake) {
        printf("   ");
        cli_print_colored(stdout, "fake", "(fake)");
    }
    printf("\n");
}

/* ---- top node ---- */

typedef struct node_row {
    char name[254];
    long long total, alloc, busy, used, mem_total;
    int util;
    bool fake, has;
} node_row;

static void print_node_row(const node_row *r, int w)
{
    char busy[24], u[16], used[24], total[24], mem[64];

    snprintf(busy, sizeof(busy), "%lld", r->busy);
    pct(r->util, u, sizeof(u));
    cli_mib(r->has ? r->used : -1, used, sizeof(used));
    cli_mib(r->has ? r->mem_total : -1, total, sizeof(total));
    snprintf(mem, sizeof(mem), "%s/%s", used, total);
    printf("%-*s   %-9lld   %-9lld   %-8s   %-8s   %s", w, r->name, r->total, r->alloc,
           r->has ? busy : "-", u, r->has ? mem : "-");
    print_fake(r->fake);
}

/* Node n's row: capacity, what its unfinished pods ask, the agent's
 * readings (util_sum/util_n: the cluster's mean, GPU-weighted). */
static void node_row_of(const json_t *n, const json_t *pods, node_row *r, long long *util_sum,
                        long long *util_n)
{
    const char *cap = json_string_value(json_object_get(
        json_object_get(json_object_get(n, "status"), "capacity"), "nvidia.com/gpu"));
    cli_gpu_report rep;
    size_t j;
    json_t *p;

    snprintf(r->name, sizeof(r->name), "%s", meta_str(n, "name"));
    r->total = cap ? strtoll(cap, NULL, 10) : 0;
    r->util = -1;
    json_array_foreach(json_object_get(pods, "items"), j, p) {
        const json_t *spec = json_object_get(p, "spec");
        const char *on = json_string_value(json_object_get(spec, "nodeName"));
        if (on && strcmp(on, r->name) == 0 && pod_active(p))
            r->alloc += cli_spec_gpus(spec);
    }
    if (cli_gpu_report_parse(annotation(n), &rep) == 0) {
        int busy;
        cli_gpu_report_sum(&rep, &busy, &r->util, &r->used, &r->mem_total);
        r->busy = busy;
        r->fake = rep.fake;
        r->has = true;
        if (r->util >= 0) {
            *util_sum += (long long)r->util * (long long)rep.n;
            *util_n += (long long)rep.n;
        }
    }
}

static int top_node(ty_client *cl, const char *only)
{
    json_t *nodes = cli_get_json(cl, "/api/v1/nodes"), *pods, *n;
    node_row *rows, sum = {.name = "TOTAL"};
    size_t i, k = 0;
    long long util_sum = 0, util_n = 0;
    int w = 5, rc = 0;

    if (!nodes)
        return 1;
    if (!(pods = cli_get_json(cl, "/api/v1/pods"))) {
        json_decref(nodes);
        return 1;
    }
    rows = calloc(json_array_size(json_object_get(nodes, "items")) + 1, sizeof(*rows));
    json_array_foreach(json_object_get(nodes, "items"), i, n) {
        if (!rows || (only && strcmp(only, meta_str(n, "name")) != 0))
            continue;
        node_row_of(n, pods, &rows[k], &util_sum, &util_n);
        if ((int)strlen(rows[k].name) > w)
            w = (int)strlen(rows[k].name);
        k++;
    }
    if (only && k == 0) {
        ty_error err;
        ty_error_init(&err);
        ty_seterr(&err, TY_ENOTFOUND, "nodes \"%s\" not found", only);
        cli_print_error(&err, true);
        ty_error_clear(&err);
        rc = 1;
        goto out;
    }
    printf("%-*s   %-9s   %-9s   %-8s   %-8s   %s\n", w, "NAME", "GPU-TOTAL", "GPU-ALLOC",
           "GPU-BUSY", "GPU-UTIL", "GPU-MEM(USED/TOTAL)");
    for (i = 0; i < k; i++) {
        node_row *r = &rows[i];
        print_node_row(r, w);
        sum.total += r->total;
        sum.alloc += r->alloc;
        sum.busy += r->busy;
        if (r->has) {
            sum.used += r->used;
            sum.mem_total += r->mem_total;
            sum.has = true;
        }
        sum.fake |= r->fake;
    }
    sum.util = util_n ? (int)(util_sum / util_n) : -1;
    if (!only)
        print_node_row(&sum, w);
out:
    free(rows);
    json_decref(nodes);
    json_decref(pods);
    return rc;
}

/* ---- top job ---- */

/* The pod's controlling owner's kind and name ("" when none). */
static bool owner_of(const json_t *pod, const char **api_version, const char **kind,
                     const char **name)
{
    size_t i;
    json_t *ref;

    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), i,
                       ref) {
        if (!json_is_true(json_object_get(ref, "controller")))
            continue;
        *api_version = json_string_value(json_object_get(ref, "apiVersion"));
        *kind = json_string_value(json_object_get(ref, "kind"));
        *name = json_string_value(json_object_get(ref, "name"));
        return *api_version && *kind && *name;
    }
    return false;
}

/* The job object pod's owner is (new reference), or NULL. */
static json_t *owner_job(ty_client *cl, const json_t *pod)
{
    const char *av, *kind, *name;
    const api_resource *res;
    char path[1024];
    ty_error err;
    json_t *job;

    if (!owner_of(pod, &av, &kind, &name) || !(res = api_find_kind(av, kind)))
        return NULL;
    client_resource_path(res, meta_str(pod, "namespace"), name, path, sizeof(path));
    ty_error_init(&err);
    job = client_call_json(cl, "GET", path, NULL, NULL, &err);
    ty_error_clear(&err);
    return job;
}

/* Every job with running GPU pods: its summary annotation. */
static int top_jobs(ty_client *cl, const char *ns)
{
    char path[1024];
    json_t *pods, *seen = json_object(), *rows = json_array(), *p, *row;
    size_t i;
    int w = 4;

    snprintf(path, sizeof(path), ns ? "/api/v1/namespaces/%s/pods" : "/api/v1/pods", ns);
    if (!(pods = cli_get_json(cl, path))) {
        json_decref(seen);
        json_decref(rows);
        return 1;
    }
    json_array_foreach(json_object_get(pods, "items"), i, p) {
        const char *av, *kind, *name;
        char key[1024];
        json_t *job;
        if (!pod_running(p) || cli_spec_gpus(json_object_get(p, "spec")) <= 0 ||
            !owner_of(p, &av, &kind, &name))
            continue;
        snprintf(key, sizeof(key), "%s/%s/%s", meta_str(p, "namespace"), kind, name);
        if (json_object_get(seen, key))
            continue;
        json_object_set_new(seen, key, json_true());
        if (!(job = owner_job(cl, p)))
            continue;
        if (!cli_job_resource_of(job)) { /* owned by something else: no training job */
            json_decref(job);
            continue;
        }
        kind = cli_job_trainer(cli_job_resource_of(job)); /* Volcano's "Job": VolcanoJob */
        json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:o}", "ns",
                                              meta_str(p, "namespace"), "kind", kind, "name",
                                              name, "job", job));
        if ((int)(strlen(kind) + strlen(name) + 1) > w)
            w = (int)(strlen(kind) + strlen(name) + 1);
    }
    if (json_array_size(rows) == 0) {
        fprintf(stderr, "No running jobs with GPUs\n");
    } else {
        printf("%s%-*s   %-4s   %-4s   %-8s   %s\n", ns ? "" : "NAMESPACE         ", w, "JOB",
               "PODS", "GPUS", "GPU-UTIL", "GPU-MEM(USED/TOTAL)");
    }
    json_array_foreach(rows, i, row) {
        const char *text = annotation(json_object_get(row, "job"));
        json_t *s = text ? json_loads(text, 0, NULL) : NULL;
        char who[600], u[16], used[24], total[24], mem[64];
        const json_t *util = json_object_get(s, "util");

        snprintf(who, sizeof(who), "%s/%s", json_string_value(json_object_get(row, "kind")),
                 json_string_value(json_object_get(row, "name")));
        pct(json_is_integer(util) ? (int)json_integer_value(util) : -1, u, sizeof(u));
        cli_mib(s ? json_integer_value(json_object_get(s, "memUsedMiB")) : -1, used,
                sizeof(used));
        cli_mib(s ? json_integer_value(json_object_get(s, "memTotalMiB")) : -1, total,
                sizeof(total));
        snprintf(mem, sizeof(mem), "%s/%s", used, total);
        if (!ns)
            printf("%-16s  ", json_string_value(json_object_get(row, "ns")));
        if (s)
            printf("%-*s   %-4lld   %-4lld   %-8s   %s", w, who,
                   (long long)json_integer_value(json_object_get(s, "pods")),
                   (long long)json_integer_value(json_object_get(s, "gpus")), u, mem);
        else
            printf("%-*s   %-4s   %-4s   %-8s   %s", w, who, "-", "-", "-", "-");
        print_fake(json_is_true(json_object_get(s, "fake")));
        json_decref(s);
    }
    json_decref(pods);
    json_decref(seen);
    json_decref(rows);
    return 0;
}

static int top_one_job(ty_client *cl, const char *ns, const char *name)
{
    json_t *pods, *p, *job;
    size_t i;
    bool any = false;
    ty_error err;

    ty_error_init(&err);
    if (!(job = cli_job_find(cl, ns, name, &err)) || !(pods = cli_job_pods(cl, job, &err))) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE && err.code != TY_EINVALID);
        ty_error_clear(&err);
        json_decref(job);
        return 1;
    }
    {
        const char *text = annotation(job);
        json_t *s = text ? json_loads(text, 0, NULL) : NULL;
        const json_t *util = json_object_get(s, "util");
        char u[16], used[24], total[24];
        pct(json_is_integer(util) ? (int)json_integer_value(util) : -1, u, sizeof(u));
        cli_mib(s ? json_integer_value(json_object_get(s, "memUsedMiB")) : -1, used,
                sizeof(used));
        cli_mib(s ? json_integer_value(json_object_get(s, "memTotalMiB")) : -1, total,
                sizeof(total));
        printf("Job: %s/%s   GPUs: %lld   Utilization: %s   Memory: %s/%s",
               json_string_value(json_object_get(job, "kind")) ?: "", meta_str(job, "name"),
               s ? (long long)json_integer_value(json_object_get(s, "gpus")) : 0LL, u, used,
               total);
        print_fake(json_is_true(json_object_get(s, "fake")));
        json_decref(s);
        json_decref(job);
    }
    printf("%-40s   %-16s   %-3s   %-4s   %-8s   %s\n", "POD", "NODE", "GPU", "UTIL",
           "MEM-USED", "MEM-TOTAL");
    json_array_foreach(pods, i, p) {
        cli_gpu_report rep;
        const char *node =
            json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        if (!pod_running(p) || cli_spec_gpus(json_object_get(p, "spec")) <= 0)
            continue;
        any = true;
        if (cli_gpu_report_parse(annotation(p), &rep) < 0 || rep.n == 0) {
            printf("%-40s   %-16s   %-3s   %-4s   %-8s   %s\n", meta_str(p, "name"),
                   node ? node : "-", "-", "-", "-", "-");
            continue;
        }
        for (size_t g = 0; g < rep.n; g++) {
            char u[16], used[24], total[24];
            pct(rep.g[g].util, u, sizeof(u));
            cli_mib(rep.g[g].mem_used, used, sizeof(used));
            cli_mib(rep.g[g].mem_total, total, sizeof(total));
            printf("%-40s   %-16s   %-3d   %-4s   %-8s   %s", meta_str(p, "name"),
                   node ? node : "-", rep.g[g].index, u, used, total);
            print_fake(rep.fake);
        }
    }
    if (!any)
        printf("(no running pod with GPUs)\n");
    json_decref(pods);
    return 0;
}

int cmd_top(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    ty_client *cl;
    const char *what, *name;
    int c, rc;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT | CLI_F_ALL, "h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'h': top_usage(stdout); return 0;
        default: top_usage(stderr); return 2;
        }
    }
    if (argc - optind < 1 || argc - optind > 2) {
        top_usage(stderr);
        return 2;
    }
    what = argv[optind];
    name = argc - optind == 2 ? argv[optind + 1] : NULL;
    if (strcmp(what, "node") != 0 && strcmp(what, "nodes") != 0 && strcmp(what, "job") != 0 &&
        strcmp(what, "jobs") != 0) {
        fprintf(stderr, "error: unknown resource %s: want node or job\n", what);
        top_usage(stderr);
        return 2;
    }
    if (!(cl = cli_connect(&ctx)))
        return 1;
    if (what[0] == 'n')
        rc = top_node(cl, name);
    else if (name)
        rc = top_one_job(cl, ctx.ns, name);
    else
        rc = top_jobs(cl, ctx.all_namespaces ? NULL : ctx.ns);
    client_free(cl);
    return rc;
}
