/* test_admission.c - Volcano's queue admission rules (api/admission.h)
 * over lookups into a few queues held here, apart from any server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "api/admission.h"
#include "api/kinds.h"

/* The queues the rules see: name -> Queue JSON. */
static json_t *queues;

static json_t *get(void *ctx, const api_resource *res, const char *ns, const char *name)
{
    (void)ctx, (void)ns;
    assert_ptr_equal(res, &api_queue);
    return json_incref(json_object_get(queues, name));
}

static size_t count(void *ctx, const api_resource *res,
                    bool (*filter)(const json_t *obj, void *arg), void *arg)
{
    const char *k;
    json_t *q;
    size_t n = 0;

    (void)ctx;
    assert_ptr_equal(res, &api_queue);
    json_object_foreach(queues, k, q)
        n += filter(q, arg);
    return n;
}

static const api_lookup lk = {.get = get, .count = count};

static void put_queue(const char *name, const char *parent, const char *state)
{
    json_object_set_new(queues, name,
                        json_pack("{s:{s:s}, s:{s:s?}, s:{s:s?}}", "metadata", "name", name,
                                  "spec", "parent", parent, "status", "state", state));
}

static json_t *vcjob(const char *queue)
{
    return json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "j", "spec", "queue", queue);
}

static json_t *ptjob(const char *queue)
{
    return json_pack("{s:{s:s}, s:{s:{s:{s:s}}}}", "metadata", "name", "p", "spec", "runPolicy",
                     "schedulingPolicy", "queue", queue);
}

static int setup(void **state)
{
    (void)state;
    queues = json_object();
    put_queue("default", NULL, "Open");
    put_queue("root", NULL, "Open");
    put_queue("closed", NULL, "Closed");
    put_queue("team", "root", "Open");
    put_queue("team-a", "team", "Open");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(queues);
    return 0;
}

/* Runs one admission and returns the error code (0: admitted). */
static ty_errcode admit(api_admit_op op, const api_resource *res, json_t *obj,
                        const char *name, const char *want_text)
{
    ty_error err;
    ty_errcode code;

    ty_error_init(&err);
    api_admit(&lk, op, res, obj, name, &err);
    code = err.code;
    if (want_text)
        assert_non_null(strstr(err.text, want_text));
    ty_error_clear(&err);
    json_decref(obj);
    return code;
}

static void test_jobs_go_to_open_leaf_queues(void **state)
{
    (void)state;
    assert_int_equal(admit(API_ADMIT_CREATE, &api_vcjob, vcjob("team-a"), NULL, NULL), 0);
    assert_int_equal(admit(API_ADMIT_CREATE, &api_vcjob, vcjob("closed"), NULL,
                           "can only submit job to queue with state `Open`, queue `closed` "
                           "status is `Closed`"),
                     TY_EFORBIDDEN);
    assert_int_equal(admit(API_ADMIT_CREATE, &api_vcjob, vcjob("root"), NULL,
                           "can not submit job to root queue"),
                     TY_EFORBIDDEN);
    assert_int_equal(admit(API_ADMIT_CREATE, &api_vcjob, vcjob("team"), NULL,
                           "can only submit job to leaf queue, queue `team` has 1 child queues"),
                     TY_EFORBIDDEN);
    /* Kubeflow jobs name their queue in runPolicy and are held to the same */
    assert_int_equal(admit(API_ADMIT_CREATE, &api_pytorchjob, ptjob("closed"), NULL, NULL),
                     TY_EFORBIDDEN);
}

static void test_missing_queue(void **state)
{
    (void)state;
    assert_int_equal(admit(API_ADMIT_CREATE, &api_vcjob, vcjob("nope"), NULL,
                           "unable to find job queue: queues.scheduling.volcano.sh \"nope\" "
                           "not found"),
                     TY_EFORBIDDEN);
    /* a Kubeflow job waits for its queue to come, as upstream's do */
    assert_int_equal(admit(API_ADMIT_CREATE, &api_pytorchjob, ptjob("nope"), NULL, NULL), 0);
}

static void test_queue_parent_cycle(void **state)
{
    (void)state;
    json_t *q = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "team", "spec", "parent",
                          "team-a");

    assert_int_equal(admit(API_ADMIT_UPDATE, &api_queue, q, "team", "own ancestor"),
                     TY_EINVALID);
    q = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "new", "spec", "parent", "team-a");
    assert_int_equal(admit(API_ADMIT_CREATE, &api_queue, q, NULL, NULL), 0);
    /* a parent not created yet is allowed */
    q = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "new", "spec", "parent", "later");
    assert_int_equal(admit(API_ADMIT_CREATE, &api_queue, q, NULL, NULL), 0);
}

static void test_queue_delete(void **state)
{
    (void)state;
    assert_int_equal(admit(API_ADMIT_DELETE, &api_queue,
                           json_incref(json_object_get(queues, "default")), "default",
                           "`default` queue can not be deleted"),
                     TY_EFORBIDDEN);
    assert_int_equal(admit(API_ADMIT_DELETE, &api_queue,
                           json_incref(json_object_get(queues, "team-a")), "team-a",
                           "only queue with state `Closed` can be deleted, queue `team-a` "
                           "state is `Open`"),
                     TY_EFORBIDDEN);
    assert_int_equal(admit(API_ADMIT_DELETE, &api_queue,
                           json_incref(json_object_get(queues, "closed")), "closed", NULL),
                     0);
    assert_int_equal(admit(API_ADMIT_DELETE, &api_queue, NULL, "gone", NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_jobs_go_to_open_leaf_queues, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_parent_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_delete, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
