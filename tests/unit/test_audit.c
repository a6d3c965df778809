/* test_audit.c - the audit log: policy parsing and its errors, rule
 * matching, the Event's JSON, the file's rotation, the queue (requests
 * themselves are tried from outside in tests/e2e/t1020). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/audit.h"
#include "server/audit_file.h"
#include "server/audit_policy.h"
#include "tmpdir.h"

/* ---- policy ---- */

static audit_policy *parse(const char *text, ty_error *err)
{
    ty_error_init(err);
    return audit_policy_parse(text, strlen(text), "policy.yaml", err);
}

static void expect_error(const char *text, const char *want)
{
    ty_error err;
    audit_policy *p = parse(text, &err);
    if (p || !strstr(err.text, want))
        fail_msg("want an error with \"%s\", got %s", want, p ? "a policy" : err.text);
    assert_int_equal(err.code, TY_EBADREQUEST);
    ty_error_clear(&err);
}

#define HEAD "apiVersion: audit.k8s.io/v1\nkind: Policy\n"

static void test_policy_errors(void **state)
{
    (void)state;
    expect_error(HEAD "rules:\n- level: Loud\n",
                 "policy.yaml: rules[0].level: Unsupported value: \"Loud\": supported values: "
                 "\"None\", \"Metadata\", \"Request\", \"RequestResponse\"");
    expect_error(HEAD "rules:\n- level: None\n- users: [a]\n", "rules[1].level: Required value");
    expect_error(HEAD "rules:\n- level: None\n  userGroup: [a]\n",
                 "rules[0]: unknown field \"userGroup\"");
    expect_error(HEAD "rules:\n- level: None\n  nonResourceURLs: [healthz]\n",
                 "rules[0].nonResourceURLs[0]: Invalid value: \"healthz\": non-resource URL "
                 "rules must begin with a '/' character");
    expect_error(HEAD "rules:\n- level: None\n  nonResourceURLs: [\"/a*b\"]\n",
                 "must be the final character");
    expect_error(HEAD "rules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n",
                 "rules cannot apply to both regular resources and non-resource URLs");
    expect_error(HEAD "rules:\n- level: None\n  resources:\n"
                      "  - group: \"\"\n    resourceNames: [x]\n",
                 "rules[0].resources[0].resourceNames: Invalid value: using resourceNames "
                 "requires at least one resource");
    expect_error(HEAD "rules:\n- level: None\n  resources:\n  - group: apps/v1\n",
                 "rules[0].resources[0].group: Invalid value: \"apps/v1\"");
    expect_error(HEAD "rules:\n- level: None\n  resources:\n  - groups: [a]\n",
                 "rules[0].resources[0]: unknown field \"groups\"");
    expect_error(HEAD "rules:\n- level: None\n  users: [a, {a: b}]\n",
                 "rules[0].users[1]: Invalid value: must be a string");
    expect_error(HEAD "omitStages: [Received]\nrules:\n- level: None\n",
                 "omitStages[0]: Unsupported value: \"Received\"");
    expect_error(HEAD "rules:\n- level: None\n  omitStages: [Panic, Nope]\n",
                 "rules[0].omitStages[1]: Unsupported value");
    expect_error(HEAD "rules:\n- level: None\n  omitManagedFields: maybe\n",
                 "rules[0].omitManagedFields: Invalid value");
    expect_error(HEAD "rules: []\n", "rules: Required value");
    expect_error("apiVersion: audit.k8s.io/v1\nkind: Pod\nrules:\n- level: None\n",
                 "kind: Invalid value: \"Pod\"");
    expect_error("apiVersion: v1\nkind: Policy\nrules:\n- level: None\n",
                 "apiVersion: Invalid value: \"v1\"");
    expect_error(HEAD "rules:\n- level: [\n", "policy.yaml: yaml: line");
    expect_error(HEAD "rulez:\n- level: None\n", "unknown field \"rulez\"");
}

static ty_user *user(const char *name, const char *group)
{
    const char *g[] = {group};
    return userinfo_new(name, NULL, g, group ? 1 : 0);
}

static reqattr attr(const char *method, const char *path, const char *watch)
{
    reqattr a;
    reqattr_parse(&a, method, path, watch);
    return a;
}

static audit_level level(const audit_policy *p, const ty_user *u, const char *method,
                         const char *path)
{
    reqattr a = attr(method, path, NULL);
    return audit_policy_eval(p, u, &a).level;
}

static void test_policy_matching(void **state)
{
    static const char *text =
        HEAD "omitStages: [RequestReceived]\n"
             "omitManagedFields: true\n"
             "rules:\n"
             "- level: None\n"
             "  users: [system:kube-proxy]\n"
             "- level: None\n"
             "  userGroups: [quiet]\n"
             "  verbs: [get, list, watch]\n"
             "- level: RequestResponse\n"
             "  resources:\n"
             "  - group: \"\"\n"
             "    resources: [pods/log, \"*/status\"]\n"
             "  omitStages: [ResponseStarted]\n"
             "  omitManagedFields: false\n"
             "- level: Request\n"
             "  resources:\n"
             "  - group: kubeflow.org\n"
             "    resources: [\"pytorchjobs/*\"]\n"
             "  - group: \"\"\n"
             "    resources: [secrets]\n"
             "    resourceNames: [token]\n"
             "- level: Metadata\n"
             "  namespaces: [team-a]\n"
             "- level: None\n"
             "  nonResourceURLs: [/healthz*, /version]\n"
             "- level: Request\n"
             "  resources:\n"
             "  - group: apps\n"
             "- level: Metadata\n"
             "  verbs: [create]\n";
    ty_error err;
    audit_policy *p = parse(text, &err);
    ty_user *alice = user("alice", NULL), *proxy = user("system:kube-proxy", NULL),
            *quiet = user("carol", "quiet");
    reqattr a;
    audit_decision d;
    (void)state;

    if (!p)
        fail_msg("%s", err.text);
    /* users, userGroups with verbs */
    assert_int_equal(level(p, proxy, "POST", "/api/v1/namespaces/team-a/pods"), AUDIT_LEVEL_NONE);
    assert_int_equal(level(p, quiet, "GET", "/api/v1/namespaces/team-a/pods"), AUDIT_LEVEL_NONE);
    assert_int_equal(level(p, quiet, "POST", "/api/v1/namespaces/team-a/pods"),
                     AUDIT_LEVEL_METADATA);
    /* "pods/log", "* /status"; the rule's omitStages join the policy's */
    a = attr("GET", "/api/v1/namespaces/x/pods/p/log", NULL);
    d = audit_policy_eval(p, alice, &a);
    assert_int_equal(d.level, AUDIT_LEVEL_REQUEST_RESPONSE);
    assert_int_equal(d.omit_stages, AUDIT_STAGE_REQUEST_RECEIVED | AUDIT_STAGE_RESPONSE_STARTED);
    assert_false(d.omit_managed_fields);
    assert_int_equal(level(p, alice, "PUT", "/api/v1/namespaces/x/pods/p/status"),
                     AUDIT_LEVEL_REQUEST_RESPONSE);
    assert_int_equal(level(p, alice, "PUT", "/api/v1/nodes/n/status"),
                     AUDIT_LEVEL_REQUEST_RESPONSE);
    /* a plain pod is none of those */
    assert_int_equal(level(p, alice, "GET", "/api/v1/namespaces/x/pods/p"), AUDIT_LEVEL_NONE);
    /* "res/ *" covers the resource and its subresources; resourceNames */
    assert_int_equal(level(p, alice, "GET", "/apis/kubeflow.org/v1/namespaces/x/pytorchjobs/j"),
                     AUDIT_LEVEL_REQUEST);
    assert_int_equal(level(p, alice, "GET", "/apis/kubeflow.org/v1/namespaces/x/tfjobs/j"),
                     AUDIT_LEVEL_NONE);
    assert_int_equal(level(p, alice, "GET", "/api/v1/namespaces/x/secrets/token"),
                     AUDIT_LEVEL_REQUEST);
    assert_int_equal(level(p, alice, "GET", "/api/v1/namespaces/x/secrets/other"),
                     AUDIT_LEVEL_NONE);
    /* namespaces; first match wins */
    a = attr("GET", "/api/v1/namespaces/team-a/configmaps", NULL);
    d = audit_policy_eval(p, alice, &a);
    assert_int_equal(d.level, AUDIT_LEVEL_METADATA);
    assert_true(d.omit_managed_fields);
    assert_int_equal(d.omit_stages, AUDIT_STAGE_REQUEST_RECEIVED);
    /* non-resource URLs: prefix with "*", exact; never a resource request */
    assert_int_equal(level(p, alice, "GET", "/healthz/ready"), AUDIT_LEVEL_NONE);
    assert_int_equal(level(p, alice, "GET", "/version"), AUDIT_LEVEL_NONE);
    /* a group without resources: everything in it */
    assert_int_equal(level(p, alice, "DELETE", "/apis/apps/v1/namespaces/x/deployments/d"),
                     AUDIT_LEVEL_REQUEST);
    /* verbs only; and nothing matching is None */
    assert_int_equal(level(p, NULL, "POST", "/api/v1/namespaces/x/configmaps"),
                     AUDIT_LEVEL_METADATA);
    assert_int_equal(level(p, alice, "GET", "/api/v1/namespaces/x/configmaps"), AUDIT_LEVEL_NONE);
    assert_int_equal(level(p, alice, "GET", "/openapi/v2"), AUDIT_LEVEL_NONE);
    /* an unauthenticated request matches no rule that names users */
    assert_int_equal(level(p, NULL, "GET", "/api/v1/namespaces/team-a/pods"),
                     AUDIT_LEVEL_METADATA);

    audit_policy_free(p);
    p = audit_policy_default();
    a = attr("GET", "/anything", NULL);
    d = audit_policy_eval(p, NULL, &a);
    assert_int_equal(d.level, AUDIT_LEVEL_METADATA);
    assert_int_equal(d.omit_stages, AUDIT_STAGE_REQUEST_RECEIVED);
    audit_policy_free(p);
    /* JSON is YAML */
    p = parse("{\"apiVersion\":\"audit.k8s.io/v1\",\"kind\":\"Policy\",\"rules\":"
              "[{\"level\":\"Request\",\"nonResourceURLs\":[\"*\"]}]}",
              &err);
    assert_non_null(p);
    assert_int_equal(level(p, alice, "GET", "/metrics"), AUDIT_LEVEL_REQUEST);
    assert_int_equal(level(p, alice, "GET", "/api/v1/pods"), AUDIT_LEVEL_NONE);
    audit_policy_free(p);
    userinfo_free(alice);
    userinfo_free(proxy);
    userinfo_free(quiet);
}

/* ---- the Event ---- */

static audit_rec *sample(audit_level lvl, const char *method, const char *path)
{
    audit_rec *r = audit_rec_new();
    assert_non_null(r);
    r->d.level = lvl;
    r->attr = attr(method, path, NULL);
    r->request_uri = strdup(path);
    snprintf(r->source_ip, sizeof(r->source_ip), "127.0.0.1");
    r->user_agent = strdup("kubectl/v1.30");
    return r;
}

static const char *str(const json_t *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    const json_t *v = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void test_event_json(void **state)
{
    audit_rec *r = sample(AUDIT_LEVEL_REQUEST, "POST", "/api/v1/namespaces/team-a/pods");
    struct timespec ts = {.tv_sec = 1795860000, .tv_nsec = 123456789};
    json_t *ev;
    const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
                       "\"managedFields\":[{}]},\"spec\":{}}";
    static const char *order[] = {"kind", "apiVersion", "level", "auditID", "stage",
                                  "requestURI", "verb", "user", "sourceIPs", "userAgent",
                                  "objectRef", "responseStatus", "requestObject",
                                  "requestReceivedTimestamp", "stageTimestamp", "annotations"};
    const char *key;
    json_t *v;
    size_t i = 0;
    (void)state;

    r->user = user("alice", "team-a");
    r->code = 201;
    r->authz = 1;
    r->authz_reason = strdup("RBAC: allowed");
    r->req_body = strdup(body);
    r->req_len = strlen(body);
    r->d.omit_managed_fields = true;
    r->received = (struct timespec){.tv_sec = 1795860000, .tv_nsec = 1000};
    ev = audit_event_json(r, AUDIT_STAGE_RESPONSE_COMPLETE, ts);
    assert_non_null(ev);
    /* kube-apiserver's member order */
    json_object_foreach(ev, key, v) {
        assert_true(i < sizeof(order) / sizeof(order[0]));
        assert_string_equal(key, order[i]);
        i++;
    }
    assert_int_equal(i, sizeof(order) / sizeof(order[0]));
    assert_string_equal(str(ev, "kind"), "Event");
    assert_string_equal(str(ev, "apiVersion"), "audit.k8s.io/v1");
    assert_string_equal(str(ev, "level"), "Request");
    assert_int_equal(strlen(str(ev, "auditID")), 36);
    assert_int_equal(str(ev, "auditID")[14], '4');
    assert_string_equal(str(ev, "stage"), "ResponseComplete");
    assert_string_equal(str(ev, "verb"), "create");
    assert_string_equal(str(ev, "user.username"), "alice");
    assert_string_equal(json_string_value(json_array_get(json_object_get(
                            json_object_get(ev, "user"), "groups"), 0)), "team-a");
    assert_string_equal(json_string_value(json_array_get(json_object_get(ev, "sourceIPs"), 0)),
                        "127.0.0.1");
    /* the created object's name completes objectRef */
    assert_string_equal(str(ev, "objectRef.resource"), "pods");
    assert_string_equal(str(ev, "objectRef.namespace"), "team-a");
    assert_string_equal(str(ev, "objectRef.name"), "p1");
    assert_string_equal(str(ev, "objectRef.apiVersion"), "v1");
    assert_null(json_object_get(json_object_get(ev, "objectRef"), "apiGroup"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ev, "responseStatus"),
                                                        "code")), 201);
    assert_non_null(json_object_get(json_object_get(ev, "responseStatus"), "metadata"));
    assert_string_equal(str(ev, "requestObject.kind"), "Pod");
    assert_null(json_object_get(json_object_get(json_object_get(ev, "requestObject"),
                                                "metadata"), "managedFields"));
    assert_string_equal(str(ev, "requestReceivedTimestamp"), "2026-11-28T10:00:00.000001Z");
    assert_string_equal(str(ev, "stageTimestamp"), "2026-11-28T10:00:00.123456Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "annotations"),
                                                          "authorization.k8s.io/decision")),
                        "allow");
    assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "annotations"),
                                                          "authorization.k8s.io/reason")),
                        "RBAC: allowed");
    json_decref(ev);

    /* RequestReceived: no outcome yet, stamped when the request came */
    ev = audit_event_json(r, AUDIT_STAGE_REQUEST_RECEIVED, r->received);
    assert_null(json_object_get(ev, "responseStatus"));
    assert_null(json_object_get(ev, "requestObject"));
    assert_null(json_object_get(ev, "annotations"));
    assert_string_equal(str(ev, "stageTimestamp"), str(ev, "requestReceivedTimestamp"));
    json_decref(ev);

    /* the name found past other members, nested values and odd scalars;
     * an escaped one (the scan gives up, the body is parsed) */
    static const char *const bodies[][2] = {
        {"{\"spec\":{\"a\":[1,{\"b\":\"}]\"}],\"t\":true,\"n\":null},\"x\":-1.5e3,"
         "\"metadata\":{\"labels\":{\"name\":\"no\"},\"generateName\":\"g\",\"name\":\"p2\","
         "\"uid\":\"u-1\",\"resourceVersion\":\"42\"}}",
         "p2"},
        {"{\"metadata\":{\"name\":\"p\\\"q\"}}", "p\"q"},
        {"{\"metadata\":{\"generateName\":\"g-\"}}", NULL},
        {"[1,2]", NULL},
        {"{\"metadata\":", NULL},
    };
    for (size_t k = 0; k < sizeof(bodies) / sizeof(bodies[0]); k++) {
        audit_rec *c = sample(AUDIT_LEVEL_METADATA, "POST", "/api/v1/namespaces/team-a/pods");
        c->code = 201;
        c->req_body = strdup(bodies[k][0]);
        c->req_len = strlen(c->req_body);
        ev = audit_event_json(c, AUDIT_STAGE_RESPONSE_COMPLETE, ts);
        assert_non_null(ev);
        if (bodies[k][1])
            assert_string_equal(str(ev, "objectRef.name"), bodies[k][1]);
        else
            assert_null(str(ev, "objectRef.name"));
        if (k == 0) {
            assert_string_equal(str(ev, "objectRef.uid"), "u-1");
            assert_string_equal(str(ev, "objectRef.resourceVersion"), "42");
        }
        json_decref(ev);
        audit_rec_unref(c);
    }
    /* YAML */
    r->req_yaml = true;
    free(r->req_body);
    r->req_body = strdup("apiVersion: v1\nkind: Pod\nmetadata:\n  name: y1\n");
    r->req_len = strlen(r->req_body);
    ev = audit_event_json(r, AUDIT_STAGE_RESPONSE_COMPLETE, ts);
    assert_string_equal(str(ev, "objectRef.name"), "y1");
    assert_string_equal(str(ev, "requestObject.metadata.name"), "y1");
    json_decref(ev);
    r->req_yaml = false;
    free(r->req_body);
    r->req_body = strdup(body);
    r->req_len = strlen(body);

    /* Metadata: no bodies */
    r->d.level = AUDIT_LEVEL_METADATA;
    ev = audit_event_json(r, AUDIT_STAGE_RESPONSE_COMPLETE, ts);
    assert_null(json_object_get(ev, "requestObject"));
    assert_string_equal(str(ev, "objectRef.name"), "p1");
    json_decref(ev);
    audit_rec_unref(r);

    /* a 401: "user":{}, the Status copied */
    r = sample(AUDIT_LEVEL_METADATA, "GET", "/api/v1/namespaces/x/pods");
    r->code = 401;
    r->resp_body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                          "\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\","
                          "\"code\":401}");
    r->resp_len = strlen(r->resp_body);
    free(r->user_agent);
    r->user_agent = strdup("bad \xff agent");
    ev = audit_event_json(r, AUDIT_STAGE_RESPONSE_STARTED, ts);
    assert_int_equal(json_object_size(json_object_get(ev, "user")), 0);
    assert_string_equal(str(ev, "responseStatus.status"), "Failure");
    assert_string_equal(str(ev, "responseStatus.reason"), "Unauthorized");
    assert_string_equal(str(ev, "responseStatus.message"), "Unauthorized");
    assert_string_equal(str(ev, "userAgent"), "bad \xef\xbf\xbd agent");
    assert_null(json_object_get(ev, "annotations"));
    json_decref(ev);
    audit_rec_unref(r);

    /* a non-resource request has no objectRef; impersonation */
    r = sample(AUDIT_LEVEL_METADATA, "GET", "/healthz");
    r->code = 200;
    r->user = user("admin", NULL);
    r->impersonated = user("bob", "team-b");
    ev = audit_event_json(r, AUDIT_STAGE_RESPONSE_COMPLETE, ts);
    assert_null(json_object_get(ev, "objectRef"));
    assert_string_equal(str(ev, "user.username"), "admin");
    assert_string_equal(str(ev, "impersonatedUser.username"), "bob");
    json_decref(ev);
    audit_rec_unref(r);
}

/* ---- the file ---- */

static char *tmp(void)
{
    char *d = strdup("/tmp/test_audit.XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static int count_backups(const char *dir, const char *prefix, const char *ext)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    assert_non_null(d);
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        /* audit-2026-11-28T10-00-00.000.log */
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 &&
            len == strlen(prefix) + 23 + strlen(ext) &&
            strcmp(de->d_name + len - strlen(ext), ext) == 0 &&
            de->d_name[strlen(prefix) + 10] == 'T' && de->d_name[strlen(prefix) + 19] == '.')
            n++;
    }
    closedir(d);
    return n;
}

static void test_rotation(void **state)
{
    char *dir = tmp(), path[512], line[101], old[600];
    audit_file_opts o = {.path = path, .max_bytes = 1000, .max_backups = 2};
    audit_file *f;
    ty_error err;
    struct stat st;
    (void)state;

    ty_error_init(&err);
    snprintf(path, sizeof(path), "%s/logs/sub/audit.log", dir);
    f = audit_file_open(&o, &err);
    if (!f)
        fail_msg("%s", err.text);
    /* the directory is made 0700, the file 0600 */
    snprintf(old, sizeof(old), "%s/logs/sub", dir);
    assert_int_equal(stat(old, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* an old backup, past any age, and a file that only looks like one */
    snprintf(old, sizeof(old), "%s/logs/sub/audit-2001-01-01T00-00-00.000.log", dir);
    fclose(fopen(old, "w"));
    snprintf(old, sizeof(old), "%s/logs/sub/audit-notatime.log", dir);
    fclose(fopen(old, "w"));

    memset(line, 'x', 99);
    line[99] = '\n';
    line[100] = '\0';
    for (int i = 0; i < 10; i++)
        assert_int_equal(audit_file_write(f, line, 100, &err), 0);
    assert_int_equal(audit_file_rotations(f), 0);
    assert_int_equal(audit_file_room(f), 0);
    /* the 11th line goes to a new file */
    assert_int_equal(audit_file_write(f, line, 100, &err), 0);
    assert_int_equal(audit_file_rotations(f), 1);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 100);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* max_backups 2: the oldest (the planted one first) go */
    for (int i = 0; i < 50; i++)
        assert_int_equal(audit_file_write(f, line, 100, &err), 0);
    assert_int_equal(audit_file_rotations(f), 6);
    snprintf(old, sizeof(old), "%s/logs/sub", dir);
    assert_int_equal(count_backups(old, "audit-", ".log"), 2);
    snprintf(old, sizeof(old), "%s/logs/sub/audit-2001-01-01T00-00-00.000.log", dir);
    assert_int_not_equal(access(old, F_OK), 0);
    snprintf(old, sizeof(old), "%s/logs/sub/audit-notatime.log", dir);
    assert_int_equal(access(old, F_OK), 0);
    /* an entry larger than the limit gets a file of its own */
    char *big = malloc(3000);
    memset(big, 'y', 2999);
    big[2999] = '\n';
    assert_int_equal(audit_file_write(f, big, 3000, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 3000);
    free(big);
    audit_file_close(f);

    /* max age: a backup dated long ago goes at the next rotation; no ext */
    snprintf(path, sizeof(path), "%s/events", dir);
    snprintf(old, sizeof(old), "%s/events-2001-01-01T00-00-00.000", dir);
    fclose(fopen(old, "w"));
    o = (audit_file_opts){.path = path, .max_bytes = 100, .max_age_days = 30};
    f = audit_file_open(&o, &err);
    assert_non_null(f);
    assert_int_equal(audit_file_write(f, line, 100, &err), 0);
    assert_int_equal(audit_file_write(f, line, 100, &err), 0);
    assert_int_equal(count_backups(dir, "events-", ""), 1);
    assert_int_not_equal(access(old, F_OK), 0);
    audit_file_close(f);

    /* a path that is a directory */
    snprintf(path, sizeof(path), "%s/", dir);
    assert_null(audit_file_open(&o, &err));
    ty_error_clear(&err);
    tmpdir_remove(dir);
    free(dir);
}

/* ---- the queue and its writer ---- */

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f)
        return -1;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void emit_many(ty_audit *a, int n)
{
    for (int i = 0; i < n; i++) {
        audit_rec *r = sample(AUDIT_LEVEL_METADATA, "GET", "/api/v1/namespaces/x/pods");
        r->code = 200;
        r->d = audit_decide(a, NULL, &r->attr);
        audit_emit(a, r, AUDIT_STAGE_REQUEST_RECEIVED); /* omitted by the default policy */
        audit_emit(a, r, AUDIT_STAGE_RESPONSE_COMPLETE);
        audit_rec_unref(r);
    }
}

static void test_writer(void **state)
{
    char *dir = tmp(), path[512];
    audit_opts o = {.log_path = path, .buffer_size = 16};
    audit_stats s;
    ty_error err;
    ty_audit *a;
    (void)state;

    ty_error_init(&err);
    snprintf(path, sizeof(path), "%s/audit.log", dir);
    /* blocking: more than the queue holds, nothing lost, all written by
     * the time audit_free returns */
    a = audit_new(&o, &err);
    if (!a)
        fail_msg("%s", err.text);
    emit_many(a, 1000);
    audit_sync(a);
    audit_get_stats(a, &s);
    assert_int_equal(s.events, 1000);
    assert_int_equal(s.dropped, 0);
    emit_many(a, 500);
    audit_free(a);
    assert_int_equal(count_lines(path), 1500);

    /* batch mode: what does not fit is dropped and counted */
    o.drop_when_full = true;
    o.buffer_size = 1;
    a = audit_new(&o, &err);
    assert_non_null(a);
    emit_many(a, 300);
    audit_sync(a);
    audit_get_stats(a, &s);
    assert_int_equal(s.events + s.dropped, 300);
    audit_free(a);
    assert_int_equal(count_lines(path), 1500 + (int)s.events);

    /* a write error is counted, never fatal */
    o = (audit_opts){.log_path = "/dev/full"};
    a = audit_new(&o, &err);
    if (a) {
        emit_many(a, 10);
        audit_sync(a);
        audit_get_stats(a, &s);
        assert_int_equal(s.events, 0);
        assert_int_equal(s.errors, 10);
        audit_free(a);
    }

    /* a malformed policy stops it */
    snprintf(path, sizeof(path), "%s/policy.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs(HEAD "rules:\n- level: Everything\n", f);
    fclose(f);
    o = (audit_opts){.log_path = "-", .policy_file = path};
    assert_null(audit_new(&o, &err));
    assert_non_null(strstr(err.text, "rules[0].level: Unsupported value"));
    ty_error_clear(&err);
    tmpdir_remove(dir);
    free(dir);
}

static void test_uuid(void **state)
{
    char a[37], b[37];
    (void)state;
    audit_new_uuid(a);
    audit_new_uuid(b);
    assert_int_equal(strlen(a), 36);
    assert_string_not_equal(a, b);
    assert_true(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
    assert_int_equal(a[14], '4');
    assert_non_null(strchr("89ab", a[19]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_errors), cmocka_unit_test(test_policy_matching),
        cmocka_unit_test(test_event_json),    cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_writer),        cmocka_unit_test(test_uuid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
