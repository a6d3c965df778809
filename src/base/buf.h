/* buf.h - a growable byte buffer, always NUL-terminated. */
#ifndef TY_BASE_BUF_H
#define TY_BASE_BUF_H

#include <stddef.h>

typedef struct ty_buf {
    char *data; /* NULL until the first append */
    size_t len;
    size_t cap;
} ty_buf;

/* Each returns 0, or -1 when memory runs out (the buffer is left as it was). */
int ty_buf_append(ty_buf *b, const char *data, size_t len);
int ty_buf_puts(ty_buf *b, const char *s);
int ty_buf_printf(ty_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the data to the caller (who frees it) and empties the buffer. Never
 * NULL: an empty buffer yields "". */
char *ty_buf_steal(ty_buf *b, size_t *len);
void ty_buf_free(ty_buf *b);

#endif
