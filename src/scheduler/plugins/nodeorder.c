/* nodeorder.c - spread: prefer the node with the most room left after the
 * placement (kube-scheduler's least-allocated score over cpu, memory and
 * GPUs), times the argument leastrequested.weight (default 1). */
#include "scheduler/core_int.h"

double sc_node_fraction_after(const sc_node *n, const sc_task *t, int r)
{
    if (n->alloc.v[r] <= 0)
        return -1;
    return (double)(n->used.v[r] + n->pipelined.v[r] + t->req.v[r]) / (double)n->alloc.v[r];
}

static double node_score(sc_session *s, const sc_plugin_conf *pc, const sc_task *t,
                         const sc_node *n)
{
    static const int dims[] = {SC_CPU, SC_MEM, SC_GPU};
    double sum = 0;
    int k = 0;

    (void)s;
    for (int i = 0; i < 3; i++) {
        double f = sc_node_fraction_after(n, t, dims[i]);
        if (f < 0)
            continue;
        sum += 1 - (f > 1 ? 1 : f);
        k++;
    }
    return k ? 100 * sum / k * sc_arg_double(pc, "leastrequested.weight", 1) : 0;
}

static const sc_number_arg number_args[] = {{"leastrequested.weight", 0}, {NULL, 0}};

const sc_plugin sc_plugin_nodeorder = {
    .name = "nodeorder", .number_args = number_args, .node_score = node_score};
