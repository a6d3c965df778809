/* progress.c - the TrainJob progress endpoint (progress.h). */
#include "server/progress.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/trainer.h"
#include <gnutls/crypto.h>

#include "base/log.h"
#include "base/timeutil.h"

#define TOKEN_MAX 256        /* longer than any token the controller makes */
#define METRICS_MAX 256
#define METRIC_TEXT_MAX 64
#define INT32_MAX_VALUE 2147483647LL
#define PATH_LEN 64

/* ---- which requests ------------------------------------------------------ */

static const char prefix[] = "/apis/" TRAINER_GROUP "/v1alpha1/namespaces/";

/* Splits url into namespace and name (copied into ns and name, each at most
 * 253 characters); false when it is not the progress path. */
bool progress_parse_path(const char *url, char *ns, size_t nslen, char *name, size_t namelen)
{
    const char *p, *slash;
    size_t n;

    if (strncmp(url, prefix, sizeof(prefix) - 1) != 0)
        return false;
    p = url + sizeof(prefix) - 1;
    slash = strchr(p, '/');
    n = slash ? (size_t)(slash - p) : 0;
    if (!n || n >= nslen || strncmp(slash, "/trainjobs/", 11) != 0)
        return false;
    memcpy(ns, p, n);
    ns[n] = '\0';
    p = slash + 11;
    slash = strchr(p, '/');
    n = slash ? (size_t)(slash - p) : 0;
    if (!n || n >= namelen || strcmp(slash, "/status") != 0)
        return false;
    memcpy(name, p, n);
    name[n] = '\0';
    return true;
}

bool progress_path(const char *method, const char *url)
{
    char ns[254], name[254];
    return strcmp(method, "POST") == 0 &&
           progress_parse_path(url, ns, sizeof(ns), name, sizeof(name));
}

/* ---- the body ------------------------------------------------------------ */

static void unknown_fields(const json_t *obj, const char *const *known, const char *path,
                           ty_error *err)
{
    const char *key;
    const json_t *v;
    char f[PATH_LEN + 80];

    json_object_foreach((json_t *)obj, key, v) {
        size_t i;
        for (i = 0; known[i] && strcmp(known[i], key) != 0; i++)
            ;
        if (known[i])
            continue;
        snprintf(f, sizeof(f), "%s%s%.64s", path, *path ? "." : "", key);
        ty_error_add_cause(err, "FieldValueNotSupported", f, "unknown field \"%.64s\"", key);
    }
}

/* An int32 between lo and hi, or absent (null counts as absent). */
static void check_int(const json_t *ts, const char *key, long long lo, long long hi,
                      json_t *out, ty_error *err)
{
    const json_t *v = json_object_get(ts, key);
    char f[PATH_LEN];

    snprintf(f, sizeof(f), "trainerStatus.%s", key);
    if (!v || json_is_null(v))
        return;
    if (!json_is_integer(v)) {
        meta_invalid(err, f, v, "%s in body must be of type integer", f);
        return;
    }
    if (json_integer_value(v) < lo)
        meta_invalid(err, f, v, "%s in body should be greater than or equal to %lld", f, lo);
    else if (json_integer_value(v) > hi)
        meta_invalid(err, f, v, "%s in body should be less than or equal to %lld", f, hi);
    else
        json_object_set(out, key, (json_t *)v);
}

/* A required string of 1..64 characters. */
static void check_text(const json_t *m, const char *key, const char *path, ty_error *err)
{
    const json_t *v = json_object_get(m, key);
    char f[PATH_LEN];

    snprintf(f, sizeof(f), "%s.%s", path, key);
    if (!v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0))
        meta_required(err, f, NULL);
    else if (!json_is_string(v))
        meta_invalid(err, f, v, "%s in body must be of type string", f);
    else if (json_string_length(v) > METRIC_TEXT_MAX)
        ty_error_add_cause(err, "FieldValueTooLong", f,
                           "Too long: may not be more than %d bytes", METRIC_TEXT_MAX);
}

static void check_metrics(const json_t *ts, json_t *out, ty_error *err)
{
    static const char *const known[] = {"name", "value", NULL};
    const json_t *ms = json_object_get(ts, "metrics"), *m;
    size_t i, before = ty_error_ncauses(err);
    char path[PATH_LEN];

    if (!ms || json_is_null(ms))
        return;
    if (!json_is_array(ms)) {
        meta_invalid(err, "trainerStatus.metrics", ms,
                     "trainerStatus.metrics in body must be of type array");
        return;
    }
    if (json_array_size(ms) > METRICS_MAX) {
        ty_error_add_cause(err, "FieldValueTooMany", "trainerStatus.metrics",
                           "Too many: %zu: must have at most %d items", json_array_size(ms),
                           METRICS_MAX);
        return;
    }
    json_array_foreach(ms, i, m) {
        snprintf(path, sizeof(path), "trainerStatus.metrics[%zu]", i);
        if (!json_is_object(m)) {
            meta_invalid(err, path, m, "%s in body must be of type object", path);
            continue;
        }
        unknown_fields(m, known, path, err);
        check_text(m, "name", path, err);
        check_text(m, "value", path, err);
    }
    if (ty_error_ncauses(err) == before) {
        json_t *copy = json_array();
        json_array_foreach(ms, i, m)
            json_array_append_new(copy, json_pack("{s:O,s:O}", "name",
                                                  json_object_get(m, "name"), "value",
                                                  json_object_get(m, "value")));
        json_object_set_new(out, "metrics", copy);
    }
}

int progress_parse_body(const char *body, size_t len, json_t **out, ty_error *err)
{
    static const char *const top[] = {"trainerStatus", NULL};
    static const char *const fields[] = {"progressPercentage", "estimatedRemainingSeconds",
                                         "metrics", "lastUpdatedTime", NULL};
    json_error_t jerr;
    json_t *doc, *ts, *res;
    const json_t *t;
    char now[40];

    *out = NULL;
    doc = body && len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!json_is_object(doc)) {
        /* upstream answers a body it cannot decode as Invalid too */
        ty_seterr(err, TY_EINVALID, "Invalid payload: %s",
                  doc ? "the body must be a JSON object" : body && len ? jerr.text
                                                                       : "empty body");
        json_decref(doc);
        return -1;
    }
    res = json_object();
    unknown_fields(doc, top, "", err);
    ts = json_object_get(doc, "trainerStatus");
    if (!json_is_object(ts)) {
        if (!ts || json_is_null(ts))
            meta_required(err, "trainerStatus", NULL);
        else
            meta_invalid(err, "trainerStatus", ts, "trainerStatus in body must be of type "
                         "object");
    } else {
        unknown_fields(ts, fields, "trainerStatus", err);
        check_int(ts, "progressPercentage", 0, 100, res, err);
        check_int(ts, "estimatedRemainingSeconds", 0, INT32_MAX_VALUE, res, err);
        check_metrics(ts, res, err);
        t = json_object_get(ts, "lastUpdatedTime");
        if (t && !json_is_null(t)) {
            struct timespec when;
            if (!json_is_string(t) || ty_time_parse_ts(json_string_value(t), &when) < 0)
                meta_invalid(err, "trainerStatus.lastUpdatedTime", t,
                             "trainerStatus.lastUpdatedTime in body must be of type "
                             "date-time");
            else
                json_object_set(res, "lastUpdatedTime", (json_t *)t);
        }
    }
    json_decref(doc);
    if (ty_error_ncauses(err)) {
        json_decref(res);
        err->code = TY_EINVALID;
        return -1;
    }
    if (!json_object_get(res, "lastUpdatedTime")) {
        ty_time_now(now, sizeof(now));
        json_object_set_new(res, "lastUpdatedTime", json_string(now));
    }
    *out = res;
    return 0;
}

/* ---- the token ------------------------------------------------------------ */

static void base64(const unsigned char *in, size_t n, char *out)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i, o = 0;

    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = tab[v >> 6 & 63];
        out[o++] = tab[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0);
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
}

/* Equal in time that depends on the lengths only (the length of a token
 * is no secret; its bytes are). */
bool progress_token_equal(const char *a, const char *b)
{
    size_t n = strlen(a);
    volatile unsigned char diff = 0;

    if (n != strlen(b))
        return false;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* Whether ref is the controller reference to the TrainJob job. */
static bool controlled_by(const json_t *obj, const char *kind, const char *name,
                          const char *uid)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    const json_t *ref;
    size_t i;

    json_array_foreach(refs, i, ref) {
        const char *av = meta_str(ref, "apiVersion");
        if (!json_is_true(json_object_get(ref, "controller")))
            continue;
        return av && strncmp(av, TRAINER_GROUP "/", sizeof(TRAINER_GROUP)) == 0 &&
               meta_str(ref, "kind") && strcmp(meta_str(ref, "kind"), kind) == 0 &&
               (!name || (meta_str(ref, "name") && !strcmp(meta_str(ref, "name"), name))) &&
               (!uid || (meta_str(ref, "uid") && !strcmp(meta_str(ref, "uid"), uid)));
    }
    return false;
}

bool progress_bearer(const char *h, char *buf, size_t len)
{
    size_t n;

    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    while (*h == ' ')
        h++;
    n = strcspn(h, " \t\r\n");
    if (!n || n >= len || h[n])
        return false;
    memcpy(buf, h, n);
    buf[n] = '\0';
    return true;
}

/* 0 with *job (caller unrefs) when the request's token is the one of the
 * TrainJob ns/name; -1 with err TY_EUNAUTH otherwise, whatever the cause,
 * so that a caller without the token learns nothing of what exists. */
static int authenticate(http_req *r, const char *ns, const char *name, store_obj **job,
                        ty_error *err)
{
    ty_store *st = server_store(r->srv);
    char token[TOKEN_MAX + 1], enc[TOKEN_MAX / 3 * 4 + 8], sname[300], want[72];
    const json_t *j, *sec, *stored;
    const char *uid, *why = NULL;
    store_obj *so = NULL;
    ty_error e;

    ty_error_init(&e);
    *job = NULL;
    if (!progress_bearer(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization"),
                         token, sizeof(token))) {
        why = "no bearer token";
        goto refuse;
    }
    *job = store_get(st, api_store_key(&api_trainjob), ns, name, &e);
    if (!*job) {
        why = "no such TrainJob";
        goto refuse;
    }
    j = store_obj_json(*job);
    uid = meta_str(json_object_get(j, "metadata"), "uid");
    /* the job's token under the server's key: the Secret need not be there */
    if (uid && progress_local_token(ns, name, uid, want, sizeof(want)) == 0 &&
        progress_token_equal(token, want)) {
        ty_error_clear(&e);
        return 0;
    }
    snprintf(sname, sizeof(sname), "%s" PROGRESS_SECRET_SUFFIX, name);
    so = store_get(st, api_store_key(&api_secret), ns, sname, &e);
    sec = so ? store_obj_json(so) : NULL;
    stored = json_object_get(json_object_get(sec, "data"), PROGRESS_TOKEN_KEY);
    if (!sec || !uid || !controlled_by(sec, "TrainJob", name, uid) ||
        json_object_get(json_object_get(sec, "metadata"), "deletionTimestamp") ||
        !json_is_string(stored)) {
        why = "no token Secret controlled by the TrainJob";
        goto refuse;
    }
    base64((const unsigned char *)token, strlen(token), enc);
    if (!progress_token_equal(enc, json_string_value(stored))) {
        why = "wrong token";
        goto refuse;
    }
    store_obj_unref(so);
    ty_error_clear(&e);
    return 0;
refuse:
    ty_debug("progress %s/%s: %s", ns, name, why);
    store_obj_unref(so);
    store_obj_unref(*job);
    *job = NULL;
    ty_error_clear(&e);
    return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
}

/* ---- the embedded server's token key ---- */

static unsigned char local_key[PROGRESS_KEY_BYTES];
static bool have_local_key; /* set once, before the server serves */

void progress_set_key(const unsigned char *key)
{
    memcpy(local_key, key, sizeof(local_key));
    have_local_key = true;
}

int progress_local_token(const char *ns, const char *name, const char *uid, char *out,
                         size_t len)
{
    if (!have_local_key)
        return -1;
    return progress_derive_token(local_key, sizeof(local_key), ns, name, uid, out, len);
}

int progress_derive_token(const unsigned char *key, size_t keylen, const char *ns,
                          const char *name, const char *uid, char *out, size_t len)
{
    unsigned char mac[32];
    char msg[1024];
    int n = snprintf(msg, sizeof(msg), "%s/%s/%s", ns, name, uid);

    if (n < 0 || (size_t)n >= sizeof(msg) || len < 2 * sizeof(mac) + 1 ||
        gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, keylen, msg, (size_t)n, mac) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(mac); i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
    return 0;
}

/* ---- one update per job per 5 s ------------------------------------------ */

/* Keyed by the TrainJob's uid (a job made again under its name starts
 * afresh). A fixed table: an entry older than the interval is free, so it
 * holds every job that posted in the last 5 s up to its size; past that
 * (thousands of jobs each posting within 5 s) a job finds no slot and is
 * told to come back, as it would be by a full table anywhere. */
#define RATE_SLOTS 4096
#define RATE_PROBES 32
#define UID_MAX 64

static struct rate_slot {
    char uid[UID_MAX];
    int64_t last_ms;
} rate_table[RATE_SLOTS];
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* 0 and the job's clock restarted, or the milliseconds it must wait. */
int64_t progress_rate_take(const char *uid, int64_t now)
{
    struct rate_slot *free_slot = NULL;
    uint32_t h = fnv1a(uid);
    int64_t wait = PROGRESS_INTERVAL_MS;

    pthread_mutex_lock(&rate_lock);
    for (int i = 0; i < RATE_PROBES; i++) {
        struct rate_slot *s = &rate_table[(h + (uint32_t)i) % RATE_SLOTS];
        bool live = s->uid[0] && now - s->last_ms < PROGRESS_INTERVAL_MS;
        if (live && strcmp(s->uid, uid) == 0) {
            wait = PROGRESS_INTERVAL_MS - (now - s->last_ms);
            free_slot = NULL;
            goto out;
        }
        if (!live && !free_slot)
            free_slot = s;
    }
    if (free_slot) {
        snprintf(free_slot->uid, sizeof(free_slot->uid), "%s", uid);
        free_slot->last_ms = now;
        wait = 0;
    }
out:
    pthread_mutex_unlock(&rate_lock);
    return wait;
}

/* A write that failed gives the job its turn back. */
void progress_rate_give_back(const char *uid)
{
    uint32_t h = fnv1a(uid);

    pthread_mutex_lock(&rate_lock);
    for (int i = 0; i < RATE_PROBES; i++) {
        struct rate_slot *s = &rate_table[(h + (uint32_t)i) % RATE_SLOTS];
        if (strcmp(s->uid, uid) == 0) {
            s->uid[0] = '\0';
            break;
        }
    }
    pthread_mutex_unlock(&rate_lock);
}

json_t *progress_too_many(long long secs)
{
    json_t *st;
    ty_error e;

    ty_error_init(&e);
    ty_seterr(&e, TY_ETOOMANY, "progress of this TrainJob was updated less than %d seconds "
              "ago: at most one update per %d seconds is accepted", PROGRESS_INTERVAL_MS / 1000,
              PROGRESS_INTERVAL_MS / 1000);
    st = status_from_error(&e, NULL, NULL);
    ty_error_clear(&e);
    json_object_set_new(st, "details", json_pack("{s:I}", "retryAfterSeconds",
                                                 (json_int_t)secs));
    return st;
}

static enum MHD_Result send_too_many(http_req *r, int64_t wait_ms)
{
    long long secs = (wait_ms + 999) / 1000;
    json_t *st = progress_too_many(secs);
    char *text, after[24];
    struct MHD_Response *resp;

    text = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (!text)
        return MHD_NO;
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    snprintf(after, sizeof(after), "%lld", secs);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "Retry-After", after);
    return http_queue(r, 429, resp);
}

/* ---- the write ------------------------------------------------------------ */

/* Writes status.trainerStatus of the job authenticated, and of no other
 * that took its name since (the store runs this again on a newer version
 * when another write came first). */
int progress_write_status(json_t *obj, void *argp, ty_error *err)
{
    progress_write *a = argp;
    const char *uid = meta_str(json_object_get(obj, "metadata"), "uid");
    json_t *status = json_object_get(obj, "status");

    if (!uid || strcmp(uid, a->uid) != 0)
        return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(obj, "status", status);
    }
    json_object_set(status, "trainerStatus", (json_t *)a->trainer_status);
    return 0;
}

enum MHD_Result progress_handle(http_req *r)
{
    char ns[254], name[254], uid[UID_MAX];
    store_obj *job = NULL, *o;
    json_t *ts = NULL;
    enum MHD_Result ret;
    int64_t wait;
    ty_error err;

    ty_error_init(&err);
    if (!progress_parse_path(r->url, ns, sizeof(ns), name, sizeof(name))) {
        ty_seterr(&err, TY_ENOTFOUND, "the server could not find the requested resource");
        goto error;
    }
    if (authenticate(r, ns, name, &job, &err) < 0)
        goto error;
    snprintf(uid, sizeof(uid), "%s",
             meta_str(json_object_get(store_obj_json(job), "metadata"), "uid"));
    store_obj_unref(job);
    if (r->body_len > PROGRESS_BODY_MAX) {
        ty_seterr(&err, TY_ETOOLARGE, "Request entity too large: limit is %u",
                  PROGRESS_BODY_MAX);
        goto error;
    }
    if (progress_parse_body(r->body, r->body_len, &ts, &err) < 0) {
        char text[sizeof(err.text)];
        if (ty_error_ncauses(&err)) {
            api_format_invalid(&api_trainjob, name, &err, text, sizeof(text));
            snprintf(err.text, sizeof(err.text), "%s", text);
        }
        ret = http_send_error(r, &err, &api_trainjob, name);
        ty_error_clear(&err);
        return ret;
    }
    wait = progress_rate_take(uid, ty_now_ms());
    if (wait > 0) {
        json_decref(ts);
        return send_too_many(r, wait);
    }
    o = store_mutate_status(server_store(r->srv), api_store_key(&api_trainjob), ns, name,
                            progress_write_status, &(progress_write){uid, ts}, &err);
    json_decref(ts);
    if (!o) {
        progress_rate_give_back(uid);
        if (err.code == TY_ENOTFOUND)
            ty_seterr(&err, TY_EUNAUTH, "Unauthorized");
        goto error;
    }
    ret = http_send_json(r, 200, store_obj_json_copy(o));
    store_obj_unref(o);
    return ret;
error:
    ret = http_send_error(r, &err, err.code == TY_EUNAUTH ? NULL : &api_trainjob, name);
    ty_error_clear(&err);
    return ret;
}

/* ---- the Secrets the endpoint trusts -------------------------------------- */

/* json_equal, with two absent values equal */
static bool same(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

/* A Secret the endpoint could take for a token: named <job>-progress-token
 * and controlled by a TrainJob (the endpoint then checks that the
 * controller is that job, by uid; the owner's name here is not checked,
 * so that no reference naming another job slips past). Other Secrets a
 * TrainJob controls (the MPI runtime's ssh keys, which its controller
 * makes, over HTTP in operator mode) are ordinary. */
static bool token_secret(const json_t *obj)
{
    static const char suffix[] = "-progress-token";
    const char *name = meta_str(json_object_get(obj, "metadata"), "name");
    size_t n = name ? strlen(name) : 0;

    return n > sizeof(suffix) - 1 && strcmp(name + n - (sizeof(suffix) - 1), suffix) == 0 &&
           controlled_by(obj, "TrainJob", NULL, NULL);
}

int progress_admit_secret(const ty_user *u, const api_resource *res, const json_t *obj,
                          const json_t *old, ty_error *err)
{
    bool now, was;

    if (res != &api_secret || !u || userinfo_in_group(u, USERINFO_MASTERS))
        return 0;
    now = token_secret(obj);
    was = old && token_secret(old);
    /* neither made nor unmade: a Secret that was one stays one (an owner
     * reference removed would orphan its token, unprotected) */
    if (!now && !was)
        return 0;
    if (now && was) {
        /* the same owner and the same data: labels, annotations, finalizers
         * may change (kubectl label, a backup tool's annotations) */
        const json_t *om = json_object_get(obj, "metadata"), *wm = json_object_get(old,
                                                                                 "metadata");
        if (same(json_object_get(om, "ownerReferences"), json_object_get(wm, "ownerReferences")) &&
            same(json_object_get(obj, "data"), json_object_get(old, "data")))
            return 0;
    }
    return ty_seterr(err, TY_EFORBIDDEN, "secrets \"%s\" is forbidden: a Secret controlled by "
                     "a TrainJob is made by the trainer controller; its data and owner "
                     "cannot be written through the API",
                     meta_str(json_object_get(obj, "metadata"), "name")
                         ? meta_str(json_object_get(obj, "metadata"), "name") : "");
}
