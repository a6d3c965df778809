#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/yaml.h"

static json_t *J(const char *text)
{
    char *buf = strdup(text);
    json_error_t jerr;

    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_t *v = json_loads(buf, JSON_DECODE_ANY, &jerr);
    if (!v)
        fail_msg("bad JSON in test (%s): %s", jerr.text, buf);
    free(buf);
    return v;
}

static void assert_json(const json_t *have, const char *want_text)
{
    json_t *want = J(want_text);
    char *h = json_dumps(have, JSON_ENCODE_ANY | JSON_COMPACT);
    char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!json_equal(have, want))
        fail_msg("have: %s\nwant: %s", h, w);
    free(h);
    free(w);
    json_decref(want);
}

static json_t *load_all(const char *text)
{
    ty_error err;
    ty_error_init(&err);
    json_t *v = yaml_load_all(text, strlen(text), &err);
    if (!v)
        fail_msg("yaml_load_all failed: %s\n--- input:\n%s", err.text, text);
    return v;
}

static json_t *load_one(const char *text)
{
    ty_error err;
    ty_error_init(&err);
    json_t *v = yaml_load_one(text, strlen(text), &err);
    if (!v)
        fail_msg("yaml_load_one failed: %s\n--- input:\n%s", err.text, text);
    return v;
}

static void check_load(const char *yaml, const char *want_json)
{
    json_t *v = load_one(yaml);
    assert_json(v, want_json);
    json_decref(v);
}

/* Expects yaml_load_all to fail with TY_EBADREQUEST and exactly this text. */
static void load_fails(const char *yaml, size_t len, const char *want)
{
    ty_error err;
    ty_error_init(&err);
    json_t *v = yaml_load_all(yaml, len, &err);
    if (v)
        fail_msg("yaml accepted but should not have been:\n%s", yaml);
    assert_int_equal(err.code, TY_EBADREQUEST);
    if (strcmp(err.text, want) != 0)
        fail_msg("error is \"%s\", wanted \"%s\"", err.text, want);
}

/* ---- loading ---------------------------------------------------------- */

static void test_load_manifest(void **state)
{
    (void)state;
    check_load("apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: web\n"
               "  labels: {app: web, tier: \"fe\"}\n"
               "spec:\n"
               "  containers:\n"
               "  - name: c\n"
               "    image: nginx:1.25\n"
               "    args: [\"--port=80\", -v]\n"
               "    ports:\n"
               "    - containerPort: 80\n"
               "    resources:\n"
               "      limits: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}\n",
               "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'web','labels':"
               "{'app':'web','tier':'fe'}},'spec':{'containers':[{'name':'c','image':"
               "'nginx:1.25','args':['--port=80','-v'],'ports':[{'containerPort':80}],"
               "'resources':{'limits':{'cpu':'500m','memory':'1Gi','nvidia.com/gpu':1}}}]}}");
}

static void test_load_keeps_key_order(void **state)
{
    (void)state;
    json_t *v = load_one("z: 1\na: 2\nm: 3\n");
    char *s = json_dumps(v, JSON_COMPACT);
    assert_string_equal(s, "{\"z\":1,\"a\":2,\"m\":3}");
    free(s);
    json_decref(v);
}

static void test_load_multi_document(void **state)
{
    (void)state;
    json_t *docs = load_all("---\na: 1\n---\n# only a comment\n---\n~\n---\nnull\n---\n"
                            "- x\n...\n---\nb: 2\n");
    assert_json(docs, "[{'a':1},['x'],{'b':2}]");
    json_decref(docs);

    docs = load_all("");
    assert_json(docs, "[]");
    json_decref(docs);
    docs = load_all("# nothing here\n");
    assert_json(docs, "[]");
    json_decref(docs);
    docs = load_all("plain text\n");
    assert_json(docs, "['plain text']");
    json_decref(docs);
}

static void test_load_one_counts(void **state)
{
    ty_error err;
    (void)state;

    ty_error_init(&err);
    assert_null(yaml_load_one("", 0, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
    assert_non_null(strstr(err.text, "no document"));
    ty_error_init(&err);
    assert_null(yaml_load_one("a: 1\n---\nb: 2\n", 14, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
    assert_non_null(strstr(err.text, "exactly one document, found 2"));
    assert_null(yaml_load_one(NULL, 0, NULL));
}

static void test_scalar_resolution(void **state)
{
    static const char *cases[][2] = {
        /* null */
        {"v:", "null"}, {"v: ~", "null"}, {"v: null", "null"}, {"v: Null", "null"},
        {"v: NULL", "null"}, {"v: nULL", "'nULL'"},
        /* booleans, YAML 1.1 words in any case */
        {"v: true", "true"}, {"v: True", "true"}, {"v: TRUE", "true"}, {"v: yes", "true"},
        {"v: Yes", "true"}, {"v: ON", "true"}, {"v: on", "true"}, {"v: false", "false"},
        {"v: No", "false"}, {"v: off", "false"}, {"v: OFF", "false"}, {"v: tRuE", "true"},
        {"v: y", "'y'"}, {"v: yess", "'yess'"},
        /* integers */
        {"v: 0", "0"}, {"v: 42", "42"}, {"v: -17", "-17"}, {"v: +5", "5"},
        {"v: 0x1F", "31"}, {"v: 0xff", "255"}, {"v: 0o17", "15"}, {"v: 017", "15"},
        {"v: 1_000_000", "1000000"}, {"v: 9223372036854775807", "9223372036854775807"},
        {"v: -9223372036854775808", "-9223372036854775808"},
        {"v: 0b101", "5"}, {"v: 0x", "'0x'"}, {"v: 0o9", "'0o9'"},
        /* floats; whole ones come out as integers, as in Kubernetes' JSON */
        {"v: 1.5", "1.5"}, {"v: -0.25", "-0.25"}, {"v: .5", "0.5"}, {"v: 1e3", "1000"},
        {"v: 2.5E-1", "0.25"}, {"v: 3.0", "3"}, {"v: 08", "8"},
        {"v: 9223372036854775808", "9223372036854775808.0"},
        /* strings */
        {"v: hello world", "'hello world'"}, {"v: 1.2.3", "'1.2.3'"}, {"v: v1", "'v1'"},
        {"v: 500m", "'500m'"}, {"v: 1Gi", "'1Gi'"}, {"v: .inf", "'.inf'"},
        {"v: 2024-01-31", "'2024-01-31'"}, {"v: 10.0.0.1", "'10.0.0.1'"},
        {"v: \"123\"", "'123'"}, {"v: 'true'", "'true'"}, {"v: \"\"", "''"},
        {"v: 'null'", "'null'"}, {"v: \"a\\tb\\u00e9\"", "'a\\tb\\u00e9'"},
        {"v: 12:30", "'12:30'"}, {"v: a-", "'a-'"},
        /* explicit tags */
        {"v: !!str 123", "'123'"}, {"v: !!str true", "'true'"}, {"v: !!int \"42\"", "42"},
        {"v: !!float 1", "1.0"}, {"v: !!bool yes", "true"}, {"v: !!null ''", "null"},
        {"v: ! 12", "'12'"}, {"v: !custom 12", "12"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = load_one(cases[i][0]);
        json_t *want = J(cases[i][1]);
        json_t *have = json_object_get(v, "v");
        if (!have || !json_equal(have, want)) {
            char *h = json_dumps(have, JSON_ENCODE_ANY);
            fail_msg("%s resolved to %s, wanted %s", cases[i][0], h ? h : "(missing)",
                     cases[i][1]);
        }
        json_decref(want);
        json_decref(v);
    }
}

static void test_keys_are_text(void **state)
{
    (void)state;
    check_load("1: a\ntrue: b\nnull: c\n1.5: d\n\"q\": e\n",
               "{'1':'a','true':'b','null':'c','1.5':'d','q':'e'}");
    check_load("a: 1\na: 2\n", "{'a':2}");
}

static void test_block_scalars(void **state)
{
    (void)state;
    check_load("s: |\n  line1\n  line2\nt: >\n  folded\n  text\nu: |-\n  x\n",
               "{'s':'line1\\nline2\\n','t':'folded text\\n','u':'x'}");
}

static void test_anchors_and_aliases(void **state)
{
    (void)state;
    json_t *v = load_one("base: &b {cpu: 1, mem: 2Gi}\n"
                         "copy: *b\n"
                         "list: [&s scalar, *s]\n");
    assert_json(v, "{'base':{'cpu':1,'mem':'2Gi'},'copy':{'cpu':1,'mem':'2Gi'},"
                   "'list':['scalar','scalar']}");
    /* The expansion is a copy: changing one leaves the other alone. */
    json_object_set_new(json_object_get(v, "copy"), "cpu", json_integer(9));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "base"), "cpu")), 1);
    json_decref(v);

    /* An alias may stand for a key. */
    check_load("k: &name app\n*name : v\n", "{'k':'app','app':'v'}");
    /* Anchors do not cross documents. */
    ty_error err;
    ty_error_init(&err);
    const char *two = "a: &x 1\n---\nb: *x\n";
    assert_null(yaml_load_all(two, strlen(two), &err));
    assert_non_null(strstr(err.text, "unknown anchor 'x' referenced"));
}

static void test_merge_keys(void **state)
{
    (void)state;
    check_load("defaults: &d {image: busybox, pull: Always}\n"
               "c:\n  <<: *d\n  name: x\n  pull: Never\n",
               "{'defaults':{'image':'busybox','pull':'Always'},"
               "'c':{'image':'busybox','pull':'Never','name':'x'}}");
    /* An explicit key before the merge still wins. */
    check_load("a: &a {k: 1, j: 2}\nb: {k: 5, <<: *a}\n",
               "{'a':{'k':1,'j':2},'b':{'k':5,'j':2}}");
    /* From a list of maps the earlier map wins. */
    check_load("p: &p {x: 1}\nq: &q {x: 2, y: 2}\nr:\n  <<: [*p, *q]\n",
               "{'p':{'x':1},'q':{'x':2,'y':2},'r':{'x':1,'y':2}}");
    /* Quoted "<<" is an ordinary key. */
    check_load("\"<<\": {a: 1}\n", "{'<<':{'a':1}}");
    load_fails("a: 1\n<<: [1]\n", 12,
               "yaml: line 2, column 5: map merge requires map or sequence of maps as the value");
    load_fails("<<: text\n", 9,
               "yaml: line 1, column 5: map merge requires map or sequence of maps as the value");
}

static void test_json_input(void **state)
{
    (void)state;
    check_load("{\"kind\": \"Pod\",\n\t\"spec\": {\"replicas\": 3, \"ok\": true, \"x\": null,"
               " \"l\": [1, 2.5, \"s\", {}, []]}}",
               "{'kind':'Pod','spec':{'replicas':3,'ok':true,'x':null,"
               "'l':[1,2.5,'s',{},[]]}}");
    check_load("[\"a\", \"true\", \"1\"]", "['a','true','1']");
}

static void test_syntax_errors(void **state)
{
    (void)state;
    load_fails("a: b\n  c: d\n", 12,
               "yaml: line 2, column 4: mapping values are not allowed in this context");
    load_fails("a:\n\t- b\n", 7,
               "yaml: line 2, column 1: found character that cannot start any token");
    load_fails("k: [1, 2\n", 9, "yaml: line 2, column 1: did not find expected ',' or ']'");
    load_fails("a: 'open\n", 9,
               "yaml: line 2, column 1: found unexpected end of stream");
    load_fails("a: *nope\n", 9, "yaml: line 1, column 4: unknown anchor 'nope' referenced");
    load_fails("? [a]\n: b\n", 10, "yaml: line 1, column 3: mapping keys must be strings");
    load_fails("v: !!int abc\n", 13, "yaml: line 1, column 4: cannot decode !!int `abc`");
    load_fails("v: !!bool 1\n", 12, "yaml: line 1, column 4: cannot decode !!bool `1`");
    load_fails("a: b\nc: \xc3\x28\n", 10, "yaml: line 2, column 5: invalid trailing UTF-8 octet");
}

static char *repeat(const char *unit, int n, const char *tail_unit)
{
    size_t ul = strlen(unit), tl = strlen(tail_unit);
    char *s = malloc((ul + tl) * (size_t)n + 2);
    size_t o = 0;
    for (int i = 0; i < n; i++, o += ul)
        memcpy(s + o, unit, ul);
    for (int i = 0; i < n; i++, o += tl)
        memcpy(s + o, tail_unit, tl);
    s[o] = '\0';
    return s;
}

static void test_depth_limit(void **state)
{
    (void)state;
    char *ok = repeat("[", 100, "]");
    json_t *v = load_all(ok);
    assert_int_equal(json_array_size(v), 1);
    json_decref(v);
    free(ok);

    char *deep = repeat("[", 101, "]");
    load_fails(deep, strlen(deep), "yaml: line 1, column 101: exceeded max depth of 100");
    free(deep);

    char *maps = repeat("{a: ", 150, "}");
    ty_error err;
    ty_error_init(&err);
    assert_null(yaml_load_all(maps, strlen(maps), &err));
    assert_non_null(strstr(err.text, "exceeded max depth of 100"));
    free(maps);

    /* An alias that would push a deep tree past the limit. */
    char *inner = repeat("[", 60, "]");
    char doc[512];
    snprintf(doc, sizeof(doc), "a: &x %s\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*x]]]]]]]]]]"
                               "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", inner);
    ty_error_init(&err);
    assert_null(yaml_load_all(doc, strlen(doc), &err));
    assert_non_null(strstr(err.text, "exceeded max depth of 100"));
    free(inner);
}

static void test_billion_laughs(void **state)
{
    char doc[4096];
    size_t o = 0;
    (void)state;

    o += (size_t)snprintf(doc + o, sizeof(doc) - o, "a: &a [x,x,x,x,x,x,x,x,x,x]\n");
    for (int i = 1; i <= 9; i++) {
        o += (size_t)snprintf(doc + o, sizeof(doc) - o, "l%d: &l%d [", i, i);
        for (int j = 0; j < 10; j++)
            o += (size_t)snprintf(doc + o, sizeof(doc) - o, "%s*%s%.0d", j ? "," : "",
                                  i == 1 ? "a" : "l", i == 1 ? 0 : i - 1);
        o += (size_t)snprintf(doc + o, sizeof(doc) - o, "]\n");
    }
    ty_error err;
    ty_error_init(&err);
    assert_null(yaml_load_all(doc, o, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
    assert_non_null(strstr(err.text, "document contains excessive aliasing"));

    /* Moderate reuse is fine. */
    json_t *v = load_all("a: &a [1,2,3]\nb: [*a, *a, *a, *a]\n");
    assert_int_equal(json_array_size(json_object_get(json_array_get(v, 0), "b")), 4);
    json_decref(v);
}

/* Few aliases of one big string: 400 of 256 KiB built 100 MB for one
 * request and answered 500. Alias expansion is counted in bytes too (4 MiB
 * a stream), a 400. */
static void test_aliases_of_big_strings(void **state)
{
    size_t big = 256 * 1024, cap = 2 * big + 64 + 400 * 16;
    char *doc = malloc(cap);
    size_t o;
    ty_error err;
    json_t *v;

    (void)state;
    o = (size_t)snprintf(doc, cap, "data:\n  a0: &s ");
    memset(doc + o, 'x', big);
    o += big;
    doc[o++] = '\n';
    for (int i = 1; i < 400; i++)
        o += (size_t)snprintf(doc + o, cap - o, "  a%d: *s\n", i);
    ty_error_init(&err);
    assert_null(yaml_load_all(doc, o, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
    assert_non_null(strstr(err.text, "document contains excessive aliasing"));
    ty_error_clear(&err);
    /* and across the documents of a stream, as keys too */
    o = 0;
    for (int d = 0; d < 2; d++) {
        o += (size_t)snprintf(doc + o, cap - o, "%sk: &s ", d ? "---\n" : "");
        memset(doc + o, 'y', big);
        o += big;
        doc[o++] = '\n';
        for (int i = 1; i < 10; i++)
            o += (size_t)snprintf(doc + o, cap - o, d ? "a%d: *s\n" : "? *s\n: %d\n", i);
        if (d == 0) {
            /* 9 aliases as keys (the same key: one member) fit */
            v = yaml_load_all(doc, o, &err);
            assert_non_null(v);
            json_decref(v);
        }
    }
    assert_null(yaml_load_all(doc, o, &err));
    if (!strstr(err.text, "document contains excessive aliasing"))
        fail_msg("stream: %s", err.text);
    ty_error_clear(&err);
    /* a few are fine */
    o = (size_t)snprintf(doc, cap, "a0: &s ");
    memset(doc + o, 'z', big);
    o += big;
    o += (size_t)snprintf(doc + o, cap - o, "\na1: *s\na2: *s\n");
    v = yaml_load_all(doc, o, &err);
    assert_non_null(v);
    assert_int_equal(json_string_length(json_object_get(json_array_get(v, 0), "a2")), big);
    json_decref(v);
    free(doc);
}

/* ---- dumping ---------------------------------------------------------- */

static void check_dump(const char *json_text, const char *want)
{
    json_t *v = J(json_text);
    char *y = yaml_dump(v);
    assert_non_null(y);
    if (strcmp(y, want) != 0)
        fail_msg("dump of %s:\n%s\nwanted:\n%s", json_text, y, want);
    /* And it reads back as the same value. */
    json_t *back = load_one(y);
    if (!json_equal(back, v))
        fail_msg("dump of %s does not read back the same:\n%s", json_text, y);
    json_decref(back);
    free(y);
    json_decref(v);
}

/* A float with 17 significant digits and no fraction printed as an integer
 * and read back as one (found by fuzz_yaml). */
static void test_dump_big_float_stays_float(void **state)
{
    (void)state;
    check_dump("{\"a\": 33333333333555556.0}", "a: 33333333333555556.0\n");
    check_dump("{\"a\": 2.5, \"b\": 1e300}", "a: 2.5\nb: 1e+300\n");
}

/* Keys past YAML's 1024-character limit for implicit keys are written as
 * explicit keys ("? key" then ":"), whatever the value (found by
 * fuzz_yaml: a long key dumped as "key: v" did not load again). */
static void test_dump_long_key(void **state)
{
    (void)state;
    char key[1500];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    json_t *in = json_pack("{s:{s:s, s:[i, i], s:{s:s}}, s:s}", "outer", key, "v", "list", 1, 2,
                           "m", "a", "b", key, "c");
    json_object_set_new(json_object_get(in, "outer"), "short", json_string("x"));
    json_t *obj = json_object_get(in, "outer");
    json_t *copy = json_deep_copy(obj);
    /* the long key with each kind of value */
    json_object_set_new(obj, key, json_string("scalar"));
    char key2[1500], key3[1500];
    memcpy(key2, key, sizeof(key));
    key2[0] = 'a';
    memcpy(key3, key, sizeof(key));
    key3[0] = 'b';
    json_object_set_new(obj, key2, json_pack("[s, s]", "x", "y"));
    json_object_set_new(obj, key3, json_pack("{s:s}", "p", "q"));
    char *text = yaml_dump(in);
    assert_non_null(text);
    assert_non_null(strstr(text, "? kkk"));
    json_t *back = load_one(text);
    assert_true(json_equal(in, back));
    json_decref(back);
    free(text);
    json_decref(copy);
    json_decref(in);
}

static void test_dump_kubectl_layout(void **state)
{
    (void)state;
    check_dump("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'web','labels':{'app':'web'},"
               "'annotations':{}},'spec':{'containers':[{'name':'c','image':'nginx',"
               "'args':['--port=80','-v'],'ports':[{'containerPort':80,'protocol':'TCP'}],"
               "'env':[],'resources':{}}],'nodeSelector':{'gpu':'true'}},"
               "'status':{'phase':'Running'}}",
               "apiVersion: v1\n"
               "kind: Pod\n"
               "metadata:\n"
               "  name: web\n"
               "  labels:\n"
               "    app: web\n"
               "  annotations: {}\n"
               "spec:\n"
               "  containers:\n"
               "  - name: c\n"
               "    image: nginx\n"
               "    args:\n"
               "    - --port=80\n"
               "    - -v\n"
               "    ports:\n"
               "    - containerPort: 80\n"
               "      protocol: TCP\n"
               "    env: []\n"
               "    resources: {}\n"
               "  nodeSelector:\n"
               "    gpu: \"true\"\n"
               "status:\n"
               "  phase: Running\n");
}

static void test_dump_scalars(void **state)
{
    (void)state;
    check_dump("{'i':-5,'f':1.5,'g':0.1,'t':true,'n':null,'big':9007199254740993}",
               "i: -5\nf: 1.5\ng: 0.1\nt: true\n\"n\": null\nbig: 9007199254740993\n");
    check_dump("'just a string'", "just a string\n");
    check_dump("42", "42\n");
    check_dump("{}", "{}\n");
    check_dump("[]", "[]\n");
    check_dump("[[1,2],[[]],[{'a':1,'b':[]}]]",
               "- - 1\n  - 2\n- - []\n- - a: 1\n    b: []\n");
}

static void test_dump_quoting(void **state)
{
    static const char *cases[][2] = {
        {"plain", "v: plain\n"},
        {"two words", "v: two words\n"},
        {"", "v: \"\"\n"},
        {"true", "v: \"true\"\n"},
        {"Yes", "v: \"Yes\"\n"},
        {"off", "v: \"off\"\n"},
        {"y", "v: \"y\"\n"},
        {"null", "v: \"null\"\n"},
        {"~", "v: \"~\"\n"},
        {"123", "v: \"123\"\n"},
        {"-1.5", "v: \"-1.5\"\n"},
        {"1e3", "v: \"1e3\"\n"},
        {"0x1F", "v: \"0x1F\"\n"},
        {"0755", "v: \"0755\"\n"},
        {"1_000", "v: \"1_000\"\n"},
        {"12:30", "v: \"12:30\"\n"},
        {"2024-01-31T10:00:00Z", "v: \"2024-01-31T10:00:00Z\"\n"},
        {" lead", "v: ' lead'\n"},
        {"trail ", "v: 'trail '\n"},
        {"a: b", "v: 'a: b'\n"},
        {"key:", "v: 'key:'\n"},
        {"a #b", "v: 'a #b'\n"},
        {"#x", "v: '#x'\n"},
        {"*", "v: '*'\n"},
        {"&a", "v: '&a'\n"},
        {"!x", "v: '!x'\n"},
        {"- x", "v: '- x'\n"},
        {"-", "v: '-'\n"},
        {"[a]", "v: '[a]'\n"},
        {"{a}", "v: '{a}'\n"},
        {"'q'", "v: '''q'''\n"},
        {"\"dq\"", "v: '\"dq\"'\n"},
        {"@at", "v: '@at'\n"},
        {"%p", "v: '%p'\n"},
        {"---", "v: '---'\n"},
        {"it's", "v: it's\n"},
        {"a,b", "v: a,b\n"},
        {"-x", "v: -x\n"},
        {"http://example.com:80/x", "v: http://example.com:80/x\n"},
        {"10.0.0.1", "v: 10.0.0.1\n"},
        {"500m", "v: 500m\n"},
        {"v1.2.3", "v: v1.2.3\n"},
        {"tab\there", "v: \"tab\\there\"\n"},
        {"bell\x07", "v: \"bell\\x07\"\n"},
        {"caf\xc3\xa9", "v: caf\xc3\xa9\n"},
        {"a\xe2\x80\xa8" "b", "v: \"a\\Lb\"\n"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *obj = json_pack("{s:s}", "v", cases[i][0]);
        char *y = yaml_dump(obj);
        if (strcmp(y, cases[i][1]) != 0)
            fail_msg("dump of \"%s\" is [%s], wanted [%s]", cases[i][0], y, cases[i][1]);
        json_t *back = load_one(y);
        if (!json_equal(back, obj))
            fail_msg("\"%s\" does not read back from [%s]", cases[i][0], y);
        json_decref(back);
        free(y);
        json_decref(obj);
    }
}

static void test_dump_keys(void **state)
{
    (void)state;
    check_dump("{'on':1,'123':2,'a b':3,'app.kubernetes.io/name':4,'':5,'x: y':6}",
               "\"on\": 1\n\"123\": 2\na b: 3\napp.kubernetes.io/name: 4\n\"\": 5\n'x: y': 6\n");
    check_dump("{'multi\\nline':1}", "\"multi\\nline\": 1\n");
}

static void test_dump_multiline(void **state)
{
    (void)state;
    check_dump("{'script':'set -e\\necho hi\\n'}", "script: |\n  set -e\n  echo hi\n");
    check_dump("{'s':'a\\nb'}", "s: |-\n  a\n  b\n");
    check_dump("{'s':'a\\n\\nb\\n\\n'}", "s: |+\n  a\n\n  b\n\n");
    check_dump("{'d':{'s':'x\\ny'}}", "d:\n  s: |-\n    x\n    y\n");
    check_dump("['one\\ntwo']", "- |-\n  one\n  two\n");
    /* Leading space or trailing spaces cannot be a plain literal block. */
    check_dump("{'s':' a\\nb'}", "s: \" a\\nb\"\n");
    check_dump("{'s':'a \\nb'}", "s: \"a \\nb\"\n");
    check_dump("{'s':'\\n'}", "s: \"\\n\"\n");
}

static void test_dump_roundtrip_manifest(void **state)
{
    (void)state;
    const char *text = "apiVersion: kubeflow.org/v1\n"
                       "kind: PyTorchJob\n"
                       "metadata:\n"
                       "  name: mnist\n"
                       "  annotations:\n"
                       "    note: |\n"
                       "      first line\n"
                       "      second: line # not a comment\n"
                       "spec:\n"
                       "  pytorchReplicaSpecs:\n"
                       "    Master:\n"
                       "      replicas: 1\n"
                       "      restartPolicy: OnFailure\n"
                       "      template:\n"
                       "        spec:\n"
                       "          containers:\n"
                       "          - name: pytorch\n"
                       "            image: pytorch:2.1\n"
                       "            command:\n"
                       "            - python\n"
                       "            - -c\n"
                       "            - 'print(\"hi: there\")'\n"
                       "            env:\n"
                       "            - name: FLAG\n"
                       "              value: \"true\"\n"
                       "            - name: EMPTY\n"
                       "              value: \"\"\n"
                       "            resources:\n"
                       "              limits:\n"
                       "                nvidia.com/gpu: 2\n";
    json_t *v = load_one(text);
    char *y = yaml_dump(v);
    assert_string_equal(y, text);
    free(y);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_manifest),
        cmocka_unit_test(test_load_keeps_key_order),
        cmocka_unit_test(test_load_multi_document),
        cmocka_unit_test(test_load_one_counts),
        cmocka_unit_test(test_scalar_resolution),
        cmocka_unit_test(test_keys_are_text),
        cmocka_unit_test(test_block_scalars),
        cmocka_unit_test(test_anchors_and_aliases),
        cmocka_unit_test(test_aliases_of_big_strings),
        cmocka_unit_test(test_merge_keys),
        cmocka_unit_test(test_json_input),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_dump_kubectl_layout),
        cmocka_unit_test(test_dump_long_key),
        cmocka_unit_test(test_dump_scalars),
        cmocka_unit_test(test_dump_quoting),
        cmocka_unit_test(test_dump_big_float_stays_float),
        cmocka_unit_test(test_dump_keys),
        cmocka_unit_test(test_dump_multiline),
        cmocka_unit_test(test_dump_roundtrip_manifest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
