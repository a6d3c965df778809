/* fuzz_selector.c - label and field selectors (?labelSelector=,
 * ?fieldSelector=), and the label key and value checks: any string parses
 * or gives an error, and a parsed one matches against a few objects. */
#include <stdint.h>

#include "fuzz.h"
#include "model/selector.h"

static json_t *sample_obj(void)
{
    static json_t *obj;

    if (!obj)
        obj = json_pack("{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s}, s:{s:s}}", "metadata",
                        "name", "a", "namespace", "default", "labels", "app", "x",
                        "example.com/role", "worker", "tier", "", "spec", "nodeName", "n1",
                        "status", "phase", "Running");
    return obj;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const allowed[] = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                          "status.phase", NULL};
    const json_t *obj = sample_obj();
    ty_label_selector *ls;
    ty_field_selector *fs;
    json_t *js;
    ty_error err;
    char why[256], *s;

    if (!(s = fuzz_cstring(data, size, 4096)))
        return 0;
    ty_error_init(&err);
    if ((ls = label_selector_parse(s, &err))) {
        (void)label_selector_matches(ls, json_object_get(json_object_get(obj, "metadata"),
                                                         "labels"));
        (void)label_selector_matches(ls, NULL);
        (void)label_selector_empty(ls);
        label_selector_free(ls);
    } else if (err.code == TY_OK) {
        fuzz_fail("label_selector_parse failed without an error: %s", s);
    }
    ty_error_clear(&err);
    if ((fs = field_selector_parse(s, allowed, &err))) {
        (void)field_selector_matches(fs, obj);
        field_selector_free(fs);
    }
    ty_error_clear(&err);
    if ((fs = field_selector_parse(s, NULL, &err))) {
        (void)field_selector_matches(fs, obj);
        field_selector_free(fs);
    }
    ty_error_clear(&err);
    (void)label_key_valid(s, why, sizeof(why));
    (void)label_value_valid(s, why, sizeof(why));
    (void)dns1123_subdomain_valid(s, why, sizeof(why));
    (void)json_path_get(obj, s);
    /* the JSON form (a PodGroup's or a Service's selector) */
    if ((js = json_loadb((const char *)data, size, 0, NULL))) {
        if ((ls = label_selector_from_json(js, &err))) {
            (void)label_selector_matches(
                ls, json_object_get(json_object_get(obj, "metadata"), "labels"));
            label_selector_free(ls);
        }
        ty_error_clear(&err);
        json_decref(js);
    }
    free(s);
    return 0;
}
