/* podsecurity.c - the Pod Security Standards' checks (see podsecurity.h).
 *
 * Each check reads the pod's JSON and, when it forbids, adds one
 * "reason (detail)" to the result, in pod-security-admission's order: the
 * baseline checks, then at baseline the baseline checks a restricted one
 * replaces (capabilities, hostPath volumes, seccomp), at restricted the
 * restricted checks. Containers are visited as upstream does: init
 * containers, containers, ephemeral containers. */
#include "api/podsecurity.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"

/* Latest is read as a version past every check's. */
#define MINOR_LATEST 1000

/* ---- small string lists -------------------------------------------------- */

/* At most SL_MAX entries are named in a message (a pod has at most a few
 * dozen containers); past that the count still rules the plural. */
#define SL_MAX 32
#define SL_POOL 1024

typedef struct sl {
    const char *v[SL_MAX];
    size_t n, total;
    char pool[SL_POOL];
    size_t used;
} sl;

static const char *sl_keep(sl *l, const char *s)
{
    size_t n = strlen(s) + 1;

    if (l->used + n > sizeof(l->pool))
        return NULL;
    memcpy(l->pool + l->used, s, n);
    l->used += n;
    return l->pool + l->used - n;
}

/* Appends s (kept as a copy: s may be a buffer of the caller's). */
static void sl_add(sl *l, const char *s)
{
    const char *k;

    l->total++;
    if (l->n < SL_MAX && (k = sl_keep(l, s ? s : "")))
        l->v[l->n++] = k;
}

/* Inserts s into a sorted set (Go's sets.String List order). */
static void sl_set(sl *l, const char *s)
{
    size_t i;
    const char *k;

    s = s ? s : "";
    for (i = 0; i < l->n; i++) {
        int c = strcmp(l->v[i], s);
        if (c == 0)
            return;
        if (c > 0)
            break;
    }
    l->total++;
    if (l->n >= SL_MAX || !(k = sl_keep(l, s)))
        return;
    memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(l->v[0]));
    l->v[i] = k;
    l->n++;
}

typedef struct buf {
    char *p;
    size_t len, used;
} buf;

static void bput(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->used + 1 >= b->len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->used = b->used + (size_t)n < b->len ? b->used + (size_t)n : b->len - 1;
}

/* `"a", "b"` (upstream's joinQuote), or the plain join with sep. */
static void sl_join(buf *b, const sl *l, bool quote, const char *sep)
{
    for (size_t i = 0; i < l->n; i++)
        bput(b, quote ? "%s\"%s\"" : "%s%s", i ? sep : "", l->v[i]);
}

static const char *plural(const char *one, const char *many, size_t n)
{
    return n == 1 ? one : many;
}

/* ---- the result -------------------------------------------------------- */

typedef struct result {
    buf b;
    int n;        /* violations so far */
    bool details; /* false: the reasons alone (a namespace's existing pods) */
} result;

static void forbid(result *r, const char *reason, const char *detail)
{
    bput(&r->b, "%s%s", r->n ? ", " : "", reason);
    if (r->details && detail && *detail)
        bput(&r->b, " (%s)", detail);
    r->n++;
}

/* ---- JSON accessors ---------------------------------------------------- */

static const json_t *sc_of(const json_t *o)
{
    return json_object_get(o, "securityContext");
}

static const char *const container_lists[] = {"initContainers", "containers",
                                              "ephemeralContainers"};

#define FOREACH_CONTAINER(spec, k, i, c)                                                    \
    for (size_t k = 0; k < 3; k++)                                                          \
        for (size_t i = 0;                                                                  \
             i < json_array_size(json_object_get(spec, container_lists[k])) &&              \
             ((c) = json_array_get(json_object_get(spec, container_lists[k]), i));          \
             i++)

static const char *cname(const json_t *c)
{
    const char *n = meta_str(c, "name");
    return n ? n : "";
}

/* "pod and container "a"" style setter lists: upstream joins "pod" and
 * `containers "a", "b"` with " and ". */
static void setters(buf *b, bool pod, const sl *containers)
{
    if (pod)
        bput(b, "pod");
    if (containers->total) {
        bput(b, "%s%s ", pod ? " and " : "", plural("container", "containers", containers->total));
        sl_join(b, containers, true, ", ");
    }
}

/* ---- baseline ------------------------------------------------------------ */

static bool apparmor_type_ok(const char *t)
{
    return t && (!strcmp(t, "RuntimeDefault") || !strcmp(t, "Localhost"));
}

static bool apparmor_annotation_ok(const char *v)
{
    return !v || !*v || !strcmp(v, "runtime/default") || !strncmp(v, "localhost/", 10);
}

static void chk_apparmor(const json_t *meta, const json_t *spec, result *r)
{
    static const char prefix[] = "container.apparmor.security.beta.kubernetes.io/";
    const json_t *prof = json_object_get(sc_of(spec), "appArmorProfile"), *c, *v;
    sl bad_c = {0}, values = {0}, annotations = {0};
    bool pod = false;
    const char *k;
    char line[512];
    buf b = {line, sizeof(line), 0};

    if (prof && !apparmor_type_ok(meta_str(prof, "type"))) {
        pod = true;
        sl_set(&values, meta_str(prof, "type"));
    }
    FOREACH_CONTAINER(spec, l, i, c) {
        prof = json_object_get(sc_of(c), "appArmorProfile");
        if (prof && !apparmor_type_ok(meta_str(prof, "type"))) {
            sl_add(&bad_c, cname(c));
            sl_set(&values, meta_str(prof, "type"));
        }
    }
    json_object_foreach((json_t *)json_object_get(meta, "annotations"), k, v) {
        char kv[400];
        if (strncmp(k, prefix, sizeof(prefix) - 1) != 0 ||
            apparmor_annotation_ok(json_string_value(v)))
            continue;
        snprintf(kv, sizeof(kv), "%s=\"%s\"", k, json_string_value(v) ? json_string_value(v) : "");
        sl_set(&annotations, kv);
    }
    if (!pod && !bad_c.total && !annotations.total)
        return;
    {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        size_t nvalues = values.total + annotations.total;
        setters(&d, pod, &bad_c);
        if (annotations.total)
            bput(&d, "%s%s", pod || bad_c.total ? " and " : "",
                 plural("annotation", "annotations", annotations.total));
        bput(&d, " must not set AppArmor profile type to ");
        sl_join(&d, &values, true, ", ");
        if (values.n && annotations.n)
            bput(&d, ", ");
        sl_join(&d, &annotations, true, ", ");
        bput(&b, "%s", plural("forbidden AppArmor profile", "forbidden AppArmor profiles",
                              nvalues));
        forbid(r, line, detail);
    }
}

static void chk_host_namespaces(const json_t *spec, result *r)
{
    char detail[64];
    buf d = {detail, sizeof(detail), 0};
    static const char *const fields[] = {"hostNetwork", "hostPID", "hostIPC"};
    int n = 0;

    for (size_t i = 0; i < 3; i++)
        if (json_is_true(json_object_get(spec, fields[i])))
            bput(&d, "%s%s=true", n++ ? ", " : "", fields[i]);
    if (n)
        forbid(r, "host namespaces", detail);
}

static void chk_host_ports(const json_t *spec, result *r)
{
    sl bad = {0}, ports = {0};
    const json_t *c, *p;
    size_t j;

    FOREACH_CONTAINER(spec, l, i, c) {
        bool found = false;
        json_array_foreach(json_object_get(c, "ports"), j, p) {
            json_int_t hp = meta_int(p, "hostPort", 0);
            char num[32];
            if (hp == 0)
                continue;
            found = true;
            snprintf(num, sizeof(num), "%lld", (long long)hp);
            sl_set(&ports, num);
        }
        if (found)
            sl_add(&bad, cname(c));
    }
    if (bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        bput(&d, "%s ", plural("container", "containers", bad.total));
        sl_join(&d, &bad, true, ", ");
        bput(&d, " %s %s ", plural("uses", "use", bad.total),
             plural("hostPort", "hostPorts", ports.total));
        sl_join(&d, &ports, false, ", ");
        forbid(r, "hostPort", detail);
    }
}

/* `containers "a", "b" <rest>`, the common shape of a container check. */
static void forbid_containers(result *r, const char *reason, const sl *bad, const char *rest)
{
    char detail[1024];
    buf d = {detail, sizeof(detail), 0};

    bput(&d, "%s ", plural("container", "containers", bad->total));
    sl_join(&d, bad, true, ", ");
    bput(&d, " %s", rest);
    forbid(r, reason, detail);
}

static void chk_privileged(const json_t *spec, result *r)
{
    sl bad = {0};
    const json_t *c;

    FOREACH_CONTAINER(spec, l, i, c)
        if (json_is_true(json_object_get(sc_of(c), "privileged")))
            sl_add(&bad, cname(c));
    if (bad.total)
        forbid_containers(r, "privileged", &bad, "must not set securityContext.privileged=true");
}

static void chk_proc_mount(const json_t *spec, result *r)
{
    sl bad = {0}, types = {0};
    const json_t *c;

    FOREACH_CONTAINER(spec, l, i, c) {
        const json_t *pm = json_object_get(sc_of(c), "procMount");
        if (!pm || json_is_null(pm))
            continue;
        if (json_is_string(pm) && !strcmp(json_string_value(pm), "Default"))
            continue;
        sl_add(&bad, cname(c));
        sl_set(&types, json_string_value(pm));
    }
    if (bad.total) {
        char rest[512];
        buf d = {rest, sizeof(rest), 0};
        bput(&d, "must not set securityContext.procMount to ");
        sl_join(&d, &types, true, ", ");
        forbid_containers(r, "procMount", &bad, rest);
    }
}

static bool selinux_type_ok(const char *t)
{
    return !t || !*t || !strcmp(t, "container_t") || !strcmp(t, "container_init_t") ||
           !strcmp(t, "container_kvm_t");
}

/* One seLinuxOptions: false when it sets a forbidden type, a user or a role. */
static bool selinux_ok(const json_t *opts, sl *types, bool *user, bool *role)
{
    const char *t = meta_str(opts, "type");
    bool valid = true;

    if (!selinux_type_ok(t)) {
        valid = false;
        sl_set(types, t);
    }
    if (meta_str(opts, "user") && *meta_str(opts, "user"))
        valid = false, *user = true;
    if (meta_str(opts, "role") && *meta_str(opts, "role"))
        valid = false, *role = true;
    return valid;
}

static void chk_selinux(const json_t *spec, result *r)
{
    sl bad_c = {0}, types = {0};
    bool pod = false, user = false, role = false;
    const json_t *opts = json_object_get(sc_of(spec), "seLinuxOptions"), *c;

    if (opts && !selinux_ok(opts, &types, &user, &role))
        pod = true;
    FOREACH_CONTAINER(spec, l, i, c) {
        opts = json_object_get(sc_of(c), "seLinuxOptions");
        if (opts && !selinux_ok(opts, &types, &user, &role))
            sl_add(&bad_c, cname(c));
    }
    if (pod || bad_c.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        int parts = 0;
        setters(&d, pod, &bad_c);
        bput(&d, " set forbidden securityContext.seLinuxOptions: ");
        if (types.total) {
            bput(&d, "%s ", plural("type", "types", types.total));
            sl_join(&d, &types, true, ", ");
            parts++;
        }
        /* (upstream names user and role only beside a bad type; Trainyard
         * names them always, so that the message is never empty) */
        if (user)
            bput(&d, "%suser may not be set", parts++ ? "; " : "");
        if (role)
            bput(&d, "%srole may not be set", parts++ ? "; " : "");
        forbid(r, "seLinuxOptions", detail);
    }
}

static bool sysctl_safe(const char *name, int minor)
{
    static const struct {
        const char *name;
        int since;
    } safe[] = {
        {"kernel.shm_rmid_forced", 0},       {"net.ipv4.ip_local_port_range", 0},
        {"net.ipv4.tcp_syncookies", 0},      {"net.ipv4.ping_group_range", 0},
        {"net.ipv4.ip_unprivileged_port_start", 0},
        {"net.ipv4.ip_local_reserved_ports", 27},
        {"net.ipv4.tcp_keepalive_time", 29}, {"net.ipv4.tcp_fin_timeout", 29},
        {"net.ipv4.tcp_keepalive_intvl", 29}, {"net.ipv4.tcp_keepalive_probes", 29},
        {"net.ipv4.tcp_rmem", 32},           {"net.ipv4.tcp_wmem", 32},
    };

    for (size_t i = 0; name && i < sizeof(safe) / sizeof(safe[0]); i++)
        if (strcmp(safe[i].name, name) == 0)
            return minor >= safe[i].since;
    return false;
}

static void chk_sysctls(const json_t *spec, int minor, result *r)
{
    sl bad = {0};
    const json_t *s;
    size_t i;

    json_array_foreach(json_object_get(sc_of(spec), "sysctls"), i, s)
        if (!sysctl_safe(meta_str(s, "name"), minor))
            sl_add(&bad, meta_str(s, "name"));
    if (bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        sl_join(&d, &bad, false, ", ");
        forbid(r, "forbidden sysctls", detail);
    }
}

static bool host_process(const json_t *o)
{
    return json_is_true(json_object_get(json_object_get(sc_of(o), "windowsOptions"),
                                        "hostProcess"));
}

static void chk_host_process(const json_t *spec, result *r)
{
    sl bad = {0};
    bool pod = host_process(spec);
    const json_t *c;

    FOREACH_CONTAINER(spec, l, i, c)
        if (host_process(c))
            sl_add(&bad, cname(c));
    if (pod || bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        setters(&d, pod, &bad);
        bput(&d, " must not set securityContext.windowsOptions.hostProcess=true");
        forbid(r, "hostProcess", detail);
    }
}

/* ---- baseline checks a restricted one replaces --------------------------- */

static bool cap_default(const char *c)
{
    static const char *const allowed[] = {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID",   "KILL",       "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    };
    for (size_t i = 0; c && i < sizeof(allowed) / sizeof(allowed[0]); i++)
        if (strcmp(allowed[i], c) == 0)
            return true;
    return false;
}

static void chk_capabilities_baseline(const json_t *spec, result *r)
{
    sl bad = {0}, caps = {0};
    const json_t *c, *v;
    size_t j;

    FOREACH_CONTAINER(spec, l, i, c) {
        bool valid = true;
        json_array_foreach(json_object_get(json_object_get(sc_of(c), "capabilities"), "add"),
                           j, v) {
            if (!cap_default(json_string_value(v))) {
                valid = false;
                sl_set(&caps, json_string_value(v));
            }
        }
        if (!valid)
            sl_add(&bad, cname(c));
    }
    if (bad.total) {
        char rest[1024];
        buf d = {rest, sizeof(rest), 0};
        bput(&d, "must not include ");
        sl_join(&d, &caps, true, ", ");
        bput(&d, " in securityContext.capabilities.add");
        forbid_containers(r, "non-default capabilities", &bad, rest);
    }
}

static void chk_host_path(const json_t *spec, result *r)
{
    sl bad = {0};
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(spec, "volumes"), i, v)
        if (json_object_get(v, "hostPath"))
            sl_add(&bad, meta_str(v, "name"));
    if (bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        bput(&d, "%s ", plural("volume", "volumes", bad.total));
        sl_join(&d, &bad, true, ", ");
        forbid(r, "hostPath volumes", detail);
    }
}

static bool seccomp_ok(const char *t)
{
    return t && (!strcmp(t, "RuntimeDefault") || !strcmp(t, "Localhost"));
}

static bool seccomp_annotation_ok(const char *v)
{
    return v && (!strcmp(v, "runtime/default") || !strcmp(v, "docker/default") ||
                 !strncmp(v, "localhost/", 10));
}

/* Before v1.19 seccomp was set by annotations. */
static void chk_seccomp_annotations(const json_t *meta, const json_t *spec, result *r)
{
    static const char pod_key[] = "seccomp.security.alpha.kubernetes.io/pod";
    const json_t *ann = json_object_get(meta, "annotations"), *c;
    sl bad = {0};
    char kv[400];
    const char *v = meta_str(ann, pod_key);

    if (v && !seccomp_annotation_ok(v)) {
        snprintf(kv, sizeof(kv), "%s=\"%s\"", pod_key, v);
        sl_set(&bad, kv);
    }
    FOREACH_CONTAINER(spec, l, i, c) {
        char key[300];
        snprintf(key, sizeof(key), "container.seccomp.security.alpha.kubernetes.io/%s",
                 cname(c));
        v = meta_str(ann, key);
        if (v && !seccomp_annotation_ok(v)) {
            snprintf(kv, sizeof(kv), "%s=\"%s\"", key, v);
            sl_set(&bad, kv);
        }
    }
    if (bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        bput(&d, "forbidden %s ", plural("annotation", "annotations", bad.total));
        sl_join(&d, &bad, false, ", ");
        forbid(r, "seccompProfile", detail);
    }
}

/* The seccomp check of both levels: restricted also wants every container
 * covered (by its own profile or the pod's). */
static void chk_seccomp(const json_t *spec, bool restricted, result *r)
{
    const json_t *prof = json_object_get(sc_of(spec), "seccompProfile"), *c;
    sl bad_c = {0}, values = {0}, unset = {0};
    bool pod_bad = false, pod_set = false;

    if (prof) {
        if (!seccomp_ok(meta_str(prof, "type"))) {
            pod_bad = true;
            sl_set(&values, meta_str(prof, "type"));
        } else {
            pod_set = true;
        }
    }
    FOREACH_CONTAINER(spec, l, i, c) {
        prof = json_object_get(sc_of(c), "seccompProfile");
        if (prof) {
            if (!seccomp_ok(meta_str(prof, "type"))) {
                sl_add(&bad_c, cname(c));
                sl_set(&values, meta_str(prof, "type"));
            }
        } else if (!pod_set) {
            sl_add(&unset, cname(c));
        }
    }
    if (pod_bad || bad_c.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        setters(&d, pod_bad, &bad_c);
        bput(&d, " must not set securityContext.seccompProfile.type to ");
        sl_join(&d, &values, true, ", ");
        forbid(r, "seccompProfile", detail);
    } else if (restricted && unset.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        bput(&d, "pod or %s ", plural("container", "containers", unset.total));
        sl_join(&d, &unset, true, ", ");
        bput(&d, " must set securityContext.seccompProfile.type to \"RuntimeDefault\" or "
                 "\"Localhost\"");
        forbid(r, "seccompProfile", detail);
    }
}

/* ---- restricted ---------------------------------------------------------- */

static void chk_privilege_escalation(const json_t *spec, result *r)
{
    sl bad = {0};
    const json_t *c;

    FOREACH_CONTAINER(spec, l, i, c) {
        const json_t *ape = json_object_get(sc_of(c), "allowPrivilegeEscalation");
        if (!json_is_false(ape))
            sl_add(&bad, cname(c));
    }
    if (bad.total)
        forbid_containers(r, "allowPrivilegeEscalation != false", &bad,
                          "must set securityContext.allowPrivilegeEscalation=false");
}

static void chk_capabilities_restricted(const json_t *spec, result *r)
{
    sl no_drop = {0}, adding = {0}, caps = {0};
    const json_t *c, *v;
    size_t j;
    char detail[1024];
    buf d = {detail, sizeof(detail), 0};

    FOREACH_CONTAINER(spec, l, i, c) {
        const json_t *capsj = json_object_get(sc_of(c), "capabilities");
        bool dropped = false, added = false;
        if (!capsj) {
            sl_add(&no_drop, cname(c));
            continue;
        }
        json_array_foreach(json_object_get(capsj, "drop"), j, v)
            if (json_is_string(v) && !strcmp(json_string_value(v), "ALL"))
                dropped = true;
        if (!dropped)
            sl_add(&no_drop, cname(c));
        json_array_foreach(json_object_get(capsj, "add"), j, v) {
            if (json_is_string(v) && !strcmp(json_string_value(v), "NET_BIND_SERVICE"))
                continue;
            added = true;
            sl_set(&caps, json_string_value(v));
        }
        if (added)
            sl_add(&adding, cname(c));
    }
    if (no_drop.total) {
        bput(&d, "%s ", plural("container", "containers", no_drop.total));
        sl_join(&d, &no_drop, true, ", ");
        bput(&d, " must set securityContext.capabilities.drop=[\"ALL\"]");
    }
    if (adding.total) {
        bput(&d, "%s%s ", no_drop.total ? "; " : "",
             plural("container", "containers", adding.total));
        sl_join(&d, &adding, true, ", ");
        bput(&d, " must not include ");
        sl_join(&d, &caps, true, ", ");
        bput(&d, " in securityContext.capabilities.add");
    }
    if (no_drop.total || adding.total)
        forbid(r, "unrestricted capabilities", detail);
}

static const char *volume_type(const json_t *v)
{
    static const char *const allowed[] = {"configMap", "csi", "downwardAPI", "emptyDir",
                                          "ephemeral", "persistentVolumeClaim", "projected",
                                          "secret", NULL};
    static const char *const known[] = {
        "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
        "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
        "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
        "scaleIO", "storageos", NULL};
    const char *k;
    const json_t *x;
    bool any = false;

    for (size_t i = 0; allowed[i]; i++)
        if (json_object_get(v, allowed[i]))
            return NULL;
    for (size_t i = 0; known[i]; i++)
        if (json_object_get(v, known[i]))
            return known[i];
    json_object_foreach((json_t *)v, k, x)
        if (strcmp(k, "name") != 0)
            any = true;
    /* no source at all: the API server defaults it to emptyDir */
    return any ? "unknown" : NULL;
}

static void chk_restricted_volumes(const json_t *spec, result *r)
{
    sl bad = {0}, types = {0};
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(spec, "volumes"), i, v) {
        const char *t = volume_type(v);
        if (!t)
            continue;
        sl_add(&bad, meta_str(v, "name"));
        sl_set(&types, t);
    }
    if (bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        bput(&d, "%s ", plural("volume", "volumes", bad.total));
        sl_join(&d, &bad, true, ", ");
        bput(&d, " %s %s ", plural("uses", "use", bad.total),
             plural("restricted volume type", "restricted volume types", types.total));
        sl_join(&d, &types, true, ", ");
        forbid(r, "restricted volume types", detail);
    }
}

static void chk_run_as_non_root(const json_t *spec, result *r)
{
    const json_t *pv = json_object_get(sc_of(spec), "runAsNonRoot"), *c;
    bool pod_bad = json_is_false(pv), pod_ok = json_is_true(pv);
    sl bad = {0}, implicit = {0};
    char detail[1024];
    buf d = {detail, sizeof(detail), 0};

    FOREACH_CONTAINER(spec, l, i, c) {
        const json_t *cv = json_object_get(sc_of(c), "runAsNonRoot");
        if (cv && !json_is_null(cv)) {
            if (!json_is_true(cv))
                sl_add(&bad, cname(c));
        } else if (!pod_ok) {
            sl_add(&implicit, cname(c));
        }
    }
    if (pod_bad || bad.total) {
        setters(&d, pod_bad, &bad);
        bput(&d, " must not set securityContext.runAsNonRoot=false");
        forbid(r, "runAsNonRoot != true", detail);
    } else if (implicit.total) {
        bput(&d, "pod or %s ", plural("container", "containers", implicit.total));
        sl_join(&d, &implicit, true, ", ");
        bput(&d, " must set securityContext.runAsNonRoot=true");
        forbid(r, "runAsNonRoot != true", detail);
    }
}

static bool is_root(const json_t *o)
{
    const json_t *u = json_object_get(sc_of(o), "runAsUser");
    return json_is_integer(u) && json_integer_value(u) == 0;
}

static void chk_run_as_user(const json_t *spec, result *r)
{
    sl bad = {0};
    const json_t *c;
    bool pod = is_root(spec);

    FOREACH_CONTAINER(spec, l, i, c)
        if (is_root(c))
            sl_add(&bad, cname(c));
    if (pod || bad.total) {
        char detail[1024];
        buf d = {detail, sizeof(detail), 0};
        setters(&d, pod, &bad);
        bput(&d, " must not set runAsUser=0");
        forbid(r, "runAsUser=0", detail);
    }
}

/* ---- evaluation ---------------------------------------------------------- */

bool psa_check(psa_lv lv, const json_t *meta, const json_t *spec, char *out, size_t len)
{
    return psa_check_ex(lv, meta, spec, true, out, len);
}

bool psa_check_ex(psa_lv lv, const json_t *meta, const json_t *spec, bool details, char *out,
                  size_t len)
{
    result r = {{out, len, 0}, 0, details};
    int minor = lv.minor == PSA_LATEST ? MINOR_LATEST : lv.minor;
    bool restricted = lv.level == PSA_RESTRICTED;

    if (len)
        out[0] = '\0';
    if (lv.level == PSA_PRIVILEGED || !json_is_object(spec))
        return true;
    chk_apparmor(meta, spec, &r);
    chk_host_namespaces(spec, &r);
    chk_host_ports(spec, &r);
    chk_privileged(spec, &r);
    chk_proc_mount(spec, &r);
    chk_selinux(spec, &r);
    chk_sysctls(spec, minor, &r);
    chk_host_process(spec, &r);
    /* The baseline checks a restricted one replaces, where it applies. */
    if (!restricted || minor < 22)
        chk_capabilities_baseline(spec, &r);
    if (!restricted)
        chk_host_path(spec, &r);
    if (minor < 19)
        chk_seccomp_annotations(meta, spec, &r);
    else if (!restricted)
        chk_seccomp(spec, false, &r);
    if (restricted) {
        if (minor >= 8)
            chk_privilege_escalation(spec, &r);
        if (minor >= 22)
            chk_capabilities_restricted(spec, &r);
        chk_restricted_volumes(spec, &r);
        chk_run_as_non_root(spec, &r);
        if (minor >= 23)
            chk_run_as_user(spec, &r);
        if (minor >= 19)
            chk_seccomp(spec, true, &r);
    }
    return r.n == 0;
}
