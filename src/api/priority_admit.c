/* priority_admit.c - kube-apiserver's Priority admission for pods: a pod's
 * spec.priority (and preemptionPolicy) come from the PriorityClass it
 * names, or from the cluster's globalDefault class when it names none; a
 * class that does not exist, or a priority given that differs from the
 * class's, is Forbidden with kube-apiserver's words. The two system
 * classes are known without objects, with their fixed values. */
#include <stdio.h>
#include <string.h>

#include "api/admission.h"
#include "api/kinds.h"

#define SYSTEM_CLUSTER_CRITICAL 2000000000LL
#define SYSTEM_NODE_CRITICAL 2000001000LL

typedef struct default_class {
    const char *name; /* borrowed from the object the filter saw: copied */
    char name_buf[256];
    json_int_t value;
    const char *policy;
    char policy_buf[32];
    bool found;
} default_class;

/* count's filter: the globalDefault class (the first one, when an admin
 * made several, as kube-apiserver picks one of them). */
static bool is_default(const json_t *pc, void *arg)
{
    default_class *d = arg;
    const char *name = json_string_value(json_object_get(json_object_get(pc, "metadata"), "name"));
    const char *policy = json_string_value(json_object_get(pc, "preemptionPolicy"));

    if (!json_is_true(json_object_get(pc, "globalDefault")) || d->found || !name)
        return false;
    snprintf(d->name_buf, sizeof(d->name_buf), "%s", name);
    snprintf(d->policy_buf, sizeof(d->policy_buf), "%s", policy ? policy : "");
    d->value = json_integer_value(json_object_get(pc, "value"));
    d->found = true;
    return true;
}

int priority_admit_pod(const api_lookup *lk, json_t *pod, ty_error *err)
{
    json_t *spec = json_object_get(pod, "spec"), *given, *pc = NULL;
    const char *pod_name =
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    const char *cls = json_string_value(json_object_get(spec, "priorityClassName"));
    const char *policy = NULL;
    json_int_t value = 0;
    default_class d = {0};

    if (!json_is_object(spec) || !lk || !lk->get)
        return 0;
    if (!cls || !*cls) {
        if (lk->count && lk->count(lk->ctx, &api_priorityclass, is_default, &d) && d.found) {
            json_object_set_new(spec, "priorityClassName", json_string(d.name_buf));
            value = d.value;
            policy = d.policy_buf[0] ? d.policy_buf : NULL;
        }
    } else if (!strcmp(cls, "system-cluster-critical")) {
        value = SYSTEM_CLUSTER_CRITICAL;
    } else if (!strcmp(cls, "system-node-critical")) {
        value = SYSTEM_NODE_CRITICAL;
    } else if (!(pc = lk->get(lk->ctx, &api_priorityclass, "", cls))) {
        return ty_seterr(err, TY_EFORBIDDEN,
                         "pods \"%s\" is forbidden: no PriorityClass with name %s was found",
                         pod_name ? pod_name : "", cls);
    } else {
        value = json_integer_value(json_object_get(pc, "value"));
        policy = json_string_value(json_object_get(pc, "preemptionPolicy"));
    }
    given = json_object_get(spec, "priority");
    if (json_is_integer(given) && json_integer_value(given) != value) {
        json_decref(pc);
        return ty_seterr(err, TY_EFORBIDDEN,
                         "pods \"%s\" is forbidden: the integer value of priority (%lld) must "
                         "not be provided in pod spec; priority admission controller computed "
                         "%lld from the given PriorityClass name",
                         pod_name ? pod_name : "", (long long)json_integer_value(given),
                         (long long)value);
    }
    json_object_set_new(spec, "priority", json_integer(value));
    if (policy && *policy)
        json_object_set_new(spec, "preemptionPolicy", json_string(policy));
    else if (!json_object_get(spec, "preemptionPolicy"))
        json_object_set_new(spec, "preemptionPolicy", json_string("PreemptLowerPriority"));
    json_decref(pc);
    return 0;
}
