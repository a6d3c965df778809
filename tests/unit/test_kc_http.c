/* test_kc_http.c - what the HTTP client does with answers Trainyard's
 * server never gives (test_kc_contract.c covers that server): a scripted
 * server on a loopback port plays kube-apiserver's 429s with Retry-After,
 * 5xx, delete answers, lists without kinds, watch errors, and records what
 * the client sent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tmpdir.h"

#include "base/timeutil.h"
#include "client/kc_http.h"

#define MAX_SCRIPT 16
#define DEADLINE_MS 30000

/* A server that answers the n-th request with script[n] (raw HTTP, the
 * connection closed after it) and keeps each request's head and body. */
typedef struct scripted {
    int fd;
    uint16_t port;
    pthread_t thread;
    pthread_mutex_t mu;
    bool stop;
    const char *script[MAX_SCRIPT];
    size_t nscript, served;
    char *requests[MAX_SCRIPT];
} scripted;

static void serve_one(scripted *s, int c)
{
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    long clen = 0;
    const char *answer;

    while (len < sizeof(buf) - 1) {
        ssize_t n = recv(c, buf + len, sizeof(buf) - 1 - len, 0);
        if (n <= 0)
            return;
        len += (size_t)n;
        buf[len] = '\0';
        if (!end && (end = strstr(buf, "\r\n\r\n"))) {
            const char *cl = strcasestr(buf, "\r\nContent-Length:");
            clen = cl && cl < end ? strtol(cl + 17, NULL, 10) : 0;
        }
        if (end && len >= (size_t)(end + 4 - buf) + (size_t)clen)
            break;
    }
    pthread_mutex_lock(&s->mu);
    answer = s->served < s->nscript ? s->script[s->served] : NULL;
    if (s->served < MAX_SCRIPT)
        s->requests[s->served] = strdup(buf);
    s->served++;
    pthread_mutex_unlock(&s->mu);
    if (!answer)
        answer = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send(c, answer, strlen(answer), MSG_NOSIGNAL);
}

static void *serve(void *arg)
{
    scripted *s = arg;

    for (;;) {
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        bool stop;
        int c;

        pthread_mutex_lock(&s->mu);
        stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop)
            return NULL;
        if (poll(&p, 1, 100) <= 0 || (c = accept(s->fd, NULL, NULL)) < 0)
            continue;
        serve_one(s, c);
        close(c);
    }
}

static int setup(void **state)
{
    scripted *s = calloc(1, sizeof(*s));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);

    assert_non_null(s);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->fd, 16), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    scripted *s = *state;

    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    close(s->fd);
    for (size_t i = 0; i < MAX_SCRIPT; i++)
        free(s->requests[i]);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return 0;
}

static ty_kc *client(scripted *s, const char *token)
{
    char url[64];
    ty_error err;
    ty_kc *kc;

    ty_error_init(&err);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)s->port);
    kc = kc_http_new(&(kc_http_opts){.server = url, .token = token, .qps = -1,
                                     .user_agent = "contract-test/1"},
                     &err);
    assert_non_null(kc);
    return kc;
}

static size_t served(scripted *s)
{
    size_t n;

    pthread_mutex_lock(&s->mu);
    n = s->served;
    pthread_mutex_unlock(&s->mu);
    return n;
}

#define JSON_200(body)                                                                     \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" body
#define POD "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"resourceVersion\":\"7\""

static void test_retry_after(void **state)
{
    scripted *s = *state;
    ty_error err;
    ty_kc *kc = client(s, "abc");
    int64_t t0 = ty_now_ms();
    ty_obj *o;

    ty_error_init(&err);
    s->script[0] = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n"
                   "Connection: close\r\n\r\n";
    s->script[1] = JSON_200(POD "}}");
    s->nscript = 2;
    o = kc_get(kc, "pods", "default", "p", &err);
    if (!o)
        fail_msg("get: %s", err.text);
    assert_true(ty_now_ms() - t0 >= 1000); /* Retry-After was honoured */
    ty_obj_unref(o);
    assert_int_equal(served(s), 2);
    /* what every request carries */
    assert_non_null(strstr(s->requests[1], "GET /api/v1/namespaces/default/pods/p HTTP/1.1"));
    assert_non_null(strcasestr(s->requests[1], "Authorization: Bearer abc\r\n"));
    assert_non_null(strcasestr(s->requests[1], "User-Agent: contract-test/1\r\n"));
    kc_free(kc);
}

static void test_write_not_retried(void **state)
{
    scripted *s = *state;
    ty_error err;
    ty_kc *kc = client(s, NULL);

    ty_error_init(&err);
    s->script[0] = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                   "Connection: close\r\n\r\n"
                   "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"etcd is sad\","
                   "\"reason\":\"InternalError\",\"code\":500}";
    s->script[1] = JSON_200(POD "}}");
    s->nscript = 2;
    assert_null(kc_create(kc, "pods", "default",
                          json_pack("{s:{s:s}}", "metadata", "name", "p"), &err));
    assert_int_equal(err.code, TY_EINTERNAL);
    assert_string_equal(err.text, "etcd is sad");
    ty_error_clear(&err);
    assert_int_equal(served(s), 1);
    /* the kind was filled in for the server */
    assert_non_null(strstr(s->requests[0], "\"kind\":\"Pod\""));
    assert_null(strcasestr(s->requests[0], "Authorization:"));
    kc_free(kc);
}

static void test_errors(void **state)
{
    scripted *s = *state;
    ty_error err;
    ty_kc *kc = client(s, NULL);

    ty_error_init(&err);
    s->script[0] = "HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\n"
                   "Connection: close\r\n\r\n"
                   "{\"kind\":\"Status\",\"message\":\"Pod \\\"p\\\" is invalid\",\"reason\":"
                   "\"Invalid\",\"details\":{\"causes\":[{\"reason\":\"FieldValueRequired\","
                   "\"field\":\"spec.containers\",\"message\":\"Required value\"}]},\"code\":422}";
    s->script[1] = "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
                   "Connection: close\r\n\r\n"
                   "{\"kind\":\"Status\",\"message\":\"pods \\\"p\\\" already exists\","
                   "\"reason\":\"AlreadyExists\",\"code\":409}";
    s->nscript = 2;
    assert_null(kc_create(kc, "pods", "default",
                          json_pack("{s:{s:s}}", "metadata", "name", "p"), &err));
    assert_int_equal(err.code, TY_EINVALID);
    assert_int_equal(ty_error_ncauses(&err), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(err.causes, 0), "field")),
                        "spec.containers");
    ty_error_clear(&err);
    assert_null(kc_create(kc, "pods", "default",
                          json_pack("{s:{s:s}}", "metadata", "name", "p"), &err));
    assert_int_equal(err.code, TY_EEXISTS);
    ty_error_clear(&err);
    kc_free(kc);
}

static int set_phase(json_t *obj, void *arg, ty_error *err)
{
    json_t *st = json_object_get(obj, "status");

    (void)err;
    if (!st)
        json_object_set_new(obj, "status", st = json_object());
    json_object_set_new(st, "phase", json_string(arg));
    return 0;
}

#define PODV(rv, phase, msg)                                                               \
    JSON_200("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","      \
             "\"namespace\":\"default\",\"resourceVersion\":\"" rv "\"},\"status\":{"     \
             "\"phase\":\"" phase "\",\"message\":\"" msg "\"}}")

/* kc_mutate starts from the answer of the client's last write of the object
 * (no GET); a 409 reads and writes again; "nothing to change" on that copy
 * is asked of a fresh read; KC_FRESH reads first. */
static void test_mutate_from_last_write(void **state)
{
    scripted *s = *state;
    ty_kc *kc = client(s, NULL);
    uint64_t used, stale;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    s->script[0] = PODV("7", "Pending", "");
    s->script[1] = PODV("8", "Running", "");
    s->script[2] = "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
                   "Connection: close\r\n\r\n"
                   "{\"kind\":\"Status\",\"message\":\"the object has been modified\","
                   "\"reason\":\"Conflict\",\"code\":409}";
    s->script[3] = PODV("9", "Running", "other's");
    s->script[4] = PODV("10", "Succeeded", "other's");
    s->script[5] = PODV("10", "Succeeded", "other's");
    s->script[6] = PODV("10", "Succeeded", "other's");
    s->nscript = 7;
    for (int i = 0; i < 4; i++) {
        static const char *const phases[] = {"Running", "Succeeded", "Succeeded", "Succeeded"};
        o = kc_mutate(kc, "pods", "default", "p", set_phase, (void *)phases[i],
                      KC_STATUS | (i == 3 ? KC_FRESH : 0), &err);
        if (!o)
            fail_msg("mutate %d: %s", i, err.text);
        ty_obj_unref(o);
    }
    assert_int_equal(served(s), 7);
    assert_non_null(strstr(s->requests[0], "GET /api/v1/namespaces/default/pods/p "));
    assert_non_null(strstr(s->requests[1], "PUT /api/v1/namespaces/default/pods/p/status "));
    assert_non_null(strstr(s->requests[1], "\"resourceVersion\":\"7\""));
    /* the second: from the first's answer */
    assert_non_null(strstr(s->requests[2], "PUT /api/v1/namespaces/default/pods/p/status "));
    assert_non_null(strstr(s->requests[2], "\"resourceVersion\":\"8\""));
    /* stale: read, and the other's change kept */
    assert_non_null(strstr(s->requests[3], "GET /api/v1/namespaces/default/pods/p "));
    assert_non_null(strstr(s->requests[4], "\"resourceVersion\":\"9\""));
    assert_non_null(strstr(s->requests[4], "other's"));
    /* the third changes nothing on the remembered copy: read to be sure */
    assert_non_null(strstr(s->requests[5], "GET /api/v1/namespaces/default/pods/p "));
    /* the fourth reads first */
    assert_non_null(strstr(s->requests[6], "GET /api/v1/namespaces/default/pods/p "));
    kc_http_memo_stats(kc, &used, &stale, NULL);
    assert_int_equal(used, 1);
    assert_int_equal(stale, 1);
    kc_free(kc);
}

/* kube-apiserver answers a delete with the object, deleted or marked. */
static void test_delete_answers(void **state)
{
    scripted *s = *state;
    ty_error err;
    ty_kc *kc = client(s, NULL);
    bool deleted;
    ty_obj *o;

    ty_error_init(&err);
    s->script[0] = JSON_200(POD "}}");
    s->script[1] = JSON_200(POD ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
                                "\"finalizers\":[\"x\"]}}");
    s->script[2] = JSON_200(POD ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
                                "\"deletionGracePeriodSeconds\":30}}");
    s->script[3] = JSON_200(POD ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
                                "\"deletionGracePeriodSeconds\":0}}");
    s->script[4] = "HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\n"
                   "Connection: close\r\n\r\n" POD "}}";
    s->nscript = 5;
    const bool want[] = {true, false, false, true, false};
    for (int i = 0; i < 5; i++) {
        o = kc_delete(kc, "pods", "default", "p",
                      &(kc_delete_opts){.propagation = KC_PROPAGATE_FOREGROUND,
                                        .precondition_uid = "u", .has_grace = true},
                      &deleted, &err);
        assert_non_null(o);
        assert_int_equal(deleted, want[i]);
        ty_obj_unref(o);
    }
    assert_non_null(strstr(s->requests[0], "DELETE /api/v1/namespaces/default/pods/p "));
    assert_non_null(strstr(s->requests[0], "\"propagationPolicy\":\"Foreground\""));
    assert_non_null(strstr(s->requests[0], "\"preconditions\":{\"uid\":\"u\"}"));
    assert_non_null(strstr(s->requests[0], "\"gracePeriodSeconds\":0"));
    kc_free(kc);
}

static void test_list_kinds(void **state)
{
    scripted *s = *state;
    ty_error err;
    ty_kc *kc = client(s, NULL);
    kc_list l;

    ty_error_init(&err);
    s->script[0] = JSON_200("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                            "{\"resourceVersion\":\"9\",\"continue\":\"c1\"},"
                            "\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\"}}]}");
    s->script[1] = JSON_200("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"9\","
                            "\"continue\":\"c1\",\"remainingItemCount\":41},\"items\":[{}]}");
    s->nscript = 2;
    assert_int_equal(kc_list_objects(kc, "pods",
                                     &(kc_list_opts){.label_selector = "a in (b,c)", .limit = 1},
                                     &l, &err),
                     0);
    assert_int_equal(l.n, 1);
    assert_string_equal(json_string_value(json_object_get(ty_obj_json(l.items[0]), "kind")),
                        "Pod");
    assert_string_equal(l.continue_token, "c1");
    assert_int_equal(l.remaining, -1);
    assert_string_equal(l.rv, "9");
    kc_list_free(&l);
    assert_non_null(strstr(s->requests[0], "GET /api/v1/pods?labelSelector=a%20in%20%28b%2Cc%29"
                                           "&limit=1 HTTP"));
    assert_int_equal(kc_count(kc, "pods"), 42);
    kc_free(kc);
}

static void test_watch_errors(void **state)
{
    scripted *s = *state;
    const char *only[] = {"pods", NULL};
    ty_error err;
    ty_kc *kc = client(s, NULL);
    kc_watch *w;
    kc_event ev;
    int rc;
    int64_t until;

    ty_error_init(&err);
    /* an event, then an ERROR that is not 410: opened again from the event */
    s->script[0] = JSON_200("{\"type\":\"ADDED\",\"object\":" POD "}}}\n"
                            "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
                            "\"message\":\"internal\"}}\n");
    s->script[1] = JSON_200("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\","
                            "\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12\"}}}\n");
    s->script[2] = "HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nConnection: close\r\n"
                   "\r\n{\"kind\":\"Status\",\"message\":\"too old resource version: 12 (40)\","
                   "\"reason\":\"Expired\",\"code\":410}";
    s->nscript = 3;
    w = kc_watch_open(kc, only, "5", &err);
    assert_non_null(w);
    until = ty_now_ms() + DEADLINE_MS;
    while ((rc = kc_watch_next(w, 1000, &ev, &err)) == 0 && ty_now_ms() < until)
        ;
    assert_int_equal(rc, 1);
    assert_int_equal(ev.type, KC_ADDED);
    kc_event_release(&ev);
    while ((rc = kc_watch_next(w, 1000, &ev, &err)) == 0 && ty_now_ms() < until)
        ;
    assert_int_equal(rc, 1);
    assert_int_equal(ev.type, KC_BOOKMARK);
    kc_event_release(&ev);
    while ((rc = kc_watch_next(w, 1000, &ev, &err)) == 0 && ty_now_ms() < until)
        ;
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, TY_EGONE);
    assert_string_equal(err.text, "too old resource version: 12 (40)");
    ty_error_clear(&err);
    kc_watch_close(w);
    assert_non_null(strstr(s->requests[0], "GET /api/v1/pods?watch=1&allowWatchBookmarks=true"
                                           "&resourceVersion=5&"));
    assert_non_null(strstr(s->requests[1], "&resourceVersion=7&"));
    assert_non_null(strstr(s->requests[2], "&resourceVersion=12&"));
    kc_free(kc);
}

/* More events than the queue holds: the stream is held (paused) while the
 * reader is behind and let go as it catches up; nothing is lost or
 * reordered. */
static void test_watch_backpressure(void **state)
{
    scripted *s = *state;
    const char *only[] = {"pods", NULL};
    enum { N = 6000 };
    ty_error err;
    ty_kc *kc = client(s, NULL);
    kc_watch *w;
    kc_event ev;
    char *big, rv[TY_RV_MAX], want[TY_RV_MAX];
    size_t len = 0, cap = (size_t)N * 160 + 256;
    int64_t until = ty_now_ms() + DEADLINE_MS;

    ty_error_init(&err);
    big = malloc(cap);
    assert_non_null(big);
    len += (size_t)snprintf(big, cap, JSON_200(""));
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(big + len, cap - len,
                                "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\","
                                "\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\","
                                "\"namespace\":\"default\",\"resourceVersion\":\"%d\"}}}\n",
                                i + 10);
    s->script[0] = big;
    s->nscript = 1;
    w = kc_watch_open(kc, only, "9", &err);
    assert_non_null(w);
    /* a moment for the stream to fill the queue, so that it is held (the
     * test holds either way; on a slow machine it may only test less) */
    while (served(s) < 1 && ty_now_ms() < until)
        usleep(10000);
    usleep(300000);
    for (int i = 0; i < N; i++) {
        int rc;

        while ((rc = kc_watch_next(w, 1000, &ev, &err)) == 0 && ty_now_ms() < until)
            ;
        if (rc != 1)
            fail_msg("event %d: %d %s", i, rc, err.text);
        ty_obj_rv(ev.obj, rv, sizeof(rv));
        snprintf(want, sizeof(want), "%d", i + 10);
        assert_string_equal(rv, want);
        kc_event_release(&ev);
    }
    kc_watch_close(w);
    kc_free(kc);
    free(big);
}

static void test_rate_limit(void **state)
{
    scripted *s = *state;
    char url[64];
    ty_error err;
    ty_kc *kc;
    int64_t t0;

    ty_error_init(&err);
    for (int i = 0; i < 5; i++)
        s->script[i] = JSON_200(POD "}}");
    s->nscript = 5;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)s->port);
    kc = kc_http_new(&(kc_http_opts){.server = url, .qps = 10, .burst = 1}, &err);
    assert_non_null(kc);
    t0 = ty_now_ms();
    for (int i = 0; i < 5; i++)
        ty_obj_unref(kc_get(kc, "pods", "default", "p", &err));
    /* the first goes at once, each next a tenth of a second later */
    assert_true(ty_now_ms() - t0 >= 390);
    kc_free(kc);
}

/* kc_http_set_rate_limit on a client made with the defaults (as one from a
 * kubeconfig is): the new rate holds from the next request. */
static void test_set_rate_limit(void **state)
{
    scripted *s = *state;
    char url[64];
    ty_error err;
    ty_kc *kc;
    int64_t t0;

    ty_error_init(&err);
    for (int i = 0; i < 5; i++)
        s->script[i] = JSON_200(POD "}}");
    s->nscript = 5;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)s->port);
    kc = kc_http_new(&(kc_http_opts){.server = url}, &err);
    assert_non_null(kc);
    kc_http_set_rate_limit(kc, 10, 1);
    t0 = ty_now_ms();
    for (int i = 0; i < 5; i++)
        ty_obj_unref(kc_get(kc, "pods", "default", "p", &err));
    assert_true(ty_now_ms() - t0 >= 390);
    kc_free(kc);
}


/* ---- TLS, against `openssl s_server` (skipped without the openssl tool) ---- */

typedef struct tls_fx {
    char dir[64];
    pid_t pid;
    uint16_t port;
} tls_fx;

static int sh(const char *dir, const char *cmd)
{
    char line[2048];

    if (snprintf(line, sizeof(line), "cd %s && ( %s ) >/dev/null 2>&1", dir, cmd) >=
        (int)sizeof(line))
        return -1;
    return system(line);
}

/* A CA, a server certificate for 127.0.0.1 and a client certificate, all
 * signed by the CA; a server that asks for the client's. */
static int tls_setup(void **state)
{
    tls_fx *t = calloc(1, sizeof(*t));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    char accept_at[32];
    int fd;
    int64_t until = ty_now_ms() + DEADLINE_MS;

    assert_non_null(t);
    *state = t;
    if (system("openssl version >/dev/null 2>&1") != 0)
        return 0; /* the tests skip */
    strcpy(t->dir, "/tmp/ty-kc-tls-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
#define EC "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    assert_int_equal(sh(t->dir, "openssl req -x509 " EC " -keyout ca.key -out ca.crt -days 2 "
                                "-subj /CN=test-ca"), 0);
    assert_int_equal(sh(t->dir, "openssl req " EC " -keyout srv.key -out srv.csr "
                                "-subj /CN=127.0.0.1"), 0);
    assert_int_equal(sh(t->dir, "printf 'subjectAltName=IP:127.0.0.1\\n' > ext && "
                                "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
                                "-CAcreateserial -out srv.crt -days 2 -extfile ext"), 0);
    assert_int_equal(sh(t->dir, "openssl req " EC " -keyout cl.key -out cl.csr -subj /CN=me && "
                                "openssl x509 -req -in cl.csr -CA ca.crt -CAkey ca.key "
                                "-CAcreateserial -out cl.crt -days 2"), 0);
#undef EC
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    t->port = ntohs(a.sin_port);
    snprintf(accept_at, sizeof(accept_at), "127.0.0.1:%u", (unsigned)t->port);
    t->pid = fork();
    assert_true(t->pid >= 0);
    if (t->pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        if (chdir(t->dir) == 0)
            execlp("openssl", "openssl", "s_server", "-accept", accept_at, "-cert", "srv.crt",
                   "-key", "srv.key", "-CAfile", "ca.crt", "-Verify", "1", "-www", "-quiet",
                   (char *)NULL);
        _exit(127);
    }
    for (;;) { /* until it listens */
        a.sin_port = htons(t->port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
            close(fd);
            break;
        }
        close(fd);
        if (ty_now_ms() > until)
            fail_msg("openssl s_server did not start");
        usleep(20000);
    }
    return 0;
}

static int tls_teardown(void **state)
{
    tls_fx *t = *state;

    if (t->pid > 0) {
        kill(t->pid, SIGTERM);
        waitpid(t->pid, NULL, 0);
    }
    if (*t->dir)
        tmpdir_remove(t->dir);
    free(t);
    return 0;
}

static char *slurp(const tls_fx *t, const char *name, size_t *len)
{
    char path[128];
    FILE *f;
    char *buf = calloc(1, 65536);

    snprintf(path, sizeof(path), "%s/%s", t->dir, name);
    f = fopen(path, "r");
    assert_non_null(f);
    *len = fread(buf, 1, 65535, f);
    fclose(f);
    return buf;
}

/* What a GET through o ends with: s_server answers HTML, so a handshake
 * that went through gives TY_EINTERNAL (not JSON), one that failed
 * TY_EUNAVAILABLE. */
static ty_errcode tls_get(const tls_fx *t, kc_http_opts o)
{
    char url[64];
    ty_error err;
    ty_kc *kc;
    ty_errcode code;

    ty_error_init(&err);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u", (unsigned)t->port);
    o.server = url;
    o.qps = -1;
    kc = kc_http_new(&o, &err);
    if (!kc)
        fail_msg("kc_http_new: %s", err.text);
    assert_null(kc_get(kc, "namespaces", "", "default", &err));
    code = err.code;
    ty_error_clear(&err);
    kc_free(kc);
    return code;
}

static void test_tls(void **state)
{
    tls_fx *t = *state;
    char ca[128], cert[128], key[128];
    size_t ca_len, cert_len, key_len;
    char *ca_pem, *cert_pem, *key_pem;

    if (!t->pid)
        skip();
    snprintf(ca, sizeof(ca), "%s/ca.crt", t->dir);
    snprintf(cert, sizeof(cert), "%s/cl.crt", t->dir);
    snprintf(key, sizeof(key), "%s/cl.key", t->dir);
    /* files */
    assert_int_equal(tls_get(t, (kc_http_opts){.ca_file = ca, .cert_file = cert,
                                               .key_file = key}),
                     TY_EINTERNAL);
    /* the same as PEM bytes */
    ca_pem = slurp(t, "ca.crt", &ca_len);
    cert_pem = slurp(t, "cl.crt", &cert_len);
    key_pem = slurp(t, "cl.key", &key_len);
    assert_int_equal(tls_get(t, (kc_http_opts){.ca_data = ca_pem, .ca_len = ca_len,
                                               .cert_data = cert_pem, .cert_len = cert_len,
                                               .key_data = key_pem, .key_len = key_len}),
                     TY_EINTERNAL);
    /* no CA for the server's certificate: refused, unless told to skip */
    assert_int_equal(tls_get(t, (kc_http_opts){.cert_file = cert, .key_file = key}),
                     TY_EUNAVAILABLE);
    assert_int_equal(tls_get(t, (kc_http_opts){.cert_file = cert, .key_file = key,
                                               .insecure_skip_verify = true}),
                     TY_EINTERNAL);
    /* the server wants a client certificate */
    assert_int_equal(tls_get(t, (kc_http_opts){.ca_file = ca}), TY_EUNAVAILABLE);
    free(ca_pem);
    free(cert_pem);
    free(key_pem);
}

/* The *-data of a kubeconfig: base64 of the PEM, into the client's blobs. */
static void test_tls_kubeconfig(void **state)
{
    tls_fx *t = *state;
    char cmd[1024], path[128];
    ty_error err;
    ty_kc *kc;

    if (!t->pid)
        skip();
    ty_error_init(&err);
    snprintf(cmd, sizeof(cmd),
             "{ printf 'apiVersion: v1\\nkind: Config\\ncurrent-context: c\\nclusters:\\n"
             "- name: k\\n  cluster:\\n    server: https://127.0.0.1:%u\\n"
             "    certificate-authority-data: '; base64 -w0 ca.crt; "
             "printf '\\ncontexts:\\n- name: c\\n  context: {cluster: k, user: u}\\n"
             "users:\\n- name: u\\n  user:\\n    client-certificate-data: '; base64 -w0 cl.crt; "
             "printf '\\n    client-key-data: '; base64 -w0 cl.key; printf '\\n'; } > kubeconfig",
             (unsigned)t->port);
    assert_int_equal(sh(t->dir, cmd), 0);
    snprintf(path, sizeof(path), "%s/kubeconfig", t->dir);
    kc = kc_http_from_kubeconfig(path, NULL, &err);
    if (!kc)
        fail_msg("kubeconfig: %s", err.text);
    assert_null(kc_get(kc, "namespaces", "", "default", &err));
    assert_int_equal(err.code, TY_EINTERNAL); /* through the handshake: not JSON */
    ty_error_clear(&err);
    kc_free(kc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_retry_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutate_from_last_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_backpressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_rate_limit, setup, teardown),
    };

    const struct CMUnitTest tls[] = {
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_tls_kubeconfig),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);

    return failed + cmocka_run_group_tests_name("tls", tls, tls_setup, tls_teardown);
}
