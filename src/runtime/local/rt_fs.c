/* rt_fs.c - file and process helpers of the local runtime. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/local/rt_internal.h"

int rt_mkdirs(const char *path)
{
    return rt_mkdirs_mode(path, 0755);
}

/* One walk down path, making what is missing. */
static int mkdirs_once(char *buf, mode_t mode)
{
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(buf, mode);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -1;
    }
    if (mkdir(buf, mode) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

int rt_mkdirs_mode(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    int rc;

    if (n == 0 || n >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    /* A parent made by this walk can be removed before its child is made:
     * the log sweep removes a namespace's log directory once its last pod's
     * is gone (rt_logs.c), and a new pod's first log came just then (its
     * directory was never made, its output lost). Walk again. */
    for (int tries = 0; (rc = mkdirs_once(buf, mode)) < 0 && errno == ENOENT && tries < 100;
         tries++)
        ;
    return rc;
}

/* One level of rt_own_tree: dir is open (fd, consumed). Every entry is
 * changed through a descriptor opened without following links, so a link
 * put in place of a file never makes us change what it points to. */
static int own_dir(int fd, uid_t uid, gid_t gid, mode_t dir_mode, mode_t file_mask, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    int rc = 0;

    if (!d) {
        close(fd);
        return -1;
    }
    while ((e = readdir(d))) {
        struct stat st;
        int efd;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        efd = openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (efd < 0) {
            if (errno != ELOOP || fchownat(fd, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
                rc = -1;
            continue;
        }
        if (fstat(efd, &st) < 0 || fchown(efd, uid, gid) < 0 ||
            (S_ISREG(st.st_mode) && fchmod(efd, st.st_mode & file_mask) < 0) ||
            (S_ISDIR(st.st_mode) && fchmod(efd, dir_mode) < 0)) {
            rc = -1;
            close(efd);
            continue;
        }
        if (!S_ISDIR(st.st_mode))
            close(efd);
        else if (depth >= 32 || own_dir(efd, uid, gid, dir_mode, file_mask, depth + 1) < 0)
            rc = -1; /* own_dir closed it; too deep: left as it is */
        if (S_ISDIR(st.st_mode) && depth >= 32)
            close(efd);
    }
    closedir(d);
    return rc;
}

int rt_own_tree(const char *dir, uid_t uid, gid_t gid, mode_t dir_mode, mode_t file_mask)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return -1;
    /* The top first: a failure below leaves it closed rather than open. */
    if (fchown(fd, uid, gid) < 0 || fchmod(fd, dir_mode) < 0) {
        close(fd);
        return -1;
    }
    return own_dir(fd, uid, gid, dir_mode, file_mask, 0);
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* fsync of a directory: a rename in it is on disk once this returns. */
static int sync_dir_of(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int fd, rc;

    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!*dir)
        snprintf(dir, sizeof(dir), "/");
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

static int write_file(const char *path, const char *data, size_t len, mode_t mode, bool durable)
{
    char tmp[PATH_MAX];
    int fd, saved;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    /* close() may be where a full disk shows (delayed allocation): checked. */
    if (write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || (durable && fsync(fd) < 0)) {
        saved = errno;
        close(fd);
        unlink(tmp);
        errno = saved;
        return -1;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return durable ? sync_dir_of(path) : 0;
}

int rt_write_atomic(const char *path, const char *data, size_t len, mode_t mode)
{
    return write_file(path, data, len, mode, false);
}

int rt_write_durable(const char *path, const char *data, size_t len, mode_t mode)
{
    return write_file(path, data, len, mode, true);
}

char *rt_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *buf;
    size_t got = 0;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size > max) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return NULL;
    }
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* shrank while reading: keep what was there */
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    if (len)
        *len = got;
    return buf;
}

json_t *rt_load_json(const char *path)
{
    size_t len;
    char *text = rt_read_file(path, RT_MAX_FILE, &len);
    json_t *j;

    if (!text)
        return NULL;
    j = json_loadb(text, len, 0, NULL);
    free(text);
    return j;
}

static int save_json(const char *path, const json_t *j, bool durable)
{
    char *text = json_dumps(j, JSON_COMPACT);
    int rc, saved;

    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    rc = write_file(path, text, strlen(text), 0644, durable);
    saved = errno;
    free(text);
    errno = saved;
    return rc;
}

int rt_save_json(const char *path, const json_t *j)
{
    return save_json(path, j, false);
}

int rt_save_json_durable(const char *path, const json_t *j)
{
    return save_json(path, j, true);
}

/* ---- the supervisor's lock ---- */

static void lock_path(const char *dir, char *buf, size_t len)
{
    snprintf(buf, len, "%s/" RT_LOCK_FILE, dir);
}

int rt_lock_take(const char *dir, pid_t *holder)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    char path[PATH_MAX + 32];
    int fd, saved;

    *holder = 0;
    lock_path(dir, path, sizeof(path));
    if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
        return -1;
    if (fcntl(fd, F_SETLK, &fl) == 0)
        return fd;
    saved = errno;
    if (saved == EAGAIN || saved == EACCES) {
        fl.l_type = F_WRLCK;
        if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
            *holder = fl.l_pid;
        saved = EAGAIN;
    }
    close(fd);
    errno = saved;
    return -1;
}

pid_t rt_lock_holder(const char *dir)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    char path[PATH_MAX + 32];
    int fd;

    lock_path(dir, path, sizeof(path));
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    /* F_GETLK names the process holding the lock; the caller holds none
     * (closing fd would drop a record lock of its own on this file). */
    if (fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type == F_UNLCK)
        fl.l_pid = 0;
    close(fd);
    return fl.l_pid > 0 ? fl.l_pid : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path); /* best effort: a busy mount point stays */
    return 0;
}

int rt_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* /proc/<pid>/stat's state letter; 0 when the process is gone. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "re")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name in parentheses may itself contain ") ". */
    p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

bool rt_pid_alive(pid_t pid, const char *cmd_match)
{
    char path[64], buf[8192];
    char st;
    size_t n;
    FILE *f;

    if (pid <= 0)
        return false;
    st = proc_state(pid);
    if (!st || st == 'Z' || st == 'X')
        return false;
    if (!cmd_match)
        return true;
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if (!(f = fopen(path, "re")))
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        if (!strcmp(buf + i, cmd_match))
            return true;
    return false;
}
