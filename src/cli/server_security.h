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
    SECF_AUTHORIZATION_MODE = 1050,
};

/* The entries for getopt_long's table. */
#define SECURITY_LONGOPTS {"token-auth-file", required_argument, NULL, SECF_TOKEN_AUTH_FILE}, \
    {"authorization-mode", required_argument, NULL, SECF_AUTHORIZATION_MODE}

#define SECURITY_USAGE "  --token-auth-file FILE  bearer tokens: CSV lines token,user,uid,\"group1,group2\"\n" \
    "  --authorization-mode MODE  RBAC (default: roles and bindings decide) or\n" \
    "               AlwaysAllow (every authenticated request is allowed)\n"

typedef struct security_flags {
    const char *token_auth_file;
    bool always_allow; /* --authorization-mode AlwaysAllow */
} security_flags;

typedef struct security_state {
    struct ty_authn *authn;
    struct ty_authz *authz;
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
/* What needs the store (the RBAC authorizer: it bootstraps the default
 * roles and watches the RBAC objects); after store_open, before the server
 * starts. -1 with err (the server must not start). */
int security_start(const security_flags *sf, security_state *st, ty_store *store,
                   server_opts *so, ty_error *err);
/* Frees everything; before store_close. */
void security_teardown(security_state *st);

#endif
