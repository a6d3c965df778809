#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(ty_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    size_t ncap;
    char *nd;

    if (need <= b->cap)
        return 0;
    ncap = b->cap ? b->cap : 256;
    while (ncap < need)
        ncap *= 2;
    nd = realloc(b->data, ncap);
    if (!nd)
        return -1;
    b->data = nd;
    b->cap = ncap;
    return 0;
}

int ty_buf_append(ty_buf *b, const char *data, size_t len)
{
    if (reserve(b, len) < 0)
        return -1;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int ty_buf_puts(ty_buf *b, const char *s)
{
    return ty_buf_append(b, s, strlen(s));
}

int ty_buf_printf(ty_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

char *ty_buf_steal(ty_buf *b, size_t *len)
{
    char *d = b->data ? b->data : strdup("");
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

void ty_buf_free(ty_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
