/* job_cmds.h - the job views that `trainyard get` and `trainyard delete`
 * turn to when their one argument names a training job rather than a
 * resource type (docs/cli/get.md, docs/cli/delete.md). */
#ifndef TY_CLI_JOB_CMDS_H
#define TY_CLI_JOB_CMDS_H

#include <stdbool.h>

#include "cli/cli.h"

/* `trainyard get JOB`: the job (NAME or KIND/NAME, cli_job_find) in
 * ctx->ns, its instances, why it waits, and with events its events; -o
 * json|yaml prints the object. Exit status (0, 1 after printing why). */
int job_get(const cli_ctx *ctx, const char *what, bool events);

/* `trainyard delete JOB`: deletes the job of whatever kind (policy: the
 * DeleteOptions propagationPolicy). Exit status. */
int job_delete(const cli_ctx *ctx, const char *what, const char *policy, bool ignore_missing);

/* The error when a lone argument of `get`/`delete` is neither a resource
 * type nor a job: both said, with what to do next. */
void job_not_found_either(const char *what, const cli_ctx *ctx);

#endif
