/* audit_file.h - the audit log file, rotated as kube-apiserver rotates it
 * (its log writer, lumberjack): past max_bytes the file is renamed to
 * <name>-<UTC time as 2026-11-28T10-00-00.000><.ext> ("audit.log" becomes
 * "audit-2026-11-28T10-00-00.000.log") and a new one started; then backups
 * beyond max_backups (newest kept) and older than max_age_days (by the time
 * in their name) are removed. New files are mode 0600, a missing directory
 * is made 0700. "-" is standard output, never rotated.
 *
 * Not thread-safe: one writer (audit.c's writer thread) owns it. */
#ifndef TY_SERVER_AUDIT_FILE_H
#define TY_SERVER_AUDIT_FILE_H

#include <stddef.h>

#include "base/error.h"

typedef struct audit_file audit_file;

typedef struct audit_file_opts {
    const char *path;      /* "-" = stdout */
    long long max_bytes;   /* rotate past this; 0 = never */
    int max_backups;       /* rotated files kept; 0 = all */
    int max_age_days;      /* rotated files older than this removed; 0 = kept */
} audit_file_opts;

/* Opens (appending) or creates the file. NULL with err (the directory or the
 * file cannot be made: the server must not start). */
audit_file *audit_file_open(const audit_file_opts *o, ty_error *err);
/* Writes data whole; rotates first when the file holds something and data
 * would take it past max_bytes (an entry larger than max_bytes gets a file
 * of its own). -1 with err on a write error (the data is lost; the next
 * write tries again). */
int audit_file_write(audit_file *f, const char *data, size_t len, ty_error *err);
/* Bytes the file may still take before the next write rotates it. */
long long audit_file_room(const audit_file *f);
/* Rotations done so far (tests, metrics). */
unsigned long audit_file_rotations(const audit_file *f);
/* Flushes to disk and closes. */
void audit_file_close(audit_file *f);

#endif
