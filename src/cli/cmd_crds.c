/* cmd_crds.c - `trainyard crds`: the CustomResourceDefinitions of every
 * custom kind Trainyard serves (api/crd.h), for a Kubernetes cluster that
 * runs `trainyard operator`. Needs no server: they come from the binary's
 * own API schema. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/crd.h"
#include "cli/cli.h"
#include "model/yaml.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard crds [-o yaml|json] [--output-dir DIR]\n"
            "Prints one apiextensions.k8s.io/v1 CustomResourceDefinition for every custom\n"
            "kind Trainyard serves (Kubeflow, Kubeflow Trainer v2, MindSpore and Volcano\n"
            "kinds), made from the API schema the server validates with: a YAML stream\n"
            "(-o yaml, the default) or a JSON List (-o json). --output-dir writes them as\n"
            "DIR/<group>_<plural>.yaml with a kustomization (DIR/Kustomization) listing\n"
            "them (deploy/crds: make crds).\n"
            "\n"
            "  trainyard crds | kubectl apply --server-side -f -\n");
}

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    FILE *f;
    size_t n = strlen(text);
    int rc;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "we");
    if (!f) {
        fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    rc = fwrite(text, 1, n, f) == n ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc < 0)
        fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
    return rc;
}

/* One file per CRD and the kustomization that lists them. Files of CRDs no
 * longer generated are the caller's to remove (make crds empties DIR). */
static int write_dir(const char *dir, const json_t *crds)
{
    char name[320], *text;
    json_t *crd;
    size_t i;

    json_array_foreach(crds, i, crd) {
        crd_file_name(crd, name, sizeof(name));
        text = crd_file_text(crd);
        if (!text || write_file(dir, name, text) < 0) {
            free(text);
            return -1;
        }
        free(text);
    }
    text = crd_kustomization_text(crds);
    if (!text || write_file(dir, CRD_KUSTOMIZATION, text) < 0) {
        free(text);
        return -1;
    }
    free(text);
    return 0;
}

static int print_stream(const json_t *crds, bool json)
{
    json_t *crd;
    size_t i;

    if (json) {
        json_t *list = json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items",
                                 crds);
        int rc = json_dumpf(list, stdout, JSON_INDENT(2)) == 0 ? 0 : -1;
        json_decref(list);
        fputc('\n', stdout);
        return rc;
    }
    json_array_foreach(crds, i, crd) {
        char *text = yaml_dump(crd);
        if (!text)
            return -1;
        fputs("---\n", stdout);
        fputs(text, stdout);
        free(text);
    }
    return 0;
}

int cmd_crds(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"output-dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *dir = NULL;
    bool json = false;
    json_t *crds;
    int c, rc;

    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (strcmp(optarg, "json") == 0) {
                json = true;
            } else if (strcmp(optarg, "yaml") != 0) {
                fprintf(stderr, "error: unable to match a printer suitable for the output "
                                "format \"%s\", allowed formats are: json,yaml\n", optarg);
                return 2;
            }
            break;
        case 'd':
            dir = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    crds = crd_all();
    rc = dir ? write_dir(dir, crds) : print_stream(crds, json);
    json_decref(crds);
    if (rc < 0 && !dir)
        fprintf(stderr, "error: cannot print the CustomResourceDefinitions\n");
    if (fflush(stdout) != 0)
        rc = -1;
    return rc < 0 ? 1 : 0;
}
