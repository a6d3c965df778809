/* audit.c - see audit.h: the records, the queue and its writer thread. The
 * Event's JSON is built in audit_event.c. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/thread.h"
#include "server/audit.h"
#include "server/audit_file.h"

#define WRITER_BATCH 256
/* What the writer gathers before one write(2). */
#define WRITE_CHUNK (256 * 1024)

typedef struct queued {
    audit_rec *rec;
    audit_stage stage;
    struct timespec ts;
} queued;

struct ty_audit {
    audit_policy *policy;
    audit_file *file;
    pthread_t writer;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t nonempty, notfull, written;
    queued *q;
    size_t cap, head, count;
    bool stopping, drop_when_full, writer_waiting;
    unsigned long long enqueued, done; /* sequence numbers, for audit_sync */
    unsigned long long events, dropped, errors;
};

/* ---- records ---- */

/* A per-thread generator seeded from the kernel once: a syscall per request
 * only to name it would be waste (the ID needs to be unique, not secret). */
static uint64_t rand64(void)
{
    static _Thread_local uint64_t s[2];
    static _Thread_local bool seeded;
    uint64_t x, y;
    if (!seeded) {
        if (getrandom(s, sizeof(s), 0) != (ssize_t)sizeof(s)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            s[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&s;
            s[1] = (uint64_t)pthread_self() * 0x9e3779b97f4a7c15ull;
        }
        if (!s[0] && !s[1])
            s[1] = 1;
        seeded = true;
    }
    /* xorshift128+ */
    x = s[0];
    y = s[1];
    s[0] = y;
    x ^= x << 23;
    s[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
    return s[1] + y;
}

void audit_new_uuid(char out[37])
{
    uint64_t hi = rand64(), lo = rand64();
    hi = (hi & ~0xf000ull) | 0x4000ull;                       /* version 4 */
    lo = (lo & ~(3ull << 62)) | (2ull << 62);                  /* variant 10 */
    snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32),
             (unsigned)((hi >> 16) & 0xffff), (unsigned)(hi & 0xffff),
             (unsigned)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffull));
}

audit_rec *audit_rec_new(void)
{
    audit_rec *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    atomic_init(&r->refs, 1);
    audit_new_uuid(r->id);
    clock_gettime(CLOCK_REALTIME, &r->received);
    return r;
}

void audit_rec_ref(audit_rec *r)
{
    atomic_fetch_add(&r->refs, 1);
}

void audit_rec_unref(audit_rec *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    free(r->request_uri);
    userinfo_free(r->user);
    userinfo_free(r->impersonated);
    free(r->user_agent);
    free(r->authz_reason);
    free(r->req_body);
    free(r->resp_body);
    free(r);
}

/* ---- the queue ---- */

audit_decision audit_decide(const ty_audit *a, const ty_user *u, const reqattr *attr)
{
    return audit_policy_eval(a->policy, u, attr);
}

void audit_emit(ty_audit *a, audit_rec *r, audit_stage stage)
{
    struct timespec ts;

    if (!a || !r || r->d.level == AUDIT_LEVEL_NONE || (r->d.omit_stages & stage))
        return;
    /* kube-apiserver stamps RequestReceived with the time the request came */
    if (stage == AUDIT_STAGE_REQUEST_RECEIVED)
        ts = r->received;
    else
        clock_gettime(CLOCK_REALTIME, &ts);
    pthread_mutex_lock(&a->mu);
    while (a->count == a->cap) {
        if (a->drop_when_full || a->stopping) {
            bool first = a->dropped++ == 0;
            pthread_mutex_unlock(&a->mu);
            ty_metric_add("apiserver_audit_error_total", "plugin=\"log\"", 1);
            if (first)
                ty_warn("audit: the event queue is full (%zu events): events are dropped",
                        a->cap);
            return;
        }
        pthread_cond_wait(&a->notfull, &a->mu);
    }
    audit_rec_ref(r);
    a->q[(a->head + a->count) % a->cap] = (queued){.rec = r, .stage = stage, .ts = ts};
    a->count++;
    a->enqueued++;
    if (a->writer_waiting)
        pthread_cond_signal(&a->nonempty);
    pthread_mutex_unlock(&a->mu);
}

static void flush_out(ty_audit *a, ty_buf *out, size_t nevents)
{
    ty_error err;

    if (!out->len)
        return;
    ty_error_init(&err);
    if (audit_file_write(a->file, out->data, out->len, &err) < 0) {
        unsigned long long before;
        pthread_mutex_lock(&a->mu);
        before = a->errors;
        a->errors += nevents;
        pthread_mutex_unlock(&a->mu);
        ty_metric_add("apiserver_audit_error_total", "plugin=\"log\"", (double)nevents);
        /* once, then once per thousand lost events: a full disk must not
         * flood the server's own log */
        if (before == 0 || before / 1000 != (before + nevents) / 1000)
            ty_errlog("audit: %s (%llu events lost so far)", err.text, before + nevents);
    } else {
        pthread_mutex_lock(&a->mu);
        a->events += nevents;
        pthread_mutex_unlock(&a->mu);
        ty_metric_add("apiserver_audit_event_total", NULL, (double)nevents);
    }
    ty_error_clear(&err);
    out->len = 0;
}

static void write_batch(ty_audit *a, queued *batch, size_t n, ty_buf *out, ty_buf *line)
{
    size_t pending = 0;

    for (size_t i = 0; i < n; i++) {
        line->len = 0;
        int rc = audit_event_write(line, batch[i].rec, batch[i].stage, batch[i].ts);
        audit_rec_unref(batch[i].rec);
        if (rc < 0 || ty_buf_append(line, "\n", 1) < 0) {
            pthread_mutex_lock(&a->mu);
            a->errors++;
            pthread_mutex_unlock(&a->mu);
            continue;
        }
        /* Each event lands whole in one file: what is gathered goes before
         * an event that would rotate the file. */
        if (pending && ((long long)(out->len + line->len) > audit_file_room(a->file) ||
                        out->len + line->len > WRITE_CHUNK)) {
            flush_out(a, out, pending);
            pending = 0;
        }
        if (ty_buf_append(out, line->data, line->len) < 0) {
            pthread_mutex_lock(&a->mu);
            a->errors++;
            pthread_mutex_unlock(&a->mu);
            continue;
        }
        pending++;
    }
    flush_out(a, out, pending);
}

static void *writer_main(void *arg)
{
    ty_audit *a = arg;
    queued batch[WRITER_BATCH];
    ty_buf out = {0}, line = {0};

    ty_thread_setup(pthread_self(), "ty-audit", TY_THREAD_BACKGROUND);
    pthread_mutex_lock(&a->mu);
    for (;;) {
        size_t n = 0;
        while (a->count == 0 && !a->stopping) {
            a->writer_waiting = true;
            pthread_cond_wait(&a->nonempty, &a->mu);
            a->writer_waiting = false;
        }
        if (a->count == 0)
            break; /* stopping, and everything is written */
        while (n < WRITER_BATCH && a->count) {
            batch[n++] = a->q[a->head];
            a->head = (a->head + 1) % a->cap;
            a->count--;
        }
        pthread_cond_broadcast(&a->notfull);
        pthread_mutex_unlock(&a->mu);
        write_batch(a, batch, n, &out, &line);
        pthread_mutex_lock(&a->mu);
        a->done += n;
        pthread_cond_broadcast(&a->written);
    }
    pthread_mutex_unlock(&a->mu);
    ty_buf_free(&out);
    ty_buf_free(&line);
    return NULL;
}

void audit_sync(ty_audit *a)
{
    pthread_mutex_lock(&a->mu);
    unsigned long long target = a->enqueued;
    while (a->done < target)
        pthread_cond_wait(&a->written, &a->mu);
    pthread_mutex_unlock(&a->mu);
}

void audit_get_stats(ty_audit *a, audit_stats *out)
{
    pthread_mutex_lock(&a->mu);
    out->events = a->events;
    out->dropped = a->dropped;
    out->errors = a->errors;
    pthread_mutex_unlock(&a->mu);
    /* the writer owns the file; its counter is read racily, for tests
     * after audit_sync */
    out->rotations = audit_file_rotations(a->file);
}

ty_audit *audit_new(const audit_opts *o, ty_error *err)
{
    ty_audit *a = calloc(1, sizeof(*a));
    audit_file_opts fo = {0};

    if (!a) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->nonempty, NULL);
    pthread_cond_init(&a->notfull, NULL);
    pthread_cond_init(&a->written, NULL);
    a->drop_when_full = o->drop_when_full;
    a->cap = o->buffer_size ? o->buffer_size : AUDIT_DEFAULT_BUFFER;
    a->policy = o->policy_file ? audit_policy_load(o->policy_file, err) : audit_policy_default();
    if (!a->policy) {
        if (!o->policy_file)
            ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (!(a->q = calloc(a->cap, sizeof(*a->q)))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    fo.path = o->log_path;
    /* lumberjack's default size when none is given: 100 MB */
    fo.max_bytes = o->max_bytes ? o->max_bytes
                                : (long long)(o->max_size_mb > 0 ? o->max_size_mb : 100) << 20;
    fo.max_backups = o->max_backups;
    fo.max_age_days = o->max_age_days;
    if (!(a->file = audit_file_open(&fo, err)))
        goto error;
    ty_metric_declare("apiserver_audit_event_total", TY_COUNTER,
                      "Counter of audit events generated and sent to the audit backend.");
    ty_metric_declare("apiserver_audit_error_total", TY_COUNTER,
                      "Counter of audit events that failed to be audited properly.");
    if (pthread_create(&a->writer, NULL, writer_main, a) != 0) {
        ty_seterr(err, TY_EINTERNAL, "cannot start the audit writer: %s", strerror(errno));
        goto error;
    }
    a->started = true;
    return a;
error:
    audit_free(a);
    return NULL;
}

void audit_free(ty_audit *a)
{
    if (!a)
        return;
    if (a->started) {
        pthread_mutex_lock(&a->mu);
        a->stopping = true;
        pthread_cond_broadcast(&a->nonempty);
        pthread_cond_broadcast(&a->notfull);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->writer, NULL);
    }
    for (size_t i = 0; i < a->count; i++) /* only when the writer never ran */
        audit_rec_unref(a->q[(a->head + i) % a->cap].rec);
    audit_file_close(a->file);
    audit_policy_free(a->policy);
    free(a->q);
    pthread_cond_destroy(&a->nonempty);
    pthread_cond_destroy(&a->notfull);
    pthread_cond_destroy(&a->written);
    pthread_mutex_destroy(&a->mu);
    free(a);
}
