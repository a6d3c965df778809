/* test_vcjob_status.c - the Volcano Job controller writes what an API server
 * with the status subresource keeps: its status through KC_STATUS (a plain
 * write's status is ignored there) and a consumed action through a
 * metadata write (a status write's annotations are ignored there). Run over
 * a client that behaves as such a server does (strict_kc.h). Before, the
 * job's status was written by a plain write (never kept), and then with the
 * action's removal inside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "store_fixture.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "controller/volcano/vc_int.h"
#include "kc_fixture.h"
#include "strict_kc.h"

/* ---- the test ---- */

static const char *JOB =
    "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
    "\"metadata\":{\"name\":\"j\",\"namespace\":\"default\","
    "\"annotations\":{\"trainyard.io/action\":\"AbortJob\"}},"
    "\"spec\":{\"minAvailable\":1,\"schedulerName\":\"volcano\",\"queue\":\"default\","
    "\"tasks\":[{\"name\":\"t\",\"replicas\":1,\"template\":{\"spec\":{"
    "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}]}}";

static json_t *job(ty_kc *c)
{
    ty_obj *o = kc_get(c, api_store_key(&api_vcjob), "default", "j", NULL);
    json_t *j;

    assert_non_null(o);
    j = ty_obj_json_copy(o);
    ty_obj_unref(o);
    return j;
}

static const char *phase_of(const json_t *j, char *buf, size_t len)
{
    snprintf(buf, len, "%s",
             json_string_value(json_object_get(
                 json_object_get(json_object_get(j, "status"), "state"), "phase")) ?: "");
    return buf;
}

/* How many ExecuteAction Events were recorded (their counts summed). */
static long long executed(ty_kc *c)
{
    kc_list l = {0};
    long long n = 0;

    assert_int_equal(kc_list_objects(c, "events", &(kc_list_opts){.ns = "default"}, &l, NULL), 0);
    for (size_t i = 0; i < l.n; i++) {
        const json_t *ev = ty_obj_json(l.items[i]);
        if (!strcmp(json_string_value(json_object_get(ev, "reason")) ?: "", "ExecuteAction"))
            n += json_integer_value(json_object_get(ev, "count"));
    }
    kc_list_free(&l);
    return n;
}

static void test_action_once_status_kept(void **state)
{
    store_fixture *f = *state;
    ty_kc *c = strict_new(KC(f->s));
    json_t *obj = json_loads(JOB, 0, NULL), *j;
    ty_error err;
    ty_obj *o;
    time_t wake = 0;
    char phase[32];

    ty_error_init(&err);
    assert_non_null(obj);
    assert_int_equal(api_prepare(&api_vcjob, obj, NULL, &err), 0);
    o = kc_create(c, api_store_key(&api_vcjob), "default", obj, &err);
    assert_non_null(o);
    ty_obj_unref(o);

    assert_int_equal(vc_reconcile(c, "default", "j", &wake), 0);
    j = job(c);
    /* the status was written (through the status subresource) */
    assert_string_equal(phase_of(j, phase, sizeof(phase)), "Aborting");
    /* and the action consumed (by a metadata write) */
    assert_null(json_object_get(json_object_get(json_object_get(j, "metadata"), "annotations"),
                                "trainyard.io/action"));
    json_decref(j);
    assert_int_equal(executed(c), 1);

    /* more passes act no more */
    for (int i = 0; i < 3; i++)
        assert_int_equal(vc_reconcile(c, "default", "j", &wake), 0);
    assert_int_equal(executed(c), 1);
    j = job(c);
    assert_string_not_equal(phase_of(j, phase, sizeof(phase)), "");
    assert_string_not_equal(phase_of(j, phase, sizeof(phase)), "Pending");
    json_decref(j);
    kc_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_action_once_status_kept, store_fixture_setup,
                                        store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
