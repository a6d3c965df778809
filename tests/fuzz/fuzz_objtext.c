/* fuzz_objtext.c - the store's text readers (store/objtext.c), which read
 * a few members of a stored object's text without parsing the rest: the
 * metadata of every row at open (a damaged file holds any bytes), a light
 * tree, one member's byte range. Any bytes give an answer or NULL; and
 * where jansson reads the text as one object, what the scanner reads
 * agrees with it, on the text as given and as the store writes it
 * (compact). */
#include <stdbool.h>
#include <stdint.h>

#include "fuzz.h"
#include "store/store_int.h"

/* A key the scanner compares as written: nothing jansson would escape. */
static bool plain_key(const char *k)
{
    for (; *k; k++)
        if ((unsigned char)*k < 0x20 || *k == '"' || *k == '\\')
            return false;
    return true;
}

static void check_members(const char *text, size_t len, const json_t *whole, bool compact)
{
    static const char *const names[] = {"metadata", "status", NULL};
    size_t start, end;
    json_t *v, *part;
    const char *k;

    json_object_foreach((json_t *)whole, k, v)
    {
        if (!plain_key(k))
            continue;
        if (!obj_text_member(text, len, k, &start, &end)) {
            if (compact) /* the store's own texts are always followed */
                fuzz_fail("obj_text_member does not find \"%s\" in %.*s", k, (int)len, text);
            continue;
        }
        part = json_loadb(text + start, end - start, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (!part || !fuzz_json_same(part, v))
            fuzz_fail_json("obj_text_member's range is not the member's value", v, part);
        json_decref(part);
    }
    if ((part = obj_text_members(text, len, names))) {
        for (size_t i = 0; names[i]; i++)
            if (plain_key(names[i]) && json_object_get(whole, names[i]) &&
                !fuzz_json_same(json_object_get(part, names[i]), json_object_get(whole, names[i])))
                fuzz_fail_json("obj_text_members differs from jansson", whole, part);
        json_decref(part);
    }
    if ((part = obj_text_light(text, len))) {
        json_object_foreach((json_t *)whole, k, v)
        {
            if (strcmp(k, "spec") != 0 && !fuzz_json_same(json_object_get(part, k), v))
                fuzz_fail_json("obj_text_light differs from jansson", whole, part);
        }
        json_decref(part);
    }
    part = obj_text_metadata(text, len);
    if (!part)
        fuzz_fail("obj_text_metadata refuses a JSON object: %.*s", (int)len, text);
    if (json_object_get(whole, "metadata") &&
        !fuzz_json_same(json_object_get(part, "metadata"), json_object_get(whole, "metadata")))
        fuzz_fail_json("obj_text_metadata differs from jansson", whole, part);
    json_decref(part);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"metadata", "spec.containers", "status", NULL};
    const char *text = (const char *)data;
    size_t start, end;
    json_t *whole;
    char *compact;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    /* any bytes */
    json_decref(obj_text_metadata(text, size));
    json_decref(obj_text_members(text, size, names));
    json_decref(obj_text_light(text, size));
    (void)obj_text_member(text, size, "spec", &start, &end);
    if (obj_text_member(text, size, "metadata", &start, &end) && (start > end || end > size))
        fuzz_fail("obj_text_member's range [%zu, %zu) is outside the text (%zu)", start, end,
                  size);
    /* a JSON object: the scanner agrees with jansson (whose duplicate keys
     * keep the last value, the scanner's the first: left out) */
    whole = json_loadb(text, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    if (json_is_object(whole)) {
        check_members(text, size, whole, false);
        if ((compact = json_dumps(whole, JSON_COMPACT))) {
            check_members(compact, strlen(compact), whole, true);
            free(compact);
        }
    }
    json_decref(whole);
    return 0;
}
