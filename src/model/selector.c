/* selector.c - label selectors with kube-apiserver's grammar and error
 * messages (field selectors are in selector_field.c).
 *
 * The label parser follows the shape of the Kubernetes one: a lexer turns the
 * string into tokens first, then a recursive-descent parser looks ahead one
 * token. "in" and "notin" are keywords only where an operator is expected, so
 * "in in (a)" is a valid requirement on the key "in".
 */
#include "model/selector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Selectors come from query strings; nothing legitimate is this long. */
#define SELECTOR_MAX_LEN 65536

typedef enum label_op {
    OP_EQUALS,
    OP_NOT_EQUALS,
    OP_IN,
    OP_NOT_IN,
    OP_EXISTS,
    OP_NOT_EXISTS,
    OP_GT,
    OP_LT,
} label_op;

typedef struct requirement {
    char *key;
    label_op op;
    char **values;
    size_t nvalues;
} requirement;

struct ty_label_selector {
    requirement *reqs;
    size_t n;
};

/* ---- lexer ------------------------------------------------------------ */

typedef enum tok_kind {
    TOK_END,
    TOK_IDENT,
    TOK_IN,
    TOK_NOTIN,
    TOK_EQ,
    TOK_DEQ,
    TOK_NEQ,
    TOK_NOT,
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_COMMA,
    TOK_GT,
    TOK_LT,
    TOK_ERROR,
} tok_kind;

typedef struct token {
    tok_kind kind;
    const char *text; /* points into the selector string */
    size_t len;
} token;

typedef struct lexer {
    token *toks;
    size_t n, pos;
} lexer;

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static token scan_one(const char **pp)
{
    const char *p = *pp;
    token t = {TOK_END, p, 0};

    while (is_space(*p))
        p++;
    t.text = p;
    if (!*p) {
        *pp = p;
        return t;
    }
    if (is_special(*p)) {
        static const struct {
            const char *s;
            tok_kind k;
        } ops[] = {{"==", TOK_DEQ}, {"!=", TOK_NEQ}, {"=", TOK_EQ},     {"!", TOK_NOT},
                   {"(", TOK_LPAREN}, {")", TOK_RPAREN}, {",", TOK_COMMA}, {">", TOK_GT},
                   {"<", TOK_LT}};
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            size_t l = strlen(ops[i].s);
            if (strncmp(p, ops[i].s, l) == 0) {
                t.kind = ops[i].k;
                t.len = l;
                break;
            }
        }
    } else {
        while (p[t.len] && !is_space(p[t.len]) && !is_special(p[t.len]))
            t.len++;
        t.kind = TOK_IDENT;
        if (t.len == 2 && strncmp(p, "in", 2) == 0)
            t.kind = TOK_IN;
        else if (t.len == 5 && strncmp(p, "notin", 5) == 0)
            t.kind = TOK_NOTIN;
    }
    *pp = p + t.len;
    return t;
}

static int lex_all(const char *s, lexer *lx)
{
    size_t cap = 16;

    lx->n = lx->pos = 0;
    lx->toks = malloc(cap * sizeof(token));
    if (!lx->toks)
        return -1;
    for (;;) {
        if (lx->n == cap) {
            token *grown = realloc(lx->toks, cap * 2 * sizeof(token));
            if (!grown)
                return -1;
            lx->toks = grown;
            cap *= 2;
        }
        token t = scan_one(&s);
        lx->toks[lx->n++] = t;
        if (t.kind == TOK_END)
            return 0;
    }
}

/* Where a value is expected, the keywords are plain identifiers. */
static token peek_value(const lexer *lx)
{
    token t = lx->toks[lx->pos];
    if (t.kind == TOK_IN || t.kind == TOK_NOTIN)
        t.kind = TOK_IDENT;
    return t;
}

static token next_value(lexer *lx)
{
    token t = peek_value(lx);
    if (t.kind != TOK_END)
        lx->pos++;
    return t;
}

static token next_operator(lexer *lx)
{
    token t = lx->toks[lx->pos];
    if (t.kind != TOK_END)
        lx->pos++;
    return t;
}

/* ---- requirements ----------------------------------------------------- */

static void requirement_clear(requirement *r)
{
    free(r->key);
    for (size_t i = 0; i < r->nvalues; i++)
        free(r->values[i]);
    free(r->values);
    memset(r, 0, sizeof(*r));
}

static int add_value(requirement *r, const char *text, size_t len)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (strlen(r->values[i]) == len && strncmp(r->values[i], text, len) == 0)
            return 0; /* a set, as in Kubernetes */
    char **grown = realloc(r->values, (r->nvalues + 1) * sizeof(char *));
    if (!grown)
        return -1;
    r->values = grown;
    r->values[r->nvalues] = strndup(text, len);
    if (!r->values[r->nvalues])
        return -1;
    r->nvalues++;
    return 0;
}

static int fail(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t msglen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The checks Kubernetes' NewRequirement makes. */
static int requirement_validate(const requirement *r, char *msg, size_t msglen)
{
    char why[1024];

    if (!label_key_valid(r->key, why, sizeof(why)))
        return fail(msg, msglen, "invalid label key \"%s\": %s", r->key, why);
    switch (r->op) {
    case OP_IN:
    case OP_NOT_IN:
        if (r->nvalues == 0)
            return fail(msg, msglen, "for 'in', 'notin' operators, values set can't be empty");
        break;
    case OP_EQUALS:
    case OP_NOT_EQUALS:
        if (r->nvalues != 1)
            return fail(msg, msglen, "exact-match compatibility requires one single value");
        break;
    case OP_EXISTS:
    case OP_NOT_EXISTS:
        if (r->nvalues != 0)
            return fail(msg, msglen, "values set must be empty for exists and does not exist");
        break;
    case OP_GT:
    case OP_LT: {
        if (r->nvalues != 1)
            return fail(msg, msglen,
                        "for 'Gt', 'Lt' operators, exactly one value is required");
        char *end;
        errno = 0;
        (void)strtoll(r->values[0], &end, 10);
        if (errno || end == r->values[0] || *end)
            return fail(msg, msglen,
                        "for 'Gt', 'Lt' operators, the value must be an integer");
        break;
    }
    }
    for (size_t i = 0; i < r->nvalues; i++)
        if (!label_value_valid(r->values[i], why, sizeof(why)))
            return fail(msg, msglen, "invalid label value: \"%s\": at key: \"%s\": %s",
                        r->values[i], r->key, why);
    return 0;
}

static int selector_append(ty_label_selector *sel, requirement *r)
{
    requirement *grown = realloc(sel->reqs, (sel->n + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    sel->reqs = grown;
    sel->reqs[sel->n++] = *r;
    memset(r, 0, sizeof(*r));
    return 0;
}

/* ---- string parser ---------------------------------------------------- */

static int parse_values_list(lexer *lx, requirement *r, char *msg, size_t msglen)
{
    token t = next_value(lx);
    if (t.kind != TOK_LPAREN)
        return fail(msg, msglen, "found '%.*s' expected: '('", (int)t.len, t.text);
    t = peek_value(lx);
    if (t.kind == TOK_RPAREN) {
        next_value(lx);
        return add_value(r, "", 0);
    }
    if (t.kind != TOK_IDENT && t.kind != TOK_COMMA)
        return fail(msg, msglen, "found '%.*s', expected: ',', ')' or identifier", (int)t.len,
                    t.text);
    /* Empty slots between commas ("(a,,b)", "(,a)") are the empty value. */
    bool want_value = true;
    for (;;) {
        t = next_value(lx);
        if (t.kind == TOK_IDENT && want_value) {
            if (add_value(r, t.text, t.len) < 0)
                return fail(msg, msglen, "out of memory");
            want_value = false;
        } else if (t.kind == TOK_COMMA) {
            if (want_value && add_value(r, "", 0) < 0)
                return fail(msg, msglen, "out of memory");
            want_value = true;
        } else if (t.kind == TOK_RPAREN) {
            if (want_value && add_value(r, "", 0) < 0)
                return fail(msg, msglen, "out of memory");
            return 0;
        } else if (t.kind == TOK_IDENT) {
            return fail(msg, msglen, "found '%.*s', expected: ',' or ')'", (int)t.len, t.text);
        } else {
            return fail(msg, msglen, "found '%.*s', expected: ',', or identifier", (int)t.len,
                        t.text);
        }
    }
}

static int parse_exact_value(lexer *lx, requirement *r, char *msg, size_t msglen)
{
    token t = peek_value(lx);
    if (t.kind == TOK_END || t.kind == TOK_COMMA)
        return add_value(r, "", 0);
    t = next_value(lx);
    if (t.kind != TOK_IDENT)
        return fail(msg, msglen, "found '%.*s', expected: identifier", (int)t.len, t.text);
    return add_value(r, t.text, t.len);
}

static int parse_operator(lexer *lx, label_op *op, char *msg, size_t msglen)
{
    token t = next_operator(lx);
    switch (t.kind) {
    case TOK_IN: *op = OP_IN; return 0;
    case TOK_NOTIN: *op = OP_NOT_IN; return 0;
    case TOK_EQ:
    case TOK_DEQ: *op = OP_EQUALS; return 0;
    case TOK_NEQ: *op = OP_NOT_EQUALS; return 0;
    case TOK_GT: *op = OP_GT; return 0;
    case TOK_LT: *op = OP_LT; return 0;
    default:
        return fail(msg, msglen, "found '%.*s', expected: in, notin, =, ==, !=, gt, lt",
                    (int)t.len, t.text);
    }
}

static int parse_requirement(lexer *lx, requirement *r, char *msg, size_t msglen)
{
    char why[1024];
    bool negated = false;
    token t = next_value(lx);

    if (t.kind == TOK_NOT) {
        negated = true;
        t = next_value(lx);
    }
    if (t.kind != TOK_IDENT)
        return fail(msg, msglen, "found '%.*s', expected: identifier", (int)t.len, t.text);
    r->key = strndup(t.text, t.len);
    if (!r->key)
        return fail(msg, msglen, "out of memory");
    if (!label_key_valid(r->key, why, sizeof(why)))
        return fail(msg, msglen, "invalid label key \"%s\": %s", r->key, why);

    token next = peek_value(lx);
    if (negated || next.kind == TOK_END || next.kind == TOK_COMMA) {
        /* "!key" is complete here; whatever follows is the caller's problem,
         * which reports it as "expected: ',' or 'end of string'". */
        r->op = negated ? OP_NOT_EXISTS : OP_EXISTS;
        return requirement_validate(r, msg, msglen);
    }
    if (parse_operator(lx, &r->op, msg, msglen) < 0)
        return -1;
    int rc = (r->op == OP_IN || r->op == OP_NOT_IN) ? parse_values_list(lx, r, msg, msglen)
                                                    : parse_exact_value(lx, r, msg, msglen);
    if (rc < 0)
        return -1;
    return requirement_validate(r, msg, msglen);
}

static int parse_selector(lexer *lx, ty_label_selector *sel, ty_error *err)
{
    char msg[1024];

    for (;;) {
        token t = peek_value(lx);
        if (t.kind == TOK_END)
            return 0;
        if (t.kind != TOK_IDENT && t.kind != TOK_NOT)
            return ty_seterr(err, TY_EBADREQUEST,
                             "found '%.*s', expected: !, identifier, or 'end of string'",
                             (int)t.len, t.text);
        requirement r = {0};
        if (parse_requirement(lx, &r, msg, sizeof(msg)) < 0) {
            requirement_clear(&r);
            return ty_seterr(err, TY_EBADREQUEST, "unable to parse requirement: %s", msg);
        }
        if (selector_append(sel, &r) < 0) {
            requirement_clear(&r);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
        t = next_value(lx);
        if (t.kind == TOK_END)
            return 0;
        if (t.kind != TOK_COMMA)
            return ty_seterr(err, TY_EBADREQUEST,
                             "found '%.*s', expected: ',' or 'end of string'", (int)t.len,
                             t.text);
        t = peek_value(lx);
        if (t.kind != TOK_IDENT && t.kind != TOK_NOT)
            return ty_seterr(err, TY_EBADREQUEST, "found '%.*s', expected: identifier after ','",
                             (int)t.len, t.text);
    }
}

ty_label_selector *label_selector_parse(const char *s, ty_error *err)
{
    lexer lx = {0};
    ty_label_selector *sel;

    if (!s)
        s = "";
    if (strlen(s) > SELECTOR_MAX_LEN) {
        ty_seterr(err, TY_EBADREQUEST, "label selector is longer than %d characters",
                  SELECTOR_MAX_LEN);
        return NULL;
    }
    sel = calloc(1, sizeof(*sel));
    if (!sel || lex_all(s, &lx) < 0) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (parse_selector(&lx, sel, err) < 0)
        goto error;
    free(lx.toks);
    return sel;
error:
    free(lx.toks);
    label_selector_free(sel);
    return NULL;
}

/* ---- metav1.LabelSelector --------------------------------------------- */

static int expression_to_requirement(const json_t *expr, size_t idx, requirement *r,
                                     ty_error *err)
{
    static const struct {
        const char *name;
        label_op op;
    } ops[] = {{"In", OP_IN}, {"NotIn", OP_NOT_IN}, {"Exists", OP_EXISTS},
               {"DoesNotExist", OP_NOT_EXISTS}};
    char msg[1024];
    const json_t *key = json_object_get(expr, "key");
    const json_t *op = json_object_get(expr, "operator");
    const json_t *values = json_object_get(expr, "values");

    if (!json_is_object(expr) || !json_is_string(key) || !json_is_string(op))
        return ty_seterr(err, TY_EBADREQUEST,
                         "matchExpressions[%zu]: must be an object with string key and operator",
                         idx);
    size_t i;
    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(json_string_value(op), ops[i].name) == 0)
            break;
    if (i == sizeof(ops) / sizeof(ops[0]))
        return ty_seterr(err, TY_EBADREQUEST, "\"%s\" is not a valid label selector operator",
                         json_string_value(op));
    r->op = ops[i].op;
    r->key = strdup(json_string_value(key));
    if (!r->key)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (values && !json_is_null(values) && !json_is_array(values))
        return ty_seterr(err, TY_EBADREQUEST, "matchExpressions[%zu].values: must be a list",
                         idx);
    size_t vi;
    const json_t *v;
    json_array_foreach(values, vi, v) {
        if (!json_is_string(v))
            return ty_seterr(err, TY_EBADREQUEST,
                             "matchExpressions[%zu].values[%zu]: must be a string", idx, vi);
        if (add_value(r, json_string_value(v), json_string_length(v)) < 0)
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    if (requirement_validate(r, msg, sizeof(msg)) < 0)
        return ty_seterr(err, TY_EBADREQUEST, "%s", msg);
    return 0;
}

static int add_match_labels(ty_label_selector *sel, const json_t *labels, ty_error *err)
{
    char msg[1024];
    const char *k;
    const json_t *v;

    if (labels && !json_is_null(labels) && !json_is_object(labels))
        return ty_seterr(err, TY_EBADREQUEST, "matchLabels: must be an object");
    json_object_foreach((json_t *)labels, k, v) {
        requirement r = {.op = OP_EQUALS};
        if (!json_is_string(v))
            return ty_seterr(err, TY_EBADREQUEST, "matchLabels[%s]: must be a string", k);
        r.key = strdup(k);
        if (!r.key || add_value(&r, json_string_value(v), json_string_length(v)) < 0) {
            requirement_clear(&r);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
        if (requirement_validate(&r, msg, sizeof(msg)) < 0) {
            requirement_clear(&r);
            return ty_seterr(err, TY_EBADREQUEST, "%s", msg);
        }
        if (selector_append(sel, &r) < 0) {
            requirement_clear(&r);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
    }
    return 0;
}

ty_label_selector *label_selector_from_json(const json_t *json, ty_error *err)
{
    ty_label_selector *sel = calloc(1, sizeof(*sel));
    const json_t *exprs;

    if (!sel) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (!json || json_is_null(json))
        return sel;
    if (!json_is_object(json)) {
        ty_seterr(err, TY_EBADREQUEST, "label selector must be an object");
        goto error;
    }
    if (add_match_labels(sel, json_object_get(json, "matchLabels"), err) < 0)
        goto error;
    exprs = json_object_get(json, "matchExpressions");
    if (exprs && !json_is_null(exprs) && !json_is_array(exprs)) {
        ty_seterr(err, TY_EBADREQUEST, "matchExpressions: must be a list");
        goto error;
    }
    size_t i;
    const json_t *expr;
    json_array_foreach(exprs, i, expr) {
        requirement r = {0};
        if (expression_to_requirement(expr, i, &r, err) < 0 || selector_append(sel, &r) < 0) {
            if (!err || err->code == TY_OK)
                ty_seterr(err, TY_EINTERNAL, "out of memory");
            requirement_clear(&r);
            goto error;
        }
    }
    return sel;
error:
    label_selector_free(sel);
    return NULL;
}

/* ---- matching --------------------------------------------------------- */

static bool has_value(const requirement *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (strcmp(r->values[i], v) == 0)
            return true;
    return false;
}

static bool compare_integer(const requirement *r, const char *v)
{
    char *end;
    errno = 0;
    long long have = strtoll(v, &end, 10);
    if (errno || end == v || *end)
        return false;
    long long want = strtoll(r->values[0], NULL, 10);
    return r->op == OP_GT ? have > want : have < want;
}

static bool requirement_matches(const requirement *r, const json_t *labels)
{
    const json_t *label = json_is_object(labels) ? json_object_get(labels, r->key) : NULL;
    /* Label values are strings; anything else never equals a value. */
    const char *v = json_string_value(label);

    switch (r->op) {
    case OP_EXISTS: return label != NULL;
    case OP_NOT_EXISTS: return label == NULL;
    case OP_EQUALS:
    case OP_IN: return v && has_value(r, v);
    case OP_NOT_EQUALS:
    case OP_NOT_IN: return !v || !has_value(r, v);
    case OP_GT:
    case OP_LT: return v && compare_integer(r, v);
    }
    return false;
}

bool label_selector_matches(const ty_label_selector *sel, const json_t *labels)
{
    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n; i++)
        if (!requirement_matches(&sel->reqs[i], labels))
            return false;
    return true;
}

bool label_selector_empty(const ty_label_selector *sel)
{
    return !sel || sel->n == 0;
}

void label_selector_free(ty_label_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        requirement_clear(&sel->reqs[i]);
    free(sel->reqs);
    free(sel);
}
