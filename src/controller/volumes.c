/* volumes.c - the volume controller (see volumes.h). */
#include "controller/volumes.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "controller/workqueue.h"
#include "model/finalizers.h"
#include "model/quantity.h"

#define PVCS "persistentvolumeclaims"
#define PVS "persistentvolumes"
#define SCS "storageclasses.storage.k8s.io"
#define COMPONENT "persistentvolume-controller"
#define PROTECTION "kubernetes.io/pvc-protection"
#define ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"
#define ANN_DEFAULT_CLASS "storageclass.kubernetes.io/is-default-class"

struct ty_volumes {
    ty_kc *s;
    char dir[PATH_MAX - 64]; /* <data>/volumes */
    ty_workqueue *q;
};

static const char *str2(const json_t *o, const char *k1, const char *k2)
{
    return ty_jstr(json_object_get(o, k1), k2);
}

static int64_t storage_of(const json_t *quantities)
{
    int64_t milli = 0;
    ty_error e;

    ty_error_init(&e);
    if (quantity_parse(ty_jstr(quantities, "storage"), &milli, &e) < 0)
        milli = 0;
    ty_error_clear(&e);
    return milli;
}

/* ---- events in, keys out ---- */

static void add_key(ty_workqueue *q, const char *kind, const char *ns, const char *name)
{
    char key[600];

    if (!q)
        return; /* a pass run alone (volumes_reconcile) */
    snprintf(key, sizeof(key), "%s/%s/%s", kind, ns, name);
    wq_add(q, key);
}

/* The claims a pod's volumes name. */
static void pod_claims(ty_workqueue *q, const json_t *pod)
{
    const char *ns = str2(pod, "metadata", "namespace");
    const json_t *vol;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol) {
        const char *claim = str2(vol, "persistentVolumeClaim", "claimName");
        if (*claim)
            add_key(q, "c", ns, claim);
    }
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    const json_t *obj;
    (void)ctx;

    if (!strcmp(ev->resource, SCS)) {
        wq_add(q, "*"); /* a class came or changed: pending claims look again */
        return;
    }
    obj = ty_obj_json(ev->obj);
    if (!strcmp(ev->resource, PVCS)) {
        add_key(q, "c", str2(obj, "metadata", "namespace"), str2(obj, "metadata", "name"));
    } else if (!strcmp(ev->resource, PVS)) {
        add_key(q, "v", "", str2(obj, "metadata", "name"));
        if (strcmp(str2(obj, "status", "phase"), "Bound"))
            wq_add(q, "*");
    } else if (!strcmp(ev->resource, "pods") &&
               json_array_size(json_object_get(json_object_get(obj, "spec"), "volumes"))) {
        pod_claims(q, obj);
    }
}

static void list_keys(ty_workqueue *q, ty_kc *s, const char *res, const char *kind,
                      bool pending_only)
{
    kc_list l = {0};
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, res, &(kc_list_opts){0}, &l, &err) == 0)
        for (size_t i = 0; i < l.n; i++) {
            const json_t *o = ty_obj_json(l.items[i]);
            if (pending_only && !strcmp(str2(o, "status", "phase"), "Bound"))
                continue;
            add_key(q, kind, str2(o, "metadata", "namespace"), str2(o, "metadata", "name"));
        }
    kc_list_free(&l);
    ty_error_clear(&err);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    (void)ctx;
    list_keys(q, s, PVCS, "c", false);
    list_keys(q, s, PVS, "v", false);
}

/* ---- small writes ---- */

static int set_phase(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_t *st = json_object_get(obj, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    } else {
        st = json_deep_copy(st);
        json_object_set_new(obj, "status", st);
    }
    json_object_set_new(st, "phase", json_string(arg));
    if (strcmp(arg, "Failed"))
        json_object_del(st, "message");
    return 0;
}

typedef struct {
    const char *name;
    bool add;
} fin_arg;

static int edit_finalizer(json_t *obj, void *arg, ty_error *err)
{
    const fin_arg *a = arg;

    if (finalizer_set(obj, a->name, a->add) < 0)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

/* ---- what uses a claim ---- */

typedef struct {
    const char *claim;
    bool scheduled; /* only pods bound to a node count */
} uses_arg;

static bool pod_uses(const json_t *pod, void *arg)
{
    const uses_arg *u = arg;
    const char *phase = str2(pod, "status", "phase");
    const json_t *vol;
    size_t i;

    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return false;
    /* A pod not bound yet never starts with a claim being deleted. */
    if (u->scheduled && !*str2(pod, "spec", "nodeName"))
        return false;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol)
        if (!strcmp(str2(vol, "persistentVolumeClaim", "claimName"), u->claim))
            return true;
    return false;
}

/* Whether a pod of ns that has not finished names the claim (scheduled:
 * one bound to a node, as the protection counts); true when it cannot be
 * told. */
static bool claim_in_use(ty_kc *s, const char *ns, const char *claim, bool scheduled)
{
    uses_arg u = {claim, scheduled};
    kc_list l = {0};
    ty_error err;
    bool used;

    ty_error_init(&err);
    if (kc_list_objects(s, "pods", &(kc_list_opts){.ns = ns, .filter = pod_uses,
                                                          .filter_arg = &u, .limit = 1},
                           &l, &err) < 0)
        used = true;
    else
        used = l.n > 0;
    kc_list_free(&l);
    ty_error_clear(&err);
    return used;
}

/* ---- binding ---- */

static bool modes_cover(const json_t *have, const json_t *want)
{
    const json_t *w, *h;
    size_t i, j;

    json_array_foreach(want, i, w) {
        bool found = false;
        json_array_foreach(have, j, h)
            if (json_equal((json_t *)h, (json_t *)w))
                found = true;
        if (!found)
            return false;
    }
    return true;
}

static bool labels_match(const json_t *selector, const json_t *labels)
{
    const char *k;
    json_t *v;

    json_object_foreach(json_object_get(selector, "matchLabels"), k, v)
        if (!json_equal(json_object_get(labels, k), v))
            return false;
    /* matchExpressions: a claim that asks for them binds only by name. */
    return json_array_size(json_object_get(selector, "matchExpressions")) == 0;
}

/* pv can take claim: free or kept for it, of its class, large and capable
 * enough. */
static bool pv_fits(const json_t *pv, const json_t *claim, const char *cls)
{
    const json_t *ps = json_object_get(pv, "spec"), *cs = json_object_get(claim, "spec");
    const json_t *ref = json_object_get(ps, "claimRef");
    const char *phase = str2(pv, "status", "phase");

    if (json_object_get(json_object_get(pv, "metadata"), "deletionTimestamp"))
        return false;
    if (ref && (strcmp(ty_jstr(ref, "namespace"), str2(claim, "metadata", "namespace")) ||
                strcmp(ty_jstr(ref, "name"), str2(claim, "metadata", "name")) ||
                (*ty_jstr(ref, "uid") && strcmp(ty_jstr(ref, "uid"), str2(claim, "metadata", "uid")))))
        return false;
    if (!ref && strcmp(phase, "Available") && strcmp(phase, "Pending") && *phase)
        return false;
    if (strcmp(ty_jstr(ps, "storageClassName"), cls))
        return false;
    if (storage_of(json_object_get(ps, "capacity")) <
        storage_of(json_object_get(json_object_get(cs, "resources"), "requests")))
        return false;
    if (!modes_cover(json_object_get(ps, "accessModes"), json_object_get(cs, "accessModes")))
        return false;
    if (json_object_get(cs, "selector") &&
        !labels_match(json_object_get(cs, "selector"),
                      json_object_get(json_object_get(pv, "metadata"), "labels")))
        return false;
    return true;
}

/* The smallest volume that fits claim, or NULL. Caller unrefs. */
static ty_obj *find_volume(ty_kc *s, const json_t *claim, const char *cls)
{
    kc_list l = {0};
    ty_obj *best = NULL;
    int64_t best_size = 0;
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, PVS, &(kc_list_opts){0}, &l, &err) == 0)
        for (size_t i = 0; i < l.n; i++) {
            const json_t *pv = ty_obj_json(l.items[i]);
            int64_t size = storage_of(json_object_get(json_object_get(pv, "spec"), "capacity"));
            if (!pv_fits(pv, claim, cls) || (best && size >= best_size))
                continue;
            ty_obj_unref(best);
            best = ty_obj_ref(l.items[i]);
            best_size = size;
        }
    kc_list_free(&l);
    ty_error_clear(&err);
    return best;
}

typedef struct {
    const json_t *claim;
} ref_arg;

static int pv_claim(json_t *pv, void *arg, ty_error *err)
{
    const json_t *claim = ((ref_arg *)arg)->claim, *meta = json_object_get(claim, "metadata");
    json_t *spec = json_object_get(pv, "spec");
    (void)err;

    if (!json_object_get(spec, "claimRef")) {
        json_t *pm = json_object_get(pv, "metadata"), *ann = json_object_get(pm, "annotations");
        ann = json_is_object(ann) ? json_deep_copy(ann) : json_object();
        json_object_set_new(ann, "pv.kubernetes.io/bound-by-controller", json_string("yes"));
        json_object_set_new(pm, "annotations", ann);
    }
    json_object_set_new(spec, "claimRef",
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind",
                                  "PersistentVolumeClaim", "apiVersion", "v1", "namespace",
                                  ty_jstr(meta, "namespace"), "name", ty_jstr(meta, "name"), "uid",
                                  ty_jstr(meta, "uid"), "resourceVersion",
                                  ty_jstr(meta, "resourceVersion")));
    return 0;
}

typedef struct {
    const json_t *pv;
    bool chosen; /* by the controller, not named by the claim */
} bind_arg;

static int claim_bind(json_t *claim, void *arg, ty_error *err)
{
    const bind_arg *b = arg;
    json_t *meta = json_object_get(claim, "metadata"), *ann = json_object_get(meta, "annotations");
    (void)err;

    ann = json_is_object(ann) ? json_deep_copy(ann) : json_object();
    json_object_set_new(ann, "pv.kubernetes.io/bind-completed", json_string("yes"));
    if (b->chosen)
        json_object_set_new(ann, "pv.kubernetes.io/bound-by-controller", json_string("yes"));
    json_object_set_new(meta, "annotations", ann);
    json_object_set_new(json_object_get(claim, "spec"), "volumeName",
                        json_string(str2(b->pv, "metadata", "name")));
    return 0;
}

/* The bound claim's status (a status write of its own: a plain write's
 * status is ignored by an API server). */
static int claim_status(json_t *claim, void *arg, ty_error *err)
{
    const bind_arg *b = arg;
    const json_t *ps = json_object_get(b->pv, "spec");
    json_t *st;
    (void)err;

    st = json_object();
    json_object_set_new(st, "phase", json_string("Bound"));
    json_object_set(st, "accessModes", json_object_get(ps, "accessModes"));
    json_object_set(st, "capacity", json_object_get(ps, "capacity"));
    json_object_set_new(claim, "status", st);
    return 0;
}

/* pv (bound to nothing else) and claim bound to each other: the volume
 * first, so that a claim never names a volume that does not name it; each
 * one's spec, then its status (Bound) in a status write, as the
 * PersistentVolume controller does. A pass cut short between them binds
 * again (every step is idempotent). */
static int bind(ty_volumes *v, const json_t *claim, ty_obj *pvo, bool chosen)
{
    const char *ns = str2(claim, "metadata", "namespace"), *name = str2(claim, "metadata", "name");
    const char *pvname = str2(ty_obj_json(pvo), "metadata", "name");
    ref_arg ra = {claim};
    ty_obj *pv, *c;
    ty_error err;

    ty_error_init(&err);
    pv = kc_mutate(v->s, PVS, "", pvname, pv_claim, &ra, 0, &err);
    if (pv) {
        ty_obj_unref(pv);
        pv = kc_mutate(v->s, PVS, "", pvname, set_phase, "Bound", KC_STATUS, &err);
    }
    if (!pv) {
        ty_debug("volumes: cannot bind %s to %s/%s: %s", pvname, ns, name, err.text);
        ty_error_clear(&err);
        return -1;
    }
    bind_arg ba = {ty_obj_json(pv), chosen};
    c = kc_mutate(v->s, PVCS, ns, name, claim_bind, &ba, 0, &err);
    if (c) {
        ty_obj_unref(c);
        c = kc_mutate(v->s, PVCS, ns, name, claim_status, &ba, KC_STATUS, &err);
    }
    ty_obj_unref(pv);
    if (!c) {
        ty_error_clear(&err);
        return -1;
    }
    ty_obj_unref(c);
    return 0;
}

/* ---- provisioning ---- */

static ty_obj *default_class(ty_kc *s)
{
    kc_list l = {0};
    ty_obj *best = NULL;
    const char *best_ts = "";
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, SCS, &(kc_list_opts){0}, &l, &err) == 0)
        for (size_t i = 0; i < l.n; i++) {
            const json_t *sc = ty_obj_json(l.items[i]);
            const char *ts = str2(sc, "metadata", "creationTimestamp");
            if (strcmp(ty_jstr(json_object_get(json_object_get(sc, "metadata"), "annotations"),
                           ANN_DEFAULT_CLASS),
                       "true"))
                continue;
            /* Several defaults: the newest, as kube-apiserver picks. */
            if (!best || strcmp(ts, best_ts) > 0) {
                ty_obj_unref(best);
                best = ty_obj_ref(l.items[i]);
                best_ts = str2(ty_obj_json(best), "metadata", "creationTimestamp");
            }
        }
    kc_list_free(&l);
    ty_error_clear(&err);
    return best;
}

static int set_class(json_t *claim, void *arg, ty_error *err)
{
    (void)err;
    if (!json_object_get(json_object_get(claim, "spec"), "storageClassName"))
        json_object_set_new(json_object_get(claim, "spec"), "storageClassName",
                            json_string(arg));
    return 0;
}

/* <data>/volumes/.claims/<pv>: the uid of the claim a volume's directory was
 * made for, out of the pods' reach (no PV name starts with '.'). A directory
 * is deleted only where its marker names the claim its PV is bound to: a PV
 * made by hand to look like one of ours (its annotation, its path) deletes
 * nothing. */
static int marker_path(const ty_volumes *v, const char *name, char *buf, size_t len)
{
    return snprintf(buf, len, "%s/.claims/%s", v->dir, name) < (int)len ? 0 : -1;
}

static int write_marker(ty_volumes *v, const char *name, const char *uid)
{
    char path[PATH_MAX + 400], dir[PATH_MAX];
    FILE *f;
    int rc;

    snprintf(dir, sizeof(dir), "%s/.claims", v->dir);
    if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || marker_path(v, name, path, sizeof(path)) < 0)
        return -1;
    if (!(f = fopen(path, "we")))
        return -1;
    rc = fputs(uid, f) < 0 ? -1 : 0;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

static bool marker_says(ty_volumes *v, const char *name, const char *uid)
{
    char path[PATH_MAX + 400], got[128] = "";
    FILE *f;

    if (!*uid || marker_path(v, name, path, sizeof(path)) < 0 || !(f = fopen(path, "re")))
        return false;
    if (!fgets(got, sizeof(got), f))
        got[0] = '\0';
    fclose(f);
    return !strcmp(got, uid);
}

static void forget_marker(ty_volumes *v, const char *name)
{
    char path[PATH_MAX + 400];

    if (marker_path(v, name, path, sizeof(path)) == 0)
        unlink(path);
}

/* A volume for claim from class sc: a directory of its own, already bound to
 * the claim. Caller unrefs. */
static ty_obj *provision(ty_volumes *v, const json_t *claim, const json_t *sc)
{
    const json_t *cm = json_object_get(claim, "metadata"), *cs = json_object_get(claim, "spec");
    char name[300], path[PATH_MAX + 320];
    const char *policy = ty_jstr(sc, "reclaimPolicy");
    json_t *pv;
    ty_obj *o;
    ty_error err;

    snprintf(name, sizeof(name), "pvc-%s", ty_jstr(cm, "uid"));
    if ((o = kc_get(v->s, PVS, "", name, NULL))) {
        /* Made by an earlier pass; one of that name made by somebody else
         * (any path) is not taken for the claim. */
        const json_t *pv = ty_obj_json(o);
        if (!strcmp(ty_jstr(json_object_get(json_object_get(pv, "metadata"), "annotations"),
                        ANN_PROVISIONED_BY),
                    VOLUMES_PROVISIONER) &&
            *str2(json_object_get(pv, "spec"), "hostPath", "path") &&
            !strcmp(ty_jstr(json_object_get(json_object_get(pv, "spec"), "claimRef"), "uid"),
                    ty_jstr(cm, "uid")))
            return o;
        ty_obj_unref(o);
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "failed to provision volume: persistentvolume \"%s\" exists and is not this "
                 "claim's", name);
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/%s", v->dir, name);
    if (mkdir(v->dir, 0755) < 0 && errno != EEXIST) {
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "failed to provision volume with StorageClass \"%s\": cannot create %s: %s",
                 str2(sc, "metadata", "name"), v->dir, strerror(errno));
        return NULL;
    }
    /* 0777: the pods that use it may run as any user. */
    if ((mkdir(path, 0777) < 0 && errno != EEXIST) || chmod(path, 0777) < 0) {
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "failed to provision volume with StorageClass \"%s\": cannot create %s: %s",
                 str2(sc, "metadata", "name"), path, strerror(errno));
        return NULL;
    }
    if (write_marker(v, name, ty_jstr(cm, "uid")) < 0) {
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "failed to provision volume with StorageClass \"%s\": cannot record %s: %s",
                 str2(sc, "metadata", "name"), name, strerror(errno));
        rmdir(path);
        return NULL;
    }
    ty_event(v->s, claim, "Normal", "Provisioning", COMPONENT,
             "External provisioner is provisioning volume for claim \"%s/%s\"",
             ty_jstr(cm, "namespace"), ty_jstr(cm, "name"));
    /* Made bound to its claim (claimRef): no other claim can take it, even
     * if the claim's own binding never comes (a crash in between). */
    pv = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:O}, s:O, s:s, s:s, s:s, s:{s:s, s:s}, "
                   "s:{s:s, s:s, s:s, s:s, s:s}}}",
                   "apiVersion", "v1", "kind", "PersistentVolume", "metadata", "name", name,
                   "annotations", ANN_PROVISIONED_BY, VOLUMES_PROVISIONER, "spec", "capacity",
                   "storage",
                   json_object_get(json_object_get(json_object_get(cs, "resources"), "requests"),
                                   "storage"),
                   "accessModes", json_object_get(cs, "accessModes"),
                   "persistentVolumeReclaimPolicy", *policy ? policy : "Delete",
                   "storageClassName", str2(sc, "metadata", "name"), "volumeMode", "Filesystem",
                   "hostPath", "path", path, "type", "DirectoryOrCreate", "claimRef", "kind",
                   "PersistentVolumeClaim", "apiVersion", "v1", "namespace", ty_jstr(cm, "namespace"),
                   "name", ty_jstr(cm, "name"), "uid", ty_jstr(cm, "uid"));
    if (!pv) {
        forget_marker(v, name);
        rmdir(path);
        return NULL;
    }
    json_object_set_new(pv, "status", json_pack("{s:s}", "phase", "Pending"));
    ty_error_init(&err);
    o = kc_create(v->s, PVS, "", pv, &err);
    if (o)
        ty_event(v->s, claim, "Normal", "ProvisioningSucceeded", COMPONENT,
                 "Successfully provisioned volume %s", name);
    else if (err.code == TY_EEXISTS)
        o = kc_get(v->s, PVS, "", name, NULL);
    else {
        forget_marker(v, name);
        rmdir(path); /* empty: nothing used it yet */
    }
    ty_error_clear(&err);
    return o;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Deletes a volume this controller made, with its directory. */
static int delete_volume(ty_volumes *v, const json_t *pv)
{
    const char *name = str2(pv, "metadata", "name");
    const char *path = str2(json_object_get(pv, "spec"), "hostPath", "path");
    char want[PATH_MAX + 320];
    bool deleted;
    ty_obj *o;
    ty_error err;

    /* Only the directory it made for this volume's claim, never a path put
     * there by hand. */
    snprintf(want, sizeof(want), "%s/%s", v->dir, name);
    if (!strcmp(path, want) &&
        marker_says(v, name, str2(json_object_get(pv, "spec"), "claimRef", "uid"))) {
        if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT) {
            ty_warn("volumes: cannot remove %s: %s", path, strerror(errno));
            return -1;
        }
        forget_marker(v, name);
    }
    ty_error_init(&err);
    o = kc_delete(v->s, PVS, "", name, NULL, &deleted, &err);
    ty_obj_unref(o);
    ty_error_clear(&err);
    return 0;
}

/* ---- passes ---- */

static int pass_volume(ty_volumes *v, const char *name)
{
    ty_obj *o = kc_get(v->s, PVS, "", name, NULL), *c = NULL;
    const json_t *pv, *ref;
    int rc = 0;

    if (!o)
        return 0;
    pv = ty_obj_json(o);
    ref = json_object_get(json_object_get(pv, "spec"), "claimRef");
    if (!ref) {
        if (strcmp(str2(pv, "status", "phase"), "Available") &&
            strcmp(str2(pv, "status", "phase"), "Released") &&
            strcmp(str2(pv, "status", "phase"), "Failed"))
            ty_obj_unref(kc_mutate(v->s, PVS, "", name, set_phase, "Available", KC_STATUS,
                                                NULL));
        goto out;
    }
    c = kc_get(v->s, PVCS, ty_jstr(ref, "namespace"), ty_jstr(ref, "name"), NULL);
    if (c && (!*ty_jstr(ref, "uid") || !strcmp(ty_jstr(ref, "uid"),
                                           str2(ty_obj_json(c), "metadata", "uid")))) {
        add_key(v->q, "c", ty_jstr(ref, "namespace"), ty_jstr(ref, "name"));
        goto out;
    }
    if (!*ty_jstr(ref, "uid"))
        goto out; /* kept for a claim not made yet */
    /* Its claim is gone. */
    if (!strcmp(str2(pv, "status", "phase"), "Released") ||
        !strcmp(str2(pv, "status", "phase"), "Failed"))
        goto out;
    if (!strcmp(ty_jstr(json_object_get(pv, "spec"), "persistentVolumeReclaimPolicy"), "Delete")) {
        if (!strcmp(ty_jstr(json_object_get(json_object_get(pv, "metadata"), "annotations"),
                        ANN_PROVISIONED_BY),
                    VOLUMES_PROVISIONER))
            rc = delete_volume(v, pv);
        else
            ty_obj_unref(kc_mutate(v->s, PVS, "", name, set_phase, "Failed", KC_STATUS, NULL));
    } else {
        ty_obj_unref(kc_mutate(v->s, PVS, "", name, set_phase, "Released", KC_STATUS, NULL));
    }
out:
    ty_obj_unref(c);
    ty_obj_unref(o);
    return rc;
}

/* The volumes whose claimRef names ns/name (the claim went). */
static void volumes_of(ty_volumes *v, const char *ns, const char *name)
{
    kc_list l = {0};
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(v->s, PVS, &(kc_list_opts){0}, &l, &err) == 0)
        for (size_t i = 0; i < l.n; i++) {
            const json_t *pv = ty_obj_json(l.items[i]);
            const json_t *ref = json_object_get(json_object_get(pv, "spec"), "claimRef");
            if (ref && !strcmp(ty_jstr(ref, "namespace"), ns) && !strcmp(ty_jstr(ref, "name"), name))
                add_key(v->q, "v", "", str2(pv, "metadata", "name"));
        }
    kc_list_free(&l);
    ty_error_clear(&err);
}

static int pass_pending(ty_volumes *v, const json_t *claim)
{
    const json_t *cs = json_object_get(claim, "spec"), *cls_v = json_object_get(cs,
                                                                                "storageClassName");
    const char *ns = str2(claim, "metadata", "namespace"), *name = str2(claim, "metadata", "name");
    const char *vol = ty_jstr(cs, "volumeName"), *cls = json_string_value(cls_v);
    ty_obj *pv = NULL, *sco = NULL;
    int rc = 0;

    if (*vol) {
        /* It names its volume: that one or none. */
        pv = kc_get(v->s, PVS, "", vol, NULL);
        if (pv && pv_fits(ty_obj_json(pv), claim,
                          ty_jstr(json_object_get(ty_obj_json(pv), "spec"), "storageClassName")))
            rc = bind(v, claim, pv, false);
        else
            ty_event(v->s, claim, "Warning", "FailedBinding", COMPONENT,
                     pv ? "volume \"%s\" already bound to a different claim."
                        : "volume \"%s\" not found",
                     vol);
        goto out;
    }
    if (!cls_v) {
        /* No class: the default class's, when there is one (it may come later). */
        if ((sco = default_class(v->s))) {
            ty_obj_unref(kc_mutate(v->s, PVCS, ns, name, set_class,
                                         (void *)str2(ty_obj_json(sco), "metadata", "name"), 0,
                                         NULL));
            goto out;
        }
        cls = "";
    }
    if ((pv = find_volume(v->s, claim, cls ? cls : ""))) {
        rc = bind(v, claim, pv, true);
        goto out;
    }
    if (!cls || !*cls) {
        ty_event(v->s, claim, "Normal", "FailedBinding", COMPONENT,
                 "no persistent volumes available for this claim and no storage class is set");
        goto out;
    }
    if (!(sco = kc_get(v->s, SCS, "", cls, NULL))) {
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "storageclass.storage.k8s.io \"%s\" not found", cls);
        goto out;
    }
    if (strcmp(ty_jstr(ty_obj_json(sco), "provisioner"), VOLUMES_PROVISIONER)) {
        ty_event(v->s, claim, "Normal", "ExternalProvisioning", COMPONENT,
                 "Waiting for a volume to be created either by the external provisioner '%s' "
                 "or manually by the system administrator. If volume creation is delayed, "
                 "please verify that the provisioner is running and correctly registered.",
                 ty_jstr(ty_obj_json(sco), "provisioner"));
        goto out;
    }
    if (!strcmp(ty_jstr(ty_obj_json(sco), "volumeBindingMode"), "WaitForFirstConsumer") &&
        !claim_in_use(v->s, ns, name, false)) {
        ty_event(v->s, claim, "Normal", "WaitForFirstConsumer", COMPONENT,
                 "waiting for first consumer to be created before binding");
        goto out;
    }
    if (!(pv = provision(v, claim, ty_obj_json(sco)))) {
        rc = -1;
        goto out;
    }
    rc = bind(v, claim, pv, false);
out:
    ty_obj_unref(sco);
    ty_obj_unref(pv);
    return rc;
}

static int pass_claim(ty_volumes *v, const char *ns, const char *name)
{
    ty_obj *o = kc_get(v->s, PVCS, ns, name, NULL), *pv;
    const json_t *claim;
    fin_arg fa = {PROTECTION, true};
    int rc = 0;

    if (!o) {
        volumes_of(v, ns, name);
        return 0;
    }
    claim = ty_obj_json(o);
    if (json_object_get(json_object_get(claim, "metadata"), "deletionTimestamp")) {
        /* Kept while a pod that has not finished uses it. */
        if (finalizer_has(claim, PROTECTION) && !claim_in_use(v->s, ns, name, true)) {
            fa.add = false;
            ty_obj_unref(kc_mutate(v->s, PVCS, ns, name, edit_finalizer, &fa, 0, NULL));
        }
        goto out;
    }
    if (!finalizer_has(claim, PROTECTION)) {
        ty_obj_unref(kc_mutate(v->s, PVCS, ns, name, edit_finalizer, &fa, 0, NULL));
        goto out; /* its event brings the next pass */
    }
    if (!strcmp(str2(claim, "status", "phase"), "Bound")) {
        pv = kc_get(v->s, PVS, "", str2(claim, "spec", "volumeName"), NULL);
        if (!pv) {
            ty_obj_unref(kc_mutate(v->s, PVCS, ns, name, set_phase, "Lost", KC_STATUS, NULL));
            ty_event(v->s, claim, "Warning", "ClaimLost", COMPONENT,
                     "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
        }
        ty_obj_unref(pv);
        goto out;
    }
    if (!strcmp(str2(claim, "status", "phase"), "Lost"))
        goto out;
    rc = pass_pending(v, claim);
out:
    ty_obj_unref(o);
    return rc;
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    ty_volumes *v = ctx;
    char ns[300], name[300];
    const char *slash;

    (void)wake_at;
    if (!v->q)
        v->q = q; /* a pass may run before wq_start returns */
    if (!strcmp(key, "*")) {
        list_keys(q, v->s, PVCS, "c", true);
        return 0;
    }
    if (key[0] == 'v' && key[1] == '/')
        return pass_volume(v, key + 3); /* "v//<name>" */
    if (key[0] != 'c' || key[1] != '/' || !(slash = strchr(key + 2, '/')) ||
        (size_t)(slash - (key + 2)) >= sizeof(ns))
        return 0;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - (key + 2)), key + 2);
    snprintf(name, sizeof(name), "%s", slash + 1);
    return pass_claim(v, ns, name);
}

/* ---- start / stop ---- */

/* The built-in class, when there is no class at all (a first start): a
 * class deleted while others exist stays deleted. */
static void ensure_class(ty_kc *s)
{
    json_t *sc;
    ty_obj *o;
    ty_error err;

    if (kc_count(s, SCS) > 0)
        return;
    sc = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:s, s:s, s:s}", "apiVersion",
                   "storage.k8s.io/v1", "kind", "StorageClass", "metadata", "name",
                   VOLUMES_DEFAULT_CLASS, "annotations", ANN_DEFAULT_CLASS, "true",
                   "provisioner", VOLUMES_PROVISIONER, "reclaimPolicy", "Delete",
                   "volumeBindingMode", "Immediate");
    ty_error_init(&err);
    o = sc ? kc_create(s, SCS, "", sc, &err) : NULL;
    if (!o && err.code != TY_EEXISTS)
        ty_warn("volumes: cannot make StorageClass %s: %s", VOLUMES_DEFAULT_CLASS, err.text);
    ty_obj_unref(o);
    ty_error_clear(&err);
}

static const char *const followed[] = {PVCS, PVS, SCS, "pods", NULL};

ty_volumes *volumes_start(ty_kc *s, const char *data_dir, ty_error *err)
{
    static const wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile,
                               .resources = followed};
    ty_volumes *v = calloc(1, sizeof(*v));

    if (!v) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    v->s = s;
    if (snprintf(v->dir, sizeof(v->dir), "%s/volumes", data_dir) >= (int)sizeof(v->dir)) {
        free(v);
        ty_seterr(err, TY_EINVALID, "data directory path too long");
        return NULL;
    }
    ensure_class(s);
    ty_workqueue *q = wq_start(s, "volumes", 1, &ops, v, err);
    if (!q) {
        free(v);
        return NULL;
    }
    v->q = q;
    return v;
}

void volumes_stop(ty_volumes *v)
{
    if (!v)
        return;
    wq_stop(v->q);
    free(v);
}

int volumes_reconcile(ty_kc *s, const char *data_dir, const char *key)
{
    ty_volumes v = {.s = s};
    time_t wake_at = 0;

    if (snprintf(v.dir, sizeof(v.dir), "%s/volumes", data_dir) >= (int)sizeof(v.dir))
        return -1;
    return reconcile(NULL, key, &wake_at, &v);
}
