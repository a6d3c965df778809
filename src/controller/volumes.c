/* volumes.c - the volume controller (see volumes.h): claims bound to
 * volumes, protection, reclaim; the provisioner is volumes_provision.c. */
#include "controller/volumes_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "controller/workqueue.h"
#include "model/finalizers.h"
#include "model/quantity.h"

const char *vol_str2(const json_t *o, const char *k1, const char *k2)
{
    return ty_jstr(json_object_get(o, k1), k2);
}

int64_t vol_storage_of(const json_t *quantities)
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
    const char *ns = vol_str2(pod, "metadata", "namespace");
    const json_t *vol;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol) {
        const char *claim = vol_str2(vol, "persistentVolumeClaim", "claimName");
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
        add_key(q, "c", vol_str2(obj, "metadata", "namespace"), vol_str2(obj, "metadata", "name"));
    } else if (!strcmp(ev->resource, PVS)) {
        add_key(q, "v", "", vol_str2(obj, "metadata", "name"));
        if (strcmp(vol_str2(obj, "status", "phase"), "Bound"))
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
            if (pending_only && !strcmp(vol_str2(o, "status", "phase"), "Bound"))
                continue;
            add_key(q, kind, vol_str2(o, "metadata", "namespace"), vol_str2(o, "metadata", "name"));
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
    const char *phase = vol_str2(pod, "status", "phase");
    const json_t *vol;
    size_t i;

    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return false;
    /* A pod not bound yet never starts with a claim being deleted. */
    if (u->scheduled && !*vol_str2(pod, "spec", "nodeName"))
        return false;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol)
        if (!strcmp(vol_str2(vol, "persistentVolumeClaim", "claimName"), u->claim))
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
    const char *phase = vol_str2(pv, "status", "phase");

    if (json_object_get(json_object_get(pv, "metadata"), "deletionTimestamp"))
        return false;
    if (ref && (strcmp(ty_jstr(ref, "namespace"), vol_str2(claim, "metadata", "namespace")) ||
                strcmp(ty_jstr(ref, "name"), vol_str2(claim, "metadata", "name")) ||
                (*ty_jstr(ref, "uid") && strcmp(ty_jstr(ref, "uid"), vol_str2(claim, "metadata", "uid")))))
        return false;
    if (!ref && strcmp(phase, "Available") && strcmp(phase, "Pending") && *phase)
        return false;
    if (strcmp(ty_jstr(ps, "storageClassName"), cls))
        return false;
    if (vol_storage_of(json_object_get(ps, "capacity")) <
        vol_storage_of(json_object_get(json_object_get(cs, "resources"), "requests")))
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
            int64_t size = vol_storage_of(json_object_get(json_object_get(pv, "spec"), "capacity"));
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
                        json_string(vol_str2(b->pv, "metadata", "name")));
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
    const char *ns = vol_str2(claim, "metadata", "namespace"), *name = vol_str2(claim, "metadata", "name");
    const char *pvname = vol_str2(ty_obj_json(pvo), "metadata", "name");
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
        if (strcmp(vol_str2(pv, "status", "phase"), "Available") &&
            strcmp(vol_str2(pv, "status", "phase"), "Released") &&
            strcmp(vol_str2(pv, "status", "phase"), "Failed"))
            ty_obj_unref(kc_mutate(v->s, PVS, "", name, set_phase, "Available", KC_STATUS,
                                                NULL));
        goto out;
    }
    c = kc_get(v->s, PVCS, ty_jstr(ref, "namespace"), ty_jstr(ref, "name"), NULL);
    if (c && (!*ty_jstr(ref, "uid") || !strcmp(ty_jstr(ref, "uid"),
                                           vol_str2(ty_obj_json(c), "metadata", "uid")))) {
        add_key(v->q, "c", ty_jstr(ref, "namespace"), ty_jstr(ref, "name"));
        goto out;
    }
    if (!*ty_jstr(ref, "uid"))
        goto out; /* kept for a claim not made yet */
    /* Its claim is gone. */
    if (!strcmp(vol_str2(pv, "status", "phase"), "Released") ||
        !strcmp(vol_str2(pv, "status", "phase"), "Failed"))
        goto out;
    if (!strcmp(ty_jstr(json_object_get(pv, "spec"), "persistentVolumeReclaimPolicy"), "Delete")) {
        if (!strcmp(ty_jstr(json_object_get(json_object_get(pv, "metadata"), "annotations"),
                        ANN_PROVISIONED_BY),
                    VOLUMES_PROVISIONER))
            rc = vol_delete_volume(v, pv);
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
                add_key(v->q, "v", "", vol_str2(pv, "metadata", "name"));
        }
    kc_list_free(&l);
    ty_error_clear(&err);
}

static int pass_pending(ty_volumes *v, const json_t *claim)
{
    const json_t *cs = json_object_get(claim, "spec"), *cls_v = json_object_get(cs,
                                                                                "storageClassName");
    const char *ns = vol_str2(claim, "metadata", "namespace"), *name = vol_str2(claim, "metadata", "name");
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
        if ((sco = vol_default_class(v->s))) {
            ty_obj_unref(kc_mutate(v->s, PVCS, ns, name, vol_set_class,
                                         (void *)vol_str2(ty_obj_json(sco), "metadata", "name"), 0,
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
    if (!(pv = vol_provision(v, claim, ty_obj_json(sco)))) {
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
    if (!strcmp(vol_str2(claim, "status", "phase"), "Bound")) {
        pv = kc_get(v->s, PVS, "", vol_str2(claim, "spec", "volumeName"), NULL);
        if (!pv) {
            ty_obj_unref(kc_mutate(v->s, PVCS, ns, name, set_phase, "Lost", KC_STATUS, NULL));
            ty_event(v->s, claim, "Warning", "ClaimLost", COMPONENT,
                     "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
        }
        ty_obj_unref(pv);
        goto out;
    }
    if (!strcmp(vol_str2(claim, "status", "phase"), "Lost"))
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
    vol_ensure_class(s);
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
