/* launch_bench.c - job launch latency and short-job throughput, measured
 * the same way on Trainyard and on a local Slurm.
 *
 *   launch_bench --server URL [--server-pid PID]   Trainyard's API server
 *   launch_bench --slurm                           the Slurm in SLURM_CONF
 *   launch_bench --compare TY.json SLURM.json      both side by side, ratios
 *
 * Not a test: it measures. The work is the same on both sides:
 *   A. launch: N jobs of 4 replicas (Trainyard: a PyTorchJob with 1 Master
 *      and 3 Workers; Slurm: `sbatch -n 4` whose batch script runs `srun`),
 *      each running `sleep 30`, one job at a time. For each, the time from
 *      submission until all 4 are running; then the job is deleted.
 *   B. throughput: M such jobs running /bin/true, submitted from K threads
 *      as fast as they are taken; the time from the first submission to the
 *      last job's completion.
 *
 * What "running" and "completed" mean on each side:
 *   - Trainyard: the receipt, on one pods watch (label selector
 *     training.kubeflow.org/operator-name=pytorchjob-controller), of the
 *     event that shows the 4th pod in phase Running; the receipt, on a
 *     pytorchjobs watch, of the first event with condition Succeeded=True.
 *   - Slurm: each task's first act is to write bash's $EPOCHREALTIME to a
 *     file; the launch time is the latest of the 4 minus the wall clock just
 *     before sbatch was started. Completion is the job's line appearing in
 *     the jobcomp/filetxt log, which the benchmark reads every 5 ms (no RPC
 *     to slurmctld, which shares the 2 cores).
 * Submission time is taken just before the POST, or just before sbatch is
 * spawned, so both include the submit call.
 *
 * Every loop is bounded in count and in time (--time-limit), every request
 * and child process has a timeout, and it talks only to the URL it is given
 * and to the Slurm its environment names. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_auth.h"
#include "bench_util.h"
#include "base/buf.h"

extern char **environ;

#define MAX_JOBS 100000
#define MAX_CLIENTS 64
#define REPLICAS 4 /* 1 Master + 3 Workers; 4 Slurm tasks */
#define ALL_RUNNING ((1u << REPLICAS) - 1)
#define HTTP_BODY_CAP ((size_t)64 * 1024 * 1024)
#define WATCH_LINE_CAP ((size_t)4 * 1024 * 1024)
#define REQUEST_TIMEOUT_MS 30000L
#define CONNECT_TIMEOUT_MS 5000L
#define LAUNCH_WAIT_MS 30000    /* one job of phase A, submit to running */
#define CLEANUP_WAIT_MS 60000   /* pods or Slurm jobs gone after a phase */
#define CMD_TIMEOUT_MS 30000    /* sbatch, scancel, squeue */
#define WATCH_MAX_RECONNECTS 20
#define JOBCOMP_POLL_MS 5
#define OPERATOR_SELECTOR "training.kubeflow.org%2Foperator-name%3Dpytorchjob-controller"

typedef struct bench_opts {
    const char *server;  /* Trainyard mode */
    bool slurm;          /* Slurm mode */
    const char *compare[2];
    char ns[64];
    long server_pid;
    size_t launch_jobs, tput_jobs, clients;
    int launch_sleep_s;
    int time_limit_s;
    bool no_selector;
    const char *workdir; /* Slurm: where jobs run and tasks leave stamps */
    const char *json_path;
    int64_t deadline_ns; /* monotonic */
} bench_opts;

typedef struct cpu_mark {
    double busy_s, total_s; /* whole machine, from /proc/stat */
    double server_s;        /* the server process (Trainyard), -1 unknown */
} cpu_mark;

typedef struct phase_cpu {
    double busy_s, wall_s, server_s;
} phase_cpu;

typedef struct bench_result {
    const char *system;
    bool aborted;
    char abort_reason[256];
    /* phase A */
    size_t a_jobs, a_ok, a_timeouts, a_errors;
    double a_wall_s, a_cleanup_s;
    lat_summary a_lat, a_seen; /* a_seen: Slurm only, when the benchmark saw it */
    phase_cpu a_cpu;
    /* phase B */
    size_t b_jobs, b_submitted, b_submit_errors, b_succeeded, b_failed;
    bool b_complete; /* every job ended; else b_total_s runs to the time limit */
    double b_submit_s, b_total_s, b_drain_s;
    double b_jobs_per_s, b_pods_per_s, b_submits_per_s;
    lat_summary b_lat;
    phase_cpu b_cpu;
    long server_rss_kb;
    char first_error[320];
} bench_result;

/* ---- time, statistics, CPU --------------------------------------------- */

static bool past_deadline(const bench_opts *o)
{
    return mono_ns() >= o->deadline_ns;
}

static long proc_rss_kb(long pid)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    if (pid <= 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

/* The whole machine's CPU: everything that runs the work (server, pod
 * supervisors and processes; slurmctld, slurmd, slurmstepd, srun) and this
 * benchmark share the same cores, so that is the fair figure to compare. */
static void cpu_mark_take(cpu_mark *m, long server_pid)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    double tck = (double)sysconf(_SC_CLK_TCK);

    m->busy_s = m->total_s = -1;
    m->server_s = proc_cpu_s(server_pid);
    if (!f)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) == 8) {
        unsigned long long idle = v[3] + v[4], total = 0;
        for (int k = 0; k < 8; k++)
            total += v[k];
        m->busy_s = (double)(total - idle) / tck;
        m->total_s = (double)total / tck;
    }
    fclose(f);
}

static void phase_cpu_set(phase_cpu *p, const cpu_mark *a, const cpu_mark *b, int64_t wall_ns)
{
    p->wall_s = (double)wall_ns / 1e9;
    p->busy_s = a->busy_s >= 0 && b->busy_s >= 0 ? b->busy_s - a->busy_s : -1;
    p->server_s = a->server_s >= 0 && b->server_s >= 0 ? b->server_s - a->server_s : -1;
}

static void note_error(bench_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static pthread_mutex_t note_mu = PTHREAD_MUTEX_INITIALIZER;
static void note_error(bench_result *r, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&note_mu);
    if (!r->first_error[0]) {
        va_start(ap, fmt);
        vsnprintf(r->first_error, sizeof(r->first_error), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&note_mu);
}

/* ---- HTTP (Trainyard) ---------------------------------------------------- */

typedef struct bench_http {
    CURL *curl;
    const char *base;
    struct curl_slist *hdr_get, *hdr_json;
    ty_buf body;
    char error[CURL_ERROR_SIZE];
} bench_http;

static size_t http_on_body(char *data, size_t size, size_t n, void *arg)
{
    ty_buf *b = arg;
    size_t len = size * n;
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
    if (!h->curl || !h->hdr_get || !h->hdr_json)
        return -1;
    bench_auth_apply(h->curl, &h->hdr_get);
    bench_auth_apply(h->curl, &h->hdr_json);
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
    ty_buf_free(&h->body);
}

/* One request on the handle's kept-alive connection. Returns the HTTP status,
 * or 0 when no answer came (h->error says why). The answer is in h->body. */
static long http_do(bench_http *h, const char *method, const char *path, const char *body,
                    size_t len)
{
    char url[2048];
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
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->hdr_json);
    }
    if (curl_easy_perform(h->curl) != CURLE_OK)
        return 0;
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static const char *http_why(const bench_http *h, long st)
{
    return st ? (h->body.data ? h->body.data : "") : h->error;
}

/* The list's resourceVersion, for a watch that misses nothing after it. */
static int http_list_rv(bench_http *h, const char *path, char *rv, size_t len)
{
    long st = http_do(h, "GET", path, NULL, 0);
    json_t *v;
    const char *s;

    if (st != 200)
        return -1;
    v = json_loadb(h->body.data, h->body.len, 0, NULL);
    s = json_string_value(json_object_get(json_object_get(v, "metadata"), "resourceVersion"));
    snprintf(rv, len, "%s", s ? s : "");
    json_decref(v);
    return s ? 0 : -1;
}

/* ---- a watch stream, resumed from its last resourceVersion ------------ */

/* Called on the watch thread for each ADDED/MODIFIED/DELETED event, with
 * the receive time taken before any parsing. obj is borrowed. */
typedef void (*watch_fn)(void *arg, const char *type, json_t *obj, int64_t recv_ns);

typedef struct watch_stream {
    const bench_opts *o;
    char path[768]; /* the collection, with "?watch=1" and any selector */
    char rv[32];
    watch_fn fn;
    void *arg;
    pthread_t tid;
    bool running;
    atomic_bool stop;
    ty_buf pending;
    int64_t chunk_ns;
    long status;
    int reconnects;
    bool failed; /* 410, a non-200 answer, or too many reconnects */
    size_t events;
} watch_stream;

static void watch_line(watch_stream *w, const char *line, size_t len)
{
    json_t *ev = json_loadb(line, len, 0, NULL), *obj = json_object_get(ev, "object");
    const char *type = json_string_value(json_object_get(ev, "type"));
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));

    if (!type) {
        json_decref(ev);
        return;
    }
    if (strcmp(type, "ERROR") == 0) {
        fprintf(stderr, "launch_bench: watch ERROR event: %.*s\n", (int)(len > 300 ? 300 : len),
                line);
        w->failed = true;
        atomic_store(&w->stop, true);
    } else {
        if (rv)
            snprintf(w->rv, sizeof(w->rv), "%s", rv);
        if (strcmp(type, "BOOKMARK") != 0) {
            w->events++;
            w->fn(w->arg, type, obj, w->chunk_ns);
        }
    }
    json_decref(ev);
}

static size_t watch_on_data(char *data, size_t size, size_t n, void *arg)
{
    watch_stream *w = arg;
    size_t len = size * n, start = 0;
    char *nl;

    w->chunk_ns = mono_ns(); /* before any work of ours */
    if (w->pending.len + len > WATCH_LINE_CAP || ty_buf_append(&w->pending, data, len) < 0)
        return 0;
    while ((nl = memchr(w->pending.data + start, '\n', w->pending.len - start))) {
        size_t end = (size_t)(nl - w->pending.data);
        if (end > start)
            watch_line(w, w->pending.data + start, end - start);
        start = end + 1;
    }
    memmove(w->pending.data, w->pending.data + start, w->pending.len - start);
    w->pending.len -= start;
    w->pending.data[w->pending.len] = '\0';
    return len;
}

static int watch_on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    watch_stream *w = arg;
    (void)a, (void)b, (void)c, (void)d;
    return atomic_load(&w->stop) ? 1 : 0;
}

static void *watch_main(void *arg)
{
    watch_stream *w = arg;
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    CURL *c = curl_easy_init();
    char url[1024];

    if (c && hdrs)
        bench_auth_apply(c, &hdrs);
    while (c && hdrs && !atomic_load(&w->stop) && !past_deadline(w->o)) {
        long left_s = (long)((w->o->deadline_ns - mono_ns()) / 1000000000) + 1;
        snprintf(url, sizeof(url), "%s&resourceVersion=%s&timeoutSeconds=%ld", w->path, w->rv,
                 left_s);
        curl_easy_reset(c);
        bench_auth_apply(c, NULL);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left_s * 1000 + 2000);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, watch_on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
        w->pending.len = 0;
        curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &w->status);
        if (atomic_load(&w->stop))
            break;
        /* The server ended the stream (or never answered): resume. */
        if (w->status != 200 || ++w->reconnects > WATCH_MAX_RECONNECTS) {
            fprintf(stderr, "launch_bench: watch %s: HTTP %ld after %d reconnects\n", w->path,
                    w->status, w->reconnects);
            w->failed = true;
            break;
        }
        sleep_ms(20);
    }
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(hdrs);
    return NULL;
}

static int watch_start(watch_stream *w, const bench_opts *o, const char *collection,
                       const char *query, const char *rv, watch_fn fn, void *arg)
{
    memset(w, 0, sizeof(*w));
    w->o = o;
    w->fn = fn;
    w->arg = arg;
    snprintf(w->path, sizeof(w->path), "%s%s?watch=1%s%s", o->server, collection,
             query && *query ? "&" : "", query ? query : "");
    snprintf(w->rv, sizeof(w->rv), "%s", rv);
    w->running = pthread_create(&w->tid, NULL, watch_main, w) == 0;
    return w->running ? 0 : -1;
}

static void watch_stop(watch_stream *w)
{
    atomic_store(&w->stop, true);
    if (w->running)
        pthread_join(w->tid, NULL);
    w->running = false;
    ty_buf_free(&w->pending);
}

/* ---- Trainyard: manifests and names -------------------------------------- */

#define TY_REPLICA(n, cmd)                                                                         \
    "{\"replicas\":" #n ",\"restartPolicy\":\"OnFailure\",\"template\":{\"spec\":{"                \
    "\"containers\":[{\"name\":\"pytorch\",\"image\":\"docker.io/library/busybox:1.36\","          \
    "\"command\":" cmd "}]}}}"

/* prefix "la" (phase A) or "lt" (phase B); index -1 is the warm-up job. */
static void job_name(char *buf, size_t len, const char *prefix, long index)
{
    if (index < 0)
        snprintf(buf, len, "%s-warmup", prefix);
    else
        snprintf(buf, len, "%s-%05ld", prefix, index);
}

/* Index of a job from its name, or of a pod's job from the pod's name
 * ("{job}-master-0", "{job}-worker-{i}"); *bit gets the replica's bit.
 * Returns the index, n for the warm-up job, -1 for anything else. */
static long name_index(const char *name, const char *prefix, size_t n, int *bit)
{
    size_t pl = strlen(prefix);
    const char *p;
    char *end;
    long idx;

    if (!name || strncmp(name, prefix, pl) != 0 || name[pl] != '-')
        return -1;
    p = name + pl + 1;
    if (strncmp(p, "warmup", 6) == 0) {
        idx = (long)n;
        end = (char *)p + 6;
    } else {
        idx = strtol(p, &end, 10);
        if (end == p || idx < 0 || (size_t)idx >= n)
            return -1;
    }
    if (!bit)
        return *end == '\0' ? idx : -1;
    if (strcmp(end, "-master-0") == 0) {
        *bit = 0;
        return idx;
    }
    if (strncmp(end, "-worker-", 8) == 0) {
        long k = strtol(end + 8, &end, 10);
        if (*end == '\0' && k >= 0 && k < REPLICAS - 1) {
            *bit = 1 + (int)k;
            return idx;
        }
    }
    return -1;
}

static int ty_manifest(char *buf, size_t len, const char *ns, const char *name, bool sleeper,
                       int sleep_s)
{
    char cmd[64];
    if (sleeper)
        snprintf(cmd, sizeof(cmd), "[\"/bin/sleep\",\"%d\"]", sleep_s);
    else
        snprintf(cmd, sizeof(cmd), "[\"/bin/true\"]");
    /* The command is spliced in twice; the macro keeps the rest literal. */
    return snprintf(buf, len,
                    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\","
                    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
                    "\"labels\":{\"app\":\"launch-bench\"}},"
                    "\"spec\":{\"pytorchReplicaSpecs\":{"
                    "\"Master\":" TY_REPLICA(1, "%s") ",\"Worker\":" TY_REPLICA(3, "%s") "}}}",
                    name, ns, cmd, cmd);
}

static void jobs_path(char *buf, size_t len, const char *ns, const char *name)
{
    snprintf(buf, len, "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs%s%s", ns,
             name ? "/" : "", name ? name : "");
}

/* ---- Trainyard phase A: launch latency ----------------------------------- */

typedef struct launch_track {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t n;          /* jobs; slot n is the warm-up job */
    unsigned *running; /* replica bits seen in phase Running */
    int64_t *t_all;    /* receipt of the event completing the set; 0 until then */
    unsigned char *failed;
    size_t pods_seen;
} launch_track;

static void launch_on_pod(void *arg, const char *type, json_t *pod, int64_t recv_ns)
{
    launch_track *t = arg;
    const char *name =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    const char *phase =
        json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    int bit = 0;
    long idx = name_index(name, "la", t->n, &bit);

    if (idx < 0 || strcmp(type, "DELETED") == 0 || !phase)
        return;
    pthread_mutex_lock(&t->mu);
    if (strcmp(type, "ADDED") == 0)
        t->pods_seen++;
    if (strcmp(phase, "Running") == 0) {
        t->running[idx] |= 1u << bit;
        if (t->running[idx] == ALL_RUNNING && t->t_all[idx] == 0) {
            t->t_all[idx] = recv_ns;
            pthread_cond_broadcast(&t->cv);
        }
    } else if (strcmp(phase, "Failed") == 0) {
        t->failed[idx] = 1;
        pthread_cond_broadcast(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
}

/* Waits until job idx has all replicas running or failed, or ms pass.
 * Returns the receipt time, 0 on timeout, -1 when a pod failed. */
static int64_t launch_wait(launch_track *t, size_t idx, long ms)
{
    struct timespec until;
    int64_t got;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&t->mu);
    while (t->t_all[idx] == 0 && !t->failed[idx])
        if (pthread_cond_timedwait(&t->cv, &t->mu, &until) == ETIMEDOUT)
            break;
    got = t->failed[idx] ? -1 : t->t_all[idx];
    pthread_mutex_unlock(&t->mu);
    return got;
}

static int launch_track_init(launch_track *t, size_t n)
{
    pthread_condattr_t ca;

    memset(t, 0, sizeof(*t));
    t->n = n;
    t->running = calloc(n + 1, sizeof(*t->running));
    t->t_all = calloc(n + 1, sizeof(*t->t_all));
    t->failed = calloc(n + 1, 1);
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    return t->running && t->t_all && t->failed ? 0 : -1;
}

static void launch_track_fini(launch_track *t)
{
    free(t->running);
    free(t->t_all);
    free(t->failed);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
}

/* Creates one job, waits for its 4 pods to run, deletes it. Returns the
 * latency in ns, 0 on timeout, -1 on error. */
static int64_t ty_launch_one(const bench_opts *o, bench_result *r, bench_http *h,
                             launch_track *t, long index)
{
    char name[32], path[512], body[4096];
    size_t slot = index < 0 ? t->n : (size_t)index;
    int64_t t0, got;
    long st;
    int n;

    job_name(name, sizeof(name), "la", index);
    n = ty_manifest(body, sizeof(body), o->ns, name, true, o->launch_sleep_s);
    jobs_path(path, sizeof(path), o->ns, NULL);
    t0 = mono_ns();
    st = http_do(h, "POST", path, body, (size_t)n);
    if (st != 201) {
        note_error(r, "POST %s -> %ld %.200s", name, st, http_why(h, st));
        return -1;
    }
    got = launch_wait(t, slot, LAUNCH_WAIT_MS);
    jobs_path(path, sizeof(path), o->ns, name);
    st = http_do(h, "DELETE", path, NULL, 0);
    if (st != 200 && st != 202)
        note_error(r, "DELETE %s -> %ld %.200s", name, st, http_why(h, st));
    if (got < 0)
        note_error(r, "%s: a pod failed before all 4 were Running", name);
    return got > 0 ? got - t0 : got;
}

/* Pods left in the namespace; -1 when the list fails. */
static long ty_pod_count(bench_http *h, const bench_opts *o)
{
    char path[256];
    json_t *v;
    long n;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", o->ns);
    if (http_do(h, "GET", path, NULL, 0) != 200)
        return -1;
    v = json_loadb(h->body.data, h->body.len, 0, NULL);
    n = json_is_array(json_object_get(v, "items"))
            ? (long)json_array_size(json_object_get(v, "items"))
            : -1;
    json_decref(v);
    return n;
}

static int ty_phase_launch(const bench_opts *o, bench_result *r, bench_http *h)
{
    launch_track t = {0};
    watch_stream w;
    char pods[256], query[160], rv[32];
    int64_t *lat = malloc(o->launch_jobs * sizeof(*lat)), t0;
    cpu_mark c0, c1;
    int rc = -1;

    if (!lat || launch_track_init(&t, o->launch_jobs) < 0)
        goto out_free;
    snprintf(pods, sizeof(pods), "/api/v1/namespaces/%s/pods", o->ns);
    snprintf(query, sizeof(query), "%s", o->no_selector ? "" : "labelSelector=" OPERATOR_SELECTOR);
    if (http_list_rv(h, pods, rv, sizeof(rv)) < 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason), "GET %.200s failed", pods);
        goto out_free;
    }
    if (watch_start(&w, o, pods, query, rv, launch_on_pod, &t) < 0)
        goto out_free;
    /* Warm-up, not counted: the first pods, and proof the watch is live. */
    if (ty_launch_one(o, r, h, &t, -1) <= 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason),
                 "warm-up job: its 4 pods were not seen Running within %d s (%zu pod events"
                 " on the watch)",
                 LAUNCH_WAIT_MS / 1000, w.events);
        goto out;
    }
    cpu_mark_take(&c0, o->server_pid);
    t0 = mono_ns();
    for (size_t i = 0; i < o->launch_jobs && !past_deadline(o) && !w.failed; i++) {
        int64_t d = ty_launch_one(o, r, h, &t, (long)i);
        r->a_jobs++;
        if (d > 0)
            lat[r->a_ok++] = d;
        else if (d == 0)
            r->a_timeouts++;
        else
            r->a_errors++;
        if (r->a_errors + r->a_timeouts > o->launch_jobs / 50 + 2) {
            snprintf(r->abort_reason, sizeof(r->abort_reason),
                     "%zu of %zu jobs failed or timed out", r->a_errors + r->a_timeouts,
                     r->a_jobs);
            break;
        }
    }
    cpu_mark_take(&c1, o->server_pid);
    phase_cpu_set(&r->a_cpu, &c0, &c1, mono_ns() - t0);
    r->a_wall_s = r->a_cpu.wall_s;
    lat_summarize(lat, r->a_ok, &r->a_lat);
    /* Deleted jobs' pods must be gone before phase B shares the machine. */
    t0 = mono_ns();
    while (ty_pod_count(h, o) > 0 && mono_ns() - t0 < (int64_t)CLEANUP_WAIT_MS * 1000000)
        sleep_ms(200);
    r->a_cleanup_s = (double)(mono_ns() - t0) / 1e9;
    rc = r->abort_reason[0] ? -1 : 0;
out:
    watch_stop(&w);
out_free:
    if (t.running)
        launch_track_fini(&t);
    free(lat);
    return rc;
}

/* ---- phase B (both systems): throughput ---------------------------------- */

typedef struct tput_track {
    pthread_mutex_t mu;
    size_t n;
    int64_t *t_submit, *t_submitted, *t_done; /* monotonic; 0 = not yet */
    unsigned char *state;                     /* 0 running, 1 succeeded, 2 failed */
    atomic_size_t next, submitted, errors, finished;
    atomic_bool stop;
    int64_t first_ns; /* the first submission, set by tput_run */
    const bench_opts *o;
    bench_result *r;
} tput_track;

static int tput_track_init(tput_track *t, size_t n, const bench_opts *o, bench_result *r)
{
    memset(t, 0, sizeof(*t));
    t->n = n;
    t->o = o;
    t->r = r;
    t->t_submit = calloc(n, sizeof(int64_t));
    t->t_submitted = calloc(n, sizeof(int64_t));
    t->t_done = calloc(n, sizeof(int64_t));
    t->state = calloc(n, 1);
    pthread_mutex_init(&t->mu, NULL);
    return t->t_submit && t->t_submitted && t->t_done && t->state ? 0 : -1;
}

static void tput_track_fini(tput_track *t)
{
    free(t->t_submit);
    free(t->t_submitted);
    free(t->t_done);
    free(t->state);
    pthread_mutex_destroy(&t->mu);
}

/* Records job idx's end once; ok says whether it succeeded. */
static void tput_done(tput_track *t, long idx, bool ok, int64_t when)
{
    if (idx < 0 || (size_t)idx >= t->n)
        return;
    pthread_mutex_lock(&t->mu);
    if (t->t_done[idx] == 0) {
        t->t_done[idx] = when;
        t->state[idx] = ok ? 1 : 2;
        atomic_fetch_add(&t->finished, 1);
    }
    pthread_mutex_unlock(&t->mu);
}

/* One submission failed: more than 1% and the figures mean nothing. */
static void tput_error(tput_track *t)
{
    if (atomic_fetch_add(&t->errors, 1) + 1 > t->n / 100)
        atomic_store(&t->stop, true);
}

typedef int (*submit_fn)(tput_track *t, size_t i, void *ctx);

typedef struct submitter {
    tput_track *t;
    submit_fn fn;
    void *(*ctx_new)(const bench_opts *o);
    void (*ctx_free)(void *ctx);
} submitter;

static void *submit_main(void *arg)
{
    submitter *s = arg;
    tput_track *t = s->t;
    void *ctx = s->ctx_new ? s->ctx_new(t->o) : NULL;

    while (!atomic_load(&t->stop) && (ctx || !s->ctx_new)) {
        size_t i = atomic_fetch_add(&t->next, 1);
        if (i >= t->n || past_deadline(t->o))
            break;
        t->t_submit[i] = mono_ns();
        if (s->fn(t, i, ctx) == 0) {
            t->t_submitted[i] = mono_ns();
            atomic_fetch_add(&t->submitted, 1);
        } else {
            t->t_submit[i] = 0;
            tput_error(t);
        }
    }
    if (s->ctx_free)
        s->ctx_free(ctx);
    return NULL;
}

/* Submits t->n jobs from o->clients threads and waits, up to the deadline,
 * until every submitted job has ended; then fills phase B of r. */
static void tput_run(tput_track *t, submitter *s, const bench_opts *o, bench_result *r)
{
    pthread_t tids[MAX_CLIENTS];
    size_t started = 0;
    cpu_mark c0, c1;
    int64_t first = INT64_MAX, last_sub = 0, last_done = 0, stopped, end;
    int64_t *lat = malloc(t->n * sizeof(*lat));
    size_t nl = 0;

    cpu_mark_take(&c0, o->server_pid);
    for (; started < o->clients; started++)
        if (pthread_create(&tids[started], NULL, submit_main, s) != 0)
            break;
    for (size_t k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
    while (atomic_load(&t->finished) < atomic_load(&t->submitted) && !past_deadline(o))
        sleep_ms(10);
    stopped = mono_ns();
    cpu_mark_take(&c1, o->server_pid);
    r->b_jobs = t->n;
    r->b_submitted = atomic_load(&t->submitted);
    r->b_submit_errors = atomic_load(&t->errors);
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n; i++) {
        if (t->t_submit[i] && t->t_submit[i] < first)
            first = t->t_submit[i];
        if (t->t_submitted[i] > last_sub)
            last_sub = t->t_submitted[i];
        if (t->t_done[i] > last_done)
            last_done = t->t_done[i];
        r->b_succeeded += t->state[i] == 1;
        r->b_failed += t->state[i] == 2;
        if (t->t_done[i] && t->t_submit[i] && lat)
            lat[nl++] = t->t_done[i] - t->t_submit[i];
    }
    pthread_mutex_unlock(&t->mu);
    if (first == INT64_MAX)
        first = last_sub = last_done = 0;
    t->first_ns = first;
    /* Not all ended: the rate is what ended by the time the wait gave up. */
    r->b_complete = r->b_succeeded + r->b_failed == t->n;
    end = r->b_complete ? last_done : stopped;
    r->b_submit_s = (double)(last_sub - first) / 1e9;
    r->b_total_s = first ? (double)(end - first) / 1e9 : 0;
    r->b_submits_per_s = r->b_submit_s > 0 ? (double)r->b_submitted / r->b_submit_s : 0;
    r->b_jobs_per_s = r->b_total_s > 0 ? (double)r->b_succeeded / r->b_total_s : 0;
    r->b_pods_per_s = r->b_jobs_per_s * REPLICAS;
    phase_cpu_set(&r->b_cpu, &c0, &c1, first ? end - first : 0);
    if (lat)
        lat_summarize(lat, nl, &r->b_lat);
    free(lat);
    if (started < o->clients)
        snprintf(r->abort_reason, sizeof(r->abort_reason), "could start only %zu threads",
                 started);
    else if (r->b_submit_errors > t->n / 100)
        snprintf(r->abort_reason, sizeof(r->abort_reason), "%zu submissions failed",
                 r->b_submit_errors);
    else if (r->b_succeeded + r->b_failed < t->n)
        snprintf(r->abort_reason, sizeof(r->abort_reason),
                 "time limit: %zu of %zu jobs ended (%zu submitted)",
                 r->b_succeeded + r->b_failed, t->n, r->b_submitted);
}

/* ---- Trainyard phase B ------------------------------------------------- */

static void tput_on_job(void *arg, const char *type, json_t *job, int64_t recv_ns)
{
    tput_track *t = arg;
    const char *name =
        json_string_value(json_object_get(json_object_get(job, "metadata"), "name"));
    json_t *conds = json_object_get(json_object_get(job, "status"), "conditions"), *c;
    long idx = name_index(name, "lt", t->n, NULL);
    size_t k;

    if (idx < 0 || (size_t)idx >= t->n || strcmp(type, "DELETED") == 0)
        return;
    json_array_foreach (conds, k, c) {
        const char *ct = json_string_value(json_object_get(c, "type"));
        const char *cs = json_string_value(json_object_get(c, "status"));
        if (!ct || !cs || strcmp(cs, "True") != 0)
            continue;
        if (strcmp(ct, "Succeeded") == 0 || strcmp(ct, "Failed") == 0) {
            tput_done(t, idx, ct[0] == 'S', recv_ns);
            return;
        }
    }
}

static void *ty_submit_ctx_new(const bench_opts *o)
{
    bench_http *h = malloc(sizeof(*h));
    if (h && http_init(h, o->server) < 0) {
        http_fini(h);
        free(h);
        return NULL;
    }
    return h;
}

static void ty_submit_ctx_free(void *ctx)
{
    if (ctx)
        http_fini(ctx);
    free(ctx);
}

static int ty_submit(tput_track *t, size_t i, void *ctx)
{
    bench_http *h = ctx;
    char name[32], path[512], body[4096];
    int n;
    long st;

    job_name(name, sizeof(name), "lt", (long)i);
    n = ty_manifest(body, sizeof(body), t->o->ns, name, false, 0);
    jobs_path(path, sizeof(path), t->o->ns, NULL);
    st = http_do(h, "POST", path, body, (size_t)n);
    if (st == 201)
        return 0;
    note_error(t->r, "POST %s -> %ld %.200s", name, st, http_why(h, st));
    return -1;
}

static int ty_phase_tput(const bench_opts *o, bench_result *r, bench_http *h)
{
    tput_track t;
    watch_stream w;
    submitter s = {.t = &t,
                   .fn = ty_submit,
                   .ctx_new = ty_submit_ctx_new,
                   .ctx_free = ty_submit_ctx_free};
    char jobs[256], rv[32];
    int rc = -1;

    if (tput_track_init(&t, o->tput_jobs, o, r) < 0)
        goto out;
    jobs_path(jobs, sizeof(jobs), o->ns, NULL);
    if (http_list_rv(h, jobs, rv, sizeof(rv)) < 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason), "GET %.200s failed", jobs);
        goto out;
    }
    /* From the list's version: nothing after it is missed, however late the
     * stream's headers come. */
    if (watch_start(&w, o, jobs, NULL, rv, tput_on_job, &t) < 0)
        goto out;
    tput_run(&t, &s, o, r);
    watch_stop(&w);
    if (w.failed && !r->abort_reason[0])
        snprintf(r->abort_reason, sizeof(r->abort_reason), "the pytorchjobs watch failed");
    rc = r->abort_reason[0] ? -1 : 0;
out:
    tput_track_fini(&t);
    return rc;
}

/* ---- Trainyard: namespace, cleanup, the run -------------------------------- */

static int ty_namespace(bench_http *h, const bench_opts *o, bool create)
{
    char body[256], path[256];
    long st;
    int n;

    if (!create) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s", o->ns);
        st = http_do(h, "DELETE", path, NULL, 0);
        return st == 200 || st == 202 || st == 404 ? 0 : -1;
    }
    n = snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\","
                 "\"labels\":{\"app\":\"launch-bench\"}}}",
                 o->ns);
    st = http_do(h, "POST", "/api/v1/namespaces", body, (size_t)n);
    if (st == 201 || st == 200 || st == 409)
        return 0;
    fprintf(stderr, "launch_bench: POST /api/v1/namespaces (%s) -> %ld %s\n", o->ns, st,
            http_why(h, st));
    return -1;
}

/* Deletes the phase B jobs (a collection delete, or one by one when the
 * server does not take that), then the namespace. Not timed. */
static void ty_cleanup(bench_http *h, const bench_opts *o)
{
    char path[512], name[32];
    long st;

    jobs_path(path, sizeof(path), o->ns, NULL);
    st = http_do(h, "DELETE", path, NULL, 0);
    if (st != 200 && st != 202)
        for (size_t i = 0; i < o->tput_jobs; i++) {
            job_name(name, sizeof(name), "lt", (long)i);
            jobs_path(path, sizeof(path), o->ns, name);
            http_do(h, "DELETE", path, NULL, 0);
        }
    if (ty_namespace(h, o, false) < 0)
        fprintf(stderr, "launch_bench: could not delete namespace %s: %s\n", o->ns,
                http_why(h, 1));
}

static void run_trainyard(const bench_opts *o, bench_result *r)
{
    bench_http h;

    r->system = "trainyard";
    if (http_init(&h, o->server) < 0 || ty_namespace(&h, o, true) < 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason), "cannot create namespace %s", o->ns);
        http_fini(&h);
        return;
    }
    if (o->launch_jobs && ty_phase_launch(o, r, &h) < 0)
        goto out;
    if (o->tput_jobs)
        ty_phase_tput(o, r, &h);
out:
    r->server_rss_kb = proc_rss_kb(o->server_pid);
    ty_cleanup(&h, o);
    http_fini(&h);
}

/* ---- Slurm: child processes ---------------------------------------------- */

/* Runs argv (found on PATH) with stdin from /dev/null and stdout captured
 * into out (NUL-terminated, cut at out_len - 1); stderr is ours. Returns the
 * exit status, or -1 when it could not run, died on a signal or ran past
 * timeout_ms (then it is killed). Safe from several threads: the pipe is
 * close-on-exec, so other children do not inherit it. */
static int run_cmd(char *const argv[], char *out, size_t out_len, int timeout_ms)
{
    posix_spawn_file_actions_t fa;
    int fds[2], status = 0, rc = -1;
    size_t got = 0;
    int64_t until = mono_ns() + (int64_t)timeout_ms * 1000000;
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    for (;;) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int left = (int)((until - mono_ns()) / 1000000);
        char sink[4096];
        ssize_t n;

        if (left <= 0 || poll(&p, 1, left) <= 0) {
            if (errno == EINTR)
                continue;
            kill(pid, SIGKILL);
            break;
        }
        n = read(fds[0], sink, sizeof(sink));
        if (n <= 0)
            break;
        for (ssize_t k = 0; k < n && out && got + 1 < out_len; k++)
            out[got++] = sink[k];
    }
    if (out && out_len)
        out[got] = '\0';
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && mono_ns() < until)
        rc = WEXITSTATUS(status);
    return rc;
}

/* sbatch --parsable; returns the job id, or -1. */
static long slurm_sbatch(const char *name, const char *wrap, const char *workdir)
{
    char jn[64], cd[512], out[256];
    char *argv[] = {"sbatch", "--parsable", jn, "--ntasks=4", "--output=/dev/null", cd,
                    "--wrap", (char *)wrap, NULL};
    char *end;
    long id;

    snprintf(jn, sizeof(jn), "--job-name=%s", name);
    snprintf(cd, sizeof(cd), "--chdir=%s", workdir);
    if (run_cmd(argv, out, sizeof(out), CMD_TIMEOUT_MS) != 0)
        return -1;
    id = strtol(out, &end, 10); /* "123" or "123;cluster" */
    return end != out && id > 0 ? id : -1;
}

static int slurm_scancel(long id)
{
    char ids[32];
    char *argv[] = {"scancel", ids, NULL};
    snprintf(ids, sizeof(ids), "%ld", id);
    return run_cmd(argv, NULL, 0, CMD_TIMEOUT_MS);
}

/* Jobs still queued, running or completing; -1 when squeue fails. */
static long slurm_queue_len(void)
{
    char out[65536];
    char *argv[] = {"squeue", "-h", "-o", "%i", NULL};
    long n = 0;

    if (run_cmd(argv, out, sizeof(out), CMD_TIMEOUT_MS) != 0)
        return -1;
    for (char *p = out; *p; p++)
        n += *p == '\n';
    return n;
}

/* A value from `scontrol show config` ("Key = value"), or "" when absent. */
static int slurm_config(const char *key, char *val, size_t len)
{
    char out[65536];
    char *argv[] = {"scontrol", "show", "config", NULL}, *p;
    size_t kl = strlen(key);

    val[0] = '\0';
    if (run_cmd(argv, out, sizeof(out), CMD_TIMEOUT_MS) != 0)
        return -1;
    for (p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, kl) != 0 || (p[kl] != ' ' && p[kl] != '='))
            continue;
        p = strchr(p, '=');
        if (!p)
            break;
        for (p++; *p == ' '; p++)
            ;
        snprintf(val, len, "%.*s", (int)strcspn(p, "\n"), p);
        return 0;
    }
    return 0;
}

/* ---- Slurm phase A: launch latency --------------------------------------- */

/* The time a task wrote into its stamp file: bash's $EPOCHREALTIME,
 * "seconds.microseconds" (a comma in some locales). 0 when not there yet. */
static int64_t stamp_read(const char *path)
{
    char buf[64], *end;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;
    long long s, us;

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0 || buf[n - 1] != '\n') /* still being written */
        return 0;
    buf[n] = '\0';
    s = strtoll(buf, &end, 10);
    if (*end != '.' && *end != ',')
        return 0;
    us = strtoll(end + 1, NULL, 10);
    return (int64_t)s * 1000000000 + (int64_t)us * 1000;
}

typedef struct slurm_stamps {
    const char *workdir;
    int inotify_fd; /* -1: poll every millisecond instead */
} slurm_stamps;

/* Waits for the 4 stamp files of job id. Returns the latest stamp (wall
 * clock), 0 on timeout; *seen gets the monotonic time all 4 were seen. */
static int64_t stamps_wait(const slurm_stamps *s, long id, long ms, int64_t *seen)
{
    int64_t until = mono_ns() + (int64_t)ms * 1000000, latest = 0;
    char path[600], evbuf[4096];

    for (;;) {
        int have = 0;
        latest = 0;
        for (int k = 0; k < REPLICAS; k++) {
            snprintf(path, sizeof(path), "%s/a.%ld.%d", s->workdir, id, k);
            int64_t v = stamp_read(path);
            have += v > 0;
            latest = v > latest ? v : latest;
        }
        if (have == REPLICAS) {
            *seen = mono_ns();
            return latest;
        }
        int left = (int)((until - mono_ns()) / 1000000);
        if (left <= 0)
            return 0;
        if (s->inotify_fd >= 0) {
            struct pollfd p = {.fd = s->inotify_fd, .events = POLLIN};
            if (poll(&p, 1, left < 50 ? left : 50) > 0)
                while (read(s->inotify_fd, evbuf, sizeof(evbuf)) > 0)
                    ;
        } else {
            sleep_ms(1);
        }
    }
}

static void stamps_remove(const char *workdir, long id)
{
    char path[600];
    for (int k = 0; k < REPLICAS; k++) {
        snprintf(path, sizeof(path), "%s/a.%ld.%d", workdir, id, k);
        unlink(path);
    }
}

/* Submits one sleeper, waits for its 4 tasks, cancels it. Returns the
 * latency in ns (0 timeout, -1 error); *seen_ns gets when it was seen. */
static int64_t slurm_launch_one(const bench_opts *o, bench_result *r, const slurm_stamps *s,
                                long index, int64_t *seen_ns)
{
    char name[32], wrap[256];
    int64_t t0_real, t0_mono, latest, seen = 0;
    long id;

    job_name(name, sizeof(name), "la", index);
    /* The task's first act writes the stamp; then it becomes the sleep. */
    snprintf(wrap, sizeof(wrap),
             "srun bash -c 'echo $EPOCHREALTIME > a.$SLURM_JOB_ID.$SLURM_PROCID; exec sleep %d'",
             o->launch_sleep_s);
    t0_mono = mono_ns();
    t0_real = real_ns();
    id = slurm_sbatch(name, wrap, s->workdir);
    if (id < 0) {
        note_error(r, "sbatch %s failed", name);
        return -1;
    }
    latest = stamps_wait(s, id, LAUNCH_WAIT_MS, &seen);
    if (slurm_scancel(id) != 0)
        note_error(r, "scancel %ld failed", id);
    stamps_remove(s->workdir, id);
    if (latest == 0)
        return 0;
    *seen_ns = seen - t0_mono;
    return latest - t0_real > 0 ? latest - t0_real : 1;
}

static int slurm_phase_launch(const bench_opts *o, bench_result *r, const char *workdir)
{
    slurm_stamps s = {.workdir = workdir, .inotify_fd = -1};
    int64_t *lat = malloc(o->launch_jobs * sizeof(*lat));
    int64_t *seen = malloc(o->launch_jobs * sizeof(*seen)), t0, dummy;
    cpu_mark c0, c1;
    int rc = -1;

    if (!lat || !seen)
        goto out;
    s.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (s.inotify_fd >= 0 && inotify_add_watch(s.inotify_fd, workdir, IN_CLOSE_WRITE) < 0) {
        close(s.inotify_fd);
        s.inotify_fd = -1;
    }
    if (slurm_launch_one(o, r, &s, -1, &dummy) <= 0) {
        snprintf(r->abort_reason, sizeof(r->abort_reason),
                 "warm-up job: its 4 tasks did not start within %d s", LAUNCH_WAIT_MS / 1000);
        goto out;
    }
    cpu_mark_take(&c0, -1);
    t0 = mono_ns();
    for (size_t i = 0; i < o->launch_jobs && !past_deadline(o); i++) {
        int64_t sn = 0, d = slurm_launch_one(o, r, &s, (long)i, &sn);
        r->a_jobs++;
        if (d > 0) {
            seen[r->a_ok] = sn;
            lat[r->a_ok++] = d;
        } else if (d == 0) {
            r->a_timeouts++;
        } else {
            r->a_errors++;
        }
        if (r->a_errors + r->a_timeouts > o->launch_jobs / 50 + 2) {
            snprintf(r->abort_reason, sizeof(r->abort_reason),
                     "%zu of %zu jobs failed or timed out", r->a_errors + r->a_timeouts,
                     r->a_jobs);
            break;
        }
    }
    cpu_mark_take(&c1, -1);
    phase_cpu_set(&r->a_cpu, &c0, &c1, mono_ns() - t0);
    r->a_wall_s = r->a_cpu.wall_s;
    lat_summarize(lat, r->a_ok, &r->a_lat);
    lat_summarize(seen, r->a_ok, &r->a_seen);
    t0 = mono_ns();
    while (slurm_queue_len() > 0 && mono_ns() - t0 < (int64_t)CLEANUP_WAIT_MS * 1000000)
        sleep_ms(100);
    r->a_cleanup_s = (double)(mono_ns() - t0) / 1e9;
    rc = r->abort_reason[0] ? -1 : 0;
out:
    if (s.inotify_fd >= 0)
        close(s.inotify_fd);
    free(lat);
    free(seen);
    return rc;
}

/* ---- Slurm phase B: throughput ------------------------------------------- */

typedef struct jobcomp_reader {
    tput_track *t;
    const char *path;
    pthread_t tid;
    atomic_bool stop;
    size_t lines;
} jobcomp_reader;

/* One jobcomp/filetxt line: "JobId=12 UserId=... Name=lt-00012 JobState=COMPLETED ...". */
static void jobcomp_line(jobcomp_reader *jr, const char *line, int64_t now)
{
    const char *name = strstr(line, " Name="), *state = strstr(line, " JobState=");
    char nm[64];

    jr->lines++;
    if (!name || !state)
        return;
    snprintf(nm, sizeof(nm), "%.*s", (int)strcspn(name + 6, " \n"), name + 6);
    tput_done(jr->t, name_index(nm, "lt", jr->t->n, NULL),
              strncmp(state + 10, "COMPLETED", 9) == 0, now);
}

/* Reads what was appended to the jobcomp log every few milliseconds. */
static void *jobcomp_main(void *arg)
{
    jobcomp_reader *jr = arg;
    ty_buf pending = {0};
    char chunk[65536];
    off_t off = 0;
    bool first_try = true;
    int fd = -1;

    while (!atomic_load(&jr->stop)) {
        int64_t now;
        ssize_t n;
        char *nl;
        size_t start = 0;

        if (fd < 0) {
            /* Lines already there are phase A's: skip them. A log that
             * only appears later holds nothing but ours: read it all. */
            fd = open(jr->path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0 && first_try)
                off = lseek(fd, 0, SEEK_END);
            first_try = false;
        }
        sleep_ms(JOBCOMP_POLL_MS);
        if (fd < 0)
            continue;
        now = mono_ns();
        while ((n = pread(fd, chunk, sizeof(chunk), off)) > 0) {
            off += n;
            /* A line that long is not jobcomp's: drop what is pending. */
            if (pending.len + (size_t)n > WATCH_LINE_CAP ||
                ty_buf_append(&pending, chunk, (size_t)n) < 0)
                pending.len = 0;
        }
        while (pending.data && (nl = memchr(pending.data + start, '\n', pending.len - start))) {
            *nl = '\0';
            jobcomp_line(jr, pending.data + start, now);
            start = (size_t)(nl - pending.data) + 1;
        }
        if (pending.data) {
            memmove(pending.data, pending.data + start, pending.len - start);
            pending.len -= start;
            pending.data[pending.len] = '\0';
        }
    }
    if (fd >= 0)
        close(fd);
    ty_buf_free(&pending);
    return NULL;
}

static int slurm_submit(tput_track *t, size_t i, void *ctx)
{
    char name[32];
    job_name(name, sizeof(name), "lt", (long)i);
    if (slurm_sbatch(name, "srun /bin/true", ctx) > 0)
        return 0;
    note_error(t->r, "sbatch %s failed", name);
    return -1;
}

/* Every submitter's context is the work directory (borrowed). */
static void *slurm_submit_ctx_new(const bench_opts *o)
{
    return (void *)o->workdir;
}

static int slurm_phase_tput(const bench_opts *o, bench_result *r, const char *jobcomp)
{
    tput_track t;
    jobcomp_reader jr = {.path = jobcomp, .t = &t};
    submitter s = {.t = &t, .fn = slurm_submit, .ctx_new = slurm_submit_ctx_new};
    int rc = -1;

    if (tput_track_init(&t, o->tput_jobs, o, r) < 0 ||
        pthread_create(&jr.tid, NULL, jobcomp_main, &jr) != 0)
        goto out;
    sleep_ms(50); /* the reader has opened the log and skipped to its end */
    tput_run(&t, &s, o, r);
    atomic_store(&jr.stop, true);
    pthread_join(jr.tid, NULL);
    /* Completion is the jobcomp line; the queue empties a little later. */
    while (t.first_ns && slurm_queue_len() > 0 && !past_deadline(o))
        sleep_ms(50);
    r->b_drain_s = t.first_ns ? (double)(mono_ns() - t.first_ns) / 1e9 : 0;
    rc = r->abort_reason[0] ? -1 : 0;
out:
    tput_track_fini(&t);
    return rc;
}

static void run_slurm(const bench_opts *o, bench_result *r)
{
    char jobcomp[512], ping[256];
    char *argv[] = {"scontrol", "ping", NULL};

    r->system = "slurm";
    if (!getenv("SLURM_CONF"))
        fprintf(stderr, "launch_bench: SLURM_CONF is not set; using Slurm's default config\n");
    if (run_cmd(argv, ping, sizeof(ping), CMD_TIMEOUT_MS) != 0 || !strstr(ping, "is UP")) {
        snprintf(r->abort_reason, sizeof(r->abort_reason), "scontrol ping: slurmctld is not up");
        return;
    }
    if (slurm_config("JobCompLoc", jobcomp, sizeof(jobcomp)) < 0 || jobcomp[0] != '/') {
        snprintf(r->abort_reason, sizeof(r->abort_reason),
                 "JobCompType=jobcomp/filetxt with an absolute JobCompLoc is needed");
        return;
    }
    if (o->launch_jobs && slurm_phase_launch(o, r, o->workdir) < 0)
        return;
    if (o->tput_jobs)
        slurm_phase_tput(o, r, jobcomp);
}

/* ---- report ------------------------------------------------------------- */

static void print_lat(FILE *f, const char *what, const lat_summary *l)
{
    fprintf(f, "  %-14s p50 %.1f  p90 %.1f  p99 %.1f  max %.1f  mean %.1f ms  (n=%zu)\n", what,
            l->p50_ms, l->p90_ms, l->p99_ms, l->max_ms, l->mean_ms, l->n);
}

static void print_cpu(FILE *f, const phase_cpu *c)
{
    if (c->busy_s < 0)
        return;
    fprintf(f, "  machine CPU    %.1f s busy in %.1f s (%.0f%% of %ld cores)", c->busy_s, c->wall_s,
            c->wall_s > 0 ? 100.0 * c->busy_s / c->wall_s / (double)sysconf(_SC_NPROCESSORS_ONLN)
                          : 0,
            sysconf(_SC_NPROCESSORS_ONLN));
    if (c->server_s >= 0)
        fprintf(f, "; server process %.1f s", c->server_s);
    fputc('\n', f);
}

static void report_text(FILE *f, const bench_opts *o, const bench_result *r)
{
    bool ty = strcmp(r->system, "trainyard") == 0;

    if (ty)
        fprintf(f, "Job launch benchmark: Trainyard (server %s, pid %ld, namespace %s)\n",
                o->server, o->server_pid, o->ns);
    else
        fprintf(f, "Job launch benchmark: Slurm (SLURM_CONF=%s, work dir %s)\n",
                getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "(default)", o->workdir);
    if (r->a_jobs) {
        fprintf(f, "\nPhase A: launch, %zu jobs x %d %s running `sleep %d`, one at a time\n",
                o->launch_jobs, REPLICAS, ty ? "replicas (1 Master + 3 Workers)" : "tasks",
                o->launch_sleep_s);
        fprintf(f, "  launched       %zu of %zu (timeouts %zu, errors %zu) in %.1f s\n", r->a_ok,
                r->a_jobs, r->a_timeouts, r->a_errors, r->a_wall_s);
        print_lat(f, ty ? "create->Running" : "sbatch->started", &r->a_lat);
        if (!ty)
            print_lat(f, "  (seen)", &r->a_seen);
        print_cpu(f, &r->a_cpu);
        fprintf(f, "  after deletes  %s gone %.1f s after the last\n", ty ? "pods" : "jobs",
                r->a_cleanup_s);
    }
    if (r->b_jobs) {
        fprintf(f, "\nPhase B: throughput, %zu jobs x %d %s running /bin/true, %zu submitters\n",
                o->tput_jobs, REPLICAS, ty ? "replicas" : "tasks", o->clients);
        fprintf(f, "  submitted      %zu (errors %zu) in %.2f s (%.0f/s)\n", r->b_submitted,
                r->b_submit_errors, r->b_submit_s, r->b_submits_per_s);
        fprintf(f, "  ended          %zu succeeded, %zu failed; first submission -> %s %.2f s\n",
                r->b_succeeded, r->b_failed, r->b_complete ? "last end" : "time limit",
                r->b_total_s);
        if (!ty)
            fprintf(f, "  queue empty    %.2f s after the first submission\n", r->b_drain_s);
        fprintf(f, "  throughput     %.1f jobs/s, %.1f pods/s\n", r->b_jobs_per_s, r->b_pods_per_s);
        print_lat(f, "submit->end", &r->b_lat);
        print_cpu(f, &r->b_cpu);
    }
    if (r->server_rss_kb > 0)
        fprintf(f, "  server RSS     %.1f MiB at the end\n", (double)r->server_rss_kb / 1024.0);
    if (r->first_error[0])
        fprintf(f, "\nfirst error: %s\n", r->first_error);
    if (r->aborted)
        fprintf(f, "\nABORTED: %s\n", r->abort_reason);
}

static json_t *lat_json(const lat_summary *l)
{
    return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)l->n, "mean_ms", l->mean_ms,
                     "p50_ms", l->p50_ms, "p90_ms", l->p90_ms, "p99_ms", l->p99_ms, "max_ms",
                     l->max_ms);
}

static json_t *cpu_json(const phase_cpu *c)
{
    return json_pack("{s:f, s:f, s:f}", "busy_s", c->busy_s, "wall_s", c->wall_s, "server_s",
                     c->server_s);
}

static int report_json(const bench_opts *o, const bench_result *r)
{
    json_t *launch = json_pack(
        "{s:I, s:I, s:I, s:I, s:i, s:f, s:f, s:o, s:o, s:o}", "jobs", (json_int_t)r->a_jobs, "ok",
        (json_int_t)r->a_ok, "timeouts", (json_int_t)r->a_timeouts, "errors",
        (json_int_t)r->a_errors, "sleep_s", o->launch_sleep_s, "wall_s", r->a_wall_s,
        "cleanup_s", r->a_cleanup_s, "latency", lat_json(&r->a_lat), "seen", lat_json(&r->a_seen),
        "cpu", cpu_json(&r->a_cpu));
    json_t *tput = json_pack(
        "{s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o}", "jobs",
        (json_int_t)r->b_jobs, "complete", r->b_complete, "clients", (json_int_t)o->clients,
        "submitted", (json_int_t)r->b_submitted, "submit_errors", (json_int_t)r->b_submit_errors, "succeeded",
        (json_int_t)r->b_succeeded, "failed", (json_int_t)r->b_failed, "submit_s", r->b_submit_s,
        "total_s", r->b_total_s, "drain_s", r->b_drain_s, "jobs_per_s", r->b_jobs_per_s,
        "pods_per_s", r->b_pods_per_s, "submits_per_s", r->b_submits_per_s, "latency",
        lat_json(&r->b_lat), "cpu", cpu_json(&r->b_cpu));
    json_t *v = json_pack("{s:s, s:b, s:s, s:s, s:o, s:o}", "system", r->system, "aborted",
                          r->aborted, "abort_reason", r->abort_reason, "first_error",
                          r->first_error, "launch", launch, "throughput", tput);
    int rc;

    if (!v)
        return -1;
    rc = json_dump_file(v, o->json_path, JSON_INDENT(2));
    json_decref(v);
    return rc;
}

/* ---- compare ------------------------------------------------------------ */

static double jget(json_t *v, const char *a, const char *b, const char *c)
{
    json_t *x = json_object_get(json_object_get(v, a), b);
    if (c)
        x = json_object_get(x, c);
    return json_is_number(x) ? json_number_value(x) : -1;
}

static void cmp_row(const char *what, double ty, double sl, bool slurm_over_ty)
{
    char rt[32] = "n/a";
    double ratio = slurm_over_ty ? sl / ty : ty / sl;
    if (ty > 0 && sl > 0)
        snprintf(rt, sizeof(rt), ratio < 0.1 ? "%.3fx" : "%.2fx", ratio);
    /* Small rates keep their digits: 0.02 jobs/s is not 0. */
    printf(fabs(ty) < 10 && fabs(sl) < 10 ? "  %-28s %12.3f %12.3f %12s\n"
                                          : "  %-28s %12.1f %12.1f %12s\n",
           what, ty, sl, rt);
}

/* Prints the two runs side by side with the ratios, and the targets. Exit 0
 * when both targets are met, 1 otherwise (2 when a file cannot be read). */
static int compare(const char *ty_path, const char *sl_path)
{
    json_t *ty = json_load_file(ty_path, 0, NULL), *sl = json_load_file(sl_path, 0, NULL);
    static const struct {
        const char *label, *key;
    } pct[] = {{"launch p50 ms", "p50_ms"},
               {"launch p90 ms", "p90_ms"},
               {"launch p99 ms", "p99_ms"},
               {"launch max ms", "max_ms"}};
    double p99, tput_ty, tput_sl;
    bool ok_lat, ok_tput, ran_ty;

    if (!ty || !sl) {
        fprintf(stderr, "launch_bench: cannot read %s\n", !ty ? ty_path : sl_path);
        json_decref(ty);
        json_decref(sl);
        return 2;
    }
    printf("Trainyard vs Slurm, same work (ratio: how many times better Trainyard is)\n");
    printf("  %-28s %12s %12s %12s\n", "", "Trainyard", "Slurm", "ratio");
    for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++)
        cmp_row(pct[k].label, jget(ty, "launch", "latency", pct[k].key),
                jget(sl, "launch", "latency", pct[k].key), true);
    cmp_row("throughput jobs/s", jget(ty, "throughput", "jobs_per_s", NULL),
            jget(sl, "throughput", "jobs_per_s", NULL), false);
    cmp_row("throughput pods/s", jget(ty, "throughput", "pods_per_s", NULL),
            jget(sl, "throughput", "pods_per_s", NULL), false);
    cmp_row("submissions/s", jget(ty, "throughput", "submits_per_s", NULL),
            jget(sl, "throughput", "submits_per_s", NULL), false);
    cmp_row("phase B: first submit->end s", jget(ty, "throughput", "total_s", NULL),
            jget(sl, "throughput", "total_s", NULL), true);
    printf("  %-28s %7.0f/%-4.0f %7.0f/%-4.0f\n", "phase B: jobs succeeded/of",
           jget(ty, "throughput", "succeeded", NULL), jget(ty, "throughput", "jobs", NULL),
           jget(sl, "throughput", "succeeded", NULL), jget(sl, "throughput", "jobs", NULL));
    for (int k = 0; k < 2; k++) {
        json_t *v = k ? sl : ty;
        if (json_is_false(json_object_get(json_object_get(v, "throughput"), "complete")))
            printf("  NOTE: %s's phase B did not finish within its time limit; its rate is the"
                   " jobs that ended by then\n",
                   k ? "Slurm" : "Trainyard");
    }
    p99 = jget(ty, "launch", "latency", "p99_ms");
    tput_ty = jget(ty, "throughput", "jobs_per_s", NULL);
    tput_sl = jget(sl, "throughput", "jobs_per_s", NULL);
    ok_lat = p99 > 0 && p99 < 50 && !json_is_true(json_object_get(ty, "aborted"));
    /* A phase B that ran but saw no job end measured a rate of 0: a miss. */
    ran_ty = jget(ty, "throughput", "submitted", NULL) > 0;
    ok_tput = ran_ty && tput_sl > 0 && tput_ty >= 10 * tput_sl;
    printf("\nTargets\n  %-40s %s\n  %-40s %s\n", "Trainyard launch p99 < 50 ms",
           p99 > 0 ? (ok_lat ? "PASS" : "MISS") : "n/a (not measured)",
           "Trainyard throughput >= 10x Slurm's",
           ran_ty && tput_sl > 0 ? (ok_tput ? "PASS" : "MISS") : "n/a (not measured)");
    json_decref(ty);
    json_decref(sl);
    return ok_lat && ok_tput ? 0 : 1;
}

/* ---- options and main --------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: launch_bench --server URL [--kubeconfig FILE] [--server-pid PID]\n"
            "                    [--namespace NS] [common]\n"
            "       launch_bench --slurm [--work-dir DIR] [common]\n"
            "       launch_bench --compare TRAINYARD.json SLURM.json\n"
            "common: [--jobs-launch N] [--jobs-throughput N] [--clients N] [--launch-sleep S]\n"
            "        [--time-limit S] [--json FILE] [--no-selector]\n"
            "  defaults: 200 launch jobs, 1000 throughput jobs, 4 submitters, sleep 30,\n"
            "  900 s in all, namespace launch-<pid>, work dir a new one under $TMPDIR.\n"
            "  Either phase is skipped with a count of 0. --no-selector watches every pod\n"
            "  in the namespace instead of the operator-name label.\n");
}

static int parse_size(const char *s, const char *what, size_t lo, size_t hi, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || *end || v < lo || v > hi) {
        fprintf(stderr, "launch_bench: invalid %s %s: want %zu-%zu\n", what, s, lo, hi);
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
                                       {"server-pid", required_argument, NULL, 'p'},
                                       {"namespace", required_argument, NULL, 'N'},
                                       {"slurm", no_argument, NULL, 'S'},
                                       {"work-dir", required_argument, NULL, 'w'},
                                       {"compare", no_argument, NULL, 'C'},
                                       {"jobs-launch", required_argument, NULL, 'a'},
                                       {"jobs-throughput", required_argument, NULL, 'b'},
                                       {"clients", required_argument, NULL, 'c'},
                                       {"launch-sleep", required_argument, NULL, 'l'},
                                       {"time-limit", required_argument, NULL, 't'},
                                       {"json", required_argument, NULL, 'j'},
                                       {"no-selector", no_argument, NULL, 'n'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    size_t v = 0;
    int c, bad = 0;
    bool cmp = false;

    *o = (bench_opts){.launch_jobs = 200,
                      .tput_jobs = 1000,
                      .clients = 4,
                      .launch_sleep_s = 30,
                      .time_limit_s = 900};
    snprintf(o->ns, sizeof(o->ns), "launch-%ld", (long)getpid());
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 's': o->server = optarg; break;
        case 'K': kubeconfig = optarg; break;
        case 'p':
            bad |= parse_size(optarg, "--server-pid", 1, 1u << 22, &v);
            o->server_pid = (long)v;
            break;
        case 'N': snprintf(o->ns, sizeof(o->ns), "%s", optarg); break;
        case 'S': o->slurm = true; break;
        case 'w': o->workdir = optarg; break;
        case 'C': cmp = true; break;
        case 'a': bad |= parse_size(optarg, "--jobs-launch", 0, MAX_JOBS, &o->launch_jobs); break;
        case 'b': bad |= parse_size(optarg, "--jobs-throughput", 0, MAX_JOBS, &o->tput_jobs); break;
        case 'c': bad |= parse_size(optarg, "--clients", 1, MAX_CLIENTS, &o->clients); break;
        case 'l':
            bad |= parse_size(optarg, "--launch-sleep", 1, 3600, &v);
            o->launch_sleep_s = (int)v;
            break;
        case 't':
            bad |= parse_size(optarg, "--time-limit", 10, 7200, &v);
            o->time_limit_s = (int)v;
            break;
        case 'j': o->json_path = optarg; break;
        case 'n': o->no_selector = true; break;
        case 'h': usage(stdout); exit(0);
        default: bad = -1;
        }
    }
    if (cmp) {
        if (!bad && argc - optind == 2) {
            o->compare[0] = argv[optind];
            o->compare[1] = argv[optind + 1];
            return 0;
        }
        bad = -1;
    } else if (!bad && (!!o->server == o->slurm || optind < argc)) {
        fprintf(stderr, "launch_bench: %s\n",
                optind < argc ? "unexpected argument" : "give exactly one of --server, --slurm");
        bad = -1;
    }
    if (!bad && bench_auth_load(kubeconfig, o->server) < 0)
        bad = -1;
    if (bad)
        usage(stderr);
    o->deadline_ns = mono_ns() + (int64_t)o->time_limit_s * 1000000000;
    return bad ? -1 : 0;
}

/* A fresh work directory for Slurm's jobs; the caller removes it. */
static int make_workdir(bench_opts *o, char *buf, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    if (o->workdir)
        return 0;
    snprintf(buf, len, "%s/launch-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(buf))
        return -1;
    chmod(buf, 0755);
    o->workdir = buf;
    return 1;
}

static void remove_workdir(const char *dir)
{
    char *argv[] = {"rm", "-rf", "--", (char *)dir, NULL};
    run_cmd(argv, NULL, 0, CMD_TIMEOUT_MS);
}

int main(int argc, char **argv)
{
    static bench_result r; /* large: kept off the stack */
    bench_opts o;
    char workdir[512];
    int made = 0;

    if (parse_opts(argc, argv, &o) < 0)
        return 2;
    if (o.compare[0])
        return compare(o.compare[0], o.compare[1]);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "launch_bench: cannot initialise libcurl\n");
        return 1;
    }
    if (o.slurm) {
        made = make_workdir(&o, workdir, sizeof(workdir));
        if (made < 0) {
            fprintf(stderr, "launch_bench: cannot create a work directory: %s\n", strerror(errno));
            return 1;
        }
        run_slurm(&o, &r);
    } else {
        run_trainyard(&o, &r);
    }
    r.aborted = r.abort_reason[0] != '\0';
    report_text(stdout, &o, &r);
    if (o.json_path && report_json(&o, &r) < 0)
        fprintf(stderr, "launch_bench: cannot write %s\n", o.json_path);
    if (made > 0)
        remove_workdir(o.workdir);
    curl_global_cleanup();
    return r.aborted ? 1 : 0;
}
