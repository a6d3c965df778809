/* bench_jsonin.c - parsing a stored pod: jansson's json_loadb against
 * ty_json_parse (src/base/jsonin.c), which the store uses for every object
 * it reads without its tree.
 *
 *   bench_jsonin [ROUNDS] [FILE.json]
 *
 * Not a test: it measures. Parses the compact text of the object (the pod
 * of bench_pod.h unless FILE is given) ROUNDS times (default 50,000) each
 * way, freeing each tree, and prints the time per object and the ratio. The
 * two trees are compared once: equal, with the same key order. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pod.h"
#include "bench_util.h"
#include "base/jsonin.h"
#include "base/jsonout.h"

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 50000;
    json_t *v = argc > 2 ? json_load_file(argv[2], 0, NULL) : json_loads(pod, 0, NULL), *a, *b;
    ty_buf text = {0}, again = {0};
    size_t total = 0;
    int64_t t0, t1, t2;

    if (!v || rounds < 1 || ty_json_append(&text, v) < 0) {
        fprintf(stderr, "usage: bench_jsonin [ROUNDS] [FILE.json]\n");
        return 2;
    }
    a = json_loadb(text.data, text.len, 0, NULL);
    b = ty_json_parse(text.data, text.len);
    if (!a || !b || !json_equal(a, b) || ty_json_append(&again, b) < 0 ||
        again.len != text.len || memcmp(again.data, text.data, text.len)) {
        fprintf(stderr, "bench_jsonin: the two parses differ\n");
        return 1;
    }
    json_decref(a);
    json_decref(b);
    t0 = mono_ns();
    for (long i = 0; i < rounds; i++) {
        json_t *t = json_loadb(text.data, text.len, 0, NULL);
        total += json_object_size(t);
        json_decref(t);
    }
    t1 = mono_ns();
    for (long i = 0; i < rounds; i++) {
        json_t *t = ty_json_parse(text.data, text.len);
        total += json_object_size(t);
        json_decref(t);
    }
    t2 = mono_ns();
    printf("object: %zu bytes, %ld rounds (each parsed and freed)\n", text.len, rounds);
    printf("json_loadb:    %.2f us per object\n", (double)(t1 - t0) / rounds / 1e3);
    printf("ty_json_parse: %.2f us per object (%.1fx faster)\n",
           (double)(t2 - t1) / rounds / 1e3, (double)(t1 - t0) / (double)(t2 - t1));
    json_decref(v);
    ty_buf_free(&text);
    ty_buf_free(&again);
    return total == 0;
}
