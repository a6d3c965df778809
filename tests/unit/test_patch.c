#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/registry.h"
#include "api/schema.h"
#include "model/patch.h"

/* JSON from text written with single quotes, to keep the tests readable. */
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
    if (!json_equal(have, want)) {
        char *h = json_dumps(have, JSON_ENCODE_ANY | JSON_COMPACT);
        char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
        print_error("have: %s\nwant: %s\n", h, w);
        free(h);
        free(w);
        json_decref(want);
        fail();
    }
    json_decref(want);
}

/* Same as assert_json, but object key order matters too. */
static void assert_json_text(const json_t *have, const char *want_text)
{
    json_t *want = J(want_text);
    char *h = json_dumps(have, JSON_ENCODE_ANY | JSON_COMPACT);
    char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
    if (strcmp(h, w) != 0)
        print_error("have: %s\nwant: %s\n", h, w);
    assert_string_equal(h, w);
    free(h);
    free(w);
    json_decref(want);
}

/* ---- merge patch ------------------------------------------------------ */

static void check_merge(const char *target, const char *patch, const char *want)
{
    json_t *t = J(target), *p = J(patch);
    char *before = json_dumps(t, JSON_ENCODE_ANY | JSON_COMPACT);
    json_t *out = patch_merge(t, p);
    assert_non_null(out);
    assert_json(out, want);
    char *after = json_dumps(t, JSON_ENCODE_ANY | JSON_COMPACT);
    assert_string_equal(before, after); /* target untouched */
    free(before);
    free(after);
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

static void test_merge_patch_rfc7386(void **state)
{
    (void)state;
    /* The examples of RFC 7386 appendix A. */
    check_merge("{'a':'b'}", "{'a':'c'}", "{'a':'c'}");
    check_merge("{'a':'b'}", "{'b':'c'}", "{'a':'b','b':'c'}");
    check_merge("{'a':'b'}", "{'a':null}", "{}");
    check_merge("{'a':'b','b':'c'}", "{'a':null}", "{'b':'c'}");
    check_merge("{'a':['b']}", "{'a':'c'}", "{'a':'c'}");
    check_merge("{'a':'c'}", "{'a':['b']}", "{'a':['b']}");
    check_merge("{'a':{'b':'c'}}", "{'a':{'b':'d','c':null}}", "{'a':{'b':'d'}}");
    check_merge("{'a':[{'b':'c'}]}", "{'a':[1]}", "{'a':[1]}");
    check_merge("['a','b']", "['c','d']", "['c','d']");
    check_merge("{'a':'b'}", "['c']", "['c']");
    check_merge("{'a':'foo'}", "null", "null");
    check_merge("{'a':'foo'}", "'bar'", "'bar'");
    check_merge("{'e':null}", "{'a':1}", "{'e':null,'a':1}");
    check_merge("[1,2]", "{'a':'b','c':null}", "{'a':'b'}");
    check_merge("{}", "{'a':{'bb':{'ccc':null}}}", "{'a':{'bb':{}}}");
}

static void test_merge_patch_kube_objects(void **state)
{
    (void)state;
    check_merge("{'metadata':{'name':'a','labels':{'app':'x','tier':'fe'}},'spec':{'r':1}}",
                "{'metadata':{'labels':{'tier':null,'new':'y'}},'spec':{'r':3}}",
                "{'metadata':{'name':'a','labels':{'app':'x','new':'y'}},'spec':{'r':3}}");
    /* Lists are replaced wholesale by a merge patch. */
    check_merge("{'spec':{'containers':[{'name':'a','image':'1'},{'name':'b'}]}}",
                "{'spec':{'containers':[{'name':'a','image':'2'}]}}",
                "{'spec':{'containers':[{'name':'a','image':'2'}]}}");
    /* Keys keep the target's order. */
    json_t *t = J("{'z':1,'a':2,'m':3}"), *p = J("{'a':20,'n':4}");
    json_t *out = patch_merge(t, p);
    assert_json_text(out, "{'z':1,'a':20,'m':3,'n':4}");
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

static void test_merge_diff(void **state)
{
    const char *pairs[][2] = {
        {"{'a':1,'b':{'c':2,'d':3},'e':[1]}", "{'a':1,'b':{'c':5,'d':3},'e':[1,2],'f':'n'}"},
        {"{'a':1,'b':2}", "{'a':1}"},
        {"{'a':{'x':1}}", "{'a':'flat'}"},
        {"{'a':'flat'}", "{'a':{'x':1}}"},
        {"{}", "{}"},
        {"{'m':{'l':{'k':'v','j':'w'}}}", "{'m':{'l':{'k':'v'}}}"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        json_t *a = J(pairs[i][0]), *b = J(pairs[i][1]);
        json_t *d = patch_merge_diff(a, b);
        assert_non_null(d);
        json_t *applied = patch_merge(a, d);
        assert_true(json_equal(applied, b));
        json_decref(applied);
        json_decref(d);
        json_decref(a);
        json_decref(b);
    }

    json_t *a = J("{'a':1,'b':{'c':2,'d':3},'x':true}");
    json_t *b = J("{'a':1,'b':{'c':2,'d':4},'y':[1]}");
    json_t *d = patch_merge_diff(a, b);
    assert_json(d, "{'b':{'d':4},'y':[1],'x':null}");
    json_decref(d);
    d = patch_merge_diff(a, a);
    assert_json(d, "{}");
    json_decref(d);
    json_decref(a);
    json_decref(b);
}

/* ---- JSON patch ------------------------------------------------------- */

static void check_json_patch(const char *target, const char *ops, const char *want)
{
    ty_error err;
    json_t *t = J(target), *p = J(ops);
    ty_error_init(&err);
    json_t *out = patch_json(t, p, &err);
    if (!out)
        fail_msg("json patch %s failed: %s", ops, err.text);
    assert_json(out, want);
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

/* Expects failure with code and a message containing want; the target must
 * be untouched. */
static void json_patch_fails(const char *target, const char *ops, ty_errcode code,
                             const char *want)
{
    ty_error err;
    json_t *t = J(target), *p = J(ops);
    json_t *copy = json_deep_copy(t);
    ty_error_init(&err);
    json_t *out = patch_json(t, p, &err);
    if (out)
        fail_msg("json patch %s applied but should not have", ops);
    assert_int_equal(err.code, code);
    if (!strstr(err.text, want))
        fail_msg("error for %s is \"%s\", wanted \"%s\"", ops, err.text, want);
    assert_true(json_equal(t, copy));
    json_decref(copy);
    json_decref(t);
    json_decref(p);
}

static void test_json_patch_ops(void **state)
{
    (void)state;
    check_json_patch("{'a':1}", "[{'op':'add','path':'/b','value':{'c':[1]}}]",
                     "{'a':1,'b':{'c':[1]}}");
    check_json_patch("{'a':1}", "[{'op':'add','path':'/a','value':2}]", "{'a':2}");
    check_json_patch("{'l':[1,2]}", "[{'op':'add','path':'/l/1','value':9}]", "{'l':[1,9,2]}");
    check_json_patch("{'l':[1,2]}", "[{'op':'add','path':'/l/2','value':9}]", "{'l':[1,2,9]}");
    check_json_patch("{'l':[1,2]}", "[{'op':'add','path':'/l/-','value':3}]", "{'l':[1,2,3]}");
    check_json_patch("{'l':[1,2]}", "[{'op':'add','path':'','value':[7]}]", "[7]");
    check_json_patch("{'a':1,'b':2}", "[{'op':'remove','path':'/a'}]", "{'b':2}");
    check_json_patch("{'l':[1,2,3]}", "[{'op':'remove','path':'/l/0'}]", "{'l':[2,3]}");
    check_json_patch("{'a':{'b':1}}", "[{'op':'replace','path':'/a/b','value':null}]",
                     "{'a':{'b':null}}");
    check_json_patch("{'l':[1,2,3]}", "[{'op':'replace','path':'/l/2','value':'x'}]",
                     "{'l':[1,2,'x']}");
    check_json_patch("{'a':1}", "[{'op':'replace','path':'','value':{'z':0}}]", "{'z':0}");
    check_json_patch("{'a':{'b':1},'c':{}}", "[{'op':'move','from':'/a/b','path':'/c/d'}]",
                     "{'a':{},'c':{'d':1}}");
    check_json_patch("{'l':[1,2,3]}", "[{'op':'move','from':'/l/0','path':'/l/-'}]",
                     "{'l':[2,3,1]}");
    check_json_patch("{'a':1}", "[{'op':'move','from':'/a','path':'/a'}]", "{'a':1}");
    check_json_patch("{'a':{'b':[1]}}", "[{'op':'copy','from':'/a','path':'/c'}]",
                     "{'a':{'b':[1]},'c':{'b':[1]}}");
    check_json_patch("{'a':[1,{'b':'x'}]}",
                     "[{'op':'test','path':'/a','value':[1,{'b':'x'}]},"
                     "{'op':'test','path':'/a/0','value':1.0}]",
                     "{'a':[1,{'b':'x'}]}");
    /* Operations apply in sequence. */
    check_json_patch("{}",
                     "[{'op':'add','path':'/a','value':[]},{'op':'add','path':'/a/-','value':1},"
                     "{'op':'add','path':'/a/0','value':0},{'op':'copy','from':'/a','path':'/b'},"
                     "{'op':'remove','path':'/a/1'}]",
                     "{'a':[0],'b':[0,1]}");
    check_json_patch("{'a':1}", "[]", "{'a':1}");
}

static void test_json_patch_pointer_escapes(void **state)
{
    (void)state;
    check_json_patch("{'a/b':1,'m~n':2}",
                     "[{'op':'replace','path':'/a~1b','value':10},"
                     "{'op':'remove','path':'/m~0n'},"
                     "{'op':'add','path':'/~01','value':'t'}]",
                     "{'a/b':10,'~1':'t'}");
    check_json_patch("{'':{'':5}}", "[{'op':'replace','path':'//','value':6}]", "{'':{'':6}}");
    check_json_patch("{'metadata':{'annotations':{'example.com/x':'1'}}}",
                     "[{'op':'replace','path':'/metadata/annotations/example.com~1x',"
                     "'value':'2'}]",
                     "{'metadata':{'annotations':{'example.com/x':'2'}}}");
}

static void test_json_patch_malformed(void **state)
{
    (void)state;
    json_patch_fails("{}", "{'op':'add'}", TY_EBADREQUEST, "must be a JSON array");
    json_patch_fails("{}", "[1]", TY_EBADREQUEST, "not an object");
    json_patch_fails("{}", "[{'path':'/a'}]", TY_EBADREQUEST, "has no \"op\"");
    json_patch_fails("{}", "[{'op':'frob','path':'/a'}]", TY_EBADREQUEST, "unknown op \"frob\"");
    json_patch_fails("{}", "[{'op':'add','value':1}]", TY_EBADREQUEST, "\"path\"");
    json_patch_fails("{}", "[{'op':'add','path':'/a'}]", TY_EBADREQUEST, "missing \"value\"");
    json_patch_fails("{}", "[{'op':'replace','path':'/a'}]", TY_EBADREQUEST, "missing \"value\"");
    json_patch_fails("{}", "[{'op':'test','path':'/a'}]", TY_EBADREQUEST, "missing \"value\"");
    json_patch_fails("{'a':1}", "[{'op':'move','path':'/b'}]", TY_EBADREQUEST, "missing \"from\"");
    json_patch_fails("{'a':1}", "[{'op':'copy','path':'/b','from':3}]", TY_EBADREQUEST,
                     "missing \"from\"");
    json_patch_fails("{}", "[{'op':'add','path':'a','value':1}]", TY_EBADREQUEST,
                     "invalid JSON pointer \"a\"");
    json_patch_fails("{}", "[{'op':'add','path':'/a~2','value':1}]", TY_EBADREQUEST,
                     "invalid JSON pointer");
    json_patch_fails("{}", "[{'op':'add','path':'/a~','value':1}]", TY_EBADREQUEST,
                     "invalid JSON pointer");
    /* A malformed later op wins over an earlier op that would not apply. */
    json_patch_fails("{}", "[{'op':'remove','path':'/zz'},{'op':'bogus','path':'/a'}]",
                     TY_EBADREQUEST, "unknown op");
}

static void test_json_patch_not_applicable(void **state)
{
    (void)state;
    json_patch_fails("{'a':1}", "[{'op':'remove','path':'/b'}]", TY_EINVALID,
                     "remove operation does not apply: doc is missing path: \"/b\"");
    json_patch_fails("{'a':1}", "[{'op':'replace','path':'/b','value':1}]", TY_EINVALID,
                     "replace operation does not apply: doc is missing path: \"/b\"");
    json_patch_fails("{'a':1}", "[{'op':'add','path':'/x/y','value':1}]", TY_EINVALID,
                     "add operation does not apply: doc is missing path: \"/x/y\"");
    json_patch_fails("{'l':[1]}", "[{'op':'add','path':'/l/5','value':1}]", TY_EINVALID,
                     "index out of range in path \"/l/5\"");
    json_patch_fails("{'l':[1,2]}", "[{'op':'add','path':'/l/01','value':1}]", TY_EINVALID,
                     "/l/01");
    json_patch_fails("{'l':[1]}", "[{'op':'remove','path':'/l/1'}]", TY_EINVALID,
                     "missing path: \"/l/1\"");
    json_patch_fails("{'l':[1]}", "[{'op':'remove','path':'/l/-'}]", TY_EINVALID, "/l/-");
    json_patch_fails("{'a':'s'}", "[{'op':'add','path':'/a/b','value':1}]", TY_EINVALID,
                     "missing path");
    json_patch_fails("{'a':1}", "[{'op':'move','from':'/b','path':'/c'}]", TY_EINVALID,
                     "move operation does not apply: doc is missing path: \"/b\"");
    json_patch_fails("{'a':{'b':{}}}", "[{'op':'move','from':'/a','path':'/a/b/c'}]",
                     TY_EINVALID, "own child");
    json_patch_fails("{'a':1}", "[{'op':'copy','from':'/nope','path':'/c'}]", TY_EINVALID,
                     "copy operation does not apply");
    json_patch_fails("{'a':1}", "[{'op':'remove','path':''}]", TY_EINVALID, "root");
    json_patch_fails("{'a':1}", "[{'op':'test','path':'/zz','value':1}]", TY_EINVALID,
                     "test operation does not apply: doc is missing path: \"/zz\"");
}

static void test_json_patch_test_failure_is_atomic(void **state)
{
    (void)state;
    /* The first two ops would apply; the failing test undoes everything. */
    json_patch_fails("{'metadata':{'name':'p','resourceVersion':'5'},'spec':{'r':1}}",
                     "[{'op':'replace','path':'/spec/r','value':3},"
                     "{'op':'add','path':'/spec/x','value':true},"
                     "{'op':'test','path':'/metadata/resourceVersion','value':'4'}]",
                     TY_EINVALID, "test operation failed");
    json_patch_fails("{'a':1}", "[{'op':'test','path':'/a','value':'1'}]", TY_EINVALID,
                     "\"/a\"");
    json_patch_fails("{'a':{'b':1}}", "[{'op':'test','path':'/a','value':{'b':1,'c':2}}]",
                     TY_EINVALID, "test operation failed");
}

static void test_json_patch_too_many_ops(void **state)
{
    (void)state;
    json_t *ops = json_array();
    for (int i = 0; i < 10001; i++)
        json_array_append_new(ops, json_pack("{s:s, s:s}", "op", "remove", "path", "/x"));
    json_t *t = J("{}");
    ty_error err;
    ty_error_init(&err);
    assert_null(patch_json(t, ops, &err));
    assert_int_equal(err.code, TY_ETOOLARGE);
    assert_non_null(strstr(err.text, "10000"));
    json_decref(ops);
    json_decref(t);
}

/* ---- strategic merge patch -------------------------------------------- */

/* The merge keys of a kind, as the server takes them: from the API's
 * schema of the served kind (core v1, else kubeflow.org/v1); a kind the API
 * does not serve (Deployment, batch/v1 Job) gets the pod-template keys at
 * any depth. */
static const patch_schema *schema_for(const char *kind, patch_schema *ps)
{
    const api_resource *res = NULL;

    if (kind) {
        res = api_find_kind("v1", kind);
        if (!res)
            res = api_find_kind("kubeflow.org/v1", kind);
    }
    *ps = api_patch_schema(res);
    return ps;
}

static json_t *smp(const char *target, const char *patch, const char *kind)
{
    ty_error err;
    json_t *t = J(target), *p = J(patch);
    json_t *tcopy = json_deep_copy(t), *pcopy = json_deep_copy(p);
    patch_schema ps;
    ty_error_init(&err);
    json_t *out = patch_strategic(t, p, schema_for(kind, &ps), &err);
    if (!out)
        fail_msg("strategic patch %s failed: %s", patch, err.text);
    /* Inputs untouched. */
    assert_true(json_equal(t, tcopy));
    assert_true(json_equal(p, pcopy));
    json_decref(t);
    json_decref(p);
    json_decref(tcopy);
    json_decref(pcopy);
    return out;
}

static void check_smp(const char *target, const char *patch, const char *kind, const char *want)
{
    json_t *out = smp(target, patch, kind);
    assert_json_text(out, want);
    json_decref(out);
}

static void smp_fails(const char *target, const char *patch, const char *kind, ty_errcode code,
                      const char *want)
{
    ty_error err;
    json_t *t = J(target), *p = J(patch);
    patch_schema ps;
    ty_error_init(&err);
    json_t *out = patch_strategic(t, p, schema_for(kind, &ps), &err);
    if (out)
        fail_msg("strategic patch %s applied but should not have", patch);
    assert_int_equal(err.code, code);
    if (!strstr(err.text, want))
        fail_msg("error for %s is \"%s\", wanted \"%s\"", patch, err.text, want);
    json_decref(t);
    json_decref(p);
}

#define POD2                                                                      \
    "{'metadata':{'name':'p'},'spec':{'containers':["                             \
    "{'name':'a','image':'a:1','args':['x']},{'name':'b','image':'b:1'}]}}"

static void test_smp_container_image_by_name(void **state)
{
    (void)state;
    check_smp(POD2, "{'spec':{'containers':[{'name':'b','image':'b:2'}]}}", "Pod",
              "{'metadata':{'name':'p'},'spec':{'containers':["
              "{'name':'a','image':'a:1','args':['x']},{'name':'b','image':'b:2'}]}}");
    check_smp(POD2, "{'spec':{'containers':[{'name':'a','image':'a:2'}]}}", "Pod",
              "{'metadata':{'name':'p'},'spec':{'containers':["
              "{'name':'a','image':'a:2','args':['x']},{'name':'b','image':'b:1'}]}}");
}

static void test_smp_new_item_goes_first(void **state)
{
    (void)state;
    /* kube-apiserver puts items that only the patch has before the server's. */
    check_smp(POD2, "{'spec':{'containers':[{'name':'c','image':'c:1'}]}}", "Pod",
              "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'c:1'},"
              "{'name':'a','image':'a:1','args':['x']},{'name':'b','image':'b:1'}]}}");
    /* A patch naming an existing item after a new one keeps the server order
     * around it. */
    check_smp("{'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
              "{'spec':{'containers':[{'name':'b','image':'x'}]}}", "Pod",
              "{'spec':{'containers':[{'name':'a'},{'name':'b','image':'x'},{'name':'c'}]}}");
}

static void test_smp_pod_template_in_other_kinds(void **state)
{
    (void)state;
    const char *deploy = "{'spec':{'replicas':1,'template':{'metadata':{'labels':{'a':'1'}},"
                         "'spec':{'containers':[{'name':'a','image':'1'},{'name':'b'}]}}}}";
    check_smp(deploy,
              "{'spec':{'template':{'metadata':{'labels':{'b':'2'}},"
              "'spec':{'containers':[{'name':'a','image':'2'}]}}}}",
              "Deployment",
              "{'spec':{'replicas':1,'template':{'metadata':{'labels':{'a':'1','b':'2'}},"
              "'spec':{'containers':[{'name':'a','image':'2'},{'name':'b'}]}}}}");
    check_smp("{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':"
              "[{'name':'a','image':'1'},{'name':'b'}]}}}}}}",
              "{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':"
              "[{'name':'b','image':'2'}]}}}}}}",
              "CronJob",
              "{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':"
              "[{'name':'a','image':'1'},{'name':'b','image':'2'}]}}}}}}");
    /* A training job (custom resource): containers merge by name wherever the
     * pod template sits. */
    check_smp("{'spec':{'pytorchReplicaSpecs':{'Worker':{'replicas':2,'template':{'spec':"
              "{'containers':[{'name':'pytorch','image':'1','env':[{'name':'A','value':'1'}]},"
              "{'name':'side'}]}}}}}}",
              "{'spec':{'pytorchReplicaSpecs':{'Worker':{'template':{'spec':{'containers':"
              "[{'name':'pytorch','env':[{'name':'B','value':'2'}]}]}}}}}}",
              "PyTorchJob",
              "{'spec':{'pytorchReplicaSpecs':{'Worker':{'replicas':2,'template':{'spec':"
              "{'containers':[{'name':'pytorch','image':'1','env':[{'name':'B','value':'2'},"
              "{'name':'A','value':'1'}]},{'name':'side'}]}}}}}}");
    /* No kind at all: the same name-based keys. */
    check_smp(POD2, "{'spec':{'containers':[{'name':'b','image':'b:3'}]}}", NULL,
              "{'metadata':{'name':'p'},'spec':{'containers':["
              "{'name':'a','image':'a:1','args':['x']},{'name':'b','image':'b:3'}]}}");
    /* A Job's template too (Job shares the workload table). */
    check_smp("{'spec':{'template':{'spec':{'volumes':[{'name':'v','emptyDir':{}}]}}}}",
              "{'spec':{'template':{'spec':{'volumes':[{'name':'w','hostPath':{'path':'/x'}}]}}}}",
              "Job",
              "{'spec':{'template':{'spec':{'volumes':[{'name':'w','hostPath':{'path':'/x'}},"
              "{'name':'v','emptyDir':{}}]}}}}");
}

static void test_smp_delete_directive(void **state)
{
    (void)state;
    check_smp(POD2, "{'spec':{'containers':[{'name':'a','$patch':'delete'}]}}", "Pod",
              "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'b','image':'b:1'}]}}");
    /* Deleting an item that is not there changes nothing. */
    check_smp(POD2, "{'spec':{'containers':[{'name':'zz','$patch':'delete'}]}}", "Pod", POD2);
    /* Delete and update in one list. */
    check_smp("{'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
              "{'spec':{'containers':[{'name':'b','$patch':'delete'},{'name':'c','image':'x'}]}}",
              "Pod", "{'spec':{'containers':[{'name':'a'},{'name':'c','image':'x'}]}}");
    /* $patch: delete on a map empties it, as in Kubernetes. */
    check_smp("{'metadata':{'labels':{'a':'1'},'name':'n'}}",
              "{'metadata':{'labels':{'$patch':'delete'}}}", "ConfigMap",
              "{'metadata':{'labels':{},'name':'n'}}");
}

static void test_smp_replace_directive(void **state)
{
    (void)state;
    check_smp(POD2, "{'spec':{'containers':[{'name':'z','image':'z:1'},{'$patch':'replace'}]}}",
              "Pod", "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'z','image':'z:1'}]}}");
    check_smp("{'metadata':{'labels':{'a':'1','b':'2'}}}",
              "{'metadata':{'labels':{'$patch':'replace','c':'3'}}}", "Pod",
              "{'metadata':{'labels':{'c':'3'}}}");
    /* $patch: merge is the default and is accepted. */
    check_smp("{'metadata':{'labels':{'a':'1'}}}",
              "{'metadata':{'labels':{'$patch':'merge','c':'3'}}}", "Pod",
              "{'metadata':{'labels':{'a':'1','c':'3'}}}");
}

static void test_smp_set_element_order(void **state)
{
    (void)state;
    check_smp("{'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
              "{'spec':{'$setElementOrder/containers':[{'name':'c'},{'name':'a'},{'name':'b'}],"
              "'containers':[{'name':'a','image':'x'}]}}",
              "Pod",
              "{'spec':{'containers':[{'name':'c'},{'name':'a','image':'x'},{'name':'b'}]}}");
    /* Only an order, no list in the patch. */
    check_smp("{'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
              "{'spec':{'$setElementOrder/containers':[{'name':'b'},{'name':'c'},{'name':'a'}]}}",
              "Pod", "{'spec':{'containers':[{'name':'b'},{'name':'c'},{'name':'a'}]}}");
    /* Items the order does not name are woven in before the first named item
     * that followed them on the server (kube-apiserver's rule). */
    check_smp("{'spec':{'containers':[{'name':'a'},{'name':'s'},{'name':'b'}]}}",
              "{'spec':{'$setElementOrder/containers':[{'name':'b'},{'name':'a'}]}}", "Pod",
              "{'spec':{'containers':[{'name':'s'},{'name':'b'},{'name':'a'}]}}");
    /* Primitive lists take an order too. */
    check_smp("{'metadata':{'finalizers':['x','y']}}",
              "{'metadata':{'$setElementOrder/finalizers':['y','x','z'],'finalizers':['z']}}",
              "Pod", "{'metadata':{'finalizers':['y','x','z']}}");
    smp_fails("{'spec':{'containers':[{'name':'a'}]}}",
              "{'spec':{'$setElementOrder/containers':[{'image':'a'}]}}", "Pod", TY_EBADREQUEST,
              "merge key name");
}

static void test_smp_env_by_name(void **state)
{
    (void)state;
    /* Merged by name; the patch's order wins over the server's for the items
     * it names, and a null inside an item removes that field. */
    check_smp("{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':'1'},"
              "{'name':'Y','valueFrom':{'fieldRef':{'fieldPath':'metadata.name'}}}]}]}}",
              "{'spec':{'containers':[{'name':'a','env':[{'name':'Y','value':'2',"
              "'valueFrom':null},{'name':'X','value':'10'}]}]}}",
              "Pod",
              "{'spec':{'containers':[{'name':'a','env':[{'name':'Y','value':'2'},"
              "{'name':'X','value':'10'}]}]}}");
}

static void test_smp_list_without_key_is_replaced(void **state)
{
    (void)state;
    check_smp(POD2, "{'spec':{'containers':[{'name':'a','args':['y','z']}]}}", "Pod",
              "{'metadata':{'name':'p'},'spec':{'containers':["
              "{'name':'a','image':'a:1','args':['y','z']},{'name':'b','image':'b:1'}]}}");
    check_smp("{'spec':{'tolerations':[{'key':'a'},{'key':'b'}]}}",
              "{'spec':{'tolerations':[{'key':'c'}]}}", "Pod",
              "{'spec':{'tolerations':[{'key':'c'}]}}");
    /* Unknown fields of known kinds are replaced too. */
    check_smp("{'data':{'l':[1,2]}}", "{'data':{'l':[3]}}", "ConfigMap", "{'data':{'l':[3]}}");
}

static void test_smp_null_removes(void **state)
{
    (void)state;
    check_smp("{'metadata':{'labels':{'a':'1','b':'2'},'annotations':{'x':'y'}}}",
              "{'metadata':{'labels':{'a':null},'annotations':null}}", "Pod",
              "{'metadata':{'labels':{'b':'2'}}}");
    /* Nulls inside new values are dropped, not stored. */
    check_smp("{}", "{'spec':{'nodeName':null,'containers':[{'name':'a','image':null}]}}", "Pod",
              "{'spec':{'containers':[{'name':'a'}]}}");
}

static void test_smp_ports_by_kind(void **state)
{
    (void)state;
    check_smp("{'spec':{'ports':[{'port':80,'targetPort':8080},{'port':443}]}}",
              "{'spec':{'ports':[{'port':80,'targetPort':9090}]}}", "Service",
              "{'spec':{'ports':[{'port':80,'targetPort':9090},{'port':443}]}}");
    check_smp("{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'name':'h'},"
              "{'containerPort':22}]}]}}",
              "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'name':'web'}]}]}}",
              "Pod",
              "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'name':'web'},"
              "{'containerPort':22}]}]}}");
    smp_fails("{'spec':{'ports':[{'port':80}]}}", "{'spec':{'ports':[{'targetPort':80}]}}",
              "Service", TY_EBADREQUEST, "merge key: port");
}

static void test_smp_metadata_lists(void **state)
{
    (void)state;
    check_smp("{'metadata':{'finalizers':['a','b']}}", "{'metadata':{'finalizers':['b','c']}}",
              "ConfigMap", "{'metadata':{'finalizers':['a','b','c']}}");
    check_smp("{'metadata':{'finalizers':['a','b','c']}}",
              "{'metadata':{'$deleteFromPrimitiveList/finalizers':['b','zz']}}", "ConfigMap",
              "{'metadata':{'finalizers':['a','c']}}");
    check_smp("{'metadata':{'ownerReferences':[{'uid':'1','name':'x'},{'uid':'2','name':'y'}]}}",
              "{'metadata':{'ownerReferences':[{'uid':'2','controller':true}]}}", "Pod",
              "{'metadata':{'ownerReferences':[{'uid':'1','name':'x'},"
              "{'uid':'2','name':'y','controller':true}]}}");
}

static void test_smp_status_conditions(void **state)
{
    (void)state;
    check_smp("{'status':{'phase':'Running','conditions':[{'type':'Ready','status':'False'},"
              "{'type':'Initialized','status':'True'}]}}",
              "{'status':{'conditions':[{'type':'Ready','status':'True'}]}}", "Pod",
              "{'status':{'phase':'Running','conditions':[{'type':'Ready','status':'True'},"
              "{'type':'Initialized','status':'True'}]}}");
    check_smp("{'status':{'addresses':[{'type':'InternalIP','address':'1'},"
              "{'type':'Hostname','address':'h'}]}}",
              "{'status':{'addresses':[{'type':'InternalIP','address':'2'}]}}", "Node",
              "{'status':{'addresses':[{'type':'InternalIP','address':'2'},"
              "{'type':'Hostname','address':'h'}]}}");
}

static void test_smp_pod_spec_lists(void **state)
{
    (void)state;
    check_smp("{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/d','name':'v'},"
              "{'mountPath':'/e','name':'w'}]}],'imagePullSecrets':[{'name':'s1'}],"
              "'hostAliases':[{'ip':'1.1.1.1','hostnames':['a']}]}}",
              "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/e',"
              "'readOnly':true}]}],'imagePullSecrets':[{'name':'s2'}],"
              "'hostAliases':[{'ip':'1.1.1.1','hostnames':['b']}]}}",
              "Pod",
              "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/d','name':'v'},"
              "{'mountPath':'/e','name':'w','readOnly':true}]}],"
              "'imagePullSecrets':[{'name':'s2'},{'name':'s1'}],"
              "'hostAliases':[{'ip':'1.1.1.1','hostnames':['b']}]}}");
    check_smp("{'spec':{'initContainers':[{'name':'i','image':'1'}],"
              "'topologySpreadConstraints':[{'topologyKey':'zone','maxSkew':1}]}}",
              "{'spec':{'initContainers':[{'name':'i','image':'2'}],"
              "'topologySpreadConstraints':[{'topologyKey':'zone','maxSkew':2}]}}",
              "Pod",
              "{'spec':{'initContainers':[{'name':'i','image':'2'}],"
              "'topologySpreadConstraints':[{'topologyKey':'zone','maxSkew':2}]}}");
}

static void test_smp_retain_keys(void **state)
{
    (void)state;
    check_smp("{'spec':{'volumes':[{'name':'v','emptyDir':{},'secret':{'secretName':'s'}}]}}",
              "{'spec':{'volumes':[{'name':'v','$retainKeys':['name','hostPath'],"
              "'hostPath':{'path':'/x'}}]}}",
              "Pod", "{'spec':{'volumes':[{'name':'v','hostPath':{'path':'/x'}}]}}");
    smp_fails("{'spec':{}}", "{'spec':{'$retainKeys':'name'}}", "Pod", TY_EBADREQUEST,
              "$retainKeys must be a list");
}

static void test_smp_errors(void **state)
{
    (void)state;
    smp_fails("{}", "[1]", "Pod", TY_EBADREQUEST, "must be a JSON object");
    smp_fails(POD2, "{'spec':{'containers':[{'image':'x'}]}}", "Pod", TY_EBADREQUEST,
              "does not contain declared merge key: name");
    smp_fails(POD2, "{'spec':{'containers':['a']}}", "Pod", TY_EBADREQUEST,
              "must be objects");
    smp_fails(POD2, "{'spec':{'containers':[{'name':'a','$patch':'explode'}]}}", "Pod",
              TY_EBADREQUEST, "unknown patch type: explode");
    smp_fails(POD2, "{'spec':{'$patch':'explode'}}", "Pod", TY_EBADREQUEST,
              "unknown patch type: explode");
    smp_fails(POD2, "{'spec':{'containers':[{'$patch':'delete'}]}}", "Pod", TY_EBADREQUEST,
              "merge key name");
    smp_fails("{'metadata':{'finalizers':['a']}}",
              "{'metadata':{'$deleteFromPrimitiveList/finalizers':'a'}}", "Pod", TY_EBADREQUEST,
              "must be a list");
}

static void test_smp_result_is_independent(void **state)
{
    (void)state;
    json_t *t = J(POD2), *p = J("{'spec':{'hostname':'h'}}");
    patch_schema ps;
    json_t *out = patch_strategic(t, p, schema_for("Pod", &ps), NULL);
    assert_non_null(out);
    /* Changing the result must not reach into the target. */
    json_t *c0 = json_array_get(json_object_get(json_object_get(out, "spec"), "containers"), 0);
    json_object_set_new(c0, "image", json_string("changed"));
    json_t *t0 = json_array_get(json_object_get(json_object_get(t, "spec"), "containers"), 0);
    assert_string_equal(json_string_value(json_object_get(t0, "image")), "a:1");
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

/* The merge keys are the schema's: a list declared with a merge key (or as
 * a merge set) in a kind's schema merges, at any depth the schema reaches
 * (through objects, lists of objects and maps of objects); the model knows
 * no key of its own. (Items only the patch has go first, as everywhere.) */
static const api_field member_fields[] = {API_FIELD("name", API_T_STRING),
                                          API_FIELD("role", API_T_STRING)};
static const api_schema member_schema = API_SCHEMA(member_fields);
static const api_field group_fields[] = {API_MERGE_LIST("members", &member_schema, "name")};
static const api_schema group_schema = API_SCHEMA(group_fields);
static const api_field widget_fields[] = {API_FIELD("id", API_T_INTEGER),
                                          API_FIELD("size", API_T_STRING)};
static const api_schema widget_schema = API_SCHEMA(widget_fields);
static const api_field gadget_spec_fields[] = {
    API_MERGE_LIST("widgets", &widget_schema, "id"),
    {.name = "tags", .type = API_T_ARRAY, .item_type = API_T_STRING, .patch_strategy = "merge"},
    API_ARRAY_OF("plain", &widget_schema),
    API_MAP_OF("groups", &group_schema),
};
static const api_schema gadget_spec = API_SCHEMA(gadget_spec_fields);
static const api_field gadget_fields[] = {API_OBJECT("spec", &gadget_spec)};
static const api_schema gadget_schema = API_SCHEMA(gadget_fields);
static const api_resource gadget = {
    .group = "example.com", .version = "v1", .kind = "Gadget", .plural = "gadgets",
    .builtin = true, .schema = &gadget_schema,
};

#define GADGET                                                                           \
    "{'metadata':{'finalizers':['f']},'spec':{'widgets':[{'id':1,'size':'s'},{'id':2}]," \
    "'tags':['a'],'plain':[{'id':1}],'groups':{'g':{'members':[{'name':'x','role':'r'}]}}}}"
#define GADGET_PATCH                                                                   \
    "{'metadata':{'finalizers':['h']},'spec':{'widgets':[{'id':2,'size':'l'}],"        \
    "'tags':['b'],'plain':[{'id':3}],'groups':{'g':{'members':[{'name':'y'}]}}}}"

static void test_smp_merge_key_from_schema(void **state)
{
    patch_schema ps = api_patch_schema(&gadget);
    ty_error err;
    json_t *t = J(GADGET), *p = J(GADGET_PATCH), *out;

    (void)state;
    ty_error_init(&err);
    out = patch_strategic(t, p, &ps, &err);
    if (!out)
        fail_msg("%s", err.text);
    /* widgets by id, tags as a set, members by name inside a map's values,
     * metadata implied; plain has no key: replaced */
    assert_json_text(out, "{'metadata':{'finalizers':['h','f']},'spec':{'widgets':"
                          "[{'id':1,'size':'s'},{'id':2,'size':'l'}],'tags':['b','a'],"
                          "'plain':[{'id':3}],'groups':{'g':{'members':[{'name':'y'},"
                          "{'name':'x','role':'r'}]}}}}");
    json_decref(out);
    /* the key is required, as for the built-in keys */
    json_decref(p);
    p = J("{'spec':{'widgets':[{'size':'m'}]}}");
    assert_null(patch_strategic(t, p, &ps, &err));
    assert_int_equal(err.code, TY_EBADREQUEST);
    assert_non_null(strstr(err.text, "does not contain declared merge key: id"));
    ty_error_clear(&err);
    json_decref(p);
    /* no schema at all: every list is replaced */
    p = J(GADGET_PATCH);
    out = patch_strategic(t, p, NULL, &err);
    assert_non_null(out);
    assert_json_text(out, "{'metadata':{'finalizers':['h']},'spec':{'widgets':"
                          "[{'id':2,'size':'l'}],'tags':['b'],'plain':[{'id':3}],"
                          "'groups':{'g':{'members':[{'name':'y'}]}}}}");
    json_decref(out);
    json_decref(p);
    json_decref(t);
}

/* Keys that only the served kinds' schemas declare now: a Node's podCIDRs
 * merge as a set, a Pod's status.hostIPs by ip, a PVC's status conditions
 * by type; a Volcano Job's (batch.volcano.sh "Job") tasks have no key and
 * are replaced, where the kind's name alone once picked batch/v1 Job's. */
static void test_smp_served_schema_keys(void **state)
{
    (void)state;
    check_smp("{'spec':{'podCIDRs':['10.0.0.0/24']}}", "{'spec':{'podCIDRs':['10.1.0.0/24']}}",
              "Node", "{'spec':{'podCIDRs':['10.1.0.0/24','10.0.0.0/24']}}");
    check_smp("{'status':{'hostIPs':[{'ip':'1.1.1.1'}],'podIPs':[{'ip':'a'}]}}",
              "{'status':{'hostIPs':[{'ip':'2.2.2.2'}]}}", "Pod",
              "{'status':{'hostIPs':[{'ip':'2.2.2.2'},{'ip':'1.1.1.1'}],'podIPs':[{'ip':'a'}]}}");
    check_smp("{'status':{'conditions':[{'type':'A','status':'True'},{'type':'B'}]}}",
              "{'status':{'conditions':[{'type':'B','status':'False'}]}}",
              "PersistentVolumeClaim",
              "{'status':{'conditions':[{'type':'A','status':'True'},"
              "{'type':'B','status':'False'}]}}");

    patch_schema ps = api_patch_schema(api_find_kind("batch.volcano.sh/v1alpha1", "Job"));
    json_t *t = J("{'spec':{'tasks':[{'name':'a','replicas':1},{'name':'b'}]}}");
    json_t *p = J("{'spec':{'tasks':[{'name':'b','replicas':2}]}}");
    json_t *out = patch_strategic(t, p, &ps, NULL);
    assert_non_null(out);
    assert_json_text(out, "{'spec':{'tasks':[{'name':'b','replicas':2}]}}");
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

/* "copy" doubles a document each time: 17 of them grew the server to 24 GB,
 * 22 on a 64 KiB ConfigMap answered 500. The copies of one patch may add up
 * to 3 MiB of JSON text (kube-apiserver's JSONPatchMaxCopyBytes), then 422
 * with its library's words, before anything is copied. */
static void test_json_patch_copy_budget(void **state)
{
    char *big = malloc(65536 + 1);
    json_t *doc, *ops = json_array(), *out;
    ty_error err;

    (void)state;
    memset(big, 'y', 65536);
    big[65536] = '\0';
    doc = json_pack("{s:{s:s}}", "data", "a", big);
    /* every copy doubles the document */
    for (int i = 0; i < 22; i++)
        json_array_append_new(ops, json_pack("{s:s, s:s, s:s}", "op", "copy", "from", "/data",
                                             "path", i % 2 ? "/data/b" : "/data/c"));
    json_array_append_new(ops, json_pack("{s:s, s:s, s:s}", "op", "copy", "from", "",
                                         "path", "/again"));
    ty_error_init(&err);
    out = patch_json(doc, ops, &err);
    assert_null(out);
    assert_int_equal(err.code, TY_EINVALID);
    assert_non_null(strstr(err.text, "Unable to complete the copy, the accumulated size "
                                     "increase of copy is "));
    assert_non_null(strstr(err.text, "exceeding the limit 3145728"));
    ty_error_clear(&err);
    json_decref(ops);

    /* within the budget: two copies of 1 MiB and a byte go, a third does not */
    ops = json_array();
    big = realloc(big, 1024 * 1024 + 1);
    memset(big, 'z', 1024 * 1024 - 1);
    big[1024 * 1024 - 1] = '\0'; /* 1 MiB and a byte of JSON with its quotes */
    json_object_set_new(json_object_get(doc, "data"), "a", json_string(big));
    for (int i = 0; i < 3; i++) {
        char path[16];
        snprintf(path, sizeof(path), "/data/c%d", i);
        json_array_append_new(ops, json_pack("{s:s, s:s, s:s}", "op", "copy", "from", "/data/a",
                                             "path", path));
        out = patch_json(doc, ops, &err);
        if (i < 2) {
            if (!out)
                fail_msg("copy %d: %s", i, err.text);
            assert_int_equal(json_object_size(json_object_get(out, "data")), 2 + i);
            json_decref(out);
        } else {
            assert_null(out);
            assert_non_null(strstr(err.text, "copy is 3145731,"));
            ty_error_clear(&err);
        }
    }
    json_decref(ops);
    json_decref(doc);
    free(big);
}

/* Copies, moves and adds into deep paths nest the document deeper with each
 * op (within the byte budget, a million levels), and trees are copied and
 * freed by recursion: past TY_JSON_LOADABLE_DEPTH it is a 422. */
static void test_json_patch_depth_budget(void **state)
{
    json_t *doc = json_object(), *ops, *out;
    char *path = malloc(600 * 2 + 8);
    ty_error err;

    (void)state;
    path[0] = '\0';
    for (const char *k = "ab"; *k; k++) {
        json_t *cur = doc;
        char key[2] = {*k, '\0'};
        for (int i = 0; i < 600; i++) {
            json_t *n = json_object();
            json_object_set_new(cur, key, n);
            cur = n;
            if (*k == 'b')
                strcat(path, "/b");
        }
    }
    strcat(path, "/x");
    ty_error_init(&err);
    /* a copy of one chain to the other's end: 1200 levels */
    ops = json_pack("[{s:s, s:s, s:s}]", "op", "copy", "from", "/a", "path", path);
    out = patch_json(doc, ops, &err);
    assert_null(out);
    assert_int_equal(err.code, TY_EINVALID);
    assert_non_null(strstr(err.text, "nest more than 1024 levels"));
    ty_error_clear(&err);
    json_decref(ops);
    /* a move of it there */
    ops = json_pack("[{s:s, s:s, s:s}]", "op", "move", "from", "/a", "path", path);
    assert_null(patch_json(doc, ops, &err));
    if (!strstr(err.text, "nest more than"))
        fail_msg("move: %s", err.text);
    ty_error_clear(&err);
    json_decref(ops);
    /* an add of a deep value */
    ops = json_pack("[{s:s, s:s, s:O}]", "op", "add", "path", path, "value",
                    json_object_get(doc, "a"));
    assert_null(patch_json(doc, ops, &err));
    assert_non_null(strstr(err.text, "nest more than"));
    ty_error_clear(&err);
    json_decref(ops);
    /* shallow enough: fine */
    ops = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "op", "copy", "from", "/a/a/a", "path",
                    "/c", "op", "move", "from", "/b/b", "path", "/d");
    out = patch_json(doc, ops, &err);
    assert_non_null(out);
    json_decref(out);
    json_decref(ops);
    json_decref(doc);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_patch_rfc7386),
        cmocka_unit_test(test_merge_patch_kube_objects),
        cmocka_unit_test(test_merge_diff),
        cmocka_unit_test(test_json_patch_ops),
        cmocka_unit_test(test_json_patch_pointer_escapes),
        cmocka_unit_test(test_json_patch_malformed),
        cmocka_unit_test(test_json_patch_not_applicable),
        cmocka_unit_test(test_json_patch_test_failure_is_atomic),
        cmocka_unit_test(test_json_patch_too_many_ops),
        cmocka_unit_test(test_json_patch_copy_budget),
        cmocka_unit_test(test_json_patch_depth_budget),
        cmocka_unit_test(test_smp_container_image_by_name),
        cmocka_unit_test(test_smp_new_item_goes_first),
        cmocka_unit_test(test_smp_pod_template_in_other_kinds),
        cmocka_unit_test(test_smp_delete_directive),
        cmocka_unit_test(test_smp_replace_directive),
        cmocka_unit_test(test_smp_set_element_order),
        cmocka_unit_test(test_smp_env_by_name),
        cmocka_unit_test(test_smp_list_without_key_is_replaced),
        cmocka_unit_test(test_smp_null_removes),
        cmocka_unit_test(test_smp_ports_by_kind),
        cmocka_unit_test(test_smp_metadata_lists),
        cmocka_unit_test(test_smp_status_conditions),
        cmocka_unit_test(test_smp_pod_spec_lists),
        cmocka_unit_test(test_smp_retain_keys),
        cmocka_unit_test(test_smp_errors),
        cmocka_unit_test(test_smp_result_is_independent),
        cmocka_unit_test(test_smp_merge_key_from_schema),
        cmocka_unit_test(test_smp_served_schema_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
