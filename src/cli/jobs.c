/* jobs.c - training jobs of every kind for the researcher's commands (see
 * jobs.h): which kinds, how they are fetched, and what they sum up to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "base/timeutil.h"
#include "cli/jobs.h"
#include "model/podres.h"

#define LABEL_KF_JOB_NAME "training.kubeflow.org/job-name"
#define LABEL_VC_JOB_NAME "volcano.sh/job-name"
#define LABEL_JOBSET_NAME "jobset.sigs.k8s.io/jobset-name"
#define LABEL_TRAINJOB_NAME "trainer.kubeflow.org/trainjob-name"
/* Every Kubeflow descriptor plus Volcano's Job. */
#define MAX_JOB_RESOURCES 32

/* ---- the kinds ---- */

const api_resource *const *cli_job_resources(size_t *n)
{
    static const api_resource *all[MAX_JOB_RESOURCES];
    static size_t nall;

    if (!nall) {
        size_t nk;
        const kf_kind *const *k = kf_kinds(&nk);
        for (size_t i = 0; i < nk && nall < MAX_JOB_RESOURCES - 1; i++)
            all[nall++] = k[i]->resource;
        all[nall++] = &api_vcjob;
        all[nall++] = &api_trainjob;
    }
    *n = nall;
    return all;
}

bool cli_job_resource_is(const api_resource *res)
{
    return res && (res == &api_vcjob || res == &api_trainjob ||
                   kf_kind_for_resource(res) != NULL);
}

const api_resource *cli_job_resource_of(const json_t *job)
{
    const char *av = json_string_value(json_object_get(job, "apiVersion"));
    const char *kind = json_string_value(json_object_get(job, "kind"));
    const api_resource *res = av && kind ? api_find_kind(av, kind) : NULL;
    return cli_job_resource_is(res) ? res : NULL;
}

const char *cli_job_trainer(const api_resource *res)
{
    if (!res)
        return "Unknown";
    return res == &api_vcjob ? "VolcanoJob" : res->kind;
}

/* ---- small readers ---- */

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

static const char *str_or(const json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

const char *cli_obj_name(const json_t *obj)
{
    return str_or(at(obj, "metadata", "name"), "");
}

const char *cli_obj_ns(const json_t *obj)
{
    return str_or(at(obj, "metadata", "namespace"), "");
}

static time_t time_at(const json_t *v)
{
    time_t t;
    const char *s = json_string_value(v);
    return s && ty_time_parse(s, &t) == 0 ? t : 0;
}

static const char *label(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(at(obj, "metadata", "labels"), key));
}

static bool is_vcjob(const json_t *job)
{
    return cli_job_resource_of(job) == &api_vcjob;
}

/* ---- fetching ---- */

static int cmp_jobs(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int r = strcmp(cli_obj_ns(x), cli_obj_ns(y));
    if (!r)
        r = strcmp(cli_obj_name(x), cli_obj_name(y));
    if (!r)
        r = strcmp(str_or(json_object_get(x, "kind"), ""), str_or(json_object_get(y, "kind"), ""));
    return r;
}

/* arr sorted by cmp, in place. */
static void sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    json_t **v = n ? calloc(n, sizeof(*v)) : NULL;

    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof(*v), cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

/* GET of a list of res; its items (new reference) with apiVersion and kind
 * set. NULL with err. */
static json_t *list_items(ty_client *cl, const api_resource *res, const char *ns,
                          const char *selector, ty_error *err)
{
    char path[2048], av[160];
    json_t *list, *items, *it;
    size_t i;

    client_resource_path(res, ns, NULL, path, sizeof(path));
    if (selector) {
        char *esc = client_escape(selector);
        size_t len = strlen(path);
        snprintf(path + len, sizeof(path) - len, "?labelSelector=%s", esc ? esc : "");
        free(esc);
    }
    if (!(list = client_call_json(cl, "GET", path, NULL, NULL, err)))
        return NULL;
    items = json_object_get(list, "items");
    items = json_is_array(items) ? json_incref(items) : json_array();
    json_decref(list);
    if (*res->group)
        snprintf(av, sizeof(av), "%s/%s", res->group, res->version);
    else
        snprintf(av, sizeof(av), "%s", res->version);
    json_array_foreach(items, i, it) {
        if (!json_is_object(it))
            continue;
        json_object_set_new(it, "apiVersion", json_string(av));
        json_object_set_new(it, "kind", json_string(res->kind));
    }
    return items;
}

json_t *cli_jobs_list(ty_client *cl, const char *ns, ty_error *err)
{
    size_t n;
    const api_resource *const *rs = cli_job_resources(&n);
    json_t *all = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *items = list_items(cl, rs[i], ns, NULL, err);
        if (!items) {
            if (err->code == TY_ENOTFOUND) { /* a kind this server does not serve */
                ty_error_clear(err);
                continue;
            }
            json_decref(all);
            return NULL;
        }
        json_array_extend(all, items);
        json_decref(items);
    }
    sort_array(all, cmp_jobs);
    return all;
}

/* What a user types to pick res in KIND/NAME: "pytorchjob", "vcjob",
 * "msjobs.mindspore.gitee.com" (a kind served in two groups). */
static void kind_hint(const api_resource *res, char *buf, size_t len)
{
    if (res == &api_vcjob)
        snprintf(buf, len, "vcjob");
    else if (res == &api_trainjob)
        snprintf(buf, len, "trainjob");
    else if (strcmp(res->group, "kubeflow.org") == 0)
        snprintf(buf, len, "%s", res->singular);
    else
        snprintf(buf, len, "%s.%s", res->plural, res->group);
}

/* KIND as `plural.version.group` (mpijobs.v2beta1.kubeflow.org), which
 * client_resolve does not take; NULL when it is not one of ours. */
static const api_resource *versioned_kind(const char *kind)
{
    size_t n;
    const api_resource *const *rs = cli_job_resources(&n);

    for (size_t i = 0; i < n; i++) {
        char full[256];
        snprintf(full, sizeof(full), "%s.%s.%s", rs[i]->plural, rs[i]->version, rs[i]->group);
        if (strcasecmp(full, kind) == 0)
            return rs[i];
    }
    return NULL;
}

/* The job name of res in ns: 1 and *out (new reference), 0 when there is
 * none, -1 with err. */
static int get_one(ty_client *cl, const api_resource *res, const char *ns, const char *name,
                   json_t **out, ty_error *err)
{
    char path[2048], av[160];
    json_t *v;

    client_resource_path(res, ns, name, path, sizeof(path));
    if (!(v = client_call_json(cl, "GET", path, NULL, NULL, err))) {
        if (err->code == TY_ENOTFOUND) {
            ty_error_clear(err);
            return 0;
        }
        return -1;
    }
    snprintf(av, sizeof(av), "%s%s%s", res->group, *res->group ? "/" : "", res->version);
    json_object_set_new(v, "apiVersion", json_string(av));
    json_object_set_new(v, "kind", json_string(res->kind));
    *out = v;
    return 1;
}

/* KIND/NAME: the named kind only; in each version it is served in (an
 * MPIJob's name is unique across v1 and v2beta1, so mpijob/NAME finds
 * either) unless KIND names the version. */
static json_t *find_typed(ty_client *cl, const char *ns, const char *what, const char *slash,
                          ty_error *err)
{
    char kind[256];
    const api_resource *res, *const *rs;
    json_t *job = NULL;
    size_t n;
    bool exact = false;

    snprintf(kind, sizeof(kind), "%.*s", (int)(slash - what), what);
    res = client_resolve(kind);
    if (!res && (res = versioned_kind(kind)))
        exact = true;
    if (!cli_job_resource_is(res)) {
        ty_seterr(err, TY_EINVALID,
                  "\"%s\" is not a training job kind: give a job's NAME, or KIND/NAME with KIND "
                  "one of pytorchjob, tfjob, mpijob, xgboostjob, paddlejob, jaxjob, mxjob, "
                  "msjob, vcjob, trainjob (other objects: `trainyard get %s %s`)",
                  kind, kind, slash + 1);
        return NULL;
    }
    rs = cli_job_resources(&n);
    for (size_t i = 0; i < n && !job; i++) {
        if (exact ? rs[i] != res
                  : strcmp(rs[i]->group, res->group) != 0 || strcmp(rs[i]->kind, res->kind) != 0)
            continue;
        if (get_one(cl, rs[i], ns, slash + 1, &job, err) < 0)
            return NULL;
    }
    if (!job)
        ty_seterr(err, TY_ENOTFOUND,
                  "no %s %s in namespace %s; `trainyard list -A` lists the training jobs",
                  cli_job_trainer(res), slash + 1, ns);
    return job;
}

json_t *cli_job_find(ty_client *cl, const char *ns, const char *what, ty_error *err)
{
    size_t n;
    const api_resource *const *rs = cli_job_resources(&n);
    const char *slash = strchr(what, '/');
    const api_resource *found_res = NULL;
    json_t *found = NULL;

    if (slash)
        return find_typed(cl, ns, what, slash, err);
    for (size_t i = 0; i < n; i++) {
        json_t *job = NULL;
        int r = get_one(cl, rs[i], ns, what, &job, err);
        if (r < 0) {
            json_decref(found);
            return NULL;
        }
        if (r == 0)
            continue;
        if (found) {
            char a[160], b[160];
            kind_hint(found_res, a, sizeof(a));
            kind_hint(rs[i], b, sizeof(b));
            ty_seterr(err, TY_EINVALID,
                      "%s in namespace %s is both a %s and a %s: name one, as %s/%s or %s/%s",
                      what, ns, cli_job_trainer(found_res), cli_job_trainer(rs[i]), a, what, b,
                      what);
            json_decref(found);
            json_decref(job);
            return NULL;
        }
        found = job;
        found_res = rs[i];
    }
    if (!found)
        ty_seterr(err, TY_ENOTFOUND,
                  "no training job %s in namespace %s; `trainyard list -A` lists them", what, ns);
    return found;
}

json_t *cli_pods_list(ty_client *cl, const char *ns, const char *selector, ty_error *err)
{
    return list_items(cl, &api_pod, ns, selector, err);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(cli_obj_name(*(json_t *const *)a), cli_obj_name(*(json_t *const *)b));
}

/* Those of items (borrowed) that job owns, a new array. */
static json_t *owned(const json_t *job, const json_t *items)
{
    json_t *out = json_array(), *it;
    size_t i;

    json_array_foreach(items, i, it)
        if (cli_job_owns(job, it))
            json_array_append(out, it);
    return out;
}

json_t *cli_job_pods(ty_client *cl, const json_t *job, ty_error *err)
{
    char sel[512];
    json_t *pods, *mine;

    cli_job_pod_selector(job, sel, sizeof(sel));
    if (!(pods = cli_pods_list(cl, cli_obj_ns(job), sel, err)))
        return NULL;
    mine = owned(job, pods);
    json_decref(pods);
    sort_array(mine, cmp_names);
    return mine;
}

static int cmp_created(const void *a, const void *b)
{
    const char *x = json_string_value(at(*(json_t *const *)a, "metadata", "creationTimestamp"));
    const char *y = json_string_value(at(*(json_t *const *)b, "metadata", "creationTimestamp"));

    return strcmp(x ? x : "", y ? y : "");
}

json_t *cli_job_records(ty_client *cl, const char *ns, const char *name)
{
    char sel[400];
    json_t *recs;
    ty_error err;

    ty_error_init(&err);
    snprintf(sel, sizeof(sel), "trainyard.io/job-name=%s", name);
    recs = list_items(cl, &api_jobrecord, ns, sel, &err);
    ty_error_clear(&err);
    if (!recs)
        return json_array();
    sort_array(recs, cmp_created);
    return recs;
}

json_t *cli_job_podgroup(ty_client *cl, const json_t *job, ty_error *err)
{
    json_t *pgs, *mine, *pg = NULL;

    ty_error_init(err);
    if (!(pgs = list_items(cl, &api_podgroup, cli_obj_ns(job), NULL, err))) {
        if (err->code == TY_ENOTFOUND) /* no PodGroup kind served */
            ty_error_clear(err);
        return NULL;
    }
    mine = owned(job, pgs);
    if (json_array_size(mine))
        pg = json_incref(json_array_get(mine, 0));
    json_decref(mine);
    json_decref(pgs);
    return pg;
}

/* ---- pure ---- */

void cli_job_pod_selector(const json_t *job, char *buf, size_t len)
{
    if (cli_is_trainjob(job)) { /* JobSet's label, which the SDK selects by */
        snprintf(buf, len, "%s=%s", LABEL_JOBSET_NAME, cli_obj_name(job));
        return;
    }
    snprintf(buf, len, "%s=%s", is_vcjob(job) ? LABEL_VC_JOB_NAME : LABEL_KF_JOB_NAME,
             cli_obj_name(job));
}

bool cli_job_owns(const json_t *job, const json_t *obj)
{
    const char *uid = json_string_value(at(job, "metadata", "uid"));
    const json_t *refs = at(obj, "metadata", "ownerReferences"), *r;
    size_t i;

    if (strcmp(cli_obj_ns(job), cli_obj_ns(obj)) != 0)
        return false;
    if (uid && json_array_size(refs)) {
        json_array_foreach(refs, i, r)
            if (json_is_string(json_object_get(r, "uid")) &&
                strcmp(json_string_value(json_object_get(r, "uid")), uid) == 0)
                return true;
        return false;
    }
    /* Without owner references (written by hand): the job-name label, and
     * for a Volcano Job's PodGroup its name prefix is not enough to tell. */
    if (cli_is_trainjob(job)) {
        const char *js = label(obj, LABEL_JOBSET_NAME), *tj = label(obj, LABEL_TRAINJOB_NAME);
        return (js && !strcmp(js, cli_obj_name(job))) || (tj && !strcmp(tj, cli_obj_name(job)));
    }
    const char *name = label(obj, is_vcjob(job) ? LABEL_VC_JOB_NAME : LABEL_KF_JOB_NAME);
    return name && strcmp(name, cli_obj_name(job)) == 0;
}

/* The index's keys of obj: "U:<uid>" of each owner it names, else (no
 * owner references) "K:<ns>/<name>" and "V:<ns>/<name>" of its Kubeflow and
 * Volcano job-name labels, as cli_job_owns looks. */
static void index_add(json_t *ix, const char *key, json_t *obj)
{
    json_t *list = json_object_get(ix, key);

    if (!list) {
        list = json_array();
        json_object_set_new(ix, key, list);
    }
    json_array_append(list, obj);
}

json_t *cli_owned_index(const json_t *objs)
{
    json_t *ix = json_object(), *obj, *r;
    size_t i, k;
    char key[768];

    json_array_foreach(objs, i, obj) {
        const json_t *refs = at(obj, "metadata", "ownerReferences");
        const char *kf = label(obj, LABEL_KF_JOB_NAME), *vc = label(obj, LABEL_VC_JOB_NAME);
        const char *tj = label(obj, LABEL_TRAINJOB_NAME);
        if (json_array_size(refs)) {
            json_array_foreach(refs, k, r)
                if (json_is_string(json_object_get(r, "uid"))) {
                    snprintf(key, sizeof(key), "U:%s", json_string_value(json_object_get(r, "uid")));
                    index_add(ix, key, obj);
                }
            continue;
        }
        if (kf) {
            snprintf(key, sizeof(key), "K:%s/%s", cli_obj_ns(obj), kf);
            index_add(ix, key, obj);
        }
        if (vc) {
            snprintf(key, sizeof(key), "V:%s/%s", cli_obj_ns(obj), vc);
            index_add(ix, key, obj);
        }
        if ((tj = tj ? tj : label(obj, LABEL_JOBSET_NAME))) {
            snprintf(key, sizeof(key), "T:%s/%s", cli_obj_ns(obj), tj);
            index_add(ix, key, obj);
        }
    }
    return ix;
}

json_t *cli_owned_by(const json_t *index, const json_t *job)
{
    const char *uid = json_string_value(at(job, "metadata", "uid"));
    json_t *out = json_array(), *obj;
    const json_t *lists[2] = {NULL, NULL};
    char key[768];
    size_t i;

    if (uid) {
        snprintf(key, sizeof(key), "U:%s", uid);
        lists[0] = json_object_get(index, key);
    }
    snprintf(key, sizeof(key), "%c:%s/%s",
             is_vcjob(job) ? 'V' : cli_is_trainjob(job) ? 'T' : 'K', cli_obj_ns(job),
             cli_obj_name(job));
    lists[1] = json_object_get(index, key);
    for (int l = 0; l < 2; l++)
        json_array_foreach(lists[l], i, obj)
            if (cli_job_owns(job, obj))
                json_array_append(out, obj);
    return out;
}

bool cli_resource_is_gpu(const char *name)
{
    size_t len = name ? strlen(name) : 0;
    return len > 4 && strcmp(name + len - 4, "/gpu") == 0;
}

int64_t cli_spec_gpus(const json_t *pod_spec)
{
    podres r;
    int64_t milli = 0;

    if (!json_is_object(pod_spec))
        return 0;
    podres_of_spec(pod_spec, &r);
    for (size_t i = 0; i < r.n; i++)
        if (cli_resource_is_gpu(r.r[i].name))
            milli += r.r[i].milli;
    /* devices are whole: a fraction asks for the next one */
    return (milli + 999) / 1000;
}

int64_t cli_pod_gpus(const json_t *pod)
{
    return cli_spec_gpus(json_object_get(pod, "spec"));
}

bool cli_pod_active(const json_t *pod)
{
    const char *node = json_string_value(at(pod, "spec", "nodeName"));
    const char *phase = str_or(at(pod, "status", "phase"), "Pending");
    return node && *node && strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0;
}

static void add_replica(cli_job_replica *out, size_t max, size_t *n, const char *role,
                        long long replicas, const json_t *spec)
{
    if (*n < max) {
        cli_job_replica *r = &out[*n];
        snprintf(r->role, sizeof(r->role), "%s", role ? role : "");
        r->replicas = replicas < 0 ? 0 : replicas;
        r->pod_spec = json_is_object(spec) ? spec : NULL;
        r->gpus = cli_spec_gpus(r->pod_spec);
    }
    (*n)++;
}

static long long int_or(const json_t *v, long long dflt)
{
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

size_t cli_job_replicas(const json_t *job, cli_job_replica *out, size_t max)
{
    const api_resource *res = cli_job_resource_of(job);
    const kf_kind *k = kf_kind_for_resource(res);
    const json_t *spec = json_object_get(job, "spec"), *it;
    size_t n = 0, i;

    if (res == &api_trainjob)
        return cli_trainjob_replicas(job, NULL, out, max);
    if (res == &api_vcjob) {
        json_array_foreach(json_object_get(spec, "tasks"), i, it)
            add_replica(out, max, &n, str_or(json_object_get(it, "name"), ""),
                        int_or(json_object_get(it, "replicas"), 1), at(it, "template", "spec"));
        return n;
    }
    if (!k)
        return 0;
    const json_t *map = json_object_get(spec, k->replica_field);
    if (json_is_array(map)) { /* MSJob kubeflow.org/v1: a list of replica specs */
        json_array_foreach(map, i, it)
            add_replica(out, max, &n, str_or(json_object_get(it, "replicaType"), "MASTER"),
                        int_or(json_object_get(it, "replicas"), 1), at(it, "template", "spec"));
        return n;
    }
    for (const kf_replica_type *t = k->types; t->name; t++) {
        const json_t *rs = kf_replica_spec(k, job, t->name);
        if (rs)
            add_replica(out, max, &n, t->name, kf_replicas(k, job, t->name),
                        at(rs, "template", "spec"));
    }
    return n;
}

/* The condition of type in conds whose status is True, or NULL. */
static const json_t *true_cond(const json_t *conds, const char *type)
{
    const json_t *c;
    size_t i;

    json_array_foreach(conds, i, c)
        if (strcmp(str_or(json_object_get(c, "type"), ""), type) == 0 &&
            strcmp(str_or(json_object_get(c, "status"), ""), "True") == 0)
            return c;
    return NULL;
}

static const char *vc_status(const json_t *job)
{
    static const struct {
        const char *phase, *status;
    } map[] = {
        {"Running", "Running"},     {"Completing", "Running"},  {"Completed", "Succeeded"},
        {"Failed", "Failed"},       {"Terminating", "Failed"},  {"Terminated", "Failed"},
        {"Aborting", "Suspended"},  {"Aborted", "Suspended"},   {"Restarting", "Restarting"},
    };
    const char *phase = str_or(json_object_get(at(job, "status", "state"), "phase"), "");

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(phase, map[i].phase) == 0)
            return map[i].status;
    return NULL;
}

static const char *kf_status(const json_t *job)
{
    const json_t *conds = at(job, "status", "conditions"), *c, *latest = NULL;
    static const char *const finished[] = {"Succeeded", "Failed", "Suspended"};
    size_t i;

    for (i = 0; i < 3; i++)
        if (true_cond(conds, finished[i]))
            return finished[i];
    /* asked to be suspended, before the engine has said so */
    if (json_is_true(json_object_get(at(job, "spec", "runPolicy"), "suspend")))
        return "Suspended";
    /* the latest of the others that holds (the list is in the order they
     * came; a later one of the same time wins) */
    json_array_foreach(conds, i, c) {
        const char *type = str_or(json_object_get(c, "type"), "");
        if ((strcmp(type, "Running") == 0 || strcmp(type, "Restarting") == 0 ||
             strcmp(type, "Created") == 0) &&
            strcmp(str_or(json_object_get(c, "status"), ""), "True") == 0 &&
            (!latest || time_at(json_object_get(c, "lastTransitionTime")) >=
                            time_at(json_object_get(latest, "lastTransitionTime"))))
            latest = c;
    }
    if (!latest)
        return NULL;
    const char *type = json_string_value(json_object_get(latest, "type"));
    return strcmp(type, "Running") == 0 ? "Running" : strcmp(type, "Restarting") == 0 ? "Restarting"
                                                                                       : "Created";
}

const char *cli_job_status(const json_t *job, const json_t *pods, const json_t *pg)
{
    const char *s;
    const json_t *pod;
    size_t i;

    if (cli_is_trainjob(job))
        return cli_trainjob_status(job, pods);
    s = is_vcjob(job) ? vc_status(job) : kf_status(job);

    if (s && strcmp(s, "Created") != 0)
        return s;
    /* neither running nor finished: waiting, when something waits */
    if (pg && strcmp(str_or(at(pg, "status", "phase"), "Pending"), "Running") != 0)
        return "Pending";
    json_array_foreach(pods, i, pod)
        if (cli_job_owns(job, pod) &&
            strcmp(str_or(at(pod, "status", "phase"), "Pending"), "Pending") == 0)
            return "Pending";
    return is_vcjob(job) ? "Pending" : "Created";
}

void cli_job_times(const json_t *job, time_t *created, time_t *started, time_t *ended)
{
    const json_t *st = json_object_get(job, "status");
    const json_t *conds = json_object_get(st, "conditions");
    const json_t *c;

    *created = time_at(at(job, "metadata", "creationTimestamp"));
    *started = time_at(json_object_get(st, "startTime"));
    *ended = time_at(json_object_get(st, "completionTime"));
    if (is_vcjob(job)) {
        /* Volcano: a condition per phase it went through */
        const char *status = vc_status(job);
        size_t i;
        json_array_foreach(conds, i, c) {
            const char *ph = str_or(json_object_get(c, "status"), "");
            if (!*started && strcmp(ph, "Running") == 0)
                *started = time_at(json_object_get(c, "lastTransitionTime"));
        }
        if (!*ended && status && (strcmp(status, "Succeeded") == 0 || strcmp(status, "Failed") == 0))
            *ended = time_at(json_object_get(json_object_get(st, "state"), "lastTransitionTime"));
        return;
    }
    if (cli_is_trainjob(job)) {
        /* upstream keeps no start time: creation, or the last resume */
        if ((c = true_cond(conds, "Complete")) || (c = true_cond(conds, "Failed")))
            *ended = *ended ? *ended : time_at(json_object_get(c, "lastTransitionTime"));
        return;
    }
    if (!*started && (c = true_cond(conds, "Running")))
        *started = time_at(json_object_get(c, "lastTransitionTime"));
    if (!*ended) {
        if ((c = true_cond(conds, "Succeeded")) || (c = true_cond(conds, "Failed")))
            *ended = time_at(json_object_get(c, "lastTransitionTime"));
    }
}

int64_t cli_job_duration(const json_t *job, time_t now)
{
    time_t created, started, ended, from;

    cli_job_times(job, &created, &started, &ended);
    from = started ? started : created;
    if (!from)
        return 0;
    if (!ended || ended < from)
        ended = now;
    return ended > from ? (int64_t)(ended - from) : 0;
}

const char *cli_job_priority_class(const json_t *job)
{
    if (is_vcjob(job))
        return str_or(at(job, "spec", "priorityClassName"), "");
    return str_or(at(at(job, "spec", "runPolicy"), "schedulingPolicy", "priorityClass"), "");
}

const char *cli_job_queue(const json_t *job)
{
    if (cli_is_trainjob(job))
        return cli_trainjob_queue(job);
    const char *q = is_vcjob(job)
                        ? json_string_value(at(job, "spec", "queue"))
                        : json_string_value(
                              at(at(job, "spec", "runPolicy"), "schedulingPolicy", "queue"));
    return q && *q ? q : "default";
}

const char *cli_job_user(const json_t *job)
{
    return json_string_value(
        json_object_get(at(job, "metadata", "annotations"), "trainyard.io/created-by"));
}

void cli_job_summarise(const json_t *job, const json_t *pods, const json_t *pg, time_t now,
                       cli_job_summary *out)
{
    cli_job_replica reps[CLI_JOB_MAX_REPLICAS];
    size_t nrep, used = 0, i;
    const json_t *pod;
    const char *user = cli_job_user(job);

    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", cli_obj_name(job));
    snprintf(out->ns, sizeof(out->ns), "%s", cli_obj_ns(job));
    out->res = cli_job_resource_of(job);
    out->trainer = cli_job_trainer(out->res);
    out->status = cli_job_status(job, pods, pg);
    out->duration = cli_job_duration(job, now);
    nrep = cli_is_trainjob(job) ? cli_trainjob_replicas(job, pods, reps, CLI_JOB_MAX_REPLICAS)
                                : cli_job_replicas(job, reps, CLI_JOB_MAX_REPLICAS);
    for (i = 0; i < nrep && i < CLI_JOB_MAX_REPLICAS; i++)
        out->gpus_requested += reps[i].gpus * reps[i].replicas;
    json_array_foreach(pods, i, pod) {
        if (!cli_job_owns(job, pod))
            continue;
        out->npods++;
        if (strcmp(str_or(at(pod, "status", "phase"), ""), "Running") == 0)
            out->nrunning++;
        if (!cli_pod_active(pod))
            continue;
        out->gpus_allocated += cli_pod_gpus(pod);
        /* each node once, in the order first seen */
        const char *node = json_string_value(at(pod, "spec", "nodeName"));
        size_t nl = strlen(node);
        bool seen = false;
        for (const char *p = out->nodes; (p = strstr(p, node)) != NULL; p += nl)
            if ((p == out->nodes || p[-1] == ',') && (p[nl] == ',' || p[nl] == '\0'))
                seen = true;
        if (!seen && used + nl + 2 < sizeof(out->nodes))
            used += (size_t)snprintf(out->nodes + used, sizeof(out->nodes) - used, "%s%s",
                                     used ? "," : "", node);
    }
    if (!used)
        snprintf(out->nodes, sizeof(out->nodes), "N/A");
    snprintf(out->queue, sizeof(out->queue), "%s", cli_job_queue(job));
    snprintf(out->priority_class, sizeof(out->priority_class), "%s",
             cli_job_priority_class(job));
    snprintf(out->user, sizeof(out->user), "%s", user && *user ? user : "N/A");
    if (cli_is_trainjob(job))
        cli_trainjob_progress(job, out->progress, sizeof(out->progress));
}

void cli_duration_text(int64_t s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    if (s < 60)
        snprintf(buf, len, "%llds", (long long)s);
    else if (s < 3600)
        snprintf(buf, len, "%lldm", (long long)(s / 60));
    else if (s < 86400)
        snprintf(buf, len, "%lldh%lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
    else
        snprintf(buf, len, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
}
