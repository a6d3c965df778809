/* quota_gate.c - namespace ResourceQuotas in the enqueue gate (core.h,
 * sc_quota_spec): a gang waits whole, before any of its pods exists, while
 * its namespace's quota cannot hold its minResources; admission would
 * otherwise refuse its pods one by one and leave a partial gang.
 *
 * What a namespace uses is the larger of two readings, per slot: the
 * quota's status (the quota controller's count, which sees pods this model
 * does not: other schedulers' pods not yet bound) and the model's own
 * count of the namespace's live pods (never behind: the status lags the
 * pods by a controller pass). To it come what its admitted groups still
 * expect (minResources less what their live pods ask already: a group
 * admitted in an earlier cycle whose pods are not created yet holds its
 * place) and what this action admitted. Computed in one pass over the
 * jobs per action, only when a job of a namespace with a quota waits to be
 * admitted: without quotas the gate costs nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quota.h"
#include "scheduler/core_int.h"

typedef struct sc_quota sc_quota;

/* Volcano's plugin name, so that a volcano-scheduler.conf naming it loads:
 * the gate itself is always on (enqueue.c calls it), a namespace without a
 * quota costing nothing. */
const sc_plugin sc_plugin_resourcequota = {.name = "resourcequota"};

static void quota_free(sc_quota *q)
{
    if (!q)
        return;
    free(q->ns);
    free(q->name);
    for (int r = 0; r < SC_MAXRES; r++)
        free(q->names[r]);
    free(q);
}

void sc_quotas_free(sc_cluster *c)
{
    for (size_t i = 0; i < c->nquotas; i++)
        quota_free(c->quotas[i]);
    free(c->quotas);
    c->quotas = NULL;
    c->nquotas = c->quotas_cap = 0;
}

static size_t find(const sc_cluster *c, const char *ns, const char *name)
{
    for (size_t i = 0; i < c->nquotas; i++)
        if (!strcmp(c->quotas[i]->ns, ns) && !strcmp(c->quotas[i]->name, name))
            return i;
    return (size_t)-1;
}

void sc_quota_remove(sc_cluster *c, const char *ns, const char *name)
{
    size_t i = find(c, ns, name);

    if (i == (size_t)-1)
        return;
    quota_free(c->quotas[i]);
    c->quotas[i] = c->quotas[--c->nquotas];
    c->epoch++;
}

void sc_quota_upsert(sc_cluster *c, const sc_quota_spec *spec)
{
    sc_quota *q = calloc(1, sizeof(*q));
    size_t i;

    if (!q || !(q->ns = strdup(spec->ns)) || !(q->name = strdup(spec->name)))
        goto oom;
    q->hard = spec->hard;
    q->used = spec->used;
    q->mask = spec->hard_mask;
    for (int r = 0; r < SC_MAXRES; r++)
        if ((q->mask & (1u << r)) &&
            !(q->names[r] = strdup(spec->names[r] ? spec->names[r] : "?")))
            goto oom;
    c->epoch++;
    if ((i = find(c, spec->ns, spec->name)) != (size_t)-1) {
        quota_free(c->quotas[i]);
        c->quotas[i] = q;
        return;
    }
    if (c->nquotas == c->quotas_cap) {
        size_t cap = c->quotas_cap ? c->quotas_cap * 2 : 8;
        sc_quota **g = realloc(c->quotas, cap * sizeof(*g));
        if (!g)
            goto oom;
        c->quotas = g;
        c->quotas_cap = cap;
    }
    c->quotas[c->nquotas++] = q;
    return;
oom:
    quota_free(q); /* the gate then does not know of it */
}

size_t sc_quota_count(const sc_cluster *c)
{
    return c->nquotas;
}

static void split_ns(const char *key, char *ns, size_t len)
{
    const char *slash = strchr(key, '/');
    size_t n = slash ? (size_t)(slash - key) : 0;

    if (n >= len)
        n = len - 1;
    memcpy(ns, key, n);
    ns[n] = 0;
}

/* What j asks of a quota: its minResources, and minMember pods. */
static void job_ask(const sc_job *j, sc_res *ask)
{
    *ask = j->min_res;
    ask->v[SC_PODS] = (int64_t)j->min_member * 1000;
}

/* What job j adds to its namespace's use: its live pods, and what it
 * expects beyond them once admitted. */
static void job_use(const sc_job *j, sc_res *use)
{
    sc_res live = {0}, ask;

    for (size_t k = 0; k < j->ntasks; k++) {
        const sc_task *t = j->tasks[k];
        if (t->st == SC_TASK_SUCCEEDED || t->st == SC_TASK_FAILED)
            continue;
        sc_res_add(&live, &t->req);
    }
    *use = live;
    if (j->groupless || j->implicit || j->phase == SC_JOB_PENDING ||
        j->phase == SC_JOB_COMPLETED)
        return;
    job_ask(j, &ask);
    for (int r = 0; r < SC_MAXRES; r++)
        if (ask.v[r] > live.v[r])
            use->v[r] += ask.v[r] - live.v[r];
}

/* Every quota's reading for this action (see the top), in one pass over
 * the jobs: with a quota in each of many namespaces, a pass per namespace
 * walked every job again for each. */
static void fresh_all(sc_session *s)
{
    sc_cluster *c = s->c;
    strmap byns;
    bool whole = true;

    strmap_init(&byns);
    for (size_t i = 0; i < c->nquotas; i++) {
        sc_quota *q = c->quotas[i];
        q->serial = c->action_serial;
        memset(&q->base, 0, sizeof(q->base));
        memset(&q->added, 0, sizeof(q->added));
        q->ns_next = strmap_get(&byns, q->ns);
        if (strmap_put(&byns, q->ns, q) < 0)
            whole = false;
    }
    for (size_t i = 0; whole && i < c->njobs; i++) {
        const sc_job *j = c->jobs[i];
        char ns[256];
        sc_quota *q;
        sc_res use;
        split_ns(j->key, ns, sizeof(ns));
        if (!(q = strmap_get(&byns, ns)))
            continue;
        job_use(j, &use);
        for (; q; q = q->ns_next)
            sc_res_add(&q->base, &use);
    }
    strmap_free(&byns);
    if (whole)
        return;
    /* out of memory for the map: namespace by namespace */
    for (size_t i = 0; i < c->nquotas; i++)
        for (size_t k = 0; k < c->njobs; k++) {
            char ns[256];
            sc_res use;
            split_ns(c->jobs[k]->key, ns, sizeof(ns));
            if (strcmp(ns, c->quotas[i]->ns) != 0)
                continue;
            job_use(c->jobs[k], &use);
            sc_res_add(&c->quotas[i]->base, &use);
        }
}

/* q's reading for this action. */
static void fresh(sc_session *s, sc_quota *q)
{
    if (q->serial != s->c->action_serial)
        fresh_all(s);
}

bool sc_quota_admits(sc_session *s, const sc_job *j, char *why, size_t len)
{
    sc_cluster *c = s->c;
    char ns[256];
    sc_res ask;

    if (!c->nquotas)
        return true;
    split_ns(j->key, ns, sizeof(ns));
    job_ask(j, &ask);
    for (size_t i = 0; i < c->nquotas; i++) {
        sc_quota *q = c->quotas[i];
        size_t used = 0, nbad = 0;
        if (strcmp(q->ns, ns) != 0)
            continue;
        fresh(s, q);
        for (int r = 0; r < SC_MAXRES; r++) {
            int64_t have;
            char u[48], a[48], h[48];
            if (!(q->mask & (1u << r)) || ask.v[r] <= 0)
                continue;
            have = (q->used.v[r] > q->base.v[r] ? q->used.v[r] : q->base.v[r]) + q->added.v[r];
            if (have + ask.v[r] <= q->hard.v[r])
                continue;
            if (!used)
                used = (size_t)snprintf(why, len, "resource quota \"%s\" in namespace \"%s\": ",
                                        q->name, q->ns);
            quota_format(q->names[r], have, u, sizeof(u));
            quota_format(q->names[r], ask.v[r], a, sizeof(a));
            quota_format(q->names[r], q->hard.v[r], h, sizeof(h));
            if (used < len)
                used += (size_t)snprintf(why + used, len - used,
                                         "%s%s %s used + %s requested > %s hard",
                                         nbad ? ", " : "", q->names[r], u, a, h);
            nbad++;
        }
        if (used)
            return false;
    }
    return true;
}

void sc_quota_charge(sc_session *s, const sc_job *j)
{
    sc_cluster *c = s->c;
    char ns[256];
    sc_res ask;

    if (!c->nquotas)
        return;
    split_ns(j->key, ns, sizeof(ns));
    job_ask(j, &ask);
    for (size_t i = 0; i < c->nquotas; i++) {
        sc_quota *q = c->quotas[i];
        if (strcmp(q->ns, ns) != 0)
            continue;
        fresh(s, q);
        sc_res_add(&q->added, &ask);
    }
}
