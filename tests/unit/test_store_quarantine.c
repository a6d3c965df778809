/* test_store_quarantine.c - rows the store cannot load are set aside at open
 * (moved to the quarantine table with why, logged, counted, listed) and the
 * store opens without them: one damaged row, a NUL stored by an older
 * build, or the two rows two servers on one data directory left behind,
 * used to keep the whole control plane from starting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "base/metrics.h"
#include "base/timeutil.h"
#include "store_fixture.h"

static store_obj *create(ty_store *s, const char *name, const char *label)
{
    ty_error err;
    json_t *j = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1",
                          "kind", "Pod", "metadata", "name", name, "labels", "l", label, "spec",
                          "containers", "name", "c", "image", "busybox");
    store_obj *o;

    ty_error_init(&err);
    o = store_create(s, "pods", "default", j, &err);
    json_decref(j);
    if (!o)
        fail_msg("create %s: %s", name, err.text);
    return o;
}

/* Runs sql on the closed store's database; how many rows it changed. */
static int db_exec(const char *dir, const char *sql)
{
    char path[128];
    sqlite3 *db;
    int n;

    snprintf(path, sizeof(path), "%s/trainyard.db", dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    n = sqlite3_changes(db);
    sqlite3_close(db);
    return n;
}

static long long db_number(const char *dir, const char *sql)
{
    char path[128];
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v;

    snprintf(path, sizeof(path), "%s/trainyard.db", dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void reopen(store_fixture *f)
{
    ty_error err;

    ty_error_init(&err);
    f->s = store_open(f->dir, &err);
    if (!f->s)
        fail_msg("the store did not open: %s", err.text);
}

static void close_store(store_fixture *f)
{
    store_close(f->s);
    f->s = NULL;
}

static bool present(store_fixture *f, const char *name)
{
    store_obj *o = store_get(f->s, "pods", "default", name, NULL);
    store_obj_unref(o);
    return o != NULL;
}

/* The last row store_quarantine_list gives. */
static json_t *last_aside(store_fixture *f, size_t want_rows)
{
    ty_error err;
    json_t *rows, *last;

    ty_error_init(&err);
    rows = store_quarantine_list(f->dir, &err);
    assert_non_null(rows);
    assert_int_equal(json_array_size(rows), want_rows);
    last = json_incref(json_array_get(rows, want_rows - 1));
    json_decref(rows);
    return last;
}

/* Damaged rows and rows holding what the text form cannot carry back (a
 * NUL escape, bytes not UTF-8, nesting past what a parse takes): each is
 * set aside whole, the open goes on, the rest is there. */
static void test_bad_rows_set_aside(void **state)
{
    static const char *const bad[] = {
        "[1,2]",
        "{\"metadata\":{\"name\":",
        "{\"a\":1,,}",
        "{\"metadata\":{\"name\":\"victim\"},\"spec\":{\"x\":[1}",
        "{\"metadata\":{}} {}",
        "not json",
        "{\"metadata\":{\"name\":\"victim\",\"annotations\":{\"a\":\"a\\u0000b\"}}}",
        "{\"metadata\":{\"name\":\"victim\"},\"data\":{\"k\":\"x\\u0000\"}}",
        "{\"metadata\":{\"name\":\"victim\"},\"data\":{\"k\":\"\xc0\xaf\"}}",
    };
    static const char *const why[] = {
        "not one JSON object", "not one JSON object", NULL, "not one JSON object",
        "not one JSON object", "not one JSON object", "NUL", "NUL", "not UTF-8"};
    store_fixture *f = *state;
    char sql[512];
    size_t i, n = sizeof(bad) / sizeof(*bad);

    store_obj_unref(create(f->s, "keeper", "a"));
    for (i = 0; i <= n; i++) {
        json_t *row;
        char *deep = NULL;
        const char *text = i < n ? bad[i] : NULL;
        long long rv;

        store_obj_unref(create(f->s, "victim", "a"));
        close_store(f);
        if (!text) {
            /* nested past 2048: no parse reads it */
            deep = malloc(3000 * 2 + 64);
            strcpy(deep, "{\"metadata\":{},\"x\":");
            for (int d = 0; d < 3000; d++)
                strcat(deep, "[");
            for (int d = 0; d < 3000; d++)
                strcat(deep, "]");
            strcat(deep, "}");
            text = deep;
        }
        rv = db_number(f->dir, "SELECT rv FROM objects WHERE name = 'victim'");
        {
            /* bound as a blob: the bytes as they are, not UTF-8 checked */
            char path[128];
            sqlite3 *db;
            sqlite3_stmt *st;
            snprintf(path, sizeof(path), "%s/trainyard.db", f->dir);
            assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
            assert_int_equal(sqlite3_prepare_v2(db, "UPDATE objects SET data = CAST(?1 AS TEXT)"
                                                    " WHERE name = 'victim'",
                                                -1, &st, NULL),
                             SQLITE_OK);
            sqlite3_bind_blob(st, 1, text, (int)strlen(text), SQLITE_STATIC);
            assert_int_equal(sqlite3_step(st), SQLITE_DONE);
            sqlite3_finalize(st);
            assert_int_equal(sqlite3_changes(db), 1);
            sqlite3_close(db);
        }
        reopen(f);
        assert_false(present(f, "victim"));
        assert_true(present(f, "keeper"));
        /* versions handed out are never handed out again */
        assert_true(store_current_rv(f->s) >= (uint64_t)rv);
        row = last_aside(f, i + 1);
        assert_string_equal(json_string_value(json_object_get(row, "name")), "victim");
        assert_string_equal(json_string_value(json_object_get(row, "resource")), "pods");
        assert_int_equal(json_integer_value(json_object_get(row, "bytes")), strlen(text));
        assert_non_null(strstr(json_string_value(json_object_get(row, "reason")),
                               "pods default/victim"));
        if (i == n)
            assert_non_null(strstr(json_string_value(json_object_get(row, "reason")),
                                   "nested too deeply"));
        else if (why[i])
            assert_non_null(strstr(json_string_value(json_object_get(row, "reason")), why[i]));
        json_decref(row);
        assert_true(ty_metric_get("trainyard_store_quarantined_rows", NULL) == (double)(i + 1));
        /* the row is kept whole, byte for byte */
        snprintf(sql, sizeof(sql),
                 "SELECT count(*) FROM quarantine WHERE name = 'victim'"
                 " AND length(CAST(data AS BLOB)) = %zu"
                 " AND rv = %lld",
                 strlen(text), rv);
        assert_int_equal(db_number(f->dir, sql), 1);
        assert_int_equal(db_number(f->dir, "SELECT count(*) FROM objects WHERE name = 'victim'"),
                         0);
        free(deep);
    }
    /* the next open finds nothing new to set aside */
    close_store(f);
    reopen(f);
    assert_true(ty_metric_get("trainyard_store_quarantined_rows", NULL) == (double)(n + 1));
    assert_false(present(f, "victim"));
    assert_true(present(f, "keeper"));
}

/* Two rows for one object (two servers on one data directory): the newest
 * resourceVersion stays, whichever row came first; the other is set aside. */
static void test_duplicate_rows_newest_kept(void **state)
{
    store_fixture *f = *state;
    store_obj *o;
    json_t *row;

    store_obj_unref(create(f->s, "twice", "old"));
    close_store(f);
    /* a later row with a newer version and other content */
    assert_int_equal(db_exec(f->dir, "INSERT INTO objects (resource, namespace, name, rv, data)"
                                     " SELECT resource, namespace, name, rv + 100,"
                                     " replace(data, '\"old\"', '\"new\"') FROM objects"
                                     " WHERE name = 'twice'"),
                     1);
    reopen(f);
    o = store_get(f->s, "pods", "default", "twice", NULL);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                            "labels"),
                            "l")),
                        "new");
    store_obj_unref(o);
    row = last_aside(f, 1);
    assert_non_null(strstr(json_string_value(json_object_get(row, "reason")), "newer"));
    json_decref(row);
    /* writes to it go on (the kept row is the one replaced) */
    store_obj_unref(create(f->s, "other", "x"));
    close_store(f);
    assert_int_equal(db_number(f->dir, "SELECT count(*) FROM objects WHERE name = 'twice'"), 1);

    /* a later row with an older version: the earlier row stays */
    assert_int_equal(db_exec(f->dir, "INSERT INTO objects (resource, namespace, name, rv, data)"
                                     " SELECT resource, namespace, name, rv - 50,"
                                     " replace(data, '\"new\"', '\"stale\"') FROM objects"
                                     " WHERE name = 'twice'"),
                     1);
    reopen(f);
    o = store_get(f->s, "pods", "default", "twice", NULL);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(store_obj_json(o), "metadata"),
                                            "labels"),
                            "l")),
                        "new");
    store_obj_unref(o);
    row = last_aside(f, 2);
    assert_non_null(strstr(json_string_value(json_object_get(row, "reason")), "newer"));
    json_decref(row);
    close_store(f);
    assert_int_equal(db_number(f->dir, "SELECT count(*) FROM objects WHERE name = 'twice'"), 1);
    assert_int_equal(db_number(f->dir, "SELECT count(*) FROM quarantine WHERE name = 'twice'"),
                     2);
    reopen(f);
}

/* A compressed row that names a dictionary not there is set aside, and a
 * compressed row set aside keeps its dictionary at the next open (an open
 * deletes the dictionaries no row names). */
static void test_compressed_rows_set_aside(void **state)
{
    store_fixture *f = *state;
    char name[32];
    long long dict;
    int i;

    /* the load makes a dictionary of a resource's first rows; what is
     * written after that open is compressed with it */
    for (i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "w%03d", i);
        store_obj_unref(create(f->s, name, "a"));
    }
    close_store(f);
    reopen(f);
    /* (by the clock: a loaded machine runs the sweeper late) */
    i = 0;
    for (int64_t end = ty_now_ms() + 120000;
         ty_now_ms() < end && !db_number(f->dir, "SELECT count(*) FROM objects WHERE dict > 0");
         i++) {
        snprintf(name, sizeof(name), "x%03d", i);
        store_obj_unref(create(f->s, name, "a"));
        usleep(10000);
    }
    dict = db_number(f->dir, "SELECT max(dict) FROM objects");
    assert_true(dict > 0);
    close_store(f);
    /* every compressed row but one goes plain... */
    assert_true(db_exec(f->dir, "DELETE FROM objects WHERE dict > 0 AND id <> (SELECT max(id)"
                                " FROM objects WHERE dict > 0)") >= 0);
    /* ...and that one is damaged */
    assert_int_equal(db_exec(f->dir, "UPDATE objects SET data = x'28b52ffd00' WHERE dict > 0"),
                     1);
    reopen(f);
    {
        json_t *row = last_aside(f, 1);
        assert_non_null(strstr(json_string_value(json_object_get(row, "reason")),
                               "does not decompress"));
        json_decref(row);
    }
    close_store(f);
    assert_int_equal(db_number(f->dir, "SELECT count(*) FROM objects WHERE dict > 0"), 0);
    reopen(f);
    close_store(f);
    {
        char sql[128];
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM dicts WHERE id = %lld", dict);
        assert_int_equal(db_number(f->dir, sql), 1);
    }
    /* a row naming a dictionary that is not there */
    assert_int_equal(db_exec(f->dir, "UPDATE objects SET dict = 999999 WHERE name = 'w001'"), 1);
    reopen(f);
    {
        json_t *row = last_aside(f, 2);
        assert_non_null(strstr(json_string_value(json_object_get(row, "reason")),
                               "names a dictionary that is not there"));
        json_decref(row);
    }
    assert_false(present(f, "w001"));
    assert_true(present(f, "w002"));
}

/* A data directory from before the table lists nothing; a directory with
 * no database is an error. */
static void test_list_without_table(void **state)
{
    store_fixture *f = *state;
    ty_error err;
    json_t *rows;

    close_store(f);
    db_exec(f->dir, "DROP TABLE quarantine");
    ty_error_init(&err);
    rows = store_quarantine_list(f->dir, &err);
    assert_non_null(rows);
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
    assert_null(store_quarantine_list("/nonexistent-trainyard-dir", &err));
    ty_error_clear(&err);
    reopen(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bad_rows_set_aside, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_rows_newest_kept, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_compressed_rows_set_aside, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_list_without_table, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
