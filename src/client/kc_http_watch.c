/* kc_http_watch.c - kc_watch over HTTP: one streaming GET (?watch=1) per
 * resource, all driven by one thread per watch through a curl multi
 * handle, their newline-delimited events parsed into one bounded queue
 * that kc_watch_next pops.
 *
 * A stream that ends or breaks (the server's timeoutSeconds, a restart, a
 * 5xx) is opened again from the last resourceVersion it saw, bookmarks
 * included, after a backoff when it failed; the caller sees nothing of it.
 * When the server says that version is gone (an ERROR event with code 410,
 * or an HTTP 410), the watch ends with TY_EGONE once the events before are
 * taken. Events of one resource come in order; those of two resources
 * interleave as their streams deliver them (the embedded watch's global
 * commit order is not known here). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "client/kc_http_int.h"

/* Events parsed and not yet taken; beyond, the streams are paused (the
 * server then holds the rest) until the queue is half empty. One chunk
 * libcurl hands over (16 KiB) may go past it by what it holds. */
#define KW_QUEUE_MAX 4096
/* One event's line; a longer one ends the watch. */
#define KW_LINE_MAX ((size_t)64 * 1024 * 1024)
#define KW_ERRBODY_MAX 65536
#define KW_BACKOFF_MIN_MS 100
#define KW_BACKOFF_MAX_MS 10000
/* The server ends each stream after this long (plus a random part, so that
 * the streams of many watches do not reopen together). */
#define KW_TIMEOUT_S 300

typedef struct kw_event {
    struct kw_event *next;
    kc_event ev;
} kw_event;

typedef struct kh_watch kh_watch;

typedef struct kw_stream {
    kh_watch *w;
    const api_resource *res;
    CURL *h;
    struct curl_slist *hdrs;
    char rv[TY_RV_MAX];    /* the last seen: where to open again */
    ty_buf line;           /* the event being received */
    ty_buf errbody;        /* a non-200 answer */
    bool active, paused, got_event;
    int failures;          /* in a row: the backoff's exponent */
    int64_t retry_at_ms;
} kw_stream;

struct kh_watch {
    kc_watch base;
    kh_client *c;
    CURLM *multi;
    pthread_t thread;
    bool started;
    kw_stream *streams;
    size_t nstreams;

    pthread_mutex_t mu;    /* what follows */
    pthread_cond_t cond;
    kw_event *head, *tail;
    size_t n;
    bool cancelled, closing, ended, want_unpause;
    ty_errcode end_code;
    char end_text[512];
};

static void end_watch(kh_watch *w, ty_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Ends the watch (the first reason stays), under w->mu or not. */
static void end_locked(kh_watch *w, ty_errcode code, const char *text)
{
    if (!w->ended) {
        w->ended = true;
        w->end_code = code;
        snprintf(w->end_text, sizeof(w->end_text), "%s", text);
    }
    pthread_cond_broadcast(&w->cond);
}

static void end_watch(kh_watch *w, ty_errcode code, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&w->mu);
    end_locked(w, code, text);
    pthread_mutex_unlock(&w->mu);
}

static const struct {
    const char *name;
    kc_event_type type;
} types[] = {{"ADDED", KC_ADDED}, {"MODIFIED", KC_MODIFIED}, {"DELETED", KC_DELETED},
             {"BOOKMARK", KC_BOOKMARK}};

/* One line of the stream. -1 when the stream must stop here (the watch
 * ended, or the stream is to be opened again). */
static int take_line(kw_stream *s, const char *text, size_t len)
{
    kh_watch *w = s->w;
    json_t *ev = json_loadb(text, len, 0, NULL), *obj = json_object_get(ev, "object");
    const char *type = json_string_value(json_object_get(ev, "type"));
    const char *rv;
    kw_event *e;
    size_t i;

    if (!type || !json_is_object(obj)) {
        json_decref(ev);
        return -1; /* garbled: open again from the last good event */
    }
    if (strcmp(type, "ERROR") == 0) {
        json_t *code = json_object_get(obj, "code");
        const char *msg = json_string_value(json_object_get(obj, "message"));

        if (json_integer_value(code) == 410)
            end_watch(w, TY_EGONE, "%s", msg ? msg : "too old resource version");
        json_decref(ev); /* any other: open again */
        return -1;
    }
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(type, types[i].name) == 0)
            break;
    if (i == sizeof(types) / sizeof(types[0])) {
        json_decref(ev); /* a type this client does not know: skipped */
        return 0;
    }
    if ((rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                "resourceVersion"))))
        snprintf(s->rv, sizeof(s->rv), "%s", rv);
    kh_set_type(obj, s->res);
    if (!(e = calloc(1, sizeof(*e))) || !(e->ev.obj = ty_obj_new(json_incref(obj)))) {
        free(e);
        json_decref(ev);
        end_watch(w, TY_EINTERNAL, "out of memory");
        return -1;
    }
    json_decref(ev);
    e->ev.type = types[i].type;
    e->ev.resource = api_store_key(s->res);
    s->got_event = true;
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = e;
    else
        w->head = e;
    w->tail = e;
    w->n++;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    kw_stream *s = arg;
    kh_watch *w = s->w;
    size_t total = size * n, start = 0;
    long status = 0;
    char *nl;

    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        if (s->errbody.len + total <= KW_ERRBODY_MAX)
            ty_buf_append(&s->errbody, data, total);
        return total;
    }
    pthread_mutex_lock(&w->mu);
    if (w->ended || w->closing || w->cancelled) {
        pthread_mutex_unlock(&w->mu);
        return 0;
    }
    if (w->n >= KW_QUEUE_MAX) { /* the reader is behind: hold the stream */
        s->paused = true;
        w->want_unpause = true;
        pthread_mutex_unlock(&w->mu);
        return CURL_WRITEFUNC_PAUSE;
    }
    pthread_mutex_unlock(&w->mu);
    if (s->line.len + total > KW_LINE_MAX) {
        end_watch(w, TY_ETOOLARGE, "a watch event of %s exceeds %zu bytes", s->res->plural,
                  KW_LINE_MAX);
        return 0;
    }
    if (ty_buf_append(&s->line, data, total) < 0) {
        end_watch(w, TY_EINTERNAL, "out of memory");
        return 0;
    }
    while ((nl = memchr(s->line.data + start, '\n', s->line.len - start))) {
        size_t len = (size_t)(nl - (s->line.data + start));

        if (len && take_line(s, s->line.data + start, len) < 0)
            return 0;
        start += len + 1;
    }
    memmove(s->line.data, s->line.data + start, s->line.len - start);
    s->line.len -= start;
    s->line.data[s->line.len] = '\0';
    return total;
}

static int64_t backoff_ms(int failures)
{
    int64_t ms = KW_BACKOFF_MIN_MS;

    for (int i = 1; i < failures && ms < KW_BACKOFF_MAX_MS; i++)
        ms *= 2;
    if (ms > KW_BACKOFF_MAX_MS)
        ms = KW_BACKOFF_MAX_MS;
    return ms + rand() % (ms / 4 + 1);
}

static int start_stream(kh_watch *w, kw_stream *s)
{
    char timeout[16];
    ty_buf url = {0};

    if (s->h)
        curl_easy_reset(s->h);
    else if (!(s->h = curl_easy_init()))
        return -1;
    curl_slist_free_all(s->hdrs);
    s->hdrs = NULL;
    kh_setup(w->c, s->h, &s->hdrs);
    snprintf(timeout, sizeof(timeout), "%d", KW_TIMEOUT_S + rand() % KW_TIMEOUT_S);
    if (ty_buf_puts(&url, w->c->server) < 0 || kh_path(&url, s->res, NULL, NULL, NULL) < 0 ||
        kh_query(&url, "watch", "1") < 0 || kh_query(&url, "allowWatchBookmarks", "true") < 0 ||
        kh_query(&url, "resourceVersion", s->rv) < 0 ||
        kh_query(&url, "timeoutSeconds", timeout) < 0) {
        ty_buf_free(&url);
        return -1;
    }
    curl_easy_setopt(s->h, CURLOPT_URL, url.data);
    ty_buf_free(&url);
    curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdrs);
    curl_easy_setopt(s->h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(s->h, CURLOPT_LOW_SPEED_LIMIT, 0L); /* quiet streams are fine */
    curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
    s->line.len = 0;
    s->errbody.len = 0;
    s->got_event = s->paused = false;
    if (curl_multi_add_handle(w->multi, s->h) != CURLM_OK)
        return -1;
    s->active = true;
    return 0;
}

/* A stream's transfer is over: open it again, or end the watch. */
static void stream_done(kh_watch *w, kw_stream *s, CURLcode result)
{
    long status = 0;
    curl_off_t retry_after = 0;
    int64_t wait_ms;

    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(s->h, CURLINFO_RETRY_AFTER, &retry_after);
    curl_multi_remove_handle(w->multi, s->h);
    s->active = false;
    if (status >= 400 && status < 500 && status != 429) {
        ty_error err;

        ty_error_init(&err);
        kh_error_from_answer(status, s->errbody.data, s->errbody.len, &err);
        end_watch(w, err.code, "%s", err.text);
        ty_error_clear(&err);
        return;
    }
    /* a stream the server ended after delivering is simply reopened */
    s->failures = result == CURLE_OK && status == 200 && s->got_event ? 0 : s->failures + 1;
    wait_ms = s->failures ? backoff_ms(s->failures) : 0;
    if (retry_after > 0 && retry_after * 1000 > wait_ms)
        wait_ms = (retry_after > 60 ? 60 : retry_after) * 1000;
    s->retry_at_ms = ty_now_ms() + wait_ms;
}

static void *watch_thread(void *arg)
{
    kh_watch *w = arg;

    for (;;) {
        int64_t now = ty_now_ms();
        int wait_ms = 1000, running;
        bool unpause;
        CURLMsg *m;

        pthread_mutex_lock(&w->mu);
        if (w->closing || w->cancelled || w->ended) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        unpause = w->want_unpause && w->n < KW_QUEUE_MAX / 2;
        if (unpause)
            w->want_unpause = false;
        pthread_mutex_unlock(&w->mu);
        for (size_t i = 0; i < w->nstreams; i++) {
            kw_stream *s = &w->streams[i];

            if (s->active) {
                if (unpause && s->paused) {
                    s->paused = false;
                    curl_easy_pause(s->h, CURLPAUSE_CONT);
                }
            } else if (now >= s->retry_at_ms) {
                if (start_stream(w, s) < 0)
                    end_watch(w, TY_EINTERNAL, "cannot open a watch stream: out of memory");
            } else if (s->retry_at_ms - now < wait_ms) {
                wait_ms = (int)(s->retry_at_ms - now);
            }
        }
        curl_multi_perform(w->multi, &running);
        while ((m = curl_multi_info_read(w->multi, &running))) {
            char *priv = NULL;

            if (m->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
            if (priv)
                stream_done(w, (kw_stream *)(void *)priv, m->data.result);
        }
        curl_multi_poll(w->multi, NULL, 0, wait_ms, NULL);
    }
    for (size_t i = 0; i < w->nstreams; i++)
        if (w->streams[i].active) {
            curl_multi_remove_handle(w->multi, w->streams[i].h);
            w->streams[i].active = false;
        }
    return NULL;
}

static void watch_free(kh_watch *w)
{
    kw_event *e, *next;

    for (e = w->head; e; e = next) {
        next = e->next;
        kc_event_release(&e->ev);
        free(e);
    }
    for (size_t i = 0; i < w->nstreams; i++) {
        kw_stream *s = &w->streams[i];

        curl_easy_cleanup(s->h);
        curl_slist_free_all(s->hdrs);
        ty_buf_free(&s->line);
        ty_buf_free(&s->errbody);
    }
    if (w->multi)
        curl_multi_cleanup(w->multi);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
    free(w->streams);
    free(w);
}

/* The resources to watch: those named, or every one the server lists. */
static json_t *watch_keys(ty_kc *kc, const char *const *only, ty_error *err)
{
    json_t *keys;

    if (!only) {
        if (!(keys = kh_resources(kc)) || !json_array_size(keys)) {
            json_decref(keys);
            ty_seterr(err, TY_EUNAVAILABLE, "cannot learn the server's resources");
            return NULL;
        }
        return keys;
    }
    keys = json_array();
    for (size_t i = 0; keys && only[i]; i++) {
        if (!kh_resource(only[i], err)) {
            json_decref(keys);
            return NULL;
        }
        json_array_append_new(keys, json_string(only[i]));
    }
    if (keys && !json_array_size(keys)) {
        json_decref(keys);
        ty_seterr(err, TY_EBADREQUEST, "a watch of no resource");
        return NULL;
    }
    return keys;
}

kc_watch *kh_watch_open(ty_kc *kc, const char *const *only, const char *from_rv,
                        ty_error *err)
{
    kh_client *c = (kh_client *)kc;
    json_t *keys = watch_keys(kc, only, err);
    char rv[TY_RV_MAX];
    pthread_condattr_t ca;
    kh_watch *w;
    size_t n;

    if (!keys)
        return NULL;
    n = json_array_size(keys);
    /* "0" asks a server for the current state first; here it is "from now"
     * as in the embedded watch */
    if (!from_rv || !*from_rv || strcmp(from_rv, "0") == 0) {
        if (kh_current_rv(c, api_find_store_key(json_string_value(json_array_get(keys, 0))), rv,
                          sizeof(rv), err) < 0) {
            json_decref(keys);
            return NULL;
        }
    } else {
        snprintf(rv, sizeof(rv), "%s", from_rv);
    }
    if (!(w = calloc(1, sizeof(*w))) || !(w->streams = calloc(n, sizeof(*w->streams)))) {
        free(w);
        json_decref(keys);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    w->base.ops = &kh_ops;
    w->c = c;
    w->nstreams = n;
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    for (size_t i = 0; i < n; i++) {
        w->streams[i].w = w;
        w->streams[i].res = api_find_store_key(json_string_value(json_array_get(keys, i)));
        snprintf(w->streams[i].rv, sizeof(w->streams[i].rv), "%s", rv);
    }
    json_decref(keys);
    if (!(w->multi = curl_multi_init()) ||
        pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
        watch_free(w);
        ty_seterr(err, TY_EINTERNAL, "cannot start the watch's thread");
        return NULL;
    }
    pthread_setname_np(w->thread, "kc-watch");
    w->started = true;
    return &w->base;
}

int kh_watch_next(kc_watch *kw, int timeout_ms, kc_event *ev, ty_error *err)
{
    kh_watch *w = (kh_watch *)kw;
    struct timespec deadline = ty_deadline_ms(CLOCK_MONOTONIC, timeout_ms > 0 ? timeout_ms : 0);
    int rc;

    memset(ev, 0, sizeof(*ev));
    pthread_mutex_lock(&w->mu);
    for (;;) {
        if (w->cancelled || w->closing) {
            rc = ty_seterr(err, TY_EUNAVAILABLE, "watch cancelled");
            break;
        }
        if (w->head) {
            kw_event *e = w->head;

            if (!(w->head = e->next))
                w->tail = NULL;
            w->n--;
            *ev = e->ev;
            free(e);
            if (w->want_unpause && w->n < KW_QUEUE_MAX / 2)
                curl_multi_wakeup(w->multi);
            rc = 1;
            break;
        }
        if (w->ended) {
            rc = ty_seterr(err, w->end_code, "%s", w->end_text);
            break;
        }
        if (timeout_ms == 0 ||
            (timeout_ms > 0 && pthread_cond_timedwait(&w->cond, &w->mu, &deadline) != 0 &&
             !w->head && !w->ended && !w->cancelled)) {
            rc = 0;
            break;
        }
        if (timeout_ms < 0)
            pthread_cond_wait(&w->cond, &w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void kh_watch_cancel(kc_watch *kw)
{
    kh_watch *w = (kh_watch *)kw;

    pthread_mutex_lock(&w->mu);
    w->cancelled = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    curl_multi_wakeup(w->multi);
}

void kh_watch_close(kc_watch *kw)
{
    kh_watch *w = (kh_watch *)kw;

    pthread_mutex_lock(&w->mu);
    w->closing = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    curl_multi_wakeup(w->multi);
    if (w->started)
        pthread_join(w->thread, NULL);
    watch_free(w);
}
