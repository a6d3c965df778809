/* selector_field.c - field selectors ("status.phase=Running,spec.nodeName!=")
 * and dotted-path lookups, with kube-apiserver's escaping rules and messages.
 */
#include "model/selector.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Selectors come from query strings; nothing legitimate is this long. */
#define SELECTOR_MAX_LEN 65536

typedef struct field_term {
    char *field;
    char *value;
    bool negate;
} field_term;

struct ty_field_selector {
    field_term *terms;
    size_t n;
};

/* Undoes the escaping of '\\', ',' and '='; unescaped ',' or '=' in a value is
 * an error, as in Kubernetes. Returns a malloc'd string or NULL. */
static char *unescape_value(const char *s, size_t len, ty_error *err)
{
    char *out = malloc(len + 1);
    size_t o = 0;

    if (!out) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 == len || (s[i + 1] != '\\' && s[i + 1] != ',' && s[i + 1] != '=')) {
                ty_seterr(err, TY_EBADREQUEST,
                          "invalid field selector: invalid escape sequence: \\%.1s",
                          i + 1 < len ? s + i + 1 : "");
                free(out);
                return NULL;
            }
            out[o++] = s[++i];
        } else if (c == ',' || c == '=') {
            ty_seterr(err, TY_EBADREQUEST,
                      "invalid field selector: unescaped character in value: %c", c);
            free(out);
            return NULL;
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    return out;
}

static bool field_allowed(const char *field, const char *const *allowed)
{
    if (!allowed)
        return true;
    for (; *allowed; allowed++)
        if (strcmp(*allowed, field) == 0)
            return true;
    return false;
}

/* One "lhs op rhs" term: the first "!=", "==" or "=" splits it. */
static int parse_field_term(const char *whole, const char *term, size_t len,
                            const char *const *allowed, field_term *out, ty_error *err)
{
    size_t i, oplen = 0;

    for (i = 0; i < len; i++) {
        if ((term[i] == '!' || term[i] == '=') && i + 1 < len && term[i + 1] == '=') {
            oplen = 2;
            break;
        }
        if (term[i] == '=') {
            oplen = 1;
            break;
        }
    }
    if (oplen == 0)
        return ty_seterr(err, TY_EBADREQUEST, "invalid selector: '%s'; can't understand '%.*s'",
                         whole, (int)len, term);
    out->negate = term[i] == '!';
    out->field = strndup(term, i);
    if (!out->field)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (!field_allowed(out->field, allowed))
        return ty_seterr(err, TY_EBADREQUEST, "field label not supported: %s", out->field);
    out->value = unescape_value(term + i + oplen, len - i - oplen, err);
    return out->value ? 0 : -1;
}

static void field_term_clear(field_term *t)
{
    free(t->field);
    free(t->value);
}

ty_field_selector *field_selector_parse(const char *s, const char *const *allowed,
                                        ty_error *err)
{
    ty_field_selector *sel = calloc(1, sizeof(*sel));
    size_t start = 0, len;

    if (!sel) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (!s)
        return sel;
    len = strlen(s);
    if (len > SELECTOR_MAX_LEN) {
        ty_seterr(err, TY_EBADREQUEST, "field selector is longer than %d characters",
                  SELECTOR_MAX_LEN);
        goto error;
    }
    /* Terms split at commas that no backslash escapes. */
    for (size_t i = 0; i <= len; i++) {
        if (i + 1 < len && s[i] == '\\') {
            i++;
            continue;
        }
        if (i < len && s[i] != ',')
            continue;
        if (i > start) {
            field_term t = {0};
            field_term *grown = realloc(sel->terms, (sel->n + 1) * sizeof(*grown));
            if (!grown) {
                ty_seterr(err, TY_EINTERNAL, "out of memory");
                goto error;
            }
            sel->terms = grown;
            if (parse_field_term(s, s + start, i - start, allowed, &t, err) < 0) {
                field_term_clear(&t);
                goto error;
            }
            sel->terms[sel->n++] = t;
        }
        start = i + 1;
    }
    return sel;
error:
    field_selector_free(sel);
    return NULL;
}

/* The text a field compares as: strings as they are, numbers and booleans in
 * their JSON form, anything else (missing, null, objects) as "". */
static const char *field_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_true(v))
        return "true";
    if (json_is_false(v))
        return "false";
    if (json_is_integer(v)) {
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    return "";
}

bool field_selector_matches(const ty_field_selector *sel, const json_t *obj)
{
    char buf[32];

    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n; i++) {
        const field_term *t = &sel->terms[i];
        const char *have = field_text(json_path_get(obj, t->field), buf, sizeof(buf));
        bool equal = strcmp(have, t->value) == 0;
        if (equal == t->negate)
            return false;
    }
    return true;
}

void field_selector_free(ty_field_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        field_term_clear(&sel->terms[i]);
    free(sel->terms);
    free(sel);
}

const json_t *json_path_get(const json_t *obj, const char *dotted)
{
    const json_t *cur = obj;
    const char *p = dotted;

    if (!obj || !dotted)
        return NULL;
    if (!*p)
        return obj;
    while (cur) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len == 0)
            return NULL;
        if (json_is_object(cur)) {
            cur = json_object_getn(cur, p, len);
        } else if (json_is_array(cur)) {
            size_t idx = 0;
            for (size_t i = 0; i < len; i++) {
                if (!isdigit((unsigned char)p[i]) || idx > 100000000)
                    return NULL;
                idx = idx * 10 + (size_t)(p[i] - '0');
            }
            cur = json_array_get(cur, idx);
        } else {
            return NULL;
        }
        if (!dot)
            return cur;
        p = dot + 1;
    }
    return NULL;
}
