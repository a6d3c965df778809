/* guard.c - the checks every request passes before a handler runs (guard.h). */
#include "server/guard.h"

#include <arpa/inet.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "server/progress.h"

#define GUARD_MAX_LIST 32  /* entries in --allowed-hosts / --cors-allowed-origins */
#define GUARD_MAX_NAME 256

struct http_guard {
    char *hosts[GUARD_MAX_LIST];
    int nhosts;
    regex_t origins[GUARD_MAX_LIST];
    int norigins;
    int max_read, max_mutate; /* < 0: no limit */
    atomic_int reads, mutates;
};

static int limit_of(int v, int dflt)
{
    return v == 0 ? dflt : v;
}

/* Splits a comma-separated list, calling add for each non-empty entry. */
static int each_entry(const char *list, const char *flag, int (*add)(http_guard *, const char *,
                                                                     ty_error *),
                      http_guard *g, ty_error *err)
{
    char entry[GUARD_MAX_NAME];

    while (list && *list) {
        size_t n = strcspn(list, ",");
        if (n >= sizeof(entry))
            return ty_seterr(err, TY_EBADREQUEST, "%s: entry longer than %d characters", flag,
                             GUARD_MAX_NAME - 1);
        memcpy(entry, list, n);
        entry[n] = '\0';
        if (*entry && add(g, entry, err) < 0)
            return -1;
        list += n;
        if (*list == ',')
            list++;
    }
    return 0;
}

static int add_host(http_guard *g, const char *name, ty_error *err)
{
    if (g->nhosts == GUARD_MAX_LIST)
        return ty_seterr(err, TY_EBADREQUEST, "--allowed-hosts: more than %d names",
                         GUARD_MAX_LIST);
    if (!(g->hosts[g->nhosts] = strdup(name)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    g->nhosts++;
    return 0;
}

static int add_origin(http_guard *g, const char *re, ty_error *err)
{
    if (g->norigins == GUARD_MAX_LIST)
        return ty_seterr(err, TY_EBADREQUEST, "--cors-allowed-origins: more than %d entries",
                         GUARD_MAX_LIST);
    if (regcomp(&g->origins[g->norigins], re, REG_EXTENDED | REG_NOSUB | REG_ICASE) != 0)
        return ty_seterr(err, TY_EBADREQUEST,
                         "--cors-allowed-origins: %s is not a valid regular expression", re);
    /* Matched anywhere in the Origin, as kube-apiserver does: "localhost"
     * also matches http://localhost.attacker.example. */
    if (re[0] != '^' || re[strlen(re) - 1] != '$')
        ty_warn("--cors-allowed-origins: %s is not anchored (^...$): it matches any origin "
                "that contains it", re);
    g->norigins++;
    return 0;
}

http_guard *guard_new(const server_opts *opts, ty_error *err)
{
    http_guard *g = calloc(1, sizeof(*g));

    if (!g) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    g->max_read = limit_of(opts->max_requests_inflight, SERVER_DEFAULT_INFLIGHT);
    g->max_mutate =
        limit_of(opts->max_mutating_requests_inflight, SERVER_DEFAULT_MUTATING_INFLIGHT);
    if (each_entry(opts->allowed_hosts, "--allowed-hosts", add_host, g, err) < 0 ||
        each_entry(opts->cors_allowed_origins, "--cors-allowed-origins", add_origin, g,
                   err) < 0) {
        guard_free(g);
        return NULL;
    }
    return g;
}

void guard_free(http_guard *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->nhosts; i++)
        free(g->hosts[i]);
    for (int i = 0; i < g->norigins; i++)
        regfree(&g->origins[i]);
    free(g);
}

/* Copies the host part of "name:port", "[v6]:port" or "name" into out. */
static bool host_part(const char *value, char *out, size_t len)
{
    const char *end;
    size_t n;

    if (*value == '[') {
        value++;
        end = strchr(value, ']');
        if (!end || (end[1] != '\0' && end[1] != ':'))
            return false;
    } else {
        end = strchr(value, ':');
        if (end && strchr(end + 1, ':'))
            return false; /* a bare IPv6 address is not a valid Host */
        if (!end)
            end = value + strlen(value);
    }
    n = (size_t)(end - value);
    if (n == 0 || n >= len)
        return false;
    memcpy(out, value, n);
    out[n] = '\0';
    if (n > 1 && out[n - 1] == '.')
        out[n - 1] = '\0'; /* "localhost." is localhost */
    return true;
}

static bool ends_with_nocase(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lf = strlen(suffix);
    return ls >= lf && strcasecmp(s + ls - lf, suffix) == 0;
}

bool guard_host_allowed(const http_guard *g, const char *host_header)
{
    char host[GUARD_MAX_NAME];
    unsigned char ip[16];

    if (!host_part(host_header, host, sizeof(host)))
        return false;
    /* An IP literal cannot be a rebound name: the page's origin is that IP. */
    if (inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1)
        return true;
    if (strcasecmp(host, "localhost") == 0 || ends_with_nocase(host, ".localhost"))
        return true;
    for (int i = 0; i < g->nhosts; i++) {
        const char *want = g->hosts[i];
        if (strcasecmp(host, want) == 0)
            return true;
        /* "*.example.org" allows every name below example.org */
        if (want[0] == '*' && want[1] == '.' && ends_with_nocase(host, want + 1))
            return true;
    }
    return false;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* Origin is "scheme://host[:port]"; same-origin when host[:port] is Host. */
static bool same_origin(const char *origin, const char *host)
{
    const char *p = strstr(origin, "://");
    if (!p || !host)
        return false;
    p += 3;
    if (strncasecmp(origin, "http://", 7) != 0 && strncasecmp(origin, "https://", 8) != 0)
        return false;
    return strcasecmp(p, host) == 0;
}

static bool origin_configured(const http_guard *g, const char *origin)
{
    for (int i = 0; i < g->norigins; i++)
        if (regexec(&g->origins[i], origin, 0, NULL, 0) == 0)
            return true;
    return false;
}

const char *guard_cors_origin(http_guard *g, struct MHD_Connection *conn)
{
    const char *origin = header(conn, "Origin");
    if (!origin || same_origin(origin, header(conn, "Host")) || !origin_configured(g, origin))
        return NULL;
    return origin;
}

/* The media type without parameters ("application/json; charset=utf-8"). */
static bool media_is(const char *ctype, const char *want)
{
    size_t n = strlen(want);
    if (strncasecmp(ctype, want, n) != 0)
        return false;
    ctype += n;
    while (*ctype == ' ' || *ctype == '\t')
        ctype++;
    return *ctype == '\0' || *ctype == ';';
}

static int check_body_type(struct MHD_Connection *conn, const char *method, ty_error *err)
{
    static const char *const accepted[] = {"application/json", "application/yaml",
                                           "application/vnd.kubernetes.protobuf"};
    const char *ctype = header(conn, "Content-Type");

    /* PATCH names its patch type; resource_write.c checks it against the kind. */
    if (strcmp(method, "POST") != 0 && strcmp(method, "PUT") != 0)
        return 0;
    /* No type at all is read as JSON, as kube-apiserver does. */
    if (!ctype || !*ctype)
        return 0;
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
        if (media_is(ctype, accepted[i]))
            return 0;
    return ty_seterr(err, TY_EMEDIATYPE,
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json, application/yaml, "
                     "application/vnd.kubernetes.protobuf");
}

static bool query_true(struct MHD_Connection *conn, const char *key)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
    return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);
}

/* The path's segments after /api/v1 or /apis/<g>/<v>: 0 when it is
 * neither. */
static int resource_segments(const char *url, const char **rest)
{
    int prefix = strncmp(url, "/api/", 5) == 0 ? 2 : strncmp(url, "/apis/", 6) == 0 ? 3 : 0;
    int n = 0;

    if (!prefix)
        return 0;
    for (const char *p = url; *p; p++) {
        if (*p != '/' || p[1] == '/' || p[1] == '\0')
            continue;
        if (++n == prefix + 1)
            *rest = p + 1;
    }
    return n > prefix ? n - prefix : 0;
}

bool guard_long_running(struct MHD_Connection *conn, const char *method, const char *url)
{
    const char *rest = NULL;
    int n;

    if (strcmp(method, "GET") != 0)
        return false;
    /* As the router (resource.c) reads a path: a watch is a collection
     * (<plural> or namespaces/<ns>/<plural>) with watch set; a followed log
     * is namespaces/<ns>/pods/<name>/log. Anything else, whatever its query
     * says, is an ordinary request with its slot and its idle timeout. */
    n = resource_segments(url, &rest);
    if ((n == 1 || (n == 3 && strncmp(rest, "namespaces/", 11) == 0)) &&
        query_true(conn, "watch"))
        return true;
    if (n == 5 && strncmp(rest, "namespaces/", 11) == 0) {
        const char *kind = strchr(rest + 11, '/');
        return kind && strncmp(kind, "/pods/", 6) == 0 &&
               strcmp(url + strlen(url) - 4, "/log") == 0 && query_true(conn, "follow");
    }
    return false;
}

static bool is_health_path(const char *url)
{
    static const char *const paths[] = {"/healthz", "/livez", "/readyz"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        size_t n = strlen(paths[i]);
        if (strncmp(url, paths[i], n) == 0 && (url[n] == '\0' || url[n] == '/'))
            return true;
    }
    return false;
}

static bool take(atomic_int *count, int max)
{
    if (max < 0) {
        atomic_fetch_add(count, 1);
        return true;
    }
    int cur = atomic_load(count);
    do {
        if (cur >= max)
            return false;
    } while (!atomic_compare_exchange_weak(count, &cur, cur + 1));
    return true;
}

int guard_admit(http_guard *g, struct MHD_Connection *conn, const char *method,
                const char *url, guard_slot *slot, ty_error *err)
{
    const char *host = header(conn, "Host");
    const char *origin = header(conn, "Origin");
    bool mutating;

    *slot = GUARD_SLOT_NONE;
    /* HTTP/1.0 clients may leave Host out; browsers never do. */
    if (host && !guard_host_allowed(g, host))
        return ty_seterr(err, TY_EFORBIDDEN,
                         "host \"%.200s\" is not allowed: use a loopback name or an IP address, "
                         "or name it in --allowed-hosts",
                         host);
    if (origin && !same_origin(origin, host) && !origin_configured(g, origin))
        return ty_seterr(err, TY_EFORBIDDEN,
                         "origin \"%.200s\" is not allowed: requests from web pages must come "
                         "from the server's own origin or one named in --cors-allowed-origins",
                         origin);
    /* The TrainJob progress endpoint (progress.h) reads its body as JSON
     * whatever it is called: a training script's POST often comes as
     * Python's urllib sends data by default (form-encoded), as upstream's
     * own example does, and a cross-site form cannot carry the job's
     * bearer token it needs. */
    if (!progress_path(method, url) && check_body_type(conn, method, err) < 0)
        return -1;
    /* Health probes must answer however busy the API is. */
    if (guard_long_running(conn, method, url) || strcmp(method, "OPTIONS") == 0 ||
        is_health_path(url))
        return 0;
    mutating = strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
    if (!take(mutating ? &g->mutates : &g->reads, mutating ? g->max_mutate : g->max_read))
        return ty_seterr(err, TY_ETOOMANY, "Too many requests, please try again later.");
    *slot = mutating ? GUARD_SLOT_MUTATE : GUARD_SLOT_READ;
    return 0;
}

void guard_release(http_guard *g, guard_slot slot)
{
    if (slot == GUARD_SLOT_READ)
        atomic_fetch_sub(&g->reads, 1);
    else if (slot == GUARD_SLOT_MUTATE)
        atomic_fetch_sub(&g->mutates, 1);
}
