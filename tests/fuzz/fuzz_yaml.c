/* fuzz_yaml.c - YAML -> JSON (yaml_load_all, what kubectl apply -f and a
 * YAML request body go through), and back: every document loaded dumps
 * (yaml_dump, what `get -o yaml` prints) to text that loads again to the
 * same JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "model/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *docs, *doc, *again;
    ty_error err;
    size_t i;
    char *text;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    ty_error_init(&err);
    docs = yaml_load_all((const char *)data, size, &err);
    if (!docs) {
        if (err.code == TY_OK)
            fuzz_fail("yaml_load_all failed without an error");
        ty_error_clear(&err);
        return 0;
    }
    json_array_foreach(docs, i, doc)
    {
        if (!(text = yaml_dump(doc)))
            continue; /* out of memory */
        again = yaml_load_one(text, strlen(text), &err);
        if (!again)
            fuzz_fail("dumped YAML does not load: %s\n%s", err.text, text);
        if (!fuzz_json_same(doc, again))
            fuzz_fail_json("dumped YAML loads as another value", doc, again);
        json_decref(again);
        free(text);
    }
    json_decref(docs);
    ty_error_clear(&err);
    return 0;
}
