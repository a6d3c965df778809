/* reqattr.c - see reqattr.h. The rules are kube-apiserver's RequestInfo:
 *   /api/<v>/...  and  /apis/<group>/<v>/...  are resource requests when a
 *   resource follows; an optional "watch/" after the version makes a watch;
 *   namespaces/<ns>/<resource>[/<name>[/<sub>]] names a namespaced object,
 *   namespaces[/<name>[/<sub>]] the namespace itself.
 * The verb follows the method: GET on a name is get, on a collection list
 * (watch with ?watch=true), POST create, PUT update, PATCH patch, DELETE on
 * a name delete and on a collection deletecollection. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "server/reqattr.h"

#define MAX_PARTS 12

static void copy(char *dst, size_t cap, const char *src, size_t len)
{
    if (len >= cap)
        len = 0; /* too long: empty, which matches no rule with a name */
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static void lower_method(reqattr *a, const char *method)
{
    size_t i;
    for (i = 0; method[i] && i + 1 < sizeof(a->verb); i++)
        a->verb[i] = (char)tolower((unsigned char)method[i]);
    a->verb[i] = '\0';
}

void reqattr_parse(reqattr *a, const char *method, const char *path, const char *watch)
{
    const char *parts[MAX_PARTS];
    size_t lens[MAX_PARTS];
    int n = 0, i;
    bool watch_prefix = false;

    memset(a, 0, sizeof(*a));
    copy(a->path, sizeof(a->path), path, strlen(path));
    lower_method(a, method);
    for (const char *p = path; *p && n < MAX_PARTS;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        parts[n] = p;
        lens[n++] = len;
        p += len;
    }
#define IS(k, s) (lens[k] == strlen(s) && strncmp(parts[k], s, lens[k]) == 0)
    if (n >= 3 && IS(0, "api")) {
        copy(a->api_version, sizeof(a->api_version), parts[1], lens[1]);
        i = 2;
    } else if (n >= 4 && IS(0, "apis")) {
        copy(a->api_group, sizeof(a->api_group), parts[1], lens[1]);
        copy(a->api_version, sizeof(a->api_version), parts[2], lens[2]);
        i = 3;
    } else {
        return; /* non-resource: verb is the method, path the path */
    }
    if (IS(i, "watch")) {
        watch_prefix = true;
        if (++i >= n)
            return;
    }
    a->resource_request = true;
    if (IS(i, "namespaces") && i + 2 < n) {
        /* namespaces/<ns>/<resource>[/<name>[/<sub>]] */
        copy(a->ns, sizeof(a->ns), parts[i + 1], lens[i + 1]);
        i += 2;
    } else if (IS(i, "namespaces") && i + 1 < n) {
        /* the namespace object itself: its name is also its namespace */
        copy(a->ns, sizeof(a->ns), parts[i + 1], lens[i + 1]);
    }
    copy(a->resource, sizeof(a->resource), parts[i], lens[i]);
    if (i + 1 < n)
        copy(a->name, sizeof(a->name), parts[i + 1], lens[i + 1]);
    if (i + 2 < n)
        copy(a->subresource, sizeof(a->subresource), parts[i + 2], lens[i + 2]);
#undef IS

    const char *v = a->verb;
    const char *verb = v;
    bool named = a->name[0] != '\0';
    bool watching = watch_prefix || (watch && (strcmp(watch, "true") == 0 ||
                                               strcmp(watch, "1") == 0));
    if (strcmp(v, "get") == 0 || strcmp(v, "head") == 0)
        verb = watching ? "watch" : named ? "get" : "list";
    else if (strcmp(v, "post") == 0)
        verb = "create";
    else if (strcmp(v, "put") == 0)
        verb = "update";
    else if (strcmp(v, "patch") == 0)
        verb = "patch";
    else if (strcmp(v, "delete") == 0)
        verb = named ? "delete" : "deletecollection";
    if (verb != v)
        snprintf(a->verb, sizeof(a->verb), "%s", verb);
}
