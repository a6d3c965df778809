/* gc_graph.c - the garbage collector's graph (see gc.c): a node per uid
 * present in the store or named as an owner, with its owners and dependents,
 * kept from watch events; the queue of nodes to reconcile and the retry
 * list. */
#include <stdlib.h>
#include <string.h>

#include "base/jsonget.h"
#include "base/timeutil.h"
#include "controller/gc_int.h"

/* ---- graph ---- */

static size_t hash_uid(const char *s)
{
    size_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static gc_node *node_find(ty_gc *g, const char *uid, size_t h)
{
    for (gc_node *n = g->buckets[h & (g->nbuckets - 1)]; n; n = n->hnext)
        if (n->hash == h && !strcmp(n->uid, uid))
            return n;
    return NULL;
}

static void rehash(ty_gc *g)
{
    size_t nb = g->nbuckets * 2;
    gc_node **b = calloc(nb, sizeof(*b));

    if (!b)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < g->nbuckets; i++) {
        gc_node *n = g->buckets[i], *next;
        for (; n; n = next) {
            next = n->hnext;
            n->hnext = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
        }
    }
    free(g->buckets);
    g->buckets = b;
    g->nbuckets = nb;
}

static gc_node *node_get(ty_gc *g, const char *uid)
{
    size_t h = hash_uid(uid), len = strlen(uid), b;
    gc_node *n = node_find(g, uid, h);

    if (n)
        return n;
    if (!(n = calloc(1, sizeof(*n) + len + 1)))
        return NULL;
    memcpy(n->uid, uid, len + 1);
    n->hash = h;
    if (g->nnodes >= g->nbuckets)
        rehash(g);
    b = h & (g->nbuckets - 1);
    n->hnext = g->buckets[b];
    g->buckets[b] = n;
    g->nnodes++;
    return n;
}

static void node_destroy(gc_node *n)
{
    free(n->name);
    free(n->owners);
    free(n->deps);
    free(n);
}

/* Frees a node nobody needs: absent, owning nothing, not waiting for work. */
void gc_node_release(ty_gc *g, gc_node *n)
{
    gc_node **p;

    if (n->present || n->ndeps || n->nowners || n->queued || n->retry)
        return;
    for (p = &g->buckets[n->hash & (g->nbuckets - 1)]; *p != n; p = &(*p)->hnext)
        ;
    *p = n->hnext;
    g->nnodes--;
    node_destroy(n);
}

static void enqueue(ty_gc *g, gc_node *n)
{
    if (n->queued)
        return;
    n->queued = true;
    n->qnext = NULL;
    if (g->qtail)
        g->qtail->qnext = n;
    else
        g->qhead = n;
    g->qtail = n;
}

gc_node *gc_dequeue(ty_gc *g)
{
    gc_node *n = g->qhead;

    if (!n)
        return NULL;
    g->qhead = n->qnext;
    if (!g->qhead)
        g->qtail = NULL;
    n->queued = false;
    return n;
}

void gc_retry_later(ty_gc *g, gc_node *n)
{
    if (n->retry)
        return;
    if (g->nretries == g->capretries) {
        size_t cap = g->capretries ? g->capretries * 2 : 16;
        gc_node **r = realloc(g->retries, cap * sizeof(*r));
        if (!r)
            return;
        g->retries = r;
        g->capretries = cap;
    }
    if (!g->nretries)
        g->retry_at = ty_now_ms() + RETRY_MS;
    g->retries[g->nretries++] = n;
    n->retry = true;
}

void gc_requeue_retries(ty_gc *g)
{
    for (size_t i = 0; i < g->nretries; i++) {
        g->retries[i]->retry = false;
        enqueue(g, g->retries[i]);
    }
    g->nretries = 0;
}

static void dep_add(gc_node *owner, gc_node *dep)
{
    if (owner->ndeps == owner->capdeps) {
        size_t cap = owner->capdeps ? owner->capdeps * 2 : 4;
        gc_node **d = realloc(owner->deps, cap * sizeof(*d));
        if (!d)
            return;
        owner->deps = d;
        owner->capdeps = cap;
    }
    owner->deps[owner->ndeps++] = dep;
}

static void dep_remove(gc_node *owner, gc_node *dep)
{
    for (size_t i = 0; i < owner->ndeps; i++) {
        if (owner->deps[i] == dep) {
            owner->deps[i] = owner->deps[--owner->ndeps];
            return;
        }
    }
}

bool gc_is_namespace(const gc_node *n)
{
    return n->resource && !strcmp(n->resource, NS_RESOURCE);
}

/* Owners waiting on their dependents (Foreground) hear of every change to
 * one, and of a namespace's contents going. */
static void wake_owners(ty_gc *g, gc_node *n)
{
    for (size_t i = 0; i < n->nowners; i++)
        if (n->owners[i].node->fg)
            enqueue(g, n->owners[i].node);
}

static void drop_owners(ty_gc *g, gc_node *n)
{
    gc_owner *old = n->owners;
    size_t nold = n->nowners;

    n->owners = NULL;
    n->nowners = 0;
    for (size_t i = 0; i < nold; i++) {
        dep_remove(old[i].node, n);
        gc_node_release(g, old[i].node);
    }
    free(old);
}

static bool is_event_kind(const char *kind)
{
    return kind && strcmp(kind, "Event") == 0;
}

/* Replaces n's owner edges with those of refs when they differ. */
static void set_owners(ty_gc *g, gc_node *n, const json_t *refs)
{
    size_t count = json_array_size(refs), i, k = 0;
    gc_owner *next = count ? calloc(count, sizeof(*next)) : NULL;
    bool same = true;
    json_t *r;

    if (count && !next)
        return;
    json_array_foreach(refs, i, r) {
        const char *uid = json_string_value(json_object_get(r, "uid"));
        gc_node *o;
        /* Events are not in the graph (see gc_ignored()): one named as an owner
         * would look absent, so it does not count as one. */
        if (is_event_kind(json_string_value(json_object_get(r, "kind"))))
            continue;
        o = uid && *uid ? node_get(g, uid) : NULL;
        if (!o || o == n)
            continue;
        next[k].node = o;
        next[k].block = json_is_true(json_object_get(r, "blockOwnerDeletion"));
        if (k >= n->nowners || n->owners[k].node != o || n->owners[k].block != next[k].block)
            same = false;
        k++;
    }
    if (same && k == n->nowners) {
        free(next);
        return;
    }
    wake_owners(g, n);
    drop_owners(g, n);
    n->owners = next;
    n->nowners = k;
    for (i = 0; i < k; i++)
        dep_add(next[i].node, n);
}

static bool list_has(const json_t *list, const char *s)
{
    size_t i;
    json_t *v;

    json_array_foreach(list, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), s))
            return true;
    return false;
}

static void set_str(char **dst, const char *src)
{
    if (*dst && !strcmp(*dst, src))
        return;
    free(*dst);
    *dst = strdup(src);
}

/* s held once in g->names (NULL when out of memory). */
static const char *intern(ty_gc *g, const char *s)
{
    char *held = strmap_get(&g->names, s);

    if (held || !(held = strdup(s)))
        return held;
    if (strmap_put(&g->names, held, held) < 0) {
        free(held);
        return NULL;
    }
    return held;
}

static gc_node *find_namespace(ty_gc *g, const char *name);

/* Applies one object state (or its deletion) to the graph: what the graph
 * knows of an object is in its metadata, and for a Namespace its
 * spec.finalizers (spec_fins). */
static void observe(ty_gc *g, const char *resource, const json_t *meta, const json_t *spec_fins,
                    bool deleted)
{
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const json_t *fins = json_object_get(meta, "finalizers");
    const char *res_held = intern(g, resource), *ns_held = intern(g, ty_jstr(meta, "namespace"));
    gc_node *n;

    if (!uid || !res_held || !ns_held || !(n = node_get(g, uid)))
        return;
    n->resource = res_held;
    n->ns = ns_held;
    set_str(&n->name, ty_jstr(meta, "name"));
    if (deleted) {
        gc_node *nsn = *n->ns ? find_namespace(g, n->ns) : NULL;
        n->present = n->deleting = n->fg = n->orphan = n->ns_finalizer = false;
        for (size_t i = 0; i < n->ndeps; i++)
            enqueue(g, n->deps[i]); /* they may have lost their last owner */
        wake_owners(g, n);
        drop_owners(g, n);
        if (nsn)
            enqueue(g, nsn);
        if (gc_is_namespace(n))
            enqueue(g, n); /* its contents go even without the finalizer */
        gc_node_release(g, n);
        return;
    }
    n->present = true;
    n->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
    n->fg = list_has(fins, FG_FINALIZER);
    n->orphan = list_has(fins, ORPHAN_FINALIZER);
    n->ns_finalizer = gc_is_namespace(n) && list_has(spec_fins, NS_FINALIZER);
    if (!n->deleting)
        n->delete_sent = false;
    set_owners(g, n, json_object_get(meta, "ownerReferences"));
    wake_owners(g, n);
    if (n->nowners || (n->deleting && (n->fg || n->orphan || gc_is_namespace(n))))
        enqueue(g, n);
}

/* Namespaces being deleted are few; a scan of the graph's namespace nodes by
 * name would need another index, so look the namespace up in the store. */
static gc_node *find_namespace(ty_gc *g, const char *name)
{
    ty_obj *o = kc_get(g->s, NS_RESOURCE, "", name, NULL);
    const json_t *meta;
    gc_node *n = NULL;

    if (!o)
        return NULL;
    meta = json_object_get(ty_obj_json(o), "metadata");
    if (json_object_get(meta, "deletionTimestamp")) {
        const char *uid = ty_jstr(meta, "uid");
        n = node_find(g, uid, hash_uid(uid));
    }
    ty_obj_unref(o);
    return n;
}

void gc_graph_clear(ty_gc *g)
{
    for (size_t i = 0; i < g->nbuckets; i++) {
        gc_node *n = g->buckets[i], *next;
        for (; n; n = next) {
            next = n->hnext;
            node_destroy(n);
        }
        g->buckets[i] = NULL;
    }
    g->nnodes = 0;
    g->qhead = g->qtail = NULL;
    g->nretries = 0;
    strmap_free_values(&g->names);
}

/* Events are left out of the graph, as Kubernetes' collector leaves them
 * out (its default ignored resources): more than half of all objects in a
 * busy cluster, owning nothing. One going still wakes its namespace when
 * that is being deleted. */
bool gc_ignored(const char *resource)
{
    return strcmp(resource, "events") == 0;
}

/* Only a Namespace is parsed whole: of everything else the metadata alone
 * is read, and no tree is kept (a resync looks at every object, and a tree
 * left on each would hold memory for the whole store until the sweeper
 * came by). */
void gc_observe_obj(ty_gc *g, const char *resource, const ty_obj *o, bool deleted)
{
    const json_t *obj;
    json_t *meta;
    const char *ns, *name;
    gc_node *nsn;

    if (gc_ignored(resource)) {
        ty_obj_key(o, &ns, &name);
        if (deleted && *ns && (nsn = find_namespace(g, ns)))
            enqueue(g, nsn);
        return;
    }
    if (strcmp(resource, NS_RESOURCE) == 0) {
        obj = ty_obj_json(o);
        observe(g, resource, json_object_get(obj, "metadata"),
                json_object_get(json_object_get(obj, "spec"), "finalizers"), deleted);
        return;
    }
    meta = ty_obj_metadata(o);
    observe(g, resource, meta, NULL, deleted);
    json_decref(meta);
}
