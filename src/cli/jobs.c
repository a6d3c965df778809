/* jobs.c - training jobs of every kind for the researcher's commands (see
 * jobs.h): which kinds, and how they and their pods are fetched. What a
 * fetched job sums up to is jobs_facts.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "cli/jobs.h"
#include "cli/jobs_int.h"

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

const char *cli_obj_name(const json_t *obj)
{
    return str_or(at(obj, "metadata", "name"), "");
}

const char *cli_obj_ns(const json_t *obj)
{
    return str_or(at(obj, "metadata", "namespace"), "");
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
