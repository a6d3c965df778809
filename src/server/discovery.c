/* discovery.c - /version, health, API discovery and OpenAPI documents.
 *
 * Discovery is served in the legacy (non-aggregated) form: kubectl asks for
 * aggregated discovery first but accepts APIVersions / APIGroupList and then
 * walks /api/v1 and /apis/<group>/<version>.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/kinds.h"
#include "base/metrics.h"
#include "server/http.h"
#include "server/review.h"

#define TY_K8S_MAJOR "1"
#define TY_K8S_MINOR "32"

static const char *const all_verbs[] = {"create", "delete", "deletecollection", "get",
                                        "list",   "patch",  "update",           "watch"};

/* Namespaces have no deletecollection, as kube-apiserver's storage of them:
 * one request would delete every namespace with everything in it. */
static json_t *verbs_json(const api_resource *res)
{
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof(all_verbs) / sizeof(all_verbs[0]); i++)
        if (res != &api_namespace || strcmp(all_verbs[i], "deletecollection") != 0)
            json_array_append_new(a, json_string(all_verbs[i]));
    return a;
}

static json_t *str_list(const char *const *list, size_t max)
{
    json_t *a = json_array();
    for (size_t i = 0; i < max && list[i]; i++)
        json_array_append_new(a, json_string(list[i]));
    return a;
}

static json_t *subresource_entry(const api_resource *res, const char *sub)
{
    char name[128];
    const char *kind = res->kind;
    json_t *verbs;

    snprintf(name, sizeof(name), "%s/%s", res->plural, sub);
    if (strcmp(sub, "status") == 0) {
        verbs = json_pack("[sss]", "get", "patch", "update");
    } else if (strcmp(sub, "binding") == 0) {
        verbs = json_pack("[s]", "create");
        kind = "Binding";
    } else {
        verbs = json_pack("[s]", "get");
    }
    return json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", name, "singularName", "",
                     "namespaced", res->namespaced, "kind", kind, "verbs", verbs);
}

/* The review APIs (review.c) of group/version: create only, stored nowhere. */
static void review_entries(const char *group, const char *version, json_t *list)
{
    size_t n;
    const review_resource *rv = review_resources(&n);

    for (size_t i = 0; i < n && strcmp(version, "v1") == 0; i++)
        if (strcmp(rv[i].group, group) == 0)
            json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:[s]}", "name",
                                                  rv[i].plural, "singularName", "",
                                                  "namespaced", rv[i].namespaced, "kind",
                                                  rv[i].kind, "verbs", "create"));
}

static bool is_review_group(const char *group)
{
    size_t n;
    const review_resource *rv = review_resources(&n);

    for (size_t i = 0; i < n; i++)
        if (strcmp(rv[i].group, group) == 0)
            return true;
    return false;
}

static json_t *resource_list(const char *group, const char *version)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *list = json_array();
    char gv[128];

    for (size_t i = 0; i < n; i++) {
        const api_resource *res = all[i];
        if (strcmp(res->group, group) != 0 || strcmp(res->version, version) != 0)
            continue;
        json_t *e = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", res->plural, "singularName",
                              res->singular, "namespaced", res->namespaced, "kind", res->kind,
                              "verbs", verbs_json(res));
        if (res->short_names[0])
            json_object_set_new(e, "shortNames", str_list(res->short_names, 4));
        if (res->categories[0])
            json_object_set_new(e, "categories", str_list(res->categories, 3));
        json_array_append_new(list, e);
        if (res->has_status)
            json_array_append_new(list, subresource_entry(res, "status"));
        for (int j = 0; j < 4 && res->subresources[j]; j++)
            json_array_append_new(list, subresource_entry(res, res->subresources[j]));
    }
    review_entries(group, version, list);
    if (json_array_size(list) == 0) {
        json_decref(list);
        return NULL;
    }
    if (*group)
        snprintf(gv, sizeof(gv), "%s/%s", group, version);
    else
        snprintf(gv, sizeof(gv), "%s", version);
    return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                     "groupVersion", gv, "resources", list);
}

/* One APIGroup object for group, or NULL when no resource is in it. */
static json_t *api_group(const char *group)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *versions = json_array();
    char gv[128];

    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i]->group, group) != 0)
            continue;
        snprintf(gv, sizeof(gv), "%s/%s", group, all[i]->version);
        bool seen = false;
        size_t k;
        json_t *v;
        json_array_foreach(versions, k, v)
        {
            if (strcmp(json_string_value(json_object_get(v, "groupVersion")), gv) == 0)
                seen = true;
        }
        if (!seen)
            json_array_append_new(versions, json_pack("{s:s, s:s}", "groupVersion", gv,
                                                      "version", all[i]->version));
    }
    if (json_array_size(versions) == 0 && is_review_group(group)) {
        snprintf(gv, sizeof(gv), "%s/v1", group);
        json_array_append_new(versions, json_pack("{s:s, s:s}", "groupVersion", gv, "version",
                                                  "v1"));
    }
    if (json_array_size(versions) == 0) {
        json_decref(versions);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:O}", "kind", "APIGroup", "apiVersion", "v1",
                     "name", group, "versions", versions, "preferredVersion",
                     json_array_get(versions, 0));
}

static json_t *api_group_list(void)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *groups = json_array();

    for (size_t i = 0; i < n; i++) {
        const char *g = all[i]->group;
        bool seen = false;
        if (!*g)
            continue;
        for (size_t j = 0; j < i; j++)
            if (strcmp(all[j]->group, g) == 0)
                seen = true;
        if (!seen) {
            json_t *grp = api_group(g);
            json_object_del(grp, "kind");
            json_object_del(grp, "apiVersion");
            json_array_append_new(groups, grp);
        }
    }
    for (const char *const *g = (const char *const[]){"authentication.k8s.io",
                                                        "authorization.k8s.io", NULL};
         *g; g++) {
        json_t *grp = api_group(*g);
        json_object_del(grp, "kind");
        json_object_del(grp, "apiVersion");
        json_array_append_new(groups, grp);
    }
    return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups",
                     groups);
}

static enum MHD_Result not_found(http_req *r)
{
    ty_error err;
    ty_error_init(&err);
    ty_seterr(&err, TY_ENOTFOUND, "the server could not find the requested resource");
    enum MHD_Result ret = http_send_error(r, &err, NULL, NULL);
    ty_error_clear(&err);
    return ret;
}

static enum MHD_Result send_or_404(http_req *r, json_t *doc)
{
    return doc ? http_send_json(r, 200, doc) : not_found(r);
}

/* The /openapi/v2 document in both forms, made once: the served kinds never
 * change while the server runs, and making it costs tens of milliseconds
 * (an anonymous GET must not cost that each time). */
static struct {
    pthread_once_t once;
    char *json, *pb;
    size_t json_len, pb_len;
} v2 = {.once = PTHREAD_ONCE_INIT};

static void make_v2(void)
{
    json_t *doc = api_openapi_v2();

    if (!doc)
        return;
    v2.json = json_dumps(doc, JSON_COMPACT);
    v2.json_len = v2.json ? strlen(v2.json) : 0;
    v2.pb = api_openapi_v2_protobuf(doc, &v2.pb_len);
    json_decref(doc);
}

/* GET /openapi/v2: protobuf when asked for (kubectl does), else JSON. */
static enum MHD_Result openapi_v2(http_req *r)
{
    pthread_once(&v2.once, make_v2);
    if (!r->accept || !strstr(r->accept, "protobuf"))
        return http_send_text(r, 200, "application/json", v2.json, v2.json_len);
    return http_send_text(r, 200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                          v2.pb, v2.pb_len);
}

static enum MHD_Result openapi(http_req *r)
{
    if (r->nsegs == 2)
        return http_send_json(r, 200, api_openapi_v3_index());
    if (r->nsegs == 4 && strcmp(r->segs[2], "api") == 0)
        return send_or_404(r, api_openapi_v3("", r->segs[3]));
    if (r->nsegs == 5 && strcmp(r->segs[2], "apis") == 0)
        return send_or_404(r, api_openapi_v3(r->segs[3], r->segs[4]));
    return not_found(r);
}

/* Gauges read at each scrape: what the store holds in memory (a walk over
 * every object under the index's read lock: about a millisecond per
 * 100,000 objects) and the process's resident memory and CPU time, under
 * the names Prometheus' process collector gives them. */
static void scrape_gauges(ty_store *s)
{
    static const struct {
        const char *name;
        ty_metric_type type;
        const char *help;
    } decl[] = {
        {"trainyard_store_objects", TY_GAUGE,
         "Objects in the store (the current version of each)."},
        {"trainyard_store_object_trees", TY_GAUGE, "Objects holding a parsed JSON tree (a cache)."},
        {"trainyard_store_memory_bytes", TY_GAUGE,
         "Bytes of object texts held in memory, by form (plain, compressed, view)."},
        {"trainyard_store_transactions_total", TY_COUNTER,
         "SQLite transactions the group commit made."},
        {"trainyard_store_writes_total", TY_COUNTER, "Writes those transactions held."},
        {"trainyard_store_commit_section_seconds_total", TY_COUNTER,
         "Time the group commit's leaders held the section every writer waits for."},
        {"trainyard_store_commit_section_cpu_seconds_total", TY_COUNTER,
         "CPU time of the leaders within that section (the rest they waited)."},
        {"trainyard_store_reaper_overflows_total", TY_COUNTER,
         "Times the reaper, which frees in idle CPU time, fell behind and its helper freed what "
         "waited for it."},
        {"process_resident_memory_bytes", TY_GAUGE, "Resident memory size in bytes."},
        {"process_cpu_seconds_total", TY_COUNTER,
         "Total user and system CPU time spent in seconds."},
    };
    store_commit_stats c;
    store_mem m;
    struct rusage ru;
    long pages = 0;
    FILE *f;

    for (size_t i = 0; i < sizeof(decl) / sizeof(decl[0]); i++)
        ty_metric_declare(decl[i].name, decl[i].type, decl[i].help);
    store_memory(s, &m);
    ty_metric_set("trainyard_store_objects", NULL, (double)m.objects);
    ty_metric_set("trainyard_store_object_trees", NULL, (double)m.trees);
    ty_metric_set("trainyard_store_memory_bytes", "form=\"plain\"", (double)m.plain_bytes);
    ty_metric_set("trainyard_store_memory_bytes", "form=\"compressed\"",
                  (double)m.compressed_bytes);
    ty_metric_set("trainyard_store_memory_bytes", "form=\"view\"", (double)m.view_bytes);
    store_commit_stats_get(s, &c);
    ty_metric_set("trainyard_store_transactions_total", NULL, (double)c.transactions);
    ty_metric_set("trainyard_store_writes_total", NULL, (double)c.writes);
    ty_metric_set("trainyard_store_commit_section_seconds_total", NULL, c.held_s);
    ty_metric_set("trainyard_store_commit_section_cpu_seconds_total", NULL, c.held_cpu_s);
    ty_metric_set("trainyard_store_reaper_overflows_total", NULL, (double)c.reaper_overflows);
    if ((f = fopen("/proc/self/statm", "r"))) {
        if (fscanf(f, "%*s %ld", &pages) == 1)
            ty_metric_set("process_resident_memory_bytes", NULL,
                          (double)pages * (double)sysconf(_SC_PAGESIZE));
        fclose(f);
    }
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        ty_metric_set("process_cpu_seconds_total", NULL,
                      (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                          (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
}

enum MHD_Result discovery_handle(http_req *r, bool *handled)
{
    const char *s0 = r->nsegs > 0 ? r->segs[0] : "";
    bool get = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;

    *handled = true;
    if (r->nsegs == 1 && get && strcmp(s0, "version") == 0)
        return http_send_json(
            r, 200,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", TY_K8S_MAJOR,
                      "minor", TY_K8S_MINOR, "gitVersion", "v1.32.0-trainyard", "gitCommit", "",
                      "gitTreeState", "clean", "buildDate", __DATE__, "goVersion", "",
                      "compiler", "gcc", "platform", "linux/amd64"));
    if (get && r->nsegs >= 1 &&
        (strcmp(s0, "healthz") == 0 || strcmp(s0, "readyz") == 0 || strcmp(s0, "livez") == 0))
        return http_send_text(r, 200, "text/plain; charset=utf-8", "ok", 2);
    if (get && r->nsegs == 1 && strcmp(s0, "metrics") == 0) {
        ty_buf b = {0};
        size_t len;
        scrape_gauges(server_store(r->srv));
        ty_metrics_render(&b);
        char *text = ty_buf_steal(&b, &len);
        return http_send_buffer(r, 200, "text/plain; version=0.0.4", text, len);
    }
    if (get && r->nsegs == 1 && strcmp(s0, "api") == 0)
        return http_send_json(r, 200,
                              json_pack("{s:s, s:[s], s:[]}", "kind", "APIVersions", "versions",
                                        "v1", "serverAddressByClientCIDRs"));
    if (get && r->nsegs == 2 && strcmp(s0, "api") == 0)
        return send_or_404(r, resource_list("", r->segs[1]));
    if (get && r->nsegs == 1 && strcmp(s0, "apis") == 0)
        return http_send_json(r, 200, api_group_list());
    if (get && r->nsegs == 2 && strcmp(s0, "apis") == 0)
        return send_or_404(r, api_group(r->segs[1]));
    if (get && r->nsegs == 3 && strcmp(s0, "apis") == 0)
        return send_or_404(r, resource_list(r->segs[1], r->segs[2]));
    if (get && r->nsegs >= 2 && strcmp(s0, "openapi") == 0 && strcmp(r->segs[1], "v3") == 0)
        return openapi(r);
    if (get && r->nsegs == 2 && strcmp(s0, "openapi") == 0 && strcmp(r->segs[1], "v2") == 0)
        return openapi_v2(r);
    if (r->nsegs >= 1 && strcmp(s0, "openapi") == 0)
        return not_found(r);
    *handled = false;
    return MHD_NO;
}
