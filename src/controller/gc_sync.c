/* gc_sync.c - the garbage collector without its thread, for tests that
 * drive it one turn at a time (gc_int.h: gc_sync_new, gc_turn). */
#include <stdlib.h>

#include "controller/gc_int.h"

ty_gc *gc_sync_new(ty_kc *s)
{
    ty_gc *g = calloc(1, sizeof(*g));

    if (!g || !(g->buckets = calloc(256, sizeof(*g->buckets)))) {
        free(g);
        return NULL;
    }
    g->s = s;
    g->nbuckets = 256;
    pthread_mutex_init(&g->mu, NULL);
    return g;
}

void gc_sync_free(ty_gc *g)
{
    if (!g)
        return;
    kc_watch_close(g->w);
    gc_graph_clear(g);
    free(g->buckets);
    free(g->retries);
    pthread_mutex_destroy(&g->mu);
    free(g);
}
