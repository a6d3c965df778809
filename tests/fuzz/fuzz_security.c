/* fuzz_security.c - what the security layer parses from outside: the first
 * byte picks
 *   'p'  an audit Policy (server/audit_policy.c, YAML or JSON): a failure
 *        has an error; a policy decides for a few requests with a level in
 *        range;
 *   't'  a token file (server/authn.c, kube-apiserver's CSV): a failure has
 *        an error naming the file; a table's first token names a user with
 *        system:authenticated among its groups (unless it is
 *        system:anonymous or in system:unauthenticated, as upstream);
 *   else a method and a URL path (server/reqattr.c, kube's RequestInfo): a
 *        resource request has a resource and one of the API verbs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/userinfo.h"
#include "fuzz.h"
#include "server/audit_policy.h"
#include "server/authn.h"
#include "server/reqattr.h"

static void policy(const uint8_t *data, size_t size)
{
    ty_error err;
    audit_policy *p;
    static const char *const groups[] = {"team-a"};

    ty_error_init(&err);
    p = audit_policy_parse((const char *)data, size, "fuzz", &err);
    if (!p) {
        if (err.code == TY_OK || !err.text[0])
            fuzz_fail("audit_policy_parse failed without an error");
        ty_error_clear(&err);
        return;
    }
    ty_user *u = userinfo_new("alice", "1", groups, 1);
    static const char *const reqs[][3] = {{"GET", "/api/v1/namespaces/a/pods/p/log", NULL},
                                          {"POST", "/apis/kubeflow.org/v1/namespaces/b/pytorchjobs",
                                           NULL},
                                          {"GET", "/healthz", NULL},
                                          {"GET", "/api/v1/pods", "true"}};
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        reqattr a;
        reqattr_parse(&a, reqs[i][0], reqs[i][1], reqs[i][2]);
        for (int anon = 0; anon < 2; anon++) {
            audit_decision d = audit_policy_eval(p, anon ? NULL : u, &a);
            if ((int)d.level < AUDIT_LEVEL_NONE || (int)d.level > AUDIT_LEVEL_REQUEST_RESPONSE)
                fuzz_fail("level %d", (int)d.level);
        }
    }
    userinfo_free(u);
    audit_policy_free(p);
}

static void tokens(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/ty-fuzz-tokens-XXXXXX";
    int fd = mkstemp(path);
    ty_error err;
    ty_authn *a;

    if (fd < 0)
        return;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return;
    }
    close(fd);
    ty_error_init(&err);
    authn_opts o = {.token_auth_file = path, .reload_ms = -1};
    a = authn_new(&o, &err);
    if (!a) {
        if (err.code == TY_OK || !strstr(err.text, path))
            fuzz_fail("a refused token file's error does not name it: %s", err.text);
    } else {
        /* the first line's first field, as a client would send it */
        char tok[256];
        size_t n = 0;
        while (n < size && data[n] != ',' && data[n] != '\n')
            n++;
        if (n < size && n > 0 && n < sizeof(tok) && data[0] != '"' && data[0] != '#') {
            ty_user *u = NULL;
            memcpy(tok, data, n);
            tok[n] = '\0';
            /* (kube-apiserver's rule: not the anonymous user, nor one
             * the file puts in system:unauthenticated) */
            if (authn_token(a, tok, &u, &err) == 0 && u &&
                strcmp(u->name, USERINFO_ANONYMOUS) != 0 &&
                !userinfo_in_group(u, USERINFO_UNAUTHENTICATED) &&
                !userinfo_in_group(u, USERINFO_AUTHENTICATED))
                fuzz_fail("a token's user is not system:authenticated");
            userinfo_free(u);
        }
        authn_free(a);
    }
    ty_error_clear(&err);
    unlink(path);
}

static void request(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size, 4096), *sp;
    reqattr a;
    static const char *const verbs[] = {"get", "list", "watch", "create", "update", "patch",
                                        "delete", "deletecollection"};
    bool known = false;

    if (!s)
        return;
    sp = strchr(s, ' ');
    if (sp)
        *sp = '\0';
    reqattr_parse(&a, s, sp ? sp + 1 : "/", sp && strstr(sp + 1, "?w") ? "true" : NULL);
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        known |= strcmp(a.verb, verbs[i]) == 0;
    if (a.resource_request && !a.resource[0] && strlen(sp ? sp + 1 : "") < REQATTR_MAX)
        fuzz_fail("a resource request without a resource: %s", sp ? sp + 1 : "");
    if (a.resource_request && !known && (!strcmp(s, "GET") || !strcmp(s, "POST") ||
                                         !strcmp(s, "PUT") || !strcmp(s, "PATCH") ||
                                         !strcmp(s, "DELETE")))
        fuzz_fail("method %s gave verb %s", s, a.verb);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    if (data[0] == 'p')
        policy(data + 1, size - 1);
    else if (data[0] == 't')
        tokens(data + 1, size - 1);
    else
        request(data, size);
    return 0;
}
