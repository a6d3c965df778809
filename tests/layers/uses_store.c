/* A file of a layer above the client reaching for the store: the build must
 * refuse it (the layers_*_cannot_include_store tests expect this to fail). */
#include "store/store.h"

store_obj *layers_probe(ty_store *s)
{
    return store_get(s, "pods", "default", "p", NULL);
}
