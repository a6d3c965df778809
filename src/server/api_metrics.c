/* api_metrics.c - the API server's request count and latency in
 * kube-apiserver's metric names and labels (api_metrics.h). Every label
 * value is one of the server's own words (its resources, subresources,
 * verbs, status codes), never what a client typed: the set of series is
 * bounded whatever is asked, and nothing asked reaches the text. */
#include "server/api_metrics.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "api/registry.h"
#include "base/metrics.h"

#define REQ_TOTAL "apiserver_request_total"
#define REQ_DURATION "apiserver_request_duration_seconds"

/* kube-apiserver's buckets for apiserver_request_duration_seconds. */
static const double duration_bounds[] = {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8,
                                         1.0,   1.25,  1.5,  2,   3,   4,   5,   6,
                                         8,     10,    15,   20,  30,  45,  60};

void api_metrics_declare(void)
{
    ty_metric_declare(REQ_TOTAL, TY_COUNTER,
                      "Counter of apiserver requests broken out for each verb, dry run value, "
                      "group, version, resource, scope, component, and HTTP response code.");
    ty_metric_declare_histogram(REQ_DURATION,
                                "Response latency distribution in seconds for each verb, dry "
                                "run value, group, version, resource, subresource, scope and "
                                "component.",
                                duration_bounds,
                                sizeof(duration_bounds) / sizeof(duration_bounds[0]));
}

/* The verb as kube-apiserver reports it: LIST for a collection's GET,
 * APPLY for a server-side apply, the method otherwise. */
static const char *reported_verb(const reqattr *a, const char *content_type, char *buf,
                                 size_t len)
{
    static const struct {
        const char *verb, *reported;
    } map[] = {{"get", "GET"},       {"list", "LIST"},   {"watch", "WATCH"},
               {"create", "POST"},   {"update", "PUT"},  {"patch", "PATCH"},
               {"delete", "DELETE"}, {"deletecollection", "DELETE"}};
    size_t i;

    if (a->resource_request) {
        if (!strcmp(a->verb, "patch") && content_type &&
            strstr(content_type, "application/apply-patch"))
            return "APPLY";
        for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
            if (!strcmp(a->verb, map[i].verb))
                return map[i].reported;
    }
    /* a non-resource request's verb is its lowercased method: known ones only */
    for (i = 0; a->verb[i] && i + 1 < len && i < 8; i++)
        buf[i] = (char)toupper((unsigned char)a->verb[i]);
    buf[i] = '\0';
    static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                          "OPTIONS"};
    for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (!strcmp(buf, methods[i]))
            return buf;
    return "OTHER";
}

void api_metrics_record(const reqattr *a, const char *content_type, unsigned code,
                        int64_t elapsed_us, bool long_running)
{
    char vbuf[16], labels[512];
    const char *verb = reported_verb(a, content_type, vbuf, sizeof(vbuf));
    const char *group = "", *version = "", *resource = "", *sub = "", *scope = "";

    const api_resource *res = a->resource_request
                                  ? api_find(a->api_group, a->api_version, a->resource)
                                  : NULL;
    if (res) {
        group = a->api_group;
        version = a->api_version;
        resource = a->resource;
        scope = a->name[0] ? "resource" : a->ns[0] ? "namespace" : "cluster";
        /* only a subresource the resource has: any word a client types
         * (before authentication too) would be a new series each */
        if (a->subresource[0] && !strcmp(a->subresource, "status") && res->has_status)
            sub = "status";
        for (size_t i = 0; a->subresource[0] && i < 4 && res->subresources[i]; i++)
            if (!strcmp(a->subresource, res->subresources[i]))
                sub = res->subresources[i];
    }
    int n = snprintf(labels, sizeof(labels),
                     "verb=\"%s\",dry_run=\"\",group=\"%s\",version=\"%s\",resource=\"%s\","
                     "subresource=\"%s\",scope=\"%s\",component=\"apiserver\"",
                     verb, group, version, resource, sub, scope);
    if (n < 0 || (size_t)n >= sizeof(labels) - 16)
        return;
    if (!long_running)
        ty_metric_observe(REQ_DURATION, labels, (double)elapsed_us / 1e6);
    snprintf(labels + n, sizeof(labels) - (size_t)n, ",code=\"%u\"", code ? code : 500);
    ty_metric_add(REQ_TOTAL, labels, 1);
}
