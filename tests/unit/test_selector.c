#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/selector.h"

static json_t *labels(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (!v)
        fail_msg("bad JSON in test: %s", jerr.text);
    return v;
}

/* Parses sel and reports whether it matches the labels in JSON text. */
static bool matches(const char *sel_text, const char *labels_json)
{
    ty_error err;
    ty_error_init(&err);
    ty_label_selector *sel = label_selector_parse(sel_text, &err);
    if (!sel)
        fail_msg("parse of \"%s\" failed: %s", sel_text, err.text);
    json_t *l = labels_json ? labels(labels_json) : NULL;
    bool m = label_selector_matches(sel, l);
    json_decref(l);
    label_selector_free(sel);
    return m;
}

/* Expects a parse failure whose message contains want. */
static void parse_fails(const char *sel_text, const char *want)
{
    ty_error err;
    ty_error_init(&err);
    ty_label_selector *sel = label_selector_parse(sel_text, &err);
    if (sel)
        fail_msg("\"%s\" parsed but should not have", sel_text);
    assert_int_equal(err.code, TY_EBADREQUEST);
    if (!strstr(err.text, want))
        fail_msg("error for \"%s\" is \"%s\", wanted \"%s\"", sel_text, err.text, want);
}

static void test_equality(void **state)
{
    (void)state;
    assert_true(matches("app=web", "{\"app\":\"web\",\"tier\":\"fe\"}"));
    assert_true(matches("app==web", "{\"app\":\"web\"}"));
    assert_false(matches("app=web", "{\"app\":\"db\"}"));
    assert_false(matches("app=web", "{}"));
    assert_false(matches("app=web", NULL));
    assert_true(matches("app!=web", "{\"app\":\"db\"}"));
    assert_true(matches("app!=web", "{}")); /* missing label satisfies != */
    assert_false(matches("app!=web", "{\"app\":\"web\"}"));
    assert_true(matches(" app = web , tier = fe ", "{\"app\":\"web\",\"tier\":\"fe\"}"));
    assert_false(matches("app=web,tier=fe", "{\"app\":\"web\",\"tier\":\"be\"}"));
    /* "app=" selects the empty value. */
    assert_true(matches("app=", "{\"app\":\"\"}"));
    assert_false(matches("app=", "{\"app\":\"x\"}"));
    assert_false(matches("app=", "{}"));
    assert_true(matches("app==", "{\"app\":\"\"}"));
}

static void test_set_based(void **state)
{
    (void)state;
    assert_true(matches("env in (prod, qa)", "{\"env\":\"qa\"}"));
    assert_false(matches("env in (prod,qa)", "{\"env\":\"dev\"}"));
    assert_false(matches("env in (prod)", "{}"));
    assert_true(matches("env notin (prod,qa)", "{\"env\":\"dev\"}"));
    assert_true(matches("env notin (prod)", "{}"));
    assert_false(matches("env notin (prod)", "{\"env\":\"prod\"}"));
    assert_true(matches("env in ()", "{\"env\":\"\"}"));
    assert_true(matches("env in (a,,b)", "{\"env\":\"\"}"));
    assert_true(matches("env in (,a)", "{\"env\":\"\"}"));
    assert_true(matches("env in (a,)", "{\"env\":\"\"}"));
    assert_false(matches("env in (a,b)", "{\"env\":\"\"}"));
    /* Keywords are plain identifiers where a key or value is expected. */
    assert_true(matches("in in (in,notin)", "{\"in\":\"notin\"}"));
    assert_true(matches("notin notin (x)", "{\"notin\":\"y\"}"));
}

static void test_exists(void **state)
{
    (void)state;
    assert_true(matches("gpu", "{\"gpu\":\"\"}"));
    assert_false(matches("gpu", "{}"));
    assert_true(matches("!gpu", "{}"));
    assert_false(matches("!gpu", "{\"gpu\":\"a100\"}"));
    assert_true(matches("gpu,!spot", "{\"gpu\":\"x\"}"));
    assert_false(matches("gpu,!spot", "{\"gpu\":\"x\",\"spot\":\"true\"}"));
    assert_true(matches("example.com/team", "{\"example.com/team\":\"ml\"}"));
}

static void test_gt_lt(void **state)
{
    (void)state;
    assert_true(matches("rank>2", "{\"rank\":\"3\"}"));
    assert_false(matches("rank>2", "{\"rank\":\"2\"}"));
    assert_false(matches("rank>2", "{\"rank\":\"abc\"}"));
    assert_false(matches("rank>2", "{}"));
    assert_true(matches("rank<2", "{\"rank\":\"-5\"}"));
    parse_fails("rank>abc", "the value must be an integer");
}

static void test_empty_selector(void **state)
{
    ty_error err;
    (void)state;

    ty_error_init(&err);
    ty_label_selector *sel = label_selector_parse("", &err);
    assert_non_null(sel);
    assert_true(label_selector_empty(sel));
    assert_true(label_selector_matches(sel, NULL));
    label_selector_free(sel);
    sel = label_selector_parse("   ", &err);
    assert_non_null(sel);
    assert_true(label_selector_empty(sel));
    label_selector_free(sel);
    sel = label_selector_parse("a=b", &err);
    assert_false(label_selector_empty(sel));
    label_selector_free(sel);
    assert_true(label_selector_empty(NULL));
}

static void test_syntax_errors(void **state)
{
    (void)state;
    parse_fails("app=web,", "found '', expected: identifier after ','");
    parse_fails(",app", "found ',', expected: !, identifier, or 'end of string'");
    parse_fails("app web", "unable to parse requirement: found 'web', expected: in, notin");
    parse_fails("app in prod", "unable to parse requirement: found 'prod' expected: '('");
    parse_fails("app in (a b)", "found 'b', expected: ',' or ')'");
    parse_fails("app in (a", "found '', expected: ',', or identifier");
    parse_fails("app in (=)", "found '=', expected: ',', ')' or identifier");
    parse_fails("app=!", "found '!', expected: identifier");
    parse_fails("app=(x)", "found '(', expected: identifier");
    parse_fails("!app=b", "found '=', expected: ',' or 'end of string'");
    parse_fails("!", "unable to parse requirement: found '', expected: identifier");
    parse_fails("a=b c=d", "found 'c', expected: ',' or 'end of string'");
    parse_fails("app in ()x", "found 'x', expected: ',' or 'end of string'");
}

static void test_validation_errors(void **state)
{
    char longname[80];
    char sel[200];
    (void)state;

    parse_fails("-app=x", "unable to parse requirement: invalid label key \"-app\": name part "
                          "must consist of alphanumeric characters");
    parse_fails("a/b/c=x", "a qualified name must consist of");
    parse_fails("/app=x", "prefix part must be non-empty");
    parse_fails("Example.com/app=x", "prefix part a lowercase RFC 1123 subdomain");
    parse_fails("example.com/=x", "name part must be non-empty");
    parse_fails("app=-bad", "invalid label value: \"-bad\": at key: \"app\": a valid label "
                            "must be an empty string");
    parse_fails("app in (ok, bad_)", "invalid label value: \"bad_\"");

    memset(longname, 'a', 64);
    longname[64] = '\0';
    snprintf(sel, sizeof(sel), "%s=x", longname);
    parse_fails(sel, "name part must be no more than 63 characters");
    snprintf(sel, sizeof(sel), "app=%s", longname);
    parse_fails(sel, "must be no more than 63 characters");
    /* Exactly 63 is fine for both. */
    longname[63] = '\0';
    snprintf(sel, sizeof(sel), "%s=%s", longname, longname);
    ty_label_selector *ok = label_selector_parse(sel, NULL);
    assert_non_null(ok);
    label_selector_free(ok);
}

static void test_name_checks(void **state)
{
    char why[1024];
    (void)state;

    assert_true(label_key_valid("app.kubernetes.io/name", why, sizeof(why)));
    assert_true(label_key_valid("A_b-c.D", why, sizeof(why)));
    assert_false(label_key_valid("", why, sizeof(why)));
    assert_non_null(strstr(why, "name part must be non-empty"));
    assert_false(label_key_valid("a..b-/x", why, sizeof(why)));
    assert_non_null(strstr(why, "prefix part"));
    assert_false(label_key_valid("ex-.com/x", why, sizeof(why)));
    assert_true(label_value_valid("", why, sizeof(why)));
    assert_true(label_value_valid("v1.2_3-x", why, sizeof(why)));
    assert_false(label_value_valid("has space", why, sizeof(why)));
    assert_false(label_value_valid("a/b", NULL, 0));
    assert_true(dns1123_subdomain_valid("a.b-c.d", why, sizeof(why)));
    assert_false(dns1123_subdomain_valid("a.-b", why, sizeof(why)));
    assert_false(dns1123_subdomain_valid("a..b", why, sizeof(why)));
    assert_false(dns1123_subdomain_valid("UPPER", why, sizeof(why)));
    char big[300];
    memset(big, 'a', 254);
    big[254] = '\0';
    assert_false(dns1123_subdomain_valid(big, why, sizeof(why)));
    assert_non_null(strstr(why, "must be no more than 253 characters"));
}

static ty_label_selector *from_json_text(const char *text, ty_error *err)
{
    json_t *j = labels(text);
    ty_label_selector *sel = label_selector_from_json(j, err);
    json_decref(j);
    return sel;
}

static void test_from_json(void **state)
{
    ty_error err;
    (void)state;

    ty_error_init(&err);
    ty_label_selector *sel = from_json_text(
        "{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":["
        "{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"prod\",\"qa\"]},"
        "{\"key\":\"spot\",\"operator\":\"DoesNotExist\"},"
        "{\"key\":\"gpu\",\"operator\":\"Exists\"},"
        "{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"z1\"]}]}",
        &err);
    assert_non_null(sel);
    json_t *l = labels("{\"app\":\"web\",\"env\":\"qa\",\"gpu\":\"1\",\"zone\":\"z2\"}");
    assert_true(label_selector_matches(sel, l));
    json_object_set_new(l, "zone", json_string("z1"));
    assert_false(label_selector_matches(sel, l));
    json_object_del(l, "zone");
    assert_true(label_selector_matches(sel, l));
    json_object_set_new(l, "spot", json_string("yes"));
    assert_false(label_selector_matches(sel, l));
    json_object_del(l, "spot");
    json_object_del(l, "gpu");
    assert_false(label_selector_matches(sel, l));
    json_decref(l);
    label_selector_free(sel);

    /* NULL and {} match everything. */
    sel = label_selector_from_json(NULL, &err);
    assert_non_null(sel);
    assert_true(label_selector_empty(sel));
    label_selector_free(sel);
    sel = from_json_text("{}", &err);
    assert_true(label_selector_matches(sel, NULL));
    label_selector_free(sel);
}

static void from_json_fails(const char *text, const char *want)
{
    ty_error err;
    ty_error_init(&err);
    ty_label_selector *sel = from_json_text(text, &err);
    if (sel)
        fail_msg("%s accepted", text);
    assert_int_equal(err.code, TY_EBADREQUEST);
    if (!strstr(err.text, want))
        fail_msg("error for %s is \"%s\", wanted \"%s\"", text, err.text, want);
}

static void test_from_json_errors(void **state)
{
    (void)state;
    from_json_fails("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Foo\"}]}",
                    "\"Foo\" is not a valid label selector operator");
    from_json_fails("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}",
                    "values set can't be empty");
    from_json_fails("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[]}]}",
                    "values set can't be empty");
    from_json_fails(
        "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
        "values set must be empty for exists and does not exist");
    from_json_fails("{\"matchLabels\":{\"bad key\":\"x\"}}", "invalid label key \"bad key\"");
    from_json_fails("{\"matchLabels\":{\"k\":\"bad value\"}}", "invalid label value");
    from_json_fails("{\"matchLabels\":{\"k\":1}}", "must be a string");
    from_json_fails("{\"matchLabels\":[]}", "matchLabels: must be an object");
    from_json_fails("{\"matchExpressions\":{}}", "matchExpressions: must be a list");
    from_json_fails("{\"matchExpressions\":[{\"operator\":\"In\"}]}", "matchExpressions[0]");
    from_json_fails("[]", "must be an object");
}

static ty_field_selector *fsel(const char *text, const char *const *allowed, ty_error *err)
{
    ty_error_init(err);
    return field_selector_parse(text, allowed, err);
}

static void test_field_selectors(void **state)
{
    static const char *const allowed[] = {"metadata.name", "metadata.namespace", "status.phase",
                                          "spec.nodeName", "spec.replicas", NULL};
    ty_error err;
    (void)state;

    json_t *pod = labels("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ml\"},"
                         "\"spec\":{\"replicas\":3},\"status\":{\"phase\":\"Running\"}}");
    ty_field_selector *sel = fsel("metadata.name=p1,status.phase!=Failed", allowed, &err);
    assert_non_null(sel);
    assert_true(field_selector_matches(sel, pod));
    field_selector_free(sel);

    sel = fsel("status.phase==Pending", allowed, &err);
    assert_false(field_selector_matches(sel, pod));
    field_selector_free(sel);

    /* A missing field compares as "". */
    sel = fsel("spec.nodeName=", allowed, &err);
    assert_true(field_selector_matches(sel, pod));
    field_selector_free(sel);
    sel = fsel("spec.nodeName!=", allowed, &err);
    assert_false(field_selector_matches(sel, pod));
    field_selector_free(sel);

    /* Numbers compare by their JSON text. */
    sel = fsel("spec.replicas=3", allowed, &err);
    assert_true(field_selector_matches(sel, pod));
    field_selector_free(sel);

    /* Empty selector and empty terms. */
    sel = fsel("", allowed, &err);
    assert_true(field_selector_matches(sel, pod));
    field_selector_free(sel);
    sel = fsel("metadata.name=p1,,", allowed, &err);
    assert_non_null(sel);
    assert_true(field_selector_matches(sel, pod));
    field_selector_free(sel);
    assert_true(field_selector_matches(NULL, pod));

    /* NULL allows every field. */
    sel = fsel("metadata.namespace=ml", NULL, &err);
    assert_true(field_selector_matches(sel, pod));
    field_selector_free(sel);
    json_decref(pod);
}

static void test_field_selector_escapes(void **state)
{
    ty_error err;
    (void)state;

    json_t *obj = labels("{\"metadata\":{\"name\":\"a,b=c\\\\d\"}}");
    ty_field_selector *sel = fsel("metadata.name=a\\,b\\=c\\\\d", NULL, &err);
    assert_non_null(sel);
    assert_true(field_selector_matches(sel, obj));
    field_selector_free(sel);
    json_decref(obj);
}

static void field_fails(const char *text, const char *const *allowed, const char *want)
{
    ty_error err;
    ty_field_selector *sel = fsel(text, allowed, &err);
    if (sel)
        fail_msg("field selector \"%s\" accepted", text);
    assert_int_equal(err.code, TY_EBADREQUEST);
    if (!strstr(err.text, want))
        fail_msg("error for \"%s\" is \"%s\", wanted \"%s\"", text, err.text, want);
}

static void test_field_selector_errors(void **state)
{
    static const char *const allowed[] = {"metadata.name", "status.phase", NULL};
    (void)state;

    field_fails("spec.nodeName=n1", allowed, "field label not supported: spec.nodeName");
    field_fails("metadata.name", allowed,
                "invalid selector: 'metadata.name'; can't understand 'metadata.name'");
    field_fails("metadata.name=a,status.phase", allowed, "can't understand 'status.phase'");
    field_fails("metadata.name=a=b", allowed, "unescaped character in value: =");
    field_fails("metadata.name=a\\x", allowed, "invalid escape sequence: \\x");
    field_fails("metadata.name=a\\", allowed, "invalid escape sequence");
}

static void test_json_path_get(void **state)
{
    (void)state;
    json_t *obj = labels("{\"a\":{\"b\":{\"c\":5}},\"l\":[{\"x\":1},{\"x\":2}],\"s\":\"t\"}");
    assert_int_equal(json_integer_value(json_path_get(obj, "a.b.c")), 5);
    assert_true(json_is_object(json_path_get(obj, "a.b")));
    assert_int_equal(json_integer_value(json_path_get(obj, "l.1.x")), 2);
    assert_ptr_equal(json_path_get(obj, ""), obj);
    assert_null(json_path_get(obj, "a.z"));
    assert_null(json_path_get(obj, "a..b"));
    assert_null(json_path_get(obj, "a.b.c.d"));
    assert_null(json_path_get(obj, "s.x"));
    assert_null(json_path_get(obj, "l.9.x"));
    assert_null(json_path_get(obj, "l.x"));
    assert_null(json_path_get(obj, "a."));
    assert_null(json_path_get(NULL, "a"));
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equality),
        cmocka_unit_test(test_set_based),
        cmocka_unit_test(test_exists),
        cmocka_unit_test(test_gt_lt),
        cmocka_unit_test(test_empty_selector),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_validation_errors),
        cmocka_unit_test(test_name_checks),
        cmocka_unit_test(test_from_json),
        cmocka_unit_test(test_from_json_errors),
        cmocka_unit_test(test_field_selectors),
        cmocka_unit_test(test_field_selector_escapes),
        cmocka_unit_test(test_field_selector_errors),
        cmocka_unit_test(test_json_path_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
