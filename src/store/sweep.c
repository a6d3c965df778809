/* sweep.c - the trees of current objects that nobody uses go back to text.
 *
 * A current object's tree is parsed again when somebody reads an object
 * whose tree was dropped (watch.c), and it then stayed until the object
 * changed. Controllers read the objects they reconcile, so over a long run
 * most objects got their tree back for good (about 25 KB per pod against
 * 2.6 KB of text) and memory grew with the number of objects ever looked at.
 *
 * The sweeper is a clock: every SWEEP_INTERVAL_MS the leader of a batch
 * walks the next stretch of the index (sized so that a whole pass takes
 * about SWEEP_PASS_MS). A tree handed out since the last pass (obj_json sets
 * `used`) gets another round; one that was not, held by nobody but the index
 * (and the history, outside its tree window), is dropped. The walk holds
 * index_rw for writing, which keeps out every reader of a tree that holds no
 * reference; the trees are freed after it is released.
 */
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "store/store_int.h"

#define SWEEP_INTERVAL_MS 100
#define SWEEP_PASS_MS 5000
#define SWEEP_MIN_NODES 256

static void look_at(ty_store *s, store_obj *o, json_t **trees, size_t *n)
{
    json_t *tree;

    if (!atomic_load_explicit(&o->tree, memory_order_relaxed))
        return;
    if (atomic_load_explicit(&o->used, memory_order_relaxed)) {
        atomic_store_explicit(&o->used, false, memory_order_relaxed);
        return;
    }
    if ((tree = hub_take_current_tree(s->hub, o)))
        trees[(*n)++] = tree;
}

static void remember(ty_store *s, const idx_node *n)
{
    free(s->sweep_ns);
    free(s->sweep_name);
    s->sweep_ns = n ? strdup(n->ns) : NULL;
    s->sweep_name = n && s->sweep_ns ? strdup(n->name) : NULL;
    if (!s->sweep_name) {
        free(s->sweep_ns);
        s->sweep_ns = NULL; /* out of memory: this resource starts over */
    }
}

void sweep_step(ty_store *s)
{
    int64_t now = ty_now_ms();
    size_t total = 0, budget, visited = 0, ntrees = 0;
    json_t **trees;

    if (now - s->sweep_last_ms < SWEEP_INTERVAL_MS)
        return;
    s->sweep_last_ms = now;
    for (size_t i = 0; i < s->ix.n; i++)
        total += res_count(s->ix.res[i]);
    budget = total * SWEEP_INTERVAL_MS / SWEEP_PASS_MS;
    budget = budget < SWEEP_MIN_NODES ? SWEEP_MIN_NODES : budget;
    budget = budget > total ? total : budget;
    if (!budget || !(trees = malloc(budget * sizeof(*trees))))
        return;
    pthread_rwlock_wrlock(&s->index_rw);
    for (size_t turns = 0; visited < budget && turns <= 2 * s->ix.n; turns++) {
        res_iter it;
        idx_node *node = NULL, *last = NULL;

        if (s->sweep_res >= s->ix.n) {
            s->sweep_res = 0;
            remember(s, NULL);
        }
        res_iter_seek(&it, s->ix.res[s->sweep_res], s->sweep_ns, s->sweep_name, false);
        while (visited < budget && (node = res_iter_next(&it))) {
            look_at(s, node->obj, trees, &ntrees);
            last = node;
            visited++;
        }
        if (node) {
            remember(s, last);
        } else {
            s->sweep_res++;
            remember(s, NULL);
        }
    }
    pthread_rwlock_unlock(&s->index_rw);
    for (size_t i = 0; i < ntrees; i++)
        json_decref(trees[i]);
    free(trees);
}
