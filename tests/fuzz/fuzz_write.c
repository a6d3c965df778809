/* fuzz_write.c - the whole write path of a create, as the server runs it
 * (server/resource_write.c): decode (protobuf when the bytes start with
 * its "k8s\0" envelope, else JSON, else YAML) -> the kind's resource ->
 * strict unknown-field check -> defaults and validation (api_prepare) ->
 * the store -> the store closed and opened again. The invariant:
 * accepted => reloadable and type-correct. What the store took reads back
 * after the reopen byte for byte, every field the kind's schema declares
 * holds a value of its declared type, and the reloaded object passes
 * validation again. A string with a NUL byte, a YAML alias bomb or a
 * mistyped field, each once stored (or a 500), is refused on the way in
 * now; the target would abort on any that got through. */
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "api/registry.h"
#include "api/schema.h"
#include "base/jsonin.h"
#include "base/log.h"
#include "fuzz.h"
#include "model/yaml.h"
#include "server/protobuf.h"
#include "store/store.h"


static ty_store *store;
static char dir[64];
/* what became of the inputs, printed at exit: a target that accepts
 * nothing tests only the decoders */
static unsigned long decoded, accepted, stored;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void close_store(void)
{
    fprintf(stderr, "fuzz_write: %lu objects of a known kind, %lu accepted, %lu stored and "
                    "reloaded\n",
            decoded, accepted, stored);
    store_close(store);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void open_store(void)
{
    ty_error err;

    ty_error_init(&err);
    if (!(store = store_open(dir, &err)))
        fuzz_fail("store_open %s: %s", dir, err.text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ty_log_set_level(TY_LOG_WARN); /* not a line per store closed */
    /* tmpfs where there is one: the store syncs every commit */
    strcpy(dir, access("/dev/shm", W_OK) == 0 ? "/dev/shm/ty-fuzz-XXXXXX" : "/tmp/ty-fuzz-XXXXXX");
    if (!mkdtemp(dir))
        fuzz_fail("mkdtemp %s", dir);
    open_store();
    atexit(close_store);
    return 0;
}

/* Whether v is of type t; null stands for absent, as Kubernetes decodes
 * it. path names the first field that is not (at most one, for the
 * message). */
static bool type_ok(api_type t, api_type item, const api_schema *s, const json_t *v,
                    char *path, size_t len);

static bool schema_ok(const api_schema *s, const json_t *obj, char *path, size_t len)
{
    size_t at = strlen(path);
    const char *k;
    json_t *v;

    if (!s)
        return true;
    json_object_foreach((json_t *)obj, k, v)
    {
        const api_field *f = api_schema_field(s, k);

        if (!f)
            continue; /* unknown: the strict check's business */
        snprintf(path + at, len - at, "%s%s", at ? "." : "", k);
        if (!type_ok(f->type, f->item_type, f->schema, v, path, len))
            return false;
        path[at] = '\0';
    }
    return true;
}

static bool type_ok(api_type t, api_type item, const api_schema *s, const json_t *v,
                    char *path, size_t len)
{
    size_t i, at = strlen(path);
    const char *k;
    json_t *m;

    if (json_is_null(v))
        return true;
    switch (t) {
    case API_T_ANY:
        return true;
    case API_T_OPEN:
        return json_is_object(v);
    case API_T_STRING:
        return json_is_string(v);
    case API_T_INTEGER:
        return json_is_integer(v);
    case API_T_INT32:
        return json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
               json_integer_value(v) <= INT32_MAX;
    case API_T_NUMBER:
        return json_is_number(v);
    case API_T_BOOLEAN:
        return json_is_boolean(v);
    case API_T_INT_OR_STRING:
        return json_is_integer(v) || json_is_string(v);
    case API_T_QUANTITY:
        return json_is_number(v) || json_is_string(v);
    case API_T_OBJECT:
        return json_is_object(v) && schema_ok(s, v, path, len);
    case API_T_ARRAY:
        if (!json_is_array(v))
            return false;
        json_array_foreach(v, i, m)
        {
            snprintf(path + at, len - at, "[%zu]", i);
            if (!type_ok(item, API_T_ANY, s, m, path, len))
                return false;
        }
        path[at] = '\0';
        return true;
    case API_T_MAP:
        if (!json_is_object(v))
            return false;
        json_object_foreach((json_t *)v, k, m)
        {
            snprintf(path + at, len - at, "[%s]", k);
            if (!type_ok(item, API_T_ANY, s, m, path, len))
                return false;
        }
        path[at] = '\0';
        return true;
    }
    return true;
}

static json_t *decode(const uint8_t *data, size_t size, ty_error *err)
{
    json_t *v;

    if (size >= 4 && memcmp(data, "k8s\0", 4) == 0)
        return pb_decode_object(data, size, err);
    if ((v = ty_json_load((const char *)data, size, JSON_REJECT_DUPLICATES, NULL)) ||
        (v = ty_json_load((const char *)data, size, 0, NULL)))
        return v;
    return yaml_load_one((const char *)data, size, err);
}

/* What create_obj does before the store (check_loadable, check_decoding,
 * check_identity, the strict unknown-field check, status dropped,
 * api_prepare); 0 when accepted. */
static int admit(const api_resource *res, json_t *obj, const char *ns, ty_error *err)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *objns;
    char av[128];

    char at[256];
    const char *why;

    if (!json_is_object(meta))
        return -1;
    if (ty_json_check_loadable(obj, at, sizeof(at), &why) < 0)
        return -1;
    if (res->builtin && api_check_types(res, obj, err) < 0)
        return -1;
    objns = json_string_value(json_object_get(meta, "namespace"));
    if (res->namespaced && objns && *objns && strcmp(objns, ns) != 0)
        return -1;
    if (res->namespaced)
        json_object_set_new(meta, "namespace", json_string(ns));
    api_version_string(res, av, sizeof(av));
    json_object_set_new(obj, "apiVersion", json_string(av));
    json_object_set_new(obj, "kind", json_string(res->kind));
    if (api_check_unknown_fields(res, obj, err) > 0)
        return -1;
    if (res->has_status)
        json_object_del(obj, "status");
    return api_prepare(res, obj, NULL, err);
}

static void check_reloaded(const api_resource *res, const char *ns, const char *name,
                           const char *text, size_t len)
{
    store_obj *o;
    const char *again;
    char *owned = NULL, path[512] = "";
    json_t *tree, *copy;
    size_t alen;
    ty_error err;

    ty_error_init(&err);
    store_close(store);
    open_store();
    if (!(o = store_get(store, api_store_key(res), ns, name, &err)))
        fuzz_fail("%s %s/%s accepted but not there after a reopen: %s", res->kind, ns, name,
                  err.text);
    if (!(again = store_obj_text_read(o, &alen, &owned)))
        fuzz_fail("no memory");
    if (alen != len || memcmp(again, text, len) != 0)
        fuzz_fail("%s %s/%s reads back otherwise:\n  %.*s\n  %.*s", res->kind, ns, name,
                  (int)len, text, (int)alen, again);
    if (!(tree = store_obj_json_read(o)))
        fuzz_fail("%s %s/%s reloaded does not parse: %s", res->kind, ns, name, again);
    if (!schema_ok(res->schema, tree, path, sizeof(path)))
        fuzz_fail("%s %s/%s reloaded has %s of the wrong type: %s", res->kind, ns, name, path,
                  again);
    copy = json_deep_copy(tree);
    if (res->has_status)
        json_object_del(copy, "status");
    if (api_check_unknown_fields(res, copy, &err) > 0 || api_prepare(res, copy, NULL, &err) < 0)
        fuzz_fail("%s %s/%s reloaded fails validation: %s\n%s", res->kind, ns, name, err.text,
                  again);
    json_decref(copy);
    json_decref(tree);
    free(owned);
    store_obj_unref(o);
    ty_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const api_resource *res;
    const store_delete_opts now = {.has_grace = true, .grace_seconds = 0};
    const char *ns = "default", *name, *ons, *oname;
    char path[512] = "", *text, *key;
    store_obj *o;
    json_t *obj;
    ty_error err;
    size_t len;
    bool deleted;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    ty_error_init(&err);
    obj = decode(data, size, &err);
    ty_error_clear(&err);
    if (!json_is_object(obj) ||
        !(res = api_find_kind(json_string_value(json_object_get(obj, "apiVersion")),
                              json_string_value(json_object_get(obj, "kind")))))
        goto out;
    if (res->kind && !strcmp(res->kind, "Namespace"))
        goto out; /* deleting one takes what is in it */
    decoded++;
    if (!res->namespaced)
        ns = "";
    if (admit(res, obj, ns, &err) < 0)
        goto out;
    name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (!name || !*name)
        goto out; /* generateName: the name the store makes is not known here */
    accepted++;
    if (!schema_ok(res->schema, obj, path, sizeof(path)))
        fuzz_fail("%s accepted with %s of the wrong type", res->kind, path);
    /* the store takes obj over, as the server's create does */
    o = store_create_take(store, api_store_key(res), ns, obj, &err);
    obj = NULL;
    if (!o)
        goto out; /* taken, or refused by the store: an answer, not a loss */
    /* the name the store keeps (a generated one needs none of this, but
     * the key is the store's own from here on) */
    store_obj_key(o, &ons, &oname);
    text = strdup(store_obj_text(o, &len));
    key = strdup(oname);
    store_obj_unref(o);
    if (!text || !key)
        fuzz_fail("no memory");
    check_reloaded(res, ns, key, text, len);
    stored++;
    /* leaves the store as it found it for the next input of that name
     * (one with finalizers stays marked: that name is taken from then on) */
    store_obj_unref(store_delete(store, api_store_key(res), ns, key, &now, &deleted, &err));
    free(key);
    free(text);
out:
    ty_error_clear(&err);
    json_decref(obj);
    return 0;
}
