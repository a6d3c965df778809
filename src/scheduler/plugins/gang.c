/* gang.c - all-or-nothing: a job is placed only when minMember of its tasks
 * (and each role's minTaskMember) fit together. The placement rule itself
 * lives in the actions (sc_job_gang_ready); this plugin turns it on and
 * orders gangs that are still incomplete before those already running. */
#include "scheduler/core_int.h"

static int job_order(sc_session *s, const sc_job *a, const sc_job *b)
{
    bool ra = sc_job_gang_ready(a, false, true), rb = sc_job_gang_ready(b, false, true);
    (void)s;
    return ra == rb ? 0 : ra ? 1 : -1;
}

const sc_plugin sc_plugin_gang = {.name = "gang", .job_order = job_order};
