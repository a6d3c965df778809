/* cmd_store.c - `trainyard store quarantine`: the rows of a data directory
 * the store set aside at open, unable to load them (store.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "store/store.h"

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: trainyard store quarantine --data-dir DIR [-o json]\n"
               "Lists the rows the store set aside when it opened DIR (damaged, holding what\n"
               "it cannot read back, or the older of two rows for one object), with why.\n"
               "Reads the database only; a server may be running on it.\n");
    return rc;
}

static int quarantine(int argc, char **argv)
{
    static const struct option longopts[] = {{"data-dir", required_argument, NULL, 'd'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *dir = NULL, *output = NULL;
    ty_error err;
    json_t *rows, *row;
    size_t i;
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "d:o:h", longopts, NULL)) != -1) {
        if (c == 'd')
            dir = optarg;
        else if (c == 'o')
            output = optarg;
        else
            return usage(c == 'h' ? stdout : stderr, c == 'h' ? 0 : 2);
    }
    if (!dir || optind != argc || (output && strcmp(output, "json") != 0))
        return usage(stderr, 2);
    ty_error_init(&err);
    if (!(rows = store_quarantine_list(dir, &err))) {
        cli_print_error(&err, false);
        ty_error_clear(&err);
        return 1;
    }
    if (output) {
        char *text = json_dumps(rows, JSON_INDENT(2));
        printf("%s\n", text ? text : "[]");
        free(text);
    } else if (json_array_size(rows) == 0) {
        printf("No rows set aside.\n");
    } else {
        printf("%-5s %-20s %-8s %-40s %-8s %s\n", "ID", "AT", "ROW", "OBJECT", "RV", "REASON");
        json_array_foreach(rows, i, row) {
            char obj[512];
            const char *ns = json_string_value(json_object_get(row, "namespace"));
            snprintf(obj, sizeof(obj), "%s %s%s%s",
                     json_string_value(json_object_get(row, "resource")), ns ? ns : "",
                     ns && *ns ? "/" : "", json_string_value(json_object_get(row, "name")));
            /* names from a damaged row: no control characters to the terminal */
            for (char *c = obj; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                    *c = '?';
            printf("%-5lld %-20s %-8lld %-40s %-8lld %s\n",
                   (long long)json_integer_value(json_object_get(row, "id")),
                   json_string_value(json_object_get(row, "at")),
                   (long long)json_integer_value(json_object_get(row, "row")), obj,
                   (long long)json_integer_value(json_object_get(row, "resourceVersion")),
                   json_string_value(json_object_get(row, "reason")));
        }
    }
    json_decref(rows);
    return 0;
}

int cmd_store(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
        return usage(argc < 2 ? stderr : stdout, argc < 2 ? 2 : 0);
    if (strcmp(argv[1], "quarantine") == 0)
        return quarantine(argc - 1, argv + 1);
    fprintf(stderr, "trainyard store: '%s' is not a subcommand\n", argv[1]);
    return usage(stderr, 2);
}
