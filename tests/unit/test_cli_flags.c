/* test_cli_flags.c - the CLI's shared flag parser (src/cli/flags.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli.h"

/* Parses argv (NULL-terminated literals) with the command's own -x/--extra
 * ARG and -q; returns how many own options were seen, own letters into
 * seen[]. */
static int parse(cli_ctx *ctx, unsigned common, char **argv, char *seen, const char **extra)
{
    static const struct option own[] = {{"extra", required_argument, NULL, 'x'},
                                        {"quiet", no_argument, NULL, 'q'},
                                        {NULL, 0, NULL, 0}};
    cli_parser p;
    int argc = 0, c, n = 0;

    while (argv[argc])
        argc++;
    opterr = 0;
    cli_parser_init(&p, ctx, common, "x:q", own);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        seen[n++] = (char)c;
        if (c == 'x')
            *extra = optarg;
    }
    seen[n] = '\0';
    return n;
}

static void test_common_flags_fill_the_context(void **state)
{
    (void)state;
    char *argv[] = {"cmd", "-n", "team-a", "--server", "https://h:1", "--kubeconfig", "/k",
                    "--context", "c1", "-o", "wide", "-x", "v", "--quiet", "JOB", NULL};
    cli_ctx ctx = {0};
    char seen[16];
    const char *extra = NULL;

    assert_int_equal(parse(&ctx, CLI_F_CONNECT | CLI_F_OUTPUT, argv, seen, &extra), 2);
    assert_string_equal(seen, "xq");
    assert_string_equal(extra, "v");
    assert_string_equal(ctx.ns, "team-a");
    assert_string_equal(ctx.server, "https://h:1");
    assert_string_equal(ctx.kubeconfig, "/k");
    assert_string_equal(ctx.context, "c1");
    assert_string_equal(ctx.output, "wide");
    assert_false(ctx.all_namespaces);
    assert_int_equal(optind, 14);
    assert_string_equal(argv[optind], "JOB");
}

static void test_defaults(void **state)
{
    (void)state;
    char *argv[] = {"cmd", "-A", NULL};
    cli_ctx ctx = {0};
    char seen[16];
    const char *extra = NULL;

    assert_int_equal(parse(&ctx, CLI_F_CONNECT | CLI_F_ALL, argv, seen, &extra), 0);
    assert_string_equal(ctx.ns, "default");
    assert_string_equal(ctx.output, "");
    assert_true(ctx.all_namespaces);
    assert_null(ctx.server);
}

/* A command that does not take a common flag refuses it. */
static void test_flags_not_taken_are_refused(void **state)
{
    (void)state;
    char *argv[] = {"cmd", "-A", NULL};
    char *argv2[] = {"cmd", "--output", "json", NULL};
    cli_ctx ctx = {0};
    char seen[16];
    const char *extra = NULL;

    assert_int_equal(parse(&ctx, CLI_F_CONNECT, argv, seen, &extra), 1);
    assert_string_equal(seen, "?");
    assert_false(ctx.all_namespaces);
    memset(&ctx, 0, sizeof(ctx));
    assert_int_equal(parse(&ctx, CLI_F_CONNECT, argv2, seen, &extra), 1);
    assert_string_equal(seen, "?");
    assert_string_equal(ctx.output, "");
}

/* A command that does not take -n/-o/-A may use those letters for its own
 * (sbatch: -n --ntasks, -o --output, -A --account): they come back to it,
 * the context untouched. They were consumed as the common flags before. */
static void test_letters_of_flags_not_taken_are_the_commands(void **state)
{
    (void)state;
    static const struct option own[] = {{"ntasks", required_argument, NULL, 'n'},
                                        {"output", required_argument, NULL, 'o'},
                                        {NULL, 0, NULL, 0}};
    char *argv[] = {"cmd", "-n", "4", "--output", "f.out", "-A", "acct", "-s", "https://h:1",
                    NULL};
    cli_ctx ctx = {0};
    cli_parser p;
    char seen[8] = "";
    const char *args[8] = {0};
    int c, n = 0;

    opterr = 0;
    cli_parser_init(&p, &ctx, CLI_F_SERVER | CLI_F_KUBECONFIG, "n:o:A:", own);
    while ((c = cli_getopt(&p, 9, argv)) != -1 && n < 7) {
        args[n] = optarg;
        seen[n++] = (char)c;
    }
    assert_string_equal(seen, "noA");
    assert_string_equal(args[0], "4");
    assert_string_equal(args[1], "f.out");
    assert_string_equal(args[2], "acct");
    assert_string_equal(ctx.ns, "default");
    assert_string_equal(ctx.output, "");
    assert_false(ctx.all_namespaces);
    assert_string_equal(ctx.server, "https://h:1");
}

static void test_missing_argument(void **state)
{
    (void)state;
    char *argv[] = {"cmd", "-n", NULL};
    cli_ctx ctx = {0};
    char seen[16];
    const char *extra = NULL;

    assert_int_equal(parse(&ctx, CLI_F_CONNECT, argv, seen, &extra), 1);
    assert_string_equal(seen, "?");
    assert_string_equal(ctx.ns, "default");
}

/* Without -n the kubeconfig context's namespace, as kubectl; -n wins. */
static void test_namespace_from_kubeconfig(void **state)
{
    (void)state;
    char path[] = "/tmp/test_cli_flags_kcXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("apiVersion: v1\nkind: Config\ncurrent-context: c1\n"
          "clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\"}}]\n"
          "users: [{name: u, user: {token: t}}]\n"
          "contexts:\n"
          "- {name: c1, context: {cluster: k, user: u, namespace: team-a}}\n"
          "- {name: c2, context: {cluster: k, user: u}}\n",
          f);
    fclose(f);
    setenv("KUBECONFIG", path, 1);

    char *argv[] = {"cmd", NULL};
    char *argv2[] = {"cmd", "-n", "mine", NULL};
    char *argv3[] = {"cmd", "--context", "c2", NULL};
    cli_ctx ctx = {0};
    char seen[16];
    const char *extra = NULL;

    parse(&ctx, CLI_F_CONNECT, argv, seen, &extra);
    assert_string_equal(ctx.ns, "team-a");
    memset(&ctx, 0, sizeof(ctx));
    parse(&ctx, CLI_F_CONNECT, argv2, seen, &extra);
    assert_string_equal(ctx.ns, "mine");
    memset(&ctx, 0, sizeof(ctx));
    parse(&ctx, CLI_F_CONNECT, argv3, seen, &extra);
    assert_string_equal(ctx.ns, "default");
    setenv("KUBECONFIG", "/nonexistent/kubeconfig", 1);
    unlink(path);
}

static void test_check_output(void **state)
{
    (void)state;
    cli_ctx ctx = {.output = "json"};
    assert_int_equal(cli_check_output(&ctx, "json,yaml,wide"), 0);
    ctx.output = "wide";
    assert_int_equal(cli_check_output(&ctx, "json,yaml,wide"), 0);
    ctx.output = "";
    assert_int_equal(cli_check_output(&ctx, "json"), 0);
    ctx.output = "js";
    assert_int_equal(cli_check_output(&ctx, "json,yaml"), -1);
    ctx.output = "jsonx";
    assert_int_equal(cli_check_output(&ctx, "json,yaml"), -1);
}

int main(void)
{
    /* the machine's own ~/.kube/config must not decide the defaults */
    setenv("KUBECONFIG", "/nonexistent/kubeconfig", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_flags_fill_the_context),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_flags_not_taken_are_refused),
        cmocka_unit_test(test_letters_of_flags_not_taken_are_the_commands),
        cmocka_unit_test(test_missing_argument),
        cmocka_unit_test(test_check_output),
        cmocka_unit_test(test_namespace_from_kubeconfig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
