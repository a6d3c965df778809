/* obj.h - an immutable, reference-counted snapshot of one API object.
 *
 * What the client interface (client/kc.h) hands out: a store snapshot in
 * embedded mode (store/store.h's store_obj begins with a ty_obj), an object
 * decoded from an HTTP answer otherwise (ty_obj_new below). Readers use the
 * accessors here and never learn which. A snapshot never changes; share it
 * between threads freely, never modify what ty_obj_json returns
 * (json_deep_copy it, or ask ty_obj_json_copy). */
#ifndef TY_MODEL_OBJ_H
#define TY_MODEL_OBJ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ty_obj ty_obj;

/* A view: the few fields of an object that a controller reads pass after
 * pass (of a pod, the job engines want its names, labels, phase and
 * container states, not its spec). make builds it from the whole object
 * (a new tree; NULL when there is nothing to show). An implementation may
 * keep what make gave for the version it was made from (the store does). */
typedef struct ty_view {
    const char *name;
    json_t *(*make)(const json_t *obj);
    /* The members make reads (NULL-terminated), or NULL for any: an object
     * without its tree is then parsed for those alone. "a" is all of
     * top-level member a, "a.b" only member b of it (of an object a). */
    const char *const *members;
} ty_view;

/* What one kind of snapshot does; every accessor below is one call through
 * it. See the accessors for the contract of each. */
typedef struct ty_obj_class {
    const json_t *(*json)(const ty_obj *o);
    const json_t *(*json_light)(const ty_obj *o, bool *light);
    json_t *(*json_copy)(const ty_obj *o);
    json_t *(*json_read)(const ty_obj *o);
    json_t *(*metadata)(const ty_obj *o);
    json_t *(*view)(const ty_obj *o, const ty_view *view);
    const char *(*text_read)(const ty_obj *o, size_t *len, char **owned);
    void (*key)(const ty_obj *o, const char **ns, const char **name);
    void (*rv)(const ty_obj *o, char *buf, size_t len);
    ty_obj *(*ref)(ty_obj *o);
    void (*unref)(ty_obj *o);
} ty_obj_class;

struct ty_obj {
    const ty_obj_class *cls;
};

/* The longest resourceVersion kept (etcd's are 20 digits at most). */
#define TY_RV_MAX 64

/* Its JSON, borrowed while the caller holds o; NULL when out of memory. */
static inline const json_t *ty_obj_json(const ty_obj *o) { return o->cls->json(o); }
/* Its JSON for a reader that needs only metadata, status and the scalar
 * members of spec (nodeName, not containers): possibly such a light tree
 * (*light, which may be NULL, says so); a reader that finds it needs more
 * asks ty_obj_json. Borrowed as ty_obj_json. */
static inline const json_t *ty_obj_json_light(const ty_obj *o, bool *light)
{
    return o->cls->json_light(o, light);
}
/* A deep copy the caller owns and may change (decref it); NULL when out of
 * memory. */
static inline json_t *ty_obj_json_copy(const ty_obj *o) { return o->cls->json_copy(o); }
/* Its JSON for one look, a new reference (read it, never change it): for a
 * scan that reads each object once and should not leave each a tree. */
static inline json_t *ty_obj_json_read(const ty_obj *o) { return o->cls->json_read(o); }
/* Its metadata, a new reference (caller decrefs); NULL when it has none. */
static inline json_t *ty_obj_metadata(const ty_obj *o) { return o->cls->metadata(o); }
/* o as view shows it, a new tree the caller owns; NULL when make gave nothing. */
static inline json_t *ty_obj_view(const ty_obj *o, const ty_view *view)
{
    return o->cls->view(o, view);
}
/* Its compact JSON text for one look, NUL-terminated: borrowed, or made into
 * a buffer the caller frees (*owned, else NULL). NULL when out of memory. */
static inline const char *ty_obj_text_read(const ty_obj *o, size_t *len, char **owned)
{
    return o->cls->text_read(o, len, owned);
}
/* Its namespace ("" when cluster-scoped) and name, borrowed while o is. */
static inline void ty_obj_key(const ty_obj *o, const char **ns, const char **name)
{
    o->cls->key(o, ns, name);
}
/* Its resourceVersion, an opaque string (compare for equality only) written
 * to buf (TY_RV_MAX bytes is always enough); "" when it has none. */
static inline void ty_obj_rv(const ty_obj *o, char *buf, size_t len)
{
    o->cls->rv(o, buf, len);
}
/* Reference counting; both take NULL. */
static inline ty_obj *ty_obj_ref(ty_obj *o) { return o ? o->cls->ref(o) : NULL; }
static inline void ty_obj_unref(ty_obj *o)
{
    if (o)
        o->cls->unref(o);
}

/* A snapshot of json (the reference is taken over whatever the outcome),
 * for objects that come from elsewhere than the store (an HTTP answer, a
 * test's fake client). Its views are made on every call. NULL when out of
 * memory. Thread-safe reference counting. */
ty_obj *ty_obj_new(json_t *json);

#endif
