/* termsafe.c - see termsafe.h. */
#include "cli/termsafe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put_esc(const unsigned char c, void (*put)(void *, const char *, size_t), void *ctx)
{
    char b[8];

    if (c == 0x1b)
        put(ctx, "^[", 2);
    else if (c == '\r')
        put(ctx, "\\r", 2);
    else if (c == 0x7f)
        put(ctx, "^?", 2);
    else {
        b[0] = '^';
        b[1] = (char)(c + 64);
        put(ctx, b, 2);
    }
}

void cli_term_escape(const char *s, size_t n, unsigned char *carry,
                     void (*put)(void *ctx, const char *b, size_t len), void *ctx)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, from = 0;
    char u[8];

    if (*carry) {
        /* a 0xC2 that ended the last piece: a C1 control if 0x80..0x9F follows */
        if (n && p[0] >= 0x80 && p[0] <= 0x9f) {
            snprintf(u, sizeof(u), "\\u%04x", p[0]);
            put(ctx, u, 6);
            i = from = 1;
        } else {
            put(ctx, "\xc2", 1);
        }
        *carry = 0;
    }
    for (; i < n; i++) {
        unsigned char c = p[i];
        if (c == 0xc2) {
            if (i + 1 == n) {
                put(ctx, s + from, i - from);
                *carry = c;
                return;
            }
            if (p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
                put(ctx, s + from, i - from);
                snprintf(u, sizeof(u), "\\u%04x", p[i + 1]);
                put(ctx, u, 6);
                from = ++i + 1;
            }
            continue;
        }
        if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t')
            continue;
        put(ctx, s + from, i - from);
        put_esc(c, put, ctx);
        from = i + 1;
    }
    put(ctx, s + from, n - from);
}

/* ---- the safe streams ---- */

typedef struct safe {
    int fd;
    unsigned char carry;
    bool failed;
} safe;

static safe safe_out = {.fd = 1}, safe_err = {.fd = 2};
static FILE *stream_out, *stream_err;

static void write_all(void *ctx, const char *b, size_t len)
{
    safe *sf = ctx;

    while (len && !sf->failed) {
        ssize_t w = write(sf->fd, b, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            sf->failed = true;
            return;
        }
        b += w;
        len -= (size_t)w;
    }
}

static ssize_t safe_write(void *cookie, const char *buf, size_t size)
{
    safe *sf = cookie;

    cli_term_escape(buf, size, &sf->carry, write_all, sf);
    if (sf->failed) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)size;
}

static int safe_close(void *cookie)
{
    safe *sf = cookie;

    if (sf->carry) {
        unsigned char c = sf->carry;
        sf->carry = 0;
        write_all(sf, (const char *)&c, 1);
    }
    return sf->failed ? -1 : 0;
}

static FILE *safe_open(safe *sf, FILE *was)
{
    cookie_io_functions_t io = {.write = safe_write, .close = safe_close};
    FILE *f = fopencookie(sf, "w", io);

    if (!f)
        return NULL;
    if (was == stderr)
        setvbuf(f, NULL, _IONBF, 0);
    else if (isatty(sf->fd))
        setvbuf(f, NULL, _IOLBF, BUFSIZ);
    return f;
}

int cli_term_safe_stdio(void)
{
    FILE *o, *e;

    if (stream_out)
        return 0;
    fflush(stdout);
    fflush(stderr);
    o = safe_open(&safe_out, stdout);
    e = o ? safe_open(&safe_err, stderr) : NULL;
    if (!e) {
        if (o)
            fclose(o);
        return -1;
    }
    stdout = stream_out = o;
    stderr = stream_err = e;
    return 0;
}

int cli_term_fd(FILE *f)
{
    if (f && f == stream_out)
        return safe_out.fd;
    if (f && f == stream_err)
        return safe_err.fd;
    return f ? fileno(f) : -1;
}

void cli_term_raw(FILE *f, const char *seq)
{
    safe *sf = f == stream_out ? &safe_out : f == stream_err ? &safe_err : NULL;

    if (!sf) {
        fputs(seq, f);
        return;
    }
    fflush(f);
    write_all(sf, seq, strlen(seq));
}
