/* metrics.h - process-wide counters and gauges in the Prometheus text format.
 *
 * A series is a metric name plus a label set written in Prometheus syntax
 * ("job_namespace=\"default\",framework=\"pytorch\""). Thread-safe. The
 * server serves ty_metrics_render() at /metrics. */
#ifndef TY_BASE_METRICS_H
#define TY_BASE_METRICS_H

#include "base/buf.h"

typedef enum { TY_COUNTER, TY_GAUGE } ty_metric_type;

/* Declares a metric (idempotent). Call before the first update, e.g. at start. */
void ty_metric_declare(const char *name, ty_metric_type type, const char *help);
/* Adds delta to a series (created at 0 on first use). labels may be NULL or "". */
void ty_metric_add(const char *name, const char *labels, double delta);
/* Sets a gauge series. */
void ty_metric_set(const char *name, const char *labels, double value);
/* Current value of a series (0 if absent): for tests. */
double ty_metric_get(const char *name, const char *labels);
/* Appends every metric in the Prometheus text exposition format. */
void ty_metrics_render(ty_buf *out);

#endif
