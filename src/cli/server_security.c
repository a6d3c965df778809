/* server_security.c - see server_security.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "cli/admission_config.h"
#include "cli/server_security.h"
#include "server/authn.h"
#include "server/authz.h"
#include "server/audit.h"
#include "server/progress.h"

static int audit_number(const char *flag, const char *arg, long max, long *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v < 0 || v > max) {
        fprintf(stderr, "error: invalid --%s %s: want a whole number from 0 to %ld\n", flag, arg,
                max);
        return -1;
    }
    *out = v;
    return 0;
}

static int audit_flag(int c, const char *arg, security_flags *sf)
{
    long v = 0;
    switch (c) {
    case SECF_AUDIT_LOG_PATH:
        if (!*arg) {
            fprintf(stderr, "error: --audit-log-path wants a file (or - for stdout)\n");
            return -1;
        }
        sf->audit_log_path = arg;
        return 0;
    case SECF_AUDIT_POLICY_FILE: sf->audit_policy_file = arg; return 0;
    case SECF_AUDIT_LOG_MAXSIZE:
        if (audit_number("audit-log-maxsize", arg, 1 << 20, &v) < 0)
            return -1;
        sf->audit_max_size_mb = (int)v;
        return 0;
    case SECF_AUDIT_LOG_MAXBACKUP:
        if (audit_number("audit-log-maxbackup", arg, 1 << 20, &v) < 0)
            return -1;
        sf->audit_max_backups = (int)v;
        return 0;
    case SECF_AUDIT_LOG_MAXAGE:
        if (audit_number("audit-log-maxage", arg, 1 << 20, &v) < 0)
            return -1;
        sf->audit_max_age_days = (int)v;
        return 0;
    case SECF_AUDIT_LOG_MODE:
        if (strcmp(arg, "blocking") != 0 && strcmp(arg, "batch") != 0) {
            fprintf(stderr, "error: invalid --audit-log-mode %s: want blocking or batch\n", arg);
            return -1;
        }
        sf->audit_drop_when_full = strcmp(arg, "batch") == 0;
        return 0;
    case SECF_AUDIT_LOG_BUFFER:
        if (audit_number("audit-log-batch-buffer-size", arg, 10000000, &v) < 0)
            return -1;
        if (v == 0) {
            fprintf(stderr, "error: --audit-log-batch-buffer-size must be at least 1\n");
            return -1;
        }
        sf->audit_buffer = v;
        return 0;
    default: return -1;
    }
}

/* The audit log the flags ask for. A policy without a log is still read
 * (a malformed one stops the server either way) but audits nothing, as
 * kube-apiserver without a backend. */
static int audit_setup(const security_flags *sf, security_state *st, ty_error *err)
{
    audit_opts ao = {.log_path = sf->audit_log_path, .policy_file = sf->audit_policy_file,
                     .max_size_mb = sf->audit_max_size_mb, .max_backups = sf->audit_max_backups,
                     .max_age_days = sf->audit_max_age_days,
                     .drop_when_full = sf->audit_drop_when_full,
                     .buffer_size = (size_t)sf->audit_buffer};
    if (!sf->audit_log_path) {
        if (sf->audit_policy_file) {
            audit_policy *p = audit_policy_load(sf->audit_policy_file, err);
            if (!p)
                return -1;
            audit_policy_free(p);
            fprintf(stderr, "warning: --audit-policy-file without --audit-log-path: nothing "
                            "is audited\n");
        }
        return 0;
    }
    return (st->audit = audit_new(&ao, err)) ? 0 : -1;
}

int security_flag(int c, const char *arg, security_flags *sf)
{
    switch (c) {
    case SECF_TOKEN_AUTH_FILE: sf->token_auth_file = arg; return 0;
    case SECF_AUTHORIZATION_MODE:
        if (strcmp(arg, "RBAC") == 0 || strcmp(arg, "AlwaysAllow") == 0) {
            sf->always_allow = strcmp(arg, "AlwaysAllow") == 0;
            return 0;
        }
        fprintf(stderr, "error: --authorization-mode: unknown mode \"%s\": want RBAC or "
                "AlwaysAllow\n", arg);
        return -1;
    case SECF_ADMISSION_CONFIG: sf->admission_config = arg; return 0;
    case SECF_TLS_CERT_FILE: sf->tls_cert_file = arg; return 0;
    case SECF_TLS_KEY_FILE: sf->tls_key_file = arg; return 0;
    case SECF_CLIENT_CA_FILE: sf->client_ca_file = arg; return 0;
    case SECF_NO_TLS: sf->no_tls = true; return 0;
    case SECF_ANONYMOUS_AUTH:
        if (!arg || strcasecmp(arg, "true") == 0 || strcmp(arg, "1") == 0) {
            sf->anonymous_auth = true;
            return 0;
        }
        if (strcasecmp(arg, "false") == 0 || strcmp(arg, "0") == 0) {
            sf->anonymous_auth = false;
            return 0;
        }
        fprintf(stderr, "error: invalid --anonymous-auth=%s: want true or false\n", arg);
        return -1;
    case SECF_AUDIT_LOG_PATH:
    case SECF_AUDIT_POLICY_FILE:
    case SECF_AUDIT_LOG_MAXSIZE:
    case SECF_AUDIT_LOG_MAXBACKUP:
    case SECF_AUDIT_LOG_MAXAGE:
    case SECF_AUDIT_LOG_MODE:
    case SECF_AUDIT_LOG_BUFFER: return audit_flag(c, arg, sf);
    default: fprintf(stderr, "error: unknown flag\n"); return -1;
    }
}

bool security_loopback(const char *address)
{
    struct in_addr a;

    if (!address || !*address)
        return true;
    if (inet_pton(AF_INET, address, &a) != 1)
        return false;
    return (ntohl(a.s_addr) >> 24) == 127;
}

/* 1 when path exists (warning when others may read it), 0 when it does
 * not, -1 with err when it cannot be looked at. */
static int secret_exists(const char *path, ty_error *err)
{
    struct stat st;

    if (stat(path, &st) == 0) {
        if (st.st_mode & 077)
            ty_warn("%s can be read by other users (mode %03o): chmod 600 it", path,
                    (unsigned)(st.st_mode & 0777));
        return 1;
    }
    if (errno != ENOENT)
        return ty_seterr(err, TY_EINTERNAL, "cannot look at %s: %s", path, strerror(errno));
    return 0;
}

/* A new file at path (mode 0600) holding data, on disk before this returns;
 * nothing left behind on failure. O_EXCL: two starts racing must not make
 * two different secrets (the data directory's lock makes that moot, but it
 * costs nothing). */
static int make_secret_file(const char *path, const void *data, size_t len, ty_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    if (fd < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot make %s: %s", path, strerror(errno));
    if (write(fd, data, len) != (ssize_t)len || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlink(path);
        return ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(e));
    }
    close(fd);
    return 0;
}

/* DATA_DIR/tokens.csv with one line for the admin (system:masters) and a
 * random token, made when absent (mode 0600, and never replaced: a user
 * may have added lines). */
static int ensure_admin_token(const char *path, ty_error *err)
{
    unsigned char rnd[32];
    char line[256];
    int n, rc;

    if ((rc = secret_exists(path, err)) != 0)
        return rc < 0 ? -1 : 0;
    if (gnutls_rnd(GNUTLS_RND_KEY, rnd, sizeof(rnd)) < 0)
        return ty_seterr(err, TY_EINTERNAL, "no random bytes for the admin token");
    n = 0;
    for (size_t i = 0; i < sizeof(rnd); i++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, "%02x", rnd[i]);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ",%s,%s,\"system:masters\"\n",
                  SECURITY_ADMIN_USER, SECURITY_ADMIN_USER);
    explicit_bzero(rnd, sizeof(rnd));
    rc = make_secret_file(path, line, (size_t)n, err);
    explicit_bzero(line, sizeof(line));
    if (rc == 0)
        ty_info("made the admin credential in %s", path);
    return rc;
}

/* DATA_DIR/progress.key, the TrainJob progress tokens' key
 * (server/progress.h): made on the first start, then read. */
static int load_progress_key(const char *data_dir, ty_error *err)
{
    unsigned char key[PROGRESS_KEY_BYTES];
    char path[4200], *buf = NULL;
    size_t len = 0;
    int rc;

    snprintf(path, sizeof(path), "%s/progress.key", data_dir);
    if ((rc = secret_exists(path, err)) < 0)
        return -1;
    if (rc == 0) {
        if (gnutls_rnd(GNUTLS_RND_KEY, key, sizeof(key)) < 0)
            return ty_seterr(err, TY_EINTERNAL, "no random bytes for %s", path);
        rc = make_secret_file(path, key, sizeof(key), err);
        explicit_bzero(key, sizeof(key));
        if (rc < 0)
            return -1;
    }
    if (tls_read_file(path, "the progress token key", PROGRESS_KEY_BYTES, &buf, &len, err) < 0)
        return -1;
    if (len != PROGRESS_KEY_BYTES)
        rc = ty_seterr(err, TY_EINTERNAL, "%s is not a %d-byte key: remove it and start "
                       "again (running TrainJobs' pods then report with their Secrets' old "
                       "tokens refused)", path, PROGRESS_KEY_BYTES);
    else
        progress_set_key((const unsigned char *)buf);
    explicit_bzero(buf, len);
    free(buf);
    return rc < 0 ? -1 : 0;
}

static int setup_tls(const security_flags *sf, const char *data_dir, const char *address,
                     security_state *st, ty_error *err)
{
    if (!sf->tls_cert_file != !sf->tls_key_file)
        return ty_seterr(err, TY_EBADREQUEST,
                         "--tls-cert-file and --tls-private-key-file go together: give both");
    if (sf->no_tls) {
        if (sf->tls_cert_file || sf->client_ca_file)
            return ty_seterr(err, TY_EBADREQUEST, "--no-tls cannot be given with %s",
                             sf->tls_cert_file ? "--tls-cert-file" : "--client-ca-file");
        if (!security_loopback(address))
            return ty_seterr(err, TY_EBADREQUEST,
                             "refusing to serve plain HTTP on %s: tokens would cross the "
                             "network in the clear. --no-tls is for loopback addresses "
                             "(127.0.0.1) only; to listen on %s give --tls-cert-file and "
                             "--tls-private-key-file",
                             address, address);
        return 0;
    }
    if (sf->tls_cert_file)
        return tls_load_pair(sf->tls_cert_file, sf->tls_key_file, &st->serving, err);
    if (!security_loopback(address))
        return ty_seterr(err, TY_EBADREQUEST,
                         "refusing to listen on %s without --tls-cert-file and "
                         "--tls-private-key-file: the self-signed certificate made in the "
                         "data directory is for loopback use (127.0.0.1, localhost) only. "
                         "Give a certificate and key whose names cover the address clients "
                         "use, or listen on 127.0.0.1",
                         address);
    return tls_ensure_pki(data_dir, &st->serving, NULL, err);
}

int security_setup(const security_flags *sf, const char *data_dir, security_state *st,
                   server_opts *so, ty_error *err)
{
    const char *address = so->address && *so->address ? so->address : "127.0.0.1";
    char admin[4200];
    authn_opts ao = {0};

    if (setup_tls(sf, data_dir, address, st, err) < 0)
        goto fail;
    if (sf->client_ca_file && tls_load_ca(sf->client_ca_file, &st->client_ca_pem, err) < 0)
        goto fail;
    snprintf(admin, sizeof(admin), "%s/%s", data_dir, SECURITY_ADMIN_TOKENS);
    if (ensure_admin_token(admin, err) < 0 || load_progress_key(data_dir, err) < 0)
        goto fail;
    ao.token_auth_file = sf->token_auth_file;
    ao.admin_token_file = admin;
    ao.client_certs = st->client_ca_pem != NULL;
    ao.anonymous = sf->anonymous_auth;
    if (!(st->authn = authn_new(&ao, err)))
        goto fail;
    if (audit_setup(sf, st, err) < 0)
        goto fail;
    /* the default (api/quota_limited.h) holds unless a file replaces it */
    if (sf->admission_config && admission_config_load(sf->admission_config, err) < 0)
        goto fail;
    so->audit = st->audit;
    so->authn = st->authn;
    so->authz = st->authz;
    so->tls_cert_pem = st->serving.cert;
    so->tls_key_pem = st->serving.key;
    so->client_ca_pem = st->client_ca_pem;
    return 0;
fail:
    security_teardown(st);
    return -1;
}

void security_started(const char *data_dir, const char *url)
{
    char path[4200], line[512];
    ty_error err;
    int n;

    ty_error_init(&err);
    snprintf(path, sizeof(path), "%s/%s", data_dir, SECURITY_SERVER_URL);
    n = snprintf(line, sizeof(line), "%s\n", url);
    if (tls_write_file(path, line, (size_t)n, 0644, &err) < 0)
        ty_warn("%s (trainyard kubeconfig will need --server)", err.text);
    ty_error_clear(&err);
}

int security_start(const security_flags *sf, security_state *st, ty_store *store,
                   server_opts *so, ty_error *err)
{
    if (!sf->always_allow && !(st->authz = authz_new(store, err)))
        return -1;
    so->authz = st->authz;
    return 0;
}

void security_teardown(security_state *st)
{
    authz_free(st->authz);
    st->authz = NULL;
    authn_free(st->authn);
    st->authn = NULL;
    tls_pem_free(&st->serving);
    free(st->client_ca_pem);
    st->client_ca_pem = NULL;
    /* after the server stopped: writes what it logged last */
    audit_free(st->audit);
    st->audit = NULL;
}
