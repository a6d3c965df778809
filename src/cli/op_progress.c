/* op_progress.c - the TrainJob progress endpoint in operator mode
 * (operator.h): served on the webhook's HTTPS listener, over the client
 * interface, with tokens derived from a key rather than compared with the
 * job's Secret.
 *
 * On a cluster the API server does not keep users from making a Secret
 * named `<job>-progress-token` (the embedded server's admission does), so
 * the endpoint here never reads that Secret: a job's token is
 * HMAC-SHA256(key, "ns/name/uid") (server/progress.h), which the TrainJob
 * controller writes into the Secret for the pods and the endpoint
 * recomputes. The key is the SHA-256 of a file only the operator reads
 * (by default its webhook's private key); changing it changes every job's
 * token, which the controller writes again at its next pass over the job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "cli/operator.h"
#include "client/kc.h"
#include "controller/trainer_progress.h"
#include "server/http.h"
#include "server/progress.h"
#include "server/tls.h"

#define KEY_FILE_MAX (1024 * 1024)
#define CA_FILE_MAX (64 * 1024)
#define TOKEN_HEX 65

static struct {
    ty_kc *kc;
    unsigned char key[32];
} op;

static int token_for(const char *ns, const char *name, const char *uid, char *out, size_t len)
{
    return progress_derive_token(op.key, sizeof(op.key), ns, name, uid, out, len);
}

static json_t *answer(ty_error *err, const char *name, unsigned *status)
{
    json_t *st;

    if (err->code == TY_EINVALID && ty_error_ncauses(err)) {
        char text[sizeof(err->text)];
        api_format_invalid(&api_trainjob, name, err, text, sizeof(text));
        snprintf(err->text, sizeof(err->text), "%s", text);
    }
    *status = (unsigned)ty_errcode_http(err->code);
    st = status_from_error(err, err->code == TY_EUNAUTH ? NULL : &api_trainjob, name);
    ty_error_clear(err);
    return st;
}

static json_t *handle(void *ctx, const char *url, const char *authorization, const char *body,
                      size_t len, unsigned *status, long long *retry_after)
{
    char ns[254], name[254], token[TOKEN_HEX + 8], want[TOKEN_HEX], uid[128];
    json_t *ts = NULL, *out;
    int64_t wait;
    ty_error err;
    ty_obj *o;

    (void)ctx;
    *retry_after = 0;
    ty_error_init(&err);
    if (!progress_parse_path(url, ns, sizeof(ns), name, sizeof(name))) {
        ty_seterr(&err, TY_ENOTFOUND, "the server could not find the requested resource");
        return answer(&err, NULL, status);
    }
    if (!progress_bearer(authorization, token, sizeof(token))) {
        ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        return answer(&err, name, status);
    }
    if (!(o = kc_get(op.kc, api_store_key(&api_trainjob), ns, name, &err))) {
        /* a caller without the token learns nothing of what exists; an API
         * server that did not answer is no bad token */
        if (err.code == TY_ENOTFOUND || err.code == TY_EFORBIDDEN)
            ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        else
            ty_seterr(&err, TY_EUNAVAILABLE, "the API server did not answer; try again");
        return answer(&err, name, status);
    }
    snprintf(uid, sizeof(uid), "%s",
             json_string_value(json_object_get(json_object_get(ty_obj_json(o), "metadata"),
                                               "uid")) ?: "");
    ty_obj_unref(o);
    if (!*uid || token_for(ns, name, uid, want, sizeof(want)) < 0 ||
        !progress_token_equal(token, want)) {
        ty_debug("progress %s/%s: wrong token", ns, name);
        ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        return answer(&err, name, status);
    }
    if (len > PROGRESS_BODY_MAX) {
        ty_seterr(&err, TY_ETOOLARGE, "Request entity too large: limit is %u", PROGRESS_BODY_MAX);
        return answer(&err, name, status);
    }
    if (progress_parse_body(body, len, &ts, &err) < 0)
        return answer(&err, name, status);
    if ((wait = progress_rate_take(uid, ty_now_ms())) > 0) {
        json_decref(ts);
        *retry_after = (wait + 999) / 1000;
        *status = 429;
        return progress_too_many(*retry_after);
    }
    o = kc_mutate(op.kc, api_store_key(&api_trainjob), ns, name, progress_write_status,
                  &(progress_write){uid, ts}, KC_STATUS, &err);
    json_decref(ts);
    if (!o) {
        progress_rate_give_back(uid);
        if (err.code == TY_ENOTFOUND)
            ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        return answer(&err, name, status);
    }
    out = json_deep_copy(ty_obj_json(o));
    ty_obj_unref(o);
    *status = 200;
    return out;
}

static const webhook_extra extra = {.match = progress_path, .handle = handle};

int op_progress_setup(ty_kc *kc, const char *url, const char *ca_file, const char *key_file,
                      const webhook_extra **out, ty_error *err)
{
    char *key = NULL, *ca = NULL;
    size_t klen, clen, n = strlen(url);
    int rc = -1;

    if (strncmp(url, "https://", 8) != 0 || n <= 8 || strchr(url + 8, '/') ||
        strpbrk(url, " \t\r\n?#"))
        return ty_seterr(err, TY_EBADREQUEST, "--progress-url %s: want https://HOST[:PORT], "
                         "no path (the webhook listener, as the job's pods reach it)", url);
    if (tls_read_file(key_file, "the progress token key", KEY_FILE_MAX, &key, &klen, err) < 0 ||
        (ca_file && tls_read_file(ca_file, "the progress endpoint's CA", CA_FILE_MAX, &ca, &clen,
                                  err) < 0))
        goto out;
    if (klen < 32) {
        ty_seterr(err, TY_EBADREQUEST, "%s: a key of %zu bytes is too short (at least 32)",
                  key_file, klen);
        goto out;
    }
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, key, klen, op.key) < 0) {
        ty_seterr(err, TY_EINTERNAL, "SHA-256 failed");
        goto out;
    }
    op.kc = kc;
    trainer_progress_configure_derived(url, ca, token_for);
    *out = &extra;
    rc = 0;
out:
    if (key)
        memset(key, 0, klen);
    free(key);
    free(ca);
    return rc;
}
