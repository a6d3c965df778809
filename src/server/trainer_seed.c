/* trainer_seed.c - the built-in ClusterTrainingRuntimes at start (trainer_seed.h). */
#include "server/trainer_seed.h"

#include "api/kinds.h"
#include "api/meta.h"
#include "api/trainer.h"

int server_seed_trainer_runtimes(ty_store *s, ty_error *err)
{
    const char *key = api_store_key(&api_clustertrainingruntime);
    json_t *all = trainer_builtin_runtimes(), *rt;
    size_t i;
    int rc = 0;

    json_array_foreach(all, i, rt) {
        const char *name = meta_str(json_object_get(rt, "metadata"), "name");
        store_obj *cur = store_get(s, key, "", name, NULL), *made;

        if (cur) {
            store_obj_unref(cur);
            continue;
        }
        if (api_prepare(&api_clustertrainingruntime, rt, NULL, err) < 0) {
            rc = -1; /* a built-in that fails its own kind's rules: a bug here */
            break;
        }
        made = store_create(s, key, "", rt, err);
        if (!made && err->code == TY_EEXISTS) {
            ty_error_clear(err);
        } else if (!made) {
            rc = -1;
            break;
        }
        store_obj_unref(made);
    }
    json_decref(all);
    return rc;
}
