/* treearena.c - chunks carved in order for the JSON trees of a scope (see
 * treearena.h).
 *
 * The chunks lie in one reserved stretch of address space (PROT_NONE until
 * used), so that the free function tells a block of a chunk from one of
 * malloc by its address alone, and finds its chunk's header by rounding the
 * address down. A chunk counts its live blocks; the thread carving it adds
 * a bias of CARVING instead of counting each block atomically, and trades
 * the bias for the number it carved when it moves on, so the count can
 * reach zero only once nobody carves the chunk and every block is freed.
 * Free chunks wait on a list; beyond KEEP_RESIDENT of them, their pages go
 * back to the kernel first. */
#include "base/treearena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__) || defined(TY_CHECK_SHARED)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

#define CHUNK ((size_t)TY_TREE_ARENA_CHUNK)
#define RESERVE ((size_t)16 << 30) /* 262,144 chunks of address space */
#define GROW 16                    /* chunks made writable at a time */
#define BIG (CHUNK / 8)            /* larger blocks come from malloc */
/* Free chunks that keep their pages (16 MiB). With few, the reaper's
 * bursts of frees send most chunks back (madvise, and a TLB shoot-down on
 * the other cores each time) for writers to fault in again soon after;
 * with more, the speed hardly moves and the peak memory grows, which the
 * 150,000-pod benchmark's 1 GB budget must hold (docs/benchmarks.md). */
#define KEEP_RESIDENT 256
#define ALIGN 16u                  /* as malloc's */
#define CARVING (1u << 20)         /* > the most blocks a chunk holds */

typedef struct chunk {
    atomic_uint live;   /* blocks not yet freed (+ CARVING while carved) */
    uint32_t used;      /* bytes carved, this header included */
    struct chunk *next; /* on a free list */
} chunk;

#define HEADER ((sizeof(chunk) + 63u) & ~(size_t)63u)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool inited;
static atomic_bool on;
static char *base;               /* CHUNK-aligned start of the reserve */
static size_t made, writable;    /* chunks handed out ever / made writable */
static chunk *resident, *dropped; /* free chunks with / without their pages */
static size_t nresident, ndropped;
static pthread_key_t thread_key;

static __thread chunk *cur[TY_TREE_LANES];      /* the chunk this thread carves, per lane */
static __thread unsigned carved[TY_TREE_LANES]; /* blocks carved from it */
static __thread unsigned depth;                 /* open scopes */
static __thread ty_tree_lane lane;              /* the outermost one's */
static __thread bool registered; /* thread_key set: thread_gone runs at exit */

static void give_back(chunk *c)
{
    bool drop;

    pthread_mutex_lock(&mu);
    drop = nresident >= KEEP_RESIDENT;
    if (!drop) {
        c->next = resident;
        resident = c;
        nresident++;
    }
    pthread_mutex_unlock(&mu);
    if (!drop)
        return;
    /* Its pages go back; touched again, they come back zeroed. */
    madvise(c, CHUNK, MADV_DONTNEED);
    pthread_mutex_lock(&mu);
    c->next = dropped;
    dropped = c;
    ndropped++;
    pthread_mutex_unlock(&mu);
}

/* The carver is done with its chunk of lane l: the bias becomes what it
 * carved. */
static void finish(ty_tree_lane l)
{
    chunk *c = cur[l];
    unsigned bias = CARVING - carved[l];

    cur[l] = NULL;
    carved[l] = 0;
    if (c && atomic_fetch_sub_explicit(&c->live, bias, memory_order_acq_rel) == bias)
        give_back(c);
}

static chunk *take(void)
{
    chunk *c = NULL;

    pthread_mutex_lock(&mu);
    if (resident) {
        c = resident;
        resident = c->next;
        nresident--;
    } else if (dropped) {
        c = dropped;
        dropped = c->next;
        ndropped--;
    } else if (made < RESERVE / CHUNK) {
        if (made == writable) {
            size_t n = RESERVE / CHUNK - writable < GROW ? RESERVE / CHUNK - writable : GROW;
            if (mprotect(base + writable * CHUNK, n * CHUNK, PROT_READ | PROT_WRITE) == 0)
                writable += n;
        }
        if (made < writable)
            c = (chunk *)(base + made++ * CHUNK);
    }
    pthread_mutex_unlock(&mu);
    if (c) {
        atomic_store_explicit(&c->live, CARVING, memory_order_relaxed);
        c->used = HEADER;
    }
    return c;
}

static void *arena_malloc(size_t n)
{
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    chunk *c;
    void *p;

    if (!depth || need > BIG || need == 0)
        return malloc(n);
    if (!(c = cur[lane]) || c->used + need > CHUNK) {
        finish(lane);
        if (!(c = cur[lane] = take()))
            return malloc(n); /* the reserve is used up: as without a scope */
    }
    p = (char *)c + c->used;
    c->used += (uint32_t)need;
    carved[lane]++;
    return p;
}

bool ty_tree_arena_owns(const void *p)
{
    return base && (uintptr_t)p - (uintptr_t)base < RESERVE;
}

static void arena_free(void *p)
{
    chunk *c;

    if (!ty_tree_arena_owns(p)) {
        free(p);
        return;
    }
    c = (chunk *)((uintptr_t)p & ~(uintptr_t)(CHUNK - 1));
    if (atomic_fetch_sub_explicit(&c->live, 1, memory_order_acq_rel) == 1)
        give_back(c);
}

/* A thread that carved lets go of its chunk when it ends. */
static void thread_gone(void *unused)
{
    (void)unused;
    for (int l = 0; l < TY_TREE_LANES; l++)
        finish((ty_tree_lane)l);
}

bool ty_tree_arena_init(bool force)
{
    void *r;

    pthread_mutex_lock(&mu);
    if (!inited && (!SANITIZED || force)) {
        r = mmap(NULL, RESERVE + CHUNK, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
        if (r != MAP_FAILED && pthread_key_create(&thread_key, thread_gone) == 0) {
            base = (char *)(((uintptr_t)r + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
            json_set_alloc_funcs(arena_malloc, arena_free);
            atomic_store(&on, true);
        } else if (r != MAP_FAILED) {
            munmap(r, RESERVE + CHUNK);
        }
    }
    inited = true;
    pthread_mutex_unlock(&mu);
    return atomic_load(&on);
}

void ty_tree_arena_begin(ty_tree_lane l)
{
    if (!atomic_load_explicit(&on, memory_order_relaxed) || (unsigned)l >= TY_TREE_LANES)
        return;
    if (!registered) {
        pthread_setspecific(thread_key, &registered);
        registered = true;
    }
    if (depth++ == 0)
        lane = l;
}

void ty_tree_arena_end(void)
{
    if (depth)
        depth--;
}

void ty_tree_arena_stats_get(ty_tree_arena_stats *st)
{
    pthread_mutex_lock(&mu);
    st->chunks_made = made;
    st->chunks_free = nresident + ndropped;
    st->chunks_in_use = made - st->chunks_free;
    pthread_mutex_unlock(&mu);
}
