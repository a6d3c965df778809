/* store_fixture.h - a unit test's store in a throwaway directory: cmocka
 * setup and teardown for tests that need nothing else (*state is a
 * store_fixture), and the open and close they are made of for fixtures
 * that start more on the store (a controller, the scheduler). Include after
 * cmocka.h. */
#ifndef TY_TESTS_UNIT_STORE_FIXTURE_H
#define TY_TESTS_UNIT_STORE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "tmpdir.h"

#include "store/store.h"

typedef struct store_fixture {
    char dir[64];
    ty_store *s;
} store_fixture;

/* Makes a new directory in dir (at least 20 bytes) and opens a store there
 * with opts (NULL: the defaults). */
static inline ty_store *store_fixture_open(char *dir, const store_options *opts)
{
    ty_store *s;
    ty_error err;

    ty_error_init(&err);
    strcpy(dir, "/tmp/ty-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    s = store_open_with(dir, opts, &err);
    if (!s)
        fail_msg("store_open_with %s: %s", dir, err.text);
    return s;
}

/* Closes s and removes dir with everything in it. */
static inline void store_fixture_close(char *dir, ty_store *s)
{
    store_close(s);
    tmpdir_remove(dir);
}

/* Makes namespace name in s: the client (kc_embedded.h), as the API,
 * creates nothing in a namespace that does not exist. */
static inline void store_fixture_namespace(ty_store *s, const char *name)
{
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", name);
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    o = store_create(s, "namespaces", "", ns, &err);
    json_decref(ns);
    if (!o)
        fail_msg("create namespace %s: %s", name, err.text);
    store_obj_unref(o);
}

static inline int store_fixture_setup(void **state)
{
    store_fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->s = store_fixture_open(f->dir, NULL);
    *state = f;
    return 0;
}

static inline int store_fixture_teardown(void **state)
{
    store_fixture *f = *state;

    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

#endif
