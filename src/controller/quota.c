/* quota.c - the ResourceQuota controller (see quota.h). */
#include "controller/quota.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/jsonget.h"
#include "base/log.h"
#include "base/strmap.h"
#include "controller/workqueue.h"
#include "model/quantity.h"
#include "model/quota.h"

#define QUOTAS "resourcequotas"
#define MAX_RES 16 /* distinct resources one namespace's quotas count */

struct ty_quotactl {
    ty_kc *s;
    ty_workqueue *q;
    /* namespace -> how many quotas it has (ns_count, owned): the events of
     * other namespaces are not looked at */
    pthread_mutex_t mu;
    strmap ns_quotas;
};

/* ---- one pass ---- */

typedef struct counted {
    const api_resource *res;
    kc_list items;
} counted;

static const api_resource *resource_of(const char *group, const char *plural)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);

    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i]->group, group) && !strcmp(all[i]->plural, plural))
            return all[i];
    return NULL;
}

/* The objects of res in ns, listed once per pass into cs (NULL when they
 * cannot be). */
static counted *listed(ty_kc *s, const char *ns, counted *cs, size_t *ncs,
                       const api_resource *res, int *failed)
{
    ty_error err;

    for (size_t i = 0; i < *ncs; i++)
        if (cs[i].res == res)
            return &cs[i];
    if (*ncs == MAX_RES)
        return NULL;
    cs[*ncs] = (counted){.res = res};
    ty_error_init(&err);
    if (kc_list_objects(s, api_store_key(res), &(kc_list_opts){.ns = ns}, &cs[*ncs].items,
                        &err) < 0) {
        ty_debug("quota: listing %s in %s: %s", res->plural, ns, err.text);
        ty_error_clear(&err);
        kc_list_free(&cs[*ncs].items);
        *failed = 1;
        return NULL;
    }
    return &cs[(*ncs)++];
}

/* The status quota should have: hard as its spec says, used per hard name. */
static json_t *status_of(ty_kc *s, const char *ns, const json_t *quota, counted *cs,
                         size_t *ncs, int *failed)
{
    const json_t *hard = json_object_get(json_object_get(quota, "spec"), "hard");
    json_t *usage = json_object(), *used = json_object(), *v;
    const api_resource *done[MAX_RES];
    size_t ndone = 0;
    const char *k;

    json_object_foreach((json_t *)hard, k, v) {
        char group[128], plural[128];
        const api_resource *res;
        counted *c;
        size_t d;
        if (quota_key_resource(k, group, sizeof(group), plural, sizeof(plural)) < 0 ||
            !(res = resource_of(group, plural)))
            continue; /* a name nothing here counts: used 0 */
        for (d = 0; d < ndone && done[d] != res; d++)
            ;
        if (d < ndone || ndone == MAX_RES || !(c = listed(s, ns, cs, ncs, res, failed)))
            continue;
        done[ndone++] = res;
        for (int pass = 0; pass < 2 && c; pass++) {
            for (size_t i = 0; i < c->items.n; i++) {
                const json_t *o = ty_obj_json(c->items.items[i]);
                if (quota_matches(quota, res->group, res->plural, o))
                    quota_usage_add(usage, res->group, res->plural, o);
            }
            /* MPIJob v1 and v2beta1: one resource in two schemas, one count */
            c = pass == 0 && api_other_version(res)
                    ? listed(s, ns, cs, ncs, api_other_version(res), failed)
                    : NULL;
        }
    }
    json_object_foreach((json_t *)hard, k, v) {
        char q[64];
        quota_format(k, json_integer_value(json_object_get(usage, k)), q, sizeof(q));
        json_object_set_new(used, k, json_string(q));
    }
    json_decref(usage);
    return json_pack("{s:o, s:o}", "hard", hard ? json_incref((json_t *)hard) : json_object(),
                     "used", used);
}

static int set_status(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set(obj, "status", arg);
    return 0;
}

int quotactl_reconcile(ty_kc *s, const char *ns)
{
    kc_list quotas = {0};
    counted cs[MAX_RES];
    size_t ncs = 0;
    int failed = 0;
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, QUOTAS, &(kc_list_opts){.ns = ns}, &quotas, &err) < 0) {
        ty_error_clear(&err);
        kc_list_free(&quotas);
        return -1;
    }
    for (size_t i = 0; i < quotas.n; i++) {
        const json_t *q = ty_obj_json(quotas.items[i]);
        json_t *st = status_of(s, ns, q, cs, &ncs, &failed);
        if (!st) {
            failed = 1;
            continue;
        }
        if (!json_equal(st, json_object_get(q, "status"))) {
            ty_obj *o = kc_mutate(s, QUOTAS, ns, ty_jmeta(q, "name"), set_status, st, KC_STATUS,
                                  &err);
            if (!o && err.code != TY_ENOTFOUND)
                failed = 1;
            ty_obj_unref(o);
            ty_error_clear(&err);
        }
        json_decref(st);
    }
    for (size_t i = 0; i < ncs; i++)
        kc_list_free(&cs[i].items);
    kc_list_free(&quotas);
    return failed ? -1 : 0;
}

/* ---- the loop ---- */

typedef struct ns_count {
    long n;
    char ns[]; /* the map's key */
} ns_count;

static void count_ns(ty_quotactl *c, const char *ns, int by)
{
    ns_count *e;

    pthread_mutex_lock(&c->mu);
    if (!(e = strmap_get(&c->ns_quotas, ns)) && by > 0 &&
        (e = malloc(sizeof(*e) + strlen(ns) + 1))) {
        e->n = 0;
        strcpy(e->ns, ns);
        if (strmap_put(&c->ns_quotas, e->ns, e) < 0) {
            free(e);
            e = NULL;
        }
    }
    if (e && (e->n += by) <= 0)
        free(strmap_del(&c->ns_quotas, ns));
    pthread_mutex_unlock(&c->mu);
}

static bool has_quota(ty_quotactl *c, const char *ns)
{
    bool yes;

    pthread_mutex_lock(&c->mu);
    yes = strmap_get(&c->ns_quotas, ns) != NULL;
    pthread_mutex_unlock(&c->mu);
    return yes;
}

static void on_event(ty_workqueue *q, const kc_event *ev, void *ctx)
{
    ty_quotactl *c = ctx;
    const char *ns = NULL, *name = NULL;

    if (!strcmp(ev->resource, "events"))
        return;
    ty_obj_key(ev->obj, &ns, &name);
    if (!ns || !*ns)
        return;
    if (!strcmp(ev->resource, QUOTAS)) {
        char rv[TY_RV_MAX];
        if (ev->type == KC_ADDED)
            count_ns(c, ns, 1);
        else if (ev->type == KC_DELETED)
            count_ns(c, ns, -1);
        ty_obj_rv(ev->obj, rv, sizeof(rv));
        wq_add_event(q, ns, rv);
        return;
    }
    if (has_quota(c, ns))
        wq_add(q, ns);
}

static void resync(ty_workqueue *q, ty_kc *s, void *ctx)
{
    ty_quotactl *c = ctx;
    kc_list l = {0};
    ty_error err;

    ty_error_init(&err);
    if (kc_list_objects(s, QUOTAS, NULL, &l, &err) == 0) {
        /* the keys are strmap's own: rebuild the set from scratch */
        pthread_mutex_lock(&c->mu);
        strmap_free_values(&c->ns_quotas);
        strmap_init(&c->ns_quotas);
        pthread_mutex_unlock(&c->mu);
        for (size_t i = 0; i < l.n; i++) {
            const char *ns = NULL, *name = NULL;
            ty_obj_key(l.items[i], &ns, &name);
            if (!ns || !*ns)
                continue;
            count_ns(c, ns, 1);
            wq_add(q, ns);
        }
    }
    kc_list_free(&l);
    ty_error_clear(&err);
}

static int reconcile(ty_workqueue *q, const char *key, time_t *wake_at, void *ctx)
{
    ty_quotactl *c = ctx;

    (void)q;
    (void)wake_at;
    return quotactl_reconcile(c->s, key);
}

ty_quotactl *quotactl_start(ty_kc *s, ty_error *err)
{
    static const wq_ops ops = {.on_event = on_event, .resync = resync, .reconcile = reconcile};
    ty_quotactl *c = calloc(1, sizeof(*c));

    if (!c) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    c->s = s;
    pthread_mutex_init(&c->mu, NULL);
    strmap_init(&c->ns_quotas);
    if (!(c->q = wq_start(s, "quota", 1, &ops, c, err))) {
        strmap_free_values(&c->ns_quotas);
        pthread_mutex_destroy(&c->mu);
        free(c);
        return NULL;
    }
    return c;
}

void quotactl_stop(ty_quotactl *c)
{
    if (!c)
        return;
    wq_stop(c->q);
    strmap_free_values(&c->ns_quotas);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
