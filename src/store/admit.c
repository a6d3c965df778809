/* admit.c - see admit.h. */
#include "store/admit.h"

#include "api/nsrange.h"
#include "api/registry.h"

static json_t *lk_get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    store_obj *o = store_get(ctx, api_store_key(res), ns ? ns : "", name, NULL);
    json_t *j = o ? store_obj_json_read(o) : NULL;

    store_obj_unref(o);
    return j;
}

static size_t lk_count(void *ctx, const api_resource *res,
                       bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    store_list l = {0};
    ty_error err;
    size_t n = 0;

    ty_error_init(&err);
    if (store_list_objects(ctx, api_store_key(res),
                           &(store_list_opts){.filter = filter, .filter_arg = arg}, &l,
                           &err) == 0)
        n = l.n;
    store_list_free(&l);
    ty_error_clear(&err);
    return n;
}

void store_admit_lookup(ty_store *s, api_lookup *lk)
{
    *lk = (api_lookup){.get = lk_get, .count = lk_count, .ctx = s};
}

int store_admit_namespace(ty_store *s, const api_resource *res, const char *ns,
                          const char *name, ty_error *err)
{
    store_obj *o;
    bool ending;
    char gr[128];

    if (!res->namespaced)
        return 0;
    o = store_get(s, "namespaces", "", ns ? ns : "", NULL);
    if (!o)
        return ty_seterr(err, TY_ENOTFOUND, "namespaces \"%s\" not found", ns ? ns : "");
    ending = json_object_get(json_object_get(store_obj_json(o), "metadata"),
                             "deletionTimestamp") != NULL;
    store_obj_unref(o);
    if (!ending)
        return 0;
    /* admission's Forbidden: "<resource>[ \"<name>\"] is forbidden: ..." */
    api_group_resource(res, gr, sizeof(gr));
    ty_seterr(err, TY_EFORBIDDEN,
              "%s%s%s%s is forbidden: unable to create new content in namespace %s because it is "
              "being terminated",
              gr, name && *name ? " \"" : "", name && *name ? name : "", name && *name ? "\"" : "",
              ns);
    ty_error_add_cause(err, "NamespaceTerminating", "metadata.namespace",
                       "namespace %s is being terminated", ns);
    return -1;
}

static int run_chain(const api_lookup *lk, api_admit_op op, const api_resource *res,
                     json_t *obj, const char *name, ty_error *err)
{
    if (op == API_ADMIT_CREATE && api_admit_mutate(lk, op, res, obj, err) < 0)
        return -1;
    return api_admit(lk, op, res, obj, name, err);
}

int store_admit(ty_store *s, api_admit_op op, const api_resource *res, json_t *obj,
                const char *name, ty_error *err)
{
    api_lookup lk;

    store_admit_lookup(s, &lk);
    return run_chain(&lk, op, res, obj, name, err);
}

int store_admit_hooked(ty_store *s, api_admit_op op, const api_resource *res, json_t *obj,
                       const char *name, void (*warn)(void *ctx, const char *text),
                       void (*annotate)(void *ctx, const char *key, const char *value),
                       void *ctx, ty_error *err)
{
    api_lookup lk;

    store_admit_lookup(s, &lk);
    lk.warn = warn;
    lk.annotate = annotate;
    lk.hook_ctx = ctx;
    return run_chain(&lk, op, res, obj, name, err);
}

/* ---- the id blocks of namespaces made before them ------------------------ */

static bool lacks_range(const json_t *ns, void *arg)
{
    (void)arg;
    return nsrange_of(ns, NULL, NULL) < 0;
}

/* Copies the block's annotations (arg: a namespace holding them) unless the
 * namespace got one meanwhile. */
static int give_range(json_t *ns, void *arg, ty_error *err)
{
    const json_t *from = json_object_get(json_object_get(arg, "metadata"), "annotations");
    json_t *ann;

    if (nsrange_of(ns, NULL, NULL) == 0)
        return 0;
    ann = json_object_get(json_object_get(ns, "metadata"), "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        if (!ann || json_object_set_new(json_object_get(ns, "metadata"), "annotations", ann))
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    json_object_set(ann, NSRANGE_UID_ANNOTATION, json_object_get(from, NSRANGE_UID_ANNOTATION));
    json_object_set(ann, NSRANGE_GROUPS_ANNOTATION,
                    json_object_get(from, NSRANGE_GROUPS_ANNOTATION));
    return 0;
}

int store_admit_bootstrap(ty_store *s, ty_error *err)
{
    store_list l = {0};
    api_lookup lk;
    int rc = 0;

    store_admit_lookup(s, &lk);
    if (store_list_objects(s, "namespaces", &(store_list_opts){.filter = lacks_range}, &l,
                           err) < 0)
        return -1;
    /* The block is chosen outside the write (the choice reads the store). */
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        const char *name = json_string_value(json_object_get(
            json_object_get(store_obj_json(l.items[i]), "metadata"), "name"));
        json_t *scratch = json_object();
        ty_error e;
        store_obj *o = NULL;
        ty_error_init(&e);
        if (!name || !scratch || nsrange_assign(&lk, scratch, &e) < 0 ||
            !(o = store_mutate(s, "namespaces", "", name, give_range, scratch, &e))) {
            if (e.code != TY_ENOTFOUND && e.code != TY_OK) { /* gone meanwhile: fine */
                ty_seterr(err, e.code, "namespace %s: %s", name ? name : "?", e.text);
                rc = -1;
            }
        }
        ty_error_clear(&e);
        store_obj_unref(o);
        json_decref(scratch);
    }
    store_list_free(&l);
    return rc;
}
