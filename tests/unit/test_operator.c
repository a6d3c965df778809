/* test_operator.c - cli/operator.h's --enable-scheme parsing
 * (operator_schemes.c): names to the kind bits of api/kubeflow.h's
 * kf_kinds() and the Volcano flag; bad lists change nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/kubeflow.h"
#include "cli/operator.h"

/* The bits of every descriptor of kind name (MPIJob and MSJob have two). */
static uint64_t bits_of(const char *kind)
{
    size_t n;
    const kf_kind *const *all = kf_kinds(&n);
    uint64_t b = 0;

    for (size_t i = 0; i < n && i < 64; i++)
        if (!strcmp(all[i]->kind, kind))
            b |= (uint64_t)1 << i;
    return b;
}

static bool trainer_flag; /* what "trainjob" sets; test_trainjob_scheme looks */

static int add(const char *list, uint64_t *kinds, bool *volcano, ty_error *err)
{
    ty_error_init(err);
    return op_schemes_add(list, kinds, volcano, &trainer_flag, err);
}

static void test_trainjob_scheme(void **state)
{
    uint64_t kinds = 0;
    bool volcano = false;
    ty_error err;
    (void)state;

    trainer_flag = false;
    assert_int_equal(add("pytorchjob", &kinds, &volcano, &err), 0);
    assert_false(trainer_flag);
    assert_int_equal(add(" TrainJob ", &kinds, &volcano, &err), 0);
    assert_true(trainer_flag);
    assert_false(volcano);
    assert_true(kinds == bits_of("PyTorchJob"));
}

static void test_one_scheme(void **state)
{
    uint64_t kinds = 0;
    bool volcano = false;
    ty_error err;
    (void)state;

    assert_int_equal(add("pytorchjob", &kinds, &volcano, &err), 0);
    assert_true(bits_of("PyTorchJob") != 0);
    assert_true(kinds == bits_of("PyTorchJob"));
    assert_false(volcano);
}

static void test_list_case_blanks_and_repeats(void **state)
{
    uint64_t kinds = 0;
    bool volcano = false;
    ty_error err;
    (void)state;

    assert_int_equal(add(" TFJob , pytorchjob,MPIJOB", &kinds, &volcano, &err), 0);
    assert_true(kinds == (bits_of("TFJob") | bits_of("PyTorchJob") | bits_of("MPIJob")));
    assert_false(volcano);
    /* a second --enable-scheme adds to the first; a name twice is once */
    assert_int_equal(add("volcano,tfjob", &kinds, &volcano, &err), 0);
    assert_true(kinds == (bits_of("TFJob") | bits_of("PyTorchJob") | bits_of("MPIJob")));
    assert_true(volcano);
}

static void test_two_versions_both(void **state)
{
    uint64_t kinds = 0;
    bool volcano = false;
    ty_error err;
    size_t n, mpi = 0;
    const kf_kind *const *all = kf_kinds(&n);
    (void)state;

    for (size_t i = 0; i < n; i++)
        mpi += !strcmp(all[i]->kind, "MPIJob");
    assert_int_equal(add("mpijob", &kinds, &volcano, &err), 0);
    /* MPIJob v1 and v2beta1 are both run by the one scheme */
    assert_int_equal(__builtin_popcountll(kinds), (int)mpi);
    assert_true(mpi >= 2);
}

static void test_volcano_only(void **state)
{
    uint64_t kinds = 0;
    bool volcano = false;
    ty_error err;
    (void)state;

    assert_int_equal(add("Volcano", &kinds, &volcano, &err), 0);
    assert_true(kinds == 0);
    assert_true(volcano);
}

static void bad(const char *list, const char *want)
{
    uint64_t kinds = bits_of("TFJob");
    bool volcano = false;
    ty_error err;

    assert_int_equal(add(list, &kinds, &volcano, &err), -1);
    assert_int_equal(err.code, TY_EBADREQUEST);
    if (!strstr(err.text, want))
        print_error("%s: got \"%s\", want \"%s\"\n", list, err.text, want);
    assert_non_null(strstr(err.text, want));
    /* the known schemes are named, every one once, lower-case */
    assert_non_null(strstr(err.text, "want tfjob, pytorchjob, "));
    assert_non_null(strstr(err.text, "msjob"));
    assert_non_null(strstr(err.text, ", volcano"));
    /* MPIJob, served in two versions, is named once */
    const char *m = strstr(err.text, "mpijob");
    assert_non_null(m);
    assert_null(strstr(m + 1, "mpijob"));
    /* nothing was added, not even the good names before the bad one */
    assert_true(kinds == bits_of("TFJob"));
    assert_false(volcano);
    ty_error_clear(&err);
}

static void test_unknown_and_empty(void **state)
{
    (void)state;
    bad("pytorch", "unknown scheme \"pytorch\"");
    bad("volcano,pytorchjob,xjob", "unknown scheme \"xjob\"");
    bad("", "empty scheme name");
    bad("pytorchjob,", "empty scheme name");
    bad("pytorchjob,,tfjob", "empty scheme name");
    bad(" , ", "empty scheme name");
    bad("volcanojob", "unknown scheme \"volcanojob\"");
    bad("pytorchjobs", "unknown scheme \"pytorchjobs\"");
}

static void test_long_name_bounded(void **state)
{
    char list[4096];
    (void)state;

    memset(list, 'x', sizeof(list) - 1);
    list[sizeof(list) - 1] = '\0';
    /* the name is cut in the message; the known schemes still fit */
    bad(list, "unknown scheme \"xxxxxxxx");
}

static void test_all(void **state)
{
    uint64_t kinds = 0;
    bool volcano = false;
    size_t n;
    (void)state;

    kf_kinds(&n);
    trainer_flag = false;
    op_schemes_all(&kinds, &volcano, &trainer_flag);
    assert_true(trainer_flag);
    assert_int_equal(__builtin_popcountll(kinds), (int)(n < 64 ? n : 64));
    assert_true(volcano);
    assert_true((kinds & bits_of("MSJob")) == bits_of("MSJob"));
    assert_true((kinds & bits_of("JAXJob")) == bits_of("JAXJob"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_scheme),
        cmocka_unit_test(test_trainjob_scheme),
        cmocka_unit_test(test_list_case_blanks_and_repeats),
        cmocka_unit_test(test_two_versions_both),
        cmocka_unit_test(test_volcano_only),
        cmocka_unit_test(test_unknown_and_empty),
        cmocka_unit_test(test_long_name_bounded),
        cmocka_unit_test(test_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
