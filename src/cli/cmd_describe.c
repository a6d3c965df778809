/* cmd_describe.c - `trainyard describe RESOURCE NAME`: the object and its events. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"
#include "cli/cli.h"
#include "model/yaml.h"

static void print_map(const char *title, const json_t *m)
{
    const char *k;
    json_t *v;
    bool first = true;

    printf("%-13s", title);
    if (json_object_size(m) == 0) {
        printf("<none>\n");
        return;
    }
    json_object_foreach((json_t *)m, k, v)
    {
        printf("%s%s=%s\n", first ? "" : "             ", k,
               json_is_string(v) ? json_string_value(v) : "");
        first = false;
    }
}

/* A section as indented YAML, the way kubectl's generic describer nests fields. */
static void print_section(const char *title, const json_t *v)
{
    char *y, *line, *save = NULL;
    if (!v)
        return;
    printf("%s:\n", title);
    y = yaml_dump(v);
    for (line = strtok_r(y, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        printf("  %s\n", line);
    free(y);
}

static void print_events(ty_client *cl, const char *ns, const char *uid)
{
    char path[1024];
    ty_error err;
    json_t *list, *items;
    time_t now = time(NULL);

    ty_error_init(&err);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.uid%%3D%s",
             ns ? ns : "default", uid ? uid : "");
    list = client_call_json(cl, "GET", path, NULL, NULL, &err);
    items = json_object_get(list, "items");
    if (json_array_size(items) == 0) {
        printf("Events:       <none>\n");
    } else {
        size_t i;
        json_t *e;
        printf("Events:\n  %-8s %-20s %-6s %-24s %s\n", "Type", "Reason", "Age", "From", "Message");
        printf("  %-8s %-20s %-6s %-24s %s\n", "----", "------", "----", "----", "-------");
        json_array_foreach(items, i, e)
        {
            const char *ts = json_string_value(json_object_get(e, "lastTimestamp"));
            const char *src = json_string_value(json_object_get(json_object_get(e, "source"), "component"));
            char age[32] = "<unknown>";
            time_t t;
            if (!ts)
                ts = json_string_value(json_object_get(json_object_get(e, "metadata"), "creationTimestamp"));
            if (ts && ty_time_parse(ts, &t) == 0)
                ty_duration_human((int64_t)(now - t), age, sizeof(age));
            printf("  %-8s %-20s %-6s %-24s %s\n",
                   json_string_value(json_object_get(e, "type")) ?: "",
                   json_string_value(json_object_get(e, "reason")) ?: "", age, src ? src : "",
                   json_string_value(json_object_get(e, "message")) ?: "");
        }
    }
    json_decref(list);
    ty_error_clear(&err);
}

int cmd_describe(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    int c, rc = 0;

    cli_parser_init(&p, &ctx, CLI_F_CONNECT, "h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'h':
        default:
            fprintf(c == 'h' ? stdout : stderr, "usage: trainyard describe RESOURCE NAME... [-n NS]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (argc - optind < 2) {
        fprintf(stderr, "usage: trainyard describe RESOURCE NAME... [-n NS]\n");
        return 2;
    }
    const api_resource *res = cli_resource(argv[optind]);
    if (!res)
        return 1;
    ty_client *cl = cli_connect(&ctx);
    if (!cl)
        return 1;
    for (int i = optind + 1; i < argc; i++) {
        char path[2048];
        ty_error err;
        ty_error_init(&err);
        client_resource_path(res, ctx.ns, argv[i], path, sizeof(path));
        json_t *o = client_call_json(cl, "GET", path, NULL, NULL, &err);
        if (!o) {
            cli_print_error(&err, err.code != TY_EUNAVAILABLE);
            ty_error_clear(&err);
            rc = 1;
            continue;
        }
        json_t *meta = json_object_get(o, "metadata");
        if (i > optind + 1)
            printf("\n\n");
        printf("%-13s%s\n", "Name:", json_string_value(json_object_get(meta, "name")));
        if (res->namespaced)
            printf("%-13s%s\n", "Namespace:", json_string_value(json_object_get(meta, "namespace")));
        /* the job's creator, as the server recorded it (server/creator.h) */
        const char *creator = json_string_value(json_object_get(
            json_object_get(meta, "annotations"), "trainyard.io/created-by"));
        if (creator)
            printf("%-13s%s\n", "Created By:", creator);
        print_map("Labels:", json_object_get(meta, "labels"));
        json_t *ann = json_deep_copy(json_object_get(meta, "annotations"));
        json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
        print_map("Annotations:", ann);
        json_decref(ann);
        printf("%-13s%s\n", "API Version:", json_string_value(json_object_get(o, "apiVersion")));
        printf("%-13s%s\n", "Kind:", json_string_value(json_object_get(o, "kind")));
        json_t *m = json_deep_copy(meta);
        const char *drop[] = {"name", "namespace", "labels", "annotations", "managedFields"};
        for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
            json_object_del(m, drop[k]);
        print_section("Metadata", m);
        json_decref(m);
        const char *key;
        json_t *val;
        json_object_foreach(o, key, val)
        {
            if (strcmp(key, "apiVersion") && strcmp(key, "kind") && strcmp(key, "metadata")) {
                char title[64];
                snprintf(title, sizeof(title), "%c%s", key[0] & ~0x20, key + 1);
                print_section(title, val);
            }
        }
        print_events(cl, res->namespaced ? ctx.ns : "default",
                     json_string_value(json_object_get(meta, "uid")));
        json_decref(o);
    }
    client_free(cl);
    return rc;
}
