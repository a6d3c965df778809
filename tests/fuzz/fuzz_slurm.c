/* fuzz_slurm.c - what the Slurm backend reads from Slurm's commands
 * (runtime/slurm/scli.h). The first byte picks the parser, the rest is its
 * text:
 *   'h'  a hostlist expression (max 1000 names): a failure has an error; a
 *        list holds at most 1000 non-empty names of at most 63 bytes, each
 *        of which reads back as itself;
 *   'g'  a GRES string: -1 or a count, the same on a second call;
 *   'n'  sinfo output: a failure has an error naming a line; nodes have
 *        unique, non-empty names and plain states (no suffix left);
 *   'q'  squeue output: fields are NUL-terminated within their arrays, and
 *        each job's fields joined again read back the same;
 *   'j'  scontrol show job -o output: an array of objects of strings that
 *        dumps as JSON;
 *   's'  a job state: one of the enum's values;
 *   'b'  sbatch --parsable output: an id > 0 or an error;
 *   else every parser over the whole input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/slurm/scli.h"

static void need_error(const ty_error *err, const char *what)
{
    if (err->code == TY_OK || !err->text[0])
        fuzz_fail("%s failed without an error", what);
}

static void hostlist(const char *s)
{
    ty_error err;
    json_t *a, *v;
    size_t i;

    ty_error_init(&err);
    if (!(a = scli_hostlist(s, 1000, &err))) {
        need_error(&err, "scli_hostlist");
        return;
    }
    if (json_array_size(a) > 1000)
        fuzz_fail("hostlist \"%s\": %zu names past the max", s, json_array_size(a));
    json_array_foreach(a, i, v)
    {
        const char *name = json_string_value(v);
        if (!name || !*name || strlen(name) > SCLI_NAME_MAX)
            fuzz_fail("hostlist \"%s\": bad name %zu", s, i);
        json_t *again = scli_hostlist(name, 1, NULL);
        if (!again || json_array_size(again) != 1 ||
            strcmp(json_string_value(json_array_get(again, 0)), name) != 0)
            fuzz_fail("hostlist \"%s\": name \"%s\" does not read back", s, name);
        json_decref(again);
    }
    json_decref(a);
}

static void gres(const char *s)
{
    int g = scli_gres_gpus(s);

    if (g < -1 || scli_gres_gpus(s) != g)
        fuzz_fail("gres \"%s\": %d", s, g);
}

static void sinfo(const char *s)
{
    ty_error err;
    size_t n = 12345;
    scli_node *nd;

    ty_error_init(&err);
    if (!(nd = scli_parse_sinfo(s, &n, &err))) {
        need_error(&err, "scli_parse_sinfo");
        if (n != 0)
            fuzz_fail("sinfo failed with %zu nodes", n);
        if (!strstr(err.text, "line") && err.code != TY_EINTERNAL)
            fuzz_fail("sinfo error names no line: %s", err.text);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!nd[i].name[0] || !memchr(nd[i].name, 0, sizeof(nd[i].name)) ||
            !memchr(nd[i].state, 0, sizeof(nd[i].state)) || !nd[i].state[0] ||
            strpbrk(nd[i].state, "*~#!%$@^-") || nd[i].cpus < 0 || nd[i].mem_mb < 0 ||
            nd[i].gpus < 0)
            fuzz_fail("sinfo: node %zu malformed", i);
        size_t pl = strlen(nd[i].partition);
        if (!pl || nd[i].partition[pl - 1] == '*')
            fuzz_fail("sinfo: node %zu partition \"%s\"", i, nd[i].partition);
        /* unique names: quadratic, but bounded here */
        for (size_t k = 0; k < i && k < 2000; k++)
            if (strcmp(nd[k].name, nd[i].name) == 0)
                fuzz_fail("sinfo: node %s twice", nd[i].name);
    }
    free(nd);
}

static void squeue(const char *s)
{
    ty_error err;
    size_t n = 12345;
    scli_job *j;

    ty_error_init(&err);
    if (!(j = scli_parse_squeue(s, &n, &err))) {
        need_error(&err, "scli_parse_squeue");
        if (n != 0)
            fuzz_fail("squeue failed with %zu jobs", n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!memchr(j[i].reason, 0, sizeof(j[i].reason)) ||
            !memchr(j[i].nodes, 0, sizeof(j[i].nodes)) ||
            !memchr(j[i].comment, 0, sizeof(j[i].comment)) ||
            !memchr(j[i].name, 0, sizeof(j[i].name)) || j[i].component < -1 ||
            j[i].leader < 0 || !j[i].id[0] || !j[i].state[0])
            fuzz_fail("squeue: job %zu malformed", i);
        /* the line made of its fields reads back the same (the name never
         * holds '|': it is what follows the last one) */
        char line[1200];
        size_t m;
        snprintf(line, sizeof(line), "%s|%s|%s|%s|%s|%s", j[i].id, j[i].state, j[i].reason,
                 j[i].nodes, j[i].comment, j[i].name);
        scli_job *again = scli_parse_squeue(line, &m, NULL);
        if (!again || m != 1 || strcmp(again->id, j[i].id) != 0 ||
            strcmp(again->reason, j[i].reason) != 0 || strcmp(again->nodes, j[i].nodes) != 0 ||
            strcmp(again->comment, j[i].comment) != 0 || strcmp(again->name, j[i].name) != 0 ||
            again->leader != j[i].leader || again->component != j[i].component || again->cut)
            fuzz_fail("squeue: job %zu does not read back from \"%s\"", i, line);
        free(again);
        (void)scli_state_of(j[i].state);
    }
    free(j);
}

static void show_job(const char *s)
{
    ty_error err;
    json_t *a, *o;
    size_t i;

    ty_error_init(&err);
    if (!(a = scli_parse_show_job(s, &err))) {
        need_error(&err, "scli_parse_show_job");
        return;
    }
    json_array_foreach(a, i, o)
    {
        const char *k;
        json_t *v;
        if (!json_is_object(o) || json_object_size(o) == 0)
            fuzz_fail("show job: line %zu not an object with keys", i);
        json_object_foreach(o, k, v)
        {
            if (!json_is_string(v))
                fuzz_fail("show job: %s not a string", k);
        }
    }
    /* valid UTF-8 all through: it dumps */
    char *text = json_dumps(a, JSON_COMPACT);
    if (!text)
        fuzz_fail("show job: result does not dump");
    free(text);
    json_decref(a);
}

static void sbatch(const char *s)
{
    ty_error err;
    long id;

    ty_error_init(&err);
    if ((id = scli_parse_sbatch(s, &err)) < 0)
        need_error(&err, "scli_parse_sbatch");
    else if (id == 0)
        fuzz_fail("sbatch \"%s\": id 0", s);
}

static void state(const char *s)
{
    scli_state st = scli_state_of(s);

    if (st < SCLI_PENDING || st > SCLI_UNKNOWN || !scli_state_name(st))
        fuzz_fail("state \"%s\": %d", s, (int)st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s;

    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    if (!(s = fuzz_cstring(data + 1, size - 1, FUZZ_MAX_INPUT)))
        return 0;
    switch (data[0]) {
    case 'h':
        hostlist(s);
        break;
    case 'g':
        gres(s);
        break;
    case 'n':
        sinfo(s);
        break;
    case 'q':
        squeue(s);
        break;
    case 'j':
        show_job(s);
        break;
    case 's':
        state(s);
        break;
    case 'b':
        sbatch(s);
        break;
    default:
        hostlist(s);
        gres(s);
        sinfo(s);
        squeue(s);
        show_job(s);
        state(s);
        sbatch(s);
    }
    free(s);
    return 0;
}
