/* predicates.c - the node filters besides resources: unschedulable nodes,
 * nodeSelector, required node affinity, and taints the pod does not
 * tolerate (NoSchedule and NoExecute; PreferNoSchedule only scores). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

static const char *label(const sc_node *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static bool expr_ok(const sc_node *n, const sc_match_expr *e)
{
    const char *v = label(n, e->key);
    bool in = false;

    switch (e->op) {
    case SC_OP_EXISTS:
        return v != NULL;
    case SC_OP_NOT_EXISTS:
        return v == NULL;
    case SC_OP_IN:
    case SC_OP_NOT_IN:
        for (size_t i = 0; v && i < e->nvalues; i++)
            if (strcmp(v, e->values[i]) == 0)
                in = true;
        return e->op == SC_OP_IN ? in : !in;
    case SC_OP_GT:
    case SC_OP_LT:
        if (!v || e->nvalues != 1)
            return false;
        return e->op == SC_OP_GT ? atoll(v) > atoll(e->values[0]) : atoll(v) < atoll(e->values[0]);
    }
    return false;
}

static bool sc_tolerates(const sc_task *t, const sc_taint *taint)
{
    for (size_t i = 0; i < t->ntols; i++) {
        const sc_toleration *tol = &t->tols[i];
        if (!tol->any_effect && tol->effect != taint->effect)
            continue;
        if (!*tol->key) {
            if (tol->exists)
                return true;
            continue;
        }
        if (strcmp(tol->key, taint->key) != 0)
            continue;
        if (tol->exists || strcmp(tol->value, taint->value) == 0)
            return true;
    }
    return false;
}

static bool predicate(sc_session *s, const sc_task *t, const sc_node *n, char *why, size_t len)
{
    (void)s;
    if (n->unschedulable) {
        if (why)
            snprintf(why, len, "node(s) were unschedulable");
        return false;
    }
    for (size_t i = 0; i < t->nselector; i++) {
        const char *v = label(n, t->selector[i].key);
        if (!v || strcmp(v, t->selector[i].value) != 0) {
            if (why)
                snprintf(why, len, "node(s) didn't match Pod's node affinity/selector");
            return false;
        }
    }
    if (t->naff) {
        bool any = false;
        for (size_t i = 0; i < t->naff && !any; i++) {
            bool all = true;
            for (size_t k = 0; k < t->aff[i].nexprs && all; k++)
                all = expr_ok(n, &t->aff[i].exprs[k]);
            any = all;
        }
        if (!any) {
            if (why)
                snprintf(why, len, "node(s) didn't match Pod's node affinity/selector");
            return false;
        }
    }
    for (size_t i = 0; i < n->ntaints; i++) {
        const sc_taint *taint = &n->taints[i];
        if (taint->effect == SC_PREFER_NO_SCHEDULE || sc_tolerates(t, taint))
            continue;
        if (why && *taint->value)
            snprintf(why, len, "node(s) had untolerated taint {%s: %s}", taint->key, taint->value);
        else if (why)
            snprintf(why, len, "node(s) had untolerated taint {%s: }", taint->key);
        return false;
    }
    return true;
}

const sc_plugin sc_plugin_predicates = {.name = "predicates", .predicate = predicate};
