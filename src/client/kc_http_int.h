/* kc_http_int.h - what the files of the HTTP client share: the client, its
 * requests (kc_http.c), its watches (kc_http_watch.c). Not for callers. */
#ifndef TY_CLIENT_KC_HTTP_INT_H
#define TY_CLIENT_KC_HTTP_INT_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>

#include "api/registry.h"
#include "base/buf.h"
#include "base/strmap.h"
#include "client/kc_http.h"

/* Idle connections kept for reuse (one easy handle each); a burst beyond
 * makes more and closes them after. */
#define KH_POOL_MAX 16

/* The answers of the client's last writes (kc_http_memo.c). */
typedef struct kh_memo_entry kh_memo_entry;
typedef struct kh_memo {
    pthread_mutex_t mu;
    strmap by_key;
    kh_memo_entry *head, *tail;
    size_t n;
    uint64_t used, stale; /* writes from a remembered copy; of them, 409s */
} kh_memo;

typedef struct kh_client {
    ty_kc base;
    char *server;       /* without a trailing slash */
    char *token, *token_file, *userpwd, *user_agent;
    char *ca_file, *cert_file, *key_file;
    struct curl_blob ca, cert, key; /* data given instead of files (owned) */
    bool insecure;
    int stall_s;
    size_t max_body;

    pthread_mutex_t mu; /* the pool, the limiter and the file token */
    CURL *pool[KH_POOL_MAX];
    size_t npool;
    double qps, burst, tokens; /* qps <= 0: no limit */
    int64_t refill_ns;
    char *file_token;
    int64_t file_token_ms;
    kh_memo memo;
} kh_client;

typedef struct kh_resp {
    long status;   /* 0 when no answer came */
    ty_buf body;
} kh_resp;

/* Sets what every request of c carries on h (TLS, authentication, user
 * agent, the headers in *hdrs which it extends: the caller frees them after
 * the transfer). */
void kh_setup(kh_client *c, CURL *h, struct curl_slist **hdrs);
/* Waits for the rate limiter's permission to send one request. */
void kh_rate_wait(kh_client *c);

/* The path of resource res: "/api/v1/namespaces/ns/pods/name/sub"; ns NULL
 * or "" on a namespaced kind = every namespace; name and sub may be NULL. */
int kh_path(ty_buf *b, const api_resource *res, const char *ns, const char *name,
            const char *sub);
/* Appends ?key=value or &key=value (value escaped) when value is not NULL. */
int kh_query(ty_buf *b, const char *key, const char *value);

/* One request, with retries where they are safe; 0 with resp filled when
 * an answer came (any status), -1 with TY_EUNAVAILABLE when none did. */
int kh_request(kh_client *c, const char *method, const char *path, const char *ctype,
               const char *body, size_t len, kh_resp *resp, ty_error *err);
/* kh_request with a JSON answer: the decoded 2xx body (caller decrefs;
 * *status gets the HTTP status when status is not NULL), or NULL with err
 * as the Status the server sent says. */
json_t *kh_call(kh_client *c, const char *method, const char *path, const char *ctype,
                const json_t *body, long *status, ty_error *err);
/* err as a non-2xx answer says: the code by HTTP status (AlreadyExists
 * told apart from Conflict), the Status message, its causes. */
void kh_error_from_answer(long status, const char *body, size_t len, ty_error *err);

/* The resource a store key names, or NULL with TY_ENOTFOUND. */
const api_resource *kh_resource(const char *key, ty_error *err);
/* Fills apiVersion and kind when obj lacks them (list items of built-in
 * kinds come without). */
void kh_set_type(json_t *obj, const api_resource *res);
/* The current resourceVersion, as a list of res with limit=1 reports it. */
int kh_current_rv(kh_client *c, const api_resource *res, char *rv, size_t len, ty_error *err);
/* The store keys of every resource the server lists, sorted. */
json_t *kh_resources(ty_kc *kc);

/* kc_http_memo.c: remembered answers (a new reference, or NULL); put
 * remembers o (o NULL: forgets) when the object is remembered already, or
 * when add; every call from any thread. */
void kh_memo_init(kh_memo *m);
void kh_memo_free(kh_memo *m);
ty_obj *kh_memo_get(kh_memo *m, const char *res, const char *ns, const char *name);
void kh_memo_put(kh_memo *m, const char *res, const char *ns, const char *name, ty_obj *o,
                 bool add);
void kh_memo_count(kh_memo *m, bool stale);
void kh_memo_stats(kh_memo *m, uint64_t *used, uint64_t *stale, size_t *held);

kc_watch *kh_watch_open(ty_kc *kc, const char *const *only, const char *from_rv,
                        ty_error *err);
int kh_watch_next(kc_watch *w, int timeout_ms, kc_event *ev, ty_error *err);
void kh_watch_cancel(kc_watch *w);
void kh_watch_close(kc_watch *w);

extern const kc_ops kh_ops;

#endif
