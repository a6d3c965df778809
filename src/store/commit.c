/* commit.c - group commit: concurrent writers share SQLite transactions.
 *
 * Were each write one transaction of its own, run under the writer lock
 * while every other writer queued on that lock, the HTTP threads, the job
 * controllers, the scheduler and the node runtimes would each pay a
 * BEGIN/COMMIT (and the WAL frames of the pages it dirtied) per object, one
 * after another. So each write is a request in a queue. The writer that
 * finds nobody committing becomes the leader and takes everything queued as
 * a batch:
 *
 *   1. run each request's operation in queue order (store_exec, under
 *      write_mu) against the index as the batch has changed it so far
 *      (commit_current): a write that succeeds is staged with the next
 *      resourceVersion; one that fails (conflict, not found, invalid, too
 *      large) fails alone and uses no resourceVersion;
 *   2. write every staged version in one SQLite transaction;
 *   3. take index_rw once, swap the versions into the index and publish
 *      their events in resourceVersion order, and wake the watchers once;
 *   4. hand each caller its own outcome, and the lead to the first writer
 *      still queued (requests that arrived meanwhile form the next batch).
 *
 * Nothing a caller or a watcher sees is ahead of the disk: results and
 * events are given out only after the transaction commits, and a caller that
 * finds its answer in a version staged earlier in the same batch (an
 * unchanged mutate, a name taken) gets it only then too. When the
 * transaction itself fails, every write of the batch fails with its error,
 * and so does every answer taken from a version that was not written.
 *
 * Callers' mutate functions run in the leader's thread; they already ran
 * under the writer lock and may not call into the store. A status mutate's
 * function may also have run before, in the caller's thread (mutate.c,
 * store_prepare): the leader then only checks and stamps its result.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/jsonout.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "store/store_int.h"

/* Each operation looks back over the batch for the key it touches, so a
 * batch is bounded; the rest waits for the next one. */
#define MAX_BATCH 256
/* How long a caller whose group is made as far ahead as it may be waits
 * before it looks again (submit). */
#define PREP_RETRY_MS 1

/* ---- the batch's view of current objects ---- */

store_obj *commit_current(ty_store *s, const store_res *r, const char *ns, const char *name)
{
    const write_req *hit = NULL;
    uint32_t h = index_key_hash(ns, name);
    idx_node *n;

    /* (the hashes first: a batch of a job's pods is names alike but for
     * their last characters, each compared with every one before it) */
    for (const write_req *q = s->batch; q && q != s->batch_at; q = q->next)
        if (q->staged && q->staged_key == h && q->r == r && !strcmp(q->staged->name, name) &&
            !strcmp(q->staged->ns, ns))
            hit = q;
    if (hit)
        return hit->type == STORE_DELETED ? NULL : hit->staged;
    n = res_lookup_hashed(r, ns, name, h);
    return n ? n->obj : NULL;
}

/* The owner set o is to join, pinned until the write is applied (another
 * write of the batch may empty it meanwhile); NULL when it has no controller.
 * Only the leader changes sets and pins, so finding one needs no read lock,
 * and adding one only when the table must grow (it took the index lock for
 * every new job's first pod, Service and PodGroup, each time waiting for
 * the readers). */
static int owner_pin(ty_store *s, store_res *r, const store_obj *o, owner_set **out)
{
    /* (a light version's metadata is whole) */
    const char *uid = obj_controller_uid(store_obj_json_light(o, NULL));
    owner_set *set;

    *out = NULL;
    if (!uid)
        return 0;
    if ((set = res_owner_find(r, uid))) {
        set->pins++;
        *out = set;
        return 0;
    }
    /* Readers may walk the table while a set is added (res_owner_reserve
     * publishes it whole), not while it grows. */
    if (res_owner_table_full(r)) {
        ty_rwlock_wrlock(&s->index_rw);
        set = res_owner_reserve(r, uid);
        ty_rwlock_wrunlock(&s->index_rw);
    } else {
        set = res_owner_reserve(r, uid);
    }
    *out = set;
    return set ? 0 : -1;
}

static void owner_unpin(ty_store *s, store_res *r, owner_set *set)
{
    if (!set)
        return;
    ty_rwlock_wrlock(&s->index_rw);
    res_owner_unreserve(r, set);
    ty_rwlock_wrunlock(&s->index_rw);
}

/* obj's compact text into the leader's scratch buffer (reused from write
 * to write: a fresh buffer grown by doubling for every object made glibc
 * consolidate its fast bins over and over); its length, or 0 when it cannot
 * (obj_new then serialises on its own and reports why). ty_json_append
 * writes jansson's compact text several times faster than jansson. */
static size_t dump(ty_store *s, const json_t *obj)
{
    s->dump.len = 0;
    if (ty_json_append(&s->dump, obj) < 0 || s->dump.len > STORE_MAX_OBJECT_BYTES)
        return 0;
    return s->dump.len;
}

/* The text store_prepare made of obj, with rvs for its placeholder: the
 * bytes dump would give now that the tree holds rvs in the same place. */
static size_t splice_rv(ty_store *s, write_req *req, const char *rvs)
{
    size_t at = req->prep_rv_at;

    s->dump.len = 0;
    if (ty_buf_append(&s->dump, req->prep_text, at) < 0 ||
        ty_buf_printf(&s->dump, "\"%s\"", rvs) < 0 ||
        ty_buf_append(&s->dump, req->prep_text + at + 2, req->prep_len - at - 2) < 0 ||
        s->dump.len > STORE_MAX_OBJECT_BYTES)
        return 0;
    return s->dump.len;
}

/* o's row compressed: the copy its writer made ahead of the section
 * (req->prep_z, of the text with an empty resourceVersion, taken when
 * made is true: o's text is that one with the rv in), else made now, with
 * its resource's dictionary, while the text is in the cache. The same copy
 * serves when o goes cold, so the reaper never compresses it, and the row
 * is a tenth of the bytes SQLite, the WAL and the checkpoints write
 * (docs/internals/store.md). A version that removes its object writes no
 * row and is not kept. */
static void compress_row(write_req *req, store_res *r, store_obj *o,
                         store_event_type type, bool made)
{
    if (type == STORE_DELETED)
        return;
    if (made && req->prep_z) {
        obj_set_z(o, req->prep_z);
        req->prep_z = NULL;
    } else if (r->zdict) {
        obj_compress(o, r->zdict);
    }
}

int commit_stage(ty_store *s, write_req *req, store_res *r, json_t *obj, store_event_type type)
{
    uint64_t rv = s->staged_rv + 1;
    char rvs[24];
    store_obj *o;
    size_t len;

    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(rvs));
    len = req->prep_text ? splice_rv(s, req, rvs) : dump(s, obj);
    if (req->prep_light && !len) { /* its text is the prepared one, or the write fails */
        json_decref(obj);
        if (s->dump.len > STORE_MAX_OBJECT_BYTES)
            return ty_seterr(req->err, TY_ETOOLARGE, "Request entity too large: limit is %u",
                             STORE_MAX_OBJECT_BYTES);
        return ty_seterr(req->err, TY_EINTERNAL, "out of memory");
    }
    if (req->prep_light)
        o = obj_new_light(obj, rv, s->dump.data, len, req->err);
    else
        o = obj_new(obj, rv, len ? s->dump.data : NULL, len, req->err);
    if (!o)
        return -1;
    compress_row(req, r, o, type, req->prep_text && len);
    req->node = NULL;
    req->owner = NULL;
    if (type == STORE_ADDED && !(req->node = res_node_new()))
        goto oom;
    if (type != STORE_DELETED && owner_pin(s, r, o, &req->owner) < 0)
        goto oom;
    s->staged_rv = rv;
    req->r = r;
    req->staged = o;
    req->staged_key = index_key_hash(o->ns, o->name);
    req->type = type;
    return 0;
oom:
    free(req->node);
    req->node = NULL;
    store_obj_unref(o);
    return ty_seterr(req->err, TY_EINTERNAL, "out of memory");
}

int commit_stage_dump(ty_store *s, write_req *req, store_res *r, store_event_type type)
{
    uint64_t rv = s->staged_rv + 1;
    store_obj *o;

    if (s->dump.len > STORE_MAX_OBJECT_BYTES)
        return ty_seterr(req->err, TY_ETOOLARGE, "Request entity too large: limit is %u",
                         STORE_MAX_OBJECT_BYTES);
    if (!(o = obj_new_text(rv, req->ns, req->name, s->dump.data, s->dump.len, req->err)))
        return -1;
    compress_row(req, r, o, type, req->text != NULL);
    req->node = NULL;
    if (type == STORE_ADDED && !(req->node = res_node_new())) {
        store_obj_unref(o);
        return ty_seterr(req->err, TY_EINTERNAL, "out of memory");
    }
    req->owner = NULL;
    s->staged_rv = rv;
    req->r = r;
    req->staged = o;
    req->staged_key = index_key_hash(o->ns, o->name);
    req->type = type;
    return 0;
}

int commit_stage_text(ty_store *s, write_req *req, store_res *r)
{
    s->dump.len = 0;
    if (ty_buf_append(&s->dump, req->text, req->rv_at) < 0 ||
        ty_buf_printf(&s->dump, ",\"resourceVersion\":\"%llu\"",
                      (unsigned long long)s->staged_rv + 1) < 0 ||
        ty_buf_append(&s->dump, req->text + req->rv_at, req->text_len - req->rv_at) < 0)
        return ty_seterr(req->err, TY_EINTERNAL, "out of memory");
    /* a text record has no controller (store_op_record_text) */
    return commit_stage_dump(s, req, r, STORE_ADDED);
}

/* ---- one batch ---- */

static void unstage(ty_store *s, write_req *req)
{
    owner_unpin(s, req->r, req->owner);
    free(req->node);
    store_obj_unref(req->staged);
    req->owner = NULL;
    req->node = NULL;
    req->staged = NULL;
}

/* The row the version q stages replaces (that of the object's version
 * before it in the batch, written just before, else in the index); 0 when q
 * makes a new object. */
static int64_t replaced_row(const write_req *q)
{
    return q->type != STORE_ADDED && q->replaces ? q->replaces->row : 0;
}

/* Writes the row of d, which a row of this transaction names, unless it is
 * committed already or this transaction wrote it (fresh[0..*n), marked
 * saved once the transaction commits; past FRESH_MAX a row may be written
 * twice, which changes nothing). */
#define FRESH_MAX 8
static int save_dict(ty_store *s, store_res *r, store_zdict *d, store_zdict **fresh, size_t *n,
                     ty_error *err)
{
    if (d->saved)
        return 0;
    for (size_t i = 0; i < *n; i++)
        if (fresh[i] == d)
            return 0;
    if (db_put_dict(&s->db, d->id, r->name, d->objects, d->content, d->len, err) < 0)
        return -1;
    if (*n < FRESH_MAX)
        fresh[(*n)++] = d;
    return 0;
}

static int write_rows(ty_store *s, write_req *batch, ty_error *err)
{
    store_zdict *fresh[FRESH_MAX];
    size_t nfresh = 0;

    if (db_begin(&s->db, err) < 0)
        return -1;
    for (write_req *q = batch; q; q = q->next) {
        store_obj *o = q->staged;
        obj_z *z;
        int rc;

        if (!o)
            continue;
        z = atomic_load_explicit(&o->z, memory_order_relaxed);
        if (q->type == STORE_DELETED)
            rc = db_delete(&s->db, replaced_row(q), o->rv, err);
        else if (z && z != &obj_z_none)
            rc = save_dict(s, q->r, z->dict, fresh, &nfresh, err) < 0
                     ? -1
                     : db_put(&s->db, q->r->name, o->ns, o->name, o->rv, z->data, z->len,
                              z->dict->id, z->rv_at, replaced_row(q), &o->row, err);
        else
            rc = db_put(&s->db, q->r->name, o->ns, o->name, o->rv, o->text, o->len, 0, 0,
                        replaced_row(q), &o->row, err);
        if (rc < 0) {
            db_rollback(&s->db);
            return -1;
        }
    }
    if (db_commit(&s->db, err) < 0)
        return -1;
    for (size_t i = 0; i < nfresh; i++)
        fresh[i]->saved = true;
    return 0;
}

/* The batch did not reach the disk: its writes fail, and so do answers read
 * from versions it staged (they are newer than the last commit). */
static void fail_batch(ty_store *s, write_req *batch, const ty_error *why)
{
    for (write_req *q = batch; q; q = q->next) {
        if (q->staged) {
            unstage(s, q);
        } else if (!q->result || q->result->rv <= s->rv) {
            continue;
        } else {
            store_obj_unref(q->result);
            q->result = NULL;
        }
        q->deleted = false;
        ty_seterr(q->err, why->code, "%s", why->text);
    }
}

/* Swaps the batch's versions into the index, then publishes them in order.
 *
 * index_rw is held for the swaps alone. Were publishing (the hub's lock,
 * which watchers take too, for every event) done under it as well, every
 * reader that came meanwhile would sleep on the lock; glibc counts a reader
 * woken at a writer's unlock as holding the lock before it runs, so the
 * leader's next batch would wait for each of them to be scheduled, which on
 * 2 CPUs is a long wait (docs/benchmarks.md). A reader may meanwhile see
 * a resourceVersion whose event is not in the history yet: a watch from it
 * starts after it all the same (store_watch_open). Events are published only
 * after the index has their versions, so that a watcher reading the store
 * about an event finds at least that version. */
static void apply_batch(ty_store *s, write_req *batch)
{
    size_t n = 0;

    ty_rwlock_wrlock(&s->index_rw);
    /* Trimming must keep readers out (store_int.h): the events the last
     * batch published are trimmed in this one's hold. */
    hub_trim_current(s->hub);
    for (write_req *q = batch; q; q = q->next) {
        store_obj *o = q->staged;
        idx_node *cur;

        q->old = NULL;
        if (!o)
            continue;
        if (q->type == STORE_DELETED) {
            q->old = res_remove(q->r, o->ns, o->name);
        } else if (q->node) {
            res_insert(q->r, q->node, o);
            res_owner_link(q->r, q->node, q->owner);
        } else {
            cur = res_lookup(q->r, o->ns, o->name);
            q->old = cur->obj;
            q->old->current = false;
            cur->obj = store_obj_ref(o);
            o->current = true;
            cur->ns = o->ns; /* the node's key is its object's */
            cur->name = o->name;
            res_owner_link(q->r, cur, q->owner);
        }
        if (q->owner)
            res_owner_unreserve(q->r, q->owner);
        s->rv = o->rv;
    }
    ty_rwlock_wrunlock(&s->index_rw);
    for (write_req *q = batch; q; q = q->next) {
        store_obj *o = q->staged;

        if (!o)
            continue;
        hub_publish(s->hub, q->type, q->r->name, store_obj_ref(o));
        if (q->old)
            hub_release_superseded(s->hub, q->old);
        q->result = o; /* the staged reference goes to the caller */
        q->staged = NULL;
        q->node = NULL;
        q->owner = NULL;
        q->old = NULL;
        n++;
    }
    hub_wake(s->hub);
    s->batches++;
    s->batched_writes += n;
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void run_batch(ty_store *s, write_req *batch)
{
    bool writes = false;
    ty_error dberr;
    uint64_t t0, cpu0;

    pthread_mutex_lock(&s->write_mu);
    t0 = clock_ns(CLOCK_MONOTONIC);
    cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    s->batch = batch;
    s->staged_rv = s->rv;
    for (write_req *q = batch; q; q = q->next) {
        s->batch_at = q;
        store_prep_settle(s, q);
        store_exec(s, q);
        store_prep_release(q);
        writes |= q->staged != NULL;
    }
    s->batch_at = NULL;
    if (writes) {
        ty_error_init(&dberr);
        if (write_rows(s, batch, &dberr) < 0)
            fail_batch(s, batch, &dberr);
        else
            apply_batch(s, batch);
        ty_error_clear(&dberr);
    }
    sweep_step(s);
    s->batch = NULL;
    s->held_ns += clock_ns(CLOCK_MONOTONIC) - t0;
    s->held_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    pthread_mutex_unlock(&s->write_mu);
}

/* ---- the queue and the lead ---- */

static void release_async(write_req *req)
{
    if (req->result == NULL && req->err && req->err->code != TY_OK)
        ty_debug("store: %s %s/%s not written: %s", req->resource, req->ns,
                 req->name ? req->name : "", req->err->text);
    store_obj_unref(req->result);
    json_decref(req->obj);
    free(req->text);
    if (req->err)
        ty_error_clear(req->err);
    pthread_cond_destroy(&req->cv);
    free(req);
}

/* Called with queue_mu held by the leader; returns with it held. Runs
 * batches until mine is done; then hands the lead to the first queued
 * request somebody waits on, or runs what is left when nobody does. */
static void lead(ty_store *s, write_req *mine)
{
    bool mine_done = false;

    for (;;) {
        write_req *batch = s->queue_head, *tail = batch, *next, *heir;
        size_t n = 1;

        if (!batch)
            break;
        if (mine_done) {
            for (heir = batch; heir && (heir->async || heir->follower); heir = heir->next)
                ;
            if (heir) {
                heir->lead = true;
                pthread_cond_signal(&heir->cv);
                return; /* leading stays true: the heir has it */
            }
        }
        while (tail->next && n < MAX_BATCH) {
            tail = tail->next;
            n++;
        }
        s->queue_head = tail->next;
        if (!s->queue_head)
            s->queue_tail = NULL;
        tail->next = NULL;
        pthread_mutex_unlock(&s->queue_mu);
        run_batch(s, batch);
        pthread_mutex_lock(&s->queue_mu);
        for (write_req *q = batch; q; q = next) {
            next = q->next;
            if (q == mine)
                mine_done = true;
            if (q->async) {
                pthread_mutex_unlock(&s->queue_mu);
                release_async(q);
                pthread_mutex_lock(&s->queue_mu);
            } else {
                q->done = true;
                if (q != mine && !q->follower)
                    pthread_cond_signal(&q->cv);
            }
        }
    }
    s->leading = false;
}

void (*commit_prepared_hook)(ty_store *s, bool made);

/* Appends reqs[0..n) to the queue and, unless they are one async request,
 * waits until the last of them is done (which makes all of them done: the
 * queue runs in order), leading when nobody else does. */
/* Requests' condition variables time out on the monotonic clock (a step of
 * the wall clock would stretch submit's wait for the leader). */
static pthread_condattr_t cv_attr;
static pthread_once_t cv_attr_once = PTHREAD_ONCE_INIT;

static void cv_attr_init(void)
{
    pthread_condattr_init(&cv_attr);
    pthread_condattr_setclock(&cv_attr, CLOCK_MONOTONIC);
}

static void submit(ty_store *s, write_req *reqs, size_t n)
{
    write_req *last = &reqs[n - 1];
    bool async = last->async;
    size_t next = store_prepare(s, reqs, n), reached = 0;

    for (size_t i = 0; i < n; i++) {
        reqs[i].next = i + 1 < n ? &reqs[i + 1] : NULL;
        reqs[i].done = reqs[i].lead = false;
        reqs[i].follower = i + 1 < n;
    }
    pthread_once(&cv_attr_once, cv_attr_init);
    pthread_cond_init(&last->cv, &cv_attr);
    pthread_mutex_lock(&s->queue_mu);
    if (s->queue_tail)
        s->queue_tail->next = reqs;
    else
        s->queue_head = reqs;
    s->queue_tail = last;
    if (s->leading && async) {
        pthread_mutex_unlock(&s->queue_mu);
        return;
    }
    /* Until the leader gets to them, make more of them (only a group has
     * any left), even when nobody leads yet: who comes next leads and finds
     * them made, instead of this thread leading now and making them in the
     * commit section while everybody else waits. With the window full,
     * look again in a while (the leader signals only the last of a group);
     * with nothing left to make, lead when nobody does. */
    while (!async && !last->done && !last->lead) {
        bool made = false;

        if (next < n) {
            pthread_mutex_unlock(&s->queue_mu);
            made = store_prepare_more(s, reqs, n, &next, &reached);
            if (commit_prepared_hook)
                commit_prepared_hook(s, made);
            pthread_mutex_lock(&s->queue_mu);
            /* The leader may have handed over the lead or finished the
             * group meanwhile, signalling nobody: look before waiting. */
            if (made || last->done || last->lead)
                continue;
        }
        if (!s->leading)
            break;
        if (next >= n) {
            pthread_cond_wait(&last->cv, &s->queue_mu);
            continue;
        }
        struct timespec until = ty_deadline_ms(CLOCK_MONOTONIC, PREP_RETRY_MS);
        pthread_cond_timedwait(&last->cv, &s->queue_mu, &until);
    }
    if (last->done) {
        pthread_mutex_unlock(&s->queue_mu);
        pthread_cond_destroy(&last->cv);
        return;
    }
    s->leading = true;
    lead(s, last);
    pthread_mutex_unlock(&s->queue_mu);
    if (!async)
        pthread_cond_destroy(&last->cv);
}

void commit_submit(ty_store *s, write_req *req)
{
    submit(s, req, 1);
}

void commit_submit_all(ty_store *s, write_req *reqs, size_t n)
{
    if (n)
        submit(s, reqs, n);
}

void store_commit_stats_get(ty_store *s, store_commit_stats *c)
{
    pthread_mutex_lock(&s->write_mu);
    c->transactions = s->batches;
    c->writes = s->batched_writes;
    c->held_s = (double)s->held_ns / 1e9;
    c->held_cpu_s = (double)s->held_cpu_ns / 1e9;
    pthread_mutex_unlock(&s->write_mu);
    c->reaper_overflows = 0;
    if (s->hub) /* NULL in an open that failed */
        hub_reaper_stats(s->hub, NULL, &c->reaper_overflows);
}

void commit_drain(ty_store *s)
{
    pthread_mutex_lock(&s->queue_mu);
    while (s->leading) {
        /* A leader finishes everything queued before it lets go. */
        pthread_mutex_unlock(&s->queue_mu);
        sched_yield();
        pthread_mutex_lock(&s->queue_mu);
    }
    if (s->queue_head) {
        s->leading = true;
        lead(s, NULL);
    }
    pthread_mutex_unlock(&s->queue_mu);
}
