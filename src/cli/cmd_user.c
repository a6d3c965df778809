/* cmd_user.c - `trainyard user add|list|remove`: a colleague's access to a
 * shared machine in one step.
 *
 * add makes, as the admin of the data directory (its tokens.csv and CA), a
 * namespace for the user, a RoleBinding of a ClusterRole there (edit by
 * default), optionally a ResourceQuota, and a bearer token appended to
 * DATA_DIR/tokens.csv (which the server reads again within a second), then
 * writes the user's kubeconfig. Nothing is half-made: the token is the last
 * step, so a user whose namespace or binding could not be made gets no
 * credential. remove takes the token away (the namespace stays: it holds
 * the user's jobs). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define USER_MAX_GROUPS 16
#define TOKENS_MAX_BYTES ((size_t)16 * 1024 * 1024)

typedef struct user_opts {
    const char *name, *ns, *role, *quota, *server, *output;
    const char *groups[USER_MAX_GROUPS];
    int ngroups;
    char dir[4096];
} user_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard user add NAME [--namespace NS] [--role ROLE] [--group G]...\n"
            "                          [--quota RES=QTY,...] [-o FILE]\n"
            "       trainyard user list\n"
            "       trainyard user remove NAME\n"
            "  (each also takes --data-dir DIR and --server URL)\n"
            "add: a namespace NS (default NAME), a RoleBinding NAME-ROLE there of the\n"
            "ClusterRole ROLE (default edit; admin or view also fit), a ResourceQuota\n"
            "NAME-quota when --quota is given (e.g. requests.nvidia.com/gpu=4,pods=20),\n"
            "and a bearer token in DATA_DIR/tokens.csv; then writes the user's kubeconfig\n"
            "to FILE (mode 0600) or stdout. Run it as the server's admin (who may read\n"
            "and write the data directory).\n"
            "remove: takes the user's token away (their namespace and jobs stay).\n");
}

/* A user name that fits a CSV field unquoted and is nobody's system name. */
static bool good_name(const char *s)
{
    if (!*s || strlen(s) > 253 || strncmp(s, "system:", 7) == 0)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '.' || *s == '_' || *s == '@'))
            return false;
    return true;
}

/* A DNS-1123 label, as a namespace name must be. */
static bool good_label(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

/* DATA_DIR/tokens.csv, whole (NUL-terminated, caller frees); NULL after
 * printing why. */
static char *read_tokens(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf;
    size_t n;

    if (!f) {
        fprintf(stderr, "error: cannot read %s: %s (run this as the server's admin, with "
                        "its --data-dir)\n", path, strerror(errno));
        return NULL;
    }
    buf = malloc(TOKENS_MAX_BYTES + 1);
    n = buf ? fread(buf, 1, TOKENS_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!buf || n > TOKENS_MAX_BYTES) {
        fprintf(stderr, "error: %s is too large\n", path);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* The user field of one token line (after the first comma), into out. */
static bool line_user(const char *line, size_t len, char *out, size_t cap)
{
    const char *c = memchr(line, ',', len), *e;
    size_t n;

    if (!c || line[0] == '#')
        return false;
    c++;
    e = memchr(c, ',', len - (size_t)(c - line));
    n = e ? (size_t)(e - c) : len - (size_t)(c - line);
    if (n >= cap)
        return false;
    memcpy(out, c, n);
    out[n] = '\0';
    return true;
}

static bool has_user(const char *tokens, const char *name)
{
    char user[300];
    for (const char *p = tokens; *p;) {
        size_t len = strcspn(p, "\n");
        if (line_user(p, len, user, sizeof(user)) && strcmp(user, name) == 0)
            return true;
        p += len + (p[len] == '\n');
    }
    return false;
}

/* Creates obj at path; an existing one is fine. 0, or -1 after printing why. */
static int ensure(ty_client *c, const char *path, json_t *obj, const char *what)
{
    ty_error err;
    json_t *r;

    ty_error_init(&err);
    r = client_call_json(c, "POST", path, "application/json", obj, &err);
    json_decref(obj);
    if (r) {
        printf("%s created\n", what);
        json_decref(r);
        return 0;
    }
    if (err.code == TY_EEXISTS) {
        printf("%s exists (kept as it is)\n", what);
        ty_error_clear(&err);
        return 0;
    }
    cli_print_error(&err, err.code != TY_EUNAVAILABLE);
    ty_error_clear(&err);
    return -1;
}

/* --quota RES=QTY,...: the hard limits; NULL after printing why. */
static json_t *quota_hard(const char *spec)
{
    json_t *hard = json_object();
    char *copy = strdup(spec), *save = NULL;

    for (char *kv = copy ? strtok_r(copy, ",", &save) : NULL; kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            fprintf(stderr, "error: invalid --quota entry \"%s\": want RESOURCE=QUANTITY\n",
                    kv);
            json_decref(hard);
            free(copy);
            return NULL;
        }
        *eq = '\0';
        json_object_set_new(hard, kv, json_string(eq + 1));
    }
    free(copy);
    if (!json_object_size(hard)) {
        fprintf(stderr, "error: --quota names no resource\n");
        json_decref(hard);
        return NULL;
    }
    return hard;
}

/* 32 random bytes as hex; -1 when the kernel gives none. */
static int new_token(char out[65])
{
    unsigned char rnd[32];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return -1;
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(out + 2 * i, 3, "%02x", rnd[i]);
    explicit_bzero(rnd, sizeof(rnd));
    return 0;
}

static int append_line(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    size_t len = strlen(line);
    if (fd < 0 || write(fd, line, len) != (ssize_t)len || fsync(fd) < 0) {
        fprintf(stderr, "error: cannot add to %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return close(fd);
}

/* Waits (up to a minute) until the server knows token: it reads tokens.csv
 * again within a second of a change. */
static bool token_works(const cli_admin *a, const char *server, const char *token)
{
    kc_http_opts o = {.server = server, .token = token, .ca_file = a->ca_file[0] ? a->ca_file
                                                                                 : NULL};
    ty_error err;
    ty_client *c;
    bool ok = false;

    ty_error_init(&err);
    if (!(c = client_new_opts(&o, &err))) {
        ty_error_clear(&err);
        return false;
    }
    for (int i = 0; i < 240 && !ok; i++) {
        client_resp r = {0};
        if (client_request(c, "GET", "/apis/authentication.k8s.io/v1", NULL, NULL, 0, NULL, &r,
                           &err) == 0)
            ok = r.status == 200;
        client_resp_free(&r);
        ty_error_clear(&err);
        if (!ok)
            nanosleep(&(struct timespec){0, 250 * 1000 * 1000}, NULL);
    }
    client_free(c);
    return ok;
}

/* What a user's token will open: namespace ns, a RoleBinding NAME-ROLE of
 * the ClusterRole there, and a ResourceQuota NAME-quota when hard is given
 * (existing ones are kept). 0, or -1 after printing why. */
static int make_access(ty_client *c, const user_opts *o, const char *ns, json_t *hard)
{
    char line[1400], rbpath[600], what[400];

    snprintf(what, sizeof(what), "namespace/%s", ns);
    if (ensure(c, "/api/v1/namespaces", json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1",
                                                  "kind", "Namespace", "metadata", "name", ns),
               what) < 0)
        return -1;
    snprintf(rbpath, sizeof(rbpath),
             "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", ns);
    snprintf(what, sizeof(what), "rolebinding/%s-%s in %s", o->name, o->role, ns);
    snprintf(line, sizeof(line), "%s-%s", o->name, o->role);
    if (ensure(c, rbpath,
               json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s},s:[{s:s,s:s,s:s}]}", "apiVersion",
                         "rbac.authorization.k8s.io/v1", "kind", "RoleBinding", "metadata",
                         "name", line, "namespace", ns, "roleRef", "apiGroup",
                         "rbac.authorization.k8s.io", "kind", "ClusterRole", "name", o->role,
                         "subjects", "apiGroup", "rbac.authorization.k8s.io", "kind", "User",
                         "name", o->name),
               what) < 0)
        return -1;
    if (hard) {
        snprintf(rbpath, sizeof(rbpath), "/api/v1/namespaces/%s/resourcequotas", ns);
        snprintf(what, sizeof(what), "resourcequota/%s-quota in %s", o->name, ns);
        snprintf(line, sizeof(line), "%s-quota", o->name);
        json_t *q = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:O}}", "apiVersion", "v1", "kind",
                              "ResourceQuota", "metadata", "name", line, "namespace", ns, "spec",
                              "hard", hard);
        if (ensure(c, rbpath, q, what) < 0)
            return -1;
    }
    return 0;
}

static int user_add(user_opts *o)
{
    char path[4200], token[65], line[1400], groups[700] = "";
    const char *ns = o->ns ? o->ns : o->name;
    const char *server;
    cli_admin a;
    ty_error err;
    ty_client *c = NULL;
    char *tokens = NULL;
    json_t *hard = NULL;
    ty_buf y = {0};
    int rc = 1;

    if (!good_label(ns)) {
        fprintf(stderr, "error: namespace \"%s\" is not a DNS-1123 label (give --namespace)\n",
                ns);
        return 2;
    }
    if (o->quota && !(hard = quota_hard(o->quota)))
        return 2;
    for (int i = 0; i < o->ngroups; i++) {
        if (!good_name(o->groups[i])) {
            fprintf(stderr, "error: invalid --group \"%s\"\n", o->groups[i]);
            json_decref(hard);
            return 2;
        }
        snprintf(groups + strlen(groups), sizeof(groups) - strlen(groups), "%s%s",
                 i ? "," : "", o->groups[i]);
    }
    ty_error_init(&err);
    if (cli_admin_credential(o->dir, &a, &err) < 0) {
        fprintf(stderr, "error: %s\n", err.text);
        ty_error_clear(&err);
        json_decref(hard);
        return 1;
    }
    server = o->server ? o->server : a.server[0] ? a.server : cli_default_server();
    snprintf(path, sizeof(path), "%s/tokens.csv", o->dir);
    if (!(tokens = read_tokens(path)))
        goto out;
    if (has_user(tokens, o->name)) {
        fprintf(stderr, "error: user \"%s\" already has a token in %s (trainyard user remove "
                        "%s first)\n", o->name, path, o->name);
        goto out;
    }
    kc_http_opts ko = {.server = server, .token = a.token,
                       .ca_file = a.ca_file[0] ? a.ca_file : NULL};
    if (!(c = client_new_opts(&ko, &err))) {
        cli_print_error(&err, false);
        goto out;
    }
    if (make_access(c, o, ns, hard) < 0)
        goto out;
    /* the credential last: a user whose access could not be made gets none */
    if (new_token(token) < 0) {
        fprintf(stderr, "error: no random bytes for the token\n");
        goto out;
    }
    snprintf(line, sizeof(line), "%s,%s,%s%s%s%s\n", token, o->name, o->name,
             groups[0] ? ",\"" : "", groups, groups[0] ? "\"" : "");
    if (tokens[0] && tokens[strlen(tokens) - 1] != '\n' && append_line(path, "\n") < 0)
        goto out;
    if (append_line(path, line) < 0)
        goto out;
    printf("token for %s added to %s\n", o->name, path);
    if (!token_works(&a, server, token))
        fprintf(stderr, "warning: the server has not taken the new token yet (is it running "
                        "with --data-dir %s?)\n", o->dir);
    if (cli_kubeconfig_yaml(server, a.ca_file[0] ? a.ca_file : NULL, o->name, ns, token, &y) <
            0 ||
        cli_write_secret(o->output, &y) < 0)
        goto out;
    if (o->output)
        printf("kubeconfig for %s written to %s (give it to them; it is their password)\n",
               o->name, o->output);
    rc = 0;
out:
    explicit_bzero(token, sizeof(token));
    explicit_bzero(line, sizeof(line));
    if (y.data)
        explicit_bzero(y.data, y.len);
    ty_buf_free(&y);
    if (tokens) {
        explicit_bzero(tokens, strlen(tokens));
        free(tokens);
    }
    json_decref(hard);
    client_free(c);
    cli_admin_clear(&a);
    return rc;
}

static int user_list(const user_opts *o)
{
    char path[4200], user[300];
    char *tokens;

    snprintf(path, sizeof(path), "%s/tokens.csv", o->dir);
    if (!(tokens = read_tokens(path)))
        return 1;
    printf("USER\tGROUPS\n");
    for (const char *p = tokens; *p;) {
        size_t len = strcspn(p, "\n");
        if (line_user(p, len, user, sizeof(user))) {
            /* the groups: what follows the third comma, quotes and all */
            const char *g = p;
            for (int commas = 0; g < p + len && commas < 3; g++)
                commas += *g == ',';
            printf("%s\t%.*s\n", user, (int)(p + len - g), g);
        }
        p += len + (p[len] == '\n');
    }
    explicit_bzero(tokens, strlen(tokens));
    free(tokens);
    return 0;
}

static int user_remove(const user_opts *o)
{
    char path[4200], tmp[4300], user[300];
    char *tokens;
    ty_buf keep = {0};
    int removed = 0, fd, rc = 1;

    if (strcmp(o->name, "admin") == 0) {
        fprintf(stderr, "error: the admin's token stays (without it nobody administers this "
                        "server)\n");
        return 2;
    }
    snprintf(path, sizeof(path), "%s/tokens.csv", o->dir);
    if (!(tokens = read_tokens(path)))
        return 1;
    for (const char *p = tokens; *p;) {
        size_t len = strcspn(p, "\n");
        if (line_user(p, len, user, sizeof(user)) && strcmp(user, o->name) == 0)
            removed++;
        else if (ty_buf_append(&keep, p, len) < 0 || ty_buf_append(&keep, "\n", 1) < 0)
            goto out;
        p += len + (p[len] == '\n');
    }
    if (!removed) {
        fprintf(stderr, "error: user \"%s\" has no token in %s\n", o->name, path);
        goto out;
    }
    /* a new file renamed over the old: the server never reads half of one */
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (keep.len && write(fd, keep.data, keep.len) != (ssize_t)keep.len) ||
        fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
        fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        goto out;
    }
    printf("token of %s removed (the server drops it within a second; their namespace and "
           "jobs stay)\n", o->name);
    rc = 0;
out:
    if (keep.data)
        explicit_bzero(keep.data, keep.len);
    ty_buf_free(&keep);
    explicit_bzero(tokens, strlen(tokens));
    free(tokens);
    return rc;
}

int cmd_user(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'n'}, {"role", required_argument, NULL, 'r'},
        {"group", required_argument, NULL, 'g'},     {"quota", required_argument, NULL, 'q'},
        {"data-dir", required_argument, NULL, 'd'},  {"server", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    user_opts o = {.role = "edit"};
    const char *verb;
    int c;

    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    verb = argv[1];
    optind = 2;
    while ((c = getopt_long(argc, argv, "n:r:g:q:d:s:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': o.ns = optarg; break;
        case 'r': o.role = optarg; break;
        case 'g':
            if (o.ngroups == USER_MAX_GROUPS) {
                fprintf(stderr, "error: at most %d --group\n", USER_MAX_GROUPS);
                return 2;
            }
            o.groups[o.ngroups++] = optarg;
            break;
        case 'q': o.quota = optarg; break;
        case 'd': snprintf(o.dir, sizeof(o.dir), "%s", optarg); break;
        case 's': o.server = optarg; break;
        case 'o': o.output = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!o.dir[0])
        cli_default_data_dir(o.dir, sizeof(o.dir));
    if (strcmp(verb, "list") == 0 && optind == argc)
        return user_list(&o);
    if (optind + 1 != argc) {
        usage(stderr);
        return 2;
    }
    o.name = argv[optind];
    if (!good_name(o.name)) {
        fprintf(stderr, "error: invalid user name \"%s\": lowercase letters, digits and "
                        "- . _ @, not system:*\n", o.name);
        return 2;
    }
    if (strcmp(verb, "add") == 0)
        return user_add(&o);
    if (strcmp(verb, "remove") == 0)
        return user_remove(&o);
    usage(stderr);
    return 2;
}
