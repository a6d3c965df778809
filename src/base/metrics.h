/* metrics.h - process-wide counters and gauges in the Prometheus text format.
 *
 * A series is a metric name plus a label set written in Prometheus syntax
 * ("job_namespace=\"default\",framework=\"pytorch\""). Thread-safe. The
 * server serves ty_metrics_render() at /metrics. */
#ifndef TY_BASE_METRICS_H
#define TY_BASE_METRICS_H

#include "base/buf.h"

typedef enum { TY_COUNTER, TY_GAUGE, TY_HISTOGRAM } ty_metric_type;

/* Declares a metric (idempotent). Call before the first update, e.g. at start. */
void ty_metric_declare(const char *name, ty_metric_type type, const char *help);
/* Adds delta to a series (created at 0 on first use). labels may be NULL or "". */
void ty_metric_add(const char *name, const char *labels, double delta);
/* Sets a gauge series. */
void ty_metric_set(const char *name, const char *labels, double value);
/* Declares a histogram with these upper bounds (ascending, at most
 * TY_HIST_MAX_BUCKETS; +Inf is implied), rendered as Prometheus's
 * name_bucket{...,le="B"}, name_sum and name_count. Idempotent. */
#define TY_HIST_MAX_BUCKETS 24
void ty_metric_declare_histogram(const char *name, const char *help, const double *bounds,
                                 size_t nbounds);
/* One observation of value into the histogram's series of these labels. */
void ty_metric_observe(const char *name, const char *labels, double value);
/* value as a label value of the text format into out (len bytes, cut
 * short when too long): backslash, double quote and newline escaped, so
 * that no value can end its label or its line. Returns out. */
const char *ty_metric_label_escape(const char *value, char *out, size_t len);
/* Current value of a series (0 if absent): for tests. A histogram's is its
 * count of observations. */
double ty_metric_get(const char *name, const char *labels);
/* Appends every metric in the Prometheus text exposition format, then
 * what each collector writes. */
void ty_metrics_render(ty_buf *out);

/* A collector writes series of its own (with their HELP and TYPE lines) at
 * each render: for readings whose label sets come and go, which the
 * registry would keep for ever. It runs under the registry's lock, so it
 * must not call the ty_metric_* functions. */
typedef void (*ty_metrics_collector)(ty_buf *out, void *arg);
/* 0, or -1 when the table of collectors is full. */
int ty_metrics_add_collector(ty_metrics_collector fn, void *arg);
/* Removes it (a no-op when absent); a render under way ends first. */
void ty_metrics_remove_collector(ty_metrics_collector fn, void *arg);

#endif
