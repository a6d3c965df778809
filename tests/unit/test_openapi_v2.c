/* test_openapi_v2.c - the /openapi/v2 document and its protobuf encoding
 * (gnostic's openapi.v2.Document), read back here with a small wire-format
 * reader by the field numbers of openapi_v2.proto. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "api/registry.h"

typedef struct span {
    const unsigned char *p;
    size_t n;
} span;

static int varint(span *s, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && s->n; shift += 7) {
        unsigned char c = *s->p++;
        s->n--;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* The nth (from 0) length-delimited occurrence of field in msg. Fails the
 * test on malformed input or on a wire type this encoder never writes. */
static bool field_at(span msg, int field, int nth, span *out)
{
    while (msg.n) {
        uint64_t key, v;
        assert_int_equal(varint(&msg, &key), 0);
        if ((key & 7) == 0) {
            assert_int_equal(varint(&msg, &v), 0);
            continue;
        }
        assert_int_equal(key & 7, 2);
        assert_int_equal(varint(&msg, &v), 0);
        assert_true(v <= msg.n);
        if ((int)(key >> 3) == field && nth-- == 0) {
            *out = (span){msg.p, (size_t)v};
            return true;
        }
        msg.p += v;
        msg.n -= v;
    }
    return false;
}

static bool field_is(span msg, int field, const char *want)
{
    span s;
    return field_at(msg, field, 0, &s) && s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
}

/* The value of the Named* entry (name 1, value 2) called name among msg's field. */
static bool named(span msg, int field, const char *name, span *value)
{
    span e;
    for (int i = 0; field_at(msg, field, i, &e); i++)
        if (field_is(e, 1, name))
            return field_at(e, 2, 0, value) || (*value = (span){e.p, 0}, true);
    return false;
}

static void test_json_document(void **state)
{
    json_t *doc = api_openapi_v2(), *paths, *op, *p;
    size_t i;
    bool fv = false;
    (void)state;

    assert_string_equal(json_string_value(json_object_get(doc, "swagger")), "2.0");
    assert_int_equal(json_object_size(json_object_get(doc, "definitions")), 0);
    paths = json_object_get(doc, "paths");
    op = json_object_get(json_object_get(paths, "/api/v1/namespaces/{namespace}/pods/{name}"),
                         "patch");
    assert_non_null(op);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(op, "x-kubernetes-group-version-kind"), "kind")),
                        "Pod");
    json_array_foreach(json_object_get(op, "parameters"), i, p)
        fv |= strcmp(json_string_value(json_object_get(p, "name")), "fieldValidation") == 0 &&
              strcmp(json_string_value(json_object_get(p, "in")), "query") == 0;
    assert_true(fv);
    /* every served group-version is there, not only the core one */
    assert_non_null(json_object_get(paths, "/apis/kubeflow.org/v1/namespaces/{namespace}/"
                                           "pytorchjobs/{name}"));
    assert_non_null(json_object_get(paths, "/apis/scheduling.volcano.sh/v1beta1/queues"));
    json_decref(doc);
}

static void test_protobuf_encoding(void **state)
{
    json_t *doc = api_openapi_v2();
    size_t len = 0;
    char *pb = api_openapi_v2_protobuf(doc, &len);
    span d, info, paths, item, op, ext, any, par, q;
    bool fv = false;
    (void)state;

    assert_non_null(pb);
    d = (span){(const unsigned char *)pb, len};
    assert_true(field_is(d, 1, "2.0"));                       /* Document.swagger */
    assert_true(field_at(d, 2, 0, &info));                    /* Document.info */
    assert_true(field_is(info, 1, "Kubernetes"));             /* Info.title */
    assert_true(field_at(d, 8, 0, &paths));                   /* Document.paths */
    /* Paths.path (2): NamedPathItem; PathItem.patch (8): Operation */
    assert_true(named(paths, 2, "/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs/{name}",
                      &item));
    assert_true(field_at(item, 8, 0, &op));
    assert_true(field_is(op, 5, "patchKubeflowOrgV1NamespacedPyTorchJob")); /* operation_id */
    /* Operation.vendor_extension (13): NamedAny, Any.yaml (2) */
    assert_true(named(op, 13, "x-kubernetes-group-version-kind", &ext));
    assert_true(field_at(ext, 2, 0, &any));
    json_t *gvk = json_loadb((const char *)any.p, any.n, 0, NULL);
    assert_non_null(gvk);
    assert_string_equal(json_string_value(json_object_get(gvk, "group")), "kubeflow.org");
    assert_string_equal(json_string_value(json_object_get(gvk, "version")), "v1");
    assert_string_equal(json_string_value(json_object_get(gvk, "kind")), "PyTorchJob");
    json_decref(gvk);
    /* Operation.parameters (8): ParametersItem.parameter (1) -> Parameter.non_body (2)
     * -> NonBodyParameter.query (3) -> QueryParameterSubSchema.name (4), in (2) */
    for (int i = 0; field_at(op, 8, i, &par); i++) {
        span a, b;
        if (field_at(par, 1, 0, &a) && field_at(a, 2, 0, &b) && field_at(b, 3, 0, &q) &&
            field_is(q, 4, "fieldValidation")) {
            assert_true(field_is(q, 2, "query"));
            fv = true;
        }
    }
    assert_true(fv);
    /* A path parameter goes in NonBodyParameter.path (4), required set (1 = true). */
    assert_true(field_at(item, 9, 0, &par));                  /* PathItem.parameters */
    {
        span a, b, pp;
        uint64_t key, v;
        assert_true(field_at(par, 1, 0, &a) && field_at(a, 2, 0, &b) && field_at(b, 4, 0, &pp));
        assert_true(field_is(pp, 4, "name"));
        assert_int_equal(varint(&pp, &key), 0);
        assert_int_equal(key, 1 << 3); /* required, a varint first */
        assert_int_equal(varint(&pp, &v), 0);
        assert_int_equal(v, 1);
    }
    free(pb);
    json_decref(doc);
}

static void test_varint_lengths(void **state)
{
    /* A document bigger than 2^14 bytes: its lengths take three varint bytes
     * and the reader above walks all of them back. */
    json_t *doc = api_openapi_v2();
    size_t len = 0;
    char *pb = api_openapi_v2_protobuf(doc, &len);
    span d = {(const unsigned char *)pb, len}, paths;
    (void)state;

    assert_true(len > (1u << 14));
    assert_true(field_at(d, 8, 0, &paths));
    assert_int_equal((size_t)(paths.p - d.p) + paths.n, len); /* paths runs to the end */
    free(pb);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_document),
        cmocka_unit_test(test_protobuf_encoding),
        cmocka_unit_test(test_varint_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
