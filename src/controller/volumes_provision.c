/* volumes_provision.c - the built-in local-path provisioner (volumes.h):
 * the default StorageClass, a directory under <data>/volumes per claimed
 * volume with a marker naming its claim, and the directory's removal when
 * its volume is reclaimed. */
#include "controller/volumes_int.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"

/* ---- provisioning ---- */

ty_obj *vol_default_class(ty_kc *s)
{
    kc_list l = {0};
    ty_obj *best = NULL;
    const char *best_ts = "";
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, SCS, &(kc_list_opts){0}, &l, &err) == 0)
        for (size_t i = 0; i < l.n; i++) {
            const json_t *sc = ty_obj_json(l.items[i]);
            const char *ts = vol_str2(sc, "metadata", "creationTimestamp");
            if (strcmp(ty_jstr(json_object_get(json_object_get(sc, "metadata"), "annotations"),
                           ANN_DEFAULT_CLASS),
                       "true"))
                continue;
            /* Several defaults: the newest, as kube-apiserver picks. */
            if (!best || strcmp(ts, best_ts) > 0) {
                ty_obj_unref(best);
                best = ty_obj_ref(l.items[i]);
                best_ts = vol_str2(ty_obj_json(best), "metadata", "creationTimestamp");
            }
        }
    kc_list_free(&l);
    ty_error_clear(&err);
    return best;
}

int vol_set_class(json_t *claim, void *arg, ty_error *err)
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
ty_obj *vol_provision(ty_volumes *v, const json_t *claim, const json_t *sc)
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
            *vol_str2(json_object_get(pv, "spec"), "hostPath", "path") &&
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
                 vol_str2(sc, "metadata", "name"), v->dir, strerror(errno));
        return NULL;
    }
    /* 0777: the pods that use it may run as any user. */
    if ((mkdir(path, 0777) < 0 && errno != EEXIST) || chmod(path, 0777) < 0) {
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "failed to provision volume with StorageClass \"%s\": cannot create %s: %s",
                 vol_str2(sc, "metadata", "name"), path, strerror(errno));
        return NULL;
    }
    if (write_marker(v, name, ty_jstr(cm, "uid")) < 0) {
        ty_event(v->s, claim, "Warning", "ProvisioningFailed", COMPONENT,
                 "failed to provision volume with StorageClass \"%s\": cannot record %s: %s",
                 vol_str2(sc, "metadata", "name"), name, strerror(errno));
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
                   "storageClassName", vol_str2(sc, "metadata", "name"), "volumeMode", "Filesystem",
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
int vol_delete_volume(ty_volumes *v, const json_t *pv)
{
    const char *name = vol_str2(pv, "metadata", "name");
    const char *path = vol_str2(json_object_get(pv, "spec"), "hostPath", "path");
    char want[PATH_MAX + 320];
    bool deleted;
    ty_obj *o;
    ty_error err;

    /* Only the directory it made for this volume's claim, never a path put
     * there by hand. */
    snprintf(want, sizeof(want), "%s/%s", v->dir, name);
    if (!strcmp(path, want) &&
        marker_says(v, name, vol_str2(json_object_get(pv, "spec"), "claimRef", "uid"))) {
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


/* The built-in class, when there is no class at all (a first start): a
 * class deleted while others exist stays deleted. */
void vol_ensure_class(ty_kc *s)
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
