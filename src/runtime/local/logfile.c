/* logfile.c - a container's log across its rotated file (see logfile.h).
 *
 * tailLines counts the newlines in 64 KiB blocks read backwards: seeking to
 * every byte from the end with fseek + fgetc costs seconds of the server's
 * CPU for a large tail of a big log. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/local/logfile.h"

#define TAIL_BLOCK (64 * 1024)

struct logfile {
    char path[PATH_MAX];
    FILE *older;            /* path.1 still to read first, or NULL */
    FILE *cur;              /* path as it was when opened (or last switched to) */
    bool moving;            /* cur was rotated away: what it holds, then the new one */
};

long logfile_tail_offset(FILE *f, long n, long *found)
{
    char *buf;
    long size, pos, lines;

    *found = 0;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0)
        return 0;
    if (n <= 0 || size == 0)
        return size;
    if (!(buf = malloc(TAIL_BLOCK)))
        return 0;
    /* The last line counts whether or not its newline is there yet; the
     * newline that ends it starts nothing. Each newline before it ends one
     * more line: the one that would end line n + 1 from the end is where
     * line n begins. */
    lines = 1;
    pos = size - 1;
    if (fseek(f, pos, SEEK_SET) == 0 && fgetc(f) != '\n')
        pos = size;
    while (pos > 0) {
        long start = pos > TAIL_BLOCK ? pos - TAIL_BLOCK : 0;
        size_t want = (size_t)(pos - start);
        if (fseek(f, start, SEEK_SET) != 0 || fread(buf, 1, want, f) != want)
            break;
        for (size_t i = want; i-- > 0;) {
            if (buf[i] != '\n')
                continue;
            if (lines == n) {
                free(buf);
                *found = n;
                return start + (long)i + 1;
            }
            lines++;
        }
        pos = start;
    }
    free(buf);
    *found = lines;
    return 0;
}

static bool same_file(FILE *a, FILE *b)
{
    struct stat sa, sb;
    return fstat(fileno(a), &sa) == 0 && fstat(fileno(b), &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A log file for reading, never through a symbolic link: the directories
 * hold what pods wrote, and a link there must not make the server read
 * another file for a client of the log API. */
static FILE *open_log(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f;

    if (fd < 0)
        return NULL;
    if (!(f = fdopen(fd, "r")))
        close(fd);
    return f;
}

logfile *logfile_open(const char *path, long tail)
{
    char older_path[PATH_MAX + 4];
    logfile *lf = calloc(1, sizeof(*lf));
    long found = 0, off;
    int saved;

    if (!lf)
        return NULL;
    if (strlen(path) >= sizeof(lf->path)) {
        free(lf);
        errno = ENAMETOOLONG;
        return NULL;
    }
    strcpy(lf->path, path);
    /* The current file first: a rotation between the two opens makes the
     * ".1" we open the file we hold, which is then read once only. */
    if (!(lf->cur = open_log(path)))
        goto error;
    snprintf(older_path, sizeof(older_path), "%s.1", path);
    lf->older = open_log(older_path);
    if (lf->older && same_file(lf->older, lf->cur)) {
        fclose(lf->older);
        lf->older = NULL;
    }
    if (tail < 0)
        return lf;
    off = logfile_tail_offset(lf->cur, tail, &found);
    fseek(lf->cur, off, SEEK_SET);
    if (!lf->older)
        return lf;
    if (found < tail) {
        off = logfile_tail_offset(lf->older, tail - found, &found);
        fseek(lf->older, off, SEEK_SET);
    } else {
        fclose(lf->older);
        lf->older = NULL;
    }
    return lf;
error:
    saved = errno;
    logfile_close(lf);
    errno = saved;
    return NULL;
}

void logfile_close(logfile *lf)
{
    if (!lf)
        return;
    if (lf->older)
        fclose(lf->older);
    if (lf->cur)
        fclose(lf->cur);
    free(lf);
}

char *logfile_gets(logfile *lf, char *buf, int len)
{
    if (lf->older) {
        if (fgets(buf, len, lf->older))
            return buf;
        fclose(lf->older);
        lf->older = NULL;
    }
    clearerr(lf->cur);
    return fgets(buf, len, lf->cur);
}

bool logfile_rotated(logfile *lf)
{
    struct stat now, held;
    FILE *next;

    if (lf->moving) {
        /* The old file was read to its end after the rename: nothing more
         * can come to it (the writer renames, then writes to the new one). */
        if (!(next = open_log(lf->path)))
            return false; /* not there yet: the next look finds it */
        fclose(lf->cur);
        lf->cur = next;
        lf->moving = false;
        return true;
    }
    if (stat(lf->path, &now) != 0 || fstat(fileno(lf->cur), &held) != 0)
        return false;
    if (now.st_dev == held.st_dev && now.st_ino == held.st_ino)
        return false;
    lf->moving = true;
    return true;
}
