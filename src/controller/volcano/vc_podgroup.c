/* vc_podgroup.c - what a Volcano Job's PodGroup asks of the cluster: its
 * minResources, summed as Volcano's job controller sums them. */
#include <stdlib.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "controller/kit.h"
#include "controller/volcano/vc_int.h"

/* A PriorityClass's value (0 when there is none of that name). */
static long long class_value(ty_kc *s, const char *name)
{
    ty_obj *o;
    long long v;

    if (!name || !*name ||
        !(o = kc_get(s, api_store_key(&api_priorityclass), "", name, NULL)))
        return 0;
    v = json_integer_value(json_object_get(ty_obj_json(o), "value"));
    ty_obj_unref(o);
    return v;
}

/* minResources as Volcano's job controller computes it: the requests of the
 * first min_member pods, tasks taken by their template's priority, highest
 * first (in their order among equals); tasks created later (dependsOn) are
 * not part of the gang. The enqueue action holds a group Pending until its
 * minResources fit its queue: without them a Volcano Job in a full or
 * capped queue had its pods made, to wait unschedulable. */
json_t *vc_min_resources(ty_kc *s, const json_t *tasks, json_int_t min_member, bool staged)
{
    size_t n = json_array_size(tasks), *order = calloc(n + 1, sizeof(*order));
    long long *prio = calloc(n + 1, sizeof(*prio));
    json_t *sums = json_object(), *out;
    json_int_t left = min_member;

    if (!order || !prio) {
        free(order);
        free(prio);
        json_decref(sums);
        return json_object();
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *t = json_array_get(tasks, i);
        order[i] = i;
        prio[i] = class_value(s, json_string_value(json_object_get(
                                     json_object_get(json_object_get(t, "template"), "spec"),
                                     "priorityClassName")));
    }
    for (size_t i = 1; i < n; i++) /* stable: insertion */
        for (size_t k = i; k > 0 && prio[order[k]] > prio[order[k - 1]]; k--) {
            size_t tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    for (size_t i = 0; i < n && left > 0; i++) {
        const json_t *t = json_array_get(tasks, order[i]);
        json_int_t r = json_integer_value(json_object_get(t, "replicas"));
        json_int_t take = r < left ? r : left;
        if ((staged && json_object_get(t, "dependsOn")) || take <= 0)
            continue;
        kit_add_requests(sums, json_object_get(json_object_get(t, "template"), "spec"), take);
        left -= take;
    }
    out = kit_quantities(sums);
    json_decref(sums);
    free(order);
    free(prio);
    return out;
}
