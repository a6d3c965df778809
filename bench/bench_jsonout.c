/* bench_jsonout.c - serialising a stored pod: jansson's json_dumpb against
 * ty_json_append (src/base/jsonout.c), which the store uses for every write.
 *
 *   bench_jsonout [ROUNDS] [FILE.json]
 *
 * Not a test: it measures. Serialises the object (a Running PyTorchJob pod
 * as the simulated nodes leave it, 2.4 KB, unless FILE is given) ROUNDS times
 * (default 50,000) each way and prints the time per object and the ratio.
 * Both outputs are compared once: they must be the same bytes. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pod.h"
#include "bench_util.h"
#include "base/jsonout.h"

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 50000;
    json_t *v = argc > 2 ? json_load_file(argv[2], 0, NULL) : json_loads(pod, 0, NULL);
    size_t cap = 1 << 22, total = 0;
    char *buf = malloc(cap);
    ty_buf b = {0};
    int64_t t0, t1, t2;

    if (!v || !buf || rounds < 1) {
        fprintf(stderr, "usage: bench_jsonout [ROUNDS] [FILE.json]\n");
        return 2;
    }
    size_t n = json_dumpb(v, buf, cap, JSON_COMPACT);
    if (!n || n >= cap || ty_json_append(&b, v) < 0 || b.len != n || memcmp(b.data, buf, n)) {
        fprintf(stderr, "bench_jsonout: the two serialisations differ\n");
        return 1;
    }
    t0 = mono_ns();
    for (long i = 0; i < rounds; i++)
        total += json_dumpb(v, buf, cap, JSON_COMPACT);
    t1 = mono_ns();
    for (long i = 0; i < rounds; i++) {
        b.len = 0;
        ty_json_append(&b, v);
        total += b.len;
    }
    t2 = mono_ns();
    printf("object: %zu bytes, %ld rounds\n", n, rounds);
    printf("json_dumpb:     %.2f us per object\n", (double)(t1 - t0) / rounds / 1e3);
    printf("ty_json_append: %.2f us per object (%.1fx faster)\n",
           (double)(t2 - t1) / rounds / 1e3, (double)(t1 - t0) / (double)(t2 - t1));
    json_decref(v);
    ty_buf_free(&b);
    free(buf);
    return total == 0;
}
