/* metrics.c - a small registry: few metrics, a few thousand series at most,
 * so plain arrays and one mutex are enough; a hash index finds a series
 * without a scan (the API server updates two per request); rendering is
 * rare (a scrape). */
#include "base/metrics.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_METRICS 256
#define MAX_SERIES 4096
#define MAX_COLLECTORS 8
#define INDEX_SLOTS (2 * MAX_SERIES) /* a power of two, never more than half full */

typedef struct series {
    int metric;
    char *labels;
    double value;      /* a histogram's: its count */
    double sum;        /* a histogram's sum of observations */
    uint64_t *buckets; /* a histogram's count per bound (not cumulative), NULL otherwise */
} series;

static struct {
    char *name, *help;
    ty_metric_type type;
    double bounds[TY_HIST_MAX_BUCKETS];
    size_t nbounds;
} metrics[MAX_METRICS];
static int nmetrics;
static series all_series[MAX_SERIES];
static int nseries;
static int index_slots[INDEX_SLOTS]; /* series number + 1, 0 for a free slot */
static struct {
    ty_metrics_collector fn;
    void *arg;
} collectors[MAX_COLLECTORS];
static int ncollectors;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int find_metric(const char *name)
{
    for (int i = 0; i < nmetrics; i++)
        if (strcmp(metrics[i].name, name) == 0)
            return i;
    return -1;
}

static void declare(const char *name, ty_metric_type type, const char *help,
                    const double *bounds, size_t nbounds)
{
    pthread_mutex_lock(&mu);
    if (find_metric(name) < 0 && nmetrics < MAX_METRICS) {
        metrics[nmetrics].name = strdup(name);
        metrics[nmetrics].help = strdup(help ? help : "");
        metrics[nmetrics].type = type;
        if (nbounds > TY_HIST_MAX_BUCKETS)
            nbounds = TY_HIST_MAX_BUCKETS;
        if (bounds)
            memcpy(metrics[nmetrics].bounds, bounds, nbounds * sizeof(*bounds));
        metrics[nmetrics].nbounds = bounds ? nbounds : 0;
        nmetrics++;
    }
    pthread_mutex_unlock(&mu);
}

const char *ty_metric_label_escape(const char *value, char *out, size_t len)
{
    size_t o = 0;

    if (!len)
        return out;
    for (const char *p = value ? value : ""; *p && o + 2 < len; p++) {
        if (*p == '\\' || *p == '"') {
            out[o++] = '\\';
            out[o++] = *p;
        } else if (*p == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return out;
}

void ty_metric_declare(const char *name, ty_metric_type type, const char *help)
{
    declare(name, type == TY_HISTOGRAM ? TY_GAUGE : type, help, NULL, 0);
}

void ty_metric_declare_histogram(const char *name, const char *help, const double *bounds,
                                 size_t nbounds)
{
    declare(name, TY_HISTOGRAM, help, bounds, nbounds);
}

static size_t series_hash(int m, const char *labels)
{
    uint64_t h = 14695981039346656037ull ^ (uint64_t)m;
    for (const unsigned char *p = (const unsigned char *)labels; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h & (INDEX_SLOTS - 1));
}

/* The series, created when absent; NULL when the metric is undeclared or full. */
static series *find_series(const char *name, const char *labels, int create)
{
    int m = find_metric(name);
    size_t slot;
    series *s;

    if (m < 0)
        return NULL;
    labels = labels ? labels : "";
    for (slot = series_hash(m, labels); index_slots[slot]; slot = (slot + 1) & (INDEX_SLOTS - 1)) {
        s = &all_series[index_slots[slot] - 1];
        if (s->metric == m && strcmp(s->labels, labels) == 0)
            return s;
    }
    if (!create || nseries >= MAX_SERIES)
        return NULL;
    s = &all_series[nseries];
    *s = (series){.metric = m, .labels = strdup(labels)};
    if (!s->labels)
        return NULL;
    if (metrics[m].type == TY_HISTOGRAM &&
        !(s->buckets = calloc(metrics[m].nbounds + 1, sizeof(*s->buckets)))) {
        free(s->labels);
        return NULL;
    }
    index_slots[slot] = ++nseries;
    return s;
}

void ty_metric_observe(const char *name, const char *labels, double value)
{
    pthread_mutex_lock(&mu);
    series *s = find_series(name, labels, 1);
    if (s && s->buckets) {
        const double *b = metrics[s->metric].bounds;
        size_t n = metrics[s->metric].nbounds, i = 0;
        while (i < n && value > b[i])
            i++;
        s->buckets[i]++;
        s->value += 1;
        s->sum += value;
    }
    pthread_mutex_unlock(&mu);
}

void ty_metric_add(const char *name, const char *labels, double delta)
{
    pthread_mutex_lock(&mu);
    series *s = find_series(name, labels, 1);
    if (s && !s->buckets)
        s->value += delta;
    pthread_mutex_unlock(&mu);
}

void ty_metric_set(const char *name, const char *labels, double value)
{
    pthread_mutex_lock(&mu);
    series *s = find_series(name, labels, 1);
    if (s && !s->buckets)
        s->value = value;
    pthread_mutex_unlock(&mu);
}

double ty_metric_get(const char *name, const char *labels)
{
    double v = 0;
    pthread_mutex_lock(&mu);
    series *s = find_series(name, labels, 0);
    if (s)
        v = s->value;
    pthread_mutex_unlock(&mu);
    return v;
}

static const char *type_name(ty_metric_type t)
{
    return t == TY_COUNTER ? "counter" : t == TY_HISTOGRAM ? "histogram" : "gauge";
}

/* name_bucket (cumulative, le last), name_sum and name_count of s. */
static void render_histogram(ty_buf *out, int m, const series *s)
{
    const char *name = metrics[m].name, *sep = *s->labels ? "," : "";
    uint64_t cum = 0;

    for (size_t b = 0; b <= metrics[m].nbounds; b++) {
        char le[40];
        cum += s->buckets[b];
        if (b < metrics[m].nbounds)
            snprintf(le, sizeof(le), "%g", metrics[m].bounds[b]);
        else
            snprintf(le, sizeof(le), "+Inf");
        ty_buf_printf(out, "%s_bucket{%s%sle=\"%s\"} %llu\n", name, s->labels, sep, le,
                      (unsigned long long)cum);
    }
    if (*s->labels) {
        ty_buf_printf(out, "%s_sum{%s} %.17g\n", name, s->labels, s->sum);
        ty_buf_printf(out, "%s_count{%s} %llu\n", name, s->labels, (unsigned long long)cum);
    } else {
        ty_buf_printf(out, "%s_sum %.17g\n%s_count %llu\n", name, s->sum, name,
                      (unsigned long long)cum);
    }
}

void ty_metrics_render(ty_buf *out)
{
    pthread_mutex_lock(&mu);
    for (int m = 0; m < nmetrics; m++) {
        ty_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name, metrics[m].help,
                      metrics[m].name, type_name(metrics[m].type));
        for (int i = 0; i < nseries; i++) {
            if (all_series[i].metric != m)
                continue;
            if (all_series[i].buckets)
                render_histogram(out, m, &all_series[i]);
            else if (*all_series[i].labels)
                ty_buf_printf(out, "%s{%s} %.17g\n", metrics[m].name, all_series[i].labels,
                              all_series[i].value);
            else
                ty_buf_printf(out, "%s %.17g\n", metrics[m].name, all_series[i].value);
        }
    }
    for (int c = 0; c < ncollectors; c++)
        collectors[c].fn(out, collectors[c].arg);
    pthread_mutex_unlock(&mu);
}

int ty_metrics_add_collector(ty_metrics_collector fn, void *arg)
{
    int rc = -1;

    pthread_mutex_lock(&mu);
    if (ncollectors < MAX_COLLECTORS) {
        collectors[ncollectors].fn = fn;
        collectors[ncollectors].arg = arg;
        ncollectors++;
        rc = 0;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void ty_metrics_remove_collector(ty_metrics_collector fn, void *arg)
{
    pthread_mutex_lock(&mu);
    for (int c = 0; c < ncollectors; c++) {
        if (collectors[c].fn == fn && collectors[c].arg == arg) {
            collectors[c] = collectors[--ncollectors];
            break;
        }
    }
    pthread_mutex_unlock(&mu);
}
