/* server_security.c - see server_security.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/server_security.h"
#include "server/authn.h"
#include "server/authz.h"
#include "server/audit.h"

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

int security_setup(const security_flags *sf, const char *data_dir, security_state *st,
                   server_opts *so, ty_error *err)
{
    (void)data_dir;
    if (sf->token_auth_file) {
        authn_opts ao = {.token_auth_file = sf->token_auth_file};
        if (!(st->authn = authn_new(&ao, err)))
            return -1;
    }
    if (audit_setup(sf, st, err) < 0) {
        security_teardown(st);
        return -1;
    }
    so->audit = st->audit;
    so->authn = st->authn;
    so->authz = st->authz;
    return 0;
}

void security_teardown(security_state *st)
{
    authn_free(st->authn);
    st->authn = NULL;
    /* after the server stopped: writes what it logged last */
    audit_free(st->audit);
    st->audit = NULL;
}
