/* test_kind_lease.c - coordination.k8s.io/v1 Lease (api/kind_lease.c):
 * kube-apiserver's validation wording and paths, MicroTime, strict fields,
 * decoding's type errors and kubectl's columns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "api/schema.h"

static const char *cause_msg(const ty_error *err, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach(err->causes, i, c)
        if (strcmp(json_string_value(json_object_get(c, "field")), field) == 0)
            return json_string_value(json_object_get(c, "message"));
    return NULL;
}

static json_t *lease(const char *spec)
{
    char text[1024];
    json_error_t je;
    json_t *o;

    snprintf(text, sizeof(text), "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
             "\"metadata\":{\"name\":\"op\",\"namespace\":\"kube-system\"},\"spec\":%s}", spec);
    o = json_loads(text, 0, &je);
    if (!o)
        fail_msg("bad test JSON: %s", je.text);
    return o;
}

/* The causes api_prepare gives spec, in err (cleared first). */
static int prepare(const char *spec, ty_error *err)
{
    json_t *o = lease(spec);
    int rc;

    ty_error_clear(err);
    rc = api_prepare(&api_lease, o, NULL, err);
    json_decref(o);
    return rc;
}

static void test_valid(void **state)
{
    ty_error err;
    json_t *o = lease("{\"holderIdentity\":\"a_1\",\"leaseDurationSeconds\":15,"
                      "\"acquireTime\":\"2026-11-28T15:00:00.123456Z\","
                      "\"renewTime\":\"2026-11-28T17:00:01.000001+02:00\","
                      "\"leaseTransitions\":0}");
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_lease, o, NULL, &err), 0);
    /* an offset is written back in UTC, as kube-apiserver stores the time */
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "spec"),
                                                          "renewTime")),
                        "2026-11-28T15:00:01.000001Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "spec"),
                                                          "acquireTime")),
                        "2026-11-28T15:00:00.123456Z");
    json_decref(o);
    /* an empty spec is a lease nobody holds */
    assert_int_equal(prepare("{}", &err), 0);
    /* strategy: Kubernetes' own name, or a qualified name of one's own; then a
     * preferred holder may be named */
    assert_int_equal(prepare("{\"strategy\":\"OldestEmulationVersion\","
                             "\"preferredHolder\":\"b\"}", &err), 0);
    assert_int_equal(prepare("{\"strategy\":\"example.com/mine\"}", &err), 0);
    ty_error_clear(&err);
}

static void test_invalid(void **state)
{
    ty_error err;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(prepare("{\"leaseDurationSeconds\":0,\"leaseTransitions\":-1}", &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_string_equal(cause_msg(&err, "spec.leaseDurationSeconds"),
                        "Invalid value: 0: must be greater than 0");
    assert_string_equal(cause_msg(&err, "spec.leaseTransitions"),
                        "Invalid value: -1: must be greater than or equal to 0");
    assert_string_equal(err.text, "Lease.coordination.k8s.io \"op\" is invalid: "
                        "[spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, "
                        "spec.leaseTransitions: Invalid value: -1: must be greater than or "
                        "equal to 0]");

    assert_int_equal(prepare("{\"preferredHolder\":\"b\"}", &err), -1);
    assert_string_equal(cause_msg(&err, "spec.preferredHolder"),
                        "Forbidden: may only be specified if `strategy` is defined");
    assert_int_equal(prepare("{\"preferredHolder\":\"b\",\"strategy\":\"\"}", &err), -1);
    assert_non_null(cause_msg(&err, "spec.preferredHolder"));
    /* upstream names the field twice in this path */
    assert_string_equal(cause_msg(&err, "spec.strategy.strategy"),
                        "Unsupported value: \"\": supported values: \"OldestEmulationVersion\"");
    assert_int_equal(prepare("{\"strategy\":\"Newest\"}", &err), -1);
    assert_string_equal(cause_msg(&err, "spec.strategy.strategy"),
                        "Unsupported value: \"Newest\": supported values: "
                        "\"OldestEmulationVersion\"");
    assert_int_equal(prepare("{\"strategy\":\"a/b/c\"}", &err), -1);
    assert_non_null(cause_msg(&err, "spec.strategy.strategy"));

    /* MicroTime: six digits of fraction, no fewer, no more */
    static const char *const bad_times[] = {
        "2026-11-28T15:00:00Z", "2026-11-28T15:00:00.123Z", "2026-11-28T15:00:00.123456789Z",
        "2026-11-28 15:00:00.123456Z", "2026-13-28T15:00:00.123456Z", "yesterday", "",
    };
    for (size_t i = 0; i < sizeof(bad_times) / sizeof(*bad_times); i++) {
        char spec[160];
        snprintf(spec, sizeof(spec), "{\"renewTime\":\"%s\"}", bad_times[i]);
        assert_int_equal(prepare(spec, &err), -1);
        const char *m = cause_msg(&err, "spec.renewTime");
        if (!m)
            fail_msg("%s accepted", bad_times[i]);
        assert_non_null(strstr(m, "must be an RFC 3339 time with six digits of fraction"));
    }
    /* null is no time at all */
    assert_int_equal(prepare("{\"renewTime\":null}", &err), 0);
    /* the name is a DNS subdomain */
    json_t *o = lease("{}");
    json_object_set_new(json_object_get(o, "metadata"), "name", json_string("Op_1"));
    ty_error_clear(&err);
    assert_int_equal(api_prepare(&api_lease, o, NULL, &err), -1);
    assert_non_null(cause_msg(&err, "metadata.name"));
    json_decref(o);
    ty_error_clear(&err);
}

static void test_fields_and_types(void **state)
{
    ty_error err;
    json_t *o = lease("{\"holder\":\"a\",\"renewTime\":\"2026-11-28T15:00:00.000000Z\"}");
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_check_unknown_fields(&api_lease, o, &err), 1);
    assert_string_equal(cause_msg(&err, "spec.holder"), "unknown field \"spec.holder\"");
    json_decref(o);

    ty_error_clear(&err);
    o = lease("{\"leaseDurationSeconds\":\"15\"}");
    assert_int_equal(api_check_types(&api_lease, o, &err), -1);
    assert_int_equal(err.code, TY_EBADREQUEST);
    assert_string_equal(err.text, "Lease in version \"v1\" cannot be handled as a Lease: json: "
                        "cannot unmarshal string into Go struct field "
                        "LeaseSpec.spec.leaseDurationSeconds of type int32");
    json_decref(o);
    ty_error_clear(&err);
}

static void test_cells(void **state)
{
    json_t *o = lease("{\"holderIdentity\":\"host_42-ab\"}"), *cols, *cells;
    (void)state;

    json_object_set_new(json_object_get(o, "metadata"), "creationTimestamp",
                        json_string("2026-11-28T15:00:00Z"));
    cols = api_table_columns(&api_lease);
    assert_int_equal(json_array_size(cols), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 1), "name")),
                        "Holder");
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 2), "name")),
                        "Age");
    cells = api_table_cells(&api_lease, o, 1795878000 + 300);
    assert_string_equal(json_string_value(json_array_get(cells, 0)), "op");
    assert_string_equal(json_string_value(json_array_get(cells, 1)), "host_42-ab");
    assert_string_equal(json_string_value(json_array_get(cells, 2)), "5m");
    json_decref(cells);
    json_object_del(json_object_get(o, "spec"), "holderIdentity");
    cells = api_table_cells(&api_lease, o, 1795878000 + 300);
    assert_string_equal(json_string_value(json_array_get(cells, 1)), "");
    json_decref(cells);
    json_decref(cols);
    json_decref(o);
    assert_null(api_lease.short_names[0]);
    assert_true(api_lease.namespaced);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_fields_and_types),
        cmocka_unit_test(test_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
