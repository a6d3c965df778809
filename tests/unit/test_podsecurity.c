/* test_podsecurity.c - Pod Security admission (api/podsecurity.h) and the
 * namespaces' id blocks (api/nsrange.h): each check at each level with
 * upstream's messages, the labels, the defaulting of a pod's ids, the
 * ranges, runAsNonRoot, warnings and audit annotations, over lookups into
 * namespaces held here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/nsrange.h"
#include "api/podsecurity.h"
#include "api/registry.h"
#include "store/admit.h"
#include "store/store.h"

/* ---- psa_check ----------------------------------------------------------- */

static const psa_lv baseline = {PSA_BASELINE, PSA_LATEST};
static const psa_lv restricted = {PSA_RESTRICTED, PSA_LATEST};
static const psa_lv privileged = {PSA_PRIVILEGED, PSA_LATEST};

static json_t *spec_of(const char *json)
{
    json_error_t e;
    json_t *s = json_loads(json, 0, &e);
    if (!s)
        fail_msg("bad test JSON: %s: %s", e.text, json);
    return s;
}

/* The violations of spec (JSON text) at lv, "" when allowed. */
static const char *violations(psa_lv lv, const char *meta, const char *spec)
{
    static char out[2048];
    json_t *s = spec_of(spec), *m = meta ? spec_of(meta) : NULL;
    bool ok = psa_check(lv, m, s, out, sizeof(out));

    assert_true(ok == (out[0] == '\0'));
    json_decref(s);
    json_decref(m);
    return out;
}

#define C1 "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]"

static void test_baseline_checks(void **state)
{
    (void)state;
    assert_string_equal(violations(baseline, NULL, "{" C1 "}"), "");
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"volumes\":[{\"name\":\"data\",\"hostPath\":{\"path\":\"/\"}}]}"),
        "hostPath volumes (volume \"data\")");
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"volumes\":[{\"name\":\"a\",\"hostPath\":{}},{\"name\":\"e\","
                   "\"emptyDir\":{}},{\"name\":\"b\",\"hostPath\":{}}]}"),
        "hostPath volumes (volumes \"a\", \"b\")");
    assert_string_equal(violations(baseline, NULL,
                                   "{" C1 ",\"hostNetwork\":true,\"hostIPC\":true,"
                                   "\"hostPID\":true}"),
                        "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)");
    assert_string_equal(
        violations(baseline, NULL,
                   "{\"containers\":[{\"name\":\"c\",\"securityContext\":{\"privileged\":"
                   "true}}]}"),
        "privileged (container \"c\" must not set securityContext.privileged=true)");
    assert_string_equal(
        violations(baseline, NULL,
                   "{\"initContainers\":[{\"name\":\"i\",\"securityContext\":{\"capabilities\":"
                   "{\"add\":[\"SYS_ADMIN\",\"CHOWN\"]}}}],\"containers\":[{\"name\":\"c\","
                   "\"securityContext\":{\"capabilities\":{\"add\":[\"NET_ADMIN\"]}}}]}"),
        "non-default capabilities (containers \"i\", \"c\" must not include \"NET_ADMIN\", "
        "\"SYS_ADMIN\" in securityContext.capabilities.add)");
    assert_string_equal(
        violations(baseline, NULL,
                   "{\"containers\":[{\"name\":\"c\",\"securityContext\":{\"capabilities\":"
                   "{\"add\":[\"NET_BIND_SERVICE\",\"KILL\"]}}}]}"),
        "");
    assert_string_equal(
        violations(baseline, NULL,
                   "{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,"
                   "\"hostPort\":80}]},{\"name\":\"b\",\"ports\":[{\"containerPort\":1,"
                   "\"hostPort\":443},{\"containerPort\":2}]}]}"),
        "hostPort (containers \"a\", \"b\" use hostPorts 443, 80)");
    assert_string_equal(
        violations(baseline, NULL,
                   "{\"containers\":[{\"name\":\"c\",\"securityContext\":{\"appArmorProfile\":"
                   "{\"type\":\"Unconfined\"}}}]}"),
        "forbidden AppArmor profile (container \"c\" must not set AppArmor profile type to "
        "\"Unconfined\")");
    assert_string_equal(
        violations(baseline,
                   "{\"annotations\":{\"container.apparmor.security.beta.kubernetes.io/c\":"
                   "\"runtime/default\"}}",
                   "{" C1 "}"),
        "");
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"securityContext\":{\"seLinuxOptions\":{\"type\":\"spc_t\"}}}"),
        "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type \"spc_t\")");
    assert_string_equal(
        violations(baseline, NULL,
                   "{\"containers\":[{\"name\":\"c\",\"securityContext\":{\"procMount\":"
                   "\"Unmasked\"}}]}"),
        "procMount (container \"c\" must not set securityContext.procMount to \"Unmasked\")");
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"securityContext\":{\"seccompProfile\":{\"type\":"
                   "\"Unconfined\"}}}"),
        "seccompProfile (pod must not set securityContext.seccompProfile.type to "
        "\"Unconfined\")");
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"securityContext\":{\"sysctls\":[{\"name\":\"kernel.msgmax\"},"
                   "{\"name\":\"net.ipv4.tcp_syncookies\"}]}}"),
        "forbidden sysctls (kernel.msgmax)");
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"securityContext\":{\"windowsOptions\":{\"hostProcess\":true}}}"),
        "hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)");
    /* baseline says nothing about users: uid 0 is the id blocks' to refuse */
    assert_string_equal(
        violations(baseline, NULL, "{" C1 ",\"securityContext\":{\"runAsUser\":0}}"), "");
    /* several, joined as upstream joins them */
    assert_string_equal(
        violations(baseline, NULL,
                   "{" C1 ",\"hostNetwork\":true,\"volumes\":[{\"name\":\"d\",\"hostPath\":"
                   "{}}]}"),
        "host namespaces (hostNetwork=true), hostPath volumes (volume \"d\")");
}

static void test_versions(void **state)
{
    const char *keepalive = "{" C1 ",\"securityContext\":{\"sysctls\":[{\"name\":"
                            "\"net.ipv4.tcp_keepalive_time\"}]}}";
    (void)state;
    assert_string_equal(violations(baseline, NULL, keepalive), "");
    assert_string_equal(violations((psa_lv){PSA_BASELINE, 29}, NULL, keepalive), "");
    assert_string_equal(violations((psa_lv){PSA_BASELINE, 28}, NULL, keepalive),
                        "forbidden sysctls (net.ipv4.tcp_keepalive_time)");
    /* before v1.19 seccomp was annotations */
    assert_string_equal(
        violations((psa_lv){PSA_BASELINE, 18},
                   "{\"annotations\":{\"seccomp.security.alpha.kubernetes.io/pod\":"
                   "\"unconfined\"}}",
                   "{" C1 "}"),
        "seccompProfile (forbidden annotation "
        "seccomp.security.alpha.kubernetes.io/pod=\"unconfined\")");
}

#define RESTRICTED_OK                                                                       \
    "{\"securityContext\":{\"runAsNonRoot\":true,\"seccompProfile\":{\"type\":"             \
    "\"RuntimeDefault\"}},\"containers\":[{\"name\":\"c\",\"securityContext\":{"            \
    "\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"],\"add\":["     \
    "\"NET_BIND_SERVICE\"]}}}],\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}},{\"name\":"    \
    "\"p\",\"persistentVolumeClaim\":{\"claimName\":\"x\"}}]}"

static void test_restricted_checks(void **state)
{
    (void)state;
    assert_string_equal(violations(restricted, NULL, RESTRICTED_OK), "");
    assert_string_equal(
        violations(restricted, NULL, "{" C1 "}"),
        "allowPrivilegeEscalation != false (container \"c\" must set "
        "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "
        "\"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod "
        "or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or "
        "container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or "
        "\"Localhost\")");
    assert_string_equal(
        violations(restricted, NULL,
                   "{\"securityContext\":{\"runAsNonRoot\":true,\"runAsUser\":0,"
                   "\"seccompProfile\":{\"type\":\"Localhost\"}},\"containers\":[{\"name\":"
                   "\"c\",\"securityContext\":{\"allowPrivilegeEscalation\":false,"
                   "\"capabilities\":{\"drop\":[\"ALL\"],\"add\":[\"SYS_TIME\"]}}}],"
                   "\"volumes\":[{\"name\":\"h\",\"hostPath\":{}},{\"name\":\"n\",\"nfs\":{}}]}"),
        "unrestricted capabilities (container \"c\" must not include \"SYS_TIME\" in "
        "securityContext.capabilities.add), restricted volume types (volumes \"h\", \"n\" use "
        "restricted volume types \"hostPath\", \"nfs\"), runAsUser=0 (pod must not set "
        "runAsUser=0)");
    assert_string_equal(
        violations(restricted, NULL,
                   "{\"securityContext\":{\"runAsNonRoot\":false,\"seccompProfile\":{\"type\":"
                   "\"RuntimeDefault\"}},\"containers\":[{\"name\":\"c\",\"securityContext\":{"
                   "\"allowPrivilegeEscalation\":false,\"runAsNonRoot\":false,\"capabilities\":"
                   "{\"drop\":[\"ALL\"]}}}]}"),
        "runAsNonRoot != true (pod and container \"c\" must not set "
        "securityContext.runAsNonRoot=false)");
    /* the restricted level includes baseline's */
    assert_string_equal(violations(restricted, NULL,
                                   "{\"hostPID\":true,\"securityContext\":{\"runAsNonRoot\":true,"
                                   "\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},"
                                   "\"containers\":[{\"name\":\"c\",\"securityContext\":{"
                                   "\"allowPrivilegeEscalation\":false,\"capabilities\":{"
                                   "\"drop\":[\"ALL\"]}}}]}"),
                        "host namespaces (hostPID=true)");
    /* allowPrivilegeEscalation is checked from v1.8 */
    assert_false(strstr(violations((psa_lv){PSA_RESTRICTED, 7}, NULL, "{" C1 "}"),
                        "allowPrivilegeEscalation"));
}

static void test_privileged_allows_all(void **state)
{
    (void)state;
    assert_string_equal(
        violations(privileged, NULL,
                   "{\"hostNetwork\":true,\"containers\":[{\"name\":\"c\",\"securityContext\":"
                   "{\"privileged\":true}}],\"volumes\":[{\"name\":\"d\",\"hostPath\":{}}]}"),
        "");
}

/* ---- labels -------------------------------------------------------------- */

static void test_labels(void **state)
{
    psa_policy p;
    ty_error err;
    json_t *l;
    char text[64];

    (void)state;
    ty_error_init(&err);
    assert_int_equal(psa_policy_of(NULL, &p, &err), 0);
    psa_lv_text(p.enforce, text, sizeof(text));
    assert_string_equal(text, "baseline:latest");
    assert_int_equal(p.warn.level, PSA_BASELINE);

    l = json_pack("{s:s, s:s}", PSA_LABEL_ENFORCE, "privileged", PSA_LABEL_WARN_VERSION,
                  "v1.29");
    assert_int_equal(psa_policy_of(l, &p, &err), 0);
    assert_int_equal(p.enforce.level, PSA_PRIVILEGED);
    /* an absent warn level follows enforce */
    assert_int_equal(p.warn.level, PSA_PRIVILEGED);
    assert_int_equal(p.warn.minor, 29);
    json_decref(l);

    l = json_pack("{s:s, s:s, s:s}", PSA_LABEL_ENFORCE, "strict", PSA_LABEL_WARN, "nope",
                  PSA_LABEL_AUDIT_VERSION, "v1.01");
    assert_int_equal(psa_policy_of(l, &p, &err), 3);
    assert_int_equal(p.enforce.level, PSA_RESTRICTED); /* fails closed */
    assert_int_equal(p.warn.level, PSA_PRIVILEGED);    /* and open */
    assert_int_equal(ty_error_ncauses(&err), 3);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(err.causes, 0), "message")),
        "Invalid value: \"strict\": must be one of privileged, baseline, restricted");
    assert_string_equal(json_string_value(json_object_get(json_array_get(err.causes, 0), "field")),
                        "metadata.labels[pod-security.kubernetes.io/enforce]");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(err.causes, 2), "message")),
        "Invalid value: \"v1.01\": must be \"latest\" or \"v1.x\"");
    ty_error_clear(&err);
    json_decref(l);
}

/* ---- admission over lookups ---------------------------------------------- */

static json_t *namespaces; /* name -> Namespace */
static json_t *pods;       /* the pods count() walks */
static json_t *warnings;   /* the warnings given */
static json_t *audit;      /* the audit annotations given */
static pthread_mutex_t ns_mu = PTHREAD_MUTEX_INITIALIZER;

static json_t *get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    json_t *o;

    (void)ctx, (void)ns;
    if (res != &api_namespace)
        return 0; /* no other objects here (quotas, say) */
    pthread_mutex_lock(&ns_mu);
    o = json_incref(json_object_get(namespaces, name));
    pthread_mutex_unlock(&ns_mu);
    return o;
}

static size_t count(void *ctx, const api_resource *res,
                    bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    const char *k;
    json_t *o;
    size_t n = 0;

    (void)ctx;
    if (res == &api_pod) {
        size_t i;
        json_array_foreach(pods, i, o)
            n += filter(o, arg);
        return n;
    }
    if (res != &api_namespace)
        return 0; /* no other objects here (quotas, say) */
    pthread_mutex_lock(&ns_mu);
    json_object_foreach(namespaces, k, o)
        n += filter(o, arg);
    pthread_mutex_unlock(&ns_mu);
    return n;
}

static void on_warn(void *ctx, const char *text)
{
    (void)ctx;
    json_array_append_new(warnings, json_string(text));
}

static void on_annotate(void *ctx, const char *key, const char *value)
{
    (void)ctx;
    json_object_set_new(audit, key, json_string(value));
}

static const api_lookup lk = {.get = get, .count = count, .warn = on_warn,
                              .annotate = on_annotate};

static int setup(void **state)
{
    (void)state;
    namespaces = json_object();
    pods = json_array();
    warnings = json_array();
    audit = json_object();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(namespaces);
    json_decref(pods);
    json_decref(warnings);
    json_decref(audit);
    return 0;
}

/* Creates namespace name as the API would (mutating rules, then stored
 * here); labels may be NULL. Returns it (borrowed). */
static json_t *make_ns(const char *name, json_t *labels)
{
    json_t *ns = json_pack("{s:{s:s, s:o?}}", "metadata", "name", name, "labels", labels);
    ty_error err;

    ty_error_init(&err);
    assert_int_equal(api_admit_mutate(&lk, API_ADMIT_CREATE, &api_namespace, ns, &err), 0);
    assert_int_equal(api_admit(&lk, API_ADMIT_CREATE, &api_namespace, ns, NULL, &err), 0);
    json_object_set_new(namespaces, name, ns);
    return ns;
}

static long long block_start(const json_t *ns)
{
    nsrange u, g;
    assert_int_equal(nsrange_of(ns, &u, &g), 0);
    assert_int_equal(u.start, g.start);
    assert_int_equal(u.size, NSRANGE_SIZE);
    return u.start;
}

/* Admits a pod (JSON text of its spec) in ns as a create; returns the
 * code, the pod (mutated) in *out when not NULL, the message in text. */
static ty_errcode admit_pod(const char *ns, const char *spec, json_t **out, char *text,
                            size_t len)
{
    json_t *pod = json_pack("{s:{s:s, s:s}, s:o}", "metadata", "name", "p", "namespace", ns,
                            "spec", spec_of(spec));
    ty_error err;
    ty_errcode code;

    ty_error_init(&err);
    if (api_admit_mutate(&lk, API_ADMIT_CREATE, &api_pod, pod, &err) == 0)
        api_admit(&lk, API_ADMIT_CREATE, &api_pod, pod, NULL, &err);
    code = err.code;
    if (text)
        snprintf(text, len, "%s", err.text);
    ty_error_clear(&err);
    if (out)
        *out = pod;
    else
        json_decref(pod);
    return code;
}

static json_int_t sc_int(const json_t *pod, const char *key)
{
    const json_t *v =
        json_object_get(json_object_get(json_object_get(pod, "spec"), "securityContext"), key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static void test_namespace_blocks(void **state)
{
    json_t *a, *b, *upd;
    ty_error err;
    long long sa, sb;

    (void)state;
    a = make_ns("a", NULL);
    /* what a client writes is replaced */
    b = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "b", "annotations",
                  NSRANGE_UID_ANNOTATION, "0/100");
    ty_error_init(&err);
    assert_int_equal(api_admit_mutate(&lk, API_ADMIT_CREATE, &api_namespace, b, &err), 0);
    json_object_set_new(namespaces, "b", b);
    sa = block_start(a);
    sb = block_start(b);
    assert_true(sa >= NSRANGE_BASE && sb >= NSRANGE_BASE);
    assert_true(sa != sb);
    assert_int_equal((sa - NSRANGE_BASE) % NSRANGE_SIZE, 0);

    /* an update keeps the block */
    upd = json_deep_copy(a);
    json_object_set_new(json_object_get(json_object_get(upd, "metadata"), "annotations"),
                        NSRANGE_UID_ANNOTATION, json_string("0/10000"));
    assert_int_equal(api_prepare(&api_namespace, upd, a, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_string_equal(err.text, "Namespace \"a\" is invalid: "
                                  "metadata.annotations[openshift.io/sa.scc.uid-range]: Invalid "
                                  "value: \"0/10000\": field is immutable");
    ty_error_clear(&err);
    json_object_del(json_object_get(json_object_get(upd, "metadata"), "annotations"),
                    NSRANGE_UID_ANNOTATION);
    assert_int_equal(api_prepare(&api_namespace, upd, a, &err), -1);
    ty_error_clear(&err);
    json_decref(upd);

    /* labels: a bad one is refused, one left as it was is not */
    upd = json_deep_copy(a);
    json_object_set_new(meta_child(json_object_get(upd, "metadata"), "labels"),
                        PSA_LABEL_ENFORCE, json_string("bogus"));
    assert_int_equal(api_prepare(&api_namespace, upd, a, &err), -1);
    assert_string_equal(err.text, "Namespace \"a\" is invalid: "
                                  "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid "
                                  "value: \"bogus\": must be one of privileged, baseline, "
                                  "restricted");
    ty_error_clear(&err);
    {
        json_t *again = json_deep_copy(upd);
        json_object_set_new(json_object_get(again, "metadata"), "generation", json_integer(2));
        assert_int_equal(api_prepare(&api_namespace, again, upd, &err), 0);
        json_decref(again);
    }
    json_decref(upd);
}

/* Two creates at once never get one block. */
typedef struct racer {
    long long starts[50];
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < 50; i++) {
        json_t *ns = json_pack("{s:{s:s}}", "metadata", "name", "x");
        ty_error err;
        ty_error_init(&err);
        assert_int_equal(nsrange_assign(&lk, ns, &err), 0);
        r->starts[i] = block_start(ns);
        json_decref(ns); /* never stored: only the allocator keeps them apart */
    }
    return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void test_blocks_race_free(void **state)
{
    racer r[4];
    pthread_t t[4];
    long long all[200];

    (void)state;
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++)
        memcpy(&all[i * 50], r[i].starts, sizeof(r[i].starts));
    qsort(all, 200, sizeof(all[0]), cmp_ll);
    for (int i = 1; i < 200; i++)
        assert_true(all[i] != all[i - 1]);
}

static void test_pod_defaults_and_ranges(void **state)
{
    json_t *ns, *pod;
    long long s;
    char text[1024], want[256];

    (void)state;
    ns = make_ns("team", NULL);
    s = block_start(ns);

    /* no ids: the block's first, for user, group and fsGroup */
    assert_int_equal(admit_pod("team", "{" C1 "}", &pod, text, sizeof(text)), TY_OK);
    assert_int_equal(sc_int(pod, "runAsUser"), s);
    assert_int_equal(sc_int(pod, "runAsGroup"), s);
    assert_int_equal(sc_int(pod, "fsGroup"), s);
    json_decref(pod);

    /* given ids in the block stay */
    snprintf(want, sizeof(want), "{" C1 ",\"securityContext\":{\"runAsUser\":%lld,"
             "\"runAsGroup\":%lld}}", s + 5, s + 7);
    assert_int_equal(admit_pod("team", want, &pod, text, sizeof(text)), TY_OK);
    assert_int_equal(sc_int(pod, "runAsUser"), s + 5);
    assert_int_equal(sc_int(pod, "runAsGroup"), s + 7);
    json_decref(pod);

    /* root outside a privileged namespace: refused, naming the field */
    assert_int_equal(admit_pod("team",
                               "{\"containers\":[{\"name\":\"c\",\"securityContext\":{"
                               "\"runAsUser\":0}}]}",
                               NULL, text, sizeof(text)),
                     TY_EFORBIDDEN);
    snprintf(want, sizeof(want),
             "pods \"p\" is forbidden: spec.containers[0].securityContext.runAsUser: Invalid "
             "value: 0: must be in the ranges: [%lld, %lld]",
             s, s + NSRANGE_SIZE - 1);
    assert_string_equal(text, want);
    /* and groups */
    assert_int_equal(admit_pod("team", "{" C1 ",\"securityContext\":{\"supplementalGroups\":[6]}}",
                               NULL, text, sizeof(text)),
                     TY_EFORBIDDEN);
    assert_non_null(strstr(text, "spec.securityContext.supplementalGroups[0]: Invalid value: 6"));
    assert_int_equal(admit_pod("team", "{" C1 ",\"securityContext\":{\"fsGroup\":0}}", NULL,
                               text, sizeof(text)),
                     TY_EFORBIDDEN);

    /* hostPath in a baseline namespace: upstream's message */
    assert_int_equal(admit_pod("team",
                               "{" C1 ",\"volumes\":[{\"name\":\"data\",\"hostPath\":{\"path\":"
                               "\"/etc\"}}]}",
                               NULL, text, sizeof(text)),
                     TY_EFORBIDDEN);
    assert_string_equal(text, "pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": "
                              "hostPath volumes (volume \"data\")");
    /* a namespace that is not there */
    assert_int_equal(admit_pod("nowhere", "{" C1 "}", NULL, text, sizeof(text)), TY_ENOTFOUND);
}

static void test_privileged_namespace(void **state)
{
    json_t *ns, *pod;
    char text[1024];

    (void)state;
    ns = make_ns("admin", json_pack("{s:s}", PSA_LABEL_ENFORCE, "privileged"));
    /* any uid, root too, when asked for */
    assert_int_equal(admit_pod("admin",
                               "{\"containers\":[{\"name\":\"c\",\"securityContext\":{"
                               "\"runAsUser\":0}}],\"volumes\":[{\"name\":\"d\",\"hostPath\":"
                               "{}}]}",
                               &pod, text, sizeof(text)),
                     TY_OK);
    /* the pod still gets the block's uid for what it does not say */
    assert_int_equal(sc_int(pod, "runAsUser"), block_start(ns));
    json_decref(pod);
    /* runAsNonRoot is honoured there too */
    assert_int_equal(admit_pod("admin",
                               "{\"securityContext\":{\"runAsNonRoot\":true},\"containers\":[{"
                               "\"name\":\"c\",\"securityContext\":{\"runAsUser\":0}}]}",
                               NULL, text, sizeof(text)),
                     TY_EFORBIDDEN);
    assert_string_equal(text, "pods \"p\" is forbidden: spec.containers[0].securityContext."
                              "runAsUser: Invalid value: 0: must not be 0: container \"c\" has "
                              "runAsNonRoot true");
    assert_int_equal(admit_pod("admin",
                               "{\"securityContext\":{\"runAsNonRoot\":true,\"runAsUser\":0},"
                               "\"containers\":[{\"name\":\"c\"},{\"name\":\"d\"}]}",
                               NULL, text, sizeof(text)),
                     TY_EFORBIDDEN);
    assert_non_null(strstr(text, "spec.securityContext.runAsUser: Invalid value: 0"));
}

static void test_warn_and_audit(void **state)
{
    json_t *job;
    char text[1024];
    ty_error err;

    (void)state;
    make_ns("w", json_pack("{s:s, s:s, s:s}", PSA_LABEL_ENFORCE, "baseline", PSA_LABEL_WARN,
                           "restricted", PSA_LABEL_AUDIT, "restricted"));
    json_array_clear(warnings);
    json_object_clear(audit);
    assert_int_equal(admit_pod("w", "{" C1 "}", NULL, text, sizeof(text)), TY_OK);
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)),
                           "would violate PodSecurity \"restricted:latest\": "
                           "allowPrivilegeEscalation != false"));
    assert_non_null(strstr(json_string_value(json_object_get(audit, PSA_AUDIT_ANNOTATION)),
                           "would violate PodSecurity \"restricted:latest\""));

    /* a job's pod templates are warned about at the warn level (baseline
     * here, following enforce), once per distinct message */
    make_ns("jobs", NULL);
    json_array_clear(warnings);
    job = spec_of("{\"metadata\":{\"name\":\"pj\",\"namespace\":\"jobs\"},\"spec\":{"
                  "\"pytorchReplicaSpecs\":{\"Master\":{\"template\":{\"spec\":{\"hostNetwork\":"
                  "true," C1 "}}},\"Worker\":{\"template\":{\"spec\":{\"hostNetwork\":true," C1
                  "}}}}}}");
    ty_error_init(&err);
    assert_int_equal(api_admit(&lk, API_ADMIT_CREATE,
                               api_find("kubeflow.org", "v1", "pytorchjobs"), job, NULL, &err),
                     0);
    assert_int_equal(json_array_size(warnings), 1);
    assert_string_equal(json_string_value(json_array_get(warnings, 0)),
                        "would violate PodSecurity \"baseline:latest\": host namespaces "
                        "(hostNetwork=true)");
    json_decref(job);

    /* ids its pods would be refused for are said at the job's create too */
    json_array_clear(warnings);
    job = spec_of("{\"metadata\":{\"name\":\"pj\",\"namespace\":\"jobs\"},\"spec\":{"
                  "\"pytorchReplicaSpecs\":{\"Master\":{\"template\":{\"spec\":{"
                  "\"securityContext\":{\"runAsUser\":1000}," C1 "}}}}}}");
    assert_int_equal(api_admit(&lk, API_ADMIT_CREATE, api_find("kubeflow.org", "v1", "pytorchjobs"),
                               job, NULL, &err),
                     0);
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)),
                           "pods of this template would be refused: spec.securityContext."
                           "runAsUser: Invalid value: 1000: must be in the ranges: ["));
    json_decref(job);
}

/* A pod's ids are validated with the kind (0..2147483647) and cannot change
 * after create: what admission checked is what runs. */
static void test_pod_ids_validated_and_immutable(void **state)
{
    json_t *pod, *upd;
    ty_error err;

    (void)state;
    ty_error_init(&err);
    pod = spec_of("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                  "\"namespace\":\"n\"},\"spec\":{\"securityContext\":{\"runAsUser\":-1,"
                  "\"supplementalGroups\":[1,4294967296]},\"containers\":[{\"name\":\"c\","
                  "\"image\":\"i\",\"securityContext\":{\"runAsGroup\":-2}}]}}");
    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), -1);
    assert_non_null(strstr(err.text, "spec.securityContext.runAsUser: Invalid value: -1: must be "
                                     "between 0 and 2147483647, inclusive"));
    assert_non_null(strstr(err.text, "spec.securityContext.supplementalGroups[1]: Invalid value: "
                                     "4294967296"));
    assert_non_null(strstr(err.text, "spec.containers[0].securityContext.runAsGroup: Invalid "
                                     "value: -2"));
    ty_error_clear(&err);
    json_decref(pod);

    pod = spec_of("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                  "\"namespace\":\"n\"},\"spec\":{\"securityContext\":{\"runAsUser\":"
                  "1000000000},\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), 0);
    upd = json_deep_copy(pod);
    json_object_set_new(json_object_get(json_object_get(upd, "spec"), "securityContext"),
                        "runAsUser", json_integer(0));
    assert_int_equal(api_prepare(&api_pod, upd, pod, &err), -1);
    assert_non_null(strstr(err.text, "pod updates may not change fields other than"));
    ty_error_clear(&err);
    json_decref(upd);
    json_decref(pod);
}

/* A namespace made before blocks existed (written around the API) gets
 * its block when the store opens, as the seeded ones do; a pod made there
 * through the admission chain then runs as the block's first uid. */
static void test_store_bootstrap(void **state)
{
    char dir[] = "/tmp/ty-psa-XXXXXX", cmd[64];
    ty_store *st;
    ty_error err;
    store_obj *o;
    json_t *old = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", "old");
    json_t *pod, *dflt, *ns;
    long long sd, so;

    (void)state;
    ty_error_init(&err);
    assert_non_null(mkdtemp(dir));
    assert_non_null(st = store_open(dir, &err));
    o = store_create(st, "namespaces", "", old, &err);
    assert_non_null(o);
    assert_int_equal(nsrange_of(store_obj_json(o), NULL, NULL), -1);
    store_obj_unref(o);
    store_close(st);
    json_decref(old);

    assert_non_null(st = store_open(dir, &err));
    o = store_get(st, "namespaces", "", "default", &err);
    dflt = store_obj_json_read(o);
    store_obj_unref(o);
    o = store_get(st, "namespaces", "", "old", &err);
    ns = store_obj_json_read(o);
    store_obj_unref(o);
    sd = block_start(dflt);
    so = block_start(ns);
    assert_true(sd != so);

    pod = spec_of("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                  "\"namespace\":\"old\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                  "\"image\":\"i\"}]}}");
    assert_int_equal(api_prepare(&api_pod, pod, NULL, &err), 0);
    assert_int_equal(store_admit(st, API_ADMIT_CREATE, &api_pod, pod, NULL, &err), 0);
    assert_int_equal(sc_int(pod, "runAsUser"), so);
    json_decref(pod);
    json_decref(dflt);
    json_decref(ns);
    store_close(st);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Relabelling a namespace stricter warns about the pods it would refuse
 * now, grouped as upstream groups them. */
static void test_stricter_namespace_warns(void **state)
{
    json_t *ns, *upd;
    ty_error err;
    const char *names[] = {"b", "a", "c"};

    (void)state;
    ns = make_ns("old", NULL);
    for (size_t i = 0; i < 3; i++)
        json_array_append_new(pods, json_pack("{s:{s:s, s:s}, s:o}", "metadata", "name", names[i],
                                              "namespace", "old", "spec", spec_of("{" C1 "}")));
    json_array_append_new(pods, json_pack("{s:{s:s, s:s}, s:o}", "metadata", "name", "h",
                                          "namespace", "old", "spec",
                                          spec_of("{" C1 ",\"hostIPC\":true}")));
    json_array_append_new(pods, json_pack("{s:{s:s, s:s}, s:o}", "metadata", "name", "z",
                                          "namespace", "elsewhere", "spec", spec_of("{" C1 "}")));
    upd = json_deep_copy(ns);
    json_object_set_new(meta_child(json_object_get(upd, "metadata"), "labels"),
                        PSA_LABEL_ENFORCE, json_string("restricted"));
    ty_error_init(&err);
    assert_int_equal(api_admit(&lk, API_ADMIT_UPDATE, &api_namespace, upd, "old", &err), 0);
    assert_int_equal(json_array_size(warnings), 3);
    assert_string_equal(json_string_value(json_array_get(warnings, 0)),
                        "existing pods in namespace \"old\" violate the new PodSecurity "
                        "enforce level \"restricted:latest\"");
    assert_string_equal(json_string_value(json_array_get(warnings, 1)),
                        "a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted "
                        "capabilities, runAsNonRoot != true, seccompProfile");
    assert_string_equal(json_string_value(json_array_get(warnings, 2)),
                        "h: host namespaces, allowPrivilegeEscalation != false, unrestricted "
                        "capabilities, runAsNonRoot != true, seccompProfile");
    /* looser, or the same: nothing to say */
    json_array_clear(warnings);
    json_object_set_new(json_object_get(json_object_get(upd, "metadata"), "labels"),
                        PSA_LABEL_ENFORCE, json_string("privileged"));
    assert_int_equal(api_admit(&lk, API_ADMIT_UPDATE, &api_namespace, upd, "old", &err), 0);
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(upd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_checks),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_restricted_checks),
        cmocka_unit_test(test_privileged_allows_all),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_pod_ids_validated_and_immutable),
        cmocka_unit_test_setup_teardown(test_namespace_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocks_race_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pod_defaults_and_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_privileged_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warn_and_audit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stricter_namespace_warns, setup, teardown),
        cmocka_unit_test(test_store_bootstrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
