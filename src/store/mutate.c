/* mutate.c - writes to an existing object (see store.h): store_mutate and
 * its status forms, store_update; run in the leader of the batch (commit.c)
 * under write_mu, like the rest of store.c.
 *
 * Every writer waits for the leader, which runs the batch's writes one after
 * another, so what a write needs of it is kept short: before queueing, the
 * caller's own thread runs a status mutate's function on a copy of the
 * version committed now and serialises the result, or serialises a named
 * create, each with a placeholder for the resourceVersion (store_prepare).
 * The leader checks that the version is still the one the batch would see,
 * stamps the resourceVersion into the tree and the text, and stages it;
 * where the version moved on it does the write itself, as before. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonin.h"
#include "base/jsonout.h"
#include "base/treearena.h"
#include "store/store_int.h"

/* The most writes of one call that store_prepare makes ahead, and the most
 * of those whose committed version has no tree (parsed here). */
#define PREP_MAX 256
#define PREP_COLD_MAX 64
/* How far ahead of the leader a waiting caller makes its group's writes. */
#define PREP_AHEAD 256
/* How many of the writes the leader comes to next a waiting caller leaves it. */
#define PREP_GAP 16

static bool equal_outside_meta_status(const json_t *a, const json_t *b)
{
    const char *k;
    json_t *v;
    size_t na = 0, nb = 0;

    json_object_foreach((json_t *)a, k, v) {
        if (!strcmp(k, "metadata") || !strcmp(k, "status"))
            continue;
        na++;
        if (!json_equal(v, json_object_get(b, k)))
            return false;
    }
    json_object_foreach((json_t *)b, k, v) {
        if (strcmp(k, "metadata") && strcmp(k, "status"))
            nb++;
    }
    return na == nb;
}

/* Fields a caller can never change through an update. resourceVersion is
 * restored too, so that comparing with the current object shows whether
 * anything the caller controls changed. */
static const char *const kept_fields[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                          "deletionGracePeriodSeconds", "name", "namespace",
                                          "resourceVersion", "generation"};

/* Turns next into a valid successor of cur. Returns 1 when it differs from
 * cur (a write is due), 0 when equal, -1 on a failed precondition. */
static int prepare_update(const char *resource, const char *name, const json_t *curj,
                          json_t *next, ty_error *err)
{
    const json_t *cmeta = json_object_get(curj, "metadata");
    json_t *nmeta;
    const char *want_rv;
    json_int_t gen;

    if (!json_is_object(next))
        return ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
    nmeta = meta_of(next);
    if (!nmeta) {
        nmeta = json_object();
        json_object_set_new(next, "metadata", nmeta);
    }
    if (!json_is_object(nmeta))
        return ty_seterr(err, TY_EBADREQUEST, "metadata must be an object");
    want_rv = ty_jmeta(next, "resourceVersion");
    if (*want_rv && strcmp(want_rv, ty_jmeta(curj, "resourceVersion")) != 0)
        return ty_seterr(err, TY_ECONFLICT,
                         "Operation cannot be fulfilled on %s \"%s\": the object has been "
                         "modified; please apply your changes to the latest version and try "
                         "again",
                         resource, name);
    for (size_t i = 0; i < sizeof(kept_fields) / sizeof(kept_fields[0]); i++) {
        json_t *v = json_object_get(cmeta, kept_fields[i]);
        if (v) /* shared: never changed in place, only replaced */
            json_object_set(nmeta, kept_fields[i], v);
        else
            json_object_del(nmeta, kept_fields[i]);
    }
    if (!equal_outside_meta_status(curj, next)) {
        gen = json_integer_value(json_object_get(cmeta, "generation"));
        json_object_set_new(nmeta, "generation", json_integer(gen + 1));
    }
    return json_equal(curj, next) ? 0 : 1;
}

int store_dry_run_update(const char *resource, const json_t *cur, json_t *next, ty_error *err)
{
    const char *name = json_string_value(json_object_get(meta_of((json_t *)cur), "name"));
    return prepare_update(resource, name ? name : "", cur, next, err) < 0 ? -1 : 0;
}

/* Stages next (stolen) as the successor of cur (whose JSON is curj):
 * nothing when unchanged (the answer is cur), a removal when it is being
 * deleted and its last finalizer just went. */
static void write_next(ty_store *s, write_req *req, store_res *r, store_obj *cur,
                       const json_t *curj, json_t *next)
{
    int rc = prepare_update(r->name, cur->name, curj, next, req->err);
    bool gone;

    if (rc <= 0) {
        json_decref(next);
        if (rc == 0)
            req->result = store_obj_ref(cur);
        return;
    }
    gone = json_object_get(meta_of(next), "deletionTimestamp") &&
           !has_finalizers(r->name, next);
    commit_stage(s, req, r, next, gone ? STORE_DELETED : STORE_MODIFIED);
}

/* A copy of obj for a status function: the object, its metadata and its
 * status are its own, one level deep (json_copy), and everything below them
 * and every other member is obj's, shared (store_mutate_status; the
 * function makes its own what it changes below that, base/jsonown.h); with
 * spec_top its spec is its own too, one level deep. A deep copy of a pod's
 * metadata and status was most of a status write's work, and most of what
 * the reaper then freed. */
static json_t *copy_for_status(const json_t *obj, bool spec_top)
{
    json_t *copy = json_object(), *v;
    const char *k;
    int rc = 0;

    if (!copy || !json_is_object(obj)) {
        json_decref(copy);
        return json_deep_copy(obj);
    }
    json_object_foreach((json_t *)obj, k, v) {
        if (!strcmp(k, "metadata") || !strcmp(k, "status") ||
            (spec_top && !strcmp(k, "spec")))
            rc |= json_object_set_new(copy, k, json_copy(v));
        else
            rc |= json_object_set(copy, k, v);
    }
    if (rc) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}

#ifdef TY_CHECK_SHARED
/* Sanitizer builds check the rule above: base, whose members the copy
 * shares, is byte for byte what it was before fn ran on the copy. */
static char *shared_before(const json_t *base)
{
    return json_dumps(base, JSON_COMPACT | JSON_SORT_KEYS);
}

static void shared_after(const json_t *base, char *before, const write_req *req)
{
    char *after = json_dumps(base, JSON_COMPACT | JSON_SORT_KEYS);

    if (before && after && strcmp(before, after) != 0) {
        fprintf(stderr,
                "store: a status function changed the committed version of %s %s/%s it "
                "shares members with:\nbefore %s\nafter  %s\n",
                req->resource, req->ns ? req->ns : "", req->name ? req->name : "", before, after);
        abort();
    }
    free(before);
    free(after);
}
#else
static char *shared_before(const json_t *base)
{
    (void)base;
    return NULL;
}

static void shared_after(const json_t *base, char *before, const write_req *req)
{
    (void)base, (void)before, (void)req;
}
#endif

/* cur's tree parsed from its text, for req to run its function on. What
 * the function leaves alone, the new version shares, so the parse lives as
 * long as the object's versions: with req->arena it is carved in the tree
 * arena's stored lane, beside the copy (base/treearena.h). Parsed by plain
 * malloc, a pod's ~330 blocks would lie scattered among everything else the
 * threads allocated, and the reaper's walk over them when the pod goes cold
 * would be a cache miss a block (docs/benchmarks.md). With text, the
 * text it parsed when that had to be decompressed (*text is then the
 * caller's to free; NULL when cur has its plain text, or when nothing was
 * parsed), for prep_text to cut the spec from. With light, cur's light tree
 * (obj_text_light): the spec's text is then always cut from cur's. */
static json_t *parse_base_text(const write_req *req, store_obj *cur, char **text, bool light)
{
    const char *t = atomic_load_explicit(&cur->text, memory_order_acquire);
    char *owned = t ? NULL : obj_inflate(cur);
    json_t *tree = NULL;

    if (t || (t = owned)) {
        if (req->arena)
            ty_tree_arena_begin(TY_TREES_STORED);
        tree = light ? obj_text_light(t, cur->len) : ty_json_load(t, cur->len, 0, NULL);
        if (req->arena)
            ty_tree_arena_end();
    }
    if (text && tree) {
        *text = owned;
        owned = NULL;
    }
    free(owned);
    return tree;
}

/* As parse_base_text, without the text. */
static json_t *parse_base(const write_req *req, store_obj *cur)
{
    return parse_base_text(req, cur, NULL, false);
}

/* fn run on a copy of base made for req (copy_for_status for a status or
 * spec_top mutate, else a deep copy), the copy and fn's changes in the tree
 * arena's stored lane when req asks for it (base/treearena.h). The copy, and
 * fn's result in *frc; NULL when the copy could not be made. */
static json_t *run_fn(write_req *req, const json_t *base, int *frc)
{
    /* made outside the scope: shared_before's text is free()'s */
    char *before = shared_before(base);
    json_t *next;

    if (req->arena)
        ty_tree_arena_begin(TY_TREES_STORED);
    next = req->status_only || req->spec_top ? copy_for_status(base, req->spec_top)
                                             : json_deep_copy(base);
    if (next)
        *frc = req->fn(next, req->arg, req->err);
    if (req->arena)
        ty_tree_arena_end(); /* before anything that may json_dumps */
    if (next)
        shared_after(base, before, req);
    else
        free(before);
    return next;
}

/* What store_prepare made, taken: its base is the version this batch would
 * run fn on, so fn's result and the verdict on it are what they would be. */
static void take_prepared(ty_store *s, write_req *req, store_res *r, store_obj *cur)
{
    json_t *next = req->prep_next;

    req->prep_next = NULL;
    if (req->prep_rc < 0)
        return; /* *err says why */
    if (req->prep_rc == 0) {
        req->result = store_obj_ref(cur);
        return;
    }
    commit_stage(s, req, r, next, STORE_MODIFIED);
}

void store_exec_mutate(ty_store *s, write_req *req)
{
    store_res *r = NULL;
    store_obj *cur;
    json_t *tree, *base, *next;
    int frc;

    if (req->prep_base) {
        if (store_current_for_write(s, req, &r, NULL) == req->prep_base) {
            take_prepared(s, req, r, req->prep_base);
            return;
        }
        /* Somebody wrote it since: run fn again, on what is current now. */
        store_prep_release(req);
        ty_error_clear(req->err);
    }
    if (!(cur = store_current_for_write(s, req, &r, req->err)))
        return;
    /* cur's JSON: its tree, or when that was dropped a parse of its text
     * that is not kept (cur is about to be superseded: a tree given back to
     * it would only wait for the reaper, which frees it cold). */
    tree = atomic_load_explicit(&cur->tree, memory_order_acquire);
    if (!(base = tree ? json_incref(tree) : parse_base(req, cur))) {
        ty_seterr(req->err, TY_EINTERNAL, "out of memory");
        return;
    }
    if (!(next = run_fn(req, base, &frc)))
        ty_seterr(req->err, TY_EINTERNAL, "out of memory");
    else if (frc < 0)
        json_decref(next);
    else
        write_next(s, req, r, cur, base, next);
    json_decref(base);
}

/* ---- made ahead, in the caller's thread ---- */

/* obj's text with a placeholder resourceVersion ("") whose offset it
 * notes; false (nothing kept) when it cannot be made or is too large: the
 * leader then serialises it as usual. A status write shares its spec with
 * base, the tree of the committed version cur: that spec's text is cut from
 * cur's plain text (when cur has it) instead of written again, most of a
 * pod's text and of a job's; a spec_top write (a binding) shares the spec's
 * containers, whose text is cut the same way. */
static bool prep_text(ty_store *s, write_req *req, json_t *obj, const store_obj *cur,
                      const json_t *base, const char *cur_text)
{
    store_zdict *d;
    json_t *placeholder = json_string("");
    const json_t *spec = base ? json_object_get(base, "spec") : NULL, *node = NULL;
    const json_t *containers = json_object_get(spec, "containers");
    const char *known = NULL, *t = NULL;
    size_t at, start, end, cstart, cend;
    ty_buf b = {0};

    if (!placeholder || json_object_set_new(meta_of(obj), "resourceVersion", placeholder) < 0)
        return false;
    /* cur's text as base was parsed from it (decompressed, for a cold one),
     * or its plain text, which stays while this thread holds cur (sweep.c) */
    if (spec &&
        (t = cur_text ? cur_text
                      : atomic_load_explicit(&((store_obj *)cur)->text, memory_order_acquire)) &&
        obj_text_member(t, cur->len, "spec", &start, &end)) {
        if (json_object_get(obj, "spec") == spec) {
            node = spec;
        } else if (containers &&
                   json_object_get(json_object_get(obj, "spec"), "containers") == containers &&
                   obj_text_member(t + start, end - start, "containers", &cstart, &cend)) {
            /* spec_top (a binding): a pod's containers are most of its spec */
            node = containers;
            end = start + cend;
            start += cstart;
        }
    }
    /* a light tree's spec is only its scalars: its text must be cur's */
    if (req->prep_light && node != spec)
        return false;
    if (node)
        known = t + start;
    if (ty_json_append_known(&b, obj, placeholder, &at, node, known, known ? end - start : 0) <
            0 ||
        b.len > STORE_MAX_OBJECT_BYTES) {
        ty_buf_free(&b);
        return false;
    }
    req->prep_len = b.len;
    req->prep_rv_at = at;
    req->prep_text = ty_buf_steal(&b, NULL);
    /* and its row: compressed here, not in the commit section */
    if ((d = store_res_zdict(s, req->resource))) {
        req->prep_z = obj_z_make(d, req->prep_text, req->prep_len, at + 1);
        zdict_unref(d);
    }
    return true;
}

/* A text record's row, compressed ahead: its text with the resourceVersion
 * member the leader adds at rv_at, its value empty. */
static void prep_record(ty_store *s, write_req *req)
{
    static const char member[] = ",\"resourceVersion\":\"\"";
    store_zdict *d = store_res_zdict(s, req->resource);
    ty_buf b = {0};

    if (!d)
        return;
    if (ty_buf_append(&b, req->text, req->rv_at) == 0 &&
        ty_buf_append(&b, member, sizeof(member) - 1) == 0 &&
        ty_buf_append(&b, req->text + req->rv_at, req->text_len - req->rv_at) == 0)
        req->prep_z = obj_z_make(d, b.data, b.len, req->rv_at + sizeof(member) - 2);
    ty_buf_free(&b);
    zdict_unref(d);
}

/* A status mutate: fn on a copy of the committed version, and the verdict
 * (prepare_update) on its result. Only status mutates: their functions
 * depend on nothing but the object and their argument (store.h), so running
 * one again when the version moved on changes nothing else. 1 made, 0 left
 * to the leader, -1 not now: the version has no tree and cold_left is 0. */
static int prep_mutate(ty_store *s, write_req *req, size_t *cold_left)
{
    store_obj *cur = store_get(s, req->resource, req->ns, req->name, NULL); /* committed */
    json_t *tree, *base, *next;
    char *cold_text = NULL; /* cur's text decompressed for the parse */
    bool light = false;
    int rc = 0;

    if (!cur)
        return 0; /* the leader says so, or finds it created by this batch */
    /* A version without its tree is parsed here (a parse of its own, which
     * the result shares until the leader gets to it): only a few per group
     * before it is queued, so that a group of thousands (the simulated
     * nodes' ends) does not hold thousands of parses at once. */
    tree = atomic_load_explicit(&cur->tree, memory_order_acquire);
    if (tree) {
        base = json_incref(tree);
    } else if (!*cold_left) {
        store_obj_unref(cur);
        return -1;
    } else if ((base = parse_base_text(req, cur, &cold_text, req->light))) {
        (*cold_left)--;
        /* (a light parse of an object without a spec object is all of it) */
        light = req->light && json_is_object(json_object_get(base, "spec"));
    }
    /* a status or spec_top mutate (preparable): run_fn copies for status */
    if (!base || !(next = run_fn(req, base, &rc))) {
        json_decref(base);
        goto redo;
    }
    if (light && rc == STORE_FN_NEEDS_SPEC) {
        /* the leader runs it on the whole object */
        json_decref(base);
        json_decref(next);
        ty_error_clear(req->err);
        goto redo;
    }
    req->prep_light = light;
    rc = rc < 0 ? -1 : prepare_update(req->resource, cur->name, base, next, req->err);
    if (rc == 1 && ((json_object_get(meta_of(next), "deletionTimestamp") &&
                     !has_finalizers(req->resource, next)) ||
                    !prep_text(s, req, next, cur, base, cold_text))) {
        /* a removal (the leader's to make), or no text: redone there */
        json_decref(base);
        json_decref(next);
        ty_error_clear(req->err);
        req->prep_light = false;
        goto redo;
    }
    free(cold_text);
    json_decref(base);
    if (rc != 1) {
        json_decref(next);
        next = NULL;
    }
    req->prep_base = cur;
    req->prep_next = next;
    req->prep_rc = rc;
    return 1;
redo:
    free(cold_text);
    store_obj_unref(cur);
    return 0;
}

/* Whether req is of a kind store_prepare makes ahead. */
static bool preparable(const write_req *req)
{
    if (req->async)
        return false;
    if (req->kind == WR_MUTATE)
        return req->fn && (req->status_only || req->spec_top);
    return req->kind == WR_CREATE && req->obj && !req->text && !req->fn &&
           *ty_jmeta(req->obj, "name");
}

/* As prep_mutate, for either kind. */
static int prep_one(ty_store *s, write_req *req, size_t *cold_left)
{
    if (req->kind == WR_MUTATE)
        return prep_mutate(s, req, cold_left);
    return prep_text(s, req, req->obj, NULL, NULL, NULL);
}

size_t store_prepare(ty_store *s, write_req *reqs, size_t n)
{
    size_t made = 0, cold_left = PREP_COLD_MAX, i, later = SIZE_MAX;

    for (i = 0; i < n; i++) {
        atomic_init(&reqs[i].prep_state, PREP_OPEN);
        if (reqs[i].kind == WR_CREATE && reqs[i].text)
            prep_record(s, &reqs[i]);
    }
    /* What is made waits for the leader: a group's first PREP_MAX writes
     * only (the rest are further from their batch, which may have moved on,
     * and would all be held at once); its caller may make more while it
     * waits (store_prepare_more). Not queued yet: nobody else looks. */
    for (i = 0; i < n && made < PREP_MAX; i++) {
        int rc;

        if (!preparable(&reqs[i]))
            continue;
        if ((rc = prep_one(s, &reqs[i], &cold_left)) < 0) {
            later = later < i ? later : i; /* cold: for store_prepare_more */
            continue;
        }
        made += (size_t)rc;
        atomic_store_explicit(&reqs[i].prep_state, PREP_MADE, memory_order_relaxed);
    }
    return later < i ? later : i;
}

bool store_prepare_more(ty_store *s, write_req *reqs, size_t n, size_t *next, size_t *reached)
{
    size_t cold_left = SIZE_MAX; /* the window bounds what is held */

    while (*reached < n && atomic_load_explicit(&reqs[*reached].prep_state,
                                                memory_order_relaxed) == PREP_LEADER)
        (*reached)++;
    /* The leader will be at the next few soon: they are its, or it would
     * wait for this thread, idle in the commit section. */
    if (*next < *reached + PREP_GAP)
        *next = *reached + PREP_GAP;
    while (*next < n && *next - *reached < PREP_AHEAD) {
        write_req *req = &reqs[(*next)++];
        int open = PREP_OPEN;

        if (!preparable(req) ||
            !atomic_compare_exchange_strong_explicit(&req->prep_state, &open, PREP_MAKING,
                                                     memory_order_acquire,
                                                     memory_order_relaxed))
            continue; /* made already, or the leader's */
        prep_one(s, req, &cold_left);
        atomic_store_explicit(&req->prep_state, PREP_MADE, memory_order_release);
        ty_bell_ring(&s->prep_bell); /* the leader may wait for it */
        return true;
    }
    return false;
}

void store_prep_settle(ty_store *s, write_req *req)
{
    int st = PREP_OPEN;

    if (atomic_compare_exchange_strong_explicit(&req->prep_state, &st, PREP_LEADER,
                                                memory_order_acq_rel, memory_order_acquire))
        return;
    while (st == PREP_MAKING) {
        uint32_t ticket = ty_bell_ticket(&s->prep_bell);

        if ((st = atomic_load_explicit(&req->prep_state, memory_order_acquire)) != PREP_MAKING)
            break;
        ty_bell_wait(&s->prep_bell, ticket, NULL);
        st = atomic_load_explicit(&req->prep_state, memory_order_acquire);
    }
    /* made: what its caller made is the leader's now */
    atomic_store_explicit(&req->prep_state, PREP_LEADER, memory_order_relaxed);
}

void store_prep_release(write_req *req)
{
    store_obj_unref(req->prep_base);
    json_decref(req->prep_next);
    free(req->prep_text);
    obj_z_free(req->prep_z);
    req->prep_base = NULL;
    req->prep_next = NULL;
    req->prep_text = NULL;
    req->prep_z = NULL;
    req->prep_light = false;
}

store_obj *store_mutate(ty_store *s, const char *resource, const char *ns, const char *name,
                        store_mutate_fn fn, void *arg, ty_error *err)
{
    write_req req = {.kind = WR_MUTATE, .resource = resource, .ns = ns ? ns : "", .name = name,
                     .fn = fn, .arg = arg, .err = err};

    commit_submit(s, &req);
    return req.result;
}

store_obj *store_mutate_status(ty_store *s, const char *resource, const char *ns,
                               const char *name, store_mutate_fn fn, void *arg, ty_error *err)
{
    write_req req = {.kind = WR_MUTATE, .resource = resource, .ns = ns ? ns : "", .name = name,
                     .fn = fn, .arg = arg, .status_only = true, .err = err};

    commit_submit(s, &req);
    return req.result;
}

static int replace_with(json_t *obj, void *arg, ty_error *err)
{
    json_t *copy = json_deep_copy(arg);

    if (!copy)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    json_object_clear(obj);
    json_object_update(obj, copy);
    json_decref(copy);
    return 0;
}

store_obj *store_update(ty_store *s, const char *resource, const char *ns, const json_t *newobj,
                        ty_error *err)
{
    const char *name = json_is_object(newobj) ? ty_jmeta(newobj, "name") : "";

    if (!json_is_object(newobj)) {
        ty_seterr(err, TY_EBADREQUEST, "object must be a JSON object");
        return NULL;
    }
    if (!*name) {
        ty_seterr(err, TY_EINVALID, "metadata.name: Required value: name is required");
        ty_error_add_cause(err, "FieldValueRequired", "metadata.name", "name is required");
        return NULL;
    }
    return store_mutate(s, resource, ns, name, replace_with, (void *)newobj, err);
}

store_obj *store_current_for_write(ty_store *s, write_req *req, store_res **rp, ty_error *err)
{
    store_res *r = index_find(&s->ix, req->resource);
    store_obj *o = r && req->name ? commit_current(s, r, req->ns, req->name) : NULL;

    if (!o) {
        ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", req->resource,
                  req->name ? req->name : "");
        return NULL;
    }
    *rp = r;
    req->replaces = o;
    return o;
}
