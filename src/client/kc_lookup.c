/* kc_lookup.c - see kc_lookup.h. */
#include "client/kc_lookup.h"

#include "base/log.h"

static json_t *lk_get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    ty_error err;
    ty_obj *o;
    json_t *j;

    ty_error_init(&err);
    o = kc_get(ctx, api_store_key(res), ns ? ns : "", name, &err);
    if (!o) {
        if (err.code != TY_ENOTFOUND)
            ty_warn("admission: reading %s %s: %s", api_store_key(res), name, err.text);
        ty_error_clear(&err);
        return NULL;
    }
    j = ty_obj_json_read(o);
    ty_obj_unref(o);
    return j;
}

static size_t lk_count(void *ctx, const api_resource *res,
                       bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    kc_list l = {0};
    ty_error err;
    size_t n = 0;

    ty_error_init(&err);
    if (kc_list_objects(ctx, api_store_key(res),
                        &(kc_list_opts){.filter = filter, .filter_arg = arg}, &l, &err) == 0)
        n = l.n;
    else
        ty_warn("admission: listing %s: %s", api_store_key(res), err.text);
    kc_list_free(&l);
    ty_error_clear(&err);
    return n;
}

void kc_admit_lookup(ty_kc *c, api_lookup *lk)
{
    *lk = (api_lookup){.get = lk_get, .count = lk_count, .ctx = c};
}
