/* store_int.h - what the store's own files share; not part of the public API.
 *
 * The store is these small parts:
 *   obj.c    immutable refcounted snapshots, random uids and names
 *   objtext.c a few members of an object's text, read without the rest
 *   cold.c   compressed copies of the texts of objects nobody reads
 *   sweep.c  the clock that lets cold objects' trees and texts go
 *   index.c  the in-memory index: one AVL tree per resource, ordered by
 *            (namespace, name), with subtree sizes so that "how many after
 *            this key" is O(log n)
 *   db.c     the durable copy in SQLite (WAL)
 *   watch.c  the watch hub: a ring of recent events indexed by resourceVersion
 *   reaper.c the hub's reaper thread, which frees what commits let go of
 *   store.c / list.c  the public operations on top of them
 */
#ifndef TY_STORE_STORE_INT_H
#define TY_STORE_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonget.h"
#include "base/thread.h"
#include "store/store.h"

#define STORE_MAX_OBJECT_BYTES (3u * 1024u * 1024u)
#define STORE_MAX_NAME_LEN 253

/* ---- obj.c ---- */

/* A zstd dictionary for the texts of one resource: a few of its objects,
 * as raw content (objects of a kind share most of their text, so a pod
 * compresses to about a fourteenth against another pod). Refcounted: the
 * resource holds one reference while it is the resource's current
 * dictionary, and every text compressed with it holds one. Rows written
 * compressed name it by id; its own row (the content) goes into SQLite in
 * the first transaction that writes one of them (commit.c, db.c). */
typedef struct store_zdict {
    atomic_size_t refs;
    void *cdict; /* ZSTD_CDict */
    void *ddict; /* ZSTD_DDict */
    int64_t id;  /* its row's id in the dicts table, unique in the store */
    size_t objects; /* its resource's count of objects when it was made */
    bool saved;  /* that row is committed (leader only) */
    size_t len;
    unsigned char content[];
} store_zdict;
/* A dictionary of the len bytes of a dicts row (zstd's dictionary format,
 * or raw content: samples alone, as made before zdict_make finalized them),
 * to be known by id. NULL when out of memory or zstd refuses the bytes. */
store_zdict *zdict_new(const void *data, size_t len, int64_t id, size_t objects);

/* Texts gathered for a resource's next dictionary. A few make its content
 * (what a text is matched against); more only teach zstd the statistics of
 * what is left once the content has matched (literals, match lengths and
 * offsets), so that a text is coded with the dictionary's entropy tables
 * instead of building and sending its own. A pod was compressed 2.5 times
 * faster and to a fifth less (docs/internals/store.md). The statistics must
 * come of texts that are not in the content: those would match whole. */
#define ZDICT_STATS_MAX 32
typedef struct zdict_samples {
    ty_buf content;
    size_t ncontent;
    ty_buf stats;
    size_t stat_len[ZDICT_STATS_MAX];
    size_t nstats;
} zdict_samples;
/* Adds text[0..len) to the content or to the statistics (beyond
 * ZDICT_STATS_MAX: ignored); -1 when memory runs out. */
int zsamples_add(zdict_samples *sm, bool content, const char *text, size_t len);
void zsamples_clear(zdict_samples *sm);
/* A dictionary of sm's content, finalized with its statistics (zstd's
 * dictionary format) when there are enough, else of the content alone (raw
 * content, as before); known by id. NULL as zdict_new. */
store_zdict *zdict_make(const zdict_samples *sm, int64_t id, size_t objects);
store_zdict *zdict_ref(store_zdict *d);
void zdict_unref(store_zdict *d);
/* The text in data[0..zlen), compressed with d (a row read back) with rv
 * at rv_at (as obj_z), in a new NUL-terminated buffer the caller frees,
 * *len its length; NULL when it is not such a frame (or memory ran out). */
char *zdict_inflate(store_zdict *d, const void *data, size_t zlen, size_t rv_at, uint64_t rv,
                    size_t *len);

/* A compressed copy of an object's text. Made ahead of the commit section,
 * before the resourceVersion is known, it is of the text with that value
 * empty: the object's decimal rv goes at rv_at of the decompressed bytes
 * (0: the text is whole). */
typedef struct obj_z {
    store_zdict *dict;
    uint32_t len;
    uint32_t rv_at;
    unsigned char data[];
} obj_z;
/* A compressed copy of text[0..len) (whose rv goes at rv_at, 0: none) with
 * d, using the calling thread's own compression context; NULL when it does
 * not get smaller or memory runs out. For writers, ahead of the commit
 * section. */
obj_z *obj_z_make(store_zdict *d, const char *text, size_t len, size_t rv_at);
void obj_z_free(obj_z *z);
/* The dictionary writes of resource are compressed with now (a reference
 * for the caller), or NULL. Any thread. */
store_zdict *store_res_zdict(ty_store *s, const char *resource);
/* o->z of an object whose text does not compress: it keeps its plain text. */
extern obj_z obj_z_none;

/* A view of an object kept on it (store_obj_view): whose, and its text. */
typedef struct obj_view {
    const store_view *of;
    size_t len;
    char text[];
} obj_view;

struct store_obj {
    ty_obj base; /* first: a store_obj * is a ty_obj * */
    atomic_size_t refs;
    uint64_t rv;
    /* The parsed JSON, or NULL until obj_json needs it: the watch history
     * drops the trees of old events nobody else holds (see watch.c). Set once
     * by whoever parses first; never modified. */
    _Atomic(json_t *) tree;
    /* A light tree (store_obj_json_light: every member but spec's objects and
     * arrays), set only when a light write staged o and kept until o goes
     * cold as a tree does; readers of the whole object never see it (they
     * parse, as for an object without its tree). Never modified. */
    _Atomic(json_t *) light;
    atomic_bool used; /* its tree or text was handed out since the sweeper last looked */
    unsigned char idle; /* sweeper passes in a row that found it unused (sweep.c) */
    /* The index holds it (its object's current version): set and cleared
     * with index_rw held for writing (res_insert, res_remove, a version
     * replaced in apply_batch), read by the writer. */
    bool current;
    /* The compact serialisation. A cold object (sweep.c) keeps only z, and
     * the first reader of its text decompresses it back (set once by whoever
     * gets there first, as the tree). Never both NULL. */
    _Atomic(char *) text;
    _Atomic(obj_z *) z; /* the compressed copy, made once (by the reaper), or NULL */
    /* The view a reader asked for (store_obj_view), set once by whoever
     * makes it first, dropped with the plain text when o goes cold. */
    _Atomic(obj_view *) view;
    size_t len;         /* of the plain text */
    int64_t row;        /* its row in SQLite (db.c); set before it is published */
    const char *ns;   /* metadata.namespace or "", and metadata.name or "":  */
    const char *name; /* both point into key[] */
    char key[];
};

/* Builds a snapshot of json (steals the reference). text, when not NULL, must
 * be json's compact serialisation and is copied; otherwise it is computed.
 * Fails with TY_ETOOLARGE past STORE_MAX_OBJECT_BYTES. */
store_obj *obj_new(json_t *json, uint64_t rv, const char *text, size_t len, ty_error *err);
/* As obj_new, json a light tree (store_obj_json_light) that o keeps as
 * such, and text (required) o's whole text. */
store_obj *obj_new_light(json_t *json, uint64_t rv, const char *text, size_t len,
                         ty_error *err);
/* A snapshot of text alone (copied; ns and name are its key), its tree left
 * for the first reader to parse: what the store loads from SQLite. */
store_obj *obj_new_text(uint64_t rv, const char *ns, const char *name, const char *text,
                        size_t len, ty_error *err);
/* o's JSON, parsed from its text the first time it is needed when its tree
 * was dropped (NULL only when out of memory). Borrowed, as store_obj_json. */
json_t *obj_json(const store_obj *o);
/* A new tree parsed from o's text (decompressed when o is cold), leaving o
 * as it is: for a look at an object that should not keep its tree. NULL when
 * out of memory. */
json_t *obj_parse(const store_obj *o);
/* A tree-less copy of o (its text copied, plain): what a watcher gets of an
 * old event, so that parsing it does not give the history its tree back.
 * NULL when out of memory. */
store_obj *obj_text_copy(const store_obj *o);
/* Whether o holds a parsed tree, whole or light. */
static inline bool obj_has_any_tree(const store_obj *o)
{
    return atomic_load_explicit(&((store_obj *)o)->tree, memory_order_acquire) ||
           atomic_load_explicit(&((store_obj *)o)->light, memory_order_acquire);
}
/* Takes o's tree off it when exactly refs references are held (all by the
 * caller, and nobody can take another or read the tree meanwhile), keeping
 * the text, and hands it over (the caller decrefs it, later, outside its
 * locks); o's light tree when it has no whole one (one that has both, a
 * reader having parsed the whole, gives up the light one next time). NULL
 * when refs differ or there is none. */
json_t *obj_take_tree_if_refs(store_obj *o, size_t refs);
/* o's text decompressed from its compressed copy into a new buffer of
 * o->len + 1 bytes (NUL-terminated), or NULL when out of memory (or o has
 * no copy). cold.c, as the three below. */
char *obj_inflate(const store_obj *o);
/* Compresses o's text with d (o's text must be plain) with the calling
 * thread's zstd context (the reaper's, the loader's, or the leader's for a
 * version it stages): sets o->z, to &obj_z_none when the text does not get
 * smaller. Nothing when o->z is set, or when it cannot be made now. */
void obj_compress(store_obj *o, store_zdict *d);
/* A snapshot of a text of len bytes known only compressed (zlen bytes at
 * data, copied, made with d; its rv at rv_at, as obj_z): a row the loader
 * read compressed. */
store_obj *obj_new_z(uint64_t rv, const char *ns, const char *name, size_t len,
                     const void *data, size_t zlen, size_t rv_at, store_zdict *d,
                     ty_error *err);
/* Gives o, a version being staged, z (taken over) as its compressed copy. */
void obj_set_z(store_obj *o, obj_z *z);
/* Takes o's plain text off it, as obj_take_tree_if_refs, when it has a
 * compressed copy; the caller frees it. NULL when kept. */
char *obj_take_text_if_refs(store_obj *o, size_t refs);
/* Takes o's view off it, as obj_take_tree_if_refs; the caller frees it. */
obj_view *obj_take_view_if_refs(store_obj *o, size_t refs);
/* Bytes the snapshot takes without its tree (counting its plain text). */
size_t obj_footprint(const store_obj *o);

/* Random UUID v4, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx". buf >= 37 bytes. */
int obj_uuid(char *buf, size_t len);
/* n random characters from Kubernetes' generateName alphabet, NUL-terminated. */
int obj_random_suffix(char *buf, size_t n);

/* ---- index.c ---- */

typedef struct store_res store_res;
/* Makes d (a reference it takes) r's dictionary, in place of the one it
 * had; -1 (d released, r unchanged) when out of memory. The leader, or the
 * loader. */
int res_set_zdict(ty_store *s, store_res *r, store_zdict *d);

typedef struct idx_node idx_node;
typedef struct owner_set owner_set;

struct idx_node {
    idx_node *left, *right;
    int height;
    uint32_t hash;   /* of its key, for the resource's hash table */
    size_t size;     /* nodes in this subtree */
    store_obj *obj;  /* one reference owned by the node */
    owner_set *owner;                  /* its controller owner's set, or NULL */
    idx_node *owner_prev, *owner_next; /* the other members of that set */
    /* Both point into obj's key (set with obj, under index_rw for writing):
     * a key of its own would be ~70 bytes more for every object. */
    const char *ns;
    const char *name;
};

/* The objects of one resource whose controller ownerReference names uid.
 * A set exists while it has members or is pinned by a write in flight (a
 * batch may empty a set between staging a write that joins it and applying
 * that write). */
struct owner_set {
    owner_set *chain; /* next in the hash bucket */
    idx_node *head;
    size_t n;
    size_t pins;      /* writes staged to join it, not yet applied */
    char uid[];
};

struct store_res {
    char *name;      /* lives as long as the store: events borrow it */
    idx_node *root;
    /* The same nodes in an open-addressing hash table (linear probing,
     * slots_cap a power of two, at most 70 % full), for point lookups: the
     * tree's ~17 levels of strcmp at 150,000 objects are a cache miss a
     * level. NULL when it could not be grown: lookups then use the tree.
     * slot_hash[i] is the hash of slots[i]'s key, 0 for an empty slot (a
     * key hashes to 1 or more): a probe reads 16 of them a cache line and
     * goes to a node only when its hash matches, not to every node of the
     * run (a create's lookup of a name not there walks ~6 at 70 %, each a
     * cache miss). Allocated with slots, right after it. */
    idx_node **slots;
    uint32_t *slot_hash;
    size_t slots_cap, slots_n;
    /* Hash table of owner sets by uid, chained. The leader adds a set at
     * the head of its chain without index_rw (readers see the chain before
     * or after); growing the table and removing sets take it for writing. */
    _Atomic(owner_set *) *owners;
    size_t owners_cap, owners_n;
    /* Compression of texts (sweep.c; leader only): the dictionary, and
     * samples gathered for the next. */
    store_zdict *zdict;
    zdict_samples zsamples;
};

typedef struct store_index {
    store_res **res; /* sorted by name for bsearch */
    size_t n, cap;
} store_index;

store_res *index_find(const store_index *ix, const char *resource);
/* Finds or adds the resource bucket. NULL only when out of memory. */
store_res *index_add(store_index *ix, const char *resource);
void index_free(store_index *ix);

size_t res_count(const store_res *r);
idx_node *res_lookup(const store_res *r, const char *ns, const char *name);
/* The hash of (ns, name) the index files a key under (never 0), and
 * res_lookup with it already known. */
uint32_t index_key_hash(const char *ns, const char *name);
idx_node *res_lookup_hashed(const store_res *r, const char *ns, const char *name, uint32_t h);
/* Allocates a detached node holding no object yet (its key comes with the
 * object res_insert gives it). */
idx_node *res_node_new(void);
/* Inserts node (whose key must be absent) taking a reference to obj. */
void res_insert(store_res *r, idx_node *node, store_obj *obj);
/* Removes the key if present (and from its owner set). Returns the node's
 * reference to its object (the caller releases it), or NULL. */
store_obj *res_remove(store_res *r, const char *ns, const char *name);

/* ---- index.c: the controller-owner index ----
 * uid -> the nodes whose object's controller ownerReference (controller:
 * true) has that uid, so that "what does this job control" costs O(result).
 * Readers (res_owner_find) hold index_rw for reading. Only the writer holding
 * write_mu changes sets; it finds and adds them without index_rw (a new set
 * is published whole at the head of its chain) and holds index_rw for
 * writing for everything else: growing the table, members joining and
 * leaving, removing a set. */

/* The uid of obj's controller ownerReference, or NULL. Borrowed from obj. */
const char *obj_controller_uid(const json_t *obj);
/* The byte range [*start, *end) of the value of the top-level member name
 * in the object in text (keys compared as written: no escapes); false when
 * it has none or the scanner does not follow the text. */
bool obj_text_member(const char *text, size_t len, const char *name, size_t *start,
                     size_t *end);
/* Why text, one object as obj_text_metadata found (its brackets and strings
 * close, it nests no deeper than a parse takes), could still not be parsed
 * back: a \u0000 escape, bytes that are not UTF-8; NULL when it can. Scans
 * (~0.7 us a 2.5 KB pod; the structure is obj_text_metadata's to check,
 * ~2 us). The open sets such a row aside (quarantine.c). */
const char *obj_text_unloadable(const char *text, size_t len);
/* An object holding the "metadata" member of the object in text (scanned
 * past the members before it, not parsed), or the whole object when the
 * scanner gives up; NULL when text is not one JSON object whose brackets
 * and strings close (or memory ran out). What lies in the members after
 * metadata is checked for that structure only, not parsed. */
json_t *obj_text_metadata(const char *text, size_t len);
/* The object of the given members of the object in text (a name "a" is all
 * of top-level member a, "a.b" only member b of it), each parsed alone and
 * the rest skipped; NULL when the text is not what the scanner expects (the
 * caller then parses the whole of it) or memory runs out. */
json_t *obj_text_members(const char *text, size_t len, const char *const *names);
/* The light tree of the object in text (store_obj_json_light): every
 * top-level member parsed except spec, whose objects and arrays are skipped.
 * NULL when the text is not one object the scanner follows or memory runs
 * out. */
json_t *obj_text_light(const char *text, size_t len);
owner_set *res_owner_find(const store_res *r, const char *uid);
/* Finds or creates the (possibly empty) set of uid and pins it: it stays
 * until the matching res_owner_unreserve. NULL when out of memory. Needs
 * index_rw for writing only when res_owner_table_full says so (it then grows
 * the table); a new set is published so that readers may look meanwhile. */
owner_set *res_owner_reserve(store_res *r, const char *uid);
/* Whether res_owner_reserve of a new uid would grow the table. */
bool res_owner_table_full(const store_res *r);
/* Unpins set (NULL: nothing), freeing it if it has no members and no pins. */
void res_owner_unreserve(store_res *r, owner_set *set);
/* Moves node from its current set (freed when left empty and unpinned) into
 * set (NULL = none). Cannot fail. */
void res_owner_link(store_res *r, idx_node *node, owner_set *set);
/* Number of keys strictly before (ns, name) (or up to and including it). */
size_t res_rank(const store_res *r, const char *ns, const char *name, bool inclusive);

/* In-order iteration from a key. The tree must not change while iterating
 * (callers hold the read lock). AVL height stays below 1.45*log2(n+2). */
typedef struct res_iter {
    idx_node *stack[96];
    int depth;
} res_iter;
/* Positions at the first key >= (ns, name), or > it when !inclusive. ns and
 * name NULL position at the very first key. */
void res_iter_seek(res_iter *it, const store_res *r, const char *ns, const char *name,
                   bool inclusive);
idx_node *res_iter_next(res_iter *it);

/* ---- db.c ---- */

typedef struct store_db {
    sqlite3 *db;
    sqlite3_stmt *begin, *commit, *rollback, *put, *putdict, *del, *setrv;
    /* Background checkpointer: its own connection and thread (see db.c). */
    sqlite3 *ckpt_db;
    pthread_t ckpt_thread;
    bool ckpt_running;
    pthread_mutex_t ckpt_mu;
    pthread_cond_t ckpt_cv;
    bool ckpt_stop;
    atomic_bool wal_restart_due; /* the checkpointer left a long WAL behind */
} store_db;

/* Opens or creates <dir>/trainyard.db; *rv gets the stored counter, which
 * only deletes advance: the latest resourceVersion is the larger of it and
 * the largest rv db_load reports. */
int db_open(store_db *d, const char *dir, uint64_t *rv, ty_error *err);
/* Each dictionary a row names, in id order (objects: its resource's count
 * when it was made), then each row in id order; id: the row's, for db_put
 * and db_delete. A row's data is its text (NUL-terminated) when dict is 0,
 * else len bytes compressed with that dictionary, its rv to go at rv_at of
 * them (0: none; see obj_z). Dictionaries no row names are deleted first. */
typedef int (*db_dict_fn)(void *arg, int64_t id, const char *resource, size_t objects,
                          const void *data, size_t len, ty_error *err);
typedef int (*db_row_fn)(void *arg, int64_t id, const char *resource, const char *ns,
                         const char *name, uint64_t rv, const void *data, size_t len,
                         int64_t dict, size_t rv_at, ty_error *err);
int db_load(store_db *d, db_dict_fn dict_fn, db_row_fn fn, void *arg, ty_error *err);

/* ---- quarantine.c: rows the open could not load ----
 * A row that cannot be loaded (damaged, a string the text form cannot carry,
 * a second row for one object) is moved, whole, into the quarantine table
 * with the reason and the time, and the store opens without it: one such row
 * used to keep the whole control plane from starting. */
#define QUARANTINE_TABLE                                                               \
    "CREATE TABLE IF NOT EXISTS quarantine (id INTEGER PRIMARY KEY, at TEXT NOT NULL,"  \
    "  row_id INTEGER NOT NULL, resource TEXT NOT NULL, namespace TEXT NOT NULL,"          \
    "  name TEXT NOT NULL, rv INTEGER NOT NULL, data BLOB NOT NULL,"                    \
    "  dict INTEGER NOT NULL, rv_at INTEGER NOT NULL, reason TEXT NOT NULL);"
/* Moves rows ids[0..n) (with reasons[i]) from objects into quarantine, in
 * one transaction. */
int db_quarantine(store_db *d, const int64_t *ids, char *const *reasons, size_t n,
                  ty_error *err);
/* Rows in quarantine (-1 on an error). */
long long db_quarantine_count(store_db *d);
/* A transaction holds the rows of one batch of writes (commit.c): db_begin,
 * then db_put / db_delete for each (a delete also advances the counter), then
 * db_commit, or db_rollback after a failed row. db_commit rolls back itself
 * when it fails. */
int db_begin(store_db *d, ty_error *err);
int db_commit(store_db *d, ty_error *err);
void db_rollback(store_db *d);
/* A new row for a version (*id: its id), replacing row `replaces` (0: a new
 * object, no row to replace): its text (dict 0), or the text compressed with
 * dictionary dict, whose row db_put_dict writes in the same transaction. */
int db_put(store_db *d, const char *resource, const char *ns, const char *name, uint64_t rv,
           const void *data, size_t len, int64_t dict, size_t rv_at, int64_t replaces,
           int64_t *id, ty_error *err);
/* The row of dictionary id (nothing when it is there already). */
int db_put_dict(store_db *d, int64_t id, const char *resource, size_t objects, const void *data,
                size_t len, ty_error *err);
/* Deletes row id, the object's, whose deletion took resourceVersion rv. */
int db_delete(store_db *d, int64_t id, uint64_t rv, ty_error *err);
void db_close(store_db *d);

/* ---- watch.c ---- */

typedef struct store_hub store_hub;

/* History holds events with resourceVersion in (start_rv, ...]: at most
 * max_events, and max_bytes of snapshots counted without their trees; only
 * the newest max_trees keep the trees nobody else holds. */
store_hub *hub_new(uint64_t start_rv, size_t max_events, size_t max_bytes, size_t max_trees);
/* Publishes the event of commit obj->rv (must be the previous one + 1);
 * steals the reference to obj. resource must outlive the hub's users.
 * Watchers are woken by hub_wake, once per batch. */
void hub_publish(store_hub *h, store_event_type type, const char *resource, store_obj *obj);
void hub_wake(store_hub *h);
/* Drops the index's reference to old, a version a commit just replaced or
 * removed; an event of it older than the newest max_trees then keeps its
 * text only. */
void hub_release_superseded(store_hub *h, store_obj *old);
/* The events that left the tree window since the last call may carry the
 * current versions of their objects: their trees go too when only the index
 * and the ring hold them, and their plain texts when they have compressed
 * copies. Called by the writer with write_mu and index_rw
 * (for writing) held, which keeps out every reader of a tree that holds no
 * reference. */
void hub_trim_current(store_hub *h);
/* Takes a part of o, a current object, when only the index and (if it
 * holds o) the history hold references and its event is outside the tree
 * window; checked under the history's lock, which keeps watchers from taking
 * a reference meanwhile. Called by the writer with index_rw held for
 * writing. NULL when kept. The part: its tree (the caller decrefs it), its
 * plain text (which must have a compressed copy; the caller frees it) or
 * its view (the caller frees it). */
typedef enum { HUB_TREE, HUB_TEXT, HUB_VIEW } hub_part;
void *hub_take_current(store_hub *h, store_obj *o, hub_part part);
/* Events after this resourceVersion are all retained. */
uint64_t hub_oldest(store_hub *h);
/* Whether the version the event of rv holds has its plain text: 1 or 0,
 * -1 when the ring no longer has that event (tests). */
int hub_event_plain(store_hub *h, uint64_t rv);
/* Wakes every watcher with -1 and drops the store's reference. */
void hub_shutdown(store_hub *h);

/* ---- reaper.c ---- */

/* Hands trees (one reference each) and plain blocks of memory to the
 * reaper to let go of: what the sweeper takes, freed outside the commit
 * section. */
void hub_trash(store_hub *h, json_t **trees, size_t ntrees, void **mem, size_t nmem);
/* Hands o and d (one reference each, stolen) to the reaper, which
 * compresses o's text with d (obj_compress) and lets both go. */
void hub_compress(store_hub *h, store_obj *o, store_zdict *d);
/* Tests: holds the reaper back (or lets it go) and sets how much may wait
 * for it before its helper takes it (REAP_MAX_TREES, REAP_MAX_ITEMS). */
void hub_reaper_test(store_hub *h, bool paused, size_t max_trees, size_t max_items);
/* Tests: the reaper sleeps sleep_us before each slice of what it frees
 * (HUB_REAPER_HOLD: it waits there until the hub closes), and hub_shutdown
 * stores in *freed_at_close how much it freed itself (what the reaper had
 * not got to). */
#define HUB_REAPER_HOLD (~0u)
void hub_reaper_slow(store_hub *h, unsigned sleep_us, size_t *freed_at_close);
/* Trees waiting for the reaper now, and how many times its helper (a
 * leader, without one) freed what waited because the reaper had fallen
 * behind (either may be NULL). */
void hub_reaper_stats(store_hub *h, size_t *trees_waiting, uint64_t *overflows);

/* ---- small JSON helpers (store.c, mutate.c) ---- */

static inline json_t *meta_of(json_t *obj)
{
    return json_object_get(obj, "metadata");
}

static inline bool array_nonempty(const json_t *a)
{
    return json_is_array(a) && json_array_size(a) > 0;
}

/* Namespaces carry their "kubernetes" finalizer in spec.finalizers; for
 * deletion both lists count. */
static inline bool has_finalizers(const char *resource, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");

    if (array_nonempty(json_object_get(meta, "finalizers")))
        return true;
    return strcmp(resource, "namespaces") == 0 &&
           array_nonempty(json_object_get(json_object_get(obj, "spec"), "finalizers"));
}

/* ---- commit.c: group commit ----
 * Every write is a request in one queue. The writer that finds nobody
 * committing becomes the leader: it takes the queued requests as a batch,
 * runs each one's operation in queue order against the index plus what the
 * batch staged before it (each write that succeeds takes the next
 * resourceVersion), writes the staged versions in one SQLite transaction,
 * then swaps them into the index and publishes their events in order, and
 * wakes each caller with its own outcome. See docs/internals/store.md. */

typedef enum { WR_CREATE, WR_MUTATE, WR_DELETE } write_kind;

typedef struct write_req write_req;
struct write_req {
    write_req *next;                /* in the queue, then in the batch */
    write_kind kind;
    const char *resource, *ns, *name; /* borrowed from the caller (copies when async) */
    json_t *obj;                    /* WR_CREATE: the new object, owned by the request */
    char *text;                     /* WR_CREATE of a text record instead of obj (owned; name
                                       set): its store metadata but the resourceVersion is in,
                                       which goes at rv_at, before metadata's '}' */
    size_t text_len, rv_at;
    store_mutate_fn fn;             /* WR_MUTATE; for an async WR_CREATE, applied to the
                                       existing object when the name is taken */
    void *arg;
    const store_delete_opts *dopts; /* WR_DELETE */
    bool status_only;               /* WR_MUTATE: fn changes only metadata and status */
    bool spec_top;                  /* WR_MUTATE: and top-level members of spec */
    bool arena;                     /* WR_MUTATE: copy and fn in a tree arena scope */
    bool light;                     /* WR_MUTATE: may run on a light copy (store_op.light) */
    bool async;                     /* nobody waits: the leader frees the request */
    bool follower;                  /* of a group (store_write_all) whose caller waits on
                                       its last request: not signalled, never the heir */
    /* Made ahead in the caller's thread (store_prepare), so that the leader,
     * which every writer waits for, only checks and stamps it: */
    store_obj *prep_base;           /* WR_MUTATE: the version fn ran on (a reference);
                                       used only if it is still current in the batch */
    json_t *prep_next;              /* WR_MUTATE: its successor (prep_rc 1) */
    int prep_rc;                    /* WR_MUTATE: 1 a write, 0 unchanged, -1 failed (*err) */
    bool prep_light;                /* prep_next is light: prep_text holds the whole text */
    char *prep_text;                /* the text of prep_next (WR_MUTATE) or obj (WR_CREATE),
                                       malloc'd, whose resourceVersion is the "" at
                                       prep_rv_at (the tree holds that "" too) */
    size_t prep_len, prep_rv_at;
    obj_z *prep_z;                  /* prep_text compressed (its rv goes at prep_rv_at + 1),
                                       or for a text record, text with its rv (empty) in;
                                       NULL: the leader compresses */
    _Atomic int prep_state;         /* who makes it (prep_state_t): the caller ahead, or the
                                       leader; set before the request is queued */
    /* outcome */
    store_obj *result;              /* new reference for the caller, or NULL and *err */
    ty_error *err;                  /* the caller's (may be NULL) */
    bool deleted;                   /* WR_DELETE: removed, not only marked */
    /* what the operation staged (leader only) */
    store_res *r;
    store_obj *staged;              /* the version to write, or NULL: no write */
    uint32_t staged_key;            /* index_key_hash of staged's key (commit_current) */
    store_event_type type;
    const store_obj *replaces;      /* MODIFIED, DELETED: the version it supersedes
                                       (store_current_for_write), whose row it replaces;
                                       borrowed, valid for the batch */
    store_obj *old;                 /* apply_batch: the version it took out of the index
                                       (that reference), until it is published */
    idx_node *node;                 /* WR_CREATE: its index node, allocated early */
    owner_set *owner;               /* the owner set it joins, pinned */
    /* hand-off between the leader and the caller, under queue_mu */
    bool done, lead;
    pthread_cond_t cv;
};

/* Queues req and, unless it is async, returns when its outcome is in
 * req->result / *req->err: after its write is durable and published. An
 * async request returns at once when a leader is at work (it then joins the
 * next batch) and is freed by whoever runs it. */
void commit_submit(ty_store *s, write_req *req);
/* Queues the n requests of reqs (none async) one after another and returns
 * when all have their outcomes. */
void commit_submit_all(ty_store *s, write_req *reqs, size_t n);
/* Tests only (NULL otherwise): called in a waiting caller's thread each time
 * it made (made) or found nothing to make of its group ahead of the leader,
 * before it takes the queue's lock again. */
extern void (*commit_prepared_hook)(ty_store *s, bool made);
/* The current version of (r, ns, name) as the operation being run sees it:
 * the latest version the batch staged before it, else the index's. NULL when
 * absent (or staged for removal). Borrowed, valid for the batch. Leader only. */
store_obj *commit_current(ty_store *s, const store_res *r, const char *ns, const char *name);
/* Stages obj (stolen) as the next version of its key for req: assigns the
 * next resourceVersion, serialises, allocates what applying it needs so that
 * nothing can fail after SQLite commits. -1 with *req->err (nothing staged,
 * no resourceVersion used) on failure. Leader only. */
int commit_stage(ty_store *s, write_req *req, store_res *r, json_t *obj, store_event_type type);
/* As commit_stage for a text record (req->text, see store_op_record_text). */
int commit_stage_text(ty_store *s, write_req *req, store_res *r);
/* As commit_stage for the text in the leader's scratch buffer (s->dump),
 * which already holds resourceVersion s->staged_rv + 1: a version written
 * without a tree (a text record, an outright delete). type ADDED gets its
 * index node; the version joins no owner set. */
int commit_stage_dump(ty_store *s, write_req *req, store_res *r, store_event_type type);
/* Runs the queued requests of a closing store. */
void commit_drain(ty_store *s);

/* ---- mutate.c: writes to an existing object ---- */

/* The current snapshot of req's object as the batch sees it (leader only),
 * borrowed: valid for the batch; also kept in req->replaces. NULL and
 * TY_ENOTFOUND when there is none. */
store_obj *store_current_for_write(ty_store *s, write_req *req, store_res **rp, ty_error *err);
/* WR_MUTATE in the leader; also a create whose name is taken and that has a
 * function for it. */
void store_exec_mutate(ty_store *s, write_req *req);
/* Who makes a request's write ahead (write_req.prep_state). A caller
 * waiting for its group goes on making the group's writes (those of
 * thousands that store_prepare left) while the leader works through the
 * batches before it; each request is claimed by one of them. */
typedef enum {
    PREP_OPEN,   /* nobody yet */
    PREP_MAKING, /* its caller is making it; the leader waits for that */
    PREP_MADE,   /* made (prep_* set, or empty when it could not be) */
    PREP_LEADER, /* the leader's: its caller keeps off */
} prep_state_t;
/* In the caller's thread, before reqs[0..n) are queued: does what it can of
 * their work against the versions current now (the copy and the function of
 * a status mutate, serialising a named create or the mutate's result), for
 * the first PREP_MAX of them. The leader takes that only where it still
 * holds (store_exec_mutate, exec_create) and does the rest itself. Sets
 * every request's prep_state; returns the first it left that store_prepare_more
 * may make (n when none). */
size_t store_prepare(ty_store *s, write_req *reqs, size_t n);
/* In the caller's thread, with reqs queued and nothing locked, while it
 * waits for them: makes the next of reqs[*next..n) that nobody has (at
 * most PREP_AHEAD ahead of the first the leader has not reached, *reached;
 * both are the caller's to keep, starting at store_prepare's return and 0).
 * Whether it made one; false when there is nothing it may make now. */
bool store_prepare_more(ty_store *s, write_req *reqs, size_t n, size_t *next, size_t *reached);
/* In the leader, before it runs req: makes req its own, waiting while its
 * caller is making it. */
void store_prep_settle(ty_store *s, write_req *req);
/* Lets go of what store_prepare made for req and the leader did not take. */
void store_prep_release(write_req *req);

/* ---- sweep.c ---- */

/* Lets the trees of current objects that nobody used for a while go (a
 * clock over the index; see sweep.c). Called by the leader after a batch,
 * with write_mu held; does something at most every SWEEP_INTERVAL_MS. */
void sweep_step(ty_store *s);
/* The thread that runs sweep_step while nothing is written (started by
 * store_open, stopped by store_close before anything else closes). */
int sweep_start(ty_store *s, ty_error *err);
void sweep_stop(ty_store *s);

/* ---- store.c ---- */

/* Sets what the store owns in a new object's metadata (uid,
 * creationTimestamp, namespace, generation) and drops what a create may not
 * set; -1 with err when metadata is not an object. Any thread. */
int store_init_create_meta(json_t *obj, const char *ns, ty_error *err);
/* A text record's store metadata but the resourceVersion, spliced in before
 * its metadata's '}' (*text replaced, its trailing name kept, *len and
 * *meta_end moved to match). -1 with err (text untouched) when meta_end is
 * not such a '}' or no name follows. */
int store_text_prepare(char **text, size_t *len, size_t *meta_end, ty_error *err);
/* The name trailing a text record's JSON (store_op_record_text). */
static inline const char *store_text_name(const char *text, size_t len)
{
    return text + len + 1;
}
/* store_create_async of a text record (store_op_record_text): takes text. */
void store_create_async_text(ty_store *s, const char *resource, const char *ns, char *text,
                             size_t len, size_t meta_end,
                             store_mutate_fn fn);

/* Runs req's operation (in the leader, write_mu held): stages its write via
 * commit_stage, or settles its outcome (no-op result, error) right away. */
void store_exec(ty_store *s, write_req *req);

struct ty_store {
    pthread_mutex_t write_mu;  /* held by the leader while it runs a batch */
    ty_rwlock index_rw; /* readers of ix/rv vs. the short swap a batch makes (thread.h) */
    store_index ix;
    uint64_t rv;               /* latest commit; written under both locks */
    store_db db;
    store_hub *hub;
    /* the queue (commit.c) */
    pthread_mutex_t queue_mu;
    write_req *queue_head, *queue_tail;
    bool leading;              /* a leader is at work */
    ty_bell prep_bell;         /* rung when a waiting caller made a write (store_prepare_more) */
    /* the batch being run (leader only, under write_mu) */
    write_req *batch, *batch_at;
    uint64_t staged_rv;        /* resourceVersion of the last staged write */
    ty_buf dump;               /* scratch for serialising staged objects */
    /* the tree sweeper's hand (sweep.c), leader only */
    int64_t sweep_last_ms;
    size_t sweep_res;          /* index of the resource it is in */
    char *sweep_ns, *sweep_name; /* the last key it looked at, or NULL: from the start */
    size_t sweep_pos;          /* how many of the resource it has passed this round */
    /* the idle sweeper thread (sweep.c) */
    pthread_t sweep_thread;
    bool sweep_running, sweep_stopping;
    pthread_mutex_t sweep_mu;
    pthread_cond_t sweep_cv;
    uint64_t batches, batched_writes; /* counts, for the curious (debug log) */
    /* How long the leaders held the commit section (write_mu) in all, and
     * how much of that they spent on the CPU (the rest they were preempted
     * or blocked while every other writer waited): said at close. */
    uint64_t held_ns, held_cpu_ns;
    /* The id of the newest dictionary (leader only). */
    int64_t zdict_seq;
    /* Each resource's dictionary for writers' lookups (store_res_zdict):
     * the resource's name and its r->zdict, borrowed; set with it. */
    pthread_mutex_t zdicts_mu;
    struct {
        const char *resource;
        store_zdict *d;
    } *zdicts;
    size_t nzdicts;
};

#endif
