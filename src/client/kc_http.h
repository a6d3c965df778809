/* kc_http.h - the client interface (kc.h) speaking the Kubernetes API over
 * HTTP(S) with libcurl: to Trainyard's own server or to a cluster's
 * kube-apiserver (operator mode). Where it differs from the embedded
 * implementation (docs/internals/client.md has the list): a watch from a
 * version that is gone fails at its first kc_watch_next, not at
 * kc_watch_open (the server says so in the stream); events of several
 * resources come in order per resource only; a kc_delete that removed the
 * object returns NULL without an error when the server answered with a
 * Status; kc_mutate's hints are ignored (fn gets the whole object) and
 * what a write through the status subresource, or past it, may change is
 * the server's to decide; kc_write_all is one request per op. */
#ifndef TY_CLIENT_KC_HTTP_H
#define TY_CLIENT_KC_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "client/kc.h"

/* Defaults, those of client-go's rest.Config raised for controllers that
 * follow whole clusters: 50 requests a second, bursts of 100. */
#define KC_HTTP_DEFAULT_QPS 50.0
#define KC_HTTP_DEFAULT_BURST 100
/* A request that receives nothing for this long is abandoned (watches are
 * exempt: TCP keepalives find a dead peer under them). */
#define KC_HTTP_DEFAULT_STALL_S 60
/* The largest answer taken (a list of 150,000 pods is about 400 MB). */
#define KC_HTTP_DEFAULT_MAX_RESPONSE ((size_t)1024 * 1024 * 1024)

/* How to reach and authenticate to the server. Every string is copied; NULL
 * or "" means not given; a *_data member (PEM bytes, *_len of them) is used
 * instead of its file. */
typedef struct kc_http_opts {
    const char *server;            /* "https://10.0.0.1:6443", "http://127.0.0.1:8080" */
    const char *token;             /* bearer token */
    const char *token_file;        /* read again each minute (rotated service account
                                      tokens); used when token is not given */
    const char *username, *password; /* basic authentication */
    const char *ca_file;           /* the server's CA bundle (PEM) */
    const void *ca_data;
    size_t ca_len;
    const char *cert_file;         /* client certificate (PEM) */
    const void *cert_data;
    size_t cert_len;
    const char *key_file;          /* its private key (PEM) */
    const void *key_data;
    size_t key_len;
    bool insecure_skip_verify;     /* trust any server certificate (tests only) */
    double qps;                    /* 0 = KC_HTTP_DEFAULT_QPS; negative = no limit */
    int burst;                     /* 0 = KC_HTTP_DEFAULT_BURST */
    const char *user_agent;        /* NULL = "trainyard" */
    int stall_timeout_s;           /* 0 = KC_HTTP_DEFAULT_STALL_S */
    size_t max_response_bytes;     /* 0 = KC_HTTP_DEFAULT_MAX_RESPONSE */
} kc_http_opts;

/* A client of the server o names. Nothing is sent yet: an unreachable
 * server fails the first call (TY_EUNAVAILABLE). Caller frees with kc_free.
 * NULL with err (TY_EBADREQUEST: no server, unreadable files). */
ty_kc *kc_http_new(const kc_http_opts *o, ty_error *err);

/* A client from a kubeconfig file (YAML; path NULL = kc_http_kubeconfig_path)
 * and the context named (NULL or "" = its current-context): the cluster's
 * server, certificate-authority(-data), insecure-skip-tls-verify, and the
 * user's token, tokenFile, username/password, client-certificate(-data) and
 * client-key(-data); relative file names are the kubeconfig's directory's.
 * Exec and auth-provider credential plugins are refused (TY_EBADREQUEST). */
ty_kc *kc_http_from_kubeconfig(const char *path, const char *context, ty_error *err);
/* The same with the cluster's server URL replaced by server (NULL: kept),
 * as kubectl's --server does. */
ty_kc *kc_http_from_kubeconfig_at(const char *path, const char *context, const char *server,
                                  ty_error *err);
/* That context's namespace ("default" when it names none), malloc'd: the
 * caller frees it. NULL with err as above. */
char *kc_http_kubeconfig_namespace(const char *path, const char *context, ty_error *err);

/* For code that drives libcurl itself (the CLI's client, the benchmarks):
 * puts kc's TLS settings (CA, client certificate, insecure-skip-tls-verify)
 * and credentials on the easy handle curl; a bearer token goes into *hdrs
 * as an Authorization header (the caller frees the list after the
 * transfer). kc must come from kc_http_new or kc_http_from_kubeconfig*
 * (libcurl copies what it is given; a token file is read when this is
 * called, then once a minute). */
struct curl_slist;
void kc_http_setup_handle(ty_kc *kc, void *curl, struct curl_slist **hdrs);
/* kc's server URL, without a trailing slash (borrowed from kc). */
const char *kc_http_server(const ty_kc *kc);

/* Sets kc's client-side rate limit as kc_http_opts' qps and burst do (for
 * clients made from a kubeconfig: `trainyard operator --kube-api-qps`);
 * the bucket starts full. kc must come from kc_http_new or
 * kc_http_from_kubeconfig*. */
void kc_http_set_rate_limit(ty_kc *kc, double qps, int burst);

/* Where kubectl would look: the first file named in $KUBECONFIG (several
 * are not merged), else $HOME/.kube/config. 0, or -1 when neither is set. */
int kc_http_kubeconfig_path(char *buf, size_t len);

/* The in-cluster client of a pod: https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT with the service account's token and CA from
 * sa_dir (NULL = /var/run/secrets/kubernetes.io/serviceaccount). NULL with
 * TY_ENOTFOUND when not in a cluster. */
ty_kc *kc_http_in_cluster(const char *sa_dir, ty_error *err);

/* How many kc_mutate calls of c started from the answer of its last write
 * of the object instead of a GET, how many of those met a 409 (stale: read
 * again), and how many objects it remembers now (kc_http_memo.c; for tests
 * and logs; any may be NULL). */
void kc_http_memo_stats(ty_kc *c, uint64_t *used, uint64_t *stale, size_t *held);

#endif
