/* test_authz.c - RBAC: rule matching, the compiled snapshot (namespaced and
 * cluster bindings, groups, service accounts, missing roles), aggregation,
 * the default roles, the authorizer over a store (rebuilt after a change),
 * kube's 403 wording, the RBAC kinds' validation and the job creator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store_fixture.h"

#include "api/kinds.h"
#include "server/authz.h"
#include "server/authz_int.h"
#include "server/creator.h"

static reqattr res_attr(const char *verb, const char *group, const char *resource,
                        const char *sub, const char *ns, const char *name)
{
    reqattr a;
    memset(&a, 0, sizeof(a));
    a.resource_request = true;
    strcpy(a.verb, verb);
    strcpy(a.api_group, group);
    strcpy(a.resource, resource);
    strcpy(a.subresource, sub);
    strcpy(a.ns, ns);
    strcpy(a.name, name);
    return a;
}

static reqattr url_attr(const char *verb, const char *path)
{
    reqattr a;
    memset(&a, 0, sizeof(a));
    strcpy(a.verb, verb);
    strcpy(a.path, path);
    return a;
}

static bool allows(const char *rule_json, reqattr a)
{
    json_t *rule = json_loads(rule_json, 0, NULL);
    bool ok;
    assert_non_null(rule);
    ok = az_rule_allows(rule, &a);
    json_decref(rule);
    return ok;
}

static void test_rule_matching(void **state)
{
    (void)state;
    const char *pods = "{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\",\"list\"]}";
    assert_true(allows(pods, res_attr("get", "", "pods", "", "a", "p")));
    assert_true(allows(pods, res_attr("list", "", "pods", "", "a", "")));
    assert_false(allows(pods, res_attr("create", "", "pods", "", "a", "")));
    assert_false(allows(pods, res_attr("get", "apps", "pods", "", "a", "p")));
    /* "pods" does not grant a subresource */
    assert_false(allows(pods, res_attr("get", "", "pods", "log", "a", "p")));
    const char *logs = "{\"apiGroups\":[\"\"],\"resources\":[\"pods/log\"],\"verbs\":[\"get\"]}";
    assert_true(allows(logs, res_attr("get", "", "pods", "log", "a", "p")));
    assert_false(allows(logs, res_attr("get", "", "pods", "", "a", "p")));
    assert_false(allows(logs, res_attr("get", "", "pods", "status", "a", "p")));
    const char *any_status = "{\"apiGroups\":[\"*\"],\"resources\":[\"*/status\"],\"verbs\":[\"*\"]}";
    assert_true(allows(any_status, res_attr("patch", "kubeflow.org", "pytorchjobs", "status",
                                            "a", "j")));
    assert_false(allows(any_status, res_attr("patch", "kubeflow.org", "pytorchjobs", "", "a",
                                             "j")));
    const char *all = "{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}";
    assert_true(allows(all, res_attr("deletecollection", "x.io", "things", "", "", "")));
    assert_true(allows(all, res_attr("get", "", "pods", "log", "a", "p")));
    /* resourceNames: only named requests, and "*" is a name */
    const char *named = "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
                        "\"resourceNames\":[\"cfg\"],\"verbs\":[\"get\",\"list\"]}";
    assert_true(allows(named, res_attr("get", "", "configmaps", "", "a", "cfg")));
    assert_false(allows(named, res_attr("get", "", "configmaps", "", "a", "other")));
    assert_false(allows(named, res_attr("list", "", "configmaps", "", "a", "")));
    const char *star_name = "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
                            "\"resourceNames\":[\"*\"],\"verbs\":[\"get\"]}";
    assert_false(allows(star_name, res_attr("get", "", "configmaps", "", "a", "cfg")));
    /* non-resource URLs: exact, prefix with a trailing *, and only for URLs */
    const char *urls = "{\"nonResourceURLs\":[\"/healthz\",\"/apis/*\"],\"verbs\":[\"get\"]}";
    assert_true(allows(urls, url_attr("get", "/healthz")));
    assert_false(allows(urls, url_attr("get", "/healthz/extra")));
    assert_true(allows(urls, url_attr("get", "/apis/kubeflow.org/v1")));
    assert_false(allows(urls, url_attr("get", "/apis")));
    assert_false(allows(urls, url_attr("post", "/healthz")));
    assert_false(allows(urls, res_attr("get", "", "healthz", "", "", "")));
    assert_false(allows(pods, url_attr("get", "/api")));
}

static const char *const alice_groups[] = {"team-a-devs"};

static ty_user *alice(void)
{
    return userinfo_new("alice", "u1", alice_groups, 1);
}

static json_t *binding(const char *kind, const char *ns, const char *name, const char *role_kind,
                       const char *role, const char *subj_kind, const char *subj)
{
    json_t *b = json_pack("{s:s, s:{s:s}, s:{s:s, s:s, s:s}, s:[{s:s, s:s}]}", "kind", kind,
                          "metadata", "name", name, "roleRef", "apiGroup", AZ_RBAC_GROUP,
                          "kind", role_kind, "name", role, "subjects", "kind", subj_kind,
                          "name", subj);
    if (ns)
        json_object_set_new(json_object_get(b, "metadata"), "namespace", json_string(ns));
    return b;
}

static json_t *role(const char *ns, const char *name, const char *rules, const char *labels)
{
    json_t *r = json_pack("{s:{s:s}, s:o}", "metadata", "name", name, "rules",
                          json_loads(rules, 0, NULL));
    if (ns)
        json_object_set_new(json_object_get(r, "metadata"), "namespace", json_string(ns));
    if (labels)
        json_object_set_new(json_object_get(r, "metadata"), "labels",
                            json_loads(labels, 0, NULL));
    return r;
}

static void test_snapshot_bindings(void **state)
{
    (void)state;
    json_t *roles = json_array(), *croles = json_array(), *rbs = json_array(),
           *crbs = json_array();
    ty_user *u = alice(), *bob = userinfo_new("bob", NULL, NULL, 0);
    ty_user *sa = userinfo_new("system:serviceaccount:team-a:robot", NULL, NULL, 0);
    const char *masters[] = {"system:masters"};
    ty_user *root = userinfo_new("root", NULL, masters, 1);
    char reason[256];

    json_array_append_new(roles, role("team-a", "pod-reader",
        "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\",\"list\"]}]", NULL));
    json_array_append_new(croles, role(NULL, "job-editor",
        "[{\"apiGroups\":[\"kubeflow.org\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}]", NULL));
    json_array_append_new(croles, role(NULL, "url-reader",
        "[{\"nonResourceURLs\":[\"/metrics\"],\"verbs\":[\"get\"]}]", NULL));
    json_array_append_new(rbs, binding("RoleBinding", "team-a", "b1", "Role", "pod-reader",
                                       "User", "alice"));
    json_array_append_new(rbs, binding("RoleBinding", "team-a", "b2", "ClusterRole",
                                       "job-editor", "Group", "team-a-devs"));
    json_array_append_new(rbs, binding("RoleBinding", "team-a", "b3", "ClusterRole",
                                       "url-reader", "User", "alice"));
    json_array_append_new(rbs, binding("RoleBinding", "team-b", "b4", "ClusterRole", "gone",
                                       "User", "bob"));
    json_t *sab = binding("RoleBinding", "team-a", "b5", "Role", "pod-reader", "ServiceAccount",
                          "robot");
    json_array_append_new(rbs, sab);
    json_array_append_new(crbs, binding("ClusterRoleBinding", NULL, "c1", "ClusterRole",
                                        "url-reader", "User", "bob"));
    az_snapshot *s = az_snapshot_build(roles, croles, rbs, crbs);
    assert_non_null(s);

    /* a Role via a RoleBinding: in its namespace only */
    assert_true(az_snapshot_allows(s, u, &(reqattr){0}, NULL, 0) == 0);
    reqattr a = res_attr("list", "", "pods", "", "team-a", "");
    assert_int_equal(az_snapshot_allows(s, u, &a, NULL, 0), 1);
    a = res_attr("list", "", "pods", "", "team-b", "");
    assert_int_equal(az_snapshot_allows(s, u, &a, reason, sizeof(reason)), 0);
    assert_string_equal(reason, "");
    a = res_attr("list", "", "pods", "", "", "");
    assert_int_equal(az_snapshot_allows(s, u, &a, NULL, 0), 0); /* all namespaces */
    /* a ClusterRole through a group's RoleBinding: that namespace only */
    a = res_attr("create", "kubeflow.org", "pytorchjobs", "", "team-a", "");
    assert_int_equal(az_snapshot_allows(s, u, &a, reason, sizeof(reason)), 1);
    assert_string_equal(reason, "RBAC: allowed by RoleBinding \"b2/team-a\" of ClusterRole "
                                "\"job-editor\" to Group \"team-a-devs\"");
    a = res_attr("create", "kubeflow.org", "pytorchjobs", "", "team-b", "");
    assert_int_equal(az_snapshot_allows(s, u, &a, NULL, 0), 0);
    /* a RoleBinding never grants URLs; a ClusterRoleBinding does */
    reqattr m = url_attr("get", "/metrics");
    assert_int_equal(az_snapshot_allows(s, u, &m, NULL, 0), 0);
    assert_int_equal(az_snapshot_allows(s, bob, &m, NULL, 0), 1);
    /* a binding to a missing role: the reason names it */
    a = res_attr("get", "", "pods", "", "team-b", "p");
    assert_int_equal(az_snapshot_allows(s, bob, &a, reason, sizeof(reason)), 0);
    assert_string_equal(reason,
                        "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found");
    /* a service account subject (namespace from the binding) */
    a = res_attr("get", "", "pods", "", "team-a", "p");
    assert_int_equal(az_snapshot_allows(s, sa, &a, reason, sizeof(reason)), 1);
    assert_string_equal(reason, "RBAC: allowed by RoleBinding \"b5/team-a\" of Role "
                                "\"pod-reader\" to ServiceAccount \"robot/team-a\"");
    /* system:masters: everything, even with no binding */
    a = res_attr("delete", "x.io", "things", "", "z", "t");
    assert_int_equal(az_snapshot_allows(s, root, &a, reason, sizeof(reason)), 1);
    assert_string_equal(reason, "");
    assert_int_equal(az_snapshot_allows(s, NULL, &a, NULL, 0), 0);

    /* the rules review: what alice may do in team-a */
    json_t *rr = az_snapshot_rules(s, u, "team-a");
    assert_int_equal(json_array_size(json_object_get(rr, "resourceRules")), 2);
    assert_int_equal(json_array_size(json_object_get(rr, "nonResourceRules")), 0);
    json_decref(rr);
    rr = az_snapshot_rules(s, bob, "");
    assert_int_equal(json_array_size(json_object_get(rr, "nonResourceRules")), 1);
    json_decref(rr);

    az_snapshot_free(s);
    json_decref(roles);
    json_decref(croles);
    json_decref(rbs);
    json_decref(crbs);
    userinfo_free(u);
    userinfo_free(bob);
    userinfo_free(sa);
    userinfo_free(root);
}

static void test_aggregation(void **state)
{
    (void)state;
    json_t *croles = json_array();
    json_t *top = role(NULL, "top", "[]", NULL), *mid = role(NULL, "mid", "[]",
                                                              "{\"to-top\":\"true\"}");
    json_object_set_new(top, "aggregationRule",
                        json_loads("{\"clusterRoleSelectors\":[{\"matchLabels\":"
                                   "{\"to-top\":\"true\"}}]}", 0, NULL));
    json_object_set_new(mid, "aggregationRule",
                        json_loads("{\"clusterRoleSelectors\":[{\"matchLabels\":"
                                   "{\"to-mid\":\"true\"}}]}", 0, NULL));
    /* the chain top <- mid <- leaf, listed top first: needs two passes */
    json_array_append_new(croles, top);
    json_array_append_new(croles, mid);
    json_array_append_new(croles, role(NULL, "leaf",
        "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]",
        "{\"to-mid\":\"true\"}"));
    json_array_append_new(croles, role(NULL, "other",
        "[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"verbs\":[\"get\"]}]",
        "{\"to-top\":\"true\"}"));
    json_array_append_new(croles, role(NULL, "unlabelled",
        "[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],\"verbs\":[\"get\"]}]", NULL));
    json_t *agg = az_aggregate(croles);
    assert_int_equal(json_array_size(json_object_get(agg, "mid")), 1);
    assert_int_equal(json_array_size(json_object_get(agg, "top")), 2);
    assert_null(json_object_get(agg, "leaf"));
    json_decref(agg);

    /* the snapshot uses the computed rules, not the stored (empty) ones */
    json_t *crbs = json_array();
    json_array_append_new(crbs, binding("ClusterRoleBinding", NULL, "c", "ClusterRole", "top",
                                        "User", "alice"));
    az_snapshot *s = az_snapshot_build(NULL, croles, NULL, crbs);
    ty_user *u = alice();
    reqattr a = res_attr("get", "", "pods", "", "x", "p");
    assert_int_equal(az_snapshot_allows(s, u, &a, NULL, 0), 1);
    a = res_attr("get", "", "nodes", "", "", "n");
    assert_int_equal(az_snapshot_allows(s, u, &a, NULL, 0), 0);
    az_snapshot_free(s);
    userinfo_free(u);
    json_decref(crbs);
    json_decref(croles);
}

/* The defaults' rules cover every job kind of the registry. */
static void test_default_roles_cover_registry(void **state)
{
    (void)state;
    json_t *all = az_default_objects(), *o, *croles = json_array();
    size_t i, n;
    const api_resource *const *res = api_resources(&n);

    json_array_foreach(all, i, o)
        if (strcmp(json_string_value(json_object_get(o, "kind")), "ClusterRole") == 0)
            json_array_append(croles, o);
    json_t *crbs = json_array();
    json_array_append_new(crbs, binding("ClusterRoleBinding", NULL, "e", "ClusterRole", "edit",
                                        "User", "editor"));
    json_array_append_new(crbs, binding("ClusterRoleBinding", NULL, "v", "ClusterRole", "view",
                                        "User", "viewer"));
    json_array_append_new(crbs, binding("ClusterRoleBinding", NULL, "a", "ClusterRole", "admin",
                                        "User", "admin"));
    az_snapshot *s = az_snapshot_build(NULL, croles, NULL, crbs);
    ty_user *ed = userinfo_new("editor", NULL, NULL, 0), *vw = userinfo_new("viewer", NULL,
                                                                             NULL, 0);
    ty_user *ad = userinfo_new("admin", NULL, NULL, 0);
    for (i = 0; i < n; i++) {
        if (!res[i]->namespaced || strcmp(res[i]->group, AZ_RBAC_GROUP) == 0)
            continue;
        reqattr a = res_attr("list", res[i]->group, res[i]->plural, "", "ns", "");
        if (res[i] == &api_lease) {
            /* leader elections' locks: no aggregated role has them, as upstream */
            assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 0);
            for (int v = 0; v < 3; v++) {
                static const char *const vs[] = {"get", "update", "delete"};
                a = res_attr(vs[v], res[i]->group, res[i]->plural, "", "ns", "l");
                assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 0);
                assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
                assert_int_equal(az_snapshot_allows(s, ad, &a, NULL, 0), 0);
            }
            continue;
        }
        if (res[i] == &api_secret)
            assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 0);
        else if (az_snapshot_allows(s, vw, &a, NULL, 0) != 1)
            fail_msg("view cannot list %s", res[i]->plural);
        a = res_attr("create", res[i]->group, res[i]->plural, "", "ns", "");
        if (res[i] == &api_jobrecord) {
            /* the trainer controller's: edit deletes, never writes */
            assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
            a = res_attr("delete", res[i]->group, res[i]->plural, "", "ns", "r");
            assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 1);
            a = res_attr("patch", res[i]->group, res[i]->plural, "", "ns", "r");
            assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
        } else if (res[i] == &api_event || res[i] == &api_resourcequota) /* a tenant's quota
                                                                             is the admin's */
            assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
        else if (az_snapshot_allows(s, ed, &a, NULL, 0) != 1)
            fail_msg("edit cannot create %s", res[i]->plural);
        assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 0);
    }
    reqattr a = res_attr("get", "", "pods", "log", "ns", "p");
    assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 1);
    a = res_attr("list", "scheduling.volcano.sh", "queues", "", "", "");
    assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 1);
    a = res_attr("create", "scheduling.volcano.sh", "queues", "", "", "");
    assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
    a = res_attr("create", AZ_RBAC_GROUP, "rolebindings", "", "ns", "");
    assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
    assert_int_equal(az_snapshot_allows(s, ad, &a, NULL, 0), 1);
    /* nothing the server does not serve (a CRD an admin makes later of
     * that name is not the tenants' to write) */
    a = res_attr("create", "bus.volcano.sh", "commands", "", "ns", "");
    assert_int_equal(az_snapshot_allows(s, ed, &a, NULL, 0), 0);
    a = res_attr("list", "bus.volcano.sh", "commands", "", "ns", "");
    assert_int_equal(az_snapshot_allows(s, vw, &a, NULL, 0), 0);
    /* nor may a namespace's admin raise its own quota */
    a = res_attr("update", "", "resourcequotas", "", "ns", "q");
    assert_int_equal(az_snapshot_allows(s, ad, &a, NULL, 0), 0);
    az_snapshot_free(s);
    userinfo_free(ed);
    userinfo_free(vw);
    userinfo_free(ad);
    json_decref(crbs);
    json_decref(croles);
    json_decref(all);
}

static bool wait_for(ty_authz *z, const ty_user *u, const reqattr *a, int want)
{
    for (int i = 0; i < 3000; i++) { /* 30 s */
        if (authz_check(z, u, a, NULL, 0) == want)
            return true;
        usleep(10000);
    }
    return false;
}

static void test_authorizer_over_store(void **state)
{
    (void)state;
    char dir[64];
    ty_store *st = store_fixture_open(dir, NULL);
    ty_error err;
    ty_user *u = alice();
    reqattr a = res_attr("create", "kubeflow.org", "pytorchjobs", "", "team-a", "");

    ty_error_init(&err);
    ty_authz *z = authz_new(st, &err);
    assert_non_null(z);
    /* bootstrapped: the defaults are in the store, edit's rules written */
    store_obj *o = store_get(st, api_store_key(&api_clusterrole), "", "cluster-admin", NULL);
    assert_non_null(o);
    store_obj_unref(o);
    assert_int_equal(authz_check(z, u, &a, NULL, 0), 0);

    /* a binding written straight into the store: the watch rebuilds */
    json_t *b = binding("RoleBinding", "team-a", "alice-edit", "ClusterRole", "edit", "User",
                        "alice");
    o = store_create(st, api_store_key(&api_rolebinding), "team-a", b, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(b);
    assert_true(wait_for(z, u, &a, 1));
    /* its deletion: refused again; authz_refresh sees it at once */
    bool deleted;
    o = store_delete(st, api_store_key(&api_rolebinding), "team-a", "alice-edit", NULL, &deleted,
                     &err);
    assert_non_null(o);
    store_obj_unref(o);
    authz_refresh(z);
    assert_int_equal(authz_check(z, u, &a, NULL, 0), 0);

    /* a labelled ClusterRole joins edit's aggregated rules, written back */
    json_t *extra = role(NULL, "extra", "[{\"apiGroups\":[\"x.io\"],\"resources\":[\"widgets\"],"
                         "\"verbs\":[\"get\"]}]",
                         "{\"rbac.authorization.k8s.io/aggregate-to-edit\":\"true\"}");
    o = store_create(st, api_store_key(&api_clusterrole), "", extra, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(extra);
    bool written = false;
    for (int i = 0; i < 3000 && !written; i++) {
        o = store_get(st, api_store_key(&api_clusterrole), "", "admin", NULL);
        written = o && strstr(store_obj_text(o, NULL), "widgets");
        store_obj_unref(o);
        if (!written)
            usleep(10000);
    }
    assert_true(written);

    /* a second start reconciles, and keeps what the admin changed */
    authz_free(z);
    z = authz_new(st, &err);
    assert_non_null(z);
    authz_free(z);
    store_fixture_close(dir, st);
    userinfo_free(u);
}

/* kube's escalation prevention: a namespace's admin binds what it holds,
 * not cluster-admin; writes roles with rules it holds only. */
static void test_escalation(void **state)
{
    (void)state;
    char dir[64];
    ty_store *st = store_fixture_open(dir, NULL);
    ty_error err;
    ty_user *u = alice();
    const char *masters[] = {"system:masters"};
    ty_user *root = userinfo_new("root", NULL, masters, 1);

    ty_error_init(&err);
    ty_authz *z = authz_new(st, &err);
    assert_non_null(z);
    json_t *b = binding("RoleBinding", "team-a", "alice-admin", "ClusterRole", "admin", "User",
                        "alice");
    store_obj *o = store_create(st, api_store_key(&api_rolebinding), "team-a", b, &err);
    assert_non_null(o);
    store_obj_unref(o);
    json_decref(b);
    authz_refresh(z);

    b = binding("RoleBinding", "team-a", "x", "ClusterRole", "edit", "User", "bob");
    assert_int_equal(authz_admit_write(z, u, &api_rolebinding, b, &err), 0);
    json_decref(b);
    b = binding("RoleBinding", "team-a", "x", "ClusterRole", "cluster-admin", "User", "bob");
    assert_int_equal(authz_admit_write(z, u, &api_rolebinding, b, &err), -1);
    assert_int_equal(err.code, TY_EFORBIDDEN);
    assert_non_null(strstr(err.text, "rolebindings.rbac.authorization.k8s.io \"x\" is forbidden: "
                                     "user \"alice\" (groups=[\"team-a-devs\" "
                                     "\"system:authenticated\"]) is attempting to grant RBAC "
                                     "permissions not currently held:\n{APIGroups:[\"*\"], "
                                     "Resources:[\"*\"], Verbs:[\"*\"]}"));
    ty_error_clear(&err);
    assert_int_equal(authz_admit_write(z, root, &api_rolebinding, b, &err), 0);
    json_decref(b);
    /* the same binding elsewhere: alice holds nothing in team-b */
    b = binding("RoleBinding", "team-b", "x", "ClusterRole", "view", "User", "bob");
    assert_int_equal(authz_admit_write(z, u, &api_rolebinding, b, &err), -1);
    ty_error_clear(&err);
    json_decref(b);
    json_t *r = role("team-a", "r", "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"pods/log\"],"
                     "\"verbs\":[\"get\",\"list\"]}]", NULL);
    assert_int_equal(authz_admit_write(z, u, &api_role, r, &err), 0);
    json_decref(r);
    r = role("team-a", "r", "[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
             "\"verbs\":[\"*\"]}]", NULL);
    assert_int_equal(authz_admit_write(z, u, &api_role, r, &err), -1);
    ty_error_clear(&err);
    json_decref(r);
    r = role("team-a", "r", "[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],"
             "\"verbs\":[\"get\"]}]", NULL);
    assert_int_equal(authz_admit_write(z, u, &api_role, r, &err), -1);
    ty_error_clear(&err);
    json_decref(r);
    authz_free(z);
    store_fixture_close(dir, st);
    userinfo_free(u);
    userinfo_free(root);
}

static void test_forbidden_messages(void **state)
{
    (void)state;
    char buf[1024];
    reqattr a = res_attr("list", "", "pods", "", "team-b", "");

    az_forbidden_message("alice", &a, "", buf, sizeof(buf));
    assert_string_equal(buf, "pods is forbidden: User \"alice\" cannot list resource \"pods\" "
                             "in API group \"\" in the namespace \"team-b\"");
    a = res_attr("get", "", "pods", "log", "team-b", "p");
    az_forbidden_message("alice", &a, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "pods \"p\" is forbidden: User \"alice\" cannot get resource "
                             "\"pods/log\" in API group \"\" in the namespace \"team-b\"");
    a = res_attr("list", AZ_RBAC_GROUP, "clusterroles", "", "", "");
    az_forbidden_message("bob", &a, "RBAC: x", buf, sizeof(buf));
    assert_string_equal(buf, "clusterroles.rbac.authorization.k8s.io is forbidden: User \"bob\" "
                             "cannot list resource \"clusterroles\" in API group "
                             "\"rbac.authorization.k8s.io\" at the cluster scope: RBAC: x");
    a = url_attr("get", "/metrics");
    az_forbidden_message("x", &a, "", buf, sizeof(buf));
    assert_string_equal(buf, "forbidden: User \"x\" cannot get path \"/metrics\"");
    a = res_attr("get", "kubeflow.org", "pytorchjobs", "", "ns", "j");
    json_t *st = authz_forbidden_status("alice", &a, "");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 403);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "Forbidden");
    json_t *d = json_object_get(st, "details");
    assert_string_equal(json_string_value(json_object_get(d, "group")), "kubeflow.org");
    assert_string_equal(json_string_value(json_object_get(d, "kind")), "pytorchjobs");
    assert_string_equal(json_string_value(json_object_get(d, "name")), "j");
    json_decref(st);
}

/* The first cause's "field: message" of a failed api_prepare. */
static const char *prepare_error(const api_resource *res, const char *json, const char *old,
                                 char *buf, size_t len)
{
    json_t *o = json_loads(json, 0, NULL), *oo = old ? json_loads(old, 0, NULL) : NULL;
    ty_error err;

    ty_error_init(&err);
    buf[0] = '\0';
    if (api_prepare(res, o, oo, &err) < 0)
        snprintf(buf, len, "%s", err.text);
    ty_error_clear(&err);
    json_decref(o);
    json_decref(oo);
    return buf;
}

static void test_kind_validation(void **state)
{
    (void)state;
    char buf[1024];

    prepare_error(&api_role, "{\"metadata\":{\"name\":\"r\",\"namespace\":\"n\"},"
                  "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]}", NULL, buf,
                  sizeof(buf));
    assert_string_equal(buf, "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: "
                             "Required value: verbs must contain at least one value");
    prepare_error(&api_role, "{\"metadata\":{\"name\":\"r\",\"namespace\":\"n\"},"
                  "\"rules\":[{\"nonResourceURLs\":[\"/x\"],\"verbs\":[\"get\"]}]}", NULL, buf,
                  sizeof(buf));
    assert_string_equal(buf, "Role.rbac.authorization.k8s.io \"r\" is invalid: "
                             "rules[0].nonResourceURLs: Invalid value: []string{\"/x\"}: "
                             "namespaced rules cannot apply to non-resource URLs");
    prepare_error(&api_clusterrole, "{\"metadata\":{\"name\":\"system:x\"},"
                  "\"rules\":[{\"verbs\":[\"get\"]}]}", NULL, buf, sizeof(buf));
    assert_non_null(strstr(buf, "rules[0].apiGroups: Required value: resource rules must "
                                "supply at least one api group"));
    assert_non_null(strstr(buf, "rules[0].resources: Required value"));
    prepare_error(&api_clusterrole, "{\"metadata\":{\"name\":\"system:ok\"},"
                  "\"rules\":[{\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/x\"]}]}", NULL, buf,
                  sizeof(buf));
    assert_string_equal(buf, ""); /* a colon in the name is fine */
    prepare_error(&api_clusterrole, "{\"metadata\":{\"name\":\"a/b\"}}", NULL, buf,
                  sizeof(buf));
    assert_non_null(strstr(buf, "metadata.name: Invalid value: \"a/b\": may not contain '/'"));
    prepare_error(&api_clusterrolebinding, "{\"metadata\":{\"name\":\"b\"},\"roleRef\":"
                  "{\"kind\":\"Role\",\"name\":\"r\"},\"subjects\":[{\"kind\":\"ServiceAccount\","
                  "\"name\":\"sa\"}]}", NULL, buf, sizeof(buf));
    assert_non_null(strstr(buf, "roleRef.kind: Unsupported value: \"Role\": supported values: "
                                "\"ClusterRole\""));
    assert_non_null(strstr(buf, "subjects[0].namespace: Required value"));
    const char *rb = "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\"},\"roleRef\":"
                     "{\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":[{\"kind\":"
                     "\"User\",\"name\":\"alice\"}]}";
    prepare_error(&api_rolebinding, rb, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "");
    const char *rb2 = "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\"},\"roleRef\":"
                      "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\","
                      "\"name\":\"edit\"}}";
    prepare_error(&api_rolebinding, rb2, rb, buf, sizeof(buf));
    assert_string_equal(buf, "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: roleRef: "
                             "Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io"
                             "\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef");
    prepare_error(&api_rolebinding, "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\"},"
                  "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"v\"},\"subjects\":[{\"kind\":"
                  "\"User\",\"name\":\"a\",\"apiGroup\":\"\"}]}", NULL, buf, sizeof(buf));
    assert_non_null(strstr(buf, "subjects[0].apiGroup: Unsupported value: \"\": supported "
                                "values: \"rbac.authorization.k8s.io\""));
}

static void test_creator(void **state)
{
    (void)state;
    ty_user *u = alice();
    json_t *job = json_loads("{\"metadata\":{\"name\":\"j\",\"annotations\":"
                             "{\"trainyard.io/created-by\":\"root\"}}}", 0, NULL);
    json_t *old;

    assert_true(creator_is_job_kind(&api_pytorchjob));
    assert_true(creator_is_job_kind(&api_vcjob));
    assert_true(creator_is_job_kind(&api_msjob));
    assert_false(creator_is_job_kind(&api_pod));
    creator_stamp(&api_pytorchjob, job, u);
    assert_string_equal(json_string_value(json_object_get(json_object_get(
                            json_object_get(job, "metadata"), "annotations"),
                            CREATOR_ANNOTATION)), "alice");
    old = json_deep_copy(job);
    json_object_del(json_object_get(json_object_get(job, "metadata"), "annotations"),
                    CREATOR_ANNOTATION);
    creator_keep(&api_pytorchjob, job, old);
    assert_true(json_equal(job, old));
    /* a job stored without one (made before, or by a controller) stays without */
    json_t *bare = json_loads("{\"metadata\":{\"name\":\"j\"}}", 0, NULL);
    creator_keep(&api_pytorchjob, job, bare);
    assert_true(json_equal(job, bare));
    json_decref(bare);
    json_decref(old);
    json_decref(job);
    userinfo_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_matching),
        cmocka_unit_test(test_snapshot_bindings),
        cmocka_unit_test(test_aggregation),
        cmocka_unit_test(test_default_roles_cover_registry),
        cmocka_unit_test(test_authorizer_over_store),
        cmocka_unit_test(test_escalation),
        cmocka_unit_test(test_forbidden_messages),
        cmocka_unit_test(test_kind_validation),
        cmocka_unit_test(test_creator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
