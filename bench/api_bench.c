/* api_bench.c - load benchmark of the API server over plain HTTP.
 *
 * Not a test: it measures. Against a running `trainyard server` it
 *   1. creates N PyTorchJobs from K client threads (creates/s, latency),
 *   2. lists them, whole and in pages (time, bytes, item count verified),
 *   3. holds W watch streams open while one client patches U objects, and
 *      measures how long each change takes to reach every watcher,
 *   4. samples the server's VmRSS/VmHWM, and the CPU time of both
 *      processes, after each phase.
 *
 * Watch delivery latency is the watcher's CLOCK_REALTIME on receipt minus
 * the one the updater wrote into the object (annotation bench/sent-ns) just
 * before sending the PATCH: it includes the PATCH itself. Same host only.
 *
 * Every loop is bounded in count and in time (--time-limit), every request
 * has a timeout, and it talks only to the URL it is given.
 *
 * libcurl is used directly rather than through client.h so that every
 * request can carry a timeout and watch streams can be cut from outside. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_auth.h"
#include "bench_util.h"
#include "base/buf.h"

#define MAX_JOBS 1000000
#define MAX_CLIENTS 256
#define MAX_WATCHERS 1000
#define MAX_UPDATES 1000000
#define MAX_PAGES_SLACK 16
#define HTTP_BODY_CAP ((size_t)512 * 1024 * 1024)
#define WATCH_LINE_CAP ((size_t)8 * 1024 * 1024)
#define REQUEST_TIMEOUT_MS 30000L
#define CONNECT_TIMEOUT_MS 5000L
#define WATCH_CONNECT_WAIT_MS 3000
#define WATCH_WARMUP_WAIT_MS 15000
#define WATCH_DRAIN_WAIT_MS 15000

typedef struct bench_opts {
    const char *server;
    char ns[64];
    size_t jobs, clients, watchers, updates;
    long server_pid;
    long update_interval_us;
    int list_runs;
    int page_limit;
    int time_limit_s;
    const char *json_path; /* NULL: no JSON; "-": stdout */
    int64_t deadline_ns;   /* monotonic */
} bench_opts;

/* The server's memory, and both processes' CPU time so far: on a 2-core
 * machine the benchmark's own CPU is part of the picture. */
typedef struct rss_sample {
    const char *when;
    long rss_kb, hwm_kb; /* -1 when unknown */
    long threads;        /* the server's, -1 when unknown */
    double server_cpu_s; /* -1 when unknown */
    double bench_cpu_s;
} rss_sample;

#define MAX_ERR_KINDS 8
typedef struct err_tally {
    pthread_mutex_t mu;
    long status[MAX_ERR_KINDS];
    size_t count[MAX_ERR_KINDS];
    size_t other;
    char first[320]; /* first failed request: status and body */
} err_tally;

typedef struct bench_result {
    bool aborted, verify_failed, create_ran;
    char abort_reason[256];
    /* create */
    size_t created, create_errors, created_bytes;
    double create_wall_s, creates_per_s;
    lat_summary create_lat;
    err_tally create_err;
    /* list */
    size_t list_items, list_bytes;
    int list_runs;
    double list_first_ms, list_min_ms, list_median_ms, list_max_ms;
    char list_rv[32];
    size_t paged_pages, paged_items, paged_distinct, paged_bytes;
    double paged_ms;
    /* watch */
    size_t watchers_connected, watchers_warm;
    size_t updates_ok, update_errors;
    double update_wall_s, updates_per_s;
    lat_summary update_lat;
    err_tally update_err;
    size_t delivered, expected, missing, duplicates, watchers_incomplete, error_events;
    lat_summary delivery_lat;
    /* server memory */
    rss_sample rss[4];
    int nrss;
} bench_result;

/* ---- time and statistics --------------------------------------------- */

static bool past_deadline(const bench_opts *o)
{
    return mono_ns() >= o->deadline_ns;
}

/* ---- server memory ---------------------------------------------------- */

static void rss_sample_take(const bench_opts *o, bench_result *r, const char *when)
{
    rss_sample *s;
    char path[64], line[256];
    struct rusage ru;
    FILE *f;

    if (r->nrss >= (int)(sizeof(r->rss) / sizeof(r->rss[0])))
        return;
    s = &r->rss[r->nrss++];
    s->when = when;
    s->rss_kb = s->hwm_kb = s->threads = -1;
    s->server_cpu_s = -1;
    getrusage(RUSAGE_SELF, &ru);
    s->bench_cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    if (o->server_pid <= 0)
        return;
    s->server_cpu_s = proc_cpu_s(o->server_pid);
    snprintf(path, sizeof(path), "/proc/%ld/status", o->server_pid);
    f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            s->rss_kb = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "VmHWM:", 6) == 0)
            s->hwm_kb = strtol(line + 6, NULL, 10);
        else if (strncmp(line, "Threads:", 8) == 0)
            s->threads = strtol(line + 8, NULL, 10);
    }
    fclose(f);
}

/* ---- HTTP ------------------------------------------------------------- */

typedef struct bench_http {
    CURL *curl;
    const char *base;
    struct curl_slist *hdr_get, *hdr_json, *hdr_merge;
    ty_buf body;
    char error[CURL_ERROR_SIZE];
} bench_http;

static size_t http_on_body(char *data, size_t size, size_t n, void *arg)
{
    ty_buf *b = arg;
    size_t len = size * n;
    /* A hard cap: a runaway answer cannot take the benchmark's memory. */
    if (b->len + len > HTTP_BODY_CAP)
        return 0;
    return ty_buf_append(b, data, len) == 0 ? len : 0;
}

static int http_init(bench_http *h, const char *base)
{
    memset(h, 0, sizeof(*h));
    h->base = base;
    h->curl = curl_easy_init();
    h->hdr_get = curl_slist_append(NULL, "Accept: application/json");
    h->hdr_json = curl_slist_append(NULL, "Accept: application/json");
    h->hdr_json = curl_slist_append(h->hdr_json, "Content-Type: application/json");
    h->hdr_json = curl_slist_append(h->hdr_json, "Expect:");
    h->hdr_merge = curl_slist_append(NULL, "Accept: application/json");
    h->hdr_merge = curl_slist_append(h->hdr_merge, "Content-Type: application/merge-patch+json");
    h->hdr_merge = curl_slist_append(h->hdr_merge, "Expect:");
    if (!h->curl || !h->hdr_get || !h->hdr_json || !h->hdr_merge)
        return -1;
    bench_auth_apply(h->curl, &h->hdr_get);
    bench_auth_apply(h->curl, &h->hdr_json);
    bench_auth_apply(h->curl, &h->hdr_merge);
    curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h->curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->error);
    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, http_on_body);
    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &h->body);
    return 0;
}

static void http_fini(bench_http *h)
{
    if (h->curl)
        curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->hdr_get);
    curl_slist_free_all(h->hdr_json);
    curl_slist_free_all(h->hdr_merge);
    ty_buf_free(&h->body);
}

/* One request on the handle's kept-alive connection. Returns the HTTP status,
 * or 0 when no answer came (h->error says why). The answer is in h->body. */
static long http_do(bench_http *h, const char *method, const char *path, const char *body,
                    size_t len, bool merge_patch)
{
    char url[4096];
    long status = 0;

    h->body.len = 0;
    if (h->body.data)
        h->body.data[0] = '\0';
    h->error[0] = '\0';
    snprintf(url, sizeof(url), "%s%s", h->base, path);
    curl_easy_setopt(h->curl, CURLOPT_URL, url);
    if (!body) {
        curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") ? method : NULL);
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->hdr_get);
    } else {
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, merge_patch ? h->hdr_merge : h->hdr_json);
    }
    if (curl_easy_perform(h->curl) != CURLE_OK)
        return 0;
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static void err_tally_init(err_tally *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
}

/* Counts a failed request by status (0 = transport error) and keeps the first. */
static void err_tally_add(err_tally *t, const char *what, long status, const bench_http *h)
{
    int k;
    pthread_mutex_lock(&t->mu);
    for (k = 0; k < MAX_ERR_KINDS && t->count[k] && t->status[k] != status; k++)
        ;
    if (k == MAX_ERR_KINDS) {
        t->other++;
    } else {
        t->status[k] = status;
        t->count[k]++;
    }
    if (!t->first[0])
        snprintf(t->first, sizeof(t->first), "%s -> %ld %.240s", what, status,
                 status ? (h->body.data ? h->body.data : "") : h->error);
    pthread_mutex_unlock(&t->mu);
}

static void err_tally_print(FILE *f, const err_tally *t)
{
    for (int k = 0; k < MAX_ERR_KINDS && t->count[k]; k++)
        fprintf(f, "    status %ld%s: %zu\n", t->status[k], t->status[k] ? "" : " (no answer)",
                t->count[k]);
    if (t->other)
        fprintf(f, "    other statuses: %zu\n", t->other);
    if (t->first[0])
        fprintf(f, "    first: %s\n", t->first);
}

/* ---- phase 0: a namespace of our own ---------------------------------- */

static int ensure_namespace(bench_http *h, const char *ns)
{
    char body[256];
    long st;
    int n = snprintf(body, sizeof(body),
                     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\","
                     "\"labels\":{\"app\":\"api-bench\"}}}",
                     ns);
    st = http_do(h, "POST", "/api/v1/namespaces", body, (size_t)n, false);
    /* 403: a tenant may not make namespaces; the admin made theirs
     * (run-api-bench.sh's BENCH_AS_USER) */
    if (st == 201 || st == 200 || st == 409 || st == 403)
        return 0;
    fprintf(stderr, "api_bench: POST /api/v1/namespaces (%s) -> %ld %s\n", ns, st,
            st ? (h->body.data ? h->body.data : "") : h->error);
    return -1;
}

/* ---- phase 1: create -------------------------------------------------- */

/* A realistic single-node-per-replica training job. runPolicy.suspend keeps
 * any job controller that may run inside the server from starting 40,000
 * pods: the benchmark measures the API, not the runtime. */
#define BENCH_CONTAINER                                                                            \
    "{\"name\":\"pytorch\",\"image\":\"docker.io/kubeflowkatib/pytorch-mnist-cpu:v0.16.0\","       \
    "\"imagePullPolicy\":\"IfNotPresent\",\"command\":[\"python3\","                               \
    "\"/opt/pytorch-mnist/mnist.py\",\"--epochs=1\",\"--batch-size=64\"],"                         \
    "\"env\":[{\"name\":\"OMP_NUM_THREADS\",\"value\":\"2\"}],"                                    \
    "\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"4Gi\"},"                              \
    "\"limits\":{\"cpu\":\"2\",\"memory\":\"4Gi\"}}}"
#define BENCH_REPLICA(n)                                                                           \
    "{\"replicas\":" #n ",\"restartPolicy\":\"OnFailure\",\"template\":{\"metadata\":"             \
    "{\"labels\":{\"app\":\"api-bench\"}},\"spec\":{\"containers\":[" BENCH_CONTAINER "]}}}"

static int job_manifest(char *buf, size_t len, const char *ns, size_t i)
{
    return snprintf(buf, len,
                    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\","
                    "\"metadata\":{\"name\":\"bench-job-%06zu\",\"namespace\":\"%s\","
                    "\"labels\":{\"app\":\"api-bench\",\"bench/index\":\"%zu\"}},"
                    "\"spec\":{\"runPolicy\":{\"suspend\":true,\"cleanPodPolicy\":\"None\","
                    "\"backoffLimit\":3},\"pytorchReplicaSpecs\":{"
                    "\"Master\":" BENCH_REPLICA(1) ",\"Worker\":" BENCH_REPLICA(3) "}}}",
                    i, ns, i);
}

static void jobs_path(const char *ns, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs%s%s", ns, name ? "/" : "",
             name ? name : "");
}

typedef struct create_ctx {
    const bench_opts *o;
    atomic_size_t next, errors, bytes;
    atomic_bool stop;
    int64_t *lat_ns;   /* [jobs]; -1 for not sent */
    unsigned char *ok; /* [jobs] */
    err_tally *errs;
} create_ctx;

static void *create_worker(void *arg)
{
    create_ctx *cc = arg;
    const bench_opts *o = cc->o;
    char body[8192], path[512];
    bench_http h;

    jobs_path(o->ns, NULL, path, sizeof(path));
    if (http_init(&h, o->server) < 0) {
        atomic_store(&cc->stop, true);
        http_fini(&h);
        return NULL;
    }
    while (!atomic_load(&cc->stop)) {
        size_t i = atomic_fetch_add(&cc->next, 1);
        if (i >= o->jobs || past_deadline(o))
            break;
        int n = job_manifest(body, sizeof(body), o->ns, i);
        int64_t t0 = mono_ns();
        long st = http_do(&h, "POST", path, body, (size_t)n, false);
        cc->lat_ns[i] = mono_ns() - t0;
        if (st == 201) {
            cc->ok[i] = 1;
            atomic_fetch_add(&cc->bytes, h.body.len);
            continue;
        }
        err_tally_add(cc->errs, "POST pytorchjobs", st, &h);
        /* More than 1% failed: the figures would mean nothing. */
        if (atomic_fetch_add(&cc->errors, 1) + 1 > o->jobs / 100)
            atomic_store(&cc->stop, true);
    }
    http_fini(&h);
    return NULL;
}

static int phase_create(const bench_opts *o, bench_result *r, unsigned char *ok)
{
    create_ctx cc = {.o = o, .ok = ok, .errs = &r->create_err};
    pthread_t tids[MAX_CLIENTS];
    size_t started = 0, sent = 0;
    int64_t t0;

    cc.lat_ns = malloc(o->jobs * sizeof(*cc.lat_ns));
    if (!cc.lat_ns)
        return -1;
    for (size_t i = 0; i < o->jobs; i++)
        cc.lat_ns[i] = -1;
    r->create_ran = true;
    t0 = mono_ns();
    for (; started < o->clients; started++)
        if (pthread_create(&tids[started], NULL, create_worker, &cc) != 0)
            break;
    for (size_t k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
    r->create_wall_s = (double)(mono_ns() - t0) / 1e9;
    /* Keep only the requests that were sent, compacted, for the percentiles. */
    for (size_t i = 0; i < o->jobs; i++) {
        r->created += ok[i];
        if (cc.lat_ns[i] >= 0)
            cc.lat_ns[sent++] = cc.lat_ns[i];
    }
    r->create_errors = atomic_load(&cc.errors);
    r->created_bytes = atomic_load(&cc.bytes);
    r->creates_per_s = r->create_wall_s > 0 ? (double)r->created / r->create_wall_s : 0;
    lat_summarize(cc.lat_ns, sent, &r->create_lat);
    free(cc.lat_ns);
    if (started < o->clients)
        snprintf(r->abort_reason, sizeof(r->abort_reason), "could start only %zu threads", started);
    else if (r->create_errors > o->jobs / 100)
        snprintf(r->abort_reason, sizeof(r->abort_reason),
                 "%zu create errors (more than 1%% of %zu)", r->create_errors, o->jobs);
    else if (r->created + r->create_errors < o->jobs)
        snprintf(r->abort_reason, sizeof(r->abort_reason),
                 "time limit hit after %zu of %zu creates", r->created + r->create_errors, o->jobs);
    r->aborted = r->abort_reason[0] != '\0';
    return r->aborted ? -1 : 0;
}

/* ---- phase 2: list ---------------------------------------------------- */

/* Copies the string value of the first "key" in compact JSON. Used where the
 * key is known to be unique (or first) and its value holds no escapes, so a
 * full parse, which would put the benchmark's own CPU into what it times,
 * is not needed. -1 when the key is absent or its value is not so plain. */
static int scan_str(const char *line, size_t len, const char *key, char *out, size_t out_len)
{
    char pat[64];
    int n = snprintf(pat, sizeof(pat), "\"%s\"", key);
    const char *p = memmem(line, len, pat, (size_t)n), *end = line + len;
    size_t k = 0;

    if (!p)
        return -1;
    for (p += n; p < end && (*p == ' ' || *p == ':'); p++)
        ;
    if (p >= end || *p++ != '"')
        return -1;
    while (p < end && *p != '"' && *p != '\\' && k + 1 < out_len)
        out[k++] = *p++;
    if (p >= end || *p != '"')
        return -1;
    out[k] = '\0';
    return 0;
}

/* Marks each "bench-job-NNNNNN" of a list answer in seen[] and copies its
 * resourceVersion to rv (may be NULL). Returns the number of items, or -1 if
 * the answer is not a list. */
static long list_mark(const char *data, size_t len, unsigned char *seen, size_t jobs,
                      size_t *distinct, char *rv, size_t rv_len)
{
    json_t *v = json_loadb(data, len, 0, NULL), *items = json_object_get(v, "items"), *it;
    const char *s =
        json_string_value(json_object_get(json_object_get(v, "metadata"), "resourceVersion"));
    size_t i;
    long n;

    if (!json_is_array(items)) {
        json_decref(v);
        return -1;
    }
    if (rv)
        snprintf(rv, rv_len, "%s", s ? s : "");
    json_array_foreach (items, i, it) {
        const char *name =
            json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
        char *end;
        unsigned long idx;
        if (!name || strncmp(name, "bench-job-", 10) != 0)
            continue;
        idx = strtoul(name + 10, &end, 10);
        if (*end != '\0' || idx >= jobs || seen[idx])
            continue;
        seen[idx] = 1;
        if (distinct)
            (*distinct)++;
    }
    n = (long)json_array_size(items);
    json_decref(v);
    return n;
}

/* The continue token of a list page, read from the metadata that precedes
 * "items" without parsing the page (see scan_str). -1 if not a list. */
static int page_continue(const char *data, size_t len, char *cont, size_t cont_len)
{
    const char *items = memmem(data, len, "\"items\"", 7);
    json_t *v, *c;

    if (!items)
        return -1;
    len = (size_t)(items - data);
    cont[0] = '\0';
    if (!memmem(data, len, "\"continue\"", 10) ||
        scan_str(data, len, "continue", cont, cont_len) == 0)
        return 0;
    /* An escaped token: parse after all. */
    v = json_loadb(data, strlen(data), 0, NULL);
    c = json_object_get(json_object_get(v, "metadata"), "continue");
    snprintf(cont, cont_len, "%s", json_string_value(c) ? json_string_value(c) : "");
    json_decref(v);
    return 0;
}

/* Touches the receive buffer's pages once, untimed, so that the first timed
 * list does not carry the benchmark's own page faults for ~15 MB. */
static void http_prefault(bench_http *h, size_t bytes)
{
    static const char zeros[65536];
    for (size_t n = 0; n < bytes; n += sizeof(zeros))
        if (ty_buf_append(&h->body, zeros, sizeof(zeros)) < 0)
            break;
    h->body.len = 0;
}

static void list_fail(bench_result *r, const char *path, long st, const bench_http *h)
{
    snprintf(r->abort_reason, sizeof(r->abort_reason), "GET %.100s -> %ld %.120s", path, st,
             st ? (h->body.data ? h->body.data : "") : h->error);
}

/* Times o->list_runs full lists; the last answer stays in h->body. */
static int list_full(bench_http *h, const bench_opts *o, bench_result *r)
{
    int64_t t[16];
    char path[512];

    jobs_path(o->ns, NULL, path, sizeof(path));
    http_prefault(h, r->created_bytes + r->created_bytes / 4 + ((size_t)1 << 20));
    for (int k = 0; k < o->list_runs && !past_deadline(o); k++) {
        int64_t t0 = mono_ns();
        long st = http_do(h, "GET", path, NULL, 0, false);
        t[k] = mono_ns() - t0;
        if (st != 200) {
            list_fail(r, path, st, h);
            return -1;
        }
        r->list_bytes = h->body.len;
        r->list_runs = k + 1;
    }
    if (r->list_runs == 0)
        return -1;
    r->list_first_ms = (double)t[0] / NS_PER_MS;
    qsort(t, (size_t)r->list_runs, sizeof(t[0]), cmp_i64);
    r->list_min_ms = (double)t[0] / NS_PER_MS;
    r->list_median_ms = (double)t[r->list_runs / 2] / NS_PER_MS;
    r->list_max_ms = (double)t[r->list_runs - 1] / NS_PER_MS;
    return 0;
}

/* Walks the pages back to back, keeping copies, and checks them afterwards,
 * so that no parsing (see phase_list) is timed. */
static int list_paged(bench_http *h, const bench_opts *o, bench_result *r, unsigned char *seen)
{
    char base[512], path[8192], cont[4096] = "";
    size_t max_pages = o->jobs / (size_t)o->page_limit + MAX_PAGES_SLACK, np = 0;
    ty_buf *pages = calloc(max_pages, sizeof(*pages));
    int64_t total = 0;
    int rc = -1;

    jobs_path(o->ns, NULL, base, sizeof(base));
    while (pages && np < max_pages && !past_deadline(o)) {
        char *esc = curl_easy_escape(h->curl, cont, 0);
        snprintf(path, sizeof(path), "%s?limit=%d%s%s", base, o->page_limit,
                 cont[0] ? "&continue=" : "", cont[0] && esc ? esc : "");
        curl_free(esc);
        int64_t t0 = mono_ns();
        long st = http_do(h, "GET", path, NULL, 0, false);
        total += mono_ns() - t0;
        if (st != 200 || page_continue(h->body.data, h->body.len, cont, sizeof(cont)) < 0) {
            list_fail(r, path, st, h);
            goto out;
        }
        ty_buf_append(&pages[np++], h->body.data, h->body.len);
        r->paged_bytes += h->body.len;
        if (!cont[0])
            break;
    }
    r->paged_ms = (double)total / NS_PER_MS;
    r->paged_pages = np;
    memset(seen, 0, o->jobs);
    for (size_t k = 0; k < np; k++) {
        long n = list_mark(pages[k].data, pages[k].len, seen, o->jobs, &r->paged_distinct, NULL, 0);
        r->paged_items += n > 0 ? (size_t)n : 0;
    }
    rc = cont[0] ? -1 : 0; /* ran out of pages or time */
    if (rc < 0)
        snprintf(r->abort_reason, sizeof(r->abort_reason), "paged list did not end in %zu pages",
                 np);
out:
    for (size_t k = 0; pages && k < max_pages; k++)
        ty_buf_free(&pages[k]);
    free(pages);
    return rc;
}

/* Nothing is parsed until every timed request is done: freeing a parsed
 * 14 MB list leaves glibc a heap to consolidate on the next large malloc,
 * which would land in the next request's time (about 150 ms here). */
static int phase_list(const bench_opts *o, bench_result *r)
{
    unsigned char *seen = calloc(o->jobs, 1);
    bench_http full = {0}, paged = {0};
    int rc = -1;

    if (!seen)
        return -1;
    if (http_init(&full, o->server) == 0 && http_init(&paged, o->server) == 0 &&
        list_full(&full, o, r) == 0 && list_paged(&paged, o, r, seen) == 0) {
        long n = list_mark(full.body.data, full.body.len, seen, o->jobs, NULL, r->list_rv,
                           sizeof(r->list_rv));
        r->list_items = n < 0 ? 0 : (size_t)n;
        rc = 0;
    }
    if (rc == 0 && (r->list_items != r->created || r->paged_items != r->created ||
                    r->paged_distinct != r->created)) {
        r->verify_failed = true;
        fprintf(stderr,
                "api_bench: VERIFY: created %zu, full list %zu items, paged list %zu items "
                "(%zu distinct)\n",
                r->created, r->list_items, r->paged_items, r->paged_distinct);
    }
    http_fini(&full);
    http_fini(&paged);
    free(seen);
    malloc_trim(0); /* the same consolidation, now, before the watch phase is timed */
    return rc;
}

/* ---- phase 3: watch --------------------------------------------------- */

typedef struct watch_ctx {
    const bench_opts *o;
    char url[1024];
    atomic_bool stop;
    atomic_size_t connected, warm, delivered;
} watch_ctx;

typedef struct watcher {
    watch_ctx *ctx;
    pthread_t tid;
    bool running, counted_connect, warm;
    ty_buf pending;  /* bytes of an unfinished line */
    int64_t *lat_ns; /* [updates]; -1 until that step's event arrives */
    size_t received, duplicates, error_events, other_events, bad_lines;
    long status;
    CURLcode rc;
} watcher;

static void watcher_line(watcher *w, const char *line, size_t len, int64_t recv_ns)
{
    char type[32], step[32], sent[32];
    char *end;
    unsigned long idx;

    if (scan_str(line, len, "type", type, sizeof(type)) < 0) {
        w->bad_lines++;
        return;
    }
    if (strcmp(type, "MODIFIED") != 0) {
        if (strcmp(type, "ERROR") == 0)
            w->error_events++;
        else
            w->other_events++;
        return;
    }
    if (scan_str(line, len, "bench/step", step, sizeof(step)) < 0 ||
        scan_str(line, len, "bench/sent-ns", sent, sizeof(sent)) < 0) {
        w->other_events++;
        return;
    }
    if (strcmp(step, "warmup") == 0) {
        if (!w->warm)
            atomic_fetch_add(&w->ctx->warm, 1);
        w->warm = true;
        return;
    }
    idx = strtoul(step, &end, 10);
    if (*end || idx >= w->ctx->o->updates) {
        w->other_events++;
        return;
    }
    if (w->lat_ns[idx] >= 0) {
        w->duplicates++;
        return;
    }
    w->lat_ns[idx] = recv_ns - strtoll(sent, NULL, 10);
    w->received++;
    atomic_fetch_add(&w->ctx->delivered, 1);
}

static size_t watcher_on_data(char *data, size_t size, size_t n, void *arg)
{
    watcher *w = arg;
    size_t len = size * n, start = 0;
    int64_t now = real_ns(); /* before any work of ours */
    char *nl;

    if (len == 0)
        return 0;
    if (w->pending.len + len > WATCH_LINE_CAP || ty_buf_append(&w->pending, data, len) < 0)
        return 0;
    while ((nl = memchr(w->pending.data + start, '\n', w->pending.len - start))) {
        size_t end = (size_t)(nl - w->pending.data);
        if (end > start)
            watcher_line(w, w->pending.data + start, end - start, now);
        start = end + 1;
    }
    memmove(w->pending.data, w->pending.data + start, w->pending.len - start);
    w->pending.len -= start;
    w->pending.data[w->pending.len] = '\0';
    return len;
}

static size_t watcher_on_header(char *data, size_t size, size_t n, void *arg)
{
    watcher *w = arg;
    /* The blank line ends the headers: the stream is open. */
    if (size * n <= 2 && (data[0] == '\r' || data[0] == '\n') && !w->counted_connect) {
        w->counted_connect = true;
        atomic_fetch_add(&w->ctx->connected, 1);
    }
    return size * n;
}

static int watcher_on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    watcher *w = arg;
    (void)a, (void)b, (void)c, (void)d;
    return atomic_load(&w->ctx->stop) ? 1 : 0;
}

static void *watcher_main(void *arg)
{
    watcher *w = arg;
    const bench_opts *o = w->ctx->o;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    CURL *c = curl_easy_init();
    long limit_ms = (long)((o->deadline_ns - mono_ns()) / 1000000);

    if (!c || !hdrs) {
        w->rc = CURLE_OUT_OF_MEMORY;
        goto out;
    }
    bench_auth_apply(c, &hdrs);
    curl_easy_setopt(c, CURLOPT_URL, w->ctx->url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, limit_ms > 1000 ? limit_ms : 1000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watcher_on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, watcher_on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, watcher_on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
    w->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &w->status);
out:
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(hdrs);
    return NULL;
}

/* Waits until *counter reaches want or ms pass. Returns the last value. */
static size_t wait_for(atomic_size_t *counter, size_t want, long ms, const bench_opts *o)
{
    int64_t until = mono_ns() + (int64_t)ms * 1000000;
    size_t v;
    while ((v = atomic_load(counter)) < want && mono_ns() < until && !past_deadline(o))
        sleep_ms(2);
    return v;
}

static long patch_job(bench_http *h, const bench_opts *o, size_t job, const char *step)
{
    char path[512], name[32], body[256];
    int n;

    snprintf(name, sizeof(name), "bench-job-%06zu", job);
    jobs_path(o->ns, name, path, sizeof(path));
    n = snprintf(body, sizeof(body),
                 "{\"metadata\":{\"labels\":{\"bench/step\":\"%s\"},"
                 "\"annotations\":{\"bench/sent-ns\":\"%lld\"}}}",
                 step, (long long)real_ns());
    return http_do(h, "PATCH", path, body, (size_t)n, true);
}

/* Patches U objects, one after another from one client. ok_jobs lists the
 * jobs that exist; step_ok[i] says whether update i was accepted. */
static void run_updates(bench_http *h, const bench_opts *o, bench_result *r, const size_t *ok_jobs,
                        size_t nok, unsigned char *step_ok)
{
    int64_t *lat = malloc(o->updates * sizeof(*lat));
    int64_t t0 = mono_ns(), next = t0;
    size_t sent = 0;

    for (size_t i = 0; i < o->updates && lat && !past_deadline(o); i++) {
        char step[24];
        if (o->update_interval_us > 0) {
            struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            next += (int64_t)o->update_interval_us * 1000;
        }
        snprintf(step, sizeof(step), "%zu", i);
        int64_t s0 = mono_ns();
        long st = patch_job(h, o, ok_jobs[i % nok], step);
        lat[sent++] = mono_ns() - s0;
        if (st == 200) {
            step_ok[i] = 1;
            r->updates_ok++;
        } else {
            r->update_errors++;
            err_tally_add(&r->update_err, "PATCH pytorchjob", st, h);
        }
    }
    r->update_wall_s = (double)(mono_ns() - t0) / 1e9;
    r->updates_per_s = r->update_wall_s > 0 ? (double)sent / r->update_wall_s : 0;
    if (lat)
        lat_summarize(lat, sent, &r->update_lat);
    free(lat);
}

/* Gathers what the watchers saw: delivery latencies, missing and extra events. */
static void watch_tally(watcher *ws, size_t nw, const bench_opts *o, bench_result *r,
                        const unsigned char *step_ok)
{
    int64_t *all = malloc(nw * o->updates * sizeof(*all));
    size_t n = 0;

    r->expected = nw * r->updates_ok;
    for (size_t k = 0; k < nw; k++) {
        watcher *w = &ws[k];
        size_t missing = 0;
        for (size_t i = 0; i < o->updates; i++) {
            if (w->lat_ns[i] >= 0 && all)
                all[n++] = w->lat_ns[i];
            else if (w->lat_ns[i] < 0 && step_ok[i])
                missing++;
        }
        r->delivered += w->received;
        r->missing += missing;
        r->duplicates += w->duplicates;
        r->error_events += w->error_events;
        r->watchers_incomplete += missing > 0;
        if (w->status != 200 || w->bad_lines)
            fprintf(stderr, "api_bench: watcher %zu: HTTP %ld, curl %d (%s), %zu bad lines\n", k,
                    w->status, (int)w->rc, curl_easy_strerror(w->rc), w->bad_lines);
    }
    if (all)
        lat_summarize(all, n, &r->delivery_lat);
    free(all);
    if (r->missing || r->duplicates)
        r->verify_failed = true;
}

static void watchers_stop(watch_ctx *ctx, watcher *ws, size_t nw)
{
    atomic_store(&ctx->stop, true);
    for (size_t k = 0; k < nw; k++) {
        if (ws[k].running)
            pthread_join(ws[k].tid, NULL);
        ty_buf_free(&ws[k].pending);
        free(ws[k].lat_ns);
    }
    free(ws);
}

static int phase_watch(const bench_opts *o, bench_result *r, const size_t *ok_jobs, size_t nok)
{
    watch_ctx ctx = {.o = o};
    watcher *ws = calloc(o->watchers, sizeof(*ws));
    unsigned char *step_ok = calloc(o->updates, 1);
    bench_http h = {0};
    int rc = -1;

    if (!ws || !step_ok || nok == 0 || http_init(&h, o->server) < 0) {
        http_fini(&h);
        free(ws);
        free(step_ok);
        return -1;
    }
    snprintf(ctx.url, sizeof(ctx.url),
             "%s/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs?watch=1&resourceVersion=%s"
             "&timeoutSeconds=%d",
             o->server, o->ns, r->list_rv, o->time_limit_s);
    for (size_t k = 0; k < o->watchers; k++) {
        ws[k].ctx = &ctx;
        ws[k].lat_ns = malloc(o->updates * sizeof(int64_t));
        if (!ws[k].lat_ns)
            goto out;
        memset(ws[k].lat_ns, 0xff, o->updates * sizeof(int64_t)); /* all -1 */
        ws[k].running = pthread_create(&ws[k].tid, NULL, watcher_main, &ws[k]) == 0;
        if (!ws[k].running)
            goto out;
    }
    /* The server may hold its headers until the first event, so a warm-up
     * patch, seen by every watcher, is what proves all streams are live. */
    wait_for(&ctx.connected, o->watchers, WATCH_CONNECT_WAIT_MS, o);
    long st = patch_job(&h, o, ok_jobs[0], "warmup");
    if (st != 200)
        err_tally_add(&r->update_err, "PATCH pytorchjob (warm-up)", st, &h);
    r->watchers_warm = wait_for(&ctx.warm, o->watchers, WATCH_WARMUP_WAIT_MS, o);
    r->watchers_connected = atomic_load(&ctx.connected);
    run_updates(&h, o, r, ok_jobs, nok, step_ok);
    wait_for(&ctx.delivered, o->watchers * r->updates_ok, WATCH_DRAIN_WAIT_MS, o);
    rss_sample_take(o, r, "watch (streams open)");
    atomic_store(&ctx.stop, true);
    for (size_t k = 0; k < o->watchers; k++) {
        if (ws[k].running)
            pthread_join(ws[k].tid, NULL);
        ws[k].running = false;
    }
    watch_tally(ws, o->watchers, o, r, step_ok);
    rc = 0;
out:
    if (rc < 0)
        snprintf(r->abort_reason, sizeof(r->abort_reason), "cannot start %zu watchers",
                 o->watchers);
    watchers_stop(&ctx, ws, o->watchers);
    free(step_ok);
    http_fini(&h);
    return rc;
}

/* ---- report ----------------------------------------------------------- */

static void print_lat(FILE *f, const char *what, const lat_summary *l)
{
    fprintf(f, "  %-13s p50 %.2f  p90 %.2f  p99 %.2f  max %.2f  mean %.2f ms  (n=%zu)\n", what,
            l->p50_ms, l->p90_ms, l->p99_ms, l->max_ms, l->mean_ms, l->n);
}

/* The memory sample taken after a phase, and the CPU spent since the one before. */
static void print_rss(FILE *f, const bench_result *r, const char *when)
{
    for (int k = 1; k < r->nrss; k++) {
        const rss_sample *s = &r->rss[k], *prev = &r->rss[k - 1];
        if (strcmp(s->when, when) != 0)
            continue;
        if (s->rss_kb >= 0)
            fprintf(f, "  server RSS    %.1f MiB (peak VmHWM %.1f MiB), %ld threads\n",
                    (double)s->rss_kb / 1024.0, (double)s->hwm_kb / 1024.0, s->threads);
        if (s->server_cpu_s >= 0 && prev->server_cpu_s >= 0)
            fprintf(f, "  CPU time      server %.2f s, benchmark %.2f s\n",
                    s->server_cpu_s - prev->server_cpu_s, s->bench_cpu_s - prev->bench_cpu_s);
    }
}

/* In MB (10^6 bytes), what the target says; the RSS lines print MiB. */
static double peak_rss_mb(const bench_result *r)
{
    long kb = -1;
    for (int k = 0; k < r->nrss; k++)
        if (r->rss[k].hwm_kb > kb)
            kb = r->rss[k].hwm_kb;
    return kb < 0 ? -1 : (double)kb * 1024.0 / 1e6;
}

static void print_target(FILE *f, const char *what, double value, const char *unit, double limit,
                         bool at_least)
{
    bool pass = value >= 0 && (at_least ? value >= limit : value < limit);
    fprintf(f, "  %-28s %10.1f %-4s %s\n", what, value, unit,
            value < 0 ? "n/a" : (pass ? "PASS" : "MISS"));
}

static void report_text(FILE *f, const bench_opts *o, const bench_result *r)
{
    fprintf(f, "Trainyard API server benchmark\n  server        %s (pid %ld)\n", o->server,
            o->server_pid);
    fprintf(f, "  namespace     %s\n  jobs %zu, clients %zu, watchers %zu, updates %zu\n\n", o->ns,
            o->jobs, o->clients, o->watchers, o->updates);
    if (r->create_ran) {
        fprintf(f, "Create: POST pytorchjobs from %zu clients\n", o->clients);
        fprintf(f, "  created       %zu in %.3f s, errors %zu\n", r->created, r->create_wall_s,
                r->create_errors);
        err_tally_print(f, &r->create_err);
        fprintf(f, "  throughput    %.0f creates/s\n", r->creates_per_s);
        print_lat(f, "latency", &r->create_lat);
        print_rss(f, r, "create");
    }
    if (r->list_runs) {
        fprintf(f, "\nList: GET pytorchjobs\n");
        fprintf(f,
                "  full list     %zu items, %.1f MiB; first %.1f ms; %d runs: min %.1f,"
                " median %.1f, max %.1f ms\n",
                r->list_items, (double)r->list_bytes / 1048576.0, r->list_first_ms, r->list_runs,
                r->list_min_ms, r->list_median_ms, r->list_max_ms);
        fprintf(f,
                "  paged list    limit=%d: %zu pages, %zu items (%zu distinct), %.1f MiB,"
                " %.1f ms\n",
                o->page_limit, r->paged_pages, r->paged_items, r->paged_distinct,
                (double)r->paged_bytes / 1048576.0, r->paged_ms);
        print_rss(f, r, "list");
    }
    if (r->updates_ok || r->update_errors) {
        fprintf(f, "\nWatch: %zu watchers, %zu PATCHes from one client\n", o->watchers, o->updates);
        fprintf(f, "  watchers      %zu saw headers, %zu saw the warm-up event\n",
                r->watchers_connected, r->watchers_warm);
        fprintf(f, "  updates       %zu ok, %zu errors in %.3f s (%.0f/s)\n", r->updates_ok,
                r->update_errors, r->update_wall_s, r->updates_per_s);
        err_tally_print(f, &r->update_err);
        print_lat(f, "PATCH", &r->update_lat);
        fprintf(f,
                "  delivered     %zu of %zu events; missing %zu (%zu watchers incomplete),"
                " duplicates %zu, ERROR events %zu\n",
                r->delivered, r->expected, r->missing, r->watchers_incomplete, r->duplicates,
                r->error_events);
        print_lat(f, "delivery", &r->delivery_lat);
        print_rss(f, r, "watch (streams open)");
    }
    fprintf(f, "\nTargets (2-core machine)\n");
    print_target(f, "creates/s >= 5000", r->create_ran ? r->creates_per_s : -1, "/s", 5000, true);
    print_target(f, "create p99 < 10 ms", r->create_lat.n ? r->create_lat.p99_ms : -1, "ms", 10,
                 false);
    print_target(f, "full list (median) < 150 ms", r->list_runs ? r->list_median_ms : -1, "ms", 150,
                 false);
    print_target(f, "full list (first) < 150 ms", r->list_runs ? r->list_first_ms : -1, "ms", 150,
                 false);
    print_target(f, "server peak RSS < 300 MB", peak_rss_mb(r), "MB", 300, false);
    if (r->aborted)
        fprintf(f, "\nABORTED: %s\n", r->abort_reason);
    if (r->verify_failed)
        fprintf(f, "\nVERIFY FAILED: counts above do not add up (see stderr)\n");
}

static json_t *lat_json(const lat_summary *l)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)l->n, "mean_ms", l->mean_ms,
                     "p50_ms", l->p50_ms, "p90_ms", l->p90_ms, "p99_ms", l->p99_ms, "max_ms",
                     l->max_ms);
}

static json_t *rss_json(const bench_result *r)
{
    json_t *a = json_array();
    for (int k = 0; k < r->nrss; k++) {
        const rss_sample *s = &r->rss[k];
        json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:I, s:f, s:f}", "after", s->when,
                                           "vmrss_kb", (json_int_t)s->rss_kb, "vmhwm_kb",
                                           (json_int_t)s->hwm_kb, "threads",
                                           (json_int_t)s->threads, "server_cpu_s",
                                           s->server_cpu_s, "bench_cpu_s", s->bench_cpu_s));
    }
    return a;
}

static json_t *result_json(const bench_opts *o, const bench_result *r)
{
    json_t *params = json_pack("{s:I, s:I, s:I, s:I, s:i}", "jobs", (json_int_t)o->jobs, "clients",
                               (json_int_t)o->clients, "watchers", (json_int_t)o->watchers,
                               "updates", (json_int_t)o->updates, "page_limit", o->page_limit);
    json_t *create = json_pack("{s:I, s:I, s:f, s:f, s:o}", "created", (json_int_t)r->created,
                               "errors", (json_int_t)r->create_errors, "wall_s", r->create_wall_s,
                               "per_s", r->creates_per_s, "latency", lat_json(&r->create_lat));
    json_t *list =
        json_pack("{s:I, s:I, s:i, s:f, s:f, s:f, s:f, s:s, s:{s:I, s:I, s:I, s:f}}", "items",
                  (json_int_t)r->list_items, "bytes", (json_int_t)r->list_bytes, "runs",
                  r->list_runs, "first_ms", r->list_first_ms, "min_ms", r->list_min_ms, "median_ms",
                  r->list_median_ms, "max_ms", r->list_max_ms, "resource_version", r->list_rv,
                  "paged", "pages", (json_int_t)r->paged_pages, "items", (json_int_t)r->paged_items,
                  "bytes", (json_int_t)r->paged_bytes, "ms", r->paged_ms);
    json_t *watch = json_pack(
        "{s:I, s:I, s:I, s:I, s:f, s:f, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
        "watchers_connected", (json_int_t)r->watchers_connected, "watchers_warm",
        (json_int_t)r->watchers_warm, "updates_ok", (json_int_t)r->updates_ok, "update_errors",
        (json_int_t)r->update_errors, "update_wall_s", r->update_wall_s, "updates_per_s",
        r->updates_per_s, "patch_latency", lat_json(&r->update_lat), "delivered",
        (json_int_t)r->delivered, "expected", (json_int_t)r->expected, "missing",
        (json_int_t)r->missing, "watchers_incomplete", (json_int_t)r->watchers_incomplete,
        "duplicates", (json_int_t)r->duplicates, "error_events", (json_int_t)r->error_events,
        "delivery_latency", lat_json(&r->delivery_lat));
    return json_pack("{s:s, s:s, s:b, s:b, s:s, s:o, s:o, s:o, s:o, s:o}", "server", o->server,
                     "namespace", o->ns, "aborted", r->aborted, "verify_failed", r->verify_failed,
                     "abort_reason", r->abort_reason, "params", params, "create", create, "list",
                     list, "watch", watch, "rss", rss_json(r));
}

static int report_json(const bench_opts *o, const bench_result *r)
{
    json_t *v = result_json(o, r);
    FILE *f;
    int rc;

    if (!v)
        return -1;
    f = strcmp(o->json_path, "-") == 0 ? stdout : fopen(o->json_path, "w");
    if (!f) {
        json_decref(v);
        return -1;
    }
    rc = json_dumpf(v, f, JSON_INDENT(2));
    fputc('\n', f);
    if (f != stdout)
        fclose(f);
    json_decref(v);
    return rc;
}

/* ---- options ---------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: api_bench --server URL [--server-pid PID] [--namespace NS] [--jobs N]\n"
               "                 [--clients N] [--watchers N] [--updates N] [--list-runs N]\n"
               "                 [--page-limit N] [--update-interval-us US] [--time-limit S]\n"
               "                 [--json[=FILE]] [--kubeconfig FILE (the CA and token to use)]\n"
               "  defaults: 10000 jobs, 16 clients, 100 watchers, 1000 updates, 5 list runs,\n"
               "  pages of 500, updates back to back, 600 s in all, namespace bench-<pid>.\n"
               "  --json alone prints the JSON summary on stdout and the report on stderr.\n");
}

static int parse_size(const char *s, const char *what, size_t lo, size_t hi, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || *end || v < lo || v > hi) {
        fprintf(stderr, "api_bench: invalid %s %s: want %zu-%zu\n", what, s, lo, hi);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static int parse_opts(int argc, char **argv, bench_opts *o)
{
    const char *kubeconfig = NULL;
    static const struct option lo[] = {{"server", required_argument, NULL, 's'},
                                       {"kubeconfig", required_argument, NULL, 'K'},
                                       {"jobs", required_argument, NULL, 'n'},
                                       {"clients", required_argument, NULL, 'c'},
                                       {"watchers", required_argument, NULL, 'w'},
                                       {"updates", required_argument, NULL, 'u'},
                                       {"namespace", required_argument, NULL, 'N'},
                                       {"server-pid", required_argument, NULL, 'p'},
                                       {"list-runs", required_argument, NULL, 'l'},
                                       {"page-limit", required_argument, NULL, 'P'},
                                       {"time-limit", required_argument, NULL, 't'},
                                       {"update-interval-us", required_argument, NULL, 'i'},
                                       {"json", optional_argument, NULL, 'j'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    size_t v = 0;
    int c, bad = 0;

    *o = (bench_opts){.jobs = 10000,
                      .clients = 16,
                      .watchers = 100,
                      .updates = 1000,
                      .list_runs = 5,
                      .page_limit = 500,
                      .time_limit_s = 600};
    snprintf(o->ns, sizeof(o->ns), "bench-%ld", (long)getpid());
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 's': o->server = optarg; break;
        case 'K': kubeconfig = optarg; break;
        case 'n': bad |= parse_size(optarg, "--jobs", 1, MAX_JOBS, &o->jobs); break;
        case 'c': bad |= parse_size(optarg, "--clients", 1, MAX_CLIENTS, &o->clients); break;
        case 'w': bad |= parse_size(optarg, "--watchers", 1, MAX_WATCHERS, &o->watchers); break;
        case 'u': bad |= parse_size(optarg, "--updates", 1, MAX_UPDATES, &o->updates); break;
        case 'N': snprintf(o->ns, sizeof(o->ns), "%s", optarg); break;
        case 'p':
            bad |= parse_size(optarg, "--server-pid", 1, 1u << 22, &v);
            o->server_pid = (long)v;
            break;
        case 'l':
            bad |= parse_size(optarg, "--list-runs", 1, 15, &v);
            o->list_runs = (int)v;
            break;
        case 'P':
            bad |= parse_size(optarg, "--page-limit", 1, 100000, &v);
            o->page_limit = (int)v;
            break;
        case 't':
            bad |= parse_size(optarg, "--time-limit", 10, 7200, &v);
            o->time_limit_s = (int)v;
            break;
        case 'i':
            bad |= parse_size(optarg, "--update-interval-us", 0, 10000000, &v);
            o->update_interval_us = (long)v;
            break;
        case 'j': o->json_path = optarg ? optarg : "-"; break;
        case 'h': usage(stdout); exit(0);
        default: bad = -1;
        }
    }
    if (!bad && (!o->server || optind < argc)) {
        fprintf(stderr, "api_bench: %s\n",
                o->server ? "unexpected argument" : "--server is required");
        bad = -1;
    }
    if (!bad && bench_auth_load(kubeconfig, o->server) < 0)
        bad = -1;
    if (bad)
        usage(stderr);
    o->deadline_ns = mono_ns() + (int64_t)o->time_limit_s * 1000000000;
    return bad ? -1 : 0;
}

/* ---- main ------------------------------------------------------------- */

static int run_phases(const bench_opts *o, bench_result *r)
{
    unsigned char *ok = calloc(o->jobs, 1);
    size_t *ok_jobs = malloc(o->jobs * sizeof(*ok_jobs));
    size_t nok = 0;
    bench_http h = {0};
    int rc = -1;

    if (!ok || !ok_jobs || http_init(&h, o->server) < 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason), "out of memory");
        goto out;
    }
    rss_sample_take(o, r, "start");
    if (ensure_namespace(&h, o->ns) < 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason), "cannot create namespace %s", o->ns);
        goto out;
    }
    int crc = phase_create(o, r, ok);
    rss_sample_take(o, r, "create");
    if (crc < 0)
        goto out;
    for (size_t i = 0; i < o->jobs; i++)
        if (ok[i])
            ok_jobs[nok++] = i;
    if (phase_list(o, r) < 0)
        goto out;
    rss_sample_take(o, r, "list");
    rc = phase_watch(o, r, ok_jobs, nok);
out:
    r->aborted = r->aborted || rc < 0;
    http_fini(&h);
    free(ok);
    free(ok_jobs);
    return rc;
}

int main(int argc, char **argv)
{
    static bench_result r; /* large: kept off the stack */
    bench_opts o;

    if (parse_opts(argc, argv, &o) < 0)
        return 2;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "api_bench: cannot initialise libcurl\n");
        return 1;
    }
    err_tally_init(&r.create_err);
    err_tally_init(&r.update_err);
    run_phases(&o, &r);
    bool json_stdout = o.json_path && strcmp(o.json_path, "-") == 0;
    report_text(json_stdout ? stderr : stdout, &o, &r);
    if (o.json_path && report_json(&o, &r) < 0)
        fprintf(stderr, "api_bench: cannot write %s\n", o.json_path);
    curl_global_cleanup();
    return r.aborted || r.verify_failed ? 1 : 0;
}
