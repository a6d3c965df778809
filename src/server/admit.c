/* admit.c - the admission rules' lookups (api/admission.h) over the store. */
#include "server/admit.h"

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

int server_admit(ty_store *s, api_admit_op op, const api_resource *res, const json_t *obj,
                 const char *name, ty_error *err)
{
    api_lookup lk = {.get = lk_get, .count = lk_count, .ctx = s};

    return api_admit(&lk, op, res, obj, name, err);
}
