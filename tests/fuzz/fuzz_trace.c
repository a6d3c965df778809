/* fuzz_trace.c - the simulator's trace CSV (Tiresias and Philly formats)
 * and cluster CSV readers: any bytes give a trace or an error. */
#include <stdint.h>

#include "fuzz.h"
#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim_cluster_spec spec;
    sim_trace *t;
    ty_error err;
    char *s;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    ty_error_init(&err);
    t = sim_trace_parse((const char *)data, size, &err);
    if (!t && err.code == TY_OK)
        fuzz_fail("sim_trace_parse failed without an error");
    sim_trace_free(t);
    ty_error_clear(&err);
    (void)sim_cluster_spec_parse_csv((const char *)data, size, &spec, &err);
    ty_error_clear(&err);
    /* "32x4"; anything else is read as a file name: only digits and an
     * x before the rest are given to it */
    if ((s = fuzz_cstring(data, size, 64))) {
        size_t digits = strspn(s, "0123456789");

        if (digits && (s[digits] == 'x' || s[digits] == 'X'))
            (void)sim_cluster_spec_parse(s, &spec, &err);
        ty_error_clear(&err);
        free(s);
    }
    return 0;
}
