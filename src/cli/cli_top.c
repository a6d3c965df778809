/* cli_top.c - the pure parts of `trainyard logs JOB`, `top` and `queue`
 * (cli_top.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli_top.h"
#include "cli/termsafe.h"

#define YEAR_S (366L * 24 * 3600)

int cli_duration_seconds(const char *s, long *secs)
{
    long total = 0;

    if (!s || !*s)
        return -1;
    while (*s) {
        char *end;
        long v, unit;
        if (*s < '0' || *s > '9')
            return -1;
        v = strtol(s, &end, 10);
        if (v < 0 || v > YEAR_S)
            return -1;
        switch (*end) {
        case 'h': unit = 3600; break;
        case 'm': unit = 60; break;
        case 's': unit = 1; break;
        default: return -1; /* kubectl wants a unit: "5" is not a duration */
        }
        total += v * unit;
        if (total > YEAR_S)
            return -1;
        s = end + 1;
    }
    *secs = total;
    return 0;
}

static const char *label(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "labels"), key));
}

static const char *annotation(const json_t *pod, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), key));
}

/* Lower ranks first: the replica a job's log is read from. */
static int replica_rank(const json_t *pod, const char *first_task)
{
    const char *type = label(pod, "training.kubeflow.org/replica-type");
    const char *task = annotation(pod, "volcano.sh/task-spec");

    if (type) {
        static const char *const order[] = {"chief", "master", "launcher", "worker"};
        for (int i = 0; i < 4; i++)
            if (strcasecmp(type, order[i]) == 0)
                return i;
        return 4;
    }
    if (task && first_task)
        return strcmp(task, first_task) == 0 ? 0 : 4;
    /* a TrainJob's: an MPI job's launcher, else the trainer's node 0 (whose
     * log the Python SDK reads), before the initializers */
    type = label(pod, "jobset.sigs.k8s.io/replicatedjob-name");
    if (type)
        return !strcmp(type, "launcher") ? 2 : !strcmp(type, "node") ? 3 : 4;
    return 4;
}

static long replica_index(const json_t *pod)
{
    const char *v = label(pod, "training.kubeflow.org/replica-index");
    if (!v)
        v = annotation(pod, "volcano.sh/task-index");
    if (!v)
        v = label(pod, "volcano.sh/task-index");
    if (!v)
        v = label(pod, "batch.kubernetes.io/job-completion-index");
    return v ? strtol(v, NULL, 10) : LONG_MAX;
}

static const char *pod_name(const json_t *pod)
{
    const char *n =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    return n ? n : "";
}

long cli_default_replica(const json_t *pods, const char *first_task)
{
    long best = -1;
    int best_rank = 0;
    long best_index = 0;

    for (size_t i = 0; i < json_array_size(pods); i++) {
        const json_t *p = json_array_get(pods, i);
        int rank = replica_rank(p, first_task);
        long idx = replica_index(p);
        if (best >= 0) {
            const json_t *b = json_array_get(pods, (size_t)best);
            if (rank > best_rank || (rank == best_rank && idx > best_index) ||
                (rank == best_rank && idx == best_index && strcmp(pod_name(p), pod_name(b)) >= 0))
                continue;
        }
        best = (long)i;
        best_rank = rank;
        best_index = idx;
    }
    return best;
}

int cli_gpu_report_parse(const char *text, cli_gpu_report *out)
{
    json_t *r = text ? json_loads(text, 0, NULL) : NULL;
    const json_t *gpus = json_object_get(r, "gpus");
    size_t i;
    json_t *g;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(r) || !json_is_array(gpus)) {
        json_decref(r);
        return -1;
    }
    out->fake = json_is_true(json_object_get(r, "fake"));
    json_array_foreach(gpus, i, g) {
        cli_gpu_reading *d;
        const json_t *v;
        if (out->n == CLI_GPU_MAX)
            break;
        d = &out->g[out->n++];
        d->index = (int)json_integer_value(json_object_get(g, "index"));
        v = json_object_get(g, "util");
        d->util = json_is_integer(v) ? (int)json_integer_value(v) : -1;
        v = json_object_get(g, "memUsedMiB");
        d->mem_used = json_is_integer(v) ? json_integer_value(v) : -1;
        v = json_object_get(g, "memTotalMiB");
        d->mem_total = json_is_integer(v) ? json_integer_value(v) : -1;
    }
    json_decref(r);
    return 0;
}

void cli_gpu_report_sum(const cli_gpu_report *r, int *busy, int *mean_util,
                        long long *mem_used, long long *mem_total)
{
    long long sum = 0, used = 0, total = 0;
    int n = 0, b = 0;

    for (size_t i = 0; i < r->n; i++) {
        if (r->g[i].util >= 0) {
            sum += r->g[i].util;
            n++;
            if (r->g[i].util > 0)
                b++;
        }
        if (r->g[i].mem_used >= 0)
            used += r->g[i].mem_used;
        if (r->g[i].mem_total >= 0)
            total += r->g[i].mem_total;
    }
    *busy = b;
    *mean_util = n ? (int)(sum / n) : -1;
    *mem_used = r->n ? used : -1;
    *mem_total = r->n ? total : -1;
}

/* ---- the queue's order ---- */

typedef struct waiting {
    json_t *pg;
    long long prio;
    const char *created, *ns, *name;
} waiting;

static int cmp_waiting(const void *pa, const void *pb)
{
    const waiting *a = pa, *b = pb;
    int r;

    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    /* RFC 3339 in UTC (what the server writes) sorts as text */
    if ((r = strcmp(a->created, b->created)))
        return r;
    if ((r = strcmp(a->ns, b->ns)))
        return r;
    return strcmp(a->name, b->name);
}

static const char *str_or_empty(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

void cli_sort_waiting(json_t *groups, const json_t *classes)
{
    size_t n = json_array_size(groups);
    waiting *w = n ? calloc(n, sizeof(*w)) : NULL;

    if (!w)
        return;
    for (size_t i = 0; i < n; i++) {
        json_t *pg = json_array_get(groups, i);
        const json_t *meta = json_object_get(pg, "metadata");
        const char *pc =
            json_string_value(json_object_get(json_object_get(pg, "spec"), "priorityClassName"));
        w[i] = (waiting){.pg = json_incref(pg),
                         .prio = pc ? json_integer_value(json_object_get(classes, pc)) : 0,
                         .created = str_or_empty(json_object_get(meta, "creationTimestamp")),
                         .ns = str_or_empty(json_object_get(meta, "namespace")),
                         .name = str_or_empty(json_object_get(meta, "name"))};
    }
    qsort(w, n, sizeof(*w), cmp_waiting);
    for (size_t i = 0; i < n; i++)
        json_array_set_new(groups, i, w[i].pg); /* steals the reference taken above */
    free(w);
}

void cli_mib(long long mib, char *buf, size_t len)
{
    if (mib < 0)
        snprintf(buf, len, "-");
    else if (mib >= 1024 && mib % 1024 == 0)
        snprintf(buf, len, "%lldGi", mib / 1024);
    else if (mib >= 10240)
        snprintf(buf, len, "%.1fGi", (double)mib / 1024);
    else
        snprintf(buf, len, "%lldMi", mib);
}

/* ---- colour ---- */

static bool colored(FILE *out)
{
    const char *no = getenv("NO_COLOR");
    int fd = cli_term_fd(out);

    return !(no && *no) && fd >= 0 && isatty(fd);
}

static const char *color_of(const char *word)
{
    static const struct {
        const char *word, *esc;
    } map[] = {{"Running", "\033[32m"}, {"Open", "\033[32m"},     {"Succeeded", "\033[32m"},
               {"Pending", "\033[33m"}, {"Inqueue", "\033[33m"},  {"Closing", "\033[33m"},
               {"Failed", "\033[31m"},  {"Closed", "\033[31m"},   {"fake", "\033[35m"}};

    for (size_t i = 0; word && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(word, map[i].word) == 0)
            return map[i].esc;
    return NULL;
}

void cli_print_colored(FILE *out, const char *word, const char *text)
{
    const char *c = color_of(word);

    if (!text)
        text = word;
    if (!c || !colored(out)) {
        fputs(text, out);
        return;
    }
    cli_term_raw(out, c);
    fputs(text, out);
    cli_term_raw(out, "\033[0m");
}
