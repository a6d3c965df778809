/* kind_pod.c - core/v1 Pod: defaulting, validation, update rules and the
 * columns `kubectl get pods` prints. The PodSpec rules are shared with every
 * pod template through meta_pod_spec_defaults/_validate. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/schema.h"
#include "model/quantity.h"

#define PATH_LEN 256

static const char *const restart_all[] = {"Always", "OnFailure", "Never", NULL};
static const char *const dns_policies[] = {"ClusterFirstWithHostNet", "ClusterFirst",
                                           "Default", "None", NULL};
static const char *const pull_policies[] = {"Always", "IfNotPresent", "Never", NULL};
static const char *const msg_policies[] = {"File", "FallbackToLogsOnError", NULL};
static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};
static const char *const tol_operators[] = {"Equal", "Exists", NULL};
static const char *const tol_effects[] = {"NoExecute", "NoSchedule", "PreferNoSchedule", NULL};

static bool in_set(const char *s, const char *const *set)
{
    for (size_t i = 0; s && set[i]; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

const char *meta_default_pull_policy(const char *image)
{
    const char *slash, *colon;

    if (!image || strchr(image, '@'))
        return image ? "IfNotPresent" : "Always";
    /* The tag follows the last ':' after the last '/' (a registry port is not a tag). */
    slash = strrchr(image, '/');
    colon = strrchr(slash ? slash : image, ':');
    if (!colon || strcmp(colon + 1, "latest") == 0)
        return "Always";
    return "IfNotPresent";
}

/* Requests default to limits for every resource with a limit and no request. */
static void default_requests(json_t *resources)
{
    json_t *limits = json_object_get(resources, "limits"), *requests, *v;
    const char *key;

    if (!json_is_object(limits) || json_object_size(limits) == 0)
        return;
    requests = meta_child(resources, "requests");
    json_object_foreach(limits, key, v)
        if (!json_object_get(requests, key))
            json_object_set(requests, key, v);
}

static void default_containers(json_t *list)
{
    size_t i;
    json_t *c;

    json_array_foreach(list, i, c) {
        size_t j;
        json_t *p;
        if (!json_is_object(c))
            continue;
        meta_default(c, "terminationMessagePath", json_string("/dev/termination-log"));
        meta_default(c, "terminationMessagePolicy", json_string("File"));
        meta_default(c, "imagePullPolicy",
                     json_string(meta_default_pull_policy(meta_str(c, "image"))));
        json_array_foreach(json_object_get(c, "ports"), j, p)
            meta_default(p, "protocol", json_string("TCP"));
        if (json_is_object(json_object_get(c, "resources")))
            default_requests(json_object_get(c, "resources"));
    }
}

void meta_pod_spec_defaults(json_t *spec)
{
    if (!json_is_object(spec))
        return;
    meta_default(spec, "restartPolicy", json_string("Always"));
    meta_default(spec, "dnsPolicy", json_string("ClusterFirst"));
    meta_default(spec, "schedulerName", json_string("default-scheduler"));
    meta_default(spec, "terminationGracePeriodSeconds", json_integer(30));
    meta_default(spec, "securityContext", json_object());
    meta_default(spec, "enableServiceLinks", json_true());
    default_containers(json_object_get(spec, "initContainers"));
    default_containers(json_object_get(spec, "containers"));
}

/* ---- validation --------------------------------------------------------- */

static void check_port_name(const char *field, const char *name, ty_error *err)
{
    size_t n = strlen(name);
    bool letter = false, ok = true;

    for (size_t i = 0; i < n; i++) {
        if (name[i] >= 'a' && name[i] <= 'z')
            letter = true;
        else if (!(name[i] >= '0' && name[i] <= '9') && name[i] != '-')
            ok = false;
    }
    if (n > 15)
        meta_invalid_str(err, field, name, "must be no more than 15 characters");
    if (!ok)
        meta_invalid_str(err, field, name, "must contain only alpha-numeric characters "
                         "(a-z, 0-9), and hyphens (-)");
    if (!letter)
        meta_invalid_str(err, field, name, "must contain at least one letter (a-z)");
    if (strstr(name, "--"))
        meta_invalid_str(err, field, name, "must not contain consecutive hyphens");
    if (n && (name[0] == '-' || name[n - 1] == '-'))
        meta_invalid_str(err, field, name, "must not begin or end with a hyphen");
}

/* Port number member of ports[i] under path (the field path is only
 * written out for an error: a pod's validation runs for every pod a job
 * engine creates). */
static void check_port_number(const char *path, size_t i, const char *member, const json_t *v,
                              bool required, ty_error *err)
{
    json_int_t p = json_is_integer(v) ? json_integer_value(v) : 0;
    char f[PATH_LEN];

    if (!v || (json_is_integer(v) && p == 0)) {
        if (required) {
            snprintf(f, sizeof(f), "%s.ports[%zu].%s", path, i, member);
            meta_required(err, f, NULL);
        }
        return;
    }
    if (!json_is_integer(v) || p < 1 || p > 65535) {
        snprintf(f, sizeof(f), "%s.ports[%zu].%s", path, i, member);
        meta_invalid(err, f, v, "must be between 1 and 65535, inclusive");
    }
}

static void check_ports(const json_t *ports, const char *path, json_t *names, ty_error *err)
{
    char f[PATH_LEN];
    size_t i;
    json_t *p;

    json_array_foreach(ports, i, p) {
        const char *name = meta_str(p, "name");
        json_t *proto = json_object_get(p, "protocol");
        check_port_number(path, i, "containerPort", json_object_get(p, "containerPort"), true,
                          err);
        check_port_number(path, i, "hostPort", json_object_get(p, "hostPort"), false, err);
        if (proto && !in_set(json_string_value(proto), protocols)) {
            snprintf(f, sizeof(f), "%s.ports[%zu].protocol", path, i);
            meta_not_supported(err, f, proto, protocols);
        }
        if (name && *name) {
            snprintf(f, sizeof(f), "%s.ports[%zu].name", path, i);
            check_port_name(f, name, err);
            if (json_object_get(names, name))
                meta_duplicate(err, f, json_object_get(p, "name"));
            json_object_set_new(names, name, json_true());
        }
    }
}

static void check_env(const json_t *env, const char *path, ty_error *err)
{
    char f[PATH_LEN];
    size_t i;
    json_t *e;

    json_array_foreach(env, i, e) {
        const char *name = meta_str(e, "name");
        snprintf(f, sizeof(f), "%s.env[%zu].name", path, i);
        if (!name || !*name)
            meta_required(err, f, NULL);
        else
            meta_check_env_var_name(f, name, err);
    }
}

/* A quantity given as a string or a number, in milli-units: 0, or -1. */
static int quantity_of(const json_t *v, int64_t *milli)
{
    ty_error qe;
    int rc;

    if (json_is_integer(v)) {
        *milli = json_integer_value(v) * 1000;
        return 0;
    }
    if (!json_is_string(v))
        return -1;
    ty_error_init(&qe);
    rc = quantity_parse(json_string_value(v), milli, &qe) == 0 ? 0 : -1;
    ty_error_clear(&qe);
    return rc;
}

static void quantity_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else
        snprintf(buf, len, "%s", json_string_value(v) ? json_string_value(v) : "");
}

/* kube's IsOvercommitAllowed: a native resource (no domain, or
 * kubernetes.io's) but hugepages; an extended one (nvidia.com/gpu) is
 * requested exactly as limited. */
static bool overcommit_allowed(const char *name)
{
    const char *slash = strchr(name, '/');
    bool native = !slash || !strncmp(name, "kubernetes.io/", 14) ||
                  (slash - name > 15 && !strncmp(slash - 15, ".kubernetes.io/", 15));

    return native && strncmp(name, "hugepages-", 10) != 0;
}

/* Quantities parse and are non-negative; a request never exceeds its limit. */
static void check_resources(const json_t *res, const char *path, ty_error *err)
{
    static const char *const parts[] = {"limits", "requests"};
    char f[PATH_LEN];
    const char *key;
    json_t *v;

    for (size_t k = 0; k < 2; k++) {
        json_object_foreach(json_object_get(res, parts[k]), key, v) {
            int64_t milli = 0;
            ty_error qe;
            bool parsed;
            /* a resource's name is a qualified name, as kube-apiserver checks
             * it: the scheduler keeps every name it meets, and the metrics
             * print them */
            snprintf(f, sizeof(f), "%s.resources.%s[%s]", path, parts[k], key);
            meta_check_qualified_name(f, key, err);
            ty_error_init(&qe);
            if (json_is_integer(v))
                milli = json_integer_value(v) * 1000;
            parsed = json_is_integer(v) ||
                     (json_is_string(v) && !quantity_parse(json_string_value(v), &milli, &qe));
            ty_error_clear(&qe);
            if (parsed && milli >= 0)
                continue;
            snprintf(f, sizeof(f), "%s.resources.%s[%s]", path, parts[k], key);
            if (!parsed)
                meta_invalid(err, f, v, "quantities must match the regular expression "
                             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
            else
                meta_invalid(err, f, v, "must be greater than or equal to 0");
        }
    }
    json_object_foreach(json_object_get(res, "requests"), key, v) {
        json_t *lim = json_object_get(json_object_get(res, "limits"), key);
        int64_t rq, lm;
        char text[64], ltext[64];
        if (!lim) {
            /* a GPU cannot be shared: asked for, it is also its limit */
            if (!overcommit_allowed(key)) {
                snprintf(f, sizeof(f), "%s.resources.limits", path);
                meta_required(err, f, "Limit must be set for non overcommitable resources");
            }
            continue;
        }
        if (quantity_of(v, &rq) < 0 || quantity_of(lim, &lm) < 0)
            continue;
        snprintf(f, sizeof(f), "%s.resources.requests", path);
        quantity_text(v, text, sizeof(text));
        quantity_text(lim, ltext, sizeof(ltext));
        if (rq != lm && !overcommit_allowed(key))
            meta_invalid_str(err, f, text, "must be equal to %s limit of %s", key, ltext);
        else if (rq > lm)
            meta_invalid_str(err, f, text, "must be less than or equal to %s limit of %s", key,
                             ltext);
    }
}

static void check_mounts(const json_t *mounts, const char *path, const json_t *volumes,
                         ty_error *err)
{
    char f[PATH_LEN];
    size_t i;
    json_t *m;

    json_array_foreach(mounts, i, m) {
        const char *name = meta_str(m, "name");
        const char *mp = meta_str(m, "mountPath");
        if (!name || !*name || !json_object_get(volumes, name)) {
            snprintf(f, sizeof(f), "%s.volumeMounts[%zu].name", path, i);
            if (!name || !*name)
                meta_required(err, f, NULL);
            else
                ty_error_add_cause(err, "FieldValueNotFound", f, "Not found: \"%s\"", name);
        }
        if (!mp || !*mp) {
            snprintf(f, sizeof(f), "%s.volumeMounts[%zu].mountPath", path, i);
            meta_required(err, f, NULL);
        }
    }
}

/* User and group ids are 32-bit and non-negative, as Kubernetes' 0 to
 * 2147483647: -1 would reach setuid as "leave the id as it is", the
 * runtime's own (pods run as the ids admission leaves in the spec). */
static void check_ids(const json_t *sc, const char *path, bool pod_level, ty_error *err)
{
    static const char *const ids[] = {"runAsUser", "runAsGroup", "fsGroup"};
    char f[PATH_LEN];
    size_t i;
    json_t *v;

    for (size_t k = 0; k < (pod_level ? 3 : 2); k++) {
        v = json_object_get(sc, ids[k]);
        if (!v || json_is_null(v) ||
            (json_is_integer(v) && json_integer_value(v) >= 0 &&
             json_integer_value(v) <= 2147483647))
            continue;
        snprintf(f, sizeof(f), "%s.securityContext.%s", path, ids[k]);
        meta_invalid(err, f, v, "must be between 0 and 2147483647, inclusive");
    }
    if (!pod_level)
        return;
    json_array_foreach(json_object_get(sc, "supplementalGroups"), i, v) {
        if (json_is_integer(v) && json_integer_value(v) >= 0 &&
            json_integer_value(v) <= 2147483647)
            continue;
        snprintf(f, sizeof(f), "%s.securityContext.supplementalGroups[%zu]", path, i);
        meta_invalid(err, f, v, "must be between 0 and 2147483647, inclusive");
    }
}

static void check_container(const json_t *c, const char *path, json_t *names,
                            json_t *port_names, const json_t *volumes, ty_error *err)
{
    char f[PATH_LEN];
    const char *name = meta_str(c, "name");
    const char *image = meta_str(c, "image");
    json_t *v;

    snprintf(f, sizeof(f), "%s.name", path);
    if (!name || !*name) {
        meta_required(err, f, NULL);
    } else {
        meta_check_dns1123_label(f, name, err);
        if (json_object_get(names, name))
            meta_duplicate(err, f, json_object_get(c, "name"));
        json_object_set_new(names, name, json_true());
    }
    snprintf(f, sizeof(f), "%s.image", path);
    if (!image || !*image)
        meta_required(err, f, NULL);
    snprintf(f, sizeof(f), "%s.imagePullPolicy", path);
    if ((v = json_object_get(c, "imagePullPolicy")) && !in_set(json_string_value(v), pull_policies))
        meta_not_supported(err, f, v, pull_policies);
    snprintf(f, sizeof(f), "%s.terminationMessagePolicy", path);
    if ((v = json_object_get(c, "terminationMessagePolicy")) &&
        !in_set(json_string_value(v), msg_policies))
        meta_not_supported(err, f, v, msg_policies);
    check_ports(json_object_get(c, "ports"), path, port_names, err);
    check_env(json_object_get(c, "env"), path, err);
    check_resources(json_object_get(c, "resources"), path, err);
    check_mounts(json_object_get(c, "volumeMounts"), path, volumes, err);
    check_ids(json_object_get(c, "securityContext"), path, false, err);
}

/* Volume names: DNS-1123 labels, unique. Returns the set of names (caller owns). */
static json_t *check_volumes(const json_t *vols, const char *path, ty_error *err)
{
    json_t *names = json_object();
    char f[PATH_LEN];
    size_t i;
    json_t *v;

    json_array_foreach(vols, i, v) {
        const char *name = meta_str(v, "name");
        snprintf(f, sizeof(f), "%s.volumes[%zu].name", path, i);
        if (!name || !*name) {
            meta_required(err, f, NULL);
            continue;
        }
        meta_check_dns1123_label(f, name, err);
        if (json_object_get(names, name))
            meta_duplicate(err, f, json_object_get(v, "name"));
        json_object_set_new(names, name, json_true());
        if (json_object_get(v, "persistentVolumeClaim")) {
            const char *claim = meta_str(json_object_get(v, "persistentVolumeClaim"), "claimName");
            snprintf(f, sizeof(f), "%s.volumes[%zu].persistentVolumeClaim.claimName", path, i);
            if (!claim || !*claim)
                meta_required(err, f, NULL);
        }
    }
    return names;
}

static void check_tolerations(const json_t *tols, const char *path, ty_error *err)
{
    char f[PATH_LEN];
    size_t i;
    json_t *t, *v;

    json_array_foreach(tols, i, t) {
        const char *op = meta_str(t, "operator");
        snprintf(f, sizeof(f), "%s.tolerations[%zu].operator", path, i);
        if ((v = json_object_get(t, "operator")) && !in_set(op, tol_operators))
            meta_not_supported(err, f, v, tol_operators);
        if (op && strcmp(op, "Exists") == 0 && meta_str(t, "value") && *meta_str(t, "value")) {
            snprintf(f, sizeof(f), "%s.tolerations[%zu].operator", path, i);
            meta_invalid_str(err, f, op, "value must be empty when `operator` is 'Exists'");
        }
        snprintf(f, sizeof(f), "%s.tolerations[%zu].effect", path, i);
        if ((v = json_object_get(t, "effect")) && !(meta_str(t, "effect") &&
            !*meta_str(t, "effect")) && !in_set(json_string_value(v), tol_effects))
            meta_not_supported(err, f, v, tol_effects);
    }
}

static void check_spec_scalars(const json_t *spec, const char *path,
                               const char *const *restart, ty_error *err)
{
    char f[PATH_LEN];
    json_t *v;

    snprintf(f, sizeof(f), "%s.restartPolicy", path);
    if ((v = json_object_get(spec, "restartPolicy")) && !in_set(json_string_value(v), restart))
        meta_not_supported(err, f, v, restart);
    snprintf(f, sizeof(f), "%s.dnsPolicy", path);
    if ((v = json_object_get(spec, "dnsPolicy")) && !in_set(json_string_value(v), dns_policies))
        meta_not_supported(err, f, v, dns_policies);
    snprintf(f, sizeof(f), "%s.terminationGracePeriodSeconds", path);
    if ((v = json_object_get(spec, "terminationGracePeriodSeconds")) &&
        (!json_is_integer(v) || json_integer_value(v) < 0))
        meta_invalid(err, f, v, "must be greater than or equal to 0");
    snprintf(f, sizeof(f), "%s.activeDeadlineSeconds", path);
    if ((v = json_object_get(spec, "activeDeadlineSeconds")) && !json_is_null(v) &&
        (!json_is_integer(v) || json_integer_value(v) < 1 ||
         json_integer_value(v) > 2147483647))
        meta_invalid(err, f, v, "must be between 1 and 2147483647, inclusive");
    snprintf(f, sizeof(f), "%s.nodeSelector", path);
    meta_check_labels(f, json_object_get(spec, "nodeSelector"), err);
    snprintf(f, sizeof(f), "%s.hostname", path);
    if (meta_str(spec, "hostname") && *meta_str(spec, "hostname"))
        meta_check_dns1123_label(f, meta_str(spec, "hostname"), err);
    snprintf(f, sizeof(f), "%s.subdomain", path);
    if (meta_str(spec, "subdomain") && *meta_str(spec, "subdomain"))
        meta_check_dns1123_label(f, meta_str(spec, "subdomain"), err);
    check_tolerations(json_object_get(spec, "tolerations"), path, err);
}

int meta_pod_spec_validate(const json_t *spec, const char *path,
                           const char *const *restart_policies, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    json_t *names, *port_names, *volumes, *containers = json_object_get(spec, "containers");
    char f[PATH_LEN];
    size_t i;
    json_t *c;

    if (!json_is_object(spec)) {
        meta_required(err, path, NULL);
        return 1;
    }
    names = json_object();
    port_names = json_object();
    volumes = check_volumes(json_object_get(spec, "volumes"), path, err);
    json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
        snprintf(f, sizeof(f), "%s.initContainers[%zu]", path, i);
        check_container(c, f, names, port_names, volumes, err);
    }
    if (json_array_size(containers) == 0) {
        snprintf(f, sizeof(f), "%s.containers", path);
        meta_required(err, f, NULL);
    }
    json_array_foreach(containers, i, c) {
        snprintf(f, sizeof(f), "%s.containers[%zu]", path, i);
        check_container(c, f, names, port_names, volumes, err);
    }
    check_spec_scalars(spec, path, restart_policies ? restart_policies : restart_all, err);
    check_ids(json_object_get(spec, "securityContext"), path, true, err);
    json_decref(names);
    json_decref(port_names);
    json_decref(volumes);
    return (int)(ty_error_ncauses(err) - before);
}

/* ---- the Pod kind ------------------------------------------------------- */

static void pod_defaults(json_t *obj)
{
    json_t *status;

    meta_pod_spec_defaults(json_object_get(obj, "spec"));
    status = meta_child(obj, "status");
    meta_default(status, "phase", json_string("Pending"));
}

/* The spec with the fields an update may change blanked out. Caller owns. */
static json_t *mutable_masked(const json_t *spec)
{
    static const char *const lists[] = {"containers", "initContainers"};
    json_t *m = json_deep_copy(spec);
    size_t i;
    json_t *c;

    if (!m)
        return json_object();
    for (size_t k = 0; k < 2; k++)
        json_array_foreach(json_object_get(m, lists[k]), i, c)
            json_object_del(c, "image");
    json_object_del(m, "activeDeadlineSeconds");
    json_object_del(m, "tolerations");
    return m;
}

static void check_pod_update(const json_t *spec, const json_t *old_spec, ty_error *err)
{
    json_t *a = mutable_masked(spec), *b = mutable_masked(old_spec);
    size_t i;
    json_t *t;

    if (!json_equal(a, b))
        meta_forbidden(err, "spec", "pod updates may not change fields other than "
            "`spec.containers[*].image`,`spec.initContainers[*].image`,"
            "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
            "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
            "it was previously negative)");
    /* Existing tolerations stay; new ones may be added. */
    json_array_foreach(json_object_get(old_spec, "tolerations"), i, t) {
        bool found = false;
        size_t j;
        json_t *u;
        json_array_foreach(json_object_get(spec, "tolerations"), j, u)
            if (json_equal(t, u))
                found = true;
        if (!found) {
            meta_forbidden(err, "spec.tolerations",
                           "existing toleration can not be modified except its "
                           "tolerationSeconds");
            break;
        }
    }
    json_decref(a);
    json_decref(b);
}

static int pod_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    size_t before = ty_error_ncauses(err);
    const json_t *spec = json_object_get(obj, "spec");

    if (!json_is_object(spec))
        meta_required(err, "spec.containers", NULL);
    else
        meta_pod_spec_validate(spec, "spec", NULL, err);
    if (old && json_is_object(spec))
        check_pod_update(spec, json_object_get(old, "spec"), err);
    return ty_error_ncauses(err) == before ? 0 : -1;
}

/* ---- the table kubectl prints ------------------------------------------ */

static bool has_ready_condition(const json_t *status)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c) {
        const char *type = meta_str(c, "type"), *st = meta_str(c, "status");
        if (type && strcmp(type, "Ready") == 0 && st && strcmp(st, "True") == 0)
            return true;
    }
    return false;
}

/* Init containers: sets reason and returns true while the pod is initializing. */
static bool init_status(const json_t *obj, char *reason, size_t len, long long *restarts)
{
    const json_t *st = json_object_get(obj, "status");
    size_t n_init = json_array_size(json_object_get(json_object_get(obj, "spec"),
                                                    "initContainers"));
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(st, "initContainerStatuses"), i, c) {
        json_t *state = json_object_get(c, "state");
        json_t *term = json_object_get(state, "terminated");
        json_t *wait = json_object_get(state, "waiting");
        const char *wr = meta_str(wait, "reason");
        *restarts += meta_int(c, "restartCount", 0);
        if (term && meta_int(term, "exitCode", 0) == 0)
            continue;
        if (term) {
            const char *r = meta_str(term, "reason");
            if (r && *r)
                snprintf(reason, len, "Init:%s", r);
            else if (meta_int(term, "signal", 0))
                snprintf(reason, len, "Init:Signal:%lld", (long long)meta_int(term, "signal", 0));
            else
                snprintf(reason, len, "Init:ExitCode:%lld",
                         (long long)meta_int(term, "exitCode", 0));
        } else if (wr && *wr && strcmp(wr, "PodInitializing") != 0) {
            snprintf(reason, len, "Init:%s", wr);
        } else {
            snprintf(reason, len, "Init:%zu/%zu", i, n_init);
        }
        return true;
    }
    return false;
}

static void pod_status_text(const json_t *obj, char *reason, size_t len, int *ready,
                            long long *restarts)
{
    const json_t *st = json_object_get(obj, "status");
    const json_t *cs = json_object_get(st, "containerStatuses");
    const char *phase = meta_str(st, "phase"), *r = meta_str(st, "reason");
    bool running = false;

    snprintf(reason, len, "%s", r && *r ? r : phase ? phase : "");
    *ready = 0;
    *restarts = 0;
    if (!init_status(obj, reason, len, restarts)) {
        *restarts = 0;
        for (size_t i = json_array_size(cs); i-- > 0;) {
            json_t *c = json_array_get(cs, i), *state = json_object_get(c, "state");
            json_t *wait = json_object_get(state, "waiting"), *term = json_object_get(state, "terminated");
            *restarts += meta_int(c, "restartCount", 0);
            if (meta_str(wait, "reason") && *meta_str(wait, "reason")) {
                snprintf(reason, len, "%s", meta_str(wait, "reason"));
            } else if (meta_str(term, "reason") && *meta_str(term, "reason")) {
                snprintf(reason, len, "%s", meta_str(term, "reason"));
            } else if (term && meta_int(term, "signal", 0)) {
                snprintf(reason, len, "Signal:%lld", (long long)meta_int(term, "signal", 0));
            } else if (term) {
                snprintf(reason, len, "ExitCode:%lld", (long long)meta_int(term, "exitCode", 0));
            } else if (json_is_true(json_object_get(c, "ready")) &&
                       json_object_get(state, "running")) {
                running = true;
                (*ready)++;
            }
        }
        if (strcmp(reason, "Completed") == 0 && running)
            snprintf(reason, len, "%s", has_ready_condition(st) ? "Running" : "NotReady");
    }
    if (json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") &&
        !json_is_null(json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp")))
        snprintf(reason, len, "%s", r && strcmp(r, "NodeLost") == 0 ? "Unknown" : "Terminating");
}

static const char *or_none(const char *s)
{
    return s && *s ? s : "<none>";
}

static void readiness_gates(const json_t *obj, char *buf, size_t len)
{
    const json_t *gates = json_object_get(json_object_get(obj, "spec"), "readinessGates");
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i, j, ok = 0;
    json_t *g, *c;

    if (json_array_size(gates) == 0) {
        snprintf(buf, len, "<none>");
        return;
    }
    json_array_foreach(gates, i, g)
        json_array_foreach(conds, j, c)
            if (meta_str(c, "type") && meta_str(g, "conditionType") &&
                strcmp(meta_str(c, "type"), meta_str(g, "conditionType")) == 0 &&
                meta_str(c, "status") && strcmp(meta_str(c, "status"), "True") == 0)
                ok++;
    snprintf(buf, len, "%zu/%zu", ok, json_array_size(gates));
}

static void pod_cells(const json_t *obj, time_t now, json_t *cells)
{
    const json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
    char reason[128], buf[64];
    int ready;
    long long restarts;

    pod_status_text(obj, reason, sizeof(reason), &ready, &restarts);
    snprintf(buf, sizeof(buf), "%d/%zu", ready, json_array_size(json_object_get(spec, "containers")));
    json_array_append_new(cells, json_string(buf));
    json_array_append_new(cells, json_string(reason));
    snprintf(buf, sizeof(buf), "%lld", restarts);
    json_array_append_new(cells, json_string(buf));
    api_age(obj, now, buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
    json_array_append_new(cells, json_string(or_none(meta_str(st, "podIP"))));
    json_array_append_new(cells, json_string(or_none(meta_str(spec, "nodeName"))));
    json_array_append_new(cells, json_string(or_none(meta_str(st, "nominatedNodeName"))));
    readiness_gates(obj, buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
}

static const api_column pod_columns[] = {
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "", "The number of times the containers in this pod have been "
     "restarted and when the last container in this pod has restarted.", 0},
    {"Age", "string", "", "CreationTimestamp is a timestamp representing the server time "
     "when this object was created.", 0},
    {"IP", "string", "", "podIP is the IP address allocated to the pod.", 1},
    {"Node", "string", "", "nodeName indicates in which node this pod is scheduled.", 1},
    {"Nominated Node", "string", "", "nominatedNodeName is set only when this pod preempts "
     "other pods on the node.", 1},
    {"Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated "
     "for pod readiness.", 1},
};

static const char *const pod_field_selectors[] = {
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
    "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName", NULL,
};

static const api_field pod_top_fields[] = {
    API_OBJECT("spec", &api_schema_pod_spec),
    API_OBJECT("status", &api_schema_pod_status),
};
static const api_schema pod_schema = {
    .fields = pod_top_fields, .nfields = API_NFIELDS(pod_top_fields),
    .description = "Pod is a collection of containers that can run on a host.",
};

const api_resource api_pod = {
    .group = "", .version = "v1", .kind = "Pod", .list_kind = "PodList",
    .plural = "pods", .singular = "pod",
    .short_names = {"po", NULL}, .categories = {"all", NULL},
    .namespaced = true, .has_status = true, .builtin = true,
    .subresources = {"log", "binding", NULL},
    .field_selectors = pod_field_selectors,
    .apply_defaults = pod_defaults,
    .validate = pod_validate,
    .columns = pod_columns, .ncolumns = sizeof(pod_columns) / sizeof(pod_columns[0]),
    .row_cells = pod_cells,
    .schema = &pod_schema,
};
