/* authn.c - see authn.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>
#include "server/authn.h"

#define TOKEN_MAX_LINES 100000
#define TOKEN_LINE_MAX 8192

typedef struct token_entry {
    char *token;
    ty_user *user;
} token_entry;

struct ty_authn {
    token_entry *tokens;
    size_t ntokens;
};

/* One CSV field: quoted ("a,b" with "" for a quote) or plain, into out
 * (TOKEN_LINE_MAX bytes: a field is never longer than its line). Advances
 * *p past the field and its comma. -1 on a quote that never closes. */
static int csv_field(const char **p, char *out)
{
    const char *s = *p;
    size_t n = 0;
    if (*s == '"') {
        for (s++;; s++) {
            if (!*s)
                return -1;
            if (*s == '"' && s[1] == '"') {
                out[n++] = '"';
                s++;
            } else if (*s == '"') {
                s++;
                break;
            } else {
                out[n++] = *s;
            }
        }
    } else {
        for (; *s && *s != ','; s++)
            out[n++] = *s;
    }
    out[n] = '\0';
    if (*s == ',')
        s++;
    else if (*s)
        return -1;
    *p = s;
    return 0;
}

static int parse_line(ty_authn *a, const char *file, unsigned lineno, const char *line,
                      ty_error *err)
{
    static _Thread_local char f[4][TOKEN_LINE_MAX];
    char *groups[USERINFO_MAX_GROUPS];
    size_t ngroups = 0, nf = 0;
    const char *p = line;
    int rc = -1;

    while (*p && nf < 4) {
        if (csv_field(&p, f[nf]) < 0) {
            ty_seterr(err, TY_EBADREQUEST, "%s:%u: malformed CSV (an unclosed quote?)", file,
                      lineno);
            goto out;
        }
        nf++;
    }
    if (*p || nf < 3) {
        ty_seterr(err, TY_EBADREQUEST,
                  "%s:%u: want token,user,uid[,\"group1,group2\"] (%zu fields)", file, lineno,
                  nf + (*p ? 1 : 0));
        goto out;
    }
    for (size_t i = 0; i < 2; i++)
        if (!f[i][0]) {
            ty_seterr(err, TY_EBADREQUEST, "%s:%u: the %s is empty", file, lineno,
                      i == 0 ? "token" : "user name");
            goto out;
        }
    if (nf == 4 && f[3][0]) {
        char *save = NULL;
        for (char *g = strtok_r(f[3], ",", &save); g; g = strtok_r(NULL, ",", &save)) {
            if (ngroups == USERINFO_MAX_GROUPS) {
                ty_seterr(err, TY_EBADREQUEST, "%s:%u: more than %d groups", file, lineno,
                          USERINFO_MAX_GROUPS);
                goto out;
            }
            groups[ngroups++] = g;
        }
    }
    for (size_t i = 0; i < a->ntokens; i++)
        if (strcmp(a->tokens[i].token, f[0]) == 0) {
            ty_seterr(err, TY_EBADREQUEST, "%s:%u: the token is given twice", file, lineno);
            goto out;
        }
    token_entry *more = realloc(a->tokens, (a->ntokens + 1) * sizeof(*more));
    if (!more) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    a->tokens = more;
    more[a->ntokens].token = strdup(f[0]);
    more[a->ntokens].user =
        userinfo_new(f[1], f[2], (const char *const *)groups, ngroups);
    if (!more[a->ntokens].token || !more[a->ntokens].user) {
        free(more[a->ntokens].token);
        userinfo_free(more[a->ntokens].user);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto out;
    }
    a->ntokens++;
    rc = 0;
out:
    return rc;
}

static int load_tokens(ty_authn *a, const char *file, ty_error *err)
{
    FILE *fp = fopen(file, "r");
    char line[TOKEN_LINE_MAX];
    unsigned lineno = 0;

    if (!fp)
        return ty_seterr(err, TY_EBADREQUEST, "cannot read --token-auth-file %s: %s", file,
                         strerror(errno));
    while (fgets(line, sizeof(line), fp)) {
        size_t len = strlen(line);
        lineno++;
        if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
            fclose(fp);
            return ty_seterr(err, TY_EBADREQUEST, "%s:%u: line longer than %d bytes", file,
                             lineno, TOKEN_LINE_MAX - 2);
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!len || line[0] == '#')
            continue;
        if (lineno > TOKEN_MAX_LINES || parse_line(a, file, lineno, line, err) < 0) {
            if (lineno > TOKEN_MAX_LINES)
                ty_seterr(err, TY_EBADREQUEST, "%s: more than %d lines", file,
                          TOKEN_MAX_LINES);
            fclose(fp);
            return -1;
        }
    }
    fclose(fp);
    return 0;
}

ty_authn *authn_new(const authn_opts *opts, ty_error *err)
{
    ty_authn *a = calloc(1, sizeof(*a));
    if (!a) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (opts->token_auth_file && load_tokens(a, opts->token_auth_file, err) < 0) {
        authn_free(a);
        return NULL;
    }
    return a;
}

void authn_free(ty_authn *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->ntokens; i++) {
        free(a->tokens[i].token);
        userinfo_free(a->tokens[i].user);
    }
    free(a->tokens);
    free(a);
}

/* Compares in time that depends on the length only, so that the time an
 * answer takes tells nothing about how much of a guess was right. */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = la != lb;
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)(a[i] ^ b[i < lb ? i : 0]);
    return diff == 0 && la == lb;
}

int authn_request(ty_authn *a, struct MHD_Connection *conn, ty_user **user, ty_error *err)
{
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const ty_user *found = NULL;

    *user = NULL;
    if (!h)
        return 0;
    if (strncasecmp(h, "Bearer ", 7) != 0)
        return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
    h += 7;
    while (*h == ' ')
        h++;
    for (size_t i = 0; i < a->ntokens; i++)
        if (same_secret(h, a->tokens[i].token))
            found = a->tokens[i].user;
    if (!found)
        return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
    if (!(*user = userinfo_dup(found)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}
