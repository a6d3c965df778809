/* metrics.c - a small registry: few metrics, few series, so plain arrays and
 * one mutex are enough; rendering is rare (a scrape). */
#include "base/metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_METRICS 128
#define MAX_SERIES 4096
#define MAX_COLLECTORS 8

typedef struct series {
    int metric;
    char *labels;
    double value;
} series;

static struct {
    char *name, *help;
    ty_metric_type type;
} metrics[MAX_METRICS];
static int nmetrics;
static series all_series[MAX_SERIES];
static int nseries;
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

void ty_metric_declare(const char *name, ty_metric_type type, const char *help)
{
    pthread_mutex_lock(&mu);
    if (find_metric(name) < 0 && nmetrics < MAX_METRICS) {
        metrics[nmetrics].name = strdup(name);
        metrics[nmetrics].help = strdup(help ? help : "");
        metrics[nmetrics].type = type;
        nmetrics++;
    }
    pthread_mutex_unlock(&mu);
}

/* The series, created when absent; NULL when the metric is undeclared or full. */
static series *find_series(const char *name, const char *labels, int create)
{
    int m = find_metric(name);
    if (m < 0)
        return NULL;
    labels = labels ? labels : "";
    for (int i = 0; i < nseries; i++)
        if (all_series[i].metric == m && strcmp(all_series[i].labels, labels) == 0)
            return &all_series[i];
    if (!create || nseries >= MAX_SERIES)
        return NULL;
    all_series[nseries] = (series){m, strdup(labels), 0};
    return &all_series[nseries++];
}

void ty_metric_add(const char *name, const char *labels, double delta)
{
    pthread_mutex_lock(&mu);
    series *s = find_series(name, labels, 1);
    if (s)
        s->value += delta;
    pthread_mutex_unlock(&mu);
}

void ty_metric_set(const char *name, const char *labels, double value)
{
    pthread_mutex_lock(&mu);
    series *s = find_series(name, labels, 1);
    if (s)
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

void ty_metrics_render(ty_buf *out)
{
    pthread_mutex_lock(&mu);
    for (int m = 0; m < nmetrics; m++) {
        ty_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name, metrics[m].help,
                      metrics[m].name, metrics[m].type == TY_COUNTER ? "counter" : "gauge");
        for (int i = 0; i < nseries; i++) {
            if (all_series[i].metric != m)
                continue;
            if (*all_series[i].labels)
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
