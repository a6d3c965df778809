/* gpulocality.c - keep a gang on as few nodes as possible: a node already
 * holding members of the same job scores highest, then a node whose free
 * GPUs hold the rest of the gang. Argument gpulocality.weight (default 1). */
#include "scheduler/core_int.h"

static double node_score(sc_session *s, const sc_plugin_conf *pc, const sc_task *t,
                         const sc_node *n)
{
    const sc_job *j = t->job;
    int64_t rest = 0;
    double sc = 0;

    (void)s;
    if (t->req.v[SC_GPU] == 0)
        return 0;
    for (size_t i = 0; i < j->ntasks; i++) {
        const sc_task *o = j->tasks[i];
        if (o != t && (o->node == n || o->nominated == n) && sc_status_holds(o->st))
            sc = 100;
        if (o->st == SC_TASK_PENDING)
            rest += o->req.v[SC_GPU];
    }
    if (sc == 0 && sc_node_free_gpus(n) * 1000 >= rest)
        sc = 50;
    return sc * sc_arg_double(pc, "gpulocality.weight", 1);
}

static const sc_number_arg number_args[] = {{"gpulocality.weight", 0}, {NULL, 0}};

const sc_plugin sc_plugin_gpulocality = {
    .name = "gpulocality", .number_args = number_args, .node_score = node_score};
