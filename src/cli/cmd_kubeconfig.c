/* cmd_kubeconfig.c - `trainyard kubeconfig`: a kubeconfig for kubectl, the
 * Python client and the trainyard CLI, with the admin credential of a data
 * directory (its tokens.csv, readable by its owner only) and the CA of its
 * self-signed serving certificate. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "cli/cli.h"

#define CA_FILE_MAX ((size_t)1024 * 1024)

static int b64_append(ty_buf *b, const unsigned char *p, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char out[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63],
                       i + 1 < n ? tab[v >> 6 & 63] : '=', i + 2 < n ? tab[v & 63] : '='};
        if (ty_buf_append(b, out, 4) < 0)
            return -1;
    }
    return 0;
}

/* A YAML double-quoted scalar of s. */
static int yaml_quoted(ty_buf *b, const char *s)
{
    if (ty_buf_puts(b, "\"") < 0)
        return -1;
    for (; *s; s++) {
        int rc = *s == '"' || *s == '\\' ? ty_buf_printf(b, "\\%c", *s)
                 : (unsigned char)*s < 0x20 ? ty_buf_printf(b, "\\x%02x", (unsigned char)*s)
                                            : ty_buf_append(b, s, 1);
        if (rc < 0)
            return -1;
    }
    return ty_buf_puts(b, "\"");
}

/* The base64 of a CA file, into b. */
static int ca_data(const char *path, ty_buf *b)
{
    FILE *f = fopen(path, "re");
    unsigned char *data;
    size_t n;

    if (!f) {
        fprintf(stderr, "error: cannot read the CA %s: %s\n", path, strerror(errno));
        return -1;
    }
    data = malloc(CA_FILE_MAX);
    n = data ? fread(data, 1, CA_FILE_MAX, f) : 0;
    fclose(f);
    if (!data || n == 0 || n == CA_FILE_MAX || b64_append(b, data, n) < 0) {
        fprintf(stderr, "error: the CA %s is empty, unreadable or too large\n", path);
        free(data);
        return -1;
    }
    free(data);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard kubeconfig [--data-dir DIR] [--server URL]\n"
            "                            [--certificate-authority FILE] [-o FILE]\n"
            "Writes a kubeconfig with the admin credential of the server's data directory\n"
            "(--data-dir, else $TRAINYARD_DATA_DIR, else the server's default) to FILE\n"
            "(made mode 0600) or stdout. The server URL is --server, else the one the\n"
            "server recorded when it started; the CA is --certificate-authority, else the\n"
            "data directory's self-signed pki/ca.crt. Then: KUBECONFIG=FILE kubectl get pods\n");
}

int cli_kubeconfig_yaml(const char *server, const char *ca, const char *user, const char *ns,
                        const char *token, ty_buf *y)
{
    bool https = strncmp(server, "https://", 8) == 0;
    /* a URL is a plain YAML scalar unless it holds something YAML reads
     * otherwise (a blank, a quote, " #") */
    bool plain = strcspn(server, " \t\"'#\\") == strlen(server);

    if (ty_buf_puts(y, "apiVersion: v1\nkind: Config\nclusters:\n- name: trainyard\n"
                       "  cluster:\n    server: ") < 0 ||
        (plain ? ty_buf_puts(y, server) : yaml_quoted(y, server)) < 0)
        goto oom;
    if (ca && https) {
        if (ty_buf_puts(y, "\n    certificate-authority-data: ") < 0)
            goto oom;
        if (ca_data(ca, y) < 0)
            return -1;
    }
    if (ty_buf_puts(y, "\ncontexts:\n- name: trainyard\n  context:\n    cluster: trainyard\n"
                       "    namespace: ") < 0 ||
        yaml_quoted(y, ns) < 0 ||
        ty_buf_printf(y, "\n    user: trainyard-%s\ncurrent-context: trainyard\n"
                         "preferences: {}\nusers:\n- name: trainyard-", user) < 0 ||
        ty_buf_printf(y, "%s\n  user:\n    token: ", user) < 0 || yaml_quoted(y, token) < 0 ||
        ty_buf_puts(y, "\n") < 0)
        goto oom;
    return 0;
oom:
    fprintf(stderr, "error: out of memory\n");
    return -1;
}

int cli_write_secret(const char *output, const ty_buf *y)
{
    int fd;

    if (!output) {
        if (fwrite(y->data, 1, y->len, stdout) != y->len || fflush(stdout) != 0) {
            fprintf(stderr, "error: cannot write the kubeconfig: %s\n", strerror(errno));
            return -1;
        }
        return 0;
    }
    fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, y->data, y->len) != (ssize_t)y->len) {
        fprintf(stderr, "error: cannot write %s: %s\n", output, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (close(fd) < 0) {
        fprintf(stderr, "error: cannot write %s: %s\n", output, strerror(errno));
        return -1;
    }
    return 0;
}

int cmd_kubeconfig(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"server", required_argument, NULL, 's'},
        {"data-dir", required_argument, NULL, 'd'},
        {"certificate-authority", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *server = NULL, *ca = NULL, *output = NULL;
    char dir[4096] = "";
    cli_admin a;
    ty_error err;
    ty_buf y = {0};
    int c, rc = 1;

    optind = 1;
    while ((c = getopt_long(argc, argv, "s:d:c:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'd': snprintf(dir, sizeof(dir), "%s", optarg); break;
        case 'c': ca = optarg; break;
        case 'o': output = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    if (server && strncmp(server, "http://", 7) != 0 && strncmp(server, "https://", 8) != 0) {
        fprintf(stderr, "error: --server must be a URL such as https://127.0.0.1:8080\n");
        return 2;
    }
    if (!dir[0])
        cli_default_data_dir(dir, sizeof(dir));
    ty_error_init(&err);
    if (cli_admin_credential(dir, &a, &err) < 0) {
        fprintf(stderr, "error: %s\n", err.text);
        ty_error_clear(&err);
        return 1;
    }
    if (!server && a.server[0])
        server = a.server;
    if (!server)
        fprintf(stderr, "error: no server URL: the server records it in %s/server.url when "
                        "it starts; give --server URL\n", dir);
    else if (cli_kubeconfig_yaml(server, ca ? ca : a.ca_file[0] ? a.ca_file : NULL, "admin",
                                 "default", a.token, &y) == 0 &&
             cli_write_secret(output, &y) == 0)
        rc = 0;
    if (y.data)
        explicit_bzero(y.data, y.len);
    ty_buf_free(&y);
    cli_admin_clear(&a);
    return rc;
}

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("trainyard 0.1.0 (Kubernetes API v1.32)\nallocator: %s\n", cli_allocator());
    return 0;
}
