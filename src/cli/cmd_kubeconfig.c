/* cmd_kubeconfig.c - `trainyard kubeconfig`: a kubeconfig for kubectl. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_kubeconfig(int argc, char **argv)
{
    static const struct option longopts[] = {{"server", required_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *server = cli_default_server();
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "s:h", longopts, NULL)) != -1) {
        if (c == 's') {
            server = optarg;
        } else {
            fprintf(c == 'h' ? stdout : stderr,
                    "usage: trainyard kubeconfig [--server URL]\n"
                    "Prints a kubeconfig; use it with: trainyard kubeconfig > cfg; "
                    "KUBECONFIG=cfg kubectl get pods\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (strncmp(server, "http://", 7) != 0 && strncmp(server, "https://", 8) != 0) {
        fprintf(stderr, "error: --server must be a URL such as http://127.0.0.1:8080\n");
        return 2;
    }
    printf("apiVersion: v1\n"
           "kind: Config\n"
           "clusters:\n"
           "- name: trainyard\n"
           "  cluster:\n"
           "    server: %s\n"
           "contexts:\n"
           "- name: trainyard\n"
           "  context:\n"
           "    cluster: trainyard\n"
           "    namespace: default\n"
           "    user: trainyard\n"
           "current-context: trainyard\n"
           "preferences: {}\n"
           "users:\n"
           "- name: trainyard\n"
           "  user: {}\n",
           server);
    return 0;
}

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("trainyard 0.1.0 (Kubernetes API v1.32)\nallocator: %s\n", cli_allocator());
    return 0;
}
