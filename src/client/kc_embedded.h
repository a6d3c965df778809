/* kc_embedded.h - the client interface (kc.h) over an open store, for the
 * process that owns the store: `trainyard server` and tests. Nothing above
 * the client layer includes this (it brings store.h). */
#ifndef TY_CLIENT_KC_EMBEDDED_H
#define TY_CLIENT_KC_EMBEDDED_H

#include "client/kc.h"
#include "store/store.h"

/* A client whose calls go straight into s (borrowed: close it after
 * kc_free). NULL when out of memory. */
ty_kc *kc_embedded_new(ty_store *s);

#endif
