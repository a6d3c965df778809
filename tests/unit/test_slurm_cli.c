/* test_slurm_cli.c - runtime/slurm/scli: parsing what Slurm 22.05 prints
 * in the backend's formats (hostlists, GRES, sinfo, squeue, scontrol show
 * job -o), real-looking and hostile. Running commands: test_slurm_cli_run.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/slurm/scli.h"

/* ---- hostlists ---- */

static void hl_ok(const char *expr, size_t max, const char *want)
{
    ty_error err;
    json_t *a;

    ty_error_init(&err);
    a = scli_hostlist(expr, max, &err);
    if (!a)
        print_error("scli_hostlist(\"%s\"): %s\n", expr, err.text);
    assert_non_null(a);
    char got[4096] = "";
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (i)
            strcat(got, " ");
        strcat(got, json_string_value(v));
    }
    if (strcmp(got, want) != 0)
        print_error("scli_hostlist(\"%s\") = \"%s\", want \"%s\"\n", expr, got, want);
    assert_string_equal(got, want);
    json_decref(a);
}

static void hl_bad(const char *expr, size_t max, const char *msg)
{
    ty_error err;

    ty_error_init(&err);
    json_t *a = scli_hostlist(expr, max, &err);
    if (a)
        print_error("scli_hostlist(\"%s\") did not fail\n", expr);
    assert_null(a);
    assert_int_equal(err.code, TY_EINVALID);
    if (!strstr(err.text, msg))
        print_error("scli_hostlist(\"%s\"): \"%s\" lacks \"%s\"\n", expr, err.text, msg);
    assert_non_null(strstr(err.text, msg));
}

static void test_hostlist(void **state)
{
    (void)state;
    hl_ok("n1", 10, "n1");
    hl_ok("n[1-3,5]", 10, "n1 n2 n3 n5");
    hl_ok("gpu-[01-03]", 10, "gpu-01 gpu-02 gpu-03");
    hl_ok("n[08-10]", 10, "n08 n09 n10");
    hl_ok("n[8-10]", 10, "n8 n9 n10");
    hl_ok("n[098-101]", 10, "n098 n099 n100 n101");
    hl_ok("n[1-2],login1", 10, "n1 n2 login1");
    hl_ok("n[1-2]-ib,n[5]", 10, "n1-ib n2-ib n5");
    hl_ok("[1-2]", 10, "1 2");
    hl_ok("node.example.com,a_b", 10, "node.example.com a_b");
    hl_ok("", 10, "");
    hl_ok("(null)", 10, "");
    hl_ok("n[0-9]", 10, "n0 n1 n2 n3 n4 n5 n6 n7 n8 n9");
    hl_ok("", 0, "");
}

static void test_hostlist_hostile(void **state)
{
    (void)state;
    hl_bad("a[1-2]b[3-4]", 100, "more than one bracket group");
    hl_bad("n[1-99999999]", 1000, "more than 1000 names");
    hl_bad("n[1-999999999999999999]", 1000, "more than 1000 names");
    hl_bad("n[1-9999999999999999999]", 1000, "bad range");
    hl_bad("n[0-10],m[1-5]", 12, "more than 12 names");
    hl_bad("n1,n2,n3", 2, "more than 2 names");
    hl_bad("n[5-1]", 100, "runs backwards");
    hl_bad("n[1-3", 100, "unclosed");
    hl_bad("n[]", 100, "empty brackets");
    hl_bad("n[a-b]", 100, "bad range");
    hl_bad("n[1--2]", 100, "bad range");
    hl_bad("n[1-2,]", 100, "bad range");
    hl_bad("n[1-2;3]", 100, "unexpected");
    hl_bad("n[[1]]", 100, "inside brackets");
    hl_bad("n1,,n2", 100, "empty name");
    hl_bad("n1,", 100, "trailing comma");
    hl_bad(",n1", 100, "empty name");
    hl_bad("n 1", 100, "unexpected character 0x20");
    hl_bad("n1]", 100, "unexpected character 0x5d");
    hl_bad("n\n1", 100, "unexpected character 0x0a");
    hl_bad("n1|x", 100, "unexpected character");
    hl_bad("n[1-2]x]", 100, "unexpected character");
    hl_bad("n[1-2]\x80", 100, "unexpected character 0x80");
    char longname[100];
    memset(longname, 'a', 64);
    longname[64] = '\0';
    hl_bad(longname, 100, "longer than 63");
    longname[63] = '\0';
    hl_ok(longname, 1, longname);
    memset(longname, 'a', 62);
    strcpy(longname + 62, "[1-10]");
    hl_bad(longname, 100, "longer than 63");
    strcpy(longname + 62, "[1-9]");
    json_t *a = scli_hostlist(longname, 100, NULL);
    assert_int_equal(json_array_size(a), 9);
    json_decref(a);
    assert_null(scli_hostlist(NULL, 10, NULL));
}

/* ---- GRES ---- */

static void test_gres(void **state)
{
    (void)state;
    assert_int_equal(scli_gres_gpus("gpu:2"), 2);
    assert_int_equal(scli_gres_gpus("gpu:tesla:2"), 2);
    assert_int_equal(scli_gres_gpus("gpu:tesla:2(S:0-1)"), 2);
    assert_int_equal(scli_gres_gpus("gpu:a100:4(S:0,1)"), 4);
    assert_int_equal(scli_gres_gpus("gpu:2,mps:100"), 2);
    assert_int_equal(scli_gres_gpus("mps:100,gpu:k80:1(S:1),gpu:p100:2(S:0)"), 3);
    assert_int_equal(scli_gres_gpus("gpu"), 1);
    assert_int_equal(scli_gres_gpus("gpu:a100"), 1);
    assert_int_equal(scli_gres_gpus("gpu:0"), 0);
    assert_int_equal(scli_gres_gpus("gpus:4"), 0);
    assert_int_equal(scli_gres_gpus("shard:8,mps:4K"), 0);
    assert_int_equal(scli_gres_gpus("(null)"), 0);
    assert_int_equal(scli_gres_gpus(""), 0);
    assert_int_equal(scli_gres_gpus(NULL), 0);

    assert_int_equal(scli_gres_gpus("gpu:"), -1);
    assert_int_equal(scli_gres_gpus(":2"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2,"), -1);
    assert_int_equal(scli_gres_gpus(",gpu:2"), -1);
    assert_int_equal(scli_gres_gpus("gpu::2"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2(S:0"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2)S:0("), -1);
    assert_int_equal(scli_gres_gpus("gpu:2(S:(0))"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2(S:0)x"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2x"), -1);
    assert_int_equal(scli_gres_gpus("gpu:a100x"), 1);
    assert_int_equal(scli_gres_gpus("gpu:2 x"), -1);
    assert_int_equal(scli_gres_gpus("gpu:99999999999"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2147483647,gpu:1"), -1);
    assert_int_equal(scli_gres_gpus("gpu:2147483647"), 2147483647);
    assert_int_equal(scli_gres_gpus("g\x01u:1"), -1);
}

/* ---- sinfo ---- */

static const char sinfo_real[] =
    "gpu-01|10.0.0.11|64|515000|gpu:a100:8(S:0-1)|mixed|gpu*\n"
    "gpu-02|10.0.0.12|64|515000|gpu:a100:8(S:0-1)|allocated|gpu*\n"
    "gpu-03|10.0.0.13|64|515000|gpu:a100:8(S:0-1)|drained*|gpu*\n"
    "gpu-04|gpu-04|64|515000|gpu:a100:8(S:0-1)|draining|gpu*\n"
    "gpu-05|gpu-05|64|515000|gpu:a100:4(S:0),gpu:a100:4(S:1)|down*|gpu*\n"
    "cpu-01|cpu-01|128|257000|(null)|idle~|cpu\n"
    "cpu-02|cpu-02|128|257000|(null)|idle|cpu\n"
    "gpu-01|10.0.0.11|64|515000|gpu:a100:8(S:0-1)|mixed|all\n"
    "cpu-03|cpu-03|128|257000|(null)|unknown|cpu\n"
    "cpu-04|cpu-04|128|257000|(null)|allocated+|cpu\n"
    "cpu-05|cpu-05|128|257000|(null)|fail|cpu\n"
    "cpu-06|cpu-06|128|257000|(null)|IDLE+DRAIN|cpu\n"
    "cpu-07|cpu-07|128|257000|(null)|completing#|cpu\n"
    "cpu-08|cpu-08|128|257000|(null)|mixed-|cpu\r\n"
    "\n";

static void test_sinfo(void **state)
{
    ty_error err;
    size_t n = 99;
    scli_node *nd;

    (void)state;
    ty_error_init(&err);
    nd = scli_parse_sinfo(sinfo_real, &n, &err);
    if (!nd)
        print_error("%s\n", err.text);
    assert_non_null(nd);
    assert_int_equal(n, 13);
    assert_string_equal(nd[0].name, "gpu-01");
    assert_string_equal(nd[0].addr, "10.0.0.11");
    assert_int_equal(nd[0].cpus, 64);
    assert_int_equal(nd[0].mem_mb, 515000);
    assert_int_equal(nd[0].gpus, 8);
    assert_string_equal(nd[0].state, "mixed");
    assert_string_equal(nd[0].partition, "gpu");
    assert_true(nd[0].responding);
    assert_false(nd[0].drain);
    assert_false(nd[0].down);
    assert_string_equal(nd[2].state, "drained");
    assert_true(nd[2].drain);
    assert_false(nd[2].responding);
    assert_false(nd[2].down);
    assert_true(nd[3].drain);
    assert_true(nd[3].responding);
    assert_string_equal(nd[4].state, "down");
    assert_true(nd[4].down);
    assert_false(nd[4].responding);
    assert_int_equal(nd[4].gpus, 8);
    assert_string_equal(nd[5].name, "cpu-01");
    assert_string_equal(nd[5].state, "idle");
    assert_false(nd[5].down);
    assert_true(nd[5].responding);
    assert_int_equal(nd[5].gpus, 0);
    /* gpu-01 again in partition "all": kept once, first partition */
    assert_string_equal(nd[7].name, "cpu-03");
    assert_true(nd[7].down);
    assert_string_equal(nd[8].state, "allocated");
    assert_true(nd[9].down);
    assert_string_equal(nd[10].state, "idle+drain");
    assert_true(nd[10].drain);
    assert_false(nd[10].down);
    assert_string_equal(nd[11].state, "completing");
    assert_string_equal(nd[12].state, "mixed");
    assert_string_equal(nd[12].partition, "cpu");
    for (size_t i = 0; i < n; i++)
        assert_string_not_equal(nd[i].partition, "all");
    free(nd);

    nd = scli_parse_sinfo("", &n, &err);
    assert_non_null(nd);
    assert_int_equal(n, 0);
    free(nd);
    nd = scli_parse_sinfo("n1|n1|1|1000+|gpu:1|idle|p\n", &n, &err);
    assert_non_null(nd);
    assert_int_equal(nd[0].mem_mb, 1000);
    free(nd);
}

static void sinfo_bad(const char *text, const char *msg)
{
    ty_error err;
    size_t n = 7;

    ty_error_init(&err);
    assert_null(scli_parse_sinfo(text, &n, &err));
    assert_int_equal(n, 0);
    assert_int_equal(err.code, TY_EINVALID);
    if (!strstr(err.text, msg))
        print_error("sinfo \"%.60s\": \"%s\" lacks \"%s\"\n", text, err.text, msg);
    assert_non_null(strstr(err.text, msg));
}

static void test_sinfo_hostile(void **state)
{
    (void)state;
    sinfo_bad("n1|n1|1|1|(null)|idle|p\nn2|n2|1|1|(null)|idle\n", "line 2: fewer than 7");
    sinfo_bad("n1|n1|1|1|(null)|idle|p|x\n", "line 1: more than 7");
    sinfo_bad("n1 n1 1 1 (null) idle p\n", "fewer than 7");
    sinfo_bad("\n\nn1|n1|x|1|(null)|idle|p\n", "line 3: bad CPU count");
    sinfo_bad("n1|n1|-1|1|(null)|idle|p\n", "bad CPU count");
    sinfo_bad("n1|n1|99999999999|1|(null)|idle|p\n", "bad CPU count");
    sinfo_bad("n1|n1|1|1G|(null)|idle|p\n", "bad memory");
    sinfo_bad("n1|n1|1||(null)|idle|p\n", "bad memory");
    sinfo_bad("n1|n1|1|1|gpu:|idle|p\n", "malformed GRES");
    sinfo_bad("n1|n1|1|1|(null)||p\n", "bad node state");
    sinfo_bad("n1|n1|1|1|(null)|*|p\n", "bad node state");
    sinfo_bad("n1|n1|1|1|(null)|id le|p\n", "bad node state");
    sinfo_bad("n1|n1|1|1|(null)|idle|\n", "bad partition");
    /* one '*' marks the default partition; a second is no name (fuzz_slurm) */
    sinfo_bad("n1|n1|1|1|(null)|idle|gpu**\n", "bad partition");
    sinfo_bad("n1|n1|1|1|(null)|idle|g*u\n", "bad partition");
    sinfo_bad("|n1|1|1|(null)|idle|p\n", "bad node name");
    sinfo_bad("n\x01|n1|1|1|(null)|idle|p\n", "bad node name");
    sinfo_bad("n/1|n1|1|1|(null)|idle|p\n", "bad node name");
    sinfo_bad("n1||1|1|(null)|idle|p\n", "bad node address");
    char line[300];
    memset(line, 'a', 64);
    strcpy(line + 64, "|a|1|1|(null)|idle|p\n");
    sinfo_bad(line, "bad node name");
    snprintf(line, sizeof(line), "n1|n1|1|1|(null)|%040d|p\n", 0);
    sinfo_bad(line, "bad node state");
    char *big = malloc(2000);
    memset(big, 'g', 1500);
    strcpy(big, "n1|n1|1|1|");
    memset(big + 10, 'g', 1400);
    strcpy(big + 1410, "|idle|p\n");
    sinfo_bad(big, "GRES longer");
    free(big);

    /* A NUL ends the text (it is a C string): what follows is not read. */
    const char nul[] = "n1|n1|1|1|(null)|idle|p\n\0garbage";
    size_t n;
    scli_node *nd = scli_parse_sinfo(nul, &n, NULL);
    assert_int_equal(n, 1);
    free(nd);
}

static void test_sinfo_bounds(void **state)
{
    const char *row = "n1|n1|1|1|(null)|idle|p\n";
    size_t rl = strlen(row), n;
    char *text = malloc(rl * (SCLI_MAX_LINES + 1) + 1);
    ty_error err;

    (void)state;
    for (size_t i = 0; i <= SCLI_MAX_LINES; i++)
        memcpy(text + i * rl, row, rl);
    text[rl * (SCLI_MAX_LINES + 1)] = '\0';
    ty_error_init(&err);
    assert_null(scli_parse_sinfo(text, &n, &err));
    assert_non_null(strstr(err.text, "more than 100000 lines"));
    /* exactly the bound: one node (the same name each line) */
    text[rl * SCLI_MAX_LINES] = '\0';
    scli_node *nd = scli_parse_sinfo(text, &n, &err);
    assert_non_null(nd);
    assert_int_equal(n, 1);
    free(nd);
    free(text);

    /* 100000 different nodes: the dedup map keeps it linear */
    text = malloc(40 * SCLI_MAX_LINES + 1);
    size_t off = 0;
    for (int i = 0; i < SCLI_MAX_LINES; i++)
        off += (size_t)sprintf(text + off, "n%06d|a|1|1|(null)|idle|p\n", i);
    nd = scli_parse_sinfo(text, &n, &err);
    assert_non_null(nd);
    assert_int_equal(n, SCLI_MAX_LINES);
    assert_string_equal(nd[SCLI_MAX_LINES - 1].name, "n099999");
    free(nd);
    free(text);
}

/* ---- squeue ---- */

static const char squeue_real[] =
    "4242|RUNNING|None|gpu-[01-02]|trainyard:default/pt-0/uid-1|ty-default-pt-0\n"
    "4243+0|PENDING|Resources||trainyard:default/het/uid-2|ty-het\n"
    "4243+1|PENDING|Resources||trainyard:default/het/uid-2|ty-het\n"
    "4250_3|COMPLETED|None|cpu-01|(null)|array\n"
    "4250_[4-9%2]|PENDING|JobArrayTaskLimit||(null)|array\n"
    "4251|FAILED|NonZeroExitCode|cpu-02|a|b|c|x\n"
    "4252|CANCELLED|None|(null)||\n";

static void test_squeue(void **state)
{
    ty_error err;
    size_t n;
    scli_job *j;

    (void)state;
    ty_error_init(&err);
    j = scli_parse_squeue(squeue_real, &n, &err);
    if (!j)
        print_error("%s\n", err.text);
    assert_non_null(j);
    assert_int_equal(n, 7);
    assert_string_equal(j[0].id, "4242");
    assert_int_equal(j[0].leader, 4242);
    assert_int_equal(j[0].component, -1);
    assert_string_equal(j[0].state, "RUNNING");
    assert_string_equal(j[0].reason, "None");
    assert_string_equal(j[0].nodes, "gpu-[01-02]");
    assert_string_equal(j[0].comment, "trainyard:default/pt-0/uid-1");
    assert_string_equal(j[0].name, "ty-default-pt-0");
    assert_false(j[0].cut);
    assert_string_equal(j[1].id, "4243+0");
    assert_int_equal(j[1].leader, 4243);
    assert_int_equal(j[1].component, 0);
    assert_string_equal(j[1].nodes, "");
    assert_int_equal(j[2].component, 1);
    assert_int_equal(j[3].leader, 4250);
    assert_int_equal(j[3].component, -1);
    assert_string_equal(j[3].comment, "");
    assert_string_equal(j[4].id, "4250_[4-9%2]");
    /* '|' in the comment: the name is the last field */
    assert_string_equal(j[5].comment, "a|b|c");
    assert_string_equal(j[5].name, "x");
    assert_string_equal(j[6].nodes, "");
    assert_string_equal(j[6].comment, "");
    assert_string_equal(j[6].name, "");
    free(j);

    j = scli_parse_squeue("\n", &n, &err);
    assert_non_null(j);
    assert_int_equal(n, 0);
    free(j);
}

static void squeue_bad(const char *text, const char *msg)
{
    ty_error err;
    size_t n = 3;

    ty_error_init(&err);
    assert_null(scli_parse_squeue(text, &n, &err));
    assert_int_equal(n, 0);
    assert_int_equal(err.code, TY_EINVALID);
    if (!strstr(err.text, msg))
        print_error("squeue \"%.60s\": \"%s\" lacks \"%s\"\n", text, err.text, msg);
    assert_non_null(strstr(err.text, msg));
}

static void test_squeue_hostile(void **state)
{
    ty_error err;
    size_t n;

    (void)state;
    squeue_bad("1|RUNNING|None|n1|c\n", "line 1: fewer than 6");
    squeue_bad("1|RUNNING|None|n1|c|n\n2|RUNNING\n", "line 2: fewer than 6");
    squeue_bad("1 RUNNING None n1 c n\n", "fewer than 6");
    squeue_bad("|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("x1|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1+|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1+x|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1_|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1_[|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1_[1;2]|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("99999999999999999999|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1234567890123456789012345678901234|RUNNING|None|n1|c|n\n", "bad job id");
    squeue_bad("1||None|n1|c|n\n", "bad job state");
    squeue_bad("1|running|None|n1|c|n\n", "bad job state");
    squeue_bad("1|RUNNING_RUNNING_RUNNING_RUNNING_|None|n1|c|n\n", "bad job state");

    /* Overlong free-text fields are cut, not fatal: a foreign job's long
     * comment must not fail the whole listing. */
    char line[4000];
    int off = snprintf(line, sizeof(line), "7|PENDING|");
    memset(line + off, 'r', 300);
    off += 300;
    off += snprintf(line + off, sizeof(line) - (size_t)off, "|n1|");
    /* a comment of 600 bytes made of 2-byte UTF-8: the cut must not split one */
    for (int i = 0; i < 300; i++) {
        line[off++] = (char)0xc3;
        line[off++] = (char)0xa9;
    }
    off += snprintf(line + off, sizeof(line) - (size_t)off, "|name\n");
    ty_error_init(&err);
    scli_job *j = scli_parse_squeue(line, &n, &err);
    assert_non_null(j);
    assert_true(j[0].cut);
    assert_int_equal(strlen(j[0].reason), 127);
    assert_int_equal(strlen(j[0].comment) % 2, 0);
    assert_true(strlen(j[0].comment) >= 508);
    assert_string_equal(j[0].name, "name");
    free(j);

    /* Bytes that are not UTF-8 and control bytes become '?' */
    j = scli_parse_squeue("8|PENDING|None||bad\xff\x01text|n\xc3\n", &n, &err);
    assert_non_null(j);
    assert_string_equal(j[0].comment, "bad??text");
    assert_string_equal(j[0].name, "n?");
    assert_false(j[0].cut);
    free(j);
}

static void test_state_of(void **state)
{
    (void)state;
    assert_int_equal(scli_state_of("PENDING"), SCLI_PENDING);
    assert_int_equal(scli_state_of("CONFIGURING"), SCLI_PENDING);
    assert_int_equal(scli_state_of("REQUEUED"), SCLI_PENDING);
    assert_int_equal(scli_state_of("REQUEUE_HOLD"), SCLI_PENDING);
    assert_int_equal(scli_state_of("RESV_DEL_HOLD"), SCLI_PENDING);
    assert_int_equal(scli_state_of("RUNNING"), SCLI_RUNNING);
    assert_int_equal(scli_state_of("SIGNALING"), SCLI_RUNNING);
    assert_int_equal(scli_state_of("SUSPENDED"), SCLI_SUSPENDED);
    assert_int_equal(scli_state_of("STOPPED"), SCLI_SUSPENDED);
    assert_int_equal(scli_state_of("COMPLETING"), SCLI_COMPLETING);
    assert_int_equal(scli_state_of("STAGE_OUT"), SCLI_COMPLETING);
    assert_int_equal(scli_state_of("COMPLETED"), SCLI_DONE_OK);
    assert_int_equal(scli_state_of("CD"), SCLI_DONE_OK);
    assert_int_equal(scli_state_of("completed"), SCLI_DONE_OK);
    static const char *const failed[] = {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                         "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
                                         "SPECIAL_EXIT", "REVOKED", "CANCELLED by 1000", "OOM"};
    for (size_t i = 0; i < sizeof(failed) / sizeof(failed[0]); i++)
        assert_int_equal(scli_state_of(failed[i]), SCLI_DONE_FAILED);
    assert_int_equal(scli_state_of(""), SCLI_UNKNOWN);
    assert_int_equal(scli_state_of(NULL), SCLI_UNKNOWN);
    assert_int_equal(scli_state_of("RUNNINGX"), SCLI_UNKNOWN);
    assert_int_equal(scli_state_of("RUN"), SCLI_UNKNOWN);
    assert_string_equal(scli_state_name(SCLI_DONE_OK), "succeeded");
    assert_string_equal(scli_state_name((scli_state)99), "unknown");
}

/* ---- scontrol show job -o ---- */

static void test_show_job(void **state)
{
    const char *text =
        "JobId=4242 JobName=ty-default-pt-0 UserId=ty(1000) GroupId=ty(1000) MCS_label=N/A "
        "Priority=4294901757 Nice=0 Account=(null) QOS=normal JobState=RUNNING Reason=None "
        "Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 "
        "RunTime=00:00:05 TimeLimit=UNLIMITED NodeList=gpu-[01-02] BatchHost=gpu-01 "
        "NumNodes=2 NumCPUs=128 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
        "TRES=cpu=128,mem=1000G,node=2,billing=128,gres/gpu=16 Socks/Node=* "
        "NtasksPerN:B:S:C=1:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=500G "
        "Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) "
        "Network=(null) Command=(null) WorkDir=/var/lib/trainyard/pods/a b "
        "Comment=trainyard:default/pt-0/uid-1 with spaces StdErr=/tmp/x.err StdIn=/dev/null "
        "StdOut=/tmp/x.out Power= TresPerNode=gres:gpu:8   \n"
        "\n"
        "   JobId=4243 HetJobId=4243 HetJobOffset=0 JobState=PENDING Reason=Resources\r\n";
    ty_error err;
    json_t *a;

    (void)state;
    ty_error_init(&err);
    a = scli_parse_show_job(text, &err);
    if (!a)
        print_error("%s\n", err.text);
    assert_non_null(a);
    assert_int_equal(json_array_size(a), 2);
    json_t *j = json_array_get(a, 0);
    assert_string_equal(json_string_value(json_object_get(j, "JobId")), "4242");
    assert_string_equal(json_string_value(json_object_get(j, "UserId")), "ty(1000)");
    assert_string_equal(json_string_value(json_object_get(j, "TRES")),
                        "cpu=128,mem=1000G,node=2,billing=128,gres/gpu=16");
    assert_string_equal(json_string_value(json_object_get(j, "ReqB:S:C:T")), "0:0:*:*");
    assert_string_equal(json_string_value(json_object_get(j, "Socks/Node")), "*");
    assert_string_equal(json_string_value(json_object_get(j, "CPUs/Task")), "1");
    assert_string_equal(json_string_value(json_object_get(j, "WorkDir")),
                        "/var/lib/trainyard/pods/a b");
    assert_string_equal(json_string_value(json_object_get(j, "Comment")),
                        "trainyard:default/pt-0/uid-1 with spaces");
    assert_string_equal(json_string_value(json_object_get(j, "Power")), "");
    assert_string_equal(json_string_value(json_object_get(j, "TresPerNode")), "gres:gpu:8");
    j = json_array_get(a, 1);
    assert_string_equal(json_string_value(json_object_get(j, "HetJobOffset")), "0");
    assert_string_equal(json_string_value(json_object_get(j, "Reason")), "Resources");
    json_decref(a);

    a = scli_parse_show_job("", &err);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    /* a value that is not UTF-8, '=' and spaces in values */
    a = scli_parse_show_job("A=x\xff y B==1= C= =D\n", &err);
    assert_non_null(a);
    j = json_array_get(a, 0);
    assert_string_equal(json_string_value(json_object_get(j, "A")), "x? y");
    assert_string_equal(json_string_value(json_object_get(j, "B")), "=1=");
    assert_string_equal(json_string_value(json_object_get(j, "C")), " =D");
    json_decref(a);
}

static void test_show_job_hostile(void **state)
{
    ty_error err;

    (void)state;
    ty_error_init(&err);
    assert_null(scli_parse_show_job("JobId=1 A=2\nslurm_load_jobs error: Invalid job id\n", &err));
    assert_int_equal(err.code, TY_EINVALID);
    assert_non_null(strstr(err.text, "line 2 does not start with Key="));
    ty_error_init(&err);
    assert_null(scli_parse_show_job("=1\n", &err));
    ty_error_init(&err);
    assert_null(scli_parse_show_job("1A=1\n", &err));
    /* too many keys in one line */
    size_t cap = 1001 * 8 + 1, off = 0;
    char *t = malloc(cap);
    for (int i = 0; i < 1001; i++)
        off += (size_t)snprintf(t + off, cap - off, "K%d=v ", i);
    ty_error_init(&err);
    assert_null(scli_parse_show_job(t, &err));
    assert_non_null(strstr(err.text, "more than 1000 keys"));
    free(t);
    /* a key of 200 characters is a value, not a key */
    char k[300];
    memset(k, 'k', 200);
    strcpy(k + 200, "=1");
    ty_error_init(&err);
    assert_null(scli_parse_show_job(k, &err));
    json_t *a;
    memmove(k + 4, k, 203);
    memcpy(k, "A=1 ", 4);
    a = scli_parse_show_job(k, &err);
    assert_non_null(a);
    assert_int_equal(json_object_size(json_array_get(a, 0)), 1);
    assert_int_equal(strlen(json_string_value(json_object_get(json_array_get(a, 0), "A"))), 204);
    json_decref(a);
}

static void test_sbatch(void **state)
{
    ty_error err;

    (void)state;
    ty_error_init(&err);
    assert_int_equal(scli_parse_sbatch("4242\n", &err), 4242);
    assert_int_equal(scli_parse_sbatch("4242", &err), 4242);
    assert_int_equal(scli_parse_sbatch("\n  4243;cluster-a\n", &err), 4243);
    assert_int_equal(scli_parse_sbatch("4244\r\n", &err), 4244);
    static const char *const bad[] = {"", "\n", "0\n", "x\n", "42x\n", "-1\n",
                                      "4242;\n", "4242;a|b\n", "99999999999999999999999\n",
                                      "sbatch: error: Batch job submission failed\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ty_error_init(&err);
        assert_int_equal(scli_parse_sbatch(bad[i], &err), -1);
        assert_int_equal(err.code, TY_EINVALID);
    }
    ty_error_init(&err);
    scli_parse_sbatch("Submitted batch job 12\x01\n", &err);
    assert_non_null(strstr(err.text, "\"Submitted batch job 12?\""));
    assert_int_equal(scli_parse_sbatch(NULL, NULL), -1);
}

static void test_mem(void **state)
{
    (void)state;
    assert_int_equal(scli_mem_mb_from_bytes(0), 0);
    assert_int_equal(scli_mem_mb_from_bytes(-5), 0);
    assert_int_equal(scli_mem_mb_from_bytes(1), 1);
    assert_int_equal(scli_mem_mb_from_bytes(1048576), 1);
    assert_int_equal(scli_mem_mb_from_bytes(1048577), 2);
    assert_int_equal(scli_mem_mb_from_bytes(4LL << 30), 4096);
    assert_int_equal(scli_mem_mb_from_bytes(1000000000), 954);
    assert_int_equal(scli_mem_mb_from_bytes(INT64_MAX), INT64_MAX / 1048576 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostlist),
        cmocka_unit_test(test_hostlist_hostile),
        cmocka_unit_test(test_gres),
        cmocka_unit_test(test_sinfo),
        cmocka_unit_test(test_sinfo_hostile),
        cmocka_unit_test(test_sinfo_bounds),
        cmocka_unit_test(test_squeue),
        cmocka_unit_test(test_squeue_hostile),
        cmocka_unit_test(test_state_of),
        cmocka_unit_test(test_show_job),
        cmocka_unit_test(test_show_job_hostile),
        cmocka_unit_test(test_sbatch),
        cmocka_unit_test(test_mem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
