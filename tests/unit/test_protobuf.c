/* test_protobuf.c - decoding the protobuf bodies kubectl's typed commands send.
 * The messages are encoded here by hand, field by field, from upstream's
 * generated.proto numbering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "server/protobuf.h"

typedef struct pb_buf {
    unsigned char b[4096];
    size_t n;
} pb_buf;

static void put_varint(pb_buf *p, unsigned long long v)
{
    while (v >= 0x80) {
        p->b[p->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p->b[p->n++] = (unsigned char)v;
}

static void put_bytes(pb_buf *p, int field, const void *data, size_t len)
{
    put_varint(p, (unsigned long long)field << 3 | 2);
    put_varint(p, len);
    memcpy(p->b + p->n, data, len);
    p->n += len;
}

static void put_str(pb_buf *p, int field, const char *s)
{
    put_bytes(p, field, s, strlen(s));
}

static void put_msg(pb_buf *p, int field, const pb_buf *m)
{
    put_bytes(p, field, m->b, m->n);
}

static void put_int(pb_buf *p, int field, unsigned long long v)
{
    put_varint(p, (unsigned long long)field << 3);
    put_varint(p, v);
}

static void put_map_entry(pb_buf *p, int field, const char *k, const char *v)
{
    pb_buf e = {0};
    put_str(&e, 1, k);
    put_str(&e, 2, v);
    put_msg(p, field, &e);
}

/* Wraps raw in the "k8s\0" + runtime.Unknown envelope. */
static void envelope(pb_buf *out, const char *av, const char *kind, const pb_buf *raw)
{
    pb_buf tm = {0}, unk = {0};
    put_str(&tm, 1, av);
    put_str(&tm, 2, kind);
    put_msg(&unk, 1, &tm);
    put_msg(&unk, 2, raw);
    put_str(&unk, 4, "application/vnd.kubernetes.protobuf");
    memcpy(out->b, "k8s\0", 4);
    out->n = 4;
    memcpy(out->b + out->n, unk.b, unk.n);
    out->n += unk.n;
}

static void test_configmap(void **state)
{
    pb_buf meta = {0}, cm = {0}, env = {0};
    ty_error err;
    (void)state;

    put_str(&meta, 1, "keep");
    put_str(&meta, 2, "");          /* empty fields are written by Go, dropped here */
    put_str(&meta, 3, "default");
    put_map_entry(&meta, 11, "app", "web");
    put_msg(&cm, 1, &meta);
    put_map_entry(&cm, 2, "a", "1");
    put_map_entry(&cm, 2, "b", "two");
    put_int(&cm, 4, 0);
    envelope(&env, "v1", "ConfigMap", &cm);

    ty_error_init(&err);
    json_t *o = pb_decode_object(env.b, env.n, &err);
    assert_non_null(o);
    json_t *want = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                              "\"metadata\":{\"name\":\"keep\",\"namespace\":\"default\","
                              "\"labels\":{\"app\":\"web\"}},"
                              "\"data\":{\"a\":\"1\",\"b\":\"two\"}}", 0, NULL);
    assert_true(json_equal(o, want));
    json_decref(o);
    json_decref(want);
}

static void test_secret_bytes_are_base64(void **state)
{
    pb_buf meta = {0}, s = {0}, env = {0}, entry = {0};
    ty_error err;
    (void)state;

    put_str(&meta, 1, "s1");
    put_msg(&s, 1, &meta);
    put_str(&entry, 1, "pw");
    put_bytes(&entry, 2, "hunter2", 7);
    put_msg(&s, 2, &entry);
    put_str(&s, 3, "Opaque");
    envelope(&env, "v1", "Secret", &s);

    ty_error_init(&err);
    json_t *o = pb_decode_object(env.b, env.n, &err);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "data"), "pw")),
                        "aHVudGVyMg==");
    assert_string_equal(json_string_value(json_object_get(o, "type")), "Opaque");
    json_decref(o);
}

static void test_priorityclass_keeps_zero_value(void **state)
{
    pb_buf meta = {0}, pc = {0}, env = {0};
    ty_error err;
    (void)state;

    put_str(&meta, 1, "zero");
    put_msg(&pc, 1, &meta);
    put_int(&pc, 2, 0);
    envelope(&env, "scheduling.k8s.io/v1", "PriorityClass", &pc);
    ty_error_init(&err);
    json_t *o = pb_decode_object(env.b, env.n, &err);
    assert_non_null(o);
    assert_true(json_is_integer(json_object_get(o, "value")));
    assert_int_equal(json_integer_value(json_object_get(o, "value")), 0);
    json_decref(o);
}

static void test_service_ports_and_int_or_string(void **state)
{
    pb_buf meta = {0}, spec = {0}, port = {0}, target = {0}, svc = {0}, env = {0};
    ty_error err;
    (void)state;

    put_str(&meta, 1, "web");
    put_int(&target, 1, 0);  /* type Int */
    put_int(&target, 2, 8080);
    put_str(&port, 1, "http");
    put_str(&port, 2, "TCP");
    put_int(&port, 3, 80);
    put_msg(&port, 4, &target);
    put_msg(&spec, 1, &port);
    put_map_entry(&spec, 2, "app", "web");
    put_str(&spec, 4, "ClusterIP");
    put_msg(&svc, 1, &meta);
    put_msg(&svc, 2, &spec);
    envelope(&env, "v1", "Service", &svc);
    ty_error_init(&err);
    json_t *o = pb_decode_object(env.b, env.n, &err);
    assert_non_null(o);
    json_t *p0 = json_array_get(json_object_get(json_object_get(o, "spec"), "ports"), 0);
    assert_int_equal(json_integer_value(json_object_get(p0, "port")), 80);
    assert_int_equal(json_integer_value(json_object_get(p0, "targetPort")), 8080);
    assert_string_equal(json_string_value(json_object_get(p0, "name")), "http");
    json_decref(o);
}

static void test_bad_input(void **state)
{
    pb_buf raw = {0}, env = {0};
    ty_error err;
    (void)state;

    ty_error_init(&err);
    assert_null(pb_decode_object((const unsigned char *)"{}", 2, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);

    /* A kind this decoder does not know: 415, so the client can tell. */
    put_str(&raw, 1, "x");
    envelope(&env, "v1", "Pod", &raw);
    ty_error_init(&err);
    assert_null(pb_decode_object(env.b, env.n, &err));
    assert_int_equal(err.code, TY_EMEDIATYPE);

    /* Truncated: a length that runs past the end. */
    envelope(&env, "v1", "ConfigMap", &raw);
    ty_error_init(&err);
    assert_null(pb_decode_object(env.b, env.n - 3, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
}

/* A string that is not UTF-8 is refused; it was dropped from the object
 * without a word (a data value, a label, a name). */
static void test_not_utf8_refused(void **state)
{
    static const char *const bad = "a\xff\xfe";
    ty_error err;
    (void)state;

    for (int where = 0; where < 3; where++) {
        pb_buf meta = {0}, cm = {0}, env = {0};
        put_str(&meta, 1, where == 0 ? bad : "cm");
        put_map_entry(&meta, 11, "app", where == 1 ? bad : "web");
        put_msg(&cm, 1, &meta);
        put_map_entry(&cm, 2, "a", where == 2 ? bad : "1");
        envelope(&env, "v1", "ConfigMap", &cm);
        ty_error_init(&err);
        assert_null(pb_decode_object(env.b, env.n, &err));
        assert_int_equal(err.code, TY_EBADREQUEST);
    }
    /* a map key with a NUL: "a\0x" would have become "a" */
    pb_buf meta = {0}, cm = {0}, env = {0}, e = {0};
    put_str(&meta, 1, "cm");
    put_msg(&cm, 1, &meta);
    put_bytes(&e, 1, "a\0x", 3);
    put_str(&e, 2, "v");
    put_msg(&cm, 2, &e);
    envelope(&env, "v1", "ConfigMap", &cm);
    ty_error_init(&err);
    assert_null(pb_decode_object(env.b, env.n, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
}

/* A targetPort whose string is followed by a field cut short: an error,
 * and the string read before it is let go (it leaked: fuzz_protobuf). */
static void test_bad_int_or_string_frees_its_string(void **state)
{
    pb_buf meta = {0}, spec = {0}, port = {0}, target = {0}, svc = {0}, env = {0};
    ty_error err;
    (void)state;

    put_str(&meta, 1, "web");
    put_str(&target, 3, "http");
    target.b[target.n++] = 2 << 3; /* field 2, a varint that never ends */
    target.b[target.n++] = 0x80;
    put_int(&port, 3, 80);
    put_msg(&port, 4, &target);
    put_msg(&spec, 1, &port);
    put_msg(&svc, 1, &meta);
    put_msg(&svc, 2, &spec);
    envelope(&env, "v1", "Service", &svc);
    ty_error_init(&err);
    assert_null(pb_decode_object(env.b, env.n, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configmap),
        cmocka_unit_test(test_bad_int_or_string_frees_its_string),
        cmocka_unit_test(test_secret_bytes_are_base64),
        cmocka_unit_test(test_priorityclass_keeps_zero_value),
        cmocka_unit_test(test_service_ports_and_int_or_string),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_not_utf8_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
