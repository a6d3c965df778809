/* quota_admit.c - ResourceQuota admission (see quota_admit.h). */
#include "api/quota_admit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "api/kinds.h"
#include "api/quota_limited.h"
#include "base/jsonget.h"
#include "base/timeutil.h"
#include "model/quantity.h"
#include "model/quota.h"

#define MAX_QUOTAS 32         /* per namespace, looked at on one create */
#define MAX_RESERVATIONS 4096 /* beyond: a create waits for the store to catch up */

typedef struct reservation {
    char *ns, *name;
    const api_resource *res;
    json_t *obj; /* what was admitted, as much as counting it reads (slim_copy) */
    int64_t until_ms;
} reservation;

/* What a quota's namespace used at its last recount plus what was
 * admitted against it since: never below the truth while every create is
 * admitted (deletions only lower the truth), so a create that fits in it
 * fits; one that does not is recounted before it is refused. */
#define MAX_CACHED 256
typedef struct cached {
    char *uid; /* the quota's */
    long long generation;
    const api_resource *res;
    json_t *used; /* name -> milli */
    uint64_t last; /* for eviction */
} cached;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static reservation resv[MAX_RESERVATIONS];
static size_t nresv;
static cached cache[MAX_CACHED];
static size_t ncache;
static uint64_t cache_clock;

static void drop(size_t i)
{
    free(resv[i].ns);
    free(resv[i].name);
    json_decref(resv[i].obj);
    resv[i] = resv[--nresv];
}

void quota_admit_reset(void)
{
    pthread_mutex_lock(&lock);
    while (nresv)
        drop(0);
    for (size_t i = 0; i < ncache; i++) {
        free(cache[i].uid);
        json_decref(cache[i].used);
    }
    ncache = 0;
    pthread_mutex_unlock(&lock);
}

static long long generation_of(const json_t *q)
{
    return (long long)json_integer_value(json_object_get(json_object_get(q, "metadata"),
                                                         "generation"));
}

/* One of the two versions of a resource served in two (MPIJob v1 and
 * v2beta1): their objects are counted together. */
static const api_resource *canon(const api_resource *res)
{
    const api_resource *o = api_other_version(res);
    return o && strcmp(api_store_key(o), api_store_key(res)) < 0 ? o : res;
}

/* q's entry for objects of res, when its spec is the one counted (under
 * lock). */
static cached *cache_find(const api_resource *res, const json_t *q)
{
    const char *uid = ty_jmeta(q, "uid");

    res = canon(res);
    for (size_t i = 0; i < ncache; i++)
        if (cache[i].res == res && !strcmp(cache[i].uid, uid) &&
            cache[i].generation == generation_of(q)) {
            cache[i].last = ++cache_clock;
            return &cache[i];
        }
    return NULL;
}

/* Sets q's entry for res to used (taken; under lock). */
static void cache_put(const api_resource *res, const json_t *q, json_t *used)
{
    const char *uid = ty_jmeta(q, "uid");
    size_t at = ncache;
    char *u;

    res = canon(res);
    for (size_t i = 0; i < ncache; i++)
        if (cache[i].res == res && !strcmp(cache[i].uid, uid))
            at = i;
    if (at == ncache && ncache == MAX_CACHED) {
        at = 0;
        for (size_t i = 1; i < ncache; i++)
            if (cache[i].last < cache[at].last)
                at = i;
    }
    if (!*uid || !used || !(u = strdup(uid))) {
        json_decref(used);
        return;
    }
    if (at < ncache) {
        free(cache[at].uid);
        json_decref(cache[at].used);
    } else {
        ncache++;
    }
    cache[at] = (cached){.uid = u, .generation = generation_of(q), .res = res, .used = used,
                         .last = ++cache_clock};
}

/* ---- the namespace's quotas ---- */

typedef struct quota_set {
    const char *ns;
    json_t *q[MAX_QUOTAS]; /* copies (owned) */
    size_t n;
} quota_set;

static bool collect_quota(const json_t *obj, void *arg)
{
    quota_set *qs = arg;
    const char *ns = ty_jmeta(obj, "namespace");

    if (qs->n < MAX_QUOTAS && ns && !strcmp(ns, qs->ns))
        qs->q[qs->n++] = json_deep_copy(obj);
    return false;
}

static int cmp_quota(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strcmp(ty_jmeta(x, "name") ?: "", ty_jmeta(y, "name") ?: "");
}

static void quotas_of(const api_lookup *lk, const char *ns, quota_set *qs)
{
    qs->ns = ns;
    qs->n = 0;
    lk->count(lk->ctx, &api_resourcequota, collect_quota, qs);
    for (size_t i = 0; i < qs->n; i++)
        if (!qs->q[i]) { /* a copy that failed */
            qs->q[i--] = qs->q[--qs->n];
        }
    qsort(qs->q, qs->n, sizeof(qs->q[0]), cmp_quota);
}

static void quotas_free(quota_set *qs)
{
    for (size_t i = 0; i < qs->n; i++)
        json_decref(qs->q[i]);
    qs->n = 0;
}

/* ---- naming ---- */

int quota_admit_mutate(const api_lookup *lk, const api_resource *res, json_t *obj,
                       ty_error *err)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = ty_jstr(meta, "namespace"), *gen = ty_jstr(meta, "generateName");
    const char *name = ty_jstr(meta, "name");
    unsigned char rnd[5];
    char cand[80];
    quota_set qs;
    size_t plen;

    if (!res->namespaced || !ns || (name && *name) || !gen || !*gen)
        return 0;
    quotas_of(lk, ns, &qs);
    if (!qs.n)
        return 0;
    quotas_free(&qs);
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return ty_seterr(err, TY_EINTERNAL, "cannot read random bytes for a name");
    plen = strlen(gen) > 58 ? 58 : strlen(gen);
    memcpy(cand, gen, plen);
    for (size_t i = 0; i < sizeof(rnd); i++)
        cand[plen + i] = alphabet[rnd[i] % (sizeof(alphabet) - 1)];
    cand[plen + sizeof(rnd)] = 0;
    json_object_set_new(meta, "name", json_string(cand));
    return 0;
}

/* ---- the recount ---- */

typedef struct recount {
    const char *ns;
    const api_resource *res;
    quota_set *qs;
    json_t *used[MAX_QUOTAS]; /* per quota: name -> milli */
} recount;

static void add_matching(recount *rc, const json_t *obj)
{
    for (size_t i = 0; i < rc->qs->n; i++)
        if (rc->used[i] && quota_matches(rc->qs->q[i], rc->res->group, rc->res->plural, obj))
            quota_usage_add(rc->used[i], rc->res->group, rc->res->plural, obj);
}

static bool count_obj(const json_t *obj, void *arg)
{
    recount *rc = arg;
    const char *ns = ty_jmeta(obj, "namespace");

    if (ns && !strcmp(ns, rc->ns))
        add_matching(rc, obj);
    return false;
}

/* Ends the reservations that are too old, and those of namespace ns (NULL:
 * every one) whose object is stored now (under lock). */
static void prune(const api_lookup *lk, const char *ns)
{
    int64_t now = ty_now_ms();

    for (size_t i = 0; i < nresv;) {
        json_t *o = NULL;
        if (resv[i].until_ms > now && (!ns || !strcmp(resv[i].ns, ns)))
            o = lk->get(lk->ctx, resv[i].res, resv[i].ns, resv[i].name);
        if (resv[i].until_ms <= now || o) {
            json_decref(o);
            drop(i);
            continue;
        }
        i++;
    }
}

static void fmt_list(char *out, size_t len, const json_t *usage, const char *const *names,
                     size_t n)
{
    size_t used = 0;

    out[0] = 0;
    for (size_t i = 0; i < n && used < len; i++) {
        char q[64];
        quota_format(names[i], json_integer_value(json_object_get(usage, names[i])), q, sizeof(q));
        used += (size_t)snprintf(out + used, len - used, "%s%s=%s", i ? "," : "", names[i], q);
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The hard names of q over the limit with delta added to used: into names
 * (sorted), their count. */
static size_t exceeded(const json_t *q, const json_t *used, const json_t *delta,
                       const char **names, size_t cap, json_t *hard_milli)
{
    const json_t *hard = json_object_get(json_object_get(q, "spec"), "hard");
    const char *k;
    json_t *v;
    size_t n = 0;

    json_object_foreach((json_t *)hard, k, v) {
        int64_t h, d = json_integer_value(json_object_get(delta, k));
        if (!json_object_get(delta, k) || d <= 0 || quota_parse(v, &h, NULL) < 0)
            continue;
        json_object_set_new(hard_milli, k, json_integer(h));
        if (json_integer_value(json_object_get(used, k)) + d > h && n < cap)
            names[n++] = k;
    }
    qsort(names, n, sizeof(names[0]), cmp_name);
    return n;
}

/* Whether q limits any name that objects of res make up (a pod with no
 * cpu request still meets a quota on requests.cpu: it must specify one). */
static bool concerns(const json_t *q, const api_resource *res)
{
    const char *k;
    json_t *v;
    char group[128], plural[128];

    json_object_foreach(json_object_get(json_object_get(q, "spec"), "hard"), k, v)
        if (quota_key_resource(k, group, sizeof(group), plural, sizeof(plural)) == 0 &&
            !strcmp(group, res->group) && !strcmp(plural, res->plural))
            return true;
    return false;
}

static int forbid(ty_error *err, const api_resource *res, const char *name, const char *fmt,
                  const char *a, const char *b)
{
    char gr[128];

    api_group_resource(res, gr, sizeof(gr));
    return ty_seterr(err, TY_EFORBIDDEN, "%s \"%s\" is forbidden: %s%s%s", gr, name ? name : "",
                     fmt, a, b);
}

/* Checks obj (usage delta) against every quota of qs, under lock: the
 * recount, then each quota in name order; the first one exceeded refuses. */
static int check_locked(const api_lookup *lk, const api_resource *res, const json_t *obj,
                        quota_set *qs, const json_t *delta, ty_error *err)
{
    const char *ns = ty_jmeta(obj, "namespace"), *name = ty_jmeta(obj, "name");
    recount rc = {.ns = ns, .res = res, .qs = qs};
    int rcode = 0;

    for (size_t i = 0; i < qs->n; i++)
        rc.used[i] = json_object();
    prune(lk, ns);
    lk->count(lk->ctx, res, count_obj, &rc);
    /* MPIJob v1 and v2beta1: one resource in two schemas, one count */
    if (api_other_version(res))
        lk->count(lk->ctx, api_other_version(res), count_obj, &rc);
    for (size_t i = 0; i < nresv; i++)
        if (canon(resv[i].res) == canon(res) && !strcmp(resv[i].ns, ns))
            add_matching(&rc, resv[i].obj);
    for (size_t i = 0; i < qs->n && rcode == 0; i++) {
        const char *names[64];
        json_t *hard = json_object();
        size_t n;
        if (!rc.used[i] || !hard) {
            json_decref(hard);
            rcode = ty_seterr(err, TY_EINTERNAL, "out of memory");
            break;
        }
        if ((n = exceeded(qs->q[i], rc.used[i], delta, names, 64, hard)) > 0) {
            char req[512], used[512], lim[512], text[1600];
            fmt_list(req, sizeof(req), delta, names, n);
            fmt_list(used, sizeof(used), rc.used[i], names, n);
            fmt_list(lim, sizeof(lim), hard, names, n);
            snprintf(text, sizeof(text), "%s, requested: %s, used: %s, limited: %s",
                     ty_jmeta(qs->q[i], "name"), req, used, lim);
            rcode = forbid(err, res, name, "exceeded quota: ", text, "");
        }
        json_decref(hard);
    }
    for (size_t i = 0; i < qs->n; i++)
        cache_put(res, qs->q[i], rc.used[i]);
    return rcode;
}

/* Whether every quota of qs has a count that obj's usage (delta) fits in
 * (under lock). */
static bool fits_counted(const api_resource *res, quota_set *qs, const json_t *delta)
{
    for (size_t i = 0; i < qs->n; i++) {
        const char *names[64];
        json_t *hard = json_object();
        cached *c = cache_find(res, qs->q[i]);
        bool fits = c && hard && exceeded(qs->q[i], c->used, delta, names, 64, hard) == 0;
        json_decref(hard);
        if (!fits)
            return false;
    }
    return true;
}

/* obj (usage delta) was admitted: its usage counts in qs's counts. */
static void charge_counted(const api_resource *res, quota_set *qs, const json_t *delta)
{
    const char *k;
    json_t *v;

    for (size_t i = 0; i < qs->n; i++) {
        cached *c = cache_find(res, qs->q[i]);
        if (!c)
            continue;
        json_object_foreach((json_t *)delta, k, v)
            json_object_set_new(c->used, k, json_integer(json_integer_value(
                                                json_object_get(c->used, k)) +
                                            json_integer_value(v)));
    }
}

/* Whether obj's name is taken: its create fails (AlreadyExists) and uses
 * nothing (a controller's create that raced an earlier one). */
static bool name_taken(const api_lookup *lk, const api_resource *res, const json_t *obj)
{
    json_t *stored = lk->get(lk->ctx, res, ty_jmeta(obj, "namespace"), ty_jmeta(obj, "name"));

    json_decref(stored);
    return stored != NULL;
}

/* What a reservation keeps of obj: what its usage and the scopes read (a
 * count/<resource> of a big custom object needs none of its spec). */
static json_t *slim_copy(const api_resource *res, const json_t *obj)
{
    json_t *o = json_pack("{s:{s:s, s:s}}", "metadata", "namespace",
                          ty_jmeta(obj, "namespace"), "name", ty_jmeta(obj, "name"));

    if (o && !*res->group && (res == &api_pod || res == &api_service || res == &api_pvc)) {
        json_object_set_new(o, "spec", json_deep_copy(json_object_get(obj, "spec")));
        if (json_object_get(obj, "status"))
            json_object_set_new(o, "status", json_deep_copy(json_object_get(obj, "status")));
    }
    return o;
}

static void reserve_locked(const api_resource *res, const json_t *obj)
{
    const char *ns = ty_jmeta(obj, "namespace"), *name = ty_jmeta(obj, "name");
    reservation r;

    if (!name || !*name)
        return;
    if (nresv == MAX_RESERVATIONS)
        return; /* refused before: check_locked counts only what it holds */
    r = (reservation){.ns = strdup(ns), .name = strdup(name), .res = res,
                      .obj = slim_copy(res, obj), .until_ms = ty_now_ms() + QUOTA_RESERVE_MS};
    if (!r.ns || !r.name || !r.obj) {
        free(r.ns);
        free(r.name);
        json_decref(r.obj);
        return;
    }
    resv[nresv++] = r;
}

int quota_admit(const api_lookup *lk, const api_resource *res, const json_t *obj,
                ty_error *err)
{
    const char *ns = ty_jmeta(obj, "namespace"), *name = ty_jmeta(obj, "name");
    json_t *delta;
    quota_set qs, rel = {0};
    int rc = 0;

    if (!res->namespaced || !ns || !*ns)
        return 0;
    quotas_of(lk, ns, &qs);
    if (!qs.n) /* what may be made only where a quota covers it (api/quota_limited.h) */
        return quota_limited_check(res, obj, qs.q, 0, err);
    if (!(delta = json_object())) {
        quotas_free(&qs);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    quota_usage_add(delta, res->group, res->plural, obj);
    /* the quotas this object counts against; a pod must also say what they
     * limit (kube's backward-compatible rule for cpu and memory) */
    rel.ns = ns;
    for (size_t i = 0; i < qs.n; i++) {
        char missing[512];
        if (!quota_matches(qs.q[i], res->group, res->plural, obj) || !concerns(qs.q[i], res))
            continue;
        if (res == &api_pod && quota_pod_missing(qs.q[i], obj, missing, sizeof(missing)) < 0) {
            char text[600];
            snprintf(text, sizeof(text), "%s: must specify %s", ty_jmeta(qs.q[i], "name"),
                     missing);
            rc = forbid(err, res, name, "failed quota: ", text, "");
            break;
        }
        rel.q[rel.n++] = json_incref(qs.q[i]);
    }
    /* after "must specify", as kube-apiserver */
    if (rc == 0)
        rc = quota_limited_check(res, obj, qs.q, qs.n, err);
    if (rc == 0 && rel.n) {
        pthread_mutex_lock(&lock);
        if (nresv == MAX_RESERVATIONS)
            prune(lk, NULL);
        if (nresv == MAX_RESERVATIONS)
            rc = forbid(err, res, name, "status unknown for quota: ", ty_jmeta(rel.q[0], "name"),
                        ", too many creates waiting to be stored");
        else if (fits_counted(res, &rel, delta) ||
                 (rc = check_locked(lk, res, obj, &rel, delta, err)) == 0) {
            if (!name_taken(lk, res, obj)) {
                charge_counted(res, &rel, delta);
                reserve_locked(res, obj);
            }
        }
        pthread_mutex_unlock(&lock);
    }
    quotas_free(&rel);
    quotas_free(&qs);
    json_decref(delta);
    return rc;
}
