/* cold.c - compressed copies of objects' texts: per-resource zstd
 * dictionaries, compressing (the leader, as it stages a version, for its
 * row and its cold copy at once; the reaper, for a text that went cold
 * uncompressed: see sweep.c), decompressing (any reader, the loader). */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "store/store_int.h"

obj_z obj_z_none;

/* Level 1: the dictionary does the work (a pod goes from 2.6 KB to ~180
 * bytes in ~5 µs; higher levels gain little for much more time). */
#define ZDICT_LEVEL 1

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

/* One decompression context per thread that reads cold objects, freed with
 * the thread. */
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;

static void dctx_free(void *p)
{
    ZSTD_freeDCtx(p);
}

static void dctx_key_init(void)
{
    if (pthread_key_create(&dctx_key, dctx_free) != 0)
        abort(); /* only when the process is out of keys at start-up */
}

static ZSTD_DCtx *dctx_get(void)
{
    ZSTD_DCtx *dc;

    pthread_once(&dctx_once, dctx_key_init);
    if (!(dc = pthread_getspecific(dctx_key))) {
        if (!(dc = ZSTD_createDCtx()))
            return NULL;
        if (pthread_setspecific(dctx_key, dc) != 0) {
            ZSTD_freeDCtx(dc);
            return NULL;
        }
    }
    return dc;
}

char *obj_inflate(const store_obj *o)
{
    const obj_z *z = atomic_load_explicit(&((store_obj *)o)->z, memory_order_acquire);
    ZSTD_DCtx *dc;
    char *t;
    size_t n;

    if (!z || z == &obj_z_none)
        return NULL; /* a text is never dropped without its copy */
    if (!(dc = dctx_get()))
        return NULL;
    if (!(t = malloc(o->len + 1)))
        return NULL;
    n = ZSTD_decompress_usingDDict(dc, t, o->len, z->data, z->len, z->dict->ddict);
    if (ZSTD_isError(n) || n != o->len) {
        free(t); /* cannot happen short of memory corruption */
        return NULL;
    }
    t[n] = '\0';
    return t;
}

void obj_compress(store_obj *o, store_zdict *d, void *cctx)
{
    size_t bound = ZSTD_compressBound(o->len), n;
    obj_z *z, *none = NULL;
    const char *text = atomic_load_explicit(&o->text, memory_order_acquire);

    if (atomic_load_explicit(&o->z, memory_order_acquire) || !text ||
        !(z = malloc(sizeof(*z) + bound)))
        return;
    n = ZSTD_compress_usingCDict(cctx, z->data, bound, text, o->len, d->cdict);
    if (ZSTD_isError(n) || n >= o->len) {
        free(z);
        z = &obj_z_none;
    } else {
        obj_z *fit = realloc(z, sizeof(*z) + n);
        z = fit ? fit : z;
        z->len = n;
        z->dict = zdict_ref(d);
    }
    if (!atomic_compare_exchange_strong_explicit(&o->z, &none, z, memory_order_acq_rel,
                                                 memory_order_acquire) &&
        z != &obj_z_none) {
        zdict_unref(z->dict);
        free(z);
    }
}

store_obj *obj_new_z(uint64_t rv, const char *ns, const char *name, size_t len,
                     const void *data, size_t zlen, store_zdict *d, ty_error *err)
{
    store_obj *o = obj_new_text(rv, ns, name, "", 0, err);
    obj_z *z = o ? malloc(sizeof(*z) + zlen) : NULL;

    if (!z) {
        store_obj_unref(o);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    memcpy(z->data, data, zlen);
    z->len = zlen;
    z->dict = zdict_ref(d);
    atomic_store_explicit(&o->z, z, memory_order_relaxed);
    free(atomic_exchange_explicit(&o->text, NULL, memory_order_relaxed));
    o->len = len;
    return o;
}

char *zdict_inflate(store_zdict *d, const void *data, size_t zlen, size_t *len)
{
    unsigned long long n = ZSTD_getFrameContentSize(data, zlen);
    ZSTD_DCtx *dc;
    size_t got;
    char *t;

    if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR ||
        n > STORE_MAX_OBJECT_BYTES || !(dc = dctx_get()))
        return NULL;
    if (!(t = malloc((size_t)n + 1)))
        return NULL;
    got = ZSTD_decompress_usingDDict(dc, t, (size_t)n, data, zlen, d->ddict);
    if (ZSTD_isError(got) || got != n) {
        free(t);
        return NULL;
    }
    t[n] = '\0';
    *len = (size_t)n;
    return t;
}

char *obj_take_text_if_refs(store_obj *o, size_t refs)
{
    obj_z *z = atomic_load_explicit(&o->z, memory_order_acquire);

    if (!z || z == &obj_z_none || atomic_load_explicit(&o->refs, memory_order_acquire) != refs)
        return NULL;
    return atomic_exchange_explicit(&o->text, NULL, memory_order_acq_rel);
}

