/* status.c - the Kubeflow job conditions' rules, exit-code classification
 * and back-off arithmetic. Pure functions over JSON (see jobs_int.h); the
 * generic condition and pod readers are the controller kit's (kit.h). */
#include <string.h>

#include "controller/jobs/jobs_int.h"

bool jobs_finished(const json_t *status)
{
    return kit_cond_true(status, "Succeeded") || kit_cond_true(status, "Failed");
}

/* Running and Restarting exclude each other; Succeeded and Failed end
 * Running (and Restarting). */
bool jobs_cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                   const char *message, const char *now)
{
    static const char *const restarting[] = {"Restarting", NULL};
    static const char *const running[] = {"Running", NULL};
    static const char *const both[] = {"Running", "Restarting", NULL};
    const char *const *clears = NULL;

    if (strcmp(type, "Running") == 0)
        clears = restarting;
    else if (strcmp(type, "Restarting") == 0)
        clears = running;
    else if (strcmp(type, "Succeeded") == 0 || strcmp(type, "Failed") == 0)
        clears = both;
    return kit_cond_set(status, type, cstatus, reason, message, now, clears);
}

jobs_exit_class jobs_classify_exit(const char *restart_policy, int exit_code)
{
    if (!restart_policy || strcmp(restart_policy, "Never") == 0)
        return JOBS_EXIT_PERMANENT;
    if (strcmp(restart_policy, "ExitCode") == 0)
        return exit_code >= 128 ? JOBS_EXIT_RETRY : JOBS_EXIT_PERMANENT;
    return JOBS_EXIT_RETRY;
}

bool jobs_backoff_exceeded(long long limit, long long restarts)
{
    if (limit < 0)
        return false;
    if (limit == 0)
        return restarts > 0;
    return restarts >= limit;
}
