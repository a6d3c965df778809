/* rt_ident.c - a container's identity on the host (see rt_ident.h). */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/local/rt_ident.h"

#define MAX_CAP_NAMES 64

/* Names as securityContext.capabilities lists them (with or without CAP_). */
static const struct {
    const char *name;
    int cap;
} cap_names[] = {
    {"CHOWN", CAP_CHOWN},
    {"DAC_OVERRIDE", CAP_DAC_OVERRIDE},
    {"DAC_READ_SEARCH", CAP_DAC_READ_SEARCH},
    {"FOWNER", CAP_FOWNER},
    {"FSETID", CAP_FSETID},
    {"KILL", CAP_KILL},
    {"SETGID", CAP_SETGID},
    {"SETUID", CAP_SETUID},
    {"SETPCAP", CAP_SETPCAP},
    {"LINUX_IMMUTABLE", CAP_LINUX_IMMUTABLE},
    {"NET_BIND_SERVICE", CAP_NET_BIND_SERVICE},
    {"NET_BROADCAST", CAP_NET_BROADCAST},
    {"NET_ADMIN", CAP_NET_ADMIN},
    {"NET_RAW", CAP_NET_RAW},
    {"IPC_LOCK", CAP_IPC_LOCK},
    {"IPC_OWNER", CAP_IPC_OWNER},
    {"SYS_MODULE", CAP_SYS_MODULE},
    {"SYS_RAWIO", CAP_SYS_RAWIO},
    {"SYS_CHROOT", CAP_SYS_CHROOT},
    {"SYS_PTRACE", CAP_SYS_PTRACE},
    {"SYS_PACCT", CAP_SYS_PACCT},
    {"SYS_ADMIN", CAP_SYS_ADMIN},
    {"SYS_BOOT", CAP_SYS_BOOT},
    {"SYS_NICE", CAP_SYS_NICE},
    {"SYS_RESOURCE", CAP_SYS_RESOURCE},
    {"SYS_TIME", CAP_SYS_TIME},
    {"SYS_TTY_CONFIG", CAP_SYS_TTY_CONFIG},
    {"MKNOD", CAP_MKNOD},
    {"LEASE", CAP_LEASE},
    {"AUDIT_WRITE", CAP_AUDIT_WRITE},
    {"AUDIT_CONTROL", CAP_AUDIT_CONTROL},
    {"SETFCAP", CAP_SETFCAP},
    {"MAC_OVERRIDE", CAP_MAC_OVERRIDE},
    {"MAC_ADMIN", CAP_MAC_ADMIN},
    {"SYSLOG", CAP_SYSLOG},
    {"WAKE_ALARM", CAP_WAKE_ALARM},
    {"BLOCK_SUSPEND", CAP_BLOCK_SUSPEND},
    {"AUDIT_READ", CAP_AUDIT_READ},
    {"PERFMON", 38},
    {"BPF", 39},
    {"CHECKPOINT_RESTORE", 40},
};

/* ---- agent side ---- */

static const json_t *sc_of(const json_t *o)
{
    return json_object_get(o, "securityContext");
}

/* An integer of the container's securityContext, else of the pod's. */
static const json_t *pick(const json_t *pod_sc, const json_t *ct_sc, const char *key)
{
    const json_t *v = json_object_get(ct_sc, key);

    return v && !json_is_null(v) ? v : json_object_get(pod_sc, key);
}

static int id_value(const json_t *v, const char *field, json_int_t *out, ty_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > RT_MAX_ID)
        return ty_seterr(err, TY_EINVALID,
                         "securityContext.%s: Invalid value: %s: must be between 0 and %lld, "
                         "inclusive",
                         field, json_is_integer(v) ? "out of range" : "not an integer",
                         RT_MAX_ID);
    *out = json_integer_value(v);
    return 1;
}

/* uid: runAsUser, else nobody; gid: runAsGroup, else the uid's value (there
 * is no image whose passwd names the user's group; gid 0, what a runtime
 * gives a uid its image does not know, would be the host's root group). */
static int resolve(const json_t *pod_sc, const json_t *ct_sc, json_int_t *uid, json_int_t *gid,
                   ty_error *err)
{
    int has_uid, has_gid;

    *uid = *gid = RT_NOBODY;
    if ((has_uid = id_value(pick(pod_sc, ct_sc, "runAsUser"), "runAsUser", uid, err)) < 0 ||
        (has_gid = id_value(pick(pod_sc, ct_sc, "runAsGroup"), "runAsGroup", gid, err)) < 0)
        return -1;
    if (!has_gid)
        *gid = *uid;
    return 0;
}

static int cap_of(const char *name)
{
    if (!strncasecmp(name, "CAP_", 4))
        name += 4;
    for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
        if (!strcasecmp(name, cap_names[i].name))
            return cap_names[i].cap;
    return -1;
}

/* What uid 0 keeps: every capability when privileged, else what
 * capabilities.add names ("ALL" = every one). Other uids keep none. */
static uint64_t kept_caps(const json_t *ct_sc, json_int_t uid)
{
    const json_t *add = json_object_get(json_object_get(ct_sc, "capabilities"), "add"), *v;
    uint64_t caps = 0;
    size_t i;

    if (uid != 0)
        return 0;
    if (json_is_true(json_object_get(ct_sc, "privileged")))
        return ~0ull;
    json_array_foreach(add, i, v) {
        const char *name = json_string_value(v);
        int cap = name ? cap_of(name) : -1;
        if (i >= MAX_CAP_NAMES)
            break;
        if (name && !strcasecmp(name, "ALL"))
            return ~0ull;
        if (cap >= 0)
            caps |= 1ull << cap;
    }
    return caps;
}

static void pod_name(const json_t *pod, char *buf, size_t len)
{
    const json_t *m = json_object_get(pod, "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace"));

    snprintf(buf, len, "%s_%s(%s)", json_string_value(json_object_get(m, "name")) ?: "",
             ns ? ns : "default", json_string_value(json_object_get(m, "uid")) ?: "");
}

json_t *rt_ident_json(const json_t *pod, const json_t *ct, ty_error *err)
{
    const json_t *pod_sc = sc_of(json_object_get(pod, "spec")), *ct_sc = sc_of(ct), *v;
    json_t *groups, *user, *cap_list;
    json_int_t uid, gid, g;
    bool non_root, escalate;
    uint64_t caps;
    size_t i;

    if (resolve(pod_sc, ct_sc, &uid, &gid, err) < 0)
        return NULL;
    v = pick(pod_sc, ct_sc, "runAsNonRoot");
    non_root = json_is_true(v);
    if (non_root && uid == 0) {
        char who[800];
        pod_name(pod, who, sizeof(who));
        ty_seterr(err, TY_EINVALID,
                  "container's runAsUser breaks non-root policy (pod: \"%s\", container: %s)", who,
                  json_string_value(json_object_get(ct, "name")) ?: "");
        return NULL;
    }
    groups = json_array();
    json_array_foreach(json_object_get(pod_sc, "supplementalGroups"), i, v) {
        if (json_array_size(groups) >= RT_MAX_GROUPS - 1)
            break;
        if (id_value(v, "supplementalGroups", &g, err) < 0) {
            json_decref(groups);
            return NULL;
        }
        json_array_append_new(groups, json_integer(g));
    }
    if (id_value(json_object_get(pod_sc, "fsGroup"), "fsGroup", &g, err) < 0) {
        json_decref(groups);
        return NULL;
    }
    if (json_is_integer(json_object_get(pod_sc, "fsGroup")))
        json_array_append_new(groups, json_integer(g));
    /* no_new_privs stays off only for a root that is meant to be one: a
     * privileged container, or uid 0 that asks to escalate. A non-root
     * container never gains privileges through the host's setuid programs
     * (sudo, su, mount): on a cluster those are the image's, here the host's. */
    escalate = uid == 0 && (json_is_true(json_object_get(ct_sc, "privileged")) ||
                            json_is_true(json_object_get(ct_sc, "allowPrivilegeEscalation")));
    caps = kept_caps(ct_sc, uid);
    cap_list = json_array();
    for (int cap = 0; cap < 64; cap++)
        if (caps & (1ull << cap))
            json_array_append_new(cap_list, json_integer(cap));
    user = json_pack("{s:I, s:I, s:o, s:b, s:o}", "uid", uid, "gid", gid, "groups", groups,
                     "noNewPrivs", !escalate, "caps", cap_list);
    if (!user)
        ty_seterr(err, TY_EINTERNAL, "out of memory");
    return user;
}

void rt_ident_pod_owner(const json_t *pod, uid_t *uid, gid_t *gid, bool *fs_group)
{
    const json_t *spec = json_object_get(pod, "spec"), *pod_sc = sc_of(spec);
    const json_t *first = json_array_get(json_object_get(spec, "containers"), 0);
    const json_t *ct_sc = json_object_get(pod_sc, "runAsUser") ? NULL : sc_of(first);
    json_int_t u, g;
    ty_error err;

    ty_error_init(&err);
    if (resolve(pod_sc, ct_sc, &u, &g, &err) < 0)
        u = g = RT_NOBODY;
    ty_error_clear(&err);
    *fs_group = id_value(json_object_get(pod_sc, "fsGroup"), "fsGroup", &g, NULL) > 0;
    *uid = (uid_t)u;
    *gid = (gid_t)g;
}

/* ---- supervisor side ---- */

static bool id_in_range(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0 &&
           json_integer_value(v) <= RT_MAX_ID;
}

void rt_ident_from_json(const json_t *user, rt_ident *id)
{
    const json_t *v;
    size_t i;

    memset(id, 0, sizeof(*id));
    id->uid = RT_NOBODY;
    id->gid = RT_NOBODY;
    id->no_new_privs = true;
    if (!id_in_range(json_object_get(user, "uid")) || !id_in_range(json_object_get(user, "gid")))
        return;
    id->uid = (uid_t)json_integer_value(json_object_get(user, "uid"));
    id->gid = (gid_t)json_integer_value(json_object_get(user, "gid"));
    json_array_foreach(json_object_get(user, "groups"), i, v)
        if (id_in_range(v) && id->ngroups < RT_MAX_GROUPS)
            id->groups[id->ngroups++] = (gid_t)json_integer_value(v);
    id->no_new_privs = !json_is_false(json_object_get(user, "noNewPrivs"));
    json_array_foreach(json_object_get(user, "caps"), i, v)
        if (id->uid == 0 && json_is_integer(v) && json_integer_value(v) >= 0 &&
            json_integer_value(v) < 64)
            id->caps |= 1ull << json_integer_value(v);
}

/* capset(2) without libcap: the supervisor links only libc and jansson.
 * What is kept is at most what we hold (the server may run with fewer than
 * all, and "every capability" names bits past the kernel's last). */
static int set_caps(uint64_t caps)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    uint64_t held;

    memset(d, 0, sizeof(d));
    if (syscall(SYS_capget, &h, d) < 0)
        return -1;
    held = d[0].permitted | (uint64_t)d[1].permitted << 32;
    caps &= held;
    memset(d, 0, sizeof(d));
    d[0].effective = d[0].permitted = (uint32_t)caps;
    d[1].effective = d[1].permitted = (uint32_t)(caps >> 32);
    return (int)syscall(SYS_capset, &h, d);
}

static const char *const steps[] = {"no_new_privs", "capability bounding set",
                                    "ambient capabilities", "setgroups", "setresgid",
                                    "setresuid", "capset"};

const char *rt_ident_step_name(int step)
{
    return step >= 0 && step < (int)(sizeof(steps) / sizeof(steps[0])) ? steps[step] : "?";
}

int rt_ident_apply(const rt_ident *id, int *step)
{
    *step = 0;
    if (geteuid() != 0)
        return id->no_new_privs ? prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) : 0;
    /* The bounding set first, while we still hold CAP_SETPCAP: it is what
     * uid 0 gets back at exec, and what a setuid program could reach. */
    *step = 1;
    for (int cap = 0; cap < 64; cap++) {
        if (id->caps & (1ull << cap))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break; /* past the kernel's last capability */
            return -1;
        }
    }
    *step = 2;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -1;
    *step = 3;
    if (setgroups(id->ngroups, id->groups) < 0)
        return -1;
    *step = 4;
    if (setresgid(id->gid, id->gid, id->gid) < 0)
        return -1;
    *step = 5;
    if (setresuid(id->uid, id->uid, id->uid) < 0)
        return -1;
    /* A uid other than 0 lost its capabilities with setresuid; uid 0 keeps
     * only what it was given (exec gives root its bounding set again, which
     * is why that was cut first). */
    *step = 6;
    if (set_caps(id->uid == 0 ? id->caps : 0) < 0)
        return -1;
    *step = 0;
    if (id->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return 0;
}
