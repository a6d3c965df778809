/* server_security.h - the server command's security flags and the objects
 * they make (TLS material, authentication, authorization), kept out of
 * cmd_server.c. */
#ifndef TY_CLI_SERVER_SECURITY_H
#define TY_CLI_SERVER_SECURITY_H

#include <getopt.h>
#include <stdbool.h>

#include "base/error.h"
#include "server/server.h"
#include "server/tls.h"

/* The admin credential the first start makes, and where the server says
 * where it listens (for `trainyard kubeconfig`): in the data directory. */
#define SECURITY_ADMIN_TOKENS "tokens.csv"
#define SECURITY_SERVER_URL "server.url"
#define SECURITY_ADMIN_USER "admin"

/* Option codes past any character. */
enum {
    SECF_TOKEN_AUTH_FILE = 1000,
    SECF_TLS_CERT_FILE,
    SECF_TLS_KEY_FILE,
    SECF_CLIENT_CA_FILE,
    SECF_ANONYMOUS_AUTH,
    SECF_NO_TLS,
    SECF_AUTHORIZATION_MODE = 1040,
    SECF_ADMISSION_CONFIG,
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
#define SECURITY_LONGOPTS                                                                     \
    {"token-auth-file", required_argument, NULL, SECF_TOKEN_AUTH_FILE},                       \
        {"tls-cert-file", required_argument, NULL, SECF_TLS_CERT_FILE},                       \
        {"tls-private-key-file", required_argument, NULL, SECF_TLS_KEY_FILE},                 \
        {"client-ca-file", required_argument, NULL, SECF_CLIENT_CA_FILE},                     \
        {"anonymous-auth", optional_argument, NULL, SECF_ANONYMOUS_AUTH},                     \
        {"no-tls", no_argument, NULL, SECF_NO_TLS},                                          \
        {"authorization-mode", required_argument, NULL, SECF_AUTHORIZATION_MODE},           \
        {"admission-control-config-file", required_argument, NULL, SECF_ADMISSION_CONFIG},  \
        AUDIT_LONGOPTS
#define AUDIT_LONGOPTS                                                                       \
    {"audit-log-path", required_argument, NULL, SECF_AUDIT_LOG_PATH},                        \
    {"audit-policy-file", required_argument, NULL, SECF_AUDIT_POLICY_FILE},                  \
    {"audit-log-maxsize", required_argument, NULL, SECF_AUDIT_LOG_MAXSIZE},                  \
    {"audit-log-maxbackup", required_argument, NULL, SECF_AUDIT_LOG_MAXBACKUP},              \
    {"audit-log-maxage", required_argument, NULL, SECF_AUDIT_LOG_MAXAGE},                    \
    {"audit-log-mode", required_argument, NULL, SECF_AUDIT_LOG_MODE},                        \
    {"audit-log-batch-buffer-size", required_argument, NULL, SECF_AUDIT_LOG_BUFFER}


#define SECURITY_USAGE                                                                        \
    "  --token-auth-file FILE  bearer tokens: CSV lines token,user,uid,\"group1,group2\"\n"   \
    "               (read with DATA_DIR/tokens.csv, which the first start makes\n"           \
    "               with the admin's token; both are read again when they change)\n"       \
    "  --tls-cert-file FILE, --tls-private-key-file FILE  the serving certificate\n"         \
    "               (PEM) and its key; without them a self-signed CA and certificate\n"     \
    "               are made in DATA_DIR/pki, for loopback addresses only\n"                \
    "  --client-ca-file FILE  accept client certificates signed by this CA\n"               \
    "               (CN = user name, O = groups)\n"                                         \
    "  --anonymous-auth[=true|false]  requests without credentials become\n"                \
    "               system:anonymous (default false: 401 except /healthz, /livez,\n"        \
    "               /readyz and /version)\n"                                                \
    "  --no-tls     plain HTTP (loopback addresses only; tokens are still asked for)\n"    \
    "  --authorization-mode MODE  RBAC (default: roles and bindings decide) or\n"          \
    "               AlwaysAllow (every authenticated request is allowed)\n"                \
    "  --admission-control-config-file FILE  an AdmissionConfiguration: the\n"            \
    "               ResourceQuota plugin's limitedResources (default: pods of the\n"      \
    "               system-node-critical and system-cluster-critical classes only\n"      \
    "               in namespaces with a quota that covers them, as kube-system's)\n"     \
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
    const char *tls_cert_file, *tls_key_file;
    const char *client_ca_file;
    bool anonymous_auth;
    bool no_tls;
    bool always_allow; /* --authorization-mode AlwaysAllow */
    const char *admission_config; /* --admission-control-config-file */
    /* audit */
    const char *audit_log_path, *audit_policy_file;
    int audit_max_size_mb, audit_max_backups, audit_max_age_days;
    bool audit_drop_when_full;
    long audit_buffer;
} security_flags;

typedef struct security_state {
    struct ty_authn *authn;
    struct ty_authz *authz;
    tls_pem serving;     /* empty with --no-tls */
    char *client_ca_pem; /* NULL without --client-ca-file */
    struct ty_audit *audit;
} security_state;

/* True when c is a security flag's code. */
static inline int security_is_flag(int c)
{
    return c >= 1000 && c < 1100;
}
/* Takes one flag; -1 after printing a usage error. */
int security_flag(int c, const char *arg, security_flags *sf);
/* Makes what the flags ask for and points so at it (so->address must be
 * set: a non-loopback one needs a given certificate); -1 with err (the
 * server must not start). */
int security_setup(const security_flags *sf, const char *data_dir, security_state *st,
                   server_opts *so, ty_error *err);
/* What needs the store (the RBAC authorizer: it bootstraps the default
 * roles and watches the RBAC objects); after store_open, before the server
 * starts. -1 with err (the server must not start). */
int security_start(const security_flags *sf, security_state *st, ty_store *store,
                   server_opts *so, ty_error *err);
/* Records where the server listens (DATA_DIR/server.url) once it does. */
void security_started(const char *data_dir, const char *url);
/* Frees everything; before store_close. */
void security_teardown(security_state *st);

/* True for an IPv4 loopback address (127.0.0.0/8); NULL or "" is the
 * default address, 127.0.0.1. */
bool security_loopback(const char *address);

#endif
