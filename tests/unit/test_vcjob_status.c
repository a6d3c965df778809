/* test_vcjob_status.c - the Volcano Job controller writes what an API server
 * with the status subresource keeps: its status through KC_STATUS (a plain
 * write's status is ignored there) and a consumed action through a
 * metadata write (a status write's annotations are ignored there). Run over
 * a client that behaves as such a server does: the embedded one (whose
 * KC_STATUS drops the rest) wrapped so that a plain write drops status
 * changes. Before, the job's status was written by a plain write (never
 * kept), and then with the action's removal inside it. */
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

/* ---- a client whose plain writes leave the status alone ---- */

typedef struct strict_kc {
    ty_kc base;
    ty_kc *in;
} strict_kc;

#define IN(c) (((strict_kc *)(c))->in)

static ty_obj *s_get(ty_kc *c, const char *r, const char *ns, const char *n, ty_error *e)
{
    return kc_get(IN(c), r, ns, n, e);
}
static int s_list(ty_kc *c, const char *r, const kc_list_opts *o, kc_list *out, ty_error *e)
{
    return kc_list_objects(IN(c), r, o, out, e);
}
static int s_list_owned(ty_kc *c, const char *r, const char *ns, const char *uid, kc_list *out,
                        ty_error *e)
{
    return kc_list_owned(IN(c), r, ns, uid, out, e);
}
static size_t s_count(ty_kc *c, const char *r)
{
    return kc_count(IN(c), r);
}
static json_t *s_resources(ty_kc *c)
{
    return kc_resources(IN(c));
}
static ty_obj *s_create(ty_kc *c, const char *r, const char *ns, json_t *o, ty_error *e)
{
    return kc_create(IN(c), r, ns, o, e);
}
static ty_obj *s_update(ty_kc *c, const char *r, const char *ns, const json_t *o, ty_error *e)
{
    return kc_update(IN(c), r, ns, o, e);
}
static ty_obj *s_patch(ty_kc *c, const char *r, const char *ns, const char *n, kc_patch_type t,
                       const json_t *p, bool st, ty_error *e)
{
    return kc_patch(IN(c), r, ns, n, t, p, st, e);
}
static ty_obj *s_del(ty_kc *c, const char *r, const char *ns, const char *n,
                     const kc_delete_opts *o, bool *d, ty_error *e)
{
    return kc_delete(IN(c), r, ns, n, o, d, e);
}
static int s_bind(ty_kc *c, const char *ns, const char *n, const char *uid, const char *node,
                  ty_error *e)
{
    return kc_bind(IN(c), ns, n, uid, node, e);
}

typedef struct plain_call {
    kc_mutate_fn fn;
    void *arg;
} plain_call;

/* A plain write: the status stays as it was. */
static int keep_status(json_t *obj, void *arg, ty_error *err)
{
    const plain_call *p = arg;
    json_t *st = json_incref(json_object_get(obj, "status"));
    int rc = p->fn(obj, p->arg, err);

    if (rc == 0) {
        json_object_del(obj, "status");
        if (st)
            json_object_set(obj, "status", st);
    }
    json_decref(st);
    return rc;
}


static ty_obj *s_mutate(ty_kc *c, const char *r, const char *ns, const char *n, kc_mutate_fn fn,
                        void *arg, unsigned flags, ty_error *e)
{
    plain_call p = {fn, arg};

    if (flags & KC_STATUS)
        return kc_mutate(IN(c), r, ns, n, fn, arg, flags, e);
    /* a whole copy: keep_status changes status in place */
    return kc_mutate(IN(c), r, ns, n, keep_status, &p, 0, e);
}

static void s_free(ty_kc *c)
{
    free(c);
}

static const kc_ops strict_ops = {
    .kind = "strict",
    .get = s_get,
    .list = s_list,
    .list_owned = s_list_owned,
    .count = s_count,
    .resources = s_resources,
    .create = s_create,
    .update = s_update,
    .mutate = s_mutate,
    .patch = s_patch,
    .del = s_del,
    .bind = s_bind,
    .free = s_free,
};

static ty_kc *strict_new(ty_kc *in)
{
    strict_kc *k = calloc(1, sizeof(*k));

    assert_non_null(k);
    k->base.ops = &strict_ops;
    k->in = in;
    return &k->base;
}

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
