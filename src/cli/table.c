/* table.c - see table.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/table.h"

struct cli_table {
    size_t ncols;
    size_t nrows, cap;
    size_t col;     /* the next cell of cli_table_cellf */
    char **cells;   /* nrows * ncols */
    size_t width[CLI_TABLE_MAX_COLS];
};

cli_table *cli_table_new(size_t ncols)
{
    cli_table *t = calloc(1, sizeof(*t));
    if (t)
        t->ncols = ncols > CLI_TABLE_MAX_COLS ? CLI_TABLE_MAX_COLS : ncols;
    return t;
}

void cli_table_free(cli_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}

/* Room for one more row, its cells NULL; false when memory runs out. */
static bool grow(cli_table *t)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));
        if (!c)
            return false;
        t->cells = c;
        t->cap = cap;
    }
    memset(t->cells + t->nrows * t->ncols, 0, t->ncols * sizeof(char *));
    t->nrows++;
    return true;
}

static void set_cell(cli_table *t, size_t col, const char *s)
{
    char *c = strdup(s ? s : "");
    size_t len = c ? strlen(c) : 0;

    t->cells[(t->nrows - 1) * t->ncols + col] = c;
    if (len > t->width[col])
        t->width[col] = len;
}

void cli_table_row(cli_table *t, const char *const *cells)
{
    if (!grow(t))
        return;
    for (size_t i = 0; i < t->ncols; i++)
        set_cell(t, i, cells[i]);
    t->col = 0;
}

void cli_table_cellf(cli_table *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (t->col == 0 && !grow(t))
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    set_cell(t, t->col, buf);
    t->col = (t->col + 1) % t->ncols;
}

size_t cli_table_rows(const cli_table *t)
{
    return t->nrows;
}

void cli_table_print(const cli_table *t, FILE *f, const char *indent)
{
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent ? indent : "", f);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            bool last = c + 1 == t->ncols;
            fprintf(f, "%s%-*s", c ? "   " : "", last ? 0 : (int)t->width[c], s ? s : "");
        }
        fputc('\n', f);
    }
}
