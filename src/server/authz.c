/* authz.c - see authz.h. The snapshot and the matching are authz_rules.c's,
 * the default roles authz_defaults.c's; this file keeps the snapshot
 * current and answers requests from it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/kinds.h"
#include "base/log.h"
#include "server/authz.h"
#include "server/authz_int.h"
#include "server/http.h"

struct ty_authz {
    ty_store *store;
    pthread_rwlock_t lock;   /* guards snap: readers share it, a swap takes it */
    az_snapshot *snap;
    pthread_mutex_t build_mu; /* one rebuild at a time */
    pthread_t thread;
    bool thread_started;
    atomic_bool stopping;
    pthread_mutex_t watch_mu; /* guards watch being swapped (thread) or cancelled (free) */
    store_watch *watch;
};

static const api_resource *const rbac_kinds[] = {&api_role, &api_clusterrole,
                                                 &api_rolebinding, &api_clusterrolebinding};

/* Every object of res, as a JSON array (a new reference). */
static json_t *list_all(ty_store *s, const api_resource *res)
{
    store_list l = {0};
    ty_error err;
    json_t *a = json_array();

    ty_error_init(&err);
    if (store_list_objects(s, api_store_key(res), &(store_list_opts){0}, &l, &err) == 0)
        for (size_t i = 0; i < l.n; i++) {
            json_t *o = store_obj_json_read(l.items[i]);
            if (o)
                json_array_append_new(a, o);
        }
    else
        ty_warn("authz: cannot list %s: %s", res->plural, err.text);
    store_list_free(&l);
    ty_error_clear(&err);
    return a;
}

/* Rebuilds the snapshot; the lists it was made from are left in lists[4]
 * for the caller (aggregation) when not NULL. */
static void rebuild(ty_authz *z, json_t **lists)
{
    json_t *l[4];
    az_snapshot *snap, *old;

    pthread_mutex_lock(&z->build_mu);
    for (int i = 0; i < 4; i++)
        l[i] = list_all(z->store, rbac_kinds[i]);
    snap = az_snapshot_build(l[0], l[1], l[2], l[3]);
    if (snap) {
        pthread_rwlock_wrlock(&z->lock);
        old = z->snap;
        z->snap = snap;
        pthread_rwlock_unlock(&z->lock);
        az_snapshot_free(old);
    } else {
        ty_warn("authz: out of memory rebuilding the RBAC snapshot; the previous one stays");
    }
    pthread_mutex_unlock(&z->build_mu);
    for (int i = 0; i < 4; i++) {
        if (lists)
            lists[i] = l[i];
        else
            json_decref(l[i]);
    }
}

void authz_refresh(ty_authz *z)
{
    if (z)
        rebuild(z, NULL);
}

static int set_rules(json_t *cur, void *arg, ty_error *err)
{
    (void)err;
    json_object_set(cur, "rules", arg);
    return 0;
}

/* The aggregation controller's write: each aggregated ClusterRole's rules
 * as its selectors make them. The snapshot does not wait for it (it
 * computes them itself); this is for readers of the objects. */
static void write_aggregated(ty_authz *z, const json_t *clusterroles)
{
    json_t *agg = az_aggregate(clusterroles), *o;
    size_t i;

    json_array_foreach(clusterroles, i, o) {
        const char *name = json_string_value(
            json_object_get(json_object_get(o, "metadata"), "name"));
        json_t *want = name ? json_object_get(agg, name) : NULL;
        ty_error err;
        store_obj *res;
        if (!want || json_equal(want, json_object_get(o, "rules")))
            continue;
        ty_error_init(&err);
        res = store_mutate(z->store, api_store_key(&api_clusterrole), "", name, set_rules,
                           want, &err);
        if (!res && err.code != TY_ENOTFOUND)
            ty_warn("authz: cannot write the aggregated rules of clusterrole %s: %s", name,
                    err.text);
        store_obj_unref(res);
        ty_error_clear(&err);
    }
    json_decref(agg);
}

void authz_sync(ty_authz *z)
{
    json_t *lists[4];

    if (!z)
        return;
    rebuild(z, lists);
    write_aggregated(z, lists[1]);
    for (int i = 0; i < 4; i++)
        json_decref(lists[i]);
}

static void *watch_main(void *arg)
{
    ty_authz *z = arg;
    store_event ev;
    ty_error err;

    ty_error_init(&err);
    while (!atomic_load(&z->stopping)) {
        /* a second's timeout: a stop that finds no watch to cancel (one
         * being reopened) is seen within it */
        int rc = store_watch_next(z->watch, 1000, &ev, &err);
        if (rc == 1) {
            store_event_release(&ev);
            /* a burst (kubectl apply of many roles) costs one rebuild */
            while (store_watch_next(z->watch, 0, &ev, &err) == 1)
                store_event_release(&ev);
            authz_sync(z);
            continue;
        }
        if (rc == 0 || atomic_load(&z->stopping))
            continue;
        /* fell behind: reopen from now, after a rebuild that sees it all */
        ty_error_clear(&err);
        pthread_mutex_lock(&z->watch_mu);
        store_watch_close(z->watch);
        z->watch = NULL;
        pthread_mutex_unlock(&z->watch_mu);
        store_watch *w = NULL;
        while (!atomic_load(&z->stopping) && !w) {
            const char *only[5];
            for (int i = 0; i < 4; i++)
                only[i] = api_store_key(rbac_kinds[i]);
            only[4] = NULL;
            w = store_watch_open_only(z->store, only, store_current_rv(z->store), &err);
            if (!w) {
                ty_warn("authz: cannot watch the RBAC objects: %s", err.text);
                usleep(100 * 1000);
            }
            ty_error_clear(&err);
        }
        pthread_mutex_lock(&z->watch_mu);
        z->watch = w;
        pthread_mutex_unlock(&z->watch_mu);
        if (w)
            authz_sync(z);
    }
    ty_error_clear(&err);
    return NULL;
}

ty_authz *authz_new(ty_store *s, ty_error *err)
{
    ty_authz *z = calloc(1, sizeof(*z));
    const char *only[5];

    if (!z) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    z->store = s;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    /* a rebuild's swap must not wait behind a stream of readers */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&z->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&z->build_mu, NULL);
    pthread_mutex_init(&z->watch_mu, NULL);
    for (int i = 0; i < 4; i++)
        only[i] = api_store_key(rbac_kinds[i]);
    only[4] = NULL;
    /* watch from before the bootstrap, so that nothing written after the
     * first build goes unseen */
    if (!(z->watch = store_watch_open_only(s, only, store_current_rv(s), err)))
        goto error;
    if (az_bootstrap(s, err) < 0) {
        char why[sizeof(err->text)];
        snprintf(why, sizeof(why), "%s", err->text);
        ty_seterr(err, err->code, "cannot bootstrap the default RBAC roles: %s", why);
        goto error;
    }
    authz_sync(z);
    if (!z->snap) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (pthread_create(&z->thread, NULL, watch_main, z) != 0) {
        ty_seterr(err, TY_EINTERNAL, "cannot start the RBAC watch thread");
        goto error;
    }
    z->thread_started = true;
    return z;
error:
    authz_free(z);
    return NULL;
}

void authz_free(ty_authz *z)
{
    if (!z)
        return;
    atomic_store(&z->stopping, true);
    pthread_mutex_lock(&z->watch_mu);
    if (z->watch)
        store_watch_cancel(z->watch);
    pthread_mutex_unlock(&z->watch_mu);
    if (z->thread_started)
        pthread_join(z->thread, NULL);
    store_watch_close(z->watch);
    az_snapshot_free(z->snap);
    pthread_rwlock_destroy(&z->lock);
    pthread_mutex_destroy(&z->build_mu);
    pthread_mutex_destroy(&z->watch_mu);
    free(z);
}

int authz_check(ty_authz *z, const ty_user *u, const reqattr *a, char *reason, size_t cap)
{
    int ok;

    if (reason && cap)
        reason[0] = '\0';
    if (!z)
        return 1;
    pthread_rwlock_rdlock(&z->lock);
    ok = az_snapshot_allows(z->snap, u, a, reason, cap);
    pthread_rwlock_unlock(&z->lock);
    return ok;
}

json_t *authz_rules(ty_authz *z, const ty_user *u, const char *ns)
{
    json_t *r;

    if (!z)
        return NULL;
    pthread_rwlock_rdlock(&z->lock);
    r = az_snapshot_rules(z->snap, u, ns);
    pthread_rwlock_unlock(&z->lock);
    return r;
}

json_t *authz_role_rules(ty_authz *z, bool cluster, const char *ns, const char *name)
{
    json_t *r;

    pthread_rwlock_rdlock(&z->lock);
    r = az_snapshot_role_rules(z->snap, cluster, ns, name);
    pthread_rwlock_unlock(&z->lock);
    return r;
}

/* ---- kube-apiserver's 403 ----------------------------------------------- */

void az_forbidden_message(const char *user, const reqattr *a, const char *reason, char *buf,
                          size_t len)
{
    char res[2 * REQATTR_MAX + 80], what[4 * REQATTR_MAX + 600];
    const char *sep = reason && *reason ? ": " : "";

    if (!reason)
        reason = "";
    if (!a->resource_request) {
        snprintf(buf, len, "forbidden: User \"%s\" cannot %s path \"%s\"%s%s", user, a->verb,
                 a->path, sep, reason);
        return;
    }
    snprintf(res, sizeof(res), "%s%s%s", a->resource, a->subresource[0] ? "/" : "",
             a->subresource);
    if (a->ns[0])
        snprintf(what, sizeof(what), "User \"%s\" cannot %s resource \"%s\" in API group "
                 "\"%s\" in the namespace \"%s\"", user, a->verb, res, a->api_group, a->ns);
    else
        snprintf(what, sizeof(what), "User \"%s\" cannot %s resource \"%s\" in API group "
                 "\"%s\" at the cluster scope", user, a->verb, res, a->api_group);
    /* the qualified resource: "pods", "pytorchjobs.kubeflow.org" */
    snprintf(res, sizeof(res), "%s%s%s", a->resource, a->api_group[0] ? "." : "",
             a->api_group);
    if (a->name[0])
        snprintf(buf, len, "%s \"%s\" is forbidden: %s%s%s", res, a->name, what, sep, reason);
    else
        snprintf(buf, len, "%s is forbidden: %s%s%s", res, what, sep, reason);
}

json_t *authz_forbidden_status(const char *user, const reqattr *a, const char *reason)
{
    ty_error err;
    json_t *st, *details = json_object();

    ty_error_init(&err);
    err.code = TY_EFORBIDDEN;
    az_forbidden_message(user ? user : "system:anonymous", a, reason, err.text,
                         sizeof(err.text));
    st = status_from_error(&err, NULL, NULL);
    if (a->resource_request) {
        if (a->name[0])
            json_object_set_new(details, "name", json_string(a->name));
        if (a->api_group[0])
            json_object_set_new(details, "group", json_string(a->api_group));
        json_object_set_new(details, "kind", json_string(a->resource));
    }
    json_object_set_new(st, "details", details);
    ty_error_clear(&err);
    return st;
}
