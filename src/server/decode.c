/* decode.c - request bodies: JSON or YAML into a JSON tree, field validation
 * (Strict / Warn / Ignore) and pruning of unknown fields. */
#include <stdlib.h>
#include <string.h>

#include "base/jsonin.h"
#include "model/yaml.h"
#include "server/decode.h"
#include "server/protobuf.h"

int decode_field_validation(http_req *r, field_validation *out, ty_error *err)
{
    const char *v = http_query(r, "fieldValidation");
    if (!v || !*v || strcmp(v, "Warn") == 0)
        *out = FV_WARN;
    else if (strcmp(v, "Strict") == 0)
        *out = FV_STRICT;
    else if (strcmp(v, "Ignore") == 0)
        *out = FV_IGNORE;
    else
        return ty_seterr(err, TY_EBADREQUEST,
                         "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", "
                         "got \"%s\"",
                         v);
    return 0;
}

static bool is_yaml(const char *ctype)
{
    return ctype && (strncmp(ctype, "application/yaml", 16) == 0 ||
                     strncmp(ctype, "application/apply-patch+yaml", 28) == 0 ||
                     strncmp(ctype, "text/yaml", 9) == 0);
}

json_t *decode_body(http_req *r, field_validation fv, ty_error *err)
{
    json_error_t jerr;
    json_t *v;

    if (!r->body || r->body_len == 0) {
        ty_seterr(err, TY_EBADREQUEST, "the request body is empty");
        return NULL;
    }
    if (r->content_type && strstr(r->content_type, "protobuf"))
        return pb_decode_object((const unsigned char *)r->body, r->body_len, err);
    if (is_yaml(r->content_type))
        return yaml_load_one(r->body, r->body_len, err);
    v = ty_json_load(r->body, r->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (v)
        return v;
    if (strstr(jerr.text, "duplicate object key")) {
        /* kube-apiserver keeps the last value unless asked to be strict. */
        if (fv == FV_STRICT) {
            ty_seterr(err, TY_EBADREQUEST, "strict decoding error: %s (line %d, column %d)",
                      jerr.text, jerr.line, jerr.column);
            return NULL;
        }
        if (fv == FV_WARN)
            http_add_warning(r, jerr.text);
        v = ty_json_load(r->body, r->body_len, 0, &jerr);
        if (v)
            return v;
    }
    ty_seterr(err, TY_EBADREQUEST,
              "error decoding request body: json parse error at line %d, column %d: %s",
              jerr.line, jerr.column, jerr.text);
    return NULL;
}

/* Removes the value at a path such as spec.tasks[0].replicaz. */
static void prune_path(json_t *obj, const char *path)
{
    char buf[512];
    char *p, *key;
    json_t *cur = obj;

    snprintf(buf, sizeof(buf), "%s", path);
    p = buf;
    for (;;) {
        key = p;
        size_t n = strcspn(p, ".[");
        char sep = p[n];
        p[n] = '\0';
        if (sep == '\0') {
            if (json_is_object(cur))
                json_object_del(cur, key);
            return;
        }
        if (*key)
            cur = json_object_get(cur, key);
        p += n + 1;
        while (sep == '[' && cur) {
            long idx = strtol(p, &p, 10);
            cur = json_array_get(cur, (size_t)idx);
            if (*p == ']')
                p++;
            if (*p == '.') {
                p++;
                break;
            }
            if (*p == '[') {
                p++;
                continue;
            }
            return; /* path ends at an array element: nothing to prune */
        }
        if (!cur)
            return;
    }
}

int decode_check_fields(http_req *r, const api_resource *res, json_t *obj,
                        field_validation fv, ty_error *err)
{
    ty_error unknown;
    size_t i;
    json_t *c;

    if (fv == FV_IGNORE && !res->schema)
        return 0;
    ty_error_init(&unknown);
    if (api_check_unknown_fields(res, obj, &unknown) == 0) {
        ty_error_clear(&unknown);
        return 0;
    }
    if (fv == FV_STRICT) {
        char msg[900];
        size_t off = 0;
        off += (size_t)snprintf(msg, sizeof(msg),
                                "%s in version \"%s\" cannot be handled as a %s: strict "
                                "decoding error: ",
                                res->kind, res->version, res->kind);
        json_array_foreach(unknown.causes, i, c)
        {
            if (off >= sizeof(msg) - 1)
                break;
            off += (size_t)snprintf(msg + off, sizeof(msg) - off, "%s%s", i ? ", " : "",
                                    json_string_value(json_object_get(c, "message")));
        }
        ty_seterr(err, TY_EBADREQUEST, "%s", msg);
        ty_error_clear(&unknown);
        return -1;
    }
    json_array_foreach(unknown.causes, i, c)
    {
        if (fv == FV_WARN)
            http_add_warning(r, json_string_value(json_object_get(c, "message")));
        prune_path(obj, json_string_value(json_object_get(c, "field")));
    }
    ty_error_clear(&unknown);
    return 0;
}

void decode_invalid_message(ty_error *err, const api_resource *res, const char *name)
{
    char qk[160], msg[1000];
    size_t off, i;
    json_t *c;
    size_t n = ty_error_ncauses(err);

    if (err->code != TY_EINVALID || n == 0)
        return;
    api_qualified_kind(res, qk, sizeof(qk));
    off = (size_t)snprintf(msg, sizeof(msg), "%s \"%s\" is invalid: %s", qk, name ? name : "",
                           n > 1 ? "[" : "");
    json_array_foreach(err->causes, i, c)
    {
        const char *f = json_string_value(json_object_get(c, "field"));
        const char *m = json_string_value(json_object_get(c, "message"));
        if (off >= sizeof(msg) - 2)
            break;
        off += (size_t)snprintf(msg + off, sizeof(msg) - off, "%s%s%s%s", i ? ", " : "",
                                f && *f ? f : "", f && *f ? ": " : "", m ? m : "");
    }
    if (n > 1 && off < sizeof(msg) - 2)
        snprintf(msg + off, sizeof(msg) - off, "]");
    snprintf(err->text, sizeof(err->text), "%s", msg);
}
