/* audit_policy.c - see audit_policy.h. Matching follows kube-apiserver's
 * policy checker: users (name), userGroups (any group), verbs; then either
 * the resource fields (namespaces; resources: a group and "res",
 * "res/sub", "*", "* /sub" and "res/ *" written without the space, and
 * resourceNames) for resource requests, or
 * nonResourceURLs ("*", exact, or a prefix ending in "*") for the others.
 * Validation follows its policy validation, plus one strictness of ours:
 * an unknown field is an error (a misspelt "userGroup" must not silently
 * widen a rule). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/yaml.h"
#include "server/audit_policy.h"

/* Field paths are short ("rules[3].resources[0].group"); a cut one would
 * still name the place. */
#if defined(__GNUC__) && !defined(__clang__) /* clang has no such warning */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define POLICY_MAX_RULES 10000
#define POLICY_MAX_LIST 10000

typedef struct strlist {
    char **v;
    size_t n;
} strlist;

typedef struct group_resources {
    char *group;
    strlist resources;
    strlist names;
} group_resources;

typedef struct policy_rule {
    audit_level level;
    strlist users, groups, verbs, namespaces, urls;
    group_resources *res;
    size_t nres;
    unsigned omit_stages;
    int omit_managed_fields; /* -1: not set, the policy's applies */
} policy_rule;

struct audit_policy {
    policy_rule *rules;
    size_t nrules;
    unsigned omit_stages;
    bool omit_managed_fields;
};

static const char *const level_names[] = {"None", "Metadata", "Request", "RequestResponse"};
static const char *const stage_names[] = {"RequestReceived", "ResponseStarted",
                                          "ResponseComplete", "Panic"};

const char *audit_level_name(audit_level l)
{
    return (unsigned)l < 4 ? level_names[l] : "None";
}

const char *audit_stage_name(audit_stage s)
{
    for (unsigned i = 0; i < 4; i++)
        if (s == 1u << i)
            return stage_names[i];
    return "";
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

void audit_policy_free(audit_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nrules; i++) {
        policy_rule *r = &p->rules[i];
        strlist_free(&r->users);
        strlist_free(&r->groups);
        strlist_free(&r->verbs);
        strlist_free(&r->namespaces);
        strlist_free(&r->urls);
        for (size_t j = 0; j < r->nres; j++) {
            free(r->res[j].group);
            strlist_free(&r->res[j].resources);
            strlist_free(&r->res[j].names);
        }
        free(r->res);
    }
    free(p->rules);
    free(p);
}

/* ---- parsing ---- */

typedef struct parse_ctx {
    const char *source;
    ty_error *err;
} parse_ctx;

static int fail(parse_ctx *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(parse_ctx *c, const char *field, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ty_seterr(c->err, TY_EBADREQUEST, "%s: %s%s%s", c->source, field, *field ? ": " : "",
                     msg);
}

/* Refuses members not in allowed (NULL-terminated). */
static int only_fields(parse_ctx *c, const char *path, json_t *obj, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, key) == 0;
        if (!ok)
            return fail(c, path, "unknown field \"%s\"", key);
    }
    return 0;
}

static int parse_strlist(parse_ctx *c, const char *path, json_t *v, strlist *out)
{
    char field[320];
    size_t i;
    json_t *e;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return fail(c, path, "Invalid value: must be a list of strings");
    if (json_array_size(v) > POLICY_MAX_LIST)
        return fail(c, path, "Too many: %zu: must have at most %d items", json_array_size(v),
                    POLICY_MAX_LIST);
    out->v = calloc(json_array_size(v) + 1, sizeof(char *));
    if (!out->v)
        return ty_seterr(c->err, TY_EINTERNAL, "out of memory");
    json_array_foreach(v, i, e) {
        if (!json_is_string(e)) {
            snprintf(field, sizeof(field), "%s[%zu]", path, i);
            return fail(c, field, "Invalid value: must be a string");
        }
        if (!(out->v[out->n] = strdup(json_string_value(e))))
            return ty_seterr(c->err, TY_EINTERNAL, "out of memory");
        out->n++;
    }
    return 0;
}

static int parse_stages(parse_ctx *c, const char *path, json_t *v, unsigned *out)
{
    char field[320];
    size_t i;
    json_t *e;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return fail(c, path, "Invalid value: must be a list of stages");
    json_array_foreach(v, i, e) {
        const char *s = json_string_value(e);
        unsigned bit = 0;
        for (unsigned k = 0; s && k < 4 && !bit; k++)
            if (strcmp(s, stage_names[k]) == 0)
                bit = 1u << k;
        if (!bit) {
            snprintf(field, sizeof(field), "%s[%zu]", path, i);
            return fail(c, field,
                        "Unsupported value: \"%s\": supported values: \"RequestReceived\", "
                        "\"ResponseStarted\", \"ResponseComplete\", \"Panic\"",
                        s ? s : "");
        }
        *out |= bit;
    }
    return 0;
}

static int parse_bool(parse_ctx *c, const char *path, json_t *v, int *out)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return fail(c, path, "Invalid value: must be true or false");
    *out = json_is_true(v);
    return 0;
}

/* A lowercase RFC 1123 subdomain, as API group names are. */
static bool dns_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (!alnum && ch != '-' && ch != '.')
            return false;
        if ((i == 0 || i == n - 1) && !alnum)
            return false;
    }
    return true;
}

static int parse_resources(parse_ctx *c, const char *path, json_t *v, policy_rule *r)
{
    static const char *const fields[] = {"group", "resources", "resourceNames", NULL};
    char field[320], sub[352];
    size_t i;
    json_t *e;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return fail(c, path, "Invalid value: must be a list of {group, resources, resourceNames}");
    if (json_array_size(v) > POLICY_MAX_LIST)
        return fail(c, path, "Too many: %zu: must have at most %d items", json_array_size(v),
                    POLICY_MAX_LIST);
    r->res = calloc(json_array_size(v) + 1, sizeof(*r->res));
    if (!r->res)
        return ty_seterr(c->err, TY_EINTERNAL, "out of memory");
    json_array_foreach(v, i, e) {
        group_resources *g = &r->res[r->nres];
        json_t *grp;
        snprintf(field, sizeof(field), "%s[%zu]", path, i);
        if (!json_is_object(e))
            return fail(c, field, "Invalid value: must be an object");
        if (only_fields(c, field, e, fields) < 0)
            return -1;
        r->nres++;
        grp = json_object_get(e, "group");
        snprintf(sub, sizeof(sub), "%s.group", field);
        if (grp && !json_is_null(grp) && !json_is_string(grp))
            return fail(c, sub, "Invalid value: must be a string");
        if (!(g->group = strdup(json_is_string(grp) ? json_string_value(grp) : "")))
            return ty_seterr(c->err, TY_EINTERNAL, "out of memory");
        if (g->group[0] && !dns_subdomain(g->group))
            return fail(c, sub,
                        "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of "
                        "lower case alphanumeric characters, '-' or '.', and must start and "
                        "end with an alphanumeric character (e.g. 'example.com')",
                        g->group);
        snprintf(sub, sizeof(sub), "%s.resources", field);
        if (parse_strlist(c, sub, json_object_get(e, "resources"), &g->resources) < 0)
            return -1;
        snprintf(sub, sizeof(sub), "%s.resourceNames", field);
        if (parse_strlist(c, sub, json_object_get(e, "resourceNames"), &g->names) < 0)
            return -1;
        if (g->names.n && !g->resources.n)
            return fail(c, sub,
                        "Invalid value: using resourceNames requires at least one resource");
    }
    return 0;
}

static int parse_rule(parse_ctx *c, size_t idx, json_t *v, policy_rule *r)
{
    static const char *const fields[] = {"level", "users", "userGroups", "verbs", "resources",
                                         "namespaces", "nonResourceURLs", "omitStages",
                                         "omitManagedFields", NULL};
    char path[64], field[320];
    json_t *lv;
    const char *ls;

    snprintf(path, sizeof(path), "rules[%zu]", idx);
    r->omit_managed_fields = -1;
    if (!json_is_object(v))
        return fail(c, path, "Invalid value: must be an object");
    if (only_fields(c, path, v, fields) < 0)
        return -1;
    lv = json_object_get(v, "level");
    ls = json_string_value(lv);
    snprintf(field, sizeof(field), "%s.level", path);
    if (!ls || !*ls)
        return fail(c, field, "Required value");
    r->level = 4;
    for (unsigned k = 0; k < 4; k++)
        if (strcmp(ls, level_names[k]) == 0)
            r->level = (audit_level)k;
    if ((unsigned)r->level >= 4)
        return fail(c, field, "Unsupported value: \"%s\": supported values: \"None\", "
                              "\"Metadata\", \"Request\", \"RequestResponse\"", ls);
#define LIST(name, dst)                                                                        \
    do {                                                                                       \
        snprintf(field, sizeof(field), "%s." name, path);                                    \
        if (parse_strlist(c, field, json_object_get(v, name), dst) < 0)                        \
            return -1;                                                                         \
    } while (0)
    LIST("users", &r->users);
    LIST("userGroups", &r->groups);
    LIST("verbs", &r->verbs);
    LIST("namespaces", &r->namespaces);
    LIST("nonResourceURLs", &r->urls);
#undef LIST
    snprintf(field, sizeof(field), "%s.resources", path);
    if (parse_resources(c, field, json_object_get(v, "resources"), r) < 0)
        return -1;
    snprintf(field, sizeof(field), "%s.omitStages", path);
    if (parse_stages(c, field, json_object_get(v, "omitStages"), &r->omit_stages) < 0)
        return -1;
    snprintf(field, sizeof(field), "%s.omitManagedFields", path);
    if (parse_bool(c, field, json_object_get(v, "omitManagedFields"), &r->omit_managed_fields) < 0)
        return -1;
    for (size_t i = 0; i < r->urls.n; i++) {
        const char *u = r->urls.v[i];
        size_t n = strlen(u);
        snprintf(field, sizeof(field), "%s.nonResourceURLs[%zu]", path, i);
        if (strcmp(u, "*") == 0)
            continue;
        if (u[0] != '/')
            return fail(c, field, "Invalid value: \"%s\": non-resource URL rules must begin with "
                                  "a '/' character", u);
        if (n > 1 && memchr(u, '*', n - 1))
            return fail(c, field, "Invalid value: \"%s\": non-resource URL wildcards '*' must be "
                                  "the final character of the rule", u);
    }
    if (r->urls.n && (r->nres || r->namespaces.n)) {
        snprintf(field, sizeof(field), "%s.nonResourceURLs", path);
        return fail(c, field, "Invalid value: rules cannot apply to both regular resources and "
                              "non-resource URLs");
    }
    return 0;
}

static audit_policy *policy_from_json(json_t *doc, parse_ctx *c)
{
    static const char *const fields[] = {"apiVersion", "kind", "metadata", "rules", "omitStages",
                                         "omitManagedFields", NULL};
    audit_policy *p = NULL;
    const char *kind, *av;
    json_t *rules, *e;
    int omf = 0;
    size_t i;

    if (!json_is_object(doc)) {
        fail(c, "", "want an audit.k8s.io/v1 Policy object");
        return NULL;
    }
    kind = json_string_value(json_object_get(doc, "kind"));
    av = json_string_value(json_object_get(doc, "apiVersion"));
    if (!kind || strcmp(kind, "Policy") != 0) {
        fail(c, "kind", "Invalid value: \"%s\": want Policy", kind ? kind : "");
        return NULL;
    }
    if (!av || (strcmp(av, "audit.k8s.io/v1") != 0 && strcmp(av, "audit.k8s.io/v1beta1") != 0)) {
        fail(c, "apiVersion", "Invalid value: \"%s\": want audit.k8s.io/v1", av ? av : "");
        return NULL;
    }
    if (only_fields(c, "", doc, fields) < 0)
        return NULL;
    if (!(p = calloc(1, sizeof(*p)))) {
        ty_seterr(c->err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (parse_stages(c, "omitStages", json_object_get(doc, "omitStages"), &p->omit_stages) < 0 ||
        parse_bool(c, "omitManagedFields", json_object_get(doc, "omitManagedFields"), &omf) < 0)
        goto error;
    p->omit_managed_fields = omf == 1;
    rules = json_object_get(doc, "rules");
    if (rules && !json_is_null(rules) && !json_is_array(rules)) {
        fail(c, "rules", "Invalid value: must be a list of rules");
        goto error;
    }
    /* kube-apiserver refuses a policy without rules: it would audit nothing. */
    if (json_array_size(rules) == 0) {
        fail(c, "rules", "Required value: a policy needs at least one rule");
        goto error;
    }
    if (json_array_size(rules) > POLICY_MAX_RULES) {
        fail(c, "rules", "Too many: %zu: must have at most %d rules", json_array_size(rules),
             POLICY_MAX_RULES);
        goto error;
    }
    if (!(p->rules = calloc(json_array_size(rules), sizeof(*p->rules)))) {
        ty_seterr(c->err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    json_array_foreach(rules, i, e) {
        p->nrules++;
        if (parse_rule(c, i, e, &p->rules[i]) < 0)
            goto error;
    }
    return p;
error:
    audit_policy_free(p);
    return NULL;
}

audit_policy *audit_policy_parse(const char *text, size_t len, const char *source,
                                 ty_error *err)
{
    parse_ctx c = {.source = source ? source : "audit policy", .err = err};
    audit_policy *p;
    ty_error yerr;
    json_t *doc;

    ty_error_init(&yerr);
    if (!(doc = yaml_load_one(text, len, &yerr))) {
        ty_seterr(err, TY_EBADREQUEST, "%s: %s", c.source, yerr.text);
        ty_error_clear(&yerr);
        return NULL;
    }
    p = policy_from_json(doc, &c);
    json_decref(doc);
    return p;
}

audit_policy *audit_policy_load(const char *path, ty_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    audit_policy *p;

    if (!f) {
        ty_seterr(err, TY_EBADREQUEST, "cannot read the audit policy %s: %s", path,
                  strerror(errno));
        return NULL;
    }
    if (!(buf = malloc(AUDIT_POLICY_MAX_BYTES + 1))) {
        fclose(f);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    n = fread(buf, 1, AUDIT_POLICY_MAX_BYTES + 1, f);
    fclose(f);
    if (n > AUDIT_POLICY_MAX_BYTES) {
        free(buf);
        ty_seterr(err, TY_EBADREQUEST, "the audit policy %s is larger than %u bytes", path,
                  AUDIT_POLICY_MAX_BYTES);
        return NULL;
    }
    buf[n] = '\0';
    p = audit_policy_parse(buf, n, path, err);
    free(buf);
    return p;
}

audit_policy *audit_policy_default(void)
{
    audit_policy *p = calloc(1, sizeof(*p));
    if (!p || !(p->rules = calloc(1, sizeof(*p->rules)))) {
        free(p);
        return NULL;
    }
    p->nrules = 1;
    p->rules[0].level = AUDIT_LEVEL_METADATA;
    p->rules[0].omit_managed_fields = -1;
    p->omit_stages = AUDIT_STAGE_REQUEST_RECEIVED;
    return p;
}

/* ---- matching ---- */

static bool has(const strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return true;
    return false;
}

static bool path_matches(const char *path, const char *spec)
{
    size_t n = strlen(spec);
    if (strcmp(spec, "*") == 0 || strcmp(spec, path) == 0)
        return true;
    /* a trailing "*" (any number of them) makes the rest a prefix */
    if (n && spec[n - 1] == '*') {
        while (n && spec[n - 1] == '*')
            n--;
        return strncmp(path, spec, n) == 0;
    }
    return false;
}

static bool resource_matches(const policy_rule *r, const reqattr *a)
{
    char combined[REQATTR_MAX + 64 + 2];

    if (!a->resource_request)
        return false;
    if (r->namespaces.n && !has(&r->namespaces, a->ns))
        return false;
    if (!r->nres)
        return true;
    if (a->subresource[0])
        snprintf(combined, sizeof(combined), "%s/%s", a->resource, a->subresource);
    else
        snprintf(combined, sizeof(combined), "%s", a->resource);
    for (size_t i = 0; i < r->nres; i++) {
        const group_resources *g = &r->res[i];
        if (strcmp(g->group, a->api_group) != 0)
            continue;
        if (!g->resources.n)
            return true;
        if (g->names.n && !has(&g->names, a->name))
            continue;
        for (size_t j = 0; j < g->resources.n; j++) {
            const char *res = g->resources.v[j];
            size_t n = strlen(res);
            if (strcmp(res, "*") == 0 || strcmp(res, combined) == 0)
                return true;
            if (a->subresource[0] && strncmp(res, "*/", 2) == 0 &&
                strcmp(res + 2, a->subresource) == 0)
                return true;
            if (n > 2 && strcmp(res + n - 2, "/*") == 0 && strlen(a->resource) == n - 2 &&
                strncmp(res, a->resource, n - 2) == 0)
                return true;
        }
    }
    return false;
}

static bool rule_matches(const policy_rule *r, const ty_user *u, const reqattr *a)
{
    if (r->users.n && (!u || !has(&r->users, u->name)))
        return false;
    if (r->groups.n) {
        bool any = false;
        for (size_t i = 0; u && i < u->ngroups && !any; i++)
            any = has(&r->groups, u->groups[i]);
        if (!any)
            return false;
    }
    if (r->verbs.n && !has(&r->verbs, a->verb))
        return false;
    if (r->namespaces.n || r->nres)
        return resource_matches(r, a);
    if (r->urls.n) {
        if (a->resource_request)
            return false;
        for (size_t i = 0; i < r->urls.n; i++)
            if (path_matches(a->path, r->urls.v[i]))
                return true;
        return false;
    }
    return true;
}

audit_decision audit_policy_eval(const audit_policy *p, const ty_user *u, const reqattr *a)
{
    audit_decision d = {.level = AUDIT_LEVEL_NONE, .omit_stages = p->omit_stages,
                        .omit_managed_fields = p->omit_managed_fields};
    for (size_t i = 0; i < p->nrules; i++) {
        const policy_rule *r = &p->rules[i];
        if (!rule_matches(r, u, a))
            continue;
        d.level = r->level;
        d.omit_stages |= r->omit_stages;
        if (r->omit_managed_fields >= 0)
            d.omit_managed_fields = r->omit_managed_fields == 1;
        break;
    }
    return d;
}
