/* server_security.h - the server command's security flags and the objects
 * they make (authentication, authorization), kept out of cmd_server.c. */
#ifndef TY_CLI_SERVER_SECURITY_H
#define TY_CLI_SERVER_SECURITY_H

#include <getopt.h>
#include <stdbool.h>

#include "base/error.h"
#include "server/server.h"

/* Option codes past any character. */
enum {
    SECF_TOKEN_AUTH_FILE = 1000,
    /* audit: 1050.. */
    SECF_AUDIT_LOG_PATH = 1050,
    SECF_AUDIT_POLICY_FILE,
    SECF_AUDIT_LOG_MAXSIZE,
    SECF_AUDIT_LOG_MAXBACKUP,
    SECF_AUDIT_LOG_MAXAGE,
    SECF_AUDIT_LOG_MODE,
    SECF_AUDIT_LOG_BUFFER,
};

/* The entries for getopt_long's table. */
#define SECURITY_LONGOPTS {"token-auth-file", required_argument, NULL, SECF_TOKEN_AUTH_FILE}, \
    AUDIT_LONGOPTS
#define AUDIT_LONGOPTS                                                                       \
    {"audit-log-path", required_argument, NULL, SECF_AUDIT_LOG_PATH},                        \
    {"audit-policy-file", required_argument, NULL, SECF_AUDIT_POLICY_FILE},                  \
    {"audit-log-maxsize", required_argument, NULL, SECF_AUDIT_LOG_MAXSIZE},                  \
    {"audit-log-maxbackup", required_argument, NULL, SECF_AUDIT_LOG_MAXBACKUP},              \
    {"audit-log-maxage", required_argument, NULL, SECF_AUDIT_LOG_MAXAGE},                    \
    {"audit-log-mode", required_argument, NULL, SECF_AUDIT_LOG_MODE},                        \
    {"audit-log-batch-buffer-size", required_argument, NULL, SECF_AUDIT_LOG_BUFFER}

#define SECURITY_USAGE "  --token-auth-file FILE  bearer tokens: CSV lines token,user,uid,\"group1,group2\"\n" \
    AUDIT_USAGE
#define AUDIT_USAGE                                                                          \
    "  --audit-log-path FILE  audit.k8s.io/v1 Event JSON lines of every request (- = stdout)\n" \
    "  --audit-policy-file FILE  audit.k8s.io/v1 Policy: levels per user/verb/resource\n"   \
    "               (default: Metadata for everything)\n"                                     \
    "  --audit-log-maxsize MB  rotate the audit log past this size (default 100)\n"          \
    "  --audit-log-maxbackup N  rotated audit logs kept (default 0: all)\n"                  \
    "  --audit-log-maxage DAYS  rotated audit logs removed after this (default 0: never)\n"  \
    "  --audit-log-mode MODE  blocking (a full queue makes requests wait; default) or\n"     \
    "               batch (a full queue drops events)\n"                                     \
    "  --audit-log-batch-buffer-size N  audit events queued (default 10000)\n"

typedef struct security_flags {
    const char *token_auth_file;
    /* audit */
    const char *audit_log_path, *audit_policy_file;
    int audit_max_size_mb, audit_max_backups, audit_max_age_days;
    bool audit_drop_when_full;
    long audit_buffer;
} security_flags;

typedef struct security_state {
    struct ty_authn *authn;
    struct ty_authz *authz;
    struct ty_audit *audit;
} security_state;

/* True when c is a security flag's code. */
static inline int security_is_flag(int c)
{
    return c >= 1000 && c < 1100;
}
/* Takes one flag; -1 after printing a usage error. */
int security_flag(int c, const char *arg, security_flags *sf);
/* Makes what the flags ask for and points so at it; -1 with err (the server
 * must not start). */
int security_setup(const security_flags *sf, const char *data_dir, security_state *st,
                   server_opts *so, ty_error *err);
void security_teardown(security_state *st);

#endif
