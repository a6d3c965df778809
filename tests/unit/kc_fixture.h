/* kc_fixture.h - the client interface (client/kc.h) over a test's store, for
 * handing the code under test what it takes: KC(s) is the embedded client
 * of store s, made on first use and kept (reachable) for the test's life:
 * it holds nothing but s, so a store reopened at the same address is served
 * by the same client. */
#ifndef TY_TESTS_UNIT_KC_FIXTURE_H
#define TY_TESTS_UNIT_KC_FIXTURE_H

#include <stdlib.h>

#include "client/kc_embedded.h"

static inline ty_kc *kc_fixture(ty_store *s)
{
    static struct {
        ty_store *s;
        ty_kc *kc;
    } *made;
    static size_t n, cap;

    for (size_t i = 0; i < n; i++)
        if (made[i].s == s)
            return made[i].kc;
    if (n == cap) {
        cap = cap ? 2 * cap : 16;
        made = realloc(made, cap * sizeof(*made));
        if (!made)
            abort();
    }
    made[n].s = s;
    made[n].kc = kc_embedded_new(s);
    return made[n++].kc;
}
#define KC(s) kc_fixture(s)

#endif
