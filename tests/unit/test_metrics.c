/* test_metrics.c - the metrics registry (base/metrics.c): series rendered in
 * the text format, and collectors that write their own series at each
 * render and stop when removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "base/metrics.h"

static void write_one(ty_buf *out, void *arg)
{
    ty_buf_printf(out, "collected{n=\"%d\"} 1\n", *(int *)arg);
}

static void test_series_and_collectors(void **state)
{
    int a = 1, b = 2;
    ty_buf out = {0};

    (void)state;
    ty_metric_declare("t_total", TY_COUNTER, "a test counter");
    ty_metric_add("t_total", "k=\"v\"", 2);
    assert_int_equal(ty_metrics_add_collector(write_one, &a), 0);
    assert_int_equal(ty_metrics_add_collector(write_one, &b), 0);
    ty_metrics_render(&out);
    assert_non_null(strstr(out.data, "# TYPE t_total counter\nt_total{k=\"v\"} 2\n"));
    assert_non_null(strstr(out.data, "collected{n=\"1\"} 1\n"));
    assert_non_null(strstr(out.data, "collected{n=\"2\"} 1\n"));
    ty_buf_free(&out);

    ty_metrics_remove_collector(write_one, &a);
    ty_metrics_remove_collector(write_one, &a); /* absent: a no-op */
    ty_metrics_render(&out);
    assert_null(strstr(out.data, "collected{n=\"1\"}"));
    assert_non_null(strstr(out.data, "collected{n=\"2\"} 1\n"));
    ty_buf_free(&out);
    ty_metrics_remove_collector(write_one, &b);

    /* The table is bounded. */
    int many[16];
    int added = 0;
    for (int i = 0; i < 16; i++)
        added += ty_metrics_add_collector(write_one, &many[i]) == 0;
    assert_true(added > 0 && added < 16);
    for (int i = 0; i < 16; i++)
        ty_metrics_remove_collector(write_one, &many[i]);
    ty_metrics_render(&out);
    assert_null(strstr(out.data, "collected"));
    ty_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_and_collectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
