/* admit.c - see admit.h. */
#include "store/admit.h"

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

int store_admit(ty_store *s, api_admit_op op, const api_resource *res, json_t *obj,
                const char *name, ty_error *err)
{
    api_lookup lk;

    store_admit_lookup(s, &lk);
    if (op == API_ADMIT_CREATE && api_admit_mutate(&lk, op, res, obj, err) < 0)
        return -1;
    return api_admit(&lk, op, res, obj, name, err);
}
