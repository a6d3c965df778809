/* dirlock.c - the data directory's lock (dirlock.h). */
#include "base/dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void lock_path(const char *dir, char *out, size_t len)
{
    snprintf(out, len, "%s/server.lock", dir);
}

static pid_t holder_of(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_GETLK, &fl) < 0)
        return -1;
    return fl.l_type == F_UNLCK ? 0 : fl.l_pid;
}

int ty_dirlock_take(const char *dir, ty_error *err)
{
    char path[PATH_MAX], text[32];
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int fd, n;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return ty_seterr(err, TY_EINTERNAL, "cannot create %s: %s", dir, strerror(errno));
    lock_path(dir, path, sizeof(path));
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot open %s: %s", path, strerror(errno));
    if (fcntl(fd, F_SETLK, &fl) < 0) {
        int e = errno;
        pid_t pid = holder_of(fd);
        close(fd);
        if (e == EACCES || e == EAGAIN) {
            if (pid > 0)
                return ty_seterr(err, TY_ECONFLICT,
                                 "the data directory %s is in use by another trainyard server "
                                 "(pid %ld)", dir, (long)pid);
            return ty_seterr(err, TY_ECONFLICT,
                             "the data directory %s is in use by another trainyard server", dir);
        }
        return ty_seterr(err, TY_EINTERNAL, "cannot lock %s: %s", path, strerror(e));
    }
    /* The pid is for people and tools; the lock itself is what counts. */
    n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        /* A full disk must not stop the server from starting on its own data. */
    }
    return fd;
}

pid_t ty_dirlock_holder(const char *dir)
{
    char path[PATH_MAX];
    pid_t pid;
    int fd;

    lock_path(dir, path, sizeof(path));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    /* F_GETLK with a read lock asks "would a shared lock conflict?": only a
     * writer's (the server's) lock does. */
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    pid = fcntl(fd, F_GETLK, &fl) < 0 ? -1 : fl.l_type == F_UNLCK ? 0 : fl.l_pid;
    close(fd);
    return pid;
}
