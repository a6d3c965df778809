/* db.c - the durable copy of the store in SQLite.
 *
 * One table of objects, a row per object (its resource, namespace, name,
 * JSON text, plain or compressed, and resourceVersion) found by its id, a
 * table of the dictionaries compressed rows name, and a meta table holding
 * the global counter. The
 * latest resourceVersion is the larger of that counter and the largest rv of
 * any row: a put's own row records its rv, so only a delete, which leaves no
 * row behind, updates the counter (in the same transaction). That keeps a put
 * to one page of the WAL instead of two (the meta table's page was a second
 * frame on every write: about a third of the time a commit spent in SQLite). Only the
 * writer thread (under the store's write lock) touches the connection; reads
 * are served from memory, so a single connection with cached prepared
 * statements is all the store needs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/thread.h"
#include "base/timeutil.h"
#include "store/store_int.h"

/* objects holds one row per object, found by its rowid (id), which the
 * store keeps with each version in memory: nothing looks a row up by its key.
 * A put appends the new row after the last id and deletes the one it
 * replaces by id. The table was keyed by (resource, namespace, name) (a
 * WITHOUT ROWID table at first, then a rowid table with the key as a unique
 * index); every write then also searched and rewrote a leaf of that index,
 * a page of the WAL for each new object on top of its row's, and compared
 * key strings on the way down. A data directory made with either earlier
 * table is moved into this one when it is opened (migrate). */
/* The objects table, after CREATE TABLE (both the schema and the move use it). */
#define OBJECTS_TABLE                                                                   \
    " objects ("                                                                          \
    "  id INTEGER PRIMARY KEY,"                                                           \
    "  resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"             \
    "  rv INTEGER NOT NULL, data TEXT NOT NULL, dict INTEGER NOT NULL DEFAULT 0,"          \
    "  rv_at INTEGER NOT NULL DEFAULT 0);"

/* A row's data is its JSON text when its dict is 0, else that text
 * compressed with the zstd dictionary of that id, whose content is a row
 * of dicts (objects: how many objects its resource had when it was made);
 * a compressed text may have been made before its resourceVersion was
 * known, with that value empty: the row's rv goes at byte rv_at of it
 * (0: none).
 * A dictionary's row is written in the transaction of the first row made
 * with it, and goes at the next open once no row names it. */
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS" OBJECTS_TABLE
    "CREATE TABLE IF NOT EXISTS dicts (id INTEGER PRIMARY KEY, resource TEXT NOT NULL,"
    "  objects INTEGER NOT NULL, data BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    QUARANTINE_TABLE
    "INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', 0);";

/* The earlier tables had no id column; their rows keep their order. */
static const char migrate_sql[] =
    "BEGIN IMMEDIATE;"
    "ALTER TABLE objects RENAME TO objects_keyed;"
    "CREATE TABLE" OBJECTS_TABLE
    "INSERT INTO objects (resource, namespace, name, rv, data)"
    "  SELECT resource, namespace, name, rv, data FROM objects_keyed ORDER BY rv;"
    "DROP TABLE objects_keyed;"
    "COMMIT;";

static int db_fail(store_db *d, ty_error *err, const char *what)
{
    return ty_seterr(err, TY_EINTERNAL, "store: %s: %s", what,
                     d->db ? sqlite3_errmsg(d->db) : "no database");
}

static int make_dir(const char *dir, ty_error *err)
{
    struct stat st;

    if (mkdir(dir, 0700) == 0)
        return 0;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    return ty_seterr(err, TY_EINTERNAL, "store: cannot create %s: %s", dir, strerror(errno));
}

static int prepare(store_db *d, sqlite3_stmt **st, const char *sql, ty_error *err)
{
    if (sqlite3_prepare_v3(d->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return db_fail(d, err, "prepare");
    return 0;
}

/* Moves the rows of an earlier table (no id column) into the current one. */
static int migrate(store_db *d, ty_error *err)
{
    sqlite3_stmt *st = NULL;
    bool keyed;

    if (prepare(d, &st,
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'objects'"
                " AND NOT EXISTS (SELECT 1 FROM pragma_table_info('objects') WHERE name = 'id')",
                err) < 0)
        return -1;
    keyed = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (!keyed) {
        /* A table of ids from before compressed rows: every row is text. */
        static const char *const added[][2] = {
            {"dict", "ALTER TABLE objects ADD COLUMN dict INTEGER NOT NULL DEFAULT 0"},
            {"rv_at", "ALTER TABLE objects ADD COLUMN rv_at INTEGER NOT NULL DEFAULT 0"}};
        for (size_t i = 0; i < sizeof(added) / sizeof(*added); i++) {
            bool lacks;

            if (prepare(d, &st,
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name ="
                        " 'objects' AND NOT EXISTS (SELECT 1 FROM pragma_table_info('objects')"
                        " WHERE name = ?1)",
                        err) < 0)
                return -1;
            sqlite3_bind_text(st, 1, added[i][0], -1, SQLITE_STATIC);
            lacks = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
            sqlite3_finalize(st);
            if (lacks && sqlite3_exec(d->db, added[i][1], NULL, NULL, NULL) != SQLITE_OK)
                return db_fail(d, err, "add a column to the objects table");
        }
        return 0;
    }
    if (sqlite3_exec(d->db, migrate_sql, NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(d, err, "move the objects to the current table");
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

static int read_rv(store_db *d, uint64_t *rv, ty_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (prepare(d, &st, "SELECT value FROM meta WHERE key = 'rv'", err) < 0)
        return -1;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *rv = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return db_fail(d, err, "read resourceVersion");
    return 0;
}

#define CKPT_INTERVAL_MS 250
/* A WAL this long (4 KiB frames: 32 MiB) is started over from its beginning
 * once the checkpointer has caught up (see db_begin). */
#define WAL_RESTART_FRAMES 8192

/* Checkpoints (copying WAL frames into the database file, with the fsync that
 * synchronous=NORMAL defers to them) run on their own connection and thread.
 * Left to SQLite's auto-checkpoint they would run inside whichever write
 * crossed the threshold, stalling it and every writer queued behind it for
 * milliseconds: the long tail of write latency. A PASSIVE checkpoint never
 * blocks writers, but SQLite starts the WAL over from its beginning only at
 * a write that finds every frame copied, and under a steady stream of writes
 * there never is one: frames land while the checkpoint runs. The WAL would
 * then grow without end (by the gigabyte under the scheduling benchmark),
 * and every append to new blocks of the file costs the kernel a page of
 * zeroing. So when a pass leaves a long WAL behind, the writer, before its
 * next transaction, copies the few frames that arrived during that pass
 * itself (db_begin): the next write then starts the WAL over, in blocks the
 * file already has. */
static void *ckpt_main(void *arg)
{
    store_db *d = arg;
    struct timespec ts;
    int nlog, nckpt;

    pthread_mutex_lock(&d->ckpt_mu);
    while (!d->ckpt_stop) {
        ts = ty_deadline_ms(CLOCK_MONOTONIC, CKPT_INTERVAL_MS);
        pthread_cond_timedwait(&d->ckpt_cv, &d->ckpt_mu, &ts);
        if (d->ckpt_stop)
            break;
        pthread_mutex_unlock(&d->ckpt_mu);
        if (sqlite3_wal_checkpoint_v2(d->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog,
                                      &nckpt) == SQLITE_OK &&
            nlog >= WAL_RESTART_FRAMES)
            atomic_store_explicit(&d->wal_restart_due, true, memory_order_release);
        pthread_mutex_lock(&d->ckpt_mu);
    }
    pthread_mutex_unlock(&d->ckpt_mu);
    return NULL;
}

static int start_checkpointer(store_db *d, const char *path, ty_error *err)
{
    if (sqlite3_open_v2(path, &d->ckpt_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return ty_seterr(err, TY_EINTERNAL, "store: checkpoint connection: %s",
                         d->ckpt_db ? sqlite3_errmsg(d->ckpt_db) : "out of memory");
    sqlite3_busy_timeout(d->ckpt_db, 1000);
    /* A connection learns that the file is in WAL mode on its first read;
     * until then a checkpoint is a no-op. */
    if (sqlite3_exec(d->ckpt_db, "PRAGMA journal_mode=WAL; SELECT value FROM meta;", NULL, NULL,
                     NULL) != SQLITE_OK)
        return ty_seterr(err, TY_EINTERNAL, "store: checkpoint connection: %s",
                         sqlite3_errmsg(d->ckpt_db));
    pthread_mutex_init(&d->ckpt_mu, NULL);
    pthread_condattr_t ca;
    /* the monotonic clock: a step of the wall clock must not pause it */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->ckpt_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&d->ckpt_thread, NULL, ckpt_main, d) != 0) {
        pthread_mutex_destroy(&d->ckpt_mu);
        pthread_cond_destroy(&d->ckpt_cv);
        return ty_seterr(err, TY_EINTERNAL, "store: cannot start the checkpoint thread");
    }
    ty_thread_setup(d->ckpt_thread, "ty-checkpoint", TY_THREAD_BACKGROUND);
    d->ckpt_running = true;
    return 0;
}

static void stop_checkpointer(store_db *d)
{
    if (d->ckpt_running) {
        pthread_mutex_lock(&d->ckpt_mu);
        d->ckpt_stop = true;
        pthread_cond_signal(&d->ckpt_cv);
        pthread_mutex_unlock(&d->ckpt_mu);
        pthread_join(d->ckpt_thread, NULL);
        pthread_mutex_destroy(&d->ckpt_mu);
        pthread_cond_destroy(&d->ckpt_cv);
        d->ckpt_running = false;
    }
    if (d->ckpt_db)
        sqlite3_close(d->ckpt_db);
    d->ckpt_db = NULL;
}

int db_open(store_db *d, const char *dir, uint64_t *rv, ty_error *err)
{
    char path[4096];

    memset(d, 0, sizeof(*d));
    if (make_dir(dir, err) < 0)
        return -1;
    if ((size_t)snprintf(path, sizeof(path), "%s/trainyard.db", dir) >= sizeof(path))
        return ty_seterr(err, TY_EINTERNAL, "store: data directory path too long");
    /* NOMUTEX: the store's write lock already serialises every use. */
    if (sqlite3_open_v2(path, &d->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        db_fail(d, err, path);
        goto error;
    }
    sqlite3_busy_timeout(d->db, 5000);
    /* WAL with synchronous=NORMAL: a commit is appended to the WAL without an
     * fsync; the WAL is synced at checkpoints. A crash of this process loses
     * nothing (the WAL is in the OS page cache and replayed on open); only an
     * OS crash or power loss can drop the last few commits, never corrupt the
     * database. That trade buys the write rate the API server needs. */
    if (sqlite3_exec(d->db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     "PRAGMA foreign_keys=OFF; PRAGMA wal_autocheckpoint=0;"
                     "PRAGMA journal_size_limit=67108864;",
                     NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(d, err, "initialise schema");
        goto error;
    }
    if (migrate(d, err) < 0)
        goto error;
    if (sqlite3_exec(d->db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(d, err, "initialise schema");
        goto error;
    }
    if (read_rv(d, rv, err) < 0 || prepare(d, &d->begin, "BEGIN IMMEDIATE", err) < 0 ||
        prepare(d, &d->commit, "COMMIT", err) < 0 ||
        prepare(d, &d->rollback, "ROLLBACK", err) < 0 ||
        prepare(d, &d->put,
                "INSERT INTO objects (resource, namespace, name, rv, data, dict, rv_at)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                err) < 0 ||
        prepare(d, &d->putdict,
                "INSERT OR IGNORE INTO dicts (id, resource, objects, data) VALUES (?1, ?2, ?3, ?4)",
                err) < 0 ||
        prepare(d, &d->del, "DELETE FROM objects WHERE id = ?1", err) < 0 ||
        prepare(d, &d->setrv, "UPDATE meta SET value = ?1 WHERE key = 'rv'", err) < 0 ||
        start_checkpointer(d, path, err) < 0)
        goto error;
    return 0;
error:
    db_close(d);
    return -1;
}

int db_load(store_db *d, db_dict_fn dict_fn, db_row_fn fn, void *arg, ty_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    /* a row set aside keeps its dictionary: its text may be wanted yet */
    if (sqlite3_exec(d->db,
                     "DELETE FROM dicts WHERE id NOT IN (SELECT dict FROM objects)"
                     " AND id NOT IN (SELECT dict FROM quarantine)",
                     NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(d, err, "drop unused dictionaries");
    if (prepare(d, &st, "SELECT id, resource, objects, data FROM dicts ORDER BY id", err) < 0)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (dict_fn(arg, (int64_t)sqlite3_column_int64(st, 0),
                    (const char *)sqlite3_column_text(st, 1),
                    (size_t)sqlite3_column_int64(st, 2), sqlite3_column_blob(st, 3),
                    (size_t)sqlite3_column_bytes(st, 3), err) < 0) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(d, err, "load dictionaries");
    if (prepare(d, &st,
                "SELECT id, resource, namespace, name, rv, data, dict, rv_at FROM objects"
                " ORDER BY id",
                err) < 0)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t dict = (int64_t)sqlite3_column_int64(st, 6);
        /* text (NUL-terminated) or the bytes of a compressed row */
        const void *data = dict ? sqlite3_column_blob(st, 5) : sqlite3_column_text(st, 5);

        if (fn(arg, (int64_t)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
               (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
               (uint64_t)sqlite3_column_int64(st, 4), data, (size_t)sqlite3_column_bytes(st, 5),
               dict, (size_t)sqlite3_column_int64(st, 7), err) < 0) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(d, err, "load objects");
    return 0;
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static void bind_key(sqlite3_stmt *st, const char *resource, const char *ns, const char *name)
{
    sqlite3_bind_text(st, 1, resource, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
}

int db_begin(store_db *d, ty_error *err)
{
    int nlog, nckpt;

    /* Busy (the checkpointer is in a pass) or frames still to copy: try
     * again at a later batch. */
    if (atomic_load_explicit(&d->wal_restart_due, memory_order_acquire) &&
        sqlite3_wal_checkpoint_v2(d->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt) ==
            SQLITE_OK &&
        nlog == nckpt)
        atomic_store_explicit(&d->wal_restart_due, false, memory_order_relaxed);
    if (step_done(d->begin) < 0)
        return db_fail(d, err, "begin");
    return 0;
}

int db_commit(store_db *d, ty_error *err)
{
    if (step_done(d->commit) < 0) {
        db_fail(d, err, "commit");
        step_done(d->rollback);
        return -1;
    }
    return 0;
}

void db_rollback(store_db *d)
{
    step_done(d->rollback);
}

/* Deletes row id (0: none). */
static int del_row(store_db *d, int64_t id)
{
    if (id <= 0)
        return 0;
    sqlite3_bind_int64(d->del, 1, (sqlite3_int64)id);
    return step_done(d->del);
}

int db_put(store_db *d, const char *resource, const char *ns, const char *name, uint64_t rv,
           const void *data, size_t len, int64_t dict, size_t rv_at, int64_t replaces,
           int64_t *id, ty_error *err)
{
    int failed;

    if (del_row(d, replaces) < 0)
        return db_fail(d, err, "write");
    bind_key(d->put, resource, ns, name);
    sqlite3_bind_int64(d->put, 4, (sqlite3_int64)rv);
    if (dict)
        sqlite3_bind_blob(d->put, 5, data, (int)len, SQLITE_STATIC);
    else
        sqlite3_bind_text(d->put, 5, data, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(d->put, 6, (sqlite3_int64)dict);
    sqlite3_bind_int64(d->put, 7, (sqlite3_int64)rv_at);
    failed = step_done(d->put) < 0;
    sqlite3_clear_bindings(d->put);
    if (failed)
        return db_fail(d, err, "write");
    *id = (int64_t)sqlite3_last_insert_rowid(d->db);
    return 0;
}

int db_put_dict(store_db *d, int64_t id, const char *resource, size_t objects, const void *data,
                size_t len, ty_error *err)
{
    int failed;

    sqlite3_bind_int64(d->putdict, 1, (sqlite3_int64)id);
    sqlite3_bind_text(d->putdict, 2, resource, -1, SQLITE_STATIC);
    sqlite3_bind_int64(d->putdict, 3, (sqlite3_int64)objects);
    sqlite3_bind_blob(d->putdict, 4, data, (int)len, SQLITE_STATIC);
    failed = step_done(d->putdict) < 0;
    sqlite3_clear_bindings(d->putdict);
    return failed ? db_fail(d, err, "write a dictionary") : 0;
}

int db_delete(store_db *d, int64_t id, uint64_t rv, ty_error *err)
{
    sqlite3_bind_int64(d->setrv, 1, (sqlite3_int64)rv);
    if (del_row(d, id) < 0 || step_done(d->setrv) < 0)
        return db_fail(d, err, "delete");
    return 0;
}

void db_close(store_db *d)
{
    stop_checkpointer(d);
    sqlite3_finalize(d->begin);
    sqlite3_finalize(d->commit);
    sqlite3_finalize(d->rollback);
    sqlite3_finalize(d->put);
    sqlite3_finalize(d->putdict);
    sqlite3_finalize(d->del);
    sqlite3_finalize(d->setrv);
    if (d->db)
        sqlite3_close(d->db);
    memset(d, 0, sizeof(*d));
}
