/* audit_event.c - an audit_rec as kube-apiserver's audit.k8s.io/v1 Event,
 * members in its order (kind, apiVersion, level, auditID, stage,
 * requestURI, verb, user, impersonatedUser, sourceIPs, userAgent, objectRef,
 * responseStatus, requestObject, responseObject, requestReceivedTimestamp,
 * stageTimestamp, annotations), empty ones left out as its omitempty does.
 * Runs on the writer thread: the bodies are parsed here, off the request
 * path. */
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/yaml.h"
#include "server/audit.h"

/* s as a JSON string; bytes that are not UTF-8 become U+FFFD, as Go's
 * encoder writes them (a header may carry anything). */
static json_t *jstr(const char *s)
{
    json_t *v = json_string(s ? s : "");
    size_t n, j = 0;
    char *fixed;

    if (v)
        return v;
    n = strlen(s);
    if (!(fixed = malloc(n * 3 + 1)))
        return json_string("");
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = ((unsigned char)s[i + k] >> 6) == 2;
        if (ok) {
            memcpy(fixed + j, s + i, len);
            j += len;
            i += len;
        } else {
            memcpy(fixed + j, "\xef\xbf\xbd", 3);
            j += 3;
            i++;
        }
    }
    fixed[j] = '\0';
    v = json_string(fixed);
    free(fixed);
    return v ? v : json_string("");
}

static void set_str(json_t *o, const char *key, const char *s)
{
    if (s && *s)
        json_object_set_new(o, key, jstr(s));
}

static json_t *user_json(const ty_user *u)
{
    json_t *o = json_object();
    if (!u)
        return o; /* "user":{} for a request nobody authenticated */
    json_object_set_new(o, "username", jstr(u->name));
    set_str(o, "uid", u->uid);
    if (u->ngroups) {
        json_t *g = json_array();
        for (size_t i = 0; i < u->ngroups; i++)
            json_array_append_new(g, jstr(u->groups[i]));
        json_object_set_new(o, "groups", g);
    }
    return o;
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

static json_t *object_ref(const audit_rec *r, const json_t *req)
{
    const reqattr *a = &r->attr;
    const json_t *meta = NULL;
    json_t *o = json_object();

    /* As kube-apiserver's handlers complete it from the object a create or
     * an update sends: the name a create gives, the uid and version an
     * update names. */
    if (req && (strcmp(a->verb, "create") == 0 || strcmp(a->verb, "update") == 0))
        meta = json_object_get(req, "metadata");
    set_str(o, "resource", a->resource);
    set_str(o, "namespace", a->ns[0] ? a->ns : json_string_value(json_object_get(meta, "namespace")));
    set_str(o, "name", a->name[0] ? a->name : json_string_value(json_object_get(meta, "name")));
    set_str(o, "uid", json_string_value(json_object_get(meta, "uid")));
    set_str(o, "apiGroup", a->api_group);
    set_str(o, "apiVersion", a->api_version);
    set_str(o, "resourceVersion", json_string_value(json_object_get(meta, "resourceVersion")));
    set_str(o, "subresource", a->subresource);
    return o;
}

static json_t *response_status(const audit_rec *r, const json_t *resp)
{
    json_t *st = json_object();
    const char *kind = json_string_value(json_object_get(resp, "kind"));

    json_object_set_new(st, "metadata", json_object());
    /* A Status answered (every failure) is copied, as kube-apiserver does;
     * otherwise only the code. */
    if (kind && strcmp(kind, "Status") == 0) {
        set_str(st, "status", json_string_value(json_object_get(resp, "status")));
        set_str(st, "message", json_string_value(json_object_get(resp, "message")));
        set_str(st, "reason", json_string_value(json_object_get(resp, "reason")));
        json_t *details = json_object_get(resp, "details");
        if (json_is_object(details) && json_object_size(details))
            json_object_set(st, "details", details);
    } else if (r->code >= 400) {
        json_object_set_new(st, "status", json_string("Failure"));
    }
    json_object_set_new(st, "code", json_integer(r->code));
    return st;
}

json_t *audit_event_json(const audit_rec *r, audit_stage stage, struct timespec stage_ts)
{
    json_t *ev = json_object(), *req = NULL, *resp = NULL, *ann;
    char ts[TY_TIME_FRAC_LEN];
    bool received = stage == AUDIT_STAGE_REQUEST_RECEIVED;
    bool want_req = !received && r->d.level >= AUDIT_LEVEL_REQUEST;

    if (!ev)
        return NULL;
    if (r->req_body && (want_req || r->attr.resource_request))
        req = parse_body(r->req_body, r->req_len, r->req_yaml);
    if (r->resp_body && !received)
        resp = json_loadb(r->resp_body, r->resp_len, 0, NULL);

    json_object_set_new(ev, "kind", json_string("Event"));
    json_object_set_new(ev, "apiVersion", json_string("audit.k8s.io/v1"));
    json_object_set_new(ev, "level", json_string(audit_level_name(r->d.level)));
    json_object_set_new(ev, "auditID", jstr(r->id));
    json_object_set_new(ev, "stage", json_string(audit_stage_name(stage)));
    json_object_set_new(ev, "requestURI", jstr(r->request_uri ? r->request_uri : r->attr.path));
    json_object_set_new(ev, "verb", jstr(r->attr.verb));
    json_object_set_new(ev, "user", user_json(r->user));
    if (r->impersonated)
        json_object_set_new(ev, "impersonatedUser", user_json(r->impersonated));
    if (r->source_ip[0]) {
        json_t *ips = json_array();
        json_array_append_new(ips, jstr(r->source_ip));
        json_object_set_new(ev, "sourceIPs", ips);
    }
    set_str(ev, "userAgent", r->user_agent);
    if (r->attr.resource_request)
        json_object_set_new(ev, "objectRef", object_ref(r, req));
    if (!received)
        json_object_set_new(ev, "responseStatus", response_status(r, resp));
    if (want_req && req) {
        if (r->d.omit_managed_fields)
            strip_managed_fields(req);
        json_object_set(ev, "requestObject", req);
    }
    if (!received && r->d.level >= AUDIT_LEVEL_REQUEST_RESPONSE && resp) {
        if (r->d.omit_managed_fields)
            strip_managed_fields(resp);
        json_object_set(ev, "responseObject", resp);
    }
    ty_time_format_frac(r->received, 6, ts, sizeof(ts));
    json_object_set_new(ev, "requestReceivedTimestamp", json_string(ts));
    ty_time_format_frac(stage_ts, 6, ts, sizeof(ts));
    json_object_set_new(ev, "stageTimestamp", json_string(ts));
    ann = json_object();
    /* authorization's verdict is not known yet when the request is received */
    if (r->authz && !received) {
        json_object_set_new(ann, "authorization.k8s.io/decision",
                            json_string(r->authz > 0 ? "allow" : "forbid"));
        json_object_set_new(ann, "authorization.k8s.io/reason", jstr(r->authz_reason));
    }
    if (r->truncated && !received && r->d.level >= AUDIT_LEVEL_REQUEST)
        json_object_set_new(ann, "audit.k8s.io/truncated", json_string("true"));
    if (json_object_size(ann))
        json_object_set_new(ev, "annotations", ann);
    else
        json_decref(ann);
    json_decref(req);
    json_decref(resp);
    return ev;
}
