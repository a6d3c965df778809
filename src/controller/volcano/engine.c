/* engine.c - the Volcano Job controller: the keys it follows (see vcjob.h).
 * The decisions are in reconcile.c and policy.c; the watch, the queue, the
 * workers and the timers are the controllers' shared loop
 * (controller/workqueue.c), as for the Kubeflow job engine.
 *
 * Keys are "namespace/name" of Volcano Jobs, fed by events on the jobs and
 * on the objects a Volcano Job controls (pods, services, config maps,
 * secrets, PodGroups: through the controller ownerReference); a (re)opened
 * watch lists every Volcano Job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "controller/volcano/vc_int.h"
#include "controller/volcano/vcjob.h"
#include "controller/workqueue.h"

#define VC_WORKERS 4
#define VC_API_VERSION "batch.volcano.sh/v1alpha1"

struct ty_vcjobs {
    ty_kc *s;
    ty_workqueue *q;
    const char *watched[7]; /* Volcano Jobs and what may_be_owned names */
    const char *cached[6];  /* what passes read from the cache over HTTP:
                               the same but Secrets (not kept in memory) */
};

static void enqueue(ty_workqueue *q, const char *ns, const char *name)
{
    char key[600]; /* names are at most 253 characters, namespaces 63 */

    if (!ns || !name)
        return;
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    wq_add(q, key);
}

/* What a Volcano Job can control; other resources' JSON is never read (their
 * events do not reach on_event: vcjobs_start names these to the watch). */
static bool may_be_owned(const char *resource)
{
    return !strcmp(resource, "pods") || !strcmp(resource, "services") ||
           !strcmp(resource, "configmaps") || !strcmp(resource, "secrets") ||
           !strcmp(resource, api_store_key(&api_podgroup));
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    ty_vcjobs *v = ctx;
    json_t *meta;
    const char *ns;
    json_t *r;
    size_t i;

    if (strcmp(ev->resource, api_store_key(&api_vcjob)) == 0) {
        const char *jns, *name;
        ty_obj_key(ev->obj, &jns, &name);
        if (ev->type != KC_DELETED)
            enqueue(q, jns, name);
        return;
    }
    /* With no Volcano Job in the store, what this event's object belongs to
     * is none (a Job made later is queued by its own event, and a pass lists
     * what it owns), so a server running only Kubeflow jobs does not read
     * the metadata of every pod, Service and PodGroup event for nothing. */
    if (!may_be_owned(ev->resource) || kc_count_hint(v->s, api_store_key(&api_vcjob)) == 0)
        return;
    meta = ty_obj_metadata(ev->obj); /* an owned pod's JSON is not wanted here */
    ns = json_string_value(json_object_get(meta, "namespace"));
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r) {
        const char *api = json_string_value(json_object_get(r, "apiVersion"));
        const char *kind = json_string_value(json_object_get(r, "kind"));
        if (json_is_true(json_object_get(r, "controller")) && api && kind &&
            !strcmp(api, VC_API_VERSION) && !strcmp(kind, "Job")) {
            enqueue(q, ns, json_string_value(json_object_get(r, "name")));
        }
    }
    json_decref(meta);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    kc_list l;
    ty_error err;

    (void)ctx;
    ty_error_init(&err);
    if (kc_list_objects(s, api_store_key(&api_vcjob), NULL, &l, &err) < 0) {
        ty_error_clear(&err);
        return;
    }
    for (size_t k = 0; k < l.n; k++) {
        const char *ns, *name;
        ty_obj_key(l.items[k], &ns, &name);
        enqueue(q, ns, name);
    }
    kc_list_free(&l);
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    ty_vcjobs *v = ctx;
    char ns[256], name[300];

    (void)v;
    if (sscanf(key, "%255[^/]/%299s", ns, name) != 2) {
        ty_warn("vcjobs: bad work queue key %s", key);
        return 0;
    }
    return vc_reconcile(wq_client(q), ns, name, wake_at);
}

ty_vcjobs *vcjobs_start(ty_kc *s, ty_error *err)
{
    wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_vcjobs *v = calloc(1, sizeof(*v));

    if (!v) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    v->s = s;
    v->watched[0] = api_store_key(&api_vcjob);
    v->watched[1] = "pods";
    v->watched[2] = "services";
    v->watched[3] = "configmaps";
    v->watched[4] = "secrets";
    v->watched[5] = api_store_key(&api_podgroup);
    v->watched[6] = NULL;
    ops.resources = v->watched;
    v->cached[0] = v->watched[0];
    v->cached[1] = "pods";
    v->cached[2] = "services";
    v->cached[3] = "configmaps";
    v->cached[4] = api_store_key(&api_podgroup);
    v->cached[5] = NULL;
    ops.cache = v->cached;
    if (!(v->q = wq_start(s, "vcjobs", VC_WORKERS, &ops, v, err))) {
        free(v);
        return NULL;
    }
    return v;
}

void vcjobs_stop(ty_vcjobs *v)
{
    if (!v)
        return;
    wq_stop(v->q);
    free(v);
}
