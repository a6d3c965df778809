/* fuzz_exec.c - the exec request a pod's process sends its supervisor
 * (runtime/local/sv_exec.c: what mpirun's rsh agent hands on Slurm): bytes
 * from an untrusted process. A request parsed has a host, at least one
 * argument, only MPI's variables (K=V), and every field inside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/local/sv_internal.h"

static bool inside(const char *p, const char *buf, size_t len)
{
    return p >= buf && p <= buf + len && strlen(p) <= (size_t)(buf + len - p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sv_exec_req r;
    char *buf;

    if (size > FUZZ_MAX_INPUT || !(buf = malloc(size + 1)))
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    if (sv_exec_parse(buf, size, &r) == 0) {
        if (!r.host || !*r.host || !inside(r.host, buf, size))
            fuzz_fail("parsed without a host inside the input");
        if (!r.nargv || r.nargv > SV_EXEC_MAX_ARGV || r.nenv > SV_EXEC_MAX_ENV)
            fuzz_fail("parsed %zu arguments, %zu variables", r.nargv, r.nenv);
        for (size_t i = 0; i < r.nargv; i++)
            if (!inside(r.argv[i], buf, size))
                fuzz_fail("argument %zu outside the input", i);
        for (size_t i = 0; i < r.nenv; i++)
            if (!inside(r.env[i], buf, size) || !strchr(r.env[i], '=') ||
                (strncmp(r.env[i], "OMPI_", 5) && strncmp(r.env[i], "OPAL_", 5) &&
                 strncmp(r.env[i], "PMIX_", 5) && strncmp(r.env[i], "PRTE_", 5) &&
                 strncmp(r.env[i], "HYDRA_", 6) && strncmp(r.env[i], "I_MPI_", 6)))
                fuzz_fail("variable %zu is not an MPI setting: %.40s", i, r.env[i]);
    }
    free(buf);
    return 0;
}
