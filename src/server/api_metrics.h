/* api_metrics.h - kube-apiserver's request metrics: apiserver_request_total
 * (by verb, group, version, resource, subresource, scope, component and
 * code) and apiserver_request_duration_seconds (a histogram with
 * kube-apiserver's buckets, without the long-running requests: watches and
 * followed logs last as long as their clients want). */
#ifndef TY_SERVER_API_METRICS_H
#define TY_SERVER_API_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "server/reqattr.h"

void api_metrics_declare(void);
/* One answered request: what it asked (a), the status answered (0 when
 * none was: counted as 500, as kube-apiserver counts a dropped request),
 * and how long since its headers came. Labels name only resources the
 * server serves (another path's resource is "" and its verb the method):
 * what a client types cannot grow the series without bound. */
void api_metrics_record(const reqattr *a, const char *content_type, unsigned code,
                        int64_t elapsed_us, bool long_running);

#endif
