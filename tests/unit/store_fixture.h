/* store_fixture.h - a unit test's store in a throwaway directory: cmocka
 * setup and teardown for tests that need nothing else (*state is a
 * store_fixture). Include after cmocka.h. */
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

static int store_fixture_setup(void **state)
{
    store_fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    assert_non_null(f);
    ty_error_init(&err);
    strcpy(f->dir, "/tmp/ty-unit-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->s = store_open(f->dir, &err);
    assert_non_null(f->s);
    *state = f;
    return 0;
}

static int store_fixture_teardown(void **state)
{
    store_fixture *f = *state;

    store_close(f->s);
    tmpdir_remove(f->dir);
    free(f);
    return 0;
}

#endif
