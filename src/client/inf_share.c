/* inf_share.c - one copy of an object version for every informer cache
 * that holds it (see inf_share.h). */
#include "client/inf_share.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"

typedef struct share {
    const ty_obj *obj; /* borrowed: every holder has a reference */
    size_t holders;
    char key[];
} share;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static strmap by_key;
static size_t n_shared; /* entries with two holders or more */

/* client, resource, namespace, name, uid, resourceVersion: a version. */
static bool version_key(char *key, size_t len, const ty_kc *c, const char *resource,
                        const ty_obj *o)
{
    json_t *meta = ty_obj_metadata(o);
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    char rv[TY_RV_MAX];
    int n;

    ty_obj_rv(o, rv, sizeof(rv));
    n = name && uid && *rv
            ? snprintf(key, len, "%p\x01%s\x01%s\x01%s\x01%s\x01%s", (const void *)c, resource,
                       ns ? ns : "", name, uid, rv)
            : -1;
    json_decref(meta);
    return n > 0 && (size_t)n < len;
}

ty_obj *inf_share_acquire(const ty_kc *c, const char *resource, ty_obj *o)
{
    char key[1024];
    share *s;
    ty_obj *keep = o;

    if (!version_key(key, sizeof(key), c, resource, o))
        return ty_obj_ref(o);
    pthread_mutex_lock(&mu);
    if (!by_key.cap)
        strmap_init(&by_key);
    if ((s = strmap_get(&by_key, key))) {
        if (s->holders++ == 1)
            n_shared++;
        keep = (ty_obj *)s->obj;
    } else if ((s = malloc(sizeof(*s) + strlen(key) + 1))) {
        strcpy(s->key, key);
        s->obj = o;
        s->holders = 1;
        if (strmap_put(&by_key, s->key, s) < 0)
            free(s);
    }
    keep = ty_obj_ref(keep);
    pthread_mutex_unlock(&mu);
    return keep;
}

void inf_share_release(const ty_kc *c, const char *resource, const ty_obj *o)
{
    char key[1024];
    share *s;

    if (!version_key(key, sizeof(key), c, resource, o))
        return;
    pthread_mutex_lock(&mu);
    /* only the kept copy counts: o may be a cache's own, not shared (out
     * of memory when it came) */
    if (by_key.cap && (s = strmap_get(&by_key, key)) && s->obj == o) {
        if (--s->holders == 1)
            n_shared--;
        if (!s->holders) {
            strmap_del(&by_key, s->key);
            free(s);
        }
    }
    pthread_mutex_unlock(&mu);
}

void inf_share_stats(size_t *versions, size_t *shared)
{
    pthread_mutex_lock(&mu);
    if (versions)
        *versions = by_key.cap ? strmap_len(&by_key) : 0;
    if (shared)
        *shared = n_shared;
    pthread_mutex_unlock(&mu);
}
