/* job_get.c - `trainyard get JOB`: one training job as Arena's `arena get`
 * shows it: what it is, its instances (pods), why it waits when it waits
 * (job_pending.c), and its events (docs/cli/get.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "base/timeutil.h"
#include "cli/job_cmds.h"
#include "cli/job_pending.h"
#include "cli/jobs.h"
#include "cli/table.h"
#include "model/yaml.h"

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

static const char *str_or(const json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

static void age_of(const char *ts, time_t now, char *buf, size_t len)
{
    time_t t;
    if (ts && ty_time_parse(ts, &t) == 0)
        ty_duration_human((int64_t)(now - t), buf, len);
    else
        snprintf(buf, len, "<unknown>");
}

/* GET a list of res in ns (NULL: all) into its items; NULL (and nothing
 * said) when the server does not serve the kind or the request fails: the
 * pending explanation is then made from less. */
static json_t *items_or_null(ty_client *cl, const api_resource *res, const char *ns)
{
    char path[1024];
    ty_error err;
    json_t *l, *items;

    ty_error_init(&err);
    client_resource_path(res, ns, NULL, path, sizeof(path));
    l = client_call_json(cl, "GET", path, NULL, NULL, &err);
    ty_error_clear(&err);
    items = json_incref(json_object_get(l, "items"));
    json_decref(l);
    return items;
}

static json_t *get_or_null(ty_client *cl, const api_resource *res, const char *ns,
                           const char *name)
{
    char path[1024];
    ty_error err;
    json_t *v;

    ty_error_init(&err);
    client_resource_path(res, ns, name, path, sizeof(path));
    v = client_call_json(cl, "GET", path, NULL, NULL, &err);
    ty_error_clear(&err);
    return v;
}

/* "master/0", "worker/3", a Volcano task's "trainer/1". */
static void pod_role(const json_t *pod, char *buf, size_t len)
{
    const json_t *l = at(pod, "metadata", "labels");
    const json_t *a = at(pod, "metadata", "annotations");
    const char *type = json_string_value(json_object_get(l, "training.kubeflow.org/replica-type"));
    const char *idx = json_string_value(json_object_get(l, "training.kubeflow.org/replica-index"));

    if (!type) {
        type = json_string_value(json_object_get(l, "volcano.sh/task-spec"));
        idx = json_string_value(json_object_get(a, "volcano.sh/task-index"));
    }
    if (!type) { /* a TrainJob's: the replicated job and the completion index */
        type = json_string_value(json_object_get(l, "jobset.sigs.k8s.io/replicatedjob-name"));
        idx = json_string_value(json_object_get(l, "batch.kubernetes.io/job-completion-index"));
    }
    if (!type)
        snprintf(buf, len, "<none>");
    else
        snprintf(buf, len, "%s/%s", type, idx ? idx : "?");
}

/* The pod's status as kubectl's STATUS column says it in the common cases:
 * a waiting container's reason, else the phase. */
static const char *pod_status(const json_t *pod)
{
    const json_t *cs;
    size_t i;

    if (at(pod, "metadata", "deletionTimestamp"))
        return "Terminating";
    json_array_foreach(at(pod, "status", "containerStatuses"), i, cs) {
        const char *r = json_string_value(at(json_object_get(cs, "state"), "waiting", "reason"));
        if (r && *r)
            return r;
        r = json_string_value(at(json_object_get(cs, "state"), "terminated", "reason"));
        if (r && *r && strcmp(str_or(at(pod, "status", "phase"), ""), "Running") != 0)
            return r;
    }
    return str_or(at(pod, "status", "phase"), "Pending");
}

static void print_instances(const json_t *pods, time_t now)
{
    cli_table *t = cli_table_new(6);
    const json_t *pod;
    size_t i;

    if (!json_array_size(pods)) {
        printf("\nInstances:   <none>\n");
        cli_table_free(t);
        return;
    }
    printf("\nInstances:\n");
    cli_table_row(t, (const char *const[]){"NAME", "STATUS", "AGE", "NODE", "ROLE", "GPUs"});
    json_array_foreach(pods, i, pod) {
        char age[32], role[128];
        age_of(json_string_value(at(pod, "metadata", "creationTimestamp")), now, age, sizeof(age));
        pod_role(pod, role, sizeof(role));
        const char *node = json_string_value(at(pod, "spec", "nodeName"));
        cli_table_cellf(t, "%s", cli_obj_name(pod));
        cli_table_cellf(t, "%s", pod_status(pod));
        cli_table_cellf(t, "%s", age);
        cli_table_cellf(t, "%s", node && *node ? node : "<none>");
        cli_table_cellf(t, "%s", role);
        cli_table_cellf(t, "%lld", (long long)cli_pod_gpus(pod));
    }
    cli_table_print(t, stdout, "  ");
    cli_table_free(t);
}

/* The Events about the job itself (its uid), or NULL when not readable. */
static json_t *job_events(ty_client *cl, const json_t *job)
{
    char path[1400];
    size_t n;
    ty_error err;
    json_t *l, *items;

    client_resource_path(&api_event, cli_obj_ns(job), NULL, path, sizeof(path));
    n = strlen(path);
    snprintf(path + n, sizeof(path) - n, "?fieldSelector=involvedObject.uid%%3D%s",
             str_or(at(job, "metadata", "uid"), ""));
    ty_error_init(&err);
    l = client_call_json(cl, "GET", path, NULL, NULL, &err);
    ty_error_clear(&err);
    items = json_incref(json_object_get(l, "items"));
    json_decref(l);
    return items;
}

/* Why the job waits: everything the scheduler reads, fetched, then
 * job_pending.c's judgement. */
static void print_pending(ty_client *cl, const json_t *job, const json_t *pods, const json_t *pg)
{
    jp_input in = {.job = job, .pods = pods, .pg = pg};
    jp_result r;
    json_t *queue, *quotas, *nodes, *all_pods, *pgs, *pcs, *events;
    char qname[254];

    snprintf(qname, sizeof(qname), "%s",
             pg ? str_or(at(pg, "spec", "queue"), cli_job_queue(job)) : cli_job_queue(job));
    in.queue = queue = get_or_null(cl, &api_queue, NULL, *qname ? qname : "default");
    in.quotas = quotas = items_or_null(cl, &api_resourcequota, cli_obj_ns(job));
    in.nodes = nodes = items_or_null(cl, &api_node, NULL);
    in.all_pods = all_pods = items_or_null(cl, &api_pod, NULL);
    in.podgroups = pgs = items_or_null(cl, &api_podgroup, NULL);
    in.priority_classes = pcs = items_or_null(cl, &api_priorityclass, NULL);
    in.events = events = job_events(cl, job);
    jp_explain(&in, &r);
    printf("\nWhy pending:\n");
    if (!nodes || !all_pods)
        printf("  (the nodes or every namespace's pods are not readable with these credentials: "
               "free GPUs and node sizes not judged)\n");
    if (!r.text[0] && !r.scheduler[0])
        printf("  Waiting for the scheduler: nothing in the queue, quota or nodes holds it back "
               "that this view can see\n");
    for (const char *line = r.text; *line;) {
        size_t n = strcspn(line, "\n");
        printf("  %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
    if (r.position && !(r.reasons & JP_BEHIND))
        printf("  Queue: first of %zu waiting in queue %s\n", r.waiting, r.queue);
    if (r.scheduler[0])
        printf("  Scheduler: %s\n", r.scheduler);
    json_decref(queue);
    json_decref(quotas);
    json_decref(nodes);
    json_decref(all_pods);
    json_decref(pgs);
    json_decref(pcs);
    json_decref(events);
}

/* Whether event e is about the job, its pods or its PodGroup: by uid, or by
 * kind and name when the event carries no uid (the operator's scheduler
 * writes its Scheduled events so). */
static bool event_of(const json_t *e, const json_t *uids)
{
    const json_t *io = json_object_get(e, "involvedObject");
    const char *uid = json_string_value(json_object_get(io, "uid"));
    char key[600];

    if (uid && *uid)
        return json_object_get(uids, uid) != NULL;
    snprintf(key, sizeof(key), "%s/%s", str_or(json_object_get(io, "kind"), ""),
             str_or(json_object_get(io, "name"), ""));
    return json_object_get(uids, key) != NULL;
}

/* obj's uid and Kind/name into the set uids. */
static void add_obj(json_t *uids, const json_t *obj, const char *kind)
{
    char key[600];

    json_object_set_new(uids, str_or(at(obj, "metadata", "uid"), "-"), json_true());
    snprintf(key, sizeof(key), "%s/%s", kind, cli_obj_name(obj));
    json_object_set_new(uids, key, json_true());
}

static int event_cmp(const void *a, const void *b)
{
    struct timespec x = {0}, y = {0};
    ty_time_parse_ts(jp_event_time(*(json_t *const *)a), &x);
    ty_time_parse_ts(jp_event_time(*(json_t *const *)b), &y);
    if (x.tv_sec != y.tv_sec)
        return x.tv_sec < y.tv_sec ? -1 : 1;
    if (x.tv_nsec != y.tv_nsec)
        return x.tv_nsec < y.tv_nsec ? -1 : 1;
    return 0;
}

static void print_events(ty_client *cl, const json_t *job, const json_t *pods, const json_t *pg,
                         time_t now)
{
    json_t *uids = json_object(), *events, *p;
    const json_t **mine;
    size_t i, n = 0;

    add_obj(uids, job, str_or(json_object_get(job, "kind"), ""));
    if (pg)
        add_obj(uids, pg, "PodGroup");
    json_array_foreach(pods, i, p)
        add_obj(uids, p, "Pod");
    events = items_or_null(cl, &api_event, cli_obj_ns(job));
    mine = calloc(json_array_size(events) + 1, sizeof(*mine));
    json_array_foreach(events, i, p)
        if (mine && event_of(p, uids))
            mine[n++] = p;
    if (!n) {
        printf("\nEvents:      <none>\n");
    } else {
        cli_table *t = cli_table_new(5);
        qsort(mine, n, sizeof(*mine), event_cmp);
        printf("\nEvents:\n");
        cli_table_row(t, (const char *const[]){"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"});
        for (i = 0; i < n; i++) {
            char age[32];
            const json_t *io = json_object_get(mine[i], "involvedObject");
            age_of(jp_event_time(mine[i]), now, age, sizeof(age));
            cli_table_cellf(t, "%s", age);
            cli_table_cellf(t, "%s", str_or(json_object_get(mine[i], "type"), ""));
            cli_table_cellf(t, "%s", str_or(json_object_get(mine[i], "reason"), ""));
            cli_table_cellf(t, "%s/%s", str_or(json_object_get(io, "kind"), ""),
                            str_or(json_object_get(io, "name"), ""));
            cli_table_cellf(t, "%s", str_or(json_object_get(mine[i], "message"), ""));
        }
        cli_table_print(t, stdout, "  ");
        cli_table_free(t);
    }
    free(mine);
    json_decref(events);
    json_decref(uids);
}

/* What a TrainJob's training script reported (status.trainerStatus). */
static void print_trainer_status(const json_t *job, time_t now)
{
    const json_t *ts = at(job, "status", "trainerStatus");
    char text[64], metrics[1024], age[32];

    if (!cli_trainjob_progress(job, text, sizeof(text))) {
        printf("%-13s<none reported>\n", "Progress:");
        return;
    }
    age_of(json_string_value(json_object_get(ts, "lastUpdatedTime")), now, age, sizeof(age));
    printf("%-13s%s, updated %s ago\n", "Progress:", text, age);
    cli_trainjob_metrics(job, metrics, sizeof(metrics));
    if (metrics[0])
        printf("%-13s%s\n", "Metrics:", metrics);
}

static void print_job(ty_client *cl, const json_t *job, const json_t *pods, const json_t *pg,
                      bool events)
{
    time_t now = time(NULL), created, started, ended;
    cli_job_summary s;
    cli_job_replica reps[CLI_JOB_MAX_REPLICAS];
    size_t nrep = cli_is_trainjob(job)
                      ? cli_trainjob_replicas(job, pods, reps, CLI_JOB_MAX_REPLICAS)
                      : cli_job_replicas(job, reps, CLI_JOB_MAX_REPLICAS);
    char dur[32], age[32], buf[512] = "";
    size_t used = 0;

    cli_job_summarise(job, pods, pg, now, &s);
    cli_job_times(job, &created, &started, &ended);
    if (!started && cli_is_trainjob(job)) {
        /* upstream's TrainJob keeps no start: it started when a pod did */
        size_t i;
        const json_t *p;
        json_array_foreach(pods, i, p) {
            time_t t;
            const char *st = json_string_value(at(p, "status", "startTime"));
            if (st && ty_time_parse(st, &t) == 0 && (!started || t < started))
                started = t;
        }
    }
    cli_duration_text(s.duration, dur, sizeof(dur));
    age_of(json_string_value(at(job, "metadata", "creationTimestamp")), now, age, sizeof(age));
    printf("%-13s%s\n", "Name:", s.name);
    printf("%-13s%s\n", "Namespace:", s.ns);
    printf("%-13s%s (%s)\n", "Kind:", s.trainer, str_or(json_object_get(job, "apiVersion"), ""));
    printf("%-13s%s\n", "Status:", s.status);
    printf("%-13s%s\n", "Queue:", s.queue);
    if (*s.priority_class) {
        json_t *pc = get_or_null(cl, &api_priorityclass, NULL, s.priority_class);
        if (json_is_integer(json_object_get(pc, "value")))
            printf("%-13s%s (%lld)\n", "Priority:", s.priority_class,
                   (long long)json_integer_value(json_object_get(pc, "value")));
        else
            printf("%-13s%s\n", "Priority:", s.priority_class);
        json_decref(pc);
    } else {
        printf("%-13s<none>\n", "Priority:");
    }
    printf("%-13s%s\n", "User:", s.user);
    printf("%-13s%s (%s ago)\n", "Created:",
           str_or(at(job, "metadata", "creationTimestamp"), "<unknown>"), age);
    printf("%-13s%s%s\n", "Duration:", dur, started ? "" : " (waiting, not started)");
    for (size_t i = 0; i < nrep && i < CLI_JOB_MAX_REPLICAS && used < sizeof(buf); i++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s %lld x %lld GPU",
                                 i ? ", " : "", reps[i].role, reps[i].replicas,
                                 (long long)reps[i].gpus);
    printf("%-13s%s\n", "Replicas:", buf[0] ? buf : "<none>");
    printf("%-13s%lld requested, %lld allocated\n", "GPUs:", (long long)s.gpus_requested,
           (long long)s.gpus_allocated);
    printf("%-13s%s\n", "Nodes:", s.nodes);
    if (cli_is_trainjob(job))
        print_trainer_status(job, now);
    print_instances(pods, now);
    if (strcmp(s.status, "Pending") == 0 || strcmp(s.status, "Created") == 0)
        print_pending(cl, job, pods, pg);
    if (events)
        print_events(cl, job, pods, pg, now);
}

/* A recorded job's state as `trainyard get` tells a live one's (its
 * conditions; Running or Created by its pods' phases when it was deleted),
 * with the reason of the condition that says so. */
static void record_status(const json_t *job, const json_t *pods, char *buf, size_t len)
{
    static const struct {
        const char *state, *cond;
    } by[] = {{"Succeeded", "Complete"}, {"Failed", "Failed"}, {"Suspended", "Suspended"}};
    const char *state = cli_trainjob_status(job, NULL), *reason = NULL;
    const json_t *c, *p;
    size_t i;

    for (size_t k = 0; k < sizeof(by) / sizeof(by[0]); k++) {
        if (strcmp(state, by[k].state) != 0)
            continue;
        json_array_foreach(at(job, "status", "conditions"), i, c)
            if (!strcmp(str_or(json_object_get(c, "type"), ""), by[k].cond) &&
                !strcmp(str_or(json_object_get(c, "status"), ""), "True"))
                reason = json_string_value(json_object_get(c, "reason"));
    }
    if (!strcmp(state, "Created"))
        json_array_foreach(pods, i, p)
            if (!strcmp(str_or(json_object_get(p, "phase"), ""), "Running"))
                state = "Running";
    snprintf(buf, len, "%s%s%s%s", state, reason ? " (" : "", reason ? reason : "",
             reason ? ")" : "");
}

/* A job that is no more: its newest JobRecord (docs/trainer.md, "Records"),
 * when there is one. false when there is none to show. */
static bool print_record(ty_client *cl, const cli_ctx *ctx, const char *what)
{
    const char *slash = strchr(what, '/'), *name = slash ? slash + 1 : what;
    json_t *recs, *rec, *job, *pod;
    const json_t *conds, *last;
    time_t now = time(NULL);
    char age[32];
    size_t i;

    if (slash && strncmp(what, "trainjob/", 9) && strncmp(what, "trainjobs/", 10) &&
        strncmp(what, "trainjob.", 9) && strncmp(what, "trainjobs.", 10))
        return false;
    recs = cli_job_records(cl, ctx->ns, name);
    if (!json_array_size(recs)) {
        json_decref(recs);
        return false;
    }
    rec = json_array_get(recs, json_array_size(recs) - 1);
    job = json_object_get(json_object_get(rec, "spec"), "job");
    conds = at(job, "status", "conditions");
    last = json_array_get(conds, json_array_size(conds) ? json_array_size(conds) - 1 : 0);
    age_of(json_string_value(at(rec, "spec", "deletedAt")), now, age, sizeof(age));
    printf("%-13s%s (deleted)\n", "Name:", name);
    printf("%-13s%s\n", "Namespace:", ctx->ns);
    printf("%-13s%s (%s)\n", "Kind:", str_or(json_object_get(job, "kind"), ""),
           str_or(json_object_get(job, "apiVersion"), ""));
    if (cli_is_trainjob(job)) {
        char st[160];
        record_status(job, at(rec, "spec", "pods"), st, sizeof(st));
        printf("%-13s%s\n", "Status:", st);
    } else {
        printf("%-13s%s%s%s%s\n", "Status:", str_or(json_object_get(last, "type"), "<none>"),
               json_object_get(last, "reason") ? " (" : "",
               str_or(json_object_get(last, "reason"), ""),
               json_object_get(last, "reason") ? ")" : "");
    }
    printf("%-13s%s\n", "Created:", str_or(at(job, "metadata", "creationTimestamp"),
                                            "<unknown>"));
    printf("%-13s%s (%s ago)\n", "Deleted:", str_or(at(rec, "spec", "deletedAt"), "<unknown>"),
           age);
    if (cli_is_trainjob(job))
        print_trainer_status(job, now);
    printf("\nInstances:%s\n", json_array_size(at(rec, "spec", "pods")) ? "" : "   <none>");
    json_array_foreach(at(rec, "spec", "pods"), i, pod) {
        const json_t *code = json_object_get(pod, "exitCode");
        printf("  %-40s %-10s", str_or(json_object_get(pod, "name"), ""),
               str_or(json_object_get(pod, "phase"), ""));
        if (json_is_integer(code))
            printf(" exit %lld", (long long)json_integer_value(code));
        printf("\n");
    }
    printf("\nRecord:      jobrecord/%s; `trainyard logs POD` reads a pod's logs while the\n"
           "             runtime keeps them\n", cli_obj_name(rec));
    if (json_array_size(recs) > 1)
        printf("             (%zu records of jobs named %s: kubectl get jobrecords -l "
               "trainyard.io/job-name=%s)\n", json_array_size(recs), name, name);
    json_decref(recs);
    return true;
}

int job_get(const cli_ctx *ctx, const char *what, bool events)
{
    ty_client *cl = cli_connect(ctx);
    ty_error err;
    json_t *job = NULL, *pods = NULL, *pg = NULL;
    int rc = 1;

    if (!cl)
        return 1;
    ty_error_init(&err);
    if (!(job = cli_job_find(cl, ctx->ns, what, &err)))
        goto out;
    if (strcmp(ctx->output, "name") == 0) {
        char kn[160];
        cli_kind_name(cli_job_resource_of(job), kn, sizeof(kn));
        printf("%s/%s\n", kn, cli_obj_name(job));
        rc = 0;
        goto out;
    }
    if (*ctx->output && strcmp(ctx->output, "wide") != 0) { /* json or yaml: the object */
        char *txt = strcmp(ctx->output, "json") == 0
                        ? json_dumps(job, JSON_INDENT(4) | JSON_PRESERVE_ORDER)
                        : yaml_dump(job);
        printf(strcmp(ctx->output, "json") == 0 ? "%s\n" : "%s", txt ? txt : "");
        free(txt);
        rc = 0;
        goto out;
    }
    if (!(pods = cli_job_pods(cl, job, &err)))
        goto out;
    /* without its PodGroup (not readable) the view has less to say, but
     * is still worth printing */
    pg = cli_job_podgroup(cl, job, &err);
    ty_error_clear(&err);
    print_job(cl, job, pods, pg, events);
    rc = 0;
out:
    if (rc && err.code == TY_ENOTFOUND && !job && !*ctx->output && print_record(cl, ctx, what))
        rc = 0;
    else if (rc && err.code == TY_ENOTFOUND && !job && !strchr(what, '/'))
        job_not_found_either(what, ctx);
    else if (rc)
        cli_print_error(&err, err.code != TY_EUNAVAILABLE && (job || (err.code != TY_ENOTFOUND &&
                                                                      err.code != TY_EINVALID)));
    ty_error_clear(&err);
    json_decref(job);
    json_decref(pods);
    json_decref(pg);
    client_free(cl);
    return rc;
}
