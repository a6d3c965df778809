/* index.c - the in-memory index: resource buckets, each an AVL tree ordered
 * by (namespace, name), its nodes also in a hash table.
 *
 * A balanced tree rather than a sorted array keeps a write O(log n) however
 * many objects a resource holds, and still lets a list walk keys in order from
 * any position (continue tokens, one namespace). Each node counts its subtree
 * so that a list page can say how many items remain in O(log n). Point
 * lookups (every write, every get) go through the hash table instead: one
 * probe or two, against a strcmp and a likely cache miss at each of the
 * tree's levels.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

/* ---- resource buckets ---- */

static int res_cmp_name(const void *key, const void *elem)
{
    return strcmp(key, (*(store_res *const *)elem)->name);
}

store_res *index_find(const store_index *ix, const char *resource)
{
    store_res **hit;

    if (!ix->n)
        return NULL;
    hit = bsearch(resource, ix->res, ix->n, sizeof(*ix->res), res_cmp_name);
    return hit ? *hit : NULL;
}

store_res *index_add(store_index *ix, const char *resource)
{
    store_res *r = index_find(ix, resource);
    size_t pos = 0;

    if (r)
        return r;
    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 32;
        store_res **grown = realloc(ix->res, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        ix->res = grown;
        ix->cap = cap;
    }
    r = calloc(1, sizeof(*r));
    if (!r || !(r->name = strdup(resource))) {
        free(r);
        return NULL;
    }
    /* Resources are few (tens) and added rarely: insertion sort is plenty. */
    while (pos < ix->n && strcmp(ix->res[pos]->name, resource) < 0)
        pos++;
    memmove(&ix->res[pos + 1], &ix->res[pos], (ix->n - pos) * sizeof(*ix->res));
    ix->res[pos] = r;
    ix->n++;
    return r;
}

static void node_free_all(idx_node *n)
{
    if (!n)
        return;
    node_free_all(n->left);
    node_free_all(n->right);
    store_obj_unref(n->obj);
    free(n);
}

static void owners_free_all(store_res *r)
{
    for (size_t i = 0; i < r->owners_cap; i++) {
        owner_set *set = atomic_load_explicit(&r->owners[i], memory_order_relaxed), *next;
        for (; set; set = next) {
            next = set->chain;
            free(set);
        }
    }
    free((void *)r->owners);
}

void index_free(store_index *ix)
{
    for (size_t i = 0; i < ix->n; i++) {
        node_free_all(ix->res[i]->root);
        free(ix->res[i]->slots);
        owners_free_all(ix->res[i]);
        zdict_unref(ix->res[i]->zdict);
        zsamples_clear(&ix->res[i]->zsamples);
        free(ix->res[i]->name);
        free(ix->res[i]);
    }
    free(ix->res);
    memset(ix, 0, sizeof(*ix));
}

/* ---- AVL tree ---- */

static int key_cmp(const char *ns, const char *name, const idx_node *n)
{
    int c = strcmp(ns, n->ns);
    return c ? c : strcmp(name, n->name);
}

static int height(const idx_node *n)
{
    return n ? n->height : 0;
}

static size_t size(const idx_node *n)
{
    return n ? n->size : 0;
}

static void update(idx_node *n)
{
    int hl = height(n->left), hr = height(n->right);
    n->height = (hl > hr ? hl : hr) + 1;
    n->size = size(n->left) + size(n->right) + 1;
}

static idx_node *rotate_right(idx_node *n)
{
    idx_node *l = n->left;
    n->left = l->right;
    l->right = n;
    update(n);
    update(l);
    return l;
}

static idx_node *rotate_left(idx_node *n)
{
    idx_node *r = n->right;
    n->right = r->left;
    r->left = n;
    update(n);
    update(r);
    return r;
}

static idx_node *rebalance(idx_node *n)
{
    int bal;

    update(n);
    bal = height(n->left) - height(n->right);
    if (bal > 1) {
        if (height(n->left->left) < height(n->left->right))
            n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (bal < -1) {
        if (height(n->right->right) < height(n->right->left))
            n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    return n;
}

size_t res_count(const store_res *r)
{
    return size(r->root);
}

/* ---- hash table ---- */

/* FNV-1a over ns, a separator and name, mixed (murmur3's finaliser) so that
 * the low bits the table uses depend on every byte. */
static uint32_t key_hash(const char *ns, const char *name)
{
    uint32_t h = 2166136261u;

    for (const unsigned char *p = (const unsigned char *)ns; *p; p++)
        h = (h ^ *p) * 16777619u;
    h = (h ^ 0xffu) * 16777619u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h ? h : 1; /* 0 marks an empty slot */
}

static void slot_put(idx_node **slots, uint32_t *hashes, size_t cap, idx_node *n)
{
    size_t i = n->hash & (cap - 1);

    while (hashes[i])
        i = (i + 1) & (cap - 1);
    slots[i] = n;
    hashes[i] = n->hash;
}

/* Room for one more node; false (and the table dropped: lookups use the
 * tree from then on) when it could not grow. */
static bool slots_room(store_res *r)
{
    size_t cap;
    idx_node **grown;
    uint32_t *hashes;

    if (!r->slots && r->slots_cap)
        return false; /* dropped before */
    if ((r->slots_n + 1) * 10 <= r->slots_cap * 7)
        return true;
    cap = r->slots_cap ? r->slots_cap * 2 : 64;
    if (!(grown = calloc(cap, sizeof(*grown) + sizeof(*hashes)))) {
        free(r->slots);
        r->slots = NULL;
        r->slot_hash = NULL;
        r->slots_cap = 1;
        return false;
    }
    hashes = (uint32_t *)(grown + cap);
    for (size_t i = 0; i < r->slots_cap; i++)
        if (r->slot_hash[i])
            slot_put(grown, hashes, cap, r->slots[i]);
    free(r->slots);
    r->slots = grown;
    r->slot_hash = hashes;
    r->slots_cap = cap;
    return true;
}

static void slots_add(store_res *r, idx_node *n)
{
    n->hash = key_hash(n->ns, n->name);
    if (!slots_room(r))
        return;
    slot_put(r->slots, r->slot_hash, r->slots_cap, n);
    r->slots_n++;
}

/* Takes n out, moving back the nodes after it in its run that may sit
 * there (so that every node stays reachable from its home slot). */
static void slots_remove(store_res *r, const idx_node *n)
{
    size_t mask = r->slots_cap - 1, i, j;

    if (!r->slots)
        return;
    for (i = n->hash & mask; r->slots[i] != n; i = (i + 1) & mask)
        if (!r->slot_hash[i])
            return; /* not in it (cannot happen) */
    r->slots[i] = NULL;
    r->slot_hash[i] = 0;
    r->slots_n--;
    for (j = (i + 1) & mask; r->slot_hash[j]; j = (j + 1) & mask) {
        size_t home = r->slot_hash[j] & mask;
        /* it may move to i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            r->slots[i] = r->slots[j];
            r->slot_hash[i] = r->slot_hash[j];
            r->slots[j] = NULL;
            r->slot_hash[j] = 0;
            i = j;
        }
    }
}

uint32_t index_key_hash(const char *ns, const char *name)
{
    return key_hash(ns, name);
}

idx_node *res_lookup(const store_res *r, const char *ns, const char *name)
{
    return res_lookup_hashed(r, ns, name, r->slots ? key_hash(ns, name) : 0);
}

idx_node *res_lookup_hashed(const store_res *r, const char *ns, const char *name, uint32_t h)
{
    idx_node *n;

    if (r->slots) {
        uint32_t *hashes = r->slot_hash, sh;
        size_t mask = r->slots_cap - 1;
        for (size_t i = h & mask; (sh = hashes[i]); i = (i + 1) & mask)
            if (sh == h && (n = r->slots[i], !strcmp(n->name, name) && !strcmp(n->ns, ns)))
                return n;
        return NULL;
    }
    for (n = r->root; n;) {
        int c = key_cmp(ns, name, n);
        if (!c)
            return n;
        n = c < 0 ? n->left : n->right;
    }
    return NULL;
}

idx_node *res_node_new(void)
{
    idx_node *n = calloc(1, sizeof(*n));

    if (!n)
        return NULL;
    n->height = 1;
    n->size = 1;
    return n;
}

static idx_node *insert_at(idx_node *n, idx_node *add)
{
    if (!n)
        return add;
    if (key_cmp(add->ns, add->name, n) < 0)
        n->left = insert_at(n->left, add);
    else
        n->right = insert_at(n->right, add);
    return rebalance(n);
}

void res_insert(store_res *r, idx_node *node, store_obj *obj)
{
    node->obj = store_obj_ref(obj);
    obj->current = true;
    node->ns = obj->ns;
    node->name = obj->name;
    r->root = insert_at(r->root, node);
    slots_add(r, node);
}

static idx_node *detach_min(idx_node *n, idx_node **min)
{
    if (!n->left) {
        *min = n;
        return n->right;
    }
    n->left = detach_min(n->left, min);
    return rebalance(n);
}

static idx_node *remove_at(idx_node *n, const char *ns, const char *name, idx_node **gone)
{
    int c;

    if (!n)
        return NULL;
    c = key_cmp(ns, name, n);
    if (c < 0) {
        n->left = remove_at(n->left, ns, name, gone);
    } else if (c > 0) {
        n->right = remove_at(n->right, ns, name, gone);
    } else {
        idx_node *succ;
        *gone = n;
        if (!n->left || !n->right)
            return n->left ? n->left : n->right;
        n->right = detach_min(n->right, &succ);
        succ->left = n->left;
        succ->right = n->right;
        return rebalance(succ);
    }
    return rebalance(n);
}

store_obj *res_remove(store_res *r, const char *ns, const char *name)
{
    idx_node *gone = NULL;
    store_obj *obj = NULL;

    r->root = remove_at(r->root, ns, name, &gone);
    if (gone) {
        slots_remove(r, gone);
        res_owner_link(r, gone, NULL);
        obj = gone->obj;
        obj->current = false;
        free(gone);
    }
    return obj;
}

size_t res_rank(const store_res *r, const char *ns, const char *name, bool inclusive)
{
    const idx_node *n = r->root;
    size_t rank = 0;

    while (n) {
        int c = key_cmp(ns, name, n);
        if (c < 0 || (c == 0 && !inclusive)) {
            n = n->left;
        } else {
            rank += size(n->left) + 1;
            if (c == 0)
                break;
            n = n->right;
        }
    }
    return rank;
}

/* ---- ordered iteration ---- */

void res_iter_seek(res_iter *it, const store_res *r, const char *ns, const char *name,
                   bool inclusive)
{
    idx_node *n = r->root;

    it->depth = 0;
    /* The stack holds exactly the ancestors whose key is still ahead of the
     * cursor, nearest last, so next() pops the smallest remaining key. */
    while (n) {
        int c = ns ? key_cmp(ns, name, n) : -1;
        if (c < 0 || (c == 0 && inclusive)) {
            it->stack[it->depth++] = n;
            if (c == 0)
                break;
            n = n->left;
        } else {
            n = n->right;
        }
    }
}

idx_node *res_iter_next(res_iter *it)
{
    idx_node *n, *c;

    if (!it->depth)
        return NULL;
    n = it->stack[--it->depth];
    for (c = n->right; c; c = c->left)
        it->stack[it->depth++] = c;
    return n;
}

/* ---- controller-owner index ---- */

const char *obj_controller_uid(const json_t *obj)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    size_t i;
    json_t *ref;

    json_array_foreach(refs, i, ref) {
        if (json_is_true(json_object_get(ref, "controller")))
            return json_string_value(json_object_get(ref, "uid"));
    }
    return NULL;
}

/* FNV-1a; uids are random, any spread-out hash does. */
static size_t uid_hash(const char *uid)
{
    size_t h = (size_t)14695981039346656037ULL;

    for (; *uid; uid++) {
        h ^= (unsigned char)*uid;
        h *= (size_t)1099511628211ULL;
    }
    return h;
}

owner_set *res_owner_find(const store_res *r, const char *uid)
{
    owner_set *set;

    if (!r->owners_cap)
        return NULL;
    set = atomic_load_explicit(&r->owners[uid_hash(uid) & (r->owners_cap - 1)],
                               memory_order_acquire);
    for (; set; set = set->chain)
        if (strcmp(set->uid, uid) == 0)
            return set;
    return NULL;
}

bool res_owner_table_full(const store_res *r)
{
    return r->owners_n >= r->owners_cap;
}

/* Doubles the table (a power of two) when it holds as many sets as buckets.
 * Failing to grow only makes chains longer. */
static void owners_grow(store_res *r)
{
    size_t cap = r->owners_cap ? r->owners_cap * 2 : 64;
    _Atomic(owner_set *) *grown = calloc(cap, sizeof(*grown));

    if (!grown)
        return;
    for (size_t i = 0; i < r->owners_cap; i++) {
        owner_set *set = atomic_load_explicit(&r->owners[i], memory_order_relaxed), *next;
        for (; set; set = next) {
            size_t b = uid_hash(set->uid) & (cap - 1);
            next = set->chain;
            set->chain = atomic_load_explicit(&grown[b], memory_order_relaxed);
            atomic_store_explicit(&grown[b], set, memory_order_relaxed);
        }
    }
    free((void *)r->owners);
    r->owners = grown;
    r->owners_cap = cap;
}

owner_set *res_owner_reserve(store_res *r, const char *uid)
{
    owner_set *set = res_owner_find(r, uid);
    size_t len = strlen(uid), b;

    if (set) {
        set->pins++;
        return set;
    }
    if (res_owner_table_full(r))
        owners_grow(r);
    if (!r->owners_cap || !(set = calloc(1, sizeof(*set) + len + 1)))
        return NULL;
    memcpy(set->uid, uid, len + 1);
    set->pins = 1;
    b = uid_hash(uid) & (r->owners_cap - 1);
    set->chain = atomic_load_explicit(&r->owners[b], memory_order_relaxed);
    /* complete before it is seen: readers may be walking this chain */
    atomic_store_explicit(&r->owners[b], set, memory_order_release);
    r->owners_n++;
    return set;
}

static void owner_free_if_unused(store_res *r, owner_set *set)
{
    _Atomic(owner_set *) *head;
    owner_set *prev = NULL, *cur;

    if (set->n || set->pins)
        return;
    /* index_rw is held for writing: no reader walks the chain */
    head = &r->owners[uid_hash(set->uid) & (r->owners_cap - 1)];
    for (cur = atomic_load_explicit(head, memory_order_relaxed); cur; cur = cur->chain) {
        if (cur == set) {
            if (prev)
                prev->chain = set->chain;
            else
                atomic_store_explicit(head, set->chain, memory_order_relaxed);
            r->owners_n--;
            free(set);
            return;
        }
        prev = cur;
    }
}

void res_owner_unreserve(store_res *r, owner_set *set)
{
    if (!set)
        return;
    set->pins--;
    owner_free_if_unused(r, set);
}

void res_owner_link(store_res *r, idx_node *node, owner_set *set)
{
    owner_set *old = node->owner;

    if (old == set)
        return;
    if (old) {
        if (node->owner_prev)
            node->owner_prev->owner_next = node->owner_next;
        else
            old->head = node->owner_next;
        if (node->owner_next)
            node->owner_next->owner_prev = node->owner_prev;
        old->n--;
        owner_free_if_unused(r, old);
    }
    node->owner = set;
    node->owner_prev = NULL;
    node->owner_next = NULL;
    if (set) {
        node->owner_next = set->head;
        if (set->head)
            set->head->owner_prev = node;
        set->head = node;
        set->n++;
    }
}
