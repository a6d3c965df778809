/* backend_logs.h - the server's log source (server/logsrc.h) over the
 * runtime backends `trainyard server` started (runtime/backend.h): the
 * server layer may not include the runtime, so the command that starts both
 * joins them here. */
#ifndef TY_CLI_BACKEND_LOGS_H
#define TY_CLI_BACKEND_LOGS_H

#include "runtime/backend.h"
#include "server/logsrc.h"

#define CLI_MAX_BACKENDS 4

typedef struct cli_backend_logs {
    logsrc src;                          /* what server_opts.logs points at */
    const rt_backend *b[CLI_MAX_BACKENDS]; /* asked in this order; borrowed */
    size_t n;
} cli_backend_logs;

/* Fills l->src; add backends to l->b / l->n (before the server starts). A
 * log is the first backend's that has it. */
void cli_backend_logs_init(cli_backend_logs *l);

#endif
