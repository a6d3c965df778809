/* authz_rules.c - RBAC's compiled snapshot and the rule matching of
 * kube-apiserver's RBAC authorizer (see authz_int.h).
 *
 * Matching, as upstream:
 *   verbs, apiGroups: "*" or the value;
 *   resources: "*", the resource, "resource/subresource" for a subresource
 *     request ("pods" does not grant "pods/log"), or "* /subresource";
 *   resourceNames: empty = any name, else the request's name must be listed
 *     (so a list or create, which has none, is not granted by a named rule);
 *   nonResourceURLs: "*", the path, or a prefix ending in "*".
 * A RoleBinding grants its role's rules in its namespace only; a
 * ClusterRoleBinding everywhere, and only it grants non-resource URLs and
 * cluster-scoped resources.
 *
 * Bindings are indexed by subject (user name, group name; a service
 * account as its user name system:serviceaccount:<ns>:<name>), so a
 * request looks only at the bindings that name its user or one of its
 * groups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"
#include "model/selector.h"
#include "server/authz_int.h"

typedef struct az_strs {
    char **v;
    size_t n;
    bool any; /* holds "*" */
} az_strs;

typedef struct az_rule {
    az_strs verbs, groups, resources, names, urls;
} az_rule;

typedef struct az_role {
    char *key;           /* "ns/name" (Role) or "name" (ClusterRole) */
    const json_t *rules; /* the JSON they were compiled from (the snapshot holds it) */
    az_rule *v;
    size_t n;
} az_role;

typedef struct az_binding {
    char *ns;        /* NULL: a ClusterRoleBinding */
    char *missing;   /* the reason when its role does not exist, else NULL */
    char *desc;      /* `RoleBinding "name/ns" of ClusterRole "edit"`, for reasons */
    const az_role *role;
} az_binding;

/* The bindings of one subject. */
typedef struct az_blist {
    char *key;
    const az_binding **v;
    size_t n, cap;
} az_blist;

struct az_snapshot {
    json_t *keep;          /* every rules array the roles point into */
    strmap roles;          /* "ns/name" -> az_role (Roles) */
    strmap croles;         /* name -> az_role (ClusterRoles, aggregated rules computed) */
    az_binding *bindings;
    size_t nbindings;
    strmap by_user, by_group; /* subject -> az_blist */
    /* what the maps point at, to free (strmap has no walk of its own) */
    az_role **all_roles;
    size_t nroles, caproles;
    az_blist **all_lists;
    size_t nlists, caplists;
};

/* Keeps p in (*v, *n, *cap) for freeing. */
static int own(void ***v, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        void **nv = realloc(*v, c * sizeof(void *));
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = p;
    return 0;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- compiling ---------------------------------------------------------- */

static int strs_compile(az_strs *s, const json_t *a)
{
    size_t i, n = json_array_size(a);
    json_t *v;

    memset(s, 0, sizeof(*s));
    if (!n)
        return 0;
    if (!(s->v = calloc(n, sizeof(char *))))
        return -1;
    json_array_foreach(a, i, v) {
        const char *str = json_string_value(v);
        if (!str)
            continue;
        if (strcmp(str, "*") == 0)
            s->any = true;
        if (!(s->v[s->n++] = strdup(str)))
            return -1;
    }
    return 0;
}

static void strs_free(az_strs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

static void role_free(az_role *r)
{
    for (size_t i = 0; r && i < r->n; i++) {
        strs_free(&r->v[i].verbs);
        strs_free(&r->v[i].groups);
        strs_free(&r->v[i].resources);
        strs_free(&r->v[i].names);
        strs_free(&r->v[i].urls);
    }
    if (r) {
        free(r->v);
        free(r->key);
    }
    free(r);
}

static az_role *role_compile(const char *key, const json_t *rules)
{
    az_role *r = calloc(1, sizeof(*r));
    size_t i, n = json_array_size(rules);
    json_t *j;

    if (!r || !(r->key = strdup(key)))
        goto error;
    r->rules = rules;
    if (n && !(r->v = calloc(n, sizeof(az_rule))))
        goto error;
    json_array_foreach(rules, i, j) {
        az_rule *ru = &r->v[r->n++];
        if (strs_compile(&ru->verbs, json_object_get(j, "verbs")) < 0 ||
            strs_compile(&ru->groups, json_object_get(j, "apiGroups")) < 0 ||
            strs_compile(&ru->resources, json_object_get(j, "resources")) < 0 ||
            strs_compile(&ru->names, json_object_get(j, "resourceNames")) < 0 ||
            strs_compile(&ru->urls, json_object_get(j, "nonResourceURLs")) < 0)
            goto error;
        ru->names.any = false; /* a resource name "*" is a name, not a wildcard */
    }
    return r;
error:
    role_free(r);
    return NULL;
}

static void blist_free(az_blist *l)
{
    if (l) {
        free(l->v);
        free(l->key);
    }
    free(l);
}

static int index_add(az_snapshot *s, strmap *m, const char *key, const az_binding *b)
{
    az_blist *l = strmap_get(m, key);

    if (!l) {
        if (!(l = calloc(1, sizeof(*l))) || !(l->key = strdup(key)) ||
            own((void ***)&s->all_lists, &s->nlists, &s->caplists, l) < 0) {
            blist_free(l);
            return -1;
        }
        if (strmap_put(m, l->key, l) < 0)
            return -1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        const az_binding **v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == b)
            return 0; /* named twice in one binding */
    l->v[l->n++] = b;
    return 0;
}

static int index_subjects(az_snapshot *s, const json_t *binding, const az_binding *b)
{
    size_t i;
    json_t *sub;
    char user[768];

    json_array_foreach(json_object_get(binding, "subjects"), i, sub) {
        const char *kind = jstr(sub, "kind"), *name = jstr(sub, "name");
        int rc = 0;
        if (!kind || !name)
            continue;
        if (strcmp(kind, "User") == 0) {
            rc = index_add(s, &s->by_user, name, b);
        } else if (strcmp(kind, "Group") == 0) {
            rc = index_add(s, &s->by_group, name, b);
        } else if (strcmp(kind, "ServiceAccount") == 0) {
            const char *ns = jstr(sub, "namespace");
            if (!ns || !*ns)
                ns = b->ns ? b->ns : "";
            snprintf(user, sizeof(user), "system:serviceaccount:%s:%s", ns, name);
            rc = index_add(s, &s->by_user, user, b);
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int add_roles(az_snapshot *s, strmap *m, const json_t *list, const json_t *aggregated,
                     bool namespaced)
{
    size_t i;
    json_t *o;
    char key[600];

    json_array_foreach(list, i, o) {
        const json_t *md = json_object_get(o, "metadata");
        const char *name = jstr(md, "name"), *ns = jstr(md, "namespace");
        const json_t *rules = json_object_get(o, "rules");
        az_role *r;
        if (!name)
            continue;
        if (!namespaced && json_object_get(aggregated, name))
            rules = json_object_get(aggregated, name);
        if (!rules)
            rules = json_null();
        if (json_array_append(s->keep, (json_t *)rules) < 0)
            return -1;
        if (namespaced)
            snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
        else
            snprintf(key, sizeof(key), "%s", name);
        if (strmap_get(m, key))
            continue;
        if (!(r = role_compile(key, rules)))
            return -1;
        if (own((void ***)&s->all_roles, &s->nroles, &s->caproles, r) < 0) {
            role_free(r);
            return -1;
        }
        if (strmap_put(m, r->key, r) < 0)
            return -1;
    }
    return 0;
}

static int add_bindings(az_snapshot *s, const json_t *list, bool cluster)
{
    size_t i;
    json_t *o;
    char key[600];

    json_array_foreach(list, i, o) {
        const json_t *md = json_object_get(o, "metadata");
        const json_t *ref = json_object_get(o, "roleRef");
        const char *ns = jstr(md, "namespace"), *kind = jstr(ref, "kind");
        const char *rname = jstr(ref, "name");
        az_binding *b = &s->bindings[s->nbindings++];
        bool is_cluster_role = kind && strcmp(kind, "ClusterRole") == 0;

        if (!cluster && !(b->ns = strdup(ns ? ns : "")))
            return -1;
        if (!rname)
            rname = "";
        if (is_cluster_role) {
            b->role = strmap_get(&s->croles, rname);
        } else if (!cluster) {
            snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", rname);
            b->role = strmap_get(&s->roles, key);
        }
        {
            char d[1400];
            const char *bname = jstr(md, "name") ? jstr(md, "name") : "";
            if (cluster)
                snprintf(d, sizeof(d), "ClusterRoleBinding \"%s\" of %s \"%s\"", bname,
                         kind ? kind : "", rname);
            else
                snprintf(d, sizeof(d), "RoleBinding \"%s/%s\" of %s \"%s\"", bname,
                         ns ? ns : "", kind ? kind : "", rname);
            if (!(b->desc = strdup(d)))
                return -1;
        }
        if (!b->role) {
            char why[600];
            snprintf(why, sizeof(why), "%s.%s \"%s\" not found",
                     is_cluster_role ? "clusterrole" : "role", AZ_RBAC_GROUP, rname);
            if (!(b->missing = strdup(why)))
                return -1;
        }
        if (index_subjects(s, o, b) < 0)
            return -1;
    }
    return 0;
}

az_snapshot *az_snapshot_build(const json_t *roles, const json_t *clusterroles,
                               const json_t *rolebindings, const json_t *clusterrolebindings)
{
    az_snapshot *s = calloc(1, sizeof(*s));
    size_t nb = json_array_size(rolebindings) + json_array_size(clusterrolebindings);
    json_t *agg = NULL;

    if (!s)
        return NULL;
    strmap_init(&s->roles);
    strmap_init(&s->croles);
    strmap_init(&s->by_user);
    strmap_init(&s->by_group);
    if (!(s->keep = json_array()) || (nb && !(s->bindings = calloc(nb, sizeof(az_binding)))))
        goto error;
    agg = az_aggregate(clusterroles);
    if (!agg || add_roles(s, &s->roles, roles, NULL, true) < 0 ||
        add_roles(s, &s->croles, clusterroles, agg, false) < 0 ||
        add_bindings(s, rolebindings, false) < 0 ||
        add_bindings(s, clusterrolebindings, true) < 0)
        goto error;
    json_decref(agg);
    return s;
error:
    json_decref(agg);
    az_snapshot_free(s);
    return NULL;
}

void az_snapshot_free(az_snapshot *s)
{
    if (!s)
        return;
    strmap_free(&s->roles);
    strmap_free(&s->croles);
    strmap_free(&s->by_user);
    strmap_free(&s->by_group);
    for (size_t i = 0; i < s->nroles; i++)
        role_free(s->all_roles[i]);
    free(s->all_roles);
    for (size_t i = 0; i < s->nlists; i++)
        blist_free(s->all_lists[i]);
    free(s->all_lists);
    for (size_t i = 0; i < s->nbindings; i++) {
        free(s->bindings[i].ns);
        free(s->bindings[i].missing);
        free(s->bindings[i].desc);
    }
    free(s->bindings);
    json_decref(s->keep);
    free(s);
}

/* ---- matching ----------------------------------------------------------- */

static bool strs_has(const az_strs *s, const char *v)
{
    if (s->any)
        return true;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], v) == 0)
            return true;
    return false;
}

static bool resource_matches(const az_strs *rs, const reqattr *a)
{
    size_t rl = strlen(a->resource), sl = strlen(a->subresource);

    if (rs->any)
        return true;
    for (size_t i = 0; i < rs->n; i++) {
        const char *r = rs->v[i];
        if (!sl) {
            if (strcmp(r, a->resource) == 0)
                return true;
            continue;
        }
        /* "pods/log", or "* /log" for every resource's log */
        if (strncmp(r, a->resource, rl) == 0 && r[rl] == '/' && strcmp(r + rl + 1,
                                                                       a->subresource) == 0)
            return true;
        if (r[0] == '*' && r[1] == '/' && strcmp(r + 2, a->subresource) == 0)
            return true;
    }
    return false;
}

static bool url_matches(const az_strs *us, const char *path)
{
    for (size_t i = 0; i < us->n; i++) {
        const char *u = us->v[i];
        size_t n = strlen(u);
        if (strcmp(u, "*") == 0 || strcmp(u, path) == 0)
            return true;
        if (n && u[n - 1] == '*' && strncmp(u, path, n - 1) == 0)
            return true;
    }
    return false;
}

static bool rule_matches(const az_rule *r, const reqattr *a)
{
    if (!strs_has(&r->verbs, a->verb))
        return false;
    if (!a->resource_request)
        return url_matches(&r->urls, a->path);
    return strs_has(&r->groups, a->api_group) && resource_matches(&r->resources, a) &&
           (r->names.n == 0 || strs_has(&r->names, a->name));
}

bool az_rule_allows(const json_t *rule, const reqattr *a)
{
    az_role *r = role_compile("", json_pack("[O]", rule));
    bool ok = false;

    if (r && r->n == 1)
        ok = rule_matches(&r->v[0], a);
    if (r)
        json_decref((json_t *)r->rules);
    role_free(r);
    return ok;
}

/* Looks through the bindings of one subject; notes the first missing role
 * of a binding that applies, for the reason. The binding that allows, or
 * NULL. */
static const az_binding *list_allows(const az_blist *l, const reqattr *a,
                                     const char **missing)
{
    for (size_t i = 0; l && i < l->n; i++) {
        const az_binding *b = l->v[i];
        if (b->ns && strcmp(b->ns, a->ns) != 0)
            continue;
        if (b->ns && !a->ns[0])
            continue;
        if (!b->role) {
            if (!*missing)
                *missing = b->missing;
            continue;
        }
        for (size_t j = 0; j < b->role->n; j++)
            if (rule_matches(&b->role->v[j], a))
                return b;
    }
    return NULL;
}

/* kube's reason for an allow: `RBAC: allowed by RoleBinding "b/ns" of
 * ClusterRole "edit" to User "alice"` (a service account as
 * ServiceAccount "name/ns"). */
static void allowed_reason(const az_binding *b, bool group, const char *subject, char *reason,
                           size_t cap)
{
    static const char sa[] = "system:serviceaccount:";
    const char *rest = subject + sizeof(sa) - 1, *colon;

    if (!reason || !cap)
        return;
    if (!group && strncmp(subject, sa, sizeof(sa) - 1) == 0 && (colon = strchr(rest, ':')))
        snprintf(reason, cap, "RBAC: allowed by %s to ServiceAccount \"%s/%.*s\"", b->desc,
                 colon + 1, (int)(colon - rest), rest);
    else
        snprintf(reason, cap, "RBAC: allowed by %s to %s \"%s\"", b->desc,
                 group ? "Group" : "User", subject);
}

int az_snapshot_allows(const az_snapshot *s, const ty_user *u, const reqattr *a, char *reason,
                       size_t cap)
{
    const char *missing = NULL;
    const az_binding *b;

    if (reason && cap)
        reason[0] = '\0';
    if (!u)
        return 0;
    if (userinfo_in_group(u, USERINFO_MASTERS))
        return 1;
    if (!s)
        return 0;
    if ((b = list_allows(strmap_get(&s->by_user, u->name), a, &missing))) {
        allowed_reason(b, false, u->name, reason, cap);
        return 1;
    }
    for (size_t i = 0; i < u->ngroups; i++)
        if ((b = list_allows(strmap_get(&s->by_group, u->groups[i]), a, &missing))) {
            allowed_reason(b, true, u->groups[i], reason, cap);
            return 1;
        }
    if (missing && reason && cap)
        snprintf(reason, cap, "RBAC: %s", missing);
    return 0;
}

json_t *az_snapshot_role_rules(const az_snapshot *s, bool cluster, const char *ns,
                               const char *name)
{
    char key[600];
    const az_role *r;

    if (!s)
        return NULL;
    if (cluster) {
        r = strmap_get(&s->croles, name);
    } else {
        snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
        r = strmap_get(&s->roles, key);
    }
    return r ? json_deep_copy(r->rules) : NULL;
}

/* ---- rules review ------------------------------------------------------- */

static void append_rules(json_t *res_rules, json_t *url_rules, const az_blist *l, const char *ns)
{
    size_t i;
    json_t *r;

    for (size_t k = 0; l && k < l->n; k++) {
        const az_binding *b = l->v[k];
        if (!b->role || (b->ns && strcmp(b->ns, ns) != 0))
            continue;
        json_array_foreach(b->role->rules, i, r) {
            json_t *urls = json_object_get(r, "nonResourceURLs");
            json_t *out, *dst = json_array_size(urls) ? url_rules : res_rules;
            size_t j;
            json_t *have;
            bool seen = false;
            if (dst == url_rules && b->ns)
                continue; /* a RoleBinding grants no URLs */
            out = json_deep_copy(r);
            if (dst == url_rules) {
                json_object_del(out, "apiGroups");
                json_object_del(out, "resources");
                json_object_del(out, "resourceNames");
            } else {
                json_object_del(out, "nonResourceURLs");
            }
            json_array_foreach(dst, j, have) seen = seen || json_equal(have, out);
            if (seen)
                json_decref(out);
            else
                json_array_append_new(dst, out);
        }
    }
}

json_t *az_snapshot_rules(const az_snapshot *s, const ty_user *u, const char *ns)
{
    json_t *res_rules = json_array(), *url_rules = json_array();

    if (s && u) {
        append_rules(res_rules, url_rules, strmap_get(&s->by_user, u->name), ns ? ns : "");
        for (size_t i = 0; i < u->ngroups; i++)
            append_rules(res_rules, url_rules, strmap_get(&s->by_group, u->groups[i]),
                         ns ? ns : "");
    }
    return json_pack("{s:o, s:o, s:b}", "resourceRules", res_rules, "nonResourceRules",
                     url_rules, "incomplete", 0);
}

/* ---- aggregation -------------------------------------------------------- */

static bool selected(const json_t *agg_rule, const json_t *role)
{
    const json_t *labels = json_object_get(json_object_get(role, "metadata"), "labels");
    size_t i;
    json_t *sel;

    json_array_foreach(json_object_get(agg_rule, "clusterRoleSelectors"), i, sel) {
        ty_label_selector *ls = label_selector_from_json(sel, NULL);
        bool ok = ls && !label_selector_empty(ls) && label_selector_matches(ls, labels);
        label_selector_free(ls);
        if (ok)
            return true;
    }
    return false;
}

json_t *az_aggregate(const json_t *clusterroles)
{
    json_t *eff = json_object(); /* name -> rules (aggregated roles only) */
    size_t n = json_array_size(clusterroles), i, j;
    json_t *o;
    bool changed = true;

    if (!eff)
        return NULL;
    /* A chain (admin selects edit, which selects view) needs a pass per
     * link; n + 1 passes are enough for any chain without a cycle. */
    for (size_t pass = 0; changed && pass <= n; pass++) {
        changed = false;
        json_array_foreach(clusterroles, i, o) {
            const json_t *agg = json_object_get(o, "aggregationRule");
            const char *name = jstr(json_object_get(o, "metadata"), "name");
            json_t *rules, *other;
            if (!json_is_object(agg) || !name)
                continue;
            rules = json_array();
            json_array_foreach(clusterroles, j, other) {
                const char *oname = jstr(json_object_get(other, "metadata"), "name");
                const json_t *orules;
                size_t k, m;
                json_t *r, *have;
                if (j == i || !oname || !selected(agg, other))
                    continue;
                orules = json_object_get(eff, oname);
                if (!orules)
                    orules = json_object_get(other, "rules");
                json_array_foreach(orules, k, r) {
                    bool seen = false;
                    json_array_foreach(rules, m, have) seen = seen || json_equal(have, r);
                    if (!seen)
                        json_array_append(rules, r);
                }
            }
            if (!json_equal(rules, json_object_get(eff, name))) {
                changed = true;
                json_object_set(eff, name, rules);
            }
            json_decref(rules);
        }
    }
    return eff;
}
