/* sweep.c - the trees of current objects that nobody uses go back to text.
 *
 * A current object's tree is parsed again when somebody reads an object
 * whose tree was dropped (watch.c), and without the sweeper it would stay
 * until the object changed. Controllers read the objects they reconcile,
 * so over a long run most objects would get their tree back for good (about
 * 25 KB per pod against 2.6 KB of text) and memory would grow with the
 * number of objects ever looked at.
 *
 * The sweeper is a clock: every SWEEP_INTERVAL_MS the leader of a batch
 * walks the next stretch of the index (sized so that a whole pass takes
 * about SWEEP_PASS_MS). A tree handed out since the last pass (obj_json sets
 * `used`) gets another round; one that was not, held by nobody but the index
 * (and the history, outside its tree window), is dropped. It is taken
 * with index_rw held for writing, which keeps out every reader of a tree
 * that holds no reference (the walk itself needs only write_mu); what it
 * takes is handed to the reaper thread to free.
 *
 * Text goes cold the same way. Stored text was most of the server's memory
 * at scale (~1 GB at 150,000 pods with their Services and Events), and
 * objects of one resource are nearly alike, so each resource gets a zstd
 * dictionary made of a few of its objects. A version written once its
 * resource has one is compressed as it is staged (commit.c: its row is the
 * compressed text); an object unused for IDLE_COMPRESS passes that has no
 * compressed copy yet is compressed by the reaper thread (a pod: 2.6 KB to
 * ~135 bytes, ~1.5 µs). An unused pass that finds the copy and its plain text
 * goes, under the same rule as a tree. Its next reader decompresses it
 * (~0.7 µs) and the plain text stays until it goes cold again.
 *
 * A view (store_obj_view: the few fields a controller reads of an object,
 * kept as compact text) goes with the plain text, whether or not that
 * compressed: made once per version, it lets a job engine that comes back
 * to a pod after its tree went parse a few hundred bytes instead of the pod.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "base/thread.h"
#include "store/store_int.h"

#define SWEEP_INTERVAL_MS 100
#define SWEEP_PASS_MS 2000
#define SWEEP_MIN_NODES 256

/* Passes an object stays unused before its text is compressed, and before
 * its plain text goes (its tree goes after one; the plain text at the first
 * pass that finds the compressed copy made). An object is compressed after
 * one whole pass unused (2-4 s), so one about to change again (a pod being
 * bound and started, ms apart) is not. More passes would hold the plain
 * texts of more seconds of writes, and peak memory would grow with
 * throughput; one pass costs a little more CPU (docs/benchmarks.md). */
#define IDLE_COMPRESS 1
#define IDLE_DROP_TEXT 1

/* A resource's dictionary: ZDICT_SAMPLES of its objects spread over the
 * index (so mostly of its commonest shape) for its content, and
 * ZDICT_STATS_PER more after each for its statistics (zdict_samples), each
 * cut to ZDICT_SAMPLE_MAX; made once it has ZDICT_MIN_OBJECTS, and made
 * again from fresh samples each time it has grown ZDICT_REGROW times (the
 * first objects of a resource can be odd ones out: a node's Events before
 * any pod's). */
#define ZDICT_SAMPLES 4
#define ZDICT_STATS_PER 4
#define ZDICT_PICKS (ZDICT_SAMPLES * (1 + ZDICT_STATS_PER))
#define ZDICT_SAMPLE_MAX 16384
#define ZDICT_MIN_OBJECTS 16
#define ZDICT_REGROW 4

/* Adds o, the pos-th object of r this round, to the samples of r's next
 * dictionary when one is due and o falls on a sampling stride. */
static void sample(ty_store *s, store_res *r, const store_obj *o, size_t pos)
{
    size_t count = res_count(r), stride = count / ZDICT_PICKS;
    const char *text = atomic_load_explicit(&((store_obj *)o)->text, memory_order_acquire);
    zdict_samples *sm = &r->zsamples;
    size_t picked = sm->ncontent + sm->nstats;
    store_zdict *d;

    if (count < ZDICT_MIN_OBJECTS || (r->zdict && count < r->zdict->objects * ZDICT_REGROW) ||
        !text || pos % (stride ? stride : 1) != 0)
        return;
    if (zsamples_add(sm, picked % (1 + ZDICT_STATS_PER) == 0, text,
                     o->len < ZDICT_SAMPLE_MAX ? o->len : ZDICT_SAMPLE_MAX))
        return;
    if (picked + 1 < ZDICT_PICKS)
        return;
    if ((d = zdict_make(sm, s->zdict_seq + 1, count)) && res_set_zdict(s, r, d) == 0)
        s->zdict_seq++;
    zsamples_clear(sm);
}

/* hub_take_current with index_rw held for writing, taken on the first
 * call for an object (*locked says so; the walk lets go after the object). */
static void *take(ty_store *s, store_obj *o, hub_part part, bool *locked)
{
    if (!*locked) {
        ty_rwlock_wrlock(&s->index_rw);
        *locked = true;
    }
    return hub_take_current(s->hub, o, part);
}

static void look_at(ty_store *s, store_res *r, store_obj *o, json_t **trees, size_t *n,
                    void **frees, size_t *nfrees, bool *locked)
{
    const unsigned compress = IDLE_COMPRESS, drop = IDLE_DROP_TEXT;
    obj_view *view;
    obj_z *z;
    json_t *tree;
    char *text;

    if (atomic_load_explicit(&o->used, memory_order_relaxed)) {
        atomic_store_explicit(&o->used, false, memory_order_relaxed);
        o->idle = 0;
        return;
    }
    if (o->idle < IDLE_DROP_TEXT)
        o->idle++;
    if (obj_has_any_tree(o) &&
        (tree = take(s, o, HUB_TREE, locked)))
        trees[(*n)++] = tree;
    z = atomic_load_explicit(&o->z, memory_order_acquire);
    if (!z && r->zdict && o->idle >= compress)
        hub_compress(s->hub, store_obj_ref(o), zdict_ref(r->zdict));
    else if (z && z != &obj_z_none && o->idle >= drop &&
             atomic_load_explicit(&o->text, memory_order_relaxed) &&
             (text = take(s, o, HUB_TEXT, locked)))
        frees[(*nfrees)++] = text;
    /* A view goes with the plain text (whether or not the text compressed). */
    if (o->idle >= drop && atomic_load_explicit(&o->view, memory_order_relaxed) &&
        (view = take(s, o, HUB_VIEW, locked)))
        frees[(*nfrees)++] = view;
}

/* ---- when nothing is written ----
 * A step runs after a batch; a store whose writes stop (a burst of jobs,
 * then quiet) would keep the trees and plain texts of its last seconds for
 * good. This thread runs a step every SWEEP_INTERVAL_MS, taking write_mu
 * only when it is free: a leader holds it while it commits and runs the
 * step itself. It stops once everything had the passes it needs to go cold
 * after the last batch (walking a big index costs a few percent of a core),
 * and starts again with the next. */
/* (one pass to see the last use, IDLE_DROP_TEXT to go idle, one to drop
 * the plain text once the compressed copy is made) */
#define IDLE_SWEEP_MS ((IDLE_DROP_TEXT + 2) * SWEEP_PASS_MS)

static void *idle_main(void *arg)
{
    ty_store *s = arg;
    struct timespec ts;
    uint64_t seen = 0;
    int64_t quiet_since = ty_now_ms();

    pthread_mutex_lock(&s->sweep_mu);
    while (!s->sweep_stopping) {
        ts = ty_deadline_ms(CLOCK_MONOTONIC, SWEEP_INTERVAL_MS);
        pthread_cond_timedwait(&s->sweep_cv, &s->sweep_mu, &ts);
        if (s->sweep_stopping)
            break;
        pthread_mutex_unlock(&s->sweep_mu);
        if (pthread_mutex_trylock(&s->write_mu) == 0) {
            if (s->batches != seen) {
                seen = s->batches;
                quiet_since = ty_now_ms();
            }
            if (ty_now_ms() - quiet_since < IDLE_SWEEP_MS)
                sweep_step(s);
            pthread_mutex_unlock(&s->write_mu);
        }
        pthread_mutex_lock(&s->sweep_mu);
    }
    pthread_mutex_unlock(&s->sweep_mu);
    return NULL;
}

int sweep_start(ty_store *s, ty_error *err)
{
    pthread_condattr_t ca;

    pthread_mutex_init(&s->sweep_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->sweep_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&s->sweep_thread, NULL, idle_main, s) != 0)
        return ty_seterr(err, TY_EINTERNAL, "store: cannot start the sweeper thread");
    ty_thread_setup(s->sweep_thread, "ty-sweep", TY_THREAD_BACKGROUND);
    s->sweep_running = true;
    return 0;
}

void sweep_stop(ty_store *s)
{
    if (!s->sweep_running)
        return;
    pthread_mutex_lock(&s->sweep_mu);
    s->sweep_stopping = true;
    pthread_cond_signal(&s->sweep_cv);
    pthread_mutex_unlock(&s->sweep_mu);
    pthread_join(s->sweep_thread, NULL);
    s->sweep_running = false;
    pthread_cond_destroy(&s->sweep_cv);
    pthread_mutex_destroy(&s->sweep_mu);
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
    size_t total = 0, budget, visited = 0, ntrees = 0, nfrees = 0;
    json_t **trees;
    void **frees;

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
    /* Each object may give up its plain text and its view. */
    if (!(frees = malloc(2 * budget * sizeof(*frees)))) {
        free(trees);
        return;
    }
    /* The walk itself needs no lock: only the holder of write_mu (this
     * thread) changes the index. index_rw is held for writing only while a
     * part is taken off an object (hub_take_current), which keeps out the
     * readers that borrow a tree or a text without a reference. Held for
     * the whole step, mostly over cold objects with nothing to take, it
     * would keep every reader waiting for milliseconds at every step. */
    for (size_t turns = 0; visited < budget && turns <= 2 * s->ix.n; turns++) {
        res_iter it;
        idx_node *node = NULL, *last = NULL;
        store_res *r;

        if (s->sweep_res >= s->ix.n) {
            s->sweep_res = 0;
            s->sweep_pos = 0;
            remember(s, NULL);
        }
        r = s->ix.res[s->sweep_res];
        res_iter_seek(&it, r, s->sweep_ns, s->sweep_name, false);
        while (visited < budget && (node = res_iter_next(&it))) {
            bool locked = false;

            sample(s, r, node->obj, s->sweep_pos++);
            look_at(s, r, node->obj, trees, &ntrees, frees, &nfrees, &locked);
            if (locked)
                ty_rwlock_wrunlock(&s->index_rw);
            last = node;
            visited++;
        }
        if (node) {
            remember(s, last);
        } else {
            s->sweep_res++;
            s->sweep_pos = 0;
            remember(s, NULL);
        }
    }
    /* Freed by the reaper: this runs in the commit section (a tree is many
     * small blocks, and walking it to free them is mostly cache misses). */
    hub_trash(s->hub, trees, ntrees, frees, nfrees);
    free(trees);
    free(frees);
}
