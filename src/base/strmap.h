/* strmap.h - a string-keyed hash map of borrowed pointers (open addressing,
 * FNV-1a). Keys are borrowed too: a value usually carries its own key. */
#ifndef TY_BASE_STRMAP_H
#define TY_BASE_STRMAP_H

#include <stddef.h>

typedef struct strmap {
    struct strmap_slot *slots;
    size_t cap, n, tombs;
} strmap;

void strmap_init(strmap *m);
void strmap_free(strmap *m); /* frees the table, not the keys or values */
/* Frees every value with free(), then the table. */
void strmap_free_values(strmap *m);
void *strmap_get(const strmap *m, const char *key);
/* Inserts or replaces; the key must stay valid while it is in the map.
 * Returns -1 when out of memory (the map is unchanged). */
int strmap_put(strmap *m, const char *key, void *value);
/* Returns the removed value or NULL. */
void *strmap_del(strmap *m, const char *key);
size_t strmap_len(const strmap *m);

#endif
