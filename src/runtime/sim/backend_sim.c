/* backend_sim.c - the simulated nodes as a runtime backend
 * (runtime/backend.h): their thread runs pods itself (sim.c), nothing is
 * executed, so there are no logs and no exec; the MPI agent is the
 * one-machine one (a simulated pod runs nothing to reach). */
#include <stdlib.h>
#include <string.h>

#include "runtime/agent_kit.h"
#include "runtime/backend.h"
#include "runtime/sim/sim_internal.h"

static void *sim_start(ty_kc *kc, const void *opts, ty_error *err)
{
    return rt_sim_start(kc, opts, err);
}

static void sim_stop(void *impl)
{
    rt_sim_stop(impl);
}

/* One read per node: for inspection, not for a loop. */
static json_t *sim_nodes(void *impl)
{
    rt_sim *rt = impl;
    json_t *out = json_array();
    char name[256];

    for (int i = 0; out && i < rt->count; i++) {
        json_t *one = ak_node_inventory(rt->s, rt_sim_node_name(rt, i, name, sizeof(name)));
        if (one)
            json_array_append_new(out, one);
    }
    return out;
}

static bool sim_owns_node(void *impl, const char *node)
{
    return sim_node_index(impl, node) >= 0;
}

const rt_backend_ops rt_sim_backend = {
    .name = "sim",
    .start = sim_start,
    .stop = sim_stop,
    .nodes = sim_nodes,
    .owns_node = sim_owns_node,
};
