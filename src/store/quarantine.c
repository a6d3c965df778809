/* quarantine.c - rows the store's open set aside (see store_int.h), and
 * their listing for `trainyard store quarantine`. */
#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"
#include "store/store_int.h"

static int db_err(sqlite3 *db, ty_error *err, const char *what)
{
    return ty_seterr(err, TY_EINTERNAL, "store: %s: %s", what, sqlite3_errmsg(db));
}

int db_quarantine(store_db *d, const int64_t *ids, char *const *reasons, size_t n,
                  ty_error *err)
{
    sqlite3_stmt *move = NULL, *del = NULL;
    char now[TY_TIME_LEN];
    int rc = -1;

    if (!n)
        return 0;
    ty_time_now(now, sizeof(now));
    if (sqlite3_exec(d->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_err(d->db, err, "set rows aside");
    if (sqlite3_prepare_v2(d->db,
                           "INSERT INTO quarantine (at, row_id, resource, namespace, name, rv, data,"
                           " dict, rv_at, reason) SELECT ?3,"
                           " id, resource, namespace, name, rv, data, dict, rv_at, ?2"
                           " FROM objects WHERE id = ?1",
                           -1, &move, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "DELETE FROM objects WHERE id = ?1", -1, &del, NULL) !=
            SQLITE_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(move, 1, (sqlite3_int64)ids[i]);
        sqlite3_bind_text(move, 2, reasons[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(move, 3, now, -1, SQLITE_STATIC);
        sqlite3_bind_int64(del, 1, (sqlite3_int64)ids[i]);
        if (sqlite3_step(move) != SQLITE_DONE || sqlite3_step(del) != SQLITE_DONE)
            goto out;
        sqlite3_reset(move);
        sqlite3_reset(del);
    }
    rc = sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
out:
    if (rc < 0) {
        db_err(d->db, err, "set rows aside");
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_finalize(move);
    sqlite3_finalize(del);
    return rc;
}

long long db_quarantine_count(store_db *d)
{
    sqlite3_stmt *st = NULL;
    long long n = -1;

    if (sqlite3_prepare_v2(d->db, "SELECT count(*) FROM quarantine", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

json_t *store_quarantine_list(const char *dir, ty_error *err)
{
    char path[4096];
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    json_t *out = NULL;
    int rc;

    if ((size_t)snprintf(path, sizeof(path), "%s/trainyard.db", dir) >= sizeof(path)) {
        ty_seterr(err, TY_EINTERNAL, "store: data directory path too long");
        return NULL;
    }
    /* read-only, beside a server that may be running on it */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        ty_seterr(err, TY_EINTERNAL, "store: cannot open %s: %s", path,
                  db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    sqlite3_busy_timeout(db, 5000);
    rc = sqlite3_prepare_v2(db,
                            "SELECT id, at, row_id, resource, namespace, name, rv,"
                            " length(CAST(data AS BLOB)),"
                            " reason FROM quarantine ORDER BY id",
                            -1, &st, NULL);
    if (rc != SQLITE_OK) {
        /* a data directory from before the table: nothing set aside */
        if (strstr(sqlite3_errmsg(db), "no such table"))
            out = json_array();
        else
            db_err(db, err, "list the rows set aside");
        goto out;
    }
    out = json_array();
    while (out && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = json_pack(
            "{s:I, s:s, s:I, s:s, s:s, s:s, s:I, s:I, s:s}", "id",
            (json_int_t)sqlite3_column_int64(st, 0), "at",
            (const char *)sqlite3_column_text(st, 1), "row",
            (json_int_t)sqlite3_column_int64(st, 2), "resource",
            (const char *)sqlite3_column_text(st, 3), "namespace",
            (const char *)sqlite3_column_text(st, 4), "name",
            (const char *)sqlite3_column_text(st, 5), "resourceVersion",
            (json_int_t)sqlite3_column_int64(st, 6), "bytes",
            (json_int_t)sqlite3_column_int64(st, 7), "reason",
            (const char *)sqlite3_column_text(st, 8));
        if (!row || json_array_append_new(out, row) < 0) {
            json_decref(out);
            out = NULL;
            ty_seterr(err, TY_EINTERNAL, "store: out of memory");
        }
    }
    if (out && rc != SQLITE_DONE) {
        db_err(db, err, "list the rows set aside");
        json_decref(out);
        out = NULL;
    }
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}
