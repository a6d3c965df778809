/* test_crd.c - the CustomResourceDefinitions `trainyard crds` prints
 * (api/crd.c), deploy/crds kept equal to them, and the server's own
 * CustomResourceDefinition kind (api/kind_crd.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/crd.h"
#include "api/kinds.h"
#include "api/registry.h"
#include "api/schema.h"

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

/* The CRD in crds with this group and plural, or NULL. */
static const json_t *find_crd(const json_t *crds, const char *group, const char *plural)
{
    const json_t *crd;
    size_t i;

    json_array_foreach(crds, i, crd) {
        const json_t *spec = json_object_get(crd, "spec");
        if (strcmp(str_at(spec, "group", NULL), group) == 0 &&
            strcmp(str_at(spec, "names", "plural"), plural) == 0)
            return crd;
    }
    return NULL;
}

static const json_t *find_version(const json_t *crd, const char *version)
{
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, v)
        if (strcmp(str_at(v, "name", NULL), version) == 0)
            return v;
    return NULL;
}

static const json_t *version_schema(const json_t *crd, const char *version)
{
    return json_object_get(json_object_get(find_version(crd, version), "schema"),
                           "openAPIV3Schema");
}

/* ---- every custom kind has its CRD ------------------------------------------ */

static void test_every_custom_kind_has_a_crd(void **state)
{
    size_t n, ncustom = 0;
    const api_resource *const *all = api_resources(&n);
    json_t *crds = crd_all(), *crd;
    size_t i;
    (void)state;

    for (i = 0; i < n; i++) {
        const json_t *spec, *v;
        if (!crd_is_custom(all[i])) {
            assert_null(crd_for(all[i]));
            continue;
        }
        ncustom++;
        crd = (json_t *)find_crd(crds, all[i]->group, all[i]->plural);
        assert_non_null(crd);
        spec = json_object_get(crd, "spec");
        assert_string_equal(str_at(spec, "names", "kind"), all[i]->kind);
        assert_string_equal(str_at(spec, "names", "listKind"), all[i]->list_kind);
        assert_string_equal(str_at(spec, "names", "singular"), all[i]->singular);
        assert_string_equal(str_at(spec, "scope", NULL),
                            all[i]->namespaced ? "Namespaced" : "Cluster");
        v = find_version(crd, all[i]->version);
        assert_non_null(v);
        assert_true(json_is_true(json_object_get(v, "served")));
        assert_int_equal(json_object_get(json_object_get(v, "subresources"), "status") != NULL,
                         all[i]->has_status);
    }
    /* Core and Kubernetes' own groups are the cluster's, never CRDs. */
    assert_false(crd_is_custom(&api_pod));
    assert_false(crd_is_custom(&api_role));
    assert_false(crd_is_custom(&api_crd));
    assert_true(crd_is_custom(&api_queue));
    /* One CRD per group and plural, each with exactly one storage version,
     * named <plural>.<group>. */
    assert_int_equal(json_array_size(crds), ncustom - 1); /* MPIJob: two versions, one CRD */
    json_array_foreach(crds, i, crd) {
        const json_t *spec = json_object_get(crd, "spec"), *v;
        size_t j, storage = 0;
        char name[256];
        json_array_foreach(json_object_get(spec, "versions"), j, v)
            storage += json_is_true(json_object_get(v, "storage"));
        assert_int_equal(storage, 1);
        snprintf(name, sizeof(name), "%s.%s", str_at(spec, "names", "plural"),
                 str_at(spec, "group", NULL));
        assert_string_equal(str_at(crd, "metadata", "name"), name);
        assert_string_equal(str_at(crd, "apiVersion", NULL), "apiextensions.k8s.io/v1");
        assert_string_equal(str_at(crd, "kind", NULL), "CustomResourceDefinition");
    }
    json_decref(crds);
}

/* The names upstream's CRDs use, so that a cluster's can be replaced. */
static void test_upstream_names(void **state)
{
    json_t *crds = crd_all();
    const json_t *mpi, *vc, *pt, *scale, *cols;
    (void)state;

    mpi = find_crd(crds, "kubeflow.org", "mpijobs");
    assert_non_null(mpi);
    assert_int_equal(json_array_size(json_object_get(json_object_get(mpi, "spec"), "versions")), 2);
    assert_true(json_is_true(json_object_get(find_version(mpi, "v1"), "storage")));
    assert_true(json_is_false(json_object_get(find_version(mpi, "v2beta1"), "storage")));
    assert_non_null(find_crd(crds, "kubeflow.org", "msjobs"));
    assert_non_null(find_crd(crds, "mindspore.gitee.com", "msjobs"));
    assert_non_null(find_crd(crds, "flow.volcano.sh", "jobflows"));
    assert_non_null(find_crd(crds, "batch.volcano.sh", "cronjobs"));
    assert_string_equal(str_at(json_object_get(find_crd(crds, "scheduling.volcano.sh", "queues"),
                                               "spec"), "scope", NULL), "Cluster");

    vc = find_crd(crds, "batch.volcano.sh", "jobs");
    assert_string_equal(json_string_value(json_array_get(
        json_object_get(json_object_get(json_object_get(vc, "spec"), "names"), "shortNames"), 0)),
        "vcjob");
    cols = json_object_get(find_version(vc, "v1alpha1"), "additionalPrinterColumns");
    assert_int_equal(json_array_size(cols), 5);
    assert_string_equal(str_at(json_array_get(cols, 0), "jsonPath", NULL), ".status.state.phase");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(cols, 4), "priority")), 1);

    pt = find_crd(crds, "kubeflow.org", "pytorchjobs");
    scale = json_object_get(json_object_get(find_version(pt, "v1"), "subresources"), "scale");
    assert_string_equal(str_at(scale, "specReplicasPath", NULL),
                        ".spec.pytorchReplicaSpecs.Worker.replicas");
    cols = json_object_get(find_version(pt, "v1"), "additionalPrinterColumns");
    assert_string_equal(str_at(json_array_get(cols, 0), "jsonPath", NULL),
                        ".status.conditions[-1:].type");
    assert_null(json_object_get(json_object_get(find_version(
        find_crd(crds, "kubeflow.org", "tfjobs"), "v1"), "subresources"), "scale"));
    json_decref(crds);
}

/* Every column a custom kind prints is one a cluster can print. */
static void test_columns_have_paths(void **state)
{
    size_t n;
    const api_resource *const *all = api_resources(&n);
    (void)state;

    for (size_t i = 0; i < n; i++) {
        json_t *crd, *cols;
        if (!crd_is_custom(all[i]))
            continue;
        crd = crd_for(all[i]);
        cols = json_object_get(find_version(crd, all[i]->version), "additionalPrinterColumns");
        assert_int_equal(json_array_size(cols), all[i]->ncolumns);
        for (size_t c = 0; c < all[i]->ncolumns; c++) {
            const char *path = crd_column_path(all[i], all[i]->columns[c].name);
            assert_non_null(path);
            assert_int_equal(path[0], '.');
            assert_string_equal(str_at(json_array_get(cols, c), "name", NULL),
                                all[i]->columns[c].name);
            assert_string_equal(str_at(json_array_get(cols, c), "jsonPath", NULL), path);
        }
        json_decref(crd);
    }
}

/* ---- structural schemas ----------------------------------------------------- */

/* The rules, walked here on their own (not with crd_check_structural): no
 * $ref, a type on every node but preserve-unknown-fields and int-or-string
 * ones, no strategic merge patch keys. Returns the nodes seen. */
static size_t walk_structural(const json_t *node, int depth)
{
    const char *key;
    json_t *val;
    size_t seen = 1;
    bool open = json_is_true(json_object_get(node, "x-kubernetes-preserve-unknown-fields"));
    bool ios = json_is_true(json_object_get(node, "x-kubernetes-int-or-string"));

    assert_true(depth < 64);
    assert_true(json_is_object(node));
    assert_null(json_object_get(node, "$ref"));
    assert_null(json_object_get(node, "allOf"));
    assert_null(json_object_get(node, "x-kubernetes-patch-merge-key"));
    assert_null(json_object_get(node, "x-kubernetes-patch-strategy"));
    if (!open && !ios)
        assert_non_null(json_string_value(json_object_get(node, "type")));
    if (ios)
        assert_null(json_object_get(node, "type")); /* as the DSL writes it */
    json_object_foreach(json_object_get(node, "properties"), key, val)
        seen += walk_structural(val, depth + 1);
    if ((val = json_object_get(node, "additionalProperties")))
        seen += walk_structural(val, depth + 1);
    if ((val = json_object_get(node, "items")))
        seen += walk_structural(val, depth + 1);
    return seen;
}

static void test_schemas_are_structural(void **state)
{
    json_t *crds = crd_all(), *crd, *v;
    size_t i, j;
    char why[512];
    (void)state;

    json_array_foreach(crds, i, crd) {
        json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), j, v) {
            const json_t *s = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
            assert_string_equal(str_at(s, "type", NULL), "object");
            assert_true(walk_structural(s, 0) > 3);
            if (crd_check_structural(s, "", why, sizeof(why)) != 0)
                fail_msg("%s: %s", str_at(crd, "metadata", "name"), why);
            /* The root's metadata says nothing but its type. */
            const json_t *md = json_object_get(json_object_get(s, "properties"), "metadata");
            if (md) {
                assert_int_equal(json_object_size(md), 1);
                assert_string_equal(str_at(md, "type", NULL), "object");
            }
        }
    }
    json_decref(crds);
}

static void expect_broken(const char *text, const char *want)
{
    json_t *s = json_loads(text, 0, NULL);
    char why[512] = "";

    assert_non_null(s);
    assert_int_equal(crd_check_structural(s, "", why, sizeof(why)), -1);
    if (!strstr(why, want))
        fail_msg("want \"%s\" in \"%s\"", want, why);
    json_decref(s);
}

static void test_structural_rules(void **state)
{
    (void)state;
    expect_broken("{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/x\"}}}", "$ref");
    expect_broken("{\"type\":\"object\",\"properties\":{\"a\":{\"description\":\"x\"}}}",
                  "properties[a].type: Required value");
    expect_broken("{\"type\":\"string\"}", "type: Invalid value: must be object at the root");
    expect_broken("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
                  "\"items\":{\"type\":\"object\"},\"x-kubernetes-patch-merge-key\":\"name\"}}}",
                  "x-kubernetes-patch-merge-key: Forbidden");
    expect_broken("{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
                  "\"items\":[{\"type\":\"string\"}]}}}", "items must be a schema object");
    expect_broken("{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":false}",
                  "must be true or undefined");
    expect_broken("[1]", "must be a schema object");

    /* Hostile nesting stops at a bound, with an answer, not a deep stack. */
    json_t *deep = json_pack("{s:s}", "type", "object");
    for (int i = 0; i < 300; i++)
        deep = json_pack("{s:s, s:{s:o}}", "type", "object", "properties", "a", deep);
    char why[512];
    assert_int_equal(crd_check_structural(deep, "", why, sizeof(why)), -1);
    assert_non_null(strstr(why, "nested too deep"));
    json_decref(deep);
}

/* ---- the same schema as /openapi/v3 ----------------------------------------- */

/* What a CRD's schema leaves out of the /openapi/v3 component, undone here
 * by hand: the group-version-kind, metadata's $ref, the patch keys. */
static void drop_patch_keys(json_t *node)
{
    const char *key;
    void *tmp;
    json_t *val;
    size_t i;

    if (json_is_array(node)) {
        json_array_foreach(node, i, val)
            drop_patch_keys(val);
        return;
    }
    json_object_foreach_safe(node, tmp, key, val) {
        if (strncmp(key, "x-kubernetes-patch-", 19) == 0)
            json_object_del(node, key);
        else
            drop_patch_keys(val);
    }
}

static json_t *served_component(const api_resource *res)
{
    json_t *doc = api_openapi_v3(res->group, res->version), *s, *out = NULL;
    const char *name;

    assert_non_null(doc);
    json_object_foreach(json_object_get(json_object_get(doc, "components"), "schemas"), name, s) {
        const json_t *g = json_array_get(json_object_get(s, "x-kubernetes-group-version-kind"), 0);
        if (g && strcmp(str_at(g, "kind", NULL), res->kind) == 0 &&
            strcmp(str_at(g, "group", NULL), res->group) == 0)
            out = json_deep_copy(s);
    }
    json_decref(doc);
    assert_non_null(out);
    /* metadata was {allOf: [$ref ObjectMeta]}: kube-apiserver serves a CRD's
     * the same way, from the CRD's {type: object}. */
    assert_non_null(json_object_get(json_object_get(json_object_get(out, "properties"),
                                                    "metadata"), "allOf"));
    json_object_set_new(json_object_get(out, "properties"), "metadata",
                        json_pack("{s:s}", "type", "object"));
    json_object_del(out, "x-kubernetes-group-version-kind");
    drop_patch_keys(out);
    return out;
}

/* Every field the kind's api_schema lists is in the CRD, with its type. */
static void expect_fields(const api_schema *s, const json_t *node, int depth)
{
    const json_t *props = json_object_get(node, "properties");

    if (!s || depth > 12) /* the pod template's depth is enough to tell */
        return;
    for (size_t i = 0; i < s->nfields; i++) {
        const api_field *f = &s->fields[i];
        const json_t *p = json_object_get(props, f->name);
        const char *type;
        if (!p)
            fail_msg("field %s missing", f->name);
        type = str_at(p, "type", NULL);
        switch (f->type) {
        case API_T_OBJECT:
            assert_string_equal(type, "object");
            expect_fields(f->schema, p, depth + 1);
            break;
        case API_T_ARRAY:
            assert_string_equal(type, "array");
            if (f->item_type == API_T_OBJECT)
                expect_fields(f->schema, json_object_get(p, "items"), depth + 1);
            break;
        case API_T_MAP:
            assert_string_equal(type, "object");
            assert_non_null(json_object_get(p, "additionalProperties"));
            break;
        case API_T_STRING: assert_string_equal(type, "string"); break;
        case API_T_INTEGER:
        case API_T_INT32: assert_string_equal(type, "integer"); break;
        case API_T_BOOLEAN: assert_string_equal(type, "boolean"); break;
        case API_T_INT_OR_STRING:
        case API_T_QUANTITY:
            assert_true(json_is_true(json_object_get(p, "x-kubernetes-int-or-string")));
            break;
        case API_T_OPEN:
            assert_true(json_is_true(json_object_get(p, "x-kubernetes-preserve-unknown-fields")));
            break;
        default:
            break;
        }
    }
}

static void test_schema_is_the_served_one(void **state)
{
    size_t n, checked = 0;
    const api_resource *const *all = api_resources(&n);
    (void)state;

    for (size_t i = 0; i < n; i++) {
        json_t *crd, *want;
        const json_t *got;
        if (!crd_is_custom(all[i]))
            continue;
        crd = crd_for(all[i]);
        got = version_schema(crd, all[i]->version);
        want = served_component(all[i]);
        if (!json_equal(got, want))
            fail_msg("%s.%s/%s: the CRD's schema is not the one /openapi/v3 serves",
                     all[i]->plural, all[i]->group, all[i]->version);
        expect_fields(all[i]->schema, got, 0);
        json_decref(want);
        json_decref(crd);
        checked++;
    }
    assert_true(checked >= 16);
}

/* ---- deploy/crds is the generator's output ----------------------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf;
    long len;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* The checkout's deploy/crds, found from this file's own path. */
static void crds_dir(char *buf, size_t len)
{
    const char *tail = strstr(__FILE__, "tests/unit/test_crd.c");
    assert_non_null(tail);
    snprintf(buf, len, "%.*sdeploy/crds", (int)(tail - __FILE__), __FILE__);
}

static void expect_file(const char *dir, const char *name, const char *want)
{
    char path[4096];
    char *got;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    got = read_text(path);
    if (!got)
        fail_msg("%s is missing: run make crds", path);
    if (strcmp(got, want) != 0)
        fail_msg("%s differs from `trainyard crds`: run make crds", path);
    free(got);
}

static void test_deploy_crds_match(void **state)
{
    json_t *crds = crd_all(), *crd;
    char dir[4096], name[320], *text;
    size_t i, files = 0;
    DIR *d;
    struct dirent *e;
    (void)state;

    crds_dir(dir, sizeof(dir));
    json_array_foreach(crds, i, crd) {
        crd_file_name(crd, name, sizeof(name));
        text = crd_file_text(crd);
        expect_file(dir, name, text);
        free(text);
    }
    text = crd_kustomization_text(crds);
    expect_file(dir, CRD_KUSTOMIZATION, text);
    free(text);
    /* and nothing else: a kind removed leaves no stale CRD behind */
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            files++;
    closedir(d);
    assert_int_equal(files, json_array_size(crds) + 1);
    json_decref(crds);
}

/* ---- the server's CustomResourceDefinition kind ------------------------------- */

static const char *condition_status(const json_t *obj, const char *type, const char **message)
{
    const json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
        if (strcmp(str_at(c, "type", NULL), type) == 0) {
            if (message)
                *message = str_at(c, "message", NULL);
            return str_at(c, "status", NULL);
        }
    return NULL;
}

static bool has_cause(const ty_error *err, const char *field, const char *text)
{
    for (size_t i = 0; i < ty_error_ncauses(err); i++) {
        json_t *c = json_array_get(err->causes, i);
        if (strcmp(str_at(c, "field", NULL), field) == 0 &&
            strstr(str_at(c, "message", NULL), text))
            return true;
    }
    return false;
}

static void test_generated_crds_are_established(void **state)
{
    json_t *crds = crd_all(), *crd;
    size_t i;
    ty_error err;
    (void)state;

    json_array_foreach(crds, i, crd) {
        json_t *obj = json_deep_copy(crd);
        ty_error_init(&err);
        if (api_prepare(&api_crd, obj, NULL, &err) != 0)
            fail_msg("%s: %s", str_at(crd, "metadata", "name"), err.text);
        assert_string_equal(condition_status(obj, "Established", NULL), "True");
        assert_string_equal(condition_status(obj, "NamesAccepted", NULL), "True");
        assert_int_equal(json_array_size(json_object_get(json_object_get(obj, "status"),
                                                         "storedVersions")), 1);
        ty_error_clear(&err);
        json_decref(obj);
    }
    json_decref(crds);
}

static json_t *widget_crd(void)
{
    return json_loads(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},"
        "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
        "\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}", 0, NULL);
}

static void test_unserved_crd_is_not_established(void **state)
{
    json_t *obj = widget_crd(), *pt;
    const char *msg = NULL;
    ty_error err;
    (void)state;

    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_crd, obj, NULL, &err), 0);
    assert_string_equal(condition_status(obj, "Established", &msg), "False");
    assert_non_null(strstr(msg, "does not serve widgets.example.com"));
    /* names defaulted as upstream does */
    assert_string_equal(str_at(json_object_get(obj, "spec"), "names", "singular"), "widget");
    assert_string_equal(str_at(json_object_get(obj, "spec"), "names", "listKind"), "WidgetList");
    json_decref(obj);

    /* A served kind in a version Trainyard does not serve. */
    pt = crd_for(&api_pytorchjob);
    json_object_set_new(json_array_get(json_object_get(json_object_get(pt, "spec"), "versions"),
                                       0), "name", json_string("v2"));
    assert_int_equal(api_prepare(&api_crd, pt, NULL, &err), 0);
    assert_string_equal(condition_status(pt, "Established", &msg), "False");
    assert_non_null(strstr(msg, "version v2 of pytorchjobs.kubeflow.org"));
    json_decref(pt);
    ty_error_clear(&err);
}

static void test_crd_validation(void **state)
{
    json_t *obj, *spec, *versions, *old;
    ty_error err;
    (void)state;

    /* two storage versions, a name that is not <plural>.<group>, a group
     * without a dot, a scope that is neither, a $ref */
    obj = widget_crd();
    spec = json_object_get(obj, "spec");
    versions = json_object_get(spec, "versions");
    json_array_append_new(versions, json_deep_copy(json_array_get(versions, 0)));
    json_object_set_new(json_array_get(versions, 1), "name", json_string("v2"));
    json_object_set_new(json_object_get(json_object_get(json_array_get(versions, 1), "schema"),
                                        "openAPIV3Schema"), "properties",
                        json_pack("{s:{s:s}}", "spec", "$ref", "#/definitions/Spec"));
    json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("widgets"));
    json_object_set_new(spec, "scope", json_string("Global"));
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_crd, obj, NULL, &err), -1);
    assert_int_equal(err.code, TY_EINVALID);
    assert_true(has_cause(&err, "spec.versions",
                          "must have exactly one version marked as storage version"));
    assert_true(has_cause(&err, "metadata.name", "must be spec.names.plural+\".\"+spec.group"));
    assert_true(has_cause(&err, "spec.scope", "Unsupported value: \"Global\""));
    assert_true(has_cause(&err, "spec.versions[1].schema.openAPIV3Schema", "$ref"));
    ty_error_clear(&err);
    json_decref(obj);

    obj = widget_crd();
    json_object_set_new(json_object_get(obj, "spec"), "group", json_string("example"));
    json_object_set_new(json_object_get(obj, "metadata"), "name", json_string("widgets.example"));
    json_object_del(json_object_get(json_object_get(obj, "spec"), "names"), "kind");
    json_object_del(json_array_get(json_object_get(json_object_get(obj, "spec"), "versions"), 0),
                    "schema");
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_crd, obj, NULL, &err), -1);
    assert_true(has_cause(&err, "spec.group", "should be a domain with at least one dot"));
    assert_true(has_cause(&err, "spec.names.kind", "Required value"));
    assert_true(has_cause(&err, "spec.versions[0].schema.openAPIV3Schema", "schemas are required"));
    ty_error_clear(&err);
    json_decref(obj);

    /* no names at all */
    obj = widget_crd();
    json_object_del(json_object_get(obj, "spec"), "names");
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_crd, obj, NULL, &err), -1);
    assert_true(has_cause(&err, "spec.names.plural", "Required value"));
    assert_true(has_cause(&err, "spec.names.kind", "Required value"));
    ty_error_clear(&err);
    json_decref(obj);

    /* scope cannot change */
    old = widget_crd();
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_crd, old, NULL, &err), 0);
    obj = json_deep_copy(old);
    json_object_set_new(json_object_get(obj, "spec"), "scope", json_string("Cluster"));
    assert_int_equal(api_prepare(&api_crd, obj, old, &err), -1);
    assert_true(has_cause(&err, "spec.scope", "field is immutable"));
    ty_error_clear(&err);
    json_decref(obj);
    json_decref(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_custom_kind_has_a_crd),
        cmocka_unit_test(test_upstream_names),
        cmocka_unit_test(test_columns_have_paths),
        cmocka_unit_test(test_schemas_are_structural),
        cmocka_unit_test(test_structural_rules),
        cmocka_unit_test(test_schema_is_the_served_one),
        cmocka_unit_test(test_deploy_crds_match),
        cmocka_unit_test(test_generated_crds_are_established),
        cmocka_unit_test(test_unserved_crd_is_not_established),
        cmocka_unit_test(test_crd_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
