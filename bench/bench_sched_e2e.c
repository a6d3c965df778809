/* bench_sched_e2e.c - end-to-end scheduling throughput: jobs created through
 * the HTTP API, pods created by the job engine, bound by the scheduler, "run"
 * by simulated nodes (start the server with --sim-nodes 5000x8
 * --no-local-node; bench/run-sched-e2e-bench.sh does).
 *
 *   bench_sched_e2e --server URL [--server-pid PID] [--operator-pid PID]
 *                   [--jobs N] [--replicas R]
 *                   [--gpus G] [--duration S|none] [--kind pytorch|volcano]
 *                   [--clients K] [--timeout S] [--until-ended] [--json FILE]
 *
 * Not a test: it measures. N jobs of R replicas, each asking for G
 * nvidia.com/gpu, with trainyard.io/sim-duration: S in the pod template, are
 * POSTed from K threads. One pods watch (started at the resourceVersion of a
 * list taken before the first POST) follows every pod of the namespace.
 *   - bound/s: N*R / (time the last pod was seen with spec.nodeName - time
 *     just before the first POST);
 *   - also: how fast jobs were accepted, pods created and pods seen Running
 *     (or ended: the simulated node's side);
 *   - the server's peak RSS (VmHWM) and CPU time from /proc/PID; with
 *     --operator-pid (operator mode: `trainyard server --api-only` and
 *     `trainyard operator` driving it over HTTP), the operator's too;
 *   - with --until-ended (and a duration), it goes on watching until every
 *     pod has ended and then until the server is idle (under 5 % of a core
 *     over a second): the server's CPU over each pod's whole lifecycle. The
 *     run itself stops at the last pod Running, and with short durations
 *     most of the pods' ending (their last status, their jobs' last passes)
 *     comes after it and is not in "server CPU".
 * Events are recognised without a JSON parse (the server writes a pod's
 * metadata with its name first); a line that does not look so is parsed.
 * Everything is bounded by --timeout; a run that times out says how far it
 * got and exits 1. */
#include <curl/curl.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_auth.h"
#include "bench_util.h"
#include "base/buf.h"

#define MAX_PODS 2000000
#define MAX_CLIENTS 64
#define LINE_CAP ((size_t)8 * 1024 * 1024)
#define REQUEST_TIMEOUT_MS 60000L
#define CONNECT_TIMEOUT_MS 5000L
#define MAX_RECONNECTS 20
#define RUNNING_GRACE_S 120 /* after all are bound, how long to wait for Running */
/* Its own, not the client library's "trainyard": an audit log tells its
 * requests from the operator's (bench/audit-requests.py). */
#define USER_AGENT "bench_sched_e2e"

typedef struct opts {
    const char *server;
    long server_pid, operator_pid;
    size_t jobs, replicas, clients;
    int gpus;
    const char *duration; /* NULL = no annotation: pods run until deleted */
    bool volcano;
    int timeout_s;
    bool until_ended;
    const char *json_path;
    char ns[64];
    int64_t deadline_ns;
} opts;

/* ---- HTTP ---------------------------------------------------------------- */

typedef struct http {
    CURL *curl;
    struct curl_slist *hdr;
    ty_buf body;
    char error[CURL_ERROR_SIZE];
} http;

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    ty_buf *b = arg;
    if (b->len + size * n > ((size_t)256 << 20) || ty_buf_append(b, data, size * n) < 0)
        return 0;
    return size * n;
}

static int http_init(http *h)
{
    memset(h, 0, sizeof(*h));
    h->curl = curl_easy_init();
    h->hdr = curl_slist_append(NULL, "Accept: application/json");
    h->hdr = curl_slist_append(h->hdr, "Content-Type: application/json");
    h->hdr = curl_slist_append(h->hdr, "Expect:");
    if (!h->curl || !h->hdr)
        return -1;
    bench_auth_apply(h->curl, &h->hdr);
    curl_easy_setopt(h->curl, CURLOPT_USERAGENT, USER_AGENT);
    curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h->curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->error);
    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &h->body);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->hdr);
    return 0;
}

static void http_fini(http *h)
{
    if (h->curl)
        curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->hdr);
    ty_buf_free(&h->body);
}

/* The HTTP status, or 0 when no answer came (h->error says why). */
static long http_do(http *h, const opts *o, const char *method, const char *path,
                    const char *body)
{
    char url[2048];
    long status = 0;

    h->body.len = 0;
    h->error[0] = '\0';
    snprintf(url, sizeof(url), "%s%s", o->server, path);
    curl_easy_setopt(h->curl, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    } else {
        curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") ? method : NULL);
    if (curl_easy_perform(h->curl) != CURLE_OK)
        return 0;
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static const char *http_why(const http *h, long st)
{
    return st ? (h->body.data ? h->body.data : "") : h->error;
}

/* ---- the pods seen: name -> state bits ----------------------------------- */

enum { SEEN = 1, BOUND = 2, STARTED = 4, ENDED = 8 };

typedef struct pod_table {
    char **names;
    uint8_t *state;
    size_t cap;
    size_t seen, bound, started, ended;
    int64_t first_seen_ns, last_seen_ns, last_bound_ns, last_started_ns, last_ended_ns;
} pod_table;

static uint64_t hash_name(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The slot for name (inserted when new); -1 when the table is full. */
static long slot_of(pod_table *t, const char *name, size_t n)
{
    size_t i = hash_name(name, n) & (t->cap - 1);

    for (size_t k = 0; k < t->cap; k++, i = (i + 1) & (t->cap - 1)) {
        if (!t->names[i]) {
            if (t->seen * 10 >= t->cap * 8 || !(t->names[i] = strndup(name, n)))
                return -1;
            return (long)i;
        }
        if (!strncmp(t->names[i], name, n) && !t->names[i][n])
            return (long)i;
    }
    return -1;
}

/* ---- the watch ---------------------------------------------------------- */

typedef struct watch {
    const opts *o;
    pod_table *t;
    pthread_mutex_t mu;
    pthread_t tid;
    atomic_bool stop;
    bool failed;
    char why[256];
    char rv[32];
    ty_buf pending;
    size_t events, parsed;
} watch;

static const char *find(const char *s, size_t len, const char *pat)
{
    return memmem(s, len, pat, strlen(pat));
}

/* Copies the JSON string value that starts at p (just after its opening
 * quote) into buf; 0, or -1 when it is too long or has escapes. */
static int string_at(const char *p, const char *end, char *buf, size_t len)
{
    const char *q = p;
    while (q < end && *q != '"' && *q != '\\')
        q++;
    if (q >= end || *q != '"' || (size_t)(q - p) >= len)
        return -1;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    return 0;
}

/* Name, rv, bound and started from the fallback: a full parse. */
static int parse_line(watch *w, const char *line, size_t len, char *name, char *rv,
                      bool *bound, bool *started, bool *ended)
{
    json_t *ev = json_loadb(line, len, 0, NULL), *obj = json_object_get(ev, "object");
    const json_t *meta = json_object_get(obj, "metadata");
    const char *n = json_string_value(json_object_get(meta, "name"));
    const char *r = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *node = json_string_value(json_object_get(json_object_get(obj, "spec"),
                                                         "nodeName"));
    const char *ph = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
    int rc = -1;

    w->parsed++;
    if (n && strlen(n) < 256) {
        strcpy(name, n);
        snprintf(rv, 32, "%s", r ? r : "");
        *bound = node && *node;
        *ended = ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
        *started = *ended || (ph && !strcmp(ph, "Running"));
        rc = 0;
    }
    json_decref(ev);
    return rc;
}

static void on_line(watch *w, const char *line, size_t len, int64_t now)
{
    const char *end = line + len, *p;
    char name[256], rv[32] = "";
    bool bound, started, ended, deleted;
    pod_table *t = w->t;
    long slot;

    if (find(line, len > 40 ? 40 : len, "\"type\":\"ERROR\"")) {
        pthread_mutex_lock(&w->mu);
        w->failed = true;
        snprintf(w->why, sizeof(w->why), "watch ERROR event: %.200s", line);
        pthread_mutex_unlock(&w->mu);
        atomic_store(&w->stop, true);
        return;
    }
    if (find(line, len > 40 ? 40 : len, "\"type\":\"BOOKMARK\""))
        return;
    deleted = find(line, len > 40 ? 40 : len, "\"type\":\"DELETED\"") != NULL;
    p = find(line, len, "\"metadata\":{\"name\":\"");
    if (p && string_at(p + 20, end, name, sizeof(name)) == 0) {
        const char *r = find(line, len, "\"resourceVersion\":\"");
        if (r)
            string_at(r + 19, end, rv, sizeof(rv));
        bound = find(line, len, "\"nodeName\":\"") != NULL;
        ended = find(line, len, "\"phase\":\"Succeeded\"") ||
                find(line, len, "\"phase\":\"Failed\"");
        started = ended || find(line, len, "\"phase\":\"Running\"");
    } else if (parse_line(w, line, len, name, rv, &bound, &started, &ended) < 0) {
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->events++;
    if (*rv)
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
    if (!deleted && (slot = slot_of(t, name, strlen(name))) >= 0) {
        uint8_t *s = &t->state[slot];
        if (!(*s & SEEN)) {
            *s |= SEEN;
            if (!t->seen++)
                t->first_seen_ns = now;
            t->last_seen_ns = now;
        }
        if (bound && !(*s & BOUND)) {
            *s |= BOUND;
            t->bound++;
            t->last_bound_ns = now;
        }
        if (started && !(*s & STARTED)) {
            *s |= STARTED;
            t->started++;
            t->last_started_ns = now;
        }
        if (ended && !(*s & ENDED)) {
            *s |= ENDED;
            t->ended++;
            t->last_ended_ns = now;
        }
    }
    pthread_mutex_unlock(&w->mu);
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    watch *w = arg;
    size_t len = size * n, start = 0;
    int64_t now = mono_ns();
    char *nl;

    if (w->pending.len + len > LINE_CAP || ty_buf_append(&w->pending, data, len) < 0)
        return 0;
    while ((nl = memchr(w->pending.data + start, '\n', w->pending.len - start))) {
        size_t end = (size_t)(nl - w->pending.data);
        if (end > start)
            on_line(w, w->pending.data + start, end - start, now);
        start = end + 1;
    }
    memmove(w->pending.data, w->pending.data + start, w->pending.len - start);
    w->pending.len -= start;
    return len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    return atomic_load(&((watch *)arg)->stop) ? 1 : 0;
}

static void *watch_main(void *arg)
{
    watch *w = arg;
    struct curl_slist *hdr = curl_slist_append(NULL, "Accept: application/json");
    CURL *c = curl_easy_init();
    int reconnects = 0;
    char url[1024];
    long status = 0;

    if (c && hdr)
        bench_auth_apply(c, &hdr);
    while (c && hdr && !atomic_load(&w->stop) && mono_ns() < w->o->deadline_ns) {
        long left_s = (long)((w->o->deadline_ns - mono_ns()) / 1000000000) + 1;
        pthread_mutex_lock(&w->mu);
        snprintf(url, sizeof(url),
                 "%s/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s&timeoutSeconds=%ld",
                 w->o->server, w->o->ns, w->rv, left_s);
        pthread_mutex_unlock(&w->mu);
        curl_easy_reset(c);
        bench_auth_apply(c, NULL);
        curl_easy_setopt(c, CURLOPT_USERAGENT, USER_AGENT);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left_s * 1000 + 2000);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
        w->pending.len = 0;
        curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        if (atomic_load(&w->stop))
            break;
        if (status != 200 || ++reconnects > MAX_RECONNECTS) {
            pthread_mutex_lock(&w->mu);
            w->failed = true;
            snprintf(w->why, sizeof(w->why), "pods watch: HTTP %ld after %d reconnect(s)",
                     status, reconnects);
            pthread_mutex_unlock(&w->mu);
            break;
        }
        sleep_ms(20); /* the server ended the stream: resume from the last rv */
    }
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(hdr);
    return NULL;
}

/* ---- job creation --------------------------------------------------------- */

static void job_name(char *buf, size_t len, size_t i)
{
    snprintf(buf, len, "e2e-%06zu", i);
}

static char *template_json(const opts *o)
{
    char ann[128] = "{}", *out = NULL;

    if (o->duration)
        snprintf(ann, sizeof(ann), "{\"trainyard.io/sim-duration\":\"%s\"}", o->duration);
    if (asprintf(&out,
                 "{\"metadata\":{\"annotations\":%s},\"spec\":{\"containers\":[{\"name\":"
                 "\"%s\",\"image\":\"x\",\"command\":[\"/bin/true\"],\"resources\":{\"limits\":"
                 "{\"nvidia.com/gpu\":\"%d\"},\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]"
                 "}}",
                 ann, o->volcano ? "worker" : "pytorch", o->gpus) < 0)
        return NULL;
    return out;
}

/* The job's manifest (caller frees) and the path to POST it to, in path
 * (the caller's buffer: one per client thread; a static one shared by the
 * threads let a thread send a path another was rewriting, "POST /"). */
static char *job_json(const opts *o, const char *tmpl, const char *name, char *path,
                      size_t pathlen)
{
    char *out = NULL;
    int rc;

    if (o->volcano) {
        snprintf(path, pathlen, "/apis/batch.volcano.sh/v1alpha1/namespaces/%s/jobs", o->ns);
        rc = asprintf(&out,
                      "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
                      "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"minAvailable\":%zu,"
                      "\"schedulerName\":\"volcano\",\"tasks\":[{\"name\":\"worker\","
                      "\"replicas\":%zu,\"template\":%s}]}}",
                      name, o->replicas, o->replicas, tmpl);
    } else {
        snprintf(path, pathlen, "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs", o->ns);
        if (o->replicas == 1)
            rc = asprintf(&out,
                          "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\","
                          "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"pytorchReplicaSpecs\":{"
                          "\"Master\":{\"replicas\":1,\"restartPolicy\":\"Never\","
                          "\"template\":%s}}}}",
                          name, tmpl);
        else
            rc = asprintf(&out,
                          "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\","
                          "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"pytorchReplicaSpecs\":{"
                          "\"Master\":{\"replicas\":1,\"restartPolicy\":\"Never\","
                          "\"template\":%s},\"Worker\":{\"replicas\":%zu,\"restartPolicy\":"
                          "\"Never\",\"template\":%s}}}}",
                          name, tmpl, o->replicas - 1, tmpl);
    }
    return rc < 0 ? NULL : out;
}

typedef struct creator {
    const opts *o;
    const char *tmpl;
    atomic_size_t *next;
    pthread_t tid;
    size_t ok, errors;
    char first_error[256];
} creator;

static void *creator_main(void *arg)
{
    creator *c = arg;
    http h;
    size_t i;

    if (http_init(&h) < 0) {
        c->errors++;
        snprintf(c->first_error, sizeof(c->first_error), "curl init failed");
        return NULL;
    }
    while ((i = atomic_fetch_add(c->next, 1)) < c->o->jobs && mono_ns() < c->o->deadline_ns) {
        char name[64], path[256];
        char *body;
        long st;
        job_name(name, sizeof(name), i);
        if (!(body = job_json(c->o, c->tmpl, name, path, sizeof(path))))
            break;
        st = http_do(&h, c->o, "POST", path, body);
        free(body);
        if (st == 201) {
            c->ok++;
        } else {
            if (!c->errors++)
                snprintf(c->first_error, sizeof(c->first_error), "POST %s: %ld %.180s", name,
                         st, http_why(&h, st));
            if (c->errors > c->o->jobs / 100 + 10)
                break;
        }
    }
    http_fini(&h);
    return NULL;
}

/* ---- the server's memory and CPU ----------------------------------------- */

static long proc_status_kb(long pid, const char *field)
{
    char path[64], line[256];
    size_t n = strlen(field);
    long kb = -1;
    FILE *f;

    if (pid <= 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n) && line[n] == ':')
            kb = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return kb;
}

/* ---- main ----------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_sched_e2e --server URL [--server-pid PID] [--operator-pid PID]\n"
            "                       [--jobs N] [--replicas R]\n"
            "                       [--gpus G] [--duration S|none] [--kind pytorch|volcano]\n"
            "                       [--clients K] [--timeout S] [--namespace NS] [--until-ended]\n"
            "                       [--json FILE] [--kubeconfig FILE]\n"
            "  defaults: 1000 jobs of 8 replicas, 1 GPU each, sim-duration 30 s, pytorch,\n"
            "  4 clients, timeout 600 s. The server should run with --sim-nodes and\n"
            "  --no-local-node (see bench/run-sched-e2e-bench.sh).\n");
}

static long num_flag(const char *name, const char *v, long lo, long hi)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi) {
        fprintf(stderr, "bench_sched_e2e: invalid --%s %s: want %ld-%ld\n", name, v, lo, hi);
        exit(2);
    }
    return n;
}

static void parse_args(int argc, char **argv, opts *o)
{
    const char *kubeconfig = NULL;
    static const struct option lo[] = {
        {"server", required_argument, NULL, 's'},   {"server-pid", required_argument, NULL, 'p'},
        {"kubeconfig", required_argument, NULL, 'K'},
        {"operator-pid", required_argument, NULL, 'o'},
        {"jobs", required_argument, NULL, 'j'},     {"replicas", required_argument, NULL, 'r'},
        {"gpus", required_argument, NULL, 'g'},     {"duration", required_argument, NULL, 'd'},
        {"kind", required_argument, NULL, 'k'},     {"clients", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, 't'},  {"namespace", required_argument, NULL, 'n'},
        {"json", required_argument, NULL, 'J'},     {"help", no_argument, NULL, 'h'},
        {"until-ended", no_argument, NULL, 'u'},
        {NULL, 0, NULL, 0}};
    int c;

    *o = (opts){.jobs = 1000, .replicas = 8, .clients = 4, .gpus = 1, .duration = "30",
                .timeout_s = 600};
    snprintf(o->ns, sizeof(o->ns), "bench-e2e-%ld", (long)getpid());
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 's': o->server = optarg; break;
        case 'K': kubeconfig = optarg; break;
        case 'o': o->operator_pid = num_flag("operator-pid", optarg, 1, 1L << 30); break;
        case 'p': o->server_pid = num_flag("server-pid", optarg, 1, 1L << 30); break;
        case 'j': o->jobs = (size_t)num_flag("jobs", optarg, 1, 1000000); break;
        case 'r': o->replicas = (size_t)num_flag("replicas", optarg, 1, 1000); break;
        case 'g': o->gpus = (int)num_flag("gpus", optarg, 0, 1024); break;
        case 'c': o->clients = (size_t)num_flag("clients", optarg, 1, MAX_CLIENTS); break;
        case 't': o->timeout_s = (int)num_flag("timeout", optarg, 1, 86400); break;
        case 'n': snprintf(o->ns, sizeof(o->ns), "%s", optarg); break;
        case 'J': o->json_path = optarg; break;
        case 'u': o->until_ended = true; break;
        case 'd':
            if (!strcmp(optarg, "none")) {
                o->duration = NULL;
            } else {
                char *end;
                double d = strtod(optarg, &end);
                if (!*optarg || *end || d < 0 || d > 1e6 || strlen(optarg) > 32) {
                    fprintf(stderr, "bench_sched_e2e: invalid --duration %s\n", optarg);
                    exit(2);
                }
                o->duration = optarg;
            }
            break;
        case 'k':
            if (strcmp(optarg, "pytorch") && strcmp(optarg, "volcano")) {
                fprintf(stderr, "bench_sched_e2e: --kind: want pytorch or volcano\n");
                exit(2);
            }
            o->volcano = !strcmp(optarg, "volcano");
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (!o->server || optind < argc) {
        usage(stderr);
        exit(2);
    }
    if (bench_auth_load(kubeconfig, o->server) < 0)
        exit(2);
    if (o->until_ended && !o->duration) {
        fprintf(stderr, "bench_sched_e2e: --until-ended needs a --duration (pods that never "
                        "end would be waited for until --timeout)\n");
        exit(2);
    }
    if (o->jobs * o->replicas > MAX_PODS) {
        fprintf(stderr, "bench_sched_e2e: at most %d pods\n", MAX_PODS);
        exit(2);
    }
}

static double secs(int64_t a, int64_t b)
{
    return (double)(b - a) / 1e9;
}

static double rate(size_t n, double s)
{
    return s > 0 ? (double)n / s : 0;
}

int main(int argc, char **argv)
{
    opts o;
    http h;
    watch w = {0};
    pod_table t = {0};
    creator cr[MAX_CLIENTS] = {0};
    atomic_size_t next = 0;
    char path[512], body[256], *tmpl;
    size_t want, ok = 0, errors = 0, nodes = 0;
    int64_t t0, t_posted, t_bound = 0, t_started = 0, t_ended = 0, t_idle = 0;
    double cpu0, cpu1, cpu2 = -1, op0, op1;
    bool timed_out = false, watch_failed = false;
    long st;
    json_t *list;
    int rc = 0;

    parse_args(argc, argv, &o);
    want = o.jobs * o.replicas;
    o.deadline_ns = mono_ns() + (int64_t)o.timeout_s * 1000000000;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (http_init(&h) < 0 || !(tmpl = template_json(&o)))
        return 1;

    /* The cluster: how many nodes, for the report. */
    st = http_do(&h, &o, "GET", "/api/v1/nodes", NULL);
    list = st == 200 ? json_loadb(h.body.data, h.body.len, 0, NULL) : NULL;
    nodes = json_array_size(json_object_get(list, "items"));
    json_decref(list);
    if (st != 200) {
        fprintf(stderr, "bench_sched_e2e: GET /api/v1/nodes: %ld %s\n", st, http_why(&h, st));
        return 1;
    }

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
             o.ns);
    st = http_do(&h, &o, "POST", "/api/v1/namespaces", body);
    if (st != 201 && st != 409) {
        fprintf(stderr, "bench_sched_e2e: create namespace %s: %ld %s\n", o.ns, st,
                http_why(&h, st));
        return 1;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?limit=1", o.ns);
    st = http_do(&h, &o, "GET", path, NULL);
    list = st == 200 ? json_loadb(h.body.data, h.body.len, 0, NULL) : NULL;
    snprintf(w.rv, sizeof(w.rv), "%s",
             json_string_value(json_object_get(json_object_get(list, "metadata"),
                                               "resourceVersion")) ?: "");
    json_decref(list);
    if (!*w.rv) {
        fprintf(stderr, "bench_sched_e2e: list pods: %ld %s\n", st, http_why(&h, st));
        return 1;
    }

    for (t.cap = 1024; t.cap < want * 2; t.cap *= 2)
        ;
    t.names = calloc(t.cap, sizeof(*t.names));
    t.state = calloc(t.cap, 1);
    if (!t.names || !t.state)
        return 1;
    w.o = &o;
    w.t = &t;
    pthread_mutex_init(&w.mu, NULL);
    if (pthread_create(&w.tid, NULL, watch_main, &w) != 0)
        return 1;

    printf("== %zu nodes; %zu %s jobs x %zu replicas = %zu pods, %d GPU(s) each, "
           "sim-duration %s, %zu clients, namespace %s\n",
           nodes, o.jobs, o.volcano ? "Volcano" : "PyTorch", o.replicas, want, o.gpus,
           o.duration ? o.duration : "none", o.clients, o.ns);
    fflush(stdout);
    sleep_ms(200); /* the watch is connected before the first POST */
    cpu0 = proc_cpu_s(o.server_pid);
    op0 = o.operator_pid ? proc_cpu_s(o.operator_pid) : -1;
    t0 = mono_ns();
    for (size_t i = 0; i < o.clients; i++) {
        cr[i] = (creator){.o = &o, .tmpl = tmpl, .next = &next};
        if (pthread_create(&cr[i].tid, NULL, creator_main, &cr[i]) != 0)
            return 1;
    }
    for (size_t i = 0; i < o.clients; i++) {
        pthread_join(cr[i].tid, NULL);
        ok += cr[i].ok;
        errors += cr[i].errors;
        if (cr[i].errors)
            fprintf(stderr, "bench_sched_e2e: client %zu: %zu error(s), first: %s\n", i,
                    cr[i].errors, cr[i].first_error);
    }
    t_posted = mono_ns();
    want = ok * o.replicas;
    printf("   %zu jobs accepted in %.2f s (%.0f jobs/s), %zu errors\n", ok, secs(t0, t_posted),
           rate(ok, secs(t0, t_posted)), errors);
    fflush(stdout);

    /* Until every pod is bound (and then running), reporting progress. */
    for (int64_t next_report = mono_ns() + 5000000000LL;;) {
        size_t seen, bound, started;
        pthread_mutex_lock(&w.mu);
        seen = t.seen, bound = t.bound, started = t.started;
        watch_failed = w.failed;
        if (bound >= want && !t_bound)
            t_bound = t.last_bound_ns;
        if (started >= want && !t_started)
            t_started = t.last_started_ns;
        pthread_mutex_unlock(&w.mu);
        if ((t_bound && t_started) || watch_failed)
            break;
        if (mono_ns() >= o.deadline_ns ||
            (t_bound && mono_ns() - t_bound > (int64_t)RUNNING_GRACE_S * 1000000000)) {
            timed_out = !t_bound;
            break;
        }
        if (mono_ns() >= next_report) {
            printf("   %5.1f s: %zu pods created, %zu bound, %zu running or ended; server RSS "
                   "%ld MiB\n",
                   secs(t0, mono_ns()), seen, bound, started,
                   proc_status_kb(o.server_pid, "VmRSS") / 1024);
            fflush(stdout);
            next_report += 5000000000LL;
        }
        sleep_ms(20);
    }
    cpu1 = proc_cpu_s(o.server_pid);
    op1 = o.operator_pid ? proc_cpu_s(o.operator_pid) : -1;
    /* --until-ended: every pod ended, then the server idle (what the pods'
     * ending set off, their jobs' last passes above all, is done). */
    while (o.until_ended && t_started && !watch_failed && !t_ended &&
           mono_ns() < o.deadline_ns) {
        pthread_mutex_lock(&w.mu);
        if (t.ended >= want)
            t_ended = t.last_ended_ns;
        watch_failed = w.failed;
        pthread_mutex_unlock(&w.mu);
        sleep_ms(20);
    }
    while (t_ended && !t_idle && mono_ns() < o.deadline_ns) {
        /* In operator mode both must be idle: the operator's last passes
         * are the server's last requests. */
        double a = proc_cpu_s(o.server_pid), b, oa = 0, ob = 0;
        if (o.operator_pid)
            oa = proc_cpu_s(o.operator_pid);
        sleep_ms(1000);
        b = proc_cpu_s(o.server_pid);
        if (o.operator_pid)
            ob = proc_cpu_s(o.operator_pid);
        if (a < 0 || b < 0 || oa < 0 || ob < 0)
            break;
        if (b - a < 0.05 && ob - oa < 0.05) {
            t_idle = mono_ns();
            cpu2 = a; /* the idle second left out */
        }
    }
    atomic_store(&w.stop, true);
    pthread_join(w.tid, NULL);

    {
        double bound_s = t_bound ? secs(t0, t_bound) : secs(t0, mono_ns());
        double created_s = t.seen ? secs(t0, t.last_seen_ns) : 0;
        double started_s = t_started ? secs(t0, t_started) : 0;
        long hwm = proc_status_kb(o.server_pid, "VmHWM"), rss = proc_status_kb(o.server_pid,
                                                                                "VmRSS");
        printf("== results\n");
        printf("pods bound:            %zu / %zu in %.2f s from the first POST\n", t.bound,
               want, bound_s);
        printf("bound pods/s:          %.0f%s\n", rate(t.bound, bound_s),
               t_bound ? "" : " (incomplete)");
        printf("pods created/s:        %.0f (%zu by the job engine, last at %.2f s)\n",
               rate(t.seen, created_s), t.seen, created_s);
        printf("jobs accepted/s:       %.0f (%zu in %.2f s)\n", rate(ok, secs(t0, t_posted)),
               ok, secs(t0, t_posted));
        printf("running or ended:      %zu / %zu%s", t.started, want, t_started ? "" : "\n");
        if (t_started)
            printf(" in %.2f s (%.0f pods/s)\n", started_s, rate(t.started, started_s));
        printf("server peak RSS:       %.1f MiB (VmHWM; VmRSS now %.1f MiB)\n", hwm / 1024.0,
               rss / 1024.0);
        if (cpu0 >= 0 && cpu1 >= 0)
            printf("server CPU:            %.2f s over the run\n", cpu1 - cpu0);
        if (op0 >= 0 && op1 >= 0)
            printf("operator CPU:          %.2f s over the run; peak RSS %.1f MiB\n", op1 - op0,
                   proc_status_kb(o.operator_pid, "VmHWM") / 1024.0);
        if (o.until_ended) {
            printf("ended:                 %zu / %zu", t.ended, want);
            if (t_ended)
                printf(" in %.2f s; the server idle at %.2f s", secs(t0, t_ended),
                       t_idle ? secs(t0, t_idle) - 1 : secs(t0, mono_ns()));
            printf("\n");
            if (cpu0 >= 0 && cpu2 >= 0)
                printf("lifecycle CPU:         %.2f s, %.0f us per pod (the run and the "
                       "ending after it)\n", cpu2 - cpu0, (cpu2 - cpu0) * 1e6 / (double)want);
            else
                printf("lifecycle CPU:         not measured (%s)\n",
                       !t_ended ? "not every pod ended" : "the server never went idle");
        }
        printf("watch:                 %zu events, %zu parsed in full\n", w.events, w.parsed);
        if (o.json_path) {
            FILE *f = fopen(o.json_path, "w");
            if (f) {
                fprintf(f,
                        "{\"nodes\":%zu,\"jobs\":%zu,\"replicas\":%zu,\"pods\":%zu,"
                        "\"bound\":%zu,\"bound_s\":%.3f,\"bound_per_s\":%.1f,"
                        "\"created_per_s\":%.1f,\"jobs_per_s\":%.1f,\"started\":%zu,"
                        "\"started_s\":%.3f,\"server_hwm_kb\":%ld,\"server_cpu_s\":%.2f,"
                        "\"ended\":%zu,\"lifecycle_cpu_s\":%.2f,\"operator_cpu_s\":%.2f,"
                        "\"operator_hwm_kb\":%ld,\"complete\":%s}\n",
                        nodes, o.jobs, o.replicas, want, t.bound, bound_s,
                        rate(t.bound, bound_s), rate(t.seen, created_s),
                        rate(ok, secs(t0, t_posted)), t.started, started_s, hwm,
                        cpu1 - cpu0, t.ended, cpu2 >= 0 ? cpu2 - cpu0 : -1.0,
                        op0 >= 0 && op1 >= 0 ? op1 - op0 : -1.0,
                        o.operator_pid ? proc_status_kb(o.operator_pid, "VmHWM") : -1,
                        t_bound ? "true" : "false");
                fclose(f);
            }
        }
    }
    if (watch_failed) {
        fprintf(stderr, "bench_sched_e2e: %s\n", w.why);
        rc = 1;
    }
    if (o.until_ended && t_started && (!t_ended || !t_idle)) {
        fprintf(stderr, "bench_sched_e2e: --until-ended: %zu of %zu pods ended%s before the "
                        "timeout\n", t.ended, want, t_ended ? ", the server never idle" : "");
        rc = 1;
    }
    if (timed_out) {
        fprintf(stderr,
                "bench_sched_e2e: timed out after %d s: %zu of %zu pods bound, %zu created\n",
                o.timeout_s, t.bound, want, t.seen);
        rc = 1;
    }
    if (errors || ok < o.jobs)
        rc = 1;
    for (size_t i = 0; i < t.cap; i++)
        free(t.names[i]);
    free(t.names);
    free(t.state);
    free(tmpl);
    ty_buf_free(&w.pending);
    http_fini(&h);
    curl_global_cleanup();
    return rc;
}
