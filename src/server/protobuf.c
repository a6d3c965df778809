/* protobuf.c - a table-driven decoder for the protobuf messages of a few
 * built-in Kubernetes kinds (field numbers from k8s.io/api generated.proto).
 *
 * Go's generated marshallers write every non-pointer field, empty or not; the
 * JSON encoding omits empty ones. The decoder drops empty strings, zeros and
 * empty collections (unless a field says to keep them) so the result matches
 * what kubectl would have sent as JSON. */
#include "server/protobuf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>


#define PB_MAX_DEPTH 16

typedef enum {
    PB_STRING, PB_BYTES,    /* bytes become base64, as JSON carries []byte */
    PB_INT, PB_BOOL,
    PB_MESSAGE,             /* nested message, sub-table */
    PB_MAP_STR,             /* map<string,string> */
    PB_MAP_BYTES,           /* map<string,bytes> */
    PB_MAP_QUANTITY,        /* map<string,resource.Quantity>: quantity strings */
    PB_REP_STRING,
    PB_REP_MESSAGE,
    PB_INT_OR_STRING,       /* intstr.IntOrString */
} pb_type;

typedef struct pb_field pb_field;
typedef struct pb_msg {
    const pb_field *fields;
} pb_msg;

struct pb_field {
    int num;
    const char *json;
    pb_type type;
    const pb_msg *sub;
    int keep_zero;          /* emit 0 / "" / false too */
};

#define F(n, j, t) {n, j, t, NULL, 0}
#define M(n, j, t, s) {n, j, t, s, 0}
#define END {0, NULL, PB_STRING, NULL, 0}

static const pb_field owner_ref_f[] = {F(5, "apiVersion", PB_STRING), F(1, "kind", PB_STRING),
                                       F(3, "name", PB_STRING), F(4, "uid", PB_STRING),
                                       F(6, "controller", PB_BOOL),
                                       F(7, "blockOwnerDeletion", PB_BOOL), END};
static const pb_msg owner_ref = {owner_ref_f};
static const pb_field object_meta_f[] = {
    F(1, "name", PB_STRING),           F(2, "generateName", PB_STRING),
    F(3, "namespace", PB_STRING),      F(7, "generation", PB_INT),
    F(11, "labels", PB_MAP_STR),       F(12, "annotations", PB_MAP_STR),
    M(13, "ownerReferences", PB_REP_MESSAGE, &owner_ref),
    F(14, "finalizers", PB_REP_STRING), END};
static const pb_msg object_meta = {object_meta_f};

static const pb_field configmap_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                       F(2, "data", PB_MAP_STR),
                                       F(3, "binaryData", PB_MAP_BYTES),
                                       F(4, "immutable", PB_BOOL), END};
static const pb_field secret_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                    F(2, "data", PB_MAP_BYTES), F(3, "type", PB_STRING),
                                    F(4, "stringData", PB_MAP_STR), F(5, "immutable", PB_BOOL),
                                    END};
static const pb_field ns_spec_f[] = {F(1, "finalizers", PB_REP_STRING), END};
static const pb_msg ns_spec = {ns_spec_f};
static const pb_field namespace_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                       M(2, "spec", PB_MESSAGE, &ns_spec), END};
static const pb_field priorityclass_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                           {2, "value", PB_INT, NULL, 1},
                                           F(3, "globalDefault", PB_BOOL),
                                           F(4, "description", PB_STRING),
                                           F(5, "preemptionPolicy", PB_STRING), END};
static const pb_field service_port_f[] = {F(1, "name", PB_STRING), F(2, "protocol", PB_STRING),
                                          F(3, "port", PB_INT),
                                          F(4, "targetPort", PB_INT_OR_STRING),
                                          F(5, "nodePort", PB_INT), F(6, "appProtocol", PB_STRING),
                                          END};
static const pb_msg service_port = {service_port_f};
static const pb_field service_spec_f[] = {M(1, "ports", PB_REP_MESSAGE, &service_port),
                                          F(2, "selector", PB_MAP_STR),
                                          F(3, "clusterIP", PB_STRING), F(4, "type", PB_STRING),
                                          F(5, "externalIPs", PB_REP_STRING),
                                          F(7, "sessionAffinity", PB_STRING),
                                          F(11, "externalName", PB_STRING),
                                          F(18, "clusterIPs", PB_REP_STRING), END};
static const pb_msg service_spec = {service_spec_f};
static const pb_field service_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                     M(2, "spec", PB_MESSAGE, &service_spec), END};

/* rbac.authorization.k8s.io/v1 (`kubectl create role|clusterrole|rolebinding|
 * clusterrolebinding`) */
static const pb_field selector_req_f[] = {F(1, "key", PB_STRING), F(2, "operator", PB_STRING),
                                          F(3, "values", PB_REP_STRING), END};
static const pb_msg selector_req = {selector_req_f};
static const pb_field label_selector_f[] = {
    F(1, "matchLabels", PB_MAP_STR), M(2, "matchExpressions", PB_REP_MESSAGE, &selector_req),
    END};
static const pb_msg label_selector = {label_selector_f};
static const pb_field policy_rule_f[] = {
    F(1, "verbs", PB_REP_STRING), F(2, "apiGroups", PB_REP_STRING),
    F(3, "resources", PB_REP_STRING), F(4, "resourceNames", PB_REP_STRING),
    F(5, "nonResourceURLs", PB_REP_STRING), END};
static const pb_msg policy_rule = {policy_rule_f};
static const pb_field aggregation_f[] = {
    M(1, "clusterRoleSelectors", PB_REP_MESSAGE, &label_selector), END};
static const pb_msg aggregation = {aggregation_f};
static const pb_field role_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                  M(2, "rules", PB_REP_MESSAGE, &policy_rule), END};
static const pb_field clusterrole_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                         M(2, "rules", PB_REP_MESSAGE, &policy_rule),
                                         M(3, "aggregationRule", PB_MESSAGE, &aggregation),
                                         END};
static const pb_field subject_f[] = {F(1, "kind", PB_STRING), F(2, "apiGroup", PB_STRING),
                                     F(3, "name", PB_STRING), F(4, "namespace", PB_STRING),
                                     END};
static const pb_msg subject = {subject_f};
static const pb_field roleref_f[] = {F(1, "apiGroup", PB_STRING), F(2, "kind", PB_STRING),
                                     F(3, "name", PB_STRING), END};
static const pb_msg roleref = {roleref_f};
static const pb_field binding_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                     M(2, "subjects", PB_REP_MESSAGE, &subject),
                                     M(3, "roleRef", PB_MESSAGE, &roleref), END};
/* authorization.k8s.io/v1 and authentication.k8s.io/v1 reviews (`kubectl
 * auth can-i`, `kubectl auth whoami`) */
static const pb_field resource_attr_f[] = {
    F(1, "namespace", PB_STRING), F(2, "verb", PB_STRING), F(3, "group", PB_STRING),
    F(4, "version", PB_STRING), F(5, "resource", PB_STRING), F(6, "subresource", PB_STRING),
    F(7, "name", PB_STRING), END};
static const pb_msg resource_attr = {resource_attr_f};
static const pb_field nonresource_attr_f[] = {F(1, "path", PB_STRING), F(2, "verb", PB_STRING),
                                              END};
static const pb_msg nonresource_attr = {nonresource_attr_f};
static const pb_field ssar_spec_f[] = {
    M(1, "resourceAttributes", PB_MESSAGE, &resource_attr),
    M(2, "nonResourceAttributes", PB_MESSAGE, &nonresource_attr), END};
static const pb_msg ssar_spec = {ssar_spec_f};
static const pb_field sar_spec_f[] = {
    M(1, "resourceAttributes", PB_MESSAGE, &resource_attr),
    M(2, "nonResourceAttributes", PB_MESSAGE, &nonresource_attr), F(3, "user", PB_STRING),
    F(4, "groups", PB_REP_STRING), F(6, "uid", PB_STRING), END};
static const pb_msg sar_spec = {sar_spec_f};
static const pb_field ssrr_spec_f[] = {F(1, "namespace", PB_STRING), END};
static const pb_msg ssrr_spec = {ssrr_spec_f};
static const pb_field ssar_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                  M(2, "spec", PB_MESSAGE, &ssar_spec), END};
static const pb_field sar_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                 M(2, "spec", PB_MESSAGE, &sar_spec), END};
static const pb_field ssrr_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                  M(2, "spec", PB_MESSAGE, &ssrr_spec), END};
static const pb_field ssr_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta), END};
static const pb_field scope_req_f[] = {F(1, "scopeName", PB_STRING), F(2, "operator", PB_STRING),
                                       F(3, "values", PB_REP_STRING), END};
static const pb_msg scope_req = {scope_req_f};
static const pb_field scope_selector_f[] = {M(1, "matchExpressions", PB_REP_MESSAGE, &scope_req),
                                            END};
static const pb_msg scope_selector = {scope_selector_f};
static const pb_field quota_spec_f[] = {F(1, "hard", PB_MAP_QUANTITY),
                                        F(2, "scopes", PB_REP_STRING),
                                        M(3, "scopeSelector", PB_MESSAGE, &scope_selector), END};
static const pb_msg quota_spec = {quota_spec_f};
static const pb_field quota_f[] = {M(1, "metadata", PB_MESSAGE, &object_meta),
                                   M(2, "spec", PB_MESSAGE, &quota_spec), END};

static const struct {
    const char *api_version, *kind;
    pb_msg msg;
} known[] = {
    {"v1", "ConfigMap", {configmap_f}},
    {"v1", "Secret", {secret_f}},
    {"v1", "Namespace", {namespace_f}},
    {"v1", "Service", {service_f}},
    {"scheduling.k8s.io/v1", "PriorityClass", {priorityclass_f}},
    {"rbac.authorization.k8s.io/v1", "Role", {role_f}},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", {clusterrole_f}},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", {binding_f}},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", {binding_f}},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", {ssar_f}},
    {"authorization.k8s.io/v1", "SubjectAccessReview", {sar_f}},
    {"authorization.k8s.io/v1", "LocalSubjectAccessReview", {sar_f}},
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", {ssrr_f}},
    {"authentication.k8s.io/v1", "SelfSubjectReview", {ssr_f}},
    {"v1", "ResourceQuota", {quota_f}},
};

typedef struct pb_reader {
    const unsigned char *p, *end;
} pb_reader;

static int read_varint(pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return -1;
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Reads one field's key and, for length-delimited fields, its bytes. */
static int read_field(pb_reader *r, int *num, int *wire, uint64_t *varint, pb_reader *sub)
{
    uint64_t key, len;
    if (read_varint(r, &key) < 0)
        return -1;
    *num = (int)(key >> 3);
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0:
        return read_varint(r, varint);
    case 1:
        if (r->end - r->p < 8)
            return -1;
        r->p += 8;
        return 0;
    case 2:
        if (read_varint(r, &len) < 0 || len > (uint64_t)(r->end - r->p))
            return -1;
        sub->p = r->p;
        sub->end = r->p + len;
        r->p += len;
        return 0;
    case 5:
        if (r->end - r->p < 4)
            return -1;
        r->p += 4;
        return 0;
    default:
        return -1;
    }
}

static json_t *base64(const unsigned char *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t olen = 4 * ((n + 2) / 3);
    char *out = malloc(olen + 1), *o = out;
    json_t *s;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *o++ = tab[(v >> 18) & 63];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = '\0';
    s = json_string(out);
    free(out);
    return s;
}

static json_t *str_of(pb_reader *s)
{
    return json_stringn((const char *)s->p, (size_t)(s->end - s->p));
}

static int decode_msg(pb_reader *r, const pb_msg *m, json_t *out, int depth);

/* A resource.Quantity message: its string (field 1). */
static json_t *quantity_of(pb_reader *s)
{
    json_t *v = NULL;
    while (s->p < s->end) {
        int num, wire;
        uint64_t vi;
        pb_reader f;
        if (read_field(s, &num, &wire, &vi, &f) < 0) {
            json_decref(v);
            return NULL;
        }
        if (num == 1 && wire == 2) {
            json_decref(v);
            v = str_of(&f);
        }
    }
    return v ? v : json_string("0");
}

static int decode_map_entry(pb_reader *s, json_t *map, pb_type type)
{
    bool bytes = type == PB_MAP_BYTES;
    json_t *k = NULL, *v = NULL;
    while (s->p < s->end) {
        int num, wire;
        uint64_t vi;
        pb_reader f;
        if (read_field(s, &num, &wire, &vi, &f) < 0 || wire != 2)
            goto bad;
        if (num == 1) {
            json_decref(k);
            k = str_of(&f);
        } else if (num == 2) {
            json_decref(v);
            if (!(v = bytes ? base64(f.p, (size_t)(f.end - f.p))
                      : type == PB_MAP_QUANTITY ? quantity_of(&f) : str_of(&f)))
                goto bad;
        }
    }
    /* a key with a NUL would be cut there: refused, as the JSON and YAML
     * bodies' are */
    if (!k || strlen(json_string_value(k)) != json_string_length(k))
        goto bad;
    json_object_set_new(map, json_string_value(k), v ? v : json_string(""));
    json_decref(k);
    return 0;
bad:
    json_decref(k);
    json_decref(v);
    return -1;
}

static json_t *decode_int_or_string(pb_reader *s)
{
    uint64_t type = 0, iv = 0;
    json_t *sv = NULL;
    while (s->p < s->end) {
        int num, wire;
        uint64_t vi;
        pb_reader f;
        if (read_field(s, &num, &wire, &vi, &f) < 0) {
            json_decref(sv); /* the string of a field before it */
            return NULL;
        }
        if (num == 1 && wire == 0)
            type = vi;
        else if (num == 2 && wire == 0)
            iv = vi;
        else if (num == 3 && wire == 2) {
            json_decref(sv);
            sv = str_of(&f);
        }
    }
    if (type == 1)
        return sv ? sv : json_string("");
    json_decref(sv);
    return json_integer((json_int_t)(int32_t)iv);
}

static const pb_field *find_field(const pb_msg *m, int num)
{
    for (const pb_field *f = m->fields; f->json; f++)
        if (f->num == num)
            return f;
    return NULL;
}

static json_t *container_for(json_t *out, const pb_field *f)
{
    json_t *c = json_object_get(out, f->json);
    if (!c) {
        bool is_map = f->type == PB_MAP_STR || f->type == PB_MAP_BYTES ||
                      f->type == PB_MAP_QUANTITY;
        c = is_map ? json_object() : json_array();
        json_object_set_new(out, f->json, c);
    }
    return c;
}

static int decode_field(const pb_field *f, int wire, uint64_t vi, pb_reader *s, json_t *out,
                        int depth)
{
    json_t *v = NULL;
    switch (f->type) {
    case PB_INT:
        if (wire != 0)
            return -1;
        if (vi || f->keep_zero)
            v = json_integer((json_int_t)vi);
        break;
    case PB_BOOL:
        if (wire != 0)
            return -1;
        if (vi || f->keep_zero)
            v = json_boolean(vi != 0);
        break;
    case PB_STRING:
    case PB_BYTES:
        if (wire != 2)
            return -1;
        if (s->end > s->p || f->keep_zero) {
            v = f->type == PB_STRING ? str_of(s) : base64(s->p, (size_t)(s->end - s->p));
            if (!v)
                return -1; /* a string that is not UTF-8: refused, not dropped */
        }
        break;
    case PB_INT_OR_STRING:
        if (wire != 2 || !(v = decode_int_or_string(s)))
            return -1;
        break;
    case PB_MESSAGE: {
        json_t *sub = json_object_get(out, f->json);
        if (wire != 2)
            return -1;
        if (!sub) {
            sub = json_object();
            json_object_set_new(out, f->json, sub);
        }
        return decode_msg(s, f->sub, sub, depth + 1);
    }
    case PB_MAP_STR:
    case PB_MAP_BYTES:
    case PB_MAP_QUANTITY:
        if (wire != 2)
            return -1;
        return decode_map_entry(s, container_for(out, f), f->type);
    case PB_REP_STRING:
        if (wire != 2 || !(v = str_of(s)))
            return -1;
        return json_array_append_new(container_for(out, f), v);
    case PB_REP_MESSAGE: {
        json_t *item = json_object();
        if (wire != 2 || decode_msg(s, f->sub, item, depth + 1) < 0) {
            json_decref(item);
            return -1;
        }
        return json_array_append_new(container_for(out, f), item);
    }
    }
    if (v)
        json_object_set_new(out, f->json, v);
    return 0;
}

static int decode_msg(pb_reader *r, const pb_msg *m, json_t *out, int depth)
{
    if (depth > PB_MAX_DEPTH)
        return -1;
    while (r->p < r->end) {
        int num, wire;
        uint64_t vi = 0;
        pb_reader s = {0};
        const pb_field *f;
        if (read_field(r, &num, &wire, &vi, &s) < 0)
            return -1;
        f = find_field(m, num);
        if (f && decode_field(f, wire, vi, &s, out, depth) < 0)
            return -1;
    }
    return 0;
}

json_t *pb_decode_object(const unsigned char *buf, size_t len, ty_error *err)
{
    pb_reader r = {buf + 4, buf + len}, raw = {0}, tm = {0};
    char av[128] = "", kind[128] = "";

    if (len < 4 || memcmp(buf, "k8s\0", 4) != 0) {
        ty_seterr(err, TY_EBADREQUEST, "protobuf body without the k8s envelope");
        return NULL;
    }
    while (r.p < r.end) {
        int num, wire;
        uint64_t vi;
        pb_reader s;
        if (read_field(&r, &num, &wire, &vi, &s) < 0)
            goto malformed;
        if (num == 1 && wire == 2)
            tm = s;
        else if (num == 2 && wire == 2)
            raw = s;
    }
    while (tm.p && tm.p < tm.end) {
        int num, wire;
        uint64_t vi;
        pb_reader s;
        if (read_field(&tm, &num, &wire, &vi, &s) < 0 || wire != 2)
            goto malformed;
        snprintf(num == 1 ? av : kind, sizeof(av), "%.*s", (int)(s.end - s.p),
                 (const char *)s.p);
    }
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (strcmp(known[i].api_version, av) || strcmp(known[i].kind, kind))
            continue;
        json_t *obj = json_pack("{s:s, s:s}", "apiVersion", av, "kind", kind);
        if (raw.p && decode_msg(&raw, &known[i].msg, obj, 0) < 0) {
            json_decref(obj);
            goto malformed;
        }
        return obj;
    }
    ty_seterr(err, TY_EMEDIATYPE,
              "protobuf bodies are accepted for ConfigMap, Secret, Namespace, Service, "
              "PriorityClass, ResourceQuota, the RBAC kinds and the access reviews only, not "
              "%s %s: send application/json",
              av, kind);
    return NULL;
malformed:
    ty_seterr(err, TY_EBADREQUEST, "malformed protobuf body");
    return NULL;
}
