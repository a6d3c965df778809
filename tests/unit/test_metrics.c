/* test_metrics.c - the metrics registry (base/metrics.c): series rendered in
 * the text format, and collectors that write their own series at each
 * render and stop when removed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
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

/* Histograms render cumulative buckets, le last, then _sum and _count. */
static void test_histogram(void **state)
{
    static const double bounds[] = {0.1, 1, 10};
    ty_buf out = {0};

    (void)state;
    ty_metric_declare_histogram("t_seconds", "a test histogram", bounds, 3);
    ty_metric_observe("t_seconds", "verb=\"GET\"", 0.05);
    ty_metric_observe("t_seconds", "verb=\"GET\"", 0.1); /* le is inclusive */
    ty_metric_observe("t_seconds", "verb=\"GET\"", 5);
    ty_metric_observe("t_seconds", "verb=\"GET\"", 50);
    ty_metric_observe("t_seconds", NULL, 2);
    ty_metric_add("t_seconds", "verb=\"GET\"", 7); /* not a counter: ignored */
    assert_true(ty_metric_get("t_seconds", "verb=\"GET\"") == 4);
    ty_metrics_render(&out);
    assert_non_null(strstr(out.data, "# TYPE t_seconds histogram\n"
                                     "t_seconds_bucket{verb=\"GET\",le=\"0.1\"} 2\n"
                                     "t_seconds_bucket{verb=\"GET\",le=\"1\"} 2\n"
                                     "t_seconds_bucket{verb=\"GET\",le=\"10\"} 3\n"
                                     "t_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 4\n"
                                     "t_seconds_sum{verb=\"GET\"} 55.149999999999999\n"
                                     "t_seconds_count{verb=\"GET\"} 4\n"
                                     "t_seconds_bucket{le=\"0.1\"} 0\n"));
    assert_non_null(strstr(out.data, "t_seconds_bucket{le=\"+Inf\"} 1\nt_seconds_sum 2\n"
                                     "t_seconds_count 1\n"));
    ty_buf_free(&out);
}

/* Many series of one metric are each found again (the hash index). */
static void test_many_series(void **state)
{
    char labels[64];

    (void)state;
    ty_metric_declare("t_many_total", TY_COUNTER, "many series");
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 1000; i++) {
            snprintf(labels, sizeof(labels), "i=\"%d\"", i);
            ty_metric_add("t_many_total", labels, i);
        }
    for (int i = 0; i < 1000; i++) {
        snprintf(labels, sizeof(labels), "i=\"%d\"", i);
        assert_true(ty_metric_get("t_many_total", labels) == 3.0 * i);
    }
    assert_true(ty_metric_get("t_many_total", "i=\"1000\"") == 0);
}

/* A label value never ends its label or its line. */
static void test_label_escape(void **state)
{
    char out[64];
    (void)state;
    assert_string_equal(ty_metric_label_escape("plain", out, sizeof(out)), "plain");
    assert_string_equal(ty_metric_label_escape("x\"} 0\ny{a=\"\\", out, sizeof(out)),
                        "x\\\"} 0\\ny{a=\\\"\\\\");
    assert_string_equal(ty_metric_label_escape(NULL, out, sizeof(out)), "");
    ty_metric_label_escape("\"\"\"\"", out, 6); /* cut short, still whole escapes */
    assert_string_equal(out, "\\\"\\\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_and_collectors),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_many_series),
        cmocka_unit_test(test_label_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
