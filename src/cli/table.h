/* table.h - aligned text tables as kubectl prints them (columns three
 * spaces apart, the last one unpadded), for the job commands' views. */
#ifndef TY_CLI_TABLE_H
#define TY_CLI_TABLE_H

#include <stdio.h>

#define CLI_TABLE_MAX_COLS 16

typedef struct cli_table cli_table;

/* An empty table of ncols columns (at most CLI_TABLE_MAX_COLS); NULL when
 * memory runs out. Caller frees with cli_table_free. */
cli_table *cli_table_new(size_t ncols);
void cli_table_free(cli_table *t);
/* Appends a row of ncols cells (copied; NULL prints as ""). */
void cli_table_row(cli_table *t, const char *const *cells);
/* printf-style cell by cell: cli_table_cellf for each column of a row in
 * turn; a row ends after its ncols-th cell. */
void cli_table_cellf(cli_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t cli_table_rows(const cli_table *t);
/* Prints every row to f, each line prefixed by indent. */
void cli_table_print(const cli_table *t, FILE *f, const char *indent);

#endif
