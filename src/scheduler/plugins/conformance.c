/* conformance.c - never evict what the cluster itself needs: pods in
 * kube-system and pods of system-critical priority. */
#include <string.h>

#include "scheduler/core_int.h"

#define SYSTEM_CRITICAL 2000000000

static bool victim_ok(sc_session *s, const sc_job *preemptor, const sc_task *victim, bool reclaim)
{
    (void)s;
    (void)preemptor;
    (void)reclaim;
    return strncmp(victim->key, "kube-system/", 12) != 0 && victim->priority < SYSTEM_CRITICAL;
}

const sc_plugin sc_plugin_conformance = {.name = "conformance", .victim_ok = victim_ok};
