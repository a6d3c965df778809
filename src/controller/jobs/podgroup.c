/* podgroup.c - the PodGroup of a Kubeflow job (see jobs_int.h): made and
 * kept in line with the job's schedulingPolicy through the controller
 * kit's PodGroup gate (kit_pg_gate, the Volcano Job controller's too). */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "controller/jobs/jobs_int.h"

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
        kit_add_requests(sums, json_object_get(tmpl, "spec"), n);
        left -= n;
    }
    out = kit_quantities(sums);
    json_decref(sums);
    return out;
}

/* The PodGroup a Kubeflow job wants, through the one gate (kit_pg_gate). */
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
                   c->name, "namespace", c->ns, "ownerReferences", kit_owner_ref(job), "spec",
                   spec);
    return kit_pg_gate(s, c->ns, pg);
}
