/* audit_file.c - see audit_file.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/timeutil.h"
#include "server/audit_file.h"

/* "2026-11-28T10-00-00.000": lumberjack's backup time format. */
#define BACKUP_TIME_LEN 23
#define MAX_BACKUPS_SEEN 100000

struct audit_file {
    char *path;
    char *dir;      /* "." when the path has none */
    char *prefix;   /* the base name less its extension, plus "-" */
    char *ext;      /* ".log" or "" */
    int fd;
    bool is_stdout;
    long long size;
    long long max_bytes;
    int max_backups;
    int max_age_days;
    unsigned long rotations;
};

/* mkdir -p with mode 0700 for what is missing. */
static int make_dirs(const char *dir, ty_error *err)
{
    char buf[PATH_MAX];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(buf))
        return n == 0 ? 0 : ty_seterr(err, TY_EBADREQUEST, "path too long: %s", dir);
    memcpy(buf, dir, n + 1);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return ty_seterr(err, TY_EINTERNAL,
                                 "cannot create the audit log directory %s: %s", buf,
                                 strerror(errno));
            *p = saved;
            if (!saved)
                break;
        }
    }
    return 0;
}

static int open_current(audit_file *f, ty_error *err)
{
    struct stat st;
    f->fd = open(f->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (f->fd < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot open the audit log %s: %s", f->path,
                         strerror(errno));
    f->size = fstat(f->fd, &st) == 0 ? (long long)st.st_size : 0;
    return 0;
}

audit_file *audit_file_open(const audit_file_opts *o, ty_error *err)
{
    audit_file *f = calloc(1, sizeof(*f));
    const char *slash, *base, *dot;

    if (!f) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    f->fd = -1;
    f->max_bytes = o->max_bytes > 0 ? o->max_bytes : 0;
    f->max_backups = o->max_backups > 0 ? o->max_backups : 0;
    f->max_age_days = o->max_age_days > 0 ? o->max_age_days : 0;
    if (strcmp(o->path, "-") == 0) {
        f->is_stdout = true;
        f->fd = STDOUT_FILENO;
        return f;
    }
    slash = strrchr(o->path, '/');
    base = slash ? slash + 1 : o->path;
    dot = strrchr(base, '.');
    if (!*base) {
        ty_seterr(err, TY_EBADREQUEST, "--audit-log-path %s names a directory, not a file",
                  o->path);
        goto error;
    }
    f->path = strdup(o->path);
    f->dir = slash ? strndup(o->path, slash == o->path ? 1 : (size_t)(slash - o->path))
                   : strdup(".");
    f->ext = strdup(dot && dot != base ? dot : "");
    f->prefix = malloc(strlen(base) + 2);
    if (!f->path || !f->dir || !f->ext || !f->prefix) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    snprintf(f->prefix, strlen(base) + 2, "%.*s-", (int)(strlen(base) - strlen(f->ext)), base);
    if (make_dirs(f->dir, err) < 0 || open_current(f, err) < 0)
        goto error;
    return f;
error:
    audit_file_close(f);
    return NULL;
}

static void backup_time(int64_t ms, char *buf, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d-%02d-%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* The time in a backup's name, in ms since the epoch; -1 when name is not
 * one of this file's backups. */
static int64_t backup_ms(const audit_file *f, const char *name)
{
    size_t pl = strlen(f->prefix), el = strlen(f->ext), n = strlen(name);
    int y, mo, d, h, mi, s, ms, used = 0;

    if (n != pl + BACKUP_TIME_LEN + el || strncmp(name, f->prefix, pl) != 0 ||
        strcmp(name + n - el, f->ext) != 0)
        return -1;
    if (sscanf(name + pl, "%4d-%2d-%2dT%2d-%2d-%2d.%3d%n", &y, &mo, &d, &h, &mi, &s, &ms,
               &used) != 7 || used != BACKUP_TIME_LEN)
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || ms < 0)
        return -1;
    return ((ty_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000) + ms;
}

typedef struct backup {
    int64_t ms;
    char *name;
} backup;

static int newest_first(const void *a, const void *b)
{
    const backup *x = a, *y = b;
    return x->ms < y->ms ? 1 : x->ms > y->ms ? -1 : 0;
}

/* Removes the backups the limits no longer keep. */
static void prune(audit_file *f)
{
    DIR *d;
    struct dirent *de;
    backup *list = NULL;
    size_t n = 0, cap = 0;
    int64_t cutoff = 0;
    char path[PATH_MAX];

    if (!f->max_backups && !f->max_age_days)
        return;
    if (!(d = opendir(f->dir)))
        return;
    while ((de = readdir(d)) && n < MAX_BACKUPS_SEEN) {
        int64_t ms = backup_ms(f, de->d_name);
        if (ms < 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            backup *more = realloc(list, ncap * sizeof(*more));
            if (!more)
                break;
            list = more;
            cap = ncap;
        }
        if (!(list[n].name = strdup(de->d_name)))
            break;
        list[n++].ms = ms;
    }
    closedir(d);
    qsort(list, n, sizeof(*list), newest_first);
    if (f->max_age_days) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        cutoff = (int64_t)now.tv_sec * 1000 - (int64_t)f->max_age_days * 86400 * 1000;
    }
    for (size_t i = 0; i < n; i++) {
        bool drop = (f->max_backups && i >= (size_t)f->max_backups) ||
                    (f->max_age_days && list[i].ms < cutoff);
        if (drop) {
            snprintf(path, sizeof(path), "%s/%s", f->dir, list[i].name);
            if (unlink(path) < 0 && errno != ENOENT)
                ty_warn("audit: cannot remove the old audit log %s: %s", path, strerror(errno));
        }
        free(list[i].name);
    }
    free(list);
}

static int rotate(audit_file *f, ty_error *err)
{
    char stamp[64], path[PATH_MAX];
    struct timespec now;
    int64_t ms;
    struct stat st;

    clock_gettime(CLOCK_REALTIME, &now);
    ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    /* Two rotations within a millisecond would share a name: the later one
     * takes the next free millisecond instead of overwriting. */
    for (int tries = 0; tries < 1000; tries++, ms++) {
        backup_time(ms, stamp, sizeof(stamp));
        snprintf(path, sizeof(path), "%s/%s%s%s", f->dir, f->prefix, stamp, f->ext);
        if (lstat(path, &st) < 0 && errno == ENOENT)
            break;
    }
    if (f->fd >= 0) {
        fdatasync(f->fd);
        close(f->fd);
        f->fd = -1;
    }
    if (rename(f->path, path) < 0 && errno != ENOENT) {
        ty_seterr(err, TY_EINTERNAL, "cannot rotate the audit log %s: %s", f->path,
                  strerror(errno));
        open_current(f, NULL);
        return -1;
    }
    f->rotations++;
    if (open_current(f, err) < 0)
        return -1;
    prune(f);
    return 0;
}

long long audit_file_room(const audit_file *f)
{
    if (f->is_stdout || !f->max_bytes)
        return LLONG_MAX;
    return f->max_bytes > f->size ? f->max_bytes - f->size : 0;
}

unsigned long audit_file_rotations(const audit_file *f)
{
    return f->rotations;
}

int audit_file_write(audit_file *f, const char *data, size_t len, ty_error *err)
{
    size_t off = 0;

    if (!f->is_stdout && f->max_bytes && f->size > 0 && f->size + (long long)len > f->max_bytes &&
        rotate(f, err) < 0)
        return -1;
    if (f->fd < 0 && open_current(f, err) < 0)
        return -1;
    while (off < len) {
        ssize_t n = write(f->fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ty_seterr(err, TY_EINTERNAL, "writing the audit log %s: %s",
                             f->is_stdout ? "(stdout)" : f->path, strerror(errno));
        off += (size_t)n;
        f->size += n;
    }
    return 0;
}

void audit_file_close(audit_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0 && !f->is_stdout) {
        fdatasync(f->fd);
        close(f->fd);
    }
    free(f->path);
    free(f->dir);
    free(f->prefix);
    free(f->ext);
    free(f);
}
