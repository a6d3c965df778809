/* quota.c - ResourceQuota's rules (see quota.h). */
#include "model/quota.h"

#include <stdio.h>
#include <string.h>

#include "model/podres.h"
#include "model/quantity.h"

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int quota_parse(const json_t *v, int64_t *milli, ty_error *err)
{
    char buf[64];

    if (json_is_integer(v)) {
        *milli = json_integer_value(v) * 1000;
        return 0;
    }
    if (json_is_real(v)) {
        *milli = (int64_t)(json_real_value(v) * 1000);
        return 0;
    }
    if (!json_is_string(v) || json_string_length(v) >= sizeof(buf))
        return ty_seterr(err, TY_EINVALID, "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    snprintf(buf, sizeof(buf), "%s", json_string_value(v));
    return quantity_parse(buf, milli, err);
}

static void add_to(json_t *usage, const char *name, int64_t milli)
{
    json_object_set_new(usage, name, json_integer(json_integer_value(json_object_get(usage, name))
                                                  + milli));
}

/* ---- pods ---- */

static bool pod_terminal(const json_t *pod)
{
    const char *phase = jstr(json_object_get(pod, "status"), "phase");
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

static int64_t lim_of(const json_t *c, const char *name)
{
    int64_t m = 0;
    const json_t *v = json_object_get(json_object_get(json_object_get(c, "resources"), "limits"),
                                      name);
    if (!v || quota_parse(v, &m, NULL) < 0)
        return 0;
    return m;
}

/* A pod's limit for name by the requests' rule (podres.h): the containers
 * and sidecars summed, against the largest ordinary init container (with
 * the sidecars started before it), plus the overhead. */
static int64_t pod_limit(const json_t *spec, const char *name)
{
    int64_t sum = 0, init_max = 0, sidecars = 0;
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(spec, "containers"), i, c)
        sum += lim_of(c, name);
    json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
        const char *rp = jstr(c, "restartPolicy");
        if (rp && !strcmp(rp, "Always")) {
            sidecars += lim_of(c, name);
            continue;
        }
        if (lim_of(c, name) + sidecars > init_max)
            init_max = lim_of(c, name) + sidecars;
    }
    sum += sidecars;
    if (init_max > sum)
        sum = init_max;
    {
        int64_t o = 0;
        const json_t *v = json_object_get(json_object_get(spec, "overhead"), name);
        if (v && quota_parse(v, &o, NULL) == 0)
            sum += o;
    }
    return sum;
}

static void pod_usage(json_t *usage, const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    char name[300];
    podres r;

    if (pod_terminal(pod))
        return;
    add_to(usage, "pods", 1000);
    add_to(usage, "count/pods", 1000);
    podres_of_spec(spec, &r);
    for (size_t i = 0; i < r.n; i++) {
        snprintf(name, sizeof(name), "requests.%s", r.r[i].name);
        add_to(usage, name, r.r[i].milli);
        add_to(usage, r.r[i].name, r.r[i].milli);
    }
    add_to(usage, "limits.cpu", pod_limit(spec, "cpu"));
    add_to(usage, "limits.memory", pod_limit(spec, "memory"));
}

/* ---- other objects ---- */

static void service_usage(json_t *usage, const json_t *svc)
{
    const char *type = jstr(json_object_get(svc, "spec"), "type");
    size_t i, nports = 0;
    json_t *p;

    add_to(usage, "services", 1000);
    add_to(usage, "count/services", 1000);
    if (type && (!strcmp(type, "NodePort") || !strcmp(type, "LoadBalancer"))) {
        json_array_foreach(json_object_get(json_object_get(svc, "spec"), "ports"), i, p)
            nports++;
        add_to(usage, "services.nodeports", (int64_t)nports * 1000);
    }
    if (type && !strcmp(type, "LoadBalancer"))
        add_to(usage, "services.loadbalancers", 1000);
}

static void pvc_usage(json_t *usage, const json_t *pvc)
{
    const json_t *spec = json_object_get(pvc, "spec");
    const char *cls = jstr(spec, "storageClassName");
    int64_t m = 0;
    char name[300];
    const json_t *v =
        json_object_get(json_object_get(json_object_get(spec, "resources"), "requests"), "storage");

    if (v)
        quota_parse(v, &m, NULL);
    add_to(usage, "persistentvolumeclaims", 1000);
    add_to(usage, "count/persistentvolumeclaims", 1000);
    add_to(usage, "requests.storage", m);
    if (cls && *cls) {
        snprintf(name, sizeof(name), "%s.storageclass.storage.k8s.io/requests.storage", cls);
        add_to(usage, name, m);
        snprintf(name, sizeof(name), "%s.storageclass.storage.k8s.io/persistentvolumeclaims", cls);
        add_to(usage, name, 1000);
    }
}

void quota_usage_add(json_t *usage, const char *group, const char *plural, const json_t *obj)
{
    char name[300];

    if (!*group && !strcmp(plural, "pods")) {
        pod_usage(usage, obj);
        return;
    }
    if (!*group && !strcmp(plural, "services")) {
        service_usage(usage, obj);
        return;
    }
    if (!*group && !strcmp(plural, "persistentvolumeclaims")) {
        pvc_usage(usage, obj);
        return;
    }
    if (!*group)
        add_to(usage, plural, 1000); /* configmaps, secrets, resourcequotas... */
    snprintf(name, sizeof(name), "count/%s%s%s", plural, *group ? "." : "", group);
    add_to(usage, name, 1000);
}

/* ---- scopes ---- */

static bool pod_best_effort(const json_t *spec)
{
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c) {
            const json_t *res = json_object_get(c, "resources");
            static const char *const kinds[] = {"requests", "limits"};
            for (size_t k = 0; k < 2; k++) {
                const json_t *m = json_object_get(res, kinds[k]);
                if (json_object_get(m, "cpu") || json_object_get(m, "memory"))
                    return false;
            }
        }
    }
    return true;
}

bool quota_scope_matches(const char *scope, const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *ads = json_object_get(spec, "activeDeadlineSeconds");
    bool terminating = json_is_integer(ads) && json_integer_value(ads) >= 0;

    if (!strcmp(scope, "Terminating"))
        return terminating;
    if (!strcmp(scope, "NotTerminating"))
        return !terminating;
    if (!strcmp(scope, "BestEffort"))
        return pod_best_effort(spec);
    if (!strcmp(scope, "NotBestEffort"))
        return !pod_best_effort(spec);
    if (!strcmp(scope, "PriorityClass"))
        return jstr(spec, "priorityClassName") && *jstr(spec, "priorityClassName");
    return false; /* CrossNamespacePodAffinity, VolumeAttributesClass: not told */
}

static bool in_values(const json_t *values, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(values, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), s))
            return true;
    return false;
}

bool quota_scope_expr_matches(const json_t *expr, const json_t *pod)
{
    const char *scope = jstr(expr, "scopeName"), *op = jstr(expr, "operator");
    const json_t *values = json_object_get(expr, "values");
    const char *pc;

    if (!scope || !op)
        return false;
    if (strcmp(scope, "PriorityClass") != 0) {
        bool m = quota_scope_matches(scope, pod);
        return !strcmp(op, "DoesNotExist") ? !m : m;
    }
    pc = jstr(json_object_get(pod, "spec"), "priorityClassName");
    if (pc && !*pc)
        pc = NULL;
    if (!strcmp(op, "Exists"))
        return pc != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return pc == NULL;
    if (!strcmp(op, "In"))
        return pc && in_values(values, pc);
    if (!strcmp(op, "NotIn"))
        return !pc || !in_values(values, pc);
    return false;
}

bool quota_matches(const json_t *quota, const char *group, const char *plural,
                   const json_t *obj)
{
    const json_t *spec = json_object_get(quota, "spec");
    const json_t *scopes = json_object_get(spec, "scopes");
    const json_t *exprs = json_object_get(json_object_get(spec, "scopeSelector"),
                                          "matchExpressions");
    bool is_pod = !*group && !strcmp(plural, "pods");
    size_t i;
    json_t *s;

    if (json_array_size(scopes) == 0 && json_array_size(exprs) == 0)
        return true;
    if (!is_pod)
        return false;
    json_array_foreach(scopes, i, s)
        if (!json_is_string(s) || !quota_scope_matches(json_string_value(s), obj))
            return false;
    json_array_foreach(exprs, i, s)
        if (!quota_scope_expr_matches(s, obj))
            return false;
    return true;
}

static const char *const known_scopes[] = {"Terminating", "NotTerminating", "BestEffort",
                                           "NotBestEffort", "PriorityClass",
                                           "CrossNamespacePodAffinity", "VolumeAttributesClass",
                                           NULL};

bool quota_scope_known(const char *scope)
{
    for (size_t i = 0; scope && known_scopes[i]; i++)
        if (!strcmp(scope, known_scopes[i]))
            return true;
    return false;
}

/* The names the pod scopes track. */
static const char *const compute_names[] = {"pods", "count/pods", "cpu", "memory",
                                            "requests.cpu", "requests.memory", "limits.cpu",
                                            "limits.memory", NULL};

bool quota_scope_allows(const char *scope, const char *key)
{
    if (!strcmp(scope, "BestEffort"))
        return !strcmp(key, "pods") || !strcmp(key, "count/pods");
    if (!strcmp(scope, "VolumeAttributesClass"))
        return strstr(key, "storage") || strstr(key, "persistentvolumeclaims");
    for (size_t i = 0; compute_names[i]; i++)
        if (!strcmp(key, compute_names[i]))
            return true;
    /* extended resources (requests.nvidia.com/gpu) are pod names too */
    return starts(key, "requests.") && strchr(key, '/');
}

/* ---- names ---- */

static const char *const standard[] = {
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers", "cpu", "memory",
    "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    NULL};

bool quota_key_valid(const char *key)
{
    for (size_t i = 0; standard[i]; i++)
        if (!strcmp(key, standard[i]))
            return true;
    if (starts(key, "count/") && key[6])
        return true;
    if (starts(key, "hugepages-") || starts(key, "requests.hugepages-"))
        return true;
    /* extended resources and per-class storage: fully qualified */
    return strchr(key, '/') != NULL && key[0] != '/' && key[strlen(key) - 1] != '/';
}

int quota_key_resource(const char *key, char *group, size_t glen, char *plural, size_t plen)
{
    const char *dot;

    group[0] = plural[0] = 0;
    if (starts(key, "count/")) {
        key += 6;
        if (!*key)
            return -1;
        dot = strchr(key, '.');
        if (dot) {
            snprintf(plural, plen, "%.*s", (int)(dot - key), key);
            snprintf(group, glen, "%s", dot + 1);
        } else {
            snprintf(plural, plen, "%s", key);
        }
        return 0;
    }
    if (starts(key, "services")) {
        snprintf(plural, plen, "services");
        return 0;
    }
    if (!strcmp(key, "persistentvolumeclaims") || !strcmp(key, "requests.storage") ||
        strstr(key, ".storageclass.storage.k8s.io/")) {
        snprintf(plural, plen, "persistentvolumeclaims");
        return 0;
    }
    if (!strcmp(key, "configmaps") || !strcmp(key, "secrets") ||
        !strcmp(key, "resourcequotas") || !strcmp(key, "replicationcontrollers")) {
        snprintf(plural, plen, "%s", key);
        return 0;
    }
    /* pods, requests.*, limits.*, cpu, memory, extended names */
    snprintf(plural, plen, "pods");
    return 0;
}

const char *quota_key_request(const char *key)
{
    if (!strcmp(key, "pods") || !strcmp(key, "count/pods"))
        return "pods";
    if (starts(key, "limits.") || starts(key, "count/") || strstr(key, "storage") ||
        strstr(key, "persistentvolumeclaims") || starts(key, "services"))
        return NULL;
    if (!strcmp(key, "configmaps") || !strcmp(key, "secrets") ||
        !strcmp(key, "resourcequotas") || !strcmp(key, "replicationcontrollers"))
        return NULL;
    if (starts(key, "requests."))
        return key + 9;
    return key; /* cpu, memory, nvidia.com/gpu */
}

/* ---- what a pod must specify ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends "<qname> for: a,b" (the containers sorted, as kube-apiserver
 * lists them) for the containers that lack res under kind (requests: a
 * request or a limit, the API defaulting one to the other; limits: a
 * limit). */
static void missing_for(const json_t *spec, const char *qname, const char *kind,
                        const char *res, char *out, size_t len)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const char *names[64];
    size_t used = strlen(out), n = 0;

    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c) {
            const json_t *r = json_object_get(c, "resources");
            bool has = json_object_get(json_object_get(r, "limits"), res) != NULL ||
                       (!strcmp(kind, "requests") &&
                        json_object_get(json_object_get(r, "requests"), res) != NULL);
            if (!has && n < 64)
                names[n++] = jstr(c, "name") ? jstr(c, "name") : "";
        }
    }
    if (!n)
        return;
    qsort(names, n, sizeof(names[0]), cmp_str);
    if (used < len)
        used += (size_t)snprintf(out + used, len - used, "%s%s for: ", used ? "; " : "", qname);
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", names[i]);
}

int quota_pod_missing(const json_t *quota, const json_t *pod, char *out, size_t len)
{
    /* sorted, as kube-apiserver lists them */
    static const struct {
        const char *qname, *kind, *res;
    } names[] = {
        {"cpu", "requests", "cpu"},
        {"limits.cpu", "limits", "cpu"},
        {"limits.memory", "limits", "memory"},
        {"memory", "requests", "memory"},
        {"requests.cpu", "requests", "cpu"},
        {"requests.memory", "requests", "memory"},
    };
    const json_t *hard = json_object_get(json_object_get(quota, "spec"), "hard");
    const json_t *spec = json_object_get(pod, "spec");

    out[0] = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (json_object_get(hard, names[i].qname))
            missing_for(spec, names[i].qname, names[i].kind, names[i].res, out, len);
    return out[0] ? -1 : 0;
}

void quota_format(const char *key, int64_t milli, char *buf, size_t len)
{
    static const char *const bin[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int64_t v = milli / 1000;
    int s = -1;

    if (milli % 1000 != 0 || v == 0 ||
        !(strstr(key, "memory") || strstr(key, "storage") || strstr(key, "hugepages"))) {
        quantity_format(milli, buf, len);
        return;
    }
    while (s < 5 && v % 1024 == 0) {
        v /= 1024;
        s++;
    }
    snprintf(buf, len, "%lld%s", (long long)v, s >= 0 ? bin[s] : "");
}
