/* fuzz_webhook.c - the admission webhook's endpoints (server/webhook.h):
 * AdmissionReviews as kube-apiserver sends them, or anything else that
 * reaches the port. Every body gets an answer: a review (200) echoing the
 * uid, allowed or refused with a Status of code >= 400, or a Status (400,
 * 413). A /mutate patch applies to the object sent (patch_json), and the
 * patched object needs no second patch (kube-apiserver may call a webhook
 * again on what it returned). The RFC 6902 diff turns oldObject into
 * object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "fuzz.h"
#include "model/patch.h"
#include "server/webhook.h"

static json_t *queues;

static json_t *q_get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    (void)ctx, (void)ns;
    return res == &api_queue ? json_incref(json_object_get(queues, name)) : NULL;
}

static size_t q_count(void *ctx, const api_resource *res,
                      bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    const char *k;
    json_t *q;
    size_t n = 0;

    (void)ctx;
    if (res != &api_queue)
        return 0;
    json_object_foreach(queues, k, q)
        n += filter(q, arg);
    return n;
}

static const api_lookup lookup = {.get = q_get, .count = q_count};

static int b64val(char c)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(tab, c) : NULL;
    return p ? (int)(p - tab) : -1;
}

/* The patch of a response, decoded; aborts on bad base64 or JSON. */
static json_t *decode_patch(const char *b)
{
    size_t n = strlen(b), o = 0;
    char *raw = malloc(n / 4 * 3 + 1);
    json_t *ops;

    if (!raw)
        return NULL;
    if (n % 4)
        fuzz_fail("patch is not padded base64: %zu characters", n);
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++)
            if ((v[k] = b[i + k] == '=' ? 0 : b64val(b[i + k])) < 0)
                fuzz_fail("patch is not base64 at %zu", i + k);
        unsigned bits = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
                        (unsigned)v[3];
        raw[o++] = (char)(bits >> 16);
        if (b[i + 2] != '=')
            raw[o++] = (char)(bits >> 8);
        if (b[i + 3] != '=')
            raw[o++] = (char)bits;
    }
    ops = json_loadb(raw, o, 0, NULL);
    free(raw);
    if (!json_is_array(ops))
        fuzz_fail("patch is not a JSON array");
    return ops;
}

/* Checks one answer to the review req (NULL when the body did not parse). */
static void check_answer(const json_t *in, const json_t *out, unsigned status)
{
    const json_t *resp = json_object_get(out, "response");
    const char *uid = json_string_value(json_object_get(json_object_get(in, "request"), "uid"));

    if (!out)
        fuzz_fail("no answer (status %u)", status);
    if (status == 400 || status == 413) {
        if (strcmp(json_string_value(json_object_get(out, "kind")) ?: "", "Status") != 0 ||
            json_integer_value(json_object_get(out, "code")) != (json_int_t)status)
            fuzz_fail_json("a plain refusal that is no Status", out, json_null());
        return;
    }
    if (status != 200)
        fuzz_fail("status %u", status);
    if (!uid || !json_is_object(resp) ||
        strcmp(json_string_value(json_object_get(resp, "uid")) ?: "", uid) != 0)
        fuzz_fail_json("a review answer without the request's uid", in, out);
    if (strcmp(json_string_value(json_object_get(out, "kind")) ?: "", "AdmissionReview") != 0 ||
        !json_string_value(json_object_get(out, "apiVersion")))
        fuzz_fail_json("an answer that is no AdmissionReview", in, out);
    if (!json_is_boolean(json_object_get(resp, "allowed")))
        fuzz_fail_json("no allowed", in, out);
    if (json_is_false(json_object_get(resp, "allowed")) &&
        (json_integer_value(json_object_get(json_object_get(resp, "status"), "code")) < 400 ||
         !json_string_value(json_object_get(json_object_get(resp, "status"), "message"))))
        fuzz_fail_json("refused without a Status", in, out);
}

/* A /mutate patch applies to the object, and the result needs none. */
static void check_patch(json_t *in, const json_t *out)
{
    const char *b = json_string_value(
        json_object_get(json_object_get(out, "response"), "patch"));
    json_t *req = json_object_get(in, "request");
    json_t *ops, *patched, *again;
    ty_error err;
    unsigned status;
    char *text;

    if (!b)
        return;
    if (!(ops = decode_patch(b)))
        return;
    ty_error_init(&err);
    patched = patch_json(json_object_get(req, "object"), ops, &err);
    if (!patched)
        fuzz_fail("the patch does not apply: %s", err.text);
    ty_error_clear(&err);
    json_decref(ops);
    /* the defaults of the defaulted object: nothing; an update keeps the
     * creator from oldObject, which the first pass wrote too */
    json_object_set_new(req, "object", patched);
    text = json_dumps(in, JSON_COMPACT);
    if (!text)
        return;
    again = webhook_mutate(text, strlen(text), &status);
    free(text);
    if (json_object_get(json_object_get(again, "response"), "patch"))
        fuzz_fail_json("a second pass patches again", in, again);
    json_decref(again);
}

/* The diff from oldObject to object turns one into the other. */
static void check_diff(const json_t *in)
{
    const json_t *req = json_object_get(in, "request");
    const json_t *a = json_object_get(req, "oldObject"), *b = json_object_get(req, "object");
    json_t *ops, *c;
    ty_error err;

    if (!a || !b)
        return;
    if (!(ops = patch_json_diff(a, b)))
        return;
    ty_error_init(&err);
    c = patch_json(a, ops, &err);
    if (!c)
        fuzz_fail("the diff does not apply: %s", err.text);
    if (!fuzz_json_same(c, b))
        fuzz_fail_json("the diff turns oldObject into something else", c, b);
    json_decref(c);
    json_decref(ops);
    ty_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in, *out;
    unsigned status;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    if (!queues) {
        queues = json_pack("{s:{s:{s:s}, s:{}, s:{s:s}}, s:{s:{s:s}, s:{}, s:{s:s}}}",
                           "default", "metadata", "name", "default", "spec", "status", "state",
                           "Open", "closed", "metadata", "name", "closed", "spec", "status",
                           "state", "Closed");
    }
    in = json_loadb((const char *)data, size, 0, NULL);

    out = webhook_validate((const char *)data, size, &lookup, &status);
    check_answer(in, out, status);
    json_decref(out);

    out = webhook_mutate((const char *)data, size, &status);
    check_answer(in, out, status);
    if (in && status == 200)
        check_patch(in, out);
    json_decref(out);

    if (in)
        check_diff(in);
    json_decref(in);
    return 0;
}
