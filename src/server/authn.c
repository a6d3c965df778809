/* authn.c - see authn.h. The token files and their table; the request's
 * path through the authenticators. Client certificates: authn_x509.c. */
#include "server/authn.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "base/log.h"
#include "base/strmap.h"
#include "base/thread.h"
#include "server/authn_int.h"

#define TOKEN_MAX_LINES 100000
#define TOKEN_LINE_MAX 8192
#define TOKEN_MAX_LEN 4096 /* a longer bearer token is refused unread */

/* One user of a token file. Its key is the token's SHA-256 in hex: the
 * table never holds the token itself, and a lookup's timing depends on
 * the digest of the guess, which tells nothing about any token. */
typedef struct token_entry {
    char key[2 * 32 + 1];
    ty_user *user;
    const char *file; /* borrowed from the ty_authn */
    unsigned line;
} token_entry;

typedef struct token_table {
    strmap map;          /* key -> token_entry (borrowed from all) */
    token_entry **all;   /* owned */
    size_t n, cap;
} token_table;

/* What a token file was when it was last read: a change of any of these
 * reads it again (a file replaced by rename has a new inode). */
typedef struct file_mark {
    struct timespec mtime;
    off_t size;
    ino_t ino;
    bool present;
} file_mark;

struct ty_authn {
    const char *files[2]; /* the admin file, --token-auth-file (owned copies) */
    size_t nfiles;
    pthread_mutex_t reload_mu; /* one reload at a time; guards marks */
    file_mark marks[2];
    bool client_certs, anonymous;

    pthread_rwlock_t lock; /* the table: requests read it, reloads replace it */
    token_table *table;

    pthread_t reloader;
    bool has_reloader;
    int reload_ms;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    bool stop;
};

static void entry_free(token_entry *e)
{
    if (e) {
        userinfo_free(e->user);
        free(e);
    }
}

static void table_free(token_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        entry_free(t->all[i]);
    free(t->all);
    strmap_free(&t->map);
    free(t);
}

static int token_key(const char *token, size_t len, char key[65])
{
    unsigned char d[32];
    static const char hex[] = "0123456789abcdef";

    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, token, len, d) < 0)
        return -1;
    for (size_t i = 0; i < 32; i++) {
        key[2 * i] = hex[d[i] >> 4];
        key[2 * i + 1] = hex[d[i] & 15];
    }
    key[64] = '\0';
    return 0;
}

/* One CSV field: quoted ("a,b" with "" for a quote) or plain, into out
 * (TOKEN_LINE_MAX bytes: a field is never longer than its line). Leading
 * blanks are skipped, as kube-apiserver's reader does. Advances *p past
 * the field and its comma. -1 on a quote that never closes or text after
 * a closing quote. */
static int csv_field(const char **p, char *out)
{
    const char *s = *p;
    size_t n = 0;

    while (*s == ' ' || *s == '\t')
        s++;
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

static char *trim(char *s)
{
    size_t n;
    while (*s == ' ' || *s == '\t')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

static int parse_line(token_table *t, const char *file, unsigned lineno, const char *line,
                      ty_error *err)
{
    /* thread-local: 32 KiB is too much for a reload thread's stack frame */
    static _Thread_local char f[4][TOKEN_LINE_MAX];
    char *groups[USERINFO_MAX_GROUPS];
    size_t ngroups = 0, nf = 0;
    const char *p = line;
    token_entry *e, *dup;

    while (*p && nf < 4) {
        if (csv_field(&p, f[nf]) < 0)
            return ty_seterr(err, TY_EBADREQUEST,
                             "%s:%u: malformed CSV (an unclosed quote, or text after one?)",
                             file, lineno);
        nf++;
    }
    if (*p || nf < 3)
        return ty_seterr(err, TY_EBADREQUEST,
                         "%s:%u: want token,user,uid[,\"group1,group2\"] (found %s%zu "
                         "fields)",
                         file, lineno, *p ? "more than " : "", nf);
    if (!f[0][0])
        return ty_seterr(err, TY_EBADREQUEST, "%s:%u: the token is empty", file, lineno);
    if (!trim(f[1])[0])
        return ty_seterr(err, TY_EBADREQUEST, "%s:%u: the user name is empty", file, lineno);
    if (strlen(f[0]) > TOKEN_MAX_LEN)
        return ty_seterr(err, TY_EBADREQUEST, "%s:%u: the token is longer than %d bytes", file,
                         lineno, TOKEN_MAX_LEN);
    for (const char *c = f[0]; *c; c++)
        if (*c == ' ' || *c == '\t' || (unsigned char)*c < 0x20)
            return ty_seterr(err, TY_EBADREQUEST,
                             "%s:%u: the token has a blank or control character in it", file,
                             lineno);
    if (nf == 4) {
        char *save = NULL;
        for (char *g = strtok_r(f[3], ",", &save); g; g = strtok_r(NULL, ",", &save)) {
            g = trim(g);
            if (!*g)
                continue;
            if (ngroups == USERINFO_MAX_GROUPS)
                return ty_seterr(err, TY_EBADREQUEST, "%s:%u: more than %d groups", file,
                                 lineno, USERINFO_MAX_GROUPS);
            groups[ngroups++] = g;
        }
    }
    if (!(e = calloc(1, sizeof(*e))))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    e->file = file;
    e->line = lineno;
    if (token_key(f[0], strlen(f[0]), e->key) < 0 ||
        !(e->user = userinfo_new(trim(f[1]), trim(f[2]), (const char *const *)groups,
                                 ngroups))) {
        entry_free(e);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    if ((dup = strmap_get(&t->map, e->key))) {
        ty_seterr(err, TY_EBADREQUEST, "%s:%u: the token is given twice (also at %s:%u)", file,
                  lineno, dup->file, dup->line);
        entry_free(e);
        return -1;
    }
    if (t->n == t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 16;
        token_entry **more = realloc(t->all, ncap * sizeof(*more));
        if (!more) {
            entry_free(e);
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
        }
        t->all = more;
        t->cap = ncap;
    }
    if (strmap_put(&t->map, e->key, e) < 0) {
        entry_free(e);
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    t->all[t->n++] = e;
    return 0;
}

static void mark_of(const struct stat *st, file_mark *m)
{
    m->mtime = st->st_mtim;
    m->size = st->st_size;
    m->ino = st->st_ino;
    m->present = true;
}

static bool mark_same(const file_mark *a, const file_mark *b)
{
    return a->present == b->present && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec && a->size == b->size && a->ino == b->ino;
}

static int load_file(token_table *t, const char *file, file_mark *mark, ty_error *err)
{
    FILE *fp = fopen(file, "re");
    char line[TOKEN_LINE_MAX];
    unsigned lineno = 0;
    struct stat st;

    if (!fp)
        return ty_seterr(err, TY_EBADREQUEST, "cannot read token file %s: %s", file,
                         strerror(errno));
    /* the mark is of what is read: a write after it is seen next time */
    if (fstat(fileno(fp), &st) == 0)
        mark_of(&st, mark);
    while (fgets(line, sizeof(line), fp)) {
        size_t len = strlen(line);
        lineno++;
        if (lineno > TOKEN_MAX_LINES) {
            fclose(fp);
            return ty_seterr(err, TY_EBADREQUEST, "%s: more than %d lines", file,
                             TOKEN_MAX_LINES);
        }
        if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
            fclose(fp);
            return ty_seterr(err, TY_EBADREQUEST, "%s:%u: line longer than %d bytes", file,
                             lineno, TOKEN_LINE_MAX - 2);
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!*trim(line) || line[0] == '#')
            continue;
        if (parse_line(t, file, lineno, line, err) < 0) {
            fclose(fp);
            return -1;
        }
    }
    fclose(fp);
    return 0;
}

/* A table of every token file; marks gets what was read. */
static token_table *load_all(ty_authn *a, file_mark *marks, ty_error *err)
{
    token_table *t = calloc(1, sizeof(*t));

    if (!t) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    strmap_init(&t->map);
    for (size_t i = 0; i < a->nfiles; i++)
        if (load_file(t, a->files[i], &marks[i], err) < 0) {
            table_free(t);
            return NULL;
        }
    return t;
}

static void swap_table(ty_authn *a, token_table *t, const file_mark *marks)
{
    token_table *old;

    pthread_rwlock_wrlock(&a->lock);
    old = a->table;
    a->table = t;
    pthread_rwlock_unlock(&a->lock);
    memcpy(a->marks, marks, sizeof(a->marks));
    table_free(old);
}

int authn_reload(ty_authn *a, ty_error *err)
{
    file_mark marks[2];
    token_table *t;

    memset(marks, 0, sizeof(marks));
    pthread_mutex_lock(&a->reload_mu);
    if ((t = load_all(a, marks, err)))
        swap_table(a, t, marks);
    pthread_mutex_unlock(&a->reload_mu);
    return t ? 0 : -1;
}

static bool files_changed(ty_authn *a)
{
    for (size_t i = 0; i < a->nfiles; i++) {
        struct stat st;
        file_mark m;
        memset(&m, 0, sizeof(m));
        if (stat(a->files[i], &st) == 0)
            mark_of(&st, &m);
        if (!mark_same(&m, &a->marks[i]))
            return true;
    }
    return false;
}

static void *reload_main(void *arg)
{
    ty_authn *a = arg;
    file_mark failed[2];

    memset(failed, 0, sizeof(failed));

    pthread_mutex_lock(&a->stop_mu);
    while (!a->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += a->reload_ms / 1000;
        until.tv_nsec += (long)(a->reload_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&a->stop_cv, &a->stop_mu, &until);
        if (a->stop)
            break;
        pthread_mutex_unlock(&a->stop_mu);
        pthread_mutex_lock(&a->reload_mu);
        if (files_changed(a)) {
            file_mark marks[2];
            ty_error err;
            token_table *t;

            memset(marks, 0, sizeof(marks));
            ty_error_init(&err);
            if ((t = load_all(a, marks, &err))) {
                swap_table(a, t, marks);
                ty_info("authn: token files read again");
                memset(failed, 0, sizeof(failed));
            } else if (memcmp(failed, marks, sizeof(failed)) != 0) {
                /* said once per broken version, not once a second */
                ty_errlog("authn: %s; the tokens read before stay in use", err.text);
                memcpy(failed, marks, sizeof(failed));
            }
            ty_error_clear(&err);
        }
        pthread_mutex_unlock(&a->reload_mu);
        pthread_mutex_lock(&a->stop_mu);
    }
    pthread_mutex_unlock(&a->stop_mu);
    return NULL;
}

ty_authn *authn_new(const authn_opts *opts, ty_error *err)
{
    ty_authn *a = calloc(1, sizeof(*a));
    pthread_condattr_t ca;

    if (!a) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    /* glibc's default lets a steady stream of readers (requests) keep the
     * reload's write lock waiting for ever */
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&a->lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&a->reload_mu, NULL);
    pthread_mutex_init(&a->stop_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->stop_cv, &ca);
    pthread_condattr_destroy(&ca);
    a->client_certs = opts->client_certs;
    a->anonymous = opts->anonymous;
    a->reload_ms = opts->reload_ms ? opts->reload_ms : 1000;
    if (opts->admin_token_file && !(a->files[a->nfiles++] = strdup(opts->admin_token_file)))
        goto oom;
    if (opts->token_auth_file && !(a->files[a->nfiles++] = strdup(opts->token_auth_file)))
        goto oom;
    if (authn_reload(a, err) < 0)
        goto fail;
    if (a->nfiles && a->reload_ms > 0) {
        if (pthread_create(&a->reloader, NULL, reload_main, a) != 0) {
            ty_seterr(err, TY_EINTERNAL, "cannot start the token file thread");
            goto fail;
        }
        a->has_reloader = true;
        ty_thread_setup(a->reloader, "ty-authn", TY_THREAD_BACKGROUND);
    }
    return a;
oom:
    ty_seterr(err, TY_EINTERNAL, "out of memory");
fail:
    authn_free(a);
    return NULL;
}

void authn_free(ty_authn *a)
{
    if (!a)
        return;
    if (a->has_reloader) {
        pthread_mutex_lock(&a->stop_mu);
        a->stop = true;
        pthread_cond_signal(&a->stop_cv);
        pthread_mutex_unlock(&a->stop_mu);
        pthread_join(a->reloader, NULL);
    }
    table_free(a->table);
    for (size_t i = 0; i < a->nfiles; i++)
        free((char *)a->files[i]);
    pthread_rwlock_destroy(&a->lock);
    pthread_mutex_destroy(&a->reload_mu);
    pthread_mutex_destroy(&a->stop_mu);
    pthread_cond_destroy(&a->stop_cv);
    free(a);
}

int authn_token(ty_authn *a, const char *token, ty_user **user, ty_error *err)
{
    char key[65];
    token_entry *e;
    size_t len = strnlen(token, TOKEN_MAX_LEN + 1);

    *user = NULL;
    if (!len || len > TOKEN_MAX_LEN || token_key(token, len, key) < 0)
        return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
    pthread_rwlock_rdlock(&a->lock);
    e = a->table ? strmap_get(&a->table->map, key) : NULL;
    if (e)
        *user = userinfo_dup(e->user);
    pthread_rwlock_unlock(&a->lock);
    if (!e)
        return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
    if (!*user)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}

/* system:anonymous in system:unauthenticated (and not in
 * system:authenticated, which userinfo_new would add). */
static ty_user *anonymous_user(void)
{
    ty_user *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    u->name = strdup(AUTHN_ANONYMOUS_USER);
    u->groups = calloc(2, sizeof(char *));
    if (!u->name || !u->groups || !(u->groups[0] = strdup(AUTHN_UNAUTHENTICATED))) {
        userinfo_free(u);
        return NULL;
    }
    u->ngroups = 1;
    return u;
}

int authn_request(ty_authn *a, struct MHD_Connection *conn, ty_user **user, ty_error *err)
{
    const char *h;
    int cert = AUTHN_CERT_NONE;

    *user = NULL;
    if (a->client_certs) {
        cert = authn_conn_cert(conn, user);
        if (cert == AUTHN_CERT_OK)
            return 0;
        if (cert == AUTHN_CERT_OOM)
            return ty_seterr(err, TY_EINTERNAL, "out of memory");
    }
    /* Another scheme (Basic) is not a bearer token: kube-apiserver's token
     * authenticator passes over it, and so does this one. */
    h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (h && strncasecmp(h, "Bearer ", 7) == 0) {
        h += 7;
        while (*h == ' ')
            h++;
        if (*h)
            return authn_token(a, h, user, err);
    }
    if (cert == AUTHN_CERT_BAD)
        return ty_seterr(err, TY_EUNAUTH, "Unauthorized");
    if (a->anonymous && !(*user = anonymous_user()))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return 0;
}
