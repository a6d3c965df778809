/* engine.c - the job engine: the keys it follows and how they map to
 * passes (see engine.h). The decisions are in reconcile.c; the watch, the
 * queue, the workers and the timers are the controllers' shared loop
 * (controller/workqueue.c).
 *
 * Keys are "<resource>/namespace/name", the resource by its store key
 * ("msjobs.kubeflow.org": one kind, MSJob, is served in two groups;
 * "mpijobs.v2beta1.kubeflow.org": MPIJob in two versions; names hold no
 * '/'). Fed by watch events on
 * the job kinds and on pods, services, config maps and PodGroups that a job
 * controls (mapped back through the controller ownerReference, or failing
 * that the job-name and operator-name labels); a (re)opened watch lists
 * every job of every kind.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/log.h"
#include "controller/jobs/engine.h"
#include "controller/jobs/jobs_int.h"
#include "controller/workqueue.h"

#define JOBS_WORKERS 8

/* The kinds' resources and those a job controls (on_event). */
#define WATCHED_MAX 32

struct ty_jobs {
    ty_kc *s;
    ty_workqueue *q;
    uint64_t kinds;   /* bit i: kf_kinds()[i] is this engine's */
    const char *watched[WATCHED_MAX + 1];
};

static bool enabled(const ty_jobs *j, const kf_kind *k)
{
    size_t n;
    const kf_kind *const *kinds;

    if (!k)
        return false;
    if (j->kinds == ~(uint64_t)0) /* every kind (the server): no look-up per event */
        return true;
    kinds = kf_kinds(&n);
    for (size_t i = 0; i < n && i < 64; i++)
        if (kinds[i] == k)
            return (j->kinds >> i) & 1;
    return false;
}

static void enqueue(ty_workqueue *q, const kf_kind *k, const char *ns, const char *name)
{
    char key[600]; /* names are at most 253 characters, namespaces 63 */

    if (!k || !ns || !name)
        return;
    snprintf(key, sizeof(key), "%s/%s/%s", api_store_key(k->resource), ns, name);
    wq_add(q, key);
}

/* A job's own event: dropped when it is the status this engine wrote. */
static void enqueue_job(ty_workqueue *q, const kf_kind *k, const char *ns, const char *name,
                        const char *rv)
{
    char key[600];

    snprintf(key, sizeof(key), "%s/%s/%s", api_store_key(k->resource), ns, name);
    wq_add_event(q, key, rv);
}

static const kf_kind *kind_for_store_key(const char *resource)
{
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);

    for (size_t i = 0; i < n; i++)
        if (strcmp(api_store_key(kinds[i]->resource), resource) == 0)
            return kinds[i];
    return NULL;
}

static const kf_kind *kind_for_operator(const char *op)
{
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);

    for (size_t i = 0; op && i < n; i++)
        if (strcmp(kinds[i]->operator_name, op) == 0)
            return kinds[i];
    return NULL;
}

/* Queues the job controlling a pod, service or config map (of metadata
 * meta), if any. */
static void enqueue_owner(const ty_jobs *j, ty_workqueue *q, const json_t *meta)
{
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const json_t *labels = json_object_get(meta, "labels");
    const kf_kind *k;
    size_t i;
    json_t *r;

    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r) {
        k = kf_kind_for_resource(api_find_kind(json_string_value(json_object_get(r, "apiVersion")),
                                               json_string_value(json_object_get(r, "kind"))));
        if (k && json_is_true(json_object_get(r, "controller"))) {
            if (enabled(j, k))
                enqueue(q, k, ns, json_string_value(json_object_get(r, "name")));
            return;
        }
    }
    k = kind_for_operator(json_string_value(json_object_get(labels, JOBS_LABEL_OPERATOR)));
    if (enabled(j, k))
        enqueue(q, k, ns, json_string_value(json_object_get(labels, JOBS_LABEL_JOB_NAME)));
}

/* The resource is looked at first: the JSON of an object this engine does
 * not follow (Events are a third of all writes) is never read; of the rest
 * only the metadata (an event outside the store's tree window is parsed
 * for it alone, and nothing is kept). The view of a job's pod or Service
 * that a pass reads is made when the pass first asks (ty_obj_view, from
 * the tree when the version still has it, as it mostly does that soon).
 * Made here, while the tree is there for sure, it would be made for every
 * version, and most versions (a pod's create and binding) are replaced
 * before any pass reads them: a waste of throughput and memory
 * (docs/benchmarks.md). */
static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    const ty_jobs *j = ctx;
    const char *ns, *name;
    const kf_kind *k;
    json_t *meta;

    if (!strcmp(ev->resource, "pods") || !strcmp(ev->resource, "services") ||
        !strcmp(ev->resource, "configmaps") ||
        !strcmp(ev->resource, api_store_key(&api_podgroup))) {
        meta = ty_obj_metadata(ev->obj);
        enqueue_owner(j, q, meta);
        json_decref(meta);
        return;
    }
    if (!(k = kind_for_store_key(ev->resource)) || !enabled(j, k))
        return;
    ty_obj_key(ev->obj, &ns, &name);
    if (ev->type == KC_DELETED) {
        jobs_metric_bump("training_operator_jobs_deleted_total", ns, k);
        return;
    }
    char rv[TY_RV_MAX];
    ty_obj_rv(ev->obj, rv, sizeof(rv));
    enqueue_job(q, k, ns, name, rv);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    const ty_jobs *j = ctx;
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);
    ty_error err;

    ty_error_init(&err);
    for (size_t i = 0; i < n; i++) {
        kc_list l;
        if (!enabled(j, kinds[i]))
            continue;
        if (kc_list_objects(s, api_store_key(kinds[i]->resource), NULL, &l, &err) < 0) {
            ty_error_clear(&err);
            continue;
        }
        for (size_t k = 0; k < l.n; k++) {
            const char *ns, *name;
            ty_obj_key(l.items[k], &ns, &name);
            enqueue(q, kinds[i], ns, name);
        }
        kc_list_free(&l);
    }
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    ty_jobs *j = ctx;
    char resource[128], ns[256], name[300];
    const kf_kind *k;

    if (sscanf(key, "%127[^/]/%255[^/]/%299s", resource, ns, name) != 3 ||
        !(k = kind_for_store_key(resource)) || !enabled(j, k)) {
        ty_warn("jobs: bad work queue key %s", key);
        return 0;
    }
    char wrote[TY_RV_MAX] = "";
    int rc = jobs_reconcile(wq_client(q), k, ns, name, wake_at, wrote);
    if (*wrote)
        wq_wrote(q, key, wrote); /* not j->q: set only when wq_start returns */
    return rc;
}

ty_jobs *jobs_start(ty_kc *s, ty_error *err)
{
    return jobs_start_kinds(s, ~(uint64_t)0, err);
}

ty_jobs *jobs_start_kinds(ty_kc *s, uint64_t kinds_mask, ty_error *err)
{
    wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_jobs *j = calloc(1, sizeof(*j));
    size_t n, w = 0;
    const kf_kind *const *kinds = kf_kinds(&n);

    if (!j || n + 4 > WATCHED_MAX) {
        ty_seterr(err, TY_EINTERNAL, j ? "jobs: too many kinds to watch" : "out of memory");
        free(j);
        return NULL;
    }
    j->s = s;
    j->kinds = kinds_mask;
    j->watched[w++] = "pods";
    j->watched[w++] = "services";
    j->watched[w++] = "configmaps";
    j->watched[w++] = api_store_key(&api_podgroup);
    for (size_t i = 0; i < n; i++)
        if (enabled(j, kinds[i]))
            j->watched[w++] = api_store_key(kinds[i]->resource);
    ops.resources = j->watched;
    ops.cache = j->watched; /* over HTTP: passes read the watch's cache */
    jobs_metrics_declare();
    if (!(j->q = wq_start(s, "jobs", JOBS_WORKERS, &ops, j, err))) {
        free(j);
        return NULL;
    }
    return j;
}

void jobs_stop(ty_jobs *j)
{
    if (!j)
        return;
    wq_stop(j->q);
    free(j);
}
