/* review.c - the review APIs, which store nothing and answer a question:
 *   authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth can-i`),
 *   SubjectAccessReview, LocalSubjectAccessReview (namespaced),
 *   SelfSubjectRulesReview (`kubectl auth can-i --list`);
 *   authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`).
 * Each is create-only: the body comes back with its status filled (201),
 * as kube-apiserver answers. Who may ask is the gate's business (the
 * default role system:basic-user lets every authenticated user ask about
 * themselves). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/authz.h"
#include "server/authz_int.h"
#include "server/decode.h"
#include "server/review.h"

typedef enum { RV_SELF_ACCESS, RV_ACCESS, RV_LOCAL_ACCESS, RV_SELF_RULES, RV_SELF } review_kind;

static const review_resource reviews[] = {
    {"authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false},
    {"authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", false},
    {"authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", true},
    {"authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false},
    {"authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", false},
};
#define NREVIEWS (sizeof(reviews) / sizeof(reviews[0]))

const review_resource *review_resources(size_t *n)
{
    *n = NREVIEWS;
    return reviews;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", strlen(src) < cap ? src : "");
}

/* The request attributes a review's spec describes. */
static void spec_attr(const json_t *spec, reqattr *a)
{
    const json_t *ra = json_object_get(spec, "resourceAttributes");
    const json_t *na = json_object_get(spec, "nonResourceAttributes");

    memset(a, 0, sizeof(*a));
    if (json_is_object(ra)) {
        a->resource_request = true;
        copy(a->verb, sizeof(a->verb), jstr(ra, "verb"));
        copy(a->api_group, sizeof(a->api_group), jstr(ra, "group"));
        copy(a->api_version, sizeof(a->api_version), jstr(ra, "version"));
        copy(a->resource, sizeof(a->resource), jstr(ra, "resource"));
        copy(a->subresource, sizeof(a->subresource), jstr(ra, "subresource"));
        copy(a->ns, sizeof(a->ns), jstr(ra, "namespace"));
        copy(a->name, sizeof(a->name), jstr(ra, "name"));
    } else {
        copy(a->verb, sizeof(a->verb), jstr(na, "verb"));
        copy(a->path, sizeof(a->path), jstr(na, "path"));
    }
}

static enum MHD_Result invalid(http_req *r, const review_resource *rv, const char *field,
                               const char *msg)
{
    ty_error err;
    enum MHD_Result ret;

    ty_error_init(&err);
    ty_error_add_cause(&err, "FieldValueInvalid", field, "%s", msg);
    ty_seterr(&err, TY_EINVALID, "%s.%s \"\" is invalid: %s: %s", rv->kind, rv->group, field,
              msg);
    ret = http_send_error(r, &err, NULL, NULL);
    ty_error_clear(&err);
    return ret;
}

/* The spec's rules (ValidateSelfSubjectAccessReviewSpec and the others);
 * NULL when it is valid, else the field and message via *field. */
static const char *check_spec(review_kind k, const json_t *spec, const char *ns,
                              const char **field)
{
    const json_t *ra = json_object_get(spec, "resourceAttributes");
    const json_t *na = json_object_get(spec, "nonResourceAttributes");
    bool has_ra = json_is_object(ra), has_na = json_is_object(na);

    if (has_ra && has_na) {
        *field = "spec.nonResourceAttributes";
        return "Invalid value: \"object\": cannot be specified in combination with "
               "resourceAttributes";
    }
    if (!has_ra && !has_na) {
        *field = "spec.resourceAttributes";
        return "Invalid value: \"null\": exactly one of nonResourceAttributes or "
               "resourceAttributes must be specified";
    }
    if ((k == RV_ACCESS || k == RV_LOCAL_ACCESS) && !*jstr(spec, "user") &&
        json_array_size(json_object_get(spec, "groups")) == 0) {
        *field = "spec.user";
        return "Invalid value: \"\": at least one of user or group must be specified";
    }
    if (k == RV_LOCAL_ACCESS && has_na) {
        *field = "spec.nonResourceAttributes";
        return "Invalid value: \"object\": disallowed on this kind of request";
    }
    if (k == RV_LOCAL_ACCESS && strcmp(jstr(ra, "namespace"), ns) != 0) {
        *field = "spec.resourceAttributes.namespace";
        return "Invalid value: \"\": must match metadata.namespace";
    }
    return NULL;
}

/* The user a SubjectAccessReview asks about. Caller frees. */
static ty_user *spec_user(const json_t *spec)
{
    const json_t *g = json_object_get(spec, "groups");
    const char *groups[USERINFO_MAX_GROUPS];
    size_t n = 0, i;
    json_t *v;
    const char *uid = jstr(spec, "uid");

    json_array_foreach(g, i, v)
        if (json_is_string(v) && n < USERINFO_MAX_GROUPS)
            groups[n++] = json_string_value(v);
    ty_user *u = userinfo_new(jstr(spec, "user"), *uid ? uid : NULL, groups, n);
    bool asked = false;

    /* as kube: the groups are the spec's; system:authenticated is not added */
    for (i = 0; i < n; i++)
        asked = asked || strcmp(groups[i], USERINFO_AUTHENTICATED) == 0;
    for (i = 0; u && !asked && i < u->ngroups; i++) {
        if (strcmp(u->groups[i], USERINFO_AUTHENTICATED) != 0)
            continue;
        free(u->groups[i]);
        memmove(&u->groups[i], &u->groups[i + 1], (u->ngroups - i - 1) * sizeof(char *));
        u->ngroups--;
        break;
    }
    return u;
}

static enum MHD_Result answer(http_req *r, const review_resource *rv, json_t *body,
                              json_t *status)
{
    json_t *md = json_object_get(body, "metadata");
    char av[64];

    snprintf(av, sizeof(av), "%s/v1", rv->group);
    json_object_set_new(body, "apiVersion", json_string(av));
    json_object_set_new(body, "kind", json_string(rv->kind));
    if (!json_is_object(md)) {
        md = json_object();
        json_object_set_new(body, "metadata", md);
    }
    if (!json_object_get(md, "creationTimestamp"))
        json_object_set_new(md, "creationTimestamp", json_null());
    json_object_set_new(body, "status", status);
    return http_send_json(r, 201, body);
}

static enum MHD_Result access_review(http_req *r, review_kind k, const review_resource *rv,
                                     json_t *body, const char *ns)
{
    const json_t *spec = json_object_get(body, "spec");
    const char *field = NULL, *why;
    ty_user *who = NULL;
    reqattr a;
    char reason[512];
    int ok;
    json_t *st;

    if ((why = check_spec(k, spec, ns, &field))) {
        json_decref(body);
        return invalid(r, rv, field, why);
    }
    spec_attr(spec, &a);
    if (k == RV_ACCESS || k == RV_LOCAL_ACCESS)
        who = spec_user(spec);
    ok = authz_check(server_authz(r->srv), who ? who : r->user, &a, reason, sizeof(reason));
    st = json_pack("{s:b}", "allowed", ok);
    if (reason[0])
        json_object_set_new(st, "reason", json_string(reason));
    userinfo_free(who);
    return answer(r, rv, body, st);
}

static enum MHD_Result rules_review(http_req *r, json_t *body)
{
    const char *ns = jstr(json_object_get(body, "spec"), "namespace");
    json_t *st = authz_rules(server_authz(r->srv), r->user, ns);

    if (!st) /* no authorization configured: everything */
        st = json_pack("{s:[{s:[s], s:[s], s:[s]}], s:[{s:[s], s:[s]}], s:b}",
                       "resourceRules", "verbs", "*", "apiGroups", "*", "resources", "*",
                       "nonResourceRules", "verbs", "*", "nonResourceURLs", "*",
                       "incomplete", 0);
    return answer(r, &reviews[RV_SELF_RULES], body, st);
}

static enum MHD_Result self_review(http_req *r, json_t *body)
{
    json_t *ui = r->user ? userinfo_to_json(r->user)
                         : json_pack("{s:s, s:[s]}", "username", "system:anonymous", "groups",
                                     "system:unauthenticated");
    return answer(r, &reviews[RV_SELF], body, json_pack("{s:o}", "userInfo", ui));
}

/* Which review a path names: /apis/<group>/v1/<plural> or
 * /apis/authorization.k8s.io/v1/namespaces/<ns>/localsubjectaccessreviews. */
static int match(http_req *r, const char **ns)
{
    *ns = "";
    if (r->nsegs < 4 || strcmp(r->segs[0], "apis") != 0 || strcmp(r->segs[2], "v1") != 0)
        return -1;
    for (size_t i = 0; i < NREVIEWS; i++) {
        if (strcmp(r->segs[1], reviews[i].group) != 0)
            continue;
        if (!reviews[i].namespaced && r->nsegs == 4 && strcmp(r->segs[3], reviews[i].plural) == 0)
            return (int)i;
        if (reviews[i].namespaced && r->nsegs == 6 && strcmp(r->segs[3], "namespaces") == 0 &&
            strcmp(r->segs[5], reviews[i].plural) == 0) {
            *ns = r->segs[4];
            return (int)i;
        }
    }
    return -1;
}

enum MHD_Result review_handle(http_req *r, bool *handled)
{
    const char *ns;
    int i = match(r, &ns);
    ty_error err;
    field_validation fv;
    json_t *body;
    enum MHD_Result ret;

    *handled = i >= 0;
    if (i < 0)
        return MHD_NO;
    ty_error_init(&err);
    if (strcmp(r->method, "POST") != 0) {
        ty_seterr(&err, TY_EMETHOD, "the server does not allow this method on the requested "
                                    "resource");
        goto fail;
    }
    if (decode_field_validation(r, &fv, &err) < 0 || !(body = decode_body(r, fv, &err)))
        goto fail;
    if (!json_is_object(body)) {
        json_decref(body);
        ty_seterr(&err, TY_EBADREQUEST, "the request body must be a JSON object");
        goto fail;
    }
    switch ((review_kind)i) {
    case RV_SELF_RULES: return rules_review(r, body);
    case RV_SELF: return self_review(r, body);
    default: return access_review(r, (review_kind)i, &reviews[i], body, ns);
    }
fail:
    ret = http_send_error(r, &err, NULL, NULL);
    ty_error_clear(&err);
    return ret;
}
