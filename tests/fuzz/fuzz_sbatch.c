/* fuzz_sbatch.c - `trainyard sbatch`'s readers of what a user writes
 * (src/cli/slurm_batch.c): the #SBATCH directives of a script, then the
 * counts resolved together and the Volcano Job built from them. A failure
 * has an error; resolved options hold together (nodes within the bound,
 * tasks at least the nodes and within the bound, each node's tasks
 * summing to the job's); a manifest built is a Volcano Job with as many
 * replicas as nodes. Each line is also read as a --time and a --mem value:
 * a time is a number of seconds or -1, a memory quantity fits its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/slurm_batch.h"
#include "fuzz.h"

static void check_values(const char *text)
{
    char line[256], mem[64];
    size_t i = 0;

    while (*text) {
        size_t n = strcspn(text, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) - 1 ? n : sizeof(line) - 1),
                 text);
        long t = sb_parse_time(line);
        if (t < -1)
            fuzz_fail("time %s read as %ld", line, t);
        if (sb_parse_mem(line, mem, sizeof(mem)) == 0 && strlen(mem) >= sizeof(mem))
            fuzz_fail("mem %s overran", line);
        text += n + (text[n] == '\n');
        if (++i > 64)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *script = fuzz_cstring(data, size, FUZZ_MAX_INPUT);
    sb_opts o;
    ty_error err;

    if (!script)
        return 0;
    check_values(script);
    sb_opts_init(&o);
    ty_error_init(&err);
    if (sb_parse_directives(script, &o, &err) < 0 || sb_resolve(&o, &err) < 0) {
        if (!err.code || !err.text[0])
            fuzz_fail("refused without an error");
        goto out;
    }
    if (o.nodes < 1 || o.nodes > SB_MAX_NODES || o.ntasks < o.nodes || o.ntasks > SB_MAX_TASKS)
        fuzz_fail("resolved nodes %ld tasks %ld", o.nodes, o.ntasks);
    long sum = 0;
    for (long i = 0; i < o.nodes; i++) {
        long k = sb_tasks_on(&o, i);
        if (k < 1)
            fuzz_fail("node %ld runs %ld tasks", i, k);
        sum += k;
    }
    if (sum != o.ntasks)
        fuzz_fail("nodes run %ld tasks of %ld", sum, o.ntasks);
    char *args[] = {"a", NULL};
    sb_submit s = {.id = 7, .script = script, .args = args, .nargs = 1, .user = "u",
                   .submit_dir = "/tmp", .submit_host = "h"};
    json_t *job = sb_manifest(&o, &s, &err);
    if (!job) {
        if (!err.code)
            fuzz_fail("no manifest and no error");
        goto out;
    }
    json_t *task = json_array_get(json_object_get(json_object_get(job, "spec"), "tasks"), 0);
    if (json_integer_value(json_object_get(task, "replicas")) != o.nodes)
        fuzz_fail("%ld nodes but %lld replicas", o.nodes,
                  (long long)json_integer_value(json_object_get(task, "replicas")));
    json_decref(job);
out:
    ty_error_clear(&err);
    free(script);
    return 0;
}
