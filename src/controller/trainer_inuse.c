/* trainer_inuse.c - the resource-in-use finalizer of training runtimes
 * (trainer_inuse.h). */
#include "controller/trainer_inuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/log.h"
#include "controller/workqueue.h"

#define KEY_MAX 520

struct ty_trainer_inuse {
    ty_kc *s;
    ty_workqueue *q;
};

static const char *sval(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* The key of the runtime a TrainJob names, into key; false when it names
 * none. */
static bool ref_key(const json_t *job, char *key, size_t len)
{
    const json_t *ref = json_object_get(json_object_get(job, "spec"), "runtimeRef");
    const char *kind = sval(ref, "kind"), *name = sval(ref, "name");
    const char *ns = sval(json_object_get(job, "metadata"), "namespace");

    if (!name || !*name)
        return false;
    if (kind && strcmp(kind, "TrainingRuntime") == 0)
        snprintf(key, len, "T/%s/%s", ns ? ns : "", name);
    else
        snprintf(key, len, "C/%s", name);
    return true;
}

static void runtime_key(const char *resource, const ty_obj *o, char *key, size_t len)
{
    const char *ns = NULL, *name = NULL;

    ty_obj_key(o, &ns, &name);
    if (strcmp(resource, api_store_key(&api_trainingruntime)) == 0)
        snprintf(key, len, "T/%s/%s", ns ? ns : "", name ? name : "");
    else
        snprintf(key, len, "C/%s", name ? name : "");
}

typedef struct ref_filter {
    const char *kind, *name;
} ref_filter;

static bool names_runtime(const json_t *job, void *arg)
{
    const ref_filter *f = arg;
    const json_t *ref = json_object_get(json_object_get(job, "spec"), "runtimeRef");
    const char *kind = sval(ref, "kind"), *name = sval(ref, "name");

    return name && strcmp(name, f->name) == 0 &&
           strcmp(kind ? kind : "ClusterTrainingRuntime", f->kind) == 0;
}

/* arg: "add" or NULL (remove). */
static int set_finalizer(json_t *obj, void *arg, ty_error *err)
{
    json_t *meta = json_object_get(obj, "metadata");
    json_t *fins = json_object_get(meta, "finalizers");
    size_t i;
    (void)err;

    for (i = 0; i < json_array_size(fins); i++)
        if (!strcmp(json_string_value(json_array_get(fins, i)) ?: "", TRAINER_INUSE_FINALIZER))
            break;
    if (arg && i == json_array_size(fins)) {
        if (!json_is_array(fins)) {
            fins = json_array();
            json_object_set_new(meta, "finalizers", fins);
        }
        json_array_append_new(fins, json_string(TRAINER_INUSE_FINALIZER));
    } else if (!arg && i < json_array_size(fins)) {
        json_array_remove(fins, i);
        if (json_array_size(fins) == 0)
            json_object_del(meta, "finalizers");
    }
    return 0;
}

int trainer_inuse_reconcile(ty_kc *s, const char *key)
{
    char ns[256] = "", name[256] = "";
    const api_resource *res;
    ref_filter f;
    kc_list_opts opts = {0};
    kc_list l = {0};
    const json_t *meta;
    ty_obj *rt, *w;
    bool has = false, wanted, deleting;
    ty_error err;
    int rc = 0;

    if (key[0] == 'T' && sscanf(key, "T/%255[^/]/%255s", ns, name) == 2) {
        res = &api_trainingruntime;
    } else if (key[0] == 'C' && sscanf(key, "C/%255s", name) == 1) {
        res = &api_clustertrainingruntime;
    } else {
        return 0;
    }
    ty_error_init(&err);
    rt = kc_get(s, api_store_key(res), ns, name, &err);
    if (!rt) {
        rc = err.code == TY_ENOTFOUND ? 0 : -1;
        ty_error_clear(&err);
        return rc;
    }
    meta = json_object_get(ty_obj_json(rt), "metadata");
    deleting = json_object_get(meta, "deletionTimestamp") != NULL;
    {
        const json_t *fins = json_object_get(meta, "finalizers");
        for (size_t i = 0; i < json_array_size(fins); i++)
            has |= !strcmp(json_string_value(json_array_get(fins, i)) ?: "",
                           TRAINER_INUSE_FINALIZER);
    }
    ty_obj_unref(rt);
    f.kind = res->kind;
    f.name = name;
    opts.ns = res == &api_trainingruntime ? ns : NULL;
    opts.filter = names_runtime;
    opts.filter_arg = &f;
    if (kc_list_objects(s, api_store_key(&api_trainjob), &opts, &l, &err) < 0) {
        ty_warn("trainer-inuse: %s: listing TrainJobs: %s", key, err.text);
        kc_list_free(&l);
        ty_error_clear(&err);
        return -1;
    }
    wanted = l.n > 0;
    kc_list_free(&l);
    /* a runtime being deleted gains no finalizer: it would only hold it */
    if ((wanted && !has && !deleting) || (!wanted && has)) {
        w = kc_mutate(s, api_store_key(res), ns, name, set_finalizer,
                      wanted ? (void *)"add" : NULL, 0, &err);
        if (!w && err.code != TY_ENOTFOUND) {
            ty_warn("trainer-inuse: %s: %s the finalizer: %s", key,
                    wanted ? "adding" : "removing", err.text);
            rc = -1;
        } else if (w) {
            ty_info("trainer-inuse: %s %s %s", wanted ? "added to" : "removed from", key,
                    TRAINER_INUSE_FINALIZER);
        }
        ty_obj_unref(w);
    }
    ty_error_clear(&err);
    return rc;
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    char key[KEY_MAX];
    (void)ctx;

    if (ev->type == KC_BOOKMARK)
        return;
    if (strcmp(ev->resource, api_store_key(&api_trainjob)) == 0) {
        if (ref_key(ty_obj_json(ev->obj), key, sizeof(key)))
            wq_add(q, key);
        return;
    }
    runtime_key(ev->resource, ev->obj, key, sizeof(key));
    wq_add(q, key);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    const api_resource *kinds[] = {&api_trainingruntime, &api_clustertrainingruntime};
    char key[KEY_MAX];
    (void)ctx;

    for (size_t k = 0; k < 2; k++) {
        kc_list l = {0};
        ty_error err;
        ty_error_init(&err);
        if (kc_list_objects(s, api_store_key(kinds[k]), NULL, &l, &err) == 0)
            for (size_t i = 0; i < l.n; i++) {
                runtime_key(api_store_key(kinds[k]), l.items[i], key, sizeof(key));
                wq_add(q, key);
            }
        kc_list_free(&l);
        ty_error_clear(&err);
    }
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    (void)ctx;
    (void)wake_at;
    return trainer_inuse_reconcile(wq_client(q), key);
}

ty_trainer_inuse *trainer_inuse_start(ty_kc *s, ty_error *err)
{
    static const char *resources[4];
    static wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_trainer_inuse *c = calloc(1, sizeof(*c));

    if (!c) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    resources[0] = api_store_key(&api_trainjob);
    resources[1] = api_store_key(&api_trainingruntime);
    resources[2] = api_store_key(&api_clustertrainingruntime);
    ops.resources = resources;
    ops.cache = resources;
    c->s = s;
    if (!(c->q = wq_start(s, "trainer-inuse", 1, &ops, c, err))) {
        free(c);
        return NULL;
    }
    return c;
}

void trainer_inuse_stop(ty_trainer_inuse *c)
{
    if (!c)
        return;
    wq_stop(c->q);
    free(c);
}
