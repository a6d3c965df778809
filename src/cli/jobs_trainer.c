/* jobs_trainer.c - Kubeflow Trainer v2's TrainJob as the researcher's
 * commands see it (jobs.h): its status from its conditions and pods (as the
 * Kubeflow Python SDK tells it), its replicas from its pods (the runtime
 * says how many, and `trainyard list` does not read runtimes), and the
 * progress its training script posted (status.trainerStatus). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "base/timeutil.h"
#include "cli/jobs_int.h"

#define LABEL_RJOB "jobset.sigs.k8s.io/replicatedjob-name"

bool cli_is_trainjob(const json_t *job)
{
    return cli_job_resource_of(job) == &api_trainjob;
}

static bool cond_true(const json_t *job, const char *type)
{
    const json_t *c;
    size_t i;

    json_array_foreach(at(job, "status", "conditions"), i, c)
        if (!strcmp(str_or(json_object_get(c, "type"), ""), type) &&
            !strcmp(str_or(json_object_get(c, "status"), ""), "True"))
            return true;
    return false;
}

const char *cli_trainjob_status(const json_t *job, const json_t *pods)
{
    const json_t *pod;
    size_t i, nodes = 0, up = 0;
    bool waiting = false;

    if (cond_true(job, "Complete"))
        return "Succeeded";
    if (cond_true(job, "Failed"))
        return "Failed";
    if (cond_true(job, "Suspended") || json_is_true(at(job, "spec", "suspend")))
        return "Suspended";
    /* the SDK's rule: Running when every trainer pod runs or has finished */
    json_array_foreach(pods, i, pod) {
        const char *phase = str_or(at(pod, "status", "phase"), "Pending");
        const char *rjob = str_or(json_object_get(at(pod, "metadata", "labels"), LABEL_RJOB), "");
        if (!cli_job_owns(job, pod))
            continue;
        if (!strcmp(phase, "Pending"))
            waiting = true;
        if (strcmp(rjob, "node") != 0)
            continue;
        nodes++;
        up += !strcmp(phase, "Running") || !strcmp(phase, "Succeeded");
    }
    if (nodes && up == nodes)
        return "Running";
    return waiting ? "Pending" : "Created";
}

/* Whole GPUs a ResourceRequirements asks for (per node). */
static int64_t resources_gpus(const json_t *resources)
{
    json_t *spec;
    int64_t g;

    if (!json_is_object(resources))
        return 0;
    spec = json_pack("{s:[{s:s, s:O}]}", "containers", "name", "node", "resources", resources);
    g = cli_spec_gpus(spec);
    json_decref(spec);
    return g;
}

static void put(cli_job_replica *out, size_t max, size_t *n, const char *role,
                long long replicas, const json_t *spec, int64_t gpus)
{
    if (*n < max) {
        snprintf(out[*n].role, sizeof(out[*n].role), "%s", role);
        out[*n].replicas = replicas;
        out[*n].pod_spec = spec;
        out[*n].gpus = gpus;
    }
    (*n)++;
}

size_t cli_trainjob_replicas(const json_t *job, const json_t *pods, cli_job_replica *out,
                             size_t max)
{
    const json_t *tr = at(job, "spec", "trainer"), *pod;
    size_t n = 0, i;

    /* from the pods, one entry per replicated job in the order first seen */
    json_array_foreach(pods, i, pod) {
        const char *rjob = json_string_value(json_object_get(at(pod, "metadata", "labels"),
                                                             LABEL_RJOB));
        size_t k;
        if (!rjob || !cli_job_owns(job, pod))
            continue;
        for (k = 0; k < n && k < max && strcmp(out[k].role, rjob) != 0; k++)
            ;
        if (k < n && k < max)
            out[k].replicas++;
        else
            put(out, max, &n, rjob, 1, json_object_get(pod, "spec"),
                cli_pod_gpus(pod));
    }
    if (n)
        return n;
    /* none yet: what the job itself says of its trainer (numNodes; the
     * runtime's count is not read here) */
    if (json_is_object(tr))
        put(out, max, &n, "node",
            json_is_integer(json_object_get(tr, "numNodes"))
                ? json_integer_value(json_object_get(tr, "numNodes")) : 1,
            NULL, resources_gpus(json_object_get(tr, "resourcesPerNode")));
    return n;
}

const char *cli_trainjob_queue(const json_t *job)
{
    const char *q = json_string_value(json_object_get(at(job, "metadata", "labels"),
                                                      "kueue.x-k8s.io/queue-name"));
    if (!q || !*q)
        q = json_string_value(json_object_get(at(job, "metadata", "annotations"),
                                              "scheduling.volcano.sh/queue-name"));
    return q && *q ? q : "default";
}

bool cli_trainjob_progress(const json_t *job, char *buf, size_t len)
{
    const json_t *ts = at(job, "status", "trainerStatus");
    const json_t *pct = json_object_get(ts, "progressPercentage");
    const json_t *eta = json_object_get(ts, "estimatedRemainingSeconds");
    char left[32];

    if (!json_is_object(ts)) {
        snprintf(buf, len, "%s", "");
        return false;
    }
    if (json_is_integer(eta))
        cli_duration_text((int64_t)json_integer_value(eta), left, sizeof(left));
    if (json_is_integer(pct) && json_is_integer(eta))
        snprintf(buf, len, "%lld%% (%s left)", (long long)json_integer_value(pct), left);
    else if (json_is_integer(pct))
        snprintf(buf, len, "%lld%%", (long long)json_integer_value(pct));
    else if (json_is_integer(eta))
        snprintf(buf, len, "%s left", left);
    else
        snprintf(buf, len, "reported");
    return true;
}

void cli_trainjob_metrics(const json_t *job, char *buf, size_t len)
{
    const json_t *m;
    size_t i, used = 0;
    const json_t *ms = json_object_get(at(job, "status", "trainerStatus"), "metrics");

    buf[0] = '\0';
    json_array_foreach(ms, i, m) {
        int w = snprintf(buf + used, len - used, "%s%s=%s", used ? ", " : "",
                         str_or(json_object_get(m, "name"), "?"),
                         str_or(json_object_get(m, "value"), ""));
        if (w < 0 || (size_t)w >= len - used) {
            /* cut: say so rather than end mid-name */
            if (len > 4)
                snprintf(buf + (used < len - 4 ? used : len - 4), 4, "...");
            break;
        }
        used += (size_t)w;
    }
}
