/* podspec.c - turns a Pod into what its supervisor runs (spec.json).
 *
 * Everything that needs the store is resolved here, in the agent, so that the
 * supervisor never talks to the server: environment values from fieldRef,
 * ConfigMaps and Secrets, and the files of ConfigMap / Secret volumes, which
 * are written under the pod directory and bind-mounted by the supervisor. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "model/podres.h"
#include "model/quantity.h"
#include "runtime/local/rt_ident.h"
#include "runtime/local/rt_internal.h"

#define MAX_ENV_VALUE (1u << 20)
/* Volume directories the runtime makes are the pod's and closed to other
 * uids; a Secret's files lose their "other" bits (0644 -> 0640; the mount
 * is read-only, as the kubelet's). */
#define VOL_DIR_MODE 0750
#define EMPTYDIR_MODE 0770
#define SECRET_FILE_MASK 0770
#define HOME_MODE 0750

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- base64 (Secret data) ---- */

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decodes into a new buffer (caller frees); *len gets the size. */
static char *b64_decode(const char *in, size_t *len)
{
    size_t n = strlen(in), o = 0;
    char *out = malloc(n / 4 * 3 + 4);
    unsigned acc = 0;
    int bits = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value(in[i]);
        if (v < 0)
            continue; /* padding and line breaks */
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *len = o;
    return out;
}

/* ---- lookups ---- */

typedef struct spec_ctx {
    ty_kc *s;
    const json_t *pod;
    const rt_prep *p;
    const char *ns;
    ty_error *err;
    uid_t owner;      /* who the pod's volumes belong to (rt_ident_pod_owner) */
    gid_t group;
    bool fs_group;    /* group is the pod's fsGroup: emptyDirs are setgid */
    bool chown;       /* we are root: volumes are given to the owner */
} spec_ctx;

/* The data map of a ConfigMap or Secret; *missing tells absence apart. */
static json_t *source_data(spec_ctx *c, const char *res, const char *name, bool *missing)
{
    ty_obj *o = name ? kc_get(c->s, res, c->ns, name, NULL) : NULL;
    json_t *data = json_object(), *src;
    const char *k;
    json_t *v;

    *missing = !o;
    if (!o)
        return data;
    src = json_object_get(ty_obj_json(o), "data");
    json_object_foreach(src, k, v) {
        const char *sv = json_string_value(v);
        if (!sv)
            continue;
        if (!strcmp(res, "secrets")) {
            size_t n;
            char *dec = b64_decode(sv, &n);
            if (dec)
                json_object_set_new(data, k, json_stringn_nocheck(dec, n));
            free(dec);
        } else {
            json_object_set_new(data, k, json_string_nocheck(sv));
        }
    }
    /* binaryData of a ConfigMap is base64 like a Secret's data. */
    json_object_foreach(json_object_get(ty_obj_json(o), "binaryData"), k, v) {
        size_t n;
        char *dec = json_string_value(v) ? b64_decode(json_string_value(v), &n) : NULL;
        if (dec)
            json_object_set_new(data, k, json_stringn_nocheck(dec, n));
        free(dec);
    }
    ty_obj_unref(o);
    return data;
}

/* One value from a ConfigMap / Secret key reference. 1 = set *out (caller
 * frees), 0 = optional and absent, -1 = cannot start (err). */
static int key_ref(spec_ctx *c, const json_t *ref, const char *res, const char *kind,
                   char **out)
{
    const char *name = str(ref, "name"), *key = str(ref, "key");
    bool optional = json_is_true(json_object_get(ref, "optional")), missing;
    json_t *data = source_data(c, res, name, &missing);
    json_t *v = key ? json_object_get(data, key) : NULL;
    int rc = 0;

    if (v) {
        *out = strndup(json_string_value(v), json_string_length(v));
        rc = *out ? 1 : -1;
    } else if (!optional) {
        if (missing)
            ty_seterr(c->err, TY_ENOTFOUND, "%s \"%s\" not found", kind, name ? name : "");
        else
            ty_seterr(c->err, TY_ENOTFOUND, "couldn't find key %s in %s %s/%s",
                      key ? key : "", kind, c->ns, name);
        rc = -1;
    }
    json_decref(data);
    return rc;
}

/* metadata.labels['x'] / metadata.annotations['x'] */
static const char *bracket_field(const json_t *meta, const char *path, const char *map)
{
    size_t n = strlen(map);
    char key[320];
    const char *p = path + n, *end;

    if (strncmp(path, map, n) || strncmp(p, "['", 2))
        return NULL;
    p += 2;
    end = strstr(p, "']");
    if (!end || (size_t)(end - p) >= sizeof(key))
        return NULL;
    memcpy(key, p, (size_t)(end - p));
    key[end - p] = '\0';
    return str(json_object_get(meta, map + strlen("metadata.")), key);
}

static const char *field_ref(spec_ctx *c, const char *path)
{
    const json_t *meta = json_object_get(c->pod, "metadata");
    const json_t *spec = json_object_get(c->pod, "spec");
    const char *v;

    if (!path)
        return NULL;
    if (!strcmp(path, "metadata.name"))
        return str(meta, "name");
    if (!strcmp(path, "metadata.namespace"))
        return c->ns;
    if (!strcmp(path, "metadata.uid"))
        return str(meta, "uid");
    if (!strcmp(path, "spec.nodeName"))
        return c->p->node_name;
    if (!strcmp(path, "spec.serviceAccountName"))
        return str(spec, "serviceAccountName");
    if (!strcmp(path, "status.podIP") || !strcmp(path, "status.podIPs"))
        return c->p->pod_ip;
    if (!strcmp(path, "status.hostIP") || !strcmp(path, "status.hostIPs"))
        return c->p->host_ip;
    if ((v = bracket_field(meta, path, "metadata.labels")))
        return v;
    return bracket_field(meta, path, "metadata.annotations");
}

/* ---- $(VAR) expansion, as the kubelet does it ---- */

/* $(NAME) becomes NAME's value when defined so far, else stays as written;
 * $$ is a literal $. */
static char *expand(const char *in, const json_t *env)
{
    ty_buf b = {0};

    for (const char *p = in; *p;) {
        if (p[0] == '$' && p[1] == '$') {
            ty_buf_append(&b, "$", 1);
            p += 2;
        } else if (p[0] == '$' && p[1] == '(') {
            const char *end = strchr(p + 2, ')');
            char name[256];
            const char *v = NULL;
            if (end && (size_t)(end - p - 2) < sizeof(name)) {
                memcpy(name, p + 2, (size_t)(end - p - 2));
                name[end - p - 2] = '\0';
                v = json_string_value(json_object_get(env, name));
            }
            if (v) {
                ty_buf_puts(&b, v);
                p = end + 1;
            } else {
                ty_buf_append(&b, p, 2);
                p += 2;
            }
        } else {
            ty_buf_append(&b, p, 1);
            p++;
        }
        if (b.len > MAX_ENV_VALUE)
            break;
    }
    return ty_buf_steal(&b, NULL);
}

/* ---- environment ---- */

static int env_from(spec_ctx *c, const json_t *ct, json_t *env)
{
    size_t i;
    json_t *src;

    json_array_foreach(json_object_get(ct, "envFrom"), i, src) {
        const json_t *cm = json_object_get(src, "configMapRef");
        const json_t *sec = json_object_get(src, "secretRef");
        const json_t *ref = cm ? cm : sec;
        const char *prefix = str(src, "prefix"), *k;
        bool missing;
        json_t *data, *v;

        if (!ref)
            continue;
        data = source_data(c, cm ? "configmaps" : "secrets", str(ref, "name"), &missing);
        if (missing && !json_is_true(json_object_get(ref, "optional"))) {
            json_decref(data);
            return ty_seterr(c->err, TY_ENOTFOUND, "%s \"%s\" not found",
                             cm ? "configmap" : "secret", str(ref, "name") ? str(ref, "name") : "");
        }
        json_object_foreach(data, k, v) {
            char key[512];
            snprintf(key, sizeof(key), "%s%s", prefix ? prefix : "", k);
            json_object_set(env, key, v);
        }
        json_decref(data);
    }
    return 0;
}

static int env_value(spec_ctx *c, const json_t *e, const json_t *env, char **out)
{
    const json_t *from = json_object_get(e, "valueFrom");
    const json_t *ref;
    const char *v;

    *out = NULL;
    if (!from) {
        *out = expand(str(e, "value") ? str(e, "value") : "", env);
        return *out ? 1 : -1;
    }
    if ((ref = json_object_get(from, "fieldRef"))) {
        v = field_ref(c, str(ref, "fieldPath"));
        *out = strdup(v ? v : "");
        return *out ? 1 : -1;
    }
    if ((ref = json_object_get(from, "configMapKeyRef")))
        return key_ref(c, ref, "configmaps", "configmap", out);
    if ((ref = json_object_get(from, "secretKeyRef")))
        return key_ref(c, ref, "secrets", "secret", out);
    return 0; /* resourceFieldRef and others: not provided (documented) */
}

/* The container's environment as a name -> value object, in order. */
static json_t *container_env(spec_ctx *c, const json_t *ct)
{
    json_t *env = json_object(), *e;
    size_t i;

    if (env_from(c, ct, env) < 0)
        goto error;
    json_array_foreach(json_object_get(ct, "env"), i, e) {
        const char *name = str(e, "name");
        char *v;
        int rc;
        if (!name || !*name)
            continue;
        rc = env_value(c, e, env, &v);
        if (rc < 0)
            goto error;
        if (rc > 0)
            json_object_set_new(env, name, json_string_nocheck(v));
        free(v);
    }
    return env;
error:
    json_decref(env);
    return NULL;
}

/* command replaces the entrypoint and args follow it; with args only, they
 * are the whole command line here: there are no images, so no ENTRYPOINT
 * comes before them. That is what a cluster does with an image that has no
 * ENTRYPOINT (busybox, python, ubuntu: args [sh, -c, ...] run sh), and
 * manifests written that way run unchanged; refusing them would refuse what
 * the API server accepts. Where the image's ENTRYPOINT mattered (args
 * [--epochs, 1]), the pod gets a Warning event (rt_args_only_events) and a
 * failed start says why (spec.json's argsOnly). */
static json_t *container_argv(const json_t *ct, const json_t *env)
{
    json_t *argv = json_array(), *a;
    const char *lists[] = {"command", "args"};
    size_t i;

    for (int l = 0; l < 2; l++) {
        json_array_foreach(json_object_get(ct, lists[l]), i, a) {
            char *x = json_string_value(a) ? expand(json_string_value(a), env) : NULL;
            if (x)
                json_array_append_new(argv, json_string_nocheck(x));
            free(x);
        }
    }
    return argv;
}

bool rt_args_only(const json_t *ct)
{
    return json_array_size(json_object_get(ct, "command")) == 0 &&
           json_array_size(json_object_get(ct, "args")) > 0;
}

static json_t *env_list(const json_t *env)
{
    json_t *list = json_array(), *v;
    const char *k;

    json_object_foreach((json_t *)env, k, v) {
        ty_buf b = {0};
        char *kv;
        ty_buf_printf(&b, "%s=%s", k, json_string_value(v));
        kv = ty_buf_steal(&b, NULL);
        json_array_append_new(list, json_string_nocheck(kv));
        free(kv);
    }
    return list;
}

static json_t *containers(spec_ctx *c, const char *which)
{
    json_t *out = json_array(), *ct;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(c->pod, "spec"), which), i, ct) {
        json_t *env = container_env(c, ct), *user;
        if (!env || !(user = rt_ident_json(c->pod, ct, c->err))) {
            json_decref(env);
            json_decref(out);
            return NULL;
        }
        json_t *one = json_pack("{s:s, s:o, s:o, s:s}", "name",
                                str(ct, "name") ? str(ct, "name") : "", "argv",
                                container_argv(ct, env), "env", env_list(env), "workingDir",
                                str(ct, "workingDir") ? str(ct, "workingDir") : "");
        json_object_set_new(one, "user", user);
        if (rt_args_only(ct))
            json_object_set_new(one, "argsOnly", json_true());
        json_array_append_new(out, one);
        json_decref(env);
    }
    return out;
}

/* ---- volumes ---- */

static bool safe_rel_path(const char *p)
{
    if (!p || !*p || *p == '/' || strlen(p) > 1024)
        return false;
    for (const char *s = p; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
        if (!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
            return false;
    return true;
}

static int write_item(spec_ctx *c, const char *dir, const char *rel, const json_t *val,
                      int mode)
{
    char path[PATH_MAX], parent[PATH_MAX];
    char *slash;

    if (!safe_rel_path(rel))
        return ty_seterr(c->err, TY_EINVALID, "invalid volume item path %s", rel ? rel : "");
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    snprintf(parent, sizeof(parent), "%s", path);
    if ((slash = strrchr(parent, '/')))
        *slash = '\0';
    if (rt_mkdirs(parent) < 0 ||
        rt_write_atomic(path, json_string_value(val), json_string_length(val),
                        (mode_t)(mode & 0777)) < 0)
        return ty_seterr(c->err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* ConfigMap and Secret volumes: one file per key, or the listed items. */
static int data_volume(spec_ctx *c, const json_t *src, const char *res, const char *name,
                       const char *dir)
{
    bool missing;
    json_t *data = source_data(c, res, name, &missing), *item, *v;
    const json_t *jmode = json_object_get(src, "defaultMode");
    int mode = json_is_integer(jmode) ? (int)json_integer_value(jmode) : 0644;
    int mask = strcmp(res, "secrets") ? 0777 : SECRET_FILE_MASK;
    const json_t *items = json_object_get(src, "items");
    const char *k;
    size_t i;
    int rc = 0;

    if (missing && !json_is_true(json_object_get(src, "optional"))) {
        json_decref(data);
        return ty_seterr(c->err, TY_ENOTFOUND, "MountVolume.SetUp failed: %s \"%s\" not found",
                         strcmp(res, "secrets") ? "configmap" : "secret", name ? name : "");
    }
    if (json_array_size(items)) {
        json_array_foreach(items, i, item) {
            const json_t *m = json_object_get(item, "mode");
            if (!(v = json_object_get(data, str(item, "key") ? str(item, "key") : "")))
                continue;
            rc = write_item(c, dir, str(item, "path"), v,
                            (json_is_integer(m) ? (int)json_integer_value(m) : mode) & mask);
            if (rc < 0)
                break;
        }
    } else {
        json_object_foreach(data, k, v)
            if ((rc = write_item(c, dir, k, v, mode & mask)) < 0)
                break;
    }
    json_decref(data);
    return rc;
}

/* A persistentVolumeClaim volume: the directory of the volume bound to the
 * claim (caller frees). The claim must exist and be bound, and the volume
 * bound to it: until then the pod waits (the error says for what). */
static char *claim_path(spec_ctx *c, const json_t *src)
{
    const char *claim = str(src, "claimName"), *vol, *path = NULL;
    ty_obj *pvc, *pv = NULL;
    const json_t *cj, *pspec;
    char *out = NULL;

    if (!claim || !(pvc = kc_get(c->s, "persistentvolumeclaims", c->ns, claim, NULL))) {
        ty_seterr(c->err, TY_ENOTFOUND, "persistentvolumeclaim \"%s\" not found",
                  claim ? claim : "");
        return NULL;
    }
    cj = ty_obj_json(pvc);
    vol = str(json_object_get(cj, "spec"), "volumeName");
    if (json_object_get(json_object_get(cj, "metadata"), "deletionTimestamp")) {
        ty_seterr(c->err, TY_ECONFLICT, "persistentvolumeclaim \"%s\" is being deleted", claim);
        goto out;
    }
    if (!vol || !*vol || strcmp(str(json_object_get(cj, "status"), "phase") ?
                                str(json_object_get(cj, "status"), "phase") : "", "Bound") ||
        !(pv = kc_get(c->s, "persistentvolumes", "", vol, NULL))) {
        ty_seterr(c->err, TY_ECONFLICT, "persistentvolumeclaim \"%s\" is not bound", claim);
        goto out;
    }
    pspec = json_object_get(ty_obj_json(pv), "spec");
    if (strcmp(str(json_object_get(pspec, "claimRef"), "uid") ?
               str(json_object_get(pspec, "claimRef"), "uid") : "",
               str(json_object_get(cj, "metadata"), "uid") ?
               str(json_object_get(cj, "metadata"), "uid") : "-")) {
        ty_seterr(c->err, TY_ECONFLICT, "persistentvolume \"%s\" is not bound to claim \"%s\"",
                  vol, claim);
        goto out;
    }
    if (json_object_get(pspec, "hostPath"))
        path = str(json_object_get(pspec, "hostPath"), "path");
    else if (json_object_get(pspec, "local"))
        path = str(json_object_get(pspec, "local"), "path");
    if (!path || path[0] != '/') {
        ty_seterr(c->err, TY_EINVALID,
                  "persistentvolume \"%s\": only hostPath and local volumes can be mounted here",
                  vol);
        goto out;
    }
    if (json_object_get(pspec, "hostPath") &&
        !strcmp(str(json_object_get(pspec, "hostPath"), "type") ?
                str(json_object_get(pspec, "hostPath"), "type") : "", "DirectoryOrCreate"))
        rt_mkdirs(path);
    if (!(out = strdup(path)))
        ty_seterr(c->err, TY_EINTERNAL, "out of memory");
out:
    ty_obj_unref(pv);
    ty_obj_unref(pvc);
    return out;
}

/* The pod's volume is its owner's: a ConfigMap or Secret directory 0750, an
 * emptyDir 0770 (setgid with an fsGroup, so that what any container writes
 * stays the group's), as the kubelet gives volumes to fsGroup. Only the
 * runtime's own directories: hostPath and claims are the host's, left as
 * they are (as the kubelet leaves hostPath). */
static int own_volume(spec_ctx *c, const json_t *vol, const char *dir)
{
    bool data = json_object_get(vol, "configMap") || json_object_get(vol, "secret");
    mode_t mode = data ? VOL_DIR_MODE : EMPTYDIR_MODE | (c->fs_group ? S_ISGID : 0);

    if (!c->chown)
        return 0;
    if (rt_own_tree(dir, c->owner, c->group, mode, data ? 0777 : 07777) < 0)
        return ty_seterr(c->err, TY_EINTERNAL, "cannot give %s to uid %u gid %u: %s", dir,
                         (unsigned)c->owner, (unsigned)c->group, strerror(errno));
    return 0;
}

/* Writes one volume and returns the host path it lives at (caller frees). */
static char *prepare_volume(spec_ctx *c, const json_t *vol)
{
    const char *name = str(vol, "name");
    const json_t *src;
    char dir[PATH_MAX];

    if (!name || strchr(name, '/') || !strcmp(name, "..")) {
        ty_seterr(c->err, TY_EINVALID, "invalid volume name");
        return NULL;
    }
    if ((src = json_object_get(vol, "hostPath"))) {
        const char *type = str(src, "type");
        if (!str(src, "path"))
            return NULL;
        if (type && !strcmp(type, "DirectoryOrCreate"))
            rt_mkdirs(str(src, "path"));
        return strdup(str(src, "path"));
    }
    if ((src = json_object_get(vol, "persistentVolumeClaim")))
        return claim_path(c, src);
    snprintf(dir, sizeof(dir), "%s/volumes/%s", c->p->pod_dir, name);
    if (rt_mkdirs(dir) < 0) {
        ty_seterr(c->err, TY_EINTERNAL, "cannot create %s: %s", dir, strerror(errno));
        return NULL;
    }
    if ((src = json_object_get(vol, "configMap")) &&
        data_volume(c, src, "configmaps", str(src, "name"), dir) < 0)
        return NULL;
    if ((src = json_object_get(vol, "secret")) &&
        data_volume(c, src, "secrets", str(src, "secretName"), dir) < 0)
        return NULL;
    /* emptyDir and kinds not provided here are an empty directory. */
    if (own_volume(c, vol, dir) < 0)
        return NULL;
    return strdup(dir);
}

static json_t *mounts(spec_ctx *c)
{
    const json_t *spec = json_object_get(c->pod, "spec");
    json_t *sources = json_object(), *out = json_array(), *vol, *ct, *m;
    json_t *read_only = json_object();
    const char *lists[] = {"initContainers", "containers"};
    size_t i, j;

    json_array_foreach(json_object_get(spec, "volumes"), i, vol) {
        char *path = prepare_volume(c, vol);
        if (!path)
            goto error;
        json_object_set_new(sources, str(vol, "name"), json_string_nocheck(path));
        free(path);
        /* A claim mounted readOnly is read-only at every mount of it; a
         * ConfigMap or Secret always is (as the kubelet mounts them). */
        if (json_is_true(json_object_get(json_object_get(vol, "persistentVolumeClaim"),
                                         "readOnly")) ||
            json_object_get(vol, "configMap") || json_object_get(vol, "secret"))
            json_object_set_new(read_only, str(vol, "name"), json_true());
    }
    /* One mount namespace per pod: the union of every container's mounts. */
    for (int l = 0; l < 2; l++) {
        json_array_foreach(json_object_get(spec, lists[l]), i, ct) {
            json_array_foreach(json_object_get(ct, "volumeMounts"), j, m) {
                const char *src = json_string_value(
                    json_object_get(sources, str(m, "name") ? str(m, "name") : ""));
                const char *sub = str(m, "subPath");
                json_t *one;
                if (!src || !str(m, "mountPath") || str(m, "mountPath")[0] != '/')
                    continue;
                one = json_pack("{s:s, s:s, s:b}", "source", src, "target", str(m, "mountPath"),
                                "readOnly",
                                json_is_true(json_object_get(m, "readOnly")) ||
                                    json_is_true(json_object_get(
                                        read_only, str(m, "name") ? str(m, "name") : "")));
                /* resolved beneath the volume by the supervisor (sv_mount.c):
                 * a claim's contents are its users', symlinks included */
                if (sub && *sub && safe_rel_path(sub))
                    json_object_set_new(one, "subPath", json_string(sub));
                json_array_append_new(out, one);
            }
        }
    }
    json_decref(sources);
    json_decref(read_only);
    return out;
error:
    json_decref(sources);
    json_decref(read_only);
    json_decref(out);
    return NULL;
}

/* ---- the document ---- */

/* The pod's own /root (the supervisor mounts it there): its owner's, 0750,
 * like an image's home directory; empty at start. */
static int pod_root(spec_ctx *c)
{
    char dir[PATH_MAX];

    snprintf(dir, sizeof(dir), "%s/root", c->p->pod_dir);
    if (mkdir(dir, HOME_MODE) < 0 && errno != EEXIST)
        return ty_seterr(c->err, TY_EINTERNAL, "cannot create %s: %s", dir, strerror(errno));
    if (c->chown && (chown(dir, c->owner, c->group) < 0 || chmod(dir, HOME_MODE) < 0))
        return ty_seterr(c->err, TY_EINTERNAL, "cannot give %s to uid %u: %s", dir,
                         (unsigned)c->owner, strerror(errno));
    return 0;
}

static long grace_seconds(const json_t *pod)
{
    const json_t *g = json_object_get(json_object_get(pod, "spec"),
                                      "terminationGracePeriodSeconds");
    return json_is_integer(g) && json_integer_value(g) >= 0 ? (long)json_integer_value(g) : 30;
}

static void gpu_list(uint64_t mask, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < RT_MAX_GPUS && o + 4 < len; i++)
        if (mask & (1ull << i))
            o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", i);
}

json_t *rt_build_spec(ty_kc *s, const json_t *pod, const rt_prep *p, ty_error *err)
{
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    spec_ctx c = {.s = s, .pod = pod, .p = p, .ns = str(meta, "namespace"), .err = err,
                  .chown = geteuid() == 0};
    const char *hostname = str(spec, "hostname");
    json_t *init, *main, *mnt, *spec_out;
    char logdir[PATH_MAX], hosts[PATH_MAX], gpus[RT_MAX_GPUS * 3 + 1];

    if (!c.ns)
        c.ns = "default";
    rt_ident_pod_owner(pod, &c.owner, &c.group, &c.fs_group);
    if (pod_root(&c) < 0)
        return NULL;
    if (!(init = containers(&c, "initContainers")))
        return NULL;
    if (!(main = containers(&c, "containers"))) {
        json_decref(init);
        return NULL;
    }
    if (!(mnt = mounts(&c))) {
        json_decref(init);
        json_decref(main);
        return NULL;
    }
    snprintf(logdir, sizeof(logdir), "%s/logs/%s/%s", p->data_dir, c.ns, str(meta, "name"));
    snprintf(hosts, sizeof(hosts), "%s/hosts", p->pod_dir);
    gpu_list(p->gpus, gpus, sizeof(gpus));
    spec_out = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:s, s:s,"
                     " s:o, s:o, s:o}",
                     "namespace", c.ns, "name", str(meta, "name"), "uid", str(meta, "uid"),
                     "podIP", p->pod_ip, "hostIP", p->host_ip, "hostname",
                     hostname && *hostname ? hostname : str(meta, "name"), "logDir", logdir,
                     "hostsFile", hosts, "restartPolicy",
                     str(spec, "restartPolicy") ? str(spec, "restartPolicy") : "Always",
                     "nodeName", p->node_name, "gracePeriodSeconds",
                     (json_int_t)grace_seconds(pod), "backoffMs", p->backoff_ms, "gpus", gpus,
                     "shim", p->shim ? p->shim : "", "mounts", mnt, "initContainers", init,
                     "containers", main);
    if (spec_out && p->log_max_bytes > 0)
        json_object_set_new(spec_out, "logMaxBytes", json_integer(p->log_max_bytes));
    return spec_out;
}

/* The pod's GPUs by the scheduler's rule (model/podres.h): what it was
 * placed for is what it gets. */
int rt_pod_gpu_request(const json_t *pod)
{
    podres r;
    int64_t n;

    podres_of_spec(json_object_get(pod, "spec"), &r);
    n = quantity_value(podres_get(&r, "nvidia.com/gpu"));
    return n < 0 ? 0 : n > RT_MAX_GPUS ? RT_MAX_GPUS : (int)n;
}
