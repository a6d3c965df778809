/* strmap.c - open addressing with linear probing; deletions leave
 * tombstones that a resize clears. */
#include "base/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct strmap_slot {
    const char *key; /* NULL = empty; TOMB = deleted */
    void *value;
    uint64_t hash;
};

static const char tomb_mark;
#define TOMB (&tomb_mark)

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void strmap_init(strmap *m)
{
    memset(m, 0, sizeof(*m));
}

void strmap_free(strmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static struct strmap_slot *find(const strmap *m, const char *key, uint64_t h)
{
    if (!m->cap)
        return NULL;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct strmap_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != TOMB && s->hash == h && strcmp(s->key, key) == 0)
            return s;
    }
}

void strmap_free_values(strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != TOMB)
            free(m->slots[i].value);
    strmap_free(m);
}

void *strmap_get(const strmap *m, const char *key)
{
    struct strmap_slot *s = find(m, key, hash_str(key));
    return s ? s->value : NULL;
}

static int grow(strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    struct strmap_slot *old = m->slots, *nw;

    if (m->cap && m->n * 2 < m->cap)
        cap = m->cap; /* mostly tombstones: rehash at the same size */
    nw = calloc(cap, sizeof(*nw));
    if (!nw)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!old[i].key || old[i].key == TOMB)
            continue;
        size_t j = old[i].hash & (cap - 1);
        while (nw[j].key)
            j = (j + 1) & (cap - 1);
        nw[j] = old[i];
    }
    free(old);
    m->slots = nw;
    m->cap = cap;
    m->tombs = 0;
    return 0;
}

int strmap_put(strmap *m, const char *key, void *value)
{
    uint64_t h = hash_str(key);
    struct strmap_slot *s = find(m, key, h);

    if (s) {
        s->key = key;
        s->value = value;
        return 0;
    }
    if ((m->n + m->tombs + 1) * 4 > m->cap * 3 && grow(m) < 0)
        return -1;
    size_t i = h & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != TOMB)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == TOMB)
        m->tombs--;
    m->slots[i].key = key;
    m->slots[i].value = value;
    m->slots[i].hash = h;
    m->n++;
    return 0;
}

void *strmap_del(strmap *m, const char *key)
{
    struct strmap_slot *s = find(m, key, hash_str(key));
    void *v;

    if (!s)
        return NULL;
    v = s->value;
    s->key = TOMB;
    s->value = NULL;
    m->n--;
    m->tombs++;
    return v;
}

size_t strmap_len(const strmap *m)
{
    return m->n;
}
