/* podgroup.c - the PodGroup of a Kubeflow job (see jobs_int.h): made and
 * kept in line with the job's schedulingPolicy, and read for whether the
 * gang scheduler has admitted the job yet; the gate itself (jobs_pg_gate)
 * is the Volcano Job controller's too. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/log.h"
#include "controller/jobs/jobs_int.h"
#include "model/podres.h"
#include "model/quantity.h"

void jobs_add_requests(json_t *sums, const json_t *pod_spec, long long times)
{
    podres r;

    podres_of_spec(pod_spec, &r);
    for (size_t i = 0; i < r.n; i++) {
        const char *k = r.r[i].name;
        json_object_set_new(sums, k, json_integer(json_integer_value(json_object_get(sums, k)) +
                                                  r.r[i].milli * times));
    }
}

/* Whether the framework creates a type's pods now (see may_create). */
static bool creates_now(const jobs_framework *fw, const job_ctx *c, const jf_counts *counts,
                        size_t ntypes, size_t t)
{
    return !fw->may_create || fw->may_create(c, counts[t].type, counts, ntypes);
}

/* minResources as upstream computes it: the requests of the first minMember
 * pods, replica types in the kind's order; over the same pods minMember
 * counts (a type created only later is in neither, or a launcher that was
 * left out of minMember still had its requests in minResources). */
static json_t *min_resources(const jobs_framework *fw, const job_ctx *c, const json_t *job,
                             const jf_counts *counts, size_t ntypes, long long min_member)
{
    json_t *sums = json_object(), *out;
    long long left = min_member;

    for (size_t t = 0; t < ntypes && left > 0; t++) {
        const json_t *tmpl = json_object_get(kf_replica_spec(c->kind, job, counts[t].type),
                                             "template");
        long long n = counts[t].replicas < left ? counts[t].replicas : left;
        if (!creates_now(fw, c, counts, ntypes, t))
            continue;
        jobs_add_requests(sums, json_object_get(tmpl, "spec"), n);
        left -= n;
    }
    out = jobs_quantities(sums);
    json_decref(sums);
    return out;
}

json_t *jobs_quantities(const json_t *sums)
{
    json_t *out = json_object(), *v;
    const char *k;

    json_object_foreach((json_t *)sums, k, v) {
        char buf[64];
        quantity_format(json_integer_value(v), buf, sizeof(buf));
        json_object_set_new(out, k, json_string(buf));
    }
    return out;
}

int jobs_pg_follow(json_t *obj, void *arg, ty_error *err)
{
    json_t *spec = json_object_get(obj, "spec");

    (void)err;
    if (json_is_object(spec))
        json_object_update(spec, arg);
    return 0;
}

/* Whether the PodGroup's spec holds every field of want already. */
static bool spec_follows(const json_t *pg, const json_t *want)
{
    const json_t *spec = json_object_get(pg, "spec"), *v;
    const char *k;

    json_object_foreach((json_t *)want, k, v)
        if (!json_equal(json_object_get(spec, k), v))
            return false;
    return true;
}

/* The PodGroup a Kubeflow job wants, through the one gate (jobs_pg_gate). */
int jobs_podgroup_gate(ty_kc *s, const jobs_framework *fw, const job_ctx *c,
                       const json_t *job, const jf_counts *counts, size_t ntypes)
{
    const json_t *sp = json_object_get(
        json_object_get(json_object_get(job, "spec"), "runPolicy"), "schedulingPolicy");
    const char *queue = json_string_value(json_object_get(sp, "queue"));
    const char *pc = json_string_value(json_object_get(sp, "priorityClass"));
    long long total = 0, min_member;
    json_t *spec, *pg;

    /* Replicas the framework creates only later (MPI's launcher waits for
     * its workers) are not part of the gang until then: a gang that waits
     * for pods its job will only create once the gang runs never runs. */
    for (size_t t = 0; t < ntypes; t++)
        if (creates_now(fw, c, counts, ntypes, t))
            total += counts[t].replicas;
    min_member = json_is_integer(json_object_get(sp, "minAvailable"))
                     ? json_integer_value(json_object_get(sp, "minAvailable"))
                     : total;
    spec = json_pack("{s:I, s:s}", "minMember", (json_int_t)min_member, "queue",
                     queue && *queue ? queue : "default");
    if (json_is_object(json_object_get(sp, "minResources")))
        json_object_set(spec, "minResources", json_object_get(sp, "minResources"));
    else
        json_object_set_new(spec, "minResources",
                            min_resources(fw, c, job, counts, ntypes, min_member));
    if (pc && *pc)
        json_object_set_new(spec, "priorityClassName", json_string(pc));
    pg = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:o}", "apiVersion",
                   "scheduling.volcano.sh/v1beta1", "kind", "PodGroup", "metadata", "name",
                   c->name, "namespace", c->ns, "ownerReferences", jobs_owner_ref(job), "spec",
                   spec);
    return jobs_pg_gate(s, c->ns, pg);
}

bool jobs_pg_admitted(const json_t *pg)
{
    const char *phase =
        json_string_value(json_object_get(json_object_get(pg, "status"), "phase"));

    return phase && *phase && strcmp(phase, "Pending") != 0;
}

int jobs_pg_gate(ty_kc *s, const char *ns, json_t *pg)
{
    const char *key = api_store_key(&api_podgroup);
    const char *name =
        json_string_value(json_object_get(json_object_get(pg, "metadata"), "name"));
    json_t *spec = json_incref(json_object_get(pg, "spec"));
    ty_error err;
    ty_obj *o = NULL;
    int open;

    ty_error_init(&err);
    if (!name || !json_is_object(spec)) {
        json_decref(spec);
        json_decref(pg);
        return -1;
    }
    /* Read first: most passes find the PodGroup as it should be, and a
     * mutate that changes nothing still took a turn on the store's one
     * writer (a copy and a comparison of the PodGroup, in line behind every
     * other write). */
    o = kc_get(s, key, ns, name, &err);
    if (o && !spec_follows(ty_obj_json(o), spec)) {
        ty_obj_unref(o);
        o = kc_mutate(s, key, ns, name, jobs_pg_follow, spec, 0, &err);
    }
    if (!o && err.code == TY_ENOTFOUND) {
        ty_error_clear(&err);
        if (api_prepare(&api_podgroup, pg, NULL, &err) < 0) {
            ty_warn("PodGroup %s/%s: %s", ns, name, err.text);
            ty_error_clear(&err);
            json_decref(pg);
            json_decref(spec);
            return -1;
        }
        /* Pending until the scheduler says more (where the API keeps a
         * create's status; elsewhere no phase reads the same) */
        if (!json_object_get(pg, "status"))
            json_object_set_new(pg, "status", json_pack("{s:s}", "phase", "Pending"));
        o = kc_create(s, key, ns, pg, &err); /* pg taken */
        pg = NULL;
    }
    json_decref(pg);
    json_decref(spec);
    if (!o) {
        /* a PodGroup made meanwhile: the next pass reads it */
        open = err.code == TY_EEXISTS ? 0 : -1;
        ty_error_clear(&err);
        return open;
    }
    open = jobs_pg_admitted(ty_obj_json(o)) ? 1 : 0;
    ty_obj_unref(o);
    ty_error_clear(&err);
    return open;
}
