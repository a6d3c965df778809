/* hosts_file.c - changing a running pod's hosts file under its readers.
 *
 * The supervisor bind-mounts the pod's hosts file over /etc/hosts, so the file
 * must change in place (a rename would not reach the mount), and the pod's
 * resolver may read it at any moment. A file truncated and written again is
 * seen empty or cut by a reader in between; one written over is seen as the
 * head of one text and the tail of another, and a read of a page is not
 * atomic with a write of it either. A cut line can map a name to another
 * pod's address. So:
 *
 * 1. When no process has the file open, the agent takes a write lease on it
 *    (F_SETLEASE: granted only then), which holds any open() of it until the
 *    lease is given back; it writes the new text whole and gives the lease
 *    back. No reader can see the file in between.
 * 2. When a process has it open (a resolver reading it now), or the file
 *    system has no leases, a line is never written over while a reader may
 *    be in it, even one that read its first bytes long ago:
 *    - a line goes by one byte: its first becomes '#' (its other bytes stay,
 *      so whoever read its start reads the old line whole);
 *    - a line comes at the end as a comment ('#' in place of its first byte)
 *      and then lives by one byte: the '#' becomes its first;
 *    new lines live before old ones go, and a line in both texts is not
 *    touched, so a name that stays resolves at every moment. The file grows
 *    by the new lines; the next update made under a lease (1) compacts it.
 *    Without leases a file past MAX_GROWN dead bytes is written whole as
 *    in (1) but unguarded, and so is one past MAX_GROWN_BUSY that a process
 *    never closes: the one case left where a reader may see it cut, and the
 *    bound on the file.
 * Readers that skip lines with a leading '#' and take the address as the
 * first field (glibc, musl, Go) see only whole lines. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/strmap.h"
#include "runtime/local/rt_internal.h"

#define MAX_FILE (64u << 20) /* larger: not read, written whole */
#define MAX_GROWN (1u << 20) /* dead bytes past which a file is compacted anyway */
#define MAX_GROWN_BUSY (8u << 20) /* the same where leases work but it is never closed */

typedef struct {
    size_t off, len; /* len counts the '\n' when there is one */
    bool live, matched;
    size_t next;     /* index of the next live line with the same text, or SIZE_MAX */
} hline;

static int pw(int fd, const void *data, size_t len, size_t off)
{
    const char *p = data;

    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
        off += (size_t)w;
    }
    return 0;
}

/* The length of a line's text: without its '\n' and trailing blanks. */
static size_t text_len(const char *s, size_t len)
{
    while (len && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    return len;
}

static bool is_live(const char *s, size_t len)
{
    return text_len(s, len) > 0 && s[0] != '#';
}

/* The text whole over the file: room reserved first (a full disk leaves the
 * old text), then written, then the file cut to its length. */
static int write_whole(int fd, const char *text, size_t len)
{
    if (len && (errno = posix_fallocate(fd, 0, (off_t)len)) != 0 && errno != EOPNOTSUPP &&
        errno != EINVAL)
        return -1;
    if (pw(fd, text, len, 0) < 0 || ftruncate(fd, (off_t)len) < 0)
        return -1;
    return 0;
}

/* A broken lease is told by SIGIO, whose default ends the process; nothing
 * here needs the signal (the lease is given back at once anyway). */
static void ignore_sigio(void)
{
    struct sigaction sa;

    if (sigaction(SIGIO, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL &&
        !(sa.sa_flags & SA_SIGINFO))
        signal(SIGIO, SIG_IGN);
}

/* 1 when written under a lease; 0 when one cannot be had (errno says why).
 * A write that fails half way puts the old text (old, olen) back before
 * the lease goes, so that no reader sees the half. */
static int try_leased(int fd, const char *text, size_t len, const char *old, size_t olen,
                      int *rc)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, ignore_sigio);
    if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
        return 0;
    if ((*rc = write_whole(fd, text, len)) < 0 && old) {
        int saved = errno;
        if (write_whole(fd, old, olen) < 0)
            ty_warn("runtime: a hosts file could not be written, nor put back: %s",
                    strerror(errno));
        errno = saved;
    }
    {
        int saved = errno;
        fcntl(fd, F_SETLEASE, F_UNLCK);
        errno = saved;
    }
    return 1;
}

/* The file's lines, in buf (size bytes). NULL when out of memory. */
static hline *parse(const char *buf, size_t size, size_t *n)
{
    hline *v = NULL;
    size_t cap = 0;

    *n = 0;
    for (size_t off = 0; off < size;) {
        const char *nl = memchr(buf + off, '\n', size - off);
        size_t len = nl ? (size_t)(nl - (buf + off)) + 1 : size - off;
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            hline *nv = realloc(v, nc * sizeof(*nv));
            if (!nv) {
                free(v);
                return NULL;
            }
            v = nv;
            cap = nc;
        }
        v[(*n)++] = (hline){.off = off, .len = len, .live = is_live(buf + off, len),
                            .next = SIZE_MAX};
        off += len;
    }
    return v ? v : calloc(1, sizeof(*v));
}

/* The lines of text that the file lacks (adds[], of lens[] bytes), appended
 * as comments in one write (room reserved first: a full disk leaves the file
 * as it was), then each brought to life by its first byte. */
static int append(int fd, size_t size, bool need_nl, const char **adds, const size_t *lens,
                  size_t k)
{
    size_t total = need_nl, pos = 0;
    char *w;
    int rc = -1;

    for (size_t i = 0; i < k; i++)
        total += lens[i] + 1;
    /* Room without growing the file: readers must not see the new size
     * before the bytes (posix_fallocate would show them zeros). */
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)size, (off_t)total) < 0 &&
        errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS)
        return -1;
    if (!(w = malloc(total)))
        return -1;
    if (need_nl)
        w[pos++] = '\n';
    for (size_t i = 0; i < k; i++) {
        w[pos] = '#';
        memcpy(w + pos + 1, adds[i] + 1, lens[i] - 1);
        w[pos + lens[i]] = '\n';
        pos += lens[i] + 1;
    }
    if (pw(fd, w, total, size) < 0) {
        /* Nothing of it lives: the tail of comments goes (seen or not). */
        int saved = errno;
        if (ftruncate(fd, (off_t)size) < 0) {
            /* the comments stay: harmless */
        }
        errno = saved;
        goto out;
    }
    pos = size + need_nl;
    for (size_t i = 0; i < k; i++) {
        if (pw(fd, adds[i], 1, pos) < 0)
            goto out;
        pos += lens[i] + 1;
    }
    rc = 0;
out:
    free(w);
    return rc;
}

/* Way 2 of the head comment: the file (buf, size bytes) patched line by line
 * to show text's lines. */
static int patch(int fd, char *buf, size_t size, const char *text, bool leases)
{
    strmap by_text;
    hline *v;
    size_t n, nadd = 0, cap = 0, dead = 0;
    const char **adds = NULL;
    size_t *lens = NULL;
    char *keys = NULL, *tkeys = NULL;
    int rc = -1;

    if (!(v = parse(buf, size, &n)))
        return -1;
    strmap_init(&by_text);
    if (!(keys = malloc(size + 1)) || !(tkeys = strdup(text)))
        goto out;
    memcpy(keys, buf, size);
    keys[size] = '\0';
    /* The file's live lines by text (keys: NUL-ended copies), first first. */
    for (size_t i = n; i-- > 0;) {
        hline *first;
        if (!v[i].live) {
            dead += v[i].len;
            continue;
        }
        keys[v[i].off + text_len(buf + v[i].off, v[i].len)] = '\0';
        first = strmap_get(&by_text, keys + v[i].off);
        v[i].next = first ? (size_t)(first - v) : SIZE_MAX;
        if (strmap_put(&by_text, keys + v[i].off, &v[i]) < 0)
            goto out;
    }
    /* text's live lines: each matches one of the file's, or is added. */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p), tl = text_len(p, len);
        char *key = tkeys + (p - text);
        hline *l;
        if (is_live(p, len)) {
            key[tl] = '\0';
            for (l = strmap_get(&by_text, key); l && l->matched;)
                l = l->next == SIZE_MAX ? NULL : &v[l->next];
            if (l) {
                l->matched = true;
            } else {
                if (nadd == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    const char **na = realloc(adds, nc * sizeof(*na));
                    size_t *nl2;
                    if (!na)
                        goto out;
                    adds = na;
                    if (!(nl2 = realloc(lens, nc * sizeof(*nl2))))
                        goto out;
                    lens = nl2;
                    cap = nc;
                }
                adds[nadd] = p;
                lens[nadd++] = tl;
            }
        }
        p += len + (nl ? 1 : 0);
    }
    if (dead > (leases ? MAX_GROWN_BUSY : MAX_GROWN)) {
        rc = write_whole(fd, text, strlen(text)); /* see the head comment */
        goto out;
    }
    /* New lines live first, then the old ones go. */
    if (nadd && append(fd, size, size && buf[size - 1] != '\n', adds, lens, nadd) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (v[i].live && !v[i].matched && pw(fd, "#", 1, v[i].off) < 0)
            goto out;
    rc = 0;
out:
    strmap_free(&by_text);
    free(adds);
    free(lens);
    free(keys);
    free(tkeys);
    free(v);
    return rc;
}

int rt_hosts_file_update(const char *path, const char *text)
{
    size_t len = strlen(text), size;
    struct stat st;
    char *buf = NULL;
    int fd, rc = -1, saved;

    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return rt_write_atomic(path, text, len, 0644); /* no reader yet */
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0)
        goto out;
    size = (size_t)st.st_size;
    if (size > MAX_FILE) {
        if (!try_leased(fd, text, len, NULL, 0, &rc))
            rc = write_whole(fd, text, len);
        goto out;
    }
    if (!(buf = malloc(size + 1)))
        goto out;
    if (size) {
        ssize_t got = pread(fd, buf, size, 0);
        if (got != (ssize_t)size) {
            if (got >= 0)
                errno = EIO; /* it shrank meanwhile: not ours to patch now */
            goto out;
        }
    }
    if (size == len && !memcmp(buf, text, len)) {
        rc = 0; /* it shows text already */
        goto out;
    }
    if (!try_leased(fd, text, len, buf, size, &rc))
        rc = patch(fd, buf, size, text, errno == EAGAIN); /* EAGAIN: it is open now */
out:
    saved = errno;
    free(buf);
    close(fd);
    errno = saved;
    return rc;
}
