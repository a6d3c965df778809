/* admit.h - the admission rules of api/admission.h, reading the store. */
#ifndef TY_SERVER_ADMIT_H
#define TY_SERVER_ADMIT_H

#include "api/admission.h"
#include "store/store.h"

/* api_admit with lookups into s. */
int server_admit(ty_store *s, api_admit_op op, const api_resource *res, const json_t *obj,
                 const char *name, ty_error *err);

#endif
