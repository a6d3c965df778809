/* authz_defaults.c - the default ClusterRoles and ClusterRoleBindings,
 * bootstrapped on every start as kube-apiserver does (see authz_int.h).
 *
 * The user-facing roles are kube's: cluster-admin (everything, bound to
 * system:masters), and admin, edit and view, which carry no rules of their
 * own but aggregate every ClusterRole labelled
 * rbac.authorization.k8s.io/aggregate-to-{admin,edit,view}: "true" (edit is
 * labelled into admin, view into edit). What they grant comes from the
 * system:aggregate-to-* roles, whose rules are generated here from the
 * registry so that every kind Trainyard serves is covered and a kind added
 * later is covered on the next start (their autoupdate annotation adds the
 * missing rules to the stored roles):
 *   view: get/list/watch on every namespaced resource but Secrets, with
 *         their status and log subresources; Namespaces; the cluster-scoped
 *         resources of the job groups (Volcano's Queues), read only;
 *   edit: create/update/patch/delete/deletecollection on every namespaced
 *         resource but Events (read only, as upstream), RBAC's and
 *         JobRecords (the trainer controller's: delete only); Secrets,
 *         read and write;
 *   admin: Roles and RoleBindings in full; LocalSubjectAccessReviews.
 * Leases are in none of them, as upstream (is_control). */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "base/log.h"
#include "server/authz_int.h"

#define AGG_PREFIX "rbac.authorization.k8s.io/aggregate-to-"

static bool is_rbac(const api_resource *r)
{
    return strcmp(r->group, AZ_RBAC_GROUP) == 0;
}

/* Leases are the control plane's and the operators' (leader election,
 * granted by their own roles): upstream's admin, edit and view cover no
 * coordination.k8s.io resource, and a namespace's tenant must not be able
 * to take over or break an operator's election by writing its Lease. */
static bool is_control(const api_resource *r)
{
    return r == &api_lease;
}

/* Cluster-scoped resources a viewer of jobs reads: those of the job groups
 * (anything outside core and the *.k8s.io groups: Volcano's Queues). */
static bool viewable_cluster_scoped(const api_resource *r)
{
    size_t n = strlen(r->group);
    if (r == &api_namespace)
        return true;
    if (!n || r->namespaced)
        return false;
    return !(n >= 7 && strcmp(r->group + n - 7, ".k8s.io") == 0);
}

/* Adds name to the resources of groups[group] (a rule per group). */
static void add_resource(json_t *by_group, const char *group, const char *name)
{
    json_t *list = json_object_get(by_group, group);
    size_t i;
    json_t *v;

    if (!list) {
        list = json_array();
        json_object_set_new(by_group, group, list);
    }
    json_array_foreach(list, i, v)
        if (strcmp(json_string_value(v), name) == 0)
            return;
    json_array_append_new(list, json_string(name));
}

static json_t *verbs(const char *const *v)
{
    json_t *a = json_array();
    for (size_t i = 0; v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* One rule per group of by_group, with these verbs. Steals by_group. */
static void rules_from(json_t *rules, json_t *by_group, const char *const *vs)
{
    const char *group;
    json_t *res;

    json_object_foreach(by_group, group, res)
        json_array_append_new(rules, json_pack("{s:[s], s:O, s:o}", "apiGroups", group,
                                               "resources", res, "verbs", verbs(vs)));
    json_decref(by_group);
}

static const char *const read_verbs[] = {"get", "list", "watch", NULL};
static const char *const write_verbs[] = {"create", "delete", "deletecollection", "patch",
                                          "update", NULL};
static const char *const all_verbs[] = {"create", "delete", "deletecollection", "get", "list",
                                        "patch", "update", "watch", NULL};

static json_t *view_rules(void)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *rules = json_array(), *g = json_object();
    char sub[160];

    for (size_t i = 0; i < n; i++) {
        const api_resource *r = all[i];
        if (is_rbac(r) || is_control(r) || r == &api_secret)
            continue;
        if (!r->namespaced && !viewable_cluster_scoped(r))
            continue;
        add_resource(g, r->group, r->plural);
        if (r->has_status) {
            snprintf(sub, sizeof(sub), "%s/status", r->plural);
            add_resource(g, r->group, sub);
        }
        for (int j = 0; j < 4 && r->subresources[j]; j++) {
            if (strcmp(r->subresources[j], "binding") == 0)
                continue; /* a write, and the scheduler's */
            snprintf(sub, sizeof(sub), "%s/%s", r->plural, r->subresources[j]);
            add_resource(g, r->group, sub);
        }
    }
    /* Only what this server serves: a grant of an unserved resource
     * (Volcano's commands.bus.volcano.sh once was) would hand tenants a
     * CRD of that name the day an admin made one. */
    rules_from(rules, g, read_verbs);
    return rules;
}

static json_t *edit_rules(void)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    json_t *rules = json_array(), *g = json_object();

    for (size_t i = 0; i < n; i++) {
        const api_resource *r = all[i];
        /* a tenant's quota is the admin's to set: read (view), never written */
        if (!r->namespaced || is_rbac(r) || is_control(r) || r == &api_event ||
            r == &api_resourcequota || r == &api_jobrecord)
            continue;
        add_resource(g, r->group, r->plural);
    }
    rules_from(rules, g, write_verbs);
    /* a job's record is the trainer controller's to write: deleted, never
     * written (resource_write.c refuses a tenant's write in any case) */
    json_array_append_new(rules, json_pack("{s:[s], s:[s], s:[ss]}", "apiGroups",
                                           api_jobrecord.group, "resources", "jobrecords",
                                           "verbs", "delete", "deletecollection"));
    /* view leaves Secrets out; edit reads them */
    json_array_append_new(rules, json_pack("{s:[s], s:[s], s:o}", "apiGroups", "", "resources",
                                           "secrets", "verbs", verbs(read_verbs)));
    return rules;
}

static json_t *admin_rules(void)
{
    return json_pack("[{s:[s], s:[ss], s:o}, {s:[s], s:[s], s:[s]}]", "apiGroups",
                     AZ_RBAC_GROUP, "resources", "rolebindings", "roles", "verbs",
                     verbs(all_verbs), "apiGroups", "authorization.k8s.io", "resources",
                     "localsubjectaccessreviews", "verbs", "create");
}

static json_t *meta(const char *name, json_t *labels)
{
    json_t *l = labels ? labels : json_object();
    json_object_set_new(l, "kubernetes.io/bootstrapping", json_string("rbac-defaults"));
    return json_pack("{s:s, s:o, s:{s:s}}", "name", name, "labels", l, "annotations",
                     AZ_AUTOUPDATE, "true");
}

static json_t *cluster_role(const char *name, json_t *labels, json_t *rules)
{
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", AZ_RBAC_GROUP "/v1", "kind",
                     "ClusterRole", "metadata", meta(name, labels), "rules", rules);
}

static json_t *aggregated_role(const char *name, const char *selects, json_t *labels)
{
    char key[128];
    json_t *r = cluster_role(name, labels, json_array());

    snprintf(key, sizeof(key), AGG_PREFIX "%s", selects);
    json_object_set_new(r, "aggregationRule",
                        json_pack("{s:[{s:{s:s}}]}", "clusterRoleSelectors", "matchLabels", key,
                                  "true"));
    return r;
}

static json_t *agg_label(const char *to)
{
    char key[128];
    snprintf(key, sizeof(key), AGG_PREFIX "%s", to);
    return json_pack("{s:s}", key, "true");
}

static json_t *binding(const char *name, const char *g1, const char *g2)
{
    json_t *subjects = json_array();

    json_array_append_new(subjects, json_pack("{s:s, s:s, s:s}", "kind", "Group", "apiGroup",
                                              AZ_RBAC_GROUP, "name", g1));
    if (g2)
        json_array_append_new(subjects, json_pack("{s:s, s:s, s:s}", "kind", "Group",
                                                  "apiGroup", AZ_RBAC_GROUP, "name", g2));
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}, s:o}", "apiVersion",
                     AZ_RBAC_GROUP "/v1", "kind", "ClusterRoleBinding", "metadata",
                     meta(name, NULL), "roleRef", "apiGroup", AZ_RBAC_GROUP, "kind",
                     "ClusterRole", "name", name, "subjects", subjects);
}

json_t *az_default_objects(void)
{
    json_t *a = json_array();

    json_array_append_new(a, cluster_role("cluster-admin", NULL, json_pack(
        "[{s:[s], s:[s], s:[s]}, {s:[s], s:[s]}]", "apiGroups", "*", "resources", "*",
        "verbs", "*", "nonResourceURLs", "*", "verbs", "*")));
    json_array_append_new(a, aggregated_role("admin", "admin", NULL));
    json_array_append_new(a, aggregated_role("edit", "edit", agg_label("admin")));
    json_array_append_new(a, aggregated_role("view", "view", agg_label("edit")));
    json_array_append_new(a, cluster_role("system:aggregate-to-admin", agg_label("admin"),
                                          admin_rules()));
    json_array_append_new(a, cluster_role("system:aggregate-to-edit", agg_label("edit"),
                                          edit_rules()));
    json_array_append_new(a, cluster_role("system:aggregate-to-view", agg_label("view"),
                                          view_rules()));
    json_array_append_new(a, cluster_role("system:basic-user", NULL, json_pack(
        "[{s:[s], s:[ss], s:[s]}, {s:[s], s:[s], s:[s]}]", "apiGroups",
        "authorization.k8s.io", "resources", "selfsubjectaccessreviews",
        "selfsubjectrulesreviews", "verbs", "create", "apiGroups", "authentication.k8s.io",
        "resources", "selfsubjectreviews", "verbs", "create")));
    json_array_append_new(a, cluster_role("system:discovery", NULL, json_pack(
        "[{s:[sssssssssss], s:[s]}]", "nonResourceURLs", "/api", "/api/*", "/apis",
        "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version",
        "/version/", "verbs", "get")));
    json_array_append_new(a, cluster_role("system:public-info-viewer", NULL, json_pack(
        "[{s:[sssss], s:[s]}]", "nonResourceURLs", "/healthz", "/livez", "/readyz",
        "/version", "/version/", "verbs", "get")));
    json_array_append_new(a, binding("cluster-admin", USERINFO_MASTERS, NULL));
    json_array_append_new(a, binding("system:basic-user", USERINFO_AUTHENTICATED, NULL));
    json_array_append_new(a, binding("system:discovery", USERINFO_AUTHENTICATED, NULL));
    json_array_append_new(a, binding("system:public-info-viewer", USERINFO_AUTHENTICATED,
                                     "system:unauthenticated"));
    return a;
}

/* ---- bootstrap ---------------------------------------------------------- */

/* Appends to cur[key] (an array) what want[key] has and it lacks. */
static bool add_missing(json_t *cur, const json_t *want, const char *key)
{
    json_t *have = json_object_get(cur, key), *w, *h;
    size_t i, j;
    bool changed = false;

    if (!json_is_array(have)) {
        have = json_array();
        json_object_set_new(cur, key, have);
    }
    json_array_foreach(json_object_get(want, key), i, w) {
        bool seen = false;
        json_array_foreach(have, j, h) seen = seen || json_equal(h, w);
        if (!seen) {
            json_array_append(have, w);
            changed = true;
        }
    }
    return changed;
}

/* Adds the map members (labels, annotations) cur lacks. */
static void add_members(json_t *cur, const json_t *want, const char *key)
{
    json_t *have = json_object_get(cur, key), *v;
    const char *k;

    if (!json_is_object(have)) {
        have = json_object();
        json_object_set_new(cur, key, have);
    }
    json_object_foreach((json_t *)json_object_get(want, key), k, v)
        if (!json_object_get(have, k))
            json_object_set(have, k, v);
}

/* store_mutate's function: the reconciliation of one default (arg). */
static int reconcile(json_t *cur, void *arg, ty_error *err)
{
    const json_t *want = arg;
    json_t *md = json_object_get(cur, "metadata");
    const char *auto_ = json_string_value(
        json_object_get(json_object_get(md, "annotations"), AZ_AUTOUPDATE));

    (void)err;
    if (!auto_ || strcmp(auto_, "true") != 0)
        return 0; /* the admin took it over */
    add_members(md, json_object_get(want, "metadata"), "labels");
    add_members(md, json_object_get(want, "metadata"), "annotations");
    if (json_object_get(want, "aggregationRule") && !json_object_get(cur, "aggregationRule"))
        json_object_set(cur, "aggregationRule", json_object_get(want, "aggregationRule"));
    if (json_object_get(want, "subjects"))
        add_missing(cur, want, "subjects");
    else if (!json_object_get(want, "aggregationRule"))
        add_missing(cur, want, "rules"); /* an aggregated role's rules are computed */
    return 0;
}

int az_bootstrap(ty_store *s, ty_error *err)
{
    json_t *all = az_default_objects(), *o;
    size_t i;
    int rc = 0;

    json_array_foreach(all, i, o) {
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *name = json_string_value(
            json_object_get(json_object_get(o, "metadata"), "name"));
        const char *key = api_store_key(strcmp(kind, "ClusterRole") == 0
                                            ? &api_clusterrole : &api_clusterrolebinding);
        store_obj *cur = store_get(s, key, "", name, NULL), *res;

        if (cur)
            res = store_mutate(s, key, "", name, reconcile, o, err);
        else
            res = store_create(s, key, "", o, err);
        if (!res && err->code == TY_EEXISTS) /* made meanwhile: fine */
            ty_error_clear(err);
        else if (!res)
            rc = -1;
        store_obj_unref(cur);
        store_obj_unref(res);
        if (rc < 0)
            break;
    }
    json_decref(all);
    return rc;
}
