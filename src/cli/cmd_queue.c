/* cmd_queue.c - `trainyard queue list|get`: Volcano Queues with their GPU
 * shares and job counts (what the scheduler wrote in their status), and a
 * queue's waiting jobs in the order the scheduler takes them (cli_top.h's
 * cli_sort_waiting: priority, then age). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_top.h"

static void queue_usage(FILE *f)
{
    fprintf(f, "usage: trainyard queue list [--server URL]\n"
               "       trainyard queue get QUEUE [--server URL]\n");
}

static json_t *get_list(ty_client *cl, const char *resource, const char *name)
{
    char path[1024];
    client_resource_path(cli_resource(resource), NULL, name, path, sizeof(path));
    return cli_get_json(cl, path);
}

/* A resource map's GPUs as written ("4", "-" when absent). */
static const char *gpus_of(const json_t *map)
{
    const char *v = json_string_value(json_object_get(map, "nvidia.com/gpu"));
    if (!v && json_is_integer(json_object_get(map, "nvidia.com/gpu"))) {
        static char buf[32];
        snprintf(buf, sizeof(buf), "%lld",
                 (long long)json_integer_value(json_object_get(map, "nvidia.com/gpu")));
        return buf;
    }
    return v ? v : "-";
}

static const char *state_of(const json_t *q)
{
    const char *s = json_string_value(json_object_get(json_object_get(q, "status"), "state"));
    return s ? s : "Open";
}

static long long count_of(const json_t *q, const char *what)
{
    return json_integer_value(json_object_get(json_object_get(q, "status"), what));
}

static void print_state(const char *state, int width)
{
    cli_print_colored(stdout, state, NULL);
    printf("%*s", width > (int)strlen(state) ? width - (int)strlen(state) : 0, "");
}

static int queue_list(ty_client *cl)
{
    json_t *l = get_list(cl, "queues", NULL), *q;
    const json_t *items = json_object_get(l, "items");
    size_t i, w = 4;

    if (!l)
        return 1;
    if (json_array_size(items) == 0) {
        fprintf(stderr, "No resources found\n");
        json_decref(l);
        return 0;
    }
    json_array_foreach(items, i, q) {
        const char *n = json_string_value(json_object_get(json_object_get(q, "metadata"), "name"));
        if (n && strlen(n) > w)
            w = strlen(n);
    }
    printf("%-*s   %-6s   %-7s   %-7s   %-8s   %-9s   %-7s   %-7s   %s\n", (int)w, "NAME",
           "WEIGHT", "STATE", "CAP-GPU", "DES-GPU", "ALLOC-GPU", "RUNNING", "PENDING", "INQUEUE");
    json_array_foreach(items, i, q) {
        const json_t *spec = json_object_get(q, "spec");
        const char *n = json_string_value(json_object_get(json_object_get(q, "metadata"), "name"));
        printf("%-*s   %-6lld   ", (int)w, n ? n : "",
               (long long)json_integer_value(json_object_get(spec, "weight")));
        print_state(state_of(q), 7);
        printf("   %-7s   %-8s   %-9s   %-7lld   %-7lld   %lld\n",
               gpus_of(json_object_get(spec, "capability")),
               gpus_of(json_object_get(spec, "deserved")),
               gpus_of(json_object_get(json_object_get(q, "status"), "allocated")),
               count_of(q, "running"), count_of(q, "pending"), count_of(q, "inqueue"));
    }
    json_decref(l);
    return 0;
}

static void print_map(const char *title, const json_t *map)
{
    const char *k;
    json_t *v;
    bool any = false;

    printf("%-14s", title);
    json_object_foreach((json_t *)map, k, v) {
        printf("%s%s=%s", any ? ", " : "", k, json_string_value(v) ? json_string_value(v) : "?");
        any = true;
    }
    printf("%s\n", any ? "" : "<none>");
}

/* The queue's PodGroups that wait (Pending: not admitted; Inqueue: admitted,
 * not running yet), as the scheduler orders them; new reference. */
static json_t *waiting_groups(ty_client *cl, const char *queue)
{
    json_t *all = get_list(cl, "podgroups", NULL), *classes = get_list(cl, "priorityclasses", NULL);
    json_t *mine = json_array(), *values = json_object(), *g;
    size_t i;

    json_array_foreach(json_object_get(classes, "items"), i, g)
        json_object_set_new(values,
                            json_string_value(json_object_get(json_object_get(g, "metadata"),
                                                              "name")) ?: "",
                            json_integer(json_integer_value(json_object_get(g, "value"))));
    json_array_foreach(json_object_get(all, "items"), i, g) {
        const char *q = json_string_value(json_object_get(json_object_get(g, "spec"), "queue"));
        const char *ph = json_string_value(json_object_get(json_object_get(g, "status"), "phase"));
        if (strcmp(q && *q ? q : "default", queue) != 0)
            continue;
        if (!ph || strcmp(ph, "Pending") == 0 || strcmp(ph, "Inqueue") == 0)
            json_array_append(mine, g);
    }
    cli_sort_waiting(mine, values);
    /* the values travel with the list, for the PRIORITY column */
    json_decref(all);
    json_decref(classes);
    return json_pack("{s:o, s:o}", "groups", mine, "classes", values);
}

static const char *owner_of(const json_t *g, char *buf, size_t len)
{
    size_t i;
    json_t *ref;

    json_array_foreach(json_object_get(json_object_get(g, "metadata"), "ownerReferences"), i,
                       ref) {
        if (json_is_true(json_object_get(ref, "controller"))) {
            snprintf(buf, len, "%s/%s", json_string_value(json_object_get(ref, "kind")) ?: "",
                     json_string_value(json_object_get(ref, "name")) ?: "");
            return buf;
        }
    }
    return "-";
}

static int queue_get(ty_client *cl, const char *name)
{
    json_t *q = get_list(cl, "queues", name), *w, *g;
    const json_t *spec = json_object_get(q, "spec"), *status = json_object_get(q, "status");
    size_t i;

    if (!q)
        return 1;
    printf("%-14s%s\n", "Name:", name);
    printf("%-14s%lld\n", "Weight:", (long long)json_integer_value(json_object_get(spec, "weight")));
    printf("%-14s", "State:");
    print_state(state_of(q), 0);
    printf("\n%-14s%s\n", "Reclaimable:",
           json_is_false(json_object_get(spec, "reclaimable")) ? "false" : "true");
    if (json_string_value(json_object_get(spec, "parent")))
        printf("%-14s%s\n", "Parent:", json_string_value(json_object_get(spec, "parent")));
    print_map("Capability:", json_object_get(spec, "capability"));
    print_map("Deserved:", json_object_get(spec, "deserved"));
    print_map("Guarantee:", json_object_get(json_object_get(spec, "guarantee"), "resource"));
    print_map("Allocated:", json_object_get(status, "allocated"));
    printf("%-14sRunning %lld, Pending %lld, Inqueue %lld, Completed %lld\n", "Jobs:",
           count_of(q, "running"), count_of(q, "pending"), count_of(q, "inqueue"),
           count_of(q, "completed"));
    w = waiting_groups(cl, name);
    printf("Waiting (in scheduling order):\n");
    if (json_array_size(json_object_get(w, "groups")) == 0)
        printf("  <none>\n");
    else
        printf("  %-3s   %-16s   %-28s   %-28s   %-8s   %-8s   %-9s   %s\n", "#", "NAMESPACE",
               "PODGROUP", "JOB", "PHASE", "PRIORITY", "MINMEMBER", "CREATED");
    json_array_foreach(json_object_get(w, "groups"), i, g) {
        const json_t *meta = json_object_get(g, "metadata");
        const char *pc =
            json_string_value(json_object_get(json_object_get(g, "spec"), "priorityClassName"));
        const char *ph = json_string_value(json_object_get(json_object_get(g, "status"), "phase"));
        char owner[300];
        printf("  %-3zu   %-16s   %-28s   %-28s   ", i + 1,
               json_string_value(json_object_get(meta, "namespace")) ?: "",
               json_string_value(json_object_get(meta, "name")) ?: "",
               owner_of(g, owner, sizeof(owner)));
        print_state(ph ? ph : "Pending", 8);
        printf("   %-8lld   %-9lld   %s\n",
               pc ? (long long)json_integer_value(
                        json_object_get(json_object_get(w, "classes"), pc))
                  : 0LL,
               (long long)json_integer_value(json_object_get(json_object_get(g, "spec"),
                                                             "minMember")),
               json_string_value(json_object_get(meta, "creationTimestamp")) ?: "");
    }
    json_decref(w);
    json_decref(q);
    return 0;
}

int cmd_queue(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                              {NULL, 0, NULL, 0}};
    cli_ctx ctx = {0};
    cli_parser p;
    ty_client *cl;
    int c, rc;

    cli_parser_init(&p, &ctx, CLI_F_SERVER | CLI_F_KUBECONFIG, "h", longopts);
    while ((c = cli_getopt(&p, argc, argv)) != -1) {
        switch (c) {
        case 'h': queue_usage(stdout); return 0;
        default: queue_usage(stderr); return 2;
        }
    }
    if (optind >= argc ||
        !((strcmp(argv[optind], "list") == 0 && argc - optind == 1) ||
          (strcmp(argv[optind], "get") == 0 && argc - optind == 2))) {
        queue_usage(stderr);
        return 2;
    }
    if (!(cl = cli_connect(&ctx)))
        return 1;
    rc = strcmp(argv[optind], "list") == 0 ? queue_list(cl) : queue_get(cl, argv[optind + 1]);
    client_free(cl);
    return rc;
}
