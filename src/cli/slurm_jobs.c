/* slurm_jobs.c - the batch jobs as squeue, scancel and sacct see them
 * (slurm_jobs.h). The job's user is trainyard.io/created-by, which the
 * server stamps on every job and a client cannot forge (server/creator.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/kinds.h"
#include "cli/cli.h"
#include "cli/slurm_batch.h"
#include "cli/slurm_jobs.h"

#define CREATOR "trainyard.io/created-by"

static const char *ann(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"), key));
}

static long ann_long(const json_t *obj, const char *key, long dflt)
{
    const char *v = ann(obj, key);
    return v && isdigit((unsigned char)*v) ? strtol(v, NULL, 10) : dflt;
}

static time_t parse_rfc3339(const char *s)
{
    struct tm tm = {0};
    if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return (time_t)-1;
    return timegm(&tm);
}

/* How long the batch script ran, from its pod's container (startedAt to
 * finishedAt); -1 when its pod is not there or did not end. */
static long ran_for(const json_t *pods, long id)
{
    char name[64];
    size_t i;
    json_t *pod;

    snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld-" SB_TASK "-0", id);
    json_array_foreach(json_object_get(pods, "items"), i, pod) {
        const char *n = json_string_value(
            json_object_get(json_object_get(pod, "metadata"), "name"));
        if (!n || strcmp(n, name) != 0)
            continue;
        const json_t *st = json_array_get(
            json_object_get(json_object_get(pod, "status"), "containerStatuses"), 0);
        const json_t *term = json_object_get(json_object_get(st, "state"), "terminated");
        time_t a = parse_rfc3339(json_string_value(json_object_get(term, "startedAt")));
        time_t b = parse_rfc3339(json_string_value(json_object_get(term, "finishedAt")));
        return a != (time_t)-1 && b != (time_t)-1 && b >= a ? (long)(b - a) : -1;
    }
    return -1;
}

/* "code:signal" of the batch script, from its pod (pods: the namespace's
 * batch pods, NULL when not listed). */
static void exit_code(const json_t *pods, long id, const char *state, char *buf, size_t len)
{
    char name[64];
    size_t i;
    json_t *pod;

    snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld-" SB_TASK "-0", id);
    snprintf(buf, len, "0:0");
    json_array_foreach(json_object_get(pods, "items"), i, pod) {
        const json_t *st, *term;
        const char *n = json_string_value(
            json_object_get(json_object_get(pod, "metadata"), "name"));
        if (!n || strcmp(n, name) != 0)
            continue;
        st = json_array_get(json_object_get(json_object_get(pod, "status"), "containerStatuses"),
                            0);
        term = json_object_get(json_object_get(st, "state"), "terminated");
        if (!term)
            term = json_object_get(json_object_get(st, "lastState"), "terminated");
        if (term) {
            long code = (long)json_integer_value(json_object_get(term, "exitCode"));
            long sig = (long)json_integer_value(json_object_get(term, "signal"));
            snprintf(buf, len, "%ld:%ld", sig ? 0 : code, sig);
            return;
        }
    }
    /* killed before its script ended, or its pod is gone */
    if (!strcmp(state, "CANCELLED"))
        snprintf(buf, len, "0:15");
    else if (!strcmp(state, "FAILED"))
        snprintf(buf, len, "1:0");
}

static void job_view(const json_t *job, const json_t *pods, time_t now, sjob *j)
{
    const json_t *spec = json_object_get(job, "spec"), *st = json_object_get(job, "status");
    const json_t *state = json_object_get(st, "state");
    const char *phase = json_string_value(json_object_get(state, "phase"));
    time_t since = parse_rfc3339(json_string_value(json_object_get(state, "lastTransitionTime")));

    memset(j, 0, sizeof(*j));
    j->id = sb_job_id(job);
    j->name = ann(job, SB_ANN_NAME) ? ann(job, SB_ANN_NAME) : "";
    j->partition = json_string_value(json_object_get(spec, "queue"));
    if (!j->partition)
        j->partition = "default";
    j->user = ann(job, CREATOR) ? ann(job, CREATOR) : "unknown";
    j->account = ann(job, SB_ANN_ACCOUNT);
    if (!j->account)
        j->account = json_string_value(
            json_object_get(json_object_get(job, "metadata"), "namespace"));
    j->state = sb_state(phase);
    j->nodelist = ann(job, SB_ANN_NODELIST) ? ann(job, SB_ANN_NODELIST) : "";
    j->nodes = (long)json_integer_value(json_object_get(spec, "minAvailable"));
    j->ntasks = ann_long(job, SB_ANN_NTASKS, j->nodes);
    j->cpus = ann_long(job, SB_ANN_CPUS, j->ntasks);
    j->limit_s = ann_long(job, SB_ANN_LIMIT, 0);
    j->elapsed = phase && !strcmp(phase, "Running") && since != (time_t)-1 ? (long)(now - since)
                                                                           : ran_for(pods, j->id);
    exit_code(pods, j->id, j->state, j->exit_code, sizeof(j->exit_code));
}

/* The namespace's (or every namespace's: ns NULL) batch jobs, sorted by
 * number, and their pods when with_pods. 0, or -1 after printing why. */
int sj_list(ty_client *cl, const char *ns, bool with_pods, json_t **jobs,
                     json_t **pods)
{
    char path[1024];
    ty_error err;

    ty_error_init(&err);
    *pods = NULL;
    client_resource_path(&api_vcjob, ns, NULL, path, sizeof(path));
    strncat(path, "?labelSelector=" SB_LABEL_ID, sizeof(path) - strlen(path) - 1);
    if (!(*jobs = client_call_json(cl, "GET", path, NULL, NULL, &err)))
        goto fail;
    if (with_pods) {
        client_resource_path(&api_pod, ns, NULL, path, sizeof(path));
        strncat(path, "?labelSelector=" SB_LABEL_ID, sizeof(path) - strlen(path) - 1);
        if (!(*pods = client_call_json(cl, "GET", path, NULL, NULL, &err))) {
            json_decref(*jobs);
            goto fail;
        }
    }
    return 0;
fail:
    cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    ty_error_clear(&err);
    return -1;
}

static int by_id(const void *a, const void *b)
{
    const sjob *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The views of jobs' batch jobs, sorted; *n of them. Caller frees. */
sjob *sj_views(const json_t *jobs, const json_t *pods, size_t *n)
{
    const json_t *items = json_object_get(jobs, "items");
    sjob *v = calloc(json_array_size(items) + 1, sizeof(sjob));
    time_t now = time(NULL);
    size_t i;
    json_t *it;

    *n = 0;
    if (!v)
        return NULL;
    json_array_foreach(items, i, it)
        if (sb_job_id(it) > 0)
            job_view(it, pods, now, &v[(*n)++]);
    qsort(v, *n, sizeof(sjob), by_id);
    return v;
}

/* Whether item is in the comma-separated list (NULL: no list, everything). */
bool sj_in_list(const char *list, const char *item, bool nocase)
{
    size_t len = strlen(item);

    if (!list)
        return true;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && (nocase ? !strncasecmp(p, item, n) : !strncmp(p, item, n)))
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

bool sj_id_in_list(const char *list, long id)
{
    char s[32];
    snprintf(s, sizeof(s), "%ld", id);
    return sj_in_list(list, s, false);
}

/* Who the server says we are; NULL after printing why. Caller frees. */
char *sj_whoami(ty_client *cl)
{
    ty_error err;
    json_t *req = json_pack("{s:s,s:s}", "apiVersion", "authentication.k8s.io/v1", "kind",
                            "SelfSubjectReview");
    json_t *r;
    char *name = NULL;

    ty_error_init(&err);
    r = client_call_json(cl, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         "application/json", req, &err);
    json_decref(req);
    if (!r) {
        cli_print_error(&err, err.code != TY_EUNAVAILABLE);
        ty_error_clear(&err);
        return NULL;
    }
    const char *u = json_string_value(json_object_get(
        json_object_get(json_object_get(r, "status"), "userInfo"), "username"));
    name = strdup(u ? u : "");
    json_decref(r);
    return name;
}

