/* treearena.h - JSON trees that are built in one go, allocated together.
 *
 * jansson allocates every value, key and hash table of a tree on its own.
 * A pod the job engine builds is ~330 such blocks; built by one of eight
 * workers, later copied one level by the scheduler and the simulated nodes,
 * they lie scattered over the allocator's arenas, and the reaper thread
 * that frees a pod's tree when it goes cold takes a cache miss a block
 * walking them; a tree built in one place frees in about a third of the
 * time.
 *
 * Between ty_tree_arena_begin() and ty_tree_arena_end() on a thread, every
 * block jansson allocates there comes from a 64 KiB chunk carved in order
 * (the thread keeps its chunk from one scope to the next until it is full),
 * so a tree built in a scope lies in a few consecutive chunks. Freeing a
 * block only counts it; a chunk is reused once every block carved from it
 * has been freed, wherever and whenever that happens. The blocks are
 * jansson's as before: shared, reference counted and freed by whichever
 * thread lets go last.
 *
 * Rules for a scope: keep it to building trees. Whatever jansson hands the
 * caller to free() itself (json_dumps' text) must not be made in one: it
 * would be carved from a chunk that free() knows nothing about. A value
 * built in a scope keeps its chunk as long as it lives, so a scope builds
 * objects that are dropped whole (a pod's versions), not long-lived odds
 * and ends.
 *
 * ty_tree_arena_init installs the allocation functions (json_set_alloc_funcs)
 * and must run before the process makes its first JSON value; without it,
 * or in sanitizer builds (where it installs nothing unless forced, so that
 * AddressSanitizer keeps seeing every block), scopes are no-ops. */
#ifndef TY_BASE_TREEARENA_H
#define TY_BASE_TREEARENA_H

#include <stdbool.h>
#include <stddef.h>

#define TY_TREE_ARENA_CHUNK (64u * 1024u)

/* Reserves the chunks' address space and installs jansson's allocation
 * functions; force installs them in sanitizer builds too (tests). Whether
 * scopes now carve from chunks (false: no address space, or a sanitizer
 * build not forced). Only the first call does anything. */
bool ty_tree_arena_init(bool force);

/* Trees of different lifetimes are carved from different chunks (a lane
 * each, with its own chunk per thread), so that a chunk is not kept by one
 * long-lived tree among many dead ones. */
typedef enum {
    TY_TREES_STORED, /* objects written to the store: they live as long as their versions */
    TY_TREES_BRIEF,  /* read copies a thread frees itself moments later (a pass's views) */
    TY_TREE_LANES
} ty_tree_lane;

/* Scopes nest; a scope opened inside another carves for the outer one's
 * lane, and only the outermost end closes one. */
void ty_tree_arena_begin(ty_tree_lane lane);
void ty_tree_arena_end(void);

/* Whether p was carved from a chunk (tests). */
bool ty_tree_arena_owns(const void *p);

typedef struct {
    size_t chunks_made;   /* ever taken from the reserved space */
    size_t chunks_in_use; /* holding a live block or being carved */
    size_t chunks_free;   /* waiting to be reused */
} ty_tree_arena_stats;

void ty_tree_arena_stats_get(ty_tree_arena_stats *st);

#endif
