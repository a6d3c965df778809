/* bench_auth.h - how the benchmark drivers reach a secured server: the TLS
 * settings and credentials of a kubeconfig (--kubeconfig FILE, as
 * `trainyard kubeconfig -o FILE` writes it), put on each libcurl handle
 * the drivers make. Without --kubeconfig nothing is added (a server
 * started with --no-tls and no authentication, or another cluster's
 * anonymous endpoint). */
#ifndef TY_BENCH_AUTH_H
#define TY_BENCH_AUTH_H

#include <curl/curl.h>
#include <stdio.h>

#include "client/kc_http.h"

static ty_kc *bench_kc; /* NULL: no kubeconfig given */

/* Loads the kubeconfig; its server is replaced by server (--server) when
 * that is given. 0, or -1 after printing why. */
static inline int bench_auth_load(const char *kubeconfig, const char *server)
{
    ty_error err;
    ty_error_init(&err);
    if (!kubeconfig)
        return 0;
    bench_kc = kc_http_from_kubeconfig_at(kubeconfig, NULL, server, &err);
    if (!bench_kc)
        fprintf(stderr, "error: --kubeconfig %s: %s\n", kubeconfig, err.text);
    ty_error_clear(&err);
    return bench_kc ? 0 : -1;
}

/* The kubeconfig's CA, client certificate and token on h; the token's
 * header goes into *hdrs (call once per header list used with h; hdrs
 * NULL: the TLS settings only, again after a curl_easy_reset). */
static inline void bench_auth_apply(CURL *h, struct curl_slist **hdrs)
{
    struct curl_slist *scratch = NULL;

    if (!bench_kc)
        return;
    kc_http_setup_handle(bench_kc, h, hdrs ? hdrs : &scratch);
    curl_slist_free_all(scratch);
}

#endif
