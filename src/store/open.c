/* open.c - opening the object store (loading SQLite's rows into the index,
 * seeding the default namespaces and queue) and closing it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/metrics.h"
#include "store/store_int.h"
#include "store/admit.h"

#define DEFAULT_HISTORY_EVENTS 250000
#define DEFAULT_HISTORY_BYTES (40u * 1024u * 1024u)
#define DEFAULT_HISTORY_TREES 1024

/* Rows of a resource past its first LOAD_DICT_AT are compressed as they
 * load, with a dictionary made of every LOAD_SAMPLE_EVERY-th of those
 * first rows (the others give its statistics), and keep no plain text:
 * otherwise a reopened big store would hold all its plain texts until the
 * sweeper's dictionaries and the reaper came round, most of its peak RSS.
 * The sweeper makes better dictionaries later, from samples spread over the
 * whole index; what was compressed with the load's keeps it. */
#define LOAD_DICT_AT 16
#define LOAD_SAMPLE_EVERY 4
#define LOAD_SAMPLE_MAX 16384

typedef struct loader {
    ty_store *s;
    store_zdict **dicts; /* the dictionaries rows name, in id order */
    size_t ndicts;
    /* rows to set aside once the load is done, and why (each reason
     * names the object) */
    int64_t *aside;
    char **why;
    size_t naside;
} loader;

/* Notes row id to be set aside (quarantine.c): the open goes on without
 * it. -1 only when memory ran out. */
static int set_aside(loader *l, int64_t id, ty_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int set_aside(loader *l, int64_t id, ty_error *err, const char *fmt, ...)
{
    int64_t *ids = realloc(l->aside, (l->naside + 1) * sizeof(*ids));
    char **why = ids ? realloc(l->why, (l->naside + 1) * sizeof(*why)) : NULL;
    char *text = NULL;
    va_list ap;

    if (ids)
        l->aside = ids;
    if (why)
        l->why = why;
    va_start(ap, fmt);
    if (!why || vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (!text)
        return ty_seterr(err, TY_EINTERNAL, "store: out of memory");
    l->aside[l->naside] = id;
    l->why[l->naside++] = text;
    return 0;
}

/* A dictionary's row: kept for the rows that name it, and its resource's
 * dictionary for what is written next (the newest of the resource's). */
static int load_dict(void *arg, int64_t id, const char *resource, size_t objects,
                     const void *data, size_t len, ty_error *err)
{
    loader *l = arg;
    store_res *r = index_add(&l->s->ix, resource);
    store_zdict **grown = realloc(l->dicts, (l->ndicts + 1) * sizeof(*l->dicts));
    store_zdict *d;

    if (grown)
        l->dicts = grown;
    if (!r || !grown)
        return ty_seterr(err, TY_EINTERNAL, "store: out of memory");
    if (!(d = zdict_new(data, len, id, objects)))
        return ty_seterr(err, TY_EINTERNAL,
                         "store: cannot load dictionary %lld of %s: not a dictionary zstd takes",
                         (long long)id, resource);
    d->saved = true;
    l->dicts[l->ndicts++] = d;
    if (res_set_zdict(l->s, r, zdict_ref(d)) < 0)
        return ty_seterr(err, TY_EINTERNAL, "store: out of memory");
    if (id > l->s->zdict_seq)
        l->s->zdict_seq = id;
    return 0;
}

static store_zdict *find_dict(const loader *l, int64_t id)
{
    size_t lo = 0, hi = l->ndicts;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->dicts[mid]->id == id)
            return l->dicts[mid];
        if (l->dicts[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void load_compress(loader *l, store_res *r, store_obj *o)
{
    size_t count = res_count(r);
    store_zdict *d;

    if (r->zdict) {
        obj_compress(o, r->zdict);
        free(obj_take_text_if_refs(o, 2)); /* the loader's and the index's */
        return;
    }
    if (count > LOAD_DICT_AT)
        return; /* no dictionary came of its first rows: the sweeper's turn */
    /* every LOAD_SAMPLE_EVERY-th row for the content, the rest for the
     * statistics (zdict_samples) */
    if (zsamples_add(&r->zsamples, (count - 1) % LOAD_SAMPLE_EVERY == 0,
                     atomic_load_explicit(&o->text, memory_order_relaxed),
                     o->len < LOAD_SAMPLE_MAX ? o->len : LOAD_SAMPLE_MAX))
        return;
    if (count < LOAD_DICT_AT || !r->zsamples.ncontent)
        return;
    if ((d = zdict_make(&r->zsamples, l->s->zdict_seq + 1, count)) &&
        res_set_zdict(l->s, r, d) == 0)
        l->s->zdict_seq++;
    zsamples_clear(&r->zsamples);
}

/* One row into the index as text alone (compressed, past a resource's
 * first rows). Of its JSON only the metadata is parsed (for the controller
 * owner), the members before it scanned; a row that is not an object fails
 * the open. Keeping a tree, every object of a big store would get one at
 * start (25 KB for a 2.6 KB pod: gigabytes for the 150,000-pod benchmark's
 * store) that would stay until the sweeper came by. */
static int load_row(void *arg, int64_t id, const char *resource, const char *ns,
                    const char *name, uint64_t rv, const void *data, size_t len, int64_t dict,
                    size_t rv_at, ty_error *err)
{
    loader *l = arg;
    ty_store *s = l->s;
    store_zdict *zd = dict ? find_dict(l, dict) : NULL;
    size_t tlen = len;
    char *inflated = dict && zd ? zdict_inflate(zd, data, len, rv_at, rv, &tlen) : NULL;
    const char *text = dict ? inflated : data;
    json_t *json = text ? obj_text_metadata(text, tlen) : NULL;
    const char *bad = !json ? NULL : obj_text_unloadable(text, tlen);
    store_res *r = index_add(&s->ix, resource);
    idx_node *node = res_node_new(), *had;
    owner_set *owner = NULL;
    const char *uid;
    store_obj *o;

    /* Puts do not write the stored counter (see db.c): their rows do. A
     * row set aside counts too: its version was handed out. */
    if (rv > s->rv)
        s->rv = rv;
    if (!r || !node) {
        free(node);
        free(inflated);
        json_decref(json);
        return ty_seterr(err, TY_EINTERNAL, "store: cannot load %s %s/%s: out of memory",
                         resource, ns, name);
    }
    if (text && !json && !(bad = obj_text_unloadable(text, tlen)))
        bad = "not one JSON object (damaged, or nested too deeply)";
    if (!text || bad) {
        int rc = set_aside(l, id, err, "%s %s/%s (rv %llu): %s", resource, ns, name,
                           (unsigned long long)rv,
                           bad ? bad
                           : !zd ? "its row names a dictionary that is not there"
                                 : "its compressed text does not decompress");
        free(node);
        free(inflated);
        json_decref(json);
        return rc;
    }
    /* Two rows for one object (two servers on one data directory): the
     * newest version stays, the other is set aside. */
    if ((had = res_lookup(r, ns, name))) {
        store_obj *old = had->obj;
        if (old->rv > rv) {
            free(node);
            free(inflated);
            json_decref(json);
            return set_aside(l, id, err,
                             "%s %s/%s (rv %llu): a second row for it, row %lld (rv %llu), is "
                             "newer and was kept",
                             resource, ns, name, (unsigned long long)rv, (long long)old->row,
                             (unsigned long long)old->rv);
        }
        if (set_aside(l, old->row, err,
                      "%s %s/%s (rv %llu): a second row for it, row %lld (rv %llu), is newer "
                      "and was kept",
                      resource, ns, name, (unsigned long long)old->rv, (long long)id,
                      (unsigned long long)rv) < 0) {
            free(node);
            free(inflated);
            json_decref(json);
            return -1;
        }
        store_obj_unref(res_remove(r, ns, name));
    }
    o = zd ? obj_new_z(rv, ns, name, tlen, data, len, rv_at, zd, err)
           : obj_new_text(rv, ns, name, text, tlen, err);
    free(inflated);
    if (!o) {
        json_decref(json);
        free(node);
        return -1;
    }
    o->row = id;
    uid = obj_controller_uid(json);
    if (uid && !(owner = res_owner_reserve(r, uid))) {
        json_decref(json);
        free(node);
        store_obj_unref(o);
        return ty_seterr(err, TY_EINTERNAL, "store: out of memory");
    }
    json_decref(json);
    res_insert(r, node, o);
    res_owner_link(r, node, owner);
    res_owner_unreserve(r, owner);
    if (!zd)
        load_compress(l, r, o);
    store_obj_unref(o);
    return 0;
}

/* Moves the rows the load could not take into the quarantine table, says
 * so in the log, and counts what is there for /metrics. */
static int quarantine(loader *l, const char *dir, ty_error *err)
{
    long long total;

    if (db_quarantine(&l->s->db, l->aside, l->why, l->naside, err) < 0)
        return -1;
    for (size_t i = 0; i < l->naside; i++)
        ty_warn("store: row %lld set aside, not loaded: %s", (long long)l->aside[i], l->why[i]);
    total = db_quarantine_count(&l->s->db);
    if (l->naside)
        ty_warn("store: %zu rows set aside at this open, %lld in all; "
                "`trainyard store quarantine --data-dir %s` lists them",
                l->naside, total, dir);
    ty_metric_declare("trainyard_store_quarantined_rows", TY_GAUGE,
                      "Rows of the data directory the store set aside at open, unable to load "
                      "them (trainyard store quarantine lists them).");
    ty_metric_set("trainyard_store_quarantined_rows", NULL, total > 0 ? (double)total : 0);
    return 0;
}

static int ensure_in(ty_store *s, const char *resource, const char *ns, const char *name,
                     json_t *obj, ty_error *err)
{
    store_obj *o = store_get(s, resource, ns, name, NULL);

    if (!o)
        o = store_create(s, resource, ns, obj, err);
    json_decref(obj);
    store_obj_unref(o);
    return o ? 0 : -1;
}

static int ensure(ty_store *s, const char *resource, const char *name, json_t *obj,
                  ty_error *err)
{
    return ensure_in(s, resource, "", name, obj, err);
}

/* The quota that lets kube-system have pods of the system priority
 * classes, which the quota admission's default keeps out of namespaces
 * without one (api/quota_limited.h); GKE's kube-system has such a quota. */
static json_t *critical_quota_json(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}, s:{s:[{s:s, s:s, s:[s, s]}]}}}",
                     "apiVersion", "v1", "kind", "ResourceQuota", "metadata", "name",
                     "system-critical-pods", "namespace", "kube-system", "spec", "hard", "pods",
                     "1G", "scopeSelector", "matchExpressions", "scopeName", "PriorityClass",
                     "operator", "In", "values", "system-node-critical",
                     "system-cluster-critical");
}

static json_t *namespace_json(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[s]}, s:{s:s}}", "apiVersion", "v1",
                     "kind", "Namespace", "metadata", "name", name, "labels",
                     "kubernetes.io/metadata.name", name, "spec", "finalizers", "kubernetes",
                     "status", "phase", "Active");
}

static int seed(ty_store *s, ty_error *err)
{
    json_t *queue = json_pack("{s:s, s:s, s:{s:s}, s:{s:i, s:b}, s:{s:s}}", "apiVersion",
                              "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata",
                              "name", "default", "spec", "weight", 1, "reclaimable", 1,
                              "status", "state", "Open");

    if (ensure(s, "namespaces", "default", namespace_json("default"), err) < 0 ||
        ensure(s, "namespaces", "kube-system", namespace_json("kube-system"), err) < 0 ||
        ensure(s, "queues.scheduling.volcano.sh", "default", queue, err) < 0 ||
        ensure_in(s, "resourcequotas", "kube-system", "system-critical-pods",
                  critical_quota_json(), err) < 0)
        return -1;
    /* Every namespace has its id block (api/nsrange.h): the seeded ones and
     * those made before blocks existed get theirs here. */
    return store_admit_bootstrap(s, err);
}

ty_store *store_open(const char *dir, ty_error *err)
{
    return store_open_with(dir, NULL, err);
}

ty_store *store_open_with(const char *dir, const store_options *opts, ty_error *err)
{
    ty_store *s = calloc(1, sizeof(*s));
    size_t events = opts && opts->history_events ? opts->history_events : DEFAULT_HISTORY_EVENTS;
    size_t bytes = opts && opts->history_bytes ? opts->history_bytes : DEFAULT_HISTORY_BYTES;
    size_t trees = opts && opts->history_trees ? opts->history_trees : DEFAULT_HISTORY_TREES;
    loader ld = {.s = s};
    int rc;

    if (!s) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->write_mu, NULL);
    pthread_mutex_init(&s->queue_mu, NULL);
    pthread_mutex_init(&s->zdicts_mu, NULL);
    ty_rwlock_init(&s->index_rw);
    if (db_open(&s->db, dir, &s->rv, err) < 0)
        goto error;
    rc = db_load(&s->db, load_dict, load_row, &ld, err);
    if (rc == 0)
        rc = quarantine(&ld, dir, err);
    for (size_t i = 0; i < ld.ndicts; i++)
        zdict_unref(ld.dicts[i]);
    free(ld.dicts);
    for (size_t i = 0; i < ld.naside; i++)
        free(ld.why[i]);
    free(ld.why);
    free(ld.aside);
    if (rc < 0)
        goto error;
    /* History starts now: a watch from before this open gets TY_EGONE. */
    s->hub = hub_new(s->rv, events, bytes, trees);
    if (!s->hub) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (seed(s, err) < 0 || sweep_start(s, err) < 0)
        goto error;
    return s;
error:
    store_close(s);
    return NULL;
}

void store_close(ty_store *s)
{
    store_commit_stats c;
    store_mem m;

    if (!s)
        return;
    sweep_stop(s);
    commit_drain(s);
    store_commit_stats_get(s, &c);
    if (c.transactions) {
        store_memory(s, &m);
        ty_info("store: %llu writes in %llu transactions; commit section held %.3f s, "
                "%.3f s of it on the CPU",
                (unsigned long long)c.writes, (unsigned long long)c.transactions, c.held_s,
                c.held_cpu_s);
        ty_info("store: %zu objects: %zu with trees, %zu with plain text (%.1f MB), "
                "%zu compressed (%.1f MB), %zu views (%.1f MB)",
                m.objects, m.trees, m.plain, m.plain_bytes / 1e6, m.compressed,
                m.compressed_bytes / 1e6, m.views, m.view_bytes / 1e6);
    }
    if (s->hub)
        hub_shutdown(s->hub);
    db_close(&s->db);
    index_free(&s->ix);
    ty_rwlock_destroy(&s->index_rw);
    pthread_mutex_destroy(&s->write_mu);
    pthread_mutex_destroy(&s->queue_mu);
    pthread_mutex_destroy(&s->zdicts_mu);
    free(s->zdicts);
    ty_buf_free(&s->dump);
    free(s->sweep_ns);
    free(s->sweep_name);
    free(s);
}

json_t *store_resources(ty_store *s)
{
    json_t *names = json_array();

    ty_rwlock_rdlock(&s->index_rw);
    for (size_t i = 0; i < s->ix.n; i++)
        if (res_count(s->ix.res[i]))
            json_array_append_new(names, json_string(s->ix.res[i]->name));
    ty_rwlock_rdunlock(&s->index_rw);
    return names;
}
