/* cold.c - compressed copies of objects' texts: per-resource zstd
 * dictionaries, compressing (a writer ahead of the commit section, or the
 * leader as it stages a version, for its row and its cold copy at once;
 * the reaper, for a text that went cold uncompressed: see sweep.c), and
 * decompressing (any reader, the loader). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#include <zstd.h>

#include "store/store_int.h"

obj_z obj_z_none;

/* Level 1: the dictionary does the work (a pod goes from 2.6 KB to ~135
 * bytes in ~1.5 µs; higher levels gain little for much more time). */
#define ZDICT_LEVEL 1
/* Fewer texts than this for the statistics: the content alone. */
#define ZDICT_STATS_MIN 4
/* Room for the entropy tables zstd puts ahead of the content. */
#define ZDICT_HEADER_ROOM 4096

store_zdict *zdict_new(const void *samples, size_t len, int64_t id, size_t objects)
{
    store_zdict *d = calloc(1, sizeof(*d) + len);

    if (!d)
        return NULL;
    atomic_init(&d->refs, 1);
    d->id = id;
    d->objects = objects;
    d->len = len;
    memcpy(d->content, samples, len);
    d->cdict = ZSTD_createCDict(samples, len, ZDICT_LEVEL);
    d->ddict = ZSTD_createDDict(samples, len);
    if (!d->cdict || !d->ddict) {
        zdict_unref(d);
        return NULL;
    }
    return d;
}

int zsamples_add(zdict_samples *sm, bool content, const char *text, size_t len)
{
    if (content) {
        if (ty_buf_append(&sm->content, text, len))
            return -1;
        sm->ncontent++;
        return 0;
    }
    if (sm->nstats == ZDICT_STATS_MAX)
        return 0;
    if (ty_buf_append(&sm->stats, text, len))
        return -1;
    sm->stat_len[sm->nstats++] = len;
    return 0;
}

void zsamples_clear(zdict_samples *sm)
{
    ty_buf_free(&sm->content);
    ty_buf_free(&sm->stats);
    sm->ncontent = sm->nstats = 0;
}

store_zdict *zdict_make(const zdict_samples *sm, int64_t id, size_t objects)
{
    ZDICT_params_t p = {.compressionLevel = ZDICT_LEVEL};
    size_t cap = sm->content.len + ZDICT_HEADER_ROOM, n;
    store_zdict *d = NULL;
    void *buf;

    /* The id, also written in each frame (one byte for the first 255): a
     * frame read with another dictionary fails instead of decoding wrong.
     * Zero would have zstd pick one at random. */
    p.dictID = id > 0 && id <= UINT32_MAX ? (unsigned)id : 1;
    if (sm->nstats >= ZDICT_STATS_MIN && (buf = malloc(cap))) {
        n = ZDICT_finalizeDictionary(buf, cap, sm->content.data, sm->content.len,
                                     sm->stats.data, sm->stat_len, (unsigned)sm->nstats, p);
        if (!ZDICT_isError(n))
            d = zdict_new(buf, n, id, objects);
        free(buf);
        if (d)
            return d;
    }
    /* too few texts for the statistics (or zstd failed: out of memory) */
    return sm->content.len ? zdict_new(sm->content.data, sm->content.len, id, objects) : NULL;
}

store_zdict *zdict_ref(store_zdict *d)
{
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
    return d;
}

void zdict_unref(store_zdict *d)
{
    if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1)
        return;
    ZSTD_freeCDict(d->cdict);
    ZSTD_freeDDict(d->ddict);
    free(d);
}

/* One decompression context per thread that reads cold objects, and one
 * compression context per thread that compresses (writers ahead of the
 * commit section, the leader, the reaper, the loader), freed with the
 * thread. */
static pthread_key_t dctx_key, cctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;

static void dctx_free(void *p)
{
    ZSTD_freeDCtx(p);
}

static void cctx_free(void *p)
{
    ZSTD_freeCCtx(p);
}

static void ctx_keys_init(void)
{
    if (pthread_key_create(&dctx_key, dctx_free) != 0 ||
        pthread_key_create(&cctx_key, cctx_free) != 0)
        abort(); /* only when the process is out of keys at start-up */
}

/* The calling thread's context under key, made by make the first time;
 * NULL when it cannot be made. */
static void *ctx_get(pthread_key_t *key, void *(*make)(void), void (*destroy)(void *))
{
    void *c;

    pthread_once(&ctx_once, ctx_keys_init);
    if (!(c = pthread_getspecific(*key))) {
        if (!(c = make()))
            return NULL;
        if (pthread_setspecific(*key, c) != 0) {
            destroy(c);
            return NULL;
        }
    }
    return c;
}

static void *dctx_make(void)
{
    return ZSTD_createDCtx();
}

static void *cctx_make(void)
{
    return ZSTD_createCCtx();
}

static ZSTD_DCtx *dctx_get(void)
{
    return ctx_get(&dctx_key, dctx_make, dctx_free);
}

static ZSTD_CCtx *cctx_get(void)
{
    return ctx_get(&cctx_key, cctx_make, cctx_free);
}

/* Decompresses data[0..zlen) (made with d; a text len bytes long once rv
 * is in at rv_at, 0: none) into a new NUL-terminated buffer; NULL when it
 * does not. */
static char *inflate(const void *data, size_t zlen, store_zdict *d, size_t rv_at, uint64_t rv,
                     size_t len)
{
    char digits[24];
    int nd = rv_at ? snprintf(digits, sizeof(digits), "%llu", (unsigned long long)rv) : 0;
    size_t qlen = len - (size_t)nd, n;
    ZSTD_DCtx *dc = dctx_get();
    char *t;

    if (!dc || (size_t)nd > len || rv_at > qlen || !(t = malloc(len + 1)))
        return NULL;
    n = ZSTD_decompress_usingDDict(dc, t, qlen, data, zlen, d->ddict);
    if (ZSTD_isError(n) || n != qlen) {
        free(t);
        return NULL;
    }
    if (nd) {
        memmove(t + rv_at + nd, t + rv_at, qlen - rv_at);
        memcpy(t + rv_at, digits, (size_t)nd);
    }
    t[len] = '\0';
    return t;
}

char *obj_inflate(const store_obj *o)
{
    const obj_z *z = atomic_load_explicit(&((store_obj *)o)->z, memory_order_acquire);

    if (!z || z == &obj_z_none)
        return NULL; /* a text is never dropped without its copy */
    /* NULL cannot happen short of memory corruption, or out of memory */
    return inflate(z->data, z->len, z->dict, z->rv_at, o->rv, o->len);
}

char *zdict_inflate(store_zdict *d, const void *data, size_t zlen, size_t rv_at, uint64_t rv,
                    size_t *len)
{
    unsigned long long n = ZSTD_getFrameContentSize(data, zlen);
    char digits[24];
    int nd = rv_at ? snprintf(digits, sizeof(digits), "%llu", (unsigned long long)rv) : 0;
    char *t;

    if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR ||
        n > STORE_MAX_OBJECT_BYTES)
        return NULL;
    if ((t = inflate(data, zlen, d, rv_at, rv, (size_t)n + (size_t)nd)))
        *len = (size_t)n + (size_t)nd;
    return t;
}

/* text[0..len) compressed with d (its rv at rv_at, 0: none) by the calling
 * thread's context: a new copy, &obj_z_none when it does not get smaller,
 * NULL when it cannot be made now (no context, out of memory). */
static obj_z *z_make(store_zdict *d, const char *text, size_t len, size_t rv_at)
{
    size_t bound = ZSTD_compressBound(len), n;
    ZSTD_CCtx *cc = cctx_get();
    obj_z *z, *fit;

    if (!cc || len > STORE_MAX_OBJECT_BYTES || !(z = malloc(sizeof(*z) + bound)))
        return NULL;
    n = ZSTD_compress_usingCDict(cc, z->data, bound, text, len, d->cdict);
    if (ZSTD_isError(n) || n >= len) {
        free(z);
        return &obj_z_none;
    }
    fit = realloc(z, sizeof(*z) + n);
    z = fit ? fit : z;
    z->len = (uint32_t)n;
    z->rv_at = (uint32_t)rv_at;
    z->dict = zdict_ref(d);
    return z;
}

obj_z *obj_z_make(store_zdict *d, const char *text, size_t len, size_t rv_at)
{
    obj_z *z = z_make(d, text, len, rv_at);

    return z == &obj_z_none ? NULL : z;
}

void obj_z_free(obj_z *z)
{
    if (!z || z == &obj_z_none)
        return;
    zdict_unref(z->dict);
    free(z);
}

void obj_set_z(store_obj *o, obj_z *z)
{
    atomic_store_explicit(&o->z, z, memory_order_relaxed);
}

void obj_compress(store_obj *o, store_zdict *d)
{
    obj_z *z, *none = NULL;
    const char *text = atomic_load_explicit(&o->text, memory_order_acquire);

    if (atomic_load_explicit(&o->z, memory_order_acquire) || !text ||
        !(z = z_make(d, text, o->len, 0)))
        return;
    if (!atomic_compare_exchange_strong_explicit(&o->z, &none, z, memory_order_acq_rel,
                                                 memory_order_acquire))
        obj_z_free(z);
}

char *obj_take_text_if_refs(store_obj *o, size_t refs)
{
    obj_z *z = atomic_load_explicit(&o->z, memory_order_acquire);

    if (!z || z == &obj_z_none || atomic_load_explicit(&o->refs, memory_order_acquire) != refs)
        return NULL;
    return atomic_exchange_explicit(&o->text, NULL, memory_order_acq_rel);
}


/* Writers look up the dictionary without index_rw, which the sweeper holds
 * for writing through a whole step of its walk (readers waited ~0.2 s per
 * thread and second there at 150,000 pods): a small table of their own,
 * under a mutex held for a lookup or a swap. */
store_zdict *store_res_zdict(ty_store *s, const char *resource)
{
    store_zdict *d = NULL;

    pthread_mutex_lock(&s->zdicts_mu);
    for (size_t i = 0; i < s->nzdicts; i++)
        if (strcmp(s->zdicts[i].resource, resource) == 0) {
            d = zdict_ref(s->zdicts[i].d);
            break;
        }
    pthread_mutex_unlock(&s->zdicts_mu);
    return d;
}

int res_set_zdict(ty_store *s, store_res *r, store_zdict *d)
{
    store_zdict *old = r->zdict;
    size_t i;

    pthread_mutex_lock(&s->zdicts_mu);
    for (i = 0; i < s->nzdicts && s->zdicts[i].resource != r->name; i++)
        ;
    if (i == s->nzdicts) {
        void *grown = realloc(s->zdicts, (i + 1) * sizeof(*s->zdicts));
        if (!grown) {
            pthread_mutex_unlock(&s->zdicts_mu);
            zdict_unref(d);
            return -1;
        }
        s->zdicts = grown;
        s->zdicts[i].resource = r->name;
        s->nzdicts++;
    }
    s->zdicts[i].d = d;
    r->zdict = d;
    pthread_mutex_unlock(&s->zdicts_mu);
    zdict_unref(old); /* a writer that looked it up holds its own reference */
    return 0;
}
