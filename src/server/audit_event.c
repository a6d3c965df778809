/* audit_event.c - an audit_rec as kube-apiserver's audit.k8s.io/v1 Event,
 * members in its order (kind, apiVersion, level, auditID, stage,
 * requestURI, verb, user, impersonatedUser, sourceIPs, userAgent, objectRef,
 * responseStatus, requestObject, responseObject, requestReceivedTimestamp,
 * stageTimestamp, annotations), empty ones left out as its omitempty does.
 *
 * Runs on the writer thread, once per event, so it writes the text
 * directly instead of building a tree (a tree and its dump cost several
 * times more). Bodies are parsed only when the event shows them; the name a
 * create's body gives its objectRef is picked out by a scan. */
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/yaml.h"
#include "server/audit.h"

/* s as a JSON string. Bytes that are not UTF-8 become U+FFFD, as Go's
 * encoder writes them (a header may carry anything). */
static void put_str(ty_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    const unsigned char *run = p;

    ty_buf_append(b, "\"", 1);
    while (*p) {
        unsigned char c = *p;
        size_t len = 1;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            p++;
            continue;
        }
        if (c >= 0x80) {
            len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
            bool ok = len > 0;
            for (size_t k = 1; ok && k < len; k++)
                ok = (p[k] >> 6) == 2;
            if (ok) {
                p += len;
                continue;
            }
        }
        ty_buf_append(b, (const char *)run, (size_t)(p - run));
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            ty_buf_append(b, esc, 2);
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            ty_buf_append(b, esc, 6);
        } else {
            ty_buf_append(b, "\xef\xbf\xbd", 3);
        }
        p++;
        run = p;
    }
    ty_buf_append(b, (const char *)run, (size_t)(p - run));
    ty_buf_append(b, "\"", 1);
}

/* ,"key":"value" (value left out when empty, as omitempty). *first tells
 * whether a comma is needed. */
static void member(ty_buf *b, bool *first, const char *key, const char *value)
{
    if (!value || !*value)
        return;
    ty_buf_puts(b, *first ? "\"" : ",\"");
    ty_buf_puts(b, key);
    ty_buf_puts(b, "\":");
    put_str(b, value);
    *first = false;
}

static void put_user(ty_buf *b, const ty_user *u)
{
    bool first = false;
    if (!u) { /* "user":{} for a request nobody authenticated */
        ty_buf_puts(b, "{}");
        return;
    }
    ty_buf_puts(b, "{\"username\":");
    put_str(b, u->name);
    member(b, &first, "uid", u->uid);
    if (u->ngroups) {
        ty_buf_puts(b, ",\"groups\":[");
        for (size_t i = 0; i < u->ngroups; i++) {
            if (i)
                ty_buf_puts(b, ",");
            put_str(b, u->groups[i]);
        }
        ty_buf_puts(b, "]");
    }
    ty_buf_puts(b, "}");
}

/* ---- a body's metadata, without parsing all of it ---- */

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Past a string at p ('"'); NULL when it never ends. *escaped tells
 * whether it holds an escape. */
static const char *skip_string(const char *p, const char *e, bool *escaped)
{
    for (p++; p < e; p++) {
        if (*p == '\\') {
            *escaped = true;
            p++;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Past one value at p: a string, a container, or a scalar (which ends at
 * the comma or bracket that follows it). NULL when the text ends first. */
static const char *skip_value(const char *p, const char *e)
{
    int depth = 0;
    bool esc = false;
    while (p < e) {
        char c = *p;
        if (c == '"') {
            if (!(p = skip_string(p, e, &esc)))
                return NULL;
            if (depth == 0)
                return p;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (c == ',' && depth == 0) {
            return p;
        }
        p++;
    }
    return NULL;
}

typedef struct meta_fields {
    char *v[4]; /* name, namespace, uid, resourceVersion */
} meta_fields;

static const char *const meta_keys[] = {"name", "namespace", "uid", "resourceVersion"};

/* Fills m from the top-level "metadata" of a JSON object. -1 when the scan
 * cannot be sure (an escape, a malformed text): then the body is parsed. */
static int scan_metadata(const char *p, const char *e, meta_fields *m)
{
    bool in_meta = false, esc = false;

    p = skip_ws(p, e);
    if (p >= e || *p != '{')
        return -1;
    for (p++;;) {
        const char *k, *ke;
        p = skip_ws(p, e);
        if (p < e && *p == '}')
            return 0; /* the end of metadata (or of a body without one) */
        if (p >= e || *p != '"')
            return -1;
        k = p + 1;
        if (!(p = skip_string(p, e, &esc)) || esc)
            return -1;
        ke = p - 1;
        p = skip_ws(p, e);
        if (p >= e || *p != ':')
            return -1;
        p = skip_ws(p + 1, e);
        if (!in_meta && (size_t)(ke - k) == 8 && memcmp(k, "metadata", 8) == 0 && p < e &&
            *p == '{') {
            in_meta = true; /* descend: the loop now reads metadata's members */
            p++;
            continue;
        }
        if (in_meta && p < e && *p == '"') {
            const char *vs = p + 1;
            if (!(p = skip_string(p, e, &esc)) || esc)
                return -1;
            for (int i = 0; i < 4; i++)
                if ((size_t)(ke - k) == strlen(meta_keys[i]) &&
                    memcmp(k, meta_keys[i], (size_t)(ke - k)) == 0 && !m->v[i])
                    m->v[i] = strndup(vs, (size_t)(p - 1 - vs));
        } else if (!(p = skip_value(p, e))) {
            return -1;
        }
        p = skip_ws(p, e);
        if (p < e && *p == ',')
            p++;
    }
}

static void meta_from_json(const json_t *obj, meta_fields *m)
{
    const json_t *meta = json_object_get(obj, "metadata");
    for (int i = 0; i < 4; i++) {
        const char *s = json_string_value(json_object_get(meta, meta_keys[i]));
        if (s && !m->v[i])
            m->v[i] = strdup(s);
    }
}

static json_t *parse_body(const char *body, size_t len, bool yaml)
{
    json_t *v;
    if (!body || !len)
        return NULL;
    if (yaml) {
        ty_error err;
        ty_error_init(&err);
        v = yaml_load_one(body, len, &err);
        ty_error_clear(&err);
        if (v && !json_is_object(v) && !json_is_array(v)) {
            json_decref(v);
            v = NULL;
        }
        return v;
    }
    return json_loadb(body, len, 0, NULL);
}

static void strip_managed_fields(json_t *obj)
{
    json_t *items = json_object_get(obj, "items");
    size_t i;
    json_t *it;
    json_object_del(json_object_get(obj, "metadata"), "managedFields");
    json_array_foreach(items, i, it)
        json_object_del(json_object_get(it, "metadata"), "managedFields");
}

static void put_json(ty_buf *b, const char *key, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT);
    if (!text)
        return;
    ty_buf_printf(b, ",\"%s\":", key);
    ty_buf_puts(b, text);
    free(text);
}

static void put_object_ref(ty_buf *b, const audit_rec *r, const meta_fields *m)
{
    const reqattr *a = &r->attr;
    bool first = true;

    ty_buf_puts(b, ",\"objectRef\":{");
    member(b, &first, "resource", a->resource);
    member(b, &first, "namespace", a->ns[0] ? a->ns : m->v[1]);
    member(b, &first, "name", a->name[0] ? a->name : m->v[0]);
    member(b, &first, "uid", m->v[2]);
    member(b, &first, "apiGroup", a->api_group);
    member(b, &first, "apiVersion", a->api_version);
    member(b, &first, "resourceVersion", m->v[3]);
    member(b, &first, "subresource", a->subresource);
    ty_buf_puts(b, "}");
}

static void put_response_status(ty_buf *b, const audit_rec *r, const json_t *resp)
{
    const char *kind = json_string_value(json_object_get(resp, "kind"));
    bool first = false;

    ty_buf_puts(b, ",\"responseStatus\":{\"metadata\":{}");
    /* A Status answered (every failure) is copied, as kube-apiserver does;
     * otherwise only the code. */
    if (kind && strcmp(kind, "Status") == 0) {
        const json_t *details = json_object_get(resp, "details");
        member(b, &first, "status", json_string_value(json_object_get(resp, "status")));
        member(b, &first, "message", json_string_value(json_object_get(resp, "message")));
        member(b, &first, "reason", json_string_value(json_object_get(resp, "reason")));
        if (json_is_object(details) && json_object_size(details))
            put_json(b, "details", details);
    } else if (r->code >= 400) {
        member(b, &first, "status", "Failure");
    }
    ty_buf_printf(b, ",\"code\":%u}", r->code);
}

static void put_time(ty_buf *b, const char *key, struct timespec ts)
{
    char text[TY_TIME_FRAC_LEN];
    ty_time_format_frac(ts, 6, text, sizeof(text));
    ty_buf_printf(b, ",\"%s\":\"%s\"", key, text);
}

int audit_event_write(ty_buf *b, const audit_rec *r, audit_stage stage,
                      struct timespec stage_ts)
{
    bool received = stage == AUDIT_STAGE_REQUEST_RECEIVED;
    bool want_req = !received && r->d.level >= AUDIT_LEVEL_REQUEST;
    bool names = r->attr.resource_request && (strcmp(r->attr.verb, "create") == 0 ||
                                              strcmp(r->attr.verb, "update") == 0);
    json_t *req = NULL, *resp = NULL;
    meta_fields m = {{NULL}};
    bool first = true;
    size_t start = b->len;

    if (r->req_body && want_req)
        req = parse_body(r->req_body, r->req_len, r->req_yaml);
    if (names && r->req_body) {
        if (req)
            meta_from_json(req, &m);
        else if (r->req_yaml ||
                 scan_metadata(r->req_body, r->req_body + r->req_len, &m) < 0) {
            json_t *parsed = parse_body(r->req_body, r->req_len, r->req_yaml);
            for (int i = 0; i < 4; i++) {
                free(m.v[i]);
                m.v[i] = NULL;
            }
            meta_from_json(parsed, &m);
            json_decref(parsed);
        }
    }
    if (r->resp_body && !received)
        resp = json_loadb(r->resp_body, r->resp_len, 0, NULL);

    ty_buf_puts(b, "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\"");
    first = false;
    member(b, &first, "level", audit_level_name(r->d.level));
    member(b, &first, "auditID", r->id);
    member(b, &first, "stage", audit_stage_name(stage));
    ty_buf_puts(b, ",\"requestURI\":");
    put_str(b, r->request_uri ? r->request_uri : r->attr.path);
    ty_buf_puts(b, ",\"verb\":");
    put_str(b, r->attr.verb);
    ty_buf_puts(b, ",\"user\":");
    put_user(b, r->user);
    if (r->impersonated) {
        ty_buf_puts(b, ",\"impersonatedUser\":");
        put_user(b, r->impersonated);
    }
    if (r->source_ip[0]) {
        ty_buf_puts(b, ",\"sourceIPs\":[");
        put_str(b, r->source_ip);
        ty_buf_puts(b, "]");
    }
    member(b, &first, "userAgent", r->user_agent);
    if (r->attr.resource_request)
        put_object_ref(b, r, &m);
    if (!received)
        put_response_status(b, r, resp);
    if (want_req && req) {
        if (r->d.omit_managed_fields)
            strip_managed_fields(req);
        put_json(b, "requestObject", req);
    }
    if (!received && r->d.level >= AUDIT_LEVEL_REQUEST_RESPONSE && resp) {
        if (r->d.omit_managed_fields)
            strip_managed_fields(resp);
        put_json(b, "responseObject", resp);
    }
    put_time(b, "requestReceivedTimestamp", r->received);
    put_time(b, "stageTimestamp", stage_ts);
    /* authorization's verdict is not known yet when the request is received */
    first = true;
    if (r->authz && !received) {
        ty_buf_puts(b, ",\"annotations\":{");
        member(b, &first, "authorization.k8s.io/decision", r->authz > 0 ? "allow" : "forbid");
        ty_buf_puts(b, ",\"authorization.k8s.io/reason\":");
        put_str(b, r->authz_reason);
    }
    if (r->truncated && !received && r->d.level >= AUDIT_LEVEL_REQUEST) {
        ty_buf_puts(b, first ? ",\"annotations\":{" : "");
        member(b, &first, "audit.k8s.io/truncated", "true");
    }
    if (!first)
        ty_buf_puts(b, "}");
    ty_buf_puts(b, "}");
    for (int i = 0; i < 4; i++)
        free(m.v[i]);
    json_decref(req);
    json_decref(resp);
    /* ty_buf leaves itself as it was when memory runs out: a cut event
     * would not be JSON */
    if (!b->data || b->len == start || b->data[b->len - 1] != '}') {
        b->len = start;
        return -1;
    }
    return 0;
}

json_t *audit_event_json(const audit_rec *r, audit_stage stage, struct timespec stage_ts)
{
    ty_buf b = {0};
    json_t *v = NULL;
    if (audit_event_write(&b, r, stage, stage_ts) == 0)
        v = json_loadb(b.data, b.len, 0, NULL);
    ty_buf_free(&b);
    return v;
}
