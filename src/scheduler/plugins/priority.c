/* priority.c - jobs and tasks by PriorityClass value; a preemptor may only
 * evict jobs of lower priority (reclaim across queues ignores priority). */
#include "scheduler/core_int.h"

static int job_order(sc_session *s, const sc_job *a, const sc_job *b)
{
    (void)s;
    return a->priority > b->priority ? -1 : a->priority < b->priority ? 1 : 0;
}

static int task_order(sc_session *s, const sc_task *a, const sc_task *b)
{
    (void)s;
    return a->priority > b->priority ? -1 : a->priority < b->priority ? 1 : 0;
}

static bool victim_ok(sc_session *s, const sc_job *preemptor, const sc_task *victim, bool reclaim)
{
    (void)s;
    return reclaim || victim->job->priority < preemptor->priority;
}

const sc_plugin sc_plugin_priority = {
    .name = "priority", .job_order = job_order, .task_order = task_order, .victim_ok = victim_ok,
};
