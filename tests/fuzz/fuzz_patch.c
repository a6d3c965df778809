/* fuzz_patch.c - the three patch types (model/patch.h) on one input, a
 * JSON array [target, patch] or [target, patch, kind]:
 *  - merge patch (RFC 7386) never fails and is idempotent: applying the
 *    patch to its own result changes nothing; and the two-way diff the CLI
 *    sends (patch_merge_diff) turns the target into the result;
 *  - JSON patch (RFC 6902) gives a value or an error;
 *  - strategic merge patch, for the kind given (or a Pod's, and none).
 */
#include <stdbool.h>
#include <stdint.h>

#include "fuzz.h"
#include "api/registry.h"
#include "api/schema.h"
#include "model/patch.h"

/* Whether v holds a member whose value is null anywhere: a merge patch
 * cannot write one, so the diff check skips such targets. */
static bool has_null_member(const json_t *v)
{
    const char *k;
    json_t *m;
    size_t i;

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, m)
        {
            if (json_is_null(m) || has_null_member(m))
                return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m)
        {
            if (has_null_member(m))
                return true;
        }
    }
    return false;
}

static void check_merge(const json_t *target, const json_t *patch)
{
    json_t *once = patch_merge(target, patch), *twice, *diff, *back;

    if (!once)
        fuzz_fail("patch_merge failed on valid JSON");
    twice = patch_merge(once, patch);
    if (!twice || !fuzz_json_same(once, twice))
        fuzz_fail_json("merge patch is not idempotent", once, twice);
    if (json_is_object(target) && json_is_object(once) && !has_null_member(target)) {
        diff = patch_merge_diff(target, once);
        back = diff ? patch_merge(target, diff) : NULL;
        if (!back || !fuzz_json_same(back, once))
            fuzz_fail_json("the two-way merge diff does not give the result back", once, back);
        json_decref(back);
        json_decref(diff);
    }
    json_decref(twice);
    json_decref(once);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in, *target, *patch, *out;
    const char *kind;
    ty_error err;
    patch_schema ps;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    in = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!json_is_array(in) || json_array_size(in) < 2) {
        json_decref(in);
        return 0;
    }
    target = json_array_get(in, 0);
    patch = json_array_get(in, 1);
    kind = json_string_value(json_array_get(in, 2));
    ty_error_init(&err);

    check_merge(target, patch);

    /* copies are bounded (3 MiB in all, as kube-apiserver): no doubling */
    out = patch_json(target, patch, &err);
    if (!out && err.code == TY_OK)
        fuzz_fail("patch_json failed without an error");
    json_decref(out);
    ty_error_clear(&err);

    /* the kind's schema (a core kind: "Pod" unless named), the schema of
     * a kind the API does not know, and no schema */
    ps = api_patch_schema(api_find_kind("v1", kind ? kind : "Pod"));
    out = patch_strategic(target, patch, &ps, &err);
    if (!out && err.code == TY_OK)
        fuzz_fail("patch_strategic failed without an error");
    json_decref(out);
    ty_error_clear(&err);
    ps = api_patch_schema(NULL);
    out = patch_strategic(target, patch, &ps, &err);
    json_decref(out);
    ty_error_clear(&err);
    out = patch_strategic(target, patch, NULL, &err);
    json_decref(out);
    ty_error_clear(&err);

    json_decref(in);
    return 0;
}
