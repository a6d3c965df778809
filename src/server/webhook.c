/* webhook.c - the AdmissionReview endpoints (see webhook.h).
 *
 * Each request runs what the embedded server's write path runs on the same
 * object (resource_write.c), minus what kube-apiserver does itself there
 * (identity, status reset, strict fields, Pod Security, quota): so that a
 * bad manifest gets the same Status on a cluster as on one machine. */
#include "server/webhook.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/userinfo.h"
#include "model/patch.h"
#include "server/creator.h"
#include "server/decode.h"
#include "server/http.h"

#define REVIEW_GROUP "admission.k8s.io"
#define UID_MAX 256 /* a Kubernetes uid is 36 characters; anything far past it is garbage */

/* One AdmissionReview as read. Every pointer is borrowed from doc. */
typedef struct review {
    json_t *doc;
    const char *api_version; /* echoed in the answer */
    const char *uid;         /* NULL until read */
    const json_t *req;
    const api_resource *res; /* NULL: not Trainyard's to admit */
    api_admit_op op;
    bool connect;
    const json_t *object, *old;
    const char *name;        /* request.name, may be "" */
} review;

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A metav1.Status of its own, for what cannot be answered as a review. */
static json_t *plain_status(ty_errcode code, unsigned *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *plain_status(ty_errcode code, unsigned *status, const char *fmt, ...)
{
    ty_error err;
    va_list ap;
    json_t *st;

    ty_error_init(&err);
    err.code = code;
    va_start(ap, fmt);
    vsnprintf(err.text, sizeof(err.text), fmt, ap);
    va_end(ap);
    st = status_from_error(&err, NULL, NULL);
    *status = st ? (unsigned)ty_errcode_http(code) : 500;
    return st;
}

/* The AdmissionReview around response (stolen). */
static json_t *answer(const review *rv, json_t *response, unsigned *status)
{
    json_t *out;

    if (!response) {
        *status = 500;
        return NULL;
    }
    out = json_pack("{s:s, s:s, s:o}", "apiVersion",
                    rv->api_version ? rv->api_version : REVIEW_GROUP "/v1", "kind",
                    "AdmissionReview", "response", response);
    *status = out ? 200 : 500;
    return out;
}

static json_t *allow(const review *rv, unsigned *status)
{
    return answer(rv, json_pack("{s:s, s:b}", "uid", rv->uid, "allowed", 1), status);
}

/* Refused with the Status the API server answers for err (res and name as
 * its fail() passes them: NULL for no kind or name). */
static json_t *deny_as(const review *rv, const api_resource *res, ty_error *err,
                       const char *name, unsigned *status)
{
    json_t *st;

    decode_invalid_message(err, res, name);
    st = status_from_error(err, res, name);
    if (!st) {
        *status = 500;
        return NULL;
    }
    return answer(rv, json_pack("{s:s, s:b, s:o}", "uid", rv->uid, "allowed", 0, "status", st),
                  status);
}

/* A review that parsed but says nothing sensible: a 400 in its answer. */
static json_t *deny_malformed(const review *rv, const char *what, unsigned *status)
{
    ty_error err;
    json_t *out;

    ty_error_init(&err);
    ty_seterr(&err, TY_EBADREQUEST, "malformed AdmissionReview: %s", what);
    out = deny_as(rv, NULL, &err, NULL, status);
    ty_error_clear(&err);
    return out;
}

/* The resource request.resource (else request.kind) names, or NULL. */
static const api_resource *find_resource(const json_t *req)
{
    const json_t *r = json_object_get(req, "resource"), *k = json_object_get(req, "kind");
    const char *g, *v, *name;
    char av[256];

    if (json_is_object(r) && (v = jstr(r, "version")) && (name = jstr(r, "resource")))
        return api_find((g = jstr(r, "group")) ? g : "", v, name);
    if (json_is_object(k) && (v = jstr(k, "version")) && (name = jstr(k, "kind"))) {
        g = jstr(k, "group");
        snprintf(av, sizeof(av), "%s%s%s", g && *g ? g : "", g && *g ? "/" : "", v);
        return api_find_kind(av, name);
    }
    return NULL;
}

/* request.operation into rv. 0, or -1 when it is none of the four. */
static int read_operation(review *rv)
{
    const char *op = jstr(rv->req, "operation");

    if (!op)
        return -1;
    if (strcmp(op, "CREATE") == 0)
        rv->op = API_ADMIT_CREATE;
    else if (strcmp(op, "UPDATE") == 0)
        rv->op = API_ADMIT_UPDATE;
    else if (strcmp(op, "DELETE") == 0)
        rv->op = API_ADMIT_DELETE;
    else if (strcmp(op, "CONNECT") == 0)
        rv->connect = true;
    else
        return -1;
    return 0;
}

/* Reads the request. Returns NULL with rv filled to go on; else the answer
 * to send (a Status, or a review refused as malformed). */
static json_t *read_review(const char *body, size_t len, review *rv, unsigned *status)
{
    json_error_t jerr;
    const char *kind, *uid;
    const json_t *v;

    memset(rv, 0, sizeof(*rv));
    if (len > WEBHOOK_MAX_BODY)
        return plain_status(TY_ETOOLARGE, status,
                            "Request entity too large: an AdmissionReview is at most %u bytes, "
                            "this one is %zu",
                            WEBHOOK_MAX_BODY, len);
    rv->doc = json_loadb(body ? body : "", body ? len : 0, 0, &jerr);
    if (!rv->doc)
        return plain_status(TY_EBADREQUEST, status,
                            "the request body is not a JSON AdmissionReview: %s (line %d, "
                            "column %d)",
                            jerr.text, jerr.line, jerr.column);
    rv->req = json_object_get(rv->doc, "request");
    uid = jstr(rv->req, "uid");
    if (!json_is_object(rv->doc) || !json_is_object(rv->req) || !uid || !*uid ||
        strlen(uid) > UID_MAX)
        return plain_status(TY_EBADREQUEST, status,
                            "malformed AdmissionReview: request.uid is required (a string of "
                            "at most %d bytes)",
                            UID_MAX);
    rv->uid = uid;
    rv->api_version = jstr(rv->doc, "apiVersion");
    kind = jstr(rv->doc, "kind");
    if (!rv->api_version || (strcmp(rv->api_version, REVIEW_GROUP "/v1") != 0 &&
                             strcmp(rv->api_version, REVIEW_GROUP "/v1beta1") != 0)) {
        rv->api_version = NULL; /* the answer says v1 */
        return deny_malformed(rv, "apiVersion must be admission.k8s.io/v1 or v1beta1",
                              status);
    }
    if (!kind || strcmp(kind, "AdmissionReview") != 0)
        return deny_malformed(rv, "kind must be AdmissionReview", status);
    if (read_operation(rv) < 0)
        return deny_malformed(rv, "request.operation must be CREATE, UPDATE, DELETE or CONNECT",
                              status);
    if (!json_is_object(json_object_get(rv->req, "kind")) &&
        !json_is_object(json_object_get(rv->req, "resource")))
        return deny_malformed(rv, "request.kind or request.resource is required", status);
    rv->res = find_resource(rv->req);
    /* the cluster admits its own kinds; a subresource (status, scale) is
     * not defaulted or validated by Trainyard's server either */
    if (rv->res && (rv->res->builtin || (jstr(rv->req, "subResource") &&
                                         *jstr(rv->req, "subResource"))))
        rv->res = NULL;
    rv->name = jstr(rv->req, "name") ? jstr(rv->req, "name") : "";
    v = json_object_get(rv->req, "object");
    rv->object = json_is_null(v) ? NULL : v;
    v = json_object_get(rv->req, "oldObject");
    rv->old = json_is_null(v) ? NULL : v;
    if (!rv->res || rv->connect)
        return NULL;
    if (rv->op != API_ADMIT_DELETE && !json_is_object(rv->object))
        return deny_malformed(rv, "request.object must be a JSON object", status);
    if (rv->op == API_ADMIT_UPDATE && !json_is_object(rv->old))
        return deny_malformed(rv, "request.oldObject must be a JSON object on UPDATE", status);
    if (rv->old && !json_is_object(rv->old))
        return deny_malformed(rv, "request.oldObject must be a JSON object", status);
    return NULL;
}

/* ---- /mutate ---- */

static char *base64(const char *in, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned b = (unsigned)(unsigned char)in[i] << 16;
        if (i + 1 < n)
            b |= (unsigned)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            b |= (unsigned char)in[i + 2];
        *o++ = tab[b >> 18 & 63];
        *o++ = tab[b >> 12 & 63];
        *o++ = i + 1 < n ? tab[b >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[b & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* The object as Trainyard's server would store it: the kind's defaults,
 * and on a job the creator's annotation (the requesting user's on create,
 * the stored one kept on update). */
static json_t *defaulted(const review *rv)
{
    json_t *obj = json_deep_copy(rv->object);
    const json_t *ui = json_object_get(rv->req, "userInfo");
    const char *user = jstr(ui, "username");

    if (!obj)
        return NULL;
    if (!json_object_get(obj, "metadata"))
        json_object_set_new(obj, "metadata", json_object());
    if (!json_is_object(json_object_get(obj, "metadata")))
        return obj; /* validation's to refuse: not defaulted by the server either */
    if (rv->res->apply_defaults)
        rv->res->apply_defaults(obj);
    if (rv->op == API_ADMIT_CREATE)
        creator_stamp(rv->res, obj, user ? &(ty_user){.name = (char *)user} : NULL);
    else
        creator_keep(rv->res, obj, rv->old);
    return obj;
}

static json_t *mutate(const review *rv, unsigned *status)
{
    json_t *obj, *ops, *response;
    char *text, *b64;

    if (!rv->res || rv->connect || rv->op == API_ADMIT_DELETE)
        return allow(rv, status);
    obj = defaulted(rv);
    ops = obj ? patch_json_diff(rv->object, obj) : NULL;
    json_decref(obj);
    if (!ops) {
        *status = 500;
        return NULL;
    }
    if (json_array_size(ops) == 0) {
        json_decref(ops);
        return allow(rv, status);
    }
    text = json_dumps(ops, JSON_COMPACT);
    json_decref(ops);
    b64 = text ? base64(text, strlen(text)) : NULL;
    free(text);
    if (!b64) {
        *status = 500;
        return NULL;
    }
    response = json_pack("{s:s, s:b, s:s, s:s}", "uid", rv->uid, "allowed", 1, "patchType",
                         "JSONPatch", "patch", b64);
    free(b64);
    return answer(rv, response, status);
}

json_t *webhook_mutate(const char *body, size_t len, unsigned *status)
{
    review rv;
    json_t *out = read_review(body, len, &rv, status);

    if (!out)
        out = mutate(&rv, status);
    json_decref(rv.doc);
    return out;
}

/* ---- /validate ---- */

static json_t *none_get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    (void)ctx, (void)res, (void)ns, (void)name;
    return NULL;
}

static size_t none_count(void *ctx, const api_resource *res,
                         bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    (void)ctx, (void)res, (void)filter, (void)arg;
    return 0;
}

static const api_lookup no_objects = {.get = none_get, .count = none_count};

/* The name a refusal is reported under, as the server's: on create the
 * name, else generateName (create_name in resource_write.c). */
static const char *report_name(const review *rv, const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *n = jstr(md, "name");

    if (rv->op == API_ADMIT_UPDATE && *rv->name)
        return rv->name;
    if (!n || !*n)
        n = jstr(md, "generateName");
    return n ? n : "";
}

/* A copy of obj (an object) with res's defaults, or NULL without memory. */
static json_t *default_copy(const api_resource *res, const json_t *obj)
{
    json_t *c = json_deep_copy(obj);

    if (c && json_is_object(json_object_get(c, "metadata")) && res->apply_defaults)
        res->apply_defaults(c);
    return c;
}

static json_t *validate(const review *rv, const api_lookup *lk, unsigned *status)
{
    ty_error err;
    json_t *obj = NULL, *old = NULL, *out;
    char name[256];

    if (!rv->res || rv->connect)
        return allow(rv, status);
    ty_error_init(&err);
    if (rv->op == API_ADMIT_DELETE) {
        /* Volcano's delete rules (a Queue only goes once Closed, `default`
         * never), on the object as stored */
        if (rv->res != &api_queue ||
            api_admit_queue(lk, API_ADMIT_DELETE, rv->res, rv->old, rv->name, &err) == 0)
            return allow(rv, status);
        out = deny_as(rv, rv->res, &err, rv->name, status);
        ty_error_clear(&err);
        return out;
    }
    /* The object is validated defaulted, as the server validates it: a
     * review reaches here after /mutate, and defaulting twice changes
     * nothing. So is the stored one an update is compared with: the server's
     * always is, but one stored before the operator was installed (by
     * upstream's operator, or none) is not, and a field only the defaults
     * filled would count as changed. */
    obj = json_deep_copy(rv->object);
    if (rv->op == API_ADMIT_UPDATE && !(old = default_copy(rv->res, rv->old)))
        goto oom;
    if (!obj)
        goto oom;
    if (api_prepare(rv->res, obj, old, &err) < 0 ||
        api_admit_queue(lk, rv->op, rv->res, obj,
                        rv->op == API_ADMIT_UPDATE ? rv->name : NULL, &err) < 0) {
        snprintf(name, sizeof(name), "%s", report_name(rv, obj));
        out = deny_as(rv, rv->res, &err, name, status);
    } else {
        out = allow(rv, status);
    }
    json_decref(obj);
    json_decref(old);
    ty_error_clear(&err);
    return out;
oom:
    json_decref(obj);
    json_decref(old);
    *status = 500;
    return NULL;
}

json_t *webhook_validate(const char *body, size_t len, const api_lookup *lk,
                         unsigned *status)
{
    review rv;
    json_t *out = read_review(body, len, &rv, status);

    if (!out)
        out = validate(&rv, lk ? lk : &no_objects, status);
    json_decref(rv.doc);
    return out;
}

json_t *webhook_handle(const char *path, const char *body, size_t len, const api_lookup *lk,
                       unsigned *status)
{
    size_t n = path ? strcspn(path, "?") : 0;

    if (n == 7 && strncmp(path, "/mutate", 7) == 0)
        return webhook_mutate(body, len, status);
    if (n == 9 && strncmp(path, "/validate", 9) == 0)
        return webhook_validate(body, len, lk, status);
    return plain_status(TY_ENOTFOUND, status, "the server could not find the requested "
                                              "resource");
}
