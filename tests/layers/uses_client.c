/* A file of a layer above the client: it may use the client interface.
 * (Compiled by the layers_* tests with that layer's include root only.) */
#include "client/kc.h"

ty_obj *layers_probe(ty_kc *c)
{
    return kc_get(c, "pods", "default", "p", NULL);
}
