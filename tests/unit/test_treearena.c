/* test_treearena.c - trees built in a scope come from chunks carved in
 * order; a chunk is reused only once nobody carves it and every block of it
 * was freed, by any thread; outside a scope jansson allocates as before. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/treearena.h"

/* A pod-like tree: an object with nested objects, arrays and strings. */
static json_t *tree(int i)
{
    json_t *env = json_array();

    for (int k = 0; k < 10; k++)
        json_array_append_new(env, json_pack("{s:s, s:i}", "name", "RANK", "value", i + k));
    return json_pack("{s:s, s:{s:s, s:{s:s}}, s:{s:[{s:s, s:o}]}}", "kind", "Pod", "metadata",
                     "name", "p", "labels", "job", "j", "spec", "containers", "name", "c",
                     "env", env);
}

static size_t in_use(void)
{
    ty_tree_arena_stats st;

    ty_tree_arena_stats_get(&st);
    return st.chunks_in_use;
}

static uintptr_t chunk_of(const void *p)
{
    return (uintptr_t)p & ~(uintptr_t)(TY_TREE_ARENA_CHUNK - 1);
}

/* Moves this thread off the chunk it carves: trees are built (and kept, so
 * that the chunk cannot come straight back) until one lands in another
 * chunk; then they are all freed. */
static void move_on(void)
{
    json_t *held[200];
    size_t n = 0;
    uintptr_t first;

    ty_tree_arena_begin(TY_TREES_STORED);
    held[n++] = tree(0);
    first = chunk_of(held[0]);
    while (n < 200) {
        held[n] = tree(0);
        if (chunk_of(held[n++]) != first)
            break;
    }
    ty_tree_arena_end();
    assert_true(n < 200);
    while (n)
        json_decref(held[--n]);
}

/* In a scope every block of a tree is a chunk's; outside, none is; the
 * trees are equal either way. */
static void test_scope_carves(void **state)
{
    json_t *in, *out;

    (void)state;
    ty_tree_arena_begin(TY_TREES_STORED);
    in = tree(1);
    ty_tree_arena_end();
    out = tree(1);
    assert_true(json_equal(in, out));
    assert_true(ty_tree_arena_owns(in));
    assert_true(ty_tree_arena_owns(json_object_get(json_object_get(in, "metadata"), "labels")));
    assert_false(ty_tree_arena_owns(out));
    assert_false(ty_tree_arena_owns(json_object_get(out, "metadata")));
    /* a copy made outside a scope is malloc's, whatever it copies */
    json_t *copy = json_deep_copy(in);
    assert_false(ty_tree_arena_owns(copy));
    assert_true(json_equal(copy, out));
    /* large blocks are malloc's even in a scope */
    char *big = malloc(TY_TREE_ARENA_CHUNK / 4);
    memset(big, 'x', TY_TREE_ARENA_CHUNK / 4 - 1);
    big[TY_TREE_ARENA_CHUNK / 4 - 1] = '\0';
    ty_tree_arena_begin(TY_TREES_STORED);
    json_t *s = json_string(big);
    ty_tree_arena_end();
    assert_true(ty_tree_arena_owns(s));
    assert_false(ty_tree_arena_owns(json_string_value(s)));
    assert_string_equal(json_string_value(s), big);
    json_decref(s);
    free(big);
    json_decref(copy);
    json_decref(in);
    json_decref(out);
}

/* Scopes nest: the inner end leaves the outer scope open. */
static void test_scopes_nest(void **state)
{
    json_t *a, *b;

    (void)state;
    ty_tree_arena_begin(TY_TREES_STORED);
    ty_tree_arena_begin(TY_TREES_STORED);
    ty_tree_arena_end();
    a = json_object();
    ty_tree_arena_end();
    b = json_object();
    assert_true(ty_tree_arena_owns(a));
    assert_false(ty_tree_arena_owns(b));
    json_decref(a);
    json_decref(b);
    ty_tree_arena_end(); /* one end too many is harmless */
    b = json_object();
    assert_false(ty_tree_arena_owns(b));
    json_decref(b);
}

/* A chunk comes back only when its last block goes, and only after its
 * carver moved on: a tree that shares a member with a live one keeps the
 * chunk of that member. */
static void test_chunk_back_when_all_freed(void **state)
{
    json_t *keep, *kept_member, *holder;
    size_t before;

    (void)state;
    move_on();
    before = in_use();
    ty_tree_arena_begin(TY_TREES_STORED);
    keep = tree(2);
    ty_tree_arena_end();
    kept_member = json_incref(json_object_get(keep, "spec"));
    holder = json_pack("{s:o}", "spec", kept_member); /* malloc's, holding an arena member */
    json_decref(keep);
    move_on(); /* the chunk is no longer carved, but the spec lives */
    assert_true(in_use() >= before + 1);
    size_t with_spec = in_use();
    json_decref(holder); /* the spec's last reference: the chunk goes */
    assert_int_equal(in_use(), with_spec - 1);
}

/* Lanes carve different chunks; a scope inside another keeps its lane. */
static void test_lanes(void **state)
{
    json_t *stored, *brief, *inner;

    (void)state;
    ty_tree_arena_begin(TY_TREES_STORED);
    stored = json_object();
    ty_tree_arena_end();
    ty_tree_arena_begin(TY_TREES_BRIEF);
    brief = json_object();
    ty_tree_arena_begin(TY_TREES_STORED);
    inner = json_object();
    ty_tree_arena_end();
    ty_tree_arena_end();
    assert_true(ty_tree_arena_owns(stored) && ty_tree_arena_owns(brief));
    assert_int_not_equal(chunk_of(stored), chunk_of(brief));
    assert_int_equal(chunk_of(inner), chunk_of(brief));
    json_decref(stored);
    json_decref(brief);
    json_decref(inner);
}

#define THREADS 4
#define TREES 3000

static json_t *built[THREADS][TREES];

static void *builder(void *arg)
{
    json_t **mine = arg;

    for (int i = 0; i < TREES; i++) {
        ty_tree_arena_begin(TY_TREES_STORED);
        mine[i] = tree(i);
        ty_tree_arena_end();
    }
    return NULL;
}

/* Trees built by threads that have ended, freed by another: when the last
 * goes, every chunk is free again (each builder let go of the chunk it
 * carved when it ended), and the trees were intact until then. */
static void test_other_threads_free(void **state)
{
    pthread_t t[THREADS];
    ty_tree_arena_stats st;
    size_t base;

    (void)state;
    move_on();
    base = in_use(); /* this thread's own chunk */
    for (int k = 0; k < THREADS; k++)
        assert_int_equal(pthread_create(&t[k], NULL, builder, built[k]), 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    assert_true(in_use() > base + THREADS); /* 12,000 trees take many chunks */
    for (int k = 0; k < THREADS; k++)
        for (int i = 0; i < TREES; i++) {
            json_t *want = tree(i);
            assert_true(json_equal(built[k][i], want));
            json_decref(want);
            json_decref(built[k][i]);
        }
    assert_int_equal(in_use(), base);
    ty_tree_arena_stats_get(&st);
    assert_int_equal(st.chunks_made, st.chunks_in_use + st.chunks_free);
    /* free chunks are reused before new ones are made */
    size_t made = st.chunks_made;
    assert_int_equal(pthread_create(&t[0], NULL, builder, built[0]), 0);
    pthread_join(t[0], NULL);
    for (int i = 0; i < TREES; i++)
        json_decref(built[0][i]);
    ty_tree_arena_stats_get(&st);
    assert_int_equal(st.chunks_made, made);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_carves),
        cmocka_unit_test(test_scopes_nest),
        cmocka_unit_test(test_chunk_back_when_all_freed),
        cmocka_unit_test(test_lanes),
        cmocka_unit_test(test_other_threads_free),
    };

    /* before the first JSON value; forced so that sanitizer builds test it too */
    if (!ty_tree_arena_init(true))
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
