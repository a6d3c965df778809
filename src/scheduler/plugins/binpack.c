/* binpack.c - fill nodes before starting new ones: the score is the
 * weighted fraction of each resource in use after the placement. Arguments
 * as Volcano's: binpack.weight, binpack.cpu, binpack.memory, and
 * binpack.resources.nvidia.com/gpu (default 1 each). */
#include "scheduler/core_int.h"

double sc_node_fraction_after(const sc_node *n, const sc_task *t, int r);

static double node_score(sc_session *s, const sc_plugin_conf *pc, const sc_task *t,
                         const sc_node *n)
{
    double w[3] = {sc_arg_double(pc, "binpack.cpu", 1), sc_arg_double(pc, "binpack.memory", 1),
                   sc_arg_double(pc, "binpack.resources.nvidia.com/gpu", 1)};
    static const int dims[] = {SC_CPU, SC_MEM, SC_GPU};
    double sum = 0, wsum = 0;

    (void)s;
    for (int i = 0; i < 3; i++) {
        double f = sc_node_fraction_after(n, t, dims[i]);
        if (f < 0 || t->req.v[dims[i]] == 0)
            continue;
        sum += w[i] * (f > 1 ? 1 : f);
        wsum += w[i];
    }
    return wsum > 0 ? 100 * sum / wsum * sc_arg_double(pc, "binpack.weight", 1) : 0;
}

static const sc_number_arg number_args[] = {
    {"binpack.weight", 0},
    {"binpack.cpu", 0},
    {"binpack.memory", 0},
    {"binpack.resources.nvidia.com/gpu", 0},
    {NULL, 0},
};

const sc_plugin sc_plugin_binpack = {
    .name = "binpack", .number_args = number_args, .node_score = node_score};
