/* meta.c - the name, label and annotation rules of Kubernetes, and causes
 * worded as kube-apiserver words them. */
#include "api/meta.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MSG_LABEL_FMT "a lowercase RFC 1123 label must consist of lower case alphanumeric " \
    "characters or '-', and must start and end with an alphanumeric character (e.g. " \
    "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define MSG_SUBDOMAIN_FMT "a lowercase RFC 1123 subdomain must consist of lower case " \
    "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric " \
    "character (e.g. 'example.com', regex used for validation is " \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define MSG_DNS1035_FMT "a DNS-1035 label must consist of lower case alphanumeric " \
    "characters or '-', start with an alphabetic character, and end with an alphanumeric " \
    "character (e.g. 'my-name',  or 'abc-123', regex used for validation is " \
    "'[a-z]([-a-z0-9]*[a-z0-9])?')"
#define MSG_QNAME_FMT "name part must consist of alphanumeric characters, '-', '_' or '.', " \
    "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  " \
    "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define MSG_LABEL_VALUE_FMT "a valid label must be an empty string or consist of " \
    "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " \
    "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define MSG_CONFIG_KEY_FMT "a valid config key must consist of alphanumeric characters, " \
    "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for " \
    "validation is '[-._a-zA-Z0-9]+')"

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n), ignoring length limits. */
static bool label_format(const char *s, size_t n)
{
    if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

static bool subdomain_format(const char *s)
{
    const char *p = s;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!label_format(p, n))
            return false;
        if (!dot)
            return true;
        p = dot + 1;
    }
}

bool meta_is_dns1123_label(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n <= META_DNS1123_LABEL_MAX && label_format(s, n);
}

bool meta_is_dns1123_subdomain(const char *s)
{
    return s && strlen(s) <= META_DNS1123_SUBDOMAIN_MAX && subdomain_format(s);
}

static bool dns1035_format(const char *s)
{
    return s[0] >= 'a' && s[0] <= 'z' && label_format(s, strlen(s));
}

bool meta_is_dns1035_label(const char *s)
{
    return s && strlen(s) <= META_DNS1123_LABEL_MAX && dns1035_format(s);
}

int meta_check_dns1123_label(const char *field, const char *value, ty_error *err)
{
    int n = 0;
    if (strlen(value) > META_DNS1123_LABEL_MAX) {
        meta_invalid_str(err, field, value, "must be no more than 63 characters");
        n++;
    }
    if (!label_format(value, strlen(value))) {
        meta_invalid_str(err, field, value, MSG_LABEL_FMT);
        n++;
    }
    return n;
}

int meta_check_dns1123_subdomain(const char *field, const char *value, ty_error *err)
{
    int n = 0;
    if (strlen(value) > META_DNS1123_SUBDOMAIN_MAX) {
        meta_invalid_str(err, field, value, "must be no more than 253 characters");
        n++;
    }
    if (!subdomain_format(value)) {
        meta_invalid_str(err, field, value, MSG_SUBDOMAIN_FMT);
        n++;
    }
    return n;
}

int meta_check_dns1035_label(const char *field, const char *value, ty_error *err)
{
    int n = 0;
    if (strlen(value) > META_DNS1123_LABEL_MAX) {
        meta_invalid_str(err, field, value, "must be no more than 63 characters");
        n++;
    }
    if (!dns1035_format(value)) {
        meta_invalid_str(err, field, value, MSG_DNS1035_FMT);
        n++;
    }
    return n;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool qname_part_format(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && !strchr("-_.", s[i]))
            return false;
    return true;
}

int meta_check_qualified_name(const char *field, const char *value, ty_error *err)
{
    const char *slash = strchr(value, '/');
    const char *name = slash ? slash + 1 : value;
    int n = 0;

    if (slash && strchr(name, '/')) {
        meta_invalid_str(err, field, value, "a qualified name must consist of alphanumeric "
                         "characters, '-', '_' or '.', and must start and end with an "
                         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                         "'123-abc', regex used for validation is "
                         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                         "subdomain prefix and '/' (e.g. 'example.com/MyName')");
        return 1;
    }
    if (slash) {
        size_t plen = (size_t)(slash - value);
        char prefix[META_DNS1123_SUBDOMAIN_MAX + 2];
        if (plen == 0) {
            meta_invalid_str(err, field, value, "prefix part must be non-empty");
            n++;
        } else if (plen > META_DNS1123_SUBDOMAIN_MAX) {
            meta_invalid_str(err, field, value, "prefix part must be no more than 253 characters");
            n++;
        } else {
            memcpy(prefix, value, plen);
            prefix[plen] = '\0';
            if (!subdomain_format(prefix)) {
                meta_invalid_str(err, field, value, "prefix part " MSG_SUBDOMAIN_FMT);
                n++;
            }
        }
    }
    if (*name == '\0') {
        meta_invalid_str(err, field, value, "name part must be non-empty");
        return n + 1;
    }
    if (strlen(name) > META_DNS1123_LABEL_MAX) {
        meta_invalid_str(err, field, value, "name part must be no more than 63 characters");
        n++;
    }
    if (!qname_part_format(name, strlen(name))) {
        meta_invalid_str(err, field, value, MSG_QNAME_FMT);
        n++;
    }
    return n;
}

static int check_label_value(const char *field, const char *value, ty_error *err)
{
    int n = 0;
    if (strlen(value) > META_DNS1123_LABEL_MAX) {
        meta_invalid_str(err, field, value, "must be no more than 63 characters");
        n++;
    }
    if (*value && !qname_part_format(value, strlen(value))) {
        meta_invalid_str(err, field, value, MSG_LABEL_VALUE_FMT);
        n++;
    }
    return n;
}

int meta_check_labels(const char *field, const json_t *labels, ty_error *err)
{
    const char *key;
    json_t *val;
    int n = 0;

    if (!labels || json_is_null(labels))
        return 0;
    if (!json_is_object(labels)) {
        meta_invalid(err, field, labels, "must be a map of string keys to string values");
        return 1;
    }
    json_object_foreach((json_t *)labels, key, val) {
        n += meta_check_qualified_name(field, key, err);
        if (!json_is_string(val)) {
            meta_invalid(err, field, val, "label values must be strings");
            n++;
            continue;
        }
        n += check_label_value(field, json_string_value(val), err);
    }
    return n;
}

int meta_check_selector_map(const char *field, const json_t *map, ty_error *err)
{
    return meta_check_labels(field, map, err);
}

int meta_check_annotations(const char *field, const json_t *annotations, ty_error *err)
{
    const char *key;
    json_t *val;
    size_t total = 0;
    int n = 0;

    if (!annotations || json_is_null(annotations))
        return 0;
    if (!json_is_object(annotations)) {
        meta_invalid(err, field, annotations, "must be a map of string keys to string values");
        return 1;
    }
    json_object_foreach((json_t *)annotations, key, val) {
        char lower[512];
        size_t i;
        for (i = 0; key[i] && i < sizeof(lower) - 1; i++)
            lower[i] = (char)tolower((unsigned char)key[i]);
        lower[i] = '\0';
        n += meta_check_qualified_name(field, lower, err);
        if (!json_is_string(val)) {
            meta_invalid(err, field, val, "annotation values must be strings");
            n++;
            continue;
        }
        /* The TrainJob controller's copy of the runtime is the server's, not
         * the user's to budget for (upstream keeps it as a JobSet): counted,
         * it could take a job past the limit after its create, and every
         * later update of the user's would be refused. */
        if (strcmp(key, META_ANN_RUNTIME_SNAPSHOT) != 0)
            total += strlen(key) + json_string_length(val);
    }
    if (total > META_ANNOTATIONS_MAX) {
        meta_too_long(err, field, META_ANNOTATIONS_MAX);
        n++;
    }
    return n;
}

int meta_check_config_key(const char *field, const char *key, ty_error *err)
{
    int n = 0;
    size_t len = strlen(key);
    bool ok = len > 0;

    for (size_t i = 0; i < len; i++)
        if (!is_alnum(key[i]) && !strchr("-._", key[i]))
            ok = false;
    if (len > META_DNS1123_SUBDOMAIN_MAX) {
        meta_invalid_str(err, field, key, "must be no more than 253 characters");
        n++;
    }
    if (!ok) {
        meta_invalid_str(err, field, key, MSG_CONFIG_KEY_FMT);
        n++;
    }
    if (strcmp(key, ".") == 0) {
        meta_invalid_str(err, field, key, "must not be '.'");
        n++;
    } else if (strcmp(key, "..") == 0) {
        meta_invalid_str(err, field, key, "must not be '..'");
        n++;
    } else if (strncmp(key, "..", 2) == 0) {
        meta_invalid_str(err, field, key, "must not start with '..'");
        n++;
    }
    return n;
}

void meta_value_text(const json_t *value, char *buf, size_t len)
{
    char *s;

    if (!value || json_is_null(value)) {
        snprintf(buf, len, "null");
        return;
    }
    if (json_is_object(value) || json_is_array(value)) {
        snprintf(buf, len, "\"%s\"", json_is_object(value) ? "object" : "array");
        return;
    }
    s = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, len, "%s", s ? s : "null");
    free(s);
}

static void add_vcause(ty_error *err, const char *reason, const char *field,
                       const char *prefix, const char *fmt, va_list ap)
{
    char detail[400];
    vsnprintf(detail, sizeof(detail), fmt, ap);
    ty_error_add_cause(err, reason, field, "%s%s", prefix, detail);
}

void meta_invalid(ty_error *err, const char *field, const json_t *value, const char *fmt, ...)
{
    char text[120], prefix[160];
    va_list ap;

    meta_value_text(value, text, sizeof(text));
    snprintf(prefix, sizeof(prefix), "Invalid value: %s: ", text);
    va_start(ap, fmt);
    add_vcause(err, "FieldValueInvalid", field, prefix, fmt, ap);
    va_end(ap);
}

void meta_invalid_str(ty_error *err, const char *field, const char *value, const char *fmt, ...)
{
    char text[120], prefix[160];
    json_t *v = json_string(value);
    va_list ap;

    meta_value_text(v ? v : json_null(), text, sizeof(text));
    json_decref(v);
    snprintf(prefix, sizeof(prefix), "Invalid value: %s: ", text);
    va_start(ap, fmt);
    add_vcause(err, "FieldValueInvalid", field, prefix, fmt, ap);
    va_end(ap);
}

void meta_invalid_int(ty_error *err, const char *field, long long value, const char *fmt, ...)
{
    char prefix[80];
    va_list ap;

    snprintf(prefix, sizeof(prefix), "Invalid value: %lld: ", value);
    va_start(ap, fmt);
    add_vcause(err, "FieldValueInvalid", field, prefix, fmt, ap);
    va_end(ap);
}

void meta_required(ty_error *err, const char *field, const char *detail)
{
    if (detail)
        ty_error_add_cause(err, "FieldValueRequired", field, "Required value: %s", detail);
    else
        ty_error_add_cause(err, "FieldValueRequired", field, "Required value");
}

void meta_not_supported(ty_error *err, const char *field, const json_t *value,
                        const char *const *supported)
{
    char text[120], list[300] = "";
    size_t used = 0;

    meta_value_text(value, text, sizeof(text));
    for (size_t i = 0; supported && supported[i] && used < sizeof(list); i++) {
        int w = snprintf(list + used, sizeof(list) - used, "%s\"%s\"", i ? ", " : "",
                         supported[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    ty_error_add_cause(err, "FieldValueNotSupported", field,
                       "Unsupported value: %s: supported values: %s", text, list);
}

int meta_check_env_var_name(const char *field, const char *value, ty_error *err)
{
    bool ok = *value && !(*value >= '0' && *value <= '9');

    for (const char *c = value; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("-._", *c)))
            ok = false;
    if (ok)
        return 0;
    meta_invalid_str(err, field, value, "a valid environment variable name must consist of "
                     "alphabetic characters, digits, '_', '-', or '.', and must not start with a "
                     "digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used "
                     "for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')");
    return -1;
}

long meta_named_index(const json_t *items, const char *name)
{
    const json_t *it;
    size_t i;

    json_array_foreach(items, i, it)
        if (name && meta_str(it, "name") && strcmp(meta_str(it, "name"), name) == 0)
            return (long)i;
    return -1;
}

bool meta_depends_cycle(const json_t *items, size_t i, const json_t *(*deps)(const json_t *item),
                        unsigned char *state)
{
    const json_t *d;
    size_t k;

    if (state[i] == 1) /* on the chain: back where it began */
        return true;
    if (state[i] == 2) /* searched before: no cycle from here */
        return false;
    state[i] = 1;
    json_array_foreach(deps(json_array_get(items, i)), k, d) {
        const char *name = json_is_string(d) ? json_string_value(d) : meta_str(d, "name");
        long j = meta_named_index(items, name);
        if (j >= 0 && meta_depends_cycle(items, (size_t)j, deps, state))
            return true;
    }
    state[i] = 2;
    return false;
}

void meta_duplicate(ty_error *err, const char *field, const json_t *value)
{
    char text[120];
    meta_value_text(value, text, sizeof(text));
    ty_error_add_cause(err, "FieldValueDuplicate", field, "Duplicate value: %s", text);
}

void meta_forbidden(ty_error *err, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_vcause(err, "FieldValueForbidden", field, "Forbidden: ", fmt, ap);
    va_end(ap);
}

void meta_too_long(ty_error *err, const char *field, long long max_bytes)
{
    ty_error_add_cause(err, "FieldValueTooLong", field,
                       "Too long: must have at most %lld bytes", max_bytes);
}

void meta_too_many(ty_error *err, const char *field, size_t n, long long max_items)
{
    ty_error_add_cause(err, "FieldValueTooMany", field,
                       "Too many: %zu: must have at most %lld items", n, max_items);
}

const char *meta_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

json_int_t meta_int(const json_t *obj, const char *key, json_int_t dflt)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

void meta_default(json_t *obj, const char *key, json_t *value)
{
    json_t *cur = json_object_get(obj, key);
    if (!json_is_object(obj) || (cur && !json_is_null(cur))) {
        json_decref(value);
        return;
    }
    json_object_set_new(obj, key, value);
}

json_t *meta_child(json_t *obj, const char *key)
{
    json_t *c = json_object_get(obj, key);
    if (json_is_object(c) || !json_is_object(obj))
        return c;
    c = json_object();
    json_object_set_new(obj, key, c);
    return c;
}

int meta_check_path_segment(const char *field, const char *name, ty_error *err)
{
    int n = 0;

    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        meta_invalid_str(err, field, name, "may not be '%s'", name);
        return 1;
    }
    if (strchr(name, '/') && ++n)
        meta_invalid_str(err, field, name, "may not contain '/'");
    if (strchr(name, '%') && ++n)
        meta_invalid_str(err, field, name, "may not contain '%%'");
    return n;
}

static int check_name(const char *field, const char *name, meta_name_rule rule, ty_error *err)
{
    switch (rule) {
    case META_NAME_DNS1123_LABEL:
        return meta_check_dns1123_label(field, name, err);
    case META_NAME_DNS1035_LABEL:
        return meta_check_dns1035_label(field, name, err);
    case META_NAME_PATH_SEGMENT:
        return meta_check_path_segment(field, name, err);
    case META_NAME_SUBDOMAIN:
    default:
        return meta_check_dns1123_subdomain(field, name, err);
    }
}

/* kube-apiserver's ValidateFinalizers: each a qualified name, and not both
 * ways of deleting dependents. */
static int check_finalizers(const json_t *fins, ty_error *err)
{
    const json_t *f;
    char field[48];
    bool orphan = false, foreground = false;
    size_t i;
    int n = 0;

    json_array_foreach(fins, i, f) {
        const char *v = json_string_value(f);
        if (!v)
            continue; /* a mistyped item is the schema's to refuse */
        snprintf(field, sizeof(field), "metadata.finalizers[%zu]", i);
        n += meta_check_qualified_name(field, v, err) != 0;
        orphan = orphan || !strcmp(v, "orphan");
        foreground = foreground || !strcmp(v, "foregroundDeletion");
    }
    if (orphan && foreground) {
        meta_invalid(err, "metadata.finalizers", fins,
                     "finalizer orphan and foregroundDeletion cannot be both set");
        n++;
    }
    return n;
}

int meta_check_object_meta(const json_t *meta, meta_name_rule rule, bool namespaced,
                           ty_error *err)
{
    const char *name = meta_str(meta, "name");
    const char *gen = meta_str(meta, "generateName");
    const char *ns = meta_str(meta, "namespace");
    int n = 0;

    if (name && *name) {
        n += check_name("metadata.name", name, rule, err);
    } else if (gen && *gen) {
        /* The random suffix is appended later; the prefix alone may end in '-'. */
        char probe[META_DNS1123_SUBDOMAIN_MAX + 8];
        snprintf(probe, sizeof(probe), "%sx", gen);
        if (check_name("metadata.generateName", probe, rule, NULL) > 0)
            n += check_name("metadata.generateName", gen, rule, err);
    } else {
        meta_required(err, "metadata.name", "name or generateName is required");
        n++;
    }
    if (namespaced && ns && *ns)
        n += meta_check_dns1123_label("metadata.namespace", ns, err);
    if (!namespaced && ns && *ns) {
        meta_forbidden(err, "metadata.namespace", "not allowed on this type");
        n++;
    }
    n += meta_check_labels("metadata.labels", json_object_get(meta, "labels"), err);
    n += meta_check_annotations("metadata.annotations",
                                json_object_get(meta, "annotations"), err);
    n += check_finalizers(json_object_get(meta, "finalizers"), err);
    return n;
}
