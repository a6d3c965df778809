/* engine.c - the TrainJob controller: the keys it follows (see
 * trainjob_ctl.h). The decisions are reconcile.c's; the watch, the queue,
 * the workers and the timers are the controllers' shared loop
 * (controller/workqueue.c).
 *
 * Keys are "namespace/name" of TrainJobs, fed by events on the jobs and on
 * what a TrainJob controls (pods, Services, ConfigMaps, Secrets, its
 * PodGroup: through the controller ownerReference), and
 * "record:namespace/name" of JobRecords (swept after the retention,
 * record.c); a (re)opened watch lists every TrainJob and JobRecord. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "api/trainer.h"
#include "base/log.h"
#include "controller/trainer/tj_int.h"
#include "controller/trainer/trainjob_ctl.h"
#include "controller/workqueue.h"

#define TJ_WORKERS 2
#define TJ_API_VERSION TRAINER_GROUP "/v1alpha1"

struct ty_trainjobs {
    ty_kc *s;
    ty_workqueue *q;
    const char *watched[8]; /* TrainJobs, JobRecords and what may_be_owned names */
    const char *cached[7];  /* what passes read from the cache over HTTP:
                               the same but Secrets (not kept in memory) */
};

#define RECORD_KEY "record:" /* no namespace has a ':' */

static void enqueue_as(ty_workqueue *q, const char *prefix, const char *ns, const char *name)
{
    char key[620]; /* names are at most 253 characters, namespaces 63 */

    if (!ns || !name)
        return;
    snprintf(key, sizeof(key), "%s%s/%s", prefix, ns, name);
    wq_add(q, key);
}

static void enqueue(ty_workqueue *q, const char *ns, const char *name)
{
    enqueue_as(q, "", ns, name);
}

static bool may_be_owned(const char *resource)
{
    return !strcmp(resource, "pods") || !strcmp(resource, "services") ||
           !strcmp(resource, "configmaps") || !strcmp(resource, "secrets") ||
           !strcmp(resource, api_store_key(&api_podgroup));
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    ty_trainjobs *t = ctx;
    json_t *meta, *r;
    const char *ns;
    size_t i;

    if (strcmp(ev->resource, api_store_key(&api_trainjob)) == 0 ||
        strcmp(ev->resource, api_store_key(&api_jobrecord)) == 0) {
        const char *jns, *name;
        ty_obj_key(ev->obj, &jns, &name);
        if (ev->type != KC_DELETED)
            enqueue_as(q, strcmp(ev->resource, api_store_key(&api_jobrecord)) ? "" : RECORD_KEY,
                       jns, name);
        return;
    }
    /* with no TrainJob stored, no event's object is one's: a server
     * running other jobs does not read their pods' metadata for nothing */
    if (!may_be_owned(ev->resource) || kc_count_hint(t->s, api_store_key(&api_trainjob)) == 0)
        return;
    meta = ty_obj_metadata(ev->obj);
    ns = json_string_value(json_object_get(meta, "namespace"));
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r) {
        const char *api = json_string_value(json_object_get(r, "apiVersion"));
        const char *kind = json_string_value(json_object_get(r, "kind"));
        if (json_is_true(json_object_get(r, "controller")) && api && kind &&
            !strcmp(api, TJ_API_VERSION) && !strcmp(kind, "TrainJob"))
            enqueue(q, ns, json_string_value(json_object_get(r, "name")));
    }
    json_decref(meta);
}

static void resync_all(ty_workqueue *q, ty_kc *s, const api_resource *res, const char *prefix)
{
    kc_list l;
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, api_store_key(res), NULL, &l, &err) < 0) {
        ty_error_clear(&err);
        return;
    }
    for (size_t k = 0; k < l.n; k++) {
        const char *ns, *name;
        ty_obj_key(l.items[k], &ns, &name);
        enqueue_as(q, prefix, ns, name);
    }
    kc_list_free(&l);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    (void)ctx;
    resync_all(q, s, &api_trainjob, "");
    resync_all(q, s, &api_jobrecord, RECORD_KEY);
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    char ns[256], name[300];

    bool record = strncmp(key, RECORD_KEY, sizeof(RECORD_KEY) - 1) == 0;

    (void)ctx;
    if (sscanf(key + (record ? sizeof(RECORD_KEY) - 1 : 0), "%255[^/]/%299s", ns, name) != 2) {
        ty_warn("trainjobs: bad work queue key %s", key);
        return 0;
    }
    if (record)
        return tj_record_sweep(wq_client(q), ns, name, wake_at);
    return tj_reconcile(wq_client(q), ns, name, wake_at);
}

ty_trainjobs *trainjobs_start(ty_kc *s, ty_error *err)
{
    wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_trainjobs *t = calloc(1, sizeof(*t));

    if (!t) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    t->s = s;
    t->watched[0] = api_store_key(&api_trainjob);
    t->watched[1] = "pods";
    t->watched[2] = "services";
    t->watched[3] = "configmaps";
    t->watched[4] = "secrets";
    t->watched[5] = api_store_key(&api_podgroup);
    t->watched[6] = api_store_key(&api_jobrecord);
    t->watched[7] = NULL;
    ops.resources = t->watched;
    t->cached[0] = t->watched[0];
    t->cached[1] = "pods";
    t->cached[2] = "services";
    t->cached[3] = "configmaps";
    t->cached[4] = api_store_key(&api_podgroup);
    t->cached[5] = api_store_key(&api_jobrecord);
    t->cached[6] = NULL;
    ops.cache = t->cached;
    if (!(t->q = wq_start(s, "trainjobs", TJ_WORKERS, &ops, t, err))) {
        free(t);
        return NULL;
    }
    return t;
}

void trainjobs_stop(ty_trainjobs *t)
{
    if (!t)
        return;
    wq_stop(t->q);
    free(t);
}
