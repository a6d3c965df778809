/* model_queue.c - the scheduler model's queues (model.c): one per Volcano
 * Queue object seen, and "default" from the start; a queue a job names
 * before its object arrives is kept undefined, so the job waits. */
#include <stdlib.h>
#include <string.h>

#include "scheduler/core_int.h"

static sc_queue *queue_new(sc_cluster *c, const char *name)
{
    sc_queue *q = calloc(1, sizeof(*q));
    if (!q || sc_grow_arr(&c->queues, &c->queues_cap, c->nqueues, sizeof(*c->queues)) < 0 ||
        !(q->name = strdup(name)) || strmap_put(&c->queue_map, q->name, q) < 0) {
        if (q)
            free(q->name);
        free(q);
        return NULL;
    }
    q->weight = 1;
    q->open = true;
    q->reclaimable = true;
    q->idx = c->nqueues;
    c->queues[c->nqueues++] = q;
    return q;
}

sc_queue *sc_queue_get_or_default(sc_cluster *c, const char *name)
{
    sc_queue *q;

    if (!name || !*name)
        name = "default";
    q = strmap_get(&c->queue_map, name);
    if (q)
        return q;
    q = queue_new(c, name);
    /* "default" exists from the start, as on Volcano; any other queue
     * is waited for until its object arrives. */
    if (q && strcmp(name, "default") == 0)
        q->defined = true;
    return q;
}

sc_queue *sc_queue_upsert(sc_cluster *c, const sc_queue_spec *spec)
{
    sc_queue *q = strmap_get(&c->queue_map, spec->name);

    if (!q && !(q = queue_new(c, spec->name)))
        return NULL;
    free(q->parent_name);
    q->parent_name = spec->parent && *spec->parent && strcmp(spec->parent, "root") != 0
                         ? strdup(spec->parent)
                         : NULL;
    q->weight = spec->weight > 0 ? spec->weight : 1;
    q->capability = spec->capability;
    q->cap_mask = spec->cap_mask;
    q->guarantee = spec->guarantee;
    q->reclaimable = spec->reclaimable;
    q->open = spec->open;
    q->defined = true;
    c->release_epoch++;
    c->epoch++;
    return q;
}

void sc_queue_remove(sc_cluster *c, const char *name)
{
    sc_queue *q = strmap_get(&c->queue_map, name);
    /* Jobs may still point at it: keep the record, mark it gone. */
    if (q && strcmp(name, "default") != 0)
        q->defined = false;
    c->epoch++;
}

bool sc_queue_defined(const sc_queue *q)
{
    return q->defined;
}

size_t sc_queue_count(const sc_cluster *c)
{
    return c->nqueues;
}

sc_queue *sc_queue_at(const sc_cluster *c, size_t i)
{
    return i < c->nqueues ? c->queues[i] : NULL;
}

sc_queue *sc_queue_find(const sc_cluster *c, const char *name)
{
    return strmap_get(&c->queue_map, name);
}

const char *sc_queue_name(const sc_queue *q)
{
    return q->name;
}

const sc_res *sc_queue_allocated(const sc_queue *q)
{
    return &q->allocated;
}

const sc_res *sc_queue_deserved(const sc_queue *q)
{
    return &q->deserved;
}

void sc_queue_view_of(const sc_queue *q, sc_queue_view *v)
{
    *v = (sc_queue_view){.weight = q->weight,
                         .capability = &q->capability,
                         .cap_mask = q->cap_mask,
                         .allocated = &q->allocated,
                         .request = &q->request,
                         .deserved = &q->deserved,
                         .inqueue = &q->inqueue,
                         .share = q->share};
}

bool sc_queue_open(const sc_queue *q)
{
    return q->open && q->defined;
}
