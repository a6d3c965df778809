/* jobs_int.h - what jobs.c (fetching), jobs_facts.c (what a job sums up to)
 * and jobs_trainer.c (TrainJobs) share: the labels that tie pods to their
 * job, and small readers of fetched objects. Nothing else includes it. */
#ifndef TY_CLI_JOBS_INT_H
#define TY_CLI_JOBS_INT_H

#include <time.h>

#include "api/kinds.h"
#include "base/timeutil.h"
#include "cli/jobs.h"

#define LABEL_KF_JOB_NAME "training.kubeflow.org/job-name"
#define LABEL_VC_JOB_NAME "volcano.sh/job-name"
#define LABEL_JOBSET_NAME "jobset.sigs.k8s.io/jobset-name"
#define LABEL_TRAINJOB_NAME "trainer.kubeflow.org/trainjob-name"

static inline const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

static inline const char *str_or(const json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

/* An RFC 3339 time's seconds; 0 for none or a bad one. */
static inline time_t time_at(const json_t *v)
{
    time_t t;
    const char *s = json_string_value(v);
    return s && ty_time_parse(s, &t) == 0 ? t : 0;
}

static inline const char *label(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(at(obj, "metadata", "labels"), key));
}

static inline bool is_vcjob(const json_t *job)
{
    return cli_job_resource_of(job) == &api_vcjob;
}

#endif
