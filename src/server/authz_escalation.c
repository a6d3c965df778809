/* authz_escalation.c - kube's privilege-escalation prevention for writes of
 * roles and bindings (see authz.h, authz_admit_write).
 *
 * Without it, anyone allowed to write RoleBindings in a namespace (the
 * admin role) could bind cluster-admin there, and anyone allowed to write
 * Roles could write one granting anything. As upstream, a rule is held when
 * the writer's own rules allow every combination it names: each verb,
 * API group, resource (a subresource "pods/log" as pods' log) and resource
 * name, or each non-resource URL; a wildcard is held only by the same
 * wildcard. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "server/authz.h"
#include "server/authz_int.h"

#define MAX_CHECKS 100000 /* combinations one write may ask about */

static void put(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", strlen(src) < cap ? src : "");
}

static const char *sval(const json_t *v)
{
    return json_string_value(v) ? json_string_value(v) : "";
}

/* Whether u holds every combination rule names in namespace ns. */
static bool holds_rule(ty_authz *z, const ty_user *u, const json_t *rule, const char *ns,
                       size_t *budget)
{
    const json_t *verbs = json_object_get(rule, "verbs");
    const json_t *urls = json_object_get(rule, "nonResourceURLs");
    const json_t *names = json_object_get(rule, "resourceNames");
    size_t i, j, k, l;
    json_t *verb, *g, *res, *name, *url;
    reqattr a;

    json_array_foreach(verbs, i, verb) {
        json_array_foreach(urls, j, url) {
            memset(&a, 0, sizeof(a));
            put(a.verb, sizeof(a.verb), sval(verb));
            put(a.path, sizeof(a.path), sval(url));
            if (!(*budget)-- || !authz_check(z, u, &a, NULL, 0))
                return false;
        }
        json_array_foreach(json_object_get(rule, "apiGroups"), j, g) {
            json_array_foreach(json_object_get(rule, "resources"), k, res) {
                const char *r = sval(res), *slash = strchr(r, '/');
                size_t n = json_array_size(names) ? json_array_size(names) : 1;
                for (l = 0; l < n; l++) {
                    name = json_array_get(names, l);
                    memset(&a, 0, sizeof(a));
                    a.resource_request = true;
                    put(a.verb, sizeof(a.verb), sval(verb));
                    put(a.api_group, sizeof(a.api_group), sval(g));
                    if (slash) {
                        snprintf(a.resource, sizeof(a.resource), "%.*s", (int)(slash - r), r);
                        put(a.subresource, sizeof(a.subresource), slash + 1);
                    } else {
                        put(a.resource, sizeof(a.resource), r);
                    }
                    put(a.ns, sizeof(a.ns), ns);
                    put(a.name, sizeof(a.name), name ? sval(name) : "");
                    if (!(*budget)-- || !authz_check(z, u, &a, NULL, 0))
                        return false;
                }
            }
        }
    }
    return true;
}

/* Go's %+v of a PolicyRule, as kube lists the rules not held. */
static void rule_text(const json_t *rule, char *buf, size_t len)
{
    static const char *const keys[] = {"apiGroups", "resources", "resourceNames",
                                       "nonResourceURLs", "verbs"};
    static const char *const go[] = {"APIGroups", "Resources", "ResourceNames",
                                     "NonResourceURLs", "Verbs"};
    size_t used = 0, i;
    json_t *v;
    int w;

    w = snprintf(buf, len, "{");
    used = w > 0 ? (size_t)w : 0;
    for (size_t k = 0; k < 5 && used < len; k++) {
        const json_t *a = json_object_get(rule, keys[k]);
        if (!json_array_size(a))
            continue;
        w = snprintf(buf + used, len - used, "%s%s:[", used > 1 ? ", " : "", go[k]);
        used += w > 0 ? (size_t)w : 0;
        json_array_foreach(a, i, v) {
            if (used >= len)
                break;
            w = snprintf(buf + used, len - used, "%s\"%s\"", i ? " " : "", sval(v));
            used += w > 0 ? (size_t)w : 0;
        }
        if (used < len) {
            w = snprintf(buf + used, len - used, "]");
            used += w > 0 ? (size_t)w : 0;
        }
    }
    if (used < len)
        snprintf(buf + used, len - used, "}");
}

static int refuse(const api_resource *res, const json_t *obj, const ty_user *u,
                  const char *why, ty_error *err)
{
    char gr[160], groups[1024] = "";
    size_t used = 0;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                         "name"));

    for (size_t i = 0; i < u->ngroups && used < sizeof(groups); i++) {
        int w = snprintf(groups + used, sizeof(groups) - used, "%s\"%s\"", i ? " " : "",
                         u->groups[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    api_group_resource(res, gr, sizeof(gr));
    return ty_seterr(err, TY_EFORBIDDEN, "%s \"%s\" is forbidden: user \"%s\" (groups=[%s]) %s",
                     gr, name ? name : "", u->name, groups, why);
}

/* Every rule of rules held by u in ns; else the refusal. */
static int holds_all(ty_authz *z, const ty_user *u, const json_t *rules, const char *ns,
                     const api_resource *res, const json_t *obj, ty_error *err)
{
    char why[3072], text[1024];
    size_t used, i, budget = MAX_CHECKS, missing = 0;
    json_t *r;
    int w = snprintf(why, sizeof(why), "is attempting to grant RBAC permissions not currently "
                     "held:");

    used = w > 0 ? (size_t)w : 0;
    json_array_foreach(rules, i, r) {
        if (holds_rule(z, u, r, ns, &budget))
            continue;
        missing++;
        rule_text(r, text, sizeof(text));
        if (used < sizeof(why)) {
            w = snprintf(why + used, sizeof(why) - used, "\n%s", text);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    return missing ? refuse(res, obj, u, why, err) : 0;
}

/* May u use the named verb (escalate, bind) on the role? */
static bool may(ty_authz *z, const ty_user *u, const char *verb, bool cluster_role,
                const char *ns, const char *name)
{
    reqattr a;

    memset(&a, 0, sizeof(a));
    a.resource_request = true;
    put(a.verb, sizeof(a.verb), verb);
    put(a.api_group, sizeof(a.api_group), AZ_RBAC_GROUP);
    put(a.resource, sizeof(a.resource), cluster_role ? "clusterroles" : "roles");
    put(a.ns, sizeof(a.ns), ns);
    put(a.name, sizeof(a.name), name);
    return authz_check(z, u, &a, NULL, 0);
}

int authz_admit_write(ty_authz *z, const ty_user *u, const api_resource *res,
                      const json_t *obj, ty_error *err)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = sval(json_object_get(md, "namespace"));
    const char *name = sval(json_object_get(md, "name"));
    bool cluster = res == &api_clusterrole || res == &api_clusterrolebinding;

    if (!z || !u || userinfo_in_group(u, USERINFO_MASTERS))
        return 0;
    if (cluster)
        ns = "";
    if (res == &api_role || res == &api_clusterrole) {
        if (may(z, u, "escalate", cluster, ns, name))
            return 0;
        if (json_object_get(obj, "aggregationRule") &&
            !json_is_null(json_object_get(obj, "aggregationRule"))) {
            json_t *all = json_pack("[{s:[s], s:[s], s:[s]}, {s:[s], s:[s]}]", "apiGroups", "*",
                                    "resources", "*", "verbs", "*", "nonResourceURLs", "*",
                                    "verbs", "*");
            int rc = holds_all(z, u, all, "", res, obj, err);
            json_decref(all);
            if (rc < 0)
                return refuse(res, obj, u, "must have cluster-admin privileges to use the "
                              "aggregationRule", err);
        }
        return holds_all(z, u, json_object_get(obj, "rules"), ns, res, obj, err);
    }
    if (res == &api_rolebinding || res == &api_clusterrolebinding) {
        const json_t *ref = json_object_get(obj, "roleRef");
        const char *rname = sval(json_object_get(ref, "name"));
        bool to_cluster_role = strcmp(sval(json_object_get(ref, "kind")), "ClusterRole") == 0;
        json_t *rules;
        int rc;
        if (may(z, u, "bind", to_cluster_role, ns, rname))
            return 0;
        rules = authz_role_rules(z, to_cluster_role, ns, rname);
        if (!rules) /* as kube: the lookup's error */
            return ty_seterr(err, TY_ENOTFOUND, "%s.%s \"%s\" not found",
                             to_cluster_role ? "clusterrole" : "role", AZ_RBAC_GROUP, rname);
        rc = holds_all(z, u, rules, ns, res, obj, err);
        json_decref(rules);
        return rc;
    }
    return 0;
}
