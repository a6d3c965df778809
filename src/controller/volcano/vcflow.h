/* vcflow.h - the controllers of Volcano's job-making kinds: CronJob
 * (batch.volcano.sh/v1alpha1, cronjob.c) makes a Volcano Job from its
 * template at each scheduled time; JobFlow (flow.volcano.sh/v1alpha1,
 * jobflow.c) makes a Job from each JobTemplate it names once the Jobs of the
 * templates it depends on have completed, and JobTemplates list the Jobs made
 * from them. Each runs on the controllers' shared loop
 * (controller/workqueue.c). See docs/internals/volcano.md.
 */
#ifndef TY_CONTROLLER_VOLCANO_VCFLOW_H
#define TY_CONTROLLER_VOLCANO_VCFLOW_H

#include <stdint.h>

#include "base/cron.h"
#include "base/error.h"
#include "base/tzfile.h"
#include "client/kc.h"

typedef struct ty_vccron ty_vccron;
typedef struct ty_jobflows ty_jobflows;

/* Start the controllers on s, which must outlive them. NULL with err when
 * they cannot start. */
ty_vccron *vccron_start(ty_kc *s, ty_error *err);
ty_jobflows *jobflows_start(ty_kc *s, ty_error *err);

/* Stop the threads and free everything. NULL is fine. */
void vccron_stop(ty_vccron *c);
void jobflows_stop(ty_jobflows *f);

/* The schedule arithmetic of a CronJob pass, pure for tests. earliest is
 * the CronJob's status.lastScheduleTime, else its creationTimestamp;
 * deadline the startingDeadlineSeconds (negative: none). *scheduled: the
 * latest scheduled time in (max(earliest, now - deadline), now], 0 when
 * none; *wake: when the next pass should look (the next scheduled time
 * after the latest one, missed or not); *missed: how many were missed (more
 * than 100 gets a warning Event, as upstream). -1 when the schedule has two
 * times less than a second apart. */
int vccron_due(const cron_spec *spec, const tz_zone *z, int64_t earliest, int64_t deadline,
               int64_t now, int64_t *scheduled, int64_t *wake, int64_t *missed);

/* The name of the Job a CronJob makes for scheduled time t:
 * "<cronjob>-<t in minutes since the epoch>" (upstream's). */
void vccron_job_name(const char *cronjob, int64_t t, char *buf, size_t len);

#endif
